"""The ISB joint coordinate system of the spine (Wu et al. 2002) beside the model's joint
coordinates (segment.core.conventions): closed-form rotations and translations, the round
trip, the JCS recomputed geometrically (Grood and Suntay's definitions), and the tables."""

import math

import numpy as np
import pytest

import segment
from segment.core.conventions import (
    AXES_KLG_TO_ISB,
    ISB_COLUMNS,
    IsbFrames,
    check_convention,
    from_isb,
    isb_coordinates,
    isb_frame,
    jcs_angles,
    jcs_rotation,
)
from segment.elements.kinematics import ReferencePose, pose

ROUND_TRIP_ATOL = 1e-12      # mm and rad: double-precision arithmetic, a few operations deep
CLOSED_FORM_ATOL = 1e-12     # the closed forms are exact; only rounding separates them
REFERENCE = ReferencePose((-2.8, 0.0, 17.4), -5.2)
LORDOSIS = math.radians(5.2)  # C5's extension relative to C6 at the reference pose (Table 1)


@pytest.fixture(scope="module")
def frames():
    return IsbFrames.from_ligaments()


def _random_poses(n, seed=0):
    rng = np.random.default_rng(seed)
    q = np.zeros((n, 6))
    q[:, :3] = rng.uniform(-3.0, 3.0, (n, 3))                    # mm
    q[:, 3:] = np.radians(rng.uniform(-25.0, 25.0, (n, 3)))      # rad
    return q


def test_the_change_of_axes_is_a_proper_rotation_x_anterior_y_superior_z_right():
    A = AXES_KLG_TO_ISB
    np.testing.assert_array_equal(A @ A.T, np.eye(3))
    assert np.linalg.det(A) == pytest.approx(1.0)
    np.testing.assert_array_equal(A @ [1, 0, 0], [1, 0, 0])     # anterior stays X
    np.testing.assert_array_equal(A @ [0, 0, 1], [0, 1, 0])     # our superior z is Y
    np.testing.assert_array_equal(A @ [0, 1, 0], [0, 0, -1])    # our left y is -Z (Z right)


