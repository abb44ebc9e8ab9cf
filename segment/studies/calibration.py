"""Bayesian calibration of the parameter space against observed responses.

Problem
-------
Observed responses ``v_i`` with standard deviations ``s_i`` (:class:`Targets`, read from
``data/calibration_targets.csv``) and the model's responses ``y_i(p)`` for a parameter set ``p``
over :class:`~segment.space.ParameterSpace` (displacements from the unloaded equilibrium of a
configuration under a load case). With independent Gaussian errors and the space's truncated
priors the log posterior is, up to a constant::

    log pi(p | v) = -1/2 sum_i ((y_i(p) - v_i) / s_i)^2 + sum_j log prior_j(p_j)      (1)

    normal prior:     log prior_j = -1/2 ((p_j - mu_j) / sigma_j)^2
    lognormal prior:  log prior_j = -1/2 ((ln p_j - mu_j) / sigma_j)^2 - ln p_j
    uniform prior:    log prior_j = 0                       (all: -inf outside [lower, upper])

Solution
--------
* **MAP**: :func:`scipy.optimize.least_squares` (``trf``, the bounds are the priors'
  truncation, ``x_scale`` the range widths) on the stacked residuals
  ``r = [(y - v) / s, (p - mu) / sigma (normal), (ln p - mu) / sigma (lognormal)]``, with the
  Jacobian ``dy/dp`` from the exact sensitivities (:mod:`segment.sensitivity`), plus a
  vanishing ridge on the uniform parameters (:data:`RIDGE`). The
  ``- ln p_j`` of the lognormal density is left out of the MAP residuals (it is not a
  square); the MCMC uses the full density (1). Decision, measured: it moves the MAP of
  ``facet_blend_C`` (the only lognormal) by the curvature of ``ln p`` alone, far below its
  posterior SD.
* **Laplace**: the posterior covariance at the MAP is ``(J^T J + U)^-1`` where ``J`` stacks the
  weighted data and prior Jacobians and ``U`` is the diagonal precision ``12 / (upper -
  lower)^2`` of each uniform prior (its variance): a flat prior has no curvature, and without
  ``U`` a parameter the data cannot see would get an infinite variance.
* **Identifiability**: the singular values of the weighted sensitivity matrix
  ``S_ij = (dy_i/dp_j) sd_prior_j / s_i`` (response to one prior SD, in target SDs), the posterior
  correlations, and per parameter a verdict: ``"data"`` when the data at least halve the prior
  variance (posterior / prior variance < :data:`DATA_DETERMINED_VARIANCE_RATIO`), else
  ``"prior"``.
* **Structural misfit**: a target the MAP misses by more than :data:`MISFIT_Z` SDs is checked on
  its own: the best the model can do for that target alone within the ranges (bounded least
  squares on that one residual). If even that misses, the target is out of reach within the
  ranges, and for each parameter the value it would need, all others at that best point, is
  found by Newton on the real model (no range); the report names the parameter that would have
  to leave its range by the smallest fraction of its range. A parameter is never moved outside
  its range by the calibration itself.
* **Posterior samples**: :func:`sample_posterior` runs emcee (``c5c6-segment[study]``) on (1) with
  the parameter-set kernel (:func:`segment.sets.solve_sets`), reporting acceptance,
  autocorrelation time and split-R-hat.
"""

from __future__ import annotations

import csv
import logging
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from segment.core.io import _Table, data_dir
from segment.studies.reference import CASES, DISPLACEMENT_COLUMNS
from segment.studies.space import ParameterSpace, load_space

__all__ = [
    "CONFIGURATIONS",
    "CalibrationResult",
    "PosteriorSamples",
    "Targets",
    "c6_reference_points",
    "calibrate",
    "configuration_model",
    "cross_validate",
    "default_targets_path",
    "icr_comparison",
    "icr_offset",
    "load_targets",
    "planar_centre",
    "predictive_bands",
    "reach",
    "sample_posterior",
    "sd_sensitivity",
    "shipped_calibrated_dir",
    "validation_only",
    "write_calibrated",
]

log = logging.getLogger(__name__)

CONFIGURATIONS = ("intact", "disc segment")
"""Target configurations: ``intact`` (disc + six ligaments + two facets) and ``disc segment``
(Moroney's specimens with the posterior elements removed: disc + ALL + PLL, as the
``posterior removed`` configuration of :mod:`segment.validation`)."""
TARGET_COLUMNS = ("case", "configuration", "quantity", "value", "SD", "SD_basis", "source")
SD_BASES = ("published", "assumed")
MISFIT_Z = 2.0
"""A target is missed when the prediction is more than this many target SDs away."""
DATA_DETERMINED_VARIANCE_RATIO = 0.5
"""Posterior / prior variance below which a parameter is called determined by the data."""
RIDGE = 1e-6
"""Weight of a residual ``RIDGE (p - start) / (upper - lower)`` per uniform parameter in the
MAP: a flat prior leaves the MAP undetermined along directions the data cannot see, and the
trust-region steps then wander there (measured: an unseen rest length moved 0.15 mm); the
ridge keeps such a parameter at its start and moves a seen one by ~1e-12 of its range."""
STATUS_MESSAGES = {
    0: "converged",
    1: "the optimizer stopped without convergence",
    2: "an equilibrium did not converge at the MAP",
}


def default_targets_path() -> Path:
    """The packaged ``calibration_targets.csv``."""
    return data_dir() / "calibration_targets.csv"


