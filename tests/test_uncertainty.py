"""Parameter uncertainty: samples within the stated bands, reproducible, labelled."""

import numpy as np
import pytest

import segment
from segment.uncertainty import (
    ASSUMED_STIFFNESS_SPREAD,
    FACET_INCLINATION_DEG,
    FACET_RADIUS_MM,
    sample_models,
    uncertainty_bands,
)

SPREAD = ASSUMED_STIFFNESS_SPREAD
ANGLE_TOL_DEG = 1e-9  # inclination recovered from a rotated normal: rounding only


def test_samples_within_bands(model):
    models, df = sample_models(model, 30, stiffness_spread=SPREAD, seed=4)
    for side, (mean, sd) in FACET_INCLINATION_DEG.items():
        v = df[f"incl_{side}_deg"]
        assert v.between(mean - sd, mean + sd).all()
        v = df[f"radius_{side}_mm"]
        assert v.between(*FACET_RADIUS_MM).all()
    factors = df.filter(like="_factor")
    assert factors.shape[1] == 6 + 6
    assert ((factors >= 1 - SPREAD) & (factors <= 1 + SPREAD)).all().all()
    # the models really carry the sampled values
    m0 = models[0]
    left = next(f for f in m0.facets if f.side == "left")
    n2 = left.disc_c6.normal
    assert np.degrees(np.arctan2(-n2[0], n2[2])) == pytest.approx(df["incl_left_deg"][0],
                                                                  abs=ANGLE_TOL_DEG)
    assert left.disc_c5.radius == df["radius_left_mm"][0]
    np.testing.assert_allclose(m0.disc.k_positive / model.disc.k_positive,
                               df.filter(like="disc_").iloc[0].to_numpy())
    np.testing.assert_allclose(m0.ligaments[0].curve.force / model.ligaments[0].curve.force,
                               df["ALL_factor"][0])


def test_reproducible_with_seed(model):
    _, a = sample_models(model, 5, stiffness_spread=SPREAD, seed=11)
    _, b = sample_models(model, 5, stiffness_spread=SPREAD, seed=11)
    _, c = sample_models(model, 5, stiffness_spread=SPREAD, seed=12)
    assert a.equals(b)
    assert not a.equals(c)


def test_spread_is_required_and_checked(model):
    with pytest.raises(TypeError):
        uncertainty_bands(n_samples=2)  # no published spread: no silent default
    with pytest.raises(ValueError, match="stiffness_spread"):
        sample_models(model, 2, stiffness_spread=1.5)


def test_bands_bracket_the_nominal_and_say_what_is_assumed(model):
    u = uncertainty_bands(model, n_samples=40, stiffness_spread=SPREAD, seed=0)
    assert u.displacement.shape == (40, 9, 6) and u.converged.all()
    b = u.main_bands()
    assert list(b["case"]) == list(segment.LOAD_CASES)
    assert (b["low"] <= b["median"]).all() and (b["median"] <= b["high"]).all()
    assert ((b["min"] <= b["nominal"]) & (b["nominal"] <= b["max"])).all()
    assert (b["high"] > b["low"]).all()  # a real spread
    assert "assumed, not published" in b.attrs["assumptions"][0]
    u2 = uncertainty_bands(model, n_samples=40, stiffness_spread=SPREAD, seed=0)
    np.testing.assert_array_equal(u.displacement, u2.displacement)


def test_main_bands_follow_the_load_for_any_case_name(model):
    """The main coordinate comes from the load (Load.main_dof), not from the case's name."""
    cases = {"push-left": segment.Load([0, 20.0, 0], [0, 0, 0], "push-left"),
             "twist": segment.Load([0, 0, 0], [0, 0, 1800.0], "twist")}
    u = uncertainty_bands(model, cases, n_samples=4, stiffness_spread=0.1, seed=2)
    b = u.main_bands()
    assert list(zip(b["case"], b["coordinate"], strict=True)) == [("push-left", "y"),
                                                                 ("twist", "phi_z")]
