"""Equations of motion of C5 on C6 (rigid body on the 6-DOF joint), eq. (D1).

C5 is one rigid body on the 6-DOF joint of :mod:`segment.kinematics`. With Table 1's mass
``m`` [kg -> N s^2/mm: x 1e-3], principal inertia ``I`` about the centre of gravity along the
C5 axes [kg mm^2 -> N mm s^2: x 1e-3] and the centre of gravity at ``g = (g_x, 0, 0)`` in the
C5 frame (g_x = -8.1 mm), the velocity of the centre of gravity and the angular velocity, both
in C6 coordinates, are linear in the joint rates ``dq/dt``::

    v_G   = J_v(q) dq/dt,    J_v = [R0, -[r]x H],      r = R g
    omega = J_w(q) dq/dt,    J_w = [0,   H],           H = [h1, h2, h3]

and projecting Newton-Euler's equations on the joint (Kane's equations, i.e. virtual power)::

    M(q) d2q/dt2 = Q(q, dq/dt, t) + Q_g(q) - b(q, dq/dt)                         (D1)

    M   = m J_v^T J_v + J_w^T I_c J_w,               I_c = R diag(I) R^T
    b   = m J_v^T a_0 + J_w^T (I_c alpha_0 + omega x I_c omega)
    alpha_0 = dh2/dt dphi_y/dt + dh3/dt dphi_z/dt,   dh2/dt = (h1 dphi_x/dt) x h2,
              dh3/dt = (h1 dphi_x/dt + h2 dphi_y/dt) x h3
    a_0 = alpha_0 x r + omega x (omega x r)
    Q_g = J_v^T (0, 0, -m g)                          (optional gravity, -z of C6)

``Q`` is the residual of :mod:`segment.model` (disc, ligaments, facets, load) plus the damping
terms of the paper (:mod:`segment.solvers.dynamics.forces`).

First-order form ``y = (q, dq/dt[, energy integrals])``: :func:`_rhs` is its right-hand side
and :func:`_jac` the approximate Jacobian handed to implicit integrators::

    d(dy/dt)/dy ~ [[0, 1], [M^-1 K, M^-1 C]]

with ``K`` the exact static Jacobian (:mod:`segment.tangent`) and ``C`` the (linear)
damping matrix; velocity-product terms are left out of it (an approximate Jacobian only slows
the integrator's Newton iterations, it does not change the solution).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from segment.core.io import BodyInertia, load_parameters
from segment.core.model import Segment, _residual_jacobian
from segment.elements.tangent import _axes
from segment.solvers.dynamics.forces import _element_forces

__all__ = ["GRAVITY_MM_S2", "angular_momentum", "kinetic_energy", "mass_matrix"]

GRAVITY_MM_S2 = 9810.0
"""Standard gravity [mm/s^2]."""
KG_TO_T = 1e-3
"""kg -> N s^2/mm (tonne); also kg mm^2 -> N mm s^2."""
_N_ENERGY = 3  # augmented states: W_load, W_facet, E_dissipated


@njit(cache=True)
def _cross3(a, b):
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]])


@njit(cache=True)
def _rigid_body(q, qd, r0, inertia):
    """Mass matrix (6, 6), velocity-product term b (6,), J_v (3, 6), r = R g (3,), omega (3,),
    I_c (3, 3) of eq. (D1). ``inertia`` = (m [N s^2/mm], g_x [mm], Ixx, Iyy, Izz [N mm s^2])."""
    m = inertia[0]
    gx = inertia[1]
    R0t = ((r0[0, 0], r0[0, 1], r0[0, 2]), (r0[1, 0], r0[1, 1], r0[1, 2]),
           (r0[2, 0], r0[2, 1], r0[2, 2]))
    Rt, _, ht = _axes(q, R0t)            # R (row tuples) and the joint axes (segment.tangent)
    R0 = np.ascontiguousarray(r0)
    R = np.empty((3, 3))
    H = np.empty((3, 3))
    for i in range(3):
        for k in range(3):
            R[i, k] = Rt[i][k]
            H[i, k] = ht[k][i]            # column k is the axis h_k
    r = R[:, 0] * gx
    rx = np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])
    Jv = np.empty((3, 6))
    Jv[:, :3] = R0
    Jv[:, 3:] = -(rx @ H)
    w = qd[3:].copy()
    omega = H @ w
    Ic = R @ np.diag(inertia[2:5]) @ R.T
    M = m * (Jv.T @ Jv)
    M[3:, 3:] += H.T @ Ic @ H
    hd2 = _cross3(H[:, 0] * w[0], H[:, 1])
    hd3 = _cross3(H[:, 0] * w[0] + H[:, 1] * w[1], H[:, 2])
    alpha0 = hd2 * w[1] + hd3 * w[2]
    a0 = _cross3(alpha0, r) + _cross3(omega, _cross3(omega, r))
    b = m * (Jv.T @ a0)
    b[3:] += H.T @ (Ic @ alpha0 + _cross3(omega, Ic @ omega))
    return M, b, Jv, r, omega, Ic


@njit(cache=True)
def _rhs(y, load, params, disc_b, lig_b, fac_b, inertia, grav, elements, energy):
    """d y / d t of the first-order system (q, dq/dt[, W_load, W_facet, E_dissipated])."""
    q = y[:6].copy()
    qd = y[6:12].copy()
    n = params[6].shape[0]
    mfac = params[11].shape[0]
    Q = np.empty((5, 6))
    lig = np.empty((n, 4))
    fac = np.empty((mfac, 4))
    _element_forces(q, qd, load, params, disc_b, lig_b, fac_b, elements, True, Q, lig, fac)
    M, b, Jv, _, _, _ = _rigid_body(q, qd, params[1], inertia)
    rhs = Q[0] + Q[1] + Q[2] + Q[3] + Q[4] - b
    if grav != 0.0:
        rhs -= inertia[0] * grav * Jv[2, :]
    qdd = np.linalg.solve(M, rhs)
    dy = np.empty(y.shape[0])
    dy[:6] = qd
    dy[6:12] = qdd
    if energy:
        dy[12] = np.dot(Q[4], qd)
        dy[13] = np.dot(Q[2], qd)
        dy[14] = -np.dot(Q[3], qd)
    return dy


@njit(cache=True)
def _jac(y, load, params, packed, disc_b, lig_b, fac_b, inertia, elements, energy):
    """Approximate Jacobian [[0, 1], [M^-1 K, M^-1 C]] of :func:`_rhs` (see module doc);
    ``packed`` is ``Segment._packed`` (for K), ``params`` ``Segment._params``."""
    q = y[:6].copy()
    qd = y[6:12].copy()
    ny = y.shape[0]
    n = params[6].shape[0]
    mfac = params[11].shape[0]
    if elements:
        _, K = _residual_jacobian(q, load, packed)
    else:
        K = np.zeros((6, 6))
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
    M, _, _, _, _, _ = _rigid_body(q, qd, params[1], inertia)
    Minv = np.linalg.inv(M)
    J = np.zeros((ny, ny))
    for k in range(6):
        J[k, 6 + k] = 1.0
    J[6:12, :6] = Minv @ K
    J[6:12, 6:12] = Minv @ C
    return J


# ---------------------------------------------------------------- helpers
def _inertia_array(inertia: BodyInertia | None, model: Segment | None = None) -> np.ndarray:
    """Inertia of C5 as given, else the model's (its data folder), else the packaged Table 1."""
    if inertia is None and model is not None:
        inertia = model.inertia
    if inertia is None:
        inertia = load_parameters().inertia["C5"]
    if not isinstance(inertia, BodyInertia):
        raise TypeError(f"inertia must be a segment.io.BodyInertia, got {type(inertia).__name__}")
    return np.array([inertia.mass * KG_TO_T, inertia.cog_x,
                     *(np.asarray(inertia.inertia, dtype=float) * KG_TO_T)])


