"""Dynamic relaxation: the static equilibrium reached by simulating until C5 settles.

The paper's MADYMO model reached each equilibrium by simulating the motion of C5 until it
settled (DETC2000/MECH-6821, "Madymo Model": 5.7 s per run on a 175 MHz MIPS R10000); the
MOBILE model solved the static equilibrium by Newton-Raphson, 350 times faster. :func:`relax`
is that dynamic baseline, built on the same equations of motion as :func:`segment.simulate`.
"""

from __future__ import annotations

import logging
import numbers
import time
from dataclasses import dataclass

import numpy as np
from scipy.integrate import Radau

from segment.core.io import BodyInertia
from segment.core.model import Segment
from segment.core.newton import FORCE_SCALE_N, MOMENT_SCALE_NMM, norm_phi
from segment.core.residual import residual_real
from segment.elements.loads import Load
from segment.solvers.dynamics.equations import _inertia_array, _initial, _jac, _rhs
from segment.solvers.dynamics.forces import _damping_arrays

__all__ = ["RELAX_TOL", "RelaxationResult", "relax"]

log = logging.getLogger("segment.solvers.dynamics")

RELAX_TOL = 1e-6
"""Default settling tolerance of :func:`relax` (scaled residual and scaled damping force)."""
_SCALE = np.array([FORCE_SCALE_N] * 3 + [MOMENT_SCALE_NMM] * 3)


@dataclass(frozen=True, eq=False)
class RelaxationResult:
    """Outcome of :func:`relax`.

    Attributes
    ----------
    q : ndarray, shape (6,)
        Settled pose [mm, rad] (the last state when not settled).
    converged : bool
        The settling criterion was met before ``t_max``.
    t_settled : float
        Simulated time at which it was met [s].
    steps, nfev, njev : int
        Integrator steps, right-hand side and Jacobian evaluations.
    residual_norm : float
        Scaled static residual ``max(|F_i| / 20 N, |M_i| / 1800 N mm)`` at ``q``.
    damping_norm : float
        Scaled disc damping force ``max(b_i |dq_i/dt| / scale_i)`` at the end.
    message : str
    """

    q: np.ndarray
    converged: bool
    t_settled: float
    steps: int
    nfev: int
    njev: int
    residual_norm: float
    damping_norm: float
    message: str

    def __repr__(self) -> str:
        return f"RelaxationResult({self.message})"


def relax(model: Segment, load: Load, *, tol: float = RELAX_TOL, t_max: float = 20.0,
          q0=None, inertia: BodyInertia | None = None, rtol: float = 1e-3,
          atol: float = 1e-6, first_step: float = 1e-5) -> RelaxationResult:
    """Static equilibrium by dynamic relaxation: the MADYMO-style baseline.

    C5 starts at rest at ``q0`` (default the reference pose q = 0, where Newton starts too),
    ``load`` is applied as a step, and eq. (D1) with all of the paper's damping is integrated
    (Radau, our Jacobian) until the motion has settled, checked after every step::

        max(|F_i| / 20 N, |M_i| / 1800 N mm) <= tol     (static residual, as segment.solve)
        max(b_i |dq_i/dt| / scale_i)          <= tol     (disc damping force of the motion)

    The settled pose satisfies the static equations to ``tol`` by construction, whatever the
    integrator tolerances; ``rtol`` and ``atol`` only set how faithfully the path is followed
    (loose by default: the baseline is timed, and a faster baseline is the fair comparison).

    Parameters
    ----------
    model : Segment
    load : Load
    tol : float
        Settling tolerance (default 1e-6, i.e. 2e-5 N and 1.8e-3 N mm).
    t_max : float
        Give up after this much simulated time [s].
    q0 : array_like, shape (6,), optional
    inertia : BodyInertia, optional
    rtol, atol : float
        Integrator tolerances.
    first_step : float
        First integrator step [s].

    Returns
    -------
    RelaxationResult
        Never raises for a motion that does not settle: ``converged`` is False with a message.
    """
    if not isinstance(model, Segment):
        raise TypeError(f"model must be a segment.Segment, got {type(model).__name__}")
    if not isinstance(load, Load):
        raise TypeError(f"load must be a segment.Load, got {type(load).__name__}")
    for name, value in (("tol", tol), ("t_max", t_max), ("rtol", rtol), ("atol", atol),
                        ("first_step", first_step)):
        if not (isinstance(value, numbers.Real) and np.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    q0, _ = _initial(q0, None)
    params = model._params
    packed = model._packed
    f = load.as_array()
    disc_b, lig_b, fac_b = _damping_arrays(model, True)
    iner = _inertia_array(inertia, model)
    vel_scale = disc_b / _SCALE

    no_t, no_a = np.zeros(0), np.zeros((0, 3))     # C6 fixed

    def fun(t, y):
        return _rhs(t, y, f, params, packed, disc_b, lig_b, fac_b, iner, 0.0, True, False,
                    no_t, no_a)

    def jac(t, y):
        return _jac(t, y, f, params, packed, disc_b, lig_b, fac_b, iner, True, False)

    solver = Radau(fun, 0.0, np.concatenate([q0, np.zeros(6)]), float(t_max), jac=jac,
                   rtol=rtol, atol=atol, first_step=first_step)
    steps = 0
    converged = False
    message = ""
    wall = time.perf_counter()
    while solver.status == "running":
        try:
            msg = solver.step()
        except np.linalg.LinAlgError as exc:      # a status, never a raw LinAlgError
            message = (f"integrator failed at t = {solver.t:.4g} s: singular matrix ({exc}); "
                       "the mass matrix of the joint coordinates is singular where cos(phi_y) "
                       f"= 0, and C5 has rotated to phi_y = {np.degrees(solver.y[4]):.4g} deg")
            break
        steps += 1
        if solver.status == "failed":
            message = f"integrator failed: {msg}"
            break
        y = solver.y
        damp = float(np.max(np.abs(y[6:12] * vel_scale)))
        if damp <= tol:
            if norm_phi(residual_real(y[:6], f, packed))[0] <= tol:
                converged = True
                solver.status = "finished"
                break
        if time.perf_counter() - wall > 5.0:
            wall = time.perf_counter()
            log.info("relax %s: t = %.4g s, %d steps", load.name, solver.t, steps)
    y = solver.y
    res = float(norm_phi(residual_real(y[:6], f, packed))[0])
    damp = float(np.max(np.abs(y[6:12] * vel_scale)))
    if converged:
        message = f"settled at t = {solver.t:.4g} s after {steps} steps"
    elif not message:
        message = (f"not settled by t = {t_max:g} s: residual {res:.1e}, damping force "
                   f"{damp:.1e} (scaled), tolerance {tol:.1e}")
    return RelaxationResult(q=y[:6].copy(), converged=converged, t_settled=float(solver.t),
                            steps=steps, nfev=int(solver.nfev), njev=int(solver.njev),
                            residual_norm=res, damping_norm=damp, message=message)


