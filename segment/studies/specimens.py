"""Specimen records as measured: the static load steps and the failure tests of Nightingale
et al. 2002 (``data/specimens/``).

Two files, each with its provenance in ``#`` header lines (SOURCES.md §15):

``nightingale2002_c5c6_raw.csv``
    One row per recorded pair. ``test_type`` ``flexibility``: the six static load steps per
    direction of each specimen (``point_type`` ``load_step``, ``point`` 1-6 by increasing
    moment) and the unloaded origin (``origin``, the (0, 0) pair of the record, repeated for
    both directions); ``failure``: every video frame of the specimen's failure test.
``nightingale2002_c5c6_failure.csv``
    One row per specimen: peak moment and rotation of its failure test, the first load drop,
    the axial and shear forces at the peak, the laboratory's comments.

Sign convention of the source (kept in the files): flexion positive, extension negative, for
moment and rotation. :class:`SpecimenData` gives the steps as magnitudes in the named
direction (the convention of :mod:`segment.studies.curves`: moment >= 0, rotation positive
in the named direction, the model's ``phi_y`` for flexion and ``-phi_y`` for extension).

What is a measurement here: the six load steps per direction (moment from the load cell,
rotation from video) and the failure frames. The 0.1 N m curves of ``data/curves/`` are
straight lines between these steps (and from the origin to the first step): interpolations,
never fitted or scored by the population calibration.

Every check names the file, the line, the column and the value: a missing column, a number
that is not one, an unknown test type, direction or point type, a step whose sign
contradicts its direction, a specimen without six increasing steps per direction, and a
failure row naming a specimen without static steps.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from segment.core.io import data_dir, sha256_of
from segment.core.tables import parse_number, read_text

__all__ = ["DIRECTIONS", "STEPS_PER_DIRECTION", "SpecimenData", "default_failure_path",
           "default_raw_path", "load_specimens"]

DIRECTIONS = ("flexion", "extension")
"""The directions of the static tests (modes of :data:`segment.studies.curves.MODES`)."""
STEPS_PER_DIRECTION = 6
"""Static load steps per direction in every record of Nightingale et al. 2002."""
LABORATORY = "nightingale2002"
"""The laboratory label of these specimens in the population calibration."""
_SIGN = {"flexion": 1.0, "extension": -1.0}
_ORDER = {"specimen": lambda order: {v: i for i, v in enumerate(order)},
          "direction": lambda order: {v: i for i, v in enumerate(DIRECTIONS)},
          "point": lambda order: float}
"""Sort keys of the steps table: specimens in file order, flexion before extension, points."""
_RAW_COLUMNS = ("specimen", "test_type", "direction", "point", "point_type", "time_s",
                "moment_Nm", "rotation_deg", "rotation_from_start_deg", "is_peak_moment")
_FAILURE_COLUMNS = ("specimen", "age_years", "direction", "failure_moment_Nm",
                    "failure_rotation_from_start_deg", "first_drop_peak_Nm",
                    "first_drop_rotation_deg", "rotation_start_deg", "Fx_at_failure_N",
                    "Fz_at_failure_N", "earlier_drops_before_peak", "test_comment_ev5",
                    "injury_ev5")


def default_raw_path() -> Path:
    """The packaged raw records, ``data/specimens/nightingale2002_c5c6_raw.csv``."""
    return data_dir() / "specimens" / "nightingale2002_c5c6_raw.csv"


def default_failure_path() -> Path:
    """The packaged failure summary, ``data/specimens/nightingale2002_c5c6_failure.csv``."""
    return data_dir() / "specimens" / "nightingale2002_c5c6_failure.csv"


class _Records:
    """A CSV file with ``#`` header lines: rows as dicts with their file line; errors name
    the file, line, column and value and are raised together."""

    def __init__(self, path: Path, required: tuple[str, ...]):
        self.path = Path(path)
        text = read_text(self.path, "specimen records")
        body = [(n, line) for n, line in enumerate(text.splitlines(), start=1)
                if line.strip() and not line.lstrip().startswith("#")]
        if not body:
            raise ValueError(f"{self.path.name}: no header and no data rows")
        reader = csv.reader(io.StringIO("\n".join(line for _, line in body)))
        rows = list(reader)
        self.header = [h.strip() for h in rows[0]]
        missing = [c for c in required if c not in self.header]
        if missing:
            raise ValueError(f"{self.path.name}, line {body[0][0]}: missing column(s) "
                             f"{missing}")
        self.errors: list[str] = []
        self.rows = []
        for (line, _), cells in zip(body[1:], rows[1:], strict=True):
            if len(cells) != len(self.header):
                self.error(line, None, None, f"expected {len(self.header)} fields, got "
                                             f"{len(cells)}")
                continue
            self.rows.append((line, dict(zip(self.header, (c.strip() for c in cells),
                                             strict=True))))
        if not self.rows and not self.errors:
            raise ValueError(f"{self.path.name}: no data rows")

    def error(self, line, col, value, what) -> None:
        where = f"line {line}" + (f", column {col!r}" if col else "")
        shown = f" (value {value!r})" if value is not None else ""
        self.errors.append(f"{where}{shown}: {what}")

    def number(self, line, row, col, *, empty_ok=False) -> float:
        raw = row[col]
        if raw == "" and empty_ok:
            return math.nan
        try:
            v = parse_number(raw)
        except ValueError as exc:
            self.error(line, col, raw, str(exc))
            return math.nan
        if not math.isfinite(v):
            self.error(line, col, raw, "expected a finite number")
            return math.nan
        return v

    def finish(self) -> None:
        if self.errors:
            n = len(self.errors)
            shown = "; ".join(self.errors[:20]) + (f"; and {n - 20} more" if n > 20 else "")
            raise ValueError(f"{self.path.name}: {n} error(s): {shown}")


@dataclass(frozen=True, eq=False)
class SpecimenData:
    """The measured records of one study (:func:`load_specimens`).

    Attributes
    ----------
    steps : DataFrame
        The static load steps: specimen, direction, point (1-6), moment_Nm (>= 0) and
        rotation_deg (positive in the named direction), line (of the raw file).
    frames : DataFrame
        The failure tests' frames: specimen, time_s, moment_Nm, rotation_deg,
        rotation_from_start_deg (signed as the source), is_peak_moment, line.
    failure : DataFrame
        The failure summary, one row per specimen (the columns of ``_FAILURE_COLUMNS``; NaN
        where the specimen has no failure record), ``doubtful`` True where the record's
        largest moment follows an earlier load drop or the laboratory noted a casting
        problem.
    laboratory : str
    paths, sha256 : tuple of str
        The two files and their checksums.
    """

    steps: pd.DataFrame
    frames: pd.DataFrame
    failure: pd.DataFrame
    laboratory: str
    paths: tuple[str, str]
    sha256: tuple[str, str]

    @property
    def specimens(self) -> tuple[str, ...]:
        """Specimens in file order."""
        return tuple(dict.fromkeys(self.steps["specimen"]))

    def curve(self, specimen: str, direction: str) -> tuple[np.ndarray, np.ndarray]:
        """``(moment_Nm, rotation_deg)`` of one specimen's steps in one direction (6,)."""
        s = self.steps[(self.steps["specimen"] == specimen)
                       & (self.steps["direction"] == direction)]
        if s.empty:
            raise KeyError(f"no {direction} steps of specimen {specimen!r}; the records hold "
                           f"{', '.join(self.specimens)}")
        return s["moment_Nm"].to_numpy(float), s["rotation_deg"].to_numpy(float)

    def largest_rotation(self, direction: str) -> tuple[float, str]:
        """The largest static rotation measured in ``direction`` [deg] and its specimen."""
        s = self.steps[self.steps["direction"] == direction]
        k = int(np.argmax(s["rotation_deg"].to_numpy()))
        return float(s["rotation_deg"].iloc[k]), str(s["specimen"].iloc[k])

    def subset(self, specimens) -> SpecimenData:
        """The records of the given specimens only (e.g. all but one, for leave-one-out)."""
        keep = list(specimens)
        unknown = sorted(set(keep) - set(self.specimens))
        if unknown:
            raise ValueError(f"unknown specimen(s) {unknown}; the records hold "
                             f"{', '.join(self.specimens)}")
        return SpecimenData(
            steps=self.steps[self.steps["specimen"].isin(keep)].reset_index(drop=True),
            frames=self.frames[self.frames["specimen"].isin(keep)].reset_index(drop=True),
            failure=self.failure[self.failure["specimen"].isin(keep)].reset_index(drop=True),
            laboratory=self.laboratory, paths=self.paths, sha256=self.sha256)


