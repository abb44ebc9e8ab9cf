"""The compiled ramp: the equilibrium path of ``s * load`` with strips that rupture.

One concept: the kernel :func:`_ramp_kernel` that :func:`segment.solvers.ramp.ramp` calls once
(the driver builds the result, :mod:`segment.solvers.ramp_result`). A strip whose force reaches
F_max (point C of DETC2000/MECH-6821 Table 3) breaks and carries nothing afterwards. Between
the rows of the ``steps`` equal steps, the load grows in increments of its own, each a Newton
solve warm-started from the last equilibrium (:mod:`segment.core.newton`):

* an increment whose Newton fails, or whose equilibrium lies more than
  :data:`MAX_MOVE_MM` / :data:`MAX_MOVE_DEG` from the last one (a jump to another branch), is
  halved; after a success the increment doubles again, up to the step. Only when an increment
  of :data:`MIN_INCREMENT` (x nominal load, independent of ``steps``) still fails is the
  segment declared unable to carry the load (status ``no equilibrium``; the ultimate load is
  the last load carried, located to within :data:`MIN_INCREMENT`). So the failure loads do not
  depend on ``steps``: a test holds the ultimate load of ``steps`` N and 4N to 1 %
  (:data:`STEP_INDEPENDENCE_RTOL`). An equilibrium found at the smallest increment but far
  away is accepted: under load control the segment jumps there (as after a rupture).
* After each increment the strain of every intact strip is compared with its eps_max::

    g(s) = max_i eps_i(q(s)) / eps_max,i          (strain reaches eps_max  <=>  F reaches F_max)

The curves of Table 3 rise strictly from A to C, so the strain criterion is the force
criterion of the paper. When an increment ends with g >= 1, the scale s* at which g(s*) = 1 is
found on the equilibrium path by the Illinois variant of regula falsi (``|g - 1| <= 1e-9``; each
trial a warm-started Newton solve); the equilibrium at s* is recorded (event ``F_max``), the
strip with the largest g breaks and the segment is solved again at the same load (event
``ruptured``; if Newton from the last equilibrium fails, the broken strip's force is taken
away in :data:`HOMOTOPY_STEPS` steps instead, which finds the same equilibrium when there is
one). If that leaves another strip at g >= 1, it breaks too at the same load, one at a time,
largest first (a cascade); then the ramp goes on.


The run stops at the validity limit (:mod:`segment.core.validity`): a loaded coordinate's
displacement from the unloaded equilibrium reaching its bound (located like a rupture, with
h(s) = displacement / bound in place of g; or reached by the jump after a rupture), or no
ligament left taut after a rupture. The kernel returns how it ended as the integer of a
:class:`~segment.core.status.Status` (``REACHED_TO_SCALE``, ``NO_EQUILIBRIUM``,
``VALIDITY_LIMIT``) and writes one row per step and per event (``ROW_*``).
"""

from __future__ import annotations

import math

import numpy as np

from segment.core.newton import CONVERGED, CONVERGED_BEYOND_LIMITS, newton_kernel, solve_kernel
from segment.core.status import Status
from segment.elements.tangent import G_R0, G_S0, L_A, L_B, L_EPS, L_F, L_L0, joint_axes
from segment.jit import njit

__all__ = ["HOMOTOPY_STEPS", "MAX_MOVE_DEG", "MAX_MOVE_MM", "MIN_INCREMENT", "RUPTURE_TOL",
           "TIE_RTOL"]

