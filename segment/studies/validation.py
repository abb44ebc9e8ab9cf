"""The validation study: the numbers behind ``segment validate``, as tidy DataFrames.

Every function here takes models and reference data and returns a DataFrame; nothing is
plotted or written (see :mod:`segment.report`). Displacements are reported in mm and degrees.

Three model configurations mirror Moroney's tests:

* ``intact``: disc + six ligaments + two facet joints;
* ``posterior removed``: disc + ALL + PLL (the posterior elements, with FL, ISL, CL and the
  facets, cut away);
* ``disc only``: the disc element alone (eq. 1), which must reproduce Table 2 exactly.

"Main displacement" of a case is the displacement along its load (x for AS/PS, y for LS,
z for TNS/CMP, phi_x for LB, phi_y for FLX/EXT, phi_z for AR), measured from the unloaded
equilibrium of the same configuration, as in an experiment that starts from the specimen at
rest. Tables also give the displacement from the reference pose (the paper's measure).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

from segment.core.model import Segment
from segment.elements.kinematics import generalized_force
from segment.elements.loads import Load
from segment.solvers.equilibrium import solve
from segment.studies.reference import DISPLACEMENT_COLUMNS, ReferenceData
from segment.studies.space import load_space

__all__ = [
    "CONFIGURATIONS",
    "agreement_table",
    "configurations",
    "displacement_table",
    "element_force_tables",
    "facet_force_check",
    "load_displacement_curves",
    "main_value",
    "sensitivity_table",
    "sensitivity_variants",
    "solver_table",
    "unloaded_ligaments",
    "unloaded_table",
]

CONFIGURATIONS = ("intact", "posterior removed", "disc only")
UNITS = ("mm", "mm", "mm", "deg", "deg", "deg")
# Tolerance of "disc only reproduces Table 2 exactly": Newton on a piecewise-linear law lands
# on the closed form up to rounding; the reference CSV rounds load / k to 5 significant digits.
TABLE2_REL_TOL = 1e-4

Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    return None


def configurations(model: Segment) -> dict[str, Segment]:
    """The three configurations derived from an intact ``model``."""
    return {
        "intact": model,
        "posterior removed": model.with_ligaments(("ALL", "PLL")).replace(facets=()),
        "disc only": model.replace(ligaments=(), facets=()),
    }


def _to_display(v: np.ndarray) -> np.ndarray:
    return np.concatenate([v[:3], np.degrees(v[3:])])


def _from_unloaded(r, what: str) -> np.ndarray:
    """``r``'s displacement from the unloaded equilibrium in display units; a plain error
    naming ``what`` (the model variant) when that equilibrium could not be found."""
    if r.displacement_from_unloaded is None:
        raise ValueError(f"{what}: the unloaded equilibrium did not converge, so displacements "
                         f"from it are not defined ({r.model.unloaded.message})")
    return _to_display(r.displacement_from_unloaded)


def main_value(load: Load, q_display: np.ndarray) -> tuple[float, str]:
    """Main displacement (in display units) of a single-component load, and its unit."""
    dof = load.main_dof
    if dof is None:
        raise ValueError(f"load {load.name!r} has no single main component")
    return float(q_display[dof]), UNITS[dof]


def displacement_table(models: Mapping[str, Segment], cases: Mapping[str, Load]) -> pd.DataFrame:
    """Equilibrium of every case in every configuration (mm, deg).

    Columns ``x_mm ... phi_z_deg`` are from the unloaded equilibrium; the same with
    ``_from_reference`` are from the reference pose.
    """
    rows = []
    for config, model in models.items():
        for name, load in cases.items():
            r = solve(model, load)
            from_unloaded = _from_unloaded(r, f"configuration {config!r}")
            from_ref = _to_display(r.q)
            main, unit = main_value(load, from_unloaded)
            rows.append({
                "configuration": config, "case": name, "converged": r.converged,
                "intact": r.intact, "limit_flags": "; ".join(r.limit_flags),
                "iterations": r.iterations, "main": main, "main_unit": unit,
                **dict(zip(DISPLACEMENT_COLUMNS, from_unloaded, strict=True)),
                **{f"{c}_from_reference": v
                   for c, v in zip(DISPLACEMENT_COLUMNS, from_ref, strict=True)},
            })
    return pd.DataFrame(rows)


def agreement_table(disp: pd.DataFrame, ref: ReferenceData,
                    cases: Mapping[str, Load]) -> pd.DataFrame:
    """Model vs reference, one row per comparison, each saying what and why."""
    rows = []

    def model_main(config, case):
        sel = disp[(disp.configuration == config) & (disp.case == case)]
        return float(sel["main"].iloc[0])

    trans = ref.translational_stiffness.set_index(["case", "configuration"])
    rot = ref.rotational_stiffness.set_index(["case", "configuration"])
    for case, load in cases.items():
        moment = load.main_dof >= 3
        table = rot if moment else trans
        k_col = "stiffness_Nm_per_deg" if moment else "stiffness_N_per_mm"
        unit = "deg" if moment else "mm"
        magnitude = (np.abs(load.moment).max() / 1000.0 if moment else np.abs(load.force).max())
        for config, ref_config, why in (
            ("disc only", "disc segment",
             "eq. (1) alone must give load / k of Table 2 exactly"),
            ("posterior removed", "disc segment",
             "Moroney's specimens with the posterior elements removed; our disc + ALL + PLL "
             "(Table 2 was taken from these tests, so ALL/PLL and their pre-strain show here)"),
            ("intact", "intact",
             "Moroney's intact specimens (stiffness = disc + posterior, Moroney et al. 1988; "
             "SOURCES.md §2)"),
        ):
            if (case, ref_config) in table.index:
                k = float(table.loc[(case, ref_config), k_col])
                ref_value = magnitude / k if np.isfinite(k) else np.nan
                source = table.loc[(case, ref_config), "source"]
            else:
                ref_value, source = np.nan, "not available"
            value = abs(model_main(config, case))
            rows.append({
                "comparison": f"{config} vs Moroney {ref_config}",
                "case": case, "unit": unit,
                "model": value,
                "reference": ref_value,
                "deviation_pct": (100.0 * (value - ref_value) / ref_value
                                  if np.isfinite(ref_value) else np.nan),
                "reference_kind": ("derived: load / stiffness" if np.isfinite(ref_value)
                                   else "not available"),
                "why": why,
                "source": source if np.isfinite(ref_value) else "not available",
            })
    return pd.DataFrame(rows)


def load_displacement_curves(models: Mapping[str, Segment], cases: Mapping[str, Load], *,
                             factors: np.ndarray | None = None,
                             progress: Progress = _quiet) -> pd.DataFrame:
    """Main displacement over load factors (default -2 ... 2 x nominal), warm-started."""
    if factors is None:
        factors = np.linspace(-2.0, 2.0, 33)
    factors = np.asarray(factors, dtype=float)
    rows = []
    for config, model in models.items():
        progress(f"load-displacement curves: {config}")
        q_unloaded = model.unloaded.q
        for name, load in cases.items():
            for branch in (factors[factors >= 0], factors[factors < 0][::-1]):
                q0 = q_unloaded
                for f in branch:
                    r = solve(model, load.scaled(float(f)), q0=q0)
                    if r.converged:
                        q0 = r.q
                    disp = _from_unloaded(r, f"configuration {config!r}")
                    main, unit = main_value(load, disp)
                    rows.append({"configuration": config, "case": name, "factor": float(f),
                                 "converged": r.converged, "main": main, "main_unit": unit})
    return (pd.DataFrame(rows).sort_values(["configuration", "case", "factor"])
            .reset_index(drop=True))


def element_force_tables(model: Segment, cases: Mapping[str, Load]
                         ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Ligaments, facets and load sharing of the intact model per case.

    The sharing table gives, for each element, its generalized force along the case's main
    coordinate as a percentage of the applied load: the elements' shares add up to 100 %
    (a negative share pushes with the load, e.g. a ligament pre-stretched at rest).
    """
    lig_rows, fac_rows, share_rows = [], [], []
    ref = model.reference
    for name, load in cases.items():
        r = solve(model, load)
        st = r.state
        dof = load.main_dof
        # the load's generalized force at the solved pose (a moment fixed in space maps to
        # (Rx Ry ez) . M along phi_z, not M_z, once C5 has rotated)
        applied = generalized_force(r.q, ref, point_c6=r.pose_c6[0], force_c6=ref.R0 @ load.force,
                                    moment_c6=ref.R0 @ load.moment)[dof]
        shares = {"disc": -st.disc_force[dof]}
        for s in st.ligaments:
            lig_rows.append({"case": name, "ligament": s.name, "strain": s.strain,
                             "tension_N": s.tension, "beyond_eps_max": s.beyond_max})
            Q = generalized_force(r.q, ref, point_c6=s.insertion_c5_in_c6,
                                  force_c6=s.force_on_c5)
            shares[s.name] = -Q[dof]
        for f in st.facets:
            fac_rows.append({"case": name, "facet": f.side, "regime": f.regime,
                             "dislocated": f.dislocated,
                             "penetration_mm": f.penetration, "force_N": f.force,
                             "point_x_mm": f.point[0], "point_y_mm": f.point[1],
                             "point_z_mm": f.point[2]})
            Q = generalized_force(r.q, ref, point_c6=f.point, force_c6=f.force_on_c5)
            shares[f"facet {f.side}"] = -Q[dof]
        for element, value in shares.items():
            share_rows.append({"case": name, "element": element,
                               "share_pct": 100.0 * value / applied})
    return pd.DataFrame(lig_rows), pd.DataFrame(fac_rows), pd.DataFrame(share_rows)


