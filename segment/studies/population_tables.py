"""What a virtual population predicts (issue 32): one row per member (:func:`member_table`,
the ``population.csv`` of :mod:`segment.studies.population_result`), its failure ramps
(:func:`ramp_table`), and the tables of the report's population section from a committed
result (:func:`section_tables`, :func:`clinical_table`).

Each member (:mod:`segment.studies.virtual_population`) is solved at Moroney's 1.8 N m in
every mode, intact and posterior-removed, put in the clinical states of Zdeblick et al. 1992
(laminectomy, bilateral facetectomy of 25-100 %) and ramped to failure in flexion and
extension under its validity limits (:mod:`segment.studies.population_limits`).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from segment.core.io import data_dir
from segment.solvers.ramp import ramp
from segment.studies.calibration.hierarchical_forward import Forward
from segment.studies.curves import MODES, mode_load
from segment.studies.forms import load_form
from segment.studies.paths import solve_packed
from segment.studies.population_limits import _limits_object
from segment.studies.population_result import check_result, read_result
from segment.studies.virtual_population import MORONEY_EXPERIMENTS, _cases, member_models

__all__ = [
    "CLINICAL_STATES",
    "FACETECTOMY",
    "MORONEY_RATIO",
    "QUANTITIES",
    "SUBSTANTIAL_PCT",
    "ZDEBLICK_TRENDS",
    "clinical_table",
    "member_table",
    "ramp_table",
    "rupture_ties",
    "section_tables",
]

FACETECTOMY = (25, 50, 75, 100)
"""Bilateral facetectomy fractions [%] (Zdeblick et al. 1992 resected 25, 50, 75, 100 %)."""
TIE_RTOL = 1e-6
"""Two strips whose strain ratios g = strain / eps_max agree within this fraction at a
rupture are reported as a tie (a symmetric pair under a symmetric load): which of the two the
ramp breaks first is an index-order choice, not a prediction."""
RAMP_TO_NM = 40.0
"""Largest moment of the failure ramps [N m] (the failure tests peaked at 12-34 N m)."""
RAMP_STEPS = 80
"""Load steps of each failure ramp."""


def member_table(fit, model, P, *, lab, form=None, n_threads: int | None = 1,
                 ramps: bool = True, limits: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per member: member, lab, form, its parameters, the rotations at 1.8 N m
    intact and posterior-removed and their ratio per mode, axial rotation and flexion after
    bilateral facetectomy (% change), and with ``ramps`` the flexion and extension ramps
    (:func:`ramp_table`)."""
    form = load_form(fit.form_path if form is None else form)
    fwd = Forward(form.model(model), form.space, n_threads=n_threads)
    y, ok, _ = fwd(P, MORONEY_EXPERIMENTS)
    rows = []
    models = member_models(fit, model, P, form=form)
    facets = _facetectomy(models)
    for i, p in enumerate(np.atleast_2d(P)):
        row = {"member": f"member_{i + 1:03d}", "lab": lab, "form": "population",
               "converged": bool(ok[i])}
        row.update({n: float(v) for n, v in zip(form.space.names, p, strict=True)})
        for k, e in enumerate(MORONEY_EXPERIMENTS):
            row[f"{e.config}_{e.mode}_deg"] = float(y[i, k])
        for mode in MODES:
            row[f"ratio_{mode}"] = row[f"intact_{mode}_deg"] / row[
                f"posterior-removed_{mode}_deg"]
        row.update(facets[i])
        rows.append(row)
    out = pd.DataFrame(rows)
    if ramps:
        rt = ramp_table(models, limits=limits)
        out = out.merge(rt, on="member", how="left")
    return out


def _rotation_at(m, mode) -> float:
    """|rotation| [deg] of model ``m`` at 1.8 N m in ``mode`` from its unloaded pose, by
    continuation (as :class:`Forward`); NaN where an equilibrium failed."""
    return float(_rotations([m], mode)[0])


def _rotations(models, mode) -> np.ndarray:
    """:func:`_rotation_at` of many models (M,), solved together where their packed arrays
    have the same shapes (one compiled launch per shape)."""
    F = mode_load(mode, [0.6, 1.2, 1.8])
    dof, sign = MODES[mode]
    packs = [m._packed for m in models]
    groups: dict = {}
    for i, (_, lg, fc, pts) in enumerate(packs):
        groups.setdefault((lg.shape, fc.shape, pts.tobytes()), []).append(i)
    out = np.full(len(models), np.nan)
    for idx in groups.values():
        stack = tuple(np.stack([packs[i][k] for i in idx]) for k in range(3))
        r = solve_packed(stack, F, pts=packs[idx[0]][3])
        v = sign * np.degrees(r.displacement[:, -1, dof])
        out[idx] = np.where(r.converged[:, -1], v, np.nan)
    return out


