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
leave-one-out, predictive bands), ``posterior`` (MCMC), ``folder`` (the calibrated data
folder of a calibration to points or to curves) and ``recentred`` (its parameter space).
Calibration to specimen curves (issue 22): ``curve_targets`` (a specimen's points
or the corridor), ``curve_forward`` (rotations along each curve by continuation, exact
dq*/dp), ``curve_result`` (:class:`CurveCalibration`), ``curve_fit`` (MAP per specimen or
for the population), ``population_file`` (``population.csv``), ``curve_posterior``
(MCMC) and ``forms_compare`` (which model form the curves support).
The validation-only data (Voo et al. 1998, the centre of rotation of Anderst et
al. 2013) are in :mod:`segment.studies.validation_only` and re-exported here.
"""

import importlib

_LAZY = {
    "ANDERST_ICR_MM": "studies.validation_only",
    "BURN_IN_TAUS": "studies.calibration.posterior",
    "CALIBRATED_DIR_NAME": "studies.calibration.folder",
    "CONFIGURATIONS": "studies.calibration.targets",
    "CalibrationResult": "studies.calibration.result",
    "CurveCalibration": "studies.calibration.curve_result",
    "CurveForward": "studies.calibration.curve_forward",
    "CurveTargets": "studies.calibration.curve_targets",
    "DATA_DETERMINED_VARIANCE_RATIO": "studies.calibration.result",
    "FormComparison": "studies.calibration.forms_compare",
    "Forward": "studies.calibration.forward",
    "ICR_REFERENCE_POINTS": "studies.validation_only",
    "ICR_SMALL_MOMENT_NM": "studies.validation_only",
    "INIT_REDRAWS": "studies.calibration.posterior",
    "MISFIT_COLUMNS": "studies.calibration.misfit",
    "MISFIT_Z": "studies.calibration.result",
    "POINT_SD_DEG": "studies.calibration.curve_targets",
    "PosteriorSamples": "studies.calibration.posterior",
    "REGENERATE_COMMAND": "studies.calibration.folder",
    "RHAT_CONVERGED": "studies.calibration.posterior",
    "RIDGE": "studies.calibration.result",
    "SD_BASES": "studies.calibration.targets",
    "STATUS_MESSAGES": "studies.calibration.result",
    "TARGET_COLUMNS": "studies.calibration.targets",
    "Targets": "studies.calibration.targets",
    "VALUE_DIGITS": "core.save",
    "VOO_MOMENTS_NM": "studies.validation_only",
    "VOO_STIFFNESS_RANGE": "studies.validation_only",
    "c6_reference_points": "studies.validation_only",
    "calibrate": "studies.calibration.fit",
    "calibrate_curves": "studies.calibration.curve_fit",
    "calibrate_each": "studies.calibration.curve_fit",
    "compare_forms": "studies.calibration.forms_compare",
    "configuration_model": "studies.calibration.forward",
    "cross_validate": "studies.calibration.checks",
    "default_targets_path": "studies.calibration.targets",
    "flexion_extension_centre": "studies.validation_only",
    "icr_comparison": "studies.validation_only",
    "icr_offset": "studies.validation_only",
    "load_targets": "studies.calibration.targets",
    "log_prior": "studies.calibration.prior",
    "planar_centre": "studies.validation_only",
    "population_table": "studies.calibration.curve_fit",
    "predictive_bands": "studies.calibration.checks",
    "prior_residual": "studies.calibration.prior",
    "reach": "studies.calibration.misfit",
    "sample_curve_posterior": "studies.calibration.curve_posterior",
    "sample_posterior": "studies.calibration.posterior",
    "sd_sensitivity": "studies.calibration.checks",
    "shipped_calibrated_dir": "studies.calibration.folder",
    "split_rhat": "studies.calibration.posterior",
    "validation_only": "studies.validation_only",
    "write_calibrated": "studies.calibration.folder",
    "write_curve_calibration": "studies.calibration.folder",
    "write_population": "studies.calibration.population_file",
}
"""Each public name and the module that defines it, imported on first use (PEP 562): importing
one submodule (the command line's laboratory names, a report section) does not load the whole
calibration with pandas and scipy."""

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


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(f"segment.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
