"""Lie-Stormer-Verlet (LSV) integration: C5 as a rigid body on the rotation group.

The seed (Applied Mechanics Lab, *Lie-Stormer-Verlet integration of rigid-body motion*, web
page; SOURCES.md section 1, ``LSV``) integrates a rigid body ``x = Q X + c`` with the rotation
``Q`` kept on SO(3). One concept: the integrator, one step (kick - drift - kick with the
implicit damping below) and the run on a fixed grid with rupture events. Its pieces: the free
rotation over a step, implicit (the seed's midpoint update, energy and momentum exact) or
explicit (the splitting below), is :mod:`segment.solvers.dynamics.lsv_rotation`; the
rotation-group maths :mod:`segment.solvers.dynamics.so3`; the state vector, its coupling to
the joint coordinates and the forces of a state :mod:`segment.solvers.dynamics.lsv_state`.

Forces: Stormer-Verlet around the rotation (kick - drift - kick), the translation of the centre
of gravity ``c`` with its velocity ``v``::

    v+ = v_n + dt/2 F_n / M,        Pi+ = Pi_n + dt/2 tau_n        (tau in the body frame)
    c_{n+1} = c_n + dt v+,          (R_{n+1}, Pi-) = free rotation of (R_n, Pi+) over dt
    v_{n+1} = v+ + dt/2 F_{n+1} / M,    Pi_{n+1} = Pi- + dt/2 tau_{n+1}

``F`` and ``tau`` are the resultant force and the moment about the centre of gravity of the
generalized forces ``Q`` the Radau path uses: the static residual of
:mod:`segment.core.residual` (disc, ligaments, facets and the load; the kernel the Newton
solver iterates on) plus the damping of :mod:`segment.solvers.dynamics.forces`
(``Q = J^T (F, M_G)`` with ``J`` the joint's velocity map of
:mod:`segment.solvers.dynamics.equations`, so ``(F, M_G) = J^-T Q``), and gravity and the
transport inertia force ``-M a_b(t)`` of a moving C6 at the centre of gravity. The joint
coordinates ``q`` are read off ``(c, R)`` (Cardan angles on the branch nearest the previous
step, so angles are continuous) wherever a force needs them.

Damping depends on the velocity at the end of the step, so the last kick is implicit in the
velocities: multiplied by ``J^T`` it is the 6 x 6 linear system
``M(q) dq/dt - dt/2 Q_damping(q, dq/dt) = J^T (M v+, R Pi-) + dt/2 (Q_static + Q_field)``,
solved by Newton's method with the damping matrix (one iteration when no ligament or facet
changes between pulling and slack). Left explicit, the disc damping (b/m = 1 N s/mm /
0.23 g = 4300 1/s) would bound the step to dt < 2 m/b = 0.46 ms and reduce the method to first
order. Both variants treat the damping this way; "explicit" and "implicit" name the rotation
update, as in the seed.

When to use it (``benchmarks/bench_lsv.py``, ``benchmarks/results/bench_lsv.json``, measured on
the 2-core development machine):

* Prefer LSV for long, lightly damped runs, free flight and impacts of the body. Over 1e5
  steps of a free body (300 rad/s) the angular momentum changed by 4e-14 (implicit) and 6e-14
  (explicit) of itself and ``|R^T R - 1|`` stayed below 1.2e-13; the energy error was 4e-14
  (implicit, exact up to rounding) and 2.3e-9 (explicit, the same in the first and the last
  tenth of the run: no drift). C5 spinning freely for 1 s through :func:`segment.simulate`:
  LSV at 1e-5 s kept energy and momentum to 4e-13 and 1.5e-13 in 1.3 s; Radau needed rtol
  1e-10 and 17 s for 1e-12 (at its default rtol 1e-6, 2.2 s, they drifted by 5e-8 and 9e-8).
* Prefer Radau for the stiff, heavily damped segment. The elastic forces are explicit: the
  step must resolve the stiffest mode (omega_max = 2940 rad/s with both facets in contact,
  EXT x 3: dt < 2 / omega_max = 0.68 ms for stability, and much less for accuracy; the
  damping, implicit, keeps the segment bounded beyond that, but e_R reached 0.13 at 0.1 ms and
  1.5 at 0.4 ms, which the result's message then says). On the 8.5 g whiplash run (0.3 s) LSV
  at its default 1e-5 s cost 4.2 times Radau at its default rtol 1e-6 (median of five
  alternating rounds, 4.1-4.3) and was less accurate (1.5e-6 mm against 1.6e-8 mm; no step
  down to 2.5e-6 s reached Radau's accuracy), with e_R 6.1e-5 against 4.6e-5.
* Order: 2.00 where the forces are smooth (the EXT step: errors 2.7e-5, 6.7e-6, 1.7e-6,
  4.2e-7, 1.0e-7 mm at 40, 20, 10, 5, 2.5 us). Where a force jumps, a fixed step is locally
  first order: under the pulse the facets touch and separate, and the contact damping
  ``b_f du/dt`` switches on and off at u = 0, so the observed order of q falls to 1.1 and 0.9
  at the smallest steps (without damping it stays 2.00); e_R still converges at 1.9-2.0.
"""

