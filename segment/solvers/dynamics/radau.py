"""Integration of eq. (D1) with scipy's ``solve_ivp`` (Radau by default), with rupture events.

First-order form ``y = (q, dq/dt, W_load, W_facet, E_dissipated)`` (the last three the energy
integrals of :mod:`segment.solvers.dynamics.energy`) with
:func:`scipy.integrate.solve_ivp` (``Radau`` by default, implicit and L-stable; the disc
damping makes the system stiff) and the Jacobian of
:func:`segment.solvers.dynamics.equations._jac`.
"""

from __future__ import annotations

import logging
import time

import numpy as np
import pandas as pd
from scipy.integrate import solve_ivp

from segment.elements.tangent import L_EPS
from segment.solvers.dynamics.energy import _energy_columns, _history_frame, _history_rows
from segment.solvers.dynamics.equations import _jac, _rhs
from segment.solvers.dynamics.forces import _damping_arrays, _trilinear_energy
from segment.solvers.dynamics.result import SimulationResult

__all__: list[str] = []

log = logging.getLogger("segment.solvers.dynamics")


def _report_time(t: float, t_end: float, wall: list, progress) -> None:
    """Log the simulated time every 5 s of wall time and feed ``progress`` at most ten times a
    second; ``wall`` = [last log, last progress, largest t reported] (wall-clock seconds)."""
    now = time.perf_counter()
    if now - wall[0] > 5.0:
        wall[0] = now
        log.info("simulate: t = %.4g s of %.4g s", t, t_end)
    if progress is not None and now - wall[1] > 0.1:
        wall[1] = now
        wall[2] = max(wall[2], float(t))
        progress(wall[2])


def _simulate_without_rupture(model, load_fn, y0, t_end, t_eval, damping, iner, grav,
                              elements, method, rtol, atol, max_step, wall, progress=None):
    """:func:`simulate` in one piece (``rupture=False``: the published curves continue)."""
    params = model._params
    packed = model._packed
    disc_b, lig_b, fac_b = _damping_arrays(model, damping)

    def fun(t, y):
        _report_time(t, t_end, wall, progress)
        return _rhs(y, load_fn(t), params, disc_b, lig_b, fac_b, iner, grav, elements, True)

    def jac(t, y):
        return _jac(y, load_fn(t), params, packed, disc_b, lig_b, fac_b, iner, elements, True)

    kwargs = {"jac": jac} if method in ("Radau", "BDF", "LSODA") else {}
    sol = solve_ivp(fun, (0.0, t_end), y0, method=method, t_eval=t_eval, rtol=rtol,
                    atol=atol, max_step=max_step, **kwargs)
    frame, err = _history_frame(model, sol.t, sol.y.T, load_fn, params, disc_b, lig_b,
                                fac_b, iner, grav, elements)
    if progress is not None:
        progress(float(sol.t[-1]) if len(sol.t) else 0.0)
    return SimulationResult(t=sol.t, q=sol.y[:6].T.copy(), qd=sol.y[6:12].T.copy(),
                            frame=frame, energy_error=err, success=bool(sol.success),
                            message=str(sol.message), nfev=int(sol.nfev),
                            njev=int(sol.njev), nlu=int(sol.nlu), model=model)


