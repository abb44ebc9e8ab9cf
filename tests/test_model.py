"""Segment residual and Jacobian: finite differences, symmetry, independent cross-checks."""

import numpy as np
import pytest
from conftest import central_jacobian

import segment
from segment.elements.kinematics import generalized_force

# Central differences with h = 1e-6 mm / rad have truncation error ~h^2 * f''' and rounding
# ~eps * |f| / h; with |f| <~ 1e4 N mm both stay below 1e-4 of the entries' scale.
FD_STEP = np.array([1e-6] * 3 + [1e-6] * 3)
JAC_RTOL = 1e-5
JAC_ATOL_REL = 1e-6           # times the largest entry of the Jacobian
# Kernel (numba, complex) vs plain numpy virtual work: the same formulas, rounding only.
CROSS_CHECK_ATOL = 1e-9
REGIMES = ("apart", "almost-flat", "edge-face-1", "edge-face-2", "edge-edge")


def _far_from_kinks(m, q, h):
    """True when no law switches branch within +-h of q (then central differences apply)."""
    if np.any(np.abs(q) < 10 * h):
        return False
    st_lo, st_hi = m.state(q - h), m.state(q + h)
    for a, b in zip(st_lo.ligaments, st_hi.ligaments, strict=True):
        lig = {x.name: x for x in m.ligaments}[a.name]
        pts = np.concatenate([[0.0], lig.curve.strain[:2]])
        if np.any((np.minimum(a.strain, b.strain) - 1e-9 < pts)
                  & (pts < np.maximum(a.strain, b.strain) + 1e-9)):
            return False
    for a, b in zip(st_lo.facets, st_hi.facets, strict=True):
        if a.case != b.case or (a.penetration > 0) != (b.penetration > 0):
            return False
        if min(abs(a.penetration - 0.3), abs(b.penetration - 0.3)) < 1e-4:
            return False
    return True


def _poses_by_regime(m, n_per_regime=4, seed=1):
    rng = np.random.default_rng(seed)
    found = {r: [] for r in REGIMES}
    for _ in range(20000):
        q = np.concatenate([rng.uniform(-1, 1, 3), np.radians(rng.uniform(-6, 6, 3))])
        regime = m.state(q).facets[0].regime
        if regime in found and len(found[regime]) < n_per_regime and _far_from_kinks(
                m, q, FD_STEP * 20):
            found[regime].append(q)
        if all(len(v) == n_per_regime for v in found.values()):
            break
    return found


@pytest.fixture(scope="module")
def poses(model):
    return _poses_by_regime(model)


def test_every_regime_is_sampled(poses):
    assert all(len(v) > 0 for v in poses.values()), {k: len(v) for k, v in poses.items()}


@pytest.mark.parametrize("regime", REGIMES)
@pytest.mark.parametrize("case", ["FLX", "AR", "CMP"])
def test_jacobian_matches_central_differences(model, poses, regime, case):
    load = segment.LOAD_CASES[case]
    for q in poses[regime]:
        J = model.jacobian(q, load)
        J_fd = central_jacobian(model, q, load, FD_STEP)
        np.testing.assert_allclose(J, J_fd, rtol=JAC_RTOL,
                                   atol=JAC_ATOL_REL * np.abs(J_fd).max())


def test_jacobian_at_solved_equilibria(model):
    for name, load in segment.LOAD_CASES.items():
        q = segment.solve(model, load).q
        # the symmetric cases sit exactly on the disc kink at y = phi_x = phi_z = 0, where
        # k+ == k-: the law is smooth there, so central differences still apply
        J_fd = central_jacobian(model, q, load, FD_STEP)
        np.testing.assert_allclose(model.jacobian(q, load), J_fd, rtol=JAC_RTOL,
                                   atol=JAC_ATOL_REL * np.abs(J_fd).max(), err_msg=name)


