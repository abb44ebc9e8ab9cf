"""What the OpenSim and MuJoCo writers share: SI units, the laws as piecewise-linear
functions, the facet approximation, the export record and a tool-side equilibrium finder.

Units
-----
The model lives in mm, N, N mm, rad (:mod:`segment`); OpenSim and MuJoCo take SI units. The
conversion happens here, once::

    length        mm      -> m          x 1e-3            (M_PER_MM)
    moment        N mm    -> N m        x 1e-3            (NM_PER_NMM)
    stiffness     N/mm    -> N/m        x 1e3
    rot. stiff.   N mm/rad -> N m/rad   x 1e-3
    inertia       kg mm^2 -> kg m^2     x 1e-6            (KG_M2_PER_KG_MM2)

Forces stay in N, angles in rad, masses in kg.

What is exact
-------------
The 6-DOF joint, the disc (eq. 1, and the piecewise-linear neutral-zone law) and the
ligaments (trilinear, tension-only, strips and surgical cuts included) are piecewise linear in
a scalar of the tool: a joint coordinate or a path length. Both tools can express such a
function exactly (OpenSim's ``PiecewiseLinearFunction`` and expressions; MuJoCo's sums of
dead-band tendon springs), so the exported model has the same generalized-force field as
:meth:`segment.Segment.residual`, to rounding. ``tests/test_export.py`` holds both tools to
it and to :func:`segment.solve` (1e-8 mm and rad at the nine Moroney equilibria).

What is approximated
--------------------
The facet joints: a regularized contact between two cylinder end faces (:mod:`segment.
elements.facet`) exists in neither tool. Both files carry the same approximation, said in the
file and by the command line (:data:`FACET_APPROXIMATION`): the centre of the C5 facet
against the plane of the C6 facet, pushed along the C6 facet normal with the published
contact law of its depth below that plane. For parallel faces (the reference pose) that is the
paper's flat contact; it ignores the tilt (edge contact, blending) and where on the face the
force acts. ``scripts/export_facet_difference.py`` measures the difference.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from segment.core.model import Segment
from segment.elements.disc import DOF_NAMES
from segment.elements.kinematics import generalized_force, pose
from segment.elements.loads import Load

__all__ = [
    "FACET_APPROXIMATION",
    "KG_M2_PER_KG_MM2",
    "M_PER_MM",
    "NM_PER_NMM",
    "ExportResult",
    "FacetPlaneContact",
    "LigamentRow",
    "PiecewiseLinear",
    "ToolEquilibrium",
    "approximated_residual",
    "check_exportable",
    "disc_functions",
    "facet_contacts",
    "internal_generalized",
    "internal_q",
    "ligament_rows",
    "newton_fd",
    "si_q",
]

M_PER_MM = 1e-3
"""Metres per millimetre."""
NM_PER_NMM = 1e-3
"""N m per N mm."""
KG_M2_PER_KG_MM2 = 1e-6
"""kg m^2 per kg mm^2."""

FACET_APPROXIMATION = (
    "facet joints APPROXIMATED: the C5 facet centre against the C6 facet plane, pushed along "
    "the C6 facet normal with the published contact law of its depth below that plane (no "
    "tilt, edge contact or blending of the cylinder end-face model; no facet damping)")
"""The one-line flag written into each exported file that has facets and printed by the CLI."""


# ---------------------------------------------------------------- units
def si_q(q) -> np.ndarray:
    """q (6,) [mm, mm, mm, rad, rad, rad] -> [m, m, m, rad, rad, rad]."""
    q = np.array(q, dtype=float)
    q[:3] *= M_PER_MM
    return q


def internal_q(q_si) -> np.ndarray:
    """q (6,) [m, rad] -> [mm, rad]."""
    q = np.array(q_si, dtype=float)
    q[:3] /= M_PER_MM
    return q


def internal_generalized(Q_si) -> np.ndarray:
    """Generalized forces (6,) [N, N m] -> [N, N mm]."""
    Q = np.array(Q_si, dtype=float)
    Q[3:] /= NM_PER_NMM
    return Q


# ---------------------------------------------------------------- piecewise-linear laws
@dataclass(frozen=True, eq=False)
class PiecewiseLinear:
    """A continuous piecewise-linear function through the points (x, y), continued past the
    first and the last point with the slope of the end segment (the convention of OpenSim's
    ``PiecewiseLinearFunction``).

    Parameters
    ----------
    x : array_like, shape (n,)
        Strictly increasing abscissae, n >= 2.
    y : array_like, shape (n,)
        Values.
    """

    x: np.ndarray
    y: np.ndarray

    def __post_init__(self):
        x = np.array(self.x, dtype=float)
        y = np.array(self.y, dtype=float)
        if x.ndim != 1 or x.shape != y.shape or x.size < 2:
            raise ValueError(f"piecewise-linear function: x and y must have the same shape "
                             f"(n,), n >= 2, got {x.shape} and {y.shape}")
        if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
            raise ValueError("piecewise-linear function: points must be finite")
        if np.any(np.diff(x) <= 0):
            raise ValueError(f"piecewise-linear function: x must increase strictly, got "
                             f"{x.tolist()}")
        x.setflags(write=False)
        y.setflags(write=False)
        object.__setattr__(self, "x", x)
        object.__setattr__(self, "y", y)

    @property
    def slopes(self) -> np.ndarray:
        """Slope of each segment (n - 1,)."""
        return np.diff(self.y) / np.diff(self.x)

    def __call__(self, t) -> np.ndarray:
        """The function at ``t`` (a number or an array)."""
        t = np.asarray(t, dtype=float)
        s = self.slopes
        k = np.clip(np.searchsorted(self.x, t, side="right") - 1, 0, s.size - 1)
        return self.y[k] + s[k] * (t - self.x[k])

    def ramps(self) -> tuple[tuple[str, float, float], ...]:
        """The function as a sum of one-sided ramps about 0, where it must vanish::

            f(t) = sum c * max(t - a, 0)   over ("right", a, c), a >= 0
                 + sum c * min(t - b, 0)   over ("left", b, c),  b <= 0

        ``c`` is the change of slope at the knot (may be negative), the first ramp on each
        side carries the slope next to 0. Every MuJoCo spring with a dead band is one such
        ramp (:mod:`segment.export.mjcf`). Ramps with c = 0 are left out.
        """
        if 0.0 not in self.x or self(0.0) != 0.0:
            raise ValueError("ramps: the function needs a knot at 0 where it is 0")
        s = self.slopes
        i0 = int(np.flatnonzero(self.x == 0.0)[0])
        out = []
        # right of 0: slope s[i0] from 0, then the changes at the later knots
        before = 0.0
        for i in range(i0, self.x.size - 1):
            c = s[i] - before
            if c != 0.0:
                out.append(("right", float(self.x[i]), float(c)))
            before = s[i]
        # left of 0: slope s[i0 - 1] from 0 leftwards, then the changes at earlier knots
        after = 0.0
        for i in range(i0 - 1, -1, -1):
            c = s[i] - after
            if c != 0.0:
                out.append(("left", float(self.x[i + 1]), float(c)))
            after = s[i]
        return tuple(out)


def _knot_function(law: Callable[[float], float], knots) -> PiecewiseLinear:
    """The piecewise-linear ``law`` sampled at its knots and one unit beyond each end (where
    it continues linearly): exact when ``law`` is linear between the knots."""
    k = sorted(set(float(v) for v in knots))
    x = [k[0] - 1.0, *k, k[-1] + 1.0]
    return PiecewiseLinear(x, [law(v) for v in x])


def disc_functions(model: Segment) -> tuple[PiecewiseLinear, ...]:
    """The disc's restoring law of each coordinate in SI units: ``M_i(q_i)`` with
    ``Q_i = -M_i`` (:mod:`segment.elements.disc`), q_i [m or rad] -> M_i [N or N m].

    Sampled from the model's own law (:meth:`DiscStiffness.force`) at its knots: eq. (1) has
    one (0), the neutral-zone law three (0, z+, -z-).
    """
    disc = model.disc
    out = []
    for i in range(len(DOF_NAMES)):
        law = disc.law[i]
        knots = [0.0]
        if law == "neutral-zone":
            knots += [disc.law_parameters[i, 0], -disc.law_parameters[i, 1]]

        def restoring(t, i=i):
            q = np.zeros(6)
            q[i] = t
            return -float(disc.force(q)[i])

        f = _knot_function(restoring, knots)
        x_scale = M_PER_MM if i < 3 else 1.0
        y_scale = 1.0 if i < 3 else NM_PER_NMM
        out.append(PiecewiseLinear(f.x * x_scale, f.y * y_scale))
    return tuple(out)


@dataclass(frozen=True, eq=False)
class LigamentRow:
    """One ligament strip as exported: insertions [m] (C5 point in the C5 frame, C6 point in
    the C6 frame), rest length [m] and tension [N] against strain [-] (zero for strain <= 0,
    the B-C slope past C)."""

    name: str
    insertion_c5: np.ndarray
    insertion_c6: np.ndarray
    l0: float
    curve: PiecewiseLinear


def ligament_rows(model: Segment) -> tuple[tuple[LigamentRow, ...], tuple[str, ...]]:
    """The strips that carry force, and the names of those that carry none (ruptured or cut
    through: not exported).

    The rows are the solver's own (:meth:`Segment._strip_rows`): strips spread by eq. (9a),
    curve forces divided among strips and scaled by ``1 - cut``.
    """
    a, b, l0, eps, force = model._strip_rows()
    rows, dropped = [], []
    for k, name in enumerate(model.strip_names):
        f = np.asarray(force[k], dtype=float)
        if not np.any(f > 0.0):
            dropped.append(name)
            continue
        e = np.asarray(eps[k], dtype=float)
        curve = PiecewiseLinear([-1.0, 0.0, *e], [0.0, 0.0, *f])
        rows.append(LigamentRow(name=name, insertion_c5=np.asarray(a[k], float) * M_PER_MM,
                                insertion_c6=np.asarray(b[k], float) * M_PER_MM,
                                l0=float(l0[k]) * M_PER_MM, curve=curve))
    return tuple(rows), tuple(dropped)


@dataclass(frozen=True, eq=False)
class FacetPlaneContact:
    """The exported approximation of one facet joint (:data:`FACET_APPROXIMATION`), SI units.

    ``depth = normal_c6 . (center_c6 - c5 centre in C6)`` [m]; force on C5
    ``F(depth) normal_c6`` [N] at the C5 centre, with
    ``F(u) = scale (k2 min(u, u_t)^2 + k1 max(u - u_t, 0))`` for u > 0, else 0.
    """

    side: str
    center_c5: np.ndarray   # C5 facet centre, C5 frame [m]
    center_c6: np.ndarray   # C6 facet centre, C6 frame [m]
    normal_c6: np.ndarray   # C6 facet normal (out of the face, towards C5), C6 frame
    k_quadratic: float      # [N/m^2]
    u_transition: float     # [m]
    k_linear: float         # [N/m]
    scale: float            # contact_scale of a partial resection [-]

    def force(self, u) -> np.ndarray:
        """Contact force [N] at depth ``u`` [m] (array or number)."""
        u = np.maximum(np.asarray(u, dtype=float), 0.0)
        return self.scale * (self.k_quadratic * np.minimum(u, self.u_transition) ** 2
                             + self.k_linear * np.maximum(u - self.u_transition, 0.0))


def facet_contacts(model: Segment) -> tuple[FacetPlaneContact, ...]:
    """The facet approximation of each facet joint of ``model`` (none without facets)."""
    law = model.contact_law
    out = []
    for f in model.facets:
        out.append(FacetPlaneContact(
            side=f.side,
            center_c5=np.asarray(f.disc_c5.center, float) * M_PER_MM,
            center_c6=np.asarray(f.disc_c6.center, float) * M_PER_MM,
            normal_c6=np.asarray(f.disc_c6.normal, float) / np.linalg.norm(f.disc_c6.normal),
            k_quadratic=law.k_quadratic / M_PER_MM ** 2,
            u_transition=law.u_transition * M_PER_MM,
            k_linear=law.k_linear / M_PER_MM,
            scale=float(f.contact_scale)))
    return tuple(out)


def approximated_residual(model: Segment, q, load: Load) -> np.ndarray:
    """The residual (6,) [N, N mm] of the exported model at ``q`` [mm, rad]: ``model``'s
    without its facets plus the facet approximation (:class:`FacetPlaneContact`), computed
    here, in this package's arithmetic. Without facets it is :meth:`Segment.residual`."""
    contacts = facet_contacts(model)
    Q = model.replace(facets=()).residual(q, load)
    p, R = pose(q, model.reference)
    for fc in contacts:
        c1 = p + R @ (fc.center_c5 / M_PER_MM)
        depth = float(fc.normal_c6 @ (fc.center_c6 / M_PER_MM - c1)) * M_PER_MM
        f = float(fc.force(depth)) * fc.normal_c6
        Q = Q + generalized_force(q, model.reference, point_c6=c1, force_c6=f)
    return Q


