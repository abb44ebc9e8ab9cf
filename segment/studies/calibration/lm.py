"""A bounded Levenberg-Marquardt least-squares solver whose arithmetic is the same on any CPU.

Why not :func:`scipy.optimize.least_squares`: its trust-region steps go through LAPACK and
BLAS, whose kernels differ between CPUs (OpenBLAS picks them per CPU), and on the
ill-conditioned, multi-start problems of the curve calibration the last-bit differences grew
into different end points (measured: the same specimen fit, run with OpenBLAS's Nehalem kernels
and with the host's, stopped at costs 1.267 and 1.281; the report's tables then differed).
Here every product and sum is written out (:func:`math.fsum` for the sums: correctly rounded,
so independent of the order), and the linear systems are solved by a Cholesky factorisation in
plain Python: given the same residuals and Jacobians, the iterates are the same bits
everywhere. The problems are small (D <= 21 parameters, n <= 100 residuals), so this costs
little next to the equilibria behind each evaluation.

Method (Madsen, Nielsen and Tingleff, "Methods for non-linear least squares problems", 2004,
section 3.2, with Nielsen's damping update; bounds by projection): in the scaled variables
``u = (p - lower) / width`` in [0, 1]::

    (J^T J + mu diag(J^T J + eps)) h = -J^T r      on the free variables
    u_new = clip(u + h, 0, 1);   accept when the cost falls; gain ratio rho updates mu

A variable at a bound whose gradient pushes it outward is held there (the projected gradient).
Stops when the projected gradient's largest entry is below ``gtol``, when an accepted step
lowers the cost by less than ``ftol`` of it, when a step moves no variable by more than
``xtol`` (of its range) even after :data:`MAX_RESETS` resets of the damping at that point,
or after ``max_nfev`` evaluations (not converged). It also stops, not converged and saying
why, when the residuals or the Jacobian at the current point are not finite (a target SD of 0,
a model that returns NaN) or the damping grows without bound: it never iterates on NaN. A
trial step whose residuals are not finite is rejected like one that raises the cost.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["MAX_RESETS", "LMResult", "least_squares_bounded"]

MAX_RESETS = 3
"""Times the damping is reset at one point before a vanishing step counts as convergence: the
residuals of the equilibria have kinks (a ligament taking up its slack, a facet touching),
where the Gauss-Newton model predicts a decrease that small damped steps do not get; a full
step may cross the kink. Measured: from the nominal set of the reference-strain form, B13
stopped at cost 4.70 without resets."""


@dataclass(frozen=True)
class LMResult:
    """``x``, ``cost`` (half the sum of squared residuals), ``status`` (> 0 converged: 1
    projected gradient, 2 step size, 3 cost; 0 evaluation limit; -1 stopped on a non-finite
    residual, Jacobian or damping), ``message``, ``nfev``, ``njev``."""

    x: np.ndarray
    cost: float
    status: int
    message: str
    nfev: int
    njev: int


def _not_finite(a: np.ndarray, what: str) -> str:
    """Why ``a`` cannot be iterated on (its first entry that is not finite), or ""."""
    bad = ~np.isfinite(a)
    if not bad.any():
        return ""
    index = tuple(int(k) for k in np.argwhere(bad)[0])
    at = index[0] if len(index) == 1 else index
    return (f"{what} are not finite ({int(bad.sum())} of {a.size}, the first at {at}: "
            f"{a[index]}); stopped (a target with SD 0, or a model that returned NaN?)")


def _cost(r) -> float:
    return 0.5 * math.fsum(float(v) * float(v) for v in r)


def _normal_equations(J, r, free):
    """``A = J^T J`` and ``g = J^T r`` over the free columns (lists), each entry one
    correctly rounded sum."""
    cols = [[float(J[i, j]) for i in range(J.shape[0])] for j in free]
    rr = [float(v) for v in r]
    n = len(free)
    A = [[0.0] * n for _ in range(n)]
    for a in range(n):
        ca = cols[a]
        for b in range(a, n):
            cb = cols[b]
            A[a][b] = A[b][a] = math.fsum(x * y for x, y in zip(ca, cb, strict=True))
    g = [math.fsum(x * y for x, y in zip(c, rr, strict=True)) for c in cols]
    return A, g


def cholesky_solve(A, b):
    """Solve ``A x = b`` for symmetric positive definite ``A`` (lists); None when it is not
    positive definite."""
    n = len(b)
    L = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            s = A[i][j] - math.fsum(L[i][k] * L[j][k] for k in range(j))
            if i == j:
                if not s > 0.0:
                    return None
                L[i][i] = math.sqrt(s)
            else:
                L[i][j] = s / L[j][j]
    y = [0.0] * n
    for i in range(n):
        y[i] = (b[i] - math.fsum(L[i][k] * y[k] for k in range(i))) / L[i][i]
    x = [0.0] * n
    for i in range(n - 1, -1, -1):
        x[i] = (y[i] - math.fsum(L[k][i] * x[k] for k in range(i + 1, n))) / L[i][i]
    return x


def spd_inverse(A) -> np.ndarray | None:
    """The inverse of a symmetric positive definite matrix (array), column by column with
    :func:`cholesky_solve`; None when it is not positive definite."""
    rows = [[float(v) for v in row] for row in np.asarray(A, dtype=float)]
    n = len(rows)
    out = np.empty((n, n))
    for j in range(n):
        e = [0.0] * n
        e[j] = 1.0
        x = cholesky_solve(rows, e)
        if x is None:
            return None
        out[:, j] = x
    return 0.5 * (out + out.T)


def least_squares_bounded(fun, jac, x0, lower, upper, *, gtol: float = 1e-10,
                          xtol: float = 1e-12, ftol: float = 1e-10,
                          max_nfev: int = 500) -> LMResult:
    """Minimise ``0.5 |fun(p)|^2`` over ``lower <= p <= upper`` (module docstring).

    ``fun(p)`` returns the residuals (n,), ``jac(p)`` their Jacobian (n, D), both at a real
    parameter set; ``x0`` is clipped into the bounds. ``gtol`` bounds the projected gradient
    in scaled variables (relative to the cost, plus 1e-30), ``xtol`` the step in range widths,
    ``ftol`` the relative fall of the cost in an accepted step (as scipy's ``ftol``).
    """
    lower = np.asarray(lower, dtype=float)
    upper = np.asarray(upper, dtype=float)
    width = upper - lower
    d = width.size
    u = [min(1.0, max(0.0, float(v))) for v in (np.asarray(x0, dtype=float) - lower) / width]

    def p_of(uu):
        return np.array([lower[k] + width[k] * uu[k] for k in range(d)])

    p = p_of(u)
    r = np.asarray(fun(p), dtype=float)
    cost = _cost(r)
    nfev, njev = 1, 0
    bad = _not_finite(r, "the residuals at the start")
    if bad:
        return LMResult(x=p, cost=math.inf, status=-1, message=bad, nfev=nfev, njev=njev)
    mu, nu = None, 2.0
    resets = 0
    status, message = 0, "the evaluation limit was reached"
    J = None
    while nfev < max_nfev:
        if J is None:
            Jp = np.asarray(jac(p), dtype=float)
            njev += 1
            bad = _not_finite(Jp, "the Jacobian at the current point")
            if bad:
                status, message = -1, bad
                break
            J = Jp * width[None, :]            # d r / d u
            full_g = [math.fsum(float(J[i, k]) * float(r[i]) for i in range(J.shape[0]))
                      for k in range(d)]
        # projected gradient: a variable at a bound stays when the gradient pushes it out
        free = [k for k in range(d) if not ((u[k] <= 0.0 and full_g[k] > 0.0)
                                            or (u[k] >= 1.0 and full_g[k] < 0.0))]
        pg = max((abs(full_g[k]) for k in free), default=0.0)
        if pg <= gtol * (cost + 1e-30) or not free:
            status, message = 1, "the projected gradient vanished"
            break
        A, g = _normal_equations(J, r, free)
        if mu is None:
            mu = 1e-3 * max(A[i][i] for i in range(len(free)))
        damped = [[A[i][j] + (mu * (A[i][i] + 1e-12) if i == j else 0.0)
                   for j in range(len(free))] for i in range(len(free))]
        h = cholesky_solve(damped, [-v for v in g])
        if h is None:
            mu *= nu
            nu *= 2.0
            if not math.isfinite(mu):
                status, message = -1, ("the damping grew without bound: the normal "
                                       "equations have no positive definite solution")
                break
            continue
        trial = list(u)
        for a, k in enumerate(free):
            trial[k] = min(1.0, max(0.0, u[k] + h[a]))
        step = max(abs(trial[k] - u[k]) for k in range(d))
        if step <= xtol:
            if resets < MAX_RESETS:     # at a kink the model's small steps all fail: try
                resets += 1             # a full Gauss-Newton-sized step again
                mu, nu = None, 2.0
                continue
            status, message = 2, "the step fell below xtol"
            break
        p_try = p_of(trial)
        r_try = np.asarray(fun(p_try), dtype=float)
        nfev += 1
        cost_try = _cost(r_try)
        hh = [trial[k] - u[k] for k in free]     # the (clipped) step on the free variables
        m = len(free)
        predicted = -math.fsum(g[a] * hh[a] for a in range(m)) - 0.5 * math.fsum(
            hh[a] * A[a][b] * hh[b] for a in range(m) for b in range(m))
        rho = (cost - cost_try) / predicted if predicted > 0 else -1.0
        if cost_try < cost and math.isfinite(cost_try):
            small = cost - cost_try <= ftol * cost
            u, p, r, cost = trial, p_try, r_try, cost_try
            J = None
            resets = 0
            if small:
                status, message = 3, "the cost stopped falling (ftol)"
                break
            mu *= max(1.0 / 3.0, 1.0 - (2.0 * rho - 1.0) ** 3) if rho > 0 else 1.0
            nu = 2.0
        else:
            mu *= nu
            nu *= 2.0
    return LMResult(x=p, cost=cost, status=status, message=message, nfev=nfev, njev=njev)