def _simulate_with_rupture(model, load_fn, y0, t_end, t_eval, damping, iner, grav, elements,
                           method, rtol, atol, max_step, wall, progress=None):
    """:func:`simulate` in pieces between rupture events (see its docstring).

    Each piece integrates the model with the strips broken so far; a terminal event
    ``max_i eps_i / eps_max,i - 1`` (intact strips) ends it where a strip reaches eps_max
    (F_el = F_max); that strip joins ``ruptured`` and the next piece starts from the state
    at the event. The strip's elastic energy at that moment leaves the elastic energy and is
    booked as ``rupture_energy_Nmm`` (released by the fracture) in eq. (D2).
    """
    from segment.solvers.ramp import _max_ratio

    current = model
    t0, y = 0.0, y0
    pieces, events = [], []
    released = 0.0
    nfev = njev = nlu = 0
    success, message = True, ""
    while True:
        params, packed = current._params, current._packed
        disc_b, lig_b, fac_b = _damping_arrays(current, damping)
        glob, lig = packed[0], packed[1]
        alive = current._carrying

        def fun(t, y_, params=params, disc_b=disc_b, lig_b=lig_b, fac_b=fac_b):
            _report_time(t, t_end, wall, progress)
            return _rhs(y_, load_fn(t), params, disc_b, lig_b, fac_b, iner, grav, elements,
                        True)

        def jac(t, y_, params=params, packed=packed, disc_b=disc_b, lig_b=lig_b, fac_b=fac_b):
            return _jac(y_, load_fn(t), params, packed, disc_b, lig_b, fac_b, iner, elements,
                        True)

        def strain_event(t, y_, glob=glob, lig=lig, alive=alive):
            return _max_ratio(y_[:6], glob, lig, alive)[0] - 1.0

        strain_event.terminal = True
        strain_event.direction = 1.0
        g0, i0 = _max_ratio(y[:6], glob, lig, alive)
        if elements and i0 >= 0 and g0 >= 1.0 and pieces:
            # another strip is already at or past eps_max where the last one broke: cascade
            t_e, y_e, i_break = t0, y, i0
        else:
            mask = (t_eval >= t0) if not pieces else (t_eval > t0)
            kwargs = {"jac": jac} if method in ("Radau", "BDF", "LSODA") else {}
            sol = solve_ivp(fun, (t0, t_end), y, method=method, t_eval=t_eval[mask],
                            rtol=rtol, atol=atol, max_step=max_step,
                            events=strain_event if (elements and i0 >= 0) else None, **kwargs)
            nfev += int(sol.nfev)
            njev += int(sol.njev)
            nlu += int(sol.nlu)
            pieces.append((current, sol.t, sol.y.T, params, disc_b, lig_b, fac_b, released))
            success, message = bool(sol.success), str(sol.message)
            if sol.status != 1:
                break
            t_e, y_e = float(sol.t_events[0][0]), sol.y_events[0][0]
            _, i_break = _max_ratio(y_e[:6], glob, lig, alive)
        name = current.strip_names[i_break]
        ratio, _ = _max_ratio(y_e[:6], glob, lig, alive)
        eps_c = lig[i_break, L_EPS + 2]
        released += params[6][i_break] * _trilinear_energy(ratio * eps_c, params[7][i_break],
                                                            params[8][i_break])
        events.append((t_e, "ruptured", name))
        log.info("simulate: %s ruptured at t = %.6g s", name, t_e)
        current = current.with_ruptured([name])
        t0, y = t_e, np.array(y_e, dtype=float)
    if progress is not None:
        progress(float(pieces[-1][1][-1]) if pieces and len(pieces[-1][1]) else t0)
    frames = []
    for cur, t, Y, prm, db, lb, fb, rel in pieces:
        if len(t):
            frames.append(_history_rows(cur, t, Y, load_fn, prm, db, lb, fb, iner, grav,
                                        elements, rel))
    frame = pd.DataFrame([r for rows in frames for r in rows])
    frame, err = _energy_columns(frame)
    if events:
        message = (f"{message} {len(events)} rupture(s): "
                   + ", ".join(f"{n} at t = {t:.4g} s" for t, _, n in events))
    tt = frame["t_s"].to_numpy() if not frame.empty else np.empty(0)
    Yall = (np.concatenate([p[2] for p in pieces if len(p[1])])
            if any(len(p[1]) for p in pieces) else np.empty((0, 15)))
    return SimulationResult(t=tt, q=Yall[:, :6].copy(), qd=Yall[:, 6:12].copy(), frame=frame,
                            energy_error=err, success=success, message=message, nfev=nfev,
                            njev=njev, nlu=nlu, model=current, events=tuple(events))
