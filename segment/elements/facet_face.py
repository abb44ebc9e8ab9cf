"""The face of a facet joint: the end face of a cylinder (centre, outward normal, radius).

Source: Kecskemethy, Lange and Grabner, "Efficient modeling of rigid-body impacts between
cylinder end faces using the regularized approach" (the *cylinder paper*, section 1.1): each
facet is the end face of a cylinder, a disc with centre ``c`` [mm], unit normal ``n`` pointing
*out of* the face (towards the partner) and radius ``r`` [mm]; the solid lies behind the face.
One concept: that record, checked and normalised at construction. The contact of two faces is
:mod:`segment.elements.contact`, the force law and the joint :mod:`segment.elements.facet`.

(:class:`FacetFace` is not the intervertebral disc: that is
:class:`~segment.elements.disc.DiscStiffness`, eq. (1).)

Examples
--------
>>> face = FacetFace([0, 0, 0], [0, 0, 2], 5.0)
>>> face.normal.tolist(), face.radius
([0.0, 0.0, 1.0], 5.0)
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

__all__ = ["UNIT_TOL", "FacetFace"]

UNIT_TOL = 4 * np.finfo(float).eps
"""A disc normal whose length is within this of 1 is unit to rounding and kept as given."""


def _real_vector(value, name: str, unit: str) -> np.ndarray:
    """3 finite real numbers as a new float array, or an error naming the field."""
    a = np.asarray(value)
    if a.dtype.kind not in "iuf":
        raise TypeError(f"disc {name} must be 3 real numbers {unit}, got {value!r}")
    a = np.array(a, dtype=float)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ValueError(f"disc {name} must be 3 finite numbers {unit}, got {value!r}"
                         .replace("  ", " "))
    return a


@dataclass(frozen=True, eq=False)
class FacetFace:
    """The end face of a facet's cylinder: centre [mm], outward unit normal, radius [mm]."""

    center: np.ndarray
    normal: np.ndarray
    radius: float

    def __post_init__(self):
        c = _real_vector(self.center, "center", "[mm]")
        n = _real_vector(self.normal, "normal", "")
        radius = self.radius
        if isinstance(radius, (bool, np.bool_)) or not isinstance(radius, numbers.Real):
            raise TypeError(f"disc radius must be a real number [mm], got "
                            f"{type(radius).__name__} {radius!r}")
        if not (np.isfinite(radius) and radius > 0):
            raise ValueError(f"disc radius must be > 0 [mm], got {radius!r}")
        # math.hypot: the same bits on every CPU (np.linalg.norm goes through the CPU's BLAS)
        length = math.hypot(*n)
        if length == 0.0:
            raise ValueError(f"disc normal must be non-zero, got {self.normal!r}")
        if not math.isfinite(length):         # |n| overflows: pre-scale
            n = n / float(np.max(np.abs(n)))
            length = math.hypot(*n)
        if abs(length - 1.0) > UNIT_TOL:
            n = n / length
        # else: already unit to rounding, kept as given; normalising it again would move its
        # last bit, and a normal computed in two places (FacetJoint.at_reference and
        # ParameterSpace.pack) would then differ
        c.setflags(write=False)
        n.setflags(write=False)
        object.__setattr__(self, "center", c)
        object.__setattr__(self, "normal", n)
        object.__setattr__(self, "radius", float(radius))

    def transformed(self, R: np.ndarray, p: np.ndarray) -> FacetFace:
        """This face mapped by ``x -> R x + p`` (R a rotation)."""
        return FacetFace(R @ self.center + p, R @ self.normal, self.radius)

    def rim(self, n: int = 96) -> np.ndarray:
        """``n + 1`` points around the rim [mm], first == last (for drawing)."""
        helper = np.eye(3)[int(np.argmin(np.abs(self.normal)))]
        a = np.cross(self.normal, helper)
        a /= np.linalg.norm(a)
        b = np.cross(self.normal, a)
        t = np.linspace(0.0, 2.0 * np.pi, n + 1)
        return self.center + self.radius * (np.outer(np.cos(t), a) + np.outer(np.sin(t), b))
