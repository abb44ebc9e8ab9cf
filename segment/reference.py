"""Published reference data for the validation report (``validation/reference/*.csv``).

The tables are shipped inside the package as ``segment.reference_data``; a user who has Moroney's
tables or de Jager's thesis fills in a copy of the folder and passes it to
``segment validate --reference DIR``. Empty cells mean "not available" and stay empty: the
report shows them as such, it never guesses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import pandas as pd

from segment.io import _Table

__all__ = ["DISPLACEMENT_COLUMNS", "ReferenceData", "load_reference", "reference_dir"]

CASES = ("AS", "PS", "LS", "TNS", "CMP", "LB", "FLX", "EXT", "AR")
DISPLACEMENT_COLUMNS = ("x_mm", "y_mm", "z_mm", "phi_x_deg", "phi_y_deg", "phi_z_deg")


@dataclass(frozen=True, eq=False)
class ReferenceData:
    """The reference tables, missing values as NaN."""

    rotational_stiffness: pd.DataFrame
    translational_stiffness: pd.DataFrame
    displacements: pd.DataFrame
    facet_forces: pd.DataFrame
    files: tuple[Path, ...]


def reference_dir() -> Path:
    """Folder of the packaged reference tables (``validation/reference`` in a checkout)."""
    try:
        return Path(str(resources.files("segment.reference_data")))
    except ModuleNotFoundError:
        checkout = Path(__file__).resolve().parent.parent / "validation" / "reference"
        if checkout.is_dir():
            return checkout
        raise


def _optional(t: _Table, i: int, row: dict, col: str, **checks) -> float:
    return math.nan if row[col] == "" else t.number(i, row, col, **checks)


def _read(path: Path, key_cols: tuple[str, ...], num_cols: tuple[str, ...],
          text_cols: tuple[str, ...] = (), *, positive=False, moroney_cases=True) -> pd.DataFrame:
    t = _Table(path, (*key_cols, *num_cols, *text_cols, "note"))
    rows = []
    for i, row in t.rows():
        rec = {}
        for c in key_cols:
            rec[c] = (t.key(i, row, c, CASES) if c == "case" and moroney_cases else row[c])
            if not rec[c]:
                raise ValueError(f"{t.name}, row {i}, column {c!r}: empty")
        for c in num_cols:
            rec[c] = _optional(t, i, row, c, positive=positive)
        for c in (*text_cols, "source", "note"):
            rec[c] = row[c]
        rows.append(rec)
    df = pd.DataFrame(rows)
    dup = df.duplicated(list(key_cols))
    if dup.any():
        i = int(dup.to_numpy().argmax()) + 1
        raise ValueError(f"{t.name}, row {i}: duplicate {dict(df.loc[i - 1, list(key_cols)])}")
    return df


def load_reference(directory: str | Path | None = None) -> ReferenceData:
    """Read and validate the reference tables of ``directory`` (default: the packaged ones)."""
    d = reference_dir() if directory is None else Path(directory)
    if not d.is_dir():
        raise ValueError(f"{d}: not a folder of reference tables")
    files = {name: d / name for name in (
        "moroney_rotational_stiffness.csv", "moroney_translational_stiffness.csv",
        "published_displacements.csv", "facet_forces.csv")}
    rot = _read(files["moroney_rotational_stiffness.csv"], ("case", "configuration"),
                ("stiffness_Nm_per_deg", "rotation_at_1.8Nm_deg"), ("kind",), positive=True)
    trans = _read(files["moroney_translational_stiffness.csv"], ("case", "configuration"),
                  ("stiffness_N_per_mm", "translation_at_20N_mm"), ("kind",), positive=True)
    disp = _read(files["published_displacements.csv"], ("series", "case"), DISPLACEMENT_COLUMNS)
    facet = _read(files["facet_forces.csv"], ("case",),
                  ("Fx_N", "Fy_N", "Fz_N", "Mx_Nm", "My_Nm", "Mz_Nm", "facet_force_N"),
                  moroney_cases=False)
    return ReferenceData(rot, trans, disp, facet, tuple(files.values()))
