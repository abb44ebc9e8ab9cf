"""A calibrated data folder, for a calibration to points and to curves alike: the one writer.

A calibrated folder is :func:`segment.core.save.save_parameters` of the MAP's model (every table
of the source folder, the packaged ``data/`` by default, with the calibrated values written in,
each changed row's ``source`` saying it was calibrated, against what, by which command, and
the original source after "was:"), then the record of how it was made, written by
:class:`CalibratedFolder`: the inputs as used (the file itself when it is still what was read),
the fit's tables and a summary. ``segment --data DIR`` and ``segment.c5c6(data_dir=DIR)`` read
it with the strict checks.

:func:`write_calibrated` (a point calibration, :class:`CalibrationResult`) also writes

* ``calibration_targets.csv`` and ``calibration_space.csv``: the targets and the parameter
  space used (issue 21); ``parameter_space.csv``: the same space centred on the folder's model
  (:func:`~segment.studies.calibration.recentred.recentred_space`);
* ``calibration_parameters.csv`` (prior vs posterior), ``calibration_agreement.csv`` (before
  / after per target), ``calibration_misfits.csv`` and ``calibration_summary.txt`` (the command,
  the data folder and each input file with its SHA-256).

:func:`write_curve_calibration` (a curve fit, :class:`CurveCalibration`; ``disc_law.csv`` when
the form has a law) also writes

* ``curve_calibration_inputs.csv``: the curves file and its sha256, the fitted specimen (or
  ``population``) and modes, the form and the sha256 of its files, the point SD, the command,
  and the sha256 of every table written to the folder (``file_sha256 <table>``: what
  :meth:`segment.studies.population.Population.from_folders` verifies);
* ``curve_calibration_space.csv``: the form's parameter space as used;
* ``curve_calibration_parameters.csv`` (prior vs posterior, identifiability),
  ``curve_calibration_points.csv`` (observed, published and calibrated rotation per point) and
  ``curve_calibration_summary.txt``.
"""

from __future__ import annotations

import csv
from pathlib import Path

from segment.core.io import data_dir, sha256_of
from segment.core.published import c5c6
from segment.core.save import format_value, save_parameters
from segment.core.tables import Table
from segment.studies.calibration.curve_result import CurveCalibration
from segment.studies.calibration.recentred import recentred_space, row_settings
from segment.studies.calibration.result import CalibrationResult
from segment.studies.forms import load_form
from segment.studies.space import load_space

__all__ = ["CALIBRATED_DIR_NAME", "INPUTS_FILE", "REGENERATE_COMMAND", "CalibratedFolder",
           "calibrated_model", "file_rows", "read_inputs",
           "shipped_calibrated_dir", "write_calibrated", "write_curve_calibration"]

CALIBRATED_DIR_NAME = "calibrated"
"""The shipped calibrated set: ``data/calibrated/`` (``segment.c5c6(data_dir=...)``)."""
REGENERATE_COMMAND = "segment calibrate --out data/calibrated --samples 300000"
"""Regenerates the shipped set, with ``posterior_diagnostics.csv`` from 300000 MCMC draws
(64 walkers x 4688 steps: measured, 100000 draws leave the kept chain shorter than 50
autocorrelation times of ~70 steps). Run from the repository root."""
INPUTS_FILE = "curve_calibration_inputs.csv"
"""The key-value record of what a curve calibration used (:func:`read_inputs`)."""
FRAME_FLOAT_FORMAT = "%.6g"
"""The fit's own tables (parameters, agreement, points): six significant digits."""


def shipped_calibrated_dir() -> Path:
    """Folder of the calibrated set shipped with the package (``data/calibrated``)."""
    return data_dir() / CALIBRATED_DIR_NAME