from __future__ import annotations

import math

import numpy as np

from segment.core.status import Status
from segment.jit import njit
from segment.solvers.dynamics.equations import _damping_matrix, _rigid_body, _static_force
from segment.solvers.dynamics.forces import _element_forces
from segment.solvers.dynamics.lsv_rotation import OK, _rotate
from segment.solvers.dynamics.lsv_state import (
    RB_G,
    RB_LAM,
    RB_M,
    RB_P,
    S_AB,
    S_C,
    S_F,
    S_NEVAL,
    S_NEWC,
    S_PI,
    S_Q,
    S_QD,
    S_R,
    S_ROWS,
    S_TAU,
    S_V,
    S_VEL,
    S_W,
    S_WIDTH,
    _evaluate,
    _field,
    _joint,
    _kinetic,
    _principal_body,
    _set_forces,
    _set_pose,
    _set_rates,
    _set_velocities,
)
from segment.solvers.ramp_kernel import _max_ratio

__all__ = ["DEFAULT_DT", "LSV_VARIANTS", "MAX_STEPS", "lsv_steps"]

LSV_VARIANTS = ("lsv", "lsv-implicit", "lsv-explicit")
"""``method`` names of :func:`segment.simulate` for this integrator (``lsv`` is the implicit
variant, the seed's equations)."""
DAMPING_TOL = 1e-13
"""Newton tolerance of the implicit last kick (relative to 1 + max |dq/dt|)."""
DAMPING_MAX_ITER = 30
DAMPING_REFRESH = 20
"""Steps between recomputing the damping matrix (it changes with the pose only; a stale one
only slows the Newton iteration, it does not change the result)."""

# The outcome of a step or a run, as plain integers for the kernels: OK (lsv_rotation), the
# codes of Status (segment.core.status) for a failure, and EVENT (internal, never a result: the
# run stopped before a step that brings a strip to eps_max)
DAMPING_FAILED = int(Status.DAMPING_FAILED)
NOT_FINITE = int(Status.STATE_NOT_FINITE)
EVENT = -1


