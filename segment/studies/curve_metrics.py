"""What experimenters report from a moment-rotation curve: range of motion, neutral zone,
neutral-zone and elastic-zone stiffness (SOURCES.md §13); the helical axis and the sagittal
instantaneous centre of rotation (ICR) along a path of poses live beside it.

A *curve* here is one loading direction: moments M >= 0 [N m] in the named direction and the
rotation theta [deg] from the unloaded pose, positive in that direction (a
:class:`~segment.studies.curves.Curve`, a row set of :func:`~segment.studies.curves.model_curve`,
or plain arrays). Two directions of one axis (flexion and extension) are joined into one
*signed* curve, flexion positive.

Definitions implemented
-----------------------
ROM
    The rotation at the largest applied moment (or at a moment asked for), from the unloaded
    pose (Panjabi's range of motion, SOURCES.md §13). Read on the curve by linear
    interpolation between points that are measurements; **not available** where the moment
    lies outside them.
Zero-load neutral zone (Panjabi)
    The residual deformation at zero load of a loading-unloading cycle: the angle between the
    two points where the branches coming down from the two directions cross M = 0 (the
    "angulation difference at zero loading"). It needs the unloading branches: for curves
    without them (the specimen curves of Nightingale et al. 2002, the model's curves) it is
    **not available**. The model has no hysteresis (elastic elements, no friction or
    viscosity): its unloading would retrace the loading, so its zero-load NZ is 0 by
    construction; that is a property of the model, not a result.
Double-sigmoid neutral zone (Smit et al. 2011)
    The signed curve fitted by a sum of two logistic functions; the NZ is the region of highest
    compliance (:mod:`segment.studies.double_sigmoid`, where the form and its reading are
    stated).
Elastic-zone stiffness
    The least-squares slope dM/dtheta [N m/deg] over the measured points from the NZ boundary
    (or from a given moment) to the largest moment: the zone from the end of the NZ to the
    maximal load.

For the curves of Nightingale et al. 2002 (``data/curves/``): every processed curve runs in
0.1 N m steps, straight from the origin to the first recorded sample (1.3-2.0 N m; flagged
``ignore``) and then straight between a few recorded samples (the slope changes at 5-10 of
the steps of a curve, mostly at two adjacent ones: most samples lie between grid moments,
SOURCES.md §13). Hence:
the NZ, which lies where the straight initial line is, is **not available** by either
definition; ROM at the largest moment and the elastic-zone stiffness over the recorded range
are; local slopes between grid points are the slopes of the interpolation, not measurements.

Helical axis and ICR
    The finite helical axis between two poses and the sagittal ICR are
    :mod:`segment.studies.helical_axis`; the model's ICR along flexion-extension and its
    comparison with Anderst et al. 2013 :mod:`segment.studies.icr`.

One concept: the metrics of one axis of a curve (:func:`curve_metrics`) and the table of the
model's and the specimens' (:func:`metrics_table`).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from segment.studies.double_sigmoid import double_sigmoid_neutral_zone
from segment.studies.metric_value import NOT_AVAILABLE, Value, _arrays

__all__ = ["EZ_WINDOW_NM", "MODEL_STEP_NM", "curve_metrics", "elastic_zone_stiffness",
           "metrics_table", "range_of_motion", "signed_curve", "zero_load_neutral_zone"]


# ---------------------------------------------------------------- ROM and stiffness
def range_of_motion(moment_Nm, rotation_deg, *, kept=None, at_Nm=None) -> Value:
    """Rotation [deg] at the largest measured moment, or at ``at_Nm``, from the unloaded pose.

    Parameters
    ----------
    moment_Nm, rotation_deg : array_like (n,)
        One loading direction, moments increasing [N m], rotations [deg].
    kept : array_like of bool (n,), optional
        The points that are measurements (default all).
    at_Nm : float, optional
        The moment at which to read the ROM; linear interpolation between measured points.
    """
    m, r = _arrays(moment_Nm, rotation_deg, kept)
    if m.size == 0:
        return Value(None, "deg", "no measured point")
    if at_Nm is None:
        k = int(np.argmax(m))
        return Value(float(r[k]), "deg", f"at the largest moment, {m[k]:g} N m")
    at = float(at_Nm)
    if at == 0.0:
        return Value(0.0, "deg", "at zero load (the unloaded pose)")
    if not m.min() - 1e-12 <= at <= m.max() + 1e-12:
        return Value(None, "deg", f"{at:g} N m lies outside the measured moments "
                                  f"({m.min():g}-{m.max():g} N m)")
    order = np.argsort(m)
    return Value(float(np.interp(at, m[order], r[order])), "deg", f"at {at:g} N m")


def elastic_zone_stiffness(moment_Nm, rotation_deg, *, kept=None, from_Nm=0.0,
                           to_Nm=math.inf) -> Value:
    """Least-squares slope dM/dtheta [N m/deg] over the measured points with
    ``from_Nm <= M <= to_Nm`` (one loading direction)."""
    m, r = _arrays(moment_Nm, rotation_deg, kept)
    sel = (m >= from_Nm - 1e-12) & (m <= to_Nm + 1e-12)
    m, r = m[sel], r[sel]
    if m.size < 2 or np.ptp(r) <= 0.0:
        return Value(None, "N m/deg", f"fewer than two measured points between {from_Nm:g} "
                                      f"and {min(to_Nm, 1e9):g} N m")
    slope = np.polyfit(r, m, 1)[0]
    return Value(float(slope), "N m/deg",
                 f"least-squares slope over {m.size} points, {m.min():g}-{m.max():g} N m")


# ---------------------------------------------------------------- zero-load NZ (Panjabi)
def zero_load_neutral_zone(down_from_positive=None, down_from_negative=None) -> Value:
    """Panjabi's zero-load neutral zone [deg] of a loading-unloading cycle.

    Parameters
    ----------
    down_from_positive : tuple of array_like (M, theta), optional
        The unloading branch from the largest positive moment, signed moments [N m] and
        rotations [deg]; must reach M = 0.
    down_from_negative : tuple of array_like (M, theta), optional
        The same from the largest negative moment.

    Returns
    -------
    Value
        ``theta_+(0) - theta_-(0)``: the angle between the two zero-load points; not available
        without both unloading branches.
    """
    if down_from_positive is None or down_from_negative is None:
        return Value(None, "deg", "needs the unloading branches of a loading-unloading cycle; "
                                  "the curve has loading branches only")
    zero = []
    for name, branch in (("positive", down_from_positive), ("negative", down_from_negative)):
        m, r = _arrays(*branch)
        if not (m.min() <= 0.0 <= m.max()):
            return Value(None, "deg", f"the unloading branch from the {name} side does not "
                                      "reach zero load")
        order = np.argsort(m)
        zero.append(float(np.interp(0.0, m[order], r[order])))
    return Value(zero[0] - zero[1], "deg", "angle between the zero-load points of the two "
                                           "unloading branches")


def signed_curve(positive, negative) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Join two loading directions of one axis into one signed curve.

    Parameters
    ----------
    positive, negative : tuple (moment_Nm, rotation_deg, kept)
        Each direction with its moments (>= 0) and rotations in its own direction, and the
        mask of measured points (None: all).

    Returns
    -------
    moment_Nm, rotation_deg, kept : ndarray
        Sorted by moment; the negative direction's moments and rotations negated; a point at
        M = 0 is kept once.
    """
    parts = []
    for (m, r, k), sign in ((negative, -1.0), (positive, 1.0)):
        m = np.asarray(m, dtype=float)
        r = np.asarray(r, dtype=float)
        k = np.ones(m.size, bool) if k is None else np.asarray(k, dtype=bool)
        parts.append((sign * m, sign * r, k))
    M = np.concatenate([p[0] for p in parts])
    R = np.concatenate([p[1] for p in parts])
    K = np.concatenate([p[2] for p in parts])
    order = np.argsort(M, kind="stable")
    M, R, K = M[order], R[order], K[order]
    zero = np.flatnonzero(M == 0.0)
    if zero.size > 1:
        drop = zero[1:]
        keep_flag = bool(K[zero].any())
        M, R, K = np.delete(M, drop), np.delete(R, drop), np.delete(K, drop)
        K[zero[0]] = keep_flag
    return M, R, K


