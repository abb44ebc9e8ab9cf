"""The state of the LSV integrator and its coupling to the joint: C5 as a free rigid body.

One concept: the rigid-body state of C5 that :mod:`segment.solvers.dynamics.lsv` advances
(centre of gravity ``c`` and its velocity ``v``, rotation ``R`` of the principal frame, body
angular momentum ``Pi``; the energy integrals of eq. (D2)) and its two-way coupling to the
joint coordinates ``q`` of :mod:`segment.elements.kinematics`: ``q`` read off ``(c, R)``
(Cardan angles on the branch nearest the previous step, :mod:`segment.solvers.dynamics.so3`),
the rates ``dq/dt`` from ``(v, Pi)`` and back, and the forces of a state: the generalized
forces ``Q`` of the static residual (:mod:`segment.core.residual`) plus the damping of
:mod:`segment.solvers.dynamics.forces`, turned into the resultant force ``F`` and the moment
about the centre of gravity ``tau`` (``(F, M_G) = J^-T Q``, ``J`` the joint's velocity map of
:mod:`segment.solvers.dynamics.equations`), with gravity and the transport inertia force
``-M a_b(t)`` of a moving C6.

State vector ``s`` (one float array, so that a compiled step owns it): ``S_C`` centre of
gravity (3), ``S_V`` its velocity (3), ``S_R`` rotation of the principal frame (9, row-major),
``S_PI`` body angular momentum (3), ``S_Q``, ``S_QD`` joint coordinates and rates (6 + 6),
``S_W`` work integrals (load, facets, damping, transport), ``S_F``, ``S_TAU`` force and
moment, ``S_ROWS`` the element rows of the last evaluation (5 x 6), ``S_AB`` the base
acceleration, ``S_VEL`` the elastic energy, ``S_NEWC`` steps since the damping matrix,
``S_NEVAL`` force evaluations.
"""

from __future__ import annotations

import numpy as np

from segment.elements.tangent import joint_axes
from segment.jit import njit
from segment.solvers.dynamics.base import _base_acceleration
from segment.solvers.dynamics.bodies import B_G, B_I, B_M
from segment.solvers.dynamics.equations import _static_force
from segment.solvers.dynamics.forces import _element_forces
from segment.solvers.dynamics.so3 import _cardan_near

__all__: list[str] = []

# layout of the state vector
S_C, S_V, S_R, S_PI, S_Q, S_QD, S_W = 0, 3, 6, 15, 18, 24, 30
S_F, S_TAU, S_ROWS, S_AB, S_VEL, S_NEWC, S_NEVAL = 34, 37, 40, 70, 73, 74, 75
S_WIDTH = 76
# layout of the body constants: mass, centre of gravity (C5), principal axes (C5, columns,
# row-major), principal moments
RB_M, RB_G, RB_P, RB_LAM, RB_WIDTH = 0, 1, 4, 13, 16


def _principal_body(body) -> np.ndarray:
    """Body constants of this module from the 13-array of
    :func:`~segment.solvers.dynamics.bodies._body_array`: mass, centre of gravity, principal
    axes (columns, C5 frame, right-handed) and moments."""
    tensor = body[B_I:B_I + 9].reshape(3, 3)
    lam, P = np.linalg.eigh(0.5 * (tensor + tensor.T))
    if np.linalg.det(P) < 0:
        P[:, 2] = -P[:, 2]
    rb = np.empty(RB_WIDTH)
    rb[RB_M] = body[B_M]
    rb[RB_G:RB_G + 3] = body[B_G:B_G + 3]
    rb[RB_P:RB_P + 9] = P.ravel()
    rb[RB_LAM:RB_LAM + 3] = lam
    return rb


@njit
def _r0_tuple(r0):
    return ((r0[0, 0], r0[0, 1], r0[0, 2]), (r0[1, 0], r0[1, 1], r0[1, 2]),
            (r0[2, 0], r0[2, 1], r0[2, 2]))


@njit
def _c5_rotation(s, rb):
    R = np.ascontiguousarray(s[S_R:S_R + 9]).reshape((3, 3))
    P = np.ascontiguousarray(rb[RB_P:RB_P + 9]).reshape((3, 3))
    return R, R @ P.T


@njit
def _set_pose(s, rb, s0, r0):
    """q (continuous) from the centre of gravity and the rotation."""
    _, Rc5 = _c5_rotation(s, rb)
    R0 = np.ascontiguousarray(r0)
    ang = _cardan_near(R0.T @ Rc5, s[S_Q + 3:S_Q + 6])
    r = Rc5 @ rb[RB_G:RB_G + 3]
    t = R0.T @ (s[S_C:S_C + 3] - r - s0)
    s[S_Q:S_Q + 3] = t
    s[S_Q + 3:S_Q + 6] = ang