# ---------------------------------------------------------------------------- targets
@dataclass(frozen=True, eq=False)
class Targets:
    """Observed responses (one per row of the targets file).

    Attributes
    ----------
    cases, configurations, quantities : tuple of str
        Load case (``AS`` ... ``AR``), configuration (:data:`CONFIGURATIONS`) and the
        displacement component from the unloaded equilibrium (``x_mm`` ... ``phi_z_deg``).
    values, sd : ndarray (n,)
        Observed value and its SD, in the quantity's unit [mm or deg].
    sd_basis : tuple of str
        ``published`` or ``assumed``.
    sources : tuple of str
    path : str
    """

    cases: tuple[str, ...]
    configurations: tuple[str, ...]
    quantities: tuple[str, ...]
    values: np.ndarray
    sd: np.ndarray
    sd_basis: tuple[str, ...]
    sources: tuple[str, ...]
    path: str = "calibration_targets.csv"

    def __len__(self) -> int:
        return len(self.cases)

    @property
    def labels(self) -> tuple[str, ...]:
        """``"<case> <configuration> <quantity>"`` per target."""
        return tuple(f"{c} {g} {q}" for c, g, q in
                     zip(self.cases, self.configurations, self.quantities, strict=True))

    @classmethod
    def from_csv(cls, path: str | Path | None = None) -> Targets:
        """Read and check a targets file (default: the packaged one).

        Raises
        ------
        ValueError
            One message with every error of the file (the reader of :mod:`segment.io`),
            each naming the line, the row (1 = first data row), the column and the value: missing
            column, unknown case, configuration or quantity, a non-number or non-finite value
            or SD, SD <= 0, an unknown SD basis, an empty source, a duplicate target.
        """
        path = default_targets_path() if path is None else Path(path)
        t = _Table(path, TARGET_COLUMNS[:-1], collect=True, what="targets")   # + source
        out = {k: [] for k in TARGET_COLUMNS}
        seen: dict[tuple[str, str, str], int] = {}
        for i, row in t.rows():
            if i in t.broken_rows:
                continue
            for col, allowed in (("case", CASES), ("configuration", CONFIGURATIONS),
                                 ("quantity", DISPLACEMENT_COLUMNS), ("SD_basis", SD_BASES)):
                t.key(i, row, col, allowed)
            nums = {col: t.number(i, row, col) for col in ("value", "SD")}
            if math.isfinite(nums["SD"]) and not nums["SD"] > 0:
                t.error(i, "SD", f"must be > 0, got {nums['SD']:g}")
            key = (row["case"], row["configuration"], row["quantity"])
            if key in seen:
                t.error(i, None, f"duplicate target {key} (already in row {seen[key]})")
            seen.setdefault(key, i)
            if not t.ok(i):
                continue
            for col in TARGET_COLUMNS:
                out[col].append(nums.get(col, row[col]))
        t.finish()
        return cls(cases=tuple(out["case"]), configurations=tuple(out["configuration"]),
                   quantities=tuple(out["quantity"]), values=_frozen(out["value"]),
                   sd=_frozen(out["SD"]), sd_basis=tuple(out["SD_basis"]),
                   sources=tuple(out["source"]), path=str(path))

    def subset(self, index) -> Targets:
        """The targets at ``index`` (a sequence of row numbers, 0-based)."""
        idx = [int(i) for i in index]
        if not idx:
            raise ValueError("a target subset needs at least one target")
        return Targets(cases=tuple(self.cases[i] for i in idx),
                       configurations=tuple(self.configurations[i] for i in idx),
                       quantities=tuple(self.quantities[i] for i in idx),
                       values=_frozen(self.values[idx]), sd=_frozen(self.sd[idx]),
                       sd_basis=tuple(self.sd_basis[i] for i in idx),
                       sources=tuple(self.sources[i] for i in idx), path=self.path)

    def with_sd_scaled(self, factor: float) -> Targets:
        """The same targets with every SD multiplied by ``factor`` (> 0)."""
        factor = float(factor)
        if not (math.isfinite(factor) and factor > 0):
            raise ValueError(f"SD factor must be a finite number > 0, got {factor!r}")
        return Targets(cases=self.cases, configurations=self.configurations,
                       quantities=self.quantities, values=self.values,
                       sd=_frozen(self.sd * factor), sd_basis=self.sd_basis,
                       sources=self.sources, path=self.path)

    def with_values(self, values) -> Targets:
        """The same targets with other observed values (n,) (e.g. synthetic ones)."""
        v = np.array(values, dtype=float)
        if v.shape != self.values.shape or not np.all(np.isfinite(v)):
            raise ValueError(f"values must be {self.values.shape[0]} finite numbers, got "
                             f"shape {v.shape}")
        return Targets(cases=self.cases, configurations=self.configurations,
                       quantities=self.quantities, values=_frozen(v), sd=self.sd,
                       sd_basis=self.sd_basis, sources=self.sources, path=self.path)

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame({"case": self.cases, "configuration": self.configurations,
                             "quantity": self.quantities, "value": self.values,
                             "SD": self.sd, "SD_basis": self.sd_basis,
                             "source": self.sources})


def _frozen(x) -> np.ndarray:
    a = np.array(x, dtype=float)
    a.setflags(write=False)
    return a


def load_targets(targets=None) -> Targets:
    """``targets`` as :class:`Targets`: None (the packaged file), a path, or Targets."""
    if isinstance(targets, Targets):
        return targets
    return Targets.from_csv(targets)


# ---------------------------------------------------------------------------- forward model
def configuration_model(model, configuration: str):
    """The model of a target configuration derived from the intact ``model``."""
    if configuration == "intact":
        return model
    if configuration == "disc segment":
        return model.with_ligaments(("ALL", "PLL")).replace(facets=())
    raise ValueError(f"unknown configuration {configuration!r}; expected one of "
                     f"{', '.join(CONFIGURATIONS)}")


class _Forward:
    """Predictions y(P) (M, n) of the targets and their exact derivatives (M, n, D)."""

    def __init__(self, model, space: ParameterSpace, targets: Targets, *, n_threads=None,
                 client=None):
        from segment import LOAD_CASES

        self.space, self.targets = space, targets
        self.n_threads, self.client = n_threads, client
        self.groups = []
        for config in CONFIGURATIONS:
            rows = [i for i, g in enumerate(targets.configurations) if g == config]
            if not rows:
                continue
            cases = sorted({targets.cases[i] for i in rows}, key=CASES.index)
            loads = [LOAD_CASES[c] for c in cases]
            col = [DISPLACEMENT_COLUMNS.index(targets.quantities[i]) for i in rows]
            load_idx = [cases.index(targets.cases[i]) for i in rows]
            self.groups.append((configuration_model(model, config), loads, np.array(rows),
                                np.array(load_idx), np.array(col)))
        self.n_solves = 0

    def __call__(self, P, *, sensitivities=False, progress=False):
        from segment.studies.sets import solve_sets

        P = np.atleast_2d(np.asarray(P, dtype=float))
        m, n, d = P.shape[0], len(self.targets), self.space.dim
        y = np.empty((m, n))
        ok = np.ones(m, dtype=bool)
        jac = np.empty((m, n, d)) if sensitivities else None
        for cfg_model, loads, rows, load_idx, col in self.groups:
            r = solve_sets(cfg_model, P, loads, space=self.space, sensitivities=sensitivities,
                           n_threads=self.n_threads, client=self.client, progress=progress)
            self.n_solves += m * (len(loads) + 1)
            disp = r.displacement[:, load_idx, col]                  # (M, k)
            rot = col >= 3
            y[:, rows] = np.where(rot, np.degrees(disp), disp)
            ok &= r.converged.all(axis=1)
            if sensitivities:
                dd = r.dq_dp - r.dq_unloaded_dp[:, None]             # (M, N, 6, D)
                g = dd[:, load_idx, col, :]                          # (M, k, D)
                jac[:, rows, :] = np.where(rot[None, :, None], np.degrees(g), g)
        return y, ok, jac


# ---------------------------------------------------------------------------- priors
def _prior_rows(space: ParameterSpace):
    """Indices of the parameters with a Gaussian residual (normal, lognormal)."""
    return np.array([j for j, d in enumerate(space.distributions) if d != "uniform"], dtype=int)


