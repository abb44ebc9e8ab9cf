"""The 6 x 6 linear solve of the Newton step: LU factors with partial pivoting, written out.

One concept: ``J x = b`` for the (6, 6) Jacobian of the six joint coordinates. LAPACK's call
overhead dominates at this size, so Gaussian elimination with partial pivoting is written out
as a kernel (:func:`lu6_factor`); one factorisation serves any number of right-hand sides
(:func:`lu6_solve`): the Newton step (:func:`solve6`, :mod:`segment.core.newton`) and the D
parameter columns of the sensitivities (:mod:`segment.studies.sensitivity`). A singular
Jacobian (a pivot exactly zero, as LAPACK's dgetrf reports it) is a flag, never an exception.
"""

from __future__ import annotations

import numpy as np

from segment.jit import njit

__all__: list[str] = []


@njit
def lu6_factor(J):
    """LU factors of the (6, 6) Jacobian by Gaussian elimination with partial pivoting.

    Returns ``(a, piv, ok)``: ``a`` holds U on and above the diagonal and the multipliers of L
    below it, ``piv[k]`` the row swapped with row k at step k; ``ok`` is False when a pivot is
    exactly zero (singular, as LAPACK's dgetrf reports it). Written out because LAPACK's call
    overhead dominates at this size. One factorisation serves any number of right-hand sides
    (:func:`lu6_solve`): the Newton step (:func:`solve6`) and the D parameter columns of
    the sensitivities (:mod:`segment.studies.sensitivity`).
    """
    n = 6
    a = J.copy()
    piv = np.empty(n, dtype=np.int64)
    for k in range(n):
        p = k
        big = abs(a[k, k])
        for i in range(k + 1, n):
            if abs(a[i, k]) > big:
                big = abs(a[i, k])
                p = i
        piv[k] = p
        if big == 0.0:
            return a, piv, False
        if p != k:   # columns k on: the multipliers of earlier steps stay where they were
            for j in range(k, n):    # made, as :func:`lu6_solve` replays the steps in order
                a[k, j], a[p, j] = a[p, j], a[k, j]
        for i in range(k + 1, n):
            factor = a[i, k] / a[k, k]
            a[i, k] = factor
            if factor != 0.0:
                for j in range(k + 1, n):
                    a[i, j] -= factor * a[k, j]
    return a, piv, True


@njit
def lu6_solve(a, piv, x):
    """Overwrite ``x`` (6, k) with ``J^{-1} x`` from the factors of :func:`lu6_factor`.

    Row swaps and eliminations are applied in the order of the factorisation, so a single
    column gives bit for bit the numbers of eliminating it alongside the matrix.
    """
    n = 6
    nd = x.shape[1]
    for k in range(n):
        p = piv[k]
        if p != k:
            for j in range(nd):
                x[k, j], x[p, j] = x[p, j], x[k, j]
        for i in range(k + 1, n):
            factor = a[i, k]
            if factor != 0.0:
                for j in range(nd):
                    x[i, j] -= factor * x[k, j]
    for k in range(n - 1, -1, -1):
        for j in range(nd):
            s = x[k, j]
            for m in range(k + 1, n):
                s -= a[k, m] * x[m, j]
            x[k, j] = s / a[k, k]


@njit
def solve6(J, b):
    """``J^{-1} b`` for the (6, 6) Jacobian (:func:`lu6_factor`, :func:`lu6_solve`).

    Returns ``(x, ok)``; ``ok`` is False when a pivot is exactly zero (singular).
    """
    x = b.copy()
    a, piv, ok = lu6_factor(J)
    if ok:
        lu6_solve(a, piv, x.reshape((6, 1)))
    return x, ok
