"""Structural misfit: what the model can reach within the parameter ranges, and which single
parameter would have to leave its range to meet a target."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

from segment.core.tables import ImplausibleDataWarning
from segment.studies.calibration.forward import Forward
from segment.studies.calibration.prior import _bounded_x0
from segment.studies.calibration.result import MISFIT_Z, RIDGE, CalibrationResult
from segment.studies.calibration.targets import load_targets
from segment.studies.space import load_space

MISFIT_COLUMNS = ("target", "value", "SD", "start_prediction", "best_within_ranges",
                  "reachable", "parameter", "needed", "lower", "upper", "outside_by",
                  "outside_by_range_widths", "other_targets_missed", "alternatives")
NEWTON_STEPS = 20
"""Newton steps for the value one parameter needs (quadratic convergence: a handful suffice)."""
NEWTON_RTOL = 1e-12
"""Relative miss at which that Newton stops: rounding level, so the value does not depend on
the CPU's last digits (a looser stop left it at the tolerance: 2e-4 mm between hosts)."""
SEARCH_TOL = 1e-12
"""ftol, xtol and gtol of the search for the best prediction within the ranges. It runs to
convergence (it stopped after 30 evaluations before: its result then depended on the path,
2e-4 deg between two CPUs, and for intact AR it reported 1.894 deg where the converged search
reaches 1.85 deg)."""
SEARCH_MAX_NFEV = 1000


def _one_parameter_value(fwd, space, p, i, j, goal):
    """Value of parameter j (others at p) that brings target i to ``goal``: Newton on the
    real model with the exact derivative, no range; None when it cannot (zero slope,
    non-physical value, failed equilibrium)."""
    x = p.copy()
    with warnings.catch_warnings():
        # the needed value may leave the plausible range of its field (that is the answer)
        warnings.simplefilter("ignore", ImplausibleDataWarning)
        return _newton_one(fwd, space, x, i, j, goal)


def _newton_one(fwd, space, x, i, j, goal):
    for _ in range(NEWTON_STEPS):
        y, ok, J = fwd(x[None], sensitivities=True, strict=False)
        if not ok[0]:
            return None, None
        miss = goal - y[0, i]
        slope = J[0, i, j]
        if abs(miss) <= NEWTON_RTOL * max(1.0, abs(goal)):
            return x[j], y[0]
        if slope == 0.0 or not math.isfinite(slope):
            return None, None
        step = miss / slope
        new = x[j] + step
        if space.fields[j] in ("stiffness_scale", "radius_mm", "l0_mm", "blend_C"):
            new = max(new, 0.5 * x[j]) if new <= 0 else new   # stay physical: halve at most
        if space.fields[j] == "gap_mm":
            new = max(new, 0.0)
        if space.fields[j] == "inclination_deg":
            new = min(max(new, -89.0), 89.0)
        x[j] = new
    y, ok, _ = fwd(x[None], strict=False)
    if ok[0] and abs(goal - y[0, i]) <= 1e-3 * max(1.0, abs(goal)):
        return x[j], y[0]
    return None, None


