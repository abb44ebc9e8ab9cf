"""The real-arithmetic residual and Jacobian (segment.elements.tangent) vs the complex
reference kernel.

Both evaluate the same formulas with the same branch choices, so they must agree to rounding:
relative 1e-12 of the largest entry (the entries reach ~1e6 N mm/rad; double rounding over
the ~100 operations of a column is ~1e-14 relative).
"""

import numpy as np
import pytest

import segment
from segment.core.residual import (
    _generalized_force,
    residual_jacobian,
    residual_jacobian_complex_step,
    residual_real,
)

REL = 1e-12


def _random_cases(n, seed):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        q = np.concatenate([rng.uniform(-1.5, 1.5, 3), np.radians(rng.uniform(-8, 8, 3))])
        f = rng.normal(size=6) * np.array([20, 20, 20, 1800, 1800, 1800.0])
        yield q, f


@pytest.mark.parametrize("variant", ["intact", "no facets", "no ligaments", "disc only"])
def test_jacobian_equals_complex_step_of_the_whole_segment(model, variant):
    m = {"intact": model, "no facets": model.replace(facets=()),
         "no ligaments": model.replace(ligaments=()),
         "disc only": model.replace(facets=(), ligaments=())}[variant]
    regimes = set()
    for q, f in _random_cases(400, seed=3):
        r, J = residual_jacobian(q, f, m._packed)
        r_ref, J_ref = residual_jacobian_complex_step(q, f, m._params)
        scale_r = np.abs(r_ref).max()
        np.testing.assert_allclose(r, r_ref, rtol=0, atol=REL * scale_r)
        np.testing.assert_allclose(residual_real(q, f, m._packed), r_ref, rtol=0,
                                   atol=REL * scale_r)
        np.testing.assert_allclose(J, J_ref, rtol=0, atol=REL * np.abs(J_ref).max())
        regimes.update(s.regime for s in m.state(q).facets)
    if m.facets:   # the sample covers every contact regime the facets reach
        assert {"apart", "almost-flat", "edge-face-1", "edge-face-2"} <= regimes, regimes


def test_at_the_nine_equilibria(model):
    for name, load in segment.LOAD_CASES.items():
        q = np.array(segment.solve(model, load).q)
        f = load.as_array()
        r, J = residual_jacobian(q, f, model._packed)
        _, J_ref = residual_jacobian_complex_step(q, f, model._params)
        np.testing.assert_allclose(J, J_ref, rtol=0, atol=REL * np.abs(J_ref).max(),
                                   err_msg=name)
        assert np.abs(r / [20, 20, 20, 1800, 1800, 1800]).max() < 1e-9


def test_a_facet_apart_adds_nothing(model):
    """Separated facets: the intact Jacobian equals the one without facets."""
    q = np.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0])      # C5 lifted 1 mm: facets apart
    assert all(s.regime == "apart" for s in model.state(q).facets)
    f = np.zeros(6)
    r, J = residual_jacobian(q, f, model._packed)
    r0, J0 = residual_jacobian(q, f, model.replace(facets=())._packed)
    np.testing.assert_array_equal(r, r0)
    np.testing.assert_array_equal(J, J0)


def test_the_complex_reference_is_really_different_code(model):
    """Guard against the comparison being vacuous: the reference kernel is the complex one."""
    q = np.radians([0, 0, 0, 1.0, -2.0, 0.5]) + np.array([0.1, 0.2, -0.1, 0, 0, 0])
    f = segment.LOAD_CASES["AR"].as_array()
    Q = _generalized_force(q.astype(complex), f, model._params)
    assert Q.dtype == np.complex128
    np.testing.assert_allclose(residual_real(q, f, model._packed), Q.real, rtol=0,
                               atol=REL * np.abs(Q.real).max())


def test_beyond_the_physiological_range(model):
    """Issue 13: along the corner load to 10x nominal the facets ride on their rims (the
    penetration capped by the lateral overlap, facet.py item 9) and dislocate; the tangent
    holds to the complex step there too, and with the penetration measured at the edge."""
    corner = np.array([-20.0, -20.0, -20.0, -1800.0, -1800.0, 1800.0])
    edge = model.replace(contact_law=segment.ContactLaw(2000.0, 0.3, 1200.0,
                                                        penetration_at="edge"))
    seen = set()
    for m in (model, edge):
        for scale in (2.0, 3.0, 4.0, 4.5, 5.0, 8.0, 10.0):
            q = np.array(segment.solve(m, segment.Load(scale * corner[:3],
                                                       scale * corner[3:])).q)
            for dq in (np.zeros(6), np.array([0.05, -0.03, 0.02, 0.004, -0.003, 0.002])):
                f = scale * corner
                r, J = residual_jacobian(q + dq, f, m._packed)
                r_ref, J_ref = residual_jacobian_complex_step(q + dq, f, m._params)
                # at an equilibrium r is a sum of large terms: scale by the load
                np.testing.assert_allclose(r, r_ref, rtol=0,
                                           atol=REL * max(np.abs(r_ref).max(), np.abs(f).max()))
                np.testing.assert_allclose(J, J_ref, rtol=0, atol=REL * np.abs(J_ref).max(),
                                           err_msg=f"scale {scale}")
                seen.update(s.regime for s in m.state(q + dq).facets)
    assert "dislocated" in seen and "edge-edge" in seen, seen
