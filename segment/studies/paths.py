"""Equilibria along a load path by continuation, for many parameter sets, with exact
sensitivities: the forward model of a measured curve (:mod:`segment.studies.curves`).

A specimen curve is a sequence of equilibria under increasing loads ``f_1, ..., f_n`` along one
direction. Each is solved by Newton from the previous one moved by a predictor: the secant
through the two previous equilibria (no Jacobian), or for the first point, and where Newton
fails from the secant, the tangent (first-order continuation)::

    q_start = q_{k-1} + s (q_{k-1} - q_{k-2}),   s = |f_k - f_{k-1}| / |f_{k-1} - f_{k-2}|
    J(q_{k-1}) dq = -(f_k - f_{k-1}),     q_start = q_{k-1} + dq              (Euler predictor)

with ``J = dR/dq`` the exact Jacobian of :mod:`segment.elements.tangent`. When Newton fails
from there (a facet coming into contact, a ligament taking up its slack), or converges after
a jump larger than :data:`MAX_JUMP_RAD` or :data:`MAX_JUMP_MM` (another equilibrium branch),
the increment is halved, up to :data:`MAX_HALVINGS` times, and the sub-steps walked; if even
that fails the point is solved as :func:`segment.solve` solves it (Newton, then load stepping
from the reference pose), and the path goes on from whatever it found. Each set's path starts at its
unloaded equilibrium (Newton from the reference pose, load stepping if needed).

With ``sensitivities`` the exact dq*/dp of every equilibrium the caller asks for (``want``) and
of the unloaded one (:func:`segment.studies.sensitivity._equilibrium_sensitivity`, the implicit
function theorem with the solver's Jacobian): what the curve calibration's least squares
uses. Sets run in parallel (``prange``) in one compiled launch through
:func:`segment.solvers.batch.launch`.

Why not :func:`segment.studies.sets.solve_sets`: it solves every load from the nominal set's
equilibrium moved by first-order sensitivities, which is a good start near the nominal set.
Specimen-specific sets lie far from any nominal set (rotations several times the published
model's), and along a curve the previous point is the better start
(``benchmarks/bench_curves.py`` measures both).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from segment.core.failure_limits import beyond_limits
from segment.core.lu6 import lu6_factor, lu6_solve
from segment.core.newton import (
    CONVERGED,
    CONVERGED_BEYOND_LIMITS,
    DEFAULT_TOL,
    newton_kernel,
    solve_kernel_from,
)
from segment.core.residual import residual_jacobian
from segment.core.status import CONVERGED_STATUSES
from segment.elements.restraint import P_WIDTH
from segment.jit import njit, prange
from segment.solvers.batch import launch
from segment.solvers.equilibrium import check_tolerances
from segment.studies.packing import pack_plan
from segment.studies.sensitivity import _equilibrium_sensitivity, touch_flags

__all__ = ["MAX_HALVINGS", "MAX_JUMP_MM", "MAX_JUMP_RAD", "PathResult", "solve_packed",
           "solve_paths", "touch_of"]

MAX_HALVINGS = 6
"""Halvings of a continuation increment before the point is solved from scratch (1/64 of
one step)."""
MAX_JUMP_RAD = 0.1
MAX_JUMP_MM = 2.0
"""Largest change of a rotation [rad] or translation [mm] accepted in one continuation
sub-step; a larger one is taken for a jump to another equilibrium branch and the step is
halved. Measured: from the unloaded pose straight to 0.5 N m in flexion, a neutral-zone set
with tight ligaments converged at 190 deg of flexion (a configuration past every failure
limit) and the curve's cost jumped between parameter sets 1e-4 apart; a curve that is
continuous moves far less per halved sub-step (the zone, the most compliant part, turns
about 0.01 rad per 1/64 of a 0.5 N m step)."""


@njit
def _tangent_start(q, f_prev, f, packed, out):
    """``out = q - J(q)^-1 (f - f_prev)``, the Euler predictor; False when J is singular or
    the step is not finite (then ``out = q``)."""
    _, J = residual_jacobian(q, f_prev, packed)
    a, piv, ok = lu6_factor(J)
    for c in range(6):
        out[c] = q[c]
    if not ok:
        return False
    dq = np.empty((6, 1))
    for c in range(6):
        dq[c, 0] = -(f[c] - f_prev[c])
    lu6_solve(a, piv, dq)
    for c in range(6):
        if not math.isfinite(dq[c, 0]):
            return False
    for c in range(6):
        out[c] = q[c] + dq[c, 0]
    return True


@njit
def _secant_start(q, f_prev, f, q_back, f_back, out):
    """``out = q + s (q - q_back)`` with ``s`` the load step over the previous one (loads
    along one direction): the secant predictor, no Jacobian. False when the previous step is
    zero."""
    num = 0.0
    den = 0.0
    for c in range(6):
        a = f_prev[c] - f_back[c]
        num += (f[c] - f_prev[c]) * a
        den += a * a
    if not den > 0.0:
        return False
    ratio = num / den
    for c in range(6):
        out[c] = q[c] + ratio * (q[c] - q_back[c])
    return True


@njit
def _jumped(q_from, q_to):
    """True when one sub-step moved a coordinate by more than :data:`MAX_JUMP_RAD` or
    :data:`MAX_JUMP_MM`."""
    for c in range(6):
        limit = MAX_JUMP_MM if c < 3 else MAX_JUMP_RAD
        if abs(q_to[c] - q_from[c]) > limit:
            return True
    return False


@njit
def _continue(packed, q_prev, f_prev, f, q_back, f_back, has_back, tol, max_iterations,
              sub_log, log_buf):
    """One continuation step from the equilibrium ``q_prev`` under ``f_prev`` to ``f``:
    ``(q, status, iterations)`` (module docstring). With ``has_back`` (the equilibrium
    ``q_back`` under ``f_back`` before it) the first try starts from the secant predictor,
    which needs no Jacobian; when that Newton fails, from the tangent one."""
    q0 = np.empty(6)
    fa = f_prev.copy()
    qa = q_prev.copy()
    frac = 0.0
    step = 1.0
    its = 0
    halvings = 0
    fb = np.empty(6)
    secant = has_back
    while frac < 1.0:
        target = min(1.0, frac + step)
        for c in range(6):
            fb[c] = f_prev[c] + target * (f[c] - f_prev[c])
        if not (secant and _secant_start(qa, fa, fb, q_back, f_back, q0)):
            secant = False
            _tangent_start(qa, fa, fb, packed, q0)
        q, st, _, n = newton_kernel(packed, fb, q0, tol, max_iterations, sub_log)
        its += n
        if st == CONVERGED and not _jumped(qa, q):
            qa = q
            fa = fb.copy()
            frac = target
            step = min(2.0 * step, 1.0 - frac) if frac < 1.0 else step
            secant = False
            continue
        if secant:            # the same step again from the tangent predictor
            secant = False
            continue
        halvings += 1
        if halvings > MAX_HALVINGS:
            break
        step *= 0.5
    if frac >= 1.0:
        return qa, CONVERGED, its
    zero = np.zeros(6)
    q, st, _, _, n, _ = solve_kernel_from(packed, f, qa, zero, tol, max_iterations, log_buf)
    return q, st, its + n


@njit(parallel=True)
def _path_kernel(glob, lig, fac, pts, F, want, tol, max_iterations, with_sens, dglob, dlig,
                 dfac, touch, q_u, st_u, dq_u, q_out, st_out, it_out, dq_out):
    """Every set's unloaded equilibrium, then the path ``F[0], F[1], ...`` (N, 6) by
    continuation from it (module docstring); sensitivities where ``want[j]`` (and of the
    unloaded one) when ``with_sens``."""
    m_sets = glob.shape[0]
    n_loads = F.shape[0]
    for i in prange(m_sets):
        packed = (glob[i], lig[i], fac[i], pts)   # the point restraints: the model's own
        zero = np.zeros(6)
        log_buf = np.zeros((5 * max_iterations, 3))
        sub_log = np.zeros((max_iterations, 2))
        lig_flags = np.empty(lig.shape[1], dtype=np.bool_)
        fac_flags = np.empty(fac.shape[1], dtype=np.bool_)
        q, st, _, _, _, _ = solve_kernel_from(packed, zero, zero, zero, tol, max_iterations,
                                               log_buf)
        q_u[i] = q
        st_u[i] = st
        if st == CONVERGED and beyond_limits(q, packed, lig_flags, fac_flags):
            st_u[i] = CONVERGED_BEYOND_LIMITS
        if with_sens:
            if st == CONVERGED:
                _, J = residual_jacobian(q, zero, packed)
                _equilibrium_sensitivity(q, J, packed, dglob[i], dlig[i], dfac[i], touch,
                                         dq_u[i])
            else:
                dq_u[i] = np.nan
        q_prev = q.copy()
        f_prev = zero
        q_back = q.copy()
        f_back = zero
        has_back = False
        for j in range(n_loads):
            f = F[j]
            q, st, its = _continue(packed, q_prev, f_prev, f, q_back, f_back, has_back, tol,
                                   max_iterations, sub_log, log_buf)
            q_out[i, j] = q
            it_out[i, j] = its
            st_out[i, j] = st
            if st == CONVERGED:
                if beyond_limits(q, packed, lig_flags, fac_flags):
                    st_out[i, j] = CONVERGED_BEYOND_LIMITS
                q_back = q_prev
                f_back = f_prev
                q_prev = q.copy()
                f_prev = f
                has_back = True
            else:
                has_back = False
            if with_sens and want[j]:
                if st == CONVERGED:
                    _, J = residual_jacobian(q, f, packed)
                    _equilibrium_sensitivity(q, J, packed, dglob[i], dlig[i], dfac[i], touch,
                                             dq_out[i, j])
                else:
                    dq_out[i, j] = np.nan


@dataclass(frozen=True, eq=False)
class PathResult:
    """Equilibria of M parameter sets along one load path of N loads.

    Attributes
    ----------
    q : ndarray (M, N, 6)
        Equilibria [mm, rad] (the last iterate where not converged; never NaN).
    status : ndarray of int (M, N)
        Codes of :class:`~segment.core.status.Status` (0 converged, 6 converged past a
        failure limit).
    iterations : ndarray of int (M, N)
        Newton iterations of each point (continuation sub-steps included).
    q_unloaded : ndarray (M, 6)
    status_unloaded : ndarray of int (M,)
    dq_dp : ndarray (M, N, 6, D) or None
        Exact sensitivities where asked (``want``), NaN elsewhere and where a solve failed.
    dq_unloaded_dp : ndarray (M, 6, D) or None
    """

    q: np.ndarray
    status: np.ndarray
    iterations: np.ndarray
    q_unloaded: np.ndarray
    status_unloaded: np.ndarray
    dq_dp: np.ndarray | None
    dq_unloaded_dp: np.ndarray | None

    @property
    def converged(self) -> np.ndarray:
        """(M, N): the point and the set's unloaded equilibrium converged numerically."""
        ok = CONVERGED_STATUSES
        return np.isin(self.status, ok) & np.isin(self.status_unloaded, ok)[:, None]

    @property
    def displacement(self) -> np.ndarray:
        """(M, N, 6): q minus the set's unloaded equilibrium [mm, rad]."""
        return self.q - self.q_unloaded[:, None, :]

    @property
    def displacement_dp(self) -> np.ndarray | None:
        """(M, N, 6, D): the derivative of :attr:`displacement` by the parameters."""
        if self.dq_dp is None:
            return None
        return self.dq_dp - self.dq_unloaded_dp[:, None]


