"""Quasi-static load ramp with ligament rupture: the segment up to failure.

A strip whose force reaches F_max (point C of DETC2000/MECH-6821 Table 3, de Jager 1996)
breaks and carries nothing afterwards (Tejszerska and Gzik, "Biomechanical model of the human
cervical spine", section 4: "When the force exceeds dynamic strength of ligament the fracture
of appropriate strip is simulated by zeroing its ... force"). Rupture depends on history, so
it lives here and in :func:`segment.simulate`; :func:`segment.solve` stays history-free (a
model whose strips broke is the :class:`~segment.Segment` with ``ruptured`` set, and solves
like any other).

The ramp follows the load ``s * load`` for s = 0 -> ``to_scale`` in ``steps`` equal steps,
each a Newton solve warm-started from the last equilibrium (a step that fails is halved, down
to 1/1024 of a step). After each step the strain of every intact strip is compared with its
eps_max::

    g(s) = max_i eps_i(q(s)) / eps_max,i          (strain reaches eps_max  <=>  F reaches F_max)

The curves of Table 3 rise strictly from A to C, so the strain criterion is the force
criterion of the paper. When a step ends with g >= 1, the scale s* at which g(s*) = 1 is found
on the equilibrium path by the Illinois variant of regula falsi (|g - 1| <= 1e-9; each trial
a warm-started Newton solve); the equilibrium at s* is recorded (event ``F_max``), the strip
with the largest g breaks and the segment is solved again at the same load (event
``ruptured``). If that leaves another strip at g >= 1, it breaks too at the same load, one at a
time, largest first (a cascade); then the ramp goes on. Decisions and their effect:

* Load control, quasi-static: the jump between the equilibria before and after a rupture is
  not followed dynamically (an overshoot that could break a neighbouring strip is not
  modelled; :func:`segment.simulate` is the dynamic path).
* Rupture on the elastic curve only (F_el = F_max); the damping term of the paper acts in
  :func:`segment.simulate`, where the criterion is the same strain.
* The intervertebral disc of eq. (1) is linear without a failure law, so the disc alone keeps
  an equilibrium for any load: "can no longer carry the load" is reached only when no
  equilibrium is found after a rupture or a load step (status ``no equilibrium``; ultimate
  load = the last load carried). If the ramp reaches ``to_scale`` the ultimate load is not
  reached (NaN) and the status says so.
"""

from __future__ import annotations

import functools
import itertools
import math
import numbers
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from segment.core.model import Segment, SegmentState
from segment.core.newton import (
    CONVERGED,
    CONVERGED_BEYOND_LIMITS,
    DEFAULT_TOL,
    _newton_kernel,
    _solve_kernel,
)
from segment.elements.disc import DOF_NAMES
from segment.elements.loads import Load
from segment.elements.tangent import G_R0, G_S0, L_A, L_B, L_EPS, L_F, L_L0, _axes

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["RAMP_STATUS", "RampResult", "ramp"]

ROW_STEP, ROW_FMAX, ROW_RUPTURED, ROW_FAILED = 0, 1, 2, 3
RAMP_COMPLETE, RAMP_NO_EQUILIBRIUM, RAMP_UNLOADED_FAILED = 0, 1, 2
RAMP_STATUS = ("reached to_scale", "no equilibrium", "unloaded equilibrium not found")
RUPTURE_TOL = 1e-9
"""|g - 1| at which the rupture scale is accepted (g = strain / eps_max of the strip)."""
MIN_SUBSTEP = 1.0 / 1024
"""Smallest fraction of a ramp step tried before the ramp gives up (no equilibrium)."""
MAX_LOCATE = 100


@njit(cache=True)
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


@njit(cache=True)
def _kill(lig, alive, i):
    """Strip row ``i`` breaks: alive multiplier 0, its force points zero."""
    alive[i] = 0.0
    for k in range(3):
        lig[i, L_F + k] = 0.0


