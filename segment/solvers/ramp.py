"""Quasi-static load ramp with ligament rupture: the segment up to failure.

A strip whose force reaches F_max (point C of DETC2000/MECH-6821 Table 3, de Jager 1996)
breaks and carries nothing afterwards (Tejszerska and Gzik, "Biomechanical model of the human
cervical spine", section 4: "When the force exceeds dynamic strength of ligament the fracture
of appropriate strip is simulated by zeroing its ... force"). Rupture depends on history, so
it lives here and in :func:`segment.simulate`; :func:`segment.solve` stays history-free (a
model whose strips broke is the :class:`~segment.Segment` with ``ruptured`` set, and solves
like any other).

One concept: the driver :func:`ramp`, from a model and a load to a
:class:`~segment.solvers.ramp_result.RampResult`: inputs checked, the unloaded equilibrium,
one call of the compiled ramp (:mod:`segment.solvers.ramp_kernel`, which follows the path,
locates each rupture and the validity limit), then the rows turned into events, the facet
dislocations located and the message written.

The ramp follows the load ``s * load`` for s = 0 -> ``to_scale``; rows are written at the
``steps`` equal steps and at every event. Between rows the load grows in increments of its
own, so the failure loads do not depend on ``steps`` (:data:`STEP_INDEPENDENCE_RTOL`); the
strain criterion ``g(s) = max_i eps_i(q(s)) / eps_max,i >= 1`` is the force criterion of the
paper (the curves of Table 3 rise strictly from A to C); see
:mod:`segment.solvers.ramp_kernel`.

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
from typing import TYPE_CHECKING

import numpy as np

from segment.core.model import Segment
from segment.core.newton import DEFAULT_TOL
from segment.core.status import Status
from segment.core.validity import (
    BEYOND_LIMIT,
    NO_TAUT_LIGAMENT,
    ValidityLimits,
    load_validity_limits,
)
from segment.elements.disc import DOF_NAMES
from segment.elements.loads import Load
from segment.solvers.ramp_kernel import (
    LIMIT_BOUND,
    LIMIT_NO_TAUT,
    RAMP_LIMIT,
    RAMP_NO_EQUILIBRIUM,
    ROW_FAILED,
    ROW_FMAX,
    ROW_RUPTURED,
    ROW_STEP,
    _ramp_kernel,
)
from segment.solvers.ramp_result import RampLimit, RampResult, _main_column

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MAX_TO_SCALE", "STEP_INDEPENDENCE_RTOL", "ramp"]

MAX_TO_SCALE = 1e6
"""Largest ``to_scale`` accepted: a million times the nominal load (1.8 MN m, 20 MN) is far
beyond any validity limit; larger values are refused with a one-line error."""
STEP_INDEPENDENCE_RTOL = 0.01
"""Stated tolerance: failure loads of ``steps`` N and 4N agree within 1 % (tested)."""


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
    'flexion beyond 21.6 deg from the unloaded equilibrium'
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
    from segment.solvers.equilibrium import check_tolerances

    tol, max_iterations = check_tolerances(tol, max_iterations)
    unloaded = model.unloaded
    glob, lig, fac, pts = model._packed
    names = model.strip_names
    if not unloaded.converged:
        frame = _frame([], load, np.zeros(6), [], [], [])
        return RampResult(frame, model, unloaded.q.copy(), Status.UNLOADED_NOT_FOUND,
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
    return RampResult(frame, final, q_last, Status(status), message, load, float(first),
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
