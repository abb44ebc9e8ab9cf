"""Validity limit of the model: where eq. (1) and Table 3 stop meaning anything.

The segment of DETC2000/MECH-6821 has one failure law: a ligament strip breaks at F_max
(Table 3; Tejszerska and Gzik). The intervertebral disc of eq. (1) is a set of linear springs
fitted to Moroney et al. (1988) at test loads up to 2.16 N m and 73.6 N, written for "small
angular rotations", and has no failure law. Loaded far enough, a ramp therefore always ends
with the disc alone carrying the load at displacements no motion segment survives (flexion to
270 deg in the report of issue 20). Such an equilibrium is not a prediction.

A quasi-static ramp (:func:`segment.ramp`) stops at the first of these rules:

1. **Displacement bound** (``data/validity_limits.csv``, one row per coordinate and
   direction, each with its source): the displacement of a loaded coordinate from the unloaded
   equilibrium reaches the bound of its direction. The flexion and extension bounds come
   from the training specimens (Nightingale et al. 2002, raw records): the largest rotation
   at which one of them is recorded carrying load, 21.6 deg in flexion (B07's failure test,
   from its start) and 17.68 deg in extension (B05's last static step), so no bound falls
   inside a training specimen's measured range. No readable source gave failure
   displacements for the other directions; their bounds are **assumed** (the file says why,
   row by row: 15.4 deg, the largest quasi-static flexion at failure of Voo et al. 1998, for
   lateral bending and axial rotation; 3.5 mm for the translations), and none lies inside a
   training measurement (Moroney et al.'s largest mean rotation is 5.45 deg).
   A coordinate is *loaded* when the load has a component along it; the bound of the
   component's sign applies. Coupled motions are not bounded.
2. **No ligament left taut** (a property of the model, KLG2000 eq. (1) and Table 3): after a
   rupture, no intact strip is stretched (strain > 0), so the disc, which has no failure law,
   and the facets carry the load alone.

Beyond the limit the disc of eq. (1) carries the load without a failure law: the curves, the
rupture sequence and the ultimate load stop there, and the ramp says which rule fired, at which
load, and its source.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from segment.core.io import data_dir
from segment.core.schema import columns_of
from segment.core.tables import Table
from segment.elements.disc import DOF_NAMES

__all__ = ["BEYOND_LIMIT", "NO_TAUT_LIGAMENT", "DisplacementBound", "ValidityLimits",
           "load_validity_limits"]

FILE_NAME = "validity_limits.csv"
DIRECTIONS = ("+", "-")
BEYOND_LIMIT = ("beyond the validity limit the disc of eq. (1) carries the load without a "
                "failure law: not a prediction")
"""What lies beyond the validity limit, in words (ramp messages, CLI, report)."""
NO_TAUT_LIGAMENT = ("no ligament left taut after a rupture: the disc of eq. (1), which has no "
                    "failure law, and the facets carry the load alone (DETC2000/MECH-6821 "
                    "eq. (1) and Table 3)")
"""Rule 2 of the module docstring, as reported."""
_NAMES = {"x": "anterior-posterior translation", "y": "lateral translation",
          "z": "axial translation", "phi_x": "lateral bending", "phi_y": "flexion-extension",
          "phi_z": "axial rotation"}
_WORDS = {("x", 1): "anterior shear", ("x", -1): "posterior shear",
          ("y", 1): "lateral shear (left)", ("y", -1): "lateral shear (right)",
          ("z", 1): "tension", ("z", -1): "compression",
          ("phi_x", 1): "lateral bending (+phi_x)", ("phi_x", -1): "lateral bending (-phi_x)",
          ("phi_y", 1): "flexion", ("phi_y", -1): "extension",
          ("phi_z", 1): "axial rotation (+phi_z)", ("phi_z", -1): "axial rotation (-phi_z)"}


@dataclass(frozen=True)
class DisplacementBound:
    """Bound on one coordinate's displacement from the unloaded equilibrium in one direction.

    Attributes
    ----------
    coordinate : str
        ``x``, ``y``, ``z``, ``phi_x``, ``phi_y`` or ``phi_z`` (:data:`DOF_NAMES`).
    direction : int
        +1 or -1: the bound applies to displacements of this sign.
    case : str
        The Moroney load case of that direction (for people; not used).
    limit : float
        Magnitude of the bound in internal units [mm or rad].
    unit : str
        ``"mm"`` or ``"deg"``: the unit of :attr:`value`.
    value : float
        The bound as written in the table [mm or deg].
    source : str
        The row's ``source`` cell.
    """

    coordinate: str
    direction: int
    case: str
    limit: float
    unit: str
    value: float
    source: str

    @property
    def dof(self) -> int:
        """Index of the coordinate in q."""
        return DOF_NAMES.index(self.coordinate)

    @property
    def assumed(self) -> bool:
        """True when the table marks the bound as an assumption."""
        return self.source.lower().startswith("assumed")

    def describe(self) -> str:
        """E.g. ``"flexion beyond 15.4 deg from the unloaded equilibrium"``."""
        return (f"{_WORDS[self.coordinate, self.direction]} beyond {self.value:g} {self.unit} "
                "from the unloaded equilibrium")

    def citation(self) -> str:
        """Short form of the source: ``"assumed (SOURCES.md §8)"`` or the authors and year
        with the pointer, e.g. ``"Voo, Pintar, Yoganandan and Liu 1998 (SOURCES.md §5, §8)"``."""
        pointer = re.search(r"SOURCES\.md §[0-9, §]*[0-9]", self.source)
        tail = f" ({pointer.group(0)})" if pointer else ""
        if self.assumed:
            return "assumed" + tail
        year = re.match(r"^(.*?\b(?:19|20)[0-9]{2})\b", self.source)
        return (year.group(1) if year else self.source.split(":")[0]) + tail


@dataclass(frozen=True)
class ValidityLimits:
    """The displacement bounds of :mod:`segment.core.validity` (12: six coordinates x two
    directions), read from ``validity_limits.csv``."""

    bounds: tuple[DisplacementBound, ...]
    file: str = FILE_NAME

    def bound(self, coordinate: str, direction: int) -> DisplacementBound:
        """The bound of ``coordinate`` (name) in ``direction`` (+1 or -1)."""
        for b in self.bounds:
            if b.coordinate == coordinate and b.direction == direction:
                return b
        raise KeyError(f"no bound for {coordinate} {direction:+d}")

    def active(self, generalized_load) -> tuple[DisplacementBound, ...]:
        """The bounds that apply to a load: one per loaded coordinate, in the direction of
        the load component (``generalized_load``: the six components Fx..Mz, any units)."""
        f = np.asarray(generalized_load, dtype=float)
        return tuple(self.bound(DOF_NAMES[j], 1 if f[j] > 0 else -1)
                     for j in range(6) if f[j] != 0.0)


def load_validity_limits(directory: str | os.PathLike | None = None, *,
                         strict: bool = True) -> ValidityLimits:
    """Read ``validity_limits.csv`` of ``directory`` (default: the packaged ``data/``).

    Columns: ``coordinate`` (x, y, z, phi_x, phi_y, phi_z), ``direction`` (+ or -), ``case``,
    ``limit_mm`` (translations) or ``limit_deg`` (rotations; the other cell empty) and
    ``source``. Every coordinate and direction must appear once.

    Raises
    ------
    ValueError
        Naming the file, line and row, column and value (every error of the file at once).
    """
    d = data_dir() if directory is None else Path(directory)
    t = Table(d / FILE_NAME, ("coordinate", "direction", "case", "limit_mm", "limit_deg"),
              strict=strict, collect=True, what="validity limits",
              columns=columns_of(FILE_NAME))
    out, found = [], []
    for i, row in t.rows():
        coord = t.key(i, row, "coordinate", DOF_NAMES)
        direction = t.key(i, row, "direction", DIRECTIONS)
        found.append(None if coord is None or direction is None else f"{coord} {direction}")
        rotation = coord is not None and coord.startswith("phi")
        want, other = ("limit_deg", "limit_mm") if rotation else ("limit_mm", "limit_deg")
        if coord is not None and row[other] != "":
            t.error(i, other, f"must be empty for {coord} (its bound is in {want}), got "
                              f"{row[other]!r}")
        value = t.number(i, row, want) if coord is not None else math.nan
        if t.ok(i):
            out.append(DisplacementBound(
                coord, 1 if direction == "+" else -1, row["case"],
                math.radians(value) if rotation else value, "deg" if rotation else "mm",
                value, row["source"]))
    t.require_all("'coordinate', 'direction'", found,
                  tuple(f"{c} {s}" for c in DOF_NAMES for s in DIRECTIONS))
    t.finish()
    return ValidityLimits(tuple(out), FILE_NAME)