def unloaded_table(models: Mapping[str, Segment]) -> pd.DataFrame:
    """Unloaded equilibrium of each configuration, from the reference pose (mm, deg)."""
    rows = []
    for config, model in models.items():
        u = model.unloaded
        rows.append({"configuration": config, "converged": u.converged,
                     **dict(zip(DISPLACEMENT_COLUMNS, _to_display(u.q), strict=True))})
    return pd.DataFrame(rows)


def unloaded_ligaments(model: Segment) -> pd.DataFrame:
    """Ligament lengths and tensions at the reference pose and at the unloaded equilibrium."""
    at_ref = model.state(np.zeros(6)).ligaments
    at_rest = model.state(model.unloaded.q).ligaments
    l0 = model._params[6]      # per strip row (the ligament's l0 when it is one strip)
    return pd.DataFrame([
        {"ligament": a.name, "l0_mm": float(l0[i]), "length_reference_mm": a.length,
         "tension_reference_N": a.tension, "length_unloaded_mm": b.length,
         "tension_unloaded_N": b.tension}
        for i, (a, b) in enumerate(zip(at_ref, at_rest, strict=True))])


def _has_target(model: Segment, targets) -> bool:
    names = {x.name for x in model.ligaments}
    sides = {f.side for f in model.facets}
    return any(kind == "disc" or (kind == "ligament" and key in names)
               or (kind == "facet" and key in sides) for kind, key in targets)


