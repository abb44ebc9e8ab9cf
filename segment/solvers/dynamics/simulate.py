"""``simulate``: the motion of C5 on C6 under a load history and/or a moving C6.

Checks the inputs, finds the start, hands the run to an integrator and assembles the time
history: :mod:`~segment.solvers.dynamics.radau` (scipy's ``solve_ivp``, Radau by default) or
:mod:`~segment.solvers.dynamics.lsv` (the Lie-Stormer-Verlet integrator); the equations of
motion are in :mod:`~segment.solvers.dynamics.equations`, the base excitation in
:mod:`~segment.solvers.dynamics.base`, the payload in :mod:`~segment.solvers.dynamics.bodies`
and the energy bookkeeping in :mod:`~segment.solvers.dynamics.energy`.
"""

from __future__ import annotations

import logging
import numbers
import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from segment.core.checks import LSV_DT, RAMP_TIME, T_END, check_start
from segment.core.io import BodyInertia
from segment.core.model import Segment
from segment.core.newton import norm_phi
from segment.core.residual import residual_jacobian
from segment.elements.loads import Load
from segment.solvers.dynamics.base import BaseExcitation
from segment.solvers.dynamics.bodies import B_M, Payload
from segment.solvers.dynamics.energy import (
    _base_columns,
    _energy_columns,
    _history_rows,
    _step_balance,
)
from segment.solvers.dynamics.equations import (
    _N_ENERGY,
    GRAVITY_MM_S2,
    _inertia_array,
    _initial,
    _rigid_body,
)
from segment.solvers.dynamics.forces import _load_function
from segment.solvers.dynamics.lsv import (
    DEFAULT_DT,
    LSV_VARIANTS,
    MAX_STEPS,
    _integrate_lsv,
    lsv_steps,
)
from segment.solvers.dynamics.radau import _integrate_radau
from segment.solvers.dynamics.result import SimulationResult
from segment.solvers.equilibrium import solve

__all__ = ["simulate"]

log = logging.getLogger("segment.solvers.dynamics")

START_TOL = 1e-10
"""Scaled residual of the static start (``q0="equilibrium"``), as :func:`segment.solve`."""
MAX_OUTPUT = 1_000_000
"""Most output times."""
E_R_WARN = 0.05
"""e_R (eq. (55)) above which the message says the energy balance fails (the paper's run had
0.0103, which its authors call satisfactory)."""


