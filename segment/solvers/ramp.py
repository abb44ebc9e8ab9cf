"""Quasi-static load ramp with ligament rupture: the segment up to failure.

A strip whose force reaches F_max (point C of DETC2000/MECH-6821 Table 3, de Jager 1996)
breaks and carries nothing afterwards (Tejszerska and Gzik, "Biomechanical model of the human
cervical spine", section 4: "When the force exceeds dynamic strength of ligament the fracture
of appropriate strip is simulated by zeroing its ... force"). Rupture depends on history, so
it lives here and in :func:`segment.simulate`; :func:`segment.solve` stays history-free (a
model whose strips broke is the :class:`~segment.Segment` with ``ruptured`` set, and solves
like any other).

The ramp follows the load ``s * load`` for s = 0 -> ``to_scale``; rows are written at the
``steps`` equal steps and at every event. Between rows the load grows in increments of its
own, each a Newton solve warm-started from the last equilibrium (:func:`_ramp_kernel`):

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

**Validity limit** (:mod:`segment.core.validity`, ``data/validity_limits.csv``): the ramp
stops where the model stops meaning anything, at the first of (1) a loaded coordinate's
displacement from the unloaded equilibrium reaching its bound (located like a rupture, with
h(s) = displacement / bound in place of g; or reached by the jump after a rupture) and (2) no
ligament left taut after a rupture. The result says which rule fired, at what load, and its
source; rows after it are not computed, and the ultimate load is "not predicted" there:
beyond the limit the disc of eq. (1) carries the load without a failure law. ``limits=None``
switches the limit off (the path then goes on to ``to_scale`` or to no equilibrium, e.g.
flexion to 270 deg: not a prediction).

Decisions and their effect:

* Load control, quasi-static: the jump between the equilibria before and after a rupture is
  not followed dynamically (an overshoot that could break a neighbouring strip is not
  modelled; :func:`segment.simulate` is the dynamic path).
* Rupture on the elastic curve only (F_el = F_max); the damping term of the paper acts in
  :func:`segment.simulate`, where the criterion is the same strain.
* A strip that reaches F_max and breaks counts as ruptured even when no equilibrium is found
  after it (event ``ruptured: X; no equilibrium``): the sequence, ``n_ruptured``, the events
  and :meth:`RampResult.model_at` agree row by row.
* The intervertebral disc of eq. (1) is linear without a failure law, so without the validity
  limit the disc alone keeps an equilibrium for almost any load: "can no longer carry the
  load" is reached only when no equilibrium is found after a rupture or a load increment
  (status ``no equilibrium``; ultimate load = the last load carried). If the ramp reaches
  ``to_scale`` the ultimate load is not reached (NaN) and the status says so.
"""

from __future__ import annotations

import functools
import itertools
import math
import numbers
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from segment.core.model import Segment, SegmentState
from segment.core.newton import (
    CONVERGED,
    CONVERGED_BEYOND_LIMITS,
    DEFAULT_TOL,
    _newton_kernel,
    _solve_kernel,
)
from segment.core.validity import (
    BEYOND_LIMIT,
    NO_TAUT_LIGAMENT,
    DisplacementBound,
    ValidityLimits,
    load_validity_limits,
)
from segment.elements.disc import DOF_NAMES
from segment.elements.loads import Load
from segment.elements.tangent import G_R0, G_S0, L_A, L_B, L_EPS, L_F, L_L0, _axes
from segment.jit import njit

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MAX_TO_SCALE", "RAMP_STATUS", "RampLimit", "RampResult", "ramp"]

ROW_STEP, ROW_FMAX, ROW_RUPTURED, ROW_FAILED, ROW_LIMIT = 0, 1, 2, 3, 4
RAMP_COMPLETE, RAMP_NO_EQUILIBRIUM, RAMP_UNLOADED_FAILED, RAMP_LIMIT = 0, 1, 2, 3
RAMP_STATUS = ("reached to_scale", "no equilibrium", "unloaded equilibrium not found",
               "validity limit")
