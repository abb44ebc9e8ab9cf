"""Three-vector helpers on tuples of complex numbers, compiled with numba.

The reference kernel (:func:`segment.core.residual._generalized_force`) and the facet contact
evaluate in complex arithmetic so that one pass with a complex-step perturbation returns both the
value and one directional derivative (Squire and Trapp 1998, "Using complex variables to estimate
derivatives of real functions", SIAM Review 40(1)). Vectors are plain 3-tuples, which numba keeps on
the stack. Comparisons inside the kernels use the real part only, so branches are chosen exactly as
in a real-valued evaluation.
"""

from __future__ import annotations

import cmath

from segment.jit import njit

__all__ = [
    "add",
    "clip_real",
    "cross",
    "dot",
    "matT_vec",
    "mat_mat",
    "mat_vec",
    "norm",
    "row",
    "scale",
    "sub",
]

ZERO = 0j


@njit
def row(a, i):
    """Row ``i`` of a float array of shape (n, 3) as a complex 3-tuple."""
    return (a[i, 0] + ZERO, a[i, 1] + ZERO, a[i, 2] + ZERO)


@njit
def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@njit
def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@njit
def scale(s, a):
    return (s * a[0], s * a[1], s * a[2])


@njit
def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit
def cross(a, b):
    return (
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    )


@njit
def norm(a):
    """Euclidean length, analytic in the complex-step sense (no conjugate)."""
    return cmath.sqrt(dot(a, a))


@njit
def mat_vec(m, a):
    """``m @ a`` for a matrix given as a tuple of three row tuples."""
    return (dot(m[0], a), dot(m[1], a), dot(m[2], a))


@njit
def matT_vec(m, a):
    """``m.T @ a``."""
    return (
        m[0][0] * a[0] + m[1][0] * a[1] + m[2][0] * a[2],
        m[0][1] * a[0] + m[1][1] * a[1] + m[2][1] * a[2],
        m[0][2] * a[0] + m[1][2] * a[1] + m[2][2] * a[2],
    )


@njit
def mat_mat(a, b):
    """``a @ b`` for two row-tuple matrices."""
    c0 = (b[0][0], b[1][0], b[2][0])
    c1 = (b[0][1], b[1][1], b[2][1])
    c2 = (b[0][2], b[1][2], b[2][2])
    return (
        (dot(a[0], c0), dot(a[0], c1), dot(a[0], c2)),
        (dot(a[1], c0), dot(a[1], c1), dot(a[1], c2)),
        (dot(a[2], c0), dot(a[2], c1), dot(a[2], c2)),
    )


@njit
def clip_real(x, lo, hi):
    """Clip ``x`` to ``[lo, hi]`` comparing real parts; ties keep ``x`` (its derivative)."""
    if x.real < lo.real:
        return lo
    if x.real > hi.real:
        return hi
    return x
