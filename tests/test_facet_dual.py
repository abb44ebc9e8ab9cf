"""The dual-number facet contact (segment.facet_dual) vs the complex reference (facet._contact).

``_contact_dual`` evaluates the same formulas with the same branches on values and five
directional derivatives; the complex step of ``_contact`` gives each derivative exactly to
rounding. Both must agree to rounding: 1e-10 of the largest entry (the chain is ~200
operations long, and near-degenerate tilts amplify rounding in 1/|n1 + n2|).
"""

import numpy as np
import pytest

from segment._dual import dexp, dinv, dmul, dsqrt
from segment.facet import REGIMES, _contact, _contact_force
from segment.facet_dual import _contact_dual, _contact_force_dual

H = 1e-20
REL = 1e-10
BLEND = 16.7


def _rot(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def _dual_vec(value, slots):
    """Dual 3-vector with value ``value`` (3,) and derivative slots ``slots`` (5, 3)."""
    return tuple((float(value[k]), *map(float, slots[:, k])) for k in range(3))


def _complex_reference(c1, n1, r1, c2, n2, r2, blend, seeds):
    """Values and the five complex-step derivatives of u, point and direction."""
    rows, regime = [], None
    for b in range(5):
        args = [tuple(v + 1j * H * s[b]) for v, s in zip((c1, n1, c2, n2), seeds, strict=True)]
        u, point, direction, regime, *_ = _contact(args[0], args[1], r1, args[2], args[3], r2,
                                                   blend)
        rows.append([u, *point, *direction])
    rows = np.array(rows)
    return rows[0].real, rows.imag / H, REGIMES[regime]


def _dual(c1, n1, r1, c2, n2, r2, blend, seeds):
    u, point, direction = _contact_dual(*(_dual_vec(v, s) for v, s in
                                          zip((c1, n1), seeds[:2], strict=True)), r1,
                                        *(_dual_vec(v, s) for v, s in
                                          zip((c2, n2), seeds[2:], strict=True)), r2, blend)
    flat = [u, *point, *direction]
    return np.array([x[0] for x in flat]), np.array([x[1:] for x in flat]).T


def _random_pairs(n, seed):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        tilt = rng.choice([0.0, rng.uniform(0, 0.05), rng.uniform(0, 1.4)])
        n1 = _rot(rng.normal(size=3), tilt) @ np.array([0, 0, -1.0])
        c1 = np.array([*rng.uniform(-9, 9, 2), rng.uniform(-1.5, 1.5)])
        r1, r2 = rng.uniform(1, 6, 2)
        if rng.random() < 0.2:
            r2 = r1                      # equal discs, as the facets are
        if rng.random() < 0.05:
            n1 = -n1                     # not facing
        seeds = rng.normal(size=(4, 5, 3))
        if tilt == 0.0:
            # exactly parallel faces: the tilt direction w = -dn/|dn| has no derivative there
            # (a complex perturbation of a normal even picks a real w of its own), so compare
            # motions of the centres only
            seeds[1] = seeds[3] = 0.0
        yield c1, n1, r1, np.zeros(3), np.array([0, 0, 1.0]), r2, seeds


def test_values_and_five_derivatives_equal_the_complex_step():
    regimes = set()
    for c1, n1, r1, c2, n2, r2, seeds in _random_pairs(3000, seed=11):
        value_ref, deriv_ref, regime = _complex_reference(c1, n1, r1, c2, n2, r2, BLEND, seeds)
        value, deriv = _dual(c1, n1, r1, c2, n2, r2, BLEND, seeds)
        scale_v = max(np.abs(value_ref).max(), 1.0)
        np.testing.assert_allclose(value, value_ref, rtol=0, atol=REL * scale_v)
        np.testing.assert_allclose(deriv, deriv_ref, rtol=0,
                                   atol=REL * max(np.abs(deriv_ref).max(), 1.0))
        regimes.add(regime)
    assert regimes == set(REGIMES), regimes   # every regime is exercised


@pytest.mark.parametrize("u", [-0.1, 0.0, 0.05, 0.3, 0.7])
def test_contact_law_and_its_slope(u):
    law = np.array([2000.0, 0.3, 1200.0])
    value = _contact_force(u + 1j * H, law)[0]
    dual = _contact_force_dual((u, 1.0, 2.0, 0.0, 0.0, -1.0), law)
    assert dual[0] == pytest.approx(value.real, rel=1e-14, abs=1e-14)
    np.testing.assert_allclose(dual[1:], np.array([1.0, 2.0, 0.0, 0.0, -1.0]) * value.imag / H,
                               rtol=1e-14, atol=1e-14)


def test_scalar_rules_against_the_complex_step():
    x = (0.7, 1.0, -2.0, 0.5, 0.0, 3.0)
    slots = np.array(x[1:])
    for dual_fn, fn in [(dsqrt, np.sqrt), (dexp, np.exp), (dinv, lambda z: 1.0 / z),
                        (lambda a: dmul(a, a), lambda z: z * z)]:
        d = dual_fn(x)
        z = fn(x[0] + 1j * H)
        assert d[0] == pytest.approx(z.real, rel=1e-15)
        np.testing.assert_allclose(d[1:], slots * z.imag / H, rtol=1e-14)
    assert dsqrt((0.0, 1.0, 1.0, 1.0, 1.0, 1.0)) == (0.0,) * 6   # no NaN at the root's kink


@pytest.mark.parametrize(("c1", "n1", "c2", "n2"), [
    ([0, 0, 0], [0, 0, -1], [0, 0, 0], [0, 0, 1]),          # identical discs
    ([0, 0, -0.1], [0, 0, -1], [0, 0, 0], [0, 0, 1]),       # coincident axes, parallel
    ([0, 0, 0], [1, 0, 0], [0, 0, 0], [0, 0, 1]),           # perpendicular
    ([0, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 1]),           # same facing
    ([20, 0, 0], [0, 0, -1], [0, 0, 0], [0, 0, 1]),         # far apart
])
def test_degenerate_configurations_are_finite(c1, n1, c2, n2):
    seeds = np.random.default_rng(0).normal(size=(4, 5, 3))
    value, deriv = _dual(np.array(c1, float), np.array(n1, float), 5.0,
                         np.array(c2, float), np.array(n2, float), 5.0, BLEND, seeds)
    assert np.all(np.isfinite(value)) and np.all(np.isfinite(deriv))
