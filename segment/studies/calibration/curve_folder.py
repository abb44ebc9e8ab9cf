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
  ``population``) and modes, the form and the sha256 of its files, the point SD, the command;
* ``curve_calibration_space.csv``: the form's parameter space as used;
* ``curve_calibration_parameters.csv`` (prior vs posterior, identifiability) and
  ``curve_calibration_points.csv`` (observed, published and calibrated rotation per point);
* ``curve_calibration_summary.txt``.
"""

from __future__ import annotations

import csv
import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from segment.core.io import ROTATION_DOFS, data_dir
from segment.elements.disc import DOF_NAMES
from segment.studies.calibration.curve_fit import population_table
from segment.studies.calibration.curve_result import CurveCalibration
from segment.studies.calibration.folder import VALUE_DIGITS, _read_rows
from segment.studies.forms import load_form

__all__ = ["INPUTS_FILE", "POPULATION_FILE", "calibrated_model", "write_curve_calibration",
           "write_population"]

INPUTS_FILE = "curve_calibration_inputs.csv"
POPULATION_FILE = "population.csv"
_NM_PER_DEG = 1000.0 * 180.0 / math.pi        # N mm/rad per N m/deg
_COEFF = {"x": ("k_x+", "k_x-"), "y": ("k_y+", "k_y-"), "z": ("k_z+", "k_z-"),
          "phi_x": ("k_phix+", "k_phix-"), "phi_y": ("k_phiy+", "k_phiy-"),
          "phi_z": ("k_phiz+", "k_phiz-")}


def calibrated_model(fit: CurveCalibration, *, form=None, model=None):
    """The Segment of the fit's MAP: the form's law on ``model`` (default the published
    model), the parameters applied."""
    import segment

    form = load_form(fit.form if form is None else form)
    base = segment.c5c6() if model is None else model
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
    import segment

    if not fit.success:
        raise ValueError(f"the calibration of {fit.targets.label} did not converge "
                         f"({fit.message}): nothing written")
    form = load_form(fit.form if form is None else form)
    src = data_dir() if source_dir is None else Path(source_dir)
    base = segment.c5c6(data_dir=src, strict=strict)
    cal = form.space.apply(form.model(base), fit.x)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tables = {f.name: _read_rows(f) for f in sorted(src.glob("*.csv"))}
    curves = Path(fit.targets.curves.path).name
    note = (f"calibrated (MAP) to the {fit.targets.label} curves of {curves} (sha256 "
            f"{fit.targets.curves.sha256[:12]}), form {form.name}, by `{command}`")

    def setcell(fname, key_col, key, col, value):
        header, rows = tables[fname]
        ki, ci, si = header.index(key_col), header.index(col), header.index("source")
        for row in rows:
            if row[ki] == key:
                row[ci] = _g(value)
                if not row[si].startswith("calibrated"):
                    row[si] = f"{note}; was: {row[si]}"
                return
        raise ValueError(f"{fname}: no row {key!r}")

    for d, dof in enumerate(DOF_NAMES):
        fname, col, unit = (("disc_translational.csv", "k_N_per_mm", 1.0) if d < 3 else
                            ("disc_rotational.csv", "k_Nm_per_deg", _NM_PER_DEG))
        for c, new, old in ((0, cal.disc.k_positive[d], base.disc.k_positive[d]),
                            (1, cal.disc.k_negative[d], base.disc.k_negative[d])):
            if new != old:
                setcell(fname, "coefficient", _COEFF[dof][c], col, new / unit)
    base_ligs = {x.name: x for x in base.ligaments}
    for x in cal.ligaments:
        b = base_ligs[x.name]
        if x.l0 != b.l0:
            setcell("ligaments.csv", "name", x.name, "l0_mm", x.l0)
        if x.curve.force[2] != b.curve.force[2]:
            setcell("ligaments.csv", "name", x.name, "F_max_N", x.curve.force[2])
    ref = base.reference
    base_fac = {f.side: f.geometry(ref) for f in base.facets}
    for f in cal.facets:
        g, b = f.geometry(ref), base_fac[f.side]
        for key, col in (("gap", "gap_mm"), ("inclination_deg", "inclination_deg"),
                         ("radius_c6", "radius_c6_mm"), ("radius_c5", "radius_c5_mm"),
                         ("blend", "blend_C")):
            if not np.isclose(g[key], b[key], rtol=1e-12, atol=1e-12):
                setcell("facets.csv", "side", f.side, col, float(g[key]))
    law_rows = _disc_law_rows(cal, base, note, tables.get("disc_law.csv"))
    if law_rows is not None:
        tables["disc_law.csv"] = law_rows
    written = []
    for fname, (header, rows) in tables.items():
        path = out / fname
        with open(path, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(header)
            w.writerows(rows)
        written.append(path)
    shutil.copyfile(form.space.path, out / "curve_calibration_space.csv")
    written.append(out / "curve_calibration_space.csv")
    inputs = [("curves", curves), ("curves_sha256", fit.targets.curves.sha256),
              ("fitted", fit.targets.label), ("modes", " ".join(fit.targets.mode_set)),
              ("points", str(fit.n_points)),
              ("point_sd_deg", "specimens' SD per level" if fit.targets.sd_basis != "assumed"
               else _g(float(fit.targets.sd[0]))),
              ("form", form.name), ("form_description", form.description),
              *((f"form_file_sha256 {k}", v) for k, v in form.checksums().items()),
              ("starts", str(1 + fit.extra.get("n_prior_starts", 0))),
              ("command", command)]
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


def _disc_law_rows(cal, base, note, existing):
    """``disc_law.csv`` of the calibrated disc (None when every rotation is on eq. (1) and the
    source folder has no such table)."""
    from segment.core.io import DISC_LAW_COLUMNS

    if cal.disc.is_linear and existing is None:
        return None
    header = [*DISC_LAW_COLUMNS, "source"]
    old = {}
    if existing is not None:
        h, rows = existing
        old = {r[h.index("dof")]: r[h.index("source")] for r in rows}
    rows = []
    deg = 180.0 / math.pi
    for dof in ROTATION_DOFS:
        d = DOF_NAMES.index(dof)
        law, lp = cal.disc.law[d], cal.disc.law_parameters[d]
        cells = {c: "" for c in DISC_LAW_COLUMNS[2:]}
        if law == "neutral-zone":
            cells.update(zone_pos_deg=_g(lp[0] * deg), zone_neg_deg=_g(lp[1] * deg),
                         zone_ratio=_g(lp[2]))
        elif law == "fw35":
            cells.update(angle_scale_pos_deg=_g(lp[0] * deg), angle_scale_neg_deg=_g(lp[1] * deg))
        changed = law != base.disc.law[d] or not np.array_equal(lp, base.disc.law_parameters[d])
        src = old.get(dof, "eq. (1) of DETC2000/MECH-6821 (the published law)")
        if changed:
            src = f"{note}; law {law}; was: {src}"
        rows.append([dof, law, *cells.values(), src])
    return header, rows


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


def read_population(path) -> pd.DataFrame:
    """``population.csv`` as written by :func:`write_population`."""
    return pd.read_csv(path)