# ---------------------------------------------------------------- one step
@njit
def _step(s, t, h, load_new, params, packed, disc_b, lig_b, fac_b, body, rb, grav, elements,
          damped, implicit, base_t, base_a, C):
    """Advance the state ``s`` (forces at ``t`` cached in it) by ``h``; returns the status.

    ``C`` (6, 6) is the damping matrix, refreshed here when stale (``s[S_NEWC]`` counts the
    steps since).
    """
    r0 = params[1]
    s0 = params[0]
    M = rb[RB_M]
    lam = rb[RB_LAM:RB_LAM + 3]
    q_old = s[S_Q:S_Q + 6].copy()
    rows_old = s[S_ROWS:S_ROWS + 30].copy()
    a_old = s[S_AB:S_AB + 3].copy()
    c_old = s[S_C:S_C + 3].copy()
    # kick
    v_half = s[S_V:S_V + 3] + 0.5 * h * s[S_F:S_F + 3] / M
    Pi_half = s[S_PI:S_PI + 3] + 0.5 * h * s[S_TAU:S_TAU + 3]
    # drift: translation, and the free rotation on SO(3)
    s[S_C:S_C + 3] = c_old + h * v_half
    Rp = np.ascontiguousarray(s[S_R:S_R + 9]).reshape((3, 3))
    Rp_new, Pi_plus, status = _rotate(Rp, Pi_half, lam, h, implicit)
    if status != OK:
        return status
    s[S_R:S_R + 9] = Rp_new.ravel()
    _set_pose(s, rb, s0, r0)
    t_new = t + h
    s[S_V:S_V + 3] = v_half
    s[S_PI:S_PI + 3] = Pi_plus
    _set_rates(s, rb, r0)
    if damped:
        # last kick implicit in the rates (module docstring): M qd - h/2 Q_d(qd) = rhs
        q = s[S_Q:S_Q + 6].copy()
        n = params[6].shape[0]
        mfac = params[11].shape[0]
        Q = np.empty((5, 6))
        lig = np.empty((n, 4))
        fac = np.empty((mfac, 4))
        Mg, _, Jv, _, _, _ = _rigid_body(q, np.zeros(6), r0, body)
        H, _, _ = _joint(s, rb, r0)
        f_field, _ = _field(t_new, rb, grav, base_t, base_a)
        v_el, _ = _element_forces(q, s[S_QD:S_QD + 6].copy(), load_new, params, disc_b,
                                  lig_b, fac_b, elements, True, Q, lig, fac)
        Qs = _static_force(q, load_new, packed, Q, elements)
        p_lin = M * v_half
        L = Rp_new @ Pi_plus
        rhs = Jv.T @ p_lin
        rhs[3:] += H.T @ L
        rhs += 0.5 * h * (Qs + Jv.T @ f_field)
        if s[S_NEWC] >= DAMPING_REFRESH:
            C[:, :] = _damping_matrix(q, load_new, params, disc_b, lig_b, fac_b, elements)
            s[S_NEWC] = 0.0
            s[S_NEVAL] += 6.0
        s[S_NEWC] += 1.0
        s[S_NEVAL] += 1.0
        A = Mg - 0.5 * h * C
        qd = s[S_QD:S_QD + 6].copy()
        status = DAMPING_FAILED
        for it in range(DAMPING_MAX_ITER):
            if it > 0:
                v_el, _ = _element_forces(q, qd, load_new, params, disc_b, lig_b, fac_b,
                                          elements, True, Q, lig, fac)
                s[S_NEVAL] += 1.0
            res = Mg @ qd - 0.5 * h * Q[3] - rhs
            dqd = np.linalg.solve(A, res)
            qd = qd - dqd
            if np.max(np.abs(dqd)) <= DAMPING_TOL * (1.0 + np.max(np.abs(qd))):
                status = OK
                break
            if it == 4:   # slow: refresh the damping matrix once
                C[:, :] = _damping_matrix(q, load_new, params, disc_b, lig_b, fac_b, elements)
                A = Mg - 0.5 * h * C
                s[S_NEWC] = 1.0
                s[S_NEVAL] += 6.0
        if status != OK:
            return status
        _set_velocities(s, qd, rb, r0)
        # the forces at the end of the step: those of the last evaluation, at the rates the
        # final (converged, < DAMPING_TOL) correction moved by rounding only
        _set_forces(s, Qs + Q[3], t_new, rb, grav, base_t, base_a, r0)
        s[S_ROWS:S_ROWS + 30] = Q.ravel()
        s[S_VEL] = v_el
    else:
        # forces do not depend on the rates: explicit last kick
        _evaluate(s, t_new, load_new, params, packed, disc_b, lig_b, fac_b, rb, grav, elements,
                  base_t, base_a)
        s[S_V:S_V + 3] = v_half + 0.5 * h * s[S_F:S_F + 3] / M
        s[S_PI:S_PI + 3] = Pi_plus + 0.5 * h * s[S_TAU:S_TAU + 3]
        _set_rates(s, rb, r0)
    # work of the non-potential forces, trapezoidal in q (and in c for the transport force)
    dq = s[S_Q:S_Q + 6] - q_old
    rows = s[S_ROWS:S_ROWS + 30]
    s[S_W + 0] += 0.5 * np.dot(rows_old[24:30] + rows[24:30], dq)      # load
    s[S_W + 1] += 0.5 * np.dot(rows_old[12:18] + rows[12:18], dq)      # facets
    s[S_W + 2] -= 0.5 * np.dot(rows_old[18:24] + rows[18:24], dq)      # damping
    s[S_W + 3] += 0.5 * np.dot(-M * (a_old + s[S_AB:S_AB + 3]), s[S_C:S_C + 3] - c_old)
    if not np.all(np.isfinite(s)):
        return NOT_FINITE
    return OK