LIMIT_NONE, LIMIT_BOUND, LIMIT_BOUND_JUMP, LIMIT_NO_TAUT = 0, 1, 2, 3
RUPTURE_TOL = 1e-9
"""|g - 1| at which the rupture scale is accepted (g = strain / eps_max of the strip)."""
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
MAX_TO_SCALE = 1e6
"""Largest ``to_scale`` accepted: a million times the nominal load (1.8 MN m, 20 MN) is far
beyond any validity limit; larger values are refused with a one-line error."""
STEP_INDEPENDENCE_RTOL = 0.01
"""Stated tolerance: failure loads of ``steps`` N and 4N agree within 1 % (tested)."""
MAX_LOCATE = 100
_MAX_MOVE_RAD = math.radians(MAX_MOVE_DEG)


@njit
def _max_ratio(q, glob, lig, alive):
    """(max_i strain_i / eps_max_i over intact strips, its row; -inf, -1 when none)."""
    R0 = ((glob[G_R0], glob[G_R0 + 1], glob[G_R0 + 2]),
          (glob[G_R0 + 3], glob[G_R0 + 4], glob[G_R0 + 5]),
          (glob[G_R0 + 6], glob[G_R0 + 7], glob[G_R0 + 8]))
    R, _, _ = _axes(q, R0)
    p = [glob[G_S0 + k] + R0[k][0] * q[0] + R0[k][1] * q[1] + R0[k][2] * q[2]
         for k in range(3)]
    best = -np.inf
    arg = -1
    for i in range(lig.shape[0]):
        if alive[i] == 0.0:
            continue
        s = 0.0
        for k in range(3):
            x = p[k] + R[k][0] * lig[i, L_A] + R[k][1] * lig[i, L_A + 1] + R[k][2] * lig[i, L_A + 2]
            d = lig[i, L_B + k] - x
            s += d * d
        g = (math.sqrt(s) - lig[i, L_L0]) / lig[i, L_L0] / lig[i, L_EPS + 2]
        if g > best:
            best = g
            arg = i
    return best, arg