def sensitivity_variants(model: Segment, *, space=None) -> list[tuple[str, str, str, Segment]]:
    """(parameter, setting, description, model) for each parameter of the parameter space.

    One-at-a-time: each parameter of ``data/parameter_space.csv`` (or ``space``) at its lower
    and its upper bound, the others at their nominal values: the values of ``model``
    (:meth:`~segment.studies.space.ParameterSpace.for_model`; the study runs on the model it is
    given). A bound equal to the nominal value (e.g. the facet gap, nominal 0 = lower bound)
    gives no variant; parameters whose element ``model`` lacks (a configuration without
    facets) are skipped.
    """
    space = load_space(space).for_model(model)
    out = []
    for j, name in enumerate(space.names):
        if not _has_target(model, space.targets[j]):
            continue
        unit = "" if space.units[j] in ("-", "") else f" {space.units[j]}"
        for setting, value in (("low", space.lower[j]), ("high", space.upper[j])):
            if value == space.nominal[j]:
                continue
            p = space.nominal.copy()
            p[j] = value
            out.append((name, setting, f"{value:g}{unit} (nominal {space.nominal[j]:g})",
                        space.apply(model, p)))
    return out


def sensitivity_table(model: Segment, cases: Mapping[str, Load], *,
                      progress: Progress = _quiet, space=None) -> pd.DataFrame:
    """Main displacement of each case under each variant of :func:`sensitivity_variants`,
    and its change from the baseline: ``model`` itself (the space's nominal values are read
    from it, :meth:`~segment.studies.space.ParameterSpace.for_model`).

    A case that does not converge for the baseline is an error (no baseline to compare
    with); a variant that does not converge has ``converged`` False and NaN ``main`` and
    ``change_pct`` (its last iterate is no result).
    """
    space = load_space(space).for_model(model)
    base = {}
    for name, load in cases.items():
        r = solve(model, load)
        if not r.converged:
            raise ValueError(f"case {name!r} does not converge for the model itself "
                             f"({r.message}): no baseline for the tornado")
        base[name] = main_value(load, _from_unloaded(r, "the model"))[0]
    rows = []
    variants = sensitivity_variants(model, space=space)
    for k, (param, setting, desc, variant) in enumerate(variants, start=1):
        progress(f"sensitivity {k}/{len(variants)}: {param} {setting}")
        for name, load in cases.items():
            r = solve(variant, load)
            if r.converged and r.displacement_from_unloaded is not None:
                value, unit = main_value(load, _from_unloaded(r, f"variant {param} {setting}"))
            else:
                value, unit = np.nan, UNITS[load.main_dof]
            rows.append({"parameter": param, "setting": setting, "value": desc, "case": name,
                         "converged": bool(r.converged and np.isfinite(value)),
                         "baseline": base[name], "main": value, "unit": unit,
                         "change_pct": 100.0 * (value - base[name]) / abs(base[name])})
    return pd.DataFrame(rows)


