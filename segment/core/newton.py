"""The compiled Newton iteration of the static equilibrium and its result.

The numerical core of :func:`segment.solve` (the method is described in
:mod:`segment.solvers.equilibrium`): the kernels work on a model's packed arrays and a load vector,
and :class:`EquilibriumResult` wraps what they return. Kept apart from the checked public API so
that :class:`~segment.core.model.Segment` can find its own unloaded equilibrium without importing
:mod:`segment.solvers.equilibrium` (which imports the Segment class).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from segment.core.residual import _predict_row, _residual, _residual_jacobian
from segment.elements.disc import DOF_NAMES
from segment.elements.facet import DISLOCATED, _contact, _contact_force
from segment.elements.kinematics import cardan_xyz, pose
from segment.elements.loads import Load
from segment.elements.tangent import (
    F_BLEND,
    F_C1,
    F_C2,
    F_N1,
    F_N2,
    F_R1,
    F_R2,
    F_SCALE,
    G_LAW,
    G_R0,
    G_S0,
    L_A,
    L_B,
    L_EPS,
    L_F,
    L_L0,
    _axes,
    _rows3,
)
from segment.elements.vec import add, dot, mat_vec, sub
from segment.jit import njit

if TYPE_CHECKING:
    import pandas as pd

    from segment.core.model import Segment, SegmentState

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

(CONVERGED, MAX_ITERATIONS, LINE_SEARCH_FAILED, LOAD_STEPPING_FAILED, NOT_FINITE,
 SINGULAR_JACOBIAN, CONVERGED_BEYOND_LIMITS) = range(7)
STATUS_TEXT = ("converged", "iteration limit reached", "line search failed",
               "load stepping could not advance", "non-finite residual or step",
               "singular Jacobian", "converged beyond the failure limits")
CONVERGED_STATUSES = (CONVERGED, CONVERGED_BEYOND_LIMITS)
_NO_PREDICTOR = (False, np.zeros(6), np.zeros((6, 6)))
"""Statuses of a numerically converged solve (``converged`` True): the second one has a
dislocated facet or a ligament past eps_max at its equilibrium (see ``limit_flags``)."""


@dataclass(frozen=True)
class IterationRecord:
    """One Newton step: load fraction, scaled residual norm before the step, step length."""

    iteration: int
    load_fraction: float
    residual_norm: float
    step_length: float


@njit
def _norm_phi(r):
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
def _lu6(J):
    """LU factors of the (6, 6) Jacobian by Gaussian elimination with partial pivoting.

    Returns ``(a, piv, ok)``: ``a`` holds U on and above the diagonal and the multipliers of L
    below it, ``piv[k]`` the row swapped with row k at step k; ``ok`` is False when a pivot is
    exactly zero (singular, as LAPACK's dgetrf reports it). Written out because LAPACK's call
    overhead dominates at this size. One factorisation serves any number of right-hand sides
    (:func:`_lu6_solve`): the Newton step (:func:`_solve6`) and the D parameter columns of
    the sensitivities (:mod:`segment.studies.sensitivity`).
    """
    n = 6
    a = J.copy()
    piv = np.empty(n, dtype=np.int64)
    for k in range(n):
        p = k
        big = abs(a[k, k])
        for i in range(k + 1, n):
            if abs(a[i, k]) > big:
                big = abs(a[i, k])
                p = i
        piv[k] = p
        if big == 0.0:
            return a, piv, False
        if p != k:   # columns k on: the multipliers of earlier steps stay where they were
            for j in range(k, n):    # made, as :func:`_lu6_solve` replays the steps in order
                a[k, j], a[p, j] = a[p, j], a[k, j]
        for i in range(k + 1, n):
            factor = a[i, k] / a[k, k]
            a[i, k] = factor
            if factor != 0.0:
                for j in range(k + 1, n):
                    a[i, j] -= factor * a[k, j]
    return a, piv, True


@njit
def _lu6_solve(a, piv, x):
    """Overwrite ``x`` (6, k) with ``J^{-1} x`` from the factors of :func:`_lu6`.

    Row swaps and eliminations are applied in the order of the factorisation, so a single
    column gives bit for bit the numbers of eliminating it alongside the matrix.
    """
    n = 6
    nd = x.shape[1]
    for k in range(n):
        p = piv[k]
        if p != k:
            for j in range(nd):
                x[k, j], x[p, j] = x[p, j], x[k, j]
        for i in range(k + 1, n):
            factor = a[i, k]
            if factor != 0.0:
                for j in range(nd):
                    x[i, j] -= factor * x[k, j]
    for k in range(n - 1, -1, -1):
        for j in range(nd):
            s = x[k, j]
            for m in range(k + 1, n):
                s -= a[k, m] * x[m, j]
            x[k, j] = s / a[k, k]


@njit
def _solve6(J, b):
    """``J^{-1} b`` for the (6, 6) Jacobian (:func:`_lu6`, :func:`_lu6_solve`).

    Returns ``(x, ok)``; ``ok`` is False when a pivot is exactly zero (singular).
    """
    x = b.copy()
    a, piv, ok = _lu6(J)
    if ok:
        _lu6_solve(a, piv, x.reshape((6, 1)))
    return x, ok


@njit
def _newton_kernel(packed, f, q0, tol, max_iterations, log):
    """Newton with capped steps and Armijo backtracking at one load vector ``f``.

    Writes (scaled residual norm before the step, step length) per iteration into ``log``
    (shape (max_iterations, 2)) and returns ``(q, status, residual norm, iterations)``.
    """
    q = q0.copy()
    r, J = _residual_jacobian(q, f, packed)
    norm, phi0 = _norm_phi(r)
    damped = False
    prev_norm = 0.0          # no prediction before the first step
    for it in range(max_iterations):
        if not math.isfinite(norm):
            return q, NOT_FINITE, norm, it
        if norm <= tol:
            return q, CONVERGED, norm, it
        dq, ok = _solve6(J, -r)
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
            r_try = _residual(q_try, f, packed)
            J_try = J
            have_jacobian = False
        else:
            r_try, J_try = _residual_jacobian(q_try, f, packed)
            have_jacobian = True
        while True:
            norm_try, phi = _norm_phi(r_try)
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
            r_try = _residual(q_try, f, packed)
            have_jacobian = False
        if not have_jacobian:
            if norm_try <= tol:     # converged: no Jacobian needed
                log[it, 0] = norm
                log[it, 1] = alpha
                return q_try, CONVERGED, norm_try, it + 1
            r_try, J_try = _residual_jacobian(q_try, f, packed)
            norm_try, phi = _norm_phi(r_try)
        damped = alpha < 1.0
        prev_norm = norm
        log[it, 0] = norm
        log[it, 1] = alpha
        q, r, J, norm, phi0 = q_try, r_try, J_try, norm_try, phi
    return q, (CONVERGED if norm <= tol else MAX_ITERATIONS), norm, max_iterations


@njit
def _beyond_limits(q, packed, lig_out, fac_out):
    """Mark the failure limits at ``q``; returns True when any is reached.

    ``lig_out[i]``: ligament i past eps_max, the strain of point C (Table 3); ``fac_out[j]``:
    facet j dislocated (regime ``dislocated`` of :mod:`segment.elements.facet`, item 9). A strip row
    that carries nothing (F_max = 0: cut through surgically or ruptured) is never flagged
    here: a cut strip is no failure, and a ruptured one is flagged by the caller
    (:func:`_solve_checked`, ``Segment.ruptured``).
    """
    return _limits_and_facet_forces(q, packed, lig_out, fac_out,
                                    np.empty(packed[2].shape[0]))


@njit
def _limits_and_facet_forces(q, packed, lig_out, fac_out, force_out):
    """:func:`_beyond_limits`, and the contact force magnitude [N] of each facet joint into
    ``force_out`` from the same contact evaluation (the residual's facet term: the force of
    the penetration ``u``, zero when apart)."""
    glob, lig, fac = packed[0], packed[1], packed[2]
    R0 = ((glob[G_R0], glob[G_R0 + 1], glob[G_R0 + 2]),
          (glob[G_R0 + 3], glob[G_R0 + 4], glob[G_R0 + 5]),
          (glob[G_R0 + 6], glob[G_R0 + 7], glob[G_R0 + 8]))
    law = (glob[G_LAW], glob[G_LAW + 1], glob[G_LAW + 2], glob[G_LAW + 3])
    R, _, _ = _axes(q, R0)
    p = add((glob[G_S0], glob[G_S0 + 1], glob[G_S0 + 2]), mat_vec(R0, (q[0], q[1], q[2])))
    any_flag = False
    for i in range(lig.shape[0]):
        d = sub(_rows3(lig, i, L_B), add(p, mat_vec(R, _rows3(lig, i, L_A))))
        strain = (math.sqrt(dot(d, d)) - lig[i, L_L0]) / lig[i, L_L0]
        lig_out[i] = strain > lig[i, L_EPS + 2] and lig[i, L_F + 2] != 0.0
        any_flag = any_flag or lig_out[i]
    zc = 0j
    for i in range(fac.shape[0]):
        c = add(p, mat_vec(R, _rows3(fac, i, F_C1)))
        n = mat_vec(R, _rows3(fac, i, F_N1))
        c2 = _rows3(fac, i, F_C2)
        n2 = _rows3(fac, i, F_N2)
        u, _, _, regime, _, _, _ = _contact(
            (c[0] + zc, c[1] + zc, c[2] + zc), (n[0] + zc, n[1] + zc, n[2] + zc),
            fac[i, F_R1], (c2[0] + zc, c2[1] + zc, c2[2] + zc),
            (n2[0] + zc, n2[1] + zc, n2[2] + zc), fac[i, F_R2], fac[i, F_BLEND], law[3] > 0.5)
        force_out[i] = (_contact_force(u, law)[0].real * fac[i, F_SCALE] if u.real > 0.0
                        else 0.0)
        fac_out[i] = regime == DISLOCATED
        any_flag = any_flag or fac_out[i]
    return any_flag


@njit
def _solve_predicted(packed, f, q0, predict, predictor, tol, max_iterations, log):
    """:func:`solve`'s kernel, one compiled call: with ``predict``, Newton from the linear
    predictor (``Segment._predictor``; q = 0 when not available) and load stepping from q = 0,
    else both from ``q0``; then the failure limits (status 6 when a converged equilibrium is
    past one). Returns as :func:`_solve_kernel`."""
    available, q_u, k_inv = predictor
    q_step = q0.copy()
    start = q0.copy()
    if predict:
        q_step[:] = 0.0
        start[:] = 0.0
        if available:
            _predict_row(q_u, k_inv, f, start)
    q, status, norm, n_log, n_steps, load_steps = _solve_kernel_from(
        packed, f, start, q_step, tol, max_iterations, log)
    if status == CONVERGED and _beyond_limits(q, packed, np.empty(packed[1].shape[0], np.bool_),
                                              np.empty(packed[2].shape[0], np.bool_)):
        status = CONVERGED_BEYOND_LIMITS
    return q, status, norm, n_log, n_steps, load_steps


@njit
def _solve_kernel(packed, f, q0, tol, max_iterations, log):
    """Newton at the full load from ``q0``; if that fails, automatic load stepping from ``q0``.

    ``log`` has shape (5 * max_iterations, 3); row k holds (load fraction, scaled residual norm
    before the step, step length) of Newton step k. Returns
    ``(q, status, residual norm, steps logged, Newton steps taken, load steps)``; steps
    logged include line searches that failed. This one kernel serves :func:`solve_raw` and
    :func:`segment.solve_many`.
    """
    return _solve_kernel_from(packed, f, q0, q0, tol, max_iterations, log)


@njit
def _solve_kernel_from(packed, f, q0, q_step, tol, max_iterations, log):
    """:func:`_solve_kernel` with the load stepping started from ``q_step`` instead of ``q0``.

    :func:`segment.solve_many` starts Newton from a predicted pose but, like :func:`solve`,
    falls back to load stepping from the reference pose: restarting it from the prediction
    (which at 10x nominal loads is often far from any equilibrium) failed or found other
    equilibria than :func:`solve`.
    """
    sub = np.zeros((max_iterations, 2))
    n_log = 0
    q, status, norm, n = _newton_kernel(packed, f, q0, tol, max_iterations, sub)
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
        q_try, st, norm_try, n = _newton_kernel(packed, f * target, q, tol, max_iterations,
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
        norm = _norm_phi(_residual(q, f, packed))[0]
        if not norm <= norm_direct and norm_direct == norm_direct:
            q, norm = q_direct, norm_direct
    n_steps = 0
    for k in range(n_log):
        if log[k, 2] > 0.0:
            n_steps += 1
    return q, status, norm, n_log, n_steps, load_steps


@dataclass(frozen=True, eq=False)
class EquilibriumResult:
    """Outcome of :func:`solve`.

    Attributes
    ----------
    q : ndarray, shape (6,)
        Joint coordinates (x, y, z [mm], phi_x, phi_y, phi_z [rad]); this is the displacement
        from the reference pose in the joint frame. When not converged: the iterate with the
        smaller full-load residual of the direct Newton's last iterate and the last load step's
        equilibrium (a partial-load q only when it is the better full-load answer).
    converged : bool
        Numerically converged: True for status 0 and 6.
    status : int
        0 converged, 1 iteration limit, 2 line search failed, 3 load stepping failed,
        4 non-finite residual, 5 singular Jacobian, 6 converged beyond the failure limits
        (an equilibrium with a dislocated facet, a ligament past eps_max or a model with
        ruptured strips: see :attr:`limit_flags`). Ligaments cut and facets removed in a
        clinical state are no failure (:attr:`clinical_state`).
    message : str
    iterations : int
        Newton steps taken, over all load steps.
    residual_norm : float
        ``max(|F_i| / 20 N, |M_i| / 1800 N mm)`` at ``q``.
    load : Load
    load_steps : int
        Number of load increments used (1 when the full load converged directly).
    history : tuple of IterationRecord
        Built on first access from ``log``.
    q_unloaded : ndarray or None
        The unloaded equilibrium of the same model (None if it did not converge).
    model : Segment
    log : ndarray, shape (n, 3)
        Per Newton step: load fraction, scaled residual norm before the step, step length
        (0 when the line search failed).
    """

    q: np.ndarray
    converged: bool
    """Numerically converged (status 0 or 6): the residual is below ``tol``. Whether the
    equilibrium is physiological is :attr:`intact`."""
    status: int
    iterations: int
    residual_norm: float
    load: Load
    load_steps: int
    q_unloaded: np.ndarray | None
    model: Segment
    log: np.ndarray = field(repr=False)
    """Raw iteration log, shape (n, 3): load fraction, residual norm, step length per step."""

    def __repr__(self) -> str:
        name = self.load.name
        if self.model.clinical:          # a clinical state: say which
            name = f"{name} [{self.model.clinical_label}]"
        if not self.converged:
            return f"EquilibriumResult({name}: {self.message})"
        d = np.concatenate([self.q[:3], np.degrees(self.q[3:])])
        shown = ", ".join(f"{v + 0.0:.4g}" for v in np.round(d, 6))
        if not self.intact:     # past a failure limit: say which first, short
            flags = "; ".join(self.limit_flags)
            flags = flags if len(flags) <= 80 else flags[:77] + "..."
            return f"EquilibriumResult({name}: converged BEYOND LIMITS ({flags}))"
        return (f"EquilibriumResult({name}: converged in {self.iterations} "
                f"iterations; q = [{shown}] mm, deg from the reference pose)")

    @property
    def clinical_state(self) -> str:
        """The model's clinical state (``Segment.clinical_label``): ``"intact"`` or the
        states applied, e.g. ``"laminectomy"`` (:mod:`segment.core.states`)."""
        return self.model.clinical_label

    @functools.cached_property
    def message(self) -> str:
        """One line: how the solve ended, and which failure limits ``q`` is past."""
        flags = "; ".join(self.limit_flags)
        if self.converged:
            text = (f"converged in {self.iterations} iterations"
                    + (f" over {self.load_steps} load steps" if self.load_steps > 1 else "")
                    + f" (scaled residual {self.residual_norm:.1e})")
            return text + (f", beyond the failure limits: {flags}" if flags else "")
        text = (f"did not converge: {STATUS_TEXT[self.status]} after {self.iterations} "
                f"iterations (scaled residual {self.residual_norm:.1e})")
        if flags:
            return text + f"; at the last iterate: {flags}"
        return text + "; no equilibrium found (the segment is intact at the last iterate)"

    @functools.cached_property
    def limit_flags(self) -> tuple[str, ...]:
        """The failure limits the segment is past at ``q`` (empty when intact).

        Entries like ``"facet left dislocated"`` (:mod:`segment.elements.facet`, item 9) and
        ``"ligament FL beyond eps_max (strain 0.71 > 0.58)"`` (point C of Table 3). Static
        solves are history-free: a ligament past eps_max is flagged, not ruptured.
        """
        st = self.state
        flags = [f"facet {f.side} dislocated" for f in st.facets if f.dislocated]
        # one state per strip (segment.ligament strips); a strip shares its ligament's eps_max
        eps_max = {lig.name: float(lig.curve.strain[2]) for lig in self.model.ligaments}
        for s in st.ligaments:
            if s.cut == 1.0:   # removed surgically (a clinical state): no failure
                continue
            if s.ruptured:     # broken on a ramp (segment.ramp): carries nothing
                flags.append(f"ligament {s.name} ruptured")
            elif s.beyond_max:
                flags.append(f"ligament {s.name} beyond eps_max (strain {s.strain:.2f} > "
                             f"{eps_max[s.ligament or s.name]:.2f})")
        return tuple(flags)

    @property
    def intact(self) -> bool:
        """No facet dislocated, no ligament past eps_max and none ruptured at ``q`` (a
        ligament cut in a clinical state is no failure: see :attr:`clinical_state`)."""
        return not self.limit_flags

    @functools.cached_property
    def history(self) -> tuple[IterationRecord, ...]:
        """One :class:`IterationRecord` per Newton step (built on first access)."""
        return tuple(IterationRecord(k + 1, float(row[0]), float(row[1]), float(row[2]))
                     for k, row in enumerate(self.log))

    @functools.cached_property
    def state(self) -> SegmentState:
        """Element forces at ``q`` (disc, ligaments, facets)."""
        return self.model.state(self.q)

    @property
    def displacement_from_reference(self) -> np.ndarray:
        """``q``: displacement from the reference pose in the joint frame [mm, rad]."""
        return self.q.copy()

    @property
    def displacement_from_unloaded(self) -> np.ndarray | None:
        """``q - q_unloaded`` [mm, rad], or None when the unloaded solve failed."""
        return None if self.q_unloaded is None else self.q - self.q_unloaded

    @property
    def pose_c6(self) -> tuple[np.ndarray, np.ndarray]:
        """Absolute pose of C5 in C6: origin [mm] and rotation matrix C5 -> C6."""
        return pose(self.q, self.model.reference)

    @property
    def absolute(self) -> np.ndarray:
        """Absolute C5 pose in C6: origin (x, y, z) [mm] and Cardan x-y-z angles [rad]."""
        p, R = self.pose_c6
        return np.concatenate([p, cardan_xyz(R)])

    def table(self, *, convention: str = "klg") -> pd.DataFrame:
        """Displacements in mm and degrees: one row per coordinate, three views as columns.

        ``convention="isb"``: the joint coordinate system of the ISB for the spine (Wu et al.
        2002) instead of the model's coordinates (:func:`segment.core.conventions.result_table`).
        """
        import pandas as pd  # lazy: `import segment` stays light

        if convention != "klg":
            from segment.core.conventions import result_table

            return result_table(self, convention=convention)

        def conv(v):
            return None if v is None else np.concatenate([v[:3], np.degrees(v[3:])])

        units = ["mm"] * 3 + ["deg"] * 3
        from_unloaded = conv(self.displacement_from_unloaded)
        return pd.DataFrame({
            "coordinate": DOF_NAMES,
            "unit": units,
            "from_reference": conv(self.q),
            "from_unloaded": (from_unloaded if from_unloaded is not None
                              else [float("nan")] * 6),
            "absolute_in_c6": conv(self.absolute),
        })

    def to_frame(self) -> pd.DataFrame:
        """The displacement table of :meth:`table` (``to_frame`` is every result's name)."""
        return self.table()

    def to_dict(self) -> dict:
        """JSON-friendly summary (mm, degrees, N)."""
        def conv(v):
            if v is None:
                return None
            return dict(zip(DOF_NAMES, [*v[:3].tolist(), *np.degrees(v[3:]).tolist()],
                            strict=True))

        st = self.state
        return {
            "load": self.load.name,
            "clinical_state": self.clinical_state,
            "converged": self.converged,
            "status": self.status,
            "message": self.message,
            "intact": self.intact,
            "limit_flags": list(self.limit_flags),
            "iterations": self.iterations,
            "load_steps": self.load_steps,
            "residual_norm": self.residual_norm,
            "units": {"translation": "mm", "rotation": "deg", "force": "N",
                      "disc_force": "N for x, y, z; N mm for phi_x, phi_y, phi_z"},
            "from_reference": conv(self.q),
            "from_unloaded": conv(self.displacement_from_unloaded),
            "absolute_in_c6": conv(self.absolute),
            "ligaments": st.ligament_table().to_dict(orient="records"),
            "facets": st.facet_table().to_dict(orient="records"),
            "disc_force": dict(zip(DOF_NAMES, st.disc_force.tolist(), strict=True)),
        }


def _solve_checked(model, load, q0, tol, max_iterations, q_unloaded,
                   predict=False) -> EquilibriumResult:
    """The solve itself, after :func:`_check_inputs` (kept lean: it is timed per call).

    ``q_unloaded`` must be a read-only array or None (it is stored as given). With ``predict``
    and no ``q0``, Newton starts from the linear predictor and load stepping, when needed,
    from the reference pose (as :func:`segment.solve_many` does).
    """
    predict = predict and q0 is None
    if q0 is None:
        q = np.zeros(6)
    else:
        q = np.asarray(q0)
        if q.dtype.kind not in "iuf":
            raise TypeError(f"q0 must be 6 real numbers [mm, rad], got dtype {q.dtype} "
                            f"({q0!r})")
        q = np.array(q, dtype=float)
        if q.shape != (6,) or not all(map(math.isfinite, q.tolist())):
            raise ValueError(f"q0 must be 6 finite numbers, got {q0!r}")
    log = np.empty((5 * max_iterations, 3))
    q, status, norm, n_log, n_steps, load_steps = _solve_predicted(
        model._packed, load._vector, q, predict,
        model._predictor if predict else _NO_PREDICTOR, tol, max_iterations, log)
    if status == CONVERGED and model.ruptured:
        status = CONVERGED_BEYOND_LIMITS   # strips broke under load: past a failure limit
    q.setflags(write=False)      # the result's state is computed from it: keep them together
    return EquilibriumResult(
        q=q, converged=status in CONVERGED_STATUSES, status=int(status), iterations=n_steps,
        residual_norm=norm, load=load, load_steps=load_steps, q_unloaded=q_unloaded,
        model=model, log=log[:n_log])
