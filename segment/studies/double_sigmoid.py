"""The double-sigmoid neutral zone (Smit et al. 2011): a signed curve fitted by two logistics.

One concept (SOURCES.md §13): the signed moment-rotation curve theta(M) of one axis is fitted by
a sum of two logistic functions,
``theta(M) = d + a1 s((M - c1)/w1) + a2 s((M - c2)/w2)``, ``s(u) = 1/(1 + exp(-u))``; the
compliance is theta'(M); the NZ is the region of highest compliance, bounded by the maximum and
the minimum of theta''(M); its size is theta(M+) - theta(M-) [deg]. The exact parameterisation
of Smit et al.'s eq. (1) was not readable in our copy, so this form is **assumed** (a "summed
sigmoid", as their abstract says). NZ stiffness: 1 / the largest compliance, the minimal
stiffness of the fitted curve [N m/deg] (our reading). **Not available** when the extremes of
theta'' fall on the ends of the fitted range (no S-shape within the data) or when the curve has
no measured point inside the NZ on a side. The other metrics of a curve are
:mod:`segment.studies.curve_metrics`.

Examples
--------
>>> import numpy as np
>>> from segment.studies.double_sigmoid import DoubleSigmoid
>>> f = DoubleSigmoid(d=0.0, a1=3.0, c1=0.0, w1=0.5, a2=3.0, c2=0.0, w2=0.5)
>>> nz = f.neutral_zone(-5.0, 5.0)
>>> bool(abs(nz.size_deg - 6.0 / np.sqrt(3.0)) < 1e-9)      # one logistic: a / sqrt(3)
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from segment.studies.metric_value import Value, _arrays

__all__ = ["FIT_R2_MIN", "GRID_POINTS", "DoubleSigmoid", "NeutralZone",
           "double_sigmoid_neutral_zone", "fit_double_sigmoid"]

GRID_POINTS = 4001
"""Points of the grid on which the extremes of theta'' are searched before refinement."""
FIT_R2_MIN = 0.99
"""A double-sigmoid fit with r^2 below this is not used (Smit et al. report r^2 > 0.976 on
their porcine curves; ours are smoother, so a worse fit means the form does not describe the
curve)."""


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
