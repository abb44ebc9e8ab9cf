"""The MAP estimate (least squares with the exact sensitivities) and its Laplace posterior."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from segment.studies.calibration.forward import Forward
from segment.studies.calibration.misfit import MISFIT_COLUMNS, _misfits
from segment.studies.calibration.prior import _bounded_x0, _uniform_precision, prior_residual
from segment.studies.calibration.result import (
    DATA_DETERMINED_VARIANCE_RATIO,
    MISFIT_Z,
    RIDGE,
    STATUS_MESSAGES,
    CalibrationResult,
    bound_flags,
)
from segment.studies.calibration.targets import load_targets
from segment.studies.space import load_space

log = logging.getLogger("segment.studies.calibration")


def _laplace(space, J_data, p):
    """Laplace covariance, prior covariance and weighted sensitivity matrix at ``p``."""
    _, dr = prior_residual(space, p)
    U = np.diag(_uniform_precision(space))
    H0 = dr.T @ dr + U
    H = J_data.T @ J_data + H0
    cov = np.linalg.pinv(H)
    prior_var = 1.0 / np.diag(H0)
    return cov, prior_var


def calibrate(model, targets=None, *, space=None, x0=None, misfit_check: bool = True,
              n_threads: int | None = 1, max_nfev: int = 100,
              ftol: float = 1e-10, cases=None) -> CalibrationResult:
    """MAP estimate, Laplace posterior, identifiability and misfit analysis.

    Parameters
    ----------
    model : Segment, optional
        The intact base model . The space's nominal values are
        read from it (:meth:`~segment.studies.space.ParameterSpace.for_model`).
    targets : Targets, path or None
        Default: the packaged ``data/calibration_targets.csv``.
    space : ParameterSpace, path or None
        Default: the packaged ``data/parameter_space.csv``.
    x0 : array_like (D,), optional
        Start (default: the model's own values), clipped into the ranges.
    cases : mapping name -> Load, optional
        The load cases the targets name (default: the packaged ones; ``segment --data DIR
        calibrate`` passes DIR's).
    misfit_check : bool
        Analyse targets the MAP misses (module doc).
    n_threads : int or None
        Threads of the parameter-set kernel (default 1: the optimizer evaluates one set at a
        time, and waking a thread pool costs more than it saves: measured 6 ms per evaluation
        on one thread against 140 ms on two on a loaded 2-core machine).
    max_nfev, ftol
        As :func:`scipy.optimize.least_squares`.

    Returns
    -------
    CalibrationResult

    Examples
    --------
    >>> from segment.core.published import c5c6
    >>> from segment.studies.calibration import calibrate
    >>> r = calibrate(c5c6())
    >>> r.success, len(r.x)
    (True, 21)
    """
    import time

    from scipy.optimize import least_squares

    t0 = time.perf_counter()
    space = load_space(space).for_model(model)
    targets = load_targets(targets)
    fwd = Forward(model, space, targets, n_threads=n_threads, cases=cases)
    cache = {}

    def evaluate(p):
        key = p.tobytes()
        if key not in cache:
            cache.clear()
            y, ok, jac = fwd(p[None], sensitivities=True)
            cache[key] = (y[0], bool(ok[0]), jac[0])
        return cache[key]

    sd = targets.sd
    start = _bounded_x0(space, x0)
    flat = np.flatnonzero(np.array(space.distributions) == "uniform")
    ridge = np.zeros((flat.size, space.dim))
    ridge[np.arange(flat.size), flat] = RIDGE / (space.upper - space.lower)[flat]

    def fun(p):
        y, _, _ = evaluate(p)
        r_p, _ = prior_residual(space, p)
        return np.concatenate([(y - targets.values) / sd, r_p, ridge @ (p - start)])

    def jac(p):
        _, _, j = evaluate(p)
        _, dr = prior_residual(space, p)
        return np.vstack([j / sd[:, None], dr, ridge])

    y_nom, ok_nom, _ = fwd(start[None])
    if not ok_nom[0]:
        return _failed(space, targets, start, "an equilibrium did not converge at the start",
                       t0, fwd)
    sol = least_squares(fun, start, jac=jac, bounds=(space.lower, space.upper),
                        x_scale=space.upper - space.lower, method="trf", ftol=ftol,
                        xtol=1e-10, gtol=1e-10, max_nfev=max_nfev)
    p = np.clip(sol.x, space.lower, space.upper)
    y, ok, J = evaluate(p)
    status = 0 if sol.status > 0 and ok else (2 if not ok else 1)
    message = STATUS_MESSAGES[status] + ("" if status != 1 else f": {sol.message}")
    Jw = J / sd[:, None]
    cov, prior_var = _laplace(space, Jw, p)
    post_sd = np.sqrt(np.clip(np.diag(cov), 0, None))
    prior_sd = np.sqrt(prior_var)
    corr = cov / np.outer(post_sd, post_sd)
    S = Jw * prior_sd[None, :]
    sv = np.linalg.svd(S, compute_uv=False)
    verdicts = tuple("data" if v < DATA_DETERMINED_VARIANCE_RATIO else "prior"
                     for v in post_sd ** 2 / prior_var)
    at_bound = bound_flags(p, space.lower, space.upper)
    pred_sd = np.sqrt(np.einsum("ij,jk,ik->i", J, cov, J))
    missed = np.flatnonzero(np.abs(y - targets.values) > MISFIT_Z * targets.sd)
    misfits = (_misfits(fwd, space, targets, p, y, missed) if misfit_check
               else pd.DataFrame(columns=MISFIT_COLUMNS))
    elapsed = time.perf_counter() - t0
    log.info("calibrate: %s in %.2f s (%d evaluations)", message, elapsed, sol.nfev)
    return CalibrationResult(
        x=p, success=status == 0, status=status, message=message, names=space.names,
        units=space.units, nominal=space.nominal.copy(), lower=space.lower.copy(),
        upper=space.upper.copy(), prior_sd=prior_sd, posterior_sd=post_sd, covariance=cov,
        correlation=corr, singular_values=sv, verdicts=verdicts, at_bound=at_bound,
        targets=targets, prediction_nominal=y_nom[0], prediction=y, prediction_sd=pred_sd,
        misfits=misfits, nfev=int(sol.nfev), n_solves=fwd.n_solves, elapsed=elapsed,
        space_path=space.path, space=space)


def _failed(space, targets, p, message, t0, fwd):
    import time

    d, n = space.dim, len(targets)
    nan_d = np.full(d, np.nan)
    return CalibrationResult(
        x=p, success=False, status=2, message=message, names=space.names, units=space.units,
        nominal=space.nominal.copy(), lower=space.lower.copy(), upper=space.upper.copy(),
        prior_sd=nan_d, posterior_sd=nan_d, covariance=np.full((d, d), np.nan),
        correlation=np.full((d, d), np.nan), singular_values=np.array([]),
        verdicts=("prior",) * d, at_bound=("",) * d, targets=targets,
        prediction_nominal=np.full(n, np.nan), prediction=np.full(n, np.nan),
        prediction_sd=np.full(n, np.nan), misfits=pd.DataFrame(columns=MISFIT_COLUMNS),
        nfev=0, n_solves=fwd.n_solves, elapsed=time.perf_counter() - t0, space_path=space.path,
        space=space)