CLINICAL_STATES = (("laminectomy", "laminectomy"),
                   *((f"facetectomy-bilateral-{f}", f"facetectomy_{f}") for f in FACETECTOMY))
"""The clinical states (``data/states.csv``) every member is put in, with their column
prefix: the procedures of Zdeblick et al. 1992 (laminectomy of C5, then bilateral
facetectomy of 25-100 %)."""


def _facetectomy(models) -> list[dict]:
    """% change of the rotation at 1.8 N m in axial rotation and flexion in each state of
    :data:`CLINICAL_STATES` (laminectomy, bilateral facetectomy of each fraction of
    :data:`FACETECTOMY`; ``data/states.csv``), for every model."""
    out = [{} for _ in models]
    modes = (("AR", "axial-rotation"), ("FLX", "flexion"))
    base = {c: _rotations(models, mode) for c, mode in modes}
    for state, prefix in CLINICAL_STATES:
        states = [m.with_state(state) for m in models]
        for c, mode in modes:
            v = _rotations(states, mode)
            for i in range(len(models)):
                out[i][f"{prefix}_{c}_pct"] = 100.0 * (v[i] - base[c][i]) / base[c][i]
    return out


def rupture_ties(result) -> list[list[str]]:
    """The strips that reached F_max together at each rupture of a ramp (groups of more than
    one strip are ties, :data:`TIE_RTOL`): evaluated at the row where each rupture was
    located, from the strains of every intact strip."""
    groups = []
    frame = result.frame
    for idx in np.flatnonzero(frame["event"].astype(str).str.startswith("F_max: ").to_numpy()):
        model = result.model_at(int(idx))
        r = frame.iloc[int(idx)]
        q = np.concatenate([r[["x_mm", "y_mm", "z_mm"]].to_numpy(float),
                            np.radians(r[["phi_x_deg", "phi_y_deg", "phi_z_deg"]]
                                       .to_numpy(float))])
        t = model.state(q).ligament_table()
        eps = {x.name: x.curve.strain[2] for x in model.ligaments}
        strips = t[~t["ruptured"] & (t["cut"] < 1.0)]
        g = {row.ligament: row.strain / eps.get(row.ligament.split("#")[0], math.inf)
             for row in strips.itertuples()}
        if not g:
            continue
        top = max(g.values())
        groups.append(sorted(n for n, v in g.items() if abs(v - top) <= TIE_RTOL * abs(top)))
    return groups


def ramp_table(models, *, names=None, limits: pd.DataFrame | None = None,
               to_nm: float = RAMP_TO_NM, steps: int = RAMP_STEPS) -> pd.DataFrame:
    """Each member ramped in flexion and extension to ``to_nm`` with ligament rupture
    (:func:`segment.solvers.ramp.ramp`) under the validity limits ``limits`` (the phi_y rows of
    :func:`~segment.studies.population_limits.validity_limits` over the packaged ones; None:
    the packaged ones): first rupture and its strips (ties joined by ``=``), ultimate moment
    (NaN where not reached before the limit), the moment where the validity limit was
    reached."""
    lim = _limits_object(limits)
    names = [f"member_{i + 1:03d}" for i in range(len(models))] if names is None else names
    out = []
    for name, m in zip(names, models, strict=True):
        row = {"member": name}
        for case, label in (("FLX", "flexion"), ("EXT", "extension")):
            load = _cases()[case]
            scale = to_nm / 1.8
            r = ramp(m, load, to_scale=scale, steps=steps, limits=lim)
            fl = r.failure_loads()
            ties = rupture_ties(r)
            row[f"{label}_first_rupture_Nm"] = fl["first_rupture_Nm"]
            row[f"{label}_first_strips"] = "=".join(ties[0]) if ties else ""
            row[f"{label}_ultimate_Nm"] = fl["ultimate_Nm"]
            row[f"{label}_limit_Nm"] = fl["limit_Nm"]
        out.append(row)
    return pd.DataFrame(out)



