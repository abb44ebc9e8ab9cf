"""Reading CSV tables: the generic reader every table of the package goes through.

What is read: UTF-8 with or without a byte-order mark (a spreadsheet's "CSV UTF-8"), comma
separated (a ``;`` or tab separated file is named as such), numbers as people write them in a
CSV (``18``, ``1.8e1``, `` 18 ``, ``"18"``) but not what they do not mean there: ``0_58`` and
non-ASCII digits (which Python's ``float`` accepts), ``0,58`` (a decimal comma, with a hint),
``18 mm``. Every table has a ``source`` column on every row.

Errors name the file, the file line (1 = header) and data row (1 = first data row), the column
and the value; with ``collect=True`` every error of a file (up to :data:`MAX_ERRORS`) is listed in
one message. A column's meaning (its unit, hard limits and plausible range) is not this
module's business: the parameter tables pass their columns' schema rows
(:mod:`segment.core.schema`) to :class:`Table`, other tables the limits of their own readers.
"""

from __future__ import annotations

import csv
import io
import math
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MAX_ERRORS", "HardRange", "ImplausibleDataWarning", "PlausibleRange", "Table",
           "parse_number", "read_text"]

MAX_ERRORS = 20
"""At most this many errors of one file are listed in one message."""


@dataclass(frozen=True)
class PlausibleRange:
    """Closed interval [lower, upper] of a column, its unit and why."""

    lower: float
    upper: float
    unit: str
    reason: str


@dataclass(frozen=True)
class HardRange:
    """What a value must be whatever ``strict`` says (a length > 0, an angle within (-90, 90)):
    the interval from ``lower`` to ``upper``, each end open or closed."""

    lower: float = -math.inf
    upper: float = math.inf
    lower_open: bool = False
    upper_open: bool = False

    def holds(self, value) -> bool:
        """True where ``value`` (a number or an array) lies in the interval."""
        above = value > self.lower if self.lower_open else value >= self.lower
        below = value < self.upper if self.upper_open else value <= self.upper
        return above & below

    def relation(self, side: str = "") -> str:
        """The bound as words: ``> 0``, ``>= 0``, ``<= 1``, ``within (-90, 90)``; ``side``
        ``lower`` or ``upper`` names one end only."""
        lo = f"{'>' if self.lower_open else '>='} {self.lower:g}"
        hi = f"{'<' if self.upper_open else '<='} {self.upper:g}"
        if side == "lower" or (not side and self.upper == math.inf):
            return lo
        if side == "upper" or (not side and self.lower == -math.inf):
            return hi
        return (f"within {'(' if self.lower_open else '['}{self.lower:g}, "
                f"{self.upper:g}{')' if self.upper_open else ']'}")

    def describe(self) -> str:
        """``must be > 0``, ``must be >= 0``, ``must lie in (-90, 90)``, ``must be <= 1``."""
        if self.upper == math.inf:
            return f"must be {'>' if self.lower_open else '>='} {self.lower:g}"
        if self.lower == -math.inf:
            return f"must be {'<' if self.upper_open else '<='} {self.upper:g}"
        return (f"must lie in {'(' if self.lower_open else '['}{self.lower:g}, "
                f"{self.upper:g}{')' if self.upper_open else ']'}")


ANY = HardRange()
"""No hard limit (a finite number)."""
POSITIVE = HardRange(0.0, math.inf, lower_open=True)
NONNEGATIVE = HardRange(0.0, math.inf)


class ImplausibleDataWarning(UserWarning):
    """A data value outside its plausible range, loaded because ``strict=False``."""


# What people write in a CSV cell for a number: an optional sign, ASCII digits with at most
# one decimal point, an optional exponent (surrounding spaces and quotes are stripped before).
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_DECIMAL_COMMA = re.compile(r"[+-]?[0-9]+,[0-9]+")