@njit
def _tied(q, glob, lig, alive, i, out):
    """Intact strips other than ``i`` whose strain ratio g = strain / eps_max at ``q`` equals
    strip i's within :data:`TIE_RTOL` (a symmetric pair under a symmetric load): written to
    ``out``, their number returned. They break with strip i, so that no result depends on
    the order of the strips in the model."""
    R0 = ((glob[G_R0], glob[G_R0 + 1], glob[G_R0 + 2]),
          (glob[G_R0 + 3], glob[G_R0 + 4], glob[G_R0 + 5]),
          (glob[G_R0 + 6], glob[G_R0 + 7], glob[G_R0 + 8]))
    R, _, _ = _axes(q, R0)
    p = [glob[G_S0 + k] + R0[k][0] * q[0] + R0[k][1] * q[1] + R0[k][2] * q[2]
         for k in range(3)]
    g = np.empty(lig.shape[0])
    for j in range(lig.shape[0]):
        s = 0.0
        for k in range(3):
            x = p[k] + R[k][0] * lig[j, L_A] + R[k][1] * lig[j, L_A + 1] + R[k][2] * lig[j, L_A + 2]
            d = lig[j, L_B + k] - x
            s += d * d
        g[j] = (math.sqrt(s) - lig[j, L_L0]) / lig[j, L_L0] / lig[j, L_EPS + 2]
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
    (with :func:`_solve_kernel`'s fallbacks) from ``q``; if that fails, the strip's force is
    taken away in :data:`HOMOTOPY_STEPS` steps, each a Newton solve from the last."""
    lig = packed[1]
    _kill(lig, alive, i)
    q_new, st, _, _, _, _ = _solve_kernel(packed, load, q, tol, max_iterations, log)
    # past a limit is expected here (the broken strip is past eps_max)
    if st == CONVERGED or st == CONVERGED_BEYOND_LIMITS:
        return q_new, True
    qh = q.copy()
    for j in range(1, HOMOTOPY_STEPS + 1):
        factor = 1.0 - j / HOMOTOPY_STEPS
        for k in range(3):
            lig[i, L_F + k] = factor * lig0[i, L_F + k]
        qh, st, _, _ = _newton_kernel(packed, load, qh, tol, max_iterations, sub)
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
            q_new, st, _, _ = _newton_kernel(packed, f * trial, q, tol, max_iterations, sub)
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
                qm, stm, _, _ = _newton_kernel(packed, f * sm, q_lo, tol, max_iterations, sub)
                if stm != CONVERGED:
                    sm = 0.5 * (lo + hi)
                    qm, stm, _, _ = _newton_kernel(packed, f * sm, q_lo, tol, max_iterations,
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


@dataclass(frozen=True)
class RampLimit:
    """Where a ramp reached the validity limit of the model (:mod:`segment.core.validity`).

    Attributes
    ----------
    rule : str
        ``"displacement bound"`` or ``"no ligament left taut"``.
    description : str
        What was reached, e.g. ``"flexion beyond 15.4 deg from the unloaded equilibrium"``.
    source : str
        Where the bound comes from, e.g. ``"Voo, Pintar, Yoganandan and Liu 1998 (SOURCES.md
        §5, §8)"`` or ``"assumed (SOURCES.md §8)"``.
    scale : float
        Load scale at the limit (x nominal).
    row : int
        Row of :attr:`RampResult.frame` where it fired.
    reached_by : str
        ``"load increment"`` (the displacement reached the bound on the equilibrium path,
        located to ``|h - 1| <= 1e-9``) or ``"rupture of X"`` (the jump at constant load after X
        broke carried it past the bound, or left no ligament taut).
    bound : DisplacementBound or None
        The bound of rule 1 (None for rule 2).
    beyond : str
        What lies beyond, in words.
    """

    rule: str
    description: str
    source: str
    scale: float
    row: int
    reached_by: str
    bound: DisplacementBound | None = None
    beyond: str = BEYOND_LIMIT

    def text(self) -> str:
        """One line: rule, load scale, source and what lies beyond."""
        return (f"validity limit at {self.scale:.6g} x nominal ({self.description}, reached by "
                f"{self.reached_by}; {self.source}): {self.beyond}")


@dataclass(frozen=True, eq=False)
class RampResult:
    """Outcome of :func:`ramp`.

    Attributes
    ----------
    frame : pandas.DataFrame
        One row per equilibrium on the path (ramp steps, and at each rupture the equilibrium
        where the strip reached F_max and the one after it broke): ``scale``, the applied load
        (``Fx_N`` ... ``Mz_Nm``), q from the reference pose of Table 1 (``x_mm`` ...
        ``phi_z_deg``), the loaded coordinate's displacement from the unloaded equilibrium
        (column :attr:`main_column`: ``main_from_unloaded_mm`` or ``main_from_unloaded_deg``;
        ``main_from_unloaded``, all NaN, for a combined load), ``within_limit`` (False for a
        row past the validity limit: the jump after the rupture that crossed it),
        ``event`` (``""``, ``"F_max: ISL"``, ``"ruptured: ISL"``, ``"dislocated: left"``,
        ``"no equilibrium"``, ``"ruptured: ALL; no equilibrium"``, ``"validity limit: ..."``)
        and ``n_ruptured`` (strips broken by that row, those of the input model included).
    model : Segment
        The final model: the input model with every strip that broke in ``ruptured``.
    q : ndarray, shape (6,)
        The last equilibrium [mm, rad].
    status : int
        0 reached ``to_scale``, 1 no equilibrium, 2 unloaded equilibrium not found,
        3 validity limit reached (:attr:`limit`).
    message : str
    load : Load
        The nominal load (scale 1).
    first_rupture_scale, ultimate_scale : float
        Load scale at which the first strip broke, and the last scale carried when the
        segment could no longer carry the load (NaN when not reached or past the validity
        limit: not predicted).
    events : tuple of (float, str, str)
        (scale, ``"ruptured"`` or ``"dislocated"``, strip or facet name), in order.
    limit : RampLimit or None
        Where the validity limit was reached (None: not reached, or ``limits=None``).
    ruptured_at : tuple of frozenset
        Per row of :attr:`frame`, the strips broken by that row (:meth:`model_at`).
    """

    frame: pd.DataFrame
    model: Segment
    q: np.ndarray
    status: int
    message: str
    load: Load
    first_rupture_scale: float
    ultimate_scale: float
    events: tuple[tuple[float, str, str], ...]
    limit: RampLimit | None = None
    ruptured_at: tuple[frozenset, ...] = ()

    @property
    def ok(self) -> bool:
        """True when the ramp reached ``to_scale``."""
        return self.status == RAMP_COMPLETE

    @property
    def main_column(self) -> str:
        """Name of the frame's main-displacement column."""
        return _main_column(self.load)

    @functools.cached_property
    def state(self) -> SegmentState:
        """Element forces at the last equilibrium, with the ruptured strips marked."""
        return self.model.state(self.q)

    def model_at(self, row: int) -> Segment:
        """The model of row ``row`` of :attr:`frame`: the strips broken by that row."""
        ruptured = self.ruptured_at[row]
        return self.model if ruptured == self.model.ruptured else self.model.replace(
            ruptured=ruptured)

    def result_at(self, row: int):
        """Row ``row`` of :attr:`frame` as an :class:`~segment.EquilibriumResult` (re-solved
        from its q with the strips ruptured so far; for tables and 3-D views)."""
        from segment.solvers.equilibrium import solve

        r = self.frame.iloc[row]
        q = np.concatenate([r[["x_mm", "y_mm", "z_mm"]].to_numpy(float),
                            np.radians(r[["phi_x_deg", "phi_y_deg", "phi_z_deg"]]
                                       .to_numpy(float))])
        load = self.load.scaled(float(r["scale"]), name=f"{self.load.name} x {r['scale']:.3g}")
        return solve(self.model_at(row), load, q0=q)

    def failure_loads(self) -> dict:
        """First rupture, ultimate load and validity limit as scales and as load magnitudes
        (N or N m of the main component; NaN for a combined load or when not reached), the
        rupture sequence, and the limit's rule and source (None when not reached)."""
        main = self.load.main_dof
        nominal = float("nan") if main is None else float(self.load.as_array()[main])
        unit = "N" if main is not None and main < 3 else "Nm"
        if main is not None and main >= 3:
            nominal /= 1000.0
        lim = float("nan") if self.limit is None else self.limit.scale
        return {"first_rupture_scale": self.first_rupture_scale,
                "ultimate_scale": self.ultimate_scale,
                f"first_rupture_{unit}": abs(nominal) * self.first_rupture_scale,
                f"ultimate_{unit}": abs(nominal) * self.ultimate_scale,
                "limit_scale": lim,
                f"limit_{unit}": abs(nominal) * lim,
                "limit_rule": None if self.limit is None else self.limit.description,
                "limit_source": None if self.limit is None else self.limit.source,
                "sequence": [name for _, kind, name in self.events if kind == "ruptured"]}