def _prior_residual(space: ParameterSpace, p):
    idx = _prior_rows(space)
    r = np.empty(idx.size)
    dr = np.zeros((idx.size, space.dim))
    for k, j in enumerate(idx):
        if space.distributions[j] == "normal":
            r[k] = (p[j] - space.mu[j]) / space.sigma[j]
            dr[k, j] = 1.0 / space.sigma[j]
        else:
            r[k] = (math.log(p[j]) - space.mu[j]) / space.sigma[j]
            dr[k, j] = 1.0 / (space.sigma[j] * p[j])
    return r, dr


def _uniform_precision(space: ParameterSpace) -> np.ndarray:
    """Diagonal precision 12 / (upper - lower)^2 of the uniform priors, 0 for the others."""
    w = space.upper - space.lower
    return np.where(np.array(space.distributions) == "uniform", 12.0 / w ** 2, 0.0)


def log_prior(space: ParameterSpace, P) -> np.ndarray:
    """Log density (1) of the truncated priors, up to a constant, for sets P (M, D)."""
    P = np.atleast_2d(np.asarray(P, dtype=float))
    out = np.zeros(P.shape[0])
    inside = np.all((P >= space.lower) & (P <= space.upper), axis=1)
    out[~inside] = -np.inf
    for j, dist in enumerate(space.distributions):
        if dist == "normal":
            out -= 0.5 * ((P[:, j] - space.mu[j]) / space.sigma[j]) ** 2
        elif dist == "lognormal":
            with np.errstate(invalid="ignore", divide="ignore"):
                lp = np.log(np.where(P[:, j] > 0, P[:, j], np.nan))
            out -= np.where(np.isfinite(lp), 0.5 * ((lp - space.mu[j]) / space.sigma[j]) ** 2
                            + lp, np.inf)
    return out


# ---------------------------------------------------------------------------- result
@dataclass(frozen=True, eq=False)
class CalibrationResult:
    """Outcome of :func:`calibrate` (scipy.optimize-style: it reports, it does not raise).

    Attributes
    ----------
    x : ndarray (D,)
        MAP parameter set (units of the space's ``unit`` column).
    success : bool
        The optimizer converged and every equilibrium at the MAP converged.
    status : int
        0 converged, 1 optimizer not converged, 2 an equilibrium failed at the MAP
        (:data:`STATUS_MESSAGES`).
    message : str
    names, units : tuple of str
    prior_sd, posterior_sd : ndarray (D,)
        Laplace prior and posterior SDs (see the module doc).
    covariance, correlation : ndarray (D, D)
        Laplace posterior covariance and correlation at the MAP.
    singular_values : ndarray
        Of the weighted sensitivity matrix S (module doc), descending.
    verdicts : tuple of str
        ``"data"`` or ``"prior"`` per parameter.
    at_bound : tuple of str
        ``"lower"``, ``"upper"`` or ``""`` per parameter (MAP on its range's edge).
    targets : Targets
    prediction_nominal, prediction : ndarray (n,)
        Target predictions of the nominal parameter set and of the MAP.
    prediction_sd : ndarray (n,)
        Laplace SD of the MAP prediction (linearised).
    misfits : DataFrame
        One row per missed target (``MISFIT_Z`` SDs): best reachable value within the ranges,
        and the parameter that would have to leave its range and by how much.
    n_solves, nfev : int
        Equilibria solved and optimizer function evaluations.
    """

    x: np.ndarray
    success: bool
    status: int
    message: str
    names: tuple[str, ...]
    units: tuple[str, ...]
    nominal: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    prior_sd: np.ndarray
    posterior_sd: np.ndarray
    covariance: np.ndarray
    correlation: np.ndarray
    singular_values: np.ndarray
    verdicts: tuple[str, ...]
    at_bound: tuple[str, ...]
    targets: Targets
    prediction_nominal: np.ndarray
    prediction: np.ndarray
    prediction_sd: np.ndarray
    misfits: pd.DataFrame
    nfev: int
    n_solves: int
    elapsed: float
    space_path: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def misfit(self) -> bool:
        """True when some target is out of reach within the parameter ranges."""
        return bool(len(self.misfits)) and bool((~self.misfits["reachable"]).any())

    def parameters(self) -> pd.DataFrame:
        """Prior vs posterior per parameter."""
        return pd.DataFrame({
            "parameter": self.names, "unit": self.units, "nominal": self.nominal,
            "lower": self.lower, "upper": self.upper, "prior_sd": self.prior_sd,
            "MAP": self.x, "posterior_sd": self.posterior_sd,
            "sd_ratio": self.posterior_sd / self.prior_sd, "determined_by": self.verdicts,
            "at_bound": [b or "no" for b in self.at_bound]})

    def agreement(self) -> pd.DataFrame:
        """Before / after agreement per target."""
        t = self.targets
        return pd.DataFrame({
            "case": t.cases, "configuration": t.configurations, "quantity": t.quantities,
            "target": t.values, "SD": t.sd, "SD_basis": t.sd_basis,
            "published_model": self.prediction_nominal, "calibrated": self.prediction,
            "calibrated_sd": self.prediction_sd,
            "z_published": (self.prediction_nominal - t.values) / t.sd,
            "z_calibrated": (self.prediction - t.values) / t.sd})

    def summary(self) -> str:
        """A plain-text summary (status, parameters, agreement, misfits)."""
        lines = [f"calibration: {self.message} ({self.nfev} evaluations, {self.n_solves} "
                 f"equilibria, {self.elapsed:.2f} s)"]
        lines.append("singular values of the weighted sensitivity matrix: "
                     + ", ".join(f"{s:.3g}" for s in self.singular_values))
        with pd.option_context("display.width", 160, "display.max_columns", 20):
            lines += ["", self.parameters().round(4).to_string(index=False), "",
                      self.agreement().round(4).to_string(index=False)]
            if len(self.misfits):
                lines += ["", "missed targets:", self.misfits.to_string(index=False)]
        return "\n".join(lines)


# ---------------------------------------------------------------------------- MAP
def _laplace(space, J_data, p):
    """Laplace covariance, prior covariance and weighted sensitivity matrix at ``p``."""
    _, dr = _prior_residual(space, p)
    U = np.diag(_uniform_precision(space))
    H0 = dr.T @ dr + U
    H = J_data.T @ J_data + H0
    cov = np.linalg.pinv(H)
    prior_var = 1.0 / np.diag(H0)
    return cov, prior_var


def _bounded_x0(space, x0):
    x0 = np.array(space.nominal if x0 is None else x0, dtype=float)
    return np.clip(x0, space.lower, space.upper)


