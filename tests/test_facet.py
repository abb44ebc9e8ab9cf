"""Cylinder end-face contact: the public contract of segment.elements.contact.disc_contact."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from segment.elements.contact import disc_contact
from segment.elements.facet import ContactLaw
from segment.elements.facet_face import FacetFace

EXACT = 1e-12          # closed-form geometry: rounding only
LARGE_C = 1e9          # blend weight 1 - exp(-C sin a) == 1 for any tilt tested here
C_DEFAULT = 16.7


def rot(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


# ------------------------------------------------------------------ flat contact
@pytest.mark.parametrize("blend", [0.0, C_DEFAULT, LARGE_C])
@pytest.mark.parametrize("offset", [0.0, 1.0, 3.0, 7.0])
def test_parallel_discs_penetrate_by_delta_at_m(blend, offset):
    delta, r1, r2 = 0.2, 4.0, 5.0
    d1 = FacetFace([offset, 0, -delta], [0, 0, -1], r1)     # face 1 dips delta below face 2
    d2 = FacetFace([0, 0, 0], [0, 0, 1], r2)
    res = disc_contact(d1, d2, blend=blend)
    assert res.penetration == pytest.approx(delta, abs=EXACT)
    assert res.regime == "flat"
    np.testing.assert_allclose(res.direction, [0, 0, 1], atol=EXACT)
    # M: C1 while disc 1 lies in disc 2, else the middle of the centre line inside both
    L = (offset + r1 - r2) / 2 if offset + r1 > r2 else 0.0
    m_x = offset - L          # measured from C1 towards C2 (C2 is at x = 0)
    np.testing.assert_allclose(res.point, [m_x, 0, -delta / 2], atol=EXACT)


def test_parallel_disc2_inside_disc1_contacts_at_c2():
    d1 = FacetFace([0.5, 0, -0.1], [0, 0, -1], 6.0)
    d2 = FacetFace([0, 0, 0], [0, 0, 1], 2.0)
    res = disc_contact(d1, d2, blend=C_DEFAULT)
    np.testing.assert_allclose(res.point[:2], [0, 0], atol=EXACT)


# ------------------------------------------------------------------ steep contact
@pytest.mark.parametrize("tilt_deg", [2.0, 10.0, 35.0])
def test_skew_rim_point_of_disc1_gives_its_depth(tilt_deg):
    """Case 1: the lowest rim point of a tilted disc 1 dips below a larger disc 2."""
    a = np.radians(tilt_deg)
    r1, r2 = 3.0, 8.0
    n1 = rot([0, 1, 0], a) @ np.array([0, 0, -1.0])
    c1 = np.array([0.7, -0.4, r1 * np.sin(a) - 0.05])   # lowest rim point 0.05 mm below z = 0
    d1, d2 = FacetFace(c1, n1, r1), FacetFace([0, 0, 0], [0, 0, 1], r2)
    # the lowest rim point, found directly
    t = np.linspace(0, 2 * np.pi, 200001)
    u_ax = np.cross(n1, [1, 0, 0])
    u_ax /= np.linalg.norm(u_ax)
    v_ax = np.cross(n1, u_ax)
    rim = c1 + r1 * (np.outer(np.cos(t), u_ax) + np.outer(np.sin(t), v_ax))
    depth = -rim[:, 2].min()
    res = disc_contact(d1, d2, blend=LARGE_C)
    assert res.regime == "edge-face-1"
    assert res.penetration == pytest.approx(depth, abs=1e-9)
    assert res.penetration == pytest.approx(0.05, abs=EXACT)
    m = (np.array([0, 0, 1.0]) - n1) / np.linalg.norm(np.array([0, 0, 1.0]) - n1)
    # the edge rests well inside face 2: the force is along its normal n2 (paper, case 1)
    np.testing.assert_allclose(res.direction, [0, 0, 1], atol=EXACT)
    lowest = rim[np.argmin(rim[:, 2])]
    # reported point: middle of the penetration segment, which runs from the rim point along
    # the bisector m of the normals (length u / cos(a/2)) up to face 2
    expected = lowest + 0.5 * res.penetration / np.cos(a / 2) * m
    np.testing.assert_allclose(res.point, expected, atol=1e-6)


def test_skew_case2_rim_of_disc2_in_face1():
    a = np.radians(8.0)
    n2 = rot([1, 0, 0], a) @ np.array([0, 0, 1.0])
    d2 = FacetFace([0, 0, 0], n2, 3.0)
    d1 = FacetFace([0.3, 0.2, 0.1], [0, 0, -1], 9.0)
    res = disc_contact(d1, d2, blend=LARGE_C)
    assert res.regime == "edge-face-2"
    # the rim of disc 2 rests well inside face 1: the force on disc 1 is along -n1 (case 2)
    np.testing.assert_allclose(res.direction, [0, 0, 1], atol=EXACT)
    assert res.penetration == pytest.approx(-0.1 + 3.0 * np.sin(a), abs=EXACT)


def test_blend_weight_moves_the_point_from_m_to_p():
    a = np.radians(3.0)
    d1 = FacetFace([0, 0, -0.05], rot([0, 1, 0], a) @ np.array([0, 0, -1.0]), 5.0)
    d2 = FacetFace([0, 0, 0], [0, 0, 1], 8.0)      # larger: disc 1 lies within it, M = C1
    flat = disc_contact(d1, d2, blend=0.0)
    steep = disc_contact(d1, d2, blend=LARGE_C)
    mid = disc_contact(d1, d2, blend=C_DEFAULT)
    w = 1 - np.exp(-C_DEFAULT * np.sin(a))
    assert mid.blend_weight == pytest.approx(w)
    # penetration is affine along M-P, so it interpolates with the same weight
    assert mid.penetration == pytest.approx(flat.penetration
                                            + w * (steep.penetration - flat.penetration))
    assert flat.penetration == pytest.approx(0.05, abs=EXACT)          # centre depth at M = C1
    assert steep.penetration == pytest.approx(0.05 + 5 * np.sin(a), abs=EXACT)  # rim depth at P
    assert flat.penetration < mid.penetration < steep.penetration


# ------------------------------------------------------------------ apart
@pytest.mark.parametrize(("d1", "regime"), [
    (FacetFace([0, 0, 0.3], [0, 0, -1], 5.0), "apart"),                  # gap along the normal
    (FacetFace([10.5, 0, 0.2], [0, 0, -1], 5.0), "apart"),     # no overlap, above face 2's plane
    (FacetFace([10.5, 0, -0.2], [0, 0, -1], 5.0), "dislocated"),   # no overlap, below: slid off
    (FacetFace([0, 0, 1.6], rot([1, 1, 0], 0.3) @ [0, 0, -1.0], 5.0), "apart"),  # rim 0.12 above
    (FacetFace([0, 0, -0.1], [0, 0, 1], 5.0), "not-facing"),             # same facing
])
def test_separated_discs_give_zero(d1, regime):
    res = disc_contact(d1, FacetFace([0, 0, 0], [0, 0, 1], 5.0), blend=C_DEFAULT)
    assert res.penetration == 0.0
    assert res.regime == regime
    assert res.dislocated == (regime == "dislocated")


# ------------------------------------------------------------------ invariance and reaction
finite = st.floats(-10, 10, allow_nan=False)


@st.composite
def facing_pair(draw):
    tilt = draw(st.floats(0.0, 1.2))
    axis = np.array([draw(finite), draw(finite), 1.0])
    n1 = rot(axis, tilt) @ np.array([0, 0, -1.0])
    c1 = np.array([draw(st.floats(-6, 6)), draw(st.floats(-6, 6)), draw(st.floats(-1, 1))])
    return (FacetFace(c1, n1, draw(st.floats(0.5, 8))),
            FacetFace([0, 0, 0], [0, 0, 1], draw(st.floats(0.5, 8))))


@settings(max_examples=300, deadline=None)
@given(facing_pair(), st.floats(0, 6.3), st.lists(finite, min_size=3, max_size=3),
       st.lists(finite, min_size=3, max_size=3))
def test_frame_invariance(pair, angle, axis, shift):
    d1, d2 = pair
    axis = np.array(axis) + np.array([0.0, 0.0, 1e-3])
    R, p = rot(axis, angle), np.array(shift)
    a = disc_contact(d1, d2, blend=C_DEFAULT)
    b = disc_contact(d1.transformed(R, p), d2.transformed(R, p), blend=C_DEFAULT)
    assert b.penetration == pytest.approx(a.penetration, abs=1e-9)
    if a.penetration > 1e-6:
        assert b.regime == a.regime
        np.testing.assert_allclose(b.direction, R @ a.direction, atol=1e-8)
        np.testing.assert_allclose(b.point, R @ a.point + p, atol=1e-8)


@settings(max_examples=300, deadline=None)
@given(facing_pair())
def test_swapping_the_discs_gives_equal_and_opposite_force(pair):
    """Newton's third law: disc 2 feels the force disc 1 feels, reversed, on the same line."""
    d1, d2 = pair
    a = disc_contact(d1, d2, blend=C_DEFAULT)
    b = disc_contact(d2, d1, blend=C_DEFAULT)
    assert b.penetration == pytest.approx(a.penetration, abs=1e-9)
    if a.penetration > 1e-6:
        np.testing.assert_allclose(b.direction, -a.direction, atol=1e-8)
        np.testing.assert_allclose(b.point, a.point, atol=1e-8)
        swap = {"edge-face-1": "edge-face-2", "edge-face-2": "edge-face-1"}
        assert b.regime == swap.get(a.regime, a.regime)