@njit(cache=True)
def _ramp_kernel(glob, lig0, fac, pts, f, to_scale, steps, q0, alive0, tol, max_iterations,
                 out_s, out_q, out_kind, out_strip):
    """The ramp of the module docstring. Returns ``(rows, status, alive)``.

    ``out_*`` (rows of scale, q (6,), kind ROW_*, strip row or -1) must hold
    ``steps + 2 * n_strips + 2`` rows.
    """
    lig = lig0.copy()
    alive = alive0.copy()
    for i in range(lig.shape[0]):
        if alive[i] == 0.0:
            _kill(lig, alive, i)
    packed = (glob, lig, fac, pts)
    sub = np.empty((max_iterations, 2))
    log = np.empty((5 * max_iterations, 3))
    q = q0.copy()
    n = 0
    out_s[n] = 0.0
    out_q[n] = q
    out_kind[n] = ROW_STEP
    out_strip[n] = -1
    n += 1
    s_prev = 0.0
    g_prev, _ = _max_ratio(q, glob, lig, alive)
    for k in range(1, steps + 1):
        target = to_scale * k / steps
        trial = target
        min_inc = to_scale / steps * MIN_SUBSTEP
        while s_prev < target:
            q_new, st, _, _ = _newton_kernel(packed, f * trial, q, tol, max_iterations, sub)
            if st != CONVERGED:
                inc = 0.5 * (trial - s_prev)
                if inc < min_inc:
                    out_s[n] = trial
                    out_q[n] = q_new
                    out_kind[n] = ROW_FAILED
                    out_strip[n] = -1
                    return n + 1, RAMP_NO_EQUILIBRIUM, alive
                trial = s_prev + inc
                continue
            g, _ = _max_ratio(q_new, glob, lig, alive)
            if g < 1.0:
                q = q_new
                s_prev = trial
                g_prev = g
                trial = target
                continue
            # locate g(s*) = 1 on (s_prev, trial] (Illinois regula falsi)
            lo, g_lo, q_lo = s_prev, g_prev, q.copy()
            hi, g_hi, q_hi = trial, g, q_new
            side = 0
            for _ in range(MAX_LOCATE):
                if g_hi - 1.0 <= RUPTURE_TOL or hi - lo <= 1e-14 * max(1.0, hi):
                    break
                sm = lo + (1.0 - g_lo) * (hi - lo) / (g_hi - g_lo)
                if not (lo < sm < hi):
                    sm = 0.5 * (lo + hi)
                qm, stm, _, _ = _newton_kernel(packed, f * sm, q_lo, tol, max_iterations, sub)
                if stm != CONVERGED:
                    sm = 0.5 * (lo + hi)
                    qm, stm, _, _ = _newton_kernel(packed, f * sm, q_lo, tol, max_iterations,
                                                   sub)
                    if stm != CONVERGED:
                        break
                gm, _ = _max_ratio(qm, glob, lig, alive)
                if gm >= 1.0:
                    hi, g_hi, q_hi = sm, gm, qm
                    if side == 1:
                        g_lo = 1.0 - 0.5 * (1.0 - g_lo)
                    side = 1
                else:
                    lo, g_lo, q_lo = sm, gm, qm
                    if side == -1:
                        g_hi = 1.0 + 0.5 * (g_hi - 1.0)
                    side = -1
            s_star = hi
            q = q_hi
            _, i_break = _max_ratio(q, glob, lig, alive)
            out_s[n] = s_star
            out_q[n] = q
            out_kind[n] = ROW_FMAX
            out_strip[n] = i_break
            n += 1
            # break, re-solve at the same load, cascade
            while True:
                _kill(lig, alive, i_break)
                q_new, st, _, _, _, _ = _solve_kernel(packed, f * s_star, q, tol,
                                                      max_iterations, log)
                # past a limit is expected here (the broken strip is past eps_max)
                if st != CONVERGED and st != CONVERGED_BEYOND_LIMITS:
                    out_s[n] = s_star
                    out_q[n] = q_new
                    out_kind[n] = ROW_FAILED
                    out_strip[n] = i_break
                    return n + 1, RAMP_NO_EQUILIBRIUM, alive
                q = q_new
                out_s[n] = s_star
                out_q[n] = q
                out_kind[n] = ROW_RUPTURED
                out_strip[n] = i_break
                n += 1
                g, i_next = _max_ratio(q, glob, lig, alive)
                if g < 1.0:
                    break
                i_break = i_next
            s_prev = s_star
            g_prev = g
            trial = target
        out_s[n] = target
        out_q[n] = q
        out_kind[n] = ROW_STEP
        out_strip[n] = -1
        n += 1
    return n, RAMP_COMPLETE, alive