def solve_paths(model, F, *, space=None, P=None, want=None, sensitivities: bool = False,
                tol: float = DEFAULT_TOL, max_iterations: int = 60,
                n_threads: int | None = None) -> PathResult:
    """Equilibria along the load path ``F`` for parameter sets ``P`` over ``space`` (or for
    ``model`` itself when ``space`` is None), by continuation.

    Parameters
    ----------
    model : Segment
        The base model (the space's parameters are applied to it).
    F : array_like (N, 6)
        Load vectors [N, N mm] in path order (e.g. increasing moment).
    space : ParameterSpace, optional
        With ``P``: the parameter sets' space. None: the model alone (M = 1).
    P : array_like (M, D), optional
    want : array_like of bool (N,), optional
        Points whose sensitivities are wanted (default all); others only carry the path.
    sensitivities : bool
        Exact dq*/dp (needs ``space``).
    tol, max_iterations
        As :func:`segment.solve`.
    n_threads : int, optional
        Threads of the launch (default numba's).

    Returns
    -------
    PathResult

    Examples
    --------
    >>> import numpy as np, segment
    >>> from segment.studies.paths import solve_paths
    >>> F = np.zeros((4, 6)); F[:, 4] = [500.0, 1000.0, 1500.0, 1800.0]   # flexion, N mm
    >>> r = solve_paths(segment.c5c6(), F)
    >>> bool(r.converged.all()), round(float(np.degrees(r.displacement[0, -1, 4])), 2)
    (True, 2.57)
    """
    tol, max_iterations = check_tolerances(tol, max_iterations)
    F = np.ascontiguousarray(np.asarray(F, dtype=float).reshape(-1, 6))
    if not np.all(np.isfinite(F)):
        raise ValueError("path loads must be finite")
    n_loads = F.shape[0]
    want = (np.ones(n_loads, dtype=np.bool_) if want is None
            else np.ascontiguousarray(np.asarray(want, dtype=np.bool_)))
    if want.shape != (n_loads,):
        raise ValueError(f"want must have shape ({n_loads},), got {want.shape}")
    if space is None:
        if sensitivities:
            raise ValueError("sensitivities need a parameter space")
        packed = tuple(x[None] for x in model._packed[:3])
        derivative = None
    else:
        P = space.check(P)
        packed = space.pack(model, P)
        derivative = (space.pack_derivative(model, P, n_threads=n_threads), touch_of(space, model)
                      ) if sensitivities else None
    return solve_packed(packed, F, want=want, derivative=derivative, tol=tol,
                        max_iterations=max_iterations, n_threads=n_threads,
                        pts=model._packed[3])


