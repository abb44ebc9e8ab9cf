"""The Lie-Stormer-Verlet integrator (method="lsv", "lsv-explicit"): exact orthogonality and
momentum of a free rigid body over 1e5 steps, bounded energy error, agreement with Radau on a
loaded, damped run, second-order convergence, forces from the compiled residual, ruptures."""

import math

import numpy as np
import pytest

import segment
from segment.solvers.dynamics import (
    angular_momentum,
    free_rigid_body,
    kinetic_energy,
    simulate,
)
from segment.solvers.dynamics.bodies import _body_array
from segment.solvers.dynamics.equations import _rigid_body
from segment.solvers.dynamics.forces import _damping_arrays, _element_forces
from segment.solvers.dynamics.lsv import _start_state, lsv_steps
from segment.solvers.dynamics.lsv_state import RB_P, S_F, S_QD, S_R, S_TAU, _principal_body
from segment.solvers.dynamics.so3 import _cardan_near

N_FREE = 100_000
# Rounding of 1e5 products of orthogonal matrices (and transports of Pi by them) grows at most
# linearly: n eps = 1e5 x 2.2e-16 = 2.2e-11 (a random walk gives ~1e-13, as measured).
ROUNDOFF_1E5 = 2.2e-11
# Explicit variant: energy error O(dt^2), bounded, measured 2.2e-9 at dt = 1e-5 s with this
# body (300 rad/s); no drift: the largest error in the last tenth of the run is the largest in
# the first tenth (measured ratio 1.00004).
EXPLICIT_ENERGY_BOUND = 1e-8
NO_DRIFT_RATIO = 1.01
# LSV (dt = 1e-5 s) against Radau (rtol 1e-10) on EXT over 20 ms: LSV's second-order error,
# measured 1.7e-6 mm and 2.1e-7 rad; Radau's is 1e-10 of that.
LSV_VS_RADAU_MM = 5e-6
LSV_VS_RADAU_RAD = 5e-7
# observed order of convergence from dt and dt / 2 (second order: 2; measured 2.000)
ORDER_LOW, ORDER_HIGH = 1.9, 2.1
# J^T (F, M_G) against the generalized forces it came from: rounding of a 3 x 3 solve
WRENCH_RTOL = 1e-10
RUPTURE_TIME_ATOL_S = 1e-5     # rupture instants, LSV (dt 1e-5 s) vs Radau (rtol 1e-6)
RUPTURE_ENERGY_TOL = 1e-3


# ---------------------------------------------------------------- free rigid body
FREE_INERTIA = np.array([0.23, 0.30, 0.45])       # N mm s^2, three different moments
FREE_OMEGA = np.array([20.0, -10.0, 300.0])      # rad/s: mostly about the largest axis


def relative_changes(r):
    E, L = r["energy"], r["angular_momentum"]
    dE = np.abs(E - E[0]) / E[0]
    dL = np.linalg.norm(L - L[0], axis=1) / np.linalg.norm(L[0])
    return dE, dL


@pytest.mark.parametrize("variant", ["implicit", "explicit"])
def test_free_body_momentum_and_orthogonality_to_rounding_over_1e5_steps(variant):
    r = free_rigid_body(FREE_INERTIA, FREE_OMEGA, dt=1e-5, n_steps=N_FREE, variant=variant,
                        stride=10)
    assert r["success"]
    dE, dL = relative_changes(r)
    assert dL.max() < ROUNDOFF_1E5
    assert r["orthogonality"].max() < ROUNDOFF_1E5
    # it really tumbled: 1 s at 300 rad/s, and the body axes moved about the fixed L
    assert np.linalg.norm(r["R"] - np.eye(3)) > 0.1
    n = len(dE) // 10
    if variant == "implicit":         # the midpoint update conserves the energy exactly
        assert dE.max() < ROUNDOFF_1E5
    else:
        assert 0 < dE.max() < EXPLICIT_ENERGY_BOUND
        assert dE[-n:].max() <= NO_DRIFT_RATIO * dE[:n].max()


def test_explicit_energy_error_is_second_order():
    errors = [relative_changes(free_rigid_body(FREE_INERTIA, FREE_OMEGA, dt=dt, n_steps=2000,
                                               variant="explicit"))[0].max()
              for dt in (2e-5, 1e-5)]
    assert ORDER_LOW < math.log2(errors[0] / errors[1]) < ORDER_HIGH


