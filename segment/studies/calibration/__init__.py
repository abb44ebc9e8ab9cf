"""Bayesian calibration of the parameter space against observed responses.

Problem
-------
Observed responses ``v_i`` with standard deviations ``s_i`` (:class:`Targets`, read from
``data/calibration_targets.csv``) and the model's responses ``y_i(p)`` for a parameter set ``p``
over :class:`~segment.studies.space.ParameterSpace` (displacements from the unloaded equilibrium of
a configuration under a load case). With independent Gaussian errors and the space's truncated
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
  Jacobian ``dy/dp`` from the exact sensitivities (:mod:`segment.studies.sensitivity`), plus a
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
  the parameter-set kernel (:func:`segment.studies.sets.solve_sets`), reporting acceptance,
  autocorrelation time and split-R-hat.

Modules
-------
``targets`` (the observed responses), ``forward`` (responses and exact sensitivities of a
parameter set), ``prior``, ``result`` (:class:`CalibrationResult`), ``fit`` (MAP and Laplace),
``misfit`` (structural misfit and :func:`reach`), ``checks`` (SD sensitivity,
leave-one-out, predictive bands), ``posterior`` (MCMC) and ``folder`` (calibrated data
folders). Calibration to specimen curves (issue 22): ``curve_targets`` (a specimen's points
or the corridor), ``curve_forward`` (rotations along each curve by continuation, exact
dq*/dp), ``curve_result`` (:class:`CurveCalibration`), ``curve_fit`` (MAP per specimen or
for the population), ``curve_folder`` (data folders, ``population.csv``), ``curve_posterior``
(MCMC) and ``forms_compare`` (which model form the curves support).
The validation-only data (Voo et al. 1998, the centre of rotation of Anderst et
al. 2013) are in :mod:`segment.studies.validation_only` and re-exported here.
"""

from segment.studies.calibration.checks import cross_validate, predictive_bands, sd_sensitivity
from segment.studies.calibration.curve_fit import (
    calibrate_curves,
    calibrate_each,
    population_table,
)
from segment.studies.calibration.curve_folder import write_curve_calibration, write_population
from segment.studies.calibration.curve_forward import CurveForward
from segment.studies.calibration.curve_posterior import sample_curve_posterior
from segment.studies.calibration.curve_result import CurveCalibration
from segment.studies.calibration.curve_targets import POINT_SD_DEG, CurveTargets
from segment.studies.calibration.fit import calibrate
from segment.studies.calibration.folder import (
    CALIBRATED_DIR_NAME,
    REGENERATE_COMMAND,
    VALUE_DIGITS,
    shipped_calibrated_dir,
    write_calibrated,
)
from segment.studies.calibration.forms_compare import FormComparison, compare_forms
from segment.studies.calibration.forward import Forward, configuration_model
from segment.studies.calibration.misfit import MISFIT_COLUMNS, reach
from segment.studies.calibration.posterior import (
    BURN_IN_TAUS,
    INIT_REDRAWS,
    RHAT_CONVERGED,
    PosteriorSamples,
    sample_posterior,
    split_rhat,
)
from segment.studies.calibration.prior import log_prior, prior_residual
from segment.studies.calibration.result import (
    DATA_DETERMINED_VARIANCE_RATIO,
    MISFIT_Z,
    RIDGE,
    STATUS_MESSAGES,
    CalibrationResult,
)
from segment.studies.calibration.targets import (
    CONFIGURATIONS,
    SD_BASES,
    TARGET_COLUMNS,
    Targets,
    default_targets_path,
    load_targets,
)
from segment.studies.validation_only import (
    ANDERST_ICR_MM,
    ICR_REFERENCE_POINTS,
    ICR_SMALL_MOMENT_NM,
    VOO_MOMENTS_NM,
    VOO_STIFFNESS_RANGE,
    c6_reference_points,
    flexion_extension_centre,
    icr_comparison,
    icr_offset,
    planar_centre,
    validation_only,
)

__all__ = [
    "ANDERST_ICR_MM",
    "BURN_IN_TAUS",
    "CALIBRATED_DIR_NAME",
    "CONFIGURATIONS",
    "DATA_DETERMINED_VARIANCE_RATIO",
    "ICR_REFERENCE_POINTS",
    "ICR_SMALL_MOMENT_NM",
    "INIT_REDRAWS",
    "MISFIT_COLUMNS",
    "MISFIT_Z",
    "POINT_SD_DEG",
    "REGENERATE_COMMAND",
    "RHAT_CONVERGED",
    "RIDGE",
    "SD_BASES",
    "STATUS_MESSAGES",
    "TARGET_COLUMNS",
    "VALUE_DIGITS",
    "VOO_MOMENTS_NM",
    "VOO_STIFFNESS_RANGE",
    "CalibrationResult",
    "CurveCalibration",
    "CurveForward",
    "CurveTargets",
    "FormComparison",
    "Forward",
    "PosteriorSamples",
    "Targets",
    "c6_reference_points",
    "calibrate",
    "calibrate_curves",
    "calibrate_each",
    "compare_forms",
    "configuration_model",
    "cross_validate",
    "default_targets_path",
    "flexion_extension_centre",
    "icr_comparison",
    "icr_offset",
    "load_targets",
    "log_prior",
    "planar_centre",
    "population_table",
    "predictive_bands",
    "prior_residual",
    "reach",
    "sample_curve_posterior",
    "sample_posterior",
    "sd_sensitivity",
    "shipped_calibrated_dir",
    "split_rhat",
    "validation_only",
    "write_calibrated",
    "write_curve_calibration",
    "write_population",
]
