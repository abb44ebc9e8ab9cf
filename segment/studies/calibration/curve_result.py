"""The outcome of a curve calibration: MAP, Laplace posterior, identifiability and the fit's
error in degrees, per point and summarised (RMS, largest), with an information criterion."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from segment.studies.calibration.curve_targets import CurveTargets
from segment.studies.calibration.result import MapEstimate, table_text

RMS_WARN_FACTOR = 3.0
"""A fit whose RMS exceeds this many times its points' SD does not fit its data: its Laplace
posterior (which takes the residuals as draws of that SD) then understates the uncertainty, and
the form's structure, not the data's noise, carries the misfit. 3: a fit at the assumed SD has
an RMS near 1 SD; 3 SD RMS is a residual sum of squares 9 times what the error model allows."""

__all__ = ["CurveCalibration"]


@dataclass(frozen=True, eq=False, kw_only=True)
class CurveCalibration(MapEstimate):
    """Outcome of :func:`~segment.studies.calibration.curve_fit.calibrate_curves`.

    The attributes of :class:`~segment.studies.calibration.result.MapEstimate` (``success``:
    every equilibrium of every target point converged at the MAP too; status 2: at the start
    or at the MAP; the predictions are rotations [deg] at each target point), and those below.

    Attributes
    ----------
    form : str
        The model form (:mod:`segment.studies.forms`).
    targets : CurveTargets
    effective_parameters : float
        ``p_D = tr(H_data Sigma_post)``: how many parameters the data determine (between 0
        and D; Spiegelhalter et al.'s effective number of parameters of a linear Gaussian
        model), the ``k`` of :attr:`aic` and :attr:`bic`.
    """

    form: str
    targets: CurveTargets
    effective_parameters: float

    # ------------------------------------------------------------------ fit error
    @property
    def residual_deg(self) -> np.ndarray:
        """MAP prediction minus observation at each target point [deg]."""
        return self.prediction - self.targets.values

    @property
    def rms_deg(self) -> float:
        """Root mean square of :attr:`residual_deg` [deg] (NaN when the fit failed)."""
        r = self.residual_deg
        if not np.all(np.isfinite(r)):
            return math.nan
        return math.sqrt(math.fsum(float(v) * float(v) for v in r) / r.size)

    @property
    def max_deg(self) -> float:
        """Largest absolute residual [deg]."""
        r = self.residual_deg
        return float(np.max(np.abs(r))) if np.all(np.isfinite(r)) else math.nan

    @property
    def n_points(self) -> int:
        return len(self.targets)

    def _ic(self, penalty: float) -> float:
        n = self.n_points
        rss = math.fsum(float(v) * float(v) for v in self.residual_deg)
        if not (n > 0 and rss > 0 and math.isfinite(rss)):
            return math.nan
        return n * math.log(rss / n) + penalty * self.effective_parameters

    @property
    def aic(self) -> float:
        """Akaike's criterion of the least-squares fit, ``n ln(RSS / n) + 2 p_D`` (the point
        SD estimated from the residuals; constants dropped). Lower is better; compare forms
        on the same points only."""
        return self._ic(2.0)

    @property
    def bic(self) -> float:
        """Schwarz's criterion, ``n ln(RSS / n) + p_D ln n``."""
        return self._ic(math.log(self.n_points)) if self.n_points > 1 else math.nan

    # ------------------------------------------------------------------ tables
    def points(self) -> pd.DataFrame:
        """One row per target point: observed, published-nominal and calibrated rotation,
        residual [deg] and z (residual in target SDs)."""
        t = self.targets
        return pd.DataFrame({
            "mode": t.modes, "moment_Nm": t.moment_Nm, "observed_deg": t.values,
            "sd_deg": t.sd, "n_specimens": t.n_specimens, "nominal_deg": self.prediction_nominal,
            "calibrated_deg": self.prediction, "calibrated_sd_deg": self.prediction_sd,
            "residual_deg": self.residual_deg, "z": self.residual_deg / t.sd})

    def fit_row(self) -> dict:
        """The fit in one row: label, form, convergence, error, information criteria."""
        return {"specimen": self.targets.label, "form": self.form, "converged": self.success,
                "n_points": self.n_points, "rms_deg": self.rms_deg, "max_deg": self.max_deg,
                "effective_parameters": self.effective_parameters, "aic": self.aic,
                "bic": self.bic, "status": self.message}

    @property
    def point_sd_deg(self) -> float:
        """The SD of the fitted points [deg] (their largest, where they differ)."""
        sd = np.asarray(self.targets.sd, dtype=float)
        return float(np.max(sd)) if sd.size else math.nan

    def misfit_warning(self, *, better: tuple[str, float] | None = None) -> str | None:
        """A sentence when the fit's RMS exceeds :data:`RMS_WARN_FACTOR` times its points' SD
        (None otherwise); ``better``: ``(form, rms_deg)`` of a form that fits the same points
        within that factor, named in the sentence."""
        sd, rms = self.point_sd_deg, self.rms_deg
        if not (math.isfinite(rms) and math.isfinite(sd)) or rms <= RMS_WARN_FACTOR * sd:
            return None
        text = (f"the {self.form} form does not fit {self.targets.label}: RMS "
                f"{rms:.2f} deg is {rms / sd:.1f} times the points' SD {sd:g} deg (more than "
                f"{RMS_WARN_FACTOR:g}): its posterior SDs understate the uncertainty")
        if better is not None:
            text += (f"; the {better[0]} form fits these points to {better[1]:.2f} deg RMS "
                     f"(segment calibrate --curves ... --form {better[0]})")
        else:
            text += "; no packaged form fits them within that"
        return text

    def summary(self) -> str:
        """Plain text: status, error, parameters, identifiability."""
        lines = [f"curve calibration ({self.form}, {self.targets.label}): {self.message} "
                 f"({self.nfev} evaluations, {self.n_solves} equilibria)",
                 f"fit error over {self.n_points} points not flagged: RMS {self.rms_deg:.2f} deg, "
                 f"largest {self.max_deg:.2f} deg; effective parameters "
                 f"{self.effective_parameters:.2f} of {len(self.names)}",
                 self._singular_values_line(), "", table_text(self.parameters().round(4))]
        return "\n".join(lines)
