"""The finite helical axis of a displacement and where it crosses the sagittal plane.

One concept (SOURCES.md §13): the helical axis carrying a body from pose 1 to pose 2 (Spoor and
Veldpaus 1980): ``R = R2 R1^T``, ``d = p2 - R p1``; angle and axis direction from R, the slide
``t = n . d`` along it and the point of the axis nearest the origin
``s = -1/2 n x (n x d) + 1/2 cot(theta/2) n x d``. The sagittal instantaneous centre of
rotation (ICR) is where the axis crosses a sagittal plane (y = const). Along a path, the axes
of consecutive poses. The model's ICR along flexion-extension and its comparison with Anderst
et al. 2013 are :mod:`segment.studies.icr`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["HelicalAxis", "finite_helical_axis", "helical_axes", "sagittal_icr"]


@dataclass(frozen=True)
class HelicalAxis:
    """Finite helical axis of a displacement (Spoor and Veldpaus 1980).

    Attributes
    ----------
    direction : ndarray (3,)
        Unit axis n (the rotation is right-handed about it).
    angle_rad : float
        Rotation about n, in [0, pi].
    slide_mm : float
        Translation along n.
    point_mm : ndarray (3,)
        The point of the axis nearest the origin of the frame [mm].
    """

    direction: np.ndarray
    angle_rad: float
    slide_mm: float
    point_mm: np.ndarray


def finite_helical_axis(R1, p1, R2, p2) -> HelicalAxis | None:
    """The helical axis carrying a body from pose 1 to pose 2 (rotations (3, 3), origins (3,)
    [mm], both in one fixed frame); None for a pure translation (angle below 1e-12 rad)."""
    R1, R2 = np.asarray(R1, dtype=float), np.asarray(R2, dtype=float)
    R = R2 @ R1.T
    d = np.asarray(p2, dtype=float) - R @ np.asarray(p1, dtype=float)
    v = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    sin_t = float(np.linalg.norm(v))
    cos_t = 0.5 * (float(np.trace(R)) - 1.0)
    angle = math.atan2(sin_t, cos_t)
    if angle < 1e-12:
        return None
    if sin_t > 1e-6:
        n = v / sin_t
    else:                                         # angle near pi: n from the symmetric part
        B = 0.5 * (R + np.eye(3))
        n = B[:, int(np.argmax(np.diag(B)))]
        n = n / np.linalg.norm(n)
    nxd = np.cross(n, d)
    point = -0.5 * np.cross(n, nxd) + 0.5 / math.tan(0.5 * angle) * nxd
    return HelicalAxis(direction=n, angle_rad=angle, slide_mm=float(n @ d), point_mm=point)


def sagittal_icr(axis: HelicalAxis, *, plane_y_mm: float = 0.0) -> np.ndarray | None:
    """Where the axis crosses the sagittal plane y = ``plane_y_mm`` (x, z) [mm]; None when the
    axis runs within 1e-9 of parallel to that plane."""
    n, s = axis.direction, axis.point_mm
    if abs(n[1]) < 1e-9:
        return None
    lam = (plane_y_mm - s[1]) / n[1]
    x = s + lam * n
    return np.array([x[0], x[2]])


def helical_axes(R_path, p_path) -> list[HelicalAxis | None]:
    """Helical axes between consecutive poses of a path (rotations (n, 3, 3), origins (n, 3))."""
    return [finite_helical_axis(R_path[k], p_path[k], R_path[k + 1], p_path[k + 1])
            for k in range(len(R_path) - 1)]