def _initial(q0, qd0) -> tuple[np.ndarray, np.ndarray]:
    out = []
    for name, v in (("q0", q0), ("qd0", qd0)):
        a = np.zeros(6) if v is None else np.array(v, dtype=float)
        if a.shape != (6,) or not np.all(np.isfinite(a)):
            raise ValueError(f"{name} must be 6 finite numbers, got {v!r}")
        out.append(a)
    return out[0], out[1]


def mass_matrix(q, *, inertia: BodyInertia | None = None, model: Segment | None = None):
    """Mass matrix M(q) (6, 6) of eq. (D1) [N s^2/mm, N s^2, N mm s^2].

    Parameters
    ----------
    q : array_like, shape (6,)
    inertia : BodyInertia, optional
        Default: the model's (its data folder), else Table 1, C5 of the packaged data.
    model : Segment, optional
        Supplies the reference orientation R0 (default: the packaged model's).
    """
    q, _ = _initial(q, None)
    r0 = (model.reference.R0 if model is not None else load_parameters().reference.R0)
    M, _, _, _, _, _ = _rigid_body(q, np.zeros(6), np.ascontiguousarray(r0),
                                   _inertia_array(inertia, model))
    return M


def kinetic_energy(q, qd, *, inertia: BodyInertia | None = None,
                   model: Segment | None = None) -> float:
    """Kinetic energy 1/2 m |v_G|^2 + 1/2 omega . I_c omega [N mm] at (q, dq/dt)."""
    q, qd = _initial(q, qd)
    r0 = (model.reference.R0 if model is not None else load_parameters().reference.R0)
    return float(0.5 * qd @ _rigid_body(q, qd, np.ascontiguousarray(r0),
                                        _inertia_array(inertia, model))[0] @ qd)


def angular_momentum(q, qd, *, inertia: BodyInertia | None = None,
                     model: Segment | None = None) -> np.ndarray:
    """Angular momentum about the centre of gravity, C6 coordinates (3,) [N mm s]."""
    q, qd = _initial(q, qd)
    r0 = (model.reference.R0 if model is not None else load_parameters().reference.R0)
    _, _, _, _, omega, Ic = _rigid_body(q, qd, np.ascontiguousarray(r0),
                                        _inertia_array(inertia, model))
    return Ic @ omega