ROW_STEP, ROW_FMAX, ROW_RUPTURED, ROW_FAILED, ROW_LIMIT = 0, 1, 2, 3, 4
# How the kernel ended, as plain integers (a kernel cannot hold an enum): codes of Status
RAMP_COMPLETE = int(Status.REACHED_TO_SCALE)
RAMP_NO_EQUILIBRIUM = int(Status.NO_EQUILIBRIUM)
RAMP_LIMIT = int(Status.VALIDITY_LIMIT)
LIMIT_NONE, LIMIT_BOUND, LIMIT_BOUND_JUMP, LIMIT_NO_TAUT = 0, 1, 2, 3
RUPTURE_TOL = 1e-9
"""``|g - 1|`` at which the rupture scale is accepted (g = strain / eps_max of the strip)."""
TIE_RTOL = 1e-9
"""Strips whose strain ratios agree within this fraction when one reaches F_max break
together (:func:`_tied`): mirror-image ligaments under a symmetric load reach F_max at the same
load in exact arithmetic, and which of them the solver breaks first would otherwise be the
order of the strips in the model (issue 32: a symmetric flexion ramp broke CL-left before
CL-right)."""
MIN_INCREMENT = 1e-7
"""Smallest load increment tried [x nominal load] before the ramp gives up (no equilibrium):
the ultimate load is located to within this, whatever ``steps`` is."""
MAX_MOVE_MM = 0.5
MAX_MOVE_DEG = 1.0
"""Largest change of a translation [mm] / rotation [deg] between two equilibria of one
increment: a larger move (Newton jumped to another branch) halves the increment."""
HOMOTOPY_STEPS = 16
"""Steps in which a broken strip's force is taken away when Newton at the same load fails."""
MAX_LOCATE = 100
_MAX_MOVE_RAD = math.radians(MAX_MOVE_DEG)


@njit
def _ratios(q, glob, lig, g):
    """Strain ratio ``g = strain / eps_max`` of every strip row at ``q``, written to ``g``
    (rupture at g = 1, Table 3)."""
    R0 = ((glob[G_R0], glob[G_R0 + 1], glob[G_R0 + 2]),
          (glob[G_R0 + 3], glob[G_R0 + 4], glob[G_R0 + 5]),
          (glob[G_R0 + 6], glob[G_R0 + 7], glob[G_R0 + 8]))
    R, _, _ = joint_axes(q, R0)
    p = [glob[G_S0 + k] + R0[k][0] * q[0] + R0[k][1] * q[1] + R0[k][2] * q[2]
         for k in range(3)]
    for i in range(lig.shape[0]):
        s = 0.0
        for k in range(3):
            x = p[k] + R[k][0] * lig[i, L_A] + R[k][1] * lig[i, L_A + 1] + R[k][2] * lig[i, L_A + 2]
            d = lig[i, L_B + k] - x
            s += d * d
        g[i] = (math.sqrt(s) - lig[i, L_L0]) / lig[i, L_L0] / lig[i, L_EPS + 2]


@njit
def _max_ratio(q, glob, lig, alive):
    """(max_i strain_i / eps_max_i over intact strips, its row; -inf, -1 when none)."""
    g = np.empty(lig.shape[0])
    _ratios(q, glob, lig, g)
    best = -np.inf
    arg = -1
    for i in range(lig.shape[0]):
        if alive[i] != 0.0 and g[i] > best:
            best = g[i]
            arg = i
    return best, arg


@njit
def _tied(q, glob, lig, alive, i, out):
    """Intact strips other than ``i`` whose strain ratio g = strain / eps_max at ``q`` equals
    strip i's within :data:`TIE_RTOL` (a symmetric pair under a symmetric load): written to
    ``out``, their number returned. They break with strip i, so that no result depends on
    the order of the strips in the model."""
    g = np.empty(lig.shape[0])
    _ratios(q, glob, lig, g)
    count = 0
    for j in range(lig.shape[0]):
        if j != i and alive[j] != 0.0 and abs(g[j] - g[i]) <= TIE_RTOL * abs(g[i]):
            out[count] = j
            count += 1
    return count


@njit
def _kill(lig, alive, i):
    """Strip row ``i`` breaks: alive multiplier 0, its force points zero."""
    alive[i] = 0.0
    for k in range(3):
        lig[i, L_F + k] = 0.0


@njit
def _limit_ratio(q, q_unl, lim_dof, lim_bound):
    """(max_j (q - q_unl)[dof_j] / bound_j, j; -inf, -1 when no bound). ``lim_bound`` is
    signed (the direction of the bound) in mm or rad."""
    best = -np.inf
    arg = -1
    for j in range(lim_dof.shape[0]):
        h = (q[lim_dof[j]] - q_unl[lim_dof[j]]) / lim_bound[j]
        if h > best:
            best = h
            arg = j
    return best, arg


@njit
def _small_move(q_new, q):
    for k in range(3):
        if abs(q_new[k] - q[k]) > MAX_MOVE_MM:
            return False
    for k in range(3, 6):
        if abs(q_new[k] - q[k]) > _MAX_MOVE_RAD:
            return False
    return True