def calibrate(model=None, targets=None, *, space=None, x0=None, misfit_check: bool = True,
              n_threads: int | None = 1, max_nfev: int = 100,
              ftol: float = 1e-10) -> CalibrationResult:
    """MAP estimate, Laplace posterior, identifiability and misfit analysis.

    Parameters
    ----------
    model : Segment, optional
        The intact base model (default :func:`segment.c5c6`).
    targets : Targets, path or None
        Default: the packaged ``data/calibration_targets.csv``.
    space : ParameterSpace, path or None
        Default: the packaged ``data/parameter_space.csv``.
    x0 : array_like (D,), optional
        Start (default: the nominal set), clipped into the ranges.
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
    >>> from segment.studies.calibration import calibrate
    >>> r = calibrate()
    >>> r.success, len(r.x)
    (True, 21)
    """
    import time

    from scipy.optimize import least_squares

    import segment

    t0 = time.perf_counter()
    model = segment.c5c6() if model is None else model
    space = load_space(space)
    targets = load_targets(targets)
    fwd = _Forward(model, space, targets, n_threads=n_threads)
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
        r_p, _ = _prior_residual(space, p)
        return np.concatenate([(y - targets.values) / sd, r_p, ridge @ (p - start)])

    def jac(p):
        _, _, j = evaluate(p)
        _, dr = _prior_residual(space, p)
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
    width = space.upper - space.lower
    at_bound = tuple("lower" if x - lo < 1e-6 * w else "upper" if hi - x < 1e-6 * w else ""
                     for x, lo, hi, w in zip(p, space.lower, space.upper, width, strict=True))
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
        space_path=space.path)


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
        nfev=0, n_solves=fwd.n_solves, elapsed=time.perf_counter() - t0, space_path=space.path)


# ---------------------------------------------------------------------------- misfit
MISFIT_COLUMNS = ("target", "value", "SD", "start_prediction", "best_within_ranges",
                  "reachable", "parameter", "needed", "lower", "upper", "outside_by",
                  "outside_by_range_widths", "other_targets_missed", "alternatives")
NEWTON_STEPS = 8


def _one_parameter_value(fwd, space, p, i, j, goal):
    """Value of parameter j (others at p) that brings target i to ``goal``: Newton on the
    real model with the exact derivative, no range; None when it cannot (zero slope,
    non-physical value, failed equilibrium)."""
    x = p.copy()
    for _ in range(NEWTON_STEPS):
        y, ok, J = fwd(x[None], sensitivities=True)
        if not ok[0]:
            return None, None
        miss = goal - y[0, i]
        slope = J[0, i, j]
        if abs(miss) <= 1e-6 * max(1.0, abs(goal)):
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
    y, ok, _ = fwd(x[None])
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

        def f1(p, i=i):
            y, _, _ = fwd(p[None])
            return [(y[0, i] - targets.values[i]) / targets.sd[i]]

        def j1(p, i=i):
            _, _, J = fwd(p[None], sensitivities=True)
            return J[0, i][None, :] / targets.sd[i]

        best = least_squares(f1, p_map, jac=j1, bounds=(space.lower, space.upper),
                             x_scale=width, max_nfev=30)
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


def reach(model=None, targets=None, *, space=None, which=None, start=None,
          z: float = MISFIT_Z, n_threads: int | None = 1) -> pd.DataFrame:
    """Can each target be met by some parameter set within the ranges, on its own?

    For each target of ``which`` (labels or row numbers; default all) the best prediction
    within the ranges for that target alone (bounded least squares from ``start``, default the
    nominal set: a local search); when even that misses by more than ``z`` SDs (default
    :data:`MISFIT_Z`; ``z=0`` asks for the target value itself), the one parameter
    that would have to leave its range, and by how much (Newton on the real model). Rows as
    :attr:`CalibrationResult.misfits`.
    """
    import segment

    model = segment.c5c6() if model is None else model
    space = load_space(space)
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
    fwd = _Forward(model, space, targets, n_threads=n_threads)
    p = _bounded_x0(space, start.x if isinstance(start, CalibrationResult) else start)
    y, ok, _ = fwd(p[None])
    if not ok[0]:
        raise ValueError("an equilibrium did not converge at the start set")
    if not (math.isfinite(z) and z >= 0):
        raise ValueError(f"z must be a finite number >= 0, got {z!r}")
    return _misfits(fwd, space, targets, p, y[0], index, z=z)


def sd_sensitivity(model=None, targets=None, *, space=None, factors=(0.5, 1.0, 2.0),
                   n_threads: int | None = 1) -> pd.DataFrame:
    """The MAP and its Laplace SD per parameter, and the calibrated predictions, with every
    target SD multiplied by each of ``factors`` (the assumed SDs made visible: half and
    double by default). Long table: factor, kind (``parameter`` or ``target``), name, value,
    sd, verdict (parameters) or z (targets), and the run's status message."""
    import segment

    model = segment.c5c6() if model is None else model
    targets = load_targets(targets)
    rows = []
    for f in factors:
        r = calibrate(model, targets.with_sd_scaled(f), space=space, misfit_check=False,
                      n_threads=n_threads)
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


def cross_validate(model=None, targets=None, *, space=None,
                   n_threads: int | None = 1) -> pd.DataFrame:
    """Leave-one-case-out cross-validation: for each load case, calibrate without its targets
    (both configurations) and predict them.

    Returns one row per held-out target: the fold's case, the target, its value and SD, the
    prediction of the fold's MAP, the Laplace SD of that prediction, and
    ``z = (prediction - value) / sqrt(SD^2 + prediction_sd^2)`` (the held-out error in
    predictive SDs), with the fold's status message.
    """
    import segment

    model = segment.c5c6() if model is None else model
    space = load_space(space)
    targets = load_targets(targets)
    rows = []
    for case in [c for c in CASES if c in targets.cases]:
        held = [i for i, c in enumerate(targets.cases) if c == case]
        kept = [i for i, c in enumerate(targets.cases) if c != case]
        if not kept:
            raise ValueError("cross-validation needs targets of at least two cases")
        r = calibrate(model, targets.subset(kept), space=space, misfit_check=False,
                      n_threads=n_threads)
        fwd = _Forward(model, space, targets.subset(held), n_threads=n_threads)
        y, ok, J = fwd(r.x[None], sensitivities=True)
        for k, i in enumerate(held):
            psd = float(np.sqrt(J[0, k] @ r.covariance @ J[0, k]))
            rows.append({"case": case, "target": targets.labels[i],
                         "value": targets.values[i], "SD": targets.sd[i],
                         "prediction": y[0, k] if ok[0] else np.nan, "prediction_sd": psd,
                         "z": (y[0, k] - targets.values[i]) / math.hypot(targets.sd[i], psd),
                         "status": r.message})
    return pd.DataFrame(rows)