def _main_column(load: Load) -> str:
    main = load.main_dof
    return ("main_from_unloaded" if main is None else
            "main_from_unloaded_mm" if main < 3 else "main_from_unloaded_deg")


def ramp(model: Segment, load: Load, *, to_scale: float, steps: int = 200,
         tol: float = DEFAULT_TOL, max_iterations: int = 60,
         track_facets: bool | str = True,
         limits: ValidityLimits | str | None = "default") -> RampResult:
    """Follow ``s * load`` from s = 0 to ``to_scale`` with ligament strips that rupture, up to
    the validity limit of the model.

    Parameters
    ----------
    model : Segment
        Strips already in ``model.ruptured`` stay broken.
    load : Load
        The nominal load (scale 1), e.g. ``segment.LOAD_CASES["FLX"]``.
    to_scale : float
        Last load scale (> 0, at most :data:`MAX_TO_SCALE`).
    steps : int
        Equal load steps (>= 1): the rows of the frame. The path between them is followed in
        increments of its own, so the failure loads do not depend on ``steps``.
    tol, max_iterations
        Newton tolerance and iteration limit per solve (as :func:`segment.solve`).
    track_facets : bool or "every"
        Report facet dislocation events (``facet_state.dislocated`` on the
        facet states): True locates the first dislocated row by bisection between rupture
        events (see :func:`_facet_events`), ``"every"`` checks every row (~0.2 ms a row),
        False not at all.
    limits : ValidityLimits, None or "default"
        The validity limit (:mod:`segment.core.validity`): ``"default"`` reads the packaged
        ``data/validity_limits.csv``; None switches the limit off (then the path goes on past
        any meaning, to ``to_scale`` or to no equilibrium).

    Returns
    -------
    RampResult
        Never raises when the segment fails: ``status`` and ``message`` say how it ended.

    Examples
    --------
    >>> import segment
    >>> r = segment.ramp(segment.c5c6(), segment.LOAD_CASES["FLX"], to_scale=20, steps=40)
    >>> r.failure_loads()["sequence"]
    ['FL', 'ISL', 'CL-left', 'CL-right']
    >>> r.limit.description
    'flexion beyond 15.4 deg from the unloaded equilibrium'
    """
    if not isinstance(model, Segment):
        raise TypeError(f"model must be a segment.Segment, got {type(model).__name__}")
    if not isinstance(load, Load):
        raise TypeError(f"load must be a segment.Load, got {type(load).__name__}")
    if not (isinstance(to_scale, numbers.Real) and math.isfinite(to_scale) and to_scale > 0):
        raise ValueError(f"ramp: to_scale must be a finite number > 0, got {to_scale!r}")
    if to_scale > MAX_TO_SCALE:
        raise ValueError(f"ramp: to_scale must be at most {MAX_TO_SCALE:g} (x nominal load), "
                         f"got {to_scale!r}")
    if isinstance(steps, bool) or not isinstance(steps, numbers.Integral) or steps < 1:
        raise ValueError(f"ramp: steps must be an integer >= 1, got {steps!r}")
    if isinstance(limits, str):
        if limits != "default":
            raise ValueError(f"ramp: limits must be a ValidityLimits, None or 'default', got "
                             f"{limits!r}")
        limits = _default_limits()
    elif limits is not None and not isinstance(limits, ValidityLimits):
        raise TypeError(f"limits must be a ValidityLimits, None or 'default', got "
                        f"{type(limits).__name__}")
    from segment.solvers.equilibrium import _check_tolerances

    tol, max_iterations = _check_tolerances(tol, max_iterations)
    unloaded = model.unloaded
    glob, lig, fac, pts = model._packed
    names = model.strip_names
    if not unloaded.converged:
        frame = _frame([], load, np.zeros(6), [], [], [])
        return RampResult(frame, model, unloaded.q.copy(), RAMP_UNLOADED_FAILED,
                          f"unloaded equilibrium not found: {unloaded.message}", load,
                          float("nan"), float("nan"), ())
    bounds = () if limits is None else limits.active(load.as_array())
    lim_dof = np.array([b.dof for b in bounds], dtype=np.int64)
    lim_bound = np.array([b.direction * b.limit for b in bounds], dtype=float)
    size = int(steps) + 2 * len(names) + 3
    out_s = np.empty(size)
    out_q = np.empty((size, 6))
    out_kind = np.empty(size, dtype=np.int64)
    out_strip = np.empty(size, dtype=np.int64)
    q_unloaded = np.array(unloaded.q)
    n, status, alive, limit_kind, limit_index = _ramp_kernel(
        glob, lig, fac, pts, load._vector, float(to_scale), int(steps), q_unloaded,
        model._carrying,
        tol, max_iterations, lim_dof, lim_bound, limits is not None,
        out_s, out_q, out_kind, out_strip)
    rows = list(zip(out_s[:n].tolist(), out_q[:n], out_kind[:n].tolist(),
                    out_strip[:n].tolist(), strict=True))
    # a strip cut through surgically (a clinical state) carries nothing from the start and
    # never ruptures
    broken = frozenset(names[i] for i in np.flatnonzero(alive == 0.0)
                       if model.cut.get(names[i], 0.0) < 1.0)
    final = model.replace(ruptured=broken) if broken != model.ruptured else model
    events = []
    event_text = []
    ruptured_now = set(model.ruptured)
    ruptured_at = []
    for s, _, kind, strip in rows:
        if kind == ROW_FMAX:
            event_text.append(f"F_max: {names[strip]}")
        elif kind == ROW_RUPTURED:
            ruptured_now.add(names[strip])
            events.append((s, "ruptured", names[strip]))
            event_text.append(f"ruptured: {names[strip]}")
        elif kind == ROW_FAILED and strip >= 0:
            ruptured_now.add(names[strip])
            events.append((s, "ruptured", names[strip]))
            event_text.append(f"ruptured: {names[strip]}; no equilibrium")
        elif kind == ROW_FAILED:
            event_text.append("no equilibrium")
        else:
            event_text.append("")
        ruptured_at.append(frozenset(ruptured_now))
    within = [True] * len(rows)
    limit = None
    if status == RAMP_LIMIT:
        k = len(rows) - 1
        last = [r for r in rows if r[2] == ROW_RUPTURED]
        # the last rupture with every strip that broke with it (a tie, _tied)
        group = [r for r in last if last and r[0] == last[-1][0]
                 and np.array_equal(r[1], last[-1][1])]
        last_rupture = " and ".join(names[r[3]] for r in group) if group else None
        if limit_kind == LIMIT_NO_TAUT:
            limit = RampLimit("no ligament left taut", NO_TAUT_LIGAMENT,
                              "DETC2000/MECH-6821 eq. (1) and Table 3 (SOURCES.md §1, §8)",
                              rows[k][0], k, f"rupture of {last_rupture}")
        else:
            b = bounds[limit_index]
            limit = RampLimit("displacement bound", b.describe(), b.citation(), rows[k][0], k,
                              "load increment" if limit_kind == LIMIT_BOUND
                              else f"rupture of {last_rupture}", b)
        if limit_kind != LIMIT_BOUND:
            within[k] = False        # the disc-only or past-the-bound equilibrium
            j = k - 1                # and the rows of strips that broke with it (a tie)
            while (j >= 0 and rows[j][2] == ROW_RUPTURED and rows[j][0] == rows[k][0]
                   and np.array_equal(rows[j][1], rows[k][1])):
                within[j] = False
                j -= 1
        event_text[k] = "; ".join(x for x in (event_text[k], "validity limit: "
                                              + limit.description) if x)
    if track_facets:
        _facet_events(model, rows, names, events, event_text, track_facets == "every",
                      ruptured_at)
    frame = _frame(rows, load, q_unloaded, event_text, within,
                   [len(x) for x in ruptured_at])
    good = [r for r in rows if r[2] != ROW_FAILED]
    q_last = good[-1][1].copy() if good else q_unloaded.copy()
    ruptures = [e for e in events if e[1] == "ruptured"]
    first = ruptures[0][0] if ruptures else float("nan")
    broke = (f" after {len(ruptures)} rupture(s) ({', '.join(e[2] for e in ruptures)})"
             if ruptures else " before any rupture")
    if status == RAMP_NO_EQUILIBRIUM:
        ultimate = good[-1][0]
        message = (f"no equilibrium above {ultimate:.6g} x {load.name}" + broke
                   + ": the segment can no longer carry the load")
    elif status == RAMP_LIMIT:
        ultimate = float("nan")
        message = (f"validity limit reached at {limit.scale:.6g} x {load.name}{broke}: "
                   f"{limit.description} (reached by {limit.reached_by}; {limit.source}); "
                   f"{BEYOND_LIMIT}, so the ultimate load is not predicted")
    else:
        ultimate = float("nan")
        message = (f"reached {to_scale:g} x {load.name} with {len(ruptures)} rupture(s)"
                   + (f" ({', '.join(e[2] for e in ruptures)})" if ruptures else "")
                   + ("; validity limit not reached" if limits is not None else
                      "; no validity limit applied (limits=None)")
                   + "; ultimate load not reached (the disc of eq. 1 has no failure law)")
    q_last.setflags(write=False)
    return RampResult(frame, final, q_last, int(status), message, load, float(first),
                      float(ultimate), tuple(sorted(events, key=lambda e: e[0])), limit,
                      tuple(ruptured_at))


