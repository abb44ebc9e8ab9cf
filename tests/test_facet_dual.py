"""The dual-number facet contact (segment.elements.facet_dual) vs the complex reference
(facet.end_face_contact).

``contact_dual`` evaluates the same formulas with the same branches on values and five
directional derivatives; the complex step of ``end_face_contact`` gives each derivative exactly to
rounding. Both must agree to rounding: 1e-12 of the largest entry, as the segment's tangent in
test_tangent (the worst of the 3000 random pairs measured 1.5e-13: the chain is ~200
operations long).
"""

import numpy as np
import pytest

from segment.elements.contact import REGIMES, end_face_contact
from segment.elements.dual import dexp, dinv, dmul, dsqrt
from segment.elements.facet import end_face_force
from segment.elements.facet_dual import contact_dual, contact_force_dual

H = 1e-20
REL = 1e-12
BLEND = 16.7


def _rot(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def _dual_vec(value, slots):
    """Dual 3-vector with value ``value`` (3,) and derivative slots ``slots`` (5, 3)."""
    return tuple((float(value[k]), *map(float, slots[:, k])) for k in range(3))


def _complex_reference(c1, n1, r1, c2, n2, r2, blend, seeds, at_edge=False):
    """Values and the five complex-step derivatives of u, point and direction."""
    rows, regime = [], None
    for b in range(5):
        args = [tuple(v + 1j * H * s[b]) for v, s in zip((c1, n1, c2, n2), seeds, strict=True)]
        u, point, direction, regime, *_ = end_face_contact(args[0], args[1], r1, args[2], args[3],
                                                           r2, blend, at_edge)
        rows.append([u, *point, *direction])
    rows = np.array(rows)
    return rows[0].real, rows.imag / H, REGIMES[regime]


def _dual(c1, n1, r1, c2, n2, r2, blend, seeds, at_edge=False, blend_seed=(0.0,) * 5):
    u, point, direction = contact_dual(*(_dual_vec(v, s) for v, s in
                                          zip((c1, n1), seeds[:2], strict=True)), r1,
                                        *(_dual_vec(v, s) for v, s in
                                          zip((c2, n2), seeds[2:], strict=True)), r2,
                                        (float(blend), *map(float, blend_seed)), at_edge)
    flat = [u, *point, *direction]
    return np.array([x[0] for x in flat]), np.array([x[1:] for x in flat]).T


def _random_rotation(rng):
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    return q if np.linalg.det(q) > 0 else -q


def _random_pairs(n, seed):
    """Random facing (mostly) disc pairs in a random frame, with five random seeds per vector.

    Kinds: ``tilted`` (random tilt up to 80 deg), ``near-parallel`` (up to 3 deg), ``parallel``
    (n1 = -n2 to the last bit) and ``aligned`` (tilted, centre offset along the bisector m,
    so the unfolded centres coincide: the branch where both rim points qualify).
    """
    rng = np.random.default_rng(seed)
    kinds = ("tilted", "near-parallel", "parallel", "aligned")
    for _ in range(n):
        kind = kinds[rng.choice(4, p=[0.55, 0.15, 0.15, 0.15])]
        tilt = {"tilted": rng.uniform(0, 1.4), "near-parallel": rng.uniform(0, 0.05),
                "parallel": 0.0, "aligned": rng.uniform(0.01, 0.5)}[kind]
        n2 = np.array([0, 0, 1.0])
        n1 = _rot(rng.normal(size=3), tilt) @ -n2
        r1, r2 = rng.uniform(1, 6, 2)
        if kind == "aligned" or rng.random() < 0.2:
            r2 = r1                      # equal discs, as the facets are
        if kind == "aligned":
            m = (n2 - n1) / np.linalg.norm(n2 - n1)
            c1 = -rng.uniform(-0.5, 0.5) * m
        else:
            c1 = np.array([*rng.uniform(-9, 9, 2), rng.uniform(-1.5, 1.5)])
        if kind == "tilted" and rng.random() < 0.05:
            n1 = -n1                     # not facing
        Q, shift = _random_rotation(rng), rng.uniform(-20, 20, 3)
        seeds = rng.normal(size=(4, 5, 3))
        yield (kind, Q @ c1 + shift, Q @ n1, r1, shift, Q @ n2, r2, seeds)


def _assert_close(actual, desired, rows=slice(None)):
    np.testing.assert_allclose(actual[..., rows], desired[..., rows], rtol=0,
                               atol=REL * max(np.abs(desired).max(), 1.0))


@pytest.mark.parametrize("at_edge", [False, True])
def test_values_and_five_derivatives_equal_the_complex_step(at_edge):
    regimes, aligned_cases = set(), set()
    u_rows, all_rows = [0], slice(None)
    for kind, c1, n1, r1, c2, n2, r2, seeds in _random_pairs(3000, seed=11):
        if kind == "parallel":
            # normals turned, not stretched (as every motion of a rigid facet does): else the
            # unfolding stretch 1/cos(alpha/2), whose tilt direction w is undefined at parallel
            # faces, changes the lateral overlap that caps the penetration (item 9)
            seeds = seeds.copy()
            seeds[1] -= np.outer(seeds[1] @ n1, n1)
            seeds[3] -= np.outer(seeds[3] @ n2, n2)
        value_ref, deriv_ref, regime = _complex_reference(c1, n1, r1, c2, n2, r2, BLEND, seeds,
                                                          at_edge)
        value, deriv = _dual(c1, n1, r1, c2, n2, r2, BLEND, seeds, at_edge)
        _assert_close(value, value_ref)
        # exactly parallel faces: the penetration has the same derivatives in both kernels,
        # the contact point and the direction (kinked there) do not (facet_dual docstring);
        # moving the centres alone, everything agrees
        # (with at_edge the penetration is kinked there too: the depth of the lowest rim point
        # grows like r |sin(alpha)| whichever way the face tilts)
        if kind != "parallel":
            _assert_close(deriv, deriv_ref, all_rows)
        elif not at_edge:
            _assert_close(deriv, deriv_ref, u_rows)
        if kind == "parallel":
            centres_only = seeds * np.array([1, 0, 1, 0])[:, None, None]
            _, deriv_ref_c, _ = _complex_reference(c1, n1, r1, c2, n2, r2, BLEND,
                                                   centres_only, at_edge)
            _assert_close(_dual(c1, n1, r1, c2, n2, r2, BLEND, centres_only, at_edge)[1],
                          deriv_ref_c)
        if kind == "aligned":
            aligned_cases.add(_case(c1, n1, r1, c2, n2, r2))
        regimes.add(regime)
    assert regimes == set(REGIMES), regimes   # every regime is exercised
    assert "edge-edge" in aligned_cases       # the both-rims-qualify branch is exercised


def test_blend_constant_slot_equals_the_complex_step():
    """The blending constant C as a dual slot (the sensitivity by C): equal to the complex
    step of ``end_face_contact`` in C, with the geometry slots seeded at the same time."""
    tested = 0
    for kind, c1, n1, r1, c2, n2, r2, seeds in _random_pairs(400, seed=12):
        if kind == "parallel":
            continue        # sin(alpha) = 0: the weight does not depend on C (both give 0)
        blend_seed = (0.0, 0.0, 1.0, 0.0, 0.0)           # slot 3: C, slots 1, 2, 4, 5: geometry
        seeds = seeds.copy()
        seeds[:, 2] = 0.0
        value, deriv = _dual(c1, n1, r1, c2, n2, r2, BLEND, seeds, blend_seed=blend_seed)
        u, point, direction, *_ = end_face_contact(*(tuple(v + 0j) for v in (c1, n1)), r1,
                                           *(tuple(v + 0j) for v in (c2, n2)), r2,
                                           BLEND + 1j * H, False)
        ref = np.array([u, *point, *direction]).imag / H
        np.testing.assert_allclose(deriv[2], ref, rtol=0,
                                   atol=REL * max(np.abs(ref).max(), np.abs(value).max(), 1.0))
        _, deriv_ref, _ = _complex_reference(c1, n1, r1, c2, n2, r2, BLEND, seeds)
        _assert_close(np.delete(deriv, 2, axis=0), np.delete(deriv_ref, 2, axis=0))
        tested += np.abs(ref).max() > 1e-6       # C moves something here
    assert tested > 50, tested


def _case(c1, n1, r1, c2, n2, r2):
    *_, case, _, _ = end_face_contact(*(tuple(v + 0j) for v in (c1, n1)), r1,
                              *(tuple(v + 0j) for v in (c2, n2)), r2, BLEND, False)
    return REGIMES[case]


def test_penetration_derivative_at_exactly_parallel_faces_is_the_true_one():
    """Tilting one of two parallel faces changes the depth linearly (the rim dips on one side,
    rises on the other, and the blended point moves off M): check against a one-sided finite
    difference of the penetration, in both tilt directions."""
    c1, n1 = np.array([0.6, 0.3, -0.1]), np.array([0.0, 0.0, -1.0])
    c2, n2 = np.zeros(3), np.array([0.0, 0.0, 1.0])
    for t in (np.array([1.0, 0, 0]), np.array([0, 1.0, 0]), np.array([0.8, 0.6, 0])):
        seeds = np.zeros((4, 5, 3))
        seeds[1, 0] = t
        _, deriv = _dual(c1, n1, 5.0, c2, n2, 5.0, BLEND, seeds)
        for sign in (1.0, -1.0):
            h = 1e-8
            u_h = end_face_contact(tuple(c1 + 0j), tuple(n1 + sign * h * t + 0j), 5.0,
                                   tuple(c2 + 0j), tuple(n2 + 0j), 5.0, BLEND, False)[0].real
            u_0 = end_face_contact(tuple(c1 + 0j), tuple(n1 + 0j), 5.0, tuple(c2 + 0j),
                           tuple(n2 + 0j), 5.0, BLEND, False)[0].real
            assert (u_h - u_0) / (sign * h) == pytest.approx(deriv[0, 0], abs=1e-5)
        assert abs(deriv[0, 0]) > 0.1          # not the zero of a lost derivative


@pytest.mark.parametrize("u", [-0.1, 0.0, 0.05, 0.3, 0.7])
def test_contact_law_and_its_slope(u):
    law = np.array([2000.0, 0.3, 1200.0, 0.0])
    value = end_face_force(u + 1j * H, law)[0]
    dual = contact_force_dual((u, 1.0, 2.0, 0.0, 0.0, -1.0), law)
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
