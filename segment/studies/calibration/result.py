"""The outcome of a calibration: MAP, Laplace posterior, identifiability, misfit."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from segment.studies.calibration.targets import Targets

MISFIT_Z = 2.0
"""A target is missed when the prediction is more than this many target SDs away."""
DATA_DETERMINED_VARIANCE_RATIO = 0.5
"""Posterior / prior variance below which a parameter is called determined by the data."""
RIDGE = 1e-6
"""Weight of a residual ``RIDGE (p - start) / (upper - lower)`` per uniform parameter in the
MAP: a flat prior leaves the MAP undetermined along directions the data cannot see, and the
trust-region steps then wander there (measured: an unseen rest length moved 0.15 mm); the
ridge keeps such a parameter at its start and moves a seen one by ~1e-12 of its range."""
AT_BOUND_TOL = 1e-4
"""A MAP value within this fraction of its range width of a bound is reported at that bound
(the same rule for ``segment calibrate`` and ``segment calibrate --curves``).

The trust-region steps approach an active bound without landing on it: the shipped set's
l0_ISL ended within 5e-6 mm of its upper bound 16.5 mm (written as 16.5) and was reported "no"
with the former tolerance of 1e-6 of the width, which the curve calibration still used."""


def bound_flags(x, lower, upper) -> tuple[str, ...]:
    """``"lower"``, ``"upper"`` or ``""`` per parameter: whether the MAP ``x`` lies within
    :data:`AT_BOUND_TOL` of its range's width of a bound."""
    return tuple("lower" if v - lo <= AT_BOUND_TOL * (hi - lo) else "upper"
                 if hi - v <= AT_BOUND_TOL * (hi - lo) else ""
                 for v, lo, hi in zip(x, lower, upper, strict=True))


STATUS_MESSAGES = {
    0: "converged",
    1: "the optimizer stopped without convergence",
    2: "an equilibrium did not converge at the MAP",
}


def table_text(frame: pd.DataFrame) -> str:
    """A table of a summary as plain text (160 columns wide, no index)."""
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        return frame.to_string(index=False)


@dataclass(frozen=True, eq=False, kw_only=True)
class MapEstimate:
    """What a calibration to points and a calibration to curves both find: the MAP, its
    Laplace posterior, the identifiability verdicts and the predictions at the targets (see
    :class:`CalibrationResult` and
    :class:`~segment.studies.calibration.curve_result.CurveCalibration`, which add what is
    their own).

    Attributes
    ----------
    x : ndarray (D,)
        MAP parameter set (units of the space's ``unit`` column).
    success : bool
        The optimizer converged and every equilibrium at the MAP converged.
    status : int
        0 converged, 1 optimizer not converged, 2 an equilibrium failed
        (:data:`STATUS_MESSAGES`).
    message : str
    names, units : tuple of str
    nominal : ndarray (D,)
        The input model's parameter values (the start).
    lower, upper : ndarray (D,)
        The parameter ranges.
    prior_sd, posterior_sd : ndarray (D,)
        Laplace prior and posterior SDs.
    covariance, correlation : ndarray (D, D)
        Laplace posterior covariance and correlation at the MAP.
    singular_values : ndarray
        Of the weighted sensitivity matrix (response to one prior SD, in target SDs),
        descending.
    verdicts : tuple of str
        ``"data"`` (the data at least halve the prior variance,
        :data:`DATA_DETERMINED_VARIANCE_RATIO`) or ``"prior"`` per parameter.
    at_bound : tuple of str
        ``"lower"``, ``"upper"`` or ``""`` per parameter (MAP on its range's edge).
    prediction_nominal, prediction : ndarray (n,)
        Target predictions of the nominal parameter set and of the MAP.
    prediction_sd : ndarray (n,)
        Laplace SD of the MAP prediction (linearised).
    nfev, n_solves : int
        Optimizer function evaluations and equilibria solved.
    elapsed : float
        Wall time [s].
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
    prediction_nominal: np.ndarray
    prediction: np.ndarray
    prediction_sd: np.ndarray
    nfev: int
    n_solves: int
    elapsed: float
    space_path: str = ""
    extra: dict = field(default_factory=dict)

    @staticmethod
    def failed_fields(space, n_targets: int, p, message: str) -> dict:
        """The fields of an estimate that found no MAP (status 2) at ``p``: NaN posterior
        and predictions, every verdict ``"prior"``."""
        d = space.dim
        nan_d = np.full(d, np.nan)
        return dict(x=np.array(p, dtype=float), success=False, status=2, message=message,
                    names=space.names, units=space.units, nominal=space.nominal.copy(),
                    lower=space.lower.copy(), upper=space.upper.copy(), prior_sd=nan_d,
                    posterior_sd=nan_d.copy(), covariance=np.full((d, d), np.nan),
                    correlation=np.full((d, d), np.nan), singular_values=np.array([]),
                    verdicts=("prior",) * d, at_bound=("",) * d,
                    prediction_nominal=np.full(n_targets, np.nan),
                    prediction=np.full(n_targets, np.nan),
                    prediction_sd=np.full(n_targets, np.nan), space_path=space.path)

    def parameters(self) -> pd.DataFrame:
        """Prior vs posterior per parameter, with the identifiability verdict."""
        return pd.DataFrame({
            "parameter": self.names, "unit": self.units, "nominal": self.nominal,
            "lower": self.lower, "upper": self.upper, "prior_sd": self.prior_sd,
            "MAP": self.x, "posterior_sd": self.posterior_sd,
            "sd_ratio": self.posterior_sd / self.prior_sd, "determined_by": self.verdicts,
            "at_bound": [b or "no" for b in self.at_bound]})

    def _singular_values_line(self) -> str:
        return ("singular values of the weighted sensitivity matrix: "
                + ", ".join(f"{s:.3g}" for s in self.singular_values))


@dataclass(frozen=True, eq=False, kw_only=True)
class CalibrationResult(MapEstimate):
    """Outcome of :func:`calibrate` (scipy.optimize-style: it reports, it does not raise).

    The attributes of :class:`MapEstimate` (``published_model`` of :meth:`agreement` is the
    prediction of its ``nominal``, the input model), and those below.

    Attributes
    ----------
    targets : Targets
    misfits : DataFrame
        One row per missed target (``MISFIT_Z`` SDs): best reachable value within the ranges,
        and the parameter that would have to leave its range and by how much.
    """

    targets: Targets
    misfits: pd.DataFrame
    space: object = None
    """The :class:`~segment.studies.space.ParameterSpace` used (nominal values: the input
    model's)."""

    @property
    def misfit(self) -> bool:
        """True when some target is out of reach within the parameter ranges."""
        return bool(len(self.misfits)) and bool((~self.misfits["reachable"]).any())

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
                 f"equilibria, {self.elapsed:.2f} s)", self._singular_values_line(),
                 "", table_text(self.parameters().round(4)),
                 "", table_text(self.agreement().round(4))]
        if len(self.misfits):
            lines += ["", "missed targets:", table_text(self.misfits)]
        return "\n".join(lines)