QUANTITIES = (
    ("intact_flexion_deg", "rotation at 1.8 N m, flexion, intact [deg]"),
    ("intact_extension_deg", "rotation at 1.8 N m, extension, intact [deg]"),
    ("intact_lateral-bending_deg", "rotation at 1.8 N m, lateral bending, intact [deg]"),
    ("intact_axial-rotation_deg", "rotation at 1.8 N m, axial rotation, intact [deg]"),
    ("ratio_flexion", "intact / posterior-removed, flexion"),
    ("ratio_extension", "intact / posterior-removed, extension"),
    ("ratio_lateral-bending", "intact / posterior-removed, lateral bending"),
    ("ratio_axial-rotation", "intact / posterior-removed, axial rotation"),
    *(q for c, w in (("AR", "axial rotation"), ("FLX", "flexion"))
      for q in ((f"laminectomy_{c}_pct", f"laminectomy of C5, {w} [% change]"),
                *((f"facetectomy_{f}_{c}_pct", f"bilateral facetectomy {f} %, {w} [% change]")
                  for f in FACETECTOMY))),
    ("flexion_first_rupture_Nm", "first rupture in flexion [N m]"),
    ("flexion_limit_Nm", "validity limit reached in flexion [N m]"),
    ("extension_limit_Nm", "validity limit reached in extension [N m]"),
)
"""The population's predictions shown by the report, with their labels."""
SUBSTANTIAL_PCT = 20.0
"""A change of at least this much [%] counts as the large change Zdeblick et al. describe
("decreased dramatically"; their values are not available to us): the threshold of issue 32
for the axial rotation after a bilateral 100 % facetectomy."""
MORONEY_RATIO = {"lateral-bending": 2.6471 / 5.4545, "axial-rotation": 1.5517 / 4.2857}
"""Moroney's intact / posterior-removed rotation (computed from calibration_targets.csv)."""


ZDEBLICK_TRENDS = {
    "AR": ("equivalent to intact (torsional stiffness: intact, laminectomy, 25 and 50 % one "
           "statistically equivalent subset)",
           "the least stiff subset (75 and 100 %): torsional stiffness 'decreased "
           "dramatically' past 50 %"),
    "FLX": ("posterior strain in flexion unchanged (laminectomy, 25 %) or +2.5 % (50 %); a "
            "strain, not a rotation: the pattern only",
            "posterior strain in flexion +25 % (75 and 100 %); a strain, not a rotation: the "
            "pattern only"),
}
"""What Zdeblick et al. 1992 report (abstract; SOURCES.md §9) for the states up to 50 % and
for 75-100 %, per mode; their values are not available to us."""


def clinical_table(pop: pd.DataFrame) -> pd.DataFrame:
    """Each clinical state of :data:`CLINICAL_STATES` in axial rotation and flexion over the
    members of ``pop`` (``population.csv``): median and 5-95 % of the % change of the rotation
    at 1.8 N m, Zdeblick et al.'s trend for that state, and whether the members agree with
    the pattern (little change up to 50 %, the largest at 75-100 %: the state's median within
    half of the 75-100 % medians' smaller one for the first group, at least twice the first
    group's largest ``|median|`` for the second)."""
    rows = []
    for c in ("AR", "FLX"):
        med = {}
        for state, prefix in CLINICAL_STATES:
            col = f"{prefix}_{c}_pct"
            if col in pop:
                med[state] = float(np.nanmedian(pop[col]))
        small = [v for k, v in med.items() if not k.endswith(("-75", "-100"))]
        large = [v for k, v in med.items() if k.endswith(("-75", "-100"))]
        lim_small = max((abs(v) for v in small), default=math.nan)
        lim_large = min(large, default=math.nan)
        for state, prefix in CLINICAL_STATES:
            col = f"{prefix}_{c}_pct"
            if col not in pop:
                continue
            v = pop[col].to_numpy(float)
            v = v[np.isfinite(v)]
            big = state.endswith(("-75", "-100"))
            agrees = (med[state] >= 2.0 * lim_small if big
                      else abs(med[state]) <= 0.5 * lim_large)
            rows.append({"state": state, "mode": c, "members": int(v.size),
                         "median_pct": med[state], "q5_pct": float(np.percentile(v, 5)),
                         "q95_pct": float(np.percentile(v, 95)),
                         "zdeblick_1992": ZDEBLICK_TRENDS[c][int(big)],
                         "agrees_with_pattern": bool(agrees), "kind": "predicted (not fitted)"})
    return pd.DataFrame(rows)


