"""The point restraint (segment.elements.restraint): Jacobian, energy, equal and opposite
forces, closed forms, and its use as the ball of a disc prosthesis."""

import numpy as np
import pytest

import segment
from segment.core.residual import residual_jacobian_complex_step
from segment.elements.disc import DiscStiffness
from segment.elements.kinematics import pose
from segment.elements.restraint import PointRestraint

FD_STEP = 1e-6          # central differences in mm and rad
FD_RTOL = 1e-6          # relative to the Jacobian's largest entry (smooth element)
CS_RTOL = 1e-11         # complex step vs the exact tangent: rounding only

QS = [np.zeros(6), np.array([0.3, -0.2, 0.1, 0.05, -0.08, 0.12]),
      np.array([-1.0, 0.5, -0.4, -0.2, 0.15, -0.1])]


def _restraint_only(*, k=(300.0, 500.0, 700.0), point=(1.5, -2.0, 6.0), k_rot=0.0):
    """A segment of one point restraint (and an optional rotational disc)."""
    base = segment.c5c6(ligaments=False, facets=False)
    kr = np.array([0, 0, 0, k_rot, k_rot, k_rot], dtype=float)
    ball = PointRestraint.at_point("ball", point, stiffness=k, reference=base.reference)
    return base.replace(disc=DiscStiffness(kr, kr), restraints=(ball,)), ball


@pytest.mark.parametrize("q", QS)
def test_jacobian_matches_central_differences_and_complex_step(q):
    """Central differences on the restraint alone (smooth everywhere); the complex-step
    Jacobian of the whole prosthesis model too (its facets and ligaments have kinks, e.g.
    contact onset at q = 0, where central differences straddle two branches)."""
    model, _ = _restraint_only(k_rot=100.0)
    load = segment.LOAD_CASES["FLX"]
    _, J = model.residual_and_jacobian(q, load)
    fd = np.empty((6, 6))
    for j in range(6):
        e = np.zeros(6)
        e[j] = FD_STEP
        fd[:, j] = (model.residual(q + e, load) - model.residual(q - e, load)) / (2 * FD_STEP)
    assert np.abs(J - fd).max() <= FD_RTOL * np.abs(J).max()
    for m in (model, segment.c5c6(state="arthroplasty")):
        _, J = m.residual_and_jacobian(q, load)
        r_cs, J_cs = residual_jacobian_complex_step(q, load.as_array(), m._params)
        np.testing.assert_allclose(J, J_cs, rtol=0, atol=CS_RTOL * np.abs(J).max())
        np.testing.assert_allclose(m.residual(q, load), r_cs, rtol=0,
                                   atol=CS_RTOL * np.abs(r_cs).max())


@pytest.mark.parametrize("q", QS[1:])
def test_generalized_force_is_minus_the_energy_gradient(q):
    """Q = -dV/dq with V = 1/2 d.K d: the element is conservative."""
    model, ball = _restraint_only()

    def energy(qq):
        p, R = pose(qq, model.reference)
        return ball.energy(p, R)

    grad = np.array([(energy(q + e) - energy(q - e)) / (2 * FD_STEP)
                     for e in np.eye(6) * FD_STEP])
    Q = model.residual(q, segment.Load.zero())
    np.testing.assert_allclose(Q, -grad, rtol=1e-6, atol=1e-8)


def test_equal_and_opposite_to_the_applied_force_at_equilibrium():
    """The restraint alone (with a rotational disc) holds any load: its force on C5 is the
    applied force reversed, in C6 coordinates."""
    model, _ = _restraint_only(k_rot=1e5)       # N mm/rad
    load = segment.Load.from_si(force_N=[12.0, -7.0, 20.0], moment_Nm=[0.3, -0.2, 0.5])
    r = segment.solve(model, load)
    assert r.converged and r.status == 0
    (st,) = r.state.restraints
    applied = model.reference.R0 @ load.force
    np.testing.assert_allclose(st.force_on_c5, -applied, rtol=0, atol=1e-8)
    np.testing.assert_allclose(st.force_on_c5, -np.asarray(model.restraints[0].stiffness)
                               * st.displacement, rtol=1e-12, atol=1e-12)


def test_closed_form_translation_at_the_c5_origin():
    """A restraint at the C5 origin under a force alone: the origin moves f/k exactly."""
    base = segment.c5c6(ligaments=False, facets=False)
    k = np.array([200.0, 400.0, 800.0])
    ball = PointRestraint.at_point("origin", base.reference.s0, stiffness=k,
                                   reference=base.reference)
    kr = np.array([0, 0, 0, 1e3, 1e3, 1e3])
    model = base.replace(disc=DiscStiffness(kr, kr), restraints=(ball,))
    load = segment.Load.from_si(force_N=[10.0, -5.0, 3.0], moment_Nm=[0, 0, 0])
    r = segment.solve(model, load)
    p, _ = pose(r.q, model.reference)
    np.testing.assert_allclose(p - base.reference.s0, (model.reference.R0 @ load.force) / k,
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(r.q[3:], 0.0, atol=1e-12)


def test_zero_stiffness_gives_no_force_and_no_nan():
    model, _ = _restraint_only(k=(0.0, 0.0, 0.0), k_rot=10.0)
    r, J = model.residual_and_jacobian(QS[2], segment.Load.zero())
    assert np.all(np.isfinite(r)) and np.all(np.isfinite(J))
    np.testing.assert_array_equal(r[:3], 0.0)


def test_record_checks_one_line():
    with pytest.raises(ValueError, match=r"point restraint 'b': stiffness must be >= 0"):
        PointRestraint("b", (0, 0, 0), (0, 0, 0), (1.0, -1.0, 1.0))
    with pytest.raises(ValueError, match=r"point_c5 must be 3 finite numbers"):
        PointRestraint("b", (0, np.nan, 0), (0, 0, 0), (1.0, 1.0, 1.0))
    with pytest.raises(TypeError, match="restraints must be PointRestraint records"):
        segment.c5c6().replace(restraints=("ball",))


def test_energy_balance_of_a_simulation_with_the_prosthesis():
    """The dynamics book the restraint's energy with the disc: the kinetic energy-work
    balance closes as for the published model (segment.solvers.dynamics)."""
    model = segment.c5c6(state="arthroplasty")
    sim = segment.simulate(model, segment.LOAD_CASES["FLX"], t_end=0.05, ramp=0.01)
    assert sim.success
    assert sim.energy_error < 1e-3