@njit
def _track(s, rb, grav, start, acc):
    """Fold the state into ``acc`` = (max T2, max |T2 - T2(0) - W|) of eq. (D2);
    ``start`` = (T2(0), V_el(0), V_g(0), E_rupture(0) - E_rupture now)."""
    T = _kinetic(s, rb)
    v_g = rb[RB_M] * grav * s[S_C + 2]
    work = (s[S_W] - (s[S_VEL] - start[1]) - (v_g - start[2]) + s[S_W + 1] - s[S_W + 2]
            + s[S_W + 3] + start[3])
    acc[0] = max(acc[0], T)
    acc[1] = max(acc[1], abs(T - start[0] - work))


@njit
def _run(s, k0, k1, h, loads, params, packed, disc_b, lig_b, fac_b, body, rb, grav, elements,
         damped, implicit, base_t, base_a, C, watch, alive, out_every, out_Y, out_k, counter,
         start, acc):
    """Steps k0 -> k1 on the grid t_k = k h (``loads[j]`` the load at t_{k0 + j}); stops
    before a step that brings a strip to eps_max (``watch``). Returns (k reached, status)."""
    glob, lig = packed[0], packed[1]
    prev = s.copy()
    for k in range(k0, k1):
        prev[:] = s
        status = _step(s, k * h, h, loads[k + 1 - k0], params, packed, disc_b, lig_b, fac_b,
                       body, rb, grav, elements, damped, implicit, base_t, base_a, C)
        if status != OK:
            return k, status
        if watch:
            g, _ = _max_ratio(s[S_Q:S_Q + 6], glob, lig, alive)
            if g >= 1.0:
                s[:] = prev
                return k, EVENT
        _track(s, rb, grav, start, acc)
        if (k + 1) % out_every == 0:
            j = counter[0]
            out_Y[j, :6] = s[S_Q:S_Q + 6]
            out_Y[j, 6:12] = s[S_QD:S_QD + 6]
            out_Y[j, 12:16] = s[S_W:S_W + 4]
            out_k[j] = k + 1
            counter[0] = j + 1
    return k1, OK


# ---------------------------------------------------------------- the run
DEFAULT_DT = 1e-5
"""Default LSV step [s] (see ``benchmarks/bench_lsv.py`` for the accuracy it gives)."""
MAX_STEPS = 10_000_000
"""Most LSV steps of one run (about a minute or two here); more is refused before starting."""
CHUNK = 4096
"""Steps per compiled call (progress is reported between calls)."""
EVENT_RTOL = 1e-12
"""Rupture instants are located by bisection of the step to this fraction of it."""


