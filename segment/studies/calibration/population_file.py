"""``population.csv``: a population of calibrated data folders in one table, written
(:func:`write_population`, ``segment calibrate --curves --each``) and read back, checked
(:func:`read_population`; also the table of ``segment calibrate --population``)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from segment.core.checks import Quantity, parse_flag
from segment.core.tables import Table
from segment.studies.calibration.curve_fit import population_table
from segment.studies.calibration.folder import write_curve_calibration
from segment.studies.forms import load_form

__all__ = ["POPULATION_FILE", "PopulationTable", "read_population", "write_population"]

POPULATION_FILE = "population.csv"


def write_population(fits, out, *, form=None, source_dir=None, command: str = "",
                     strict: bool = True) -> tuple[list[Path], list[str]]:
    """One folder per converged specimen at ``out/<specimen>/`` and ``out/population.csv``
    (:func:`~segment.studies.calibration.curve_fit.population_table`: every specimen, its
    parameters, whether it converged, its fit error). A specimen whose calibration did not
    converge gets no folder (its row says so). Returns the written files and the specimens
    that failed."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written, failed = [], []
    for f in fits:
        folder = out / f.targets.label
        if f.success:
            written += write_curve_calibration(f, folder, form=form, source_dir=source_dir,
                                               command=command, strict=strict)
        else:
            failed.append(f.targets.label)
            if folder.exists():              # from an earlier run: stale now
                shutil.rmtree(folder)
    table = population_table(fits)
    table.to_csv(out / POPULATION_FILE, index=False, float_format="%.6g", lineterminator="\n")
    written.append(out / POPULATION_FILE)
    return written, failed


@dataclass(frozen=True, eq=False)
class PopulationTable:
    """A checked ``population.csv`` (:func:`read_population`).

    Attributes
    ----------
    path : Path
    label : str
        The members' column: ``specimen`` (``calibrate --curves --each``) or ``member``
        (``calibrate --population``).
    frame : DataFrame
        Every row as read (``converged`` as bool, the converged rows' parameters as floats).
    lines : dict
        Member -> its line in the file.
    forms : tuple of str
        The forms of the converged members, in file order.
    """

    path: Path
    label: str
    frame: pd.DataFrame
    lines: dict
    forms: tuple[str, ...]

    @property
    def converged(self) -> pd.DataFrame:
        """The converged members' rows."""
        return self.frame[self.frame["converged"]].reset_index(drop=True)

    def where(self, member: str) -> str:
        """``"population.csv, line L"`` of a member."""
        return f"{self.path.name}, line {self.lines[member]}"


def read_population(path, *, form=None, mixed: bool = False,
                    strict: bool = True) -> PopulationTable:
    """``population.csv`` of :func:`write_population` or of ``segment calibrate --population``,
    checked (every error of the file in one ``ValueError`` naming the file, line, row, column
    and value).

    Checked: the member column (``specimen`` or ``member``: non-empty, each member once), the
    ``form`` of each row (a known form; one form for all converged members unless ``mixed``;
    ``form`` if given), ``converged`` (``True``/``False``, yes/no, 1/0: never a string cast to
    bool, ``"no"`` is False), and every parameter of a converged member's form: a finite
    number within its field's hard limit and plausible range
    (:data:`segment.core.schema.FIELDS`; ``strict=False``: outside the plausible range is a
    warning). Two converged members with the same parameters are one member counted twice.
    """
    path = Path(path)
    t = Table(path, ("form", "converged"), strict=strict, collect=True, what="population",
              sourced=False)
    header = list(t.records[0])
    labels = [c for c in ("specimen", "member") if c in header]
    if len(labels) != 1:
        raise ValueError(f"{t.name}: expected one member column, 'specimen' (segment "
                         f"calibrate --curves --each) or 'member' (segment calibrate "
                         f"--population); found {labels or 'none'}")
    label = labels[0]
    want = None if form is None else load_form(form).name
    forms: dict[str, object] = {}
    seen: dict[str, int] = {}
    rows, lines = [], {}
    for i, row in t.rows():
        if i in t.broken_rows:
            continue
        name = row[label]
        if not name:
            t.error(i, label, "empty; every row names its member")
            continue
        if name in seen:
            j = seen[name]
            t.error(i, label, f"member {name!r} again (already in row {j}, line "
                              f"{t.line_of[j]}): a repeated row is one member counted twice")
            continue
        seen[name] = i
        try:
            ok = parse_flag(row["converged"])
        except ValueError as exc:
            t.error(i, "converged", str(exc))
            continue
        record = {**row, "converged": ok}
        if ok:
            if not row["form"]:
                t.error(i, "form", "empty; every converged member names its form")
                continue
            if row["form"] not in forms:
                try:
                    forms[row["form"]] = load_form(row["form"])
                except (ValueError, OSError) as exc:
                    t.error(i, "form", f"unknown form {row['form']!r} ({exc})")
                    forms[row["form"]] = None
            f = forms[row["form"]]
            if f is None:
                continue
            if want is not None and f.name != want:
                t.error(i, "form", f"member {name!r} is of form {f.name!r}, the population "
                                   f"is read as form {want!r}")
                continue
            for field, pname in zip(f.space.schema_fields, f.space.names, strict=True):
                if pname not in row:
                    t.error(i, None, f"no column for parameter {pname!r} of form {f.name}")
                    break
                t.columns[pname] = Quantity(pname, field.unit, field.limit, field.range)
                record[pname] = t.number(i, row, pname)
        rows.append(record)
        lines[name] = t.line_of[i]
    converged = [r for r in rows if r["converged"]]
    used = list(dict.fromkeys(r["form"] for r in converged))
    if len(used) > 1 and not mixed:
        by = {f: [r[label] for r in converged if r["form"] == f] for f in used}
        t.error(None, "form", "the converged members are of different forms: "
                + "; ".join(f"{f}: {', '.join(m[:4])}{' ...' if len(m) > 4 else ''}"
                            for f, m in by.items())
                + "; a population has one form (pass mixed=True to compare a mixture)")
    if not t.errors:
        fingerprints: dict[tuple, str] = {}
        for r in converged:
            names = forms[r["form"]].space.names
            key = (r["form"], tuple(r[n] for n in names))
            if key in fingerprints:
                t.error(seen[r[label]], label,
                        f"member {r[label]!r} has the parameters of {fingerprints[key]!r} "
                        f"(line {lines[fingerprints[key]]}): one member counted twice?")
            fingerprints[key] = r[label]
        if not converged:
            t.error(None, "converged", "no converged member")
    t.finish()
    frame = pd.DataFrame(rows)
    return PopulationTable(path=path, label=label, frame=frame, lines=lines,
                           forms=tuple(r["form"] for r in converged))