def section_tables(model, folder=None, *, check: bool = True) -> dict[str, pd.DataFrame]:
    """The tables of the report's population section from a committed result (default
    ``data/population/``), nothing recomputed but the cheap
    :func:`~segment.studies.population_result.check_result`:

    * ``fitted``: what the calibration was fitted to and how well (Nightingale's steps: RMS
      per specimen and direction [deg]; Moroney's means: value, fitted, z);
    * ``hyper``: the hyper-parameters (laboratory medians, specimen SD, laboratory SD);
    * ``predicted``: each quantity of :data:`QUANTITIES` over the members: median and
      5-95 % band (never fitted: predictions), with Moroney's value where one exists;
    * ``zdeblick``: the graded facetectomy against Zdeblick et al.'s trend (little change up
      to 50 %, the largest at 75-100 %), the verdict in words;
    * ``clinical``: every state of :data:`CLINICAL_STATES` over the members
      (:func:`clinical_table`);
    * ``loo``, ``loo_failure``, ``lab_out``, ``forms``: the held-out checks where
      ``scripts/population_loo.py`` wrote them;
    * ``validity``: the members' phi_y validity limits and their sources;
    * ``checks``: :func:`~segment.studies.population_result.check_result` on ``model`` (the
      published model the population was calibrated on; with ``check``).
    """
    folder = data_dir() / "population" if folder is None else Path(folder)
    res = read_result(folder)
    out: dict[str, pd.DataFrame] = {}
    steps = res["steps.csv"]
    rms = (steps.assign(sq=steps["residual_deg"] ** 2)
           .groupby(["specimen", "direction"], sort=False)["sq"]
           .apply(lambda v: math.sqrt(math.fsum(v) / len(v))).reset_index(name="rms_deg"))
    rms.insert(0, "data", "Nightingale 2002 steps (fitted)")
    mor = res["moroney.csv"].copy()
    mor.insert(0, "data", "Moroney 1988 means (fitted)")
    out["fitted"] = pd.concat([rms, mor], ignore_index=True)
    out["hyper"] = res["hyperparameters.csv"]
    pop = res["population.csv"]
    rows = []
    for col, label in QUANTITIES:
        if col not in pop:          # a result written before the column existed
            continue
        v = pop[col].to_numpy(float)
        fin = v[np.isfinite(v)]
        mode = col.removeprefix("ratio_")
        rows.append({"quantity": label, "column": col, "members": int(fin.size),
                     "median": float(np.median(fin)) if fin.size else math.nan,
                     "q5": float(np.percentile(fin, 5)) if fin.size else math.nan,
                     "q95": float(np.percentile(fin, 95)) if fin.size else math.nan,
                     "moroney": MORONEY_RATIO.get(mode, math.nan) if col.startswith("ratio_")
                     else math.nan, "kind": "predicted (not fitted)"})
    out["predicted"] = pd.DataFrame(rows)
    z = []
    for c in ("AR", "FLX"):
        med = {f: float(np.nanmedian(pop[f"facetectomy_{f}_{c}_pct"])) for f in FACETECTOMY}
        small = max(abs(med[25]), abs(med[50]))
        large = max(med[75], med[100])
        q = {f: np.nanpercentile(pop[f"facetectomy_{f}_{c}_pct"], [5, 95]) for f in (50, 100)}
        z.append({"mode": c, **{f"median_{f}_pct": med[f] for f in FACETECTOMY},
                  "q5_100_pct": q[100][0], "q95_100_pct": q[100][1],
                  "zdeblick_trend": "little change up to 50 %, the largest at 75-100 % "
                                    "(torsional stiffness 'decreased dramatically' past 50 %)",
                  "pattern_agrees": bool(large > 2.0 * small and med[100] >= med[50]),
                  "change_100_at_least_20_pct": bool(med[100] >= SUBSTANTIAL_PCT)})
    out["zdeblick"] = pd.DataFrame(z)
    out["clinical"] = clinical_table(pop)
    for name, key in (("loo_summary.csv", "loo"), ("loo_failure.csv", "loo_failure"),
                      ("lab_out.csv", "lab_out"), ("loo_forms.csv", "forms")):
        if (folder / name).is_file():
            out[key] = pd.read_csv(folder / name)
    out["validity"] = res["validity_limits.csv"]
    if check:
        out["checks"] = check_result(model, folder)
    return out
