"""Linear 3-D point restraint between a point of C5 and a point of C6.

MADYMO's point restraint (the element the paper's MADYMO model used for the disc's
translational part, DETC2000/MECH-6821 "Madymo Model"), here between two *arbitrary* points
instead of the vertebra origins. It is the translational part of a device whose centre is not
the C5 origin: the ball of a ball-and-socket disc prosthesis sits at its centre of rotation, and
eq. (1) itself says the disc's force acts "at the disc midpoint". With ``a`` a point fixed in C5
(C5 frame), ``b`` a point fixed in C6 (C6 frame), both coinciding at the reference pose when
built by :meth:`PointRestraint.at_point`::

    x  = p + R a                      the C5 point in C6 coordinates        [mm]
    d  = x - b                        its displacement from the C6 point    [mm]
    f  = -K d,   K = diag(k_x, k_y, k_z) in the C6 axes                    [N]  (on C5; C6 gets -f)
    V  = 1/2 d . K d                  elastic energy                        [N mm]

The force acts on C5 at ``x`` and, equal and opposite, on C6 at the same point (``x`` and ``b``
coincide to within the device's compliance; the moment of the pair about any point is that of
``f`` at ``x``, because the restraint transmits no moment of its own: a ball-and-socket joint
turns freely about its centre). Its generalized force is ``Q = J_x^T f`` (virtual work,
:mod:`segment.elements.kinematics`), so ``Q = -dV/dq`` exactly: the element is conservative.

Jacobian: ``df/dq_j = -K dx/dq_j`` with ``dx/dq_j`` the material motion of ``x``
(:func:`segment.elements.tangent._material_motion`), assembled like any point force
(:func:`segment.elements.tangent._add_point_force_jacobian`); ``tests/test_restraint.py`` holds it
to central differences and the complex-step Jacobian of the whole segment.

Internal units: mm, N, N/mm.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from segment.elements.facet import rows_in_frame
from segment.elements.vec import add, mat_vec, sub
from segment.jit import njit

__all__ = ["P_A", "P_B", "P_K", "P_WIDTH", "PointRestraint", "pack_restraints", "restraint_state"]

P_A, P_B, P_K = 0, 3, 6
"""Column offsets of a packed restraint row: C5 point (C5 frame), C6 point (C6 frame),
stiffness along the C6 axes."""
P_WIDTH = 9


@dataclass(frozen=True, eq=False)
class PointRestraint:
    """A linear point restraint (see the module docstring).

    Parameters
    ----------
    name : str
    point_c5 : array_like, shape (3,)
        The restrained point of C5, in the C5 frame [mm].
    point_c6 : array_like, shape (3,)
        Its anchor on C6, in the C6 frame [mm].
    stiffness : array_like, shape (3,)
        k_x, k_y, k_z along the C6 axes [N/mm], each >= 0 and finite.
    """

    name: str
    point_c5: np.ndarray
    point_c6: np.ndarray
    stiffness: np.ndarray

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"point restraint: name must be a non-empty string, got "
                             f"{self.name!r}")
        for attr in ("point_c5", "point_c6", "stiffness"):
            a = np.array(getattr(self, attr), dtype=float)
            if a.shape != (3,) or not np.all(np.isfinite(a)):
                raise ValueError(f"point restraint {self.name!r}: {attr} must be 3 finite "
                                 f"numbers, got {getattr(self, attr)!r}")
            if attr == "stiffness" and np.any(a < 0):
                raise ValueError(f"point restraint {self.name!r}: stiffness must be >= 0 "
                                 f"[N/mm], got {a.tolist()}")
            a.setflags(write=False)
            object.__setattr__(self, attr, a)

    @classmethod
    def at_point(cls, name: str, point_c6, *, stiffness, reference) -> PointRestraint:
        """A restraint whose C5 and C6 points coincide at ``point_c6`` [mm, C6 frame] in the
        reference pose (Table 1): no force at q = 0."""
        b = np.asarray(point_c6, dtype=float)
        a = rows_in_frame(reference.R0, (b - reference.s0)[None])[0]   # no BLAS: same bits
        k = np.broadcast_to(np.asarray(stiffness, dtype=float), (3,))
        return cls(name, a, b, k)

    def displacement(self, p, R) -> np.ndarray:
        """``d = p + R a - b`` [mm] for the C5 pose (origin ``p``, rotation ``R`` C5 -> C6)."""
        return np.asarray(p, dtype=float) + np.asarray(R, dtype=float) @ self.point_c5 \
            - self.point_c6

    def force_on_c5(self, p, R) -> np.ndarray:
        """``f = -K d`` [N] in C6 coordinates."""
        return -self.stiffness * self.displacement(p, R)

    def energy(self, p, R) -> float:
        """``V = 1/2 d . K d`` [N mm]."""
        d = self.displacement(p, R)
        return 0.5 * float(d @ (self.stiffness * d))


def pack_restraints(restraints) -> np.ndarray:
    """Rows (n, 9) of :data:`P_A`, :data:`P_B`, :data:`P_K` for the compiled kernels."""
    rows = [np.concatenate([r.point_c5, r.point_c6, r.stiffness]) for r in restraints]
    if not rows:
        return np.zeros((0, P_WIDTH))
    return np.ascontiguousarray(np.array(rows, dtype=float))


@njit
def restraint_state(i, p, R, pts):
    """C5 point ``x`` (C6 coordinates) and force ``f`` on C5 of restraint row ``i`` at the pose
    (p, R); real or complex, like the pose."""
    a = (pts[i, P_A], pts[i, P_A + 1], pts[i, P_A + 2])
    b = (pts[i, P_B], pts[i, P_B + 1], pts[i, P_B + 2])
    x = add(p, mat_vec(R, a))
    d = sub(x, b)
    f = (-pts[i, P_K] * d[0], -pts[i, P_K + 1] * d[1], -pts[i, P_K + 2] * d[2])
    return x, f
