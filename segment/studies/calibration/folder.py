"""A calibrated data folder: the published tables with the calibrated values, each with its
provenance; the shipped calibrated set."""

from __future__ import annotations

import csv
from pathlib import Path

from segment.core.io import data_dir
from segment.studies.calibration.result import CalibrationResult
from segment.studies.space import load_space

CALIBRATED_DIR_NAME = "calibrated"
"""The shipped calibrated set: ``data/calibrated/`` (``segment.c5c6(data_dir=...)``)."""
REGENERATE_COMMAND = "segment calibrate --out data/calibrated --samples 300000"
"""Regenerates the shipped set, with ``posterior_diagnostics.csv`` from 300000 MCMC draws
(64 walkers x 4688 steps: measured, 100000 draws leave the kept chain shorter than 50
autocorrelation times of ~70 steps). Run from the repository root."""
VALUE_DIGITS = 6
"""Significant digits of calibrated values in the written tables."""


def shipped_calibrated_dir() -> Path:
    """Folder of the calibrated set shipped with the package (``data/calibrated``)."""
    return data_dir() / CALIBRATED_DIR_NAME


def _read_rows(path: Path):
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    return rows[0], rows[1:]


def _file_rows(path, sha256):
    """The rows of the file a study input was read from, when it is still what was read."""
    import hashlib

    p = Path(path)
    if sha256 and p.is_file() and hashlib.sha256(p.read_bytes()).hexdigest() == sha256:
        header, rows = _read_rows(p)
        return [h.lstrip("\ufeff") for h in header], rows
    return None


def _targets_rows(targets):
    """The targets used, as the rows of a targets file (the file itself when unchanged)."""
    rows = _file_rows(targets.path, targets.sha256)
    if rows is not None:
        return rows
    frame = targets.frame()
    return list(frame.columns), [[f"{v:.{VALUE_DIGITS}g}" if isinstance(v, float) else str(v)
                                  for v in r] for r in frame.itertuples(index=False)]


def _space_rows(space):
    """The space used, as the rows of a space file (the file itself when unchanged)."""
    rows = _file_rows(space.path, space.sha256)
    if rows is not None:
        return rows
    frame = space.table()
    out = []
    for r in frame.itertuples(index=False):
        cells = []
        for v in r:
            if isinstance(v, float):
                cells.append("" if v != v else f"{v:.{VALUE_DIGITS}g}")
            else:
                cells.append(str(v))
        out.append(cells)
    return list(frame.columns), out


def _recentred_space(space, result, note):
    """Rows of the space file for the calibrated folder: the same ranges and priors as the
    calibration's space, with the folder's model as the nominal point. An absolute field
    (rest length, gap, inclination, radius, C) gets the MAP as its nominal value; a stiffness
    factor stays a factor on the folder's own (calibrated) stiffness, so its nominal value
    stays 1 and its bounds and prior are divided by the MAP factor: the same absolute range
    as the calibration's."""
    import math

    header, rows = _space_rows(space)
    rows = [list(r) for r in rows]
    col = {h: k for k, h in enumerate(header)}

    def fmt(v):
        return f"{v:.{VALUE_DIGITS}g}"

    for r in rows:
        name = r[col["name"]]
        if name not in space.names:
            continue
        j = space.names.index(name)
        x = float(result.x[j])
        was = r[col["source"]]
        if space.fields[j] != "stiffness_scale":
            if fmt(x) == r[col["nominal"]].strip():
                continue
            r[col["nominal"]] = fmt(x)
            r[col["source"]] = f"nominal: {note} ({name} = {fmt(x)}); was: {was}"
            continue
        if x == 1.0:
            continue
        lower, upper = float(space.lower[j]) / x, float(space.upper[j]) / x
        r[col["nominal"]] = "1"
        r[col["lower"]] = fmt(min(lower, 1.0))
        r[col["upper"]] = fmt(max(upper, 1.0))
        dist = space.distributions[j]
        if dist == "normal":
            r[col["dist_mu"]] = fmt(space.mu[j] / x)
            r[col["dist_sigma"]] = fmt(space.sigma[j] / x)
        elif dist == "lognormal":
            r[col["dist_mu"]] = fmt(space.mu[j] - math.log(x))
        r[col["source"]] = (f"a factor on this folder's stiffness, which is {fmt(x)} times the "
                            f"input model's ({note}): bounds and prior divided by {fmt(x)}, the "
                            f"same absolute range as the calibration; was: {was}")
    return header, rows


def write_calibrated(result: CalibrationResult, out, *, source_dir=None,
                     command: str = REGENERATE_COMMAND) -> list[Path]:
    """Write a data folder holding the MAP of ``result``, readable by ``segment --data DIR``.

    Every table of ``source_dir`` (default: the packaged ``data/``) is copied; each changed
    value is rewritten and its row's ``source`` says it was calibrated, against which targets,
    by which command (the original source follows, after "was:"). The inputs used are
    recorded (issue 21): ``calibration_targets.csv`` holds the targets used (the given file,
    not the folder's), ``calibration_space.csv`` the parameter space used, and
    ``parameter_space.csv`` the same ranges and priors centred on the calibrated model (so that
    ``segment --data DIR sensitivity`` studies this folder's model, see
    :func:`_recentred_space`); ``calibration_summary.txt`` names the command, the data folder
    and each input file with its SHA-256. Also written: ``calibration_parameters.csv`` (prior
    vs posterior), ``calibration_agreement.csv`` (before / after per target) and
    ``calibration_misfits.csv``.

    Returns the written files.
    """
    from segment.core.io import save_parameters
    from segment.core.published import c5c6

    src = data_dir() if source_dir is None else Path(source_dir)
    out = Path(out)
    space = result.space if result.space is not None else load_space(result.space_path or None)
    if space.names != result.names:
        raise ValueError(f"the result's parameters {list(result.names)} are not those of "
                         f"{result.space_path}")
    tname = Path(result.targets.path).name
    bases = "/".join(sorted(set(result.targets.sd_basis)))
    note_head = (f"calibrated (MAP) against {tname} ({len(result.targets)} targets as listed "
                 f"there, SDs {bases}) by `{command}`")
    model = space.apply(c5c6(data_dir=src), result.x)        # the MAP's model
    written = save_parameters(model, out, sources=src, note=note_head)
    tables = {}
    # the inputs as used (issue 21): the files themselves when they are what was read
    verbatim = {}
    for fname, used, rows in (("calibration_targets.csv", result.targets,
                               _targets_rows(result.targets)),
                              ("calibration_space.csv", space, _space_rows(space))):
        if _file_rows(used.path, used.sha256) is not None:
            verbatim[fname] = Path(used.path).read_bytes()
        else:
            tables[fname] = rows
    # and the space centred on this folder's model
    tables["parameter_space.csv"] = _recentred_space(space, result, note_head)
    for fname, data in verbatim.items():
        (out / fname).write_bytes(data)
        written.append(out / fname)
    for fname, (header, rows) in tables.items():
        path = out / fname
        with open(path, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(header)
            w.writerows(rows)
        if path not in written:
            written.append(path)
    for name, frame in (("calibration_parameters.csv", result.parameters()),
                        ("calibration_agreement.csv", result.agreement()),
                        ("calibration_misfits.csv", result.misfits)):
        frame.to_csv(out / name, index=False, float_format="%.6g", lineterminator="\n")
        written.append(out / name)
    (out / "calibration_summary.txt").write_text(
        f"generated by `{command}`; do not edit\n" + _inputs(result, space, source_dir)
        + _stable_summary(result) + "\n", encoding="utf-8")
    written.append(out / "calibration_summary.txt")
    return written


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
