"""Intervertebral disc, DETC2000/MECH-6821 eq. (1) and Table 2.

The disc acts directly on the generalized coordinates, like MADYMO's point restraint plus
Cardan restraint that the paper used: each coordinate q_i has its own linear spring whose
stiffness depends on the sign of q_i (eq. 1), and a linear damper::

    Q_i = -k_i(q_i) * q_i - b_i * dq_i/dt,     k_i = k_i+ if q_i >= 0 else k_i-

Sign-dependent coefficients (Table 2): x (AS +, PS -), z (TNS +, CMP -), phi_y (FLX +, EXT -);
y, phi_x, phi_z use one value for both signs. The law stays piecewise linear as published;
at q_i = 0 the slope is taken from the ``+`` side.

Internal units: N/mm, N mm/rad, N s/mm, N mm s/rad.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

__all__ = ["DOF_NAMES", "DiscStiffness"]

DOF_NAMES = ("x", "y", "z", "phi_x", "phi_y", "phi_z")


@dataclass(frozen=True, eq=False)
class DiscStiffness:
    """Stiffness and damping of the disc, one entry per generalized coordinate.

    Parameters
    ----------
    k_positive, k_negative : array_like, shape (6,)
        Stiffness for q_i >= 0 and q_i < 0 [N/mm for x, y, z; N mm/rad for the rotations],
        each >= 0. Zero is allowed for a device that takes over a coordinate (the disc
        prosthesis of :mod:`segment.core.states` restrains translation at its centre of
        rotation instead, :mod:`segment.elements.restraint`); the data tables still require
        > 0 (:data:`segment.io.PLAUSIBLE`).
    damping : array_like, shape (6,)
        Damping [N s/mm; N mm s/rad]. Used by dynamics only.
    """

    k_positive: np.ndarray
    k_negative: np.ndarray
    damping: np.ndarray = field(default_factory=lambda: np.zeros(6))

    def __post_init__(self):
        for name in ("k_positive", "k_negative", "damping"):
            a = np.array(getattr(self, name), dtype=float)
            if a.shape != (6,):
                raise ValueError(f"disc: {name} must have shape (6,), got {a.shape}")
            if not np.all(np.isfinite(a)):
                raise ValueError(f"disc: {name} must be finite, got {a.tolist()}")
            bad = a < 0
            if np.any(bad):
                i = int(np.argmax(bad))
                raise ValueError(f"disc: {name}[{DOF_NAMES[i]}] must be >= 0, got {a[i]}")
            a.setflags(write=False)
            object.__setattr__(self, name, a)

    def stiffness(self, q) -> np.ndarray:
        """Active stiffness (6,) at ``q`` (the ``+`` value where q_i >= 0)."""
        q = np.asarray(q, dtype=float)
        return np.where(q >= 0.0, self.k_positive, self.k_negative)

    def force(self, q) -> np.ndarray:
        """Generalized restoring force (6,) [N, N mm] of eq. (1) without damping."""
        return -self.stiffness(q) * np.asarray(q, dtype=float)

    def scaled(self, factor: float) -> DiscStiffness:
        """The same disc with every stiffness multiplied by ``factor`` (> 0)."""
        if not factor > 0:
            raise ValueError(f"disc stiffness scale must be > 0, got {factor}")
        return DiscStiffness(self.k_positive * factor, self.k_negative * factor, self.damping)


@njit(cache=True)
def _add_disc_force(Q, q, k_pos, k_neg):
    """Q_i -= k_i(q_i) q_i (eq. 1), branch chosen on the real part."""
    for i in range(6):
        k = k_pos[i] if q[i].real >= 0.0 else k_neg[i]
        Q[i] -= k * q[i]