def load_specimens(raw=None, failure=None) -> SpecimenData:
    """Read and check the raw records and the failure summary (module docstring).

    Parameters
    ----------
    raw, failure : path, optional
        Default: the packaged files (:func:`default_raw_path`, :func:`default_failure_path`).

    Raises
    ------
    ValueError
        Every error of a file in one message, each naming the file, line, column and value.

    Examples
    --------
    >>> from segment.studies.specimens import load_specimens
    >>> data = load_specimens()
    >>> len(data.specimens), len(data.steps)
    (8, 96)
    >>> data.largest_rotation("flexion")
    (18.709999, 'B07')
    """
    raw = default_raw_path() if raw is None else Path(raw)
    failure = default_failure_path() if failure is None else Path(failure)
    t = _Records(raw, _RAW_COLUMNS)
    steps, frames = [], []
    for line, row in t.rows:
        if not row["specimen"]:
            t.error(line, "specimen", row["specimen"], "empty")
            continue
        kind = row["test_type"]
        if kind not in ("flexibility", "failure"):
            t.error(line, "test_type", kind, "expected flexibility or failure")
            continue
        m = t.number(line, row, "moment_Nm")
        r = t.number(line, row, "rotation_deg")
        if kind == "failure":
            frames.append({"specimen": row["specimen"],
                           "time_s": t.number(line, row, "time_s"), "moment_Nm": m,
                           "rotation_deg": r,
                           "rotation_from_start_deg": t.number(line, row,
                                                               "rotation_from_start_deg"),
                           "is_peak_moment": row["is_peak_moment"] == "yes", "line": line})
            continue
        direction = row["direction"]
        if direction not in DIRECTIONS:
            t.error(line, "direction", direction, f"expected one of {', '.join(DIRECTIONS)}")
            continue
        ptype = row["point_type"]
        if ptype not in ("origin", "load_step"):
            t.error(line, "point_type", ptype, "expected origin or load_step")
            continue
        point = t.number(line, row, "point")
        if ptype == "origin":
            if math.isfinite(m) and (m != 0.0 or r != 0.0):
                t.error(line, "moment_Nm", row["moment_Nm"], "the origin must be (0, 0)")
            continue
        sign = _SIGN[direction]
        for col, v in (("moment_Nm", m), ("rotation_deg", r)):
            if math.isfinite(v) and not sign * v > 0:
                t.error(line, col, row[col], f"a {direction} step must be "
                                             f"{'positive' if sign > 0 else 'negative'} "
                                             "(source convention: flexion +, extension -)")
        steps.append({"specimen": row["specimen"], "direction": direction, "point": point,
                      "moment_Nm": sign * m, "rotation_deg": sign * r, "line": line})
    steps_t = pd.DataFrame(steps, columns=["specimen", "direction", "point", "moment_Nm",
                                           "rotation_deg", "line"])
    for (spec, direction), g in steps_t.groupby(["specimen", "direction"], sort=False):
        line = int(g["line"].iloc[-1])
        if len(g) != STEPS_PER_DIRECTION:
            t.error(line, "point", None, f"specimen {spec!r} has {len(g)} {direction} steps, "
                                         f"expected {STEPS_PER_DIRECTION}")
        g = g.sort_values("point")
        if not np.all(np.diff(g["moment_Nm"].to_numpy()) > 0):
            t.error(line, "moment_Nm", None, f"the {direction} steps of specimen {spec!r} "
                                             "must increase in |moment| with point")
    for spec, g in steps_t.groupby("specimen", sort=False):
        for direction in DIRECTIONS:
            if direction not in set(g["direction"]):
                t.error(int(g["line"].iloc[-1]), "direction", None,
                        f"specimen {spec!r} has no {direction} steps")
    t.finish()
    order = list(dict.fromkeys(steps_t["specimen"]))
    steps_t = steps_t.sort_values(["specimen", "direction", "point"], kind="stable",
                                  key=lambda c: c.map(_ORDER[c.name](order)))
    steps_t = steps_t.reset_index(drop=True)
    steps_t["point"] = steps_t["point"].astype(int)
    frames_t = pd.DataFrame(frames, columns=["specimen", "time_s", "moment_Nm", "rotation_deg",
                                             "rotation_from_start_deg", "is_peak_moment",
                                             "line"])
    fail = _failure_table(failure, set(order))
    return SpecimenData(steps=steps_t, frames=frames_t, failure=fail, laboratory=LABORATORY,
                        paths=(str(raw), str(failure)),
                        sha256=(sha256_of(raw), sha256_of(failure)))


