"""The settings of the hierarchical population model
(:mod:`segment.studies.calibration.hierarchical`): its laboratories, configurations,
error-model SDs and the tolerances of the fit, each with its reasoning."""

from __future__ import annotations

from pathlib import Path

from segment.core.io import data_dir

__all__ = ["CONFIGS", "FAILED_RESIDUAL", "FD_STEP", "INTACT_SD", "LABS", "LEAD_IN_NM",
           "LM_OPTIONS", "LOGIT_BOUND", "MAX_SWEEPS", "MIN_STEP_SD_DEG", "MORONEY", "MORONEY_CV",
           "NEW_LAB", "NIGHTINGALE", "ORIGIN_SD_DEG", "POSTERIOR", "SPECIMEN_SD_DOF", "SWEEP_TOL",
           "TIE_DIGITS", "TRANSFORMS", "default_form_path"]

NIGHTINGALE = "nightingale2002"
MORONEY = "moroney1988"
LABS = (NIGHTINGALE, MORONEY)
"""The training laboratories (``--lab`` names)."""
NEW_LAB = "new"
"""The label of a prediction for a laboratory outside the training set."""
CONFIGS = ("intact", "posterior-removed")
POSTERIOR = ("FL", "ISL", "CL-left", "CL-right")
"""Ligaments cut in the posterior-removed configuration (with both facets): the state
``posterior-removed`` of ``data/states.csv``, done on the packed arrays."""
TRANSFORMS = ("log", "identity", "logit")
LOGIT_BOUND = 10.0
"""Bounds of a logit-scale parameter (a value within 5e-5 of its range's ends)."""
ORIGIN_SD_DEG = 1.0
"""Start of the estimate of the origin SD [deg] (or its value when a fit is told to hold it):
the unloaded pose of a segment with a neutral zone is not unique (Panjabi 1992), and the
records hold one (0, 0) pair and no unloading branch; 1 deg is of the order of the rotation
between two load steps (0.2-1.5 deg). The committed fit estimates 1.8 deg."""
MIN_STEP_SD_DEG = 0.05
"""Floor of the estimated step SD [deg]: the video rotations are given to 1e-3 deg, and a fit
better than 0.05 deg would be fitting the rounding of the interpolation, not the data."""
MORONEY_CV = {"posterior-removed": 0.10, "intact": 0.20}
"""SD of a Moroney mean rotation as a fraction of it, per configuration (assumed). Both: the
standard error of a mean of 35 specimens with an assumed 30 % between-specimen spread (5 %;
Moroney's SDs are not available to us), the transcribed stiffness rounded to 0.01 N m/deg
(up to 5 %) and the mean-response-at-mean-parameters approximation: 10 % in all. Intact
segments also carry the model's structural error in the posterior elements (Table 4
insertions, an assumed facet geometry; measured: no set of the population form's ranges turns
less than about 2 deg in axial rotation at 1.8 N m, where Moroney's mean is 1.55 deg), so
20 %; the posterior-removed segment is the disc of eq. (1), whose Table 2 is Moroney's own
measurement."""
LEAD_IN_NM = 0.25
"""Spacing of the load levels that lead a path from the unloaded pose to its first target
[N m] (continuation; the equilibria do not depend on it)."""
SPECIMEN_SD_DOF = 2.0
"""Degrees of freedom of the scaled inverse chi-square prior of each specimen SD tau_j."""
SWEEP_TOL = 2e-3
"""Convergence of the sweeps: largest change of a z, a laboratory mean or a log tau (the
posterior SDs on these scales are 0.01-1: a change of 2e-3 moves no reported band)."""
MAX_SWEEPS = 40
LM_OPTIONS = {"gtol": 1e-8, "ftol": 1e-8, "xtol": 1e-10, "max_nfev": 100}
"""Tolerances of each block's Levenberg-Marquardt: a relative fall of the cost below 1e-8
moves no z by more than about 1e-4 of its posterior SD, far inside :data:`SWEEP_TOL` (the
block is solved again in every sweep, from where it stopped)."""
FAILED_RESIDUAL = 1e3
INTACT_SD = 0.02
"""Softness of the intact bound (the failure tests as bounds): a training specimen was intact
at its last static step (each was failure-tested afterwards), so its model's strain ratio g of
every ligament there must stay below 1; a residual ``(g - 1) / INTACT_SD`` where it does not
(a one-sided penalty: 2 % of the rupture strain costs as much as one SD of a step)."""
FD_STEP = 1e-7
"""Step [mm, rad] of the central differences of the strain ratios by the pose."""
TIE_DIGITS = 12


def default_form_path() -> Path:
    """The population form, ``data/forms/population/`` (space, disc law, hyperpriors)."""
    return data_dir() / "forms" / "population"
