"""Static equilibrium of C5 by Newton-Raphson (the paper's MoStaticEquilibriumFinder).

Solves ``residual(q, load) = 0`` for the six joint coordinates:

* Newton steps with the exact Jacobian of :mod:`segment.elements.tangent` (real arithmetic; the
  facet contact differentiated by dual numbers);
* the residual is scaled by a characteristic force (20 N) and moment (1.8 N m = 1800 N mm), so
  that millimetres and radians mix well; convergence means
  ``max(|F_i| / 20 N, |M_i| / 1800 N mm) <= tol``;
* each step is capped (2 mm, 0.2 rad) and globalised by a backtracking (Armijo) line search on
  ``phi = 0.5 |scaled residual|^2``: the step is halved, or shrunk by ``(phi0/phi)^(1/4)``
  (at least to a tenth) when the trial overshoots sixteen-fold, as it does when a full step
  drives a facet deep into contact;
* when the full load fails from ``q0``, automatic load stepping: the load is applied in
  fractions (halved on failure, doubled on success), each solve warm-started from the last.

The solver never raises for non-convergence and never returns NaN as an answer: the result
carries ``converged``, a ``status`` code and a ``message``, with ``q`` the last finite iterate.

*Failure limits.* ``converged`` means numerically converged. An equilibrium with a facet
dislocated (C5's facet has left C6's, :mod:`segment.elements.facet` item 9) or a ligament stretched
past eps_max (point C of Table 3) is not a plain "converged": its status is
``CONVERGED_BEYOND_LIMITS`` (6), its message names the limits and ``limit_flags`` / ``intact`` let a
program test them. A non-converged result's message says the same of its last iterate, or that no
equilibrium was found with the segment intact.
"""

from __future__ import annotations

import dataclasses
import math
import numbers

import numpy as np

from segment.core.checks import check_start
from segment.core.equilibrium_result import EquilibriumResult
from segment.core.model import Segment
from segment.core.newton import DEFAULT_TOL, MAX_ITERATIONS_LIMIT, TOL_CEILING, TOL_FLOOR
from segment.core.solve import solve_checked
from segment.elements.loads import Load

__all__ = ["solve", "solve_raw"]


def _check_inputs(model, load, tol, max_iterations) -> tuple[float, int]:
    """Type and range checks of :func:`solve`; returns tol and max_iterations as numbers."""
    if not isinstance(model, Segment):
        raise TypeError(f"model must be a segment.Segment, got {type(model).__name__}")
    if not isinstance(load, Load):
        raise TypeError(f"load must be a segment.Load, got {type(load).__name__}")
    return check_tolerances(tol, max_iterations)


def check_tolerances(tol, max_iterations) -> tuple[float, int]:
    """``tol`` in [TOL_FLOOR, TOL_CEILING] and ``max_iterations`` in [1, MAX_ITERATIONS_LIMIT]
    (also used by solve_many). Bools and strings are TypeErrors, not numbers."""
    # exact float / int first: the ABC checks cost ~1 % of a 20 us solve
    if type(tol) is not float and (isinstance(tol, (bool, np.bool_))
                                   or not isinstance(tol, numbers.Real)):
        raise TypeError(f"tol must be a real number, got {type(tol).__name__} {tol!r}")
    if type(max_iterations) is not int and (isinstance(max_iterations, (bool, np.bool_))
                                            or not isinstance(max_iterations, numbers.Integral)):
        raise TypeError(f"max_iterations must be an integer, got "
                        f"{type(max_iterations).__name__} {max_iterations!r}")
    tol_f, n = float(tol), int(max_iterations)
    if not (math.isfinite(tol_f) and tol_f > 0):
        raise ValueError(f"tol must be > 0, got {tol!r}")
    if tol_f < TOL_FLOOR:
        raise ValueError(f"tol must be >= {TOL_FLOOR:g}, got {tol!r}: below it rounding keeps "
                         "the scaled residual from reaching tol (it stalls near 1e-15 to 1e-13 "
                         "at up to 3x the nominal loads)")
    if tol_f > TOL_CEILING:
        raise ValueError(f"tol must be <= {TOL_CEILING:g}, got {tol!r}: a looser tol accepts "
                         "poses that are not equilibria (the unloaded reference pose has scaled "
                         "residual 0.88)")
    if not 1 <= n <= MAX_ITERATIONS_LIMIT:
        raise ValueError(f"max_iterations must be an integer >= 1 and <= "
                         f"{MAX_ITERATIONS_LIMIT}, got {max_iterations!r}")
    return tol_f, n


def solve_raw(model: Segment, load: Load, *, q0=None, tol: float = DEFAULT_TOL,
              max_iterations: int = 60, q_unloaded=None) -> EquilibriumResult:
    """:func:`solve` without looking up the unloaded equilibrium (``q_unloaded`` as given)."""
    tol, max_iterations = _check_inputs(model, load, tol, max_iterations)
    if q_unloaded is not None:
        q_unloaded = np.array(q_unloaded, dtype=float)
        q_unloaded.setflags(write=False)
    return solve_checked(model, load, q0, tol, max_iterations, q_unloaded)


def solve(model: Segment, load: Load, *, q0=None, tol: float = DEFAULT_TOL,
          max_iterations: int = 60) -> EquilibriumResult:
    """Static equilibrium of C5 under ``load``.

    Parameters
    ----------
    model : Segment
    load : Load
    q0 : array_like, shape (6,), optional
        Starting point of Newton and of the load stepping [mm, rad]: translations within
        100 mm and rotations within 90 deg of the reference pose
        (:func:`segment.core.checks.check_start`). Default: Newton from the linear
        predictor ``q_u - K_u^-1 f`` of the unloaded equilibrium (:meth:`Segment.predict_start`)
        and, when that fails, load stepping from the reference pose q = 0; the start of
        :func:`segment.solve_many`, so both find the same equilibria.
    tol : float
        Convergence tolerance on the scaled residual (default 1e-10: 2e-9 N, 1.8e-7 N mm),
        within [TOL_FLOOR, TOL_CEILING] = [1e-12, 1e-3] (see their comment).
    max_iterations : int
        Newton steps per load step, 1 to MAX_ITERATIONS_LIMIT (10,000).

    Returns
    -------
    EquilibriumResult
        ``converged`` False with a ``message`` when no equilibrium was found.

    Examples
    --------
    >>> import segment
    >>> r = segment.solve(segment.c5c6(), segment.LOAD_CASES["FLX"])
    >>> r.converged
    True
    """
    tol, max_iterations = _check_inputs(model, load, tol, max_iterations)
    if q0 is not None:
        _check_q0_range(q0)
    unloaded = model.unloaded
    r = solve_checked(model, load, q0, tol, max_iterations,
                      unloaded.q if unloaded.converged else None, predict=True)
    if not math.isfinite(r.residual_norm):      # never NaN in a result: no residual there
        r = dataclasses.replace(r, residual_norm=math.inf)
    return r


def _check_q0_range(q0) -> None:
    """A start within :data:`segment.core.checks.START_TRANSLATION` and ``START_ANGLE``
    (after ``solve_checked``'s own checks of its type and shape, which run first)."""
    q = np.asarray(q0)
    if q.dtype.kind in "iuf" and q.shape == (6,) and np.all(np.isfinite(q)):
        check_start(q, "q0")
