"""A metric read off a curve: its value, or the reason it is not available.

One concept: what every metric of :mod:`segment.studies.curve_metrics`,
:mod:`segment.studies.double_sigmoid` and the ICR comparison returns, a :class:`Value` (number,
unit and how it was obtained, or why it is **not available**: SOURCES.md §13 reports a metric
only where the data hold it), and the measured points of one loading direction it is read
from (:func:`_arrays`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["NOT_AVAILABLE", "Value"]

NOT_AVAILABLE = "not available"


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