def predictive_bands(model=None, samples=None, *, space=None, configuration: str = "intact",
                     n: int = 2000, seed: int = 0, n_threads: int | None = None):
    """Posterior predictive bands of all nine cases in all six components.

    Parameters
    ----------
    samples : PosteriorSamples, CalibrationResult or array (K, D)
        Posterior draws; a CalibrationResult gives ``n`` draws of its Laplace posterior,
        clipped into the ranges (an approximation: say which one a figure shows).
    configuration : str
        ``intact`` or ``disc segment``.

    Returns
    -------
    DataFrame
        case, component, unit, q2.5, median, q97.5, mean and the fraction of draws whose
        equilibria converged; displacements from the unloaded pose [mm, deg].
    """
    import segment
    from segment.studies.sets import solve_sets

    model = segment.c5c6() if model is None else model
    space = load_space(space)
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
    loads = [segment.LOAD_CASES[c] for c in CASES]
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


VOO_MOMENTS_NM = (3.8, 5.0, 6.9)
"""Flexion moments [N m] spanning the peak moments of Voo, Pintar, Yoganandan & Liu 1998
(J Biomech Eng 120:693-696): flexion to failure of mid-lower cervical joints, quasi-static
stiffness 0.80-1.35 N m/deg (mean 1.03 +- 0.11) at peak moments 3.8-6.9 N m."""
VOO_STIFFNESS_RANGE = (0.80, 1.35)
ANDERST_ICR_MM = {"superior": (2.5, 3.2, 3.9), "anterior": (-3.1, -2.0, -1.0)}
"""C5/C6 instantaneous centre of rotation in flexion-extension, in vivo, Anderst et al. 2013
(Spine 38(10):E594-E601, Table 2): 95 % CI low / mean / CI high [mm] from the reference point
of the inferior (C6) vertebra. Validation only, never a calibration target.

Their reference point and axes could not be established: the paper's text (methods, table
caption) was not available to us, only the table's numbers. Which point of C6 the offsets are
measured from is therefore an assumption here (:data:`ICR_REFERENCE_POINTS`), never a value
taken from the paper. An offset moves exactly 1 mm per mm that the reference point moves
(a translation), so every candidate is reported, with the point that would put our centre on
their mean."""
ICR_REFERENCE_POINTS = ("posterior-superior corner", "superior endplate centre",
                        "anterior-superior corner")
"""Candidate reference points on C6, from the C6 body of ``data/vertebra_geometry.csv``
(display geometry: axis from (x0, z0) to the superior endplate centre (x1, z1), anterior-
posterior half-depth a1): the superior endplate at z1, its posterior corner at x1 - a1, its
centre at x1, its anterior corner at x1 + a1 [mm, C6 frame]. Assumed, see
:data:`ANDERST_ICR_MM`."""
ICR_SMALL_MOMENT_NM = 0.1
"""Moment [N m] of the instantaneous (tangent) centre: the finite centre between the +-0.1 N m
equilibria, the chord across the disc's flexion/extension stiffness kink at zero."""


def _pose_xz(model, q):
    """C5 origin (x, z) [mm] and sagittal angle [rad] of pose q in C6 coordinates."""
    ref = model.reference
    p = np.asarray(ref.s0) + np.asarray(ref.R0) @ np.asarray(q[:3])
    return np.array([p[0], p[2]]), ref.phi_y + q[4]


def planar_centre(p1, a1: float, p2, a2: float) -> np.ndarray:
    """Centre (x, z) of the planar rigid motion between two sagittal poses.

    A pose is a body point's position ``p`` (x, z) [mm] and the body's angle ``a`` [rad] about
    +y (+x anterior, +z superior, +y = z x x: a positive angle turns +z towards +x,
    flexion)::

        X(u) = p + R(a) u,   R(a) = [[cos a, sin a], [-sin a, cos a]]  (Ry on (x, z))

    The centre is the one point that does not move: ``(I - R(d)) c = p2 - R(d) p1`` with
    ``d = a2 - a1`` (Reuleaux's pole of the finite displacement). Raises ValueError when the
    poses do not differ in angle (a translation has no centre).
    """
    p1, p2 = np.asarray(p1, dtype=float), np.asarray(p2, dtype=float)
    d = float(a2) - float(a1)
    if not abs(d) > 1e-12:
        raise ValueError(f"the two poses must differ in angle for a centre of rotation, got "
                         f"a difference of {d:g} rad (a pure translation)")
    c, s = math.cos(d), math.sin(d)
    Rd = np.array([[c, s], [-s, c]])
    return np.linalg.solve(np.eye(2) - Rd, p2 - Rd @ p1)


def flexion_extension_centre(model, *, moment_Nm: float = 1.8) -> np.ndarray:
    """Finite centre of rotation (x, z) [mm, C6 frame] of C5 between the extension and the
    flexion equilibria at +-``moment_Nm`` (:func:`planar_centre`; the helical axis of the
    finite motion is sagittal here: the model is left-right symmetric)."""
    from segment.elements.loads import Load
    from segment.solvers.equilibrium import solve

    poses = []
    for sign in (-1.0, 1.0):
        r = solve(model, Load.from_si(moment_Nm=(0.0, sign * moment_Nm, 0.0)))
        if not r.converged:
            raise ValueError(f"the {'extension' if sign < 0 else 'flexion'} equilibrium at "
                             f"{moment_Nm:g} N m did not converge ({r.message})")
        poses.append(_pose_xz(model, r.q))
    (p1, a1), (p2, a2) = poses
    return planar_centre(p1, a1, p2, a2)


def icr_offset(centre_c6, reference_c6, *, axes_deg: float = 0.0) -> np.ndarray:
    """(anterior, superior) offset [mm] of a centre from a reference point, both (x, z) in C6.

    ``axes_deg`` turns the comparison axes against ours about +y (a rotation of the anterior
    axis towards superior for a negative angle, as Ry): the offset is ``R(axes)^T (c - r)``.
    A 1 mm shift of the reference point shifts the offset by exactly -1 mm; a 1 deg turn of
    the axes moves it by |c - r| pi / 180.
    """
    d = np.asarray(centre_c6, dtype=float) - np.asarray(reference_c6, dtype=float)
    t = math.radians(axes_deg)
    c, s = math.cos(t), math.sin(t)
    return np.array([[c, s], [-s, c]]).T @ d


def c6_reference_points(path=None) -> dict[str, np.ndarray]:
    """The candidate reference points :data:`ICR_REFERENCE_POINTS`, (x, z) [mm, C6 frame],
    from the C6 body row of ``vertebra_geometry.csv`` (default: the packaged one)."""
    path = data_dir() / "vertebra_geometry.csv" if path is None else Path(path)
    t = _Table(path, ("vertebra", "part", "x1_mm", "z1_mm", "a1_mm"), what="geometry")
    for i, row in t.rows():
        if row["vertebra"] == "C6" and row["part"] == "body":
            x1, z1 = t.number(i, row, "x1_mm"), t.number(i, row, "z1_mm")
            a1 = t.number(i, row, "a1_mm", positive=True)
            return {ICR_REFERENCE_POINTS[0]: np.array([x1 - a1, z1]),
                    ICR_REFERENCE_POINTS[1]: np.array([x1, z1]),
                    ICR_REFERENCE_POINTS[2]: np.array([x1 + a1, z1])}
    raise ValueError(f"{path.name}: no C6 body row (vertebra 'C6', part 'body')")


