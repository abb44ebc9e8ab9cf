"""Observed responses to calibrate against: ``calibration_targets.csv``.

Plausibility (issue 21), as for the model tables: a target's value lies within
:data:`VALUE_LIMITS` of its unit, and its SD within :data:`SD_RATIO_RANGE` times the value's
magnitude (at least :data:`NEAR_ZERO` of the unit, so that a target near zero keeps a range).
``strict=False`` (CLI: ``--allow-implausible``) makes these warnings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from segment.core.io import data_dir, sha256_of
from segment.core.tables import PlausibleRange, Table
from segment.studies.reference import CASES, DISPLACEMENT_COLUMNS

CONFIGURATIONS = ("intact", "disc segment")
"""Target configurations: ``intact`` (disc + six ligaments + two facets) and ``disc segment``
(Moroney's specimens with the posterior elements removed: disc + ALL + PLL, as the
``posterior removed`` configuration of :mod:`segment.studies.validation`)."""
TARGET_COLUMNS = ("case", "configuration", "quantity", "value", "SD", "SD_basis", "source")
SD_BASES = ("published", "assumed")
SD_RATIO_RANGE = (0.01, 3.0)
"""``SD / max(|value|, NEAR_ZERO[unit])`` must lie within this range. Assumed (SOURCES.md §6):
between-specimen SDs of segment responses are a sizeable share of the mean (the only one we
have, Voo et al. 1998's flexion stiffness, is 1.03 +- 0.11 N m/deg, 11 %; the packaged targets
assume 30 %), so an SD below 1 % of the value is a slip (SD 1e-9 made every parameter
"determined by the data" with posterior SD 0); above 3 times the value the target constrains
nothing and is probably in another unit (30 typed for 30 %)."""
NEAR_ZERO = {"mm": 0.1, "deg": 1.0}
"""The magnitude an SD is compared with for a target near zero [mm or deg]: about a quarter
of the smallest packaged disc-segment translation (0.27 mm) and rotation (4.3 deg) targets."""
VALUE_LIMITS = {
    "mm": PlausibleRange(-10.0, 10.0, "mm", "the packaged targets are within 0.6 mm; 10 mm "
                         "between adjacent vertebrae is a dislocation, not a response to a "
                         "test load (micrometres typed fall outside)"),
    "deg": PlausibleRange(-45.0, 45.0, "deg", "the packaged targets are within 8.6 deg; a "
                          "rotation beyond 45 deg between adjacent vertebrae is no "
                          "physiological posture"),
}
"""Plausible range of a target value per unit."""

def default_targets_path() -> Path:
    """The packaged ``calibration_targets.csv``."""
    return data_dir() / "calibration_targets.csv"

@dataclass(frozen=True, eq=False)
class Targets:
    """Observed responses (one per row of the targets file).

    Attributes
    ----------
    cases, configurations, quantities : tuple of str
        Load case (``AS`` ... ``AR``), configuration (:data:`CONFIGURATIONS`) and the
        displacement component from the unloaded equilibrium (``x_mm`` ... ``phi_z_deg``).
    values, sd : ndarray (n,)
        Observed value and its SD, in the quantity's unit [mm or deg].
    sd_basis : tuple of str
        ``published`` or ``assumed``.
    sources : tuple of str
    path : str
    """

    cases: tuple[str, ...]
    configurations: tuple[str, ...]
    quantities: tuple[str, ...]
    values: np.ndarray
    sd: np.ndarray
    sd_basis: tuple[str, ...]
    sources: tuple[str, ...]
    path: str = "calibration_targets.csv"
    sha256: str = ""
    """Checksum of the file as read (empty for targets derived from it: a subset, scaled SDs,
    other values)."""

    def __len__(self) -> int:
        return len(self.cases)

    @property
    def labels(self) -> tuple[str, ...]:
        """``"<case> <configuration> <quantity>"`` per target."""
        return tuple(f"{c} {g} {q}" for c, g, q in
                     zip(self.cases, self.configurations, self.quantities, strict=True))

    @classmethod
    def from_csv(cls, path: str | Path | None = None, *, strict: bool = True) -> Targets:
        """Read and check a targets file (default: the packaged one).

        Parameters
        ----------
        strict : bool
            True (default): a value outside :data:`VALUE_LIMITS` or an SD outside
            :data:`SD_RATIO_RANGE` of its value is an error; False: a warning.

        Raises
        ------
        ValueError
            One message with every error of the file (the reader of :mod:`segment.core.io`),
            each naming the line, the row (1 = first data row), the column and the value: missing
            column, unknown case, configuration or quantity, a non-number or non-finite value
            or SD, SD <= 0, an unknown SD basis, an empty source, a duplicate target, and the
            plausibility checks above.
        """
        if not isinstance(strict, bool):
            raise TypeError(f"strict must be True or False, got {strict!r}")
        path = default_targets_path() if path is None else Path(path)
        t = Table(path, TARGET_COLUMNS[:-1], collect=True, what="targets",   # + source
                   strict=strict)
        out = {k: [] for k in TARGET_COLUMNS}
        seen: dict[tuple[str, str, str], int] = {}
        for i, row in t.rows():
            if i in t.broken_rows:
                continue
            for col, allowed in (("case", CASES), ("configuration", CONFIGURATIONS),
                                 ("quantity", DISPLACEMENT_COLUMNS), ("SD_basis", SD_BASES)):
                t.key(i, row, col, allowed)
            nums = {col: t.number(i, row, col) for col in ("value", "SD")}
            if math.isfinite(nums["SD"]) and not nums["SD"] > 0:
                t.error(i, "SD", f"must be > 0, got {nums['SD']:g}")
            unit = row["quantity"].rpartition("_")[2]
            if t.ok(i) and unit in VALUE_LIMITS:
                v, sd, rng = nums["value"], nums["SD"], VALUE_LIMITS[unit]
                if not rng.lower <= v <= rng.upper:
                    t.implausible(i, "value", f"{v:g} {unit} is outside the plausible range "
                                  f"{rng.lower:g} to {rng.upper:g} {unit} ({rng.reason})")
                else:
                    ref = max(abs(v), NEAR_ZERO[unit])
                    lo, hi = SD_RATIO_RANGE
                    if not lo * ref <= sd <= hi * ref:
                        t.implausible(i, "SD", f"{sd:g} {unit} is {sd / ref:.3g} x "
                                      f"max(|value|, {NEAR_ZERO[unit]:g} {unit}) = {ref:g} "
                                      f"{unit}, outside {lo:g}-{hi:g} x (SD_RATIO_RANGE: below, "
                                      "one target outweighs every prior; above, it constrains "
                                      "nothing; another unit or a typo?)")
            key = (row["case"], row["configuration"], row["quantity"])
            if key in seen:
                t.error(i, None, f"duplicate target {key} (already in row {seen[key]})")
            seen.setdefault(key, i)
            if not t.ok(i):
                continue
            for col in TARGET_COLUMNS:
                out[col].append(nums.get(col, row[col]))
        t.finish()
        return cls(cases=tuple(out["case"]), configurations=tuple(out["configuration"]),
                   quantities=tuple(out["quantity"]), values=_frozen(out["value"]),
                   sd=_frozen(out["SD"]), sd_basis=tuple(out["SD_basis"]),
                   sources=tuple(out["source"]), path=str(path),
                   sha256=sha256_of(path))

    def subset(self, index) -> Targets:
        """The targets at ``index`` (a sequence of row numbers, 0-based)."""
        idx = [int(i) for i in index]
        if not idx:
            raise ValueError("a target subset needs at least one target")
        return Targets(cases=tuple(self.cases[i] for i in idx),
                       configurations=tuple(self.configurations[i] for i in idx),
                       quantities=tuple(self.quantities[i] for i in idx),
                       values=_frozen(self.values[idx]), sd=_frozen(self.sd[idx]),
                       sd_basis=tuple(self.sd_basis[i] for i in idx),
                       sources=tuple(self.sources[i] for i in idx), path=self.path)

    def with_sd_scaled(self, factor: float) -> Targets:
        """The same targets with every SD multiplied by ``factor`` (> 0)."""
        factor = float(factor)
        if not (math.isfinite(factor) and factor > 0):
            raise ValueError(f"SD factor must be a finite number > 0, got {factor!r}")
        return Targets(cases=self.cases, configurations=self.configurations,
                       quantities=self.quantities, values=self.values,
                       sd=_frozen(self.sd * factor), sd_basis=self.sd_basis,
                       sources=self.sources, path=self.path)

    def with_values(self, values) -> Targets:
        """The same targets with other observed values (n,) (e.g. synthetic ones)."""
        v = np.array(values, dtype=float)
        if v.shape != self.values.shape or not np.all(np.isfinite(v)):
            raise ValueError(f"values must be {self.values.shape[0]} finite numbers, got "
                             f"shape {v.shape}")
        return Targets(cases=self.cases, configurations=self.configurations,
                       quantities=self.quantities, values=_frozen(v), sd=self.sd,
                       sd_basis=self.sd_basis, sources=self.sources, path=self.path)

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame({"case": self.cases, "configuration": self.configurations,
                             "quantity": self.quantities, "value": self.values,
                             "SD": self.sd, "SD_basis": self.sd_basis,
                             "source": self.sources})


def _frozen(x) -> np.ndarray:
    a = np.array(x, dtype=float)
    a.setflags(write=False)
    return a


def load_targets(targets=None, *, strict: bool = True) -> Targets:
    """``targets`` as :class:`Targets`: None (the packaged file), a path, or Targets
    (``strict``: see :meth:`Targets.from_csv`)."""
    if isinstance(targets, Targets):
        return targets
    if targets is not None and not isinstance(targets, (str, Path)) \
            and not hasattr(targets, "__fspath__"):
        raise TypeError(f"targets must be Targets, a path or None, got "
                        f"{type(targets).__name__}")
    return Targets.from_csv(targets, strict=strict)