def _failure_table(path: Path, specimens: set[str]) -> pd.DataFrame:
    t = _Records(path, _FAILURE_COLUMNS)
    rows = []
    numeric = ("age_years", "failure_moment_Nm", "failure_rotation_from_start_deg",
               "first_drop_peak_Nm", "first_drop_rotation_deg", "rotation_start_deg",
               "Fx_at_failure_N", "Fz_at_failure_N")
    for line, row in t.rows:
        spec = row["specimen"]
        if spec not in specimens:
            t.error(line, "specimen", spec, "no static steps of this specimen in the raw "
                                            "records")
            continue
        has_test = row["direction"] != ""
        if has_test and row["direction"] not in DIRECTIONS:
            t.error(line, "direction", row["direction"],
                    f"expected one of {', '.join(DIRECTIONS)} or empty (no failure record)")
            continue
        out = {"specimen": spec, "direction": row["direction"] or None}
        for col in numeric:
            out[col] = t.number(line, row, col, empty_ok=not has_test or col == "age_years")
        drops = row["earlier_drops_before_peak"]
        comment = row["test_comment_ev5"].upper()
        out["earlier_drops"] = drops not in ("", "none")
        out["casting_note"] = "CAST" in comment
        out["doubtful"] = has_test and (out["earlier_drops"] or out["casting_note"])
        out["injury"] = row["injury_ev5"]
        out["test_comment"] = row["test_comment_ev5"]
        out["line"] = line
        rows.append(out)
    t.finish()
    return pd.DataFrame(rows)