def icr_comparison(models: dict, *, geometry=None,
                   moments_Nm=(1.8, ICR_SMALL_MOMENT_NM)) -> pd.DataFrame:
    """Our flexion-extension centres against Anderst et al. 2013 (:data:`ANDERST_ICR_MM`).

    One row per model, centre (finite between the +-M equilibria for each of ``moments_Nm``)
    and candidate reference point (:func:`c6_reference_points` of ``geometry``): the centre in
    our C6 frame, its (anterior, superior) offset from the point, whether each lies in
    Anderst's 95 % CI, and the reference point that would put the centre on their mean.
    """
    refs = c6_reference_points(geometry)
    lo_a, mean_a, hi_a = ANDERST_ICR_MM["anterior"]
    lo_s, mean_s, hi_s = ANDERST_ICR_MM["superior"]
    rows = []
    for label, m in models.items():
        for M in moments_Nm:
            c = flexion_extension_centre(m, moment_Nm=M)
            needed = c - np.array([mean_a, mean_s])
            for name, r in refs.items():
                ant, sup = icr_offset(c, r)
                ok_a, ok_s = lo_a <= ant <= hi_a, lo_s <= sup <= hi_s
                rows.append({"model": label, "centre": f"+-{M:g} N m",
                             "x_mm": c[0], "z_mm": c[1], "reference_point": name,
                             "ref_x_mm": r[0], "ref_z_mm": r[1],
                             "anterior_mm": ant, "superior_mm": sup,
                             "anterior_in_CI": ok_a, "superior_in_CI": ok_s,
                             "verdict": "within" if ok_a and ok_s else "outside",
                             "ref_for_mean_x_mm": needed[0], "ref_for_mean_z_mm": needed[1]})
    return pd.DataFrame(rows)


def validation_only(models: dict, *, geometry=None) -> dict:
    """Compare models with published data never used as a target.

    ``models`` maps a label (e.g. ``published``, ``calibrated``) to an intact model. Returns
    two DataFrames: ``flexion_stiffness`` (secant flexion stiffness M / phi_y from the
    unloaded pose at :data:`VOO_MOMENTS_NM`, against Voo et al. 1998's corridor) and ``icr``
    (:func:`icr_comparison`: the flexion-extension centre of rotation against Anderst et al.
    2013, from each assumed reference point of :data:`ICR_REFERENCE_POINTS` on the C6 body of
    ``geometry``, a ``vertebra_geometry.csv``; default: the packaged one).
    """
    from segment.elements.loads import Load
    from segment.solvers.equilibrium import solve

    rows = []
    for label, m in models.items():
        q_u = m.unloaded.q if getattr(m, "unloaded", None) is not None else None
        if q_u is None:
            q_u = solve(m, Load.zero()).q
        for M in VOO_MOMENTS_NM:
            r = solve(m, Load.from_si(moment_Nm=(0.0, M, 0.0)))
            rot = math.degrees(r.q[4] - q_u[4])
            rows.append({"model": label, "moment_Nm": M, "converged": r.converged,
                         "phi_y_deg": rot, "secant_stiffness_Nm_per_deg": M / rot,
                         "Voo_1998_low": VOO_STIFFNESS_RANGE[0],
                         "Voo_1998_high": VOO_STIFFNESS_RANGE[1]})
    return {"flexion_stiffness": pd.DataFrame(rows),
            "icr": icr_comparison(models, geometry=geometry)}