def _misfits(fwd, space, targets, p_map, y_map, index, z=MISFIT_Z):
    """Misfit rows (:data:`MISFIT_COLUMNS`) of the targets at ``index``; a target is
    reachable when the best prediction within the ranges is within ``z`` SDs."""
    from scipy.optimize import least_squares

    rows = []
    width = space.upper - space.lower
    for i in index:
        label = targets.labels[i]

        # the target's residual and a vanishing ridge towards the start (as the MAP's, RIDGE):
        # parameters the target cannot see stay where they are, so the best point is unique
        # and the values found there (other targets, the parameter needed) do not depend on
        # the search's path
        def f1(p, i=i):
            y, _, _ = fwd(p[None])
            return np.concatenate([[(y[0, i] - targets.values[i]) / targets.sd[i]],
                                   RIDGE * (p - p_map) / width])

        def j1(p, i=i):
            _, _, J = fwd(p[None], sensitivities=True)
            return np.vstack([J[0, i][None, :] / targets.sd[i], np.diag(RIDGE / width)])

        best = least_squares(f1, p_map, jac=j1, bounds=(space.lower, space.upper),
                             x_scale=width, ftol=SEARCH_TOL, xtol=SEARCH_TOL, gtol=SEARCH_TOL,
                             max_nfev=SEARCH_MAX_NFEV)
        p_best = np.clip(best.x, space.lower, space.upper)
        y_best = fwd(p_best[None])[0][0]
        reachable = abs(y_best[i] - targets.values[i]) <= z * targets.sd[i]
        rec = {"target": label, "value": targets.values[i], "SD": targets.sd[i],
               "start_prediction": y_map[i], "best_within_ranges": y_best[i],
               "reachable": bool(reachable), "parameter": "", "needed": np.nan,
               "lower": np.nan, "upper": np.nan, "outside_by": np.nan,
               "outside_by_range_widths": np.nan, "other_targets_missed": "",
               "alternatives": ""}
        if not reachable:
            # which single parameter, leaving its range, would reach the target?
            goal = targets.values[i]
            cands = []
            _, _, J = fwd(p_best[None], sensitivities=True)
            for j in np.flatnonzero(np.abs(J[0, i]) > 0):
                v, y_all = _one_parameter_value(fwd, space, p_best, i, j, goal)
                if v is None:
                    continue
                out = v - space.upper[j] if v > space.upper[j] else (
                    v - space.lower[j] if v < space.lower[j] else 0.0)
                others = [targets.labels[k] for k in range(len(targets)) if k != i
                          and abs(y_all[k] - targets.values[k]) > MISFIT_Z * targets.sd[k]]
                cands.append((abs(out) / width[j], j, v, out, others))
            if cands:
                cands.sort(key=lambda c: c[0])
                frac, j, v, out, others = cands[0]
                rec["alternatives"] = "; ".join(
                    f"{space.names[c[1]]} = {c[2]:.4g} ({c[0]:.2f} range widths outside)"
                    for c in cands[1:4])
                rec.update(parameter=space.names[j], needed=v, lower=space.lower[j],
                           upper=space.upper[j], outside_by=out,
                           outside_by_range_widths=frac,
                           other_targets_missed="; ".join(others))
            else:
                rec["parameter"] = "none (no single parameter reaches it)"
        rows.append(rec)
    return pd.DataFrame(rows, columns=MISFIT_COLUMNS)


def reach(model, targets=None, *, space=None, which=None, start=None,
          z: float = MISFIT_Z, n_threads: int | None = 1, cases=None) -> pd.DataFrame:
    """Can each target be met by some parameter set within the ranges, on its own?

    For each target of ``which`` (labels or row numbers; default all) the best prediction
    within the ranges for that target alone (bounded least squares from ``start``, default the
    nominal set: a local search); when even that misses by more than ``z`` SDs (default
    :data:`MISFIT_Z`; ``z=0`` asks for the target value itself), the one parameter
    that would have to leave its range, and by how much (Newton on the real model). Rows as
    :attr:`CalibrationResult.misfits`. ``cases``: as :func:`calibrate`.
    """
    space = load_space(space).for_model(model)
    targets = load_targets(targets)
    if which is None:
        index = list(range(len(targets)))
    else:
        index = []
        for w in which:
            if isinstance(w, str):
                if w not in targets.labels:
                    raise ValueError(f"unknown target {w!r}; expected one of "
                                     f"{', '.join(targets.labels)}")
                index.append(targets.labels.index(w))
            else:
                index.append(int(w))
    fwd = Forward(model, space, targets, n_threads=n_threads, cases=cases)
    p = _bounded_x0(space, start.x if isinstance(start, CalibrationResult) else start)
    y, ok, _ = fwd(p[None])
    if not ok[0]:
        raise ValueError("an equilibrium did not converge at the start set")
    if not (math.isfinite(z) and z >= 0):
        raise ValueError(f"z must be a finite number >= 0, got {z!r}")
    return _misfits(fwd, space, targets, p, y[0], index, z=z)