# ------------------------------------------------------------------ degenerate geometry
any_vec = st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=3, max_size=3)
any_normal = st.sampled_from([[0, 0, 1.0], [0, 0, -1.0], [1.0, 0, 0], [0, 1.0, 1.0],
                              [1e-9, 0, -1.0], [0.0, 1e-300, -1.0]]) | any_vec.filter(
    lambda v: np.linalg.norm(v) > 1e-9)


@settings(max_examples=500, deadline=None)
@given(any_vec, any_normal, st.floats(1e-6, 1e3), any_vec, any_normal, st.floats(1e-6, 1e3),
       st.floats(0, 1e6))
def test_no_nan_for_any_finite_input(c1, n1, r1, c2, n2, r2, blend):
    res = disc_contact(FacetFace(c1, n1, r1), FacetFace(c2, n2, r2), blend=blend)
    values = [res.penetration, *res.point, *res.direction, res.blend_weight, res.sin_alpha]
    assert np.all(np.isfinite(values))
    assert res.penetration >= 0.0
    assert np.linalg.norm(res.direction) == pytest.approx(1.0)


@pytest.mark.parametrize(("d1", "d2"), [
    (FacetFace([0, 0, 0], [0, 0, -1], 5.0), FacetFace([0, 0, 0], [0, 0, 1], 5.0)),    # identical
    (FacetFace([0, 0, -0.1], [0, 0, -1], 5.0),
     FacetFace([0, 0, 0], [0, 0, 1], 5.0)),                                   # coincident axes
    (FacetFace([0, 0, 0], [1, 0, 0], 5.0), FacetFace([0, 0, 0], [0, 0, 1], 5.0)),  # perpendicular
    (FacetFace([0, 0, 0], [0, 0, 1], 5.0), FacetFace([0, 0, 0], [0, 0, 1], 5.0)),    # same facing
])
def test_degenerate_configurations_are_finite(d1, d2):
    res = disc_contact(d1, d2, blend=C_DEFAULT)
    assert np.all(np.isfinite([res.penetration, *res.point, *res.direction]))


