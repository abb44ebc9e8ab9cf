"""``simulate``: the motion of C5 on C6 under a load history (checks inputs, then integrates).

The integration itself is in :mod:`segment.solvers.dynamics.radau` (scipy's ``solve_ivp``,
Radau by default); the equations of motion in :mod:`segment.solvers.dynamics.equations`; the
energy bookkeeping in :mod:`segment.solvers.dynamics.energy`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from segment.core.io import BodyInertia
from segment.core.model import Segment
from segment.solvers.dynamics.equations import (
    _N_ENERGY,
    GRAVITY_MM_S2,
    _inertia_array,
    _initial,
)
from segment.solvers.dynamics.forces import _load_function
from segment.solvers.dynamics.radau import _simulate_with_rupture, _simulate_without_rupture
from segment.solvers.dynamics.result import SimulationResult

__all__ = ["simulate"]


def simulate(model: Segment, load=None, *, t_end: float, ramp: float = 0.0,
             q0=None, qd0=None, inertia: BodyInertia | None = None, gravity: bool = False,
             elements: bool = True, damping: bool = True, method: str = "Radau",
             rtol: float = 1e-6, atol: float = 1e-9, n_output: int = 201,
             max_step: float = np.inf, rupture: bool = True,
             progress: Callable[[float], None] | None = None) -> SimulationResult:
    """Simulate the motion of C5 under a load history, eq. (D1).

    Parameters
    ----------
    model : Segment
        Force elements; their damping (``disc.damping``, ``Ligament.damping``,
        ``contact_law.damping``) is used unless ``damping=False``.
    load : Load, callable or None
        A :class:`~segment.loads.Load` applied as a step at t = 0 (or ramped over ``ramp``
        seconds), or a function ``t [s] -> Load`` or ``-> (Fx, Fy, Fz, Mx, My, Mz)``
        [N, N mm]; None for no load.
    t_end : float
        End time [s].
    ramp : float
        Ramp duration [s] for a :class:`Load` (0: step).
    q0, qd0 : array_like, shape (6,), optional
        Initial coordinates [mm, rad] and rates [mm/s, rad/s] (default: at rest at q = 0,
        the reference pose).
    inertia : BodyInertia, optional
        Mass, inertia and centre of gravity of C5 (default: ``model.inertia``, which
        :func:`segment.c5c6` reads from Table 1 of its data folder).
    gravity : bool
        Add gravity, 9810 mm/s^2 along -z of C6.
    elements : bool
        False switches every force element off (a free rigid body; loads still act).
    damping : bool
        False leaves out every damping term.
    method : str
        ``"Radau"`` or ``"BDF"`` (implicit, with our Jacobian), or any other
        :func:`scipy.integrate.solve_ivp` method.
    rtol, atol : float
        Integrator tolerances (atol on mm, rad, mm/s, rad/s and the energy integrals).
    n_output : int
        Number of equally spaced output times.
    max_step : float
        Largest integrator step [s].
    rupture : bool
        Ligament strips rupture (True, default): a strip whose strain reaches eps_max (its
        elastic force F_max, point C of Table 3) breaks at that instant and carries nothing
        afterwards. Event detection, no hidden state: the integration stops at the event
        (a terminal root of ``max_i eps_i / eps_max,i - 1``), the strip joins the model's
        ``ruptured`` set and the integration restarts from the state at the event. The
        events and the final model are in the result; the elastic energy the strip held is
        booked as released by the fracture in the energy balance (D2). False: the published
        curves continue past C.
    progress : callable, optional
        Called with the simulated time reached so far [s] (non-decreasing, at most about ten
        times a second of wall time), e.g. to advance a progress bar.

    Returns
    -------
    SimulationResult
    """
    if not isinstance(model, Segment):
        raise TypeError(f"model must be a segment.Segment, got {type(model).__name__}")
    if not (np.isfinite(t_end) and t_end > 0):
        raise ValueError(f"t_end must be > 0 [s], got {t_end!r}")
    if int(n_output) < 2:
        raise ValueError(f"n_output must be >= 2, got {n_output!r}")
    load_fn, _ = _load_function(load, ramp)
    q0, qd0 = _initial(q0, qd0)
    iner = _inertia_array(inertia, model)
    grav = GRAVITY_MM_S2 if gravity else 0.0
    y0 = np.concatenate([q0, qd0, np.zeros(_N_ENERGY)])
    wall = [time.perf_counter(), time.perf_counter(), 0.0]   # last log, last progress, max t
    t_eval = np.linspace(0.0, float(t_end), int(n_output))
    if not rupture:
        return _simulate_without_rupture(model, load_fn, y0, float(t_end), t_eval, damping,
                                         iner, grav, elements, method, rtol, atol, max_step,
                                         wall, progress)
    return _simulate_with_rupture(model, load_fn, y0, float(t_end), t_eval, damping, iner,
                                  grav, elements, method, rtol, atol, max_step, wall, progress)