def solver_table(model: Segment, cases: Mapping[str, Load], *, repeat: int = 30
                 ) -> pd.DataFrame:
    """Iterations, load steps, final scaled residual and median wall time per case, solved as
    :func:`segment.solve` solves it (predictor start, load stepping as the fallback)."""
    rows = []
    for name, load in cases.items():
        r = solve(model, load)
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            solve(model, load)
            times.append(time.perf_counter() - t0)
        rows.append({"case": name, "converged": r.converged, "iterations": r.iterations,
                     "load_steps": r.load_steps, "residual_norm": r.residual_norm,
                     "time_ms": 1e3 * float(np.median(times))})
    return pd.DataFrame(rows)


def facet_force_check(model: Segment, ref: ReferenceData) -> pd.DataFrame:
    """Facet forces of the intact model under the FE study's loads.

    The loads and forces are those of the C5-C6 finite element study cited by Jaumard et al.
    2011 (SOURCES.md §3).
    """
    rows = []
    for rec in ref.facet_forces.to_dict(orient="records"):
        load = Load.from_si(force_N=[rec["Fx_N"], rec["Fy_N"], rec["Fz_N"]],
                            moment_Nm=[rec["Mx_Nm"], rec["My_Nm"], rec["Mz_Nm"]],
                            name=rec["case"])
        r = solve(model, load)
        forces = {f.side: f.force for f in r.state.facets}
        rows.append({"case": rec["case"], "converged": r.converged,
                     "left_N": forces.get("left", 0.0), "right_N": forces.get("right", 0.0),
                     "sum_N": sum(forces.values()), "reference_N": rec["facet_force_N"],
                     "note": rec["note"], "source": rec["source"]})
    return pd.DataFrame(rows)

