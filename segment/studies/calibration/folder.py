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
_DISC_ROWS = {"x": ("disc_translational.csv", "k_N_per_mm"),
              "y": ("disc_translational.csv", "k_N_per_mm"),
              "z": ("disc_translational.csv", "k_N_per_mm"),
              "phi_x": ("disc_rotational.csv", "k_Nm_per_deg"),
              "phi_y": ("disc_rotational.csv", "k_Nm_per_deg"),
              "phi_z": ("disc_rotational.csv", "k_Nm_per_deg")}
_FACET_COLUMNS = {"gap_mm": ("gap_mm",), "inclination_deg": ("inclination_deg",),
                  "radius_mm": ("radius_c6_mm", "radius_c5_mm"), "blend_C": ("blend_C",)}
VALUE_DIGITS = 6
"""Significant digits of calibrated values in the written tables."""


def shipped_calibrated_dir() -> Path:
    """Folder of the calibrated set shipped with the package (``data/calibrated``)."""
    return data_dir() / CALIBRATED_DIR_NAME


def _read_rows(path: Path):
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    return rows[0], rows[1:]


def write_calibrated(result: CalibrationResult, out, *, source_dir=None,
                     command: str = REGENERATE_COMMAND) -> list[Path]:
    """Write a data folder holding the MAP of ``result``, readable by ``segment --data DIR``.

    Every table of ``source_dir`` (default: the packaged ``data/``) is copied; each changed
    value is rewritten and its row's ``source`` says it was calibrated, against which targets,
    by which command (the original source follows, after "was:"). Also written:
    ``calibration_parameters.csv`` (prior vs posterior), ``calibration_agreement.csv``
    (before / after per target), ``calibration_misfits.csv`` and ``calibration_summary.txt``.

    Returns the written files.
    """
    src = data_dir() if source_dir is None else Path(source_dir)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    space = load_space(result.space_path or None)
    if space.names != result.names:
        raise ValueError(f"the result's parameters {list(result.names)} are not those of "
                         f"{result.space_path}")
    tables = {}
    for f in sorted(src.glob("*.csv")):
        if f.name == "states.csv":   # clinical procedures, not parameters: a folder without
            continue                 # one uses the packaged states (segment.core.states)
        tables[f.name] = _read_rows(f)
    tname = Path(result.targets.path).name
    bases = "/".join(sorted(set(result.targets.sd_basis)))
    note_head = (f"calibrated (MAP) against {tname} ({len(result.targets)} targets as listed "
                 f"there, SDs {bases}) by `{command}`")

    def setcell(fname, match, col, value, pname):
        header, rows = tables[fname]
        ci, si = header.index(col), header.index("source")
        hit = False
        for row in rows:
            if match(header, row):
                row[ci] = f"{value:.{VALUE_DIGITS}g}"
                setting = f"{pname} = {result.x[space.names.index(pname)]:.6g}"
                if not row[si].startswith("calibrated"):
                    row[si] = f"{note_head}; {setting}; was: {row[si]}"
                elif setting not in row[si]:
                    row[si] = row[si].replace("; was:", f"; {setting}; was:", 1)
                hit = True
        if not hit:
            raise ValueError(f"{fname}: no row for parameter {pname!r}")

    for j, pname in enumerate(space.names):
        x, nominal = result.x[j], space.nominal[j]
        if x == nominal:
            continue
        for kind, key in space.targets[j]:
            field = space.fields[j]
            if kind == "disc":
                fname, col = _DISC_ROWS[key]
                header, rows = tables[fname]
                ki = header.index(col)
                for row in rows:
                    if row[header.index("dof")] == key:
                        old = float(row[ki])
                        setcell(fname, lambda h, r, k=key, o=row: r is o, col, old * x, pname)
            elif kind == "ligament":
                header, rows = tables["ligaments.csv"]
                row = next(r for r in rows if r[header.index("name")] == key)
                if field == "l0_mm":
                    setcell("ligaments.csv", lambda h, r, o=row: r is o, "l0_mm", x, pname)
                else:
                    old = float(row[header.index("F_max_N")])
                    setcell("ligaments.csv", lambda h, r, o=row: r is o, "F_max_N", old * x,
                            pname)
            else:
                for col in _FACET_COLUMNS[field]:
                    setcell("facets.csv", lambda h, r, k=key: r[h.index("side")] == k, col, x,
                            pname)
    written = []
    for fname, (header, rows) in tables.items():
        path = out / fname
        with open(path, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(header)
            w.writerows(rows)
        written.append(path)
    for name, frame in (("calibration_parameters.csv", result.parameters()),
                        ("calibration_agreement.csv", result.agreement()),
                        ("calibration_misfits.csv", result.misfits)):
        frame.to_csv(out / name, index=False, float_format="%.6g", lineterminator="\n")
        written.append(out / name)
    (out / "calibration_summary.txt").write_text(
        f"generated by `{command}`; do not edit\n" + _stable_summary(result) + "\n",
        encoding="utf-8")
    written.append(out / "calibration_summary.txt")
    return written


def _stable_summary(result: CalibrationResult) -> str:
    """The summary without wall times (so a regenerated folder compares equal)."""
    text = result.summary()
    _, _, rest = text.partition("\n")
    return f"calibration: {result.message}\n{rest}"
