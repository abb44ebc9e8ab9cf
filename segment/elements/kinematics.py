"""The 6-DOF joint between C6 (fixed) and C5: q <-> pose, and forces -> generalized forces.

This is the only module that knows how the generalized coordinates are parametrised
(DETC2000/MECH-6821, "Basic Model Parameters": three translations along the coordinate axes,
then three consecutive rotations about the same axes)::

    q = (x, y, z, phi_x, phi_y, phi_z)            [mm, mm, mm, rad, rad, rad]

    p_c6  = s0 + R0 @ (x, y, z)                   origin of C5 in C6 coordinates
    R_c6_c5 = R0 @ Rx(phi_x) @ Ry(phi_y) @ Rz(phi_z)

with the reference pose of Table 1, ``s0 = (-2.8, 0, 17.4) mm`` and ``R0 = Ry(-5.2 deg)``.
The joint frame is fixed on C6 and coincides with the C5 frame at q = 0, so q = 0 is the
reference pose. Axes: +x anterior, +z superior, +y = z x x (to the left).

Generalized forces follow from virtual work. The angular velocity of C5 in C6 coordinates is
``omega = H(q) @ dphi/dt`` with the columns ``h1 = R0 ex``, ``h2 = R0 Rx ey``,
``h3 = R0 Rx Ry ez``; a force ``f`` acting at a point ``x`` of C5 therefore contributes::

    Q_translation = R0.T @ f          Q_rotation = H.T @ ((x - p) x f)

and a pure moment ``m`` contributes ``H.T @ m``.
"""

from __future__ import annotations

import cmath

import numpy as np

from segment.elements.vec import add, cross, dot, mat_mat, mat_vec, matT_vec, sub
from segment.jit import njit

__all__ = ["ReferencePose", "add_load", "add_point_force", "cardan_xyz", "generalized_force",
           "pose", "pose_and_axes", "rotation_x", "rotation_y", "rotation_z"]


# ---------------------------------------------------------------- numba kernels (complex)
@njit
def _rx(a):
    c = cmath.cos(a)
    s = cmath.sin(a)
    o = 1.0 + 0j
    z = 0j
    return ((o, z, z), (z, c, -s), (z, s, c))


@njit
def _ry(a):
    c = cmath.cos(a)
    s = cmath.sin(a)
    o = 1.0 + 0j
    z = 0j
    return ((c, z, s), (z, o, z), (-s, z, c))


@njit
def _rz(a):
    c = cmath.cos(a)
    s = cmath.sin(a)
    o = 1.0 + 0j
    z = 0j
    return ((c, -s, z), (s, c, z), (z, z, o))


@njit
def pose_and_axes(q, s0, r0):
    """Pose and joint axes at ``q`` (complex array (6,)).

    Returns ``p`` (origin of C5 in C6), ``R`` (C5 -> C6 rotation, row tuples) and the three
    joint rotation axes ``h1, h2, h3`` in C6 coordinates.
    """
    z = 0j
    R0 = (
        (r0[0, 0] + z, r0[0, 1] + z, r0[0, 2] + z),
        (r0[1, 0] + z, r0[1, 1] + z, r0[1, 2] + z),
        (r0[2, 0] + z, r0[2, 1] + z, r0[2, 2] + z),
    )
    t = (q[0], q[1], q[2])
    p = add((s0[0] + z, s0[1] + z, s0[2] + z), mat_vec(R0, t))
    Rx = _rx(q[3])
    Ry = _ry(q[4])
    Rz = _rz(q[5])
    R0Rx = mat_mat(R0, Rx)
    R0RxRy = mat_mat(R0Rx, Ry)
    R = mat_mat(R0RxRy, Rz)
    h1 = (R0[0][0], R0[1][0], R0[2][0])
    h2 = (R0Rx[0][1], R0Rx[1][1], R0Rx[2][1])
    h3 = (R0RxRy[0][2], R0RxRy[1][2], R0RxRy[2][2])
    return p, R, R0, h1, h2, h3


@njit
def add_point_force(Q, x, f, p, R0, h1, h2, h3):
    """Add the generalized force of force ``f`` at C5 point ``x`` (both in C6) to ``Q``."""
    qt = matT_vec(R0, f)
    mom = cross(sub(x, p), f)
    Q[0] += qt[0]
    Q[1] += qt[1]
    Q[2] += qt[2]
    Q[3] += dot(h1, mom)
    Q[4] += dot(h2, mom)
    Q[5] += dot(h3, mom)


@njit
def _add_moment(Q, m, h1, h2, h3):
    """Add the generalized force of a pure moment ``m`` (C6 coordinates) to ``Q``."""
    Q[3] += dot(h1, m)
    Q[4] += dot(h2, m)
    Q[5] += dot(h3, m)


