"""Ligaments: insertion geometry (a pathway between two points) plus a tension-only law.

DETC2000/MECH-6821, "Nonlinear Viscoelastic Ligaments", Tables 3 and 4 (de Jager 1996)::

    F_l = F_el(eps) + b_l * d(l)/dt    for eps >= 0,     F_l = 0 for eps < 0
    eps = (l - l0) / l0

``F_el`` is piecewise linear through (0, 0), A, B and C = (eps_max, F_max) (Fig. 2); past C
the B-C slope continues and the result flags the ligament as strained past eps_max.

The paper writes the damping term as ``b_l * d(eps)/dt`` with b_l = 300 N s/m, which is not
dimensionally a force; we read it as ``b_l * dl/dt`` (N s/m times m/s), the Kelvin element that
MADYMO uses. The force pulls the C5 insertion towards the C6 insertion and the C6 insertion
towards the C5 insertion (equal and opposite)::

      C5 insertion a  o-----<-- F ---- ----- F -->-----o  b  C6 insertion
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from segment._vec import add, mat_vec, norm, row, scale, sub

__all__ = ["Ligament", "TrilinearCurve"]


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
        f, s = _trilinear(complex(eps), self.strain, self.force)
        return f.real, s


@njit(cache=True)
def _trilinear(eps, e, f):
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
    """

    name: str
    insertion_c5: np.ndarray
    insertion_c6: np.ndarray
    l0: float
    curve: TrilinearCurve
    damping: float = 0.0

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

    def with_rest_length(self, l0: float) -> Ligament:
        """The same ligament with another rest length [mm]."""
        return Ligament(self.name, self.insertion_c5, self.insertion_c6, l0, self.curve,
                        self.damping)


@njit(cache=True)
def _ligament_state(i, p, R, a_c5, b_c6, l0, eps_pts, f_pts):
    """Length, strain, tension and force on C5 (C6 coordinates) of ligament ``i``.

    Returns ``(a, length, strain, tension, force_on_c5)``; ``a`` is the C5 insertion in C6.
    """
    a = add(p, mat_vec(R, row(a_c5, i)))
    d = sub(row(b_c6, i), a)
    length = norm(d)
    strain = (length - l0[i]) / l0[i]
    tension, _ = _trilinear(strain, eps_pts[i], f_pts[i])
    if length.real > 0.0:
        force = scale(tension / length, d)
    else:  # coincident insertions: no defined direction, and l0 > 0 means eps < 0 here
        force = (0j, 0j, 0j)
    return a, length, strain, tension, force