def test_a_wrong_jacobian_would_be_caught(model, poses):
    """The comparison is sharp enough to see a 0.1 % error in one entry."""
    q = poses["edge-face-1"][0]
    load = segment.LOAD_CASES["FLX"]
    J_fd = central_jacobian(model, q, load, FD_STEP)
    J_bad = model.jacobian(q, load)
    i, j = np.unravel_index(np.argmax(np.abs(J_bad)), J_bad.shape)
    J_bad[i, j] *= 1.001
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(J_bad, J_fd, rtol=JAC_RTOL,
                                   atol=JAC_ATOL_REL * np.abs(J_fd).max())


@pytest.mark.parametrize("regime", REGIMES)
def test_residual_equals_virtual_work_of_element_forces(model, poses, regime):
    """Compiled kernel == numpy kinematics applied to the reported element forces."""
    load = segment.LOAD_CASES["LB"]
    for q in poses[regime]:
        st = model.state(q)
        Q = st.disc_force.copy()
        for s in st.ligaments:
            Q += generalized_force(q, model.reference, point_c6=s.insertion_c5_in_c6,
                                   force_c6=s.force_on_c5)
        for f in st.facets:
            Q += generalized_force(q, model.reference, point_c6=f.point, force_c6=f.force_on_c5)
        R0 = model.reference.R0
        Q += generalized_force(q, model.reference, point_c6=model.reference.s0 + R0 @ q[:3],
                               force_c6=R0 @ load.force, moment_c6=R0 @ load.moment)
        np.testing.assert_allclose(model.residual(q, load), Q, atol=CROSS_CHECK_ATOL)


MIRROR = np.array([1, -1, 1, -1, 1, -1.0])   # (x, y, z, phi_x, phi_y, phi_z) under y -> -y


@pytest.mark.parametrize("case", ["LS", "AR", "LB"])
def test_left_right_mirror_symmetry(model, case):
    """LS-, AR-, LB- are the mirror images of LS+, AR+, LB+ (the model is symmetric in y)."""
    load = segment.LOAD_CASES[case]
    plus = segment.solve(model, load)
    minus = segment.solve(model, load.scaled(-1))
    assert plus.converged and minus.converged
    np.testing.assert_allclose(minus.q, MIRROR * plus.q, atol=1e-10)
    left_p, right_p = plus.state.facets
    left_m, right_m = minus.state.facets
    assert left_m.force == pytest.approx(right_p.force, abs=1e-8)
    assert right_m.force == pytest.approx(left_p.force, abs=1e-8)
    ligs_p = {s.name: s.tension for s in plus.state.ligaments}
    ligs_m = {s.name: s.tension for s in minus.state.ligaments}
    assert ligs_m["CL-left"] == pytest.approx(ligs_p["CL-right"], abs=1e-8)


def test_sagittal_cases_stay_in_the_sagittal_plane(model):
    for case in ("AS", "PS", "TNS", "CMP", "FLX", "EXT"):
        q = segment.solve(model, segment.LOAD_CASES[case]).q
        np.testing.assert_allclose(q[[1, 3, 5]], 0.0, atol=1e-12, err_msg=case)


def test_residual_input_checks(model):
    with pytest.raises(ValueError, match=r"q must have shape \(6,\), got \(5,\)"):
        model.residual(np.zeros(5), segment.Load.zero())
    with pytest.raises(ValueError, match="q must be finite"):
        model.residual([0, 0, np.nan, 0, 0, 0], segment.Load.zero())
    with pytest.raises(TypeError, match=r"load must be a segment\.Load"):
        model.residual(np.zeros(6), np.zeros(6))


def test_callers_array_is_unchanged(model):
    q = np.array([0.1, 0.2, -0.1, 0.01, 0.02, -0.03])
    before = q.copy()
    model.residual_and_jacobian(q, segment.LOAD_CASES["AR"])
    segment.solve(model, segment.LOAD_CASES["AR"], q0=q)
    np.testing.assert_array_equal(q, before)


def test_segment_built_by_hand_gets_the_published_facet_damping():
    """b_f = 300 N s/m (DETC2000/MECH-6821, after de Jager 1996), as from the CSV."""
    published = segment.c5c6()
    hand = segment.Segment(published.reference, published.disc, published.ligaments,
                           published.facets)
    assert hand.contact_law.damping == pytest.approx(0.3)
    assert hand.contact_law == published.contact_law