@njit
def add_load(Q, load, r0, h1, h2, h3):
    """Add the generalized force of the external load (6,) to ``Q``.

    The force acts through the C5 origin (``Q_t = F``); the moment is given in the joint frame
    (the C6 frame turned by ``R0``) and stays fixed there as C5 moves.
    """
    Q[0] += load[0]
    Q[1] += load[1]
    Q[2] += load[2]
    m_c6 = (
        r0[0, 0] * load[3] + r0[0, 1] * load[4] + r0[0, 2] * load[5] + 0j,
        r0[1, 0] * load[3] + r0[1, 1] * load[4] + r0[1, 2] * load[5] + 0j,
        r0[2, 0] * load[3] + r0[2, 1] * load[4] + r0[2, 2] * load[5] + 0j,
    )
    _add_moment(Q, m_c6, h1, h2, h3)


# ---------------------------------------------------------------- public numpy layer
def rotation_x(angle_rad: float) -> np.ndarray:
    """Rotation matrix about x [rad] -> (3, 3)."""
    c, s = np.cos(angle_rad), np.sin(angle_rad)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rotation_y(angle_rad: float) -> np.ndarray:
    """Rotation matrix about y [rad] -> (3, 3)."""
    c, s = np.cos(angle_rad), np.sin(angle_rad)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rotation_z(angle_rad: float) -> np.ndarray:
    """Rotation matrix about z [rad] -> (3, 3)."""
    c, s = np.cos(angle_rad), np.sin(angle_rad)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


class ReferencePose:
    """Reference pose of C5 in C6 (DETC2000/MECH-6821 Table 1): origin ``s0`` [mm] and
    orientation ``R0 = Ry(phi_y)``.

    Parameters
    ----------
    origin_mm : array_like, shape (3,)
        ``s0``, the C5 origin in C6 coordinates at q = 0 [mm].
    phi_y_deg : float
        Rotation of C5 about y relative to C6 at q = 0 [deg].
    """

    __slots__ = ("R0", "phi_y", "s0")

    def __init__(self, origin_mm, phi_y_deg: float):
        s0 = np.array(origin_mm, dtype=float)
        if s0.shape != (3,) or not np.all(np.isfinite(s0)):
            raise ValueError(f"reference origin must be 3 finite numbers [mm], got {origin_mm!r}")
        if not np.isfinite(phi_y_deg):
            raise ValueError(f"reference phi_y must be finite [deg], got {phi_y_deg!r}")
        s0.setflags(write=False)
        R0 = rotation_y(np.radians(phi_y_deg))
        R0.setflags(write=False)
        self.s0 = s0
        self.phi_y = float(np.radians(phi_y_deg))
        self.R0 = R0

    def __repr__(self) -> str:
        return (f"ReferencePose(origin_mm={self.s0.tolist()}, "
                f"phi_y_deg={np.degrees(self.phi_y):.6g})")


def _as_q(q) -> np.ndarray:
    q = np.array(q, dtype=float)
    if q.shape != (6,):
        raise ValueError(f"q must have shape (6,), got {q.shape}")
    return q


def pose(q, reference: ReferencePose) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(p_c6, R_c6_c5)``: C5 origin in C6 [mm] and the C5 -> C6 rotation at ``q``."""
    q = _as_q(q)
    p = reference.s0 + reference.R0 @ q[:3]
    R = reference.R0 @ rotation_x(q[3]) @ rotation_y(q[4]) @ rotation_z(q[5])
    return p, R


def generalized_force(q, reference: ReferencePose, *, point_c6=None, force_c6=None,
                      moment_c6=None) -> np.ndarray:
    """Generalized force (6,) [N, N mm] of a force at a C5 point and/or a pure moment.

    Parameters
    ----------
    q : array_like, shape (6,)
    reference : ReferencePose
    point_c6 : array_like, shape (3,), optional
        Point of application on C5, in C6 coordinates [mm] (required with ``force_c6``).
    force_c6 : array_like, shape (3,), optional
        Force acting on C5, C6 coordinates [N].
    moment_c6 : array_like, shape (3,), optional
        Pure moment acting on C5, C6 coordinates [N mm].
    """
    q = _as_q(q)
    p, _ = pose(q, reference)
    R0 = reference.R0
    H = np.column_stack([
        R0[:, 0],
        (R0 @ rotation_x(q[3]))[:, 1],
        (R0 @ rotation_x(q[3]) @ rotation_y(q[4]))[:, 2],
    ])
    Q = np.zeros(6)
    if force_c6 is not None:
        if point_c6 is None:
            raise ValueError("point_c6 is required with force_c6")
        f = np.asarray(force_c6, dtype=float)
        Q[:3] += R0.T @ f
        Q[3:] += H.T @ np.cross(np.asarray(point_c6, dtype=float) - p, f)
    if moment_c6 is not None:
        Q[3:] += H.T @ np.asarray(moment_c6, dtype=float)
    return Q


def cardan_xyz(R: np.ndarray) -> np.ndarray:
    """Angles (a, b, c) [rad] with ``R = Rx(a) @ Ry(b) @ Rz(c)`` (``|b| < 90 deg``)."""
    b = np.arcsin(np.clip(R[0, 2], -1.0, 1.0))
    a = np.arctan2(-R[1, 2], R[2, 2])
    c = np.arctan2(-R[0, 1], R[0, 0])
    return np.array([a, b, c])