# ---------------------------------------------------------------------------- MCMC
@dataclass(frozen=True, eq=False)
class PosteriorSamples:
    """Posterior samples from :func:`sample_posterior` and their diagnostics.

    Attributes
    ----------
    chain : ndarray (steps, walkers, D)
        Every draw (burn-in included).
    discard : int
        Steps dropped as burn-in.
    acceptance : ndarray (walkers,)
        Acceptance fraction of each walker.
    autocorr : ndarray (D,)
        Integrated autocorrelation time per parameter [steps] (emcee, tol=0: a lower bound
        when the chain is short; see ``autocorr_reliable``).
    autocorr_reliable : bool
        The kept chain is longer than 50 autocorrelation times (emcee's criterion).
    rhat : ndarray (D,)
        Split-R-hat over walkers (Gelman et al. 2013, Bayesian Data Analysis, 3rd ed., eq. 11.4
        on each half of every walker's kept chain).
    n_samples : int
        Draws made (steps x walkers).
    elapsed : float
    thin : int
        Every ``thin``-th kept step is returned by :attr:`samples` (half the shortest
        autocorrelation time, emcee's advice; 1 when that is below 2 steps).
    """

    names: tuple[str, ...]
    chain: np.ndarray
    log_prob: np.ndarray
    discard: int
    acceptance: np.ndarray
    autocorr: np.ndarray
    autocorr_reliable: bool
    rhat: np.ndarray
    n_samples: int
    elapsed: float
    thin: int = 1

    @property
    def samples(self) -> np.ndarray:
        """Kept draws (after burn-in, thinned by :attr:`thin`), flattened (K, D)."""
        return self.chain[self.discard::self.thin].reshape(-1, self.chain.shape[2])

    @property
    def kept_steps(self) -> int:
        return self.chain.shape[0] - self.discard

    @property
    def effective_samples(self) -> np.ndarray:
        """Effective sample size (D,): kept draws / autocorrelation time."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.kept_steps * self.chain.shape[1] / self.autocorr

    @property
    def converged(self) -> bool:
        """Every split-R-hat below :data:`RHAT_CONVERGED` and the kept chain longer than 50
        autocorrelation times (:attr:`autocorr_reliable`)."""
        return bool(np.all(self.rhat < RHAT_CONVERGED) and self.autocorr_reliable)

    def summary(self) -> str:
        """One line: draws, time, acceptance, autocorrelation, R-hat and the verdict."""
        if np.isfinite(self.autocorr).any():
            tau = float(np.nanmax(self.autocorr))
            ac = (f"max autocorrelation time {tau:.0f} steps (kept chain "
                  f"{self.kept_steps / tau:.0f} times that)")
        else:
            ac = "autocorrelation time not estimable (chain too short)"
        rhat = f"{np.nanmax(self.rhat):.3f}" if np.isfinite(self.rhat).any() else "nan"
        return (f"posterior: {self.n_samples} draws ({self.chain.shape[1]} walkers x "
                f"{self.chain.shape[0]} steps, burn-in {self.discard}, thin {self.thin}) in "
                f"{self.elapsed:.1f} s, acceptance {self.acceptance.mean():.2f}, {ac}, "
                f"max split-R-hat {rhat}: "
                + ("converged" if self.converged else
                   f"NOT converged (needs every R-hat < {RHAT_CONVERGED:g} and a kept chain "
                   "> 50 autocorrelation times)"))

    def diagnostics(self) -> pd.DataFrame:
        s = self.samples
        lo, med, hi = np.percentile(s, [2.5, 50, 97.5], axis=0)
        return pd.DataFrame({"parameter": self.names, "mean": s.mean(axis=0),
                             "sd": s.std(axis=0), "q2.5": lo, "median": med, "q97.5": hi,
                             "autocorr_steps": self.autocorr,
                             "kept_over_autocorr": self.kept_steps / self.autocorr,
                             "effective_samples": self.effective_samples, "rhat": self.rhat})


RHAT_CONVERGED = 1.1
"""Split-R-hat below which a parameter's chains count as mixed (Gelman et al. 2013, Bayesian
Data Analysis, 3rd ed., section 11.4: "below 1.1"; stricter 1.01 in Vehtari et al. 2021)."""
INIT_REDRAWS = 100
"""Rounds of redrawing the initial walkers that fell outside the ranges."""
BURN_IN_TAUS = 5
"""Automatic burn-in: this many of the largest autocorrelation times (estimated on the second
half of the chain), at most half the chain."""


def split_rhat(chain) -> np.ndarray:
    """Split-R-hat (D,) of ``chain`` (steps, chains, D): each chain cut in two halves."""
    chain = np.asarray(chain, dtype=float)
    n = chain.shape[0] // 2
    if n < 2:
        return np.full(chain.shape[2], np.nan)
    halves = np.concatenate([chain[:n], chain[n:2 * n]], axis=1)       # (n, 2m, D)
    means = halves.mean(axis=0)
    W = halves.var(axis=0, ddof=1).mean(axis=0)
    B = n * means.var(axis=0, ddof=1)
    var = (n - 1) / n * W + B / n
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sqrt(var / W)


def sample_posterior(model=None, targets=None, *, space=None, start=None, n_walkers: int = 64,
                     n_steps: int = 1000, discard: int | None = None, seed: int | None = 0,
                     progress: bool = False, n_threads: int | None = 1,
                     client=None) -> PosteriorSamples:
    """Posterior samples of (1) by emcee's ensemble sampler (differential-evolution moves).

    Every step evaluates half the walkers at once in the parameter-set kernel (``vectorize``).
    A set whose equilibrium fails has zero posterior density (it is rejected), never a guess.

    Parameters
    ----------
    start : CalibrationResult or array (D,), optional
        A CalibrationResult: walkers start as draws from its Laplace posterior truncated to
        the ranges (draws outside redrawn; clipping them instead piled the walkers of a MAP at
        a bound onto the face, deep in the logit tail, a transient the burn-in had to
        remove). An array (or None: the nominal set): a small ball (1 % of
        the ranges) around it.
    n_walkers, n_steps : int
        Draws = n_walkers x n_steps.
    n_threads : int or None
        Threads of the parameter-set kernel (default 1; see :func:`calibrate`).
    discard : int, optional
        Burn-in steps (default: :data:`BURN_IN_TAUS` autocorrelation times, estimated on the
        second half of the chain, at most half the chain).
    client : dask.distributed.Client, optional
        Evaluate on a Dask cluster (``c5c6-segment[study]``).

    Returns
    -------
    PosteriorSamples
    """
    import time

    try:
        import emcee
    except ImportError:
        raise ImportError('emcee is needed for posterior samples; install the study extra: '
                          'pip install "c5c6-segment[study]"') from None
    import segment

    model = segment.c5c6() if model is None else model
    space = load_space(space)
    targets = load_targets(targets)
    if n_walkers < 2 * space.dim or n_walkers % 2:
        raise ValueError(f"n_walkers must be even and >= 2 x {space.dim} parameters, got "
                         f"{n_walkers}")
    if n_steps < 4:
        raise ValueError(f"n_steps must be >= 4, got {n_steps}")
    if discard is not None and not 0 <= int(discard) <= n_steps - 3:
        raise ValueError(f"discard must be in [0, {n_steps - 3}] (keep >= 3 steps), got "
                         f"{discard}")
    fwd = _Forward(model, space, targets, n_threads=n_threads, client=client)
    center = (start.x if isinstance(start, CalibrationResult) else
              _bounded_x0(space, start))

    lo, width = space.lower, space.upper - space.lower

    def to_p(Z):
        return lo + width / (1.0 + np.exp(-Z))

    def log_prob(Z):
        # walkers live in z = logit((p - lower) / width), unbounded: no proposal leaves the
        # ranges (a stretch move in the box rejected ~95 % near its faces); the density
        # carries the Jacobian |dp/dz| = width s (1 - s)
        s = 1.0 / (1.0 + np.exp(-Z))
        P = lo + width * s
        with np.errstate(divide="ignore"):
            lp = log_prior(space, P) + np.sum(np.log(s * (1.0 - s)), axis=1)
        good = np.isfinite(lp)
        if good.any():
            y, ok, _ = fwd(P[good])
            ll = -0.5 * np.sum(((y - targets.values) / targets.sd) ** 2, axis=1)
            ll[~ok] = -np.inf
            lp[good] += ll
        return lp

    rng = np.random.default_rng(seed)
    if isinstance(start, CalibrationResult) and np.all(np.isfinite(start.covariance)):
        p0 = rng.multivariate_normal(center, start.covariance, size=n_walkers,
                                     check_valid="ignore")
        for _ in range(INIT_REDRAWS):
            out = np.any((p0 <= lo) | (p0 >= lo + width), axis=1)
            if not out.any():
                break
            p0[out] = rng.multivariate_normal(center, start.covariance, size=int(out.sum()),
                                              check_valid="ignore")
    else:
        p0 = center + 0.01 * width * rng.standard_normal((n_walkers, space.dim))
    u0 = np.clip((p0 - lo) / width, 1e-3, 1 - 1e-3)        # after INIT_REDRAWS: rare
    z0 = np.log(u0 / (1.0 - u0))
    # differential-evolution moves (with 20 % snooker): measured on the default problem, 64
    # walkers x 800 steps, split-R-hat 1.19 and autocorrelation 37 steps, against 1.55 and 50
    # for emcee's default stretch move
    moves = [(emcee.moves.DEMove(), 0.8), (emcee.moves.DESnookerMove(), 0.2)]
    sampler = emcee.EnsembleSampler(n_walkers, space.dim, log_prob, vectorize=True,
                                    moves=moves)
    if seed is not None:
        sampler.random_state = np.random.RandomState(int(seed)).get_state()
    t0 = time.perf_counter()
    sampler.run_mcmc(z0, n_steps, progress=progress)
    elapsed = time.perf_counter() - t0
    chain = to_p(sampler.get_chain())
    with np.errstate(invalid="ignore", divide="ignore"):   # a walker that never moved
        if discard is None:
            half = np.asarray(sampler.get_autocorr_time(discard=n_steps // 2, tol=0,
                                                        quiet=True))
            # not estimable (a walker that never moved, a short chain): half the chain
            discard = (min(n_steps // 2, math.ceil(BURN_IN_TAUS * float(np.nanmax(half))))
                       if np.isfinite(half).any() else n_steps // 2)
        discard = int(discard)
        tau = np.asarray(sampler.get_autocorr_time(discard=discard, tol=0, quiet=True))
    kept = n_steps - discard
    t_min = float(np.nanmin(tau)) if np.isfinite(tau).any() else 0.0
    thin = max(1, int(0.5 * t_min))
    log.info("sample_posterior: %d draws in %.1f s (burn-in %d steps, thin %d)",
             n_walkers * n_steps, elapsed, discard, thin)
    return PosteriorSamples(
        names=space.names, chain=chain, log_prob=sampler.get_log_prob(), discard=discard,
        acceptance=np.asarray(sampler.acceptance_fraction), autocorr=tau,
        autocorr_reliable=bool(np.all(kept > 50 * tau)), rhat=split_rhat(chain[discard:]),
        n_samples=n_walkers * n_steps, elapsed=elapsed, thin=thin)



# ---------------------------------------------------------------------------- calibrated data
CALIBRATED_DIR_NAME = "calibrated"
"""The shipped calibrated set: ``data/calibrated/`` (``segment.c5c6(data_dir=...)``)."""
REGENERATE_COMMAND = "segment calibrate --out data/calibrated --samples 300000"
"""Regenerates the shipped set, with ``posterior_diagnostics.csv`` from 300000 MCMC draws
(64 walkers x 4688 steps: measured, 100000 draws leave the kept chain shorter than 50
autocorrelation times of ~70 steps). Run from the repository root."""
_DISC_ROWS = {"x": ("disc_translational.csv", "k_N_per_mm"),
              "y": ("disc_translational.csv", "k_N_per_mm"),
              "z": ("disc_translational.csv", "k_N_per_mm"),
              "phi_x": ("disc_rotational.csv", "k_Nm_per_deg"),
              "phi_y": ("disc_rotational.csv", "k_Nm_per_deg"),
              "phi_z": ("disc_rotational.csv", "k_Nm_per_deg")}
_FACET_COLUMNS = {"gap_mm": ("gap_mm",), "inclination_deg": ("inclination_deg",),
                  "radius_mm": ("radius_c6_mm", "radius_c5_mm"), "blend_C": ("blend_C",)}
VALUE_DIGITS = 6
"""Significant digits of calibrated values in the written tables."""


def shipped_calibrated_dir() -> Path:
    """Folder of the calibrated set shipped with the package (``data/calibrated``)."""
    return data_dir() / CALIBRATED_DIR_NAME


def _read_rows(path: Path):
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    return rows[0], rows[1:]


def write_calibrated(result: CalibrationResult, out, *, source_dir=None,
                     command: str = REGENERATE_COMMAND) -> list[Path]:
    """Write a data folder holding the MAP of ``result``, readable by ``segment --data DIR``.

    Every table of ``source_dir`` (default: the packaged ``data/``) is copied; each changed
    value is rewritten and its row's ``source`` says it was calibrated, against which targets,
    by which command (the original source follows, after "was:"). Also written:
    ``calibration_parameters.csv`` (prior vs posterior), ``calibration_agreement.csv``
    (before / after per target), ``calibration_misfits.csv`` and ``calibration_summary.txt``.

    Returns the written files.
    """
    src = data_dir() if source_dir is None else Path(source_dir)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    space = load_space(result.space_path or None)
    if space.names != result.names:
        raise ValueError(f"the result's parameters {list(result.names)} are not those of "
                         f"{result.space_path}")
    tables = {}
    for f in sorted(src.glob("*.csv")):
        tables[f.name] = _read_rows(f)
    tname = Path(result.targets.path).name
    bases = "/".join(sorted(set(result.targets.sd_basis)))
    note_head = (f"calibrated (MAP) against {tname} ({len(result.targets)} targets as listed "
                 f"there, SDs {bases}) by `{command}`")

    def setcell(fname, match, col, value, pname):
        header, rows = tables[fname]
        ci, si = header.index(col), header.index("source")
        hit = False
        for row in rows:
            if match(header, row):
                row[ci] = f"{value:.{VALUE_DIGITS}g}"
                setting = f"{pname} = {result.x[space.names.index(pname)]:.6g}"
                if not row[si].startswith("calibrated"):
                    row[si] = f"{note_head}; {setting}; was: {row[si]}"
                elif setting not in row[si]:
                    row[si] = row[si].replace("; was:", f"; {setting}; was:", 1)
                hit = True
        if not hit:
            raise ValueError(f"{fname}: no row for parameter {pname!r}")

    for j, pname in enumerate(space.names):
        x, nominal = result.x[j], space.nominal[j]
        if x == nominal:
            continue
        for kind, key in space.targets[j]:
            field = space.fields[j]
            if kind == "disc":
                fname, col = _DISC_ROWS[key]
                header, rows = tables[fname]
                ki = header.index(col)
                for row in rows:
                    if row[header.index("dof")] == key:
                        old = float(row[ki])
                        setcell(fname, lambda h, r, k=key, o=row: r is o, col, old * x, pname)
            elif kind == "ligament":
                header, rows = tables["ligaments.csv"]
                row = next(r for r in rows if r[header.index("name")] == key)
                if field == "l0_mm":
                    setcell("ligaments.csv", lambda h, r, o=row: r is o, "l0_mm", x, pname)
                else:
                    old = float(row[header.index("F_max_N")])
                    setcell("ligaments.csv", lambda h, r, o=row: r is o, "F_max_N", old * x,
                            pname)
            else:
                for col in _FACET_COLUMNS[field]:
                    setcell("facets.csv", lambda h, r, k=key: r[h.index("side")] == k, col, x,
                            pname)
    written = []
    for fname, (header, rows) in tables.items():
        path = out / fname
        with open(path, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(header)
            w.writerows(rows)
        written.append(path)
    for name, frame in (("calibration_parameters.csv", result.parameters()),
                        ("calibration_agreement.csv", result.agreement()),
                        ("calibration_misfits.csv", result.misfits)):
        frame.to_csv(out / name, index=False, float_format="%.6g", lineterminator="\n")
        written.append(out / name)
    (out / "calibration_summary.txt").write_text(
        f"generated by `{command}`; do not edit\n" + _stable_summary(result) + "\n",
        encoding="utf-8")
    written.append(out / "calibration_summary.txt")
    return written


def _stable_summary(result: CalibrationResult) -> str:
    """The summary without wall times (so a regenerated folder compares equal)."""
    text = result.summary()
    _, _, rest = text.partition("\n")
    return f"calibration: {result.message}\n{rest}"