def parse_number(text: str) -> float:
    """The float a CSV cell means, or ValueError saying why the text is not a plain number.

    Accepted: ``18``, ``+18``, ``18.``, ``.5``, ``1.8e1``, ``-1E-3`` with surrounding spaces;
    ``nan``/``inf`` spelled out (reported as not finite by the caller). Rejected (Python's
    ``float()`` would accept the first two): ``0_58``, non-ASCII digits, a decimal comma
    ``0,58`` (with a hint), units ``18 mm``, hex.
    """
    raw = text.strip()
    if _NUMBER.fullmatch(raw):
        return float(raw)
    if raw.lower().lstrip("+-") in ("nan", "inf", "infinity"):
        return float(raw)
    if not raw:
        raise ValueError(f"expected a number, got {text!r} (an empty cell)")
    if _DECIMAL_COMMA.fullmatch(raw):
        raise ValueError(f"expected a number, got {text!r}: a decimal comma? write "
                         f"{raw.replace(',', '.')!r} with a decimal point")
    if "_" in raw:
        raise ValueError(f"expected a number, got {text!r}: underscores are not accepted")
    if not raw.isascii():
        raise ValueError(f"expected a number, got {text!r}: only ASCII digits 0-9 are "
                         "accepted")
    raise ValueError(f"expected a plain number (the unit is in the column header), "
                     f"got {text!r}")


