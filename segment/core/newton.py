"""The compiled Newton iteration of the static equilibrium, with automatic load stepping.

The numerical core of :func:`segment.solve` (the method is described in
:mod:`segment.solvers.equilibrium`): kernels on a model's packed arrays and a load vector that
return ``(q, status, residual norm, ...)`` with ``status`` the integer of a
:class:`~segment.core.status.Status` (0-6). One concept: the iteration. Its pieces live
beside it: the 6 x 6 solve of each step (:mod:`segment.core.lu6`), the failure limits checked
at a converged equilibrium (:mod:`segment.core.failure_limits`), the record a solve returns
(:mod:`segment.core.equilibrium_result`) and the call that builds it
(:mod:`segment.core.solve`).
"""

from __future__ import annotations

import math

import numpy as np

from segment.core.failure_limits import beyond_limits
from segment.core.lu6 import solve6
from segment.core.residual import predict_row, residual_jacobian, residual_real
from segment.core.status import Status
from segment.jit import njit

__all__ = ["DEFAULT_TOL", "FORCE_SCALE_N", "MOMENT_SCALE_NMM"]

FORCE_SCALE_N = 20.0
MOMENT_SCALE_NMM = 1800.0
DEFAULT_TOL = 1e-10
MAX_STEP_MM = 2.0
MAX_STEP_RAD = 0.2
ARMIJO_C = 1e-4
MIN_LINE_SEARCH_STEP = 1.0 / 1024
MIN_LOAD_STEP = 1.0 / 4096
# Solver settings (issue 14). Rounding stalls the scaled residual at 1e-15 to 8e-14 for the
# nine cases and 300 random loads up to 3x nominal (measured: best iterate of 40 Newton steps
# from the converged q); a tol below TOL_FLOOR could only fail. Above TOL_CEILING (0.02 N,
# 1.8 N mm: 0.1 % of the nominal loads) "converged" stops meaning equilibrium. The iteration
# log is preallocated (5 x max_iterations rows), hence a limit on max_iterations.
TOL_FLOOR = 1e-12
TOL_CEILING = 1e-3
MAX_ITERATIONS_LIMIT = 10_000

# The statuses the kernels return, as plain integers (a kernel cannot hold an enum): the
# codes of Status, segment.core.status
CONVERGED = int(Status.CONVERGED)
MAX_ITERATIONS = int(Status.MAX_ITERATIONS)
LINE_SEARCH_FAILED = int(Status.LINE_SEARCH_FAILED)
LOAD_STEPPING_FAILED = int(Status.LOAD_STEPPING_FAILED)
NOT_FINITE = int(Status.NOT_FINITE)
SINGULAR_JACOBIAN = int(Status.SINGULAR_JACOBIAN)
CONVERGED_BEYOND_LIMITS = int(Status.CONVERGED_BEYOND_LIMITS)


@njit
def norm_phi(r):
    """``(max_i |r_i| / scale_i, 0.5 sum_i (r_i / scale_i)^2)``; NaN when r has a NaN."""
    norm = 0.0
    phi = 0.0
    for k in range(6):
        s = r[k] / (FORCE_SCALE_N if k < 3 else MOMENT_SCALE_NMM)
        a = abs(s)
        if a > norm or a != a:   # a NaN sticks: nothing compares greater than it
            norm = a
        phi += s * s
    return norm, 0.5 * phi


@njit
def newton_kernel(packed, f, q0, tol, max_iterations, log):
    """Newton with capped steps and Armijo backtracking at one load vector ``f``.

    Writes (scaled residual norm before the step, step length) per iteration into ``log``
    (shape (max_iterations, 2)) and returns ``(q, status, residual norm, iterations)``.
    """
    q = q0.copy()
    r, J = residual_jacobian(q, f, packed)
    norm, phi0 = norm_phi(r)
    damped = False
    prev_norm = 0.0          # no prediction before the first step
    for it in range(max_iterations):
        if not math.isfinite(norm):
            return q, NOT_FINITE, norm, it
        if norm <= tol:
            return q, CONVERGED, norm, it
        dq, ok = solve6(J, -r)
        if not ok:  # singular Jacobian: a status, never an exception
            return q, SINGULAR_JACOBIAN, norm, it
        big_mm = 0.0
        big_rad = 0.0
        for k in range(6):
            a = abs(dq[k])
            if not math.isfinite(a):
                return q, NOT_FINITE, norm, it
            if k < 3:
                big_mm = max(big_mm, a)
            else:
                big_rad = max(big_rad, a)
        cap = max(big_mm / MAX_STEP_MM, big_rad / MAX_STEP_RAD)
        if cap > 1.0:
            for k in range(6):
                dq[k] /= cap
        alpha = 1.0
        # a trial point gets the residual only, unless it is a full step after a full step
        # (then it is usually accepted, and residual and Jacobian come in one pass); the
        # Jacobian of an accepted trial follows. Residual only also when quadratic
        # convergence predicts the trial to converge (norm^2 / previous norm <= tol): then
        # its Jacobian is never needed.
        q_try = q + dq
        if damped or norm * norm <= tol * prev_norm:
            r_try = residual_real(q_try, f, packed)
            J_try = J
            have_jacobian = False
        else:
            r_try, J_try = residual_jacobian(q_try, f, packed)
            have_jacobian = True
        while True:
            norm_try, phi = norm_phi(r_try)
            if math.isfinite(phi) and phi <= (1.0 - 2.0 * ARMIJO_C * alpha) * phi0:
                break
            # halve; but when the trial overshoots badly (typically into a facet, whose force
            # k2 u^2 makes phi grow like the fourth power of the step) shrink by
            # (phi0 / phi)^(1/4), the factor that would restore phi0 under that growth
            if math.isfinite(phi) and phi > 16.0 * phi0:
                alpha *= max(0.1, (phi0 / phi) ** 0.25)
            else:
                alpha *= 0.5
            if alpha < MIN_LINE_SEARCH_STEP:
                log[it, 0] = norm
                log[it, 1] = 0.0
                return q, LINE_SEARCH_FAILED, norm, it
            for k in range(6):
                q_try[k] = q[k] + alpha * dq[k]
            r_try = residual_real(q_try, f, packed)
            have_jacobian = False
        if not have_jacobian:
            if norm_try <= tol:     # converged: no Jacobian needed
                log[it, 0] = norm
                log[it, 1] = alpha
                return q_try, CONVERGED, norm_try, it + 1
            r_try, J_try = residual_jacobian(q_try, f, packed)
            norm_try, phi = norm_phi(r_try)
        damped = alpha < 1.0
        prev_norm = norm
        log[it, 0] = norm
        log[it, 1] = alpha
        q, r, J, norm, phi0 = q_try, r_try, J_try, norm_try, phi
    return q, (CONVERGED if norm <= tol else MAX_ITERATIONS), norm, max_iterations