def test_centroids_are_the_midpoints_of_the_all_and_pll_insertions(frames):
    # Table 4 of KLG2000: ALL / PLL at x = 8.0 / -8.3 mm on C6, 7.7 / -8.1 mm on C5
    np.testing.assert_allclose(frames.centroid_c6, [-0.15, 0.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(frames.centroid_c5, [-0.2, 0.0, 0.0], atol=1e-15)


def test_jcs_angles_invert_jcs_rotation():
    rng = np.random.default_rng(1)
    for a, b, c in rng.uniform(-1.2, 1.2, (50, 3)):
        np.testing.assert_allclose(jcs_angles(jcs_rotation(a, b, c)), [a, b, c],
                                   atol=ROUND_TRIP_ATOL)


@pytest.mark.parametrize("q", _random_poses(40))
def test_round_trip_ours_to_isb_and_back(q, frames):
    np.testing.assert_allclose(from_isb(isb_coordinates(q, REFERENCE, frames), REFERENCE, frames),
                               q, atol=ROUND_TRIP_ATOL)


@pytest.mark.parametrize("theta_deg", [-12.0, -3.0, 0.5, 7.0, 15.0])
def test_pure_flexion_is_negative_alpha(theta_deg, frames):
    """phi_y = theta (flexion) at the reference pose: R_isb = Rz(5.2 deg - theta), so alpha
    falls by exactly theta (flexion is negative alpha: the right-hand rule about Z = right)."""
    t = math.radians(theta_deg)
    c = isb_coordinates([0, 0, 0, 0, t, 0], REFERENCE, frames)
    np.testing.assert_allclose(c[3:], [LORDOSIS - t, 0.0, 0.0], atol=CLOSED_FORM_ATOL)


@pytest.mark.parametrize("theta_deg", [-10.0, 4.0, 9.0])
def test_pure_lateral_bending_and_axial_rotation_are_beta_and_gamma(theta_deg, frames):
    """phi_x = theta: R_isb = Rz(5.2 deg) Rx(theta) (our x is ISB X), a JCS with beta = theta;
    phi_z = theta: R_isb = Rz(5.2 deg) Ry(theta) (our z is ISB Y), gamma = theta."""
    t = math.radians(theta_deg)
    np.testing.assert_allclose(isb_coordinates([0, 0, 0, t, 0, 0], REFERENCE, frames)[3:],
                               [LORDOSIS, t, 0.0], atol=CLOSED_FORM_ATOL)
    np.testing.assert_allclose(isb_coordinates([0, 0, 0, 0, 0, t], REFERENCE, frames)[3:],
                               [LORDOSIS, 0.0, t], atol=CLOSED_FORM_ATOL)


def test_joint_frame_translations_map_onto_the_jcs_axes(frames):
    """At the reference pose our x is the floating axis e2, our z is e3 and our y is -e1, so
    a translation t along each changes exactly one of q2, q3, q1 by t, t, -t."""
    base = isb_coordinates(np.zeros(6), REFERENCE, frames)
    for k, (index, sign) in enumerate(((1, 1.0), (0, -1.0), (2, 1.0))):
        q = np.zeros(6)
        q[k] = 1.7
        expected = base.copy()
        expected[index] += sign * 1.7
        np.testing.assert_allclose(isb_coordinates(q, REFERENCE, frames), expected,
                                   atol=CLOSED_FORM_ATOL)


def test_reference_pose_in_isb_closed_form(frames):
    """q = 0: H = A (s0 + R0 c5 - c6) decomposed on e1 = Z, e2 = Rz(5.2) X, e3 = Rz(5.2) Y."""
    s, c = math.sin(LORDOSIS), math.cos(LORDOSIS)
    p = np.array([-2.8 - 0.2 * c + 0.15, 0.0, 17.4 - 0.2 * s])     # s0 + Ry(-5.2) c5 - c6
    H = np.array([p[0], p[2], -p[1]])
    q2 = H[0] * c + H[1] * s
    q3 = -H[0] * s + H[1] * c
    np.testing.assert_allclose(isb_coordinates(np.zeros(6), REFERENCE, frames),
                               [0.0, q2, q3, LORDOSIS, 0.0, 0.0], atol=CLOSED_FORM_ATOL)


@pytest.mark.parametrize("q", _random_poses(20, seed=3))
def test_jcs_recomputed_from_its_geometric_definition(q, frames):
    """Grood and Suntay's construction, independent of the matrix extraction: e1 the C6 Z axis,
    e3 the C5 Y axis, e2 = e3 x e1 normalised; alpha the angle from C6's X to e2 about e1,
    beta = asin(e1 . e3), gamma the angle from e2 to C5's X about e3; H = q1 e1 + q2 e2 + q3 e3."""
    p, R = pose(q, REFERENCE)
    A = AXES_KLG_TO_ISB
    X5, Y5 = A @ R[:, 0], A @ R[:, 2]            # C5's ISB X (our x) and Y (our z), C6-ISB
    e1 = np.array([0.0, 0.0, 1.0])
    e3 = Y5
    e2 = np.cross(e3, e1)
    e2 /= np.linalg.norm(e2)
    alpha = math.atan2(e2[1], e2[0])
    beta = math.asin(e1 @ e3)
    gamma = math.atan2(-(X5 @ np.cross(e2, e3)), X5 @ e2)
    H = A @ (p + R @ frames.centroid_c5 - frames.centroid_c6)
    q123 = np.linalg.lstsq(np.column_stack([e1, e2, e3]), H, rcond=None)[0]
    np.testing.assert_allclose(isb_coordinates(q, REFERENCE, frames),
                               [*q123, alpha, beta, gamma], atol=1e-10)


def test_unknown_convention_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="convention must be one of klg, isb, got 'iso'"):
        check_convention("iso")


def test_frames_refuse_a_bad_centroid():
    with pytest.raises(ValueError, match="centroid_c6 must be 3 finite numbers"):
        IsbFrames(centroid_c6=[0.0, np.nan, 0.0], centroid_c5=[0.0, 0.0, 0.0])


@pytest.fixture(scope="module")
def flexion():
    return segment.solve(segment.c5c6(), segment.LOAD_CASES["FLX"])


def test_result_table_in_isb(flexion):
    """The FLX equilibrium of the symmetric model stays in the sagittal plane: its flexion
    from the unloaded pose is -alpha, with no lateral bending or axial rotation."""
    t = flexion.table(convention="isb").set_index("coordinate")
    d = np.degrees(flexion.displacement_from_unloaded)
    assert list(t.index) == ["q1", "q2", "q3", "alpha", "beta", "gamma"]
    assert t.loc["alpha", "from_unloaded"] == pytest.approx(-d[4], abs=1e-9)
    assert t.loc["alpha", "from_unloaded"] < -1.0            # flexion: alpha decreases
    np.testing.assert_allclose(t.loc[["beta", "gamma", "q1"], "from_unloaded"], 0.0, atol=1e-9)
    # the default is unchanged
    assert list(flexion.table()["coordinate"]) == list(segment.DOF_NAMES)
    with pytest.raises(ValueError, match="convention must be one of"):
        flexion.table(convention="ISB ")


def test_isb_frame_columns_and_changes(frames):
    q = _random_poses(3, seed=5)
    f = isb_frame(q, REFERENCE, frames, q_unloaded=q[0])
    assert tuple(f.columns[:6]) == ISB_COLUMNS
    np.testing.assert_allclose(f.filter(like="_from_unloaded_").iloc[0], 0.0, atol=1e-12)
    np.testing.assert_allclose(f["isb_alpha_deg"],
                               [math.degrees(isb_coordinates(r, REFERENCE, frames)[3]) for r in q])
