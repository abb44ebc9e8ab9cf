"""How much the calibration depends on its assumptions: the target SDs, each target left
out in turn, and predictive bands from posterior samples."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from segment._checks import check_count
from segment.core.published import LOAD_CASES
from segment.studies.calibration.fit import calibrate
from segment.studies.calibration.forward import Forward, configuration_model
from segment.studies.calibration.posterior import PosteriorSamples
from segment.studies.calibration.result import CalibrationResult
from segment.studies.calibration.targets import load_targets
from segment.studies.reference import CASES, DISPLACEMENT_COLUMNS
from segment.studies.space import load_space


def sd_sensitivity(model, targets=None, *, space=None, factors=(0.5, 1.0, 2.0),
                   n_threads: int | None = 1, cases=None) -> pd.DataFrame:
    """The MAP and its Laplace SD per parameter, and the calibrated predictions, with every
    target SD multiplied by each of ``factors`` (the assumed SDs made visible: half and
    double by default). Long table: factor, kind (``parameter`` or ``target``), name, value,
    sd, verdict (parameters) or z (targets), and the run's status message."""
    targets = load_targets(targets)
    rows = []
    for f in factors:
        r = calibrate(model, targets.with_sd_scaled(f), space=space, misfit_check=False,
                      n_threads=n_threads, cases=cases)
        for j, name in enumerate(r.names):
            rows.append({"sd_factor": f, "kind": "parameter", "name": name, "value": r.x[j],
                         "sd": r.posterior_sd[j], "verdict": r.verdicts[j], "z": np.nan,
                         "status": r.message})
        for i, label in enumerate(r.targets.labels):
            rows.append({"sd_factor": f, "kind": "target", "name": label,
                         "value": r.prediction[i], "sd": r.prediction_sd[i], "verdict": "",
                         "z": (r.prediction[i] - targets.values[i]) / r.targets.sd[i],
                         "status": r.message})
    return pd.DataFrame(rows)


def cross_validate(model, targets=None, *, space=None,
                   n_threads: int | None = 1, cases=None) -> pd.DataFrame:
    """Leave-one-case-out cross-validation: for each load case, calibrate without its targets
    (both configurations) and predict them.

    Returns one row per held-out target: the fold's case, the target, its value and SD, the
    prediction of the fold's MAP, the Laplace SD of that prediction, and
    ``z = (prediction - value) / sqrt(SD^2 + prediction_sd^2)`` (the held-out error in
    predictive SDs), with the fold's status message.
    """
    space = load_space(space).for_model(model)
    targets = load_targets(targets)
    rows = []
    for case in [c for c in CASES if c in targets.cases]:
        held = [i for i, c in enumerate(targets.cases) if c == case]
        kept = [i for i, c in enumerate(targets.cases) if c != case]
        if not kept:
            raise ValueError("cross-validation needs targets of at least two cases")
        r = calibrate(model, targets.subset(kept), space=space, misfit_check=False,
                      n_threads=n_threads, cases=cases)
        fwd = Forward(model, space, targets.subset(held), n_threads=n_threads, cases=cases)
        y, ok, J = fwd(r.x[None], sensitivities=True)
        for k, i in enumerate(held):
            psd = float(np.sqrt(J[0, k] @ r.covariance @ J[0, k]))
            rows.append({"case": case, "target": targets.labels[i],
                         "value": targets.values[i], "SD": targets.sd[i],
                         "prediction": y[0, k] if ok[0] else np.nan, "prediction_sd": psd,
                         "z": (y[0, k] - targets.values[i]) / math.hypot(targets.sd[i], psd),
                         "status": r.message})
    return pd.DataFrame(rows)


def predictive_bands(model, samples=None, *, space=None, configuration: str = "intact",
                     n: int = 2000, seed: int = 0, n_threads: int | None = None, cases=None):
    """Posterior predictive bands of all nine cases in all six components.

    Parameters
    ----------
    samples : PosteriorSamples, CalibrationResult or array (K, D)
        Posterior draws; a CalibrationResult gives ``n`` draws of its Laplace posterior,
        clipped into the ranges (an approximation: say which one a figure shows).
    configuration : str
        ``intact`` or ``disc segment``.
    cases : mapping name -> Load, optional
        The nine cases (default: the packaged ones).

    Returns
    -------
    DataFrame
        case, component, unit, q2.5, median, q97.5, mean and the fraction of draws whose
        equilibria converged; displacements from the unloaded pose [mm, deg].
    """
    from segment.studies.sets import solve_sets
    space = load_space(space).for_model(model)
    n = check_count(n, "n")
    cases = dict(LOAD_CASES) if cases is None else dict(cases)
    if isinstance(samples, PosteriorSamples):
        P = samples.samples
        if len(P) > n:
            P = P[np.random.default_rng(seed).choice(len(P), n, replace=False)]
    elif isinstance(samples, CalibrationResult):
        rng = np.random.default_rng(seed)
        P = rng.multivariate_normal(samples.x, samples.covariance, size=n,
                                    check_valid="ignore")
        P = np.clip(P, space.lower, space.upper)
    else:
        P = space.check(samples)
    cfg = configuration_model(model, configuration)
    loads = [cases[c] for c in CASES]
    r = solve_sets(cfg, P, loads, space=space, n_threads=n_threads)
    conv = r.converged
    rows = []
    for j, case in enumerate(CASES):
        good = conv[:, j]
        for c, comp in enumerate(DISPLACEMENT_COLUMNS):
            v = r.displacement[good, j, c]
            v = np.degrees(v) if c >= 3 else v
            lo, med, hi = np.percentile(v, [2.5, 50, 97.5]) if v.size else (np.nan,) * 3
            rows.append({"case": case, "component": comp, "q2.5": lo, "median": med,
                         "q97.5": hi, "mean": v.mean() if v.size else np.nan,
                         "converged_fraction": float(good.mean())})
    return pd.DataFrame(rows)
