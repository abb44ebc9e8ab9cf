"""Writing a data folder: :func:`save_parameters`, the inverse of
:func:`segment.core.io.load_parameters` and the one writer of parameter tables (the
calibrations, the curve fits and the virtual population write through it)."""

from __future__ import annotations

import csv
import os
from pathlib import Path

from segment.core.io import (
    _LAW_COLUMNS,
    DISC_LAW_COLUMNS,
    ROTATION_COEFFS,
    ROTATION_DOFS,
    TRANSLATION_COEFFS,
    data_dir,
)
from segment.core.schema import COLUMNS, columns_of
from segment.elements.disc import DOF_NAMES

__all__ = ["NOT_COPIED", "PUBLISHED_LAW_SOURCE", "VALUE_DIGITS", "format_value",
           "save_parameters"]

VALUE_DIGITS = 6
"""Significant digits of a value :func:`save_parameters` writes (changed cells only)."""
SAME_RTOL = 1e-12
"""A model value and a table cell are the same number within this relative tolerance (the
units' conversion factors round)."""
NOT_COPIED = ("states.csv",)
_ELEMENT_TABLES = ("disc_translational.csv", "disc_rotational.csv", "ligaments.csv",
                   "facets.csv", "disc_law.csv")
"""Tables of a data folder that are not parameters: a folder without one uses the packaged
one (clinical procedures, :mod:`segment.core.states`)."""


def _read_rows(path: Path) -> tuple[list[str], list[list[str]]]:
    with open(path, newline="", encoding="utf-8-sig") as fh:
        rows = [r for r in csv.reader(fh) if any(c.strip() for c in r)]
    return [h.strip() for h in rows[0]], rows[1:]


def format_value(value: float) -> str:
    """A value as a written table holds it: :data:`VALUE_DIGITS` significant digits (the
    calibrated folders' own tables write theirs so too)."""
    return f"{value:.{VALUE_DIGITS}g}"


def _same(cell: str, value: float) -> bool:
    try:
        old = float(cell)
    except ValueError:
        return False
    return abs(old - value) <= SAME_RTOL * max(1.0, abs(old), abs(value))


class _Writer:
    """One table being rewritten: its rows, and the note for rows whose values change."""

    def __init__(self, path: Path, note: str, row_note=None):
        self.header, self.rows = _read_rows(path)
        self.col = {h: k for k, h in enumerate(self.header)}
        self.note = note
        self.row_note = row_note
        self.name = path.name
        self.changed = False

    def put(self, row: list[str], column: str, value: float, absent: float | None = None) -> None:
        """Write ``value`` (CSV units) into ``row``'s cell unless the cell holds it already.
        A column the table lacks is added (before ``source``, empty in the other rows) when
        it is optional (``absent``: the value its absence means) and ``value`` differs."""
        k = self.col.get(column)
        if k is None:
            if absent is None or _same(str(absent), value):
                return
            k = self.header.index("source")
            self.header.insert(k, column)
            for r in self.rows:
                r.insert(k, "")
            self.col = {h: j for j, h in enumerate(self.header)}
        elif _same(row[k], value) or (not row[k].strip() and absent is not None
                                      and _same(str(absent), value)):
            return
        row[k] = format_value(value)
        si = self.col["source"]
        if self.note and not row[si].startswith(self.note):
            extra = (self.row_note(self.name, dict(zip(self.header, row, strict=True)))
                     if self.row_note is not None else "")
            row[si] = f"{self.note}{'; ' + extra if extra else ''}; was: {row[si]}"
        self.changed = True

    def row(self, key_column: str, key: str) -> list[str] | None:
        k = self.col.get(key_column)
        return next((r for r in self.rows if k is not None and r[k] == key), None)

    def text(self) -> str:
        import io as _io

        buf = _io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(self.header)
        w.writerows(self.rows)
        return buf.getvalue()


def _write_elements(w: _Writer, table: str, key_column: str, records, key_of, model) -> None:
    """Every schema column of ``table`` that can ``get`` a value, for each record's row."""
    getters = [c for c in columns_of(table).values() if c.get is not None]
    for record in records:
        row = w.row(key_column, key_of(record))
        if row is None:
            raise ValueError(f"{table}: no row for {key_column} {key_of(record)!r} to write")
        for col in getters:
            w.put(row, col.name, col.get(record, model) / col.to_internal, col.absent)


def _write_disc(w: _Writer, table: str, model) -> None:
    coeffs, kcol, bcol = ((TRANSLATION_COEFFS, "k_N_per_mm", "b_Ns_per_m")
                          if table == "disc_translational.csv"
                          else (ROTATION_COEFFS, "k_Nm_per_deg", "b_Nms_per_rad"))
    offset = 0 if table == "disc_translational.csv" else 3
    kconv, bconv = COLUMNS[(table, kcol)].to_internal, COLUMNS[(table, bcol)].to_internal
    for n, coeff in enumerate(coeffs):
        d, positive = offset + n // 2, n % 2 == 0
        row = w.row("coefficient", coeff)
        if row is None:
            raise ValueError(f"{table}: no row for coefficient {coeff!r} to write")
        k = model.disc.k_positive[d] if positive else model.disc.k_negative[d]
        w.put(row, kcol, k / kconv)
        if positive:                       # the damping of a coordinate is read from its + row
            w.put(row, bcol, model.disc.damping[d] / bconv)


