"""Issue 32, item 7: one at-bound rule for both calibrations, and a warning when a curve fit's
RMS is far above its points' SD that names the form that fits."""

import numpy as np
import pytest

import segment
from segment.studies.calibration import curve_fit, fit
from segment.studies.calibration.curve_result import RMS_WARN_FACTOR
from segment.studies.calibration.result import AT_BOUND_TOL, bound_flags


def test_one_at_bound_rule_for_points_and_curves():
    assert fit.bound_flags is bound_flags and curve_fit.bound_flags is bound_flags
    lo, hi = np.array([0.0, 10.0, -1.0]), np.array([1.0, 20.0, 1.0])
    near = AT_BOUND_TOL / 2
    x = np.array([near, 20.0 - 10.0 * near, 0.0])
    assert bound_flags(x, lo, hi) == ("lower", "upper", "")
    # the former curve rule (1e-6 of the width) missed a MAP 5e-6 of the width from its bound
    assert bound_flags(np.array([5e-6]), np.array([0.0]), np.array([1.0])) == ("lower",)


@pytest.mark.slow
def test_a_form_that_does_not_fit_is_named_with_the_form_that_does():
    """The published form cannot follow B07 (its rotations are 3-4 times the published
    model's); the warning says so and names the form that fits it."""
    model = segment.c5c6()
    bad = curve_fit.calibrate_curves(specimen="B07", form="published", model=model)
    assert bad.rms_deg > RMS_WARN_FACTOR * bad.point_sd_deg
    better = curve_fit.form_that_fits(bad, model=model, forms=["neutral-zone"])
    assert better is not None and better[0] == "neutral-zone"
    assert better[1] <= RMS_WARN_FACTOR * bad.point_sd_deg
    text = bad.misfit_warning(better=better)
    assert "published form does not fit B07" in text and "neutral-zone form fits" in text
    good = curve_fit.calibrate_curves(specimen="B07", form="neutral-zone", model=model)
    assert good.misfit_warning() is None
    assert good.rms_deg == pytest.approx(better[1], rel=1e-9)
