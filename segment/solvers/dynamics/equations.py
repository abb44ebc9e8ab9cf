"""Equations of motion of C5 on C6 (rigid body on the 6-DOF joint), eq. (D1).

C5 (with an optional payload fixed to it, :mod:`segment.solvers.dynamics.bodies`) is one rigid
body on the 6-DOF joint of :mod:`segment.elements.kinematics`. With its mass ``m`` [kg -> N s^2/mm:
x 1e-3], its inertia tensor ``I`` about the centre of gravity along the C5 axes
[kg mm^2 -> N mm s^2: x 1e-3] and the centre of gravity at ``g`` in the C5 frame (Table 1,
C5 alone: 0.23 kg, diag(2.3, 2.3, 4.5) kg cm^2, g = (-8.1, 0, 0) mm), the velocity of the
centre of gravity and the angular velocity, both in C6 coordinates, are linear in the joint
rates ``dq/dt``::

    v_G   = J_v(q) dq/dt,    J_v = [R0, -[r]x H],      r = R g
    omega = J_w(q) dq/dt,    J_w = [0,   H],           H = [h1, h2, h3]

and projecting Newton-Euler's equations on the joint (Kane's equations, i.e. virtual power)::

    M(q) d2q/dt2 = Q(q, dq/dt, t) + Q_g(q) + Q*(q, t) - b(q, dq/dt)              (D1)

    M   = m J_v^T J_v + J_w^T I_c J_w,               I_c = R I R^T
    b   = m J_v^T a_0 + J_w^T (I_c alpha_0 + omega x I_c omega)
    alpha_0 = dh2/dt dphi_y/dt + dh3/dt dphi_z/dt,   dh2/dt = (h1 dphi_x/dt) x h2,
              dh3/dt = (h1 dphi_x/dt + h2 dphi_y/dt) x h3
    a_0 = alpha_0 x r + omega x (omega x r)
    Q_g = J_v^T (0, 0, -m g)                          (optional gravity, -z of C6)
    Q*  = J_v^T (-m a_b(t))                           (base excitation: C6 translates with
                                                       the acceleration a_b, eq. (50) of
                                                       Fritzkowski and Walczak)

``Q`` is the static residual of :mod:`segment.core.residual` (disc, ligaments, facets, load:
the kernel Newton iterates on) plus the damping terms of the paper
(:mod:`segment.solvers.dynamics.forces`). C6 only translates, so the C6 frame does not turn:
``q``, ``dq/dt``, ``M`` and ``b`` are the same as for a fixed C6, and the moving base enters
through ``Q*`` alone (no Coriolis or centrifugal terms of the frame).

First-order form ``y = (q, dq/dt[, energy integrals])``: :func:`_rhs` is its right-hand side
and :func:`_jac` the approximate Jacobian handed to implicit integrators::

    d(dy/dt)/dy ~ [[0, 1], [M^-1 K, M^-1 C]]

with ``K`` the exact static Jacobian (:mod:`segment.elements.tangent`) and ``C`` the (linear)
damping matrix; velocity-product terms are left out of it (an approximate Jacobian only slows
the integrator's Newton iterations, it does not change the solution).
"""

from __future__ import annotations

import numpy as np

from segment.core.io import BodyInertia, load_parameters
from segment.core.model import Segment
from segment.core.residual import residual_jacobian, residual_real
from segment.elements.tangent import joint_axes
from segment.jit import njit
from segment.solvers.dynamics.base import _base_acceleration
from segment.solvers.dynamics.bodies import B_G, B_I, B_M, Payload, _body_array
from segment.solvers.dynamics.forces import _element_forces

__all__ = ["GRAVITY_MM_S2", "angular_momentum", "kinetic_energy", "mass_matrix"]

GRAVITY_MM_S2 = 9810.0
"""Standard gravity [mm/s^2]."""
_N_ENERGY = 4  # augmented states: W_load, W_facet, E_dissipated, W_transport


@njit
def _cross3(a, b):
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]])