def curve_metrics(positive, negative, *, names=("flexion", "extension"), ez_window_Nm=None,
                  rom_at_Nm=None) -> pd.DataFrame:
    """Every metric of one axis (two loading directions) as a table.

    Parameters
    ----------
    positive, negative : tuple (moment_Nm, rotation_deg, kept)
        The two loading directions (:func:`signed_curve`).
    names : tuple of str
        Names of the positive and negative directions.
    ez_window_Nm : tuple (from, to), optional
        Moments [N m] of the elastic-zone stiffness; default from the NZ bound (when
        available, else the first measured moment) to the largest moment.
    rom_at_Nm : float, optional
        Read the ROM at this moment (default: the largest measured moment).

    Returns
    -------
    DataFrame
        metric, direction, value (NaN where not available), unit, note.
    """
    rows = []

    def add(metric, direction, v: Value):
        rows.append({"metric": metric, "direction": direction,
                     "value": float("nan") if v.value is None else v.value,
                     "unit": v.unit, "note": v.note if v.value is not None
                     else f"{NOT_AVAILABLE}: {v.note}"})

    M, R, K = signed_curve(positive, negative)
    nz = double_sigmoid_neutral_zone(M, R, kept=K)
    for (m, r, k), name, bound in ((positive, names[0], nz["upper_Nm"]),
                                   (negative, names[1], nz["lower_Nm"])):
        add("ROM", name, range_of_motion(m, r, kept=k, at_Nm=rom_at_Nm))
        if ez_window_Nm is not None:
            lo, hi = ez_window_Nm
        else:
            lo, hi = (abs(bound.value) if bound.available else 0.0), math.inf
        add("elastic-zone stiffness", name, elastic_zone_stiffness(m, r, kept=k, from_Nm=lo,
                                                                   to_Nm=hi))
    add("NZ, zero load (Panjabi)", "both", zero_load_neutral_zone())
    add("NZ, double sigmoid (Smit 2011)", "both", nz["size"])
    add("NZ stiffness, double sigmoid", "both", nz["stiffness"])
    add("NZ bound", names[0], nz["upper_Nm"])
    add("NZ bound", names[1], Value(None if not nz["lower_Nm"].available
                                    else -nz["lower_Nm"].value, "N m", nz["lower_Nm"].note))
    return pd.DataFrame(rows, columns=["metric", "direction", "value", "unit", "note"])



