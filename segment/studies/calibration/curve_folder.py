"""Data folders from curve calibrations: one complete, loadable data folder per calibrated
parameter set, recording exactly what was used; ``population.csv`` for a population of them.

A folder holds every table of the source data folder (default the packaged ``data/``) with the
calibrated model's values written in (:data:`~segment.studies.calibration.folder.VALUE_DIGITS`
significant digits): disc stiffness per coefficient, ligament rest lengths and force axes,
facet geometry, and ``disc_law.csv`` when the form has a law. Each changed row's ``source``
says it was calibrated, to which curves, in which form, by which command, followed by the
original source after "was:". ``segment --data DIR`` and ``segment.c5c6(data_dir=DIR)`` read it
with the strict checks. Also written:

* ``curve_calibration_inputs.csv``: the curves file and its sha256, the fitted specimen (or
  ``population``) and modes, the form and the sha256 of its files, the point SD, the command,
  and the sha256 of every table written to the folder (``file_sha256 <table>``: what
  :meth:`segment.studies.population.Population.from_folders` verifies);
* ``curve_calibration_space.csv``: the form's parameter space as used;
* ``curve_calibration_parameters.csv`` (prior vs posterior, identifiability) and
  ``curve_calibration_points.csv`` (observed, published and calibrated rotation per point);
* ``curve_calibration_summary.txt``.
"""

from __future__ import annotations

import csv
import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from segment.core.checks import Quantity, parse_flag
from segment.core.io import data_dir
from segment.core.tables import Table
from segment.studies.calibration.curve_fit import population_table
from segment.studies.calibration.curve_result import CurveCalibration
from segment.studies.calibration.folder import VALUE_DIGITS
from segment.studies.forms import load_form

__all__ = ["INPUTS_FILE", "POPULATION_FILE", "PopulationTable", "calibrated_model",
           "read_inputs", "read_population", "write_curve_calibration", "write_population"]

INPUTS_FILE = "curve_calibration_inputs.csv"
POPULATION_FILE = "population.csv"



def calibrated_model(fit: CurveCalibration, *, model, form=None):
    """The Segment of the fit's MAP: the form's law on ``model`` (default the published
    model), the parameters applied."""

    form = load_form(fit.form if form is None else form)
    base = model
    return form.space.apply(form.model(base), fit.x)


def _g(value: float) -> str:
    return f"{value:.{VALUE_DIGITS}g}"


def write_curve_calibration(fit: CurveCalibration, out, *, form=None, source_dir=None,
                            command: str = "", strict: bool = True) -> list[Path]:
    """Write the complete data folder of ``fit``'s MAP to ``out`` (module docstring).

    Raises
    ------
    ValueError
        When the fit did not converge (nothing is written).
    """
    from segment.core.published import c5c6
    from segment.core.save import save_parameters

    if not fit.success:
        raise ValueError(f"the calibration of {fit.targets.label} did not converge "
                         f"({fit.message}): nothing written")
    form = load_form(fit.form if form is None else form)
    src = data_dir() if source_dir is None else Path(source_dir)
    base = c5c6(data_dir=src, strict=strict)
    cal = form.space.apply(form.model(base), fit.x)
    out = Path(out)
    curves = Path(fit.targets.curves.path).name
    note = (f"calibrated (MAP) to the {fit.targets.label} curves of {curves} (sha256 "
            f"{fit.targets.curves.sha256[:12]}), form {form.name}, by `{command}`")
    written = save_parameters(cal, out, sources=src, note=note)
    shutil.copyfile(form.space.path, out / "curve_calibration_space.csv")
    written.append(out / "curve_calibration_space.csv")
    tables = sorted(p.name for p in written if p.suffix == ".csv")
    inputs = [("curves", curves), ("curves_sha256", fit.targets.curves.sha256),
              ("fitted", fit.targets.label), ("modes", " ".join(fit.targets.mode_set)),
              ("points", str(fit.n_points)),
              ("point_sd_deg", "specimens' SD per level" if fit.targets.sd_basis != "assumed"
               else _g(float(fit.targets.sd[0]))),
              ("form", form.name), ("form_description", form.description),
              *((f"form_file_sha256 {k}", v) for k, v in form.checksums().items()),
              ("starts", str(1 + fit.extra.get("n_prior_starts", 0))),
              ("command", command),
              *((f"file_sha256 {name}", _sha256(out / name)) for name in tables)]
    with open(out / INPUTS_FILE, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["key", "value"])
        w.writerows(inputs)
    written.append(out / INPUTS_FILE)
    for name, frame in (("curve_calibration_parameters.csv", fit.parameters()),
                        ("curve_calibration_points.csv", fit.points())):
        frame.to_csv(out / name, index=False, float_format="%.6g", lineterminator="\n")
        written.append(out / name)
    (out / "curve_calibration_summary.txt").write_text(
        f"generated by `{command}`; do not edit\n" + fit.summary() + "\n", encoding="utf-8")
    written.append(out / "curve_calibration_summary.txt")
    return written


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


def _sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def read_inputs(folder) -> dict[str, str]:
    """The key-value rows of a folder's :data:`INPUTS_FILE` ({} when there is none)."""
    path = Path(folder) / INPUTS_FILE
    if not path.is_file():
        return {}
    t = Table(path, ("key", "value"), sourced=False, what="calibration inputs")
    out: dict[str, str] = {}
    for i, row in t.rows():
        if i in t.broken_rows:
            continue
        if row["key"] in out:
            t.error(i, "key", f"duplicate key {row['key']!r}")
        out[row["key"]] = row["value"]
    t.finish()
    return out


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
    from segment.studies.forms import load_form

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