@njit
def _event(q, q_unl, glob, lig, alive, lim_dof, lim_bound):
    """max(g, h): the first of rupture (g >= 1) and displacement bound (h >= 1)."""
    g, _ = _max_ratio(q, glob, lig, alive)
    h, _ = _limit_ratio(q, q_unl, lim_dof, lim_bound)
    return max(g, h)


@njit
def _record(out_s, out_q, out_kind, out_strip, n, s, q, kind, strip):
    out_s[n] = s
    out_q[n] = q
    out_kind[n] = kind
    out_strip[n] = strip
    return n + 1


@njit
def _break(packed, lig0, alive, i, load, q, tol, max_iterations, sub, log):
    """Strip ``i`` breaks at ``load``; the equilibrium after it: ``(q, converged)``. Newton
    (with :func:`solve_kernel`'s fallbacks) from ``q``; if that fails, the strip's force is
    taken away in :data:`HOMOTOPY_STEPS` steps, each a Newton solve from the last."""
    lig = packed[1]
    _kill(lig, alive, i)
    q_new, st, _, _, _, _ = solve_kernel(packed, load, q, tol, max_iterations, log)
    # past a limit is expected here (the broken strip is past eps_max)
    if st == CONVERGED or st == CONVERGED_BEYOND_LIMITS:
        return q_new, True
    qh = q.copy()
    for j in range(1, HOMOTOPY_STEPS + 1):
        factor = 1.0 - j / HOMOTOPY_STEPS
        for k in range(3):
            lig[i, L_F + k] = factor * lig0[i, L_F + k]
        qh, st, _, _ = newton_kernel(packed, load, qh, tol, max_iterations, sub)
        if st != CONVERGED:
            _kill(lig, alive, i)
            return q_new, False
    return qh, True


