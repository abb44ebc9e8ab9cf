"""Parameter uncertainty: samples from the parameter-space file, reproducible, labelled."""

import numpy as np
import pytest

import segment
from segment.studies.space import load_space
from segment.studies.uncertainty import (
    ASSUMED_STIFFNESS_SPREAD,
    sample_models,
    uncertainty_bands,
    with_stiffness_spread,
)

SPREAD = ASSUMED_STIFFNESS_SPREAD
ANGLE_TOL_DEG = 1e-9  # inclination recovered from a rotated normal: rounding only


def test_samples_within_the_files_bounds(model):
    space = load_space()
    models, df = sample_models(model, 30, seed=4)
    assert list(df.columns) == list(space.names)
    assert ((df >= space.lower) & (df <= space.upper)).all().all()
    # the models really carry the sampled values
    m0 = models[0]
    left = next(f for f in m0.facets if f.side == "left")
    n2 = left.disc_c6.normal
    assert np.degrees(np.arctan2(-n2[0], n2[2])) == pytest.approx(
        df["facet_inclination_left"][0], abs=ANGLE_TOL_DEG)
    assert left.disc_c5.radius == df["facet_radius"][0]
    np.testing.assert_allclose(m0.disc.k_positive / model.disc.k_positive,
                               df.filter(like="disc_").iloc[0].to_numpy())
    np.testing.assert_allclose(m0.ligaments[0].curve.force / model.ligaments[0].curve.force,
                               df["stiffness_ALL"][0])
    assert m0.ligaments[0].l0 == df["l0_ALL"][0]


def test_stiffness_spread_overrides_the_files_range(model):
    _, df = sample_models(model, 40, stiffness_spread=0.05, seed=1)
    factors = df.filter(like="stiffness_").join(df.filter(like="disc_"))
    assert factors.shape[1] == 5 + 6
    assert ((factors >= 0.95) & (factors <= 1.05)).all().all()
    space = with_stiffness_spread(load_space(), 0.05)
    assert "assumed" in space.sources[space.names.index("disc_x")]


def test_reproducible_with_seed(model):
    _, a = sample_models(model, 5, seed=11)
    _, b = sample_models(model, 5, seed=11)
    _, c = sample_models(model, 5, seed=12)
    assert a.equals(b)
    assert not a.equals(c)


def test_spread_is_checked(model):
    with pytest.raises(ValueError, match="stiffness_spread"):
        sample_models(model, 2, stiffness_spread=1.5)


def test_bands_bracket_the_nominal_and_say_what_is_assumed(model):
    u = uncertainty_bands(model, n_samples=40, seed=0)
    assert u.displacement.shape == (40, 9, 6) and u.converged.all()
    b = u.main_bands()
    assert list(b["case"]) == list(segment.LOAD_CASES)
    assert (b["low"] <= b["median"]).all() and (b["median"] <= b["high"]).all()
    assert (b["high"] > b["low"]).all()  # a real spread
    text = " ".join(b.attrs["assumptions"])
    assert "facet_gap: uniform in [0, 0.5] mm (assumed, not published)" in text
    assert "facet_inclination_left: normal 43.2 ± 5.4 in [32.4, 54] deg (published range)" in text
    u2 = uncertainty_bands(model, n_samples=40, seed=0)
    np.testing.assert_array_equal(u.displacement, u2.displacement)
    # the kernel's numbers are the readable models' numbers
    models, _ = sample_models(model, 40, seed=0)
    r = segment.solve(models[3], segment.LOAD_CASES["FLX"])
    np.testing.assert_allclose(u.displacement[3, 6], r.displacement_from_unloaded, atol=1e-8)


def test_main_bands_follow_the_load_for_any_case_name(model):
    """The main coordinate comes from the load (Load.main_dof), not from the case's name."""
    cases = {"push-left": segment.Load([0, 20.0, 0], [0, 0, 0], "push-left"),
             "twist": segment.Load([0, 0, 0], [0, 0, 1800.0], "twist")}
    u = uncertainty_bands(model, cases, n_samples=4, stiffness_spread=0.1, seed=2)
    b = u.main_bands()
    assert list(zip(b["case"], b["coordinate"], strict=True)) == [("push-left", "y"),
                                                                 ("twist", "phi_z")]
