"""Up to failure: each case ramped quasi-statically with ligament rupture (Tejszerska and
Gzik), failure loads and sequence, and Voo et al. 1998 as validation-only data."""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import segment
from segment.elements.loads import Load
from segment.report.document import NOT_AVAILABLE
from segment.report.renders import render_failures

KEY = "failure"
TITLE = "Up to failure: ligament rupture"

RAMP_TO_SCALE = 50.0
"""Load scale the failure ramps of section 10 go up to (x nominal)."""
RAMP_STEPS = 200
VOO_1998_FLEXION_PEAK_NM = (3.8, 6.9)
"""Peak flexion moments to failure, mid-lower cervical joints, n = 5 (Voo, Pintar, Yoganandan
and Liu 1998, J Biomech Eng 120(6):693-696, abstract): validation only, never a target."""
VOO_1998_FLEXION_ROTATION_DEG = (11.0, 15.4)
"""Maximum (quasi-static) flexion rotations of the same study [deg]: validation only."""


def failure_tables(ramps: Mapping[str, object], cases: Mapping[str, Load]):
    """(failure loads per case, failure sequence) of the ramps of section 10."""
    rows, seq = [], []
    for name, r in ramps.items():
        load = cases[name]
        main = load.main_dof
        unit = "N" if main < 3 else "N m"
        nominal = abs(float(load.as_array()[main])) / (1.0 if main < 3 else 1000.0)
        disp_unit = "mm" if main < 3 else "deg"
        f = r.frame
        first = f[f["event"].str.startswith("F_max: ")]
        rows.append({
            "case": name, "load_unit": unit,
            "first_rupture_scale": r.first_rupture_scale,
            "first_rupture_load": nominal * r.first_rupture_scale,
            "first_rupture_strip": (first["event"].iloc[0].split(": ")[1] if len(first)
                                    else NOT_AVAILABLE),
            "main_displacement_at_first_rupture": (float(first["main_displacement"].iloc[0])
                                                   if len(first) else np.nan),
            "displacement_unit": disp_unit,
            "ultimate_scale": r.ultimate_scale,
            "ultimate_load": nominal * r.ultimate_scale,
            "ruptures": sum(1 for e in r.events if e[1] == "ruptured"),
            "status": r.message,
        })
        order = 0
        for k in np.flatnonzero(f["event"].str.startswith("ruptured: ")):
            order += 1
            seq.append({"case": name, "order": order,
                        "strip": f["event"].iloc[k].split(": ")[1],
                        "scale": float(f["scale"].iloc[k]),
                        "load": nominal * float(f["scale"].iloc[k]), "load_unit": unit,
                        "main_displacement_before": float(f["main_displacement"].iloc[k - 1]),
                        "main_displacement_after": float(f["main_displacement"].iloc[k]),
                        "displacement_unit": disp_unit})
    return pd.DataFrame(rows), pd.DataFrame(seq)


def fig_failure(ramps: Mapping[str, object], cases: Mapping[str, Load]) -> plt.Figure:
    """Load-displacement curve of each case's ramp to failure, ruptures marked."""
    fig, axes = plt.subplots(3, 3, figsize=(12, 10))
    for ax, (name, r) in zip(axes.ravel(), ramps.items(), strict=False):
        load = cases[name]
        main = load.main_dof
        nominal = abs(float(load.as_array()[main])) / (1.0 if main < 3 else 1000.0)
        f = r.frame
        ok = ~f["event"].str.startswith("no equilibrium")
        x = f["main_displacement"][ok].to_numpy()
        y = nominal * f["scale"][ok].to_numpy()
        ax.plot(x, y, color="#1f77b4", lw=1.4)
        ev = f[ok & f["event"].str.startswith("ruptured: ")]
        ax.scatter(ev["main_displacement"], nominal * ev["scale"], marker="x", color="#d62728",
                   zorder=5, label="strip ruptured")
        if np.isfinite(r.first_rupture_scale):
            ax.axhline(nominal * r.first_rupture_scale, color="#d62728", lw=0.6, ls=":")
        if not r.ok:
            ax.scatter([x[-1]], [y[-1]], marker="o", facecolor="none", edgecolor="black",
                       s=60, zorder=6, label="last load carried")
        ax.set_title(f"{name}: " + (", ".join(r.failure_loads()["sequence"][:4]) or
                                    "no rupture"), fontsize=9)
        ax.set_xlabel(f"main displacement [{'mm' if main < 3 else 'deg'}]", fontsize=8)
        ax.set_ylabel(f"load [{'N' if main < 3 else 'N m'}]", fontsize=8)
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=8)
    axes[0, 0].legend(fontsize=7, loc="lower right")
    fig.suptitle(f"Quasi-static ramps to {RAMP_TO_SCALE:g}x nominal ({RAMP_STEPS} steps): "
                 "ligament strips rupture at F_max (Table 3)")
    fig.tight_layout()
    return fig