@dataclass(frozen=True, eq=False)
class RampResult:
    """Outcome of :func:`ramp`.

    Attributes
    ----------
    frame : pandas.DataFrame
        One row per equilibrium on the path (ramp steps, and at each rupture the equilibrium
        where the strip reached F_max and the one after it broke): ``scale``, the applied load
        (``Fx_N`` ... ``Mz_Nm``), q from the reference pose (``x_mm`` ... ``phi_z_deg``),
        ``main_displacement`` (the loaded coordinate from the unloaded equilibrium, mm or deg;
        NaN for a combined load), ``event`` (``""``, ``"F_max: ISL"``, ``"ruptured: ISL"``,
        ``"dislocated: left"``, ``"no equilibrium"``) and ``n_ruptured``.
    model : Segment
        The final model: the input model with every strip that broke in ``ruptured``.
    q : ndarray, shape (6,)
        The last equilibrium [mm, rad].
    status : int
        0 reached ``to_scale``, 1 no equilibrium, 2 unloaded equilibrium not found.
    message : str
    load : Load
        The nominal load (scale 1).
    first_rupture_scale, ultimate_scale : float
        Load scale at which the first strip broke, and the last scale carried when the
        segment could no longer carry the load (NaN when not reached).
    events : tuple of (float, str, str)
        (scale, ``"ruptured"`` or ``"dislocated"``, strip or facet name), in order.
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

    @property
    def ok(self) -> bool:
        """True when the ramp reached ``to_scale``."""
        return self.status == RAMP_COMPLETE

    @functools.cached_property
    def state(self) -> SegmentState:
        """Element forces at the last equilibrium, with the ruptured strips marked."""
        return self.model.state(self.q)

    def model_at(self, row: int) -> Segment:
        """The model (strips ruptured so far) of row ``row`` of :attr:`frame`."""
        events = self.frame["event"].iloc[: row + 1]
        names = [e.split("ruptured: ", 1)[1].split(";")[0] for e in events
                 if e.startswith("ruptured: ")]
        start = self.model.ruptured - frozenset(
            n for _, kind, n in self.events if kind == "ruptured")
        return self.model.replace(ruptured=start | frozenset(names))

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
        """First rupture and ultimate load as scales and as load magnitudes (N or N m of the
        main component; NaN for a combined load or when not reached)."""
        main = self.load.main_dof
        nominal = float("nan") if main is None else float(self.load.as_array()[main])
        unit = "N" if main is not None and main < 3 else "Nm"
        if main is not None and main >= 3:
            nominal /= 1000.0
        return {"first_rupture_scale": self.first_rupture_scale,
                "ultimate_scale": self.ultimate_scale,
                f"first_rupture_{unit}": abs(nominal) * self.first_rupture_scale,
                f"ultimate_{unit}": abs(nominal) * self.ultimate_scale,
                "sequence": [name for _, kind, name in self.events if kind == "ruptured"]}


def ramp(model: Segment, load: Load, *, to_scale: float, steps: int = 200,
         tol: float = DEFAULT_TOL, max_iterations: int = 60,
         track_facets: bool | str = True) -> RampResult:
    """Follow ``s * load`` from s = 0 to ``to_scale`` with ligament strips that rupture.

    Parameters
    ----------
    model : Segment
        Strips already in ``model.ruptured`` stay broken.
    load : Load
        The nominal load (scale 1), e.g. ``segment.LOAD_CASES["FLX"]``.
    to_scale : float
        Last load scale (> 0).
    steps : int
        Equal load steps (>= 1); ruptures are located between them.
    tol, max_iterations
        Newton tolerance and iteration limit per solve (as :func:`segment.solve`).
    track_facets : bool or "every"
        Report facet dislocation events (``facet_state.dislocated`` on the
        facet states): True locates the first dislocated row by bisection between rupture
        events (see :func:`_facet_events`), ``"every"`` checks every row (~0.2 ms a row),
        False not at all.

    Returns
    -------
    RampResult
        Never raises when the segment fails: ``status`` and ``message`` say how it ended.

    Examples
    --------
    >>> import segment
    >>> r = segment.ramp(segment.c5c6(), segment.LOAD_CASES["FLX"], to_scale=20, steps=40)
    >>> r.failure_loads()["sequence"][:2]
    ['FL', 'ISL']
    """
    if not isinstance(model, Segment):
        raise TypeError(f"model must be a segment.Segment, got {type(model).__name__}")
    if not isinstance(load, Load):
        raise TypeError(f"load must be a segment.Load, got {type(load).__name__}")
    if not (isinstance(to_scale, numbers.Real) and math.isfinite(to_scale) and to_scale > 0):
        raise ValueError(f"ramp: to_scale must be a finite number > 0, got {to_scale!r}")
    if isinstance(steps, bool) or not isinstance(steps, numbers.Integral) or steps < 1:
        raise ValueError(f"ramp: steps must be an integer >= 1, got {steps!r}")
    from segment.solvers.equilibrium import _check_tolerances

    tol, max_iterations = _check_tolerances(tol, max_iterations)
    unloaded = model.unloaded
    glob, lig, fac, pts = model._packed
    names = model.strip_names
    if not unloaded.converged:
        frame = _frame([], load, np.zeros(6), [], names)
        return RampResult(frame, model, unloaded.q.copy(), RAMP_UNLOADED_FAILED,
                          f"unloaded equilibrium not found: {unloaded.message}", load,
                          float("nan"), float("nan"), ())
    size = int(steps) + 2 * len(names) + 2
    out_s = np.empty(size)
    out_q = np.empty((size, 6))
    out_kind = np.empty(size, dtype=np.int64)
    out_strip = np.empty(size, dtype=np.int64)
    n, status, alive = _ramp_kernel(glob, lig, fac, pts, load._vector, float(to_scale),
                                    int(steps),
                                    np.array(unloaded.q), model._carrying, tol, max_iterations,
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
    n_ruptured = []
    for s, _, kind, strip in rows:
        if kind == ROW_FMAX:
            event_text.append(f"F_max: {names[strip]}")
        elif kind == ROW_RUPTURED:
            ruptured_now.add(names[strip])
            events.append((s, "ruptured", names[strip]))
            event_text.append(f"ruptured: {names[strip]}")
        elif kind == ROW_FAILED:
            event_text.append("no equilibrium" + (f" after rupture of {names[strip]}"
                                                  if strip >= 0 else ""))
        else:
            event_text.append("")
        n_ruptured.append(len(ruptured_now))
    if track_facets:
        _facet_events(model, rows, names, events, event_text, track_facets == "every")
    frame = _frame(rows, load, unloaded.q, event_text, names)
    frame["n_ruptured"] = n_ruptured if rows else []
    good = [r for r in rows if r[2] != ROW_FAILED]
    q_last = good[-1][1].copy() if good else np.array(unloaded.q)
    ruptures = [e for e in events if e[1] == "ruptured"]
    first = ruptures[0][0] if ruptures else float("nan")
    if status == RAMP_NO_EQUILIBRIUM:
        ultimate = good[-1][0]
        message = (f"no equilibrium above {ultimate:.6g} x {load.name}"
                   + (f" after {len(ruptures)} rupture(s) ({', '.join(e[2] for e in ruptures)})"
                      if ruptures else "") + ": the segment can no longer carry the load")
    else:
        ultimate = float("nan")
        message = (f"reached {to_scale:g} x {load.name} with {len(ruptures)} rupture(s)"
                   + (f" ({', '.join(e[2] for e in ruptures)})" if ruptures else "")
                   + "; ultimate load not reached (the disc of eq. 1 has no failure law)")
    q_last.setflags(write=False)
    return RampResult(frame, final, q_last, int(status), message, load, float(first),
                      float(ultimate), tuple(sorted(events, key=lambda e: e[0])))


def _facet_events(model, rows, names, events, event_text, every):
    """Add ``dislocated`` events where a facet state first reports ``dislocated``.

    ``every``: evaluate the facet states at every row (one state evaluation per row,
    ~0.2 ms). Otherwise at the first and last row and the rows of rupture events, and by
    bisection between two of them where a facet went from seated to dislocated (about 8
    evaluations per transition): between ruptures the structure is elastic and the load
    grows monotonically, so a facet that dislocated is taken to stay dislocated until the
    next evaluated row. The bisection finds the first dislocated row in that case.
    """
    ruptured_at = []
    current = set(model.ruptured)
    for _, _, kind, strip in rows:
        if kind == ROW_RUPTURED:
            current.add(names[strip])
        ruptured_at.append(frozenset(current))
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


def _frame(rows, load, q_unloaded, event_text, names) -> pd.DataFrame:
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
        data["main_displacement"] = np.full(len(s), np.nan)
    else:
        d = q[:, main] - q_unloaded[main]
        data["main_displacement"] = d if main < 3 else np.degrees(d)
    data["event"] = list(event_text)
    import pandas as pd  # lazy: `import segment` stays light (pandas takes ~0.3 s)

    return pd.DataFrame(data)