@njit
def _rigid_body(q, qd, r0, body):
    """Mass matrix (6, 6), velocity-product term b (6,), J_v (3, 6), r = R g (3,), omega (3,),
    I_c (3, 3) of eq. (D1). ``body`` = (M [N s^2/mm], g (3) [mm, C5 frame], I (9) [N mm s^2,
    about g, C5 axes, row-major]) (:func:`segment.solvers.dynamics.bodies._body_array`)."""
    m = body[B_M]
    R0t = ((r0[0, 0], r0[0, 1], r0[0, 2]), (r0[1, 0], r0[1, 1], r0[1, 2]),
           (r0[2, 0], r0[2, 1], r0[2, 2]))
    # R (row tuples) and the joint axes (segment.elements.tangent)
    Rt, _, ht = joint_axes(q, R0t)
    R0 = np.ascontiguousarray(r0)
    R = np.empty((3, 3))
    H = np.empty((3, 3))
    for i in range(3):
        for k in range(3):
            R[i, k] = Rt[i][k]
            H[i, k] = ht[k][i]            # column k is the axis h_k
    r = R @ body[B_G:B_G + 3]
    rx = np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])
    Jv = np.empty((3, 6))
    Jv[:, :3] = R0
    Jv[:, 3:] = -(rx @ H)
    w = qd[3:].copy()
    omega = H @ w
    Ic = R @ np.ascontiguousarray(body[B_I:B_I + 9]).reshape((3, 3)) @ R.T
    M = m * (Jv.T @ Jv)
    M[3:, 3:] += H.T @ Ic @ H
    hd2 = _cross3(H[:, 0] * w[0], H[:, 1])
    hd3 = _cross3(H[:, 0] * w[0] + H[:, 1] * w[1], H[:, 2])
    alpha0 = hd2 * w[1] + hd3 * w[2]
    a0 = _cross3(alpha0, r) + _cross3(omega, _cross3(omega, r))
    b = m * (Jv.T @ a0)
    b[3:] += H.T @ (Ic @ alpha0 + _cross3(omega, Ic @ omega))
    return M, b, Jv, r, omega, Ic


@njit
def _static_force(q, load, packed, Q, elements):
    """The static generalized force (6,): the compiled residual of :mod:`segment.core.residual`
    (the kernel Newton iterates on) with the elements, else the load alone (row 4 of ``Q``,
    from :func:`~segment.solvers.dynamics.forces._element_forces`)."""
    if elements:
        return residual_real(q, load, packed)
    return Q[4].copy()


@njit
def _rhs(t, y, load, params, packed, disc_b, lig_b, fac_b, body, grav, elements, energy,
         base_t, base_a):
    """d y / d t of the first-order system
    (q, dq/dt[, W_load, W_facet, E_dissipated, W_transport]).

    Forces: the static residual (elastic elements and load) plus the damping row of
    :func:`~segment.solvers.dynamics.forces._element_forces`, gravity ``-grav`` along z of C6
    and the transport inertia force ``-M a_b(t)`` of the base excitation (``base_t``,
    ``base_a``: :class:`~segment.solvers.dynamics.base.BaseExcitation` samples, empty for a
    fixed C6), both at the centre of gravity.
    """
    q = y[:6].copy()
    qd = y[6:12].copy()
    n = params[6].shape[0]
    mfac = params[11].shape[0]
    Q = np.empty((5, 6))
    lig = np.empty((n, 4))
    fac = np.empty((mfac, 4))
    _element_forces(q, qd, load, params, disc_b, lig_b, fac_b, elements, True, Q, lig, fac)
    M, b, Jv, _, _, _ = _rigid_body(q, qd, params[1], body)
    a_b = _base_acceleration(t, base_t, base_a)
    field = -body[B_M] * a_b                        # transport inertia force [N], eq. (50)
    field[2] -= body[B_M] * grav
    q_field = Jv.T @ field
    rhs = _static_force(q, load, packed, Q, elements) + Q[3] + q_field - b
    qdd = np.linalg.solve(M, rhs)
    dy = np.empty(y.shape[0])
    dy[:6] = qd
    dy[6:12] = qdd
    if energy:
        dy[12] = np.dot(Q[4], qd)
        dy[13] = np.dot(Q[2], qd)
        dy[14] = -np.dot(Q[3], qd)
        dy[15] = np.dot(Jv.T @ (-body[B_M] * a_b), qd)
    return dy


@njit
def _damping_matrix(q, load, params, disc_b, lig_b, fac_b, elements):
    """d Q_damping / d (dq/dt) (6, 6) at ``q`` without the tension-only clipping (the damping
    forces are linear in the rates then)."""
    n = params[6].shape[0]
    mfac = params[11].shape[0]
    C = np.zeros((6, 6))
    Q = np.empty((5, 6))
    lig = np.empty((n, 4))
    fac = np.empty((mfac, 4))
    e = np.zeros(6)
    for j in range(6):
        e[:] = 0.0
        e[j] = 1.0
        _element_forces(q, e, load, params, disc_b, lig_b, fac_b, elements, False, Q, lig, fac)
        C[:, j] = Q[3]
    return C