@njit
def _joint(s, rb, r0):
    """Joint axes H (3, 3, columns), arm r = R g (3,) and omega (3,) in C6 at the state."""
    q = s[S_Q:S_Q + 6]
    _, _, ht = joint_axes(q, _r0_tuple(r0))
    H = np.empty((3, 3))
    for i in range(3):
        for k in range(3):
            H[i, k] = ht[k][i]
    Rp, Rc5 = _c5_rotation(s, rb)
    r = Rc5 @ rb[RB_G:RB_G + 3]
    omega = Rp @ (s[S_PI:S_PI + 3] / rb[RB_LAM:RB_LAM + 3])
    return H, r, omega


@njit
def _set_rates(s, rb, r0):
    """dq/dt from v and Pi."""
    H, r, omega = _joint(s, rb, r0)
    R0 = np.ascontiguousarray(r0)
    v = s[S_V:S_V + 3]
    pdot = v - np.cross(omega, r)
    s[S_QD:S_QD + 3] = R0.T @ pdot
    s[S_QD + 3:S_QD + 6] = np.linalg.solve(H, omega)


@njit
def _set_velocities(s, qd, rb, r0):
    """v and Pi from dq/dt (and dq/dt itself)."""
    H, r, _ = _joint(s, rb, r0)
    R0 = np.ascontiguousarray(r0)
    omega = H @ qd[3:]
    s[S_V:S_V + 3] = R0 @ qd[:3] + np.cross(omega, r)
    Rp, _ = _c5_rotation(s, rb)
    s[S_PI:S_PI + 3] = rb[RB_LAM:RB_LAM + 3] * (Rp.T @ omega)
    s[S_QD:S_QD + 6] = qd


@njit
def _field(t, rb, grav, base_t, base_a):
    """Gravity and transport inertia force at the centre of gravity [N]; a_b(t)."""
    a_b = _base_acceleration(t, base_t, base_a)
    f = -rb[RB_M] * a_b
    f[2] -= rb[RB_M] * grav
    return f, a_b


@njit
def _set_forces(s, Qgen, t, rb, grav, base_t, base_a, r0):
    """Resultant force F (C6) and moment about the centre of gravity tau (principal frame)
    of the generalized force ``Qgen`` plus the fields: ``(F, M_G) = J^-T Q``."""
    R0 = np.ascontiguousarray(r0)
    H, r, _ = _joint(s, rb, r0)
    F = R0 @ Qgen[:3]
    M_p = np.zeros(3)
    if np.any(Qgen[3:] != 0.0):
        M_p = np.linalg.solve(H.T, Qgen[3:])       # moment about the C5 origin
    M_G = M_p - np.cross(r, F)
    f, a_b = _field(t, rb, grav, base_t, base_a)
    Rp, _ = _c5_rotation(s, rb)
    s[S_F:S_F + 3] = F + f
    s[S_TAU:S_TAU + 3] = Rp.T @ M_G
    s[S_AB:S_AB + 3] = a_b


@njit
def _evaluate(s, t, load, params, packed, disc_b, lig_b, fac_b, rb, grav, elements, base_t,
              base_a):
    """Element rows, elastic energy and the forces of the state ``s`` at time ``t``."""
    n = params[6].shape[0]
    mfac = params[11].shape[0]
    Q = np.empty((5, 6))
    lig = np.empty((n, 4))
    fac = np.empty((mfac, 4))
    q = s[S_Q:S_Q + 6].copy()
    qd = s[S_QD:S_QD + 6].copy()
    v_el, _ = _element_forces(q, qd, load, params, disc_b, lig_b, fac_b, elements, True, Q, lig,
                              fac)
    Qgen = _static_force(q, load, packed, Q, elements) + Q[3]
    _set_forces(s, Qgen, t, rb, grav, base_t, base_a, params[1])
    s[S_ROWS:S_ROWS + 30] = Q.ravel()
    s[S_VEL] = v_el
    s[S_NEVAL] += 1.0


@njit
def _kinetic(s, rb):
    v = s[S_V:S_V + 3]
    Pi = s[S_PI:S_PI + 3]
    return 0.5 * rb[RB_M] * np.dot(v, v) + 0.5 * np.sum(Pi * Pi / rb[RB_LAM:RB_LAM + 3])
