"""Integration of eq. (D1) with scipy's ``solve_ivp`` (Radau by default), with rupture events.

First-order form ``y = (q, dq/dt, W_load, W_facet, E_dissipated, W_transport)`` (the last four
the energy integrals of :mod:`segment.solvers.dynamics.energy`) with
:func:`scipy.integrate.solve_ivp` (``Radau`` by default, implicit and L-stable; the disc
damping makes the system stiff) and the Jacobian of
:func:`segment.solvers.dynamics.equations._jac`. The solution is kept as a dense output, so
that the energy check (eq. (55)) sees every accepted step, not only the output times.

Rupture (``rupture=True``): the integration runs in pieces between rupture events. Each piece
integrates the model with the strips broken so far; a terminal event
``max_i eps_i / eps_max,i - 1`` (intact strips) ends it where a strip reaches eps_max
(F_el = F_max); that strip joins ``ruptured`` and the next piece starts from the state at the
event. The strip's elastic energy at that moment leaves the elastic energy and is booked as
``rupture_energy_Nmm`` (released by the fracture) in eq. (D2).
"""

from __future__ import annotations

import logging
import time

import numpy as np
from scipy.integrate import solve_ivp

from segment.elements.tangent import L_EPS
from segment.solvers.dynamics.equations import _jac, _rhs
from segment.solvers.dynamics.forces import _damping_arrays, _trilinear_energy
from segment.solvers.dynamics.result import Piece

__all__: list[str] = []

log = logging.getLogger("segment.solvers.dynamics")

IMPLICIT_METHODS = ("Radau", "BDF", "LSODA")
"""scipy methods that use the Jacobian we hand them."""


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


def _released_energy(current, y_e, i_break) -> float:
    """Elastic energy [N mm] strip ``i_break`` of ``current`` holds at the state ``y_e``."""
    from segment.solvers.ramp_kernel import _max_ratio

    glob, lig = current._packed[0], current._packed[1]
    params = current._params
    ratio, _ = _max_ratio(y_e[:6], glob, lig, current._carrying)
    eps_c = lig[i_break, L_EPS + 2]
    return params[6][i_break] * _trilinear_energy(ratio * eps_c, params[7][i_break],
                                                  params[8][i_break])


def _integrate_radau(model, load_fn, y0, t_end, t_eval, damping, body, grav, elements, method,
                     rtol, atol, max_step, wall, progress, rupture, base_t, base_a):
    """Integrate with ``solve_ivp`` in pieces between rupture events (one piece when
    ``rupture`` is False). Returns (pieces, events, stats, success, message)."""
    from segment.solvers.ramp_kernel import _max_ratio

    current = model
    t0, y = 0.0, y0
    pieces, events = [], []
    released = 0.0
    stats = {"nfev": 0, "njev": 0, "nlu": 0, "steps": 0}
    success, message = True, ""
    while True:
        params, packed = current._params, current._packed
        disc_b, lig_b, fac_b = _damping_arrays(current, damping)
        glob, lig = packed[0], packed[1]
        alive = current._carrying

        def fun(t, y_, params=params, packed=packed, disc_b=disc_b, lig_b=lig_b, fac_b=fac_b):
            _report_time(t, t_end, wall, progress)
            return _rhs(t, y_, load_fn(t), params, packed, disc_b, lig_b, fac_b, body, grav,
                        elements, True, base_t, base_a)

        def jac(t, y_, params=params, packed=packed, disc_b=disc_b, lig_b=lig_b, fac_b=fac_b):
            return _jac(t, y_, load_fn(t), params, packed, disc_b, lig_b, fac_b, body, elements,
                        True)

        def strain_event(t, y_, glob=glob, lig=lig, alive=alive):
            return _max_ratio(y_[:6], glob, lig, alive)[0] - 1.0

        strain_event.terminal = True
        strain_event.direction = 1.0
        g0, i0 = _max_ratio(y[:6], glob, lig, alive)
        watch = rupture and elements and i0 >= 0
        if watch and g0 >= 1.0 and pieces:
            # another strip is already at or past eps_max where the last one broke: cascade
            t_e, y_e, i_break = t0, y, i0
        else:
            mask = (t_eval >= t0) if not pieces else (t_eval > t0)
            kwargs = {"jac": jac} if method in IMPLICIT_METHODS else {}
            sol = solve_ivp(fun, (t0, t_end), y, method=method, t_eval=t_eval[mask],
                            rtol=rtol, atol=atol, max_step=max_step, dense_output=True,
                            events=strain_event if watch else None, **kwargs)
            for key in ("nfev", "njev", "nlu"):
                stats[key] += int(getattr(sol, key))
            t_steps = np.asarray(sol.sol.ts) if sol.sol is not None else np.empty(0)
            stats["steps"] += max(len(t_steps) - 1, 0)
            Y_steps = sol.sol(t_steps).T if len(t_steps) else np.empty((0, len(y)))
            Y_out = np.asarray(sol.y, dtype=float).T if len(sol.t) else np.empty((0, len(y)))
            pieces.append(Piece(current, np.asarray(sol.t), Y_out, params, disc_b, lig_b, fac_b,
                                released, t_steps, Y_steps))
            success, message = bool(sol.success), str(sol.message)
            if sol.status != 1:
                break
            t_e, y_e = float(sol.t_events[0][0]), sol.y_events[0][0]
            _, i_break = _max_ratio(y_e[:6], glob, lig, alive)
        name = current.strip_names[i_break]
        released += _released_energy(current, y_e, i_break)
        events.append((t_e, "ruptured", name))
        log.info("simulate: %s ruptured at t = %.6g s", name, t_e)
        current = current.with_ruptured([name])
        t0, y = t_e, np.array(y_e, dtype=float)
    if progress is not None:
        progress(float(pieces[-1].t[-1]) if pieces and len(pieces[-1].t) else t0)
    return pieces, events, stats, success, message, current