def lsv_steps(t_end: float, n_output: int, dt: float) -> tuple[int, int, float]:
    """(steps, steps per output interval, step [s]): the largest step <= ``dt`` that puts every
    output time on the step grid."""
    intervals = int(n_output) - 1
    sub = max(1, math.ceil(t_end / (intervals * dt) * (1.0 - 1e-12)))
    n = intervals * sub
    return n, sub, t_end / n


def _start_state(model, q0, qd0, body, rb, t0_load, params, packed, disc_b, lig_b, fac_b,
                 grav, elements, base_t, base_a):
    from segment.elements.kinematics import pose

    s = np.zeros(S_WIDTH)
    p, Rc5 = pose(q0, model.reference)
    P = rb[RB_P:RB_P + 9].reshape(3, 3)
    s[S_Q:S_Q + 6] = q0
    s[S_R:S_R + 9] = (Rc5 @ P).ravel()
    s[S_C:S_C + 3] = p + Rc5 @ rb[RB_G:RB_G + 3]
    _set_velocities(s, np.asarray(qd0, dtype=float), rb, params[1])
    s[S_NEWC] = DAMPING_REFRESH
    _evaluate(s, 0.0, t0_load, params, packed, disc_b, lig_b, fac_b, rb, grav, elements,
              base_t, base_a)
    return s


