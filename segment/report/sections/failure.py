"""Up to failure: each case ramped quasi-statically with ligament rupture (Tejszerska and
Gzik), failure loads and sequence, and Voo et al. 1998 as validation-only data."""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from segment.core.status import Status
from segment.core.validity import BEYOND_LIMIT, load_validity_limits
from segment.elements.loads import Load
from segment.report.document import NOT_AVAILABLE
from segment.report.drawing import tight
from segment.report.renders import render_failures
from segment.solvers.ramp import ramp

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


def _nominal(load: Load) -> float:
    main = load.main_dof
    return abs(float(load.as_array()[main])) / (1.0 if main < 3 else 1000.0)


def _first_row(frame: pd.DataFrame, prefix: str) -> int | None:
    """First row whose event has a part starting with ``prefix``."""
    for k, event in enumerate(frame["event"]):
        if any(part.startswith(prefix) for part in event.split("; ")):
            return k
    return None


def failure_tables(ramps: Mapping[str, object], cases: Mapping[str, Load]):
    """(failure loads per case, failure sequence) of the ramps of section 10, up to the
    validity limit of each ramp (rows past it are not predictions)."""
    rows, seq = [], []
    for name, r in ramps.items():
        load = cases[name]
        main = load.main_dof
        unit = "N" if main < 3 else "N m"
        nominal = _nominal(load)
        disp_unit = "mm" if main < 3 else "deg"
        f = r.frame
        col = r.main_column
        first = _first_row(f, "F_max: ")
        lim = r.limit
        rows.append({
            "case": name, "load_unit": unit,
            "first_rupture_scale": r.first_rupture_scale,
            "first_rupture_load": nominal * r.first_rupture_scale,
            "first_rupture_strip": (f["event"].iloc[first].split("; ")[0].split(": ")[1]
                                    if first is not None else NOT_AVAILABLE),
            "main_displacement_at_first_rupture": (float(f[col].iloc[first])
                                                   if first is not None else np.nan),
            "displacement_unit": disp_unit,
            "ultimate_scale": r.ultimate_scale,
            "ultimate_load": nominal * r.ultimate_scale,
            "ultimate": (f"{nominal * r.ultimate_scale:.3g}" if np.isfinite(r.ultimate_scale)
                         else "not predicted (validity limit first)" if lim is not None
                         else f"not reached below {RAMP_TO_SCALE:g}x"),
            "limit_scale": np.nan if lim is None else lim.scale,
            "limit_load": np.nan if lim is None else nominal * lim.scale,
            "limit": NOT_AVAILABLE if lim is None else lim.description,
            "limit_reached_by": NOT_AVAILABLE if lim is None else lim.reached_by,
            "limit_source": NOT_AVAILABLE if lim is None else lim.source,
            "ruptures": sum(1 for e in r.events if e[1] == "ruptured"),
            "status": r.message,
        })
        order = 0
        for k, event in enumerate(f["event"]):
            for part in event.split("; "):
                if not part.startswith("ruptured: "):
                    continue
                order += 1
                before = float(f[col].iloc[k - 1])
                if (seq and seq[-1]["case"] == name and k >= 1
                        and "ruptured: " in f["event"].iloc[k - 1]
                        and f["scale"].iloc[k] == f["scale"].iloc[k - 1]
                        and f[col].iloc[k] == f[col].iloc[k - 1]):
                    # a strip that broke with the previous one (a tie, solvers.ramp._tied):
                    # the ramp writes one row per strip at the same equilibrium, so the
                    # displacement before is the tie's
                    before = seq[-1]["main_displacement_before"]
                seq.append({"case": name, "order": order, "strip": part.split(": ")[1],
                            "scale": float(f["scale"].iloc[k]),
                            "load": nominal * float(f["scale"].iloc[k]), "load_unit": unit,
                            "main_displacement_before": before,
                            "main_displacement_after": (float(f[col].iloc[k])
                                                        if "no equilibrium" not in event
                                                        else np.nan),
                            "displacement_unit": disp_unit,
                            "past_validity_limit": not bool(f["within_limit"].iloc[k])})
    return pd.DataFrame(rows), pd.DataFrame(seq)