# ---------------------------------------------------------------- shared helpers
def file_rows(path, sha256) -> tuple[list[str], list[list[str]]] | None:
    """The header and rows of the file an input was read from, when it is still what was read
    (its SHA-256 is ``sha256``); None when it is not (changed, gone, or no file at all)."""
    p = Path(path)
    if not (sha256 and p.is_file() and sha256_of(p) == sha256):
        return None
    with open(p, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    return [h.lstrip("\ufeff") for h in rows[0]], rows[1:]


def _used_rows(used, frame, *, blank_nan: bool):
    """The input ``used`` (targets or space) as the rows of its file: the file itself when
    unchanged, else ``frame`` (its table), floats as
    :func:`~segment.core.save.format_value` writes them (NaN empty when ``blank_nan``)."""
    rows = file_rows(used.path, used.sha256)
    if rows is not None:
        return rows

    def cell(v):
        if not isinstance(v, float):
            return str(v)
        return "" if blank_nan and v != v else format_value(v)

    return list(frame.columns), [[cell(v) for v in r] for r in frame.itertuples(index=False)]


# ---------------------------------------------------------------- the writer
class CalibratedFolder:
    """A calibrated data folder being written: the model's tables first
    (:func:`~segment.core.save.save_parameters`), then the record of how it was made.

    Parameters
    ----------
    model : Segment
        The MAP's model.
    out : path
        The folder (created when missing).
    sources : path
        The data folder whose tables are written with the model's values.
    note, row_note
        The provenance of each changed row (see :func:`~segment.core.save.save_parameters`).

    ``written`` lists the files written, in order.
    """

    def __init__(self, model, out, *, sources, note: str, row_note=None):
        self.out = Path(out)
        self.written: list[Path] = save_parameters(model, self.out, sources=sources, note=note,
                                                   row_note=row_note)

    def _record(self, path: Path) -> None:
        """``path`` joins :attr:`written` once (a table may overwrite one that
        :func:`~segment.core.save.save_parameters` wrote, e.g. ``calibration_targets.csv``)."""
        if path not in self.written:
            self.written.append(path)

    def copy(self, name: str, source) -> None:
        """``source``'s bytes as ``name`` (an input file as it was read)."""
        (self.out / name).write_bytes(Path(source).read_bytes())
        self._record(self.out / name)

    def rows(self, name: str, header, rows) -> None:
        """A CSV table ``name`` of ``header`` and ``rows`` (strings), over a table of the same
        name that :func:`~segment.core.save.save_parameters` wrote."""
        path = self.out / name
        with open(path, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(header)
            w.writerows(rows)
        self._record(path)

    def frames(self, frames) -> None:
        """Each ``(name, DataFrame)`` of ``frames`` as a CSV table (:data:`FRAME_FLOAT_FORMAT`)."""
        for name, frame in frames:
            frame.to_csv(self.out / name, index=False, float_format=FRAME_FLOAT_FORMAT,
                         lineterminator="\n")
            self._record(self.out / name)

    def summary(self, name: str, text: str, *, command: str) -> None:
        """The plain-text summary ``name``: the command that wrote the folder, then ``text``."""
        (self.out / name).write_text(f"generated by `{command}`; do not edit\n" + text + "\n",
                                     encoding="utf-8")
        self._record(self.out / name)

    def table_checksums(self) -> list[tuple[str, str]]:
        """``("file_sha256 <table>", sha256)`` of every CSV table written so far, by name."""
        names = sorted(p.name for p in self.written if p.suffix == ".csv")
        return [(f"file_sha256 {name}", sha256_of(self.out / name)) for name in names]


# ---------------------------------------------------------------- a calibration to points
def write_calibrated(result: CalibrationResult, out, *, source_dir=None,
                     command: str = REGENERATE_COMMAND) -> list[Path]:
    """Write a data folder holding the MAP of ``result``, readable by ``segment --data DIR``
    (module docstring): every table of ``source_dir`` (default: the packaged ``data/``) with
    the calibrated values, and the targets, space and fit as used (issue 21).

    Returns the written files.
    """
    src = data_dir() if source_dir is None else Path(source_dir)
    space = result.space if result.space is not None else load_space(result.space_path or None)
    if space.names != result.names:
        raise ValueError(f"the result's parameters {list(result.names)} are not those of "
                         f"{result.space_path}")
    tname = Path(result.targets.path).name
    bases = "/".join(sorted(set(result.targets.sd_basis)))
    note = (f"calibrated (MAP) against {tname} ({len(result.targets)} targets as listed "
            f"there, SDs {bases}) by `{command}`")
    folder = CalibratedFolder(space.apply(c5c6(data_dir=src), result.x), out, sources=src,
                              note=note, row_note=row_settings(space, result))
    space_rows = _used_rows(space, space.table(), blank_nan=True)
    recentred = recentred_space(space, result, note, *space_rows)
    verbatim, derived = [], []      # the inputs as used: the files themselves when unchanged
    for name, used, rows in (("calibration_targets.csv", result.targets,
                              _used_rows(result.targets, result.targets.frame(), blank_nan=False)),
                             ("calibration_space.csv", space, space_rows)):
        if file_rows(used.path, used.sha256) is not None:
            verbatim.append((name, used.path))
        else:
            derived.append((name, rows))
    for name, path in verbatim:
        folder.copy(name, path)
    for name, rows in [*derived, ("parameter_space.csv", recentred)]:
        folder.rows(name, *rows)
    folder.frames((("calibration_parameters.csv", result.parameters()),
                   ("calibration_agreement.csv", result.agreement()),
                   ("calibration_misfits.csv", result.misfits)))
    folder.summary("calibration_summary.txt",
                   _inputs(result, space, source_dir) + _stable_summary(result), command=command)
    return folder.written


def _inputs(result: CalibrationResult, space, source_dir) -> str:
    """What the calibration read: data folder, targets and space, with their checksums (file
    names only: no absolute paths in a committed folder)."""
    def file(path, sha, what):
        name = Path(path).name
        packaged = Path(path).resolve().parent == data_dir().resolve()
        return (f"{what}: {name}{' (packaged)' if packaged else ''}, "
                + (f"sha256 {sha}" if sha else "derived in Python (no file)"))

    folder = "the packaged data/" if source_dir is None else Path(source_dir).name + "/"
    t = result.targets
    return (f"inputs: data folder {folder} (its tables and load cases); "
            f"{file(t.path, t.sha256, 'targets')} ({len(t)} targets, written to "
            f"calibration_targets.csv); {file(space.path, space.sha256, 'parameter space')} "
            "(written to calibration_space.csv; parameter_space.csv is the same space centred "
            "on this folder's model)\n")


def _stable_summary(result: CalibrationResult) -> str:
    """The summary without wall times (so a regenerated folder compares equal)."""
    text = result.summary()
    _, _, rest = text.partition("\n")
    return f"calibration: {result.message}\n{rest}"


# ---------------------------------------------------------------- a calibration to curves
def calibrated_model(fit: CurveCalibration, *, model, form=None):
    """The Segment of the fit's MAP: the form's law on ``model``, the parameters applied."""
    form = load_form(fit.form if form is None else form)
    return form.space.apply(form.model(model), fit.x)


def write_curve_calibration(fit: CurveCalibration, out, *, form=None, source_dir=None,
                            command: str = "", strict: bool = True) -> list[Path]:
    """Write the complete data folder of ``fit``'s MAP to ``out`` (module docstring).

    Raises
    ------
    ValueError
        When the fit did not converge (nothing is written).
    """
    if not fit.success:
        raise ValueError(f"the calibration of {fit.targets.label} did not converge "
                         f"({fit.message}): nothing written")
    form = load_form(fit.form if form is None else form)
    src = data_dir() if source_dir is None else Path(source_dir)
    curves = Path(fit.targets.curves.path).name
    note = (f"calibrated (MAP) to the {fit.targets.label} curves of {curves} (sha256 "
            f"{fit.targets.curves.sha256[:12]}), form {form.name}, by `{command}`")
    model = calibrated_model(fit, model=c5c6(data_dir=src, strict=strict), form=form)
    folder = CalibratedFolder(model, out, sources=src, note=note)
    folder.copy("curve_calibration_space.csv", form.space.path)
    folder.rows(INPUTS_FILE, ["key", "value"], [
        ("curves", curves), ("curves_sha256", fit.targets.curves.sha256),
        ("fitted", fit.targets.label), ("modes", " ".join(fit.targets.mode_set)),
        ("points", str(fit.n_points)),
        ("point_sd_deg", "specimens' SD per level" if fit.targets.sd_basis != "assumed"
         else format_value(float(fit.targets.sd[0]))),
        ("form", form.name), ("form_description", form.description),
        *((f"form_file_sha256 {k}", v) for k, v in form.checksums().items()),
        ("starts", str(1 + fit.extra.get("n_prior_starts", 0))),
        ("command", command),
        *folder.table_checksums()])
    folder.frames((("curve_calibration_parameters.csv", fit.parameters()),
                   ("curve_calibration_points.csv", fit.points())))
    folder.summary("curve_calibration_summary.txt", fit.summary(), command=command)
    return folder.written


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