def test_disc_validates_input():
    with pytest.raises(ValueError, match="radius must be > 0"):
        FacetFace([0, 0, 0], [0, 0, 1], 0.0)
    with pytest.raises(ValueError, match="normal must be non-zero"):
        FacetFace([0, 0, 0], [0, 0, 0], 1.0)
    with pytest.raises(ValueError, match="blend constant C must be >= 0"):
        disc_contact(FacetFace([0, 0, 0], [0, 0, -1], 1), FacetFace([0, 0, 0], [0, 0, 1], 1),
                     blend=-1)


# ------------------------------------------------------------------ contact law
def test_contact_law_published_values():
    law = ContactLaw(2000.0, 0.3, 1200.0)
    assert law(0.0) == (0.0, 0.0)
    assert law(-0.1) == (0.0, 0.0)
    assert law(0.1)[0] == pytest.approx(2e9 * (1e-4) ** 2)           # N, SI form of the paper
    assert law(0.3)[0] == pytest.approx(180.0)
    assert law(0.5)[0] == pytest.approx(180 + 1.2e6 * 2e-4)
    # value and slope continuous at the transition
    assert law(0.3 - 1e-9)[1] == pytest.approx(law(0.3 + 1e-9)[1])


# ------------------------------------------------------------------ line of action (issue 13)
def _tilted(alpha, offset, r1=5.0, r2=5.0, depth=0.2):
    """Disc 1 tilted by ``alpha`` about x above disc 2 (normal +z), centre offset ``offset``
    along y, its lowest rim point (towards -y) ``depth`` below face 2."""
    n1 = rot([1, 0, 0], alpha) @ np.array([0, 0, -1.0])
    c1 = np.array([0.0, offset, r1 * np.sin(alpha) - depth])
    return FacetFace(c1, n1, r1), FacetFace([0, 0, 0], [0, 0, 1], r2)