def curve_points(r, load: Load):
    """The load-displacement curve of a ramp as drawn: ``(x, y, ruptured)`` with x the main
    displacement from the unloaded equilibrium [mm or deg], y the load [N or N m], and
    ``ruptured`` the (x, y) of the rows where a strip broke.

    Rows without an equilibrium and rows past the validity limit are left out. When the jump
    after a rupture crossed the displacement bound, the curve ends at the bound on that jump
    (the jump runs at constant load, so the point (bound, load) lies on it)."""
    f = r.frame
    nominal = _nominal(load)
    ok = (~f["event"].str.contains("no equilibrium")) & f["within_limit"]
    x = f[r.main_column][ok].to_numpy()
    y = nominal * f["scale"][ok].to_numpy()
    if r.limit is not None and r.limit.bound is not None and not f["within_limit"].iloc[-1]:
        b = r.limit.bound
        x = np.append(x, b.direction * b.value)
        y = np.append(y, nominal * r.limit.scale)
    ev = f[ok & f["event"].str.contains("ruptured: ")]
    ruptured = list(zip(ev[r.main_column].to_numpy(), nominal * ev["scale"].to_numpy(),
                        strict=True))
    return x, y, ruptured


def panel_title(name: str, r) -> str:
    """Title of a case's panel: the strips that broke, in order (up to four), and where the
    curve stops."""
    seq = r.failure_loads()["sequence"]
    broke = ", ".join(seq[:4]) + (f" (+{len(seq) - 4})" if len(seq) > 4 else "") \
        if seq else "no rupture"
    if r.limit is not None:
        b = r.limit.bound
        end = (f"limit {b.value:g} {b.unit}" if b is not None else "limit: no ligament taut")
    elif r.status == Status.NO_EQUILIBRIUM:
        end = "no equilibrium"
    else:
        end = "end of ramp"
    return f"{name}: {broke}; {end}"


def fig_failure(ramps: Mapping[str, object], cases: Mapping[str, Load]) -> plt.Figure:
    """Load-displacement curve of each case's ramp up to the validity limit, ruptures
    marked."""
    fig, axes = plt.subplots(3, 3, figsize=(12, 10))
    for ax, (name, r) in zip(axes.ravel(), ramps.items(), strict=False):
        load = cases[name]
        main = load.main_dof
        x, y, ruptured = curve_points(r, load)
        ax.plot(x, y, color="#1f77b4", lw=1.4)
        if ruptured:
            ax.scatter(*zip(*ruptured, strict=True), marker="x", color="#d62728", zorder=5,
                       label="strip ruptured")
        if np.isfinite(r.first_rupture_scale):
            ax.axhline(_nominal(load) * r.first_rupture_scale, color="#d62728", lw=0.6,
                       ls=":")
        if r.limit is not None and r.limit.bound is not None:
            b = r.limit.bound
            ax.axvline(b.direction * b.value, color="#7f7f7f", lw=0.9, ls="--",
                       label="validity limit")
            ax.scatter([x[-1]], [y[-1]], marker="s", facecolor="none", edgecolor="#7f7f7f",
                       s=50, zorder=6)
        elif not r.ok:
            ax.scatter([x[-1]], [y[-1]], marker="o", facecolor="none", edgecolor="black",
                       s=60, zorder=6, label="last load carried")
        ax.set_title(panel_title(name, r), fontsize=9)
        ax.set_xlabel(f"main displacement from unloaded [{'mm' if main < 3 else 'deg'}]",
                      fontsize=8)
        ax.set_ylabel(f"load [{'N' if main < 3 else 'N m'}]", fontsize=8)
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=8)
    handles = {}
    for ax in axes.ravel():
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(lab, h)
    fig.legend(handles.values(), handles.keys(), loc="lower center", ncol=len(handles),
               fontsize=8, frameon=False)
    fig.suptitle(f"Quasi-static ramps up to the validity limit (at most {RAMP_TO_SCALE:g}x "
                 f"nominal, {RAMP_STEPS} steps): ligament strips rupture at F_max (Table 3)")
    tight(fig, rect=(0, 0.03, 1, 1))
    return fig


