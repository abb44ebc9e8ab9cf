"""Forward-mode dual numbers carrying five directional derivatives, compiled with numba.

A *dual scalar* is a 6-tuple of floats ``(v, d1, ..., d5)``: a value and its derivatives along
five directions of the inputs; a *dual vector* is a 3-tuple of dual scalars. Arithmetic on them
is first-order Taylor arithmetic (``(a b)' = a' b + a b'`` and so on), so one evaluation of a
function written with these helpers gives its value and all five directional derivatives,
sharing the value part. This is what the complex step gives one direction at a time; the facet
contact's tangent (:mod:`segment.elements.facet_dual`) needs five directions and is about three
times cheaper this way (``benchmarks/bench_kernels.py``).

Tuples stay on the stack in numba; comparisons in callers use the value ``a[0]`` only, so
branches are chosen as in a real-valued evaluation.
"""

from __future__ import annotations

import math

from segment.jit import njit

__all__ = ["const", "dadd", "dexp", "dinv", "dmul", "dscale", "dshift", "dsqrt", "dsub",
           "vadd", "vcross", "vdot", "vrscale", "vscale", "vsub"]


@njit
def const(x):
    """The constant ``x`` (all derivatives zero)."""
    return (x, 0.0, 0.0, 0.0, 0.0, 0.0)


@njit
def dadd(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4], a[5] + b[5])


@njit
def dsub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2], a[3] - b[3], a[4] - b[4], a[5] - b[5])


@njit
def dshift(a, s):
    """``a + s`` for a real ``s``."""
    return (a[0] + s, a[1], a[2], a[3], a[4], a[5])


@njit
def dscale(s, a):
    """``s * a`` for a real ``s``."""
    return (s * a[0], s * a[1], s * a[2], s * a[3], s * a[4], s * a[5])


@njit
def dmul(a, b):
    x, y = a[0], b[0]
    return (x * y, a[1] * y + x * b[1], a[2] * y + x * b[2], a[3] * y + x * b[3],
            a[4] * y + x * b[4], a[5] * y + x * b[5])


@njit
def dinv(a):
    v = 1.0 / a[0]
    k = -v * v
    return (v, k * a[1], k * a[2], k * a[3], k * a[4], k * a[5])


@njit
def dsqrt(a):
    """Square root. At 0, where the root has no derivative (the root of a squared length has a
    kink there), the derivatives are set to 0."""
    s = math.sqrt(a[0])
    k = 0.5 / s if s > 0.0 else 0.0
    return (s, k * a[1], k * a[2], k * a[3], k * a[4], k * a[5])


@njit
def dexp(a):
    e = math.exp(a[0])
    return (e, e * a[1], e * a[2], e * a[3], e * a[4], e * a[5])


@njit
def vadd(a, b):
    return (dadd(a[0], b[0]), dadd(a[1], b[1]), dadd(a[2], b[2]))


@njit
def vsub(a, b):
    return (dsub(a[0], b[0]), dsub(a[1], b[1]), dsub(a[2], b[2]))


@njit
def vscale(s, a):
    """Dual scalar ``s`` times dual vector ``a``."""
    return (dmul(s, a[0]), dmul(s, a[1]), dmul(s, a[2]))


@njit
def vrscale(s, a):
    """Real ``s`` times dual vector ``a``."""
    return (dscale(s, a[0]), dscale(s, a[1]), dscale(s, a[2]))


@njit
def vdot(a, b):
    return dadd(dadd(dmul(a[0], b[0]), dmul(a[1], b[1])), dmul(a[2], b[2]))


@njit
def vcross(a, b):
    return (dsub(dmul(a[1], b[2]), dmul(a[2], b[1])),
            dsub(dmul(a[2], b[0]), dmul(a[0], b[2])),
            dsub(dmul(a[0], b[1]), dmul(a[1], b[0])))