def _positive_number(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def _static_start(model: Segment, f0: np.ndarray, body: np.ndarray, grav: float):
    """The static equilibrium under the load at t = 0 and, with gravity, the weight of C5 and
    the payload at their centre of gravity: (q, converged, message).

    Without gravity this is :func:`segment.solve`. With it, :func:`segment.solve` under the
    weight moved to the C5 origin at the reference pose gives the start of a Newton iteration
    on ``residual(q) + J_v(q)^T (0, 0, -M g) = 0`` (the weight's moment turns with C5).
    """
    load0 = Load(f0[:3], f0[3:], "load at t = 0")
    if grav == 0.0:
        r = solve(model, load0)
        return r.q, r.converged, r.message
    R0 = np.asarray(model.reference.R0)
    params = model._params
    weight = np.array([0.0, 0.0, -body[B_M] * grav])

    def q_g(q):
        return _rigid_body(q, np.zeros(6), params[1], body)[2].T @ weight

    _, _, _, r, _, _ = _rigid_body(np.zeros(6), np.zeros(6), params[1], body)
    equivalent = Load(f0[:3] + R0.T @ weight, f0[3:] + R0.T @ np.cross(r, weight),
                      "load and weight at t = 0")
    first = solve(model, equivalent)
    q = first.q.copy()
    packed = model._packed
    for _ in range(50):
        res, K = residual_jacobian(q, f0, packed)
        res = res + q_g(q)
        if norm_phi(res)[0] <= START_TOL:
            return q, True, "static equilibrium with the weight"
        G = np.empty((6, 6))
        for j in range(6):
            e = np.zeros(6)
            e[j] = 1e-6
            G[:, j] = (q_g(q + e) - q_g(q - e)) / 2e-6
        q = q - np.linalg.solve(K + G, res)
        if not np.all(np.isfinite(q)):
            break
    return q, False, "no static equilibrium found under the load and the weight at t = 0"


def _resolve_start(q0, model, f0, body, grav, elements, base):
    """``q0`` -> (q, message): None (the reference pose, or with a base excitation the static
    equilibrium), ``"reference"``, ``"equilibrium"`` or 6 numbers."""
    if q0 is None:
        q0 = "equilibrium" if (base is not None and elements) else "reference"
    if isinstance(q0, str):
        if q0 == "reference":
            return np.zeros(6), ""
        if q0 == "equilibrium":
            if not elements:
                raise ValueError("q0='equilibrium' needs the force elements (elements=True); a "
                             "free body has no equilibrium")
            q, ok, message = _static_start(model, f0, body, grav)
            return (q, "") if ok else (None, message)
        raise ValueError(f"q0 must be 'reference', 'equilibrium' or 6 numbers [mm, rad], got "
                         f"{q0!r}")
    q, _ = _initial(q0, None)
    return check_start(q, "q0"), ""


def simulate(model: Segment, load=None, *, t_end: float, ramp: float = 0.0,
             q0=None, qd0=None, inertia: BodyInertia | None = None,
             payload: Payload | None = None, base_acceleration: BaseExcitation | None = None,
             gravity: bool = False, elements: bool = True, damping: bool = True,
             method: str = "Radau", rtol: float = 1e-6, atol: float = 1e-9,
             n_output: int = 201, max_step: float = np.inf, dt: float | None = None,
             rupture: bool = True,
             progress: Callable[[float], None] | None = None) -> SimulationResult:
    """Simulate the motion of C5 under a load history and/or a moving C6, eq. (D1).

    Parameters
    ----------
    model : Segment
        Force elements; their damping (``disc.damping``, ``Ligament.damping``,
        ``contact_law.damping``) is used unless ``damping=False``.
    load : Load, callable or None
        A :class:`~segment.elements.loads.Load` applied as a step at t = 0 (or ramped over ``ramp``
        seconds), or a function ``t [s] -> Load`` or ``-> (Fx, Fy, Fz, Mx, My, Mz)``
        [N, N mm]; None for no load.
    t_end : float
        End time [s], in (0, 1000] (:data:`segment.core.checks.T_END`, as ``segment simulate
        --t-end``).
    ramp : float
        Ramp duration [s] for a :class:`Load` (0: step), in [0, 1000].
    q0 : array_like, str or None
        Pose at t = 0: 6 numbers [mm, rad]; ``"reference"`` (q = 0, the pose of Table 1);
        ``"equilibrium"`` (the static equilibrium under the load at t = 0 and, with
        ``gravity``, the weight of C5 and the payload). Default: ``"reference"``, and with a
        ``base_acceleration`` ``"equilibrium"`` (so that the motion is the response to the
        base, not the settling from the reference pose, which is not an equilibrium).
    qd0 : array_like, shape (6,), optional
        Rates at t = 0 [mm/s, rad/s] (default at rest).
    inertia : BodyInertia, optional
        Mass, inertia and centre of gravity of C5 (default: ``model.inertia``, which
        :func:`segment.c5c6` reads from Table 1 of its data folder).
    payload : Payload, optional
        A rigid body fixed to C5 (e.g. a head-and-upper-neck surrogate; the user's numbers,
        the package ships none). It moves with C5, adds its inertia and, with ``gravity``,
        its weight, and feels the transport inertia force of a moving C6.
    base_acceleration : BaseExcitation, optional
        Prescribed acceleration of C6 in space (translation; the C6 axes do not turn), e.g.
        ``BaseExcitation.triangular(peak_g=8.5, duration_s=0.105)`` (Fritzkowski and
        Walczak's rear-end pulse). C5 then feels the transport inertia force ``-M a_b(t)`` at
        its centre of gravity; the history reports its motion relative to C6 and in space.
        None: C6 fixed.
    gravity : bool
        Add gravity, 9810 mm/s^2 along -z of C6.
    elements : bool
        False switches every force element off (a free rigid body; loads still act).
    damping : bool
        False leaves out every damping term.
    method : str
        ``"Radau"`` (default) or ``"BDF"`` (implicit, with our Jacobian), any other
        :func:`scipy.integrate.solve_ivp` method, or the Lie-Stormer-Verlet integrator
        (:mod:`segment.solvers.dynamics.lsv`): ``"lsv"`` (the seed's implicit rotation
        update, ``"lsv-implicit"`` is the same) or ``"lsv-explicit"``, with the fixed step
        ``dt``. LSV keeps the rotation exactly orthogonal and conserves the angular momentum
        exactly without torque, and its energy error does not drift: prefer it for long,
        lightly damped runs and free flight or impacts of the body (C5 spinning freely for
        1 s: momentum and energy kept to 1e-13 in 1.3 s, where Radau needed rtol 1e-10 and
        17 s). For the stiff, damped segment prefer Radau: LSV's elastic forces are explicit,
        so its step must resolve the stiffest mode (about 2900 rad/s in facet contact), and on
        the 8.5 g whiplash run it cost 4 times Radau's default run for a larger error
        (``benchmarks/results/bench_lsv.json``). A run whose e_R exceeds 0.05 says so in its
        message.
    rtol, atol : float
        Tolerances of the scipy integrators (atol on mm, rad, mm/s, rad/s and the energy
        integrals); not used by LSV.
    n_output : int
        Number of equally spaced output times, from 0 to ``t_end``.
    max_step : float
        Largest step of the scipy integrators [s].
    dt : float, optional
        LSV step [s] (default 1e-5 s), in [1e-7, 1e-3] (:data:`segment.core.checks.LSV_DT`):
        the largest step <= ``dt`` that puts every output time on the step grid; at most
        10,000,000 steps per run.
    rupture : bool
        Ligament strips rupture (True, default): a strip whose strain reaches eps_max (its
        elastic force F_max, point C of Table 3) breaks at that instant and carries nothing
        afterwards. Event detection, no hidden state: the integration stops at the event
        (Radau: a terminal root of ``max_i eps_i / eps_max,i - 1``; LSV: the step is
        bisected to 1e-12 of itself), the strip joins the model's ``ruptured`` set and the
        integration restarts from the state at the event. The events and the final model are
        in the result; the elastic energy the strip held is booked as released by the
        fracture in the energy balance (D2). False: the published curves continue past C.
    progress : callable, optional
        Called with the simulated time reached so far [s] (non-decreasing, at most about ten
        times a second of wall time), e.g. to advance a progress bar.

    Returns
    -------
    SimulationResult
        Never raises for an integration that fails or a start that is not found: ``success``
        is False with a message, and the history holds what was computed.
    """
    if not isinstance(model, Segment):
        raise TypeError(f"model must be a segment.Segment, got {type(model).__name__}")
    t_end = T_END.check(t_end, "t_end")
    ramp = RAMP_TIME.check(ramp, "ramp")
    if isinstance(n_output, bool) or not isinstance(n_output, numbers.Integral) or not (
            2 <= n_output <= MAX_OUTPUT):
        raise ValueError(f"n_output must be an integer in [2, {MAX_OUTPUT:,}], got "
                         f"{n_output!r}")
    if not isinstance(method, str):
        raise TypeError(f"method must be a string, got {type(method).__name__}")
    lsv = method.lower() in LSV_VARIANTS
    if dt is not None and not lsv:
        raise ValueError(f"dt is the step of the LSV integrator (method='lsv' or "
                         f"'lsv-explicit'); method {method!r} chooses its own steps")
    if lsv:
        dt = DEFAULT_DT if dt is None else LSV_DT.check(dt, "dt")
        n_steps = lsv_steps(float(t_end), int(n_output), dt)[0]
        if n_steps > MAX_STEPS:
            raise ValueError(f"t_end / dt = {float(t_end) / dt:.3g} steps; at most "
                             f"{MAX_STEPS:,} per run: shorten t_end or take a larger dt")
    else:
        for name, value in (("rtol", rtol), ("atol", atol)):
            _positive_number(name, value)
    if base_acceleration is not None and not isinstance(base_acceleration, BaseExcitation):
        raise TypeError(f"base_acceleration must be a segment.solvers.dynamics.BaseExcitation or "
                        f"None, got {type(base_acceleration).__name__}")
    for name, value in (("gravity", gravity), ("elements", elements), ("damping", damping),
                        ("rupture", rupture)):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name} must be True or False, got {value!r}")
    load_fn, _ = _load_function(load, ramp)
    _, qd0 = _initial(None, qd0)
    body = _inertia_array(inertia, model, payload)
    grav = GRAVITY_MM_S2 if gravity else 0.0
    base = base_acceleration
    base_t = (np.ascontiguousarray(base.t_s) if base is not None else np.zeros(0))
    base_a = (np.ascontiguousarray(base.acceleration_mm_s2) if base is not None
              else np.zeros((0, 3)))
    t_eval = np.linspace(0.0, float(t_end), int(n_output))
    q_start, start_message = _resolve_start(q0, model, load_fn(0.0), body, grav, elements,
                                            base)
    common = {"method": "lsv-implicit" if method.lower() == "lsv" else method,
              "base": base, "payload": payload}
    if q_start is None:
        return SimulationResult(t=np.empty(0), q=np.empty((0, 6)), qd=np.empty((0, 6)),
                                frame=pd.DataFrame(), energy_error=float("nan"),
                                success=False, message=start_message, nfev=0, njev=0, nlu=0,
                                model=model, **common)
    wall = [time.perf_counter(), time.perf_counter(), 0.0]   # last log, last progress, max t
    if lsv:
        pieces, events, stats, success, message, final, acc = _integrate_lsv(
            model, load_fn, q_start, qd0, float(t_end), t_eval, dt, damping, body, grav,
            elements, method.lower() != "lsv-explicit", rupture, base_t, base_a, wall, progress)
        steps = (np.array([acc[0]]), np.array([acc[1]]))
    else:
        y0 = np.concatenate([q_start, qd0, np.zeros(_N_ENERGY)])
        pieces, events, stats, success, message, final = _integrate_radau(
            model, load_fn, y0, float(t_end), t_eval, damping, body, grav, elements, method,
            rtol, atol, max_step, wall, progress, rupture, base_t, base_a)
        steps = None
    frame, steps = _assemble(pieces, load_fn, body, grav, elements, base, steps)
    frame, err, e_r = _energy_columns(frame, steps)
    if events:
        message = (f"{message} {len(events)} rupture(s): "
                   + ", ".join(f"{n} at t = {t:.4g} s" for t, _, n in events))
    if e_r > E_R_WARN:
        remedy = "take a smaller dt" if lsv else "tighten rtol and atol"
        message = (f"{message} The energy balance fails: e_R = {e_r:.2g} > {E_R_WARN:g} "
                   f"(eq. (55)); {remedy}.")
        log.warning("simulate: e_R = %.2g > %g: %s", e_r, E_R_WARN, remedy)
    tt = frame["t_s"].to_numpy() if not frame.empty else np.empty(0)
    Y = (np.concatenate([p.Y for p in pieces if len(p.t)]) if any(len(p.t) for p in pieces)
         else np.empty((0, 6 + 6 + _N_ENERGY)))
    return SimulationResult(t=tt, q=Y[:, :6].copy(), qd=Y[:, 6:12].copy(), frame=frame,
                            energy_error=err, success=success, message=message,
                            nfev=stats["nfev"], njev=stats["njev"], nlu=stats["nlu"],
                            model=final, events=tuple(events), e_R=e_r, steps=stats["steps"],
                            q_start=q_start, **common)