def write(rep, s) -> None:
    """Write this section into ``rep`` from the study ``s``; keeps the failure loads for the
    verdicts (``s.extra["failure_loads"]``)."""
    ramps = {}
    for k, c in enumerate(s.names, start=1):      # the longest stage: one message per case
        s.say(f"ramp {k}/{len(s.names)} to failure: {c} to {RAMP_TO_SCALE:g}x nominal")
        ramps[c] = ramp(s.model, s.cases[c], to_scale=RAMP_TO_SCALE, steps=RAMP_STEPS)
    # beside the rest when the report allows
    render = s.later(render_failures, ramps, cache=s.pictures)
    fail, seq = failure_tables(ramps, s.cases)
    limits = load_validity_limits()
    flexion = limits.bound("phi_y", 1)
    rep.text(f"Each case's load is ramped quasi-statically from 0 towards {RAMP_TO_SCALE:g} "
             f"times nominal (`segment.ramp`; rows every 1/{RAMP_STEPS} of the range, the path "
             "between them followed in increments that are halved where Newton fails, so "
             "the failure loads do not depend on the number of steps). A ligament strip whose "
             "force reaches F_max (point C of Table 3; equivalently its strain eps_max) breaks "
             "and carries nothing afterwards (Tejszerska and Gzik); the load at which it "
             "happens is located between steps on the equilibrium path, and the segment is "
             "re-solved at that load, breaking further strips in a cascade. Every ligament is "
             "one strip (the published model). Facet dislocation events are taken from the "
             "facet states (state \"dislocated\").")
    rep.text("**Validity limit.** The disc of eq. (1) is a set of linear springs fitted to "
             "Moroney's tests (moments up to 2.16 N m) and has no failure law, so far enough "
             "along a ramp the disc alone carries the load at displacements no motion segment "
             "survives (without a limit, flexion reaches about 270 deg before Newton finds no "
             "equilibrium). Each ramp therefore stops at the first of: (1) the displacement of "
             "the loaded coordinate from the unloaded equilibrium reaches its bound in "
             "`data/validity_limits.csv`, and (2) a rupture leaves no ligament taut. The "
             f"flexion and extension bounds, {flexion.value:g} and "
             f"{limits.bound('phi_y', -1).value:g} deg, are the largest rotations at which a "
             "training specimen of Nightingale et al. (2002) is recorded carrying load (B07's "
             "flexion failure test from its start, B05's last static extension step), so no "
             "bound lies inside a training specimen's measured range. The other bounds "
             f"({limits.bound('phi_z', 1).value:g} deg for lateral bending and axial rotation, "
             f"{limits.bound('x', 1).value:g} mm for the translations) are **assumed**: no "
             "source we could read gives failure displacements of a lower cervical segment in "
             "those directions, and none lies inside a training measurement. "
             f"{BEYOND_LIMIT[0].upper()}{BEYOND_LIMIT[1:]}. The curves, the failure "
             "sequence and the failure loads below stop there, and the ultimate load is "
             "\"not predicted\" for a ramp that reached the limit.")
    rep.figure("failure_curves", fig_failure(ramps, s.cases),
               "Load–displacement curves up to the validity limit (main displacement from the "
               "unloaded equilibrium); x: a strip ruptured (the curve jumps at constant load); "
               "dashed: the displacement bound; square: where the curve stops (on a jump "
               "after a rupture: where the jump crosses the bound)")
    rep.text("Failure loads: first rupture, the validity limit (load and what was reached) and "
             "the ultimate load, which is a prediction only where no equilibrium was found "
             "before the validity limit (in these nine ramps it never is):")
    rep.table("failure_loads", fail, fail[["case", "first_rupture_strip", "first_rupture_scale",
                                           "first_rupture_load", "limit_scale", "limit_load",
                                           "load_unit", "limit", "limit_reached_by",
                                           "ultimate", "ruptures"]])
    rep.text("Sources of the limits reached:")
    rep.table("failure_limit_sources",
              fail[["case", "limit", "limit_source"]].drop_duplicates(subset=["case"]))
    rep.text("Failure sequence (strips in the order they broke, up to the validity limit; the "
             "main displacement just before and after each rupture, at the same load; "
             "past_validity_limit: the jump after that rupture crossed the bound, so the "
             "displacement after it is not a prediction):")
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
    rep.image("failure_3d", render,
              "Each case just after its first rupture, or at its last row within the validity "
              "limit when the first rupture carried it past the limit or nothing broke, drawn "
              "to scale (not magnified: the motions near failure are large enough to see). "
              "Ligaments coloured by tension on the one scale below the grid (slack ones "
              "grey), ruptured strips as black torn stubs, red arrows: facet forces on C5 "
              "(length proportional to the force), dislocated facets as a red disc; "
              "translucent blue: C5 at the unloaded equilibrium. Each panel's key shows the "
              "anatomical axes in the picture plane")
    s.extra["failure_loads"] = fail