def _integrate_lsv(model, load_fn, q0, qd0, t_end, t_eval, dt, damping, body, grav, elements,
                   implicit, rupture, base_t, base_a, wall, progress):
    """Integrate by LSV on a fixed grid, with rupture events located by bisection of a step.

    Returns (pieces, events, stats, success, message, final model, (T2 max, mismatch max)).
    """
    from segment.solvers.dynamics.forces import _damping_arrays
    from segment.solvers.dynamics.radau import _released_energy, _report_time
    from segment.solvers.dynamics.result import Piece

    n, sub, h = lsv_steps(t_end, len(t_eval), dt)
    rb = _principal_body(body)
    current = model
    params, packed = current._params, current._packed
    disc_b, lig_b, fac_b = _damping_arrays(current, damping)
    s = _start_state(current, q0, qd0, body, rb, load_fn(0.0), params, packed, disc_b, lig_b,
                     fac_b, grav, elements, base_t, base_a)
    C = np.zeros((6, 6))
    out_Y = np.zeros((len(t_eval), 16))
    out_k = np.zeros(len(t_eval), dtype=np.int64)
    out_Y[0, :6], out_Y[0, 6:12] = s[S_Q:S_Q + 6], s[S_QD:S_QD + 6]
    counter = np.array([1], dtype=np.int64)
    start = np.array([_kinetic(s, rb), s[S_VEL], rb[RB_M] * grav * s[S_C + 2], 0.0])
    acc = np.array([start[0], 0.0])
    released = 0.0
    segments = [(0, current, params, disc_b, lig_b, fac_b, released)]
    events = []
    success, message = True, f"{n} steps of {h:.4g} s"
    watch = bool(rupture and elements and len(current.strip_names))
    k, t_cur = 0, 0.0

    def flags():
        return bool(elements and (np.any(disc_b) or np.any(lig_b) or fac_b))

    def one_step(state, t_from, step):
        return _step(state, t_from, step, load_fn(t_from + step), params, packed, disc_b, lig_b,
                     fac_b, body, rb, grav, elements, flags(), implicit, base_t, base_a, C)

    def ratio(state):
        return _max_ratio(state[S_Q:S_Q + 6], packed[0], packed[1], current._carrying)

    def locate(prev, t_from, step):
        """Bisect (t_from, t_from + step] for the instant a strip reaches eps_max."""
        lo, hi, s_hi = 0.0, step, None
        while hi - lo > EVENT_RTOL * step:
            mid = 0.5 * (lo + hi)
            trial = prev.copy()
            if one_step(trial, t_from, mid) == OK and ratio(trial)[0] >= 1.0:
                hi, s_hi = mid, trial
            else:
                lo = mid
        if s_hi is None:
            s_hi = prev.copy()
            one_step(s_hi, t_from, hi)
        return t_from + hi, s_hi

    while k < n:
        on_grid = t_cur == k * h
        if on_grid:
            k1 = min(n, k + CHUNK)
            loads = np.array([load_fn(j * h) for j in range(k, k1 + 1)], dtype=float)
            k_reached, status = _run(s, k, k1, h, loads, params, packed, disc_b, lig_b, fac_b,
                                     body, rb, grav, elements, flags(), implicit, base_t,
                                     base_a, C, watch, current._carrying, sub, out_Y, out_k,
                                     counter, start, acc)
            _report_time(k_reached * h, t_end, wall, progress)
            if status == OK:
                k, t_cur = k1, k1 * h
                continue
            k, t_cur = k_reached, k_reached * h
            if status != EVENT:
                success, message = False, (f"{Status(status).text} (step {h:.3g} s, at "
                                           f"t = {t_cur:.6g} s)")
                break
            prev = s.copy()
            t_e, s = locate(prev, t_cur, h)
        else:
            prev = s.copy()
            step = (k + 1) * h - t_cur
            status = one_step(s, t_cur, step)
            if status != OK:
                success, message = False, (f"{Status(status).text} (at t = {t_cur:.6g} s)")
                break
            if watch and ratio(s)[0] >= 1.0:
                t_e, s = locate(prev, t_cur, step)
            else:
                k, t_cur = k + 1, (k + 1) * h
                _track(s, rb, grav, start, acc)
                if k % sub == 0:
                    j = counter[0]
                    out_Y[j, :6], out_Y[j, 6:12] = s[S_Q:S_Q + 6], s[S_QD:S_QD + 6]
                    out_Y[j, 12:16] = s[S_W:S_W + 4]
                    out_k[j] = k
                    counter[0] = j + 1
                continue
        # a strip reached eps_max at t_e: it breaks (and any other one then past it)
        _track(s, rb, grav, start, acc)
        while True:
            g, i_break = ratio(s)
            if i_break < 0 or g < 1.0:
                break
            y_e = np.concatenate([s[S_Q:S_Q + 6], s[S_QD:S_QD + 6]])
            energy = _released_energy(current, y_e, i_break)
            released += energy
            start[3] -= energy
            name = current.strip_names[i_break]
            events.append((t_e, "ruptured", name))
            current = current.with_ruptured([name])
            params, packed = current._params, current._packed
            disc_b, lig_b, fac_b = _damping_arrays(current, damping)
            watch = bool(rupture and elements and current._carrying.any())
        s[S_NEWC] = DAMPING_REFRESH
        _evaluate(s, t_e, load_fn(t_e), params, packed, disc_b, lig_b, fac_b, rb, grav,
                  elements, base_t, base_a)
        _track(s, rb, grav, start, acc)
        segments.append((int(counter[0]), current, params, disc_b, lig_b, fac_b, released))
        t_cur = t_e
        if t_cur >= (k + 1) * h * (1.0 - 1e-15):     # the event ended the step: on the grid
            k, t_cur = k + 1, (k + 1) * h
            if k % sub == 0:
                j = counter[0]
                out_Y[j, :6], out_Y[j, 6:12] = s[S_Q:S_Q + 6], s[S_QD:S_QD + 6]
                out_Y[j, 12:16] = s[S_W:S_W + 4]
                out_k[j] = k
                counter[0] = j + 1
    if progress is not None:
        progress(k * h)
    m = int(counter[0])
    pieces = []
    bounds = [seg[0] for seg in segments[1:]] + [m]
    for (first, cur, prm, db, lb, fb, rel), last in zip(segments, bounds, strict=True):
        if last > first:
            pieces.append(Piece(cur, t_eval[first:last], out_Y[first:last].copy(), prm, db, lb,
                                fb, rel))
    stats = {"nfev": int(s[S_NEVAL]), "njev": 0, "nlu": 0, "steps": k}
    return pieces, events, stats, success, message, current, (acc[0], acc[1])