def write(rep, s) -> None:
    """Write this section into ``rep`` from the study ``s``; keeps the failure loads for the
    verdicts (``s.extra["failure_loads"]``)."""
    ramps = {}
    for k, c in enumerate(s.names, start=1):      # the longest stage: one message per case
        s.say(f"ramp {k}/{len(s.names)} to failure: {c} to {RAMP_TO_SCALE:g}x nominal")
        ramps[c] = segment.ramp(s.model, s.cases[c], to_scale=RAMP_TO_SCALE, steps=RAMP_STEPS)
    fail, seq = failure_tables(ramps, s.cases)
    rep.text(f"Each case's load is ramped quasi-statically from 0 to {RAMP_TO_SCALE:g} times "
             f"nominal in {RAMP_STEPS} steps (`segment.ramp`). A ligament strip whose force "
             "reaches F_max (point C of Table 3; equivalently its strain eps_max) breaks and "
             "carries nothing afterwards (Tejszerska and Gzik); the load at which it happens is "
             "located between steps on the equilibrium path, and the segment is re-solved at "
             "that load, breaking further strips in a cascade. Every ligament is one strip (the "
             "published model). The disc of eq. (1) has no failure law: after the ligaments are "
             "gone it still carries the load, with displacements far outside the range the "
             "model was built for; the ultimate load is the last load at which an equilibrium "
             "was found (\"not reached\" when the ramp reached its end). Facet dislocation "
             "events are taken from the facet states (state \"dislocated\").")
    rep.figure("failure_curves", fig_failure(ramps, s.cases),
               "Load–displacement curves to failure (main displacement from the unloaded "
               "equilibrium); x: a strip ruptured (the curve jumps at constant load); "
               "circle: last load carried")
    rep.text("Failure loads (first rupture and ultimate; NaN: not reached below "
             f"{RAMP_TO_SCALE:g}x nominal):")
    rep.table("failure_loads", fail, fail[["case", "first_rupture_strip", "first_rupture_scale",
                                           "first_rupture_load", "load_unit",
                                           "ultimate_scale", "ultimate_load", "ruptures"]])
    rep.text("Failure sequence (strips in the order they broke; the main displacement just "
             "before and after each rupture, at the same load):")
    rep.table("failure_sequence", seq)
    flx = fail.set_index("case").loc["FLX"] if "FLX" in fail["case"].values else None
    if flx is not None:
        comparison = pd.DataFrame([{
            "quantity": "flexion moment at first rupture [N m]",
            "model": flx["first_rupture_load"],
            "Voo et al. 1998 (peak moment to failure, range)":
                f"{VOO_1998_FLEXION_PEAK_NM[0]:g}–{VOO_1998_FLEXION_PEAK_NM[1]:g}"}, {
            "quantity": "flexion rotation at first rupture [deg]",
            "model": flx["main_displacement_at_first_rupture"],
            "Voo et al. 1998 (peak moment to failure, range)":
                f"{VOO_1998_FLEXION_ROTATION_DEG[0]:g}–{VOO_1998_FLEXION_ROTATION_DEG[1]:g} "
                "(maximum rotation)"}])
        rep.text("Validation only (never a calibration target): Voo, Pintar, Yoganandan and "
                 "Liu 1998 (J Biomech Eng 120(6):693–696) flexed mid-lower cervical joints to "
                 "failure (n = 5, levels pooled: a corridor, not a C5–C6 value).")
        rep.table("failure_vs_voo1998", comparison)
    rep.image("failure_3d", render_failures(ramps),
              "Each case just after its first rupture, drawn to scale (not magnified: the "
              "motions near failure are large enough to see): ruptured strips as black torn "
              "stubs, dislocated facets as a red disc")
    s.extra["failure_loads"] = fail