@functools.cache
def _default_limits() -> ValidityLimits:
    return load_validity_limits()


def _facet_events(model, rows, names, events, event_text, every, ruptured_at):
    """Add ``dislocated`` events where a facet state first reports ``dislocated``.

    ``every``: evaluate the facet states at every row (one state evaluation per row,
    ~0.2 ms). Otherwise at the first and last row and the rows of rupture events, and by
    bisection between two of them where a facet went from seated to dislocated (about 8
    evaluations per transition): between ruptures the structure is elastic and the load
    grows monotonically, so a facet that dislocated is taken to stay dislocated until the
    next evaluated row. The bisection finds the first dislocated row in that case.
    """
    sides = [f.side for f in model.facets]
    cache = {}

    def dislocated(k):
        if k not in cache:
            m = model if ruptured_at[k] == model.ruptured else model.replace(
                ruptured=ruptured_at[k])
            cache[k] = tuple(bool(fs.dislocated)
                             for fs in m.state(rows[k][1]).facets)
        return cache[k]

    good = [k for k, r in enumerate(rows) if r[2] != ROW_FAILED]
    if not good or not sides:
        return
    if every:
        anchors = good
    else:
        anchors = sorted({good[0], good[-1], *(k for k in good if rows[k][2] != ROW_STEP)})
    first = {}
    state0 = dislocated(anchors[0])
    for j, side in enumerate(sides):
        if state0[j]:
            first.setdefault(side, anchors[0])
    for a, b in itertools.pairwise(anchors):
        da, db = dislocated(a), dislocated(b)
        for j, side in enumerate(sides):
            if side in first or da[j] or not db[j]:
                continue
            lo, hi = good.index(a), good.index(b)
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if dislocated(good[mid])[j]:
                    hi = mid
                else:
                    lo = mid
            first[side] = good[hi]
    for side, k in first.items():
        events.append((rows[k][0], "dislocated", side))
        event_text[k] = "; ".join(x for x in (event_text[k], f"dislocated: {side}") if x)