def test_free_body_rejects_bad_input():
    with pytest.raises(ValueError, match="inertia must be 3 finite numbers > 0"):
        free_rigid_body([1, 0, 1], [0, 0, 1], dt=1e-3, n_steps=10)
    with pytest.raises(ValueError, match="variant"):
        free_rigid_body([1, 1, 1], [0, 0, 1], dt=1e-3, n_steps=10, variant="rk4")
    with pytest.raises(ValueError, match="dt must be"):
        free_rigid_body([1, 1, 1], [0, 0, 1], dt=0.0, n_steps=10)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["lsv", "lsv-explicit"])
def test_free_c5_through_simulate_conserves_momentum_exactly(model, method):
    """C5 without elements, spun as in the Radau test of test_dynamics: T and L constant."""
    free = model.replace(ligaments=(), facets=())
    qd0 = np.array([10.0, -5.0, 3.0, 20.0, -10.0, 300.0])
    r = simulate(free, None, t_end=0.03, qd0=qd0, elements=False, method=method, dt=1e-6,
                 n_output=31)
    assert r.success, r.message
    L = np.array([angular_momentum(q, qd) for q, qd in zip(r.q, r.qd, strict=True)])
    T = np.array([kinetic_energy(q, qd) for q, qd in zip(r.q, r.qd, strict=True)])
    assert abs(r.q[-1, 5]) > 5.0                    # phi_z is continuous through +-pi
    # L through the joint coordinates (a Cardan round trip): rounding of the angle rates
    assert np.max(np.abs(L - L[0])) / np.linalg.norm(L[0]) < 1e-9
    tol = 1e-9 if method == "lsv" else 1e-5
    assert np.ptp(T) / T[0] < tol
    radau = simulate(free, None, t_end=0.03, qd0=qd0, elements=False, rtol=1e-10, atol=1e-12,
                     n_output=31)
    np.testing.assert_allclose(r.q, radau.q, atol=1e-6)


# ---------------------------------------------------------------- against Radau, order
@pytest.fixture(scope="module")
def ext_reference(model):
    return simulate(model, segment.LOAD_CASES["EXT"], t_end=0.02, n_output=21, rtol=1e-10,
                    atol=1e-13)


@pytest.mark.parametrize("method", ["lsv", "lsv-explicit"])
def test_lsv_agrees_with_radau_on_a_loaded_damped_run(model, ext_reference, method):
    r = simulate(model, segment.LOAD_CASES["EXT"], t_end=0.02, n_output=21, method=method,
                 dt=1e-5)
    assert r.success, r.message
    assert np.max(np.abs(r.q[:, :3] - ext_reference.q[:, :3])) < LSV_VS_RADAU_MM
    assert np.max(np.abs(r.q[:, 3:] - ext_reference.q[:, 3:])) < LSV_VS_RADAU_RAD
    assert np.max(np.abs(ext_reference.q[:, 4])) > 1e-2        # it moved: extension


def test_lsv_converges_with_second_order(model, ext_reference):
    errors = []
    for dt in (2e-5, 1e-5):
        r = simulate(model, segment.LOAD_CASES["EXT"], t_end=0.02, n_output=21, method="lsv",
                     dt=dt)
        errors.append(np.max(np.abs(r.q - ext_reference.q)))
    assert ORDER_LOW < math.log2(errors[0] / errors[1]) < ORDER_HIGH


def test_output_times_lie_on_the_step_grid():
    assert lsv_steps(0.3, 301, 1e-5) == (30000, 100, pytest.approx(1e-5))
    n, sub, h = lsv_steps(0.1, 7, 3e-5)
    assert n == 6 * sub and h <= 3e-5 and n * h == pytest.approx(0.1)


# ---------------------------------------------------------------- forces and kinematics
def test_forces_are_the_residual_and_damping_mapped_to_a_wrench(model):
    """J^T (F, M_G) = residual(q) + Q_damping(q, dq/dt): LSV moves C5 with the compiled
    residual Newton uses, through the joint's velocity map."""
    rng = np.random.default_rng(5)
    params, packed = model._params, model._packed
    disc_b, lig_b, fac_b = _damping_arrays(model, True)
    body = _body_array(None, model, None)
    rb = _principal_body(body)
    load = segment.LOAD_CASES["EXT"]
    for _ in range(4):
        q = rng.normal(scale=[0.2, 0.2, 0.1, 0.03, 0.05, 0.03])
        qd = rng.normal(scale=[20, 20, 20, 1, 1, 1])
        s = _start_state(model, q, qd, body, rb, load.as_array(), params, packed, disc_b, lig_b,
                         fac_b, 0.0, True, np.zeros(0), np.zeros((0, 3)))
        np.testing.assert_allclose(s[S_QD:S_QD + 6], qd, rtol=1e-12, atol=1e-12)
        Rp = s[S_R:S_R + 9].reshape(3, 3)
        F, M_G = s[S_F:S_F + 3], Rp @ s[S_TAU:S_TAU + 3]
        _, _, Jv, _, _, _ = _rigid_body(q, qd, params[1], body)
        H = np.column_stack(_h_axes(q, model))
        gen = Jv.T @ F
        gen[3:] += H.T @ M_G
        Q = np.empty((5, 6))
        _element_forces(q, qd, load.as_array(), params, disc_b, lig_b, fac_b, True, True, Q,
                        np.empty((6, 4)), np.empty((2, 4)))
        expected = model.residual(q, load) + Q[3]
        np.testing.assert_allclose(gen, expected, rtol=WRENCH_RTOL,
                                   atol=WRENCH_RTOL * np.abs(expected).max())
        assert np.any(Q[3] != 0)           # the damping took part