@pytest.mark.parametrize("alpha_deg", [1.0, 5.0, 20.0])
def test_direction_is_the_supporting_face_normal_far_from_the_switch(alpha_deg):
    a = np.radians(alpha_deg)
    d1, d2 = _tilted(a, offset=2.0)             # rim of disc 1 2 mm inside face 2: case 1
    res = disc_contact(d1, d2, blend=LARGE_C)
    assert res.regime == "edge-face-1"
    np.testing.assert_allclose(res.direction, d2.normal, atol=EXACT)
    res = disc_contact(d2, d1, blend=LARGE_C)   # roles swapped: case 2, on the face of disc 1
    assert res.regime == "edge-face-2"
    np.testing.assert_allclose(res.direction, -d2.normal, atol=EXACT)


DIRECTION_SWEEP_STEPS = 4000
DIRECTION_STEP_TOL = 5e-4      # rad per step: a 0.1 deg turn spread over ~1 mm of offset


@pytest.mark.parametrize("alpha_deg", [2.0, 10.0])
@pytest.mark.parametrize("blend", [C_DEFAULT, LARGE_C])
def test_direction_turns_continuously_across_the_case_switch(alpha_deg, blend):
    """Equal discs, offset swept through the switch between case 1 and case 2 (which happens
    at zero offset): the direction turns from n2 to -n1 without a jump."""
    a = np.radians(alpha_deg)
    offsets = np.linspace(1.5, -1.5, DIRECTION_SWEEP_STEPS + 1)
    dirs, cases = [], []
    for off in offsets:
        res = disc_contact(*_tilted(a, off), blend=blend)
        dirs.append(res.direction)
        cases.append(res.case)
    dirs = np.array(dirs)
    steps = np.arccos(np.clip(np.sum(dirs[1:] * dirs[:-1], axis=1), -1, 1))
    assert steps.max() < DIRECTION_STEP_TOL, steps.max()
    assert cases[0] == "edge-face-1" and cases[-1] == "edge-face-2"
    n1 = rot([1, 0, 0], a) @ np.array([0, 0, -1.0])
    np.testing.assert_allclose(dirs[0], [0, 0, 1], atol=EXACT)
    np.testing.assert_allclose(dirs[-1], -n1, atol=EXACT)
    # where the case switches, the direction is the bisector (to one sweep step)
    k = next(i for i in range(len(cases) - 1) if cases[i + 1] != cases[i])
    m = (np.array([0, 0, 1.0]) - n1) / np.linalg.norm(np.array([0, 0, 1.0]) - n1)
    assert np.arccos(min(1.0, dirs[k] @ m)) < 2 * DIRECTION_STEP_TOL


def test_direction_merges_towards_flat():
    """Tilt -> 0: n2 and -n1 merge, and the direction with them (the flat limit)."""
    previous = None
    for alpha in np.geomspace(0.3, 1e-9, 200):
        res = disc_contact(*_tilted(alpha, 2.0), blend=C_DEFAULT)
        assert np.arccos(min(1.0, res.direction[2])) <= alpha + 1e-12
        if previous is not None:
            assert np.linalg.norm(res.direction - previous) < 0.05
        previous = res.direction
    flat = disc_contact(*_tilted(0.0, 2.0), blend=C_DEFAULT)
    np.testing.assert_allclose(flat.direction, [0, 0, 1], atol=EXACT)


# ------------------------------------------------------------------ where u is measured
def test_penetration_at_edge_is_the_depth_of_the_edge_point():
    a = np.radians(3.0)
    d1 = FacetFace([0, 0, -0.05], rot([0, 1, 0], a) @ np.array([0, 0, -1.0]), 5.0)
    d2 = FacetFace([0, 0, 0], [0, 0, 1], 8.0)
    virtual = disc_contact(d1, d2, blend=C_DEFAULT)
    edge = disc_contact(d1, d2, blend=C_DEFAULT, penetration_at="edge")
    assert edge.penetration == pytest.approx(0.05 + 5 * np.sin(a), abs=EXACT)   # rim depth
    assert virtual.penetration < edge.penetration
    np.testing.assert_allclose(edge.point, virtual.point, atol=EXACT)   # still acting at P'
    with pytest.raises(ValueError, match="penetration_at must be one of"):
        disc_contact(d1, d2, blend=C_DEFAULT, penetration_at="rim")


def test_contact_law_enforces_slope_continuity():
    with pytest.raises(ValueError, match="k_linear must equal 2 k_quadratic u_transition"):
        ContactLaw(2000.0, 0.3, 1000.0)
    ContactLaw(2e3, 0.3, 2 * 2e3 * 0.3 * (1 + 1e-12))       # rounding is accepted
    with pytest.raises(ValueError, match="penetration_at"):
        ContactLaw(2000.0, 0.3, 1200.0, penetration_at="P")
    assert ContactLaw(2000.0, 0.3, 1200.0, penetration_at="edge").as_array()[3] == 1.0
