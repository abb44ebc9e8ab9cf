"""Faulty inputs of issue 31 (the reviewer's examples): curve files, populations and pulse
tables, each built from the packaged data in a private folder.

Used by ``tests/test_input_checks.py`` and ``scripts/reliability_census.py`` (which counts
the outcomes on any version of the code: only the package's public paths of 0.2 are used
here).
"""

from __future__ import annotations

import csv
import math
import shutil
from pathlib import Path

CURVES = "nightingale2002_c5c6_female.csv"


def packaged_curves() -> Path:
    from segment.core.io import data_dir

    return data_dir() / "curves" / CURVES


def _rows(path: Path) -> tuple[list[str], list[dict]]:
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        return list(reader.fieldnames), list(reader)


def _write(path: Path, header, rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, header, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return path


def _each(edit):
    def make(header, rows):
        out = [dict(r) for r in rows]
        for r in out:
            edit(r)
        return header, out
    return make


def _negate(r):
    r["rotation_deg"] = repr(-float(r["rotation_deg"]))


def _radians(r):
    r["rotation_deg"] = repr(math.radians(float(r["rotation_deg"])))


def _nmm_as_nm(r):
    r["moment_Nm"] = repr(float(r["moment_Nm"]) * 1000.0)


def _origin_measured(r):
    if float(r["moment_Nm"]) == 0.0:
        r["ignore"] = "no"


def _one_cell(index, column, value):
    def make(header, rows):
        out = [dict(r) for r in rows]
        out[index][column] = value
        return header, out
    return make


def _only(*specimens):
    def make(header, rows):
        return header, [dict(r) for r in rows if r["specimen"] in specimens]
    return make


def _copied_specimen(header, rows):
    b03 = [dict(r) for r in rows if r["specimen"] == "B03"]
    return header, b03 + [dict(r, specimen="B99") for r in b03]


def _no_common_level(header, rows):
    b03 = [dict(r) for r in rows if r["specimen"] == "B03"]
    b04 = [dict(r, moment_Nm=repr(round(float(r["moment_Nm"]) + 0.05, 2))) for r in rows
           if r["specimen"] == "B04"]
    return header, b03 + b04


CURVE_FAULTS = {
    # name: (how the packaged file is changed, the line of the first faulty row or None,
    #        the column named)
    "every rotation negated": (_each(_negate), None, "rotation_deg"),
    "rotations in radians under rotation_deg": (_each(_radians), None, "rotation_deg"),
    "a rotation of 1e6 deg": (_one_cell(20, "rotation_deg", "1e6"), 22, "rotation_deg"),
    "N mm typed as N m": (_each(_nmm_as_nm), None, "moment_Nm"),
    "a moment of 1e308": (_one_cell(35, "moment_Nm", "1e308"), 37, "moment_Nm"),
    "origin points marked as measured": (_each(_origin_measured), 2, "ignore"),
}
"""Faults found when the file is read (the error names file, line and column)."""

CORRIDOR_FAULTS = {
    "one specimen": _only("B03"),
    "two identical specimens": _copied_specimen,
    "no common moment level": _no_common_level,
}
"""Files that read but have no corridor (the error names the file and the mode)."""


def curve_file(folder: Path, name: str) -> Path:
    """The packaged curves with fault ``name`` (of :data:`CURVE_FAULTS` or
    :data:`CORRIDOR_FAULTS`) in ``folder``."""
    make = CURVE_FAULTS[name][0] if name in CURVE_FAULTS else CORRIDOR_FAULTS[name]
    header, rows = make(*_rows(packaged_curves()))
    return _write(Path(folder) / (name.replace(" ", "_") + ".csv"), header, rows)


# ---------------------------------------------------------------- populations
FORM = "neutral-zone"


def curve_population(folder: Path, edit=None, *, name="population.csv") -> Path:
    """A ``population.csv`` as ``segment calibrate --curves --each`` writes it: three
    converged specimens of form neutral-zone near the form's nominal set (``edit(header,
    rows)`` changes it)."""
    from segment.studies.forms import load_form

    space = load_form(FORM).space
    header = ["specimen", "form", "converged", "n_points", "rms_deg", "max_deg",
              *space.names, "effective_parameters", "aic", "bic", "status"]
    rows = []
    for k, spec in enumerate(("B03", "B04", "B05")):
        row = {"specimen": spec, "form": FORM, "converged": "True", "n_points": "42",
               "rms_deg": "0.2", "max_deg": "0.5", "effective_parameters": "5", "aic": "1",
               "bic": "2", "status": "0"}
        for j, (p, hi) in enumerate(zip(space.names, space.upper, strict=True)):
            lo = float(space.lower[j])
            row[p] = repr(min(float(space.nominal[j]) + 0.05 * k * (float(hi) - lo), float(hi)))
        rows.append(row)
    if edit is not None:
        header, rows = edit(header, rows)
    return _write(Path(folder) / name, header, rows)


def _set(spec, column, value):
    def edit(header, rows):
        for r in rows:
            if r["specimen"] == spec:
                r[column] = value
        return header, rows
    return edit


def _repeat_row(header, rows):
    return header, [*rows, dict(rows[0])]


def _another_form(header, rows):
    from segment.studies.forms import load_form

    fw = load_form("fw35").space
    extra = [n for n in fw.names if n not in header]
    row = {**rows[0], "specimen": "B06", "form": "fw35"}
    for j, n in enumerate(fw.names):
        row[n] = repr(float(fw.nominal[j]))
    return header[:-4] + extra + header[-4:], [*rows, row]


POPULATION_CSV_FAULTS = {
    # name: (edit, line of the faulty row or None, column named or None)
    "a member with a 100 deg zone": (_set("B04", "zone_flexion", "100"), 3, "zone_flexion"),
    "a reference strain of -0.95": (_set("B04", "ref_strain_posterior", "-0.95"), 3,
                                    "ref_strain_posterior"),
    "converged = no counts": (_set("B04", "converged", "no"), None, None),
    "a repeated row": (_repeat_row, 5, "specimen"),
    "a member of another form": (_another_form, None, "form"),
    "a NaN parameter": (_set("B05", "zone_extension", "nan"), 4, "zone_extension"),
    "a word in a number cell": (_set("B05", "facet_gap", "small"), 4, "facet_gap"),
    "an empty population.csv": (lambda h, r: (h, []), None, None),
}
"""Faults of a ``population.csv`` read by ``Population.from_csv``."""


def virtual_population(folder: Path, members: int = 3) -> Path:
    """``members`` member folders of the committed virtual population (``member_NNN/``) and
    their ``population.csv`` rows in ``folder``, as ``segment calibrate --population``
    writes them."""
    import segment
    from segment.studies.forms import load_form
    from segment.studies.population_result import read_result, write_members

    folder = Path(folder)
    res = read_result()
    pop = res["population.csv"].head(members)
    from segment.core.io import data_dir

    form = load_form(data_dir() / "forms" / "population")   # a folder: found on any version
    base = segment.c5c6()
    fm = form.model(base)
    models = [form.space.apply(fm, p) for p in pop[list(form.space.names)].to_numpy(float)]
    write_members(models, base, folder, note="population member (census)",
                  limits=res["validity_limits.csv"])
    pop.to_csv(folder / "population.csv", index=False)
    return folder


def _drop_disc_law(folder):
    (folder / "member_002" / "disc_law.csv").unlink()


def _converged_no(folder):
    p = folder / "population.csv"
    header, rows = _rows(p)
    rows[1]["converged"] = "no"
    _write(p, header, rows)


def _foreign_folder(folder):
    """A data folder of another form (the packaged neutral-zone form on the published model)
    copied in."""
    import segment
    from segment.core.save import save_parameters
    from segment.studies.forms import load_form

    m = load_form(FORM).model(segment.c5c6())
    save_parameters(m, folder / "member_009", note="another form")


def _copy_member(folder):
    shutil.copytree(folder / "member_001", folder / "member_004")
    p = folder / "population.csv"
    header, rows = _rows(p)
    _write(p, header, [*rows, dict(rows[0], member="member_004")])


def _corrupt_member(folder):
    p = folder / "member_003" / "ligaments.csv"
    header, rows = _rows(p)
    rows[0]["l0_mm"] = "abc"
    _write(p, header, rows)


def _empty_population_csv(folder):
    (folder / "population.csv").write_text("", encoding="utf-8")


POPULATION_FOLDER_FAULTS = {
    # name: (edit of the folder, words the error must hold)
    "a member whose disc_law.csv was deleted": (_drop_disc_law, ["member_002", "disc_law"]),
    "converged = no with its folder present": (_converged_no, ["member_002", "converged"]),
    "a folder of another form joins": (_foreign_folder, ["member_009"]),
    "a member copied under another name": (_copy_member, ["member_004"]),
    "a corrupted member": (_corrupt_member, ["member_003", "ligaments.csv"]),
    "an empty population.csv": (_empty_population_csv, ["population.csv"]),
}
"""Faults of a population folder read by ``Population.from_folders``."""


# ---------------------------------------------------------------- pulses
def pulse_in_ms(folder: Path) -> Path:
    """Fritzkowski and Walczak's triangular pulse (8.5 g, 105 ms) with the times written in
    milliseconds under ``t_s``."""
    path = Path(folder) / "pulse_ms.csv"
    path.write_text("t_s,ax_g,source\n0,0,ms typed as s\n52.5,8.5,ms typed as s\n"
                    "105,0,ms typed as s\n", encoding="utf-8")
    return path
