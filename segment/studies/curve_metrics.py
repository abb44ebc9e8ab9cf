"""What experimenters report from a moment-rotation curve: range of motion, neutral zone,
neutral-zone and elastic-zone stiffness; and the helical axis and the sagittal instantaneous
centre of rotation (ICR) along a path of poses (SOURCES.md §13).

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
    The signed curve theta(M) is fitted by a sum of two logistic functions,
    ``theta(M) = d + a1 s((M - c1)/w1) + a2 s((M - c2)/w2)``, ``s(u) = 1/(1 + exp(-u))``; the
    compliance is theta'(M); the NZ is the region of highest compliance, bounded by the
    maximum and the minimum of theta''(M); its size is theta(M+) - theta(M-) [deg]. The exact
    parameterisation of Smit et al.'s eq. (1) was not readable in our copy, so this form is
    **assumed** (a "summed sigmoid", as their abstract says). NZ stiffness: 1 / the largest
    compliance, the minimal stiffness of the fitted curve [N m/deg] (our reading).
    **Not available** when the extremes of theta'' fall on the ends of the fitted range (no
    S-shape within the data) or when the curve has no measured point inside the NZ on a side.
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
    The finite helical axis of the displacement between two poses (Spoor and Veldpaus 1980):
    ``R = R2 R1^T``, ``d = p2 - R p1``; angle and axis direction from R, the slide
    ``t = n . d`` along it and the point of the axis nearest the origin
    ``s = -1/2 n x (n x d) + 1/2 cot(theta/2) n x d``. The sagittal ICR is where the axis
    crosses the mid-sagittal plane of C6 (y = 0). Along a path, the axes of consecutive poses.

Examples
--------
>>> import numpy as np
>>> from segment.studies.curve_metrics import DoubleSigmoid
>>> f = DoubleSigmoid(d=0.0, a1=3.0, c1=0.0, w1=0.5, a2=3.0, c2=0.0, w2=0.5)
>>> nz = f.neutral_zone(-5.0, 5.0)
>>> bool(abs(nz.size_deg - 6.0 / np.sqrt(3.0)) < 1e-9)      # one logistic: a / sqrt(3)
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["DoubleSigmoid", "HelicalAxis", "NeutralZone", "Value", "anderst_comparison",
           "curve_metrics", "double_sigmoid_neutral_zone", "elastic_zone_stiffness",
           "finite_helical_axis", "fit_double_sigmoid", "helical_axes", "icr_path",
           "metrics_table",
           "range_of_motion", "sagittal_icr", "signed_curve", "zero_load_neutral_zone"]

NOT_AVAILABLE = "not available"

GRID_POINTS = 4001
"""Points of the grid on which the extremes of theta'' are searched before refinement."""
FIT_R2_MIN = 0.99
"""A double-sigmoid fit with r^2 below this is not used (Smit et al. report r^2 > 0.976 on
their porcine curves; ours are smoother, so a worse fit means the form does not describe the
curve)."""
MIN_ICR_STEP_DEG = 0.01
"""Helical axes of steps smaller than this are not used for the ICR (the axis of a tiny
rotation is ill-conditioned: its position error grows as 1/angle)."""

ANDERST2013_C5C6 = {"si_mean_mm": 3.2, "si_ci_mm": (2.5, 3.9),
                    "ap_mean_mm": -2.0, "ap_ci_mm": (-3.1, -1.0)}
"""Anderst et al. 2013, Table 2, C5/C6 in vivo flexion-extension ICR (SOURCES.md §5):
mean and 95 % CI of the mean, mm from the centre of the C6 body, + superior and + anterior.
Validation only: never a calibration target."""


@dataclass(frozen=True)
class Value:
    """A reported number or the reason it is not available.

    Attributes
    ----------
    value : float or None
        None when not available.
    unit : str
    note : str
        How it was obtained, or why it is not available.
    """

    value: float | None
    unit: str
    note: str = ""

    @property
    def available(self) -> bool:
        return self.value is not None

    def __str__(self) -> str:
        return NOT_AVAILABLE if self.value is None else f"{self.value:.4g} {self.unit}"


def _arrays(moment_Nm, rotation_deg, kept=None):
    m = np.asarray(moment_Nm, dtype=float).ravel()
    r = np.asarray(rotation_deg, dtype=float).ravel()
    if m.shape != r.shape or m.size == 0:
        raise ValueError(f"moments and rotations must be two arrays of the same length >= 1, "
                         f"got {m.shape} and {r.shape}")
    k = np.ones(m.size, bool) if kept is None else np.asarray(kept, dtype=bool).ravel()
    if k.shape != m.shape:
        raise ValueError(f"kept must have the shape of the moments {m.shape}, got {k.shape}")
    ok = k & np.isfinite(m) & np.isfinite(r)
    return m[ok], r[ok]


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


# ---------------------------------------------------------------- double sigmoid (Smit 2011)
def _sigma(u):
    return 0.5 * (1.0 + np.tanh(0.5 * u))      # 1 / (1 + exp(-u)), without overflow


@dataclass(frozen=True)
class NeutralZone:
    """The NZ of a fitted curve: bounds [N m], size [deg], stiffness [N m/deg]."""

    lower_Nm: float
    upper_Nm: float
    size_deg: float
    stiffness_Nm_per_deg: float
    theta_lower_deg: float
    theta_upper_deg: float


@dataclass(frozen=True)
class DoubleSigmoid:
    """``theta(M) = d + a1 s((M - c1)/w1) + a2 s((M - c2)/w2)`` [deg, N m] (module docstring).

    ``r2`` is the coefficient of determination of the fit (NaN when not fitted).
    """

    d: float
    a1: float
    c1: float
    w1: float
    a2: float
    c2: float
    w2: float
    r2: float = float("nan")

    def _terms(self):
        return ((self.a1, self.c1, self.w1), (self.a2, self.c2, self.w2))

    def __call__(self, M):
        M = np.asarray(M, dtype=float)
        return self.d + sum(a * _sigma((M - c) / w) for a, c, w in self._terms())

    def derivative(self, M, order: int = 1):
        """theta', theta'' or theta''' at M [deg/(N m)^order]."""
        M = np.asarray(M, dtype=float)
        out = np.zeros_like(M)
        for a, c, w in self._terms():
            s = _sigma((M - c) / w)
            base = s * (1.0 - s)
            poly = {1: 1.0, 2: 1.0 - 2.0 * s, 3: 1.0 - 6.0 * s + 6.0 * s * s}[order]
            out = out + a * base * poly / w ** order
        return out

    def _stationary(self, a: float, b: float, *, order: int) -> float:
        """Where the ``order``-th derivative is extreme in [a, b]: the root of the next one
        (Brent), or the better end when it keeps its sign there."""
        from scipy.optimize import brentq

        def f(x):
            return float(self.derivative(x, order + 1))

        fa, fb = f(a), f(b)
        if fa == 0.0:
            return float(a)
        if fb == 0.0 or fa * fb > 0.0:
            return float(b if abs(fb) < abs(fa) else a)
        return float(brentq(f, a, b, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=200))

    def neutral_zone(self, lower_Nm: float, upper_Nm: float) -> NeutralZone | None:
        """NZ within [lower_Nm, upper_Nm]: bounded by the maximum (left) and the minimum
        (right) of theta''; None when either lies on an end of the range or they are out of
        order (no S-shape there)."""
        grid = np.linspace(lower_Nm, upper_Nm, GRID_POINTS)
        g2 = self.derivative(grid, 2)
        found = []
        for sign in (1.0, -1.0):                 # max of theta'', then min of theta''
            k = int(np.argmax(sign * g2))
            if k in (0, grid.size - 1):
                return None
            found.append(self._stationary(grid[k - 1], grid[k + 1], order=2))
        lo, hi = found
        if not lo < hi:
            return None
        inner = np.linspace(lo, hi, GRID_POINTS)
        k = int(np.argmax(self.derivative(inner, 1)))
        peak = (self._stationary(inner[k - 1], inner[k + 1], order=1)
                if 0 < k < inner.size - 1 else float(inner[k]))
        compliance = float(self.derivative(peak, 1))
        t_lo, t_hi = float(self(lo)), float(self(hi))
        return NeutralZone(lower_Nm=lo, upper_Nm=hi, size_deg=t_hi - t_lo,
                           stiffness_Nm_per_deg=1.0 / compliance, theta_lower_deg=t_lo,
                           theta_upper_deg=t_hi)


def fit_double_sigmoid(moment_Nm, rotation_deg) -> DoubleSigmoid:
    """Least-squares fit of :class:`DoubleSigmoid` to a signed curve (moments [N m], rotations
    [deg]); starts from one logistic on each side of the curve's middle and keeps the best of
    a few starts."""
    from scipy.optimize import least_squares

    m, r = _arrays(moment_Nm, rotation_deg)
    if m.size < 8:
        raise ValueError(f"a double-sigmoid fit needs at least 8 points (7 parameters), got "
                         f"{m.size}")
    span = float(np.ptp(m))
    rise = float(np.ptp(r)) or 1.0
    mid = float(np.median(m))

    def residual(p):
        return DoubleSigmoid(*p)(m) - r

    best = None
    for width in (0.1, 0.25, 0.5):
        for shift in (0.1, 0.25):
            p0 = [float(r.min()), 0.5 * rise, mid - shift * span, width * span,
                  0.5 * rise, mid + shift * span, 0.7 * width * span]
            lower = [-np.inf, -10 * rise, m.min() - span, 1e-4 * span,
                     -10 * rise, m.min() - span, 1e-4 * span]
            upper = [np.inf, 10 * rise, m.max() + span, 10 * span,
                     10 * rise, m.max() + span, 10 * span]
            try:
                sol = least_squares(residual, p0, bounds=(lower, upper), x_scale="jac",
                                    xtol=1e-14, ftol=1e-14, gtol=1e-14, max_nfev=20000)
            except (ValueError, FloatingPointError):
                continue
            if best is None or sol.cost < best.cost:
                best = sol
    if best is None:
        raise ValueError("the double-sigmoid fit did not start")
    ss_res = 2.0 * best.cost
    ss_tot = float(np.sum((r - r.mean()) ** 2))
    return DoubleSigmoid(*best.x, r2=1.0 - ss_res / ss_tot if ss_tot > 0 else float("nan"))


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


def double_sigmoid_neutral_zone(moment_Nm, rotation_deg, *, kept=None):
    """The NZ of a signed curve by the double sigmoid (module docstring).

    Returns
    -------
    dict
        ``size`` (Value, deg), ``stiffness`` (Value, N m/deg), ``lower_Nm`` and ``upper_Nm``
        (Value, the NZ bounds), and ``fit`` (DoubleSigmoid or None).
    """
    M, R = _arrays(moment_Nm, rotation_deg, kept)

    def missing(why, fit=None):
        return {"size": Value(None, "deg", why), "stiffness": Value(None, "N m/deg", why),
                "lower_Nm": Value(None, "N m", why), "upper_Nm": Value(None, "N m", why),
                "fit": fit}

    if M.size < 8:
        return missing(f"fewer than 8 measured points ({M.size})")
    if not (M.min() < 0.0 < M.max()):
        return missing("the curve must cover both directions (negative and positive moments)")
    fit = fit_double_sigmoid(M, R)
    if not fit.r2 >= FIT_R2_MIN:
        return missing(f"the double sigmoid does not describe the curve (r^2 = {fit.r2:.4f} "
                       f"< {FIT_R2_MIN})", fit)
    nz = fit.neutral_zone(float(M.min()), float(M.max()))
    if nz is None:
        return missing("no S-shape within the curve's moments: the extremes of the second "
                       "derivative lie on the ends of the range", fit)
    inside_neg = np.any((M < 0.0) & (M >= nz.lower_Nm))
    inside_pos = np.any((M > 0.0) & (M <= nz.upper_Nm))
    if not (inside_neg and inside_pos):
        return missing(f"no measured point inside the fitted NZ ({nz.lower_Nm:.2f} to "
                       f"{nz.upper_Nm:.2f} N m) on "
                       f"{'both sides' if not (inside_neg or inside_pos) else 'one side'}: "
                       "the NZ lies in an unmeasured range", fit)
    note = f"double sigmoid, r^2 = {fit.r2:.5f}"
    return {"size": Value(nz.size_deg, "deg", note),
            "stiffness": Value(nz.stiffness_Nm_per_deg, "N m/deg", note),
            "lower_Nm": Value(nz.lower_Nm, "N m", note),
            "upper_Nm": Value(nz.upper_Nm, "N m", note), "fit": fit}


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


# ---------------------------------------------------------------- helical axis, ICR
@dataclass(frozen=True)
class HelicalAxis:
    """Finite helical axis of a displacement (Spoor and Veldpaus 1980).

    Attributes
    ----------
    direction : ndarray (3,)
        Unit axis n (the rotation is right-handed about it).
    angle_rad : float
        Rotation about n, in [0, pi].
    slide_mm : float
        Translation along n.
    point_mm : ndarray (3,)
        The point of the axis nearest the origin of the frame [mm].
    """

    direction: np.ndarray
    angle_rad: float
    slide_mm: float
    point_mm: np.ndarray


def finite_helical_axis(R1, p1, R2, p2) -> HelicalAxis | None:
    """The helical axis carrying a body from pose 1 to pose 2 (rotations (3, 3), origins (3,)
    [mm], both in one fixed frame); None for a pure translation (angle below 1e-12 rad)."""
    R1, R2 = np.asarray(R1, dtype=float), np.asarray(R2, dtype=float)
    R = R2 @ R1.T
    d = np.asarray(p2, dtype=float) - R @ np.asarray(p1, dtype=float)
    v = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    sin_t = float(np.linalg.norm(v))
    cos_t = 0.5 * (float(np.trace(R)) - 1.0)
    angle = math.atan2(sin_t, cos_t)
    if angle < 1e-12:
        return None
    if sin_t > 1e-6:
        n = v / sin_t
    else:                                         # angle near pi: n from the symmetric part
        B = 0.5 * (R + np.eye(3))
        n = B[:, int(np.argmax(np.diag(B)))]
        n = n / np.linalg.norm(n)
    nxd = np.cross(n, d)
    point = -0.5 * np.cross(n, nxd) + 0.5 / math.tan(0.5 * angle) * nxd
    return HelicalAxis(direction=n, angle_rad=angle, slide_mm=float(n @ d), point_mm=point)


def sagittal_icr(axis: HelicalAxis, *, plane_y_mm: float = 0.0) -> np.ndarray | None:
    """Where the axis crosses the sagittal plane y = ``plane_y_mm`` (x, z) [mm]; None when the
    axis runs within 1e-9 of parallel to that plane."""
    n, s = axis.direction, axis.point_mm
    if abs(n[1]) < 1e-9:
        return None
    lam = (plane_y_mm - s[1]) / n[1]
    x = s + lam * n
    return np.array([x[0], x[2]])


def helical_axes(R_path, p_path) -> list[HelicalAxis | None]:
    """Helical axes between consecutive poses of a path (rotations (n, 3, 3), origins (n, 3))."""
    return [finite_helical_axis(R_path[k], p_path[k], R_path[k + 1], p_path[k + 1])
            for k in range(len(R_path) - 1)]


def _poses(model, q_rows):
    from segment.elements.kinematics import pose

    out = [pose(q, model.reference) for q in q_rows]
    return np.array([o[1] for o in out]), np.array([o[0] for o in out])


def _fe_path(model, extension_Nm, flexion_Nm, steps):
    """(moments (n,) signed [N m], q (n, 6), converged (n,)) from the extended through the
    unloaded to the flexed pose."""
    from segment.studies.paths import solve_paths

    if not (extension_Nm > 0 and flexion_Nm > 0 and int(steps) >= 1):
        raise ValueError(f"extension_Nm and flexion_Nm must be > 0 and steps >= 1, got "
                         f"{extension_Nm!r}, {flexion_Nm!r}, {steps!r}")
    sides = {}
    for sign, top in ((-1.0, extension_Nm), (1.0, flexion_Nm)):
        m = np.linspace(0.0, top, int(steps) + 1)[1:]
        F = np.zeros((m.size, 6))
        F[:, 4] = sign * m * 1000.0
        r = solve_paths(model, F)
        sides[sign] = (sign * m, r.q[0], r.converged[0], r)
    m_e, q_e, ok_e, r = sides[-1.0]
    m_f, q_f, ok_f, _ = sides[1.0]
    unloaded_ok = bool(np.isin(r.status_unloaded[0], (0, 6)))
    moments = np.concatenate([m_e[::-1], [0.0], m_f])
    q = np.concatenate([q_e[::-1], r.q_unloaded[:1], q_f])
    ok = np.concatenate([ok_e[::-1], [unloaded_ok], ok_f])
    return moments, q, ok


def icr_path(model, *, extension_Nm: float = 1.8, flexion_Nm: float = 1.8, steps: int = 36,
             frames=None) -> pd.DataFrame:
    """The model's sagittal ICR along flexion-extension, from ``extension_Nm`` of extension
    through the unloaded pose to ``flexion_Nm`` of flexion, ``steps`` moment steps per
    direction (pure moments about the joint's y axis, continuation from the unloaded
    equilibrium).

    The ICR of each step is where the helical axis of the step crosses C6's mid-sagittal
    plane, given relative to the C6 body centroid (the ISB origin,
    :class:`segment.core.conventions.IsbFrames`): ``ap_mm`` along C6's x (+ anterior), ``si_mm``
    along C6's z (+ superior).

    Returns
    -------
    DataFrame
        moment_from_Nm, moment_to_Nm (signed, + flexion), phi_y_deg (flexion from the unloaded
        pose at the step's end), step_deg (the step's rotation), ap_mm, si_mm, converged (the
        step is used: both ends converged and it turned at least MIN_ICR_STEP_DEG).
    """
    from segment.core.conventions import IsbFrames

    frames = IsbFrames.from_ligaments() if frames is None else frames
    moments, Q, ok = _fe_path(model, extension_Nm, flexion_Nm, steps)
    Rs, ps = _poses(model, Q)
    c6 = frames.centroid_c6
    q_u = Q[int(np.flatnonzero(moments == 0.0)[0])]
    out = []
    for k, axis in enumerate(helical_axes(Rs, ps)):
        icr = None if axis is None else sagittal_icr(axis, plane_y_mm=c6[1])
        step = 0.0 if axis is None else math.degrees(axis.angle_rad)
        good = bool(ok[k] and ok[k + 1] and icr is not None and step >= MIN_ICR_STEP_DEG)
        out.append({"moment_from_Nm": moments[k], "moment_to_Nm": moments[k + 1],
                    "phi_y_deg": math.degrees(Q[k + 1, 4] - q_u[4]), "step_deg": step,
                    "ap_mm": (icr[0] - c6[0]) if good else float("nan"),
                    "si_mm": (icr[1] - c6[2]) if good else float("nan"), "converged": good})
    return pd.DataFrame(out)


def anderst_comparison(model, *, extension_Nm: float = 1.8, flexion_Nm: float = 1.8,
                       steps: int = 36) -> pd.DataFrame:
    """The model's mean sagittal ICR along flexion-extension against Anderst et al. 2013
    (Table 2, C5/C6; validation only, SOURCES.md §5).

    The model's mean weights each step by its rotation (a mean per degree of motion; how
    Anderst et al. averaged over their frames is not available to us). Also the ICR of the
    whole motion: the one helical axis from the extended to the flexed pose.

    Returns
    -------
    DataFrame
        direction (``superior-inferior``, ``anterior-posterior``), model_mean_mm,
        model_min_mm, model_max_mm (over the steps), model_whole_motion_mm, anderst_mean_mm,
        anderst_ci_low_mm, anderst_ci_high_mm, within_ci, difference_mm (model mean -
        Anderst mean).
    """
    from segment.core.conventions import IsbFrames

    frames = IsbFrames.from_ligaments()
    path = icr_path(model, extension_Nm=extension_Nm, flexion_Nm=flexion_Nm, steps=steps,
                    frames=frames)
    good = path[path["converged"]]
    if good.empty:
        raise ValueError("no converged step of the flexion-extension path")
    w = good["step_deg"].to_numpy()
    _, Q, ok = _fe_path(model, extension_Nm, flexion_Nm, 1)
    whole = None
    if ok.all():
        Rs, ps = _poses(model, Q[[0, -1]])
        axis = finite_helical_axis(Rs[0], ps[0], Rs[1], ps[1])
        icr = None if axis is None else sagittal_icr(axis, plane_y_mm=frames.centroid_c6[1])
        if icr is not None:
            whole = (icr[0] - frames.centroid_c6[0], icr[1] - frames.centroid_c6[2])
    rows = []
    for direction, col, key, idx in (("superior-inferior", "si_mm", "si", 1),
                                     ("anterior-posterior", "ap_mm", "ap", 0)):
        mean = float(np.sum(w * good[col]) / np.sum(w))
        lo, hi = ANDERST2013_C5C6[f"{key}_ci_mm"]
        rows.append({"direction": direction, "model_mean_mm": mean,
                     "model_min_mm": float(good[col].min()),
                     "model_max_mm": float(good[col].max()),
                     "model_whole_motion_mm": float("nan") if whole is None else float(whole[idx]),
                     "anderst_mean_mm": ANDERST2013_C5C6[f"{key}_mean_mm"],
                     "anderst_ci_low_mm": lo, "anderst_ci_high_mm": hi,
                     "within_ci": bool(lo <= mean <= hi),
                     "difference_mm": mean - ANDERST2013_C5C6[f"{key}_mean_mm"]})
    return pd.DataFrame(rows)


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