@njit
def _ramp_kernel(glob, lig0, fac, pts, f, to_scale, steps, q0, alive0, tol, max_iterations,
                 lim_dof, lim_bound, no_taut_rule, out_s, out_q, out_kind, out_strip):
    """The ramp of the module docstring. Returns ``(rows, status, alive, limit_kind,
    limit_index)`` (``limit_index``: the bound of ``lim_dof``/``lim_bound`` that fired).

    ``out_*`` (rows of scale, q (6,), kind ROW_*, strip row or -1) must hold
    ``steps + 2 * n_strips + 3`` rows.
    """
    lig = lig0.copy()
    alive = alive0.copy()
    for i in range(lig.shape[0]):
        if alive[i] == 0.0:
            _kill(lig, alive, i)
    packed = (glob, lig, fac, pts)
    sub = np.empty((max_iterations, 2))
    log = np.empty((5 * max_iterations, 3))
    tied = np.empty(lig.shape[0], dtype=np.int64)
    q = q0.copy()
    q_unl = q0.copy()
    n = _record(out_s, out_q, out_kind, out_strip, 0, 0.0, q, ROW_STEP, -1)
    s_prev = 0.0
    e_prev = _event(q, q_unl, glob, lig, alive, lim_dof, lim_bound)
    step = to_scale / steps
    inc = step
    for k in range(1, steps + 1):
        target = to_scale if k == steps else to_scale * k / steps
        while s_prev < target:
            trial = min(s_prev + inc, target)
            d = trial - s_prev
            q_new, st, _, _ = newton_kernel(packed, f * trial, q, tol, max_iterations, sub)
            converged = st == CONVERGED
            smallest = inc <= MIN_INCREMENT or d <= MIN_INCREMENT
            if not converged or (not smallest and not _small_move(q_new, q)):
                if not converged and smallest:
                    if s_prev > out_s[n - 1]:       # the last load carried, as its own row
                        n = _record(out_s, out_q, out_kind, out_strip, n, s_prev, q,
                                    ROW_STEP, -1)
                    n = _record(out_s, out_q, out_kind, out_strip, n, trial, q_new,
                                ROW_FAILED, -1)
                    return n, RAMP_NO_EQUILIBRIUM, alive, LIMIT_NONE, -1
                inc = max(0.5 * d, MIN_INCREMENT)
                continue
            e = _event(q_new, q_unl, glob, lig, alive, lim_dof, lim_bound)
            if e < 1.0:
                q = q_new
                s_prev = trial
                e_prev = e
                if d >= inc:            # not cut short by the step's end: grow again
                    inc = min(2.0 * d, step)
                continue
            # locate e(s*) = 1 on (s_prev, trial] (Illinois regula falsi)
            lo, e_lo, q_lo = s_prev, e_prev, q.copy()
            hi, e_hi, q_hi = trial, e, q_new
            e_at_hi = e               # e_hi itself is scaled down by the Illinois rule
            side = 0
            for _ in range(MAX_LOCATE):
                if e_at_hi - 1.0 <= RUPTURE_TOL or hi - lo <= 1e-14 * max(1.0, hi):
                    break
                sm = lo + (1.0 - e_lo) * (hi - lo) / (e_hi - e_lo)
                if not (lo < sm < hi):
                    sm = 0.5 * (lo + hi)
                qm, stm, _, _ = newton_kernel(packed, f * sm, q_lo, tol, max_iterations, sub)
                if stm != CONVERGED:
                    sm = 0.5 * (lo + hi)
                    qm, stm, _, _ = newton_kernel(packed, f * sm, q_lo, tol, max_iterations,
                                                   sub)
                    if stm != CONVERGED:
                        break
                em = _event(qm, q_unl, glob, lig, alive, lim_dof, lim_bound)
                if em >= 1.0:
                    hi, e_hi, q_hi = sm, em, qm
                    e_at_hi = em
                    if side == 1:
                        e_lo = 1.0 - 0.5 * (1.0 - e_lo)
                    side = 1
                else:
                    lo, e_lo, q_lo = sm, em, qm
                    if side == -1:
                        e_hi = 1.0 + 0.5 * (e_hi - 1.0)
                    side = -1
            s_star = hi
            q = q_hi
            g_star, i_break = _max_ratio(q, glob, lig, alive)
            h_star, j_limit = _limit_ratio(q, q_unl, lim_dof, lim_bound)
            if h_star >= g_star:
                n = _record(out_s, out_q, out_kind, out_strip, n, s_star, q, ROW_LIMIT, -1)
                return n, RAMP_LIMIT, alive, LIMIT_BOUND, j_limit
            n = _record(out_s, out_q, out_kind, out_strip, n, s_star, q, ROW_FMAX, i_break)
            # break (with every strip tied with it), re-solve at the same load, cascade
            while True:
                n_tied = _tied(q, glob, lig, alive, i_break, tied)
                for t in range(n_tied):
                    _kill(lig, alive, tied[t])
                q_new, ok = _break(packed, lig0, alive, i_break, f * s_star, q, tol,
                                   max_iterations, sub, log)
                if not ok:
                    n = _record(out_s, out_q, out_kind, out_strip, n, s_star, q_new,
                                ROW_FAILED, i_break)
                    for t in range(n_tied):
                        n = _record(out_s, out_q, out_kind, out_strip, n, s_star, q_new,
                                    ROW_FAILED, tied[t])
                    return n, RAMP_NO_EQUILIBRIUM, alive, LIMIT_NONE, -1
                q = q_new
                n = _record(out_s, out_q, out_kind, out_strip, n, s_star, q, ROW_RUPTURED,
                            i_break)
                for t in range(n_tied):
                    n = _record(out_s, out_q, out_kind, out_strip, n, s_star, q,
                                ROW_RUPTURED, tied[t])
                h, j_limit = _limit_ratio(q, q_unl, lim_dof, lim_bound)
                if h >= 1.0:
                    return n, RAMP_LIMIT, alive, LIMIT_BOUND_JUMP, j_limit
                g, i_next = _max_ratio(q, glob, lig, alive)
                if no_taut_rule and g <= 0.0:
                    return n, RAMP_LIMIT, alive, LIMIT_NO_TAUT, -1
                if g < 1.0:
                    break
                i_break = i_next
            s_prev = s_star
            e_prev = max(g, h)
        n = _record(out_s, out_q, out_kind, out_strip, n, target, q, ROW_STEP, -1)
    return n, RAMP_COMPLETE, alive, LIMIT_NONE, -1