@njit
def _solve_predicted(packed, f, q0, predict, predictor, tol, max_iterations, log):
    """:func:`solve`'s kernel, one compiled call: with ``predict``, Newton from the linear
    predictor (``Segment._predictor``; q = 0 when not available) and load stepping from q = 0,
    else both from ``q0``; then the failure limits (status 6 when a converged equilibrium is
    past one). Returns as :func:`solve_kernel`."""
    available, q_u, k_inv = predictor
    q_step = q0.copy()
    start = q0.copy()
    if predict:
        q_step[:] = 0.0
        start[:] = 0.0
        if available:
            predict_row(q_u, k_inv, f, start)
    q, status, norm, n_log, n_steps, load_steps = solve_kernel_from(
        packed, f, start, q_step, tol, max_iterations, log)
    if status == CONVERGED and beyond_limits(q, packed, np.empty(packed[1].shape[0], np.bool_),
                                              np.empty(packed[2].shape[0], np.bool_)):
        status = CONVERGED_BEYOND_LIMITS
    return q, status, norm, n_log, n_steps, load_steps


@njit
def solve_kernel(packed, f, q0, tol, max_iterations, log):
    """Newton at the full load from ``q0``; if that fails, automatic load stepping from ``q0``.

    ``log`` has shape (5 * max_iterations, 3); row k holds (load fraction, scaled residual norm
    before the step, step length) of Newton step k. Returns
    ``(q, status, residual norm, steps logged, Newton steps taken, load steps)``; steps
    logged include line searches that failed. This one kernel serves :func:`solve_raw` and
    :func:`segment.solve_many`.
    """
    return solve_kernel_from(packed, f, q0, q0, tol, max_iterations, log)


@njit
def solve_kernel_from(packed, f, q0, q_step, tol, max_iterations, log):
    """:func:`solve_kernel` with the load stepping started from ``q_step`` instead of ``q0``.

    :func:`segment.solve_many` starts Newton from a predicted pose but, like :func:`solve`,
    falls back to load stepping from the reference pose: restarting it from the prediction
    (which at 10x nominal loads is often far from any equilibrium) failed or found other
    equilibria than :func:`solve`.
    """
    sub = np.zeros((max_iterations, 2))
    n_log = 0
    q, status, norm, n = newton_kernel(packed, f, q0, tol, max_iterations, sub)
    for k in range(n):
        log[n_log, 0] = 1.0
        log[n_log, 1] = sub[k, 0]
        log[n_log, 2] = sub[k, 1]
        n_log += 1
    if status == CONVERGED:
        return q, status, norm, n_log, n_log, 1
    q_direct, norm_direct = q, norm
    q = q_step.copy()
    fraction = 0.0
    step = 0.25
    load_steps = 0
    status = LOAD_STEPPING_FAILED
    while n_log < 4 * max_iterations:
        target = min(1.0, fraction + step)
        q_try, st, norm_try, n = newton_kernel(packed, f * target, q, tol, max_iterations,
                                                sub)
        for k in range(n):
            log[n_log, 0] = target
            log[n_log, 1] = sub[k, 0]
            log[n_log, 2] = sub[k, 1]
            n_log += 1
        load_steps += 1
        if st == CONVERGED:
            q = q_try
            fraction = target
            norm = norm_try
            if fraction >= 1.0:
                status = CONVERGED
                break
            step = min(2.0 * step, 1.0 - fraction)
        else:
            step *= 0.5
            if step < MIN_LOAD_STEP:
                break
    if status != CONVERGED:
        # never answer a full-load question with a partial-load q unless it is the better
        # full-load iterate: return whichever has the smaller full-load residual
        norm = norm_phi(residual_real(q, f, packed))[0]
        if not norm <= norm_direct and norm_direct == norm_direct:
            q, norm = q_direct, norm_direct
    n_steps = 0
    for k in range(n_log):
        if log[k, 2] > 0.0:
            n_steps += 1
    return q, status, norm, n_log, n_steps, load_steps
