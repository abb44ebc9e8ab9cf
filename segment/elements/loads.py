"""External loads on C5 and the nine Moroney load cases.

A load is a force through the C5 origin [N] and a pure moment [N mm], with components in the
joint frame (fixed on C6, coinciding with C5's frame at the reference pose) and fixed in space:
they do not turn with C5. By virtual work (see :mod:`segment.elements.kinematics`) the force maps to
``Q_translation = F`` and the moment to ``Q_rotation = [ex, Rx ey, Rx Ry ez]^T M``.

The nine cases (DETC2000/MECH-6821, "Model Validation"; Moroney et al. 1988): AS +Fx, PS -Fx,
LS +Fy, TNS +Fz, CMP -Fz at 20 N; LB +Mx, FLX +My, EXT -My, AR +Mz at 1.8 N m.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

__all__ = ["Load"]

N_MM_PER_NM = 1000.0


def _vector3(value, name: str) -> np.ndarray:
    """``value`` as 3 finite floats, else an error naming the argument ``name``."""
    try:
        a = np.asarray(value)
        if a.dtype.kind not in "biuf" or a.dtype == bool:
            raise TypeError
        a = a.astype(float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be 3 real numbers, got {value!r}") from None
    if a.shape != (3,):
        raise ValueError(f"{name} must have shape (3,), got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite, got {a.tolist()}")
    return a


@dataclass(frozen=True, eq=False)
class Load:
    """External load on C5, joint-frame components.

    Parameters
    ----------
    force : array_like, shape (3,)
        Force through the C5 origin [N].
    moment : array_like, shape (3,)
        Pure moment [N mm].
    name : str
        Label shown in results.
    """

    force: np.ndarray
    moment: np.ndarray
    name: str = "custom"

    def __post_init__(self):
        for attr in ("force", "moment"):
            a = np.array(getattr(self, attr), dtype=float)
            if a.shape != (3,):
                raise ValueError(f"load {self.name!r}: {attr} must have shape (3,), got {a.shape}")
            if not np.all(np.isfinite(a)):
                raise ValueError(f"load {self.name!r}: {attr} must be finite, got {a.tolist()}")
            a.setflags(write=False)
            object.__setattr__(self, attr, a)

    @classmethod
    def from_si(cls, *, force_N=(0.0, 0.0, 0.0), moment_Nm=(0.0, 0.0, 0.0),
                name: str = "custom") -> Load:
        """Load from a force [N] and a moment [N m].

        Raises
        ------
        TypeError, ValueError
            Naming ``force_N`` or ``moment_Nm``: not three real numbers, or not finite.
        """
        return cls(_vector3(force_N, "force_N"),
                   _vector3(moment_Nm, "moment_Nm") * N_MM_PER_NM, name)

    @classmethod
    def zero(cls) -> Load:
        return cls(np.zeros(3), np.zeros(3), "unloaded")

    def as_array(self) -> np.ndarray:
        """(Fx, Fy, Fz, Mx, My, Mz) [N, N mm] (a new array)."""
        return np.concatenate([self.force, self.moment])

    @functools.cached_property
    def _vector(self) -> np.ndarray:
        """:meth:`as_array`, built once (the solvers pass it to the compiled kernels)."""
        return self.as_array()

    def scaled(self, factor: float, *, name: str | None = None) -> Load:
        """The load multiplied by ``factor``."""
        if not np.isfinite(factor):
            raise ValueError(f"load scale must be finite, got {factor!r}")
        label = name if name is not None else (self.name if factor == 1 else
                                               f"{self.name} x {factor:g}")
        return Load(self.force * factor, self.moment * factor, label)

    @property
    def main_dof(self) -> int | None:
        """Index (0-5) of the single non-zero component, or None for a combined load."""
        nz = np.flatnonzero(self.as_array())
        return int(nz[0]) if nz.size == 1 else None

    def __str__(self) -> str:
        f = ", ".join(f"{v:g}" for v in self.force)
        m = ", ".join(f"{v / N_MM_PER_NM:g}" for v in self.moment)
        return f"{self.name}: F = ({f}) N, M = ({m}) N m"