EZ_WINDOW_NM = (2.0, 3.5)
"""Moments [N m] of the elastic-zone stiffness when the model and the specimen curves of
Nightingale et al. 2002 are compared: every specimen has recorded points over it (their
first recorded samples lie at 1.3-2.0 N m, SOURCES.md §10), so all are read over the same
range."""
MODEL_STEP_NM = 0.05
"""Moment step [N m] of the model's curve for its metrics (its NZ needs points near 0)."""


def _model_direction(model, mode, top_Nm):
    from segment.studies.curves import model_curve

    m = np.round(np.arange(1, round(top_Nm / MODEL_STEP_NM) + 1) * MODEL_STEP_NM, 10)
    c = model_curve(model, mode, m)
    ok = c["converged"].to_numpy()
    return np.r_[0.0, m], np.r_[0.0, c["rotation_deg"].to_numpy()], np.r_[True, ok]


def metrics_table(model, curves, *, modes=("flexion", "extension"),
                  ez_window_Nm=EZ_WINDOW_NM) -> pd.DataFrame:
    """The metrics of the model and of every specimen of ``curves`` for one axis.

    Parameters
    ----------
    model : Segment
    curves : CurveSet
        Specimen curves with both ``modes`` (the positive direction first).
    modes : tuple of str
    ez_window_Nm : tuple (from, to)
        Moments of the elastic-zone stiffness, the same for the model and the specimens.

    Returns
    -------
    DataFrame
        source (``model`` or the specimen), metric, direction, value (NaN: not available),
        unit, note. The model's curve runs to the specimens' largest moment in steps of
        :data:`MODEL_STEP_NM`.
    """
    parts = []
    specimens = [s for s in curves.specimens
                 if all(any(c.specimen == s and c.mode == m for c in curves.curves)
                        for m in modes)]
    top = max(float(c.moment_Nm.max()) for c in curves.curves if c.mode in modes)
    model_dirs = [_model_direction(model, m, top) for m in modes]
    t = curve_metrics(*model_dirs, names=modes, ez_window_Nm=ez_window_Nm)
    t.insert(0, "source", "model")
    parts.append(t)
    for s in specimens:
        dirs = []
        for m in modes:
            c = curves.curve(s, m)
            dirs.append((c.moment_Nm, c.rotation_deg, c.kept))
        t = curve_metrics(*dirs, names=modes, ez_window_Nm=ez_window_Nm)
        t.insert(0, "source", s)
        parts.append(t)
    return pd.concat(parts, ignore_index=True)