PUBLISHED_LAW_SOURCE = "eq. (1) of DETC2000/MECH-6821 (the published law)"


def _write_disc_law(w: _Writer | None, model, note: str) -> _Writer | None:
    """The rotations' laws (``disc_law.csv``): one row per rotation once the table exists (it
    is created when a rotation is not on eq. (1))."""
    laws = {dof: (model.disc.law[DOF_NAMES.index(dof)],
                  model.disc.law_parameters[DOF_NAMES.index(dof)]) for dof in ROTATION_DOFS}
    if w is None:
        if all(law == "linear" for law, _ in laws.values()):
            return None
        w = _Writer.__new__(_Writer)
        w.header, w.rows = [*DISC_LAW_COLUMNS, "source"], []
        w.col = {h: k for k, h in enumerate(w.header)}
        w.note, w.changed = note, True
    for dof, (law, values) in laws.items():
        row = w.row("dof", dof)
        if row is None:
            row = [dof, "linear"] + [""] * (len(w.header) - 3) + [PUBLISHED_LAW_SOURCE]
            w.rows.append(row)
            w.changed = True
        if row[w.col["law"]] != law:
            row[w.col["law"]] = law
            si = w.col["source"]
            row[si] = f"{note}; law {law}; was: {row[si]}" if note else row[si]
            w.changed = True
        for slot, col in enumerate(_LAW_COLUMNS[law]):
            w.put(row, col, values[slot] / COLUMNS[("disc_law.csv", col)].to_internal)
        for col in DISC_LAW_COLUMNS[2:]:
            if col not in _LAW_COLUMNS[law] and row[w.col[col]]:
                row[w.col[col]] = ""
                w.changed = True
    w.rows.sort(key=lambda r: ROTATION_DOFS.index(r[w.col["dof"]])
                if r[w.col["dof"]] in ROTATION_DOFS else len(ROTATION_DOFS))
    return w


def save_parameters(model, folder: str | os.PathLike, *, sources=None, note: str = "",
                    row_note=None, tables=None) -> list[Path]:
    """Write the parameter tables of ``model`` into ``folder`` (created): the inverse of
    :func:`load_parameters` and the one writer of data folders.

    The tables of ``sources`` (a data folder, default the packaged ``data/``) are the starting
    point. The rows of the elements the model holds (the disc's coefficients and laws, the
    ligaments, the facets) get the model's values through each column's schema row
    (:mod:`segment.core.schema`): a cell whose value the model changes is written with
    :data:`VALUE_DIGITS` significant digits and its row's ``source`` becomes
    ``"<note>; was: <its source>"``; an unchanged cell keeps its text and its row its source.
    ``row_note(table, row)`` (optional; ``row`` maps the table's columns to the row's cells)
    adds what changed this row after the note (``"<note>; <row note>; was: ..."``), e.g. the
    calibrated parameters and their values.
    The other tables (inertia, load cases, the contact law, ligament strips, validity limits,
    display geometry, parameter space) are copied; :data:`NOT_COPIED` are not. ``tables``
    ``{file name: text}`` writes whole tables that are not element parameters instead (e.g.
    a population member's validity limits).
    ``load_parameters(folder)`` then gives the model's values to the digits written.

    Returns the files written.
    """
    src = data_dir() if sources is None else Path(sources)
    out = Path(folder)
    if not src.is_dir():
        raise ValueError(f"{src}: not a folder of parameter tables (the sources to write from)")
    if out.resolve() == src.resolve():
        raise ValueError(f"{out}: the folder to write is the sources' folder; write elsewhere")
    out.mkdir(parents=True, exist_ok=True)
    texts: dict[str, str] = {}
    for path in sorted(src.glob("*.csv")):
        if path.name in NOT_COPIED:
            continue
        name = path.name
        if name in _ELEMENT_TABLES:
            w = _Writer(path, note, row_note)
            if name == "ligaments.csv":
                _write_elements(w, name, "name", model.ligaments, lambda x: x.name, model)
            elif name == "facets.csv":
                _write_elements(w, name, "side", model.facets, lambda f: f.side, model)
            elif name == "disc_law.csv":
                _write_disc_law(w, model, note)
            else:
                _write_disc(w, name, model)
            texts[name] = w.text() if w.changed else path.read_text(encoding="utf-8")
        else:
            texts[name] = path.read_text(encoding="utf-8")
    if "disc_law.csv" not in texts:
        w = _write_disc_law(None, model, note)
        if w is not None:
            texts["disc_law.csv"] = w.text()
    for name, text in (tables or {}).items():
        if name in _ELEMENT_TABLES:
            raise ValueError(f"{name} holds element parameters: save_parameters writes it "
                             "from the model")
        texts[name] = text
    written = []
    for name, text in texts.items():
        (out / name).write_text(text, encoding="utf-8")
        written.append(out / name)
    return written