def check_exportable(model: Segment, *, tool: str) -> None:
    """``ValueError`` naming what ``model`` holds that the export cannot write: the fw35 disc
    law (not piecewise linear) and point restraints (the disc prosthesis, not written yet).
    """
    if not isinstance(model, Segment):
        raise TypeError(f"model must be a segment.Segment, got {type(model).__name__}")
    bad = [DOF_NAMES[i] for i, law in enumerate(model.disc.law) if law == "fw35"]
    if bad:
        raise ValueError(f"{tool} export: the disc law 'fw35' ({', '.join(bad)}) is not "
                         f"piecewise linear and has no exact form there; the export writes "
                         f"'linear' (eq. 1) and 'neutral-zone' coordinates")
    if model.restraints:
        names = ", ".join(r.name for r in model.restraints)
        raise ValueError(f"{tool} export: point restraint(s) {names} (a disc prosthesis) "
                         f"are not exported yet; export a state without a prosthesis")


# ---------------------------------------------------------------- export record
@dataclass(frozen=True)
class ExportResult:
    """What a writer wrote: the file, the tool, the element counts and what differs."""

    path: str
    tool: str
    coordinates: tuple[str, ...]
    ligaments: tuple[str, ...]
    facets: tuple[str, ...]
    approximations: tuple[str, ...] = ()
    omitted: tuple[str, ...] = field(default=())

    def summary(self) -> str:
        """One line: what was written where."""
        parts = [f"6-DOF joint ({', '.join(self.coordinates)})", "disc",
                 f"{len(self.ligaments)} ligament strip(s)"]
        if self.facets:
            parts.append(f"{len(self.facets)} facet joint(s), approximated")
        return f"wrote {self.path} ({self.tool}: {', '.join(parts)})"


