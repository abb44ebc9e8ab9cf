"""Rotation-group maths of the LSV integrator: exponentials of skew matrices, axis rotations,
Cardan angles on the branch nearest a previous pose.

One concept: functions on SO(3) as compiled kernels on plain arrays. :func:`_exp_skew` is
``exp(h [w]x)`` by Rodrigues' formula, the factor ``F = e^{dt [W]x}`` of the seed's rotation
update (Applied Mechanics Lab, *Lie-Stormer-Verlet integration of rigid-body motion*;
:mod:`segment.solvers.dynamics.lsv_rotation`); :func:`_axis_rotation` the rotation about one
coordinate axis of the explicit splitting; :func:`_cardan_near` reads the joint's Cardan angles
x-y-z (``Rrel = Rx(a) Ry(b) Rz(c)``, the coordinates of :mod:`segment.elements.kinematics`)
off a rotation on the branch nearest the previous step, so that angles stay continuous along
a run.
"""

from __future__ import annotations

import math

import numpy as np

from segment.jit import njit

__all__: list[str] = []


@njit
def _exp_skew(w, h):
    """exp(h [w]x) (3, 3) by Rodrigues' formula (series below theta = 1e-4)."""
    th2 = (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]) * h * h
    if th2 < 1e-8:
        a = 1.0 - th2 / 6.0 + th2 * th2 / 120.0
        b = 0.5 - th2 / 24.0 + th2 * th2 / 720.0
    else:
        th = math.sqrt(th2)
        a = math.sin(th) / th
        b = (1.0 - math.cos(th)) / th2
    k0, k1, k2 = h * w[0], h * w[1], h * w[2]
    K = np.array([[0.0, -k2, k1], [k2, 0.0, -k0], [-k1, k0, 0.0]])
    return np.eye(3) + a * K + b * (K @ K)


@njit
def _axis_rotation(i, th):
    """Rotation by ``th`` about the coordinate axis ``i``."""
    c, s = math.cos(th), math.sin(th)
    F = np.eye(3)
    j, k = (i + 1) % 3, (i + 2) % 3
    F[j, j] = c
    F[k, k] = c
    F[j, k] = -s
    F[k, j] = s
    return F



@njit
def _wrap_near(x, ref):
    return x + 2.0 * math.pi * math.floor((ref - x) / (2.0 * math.pi) + 0.5)


@njit
def _cardan_near(Rrel, prev):
    """(a, b, c) with Rrel = Rx(a) Ry(b) Rz(c), of the two branches and 2 pi shifts the one
    nearest ``prev`` (3,)."""
    b1 = math.asin(min(1.0, max(-1.0, Rrel[0, 2])))
    a1 = math.atan2(-Rrel[1, 2], Rrel[2, 2])
    c1 = math.atan2(-Rrel[0, 1], Rrel[0, 0])
    best = np.empty(3)
    dist = np.inf
    for branch in range(2):
        a, b, c = (a1, b1, c1) if branch == 0 else (a1 + math.pi, math.pi - b1, c1 + math.pi)
        a, b, c = _wrap_near(a, prev[0]), _wrap_near(b, prev[1]), _wrap_near(c, prev[2])
        d = (a - prev[0]) ** 2 + (b - prev[1]) ** 2 + (c - prev[2]) ** 2
        if d < dist:
            dist = d
            best[0], best[1], best[2] = a, b, c
    return best