def _assemble(pieces, load_fn, body, grav, elements, base, steps):
    """The history frame of all pieces, and (T2, mismatch) at every accepted step."""
    rows = []
    for piece in pieces:
        if len(piece.t):
            rows.extend(_history_rows(piece.model, piece.t, piece.Y, load_fn, piece.params,
                                      piece.disc_b, piece.lig_b, piece.fac_b, body, grav,
                                      elements, piece.released))
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame, steps
    frame = _base_columns(frame, base, pieces[0].params[1])
    if steps is None:          # Radau: the balance at every accepted step of the dense output
        start = (frame["kinetic_Nmm"].iloc[0], frame["elastic_Nmm"].iloc[0],
                 frame["gravity_potential_Nmm"].iloc[0], frame["rupture_energy_Nmm"].iloc[0])
        T, mismatch = [], []
        for piece in pieces:
            if piece.t_steps is not None and len(piece.t_steps):
                a, b = _step_balance(piece.t_steps, piece.Y_steps, load_fn, piece.params,
                                     piece.disc_b, piece.lig_b, piece.fac_b, body, grav,
                                     elements, piece.released, start)
                T.append(a)
                mismatch.append(b)
        steps = ((np.concatenate(T), np.concatenate(mismatch)) if T
                 else (np.empty(0), np.empty(0)))
    return frame, steps