# ---------------------------------------------------------------- tool-side equilibrium
@dataclass(frozen=True, eq=False)
class ToolEquilibrium:
    """A static equilibrium found in another tool, in this package's units.

    ``q`` (6,) [mm, rad]; ``residual`` (6,) [N, N mm], the tool's own at ``q``.
    """

    q: np.ndarray
    converged: bool
    iterations: int
    residual: np.ndarray
    message: str


STEP_SI = np.array([1e-7, 1e-7, 1e-7, 1e-6, 1e-6, 1e-6])
"""Central-difference steps of :func:`newton_fd` [m, rad]: 1e-4 mm and 1e-6 rad."""
RESIDUAL_WEIGHT = np.array([1.0, 1.0, 1.0, 0.1, 0.1, 0.1])
"""Weights of the merit norm in internal units (N; N mm over 10 mm, the segment's size)."""
Q_TOL = 1e-10
"""Newton step [mm, rad] below which :func:`newton_fd` has converged: 100 times below the
issue's agreement bound (1e-8) and above the rounding floor of the tools' residuals (MuJoCo's
100 m facet tendons resolve their length to 1e-14 m, forces to 2e-8 N: steps of 1e-11 mm)."""


def newton_fd(residual_si: Callable[[np.ndarray], np.ndarray], q0_si=None, *,
              max_iterations: int = 100) -> ToolEquilibrium:
    """Static equilibrium ``residual_si(q) = 0`` by Newton-Raphson with a central-difference
    Jacobian of the tool's residual and a backtracking line search.

    Parameters
    ----------
    residual_si : callable
        q (6,) [m, rad] -> generalized forces (6,) [N, N m], computed by the tool.
    q0_si : array_like, shape (6,), optional
        Start [m, rad] (default 0, the reference pose).
    max_iterations : int
        Newton steps at most.
    """
    q = np.zeros(6) if q0_si is None else np.array(q0_si, dtype=float)

    def merit(r_si):
        return float(np.linalg.norm(internal_generalized(r_si) * RESIDUAL_WEIGHT))

    r = np.asarray(residual_si(q), dtype=float)
    for it in range(1, max_iterations + 1):
        J = np.empty((6, 6))
        for j in range(6):
            e = np.zeros(6)
            e[j] = STEP_SI[j]
            J[:, j] = (np.asarray(residual_si(q + e)) - np.asarray(residual_si(q - e))) \
                / (2.0 * STEP_SI[j])
        try:
            dq = -np.linalg.solve(J, r)
        except np.linalg.LinAlgError:
            return ToolEquilibrium(internal_q(q), False, it, internal_generalized(r),
                                   "singular finite-difference Jacobian")
        m0 = merit(r)
        step = 1.0
        while True:
            q_new = q + step * dq
            r_new = np.asarray(residual_si(q_new), dtype=float)
            if merit(r_new) <= m0 or step < 1e-4:
                break
            step *= 0.5
        q, r = q_new, r_new
        if np.max(np.abs(internal_q(dq))) < Q_TOL:   # the full Newton step: distance to the root
            return ToolEquilibrium(internal_q(q), True, it, internal_generalized(r),
                                   f"converged in {it} Newton steps")
    return ToolEquilibrium(internal_q(q), False, max_iterations, internal_generalized(r),
                           f"no convergence in {max_iterations} Newton steps")


def fmt(x: float) -> str:
    """A float written so that it reads back bit for bit (shortest repr)."""
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"cannot write a non-finite number, got {x!r}")
    return repr(x + 0.0)   # -0.0 -> 0.0