_TOUCH: dict = {}


def touch_of(space, model) -> np.ndarray:
    """The element flags of :func:`segment.studies.sensitivity.touch_flags` for the space's
    plan on the model (the same for every set; cached with the plan)."""
    plan = pack_plan(space, model)
    hit = _TOUCH.get(id(plan))
    if hit is None or hit[0] is not plan:
        hit = (plan, touch_flags(*plan.moved))
        if len(_TOUCH) > 32:
            _TOUCH.clear()
        _TOUCH[id(plan)] = hit
    return hit[1]


def solve_packed(packed, F, *, want=None, derivative=None, tol: float = DEFAULT_TOL,
                 max_iterations: int = 60, n_threads: int | None = None,
                 pts=None) -> PathResult:
    """:func:`solve_paths` on sets already packed: ``packed = (glob (M, G), lig (M, n, 13),
    fac (M, m, 16))`` (:meth:`ParameterSpace.pack`), ``derivative = ((dglob, dlig, dfac),
    touch)`` for the sensitivities (None: none), ``pts`` the model's point restraints
    (``Segment._packed[3]``, shared by every set; None: none). The loads ``F`` (N, 6) and
    ``want`` (N,) as there; no checks (the caller's)."""
    glob, lig, fac = packed[:3]
    pts = (np.zeros((0, P_WIDTH)) if pts is None
           else np.ascontiguousarray(pts, dtype=float).reshape(-1, P_WIDTH))
    F = np.ascontiguousarray(F, dtype=float)
    n_loads = F.shape[0]
    want = (np.ones(n_loads, dtype=np.bool_) if want is None
            else np.ascontiguousarray(want, dtype=np.bool_))
    m_sets = glob.shape[0]
    sensitivities = derivative is not None
    if sensitivities:
        (dglob, dlig, dfac), touch = derivative
        d = dglob.shape[1]
        dq = np.empty((m_sets, n_loads, 6, d))
        dq_u = np.empty((m_sets, 6, d))
    else:
        dglob = np.zeros((1, 1, glob.shape[1]))
        dlig = np.zeros((1, 1, *lig.shape[1:]))
        dfac = np.zeros((1, 1, *fac.shape[1:]))
        touch = np.zeros((1, 2 + lig.shape[1] + fac.shape[1]), dtype=np.int8)
        dq = np.zeros((1, 1, 6, 1))
        dq_u = np.zeros((1, 6, 1))
    q = np.empty((m_sets, n_loads, 6))
    st = np.empty((m_sets, n_loads), dtype=np.int64)
    it = np.zeros((m_sets, n_loads), dtype=np.int64)
    q_u = np.empty((m_sets, 6))
    st_u = np.empty(m_sets, dtype=np.int64)
    launch(_path_kernel, np.ascontiguousarray(glob), np.ascontiguousarray(lig),
           np.ascontiguousarray(fac), pts, F, want, tol, max_iterations, sensitivities, dglob,
           dlig, dfac, touch, q_u, st_u, dq_u, q, st, it, dq, n_threads=n_threads)
    if sensitivities:
        dq[:, ~want] = np.nan
    return PathResult(q=q, status=st, iterations=it, q_unloaded=q_u, status_unloaded=st_u,
                      dq_dp=dq if sensitivities else None,
                      dq_unloaded_dp=dq_u if sensitivities else None)