def read_text(path: Path, what: str = "") -> str:
    """The file as text: UTF-8 with or without a byte-order mark (``what``: which kind of
    file, for the not-found message)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ValueError(f"{path}: {what + ' ' if what else ''}file not found") from None
    except IsADirectoryError:
        raise ValueError(f"{path}: is a folder, expected a CSV file") from None
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ValueError(f"{path.name}: UTF-16 text; save the table as UTF-8 (\"CSV UTF-8\")")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path.name}: not UTF-8 text ({exc.reason} at byte "
                         f"{exc.start}); save the table as UTF-8") from None


class Table:
    """A CSV file with row/column-aware accessors that collect precise errors.

    Errors name the file line (1 = header) and the data row (1 = first data row). With
    ``collect=True`` (the parameter tables, the parameter-space and target files) up to
    :data:`MAX_ERRORS` of one file are collected and raised together by :meth:`finish`;
    otherwise the first error raises at once. ``what`` names the kind of file in the
    not-found message (e.g. ``"targets"``). ``columns`` maps a column name to its schema row
    (anything with ``hard`` and ``plausible``, :class:`segment.core.schema.Column`): its
    numbers are then checked against those (:meth:`number`). ``sourced=False`` is for the
    tables the package writes as results (``population.csv``), which have no ``source``
    column.
    """

    def __init__(self, path: Path, required: tuple[str, ...], *, strict: bool = True,
                 collect: bool = False, what: str = "", columns=None, sourced: bool = True):
        self.path = Path(path)
        self.name = self.path.name
        self.columns = dict(columns or {})
        self.strict = strict
        self.collect = collect       # False: raise at the first error (other modules' tables)
        self.errors: list[str] = []
        self.bad_rows: set[int] = set()
        self.broken_rows: set[int] = set()
        text = read_text(self.path, what)
        try:
            reader = csv.reader(io.StringIO(text, newline=""))
            lines = []
            for cells in reader:
                if any(cell.strip() for cell in cells):
                    lines.append((reader.line_num, cells))
        except csv.Error as exc:
            raise ValueError(f"{self.name}: not a readable CSV table ({exc})") from None
        if not lines:
            raise ValueError(f"{self.name}: empty file")
        header = [h.strip() for h in lines[0][1]]
        required = (*required, "source") if sourced else tuple(required)
        missing = [c for c in required if c not in header]
        if missing:
            hint = ""
            for sep, label in ((";", "';' (semicolons)"), ("\t", "tabs")):
                if len(header) == 1 and sep in header[0]:
                    hint = (f"; the fields are separated by {label}, not commas: save the "
                            "table as comma-separated CSV")
            raise ValueError(f"{self.name}: missing column(s) {missing}; expected "
                             f"{list(required)}{hint}")
        self.records = []
        self.line_of = {}
        for i, (line, cells) in enumerate(lines[1:], start=1):
            self.line_of[i] = line
            if len(cells) != len(header):
                self.error(i, None, f"expected {len(header)} fields ({', '.join(header)}), "
                                    f"got {len(cells)}")
                self.broken_rows.add(i)      # its cells are not parsed (no follow-up errors)
                cells = (cells + [""] * len(header))[: len(header)]
            self.records.append({h: c.strip() for h, c in zip(header, cells, strict=True)})
        if not self.records:
            raise ValueError(f"{self.name}: no data rows")
        for i, row in self.rows() if sourced else ():
            if not row["source"] and i not in self.broken_rows:
                self.error(i, "source", "empty; every row must say where its numbers come from")

    def where(self, i: int | None, col: str | None) -> str:
        parts = [] if i is None else [f"line {self.line_of[i]} (row {i})"]
        if col is not None:
            parts.append(f"column {col!r}" if "'" not in col else f"columns {col}")
        return ", ".join(parts)

    def error(self, i: int | None, col: str | None, what: str) -> None:
        """Record an error of row ``i`` (None: the file) in column ``col``."""
        if i is not None:
            self.bad_rows.add(i)
        self.errors.append(f"{self.where(i, col)}: {what}" if (i or col) else what)
        if not self.collect:
            self.finish()

    def implausible(self, i: int | None, col: str, what: str) -> None:
        """An error, or with ``strict=False`` a warning."""
        if self.strict:
            self.error(i, col, what + "; load with strict=False (CLI: --allow-implausible) "
                               "to accept it")
        else:
            warnings.warn(f"{self.name}, {self.where(i, col)}: {what}", ImplausibleDataWarning,
                          stacklevel=4)

    def finish(self) -> None:
        """Raise one ValueError listing the errors collected so far (if any)."""
        if not self.errors:
            return
        if len(self.errors) == 1:
            raise ValueError(f"{self.name}, {self.errors[0]}")
        shown = self.errors[:MAX_ERRORS]
        more = len(self.errors) - len(shown)
        raise ValueError(f"{self.name}: {len(self.errors)} errors: " + "; ".join(shown)
                         + (f"; and {more} more" if more else ""))

    def ok(self, i: int) -> bool:
        return i not in self.bad_rows

    def rows(self):
        return enumerate(self.records, start=1)

    def number(self, i: int, row: dict, col: str, *, positive=False, nonnegative=False) -> float:
        """The cell as a finite float (NaN after recording an error).

        Checked against the column's schema row when the table has one (its hard limit is an
        error, its plausible range an error or, with ``strict=False``, a warning), else against
        ``positive`` / ``nonnegative``."""
        if i in self.broken_rows:
            return math.nan
        raw = row[col]
        try:
            value = parse_number(raw)
        except ValueError as exc:
            self.error(i, col, str(exc))
            return math.nan
        if math.isnan(value) or math.isinf(value):
            self.error(i, col, f"expected a finite number, got {raw!r}")
            return math.nan
        schema = self.columns.get(col)
        hard = (schema.hard if schema is not None else
                POSITIVE if positive else NONNEGATIVE if nonnegative else ANY)
        if not hard.holds(value):
            self.error(i, col, f"{hard.describe()}, got {value:g}")
            return math.nan
        rng = schema.plausible if schema is not None else None
        if rng is not None and not rng.lower <= value <= rng.upper:
            self.implausible(i, col, f"{value:g} {rng.unit} is outside the plausible range "
                                     f"{rng.lower:g} to {rng.upper:g} {rng.unit} ({rng.reason})")
        return value

    def key(self, i: int, row: dict, col: str, allowed: tuple[str, ...]) -> str | None:
        if i in self.broken_rows:
            return None
        value = row[col]
        if value not in allowed:
            self.error(i, col, f"unknown value {value!r}; expected one of {', '.join(allowed)}")
            return None
        return value

    def build(self, i: int, col: str | None, fn, *args):
        """``fn(*args)`` for a clean row; a ValueError or arithmetic error becomes a row error."""
        if not self.ok(i):
            return None
        try:
            return fn(*args)
        except (ValueError, ArithmeticError) as exc:
            self.error(i, col, str(exc))
            return None

    def require_all(self, col: str, found: list[str | None], expected: tuple[str, ...]):
        for i, k in enumerate(found, start=1):
            if k is not None and k in found[: i - 1]:
                first = found.index(k) + 1
                self.error(i, col, f"duplicate value {k!r} (already in row {first}, line "
                                   f"{self.line_of[first]})")
        missing = [k for k in expected if k not in found]
        if missing:
            self.error(None, col, f"missing row(s) for {missing}")