def _frame(rows, load, q_unloaded, event_text, within, n_ruptured) -> pd.DataFrame:
    f = load.as_array()
    main = load.main_dof
    s = np.array([r[0] for r in rows], dtype=float)
    q = np.array([r[1] for r in rows], dtype=float).reshape(-1, 6)
    applied = s[:, None] * f[None, :]
    data = {"scale": s}
    for j, name in enumerate(("Fx_N", "Fy_N", "Fz_N")):
        data[name] = applied[:, j]
    for j, name in enumerate(("Mx_Nm", "My_Nm", "Mz_Nm")):
        data[name] = applied[:, 3 + j] / 1000.0
    for j, name in enumerate(DOF_NAMES):
        data[f"{name}_mm" if j < 3 else f"{name}_deg"] = q[:, j] if j < 3 else np.degrees(q[:, j])
    if main is None:
        data[_main_column(load)] = np.full(len(s), np.nan)
    else:
        d = q[:, main] - q_unloaded[main]
        data[_main_column(load)] = d if main < 3 else np.degrees(d)
    data["within_limit"] = np.array(within, dtype=bool)
    data["event"] = list(event_text)
    data["n_ruptured"] = np.array(n_ruptured, dtype=np.int64)
    import pandas as pd  # lazy: `import segment` stays light (pandas takes ~0.3 s)

    return pd.DataFrame(data)