@njit
def _jac(t, y, load, params, packed, disc_b, lig_b, fac_b, body, elements, energy):
    """Approximate Jacobian [[0, 1], [M^-1 K, M^-1 C]] of :func:`_rhs` (see module doc);
    ``packed`` is ``Segment._packed`` (for K), ``params`` ``Segment._params``."""
    q = y[:6].copy()
    qd = y[6:12].copy()
    ny = y.shape[0]
    if elements:
        _, K = residual_jacobian(q, load, packed)
    else:
        K = np.zeros((6, 6))
    C = _damping_matrix(q, load, params, disc_b, lig_b, fac_b, elements)
    M, _, _, _, _, _ = _rigid_body(q, qd, params[1], body)
    Minv = np.linalg.inv(M)
    J = np.zeros((ny, ny))
    for k in range(6):
        J[k, 6 + k] = 1.0
    J[6:12, :6] = Minv @ K
    J[6:12, 6:12] = Minv @ C
    return J


# ---------------------------------------------------------------- helpers
def _inertia_array(inertia: BodyInertia | None, model: Segment | None = None,
                   payload: Payload | None = None) -> np.ndarray:
    """The moving body's array (:func:`~segment.solvers.dynamics.bodies._body_array`): C5's
    inertia as given, else the model's (its data folder), else the packaged Table 1; with the
    payload if given."""
    return _body_array(inertia, model, payload)


def _initial(q0, qd0) -> tuple[np.ndarray, np.ndarray]:
    out = []
    for name, v in (("q0", q0), ("qd0", qd0)):
        a = np.zeros(6) if v is None else np.array(v, dtype=float)
        if a.shape != (6,) or not np.all(np.isfinite(a)):
            raise ValueError(f"{name} must be 6 finite numbers, got {v!r}")
        out.append(a)
    return out[0], out[1]


def mass_matrix(q, *, inertia: BodyInertia | None = None, model: Segment | None = None,
                payload: Payload | None = None):
    """Mass matrix M(q) (6, 6) of eq. (D1) [N s^2/mm, N s^2, N mm s^2].

    Parameters
    ----------
    q : array_like, shape (6,)
    inertia : BodyInertia, optional
        Default: the model's (its data folder), else Table 1, C5 of the packaged data.
    model : Segment, optional
        Supplies the reference orientation R0 (default: the packaged model's).
    payload : Payload, optional
        A rigid body fixed to C5 (:class:`~segment.solvers.dynamics.bodies.Payload`).
    """
    q, _ = _initial(q, None)
    r0 = (model.reference.R0 if model is not None else load_parameters().reference.R0)
    M, _, _, _, _, _ = _rigid_body(q, np.zeros(6), np.ascontiguousarray(r0),
                                   _inertia_array(inertia, model, payload))
    return M


def kinetic_energy(q, qd, *, inertia: BodyInertia | None = None,
                   model: Segment | None = None, payload: Payload | None = None) -> float:
    """Kinetic energy ``1/2 m |v_G|^2 + 1/2 omega^T I_c omega`` [N mm] at (q, dq/dt), relative to
    C6 (with a moving C6 this is T2 of Fritzkowski and Walczak, eq. (49))."""
    q, qd = _initial(q, qd)
    r0 = (model.reference.R0 if model is not None else load_parameters().reference.R0)
    return float(0.5 * qd @ _rigid_body(q, qd, np.ascontiguousarray(r0),
                                        _inertia_array(inertia, model, payload))[0] @ qd)


def angular_momentum(q, qd, *, inertia: BodyInertia | None = None,
                     model: Segment | None = None, payload: Payload | None = None) -> np.ndarray:
    """Angular momentum about the centre of gravity, C6 coordinates (3,) [N mm s]."""
    q, qd = _initial(q, qd)
    r0 = (model.reference.R0 if model is not None else load_parameters().reference.R0)
    _, _, _, _, omega, Ic = _rigid_body(q, qd, np.ascontiguousarray(r0),
                                        _inertia_array(inertia, model, payload))
    return Ic @ omega


