"""Ligaments: insertion geometry (a pathway between two points) plus a tension-only law.

DETC2000/MECH-6821, "Nonlinear Viscoelastic Ligaments", Tables 3 and 4 (de Jager 1996)::

    F_l = F_el(eps) + b_l * d(l)/dt    for eps >= 0,     F_l = 0 for eps < 0
    eps = (l - l0) / l0

``F_el`` is piecewise linear through (0, 0), A, B and C = (eps_max, F_max) (Fig. 2); past C
the B-C slope continues and the result flags the ligament as strained past eps_max. The load
ramp (:func:`segment.ramp`) and :func:`segment.simulate` model rupture instead: a strip whose
force reaches F_max (point C) breaks and carries nothing afterwards.

Strips (Tejszerska and Gzik, "Biomechanical model of the human cervical spine", section 4,
eq. 9a): a wide ligament is ``n`` parallel strips, each with its own insertions, length and
strain. Their insertions spread over the insertion width ``w`` along ``width_axis`` (the same
axis in each vertebra's own frame); strip ``k = 1..n`` sits at the centre of the k-th of n
equal parts::

    x_k = x + w ((2k - 1) / (2n) - 1/2) e_width            (eq. 9a with x_p = x - w/2, dx = w/2)

      |<------------------- w ------------------->|
      |    o    |    o    |    o    |    o    |       n = 4 strips, x = Table 4 insertion
           k=1       k=2       k=3       k=4

so ``n = 1`` is the published ligament. The strips share the ligament's curve scaled by 1/n
(force points F_A, F_B, F_C and the damping divided by n, strains unchanged), so n strips
stretched equally carry exactly the published force. Decision (the paper computes each strip's
rest length from the neutral pose, eq. 9c): each strip's rest length keeps the ligament's
strain at the reference pose, ``l0_k = l0 L_k / L`` with L_k and L the strip's and the
ligament's lengths at the reference pose; for strips spread along y (ALL, PLL, FL), L_k = L.

The paper writes the damping term as ``b_l * d(eps)/dt`` with b_l = 300 N s/m, which is not
dimensionally a force; we read it as ``b_l * dl/dt`` (N s/m times m/s), the Kelvin element that
MADYMO uses. The force pulls the C5 insertion towards the C6 insertion and the C6 insertion
towards the C5 insertion (equal and opposite)::

      C5 insertion a  o-----<-- F ---- ----- F -->-----o  b  C6 insertion
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass

import numpy as np

import segment._checks as _checks
from segment.elements.vec import add, mat_vec, norm, row, scale, sub
from segment.jit import njit

__all__ = ["MAX_STRIPS", "Ligament", "TrilinearCurve", "ligament_state", "trilinear"]

MAX_STRIPS = _checks.MAX_STRIPS
"""Most strips per ligament (issue 21). A limit of resolution, not of anatomy: every strip is
one row of the compiled kernels (n strips cost n times the ligament's work and memory), and
100 strips of the widest packaged insertion (11.2 mm, ``data/ligament_strips.csv``) lie
0.11 mm apart, finer than the insertion widths themselves are known (all assumed, SOURCES.md
§6). ``strips = 1e300`` or ``100000`` is a typing slip, refused with this bound."""


@dataclass(frozen=True, eq=False)
class TrilinearCurve:
    """Tension-only ligament law through (0, 0), A, B, C [strain, N] (Fig. 2, Table 3).

    Parameters
    ----------
    strain : array_like, shape (3,)
        eps_A < eps_B < eps_C (= eps_max) [-], all > 0.
    force : array_like, shape (3,)
        F_A <= F_B <= F_C (= F_max) [N], all >= 0.
    """

    strain: np.ndarray
    force: np.ndarray

    def __post_init__(self):
        eps = np.array(self.strain, dtype=float)
        f = np.array(self.force, dtype=float)
        if eps.shape != (3,) or f.shape != (3,):
            raise ValueError(f"curve points must have shape (3,), got {eps.shape} and {f.shape}")
        if not (np.all(np.isfinite(eps)) and np.all(np.isfinite(f))):
            raise ValueError(f"curve points must be finite, got {eps.tolist()}, {f.tolist()}")
        if not (0.0 < eps[0] < eps[1] < eps[2]):
            raise ValueError(f"curve strains must satisfy 0 < A < B < C, got {eps.tolist()}")
        if not (0.0 <= f[0] <= f[1] <= f[2]):
            raise ValueError(f"curve forces must satisfy 0 <= A <= B <= C, got {f.tolist()}")
        eps.setflags(write=False)
        f.setflags(write=False)
        object.__setattr__(self, "strain", eps)
        object.__setattr__(self, "force", f)

    @classmethod
    def from_table3(cls, *, eps_max: float, f_max_N: float, a_rel: tuple[float, float],
                    b_rel: tuple[float, float]) -> TrilinearCurve:
        """Build from Table 3's relative support points (eps/eps_max, F/F_max)."""
        return cls(strain=np.array([a_rel[0], b_rel[0], 1.0]) * eps_max,
                   force=np.array([a_rel[1], b_rel[1], 1.0]) * f_max_N)

    def __call__(self, eps: float) -> tuple[float, float]:
        """Return force [N] and its slope dF/deps [N] at strain ``eps``."""
        f, s = trilinear(complex(eps), self.strain, self.force)
        return f.real, s


@njit
def trilinear(eps, e, f):
    """Force (complex, analytic in eps) and slope (real) of the trilinear law."""
    x = eps.real
    if x < 0.0:
        return 0j, 0.0
    if x < e[0]:
        s = f[0] / e[0]
        return s * eps, s
    if x < e[1]:
        s = (f[1] - f[0]) / (e[1] - e[0])
        return f[0] + s * (eps - e[0]), s
    s = (f[2] - f[1]) / (e[2] - e[1])
    return f[1] + s * (eps - e[1]), s


@dataclass(frozen=True, eq=False)
class Ligament:
    """One ligament: insertions in each vertebra's own frame, rest length and law.

    Parameters
    ----------
    name : str
    insertion_c5, insertion_c6 : array_like, shape (3,)
        Insertion on C5 in C5 coordinates and on C6 in C6 coordinates [mm] (Table 4).
    l0 : float
        Rest length [mm] (Table 4), > 0.
    curve : TrilinearCurve
    damping : float
        b_l [N s/mm] (300 N s/m = 0.3 N s/mm).
    strips : int
        Number of parallel strips n >= 1 (1: the published ligament).
    width : float
        Insertion width w [mm] >= 0 over which the strips spread (eq. 9a).
    width_axis : array_like, shape (3,)
        Direction of the spread, the same in each vertebra's own frame (normalised; default
        +y, lateral).
    """

    name: str
    insertion_c5: np.ndarray
    insertion_c6: np.ndarray
    l0: float
    curve: TrilinearCurve
    damping: float = 0.0
    strips: int = 1
    width: float = 0.0
    width_axis: np.ndarray = (0.0, 1.0, 0.0)

    def __post_init__(self):
        for attr in ("insertion_c5", "insertion_c6"):
            a = np.array(getattr(self, attr), dtype=float)
            if a.shape != (3,) or not np.all(np.isfinite(a)):
                raise ValueError(f"ligament {self.name!r}: {attr} must be 3 finite numbers "
                                 f"[mm], got {getattr(self, attr)!r}")
            a.setflags(write=False)
            object.__setattr__(self, attr, a)
        if not (np.isfinite(self.l0) and self.l0 > 0):
            raise ValueError(f"ligament {self.name!r}: l0 must be > 0 [mm], got {self.l0}")
        if not (np.isfinite(self.damping) and self.damping >= 0):
            raise ValueError(f"ligament {self.name!r}: damping must be >= 0, got {self.damping}")
        object.__setattr__(self, "l0", float(self.l0))
        n = self.strips
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or not \
                1 <= n <= MAX_STRIPS:
            raise ValueError(f"ligament {self.name!r}: strips must be an integer from 1 to "
                             f"{MAX_STRIPS} (MAX_STRIPS), got {n!r}")
        object.__setattr__(self, "strips", int(n))
        if not (isinstance(self.width, numbers.Real) and np.isfinite(self.width)
                and self.width >= 0):
            raise ValueError(f"ligament {self.name!r}: width must be >= 0 [mm], got "
                             f"{self.width!r}")
        object.__setattr__(self, "width", float(self.width))
        axis = np.array(self.width_axis, dtype=float)
        size = float(np.linalg.norm(axis)) if axis.shape == (3,) else 0.0
        if not (np.isfinite(size) and size > 0):
            raise ValueError(f"ligament {self.name!r}: width_axis must be 3 finite numbers, "
                             f"not all zero, got {self.width_axis!r}")
        axis = axis / size
        axis.setflags(write=False)
        object.__setattr__(self, "width_axis", axis)

    def with_rest_length(self, l0: float) -> Ligament:
        """The same ligament with another rest length [mm]."""
        return dataclasses.replace(self, l0=l0)

    def reference_length(self, reference) -> float:
        """Length [mm] of the insertion line at the reference pose (Table 1) of
        ``reference`` (a :class:`~segment.elements.kinematics.ReferencePose`)."""
        s0 = [float(v) for v in reference.s0]
        R0 = np.asarray(reference.R0, dtype=float)
        x = [float(v) for v in self.insertion_c5]
        b = [float(v) for v in self.insertion_c6]
        # written out (a matrix product and np.linalg.norm go through the CPU's BLAS kernels,
        # whose last bits differ between CPUs)
        d = [b[k] - (s0[k] + ((R0[k, 0] * x[0] + R0[k, 1] * x[1]) + R0[k, 2] * x[2]))
             for k in range(3)]
        return math.hypot(d[0], d[1], d[2])

    def reference_strain(self, reference) -> float:
        """Strain at the reference pose, ``l_ref / l0 - 1`` [-]."""
        return self.reference_length(reference) / self.l0 - 1.0

    def with_reference_strain(self, strain: float, reference) -> Ligament:
        """The same ligament with the rest length that gives ``strain`` at the reference pose:
        ``l0 = l_ref / (1 + strain)`` (a negative strain is slack there). The slack length
        from a reference strain of Blankevoort and Huiskes' ligament model (1991, J Biomech
        Eng 113:263-269), as OpenSim's ``Blankevoort1991Ligament`` sets it
        (``setSlackLengthFromReferenceStrain``)."""
        if not (np.isfinite(strain) and strain > -1.0):
            raise ValueError(f"ligament {self.name!r}: reference strain must be a finite "
                             f"number > -1, got {strain!r}")
        return self.with_rest_length(self.reference_length(reference) / (1.0 + strain))

    def split(self, strips: int, *, width: float | None = None) -> Ligament:
        """The same ligament as ``strips`` parallel strips (over ``width`` [mm], default its
        own)."""
        return dataclasses.replace(self, strips=strips,
                                   width=self.width if width is None else width)

    @property
    def strip_names(self) -> tuple[str, ...]:
        """``(name,)`` for one strip, else ``("name#1", ..., "name#n")``."""
        if self.strips == 1:
            return (self.name,)
        return tuple(f"{self.name}#{k}" for k in range(1, self.strips + 1))

    def strip_offsets(self) -> np.ndarray:
        """Offsets (n,) [mm] of the strip insertions along ``width_axis`` (eq. 9a)."""
        n = self.strips
        if n == 1:
            return np.zeros(1)
        k = np.arange(1, n + 1)
        return self.width * ((2 * k - 1) / (2.0 * n) - 0.5)


@njit
def ligament_state(i, p, R, a_c5, b_c6, l0, eps_pts, f_pts):
    """Length, strain, tension and force on C5 (C6 coordinates) of ligament ``i``.

    Returns ``(a, length, strain, tension, force_on_c5)``; ``a`` is the C5 insertion in C6.
    """
    a = add(p, mat_vec(R, row(a_c5, i)))
    d = sub(row(b_c6, i), a)
    length = norm(d)
    strain = (length - l0[i]) / l0[i]
    tension, _ = trilinear(strain, eps_pts[i], f_pts[i])
    if length.real > 0.0:
        force = scale(tension / length, d)
    else:  # coincident insertions: no defined direction, and l0 > 0 means eps < 0 here
        force = (0j, 0j, 0j)
    return a, length, strain, tension, force