def _h_axes(q, model):
    from segment.elements.kinematics import rotation_x, rotation_y

    R0 = model.reference.R0
    return (R0[:, 0], (R0 @ rotation_x(q[3]))[:, 1],
            (R0 @ rotation_x(q[3]) @ rotation_y(q[4]))[:, 2])


def test_principal_frame_is_right_handed():
    rb = _principal_body(_body_array(None, segment.c5c6(), None))
    assert np.linalg.det(rb[RB_P:RB_P + 9].reshape(3, 3)) == pytest.approx(1.0)


def test_cardan_angles_follow_the_previous_step():
    from segment.elements.kinematics import rotation_x, rotation_y, rotation_z

    rng = np.random.default_rng(2)
    for _ in range(20):
        ang = rng.uniform([-3, -1.4, -3], [3, 1.4, 3]) + rng.integers(-2, 3, 3) * 2 * np.pi
        R = rotation_x(ang[0]) @ rotation_y(ang[1]) @ rotation_z(ang[2])
        got = _cardan_near(R, ang + rng.normal(scale=0.1, size=3))
        np.testing.assert_allclose(got, ang, atol=1e-9)


# ---------------------------------------------------------------- rupture and input checks
def test_lsv_ruptures_as_radau_does():
    model = segment.c5c6()
    kw = {"t_end": 0.13, "ramp": 0.1, "n_output": 131}
    load = segment.LOAD_CASES["FLX"].scaled(6.0)
    radau = simulate(model, load, **kw)
    lsv = simulate(model, load, method="lsv", **kw)
    assert lsv.success, lsv.message
    assert [n for _, _, n in lsv.events] == [n for _, _, n in radau.events]
    assert [n for _, _, n in lsv.events][:2] == ["FL", "ISL"]
    np.testing.assert_allclose([t for t, _, _ in lsv.events], [t for t, _, _ in radau.events],
                               atol=RUPTURE_TIME_ATOL_S)
    assert lsv.frame["rupture_energy_Nmm"].iloc[-1] > 0
    assert lsv.e_R < RUPTURE_ENERGY_TOL
    assert lsv.model.ruptured == radau.model.ruptured


def test_lsv_input_checks(model):
    load = segment.LOAD_CASES["FLX"]
    with pytest.raises(ValueError, match="dt is the step of the LSV integrator"):
        simulate(model, load, t_end=0.01, dt=1e-5)
    with pytest.raises(ValueError, match=r"dt must lie in \[1e-07, 0.001\], got -1e-05 s"):
        simulate(model, load, t_end=0.01, method="lsv", dt=-1e-5)
    with pytest.raises(TypeError, match="dt must be a number"):
        simulate(model, load, t_end=0.01, method="lsv", dt="1e-5")
    with pytest.raises(ValueError, match=r"t_end must lie in \(0, 1000\], got 1e\+09 s"):
        simulate(model, load, t_end=1e9, method="lsv")
    with pytest.raises(ValueError, match="at most 10,000,000 per run"):
        simulate(model, load, t_end=1000.0, method="lsv", dt=1e-7)
    with pytest.raises(ValueError, match="n_output must be an integer"):
        simulate(model, load, t_end=0.01, method="lsv", n_output=1.5)


def test_a_failing_energy_balance_is_in_the_message(model):
    """Too large a step for the stiff segment in facet contact (omega_max ~ 2900 rad/s): the
    damped run stays bounded, but e_R says the result is not to be trusted."""
    r = simulate(model, segment.LOAD_CASES["EXT"].scaled(3.0), t_end=0.05, n_output=11,
                 method="lsv", dt=4e-4, rupture=False)
    assert r.e_R > 0.05
    assert "The energy balance fails: e_R = " in r.message and "smaller dt" in r.message
    fine = simulate(model, segment.LOAD_CASES["EXT"].scaled(3.0), t_end=0.05, n_output=11,
                    method="lsv", dt=1e-5, rupture=False)
    assert "energy balance fails" not in fine.message
