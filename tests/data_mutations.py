"""Malformed copies of the data tables, each with its expected outcome (issue 14).

Every :class:`Mutation` breaks (or harmlessly reformats) one thing in a private copy of the
packaged tables. ``expect`` is ``"reject"`` (loading must raise a ``ValueError`` naming the file,
the field and, for a cell, its file line) or ``"accept"`` (loading must give exactly the model
of the unmodified tables). Used by ``tests/test_data_mutations.py`` and by
``scripts/reliability_census.py`` (which counts the outcomes on any version of the code).
"""

from __future__ import annotations

import csv
import io
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

TABLES = ("inertia.csv", "disc_translational.csv", "disc_rotational.csv", "ligaments.csv",
          "facet_contact_law.csv", "facets.csv", "load_cases.csv")


@dataclass(frozen=True)
class Mutation:
    """One malformed (or harmlessly reformatted) table.

    ``fields``: the names an error message must contain (besides the file name); ``line``: the
    file line (1 = header) an error message must name, or None for file-level errors.
    """

    id: str
    file: str
    expect: str                       # "reject" or "accept"
    apply: Callable[[Path], None] = field(repr=False)
    fields: tuple[str, ...] = ()
    line: int | None = None
    cls: str = "data"                 # issue class: "data" (accepted wrong?) or "error"


def copy_tables(src: Path, dst: Path) -> Path:
    dst.mkdir(parents=True, exist_ok=True)
    for name in TABLES:
        shutil.copy(src / name, dst / name)
    return dst


def _rows(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def _write_rows(path: Path, rows, *, delimiter=",", quoting=csv.QUOTE_MINIMAL, encoding="utf-8",
                lineterminator="\n"):
    buf = io.StringIO()
    w = csv.writer(buf, delimiter=delimiter, quoting=quoting, lineterminator=lineterminator)
    w.writerows(rows)
    path.write_bytes(buf.getvalue().encode(encoding))


def set_cell(file: str, row: int, column: str, raw: str):
    """Replace the text of one cell (``row`` 1 = first data row) by ``raw`` (written as is,
    quoted by the CSV writer only when it must be)."""
    def apply(folder: Path):
        rows = _rows(folder / file)
        rows[row][rows[0].index(column)] = raw
        _write_rows(folder / file, rows)
    return apply


def set_cells(file: str, changes):
    def apply(folder: Path):
        for row, column, raw in changes:
            set_cell(file, row, column, raw)(folder)
    return apply


def raw_cell(file: str, row: int, column: str, text: str):
    """Write the cell's text verbatim into the line (e.g. with quotes), no CSV quoting."""
    def apply(folder: Path):
        rows = _rows(folder / file)
        rows[row][rows[0].index(column)] = "\x00CELL\x00"
        _write_rows(folder / file, rows)
        p = folder / file
        p.write_text(p.read_text(encoding="utf-8").replace("\x00CELL\x00", text),
                     encoding="utf-8")
    return apply


def transform_text(file: str, fn: Callable[[str], str], encoding="utf-8"):
    def apply(folder: Path):
        p = folder / file
        p.write_bytes(fn(p.read_text(encoding="utf-8")).encode(encoding))
    return apply


def transform_bytes(file: str, fn: Callable[[bytes], bytes]):
    def apply(folder: Path):
        p = folder / file
        p.write_bytes(fn(p.read_bytes()))
    return apply


def rewrite(file: str, **kw):
    def apply(folder: Path):
        _write_rows(folder / file, _rows(folder / file), **kw)
    return apply


def edit_rows(file: str, fn):
    def apply(folder: Path):
        _write_rows(folder / file, fn(_rows(folder / file)))
    return apply


def make_folder(file: str):
    def apply(folder: Path):
        (folder / file).unlink()
        (folder / file).mkdir()
    return apply


def remove(file: str):
    def apply(folder: Path):
        (folder / file).unlink()
    return apply


def _swap_columns(rows):
    return [[r[1], r[0], *r[2:]] for r in rows]


def _add_column(rows):
    return [[*r, "note" if i == 0 else "x"] for i, r in enumerate(rows)]


def _drop_column(column):
    def fn(rows):
        j = rows[0].index(column)
        return [[c for k, c in enumerate(r) if k != j] for r in rows]
    return fn


def _duplicate_row(k):
    return lambda rows: [*rows[: k + 1], rows[k], *rows[k + 1:]]


def _drop_row(k):
    return lambda rows: [r for i, r in enumerate(rows) if i != k]


def _extra_field(k):
    return lambda rows: [r if i != k else [*r, "surplus"] for i, r in enumerate(rows)]


def _header_only(rows):
    return rows[:1]


def _scale_cell(file, row, column, factor):
    def apply(folder: Path):
        rows = _rows(folder / file)
        j = rows[0].index(column)
        rows[row][j] = repr(float(rows[row][j]) * factor)
        _write_rows(folder / file, rows)
    return apply


def _blank_lines(text: str) -> str:
    lines = text.splitlines()
    return "\n".join([lines[0], "", *lines[1:], "", ""]) + "\n"


def _latin1_source(text: str) -> str:
    return text.replace("Kecskemethy", "Kecskeméthy")


L, D, R, C, F, IN, LC = ("ligaments.csv", "disc_translational.csv", "disc_rotational.csv",
                        "facet_contact_law.csv", "facets.csv", "inertia.csv", "load_cases.csv")


def _m(id, file, expect, apply, fields=(), line=None, cls="data"):
    return Mutation(id, file, expect, apply, tuple(fields), line, cls)


MUTATIONS: tuple[Mutation, ...] = (
    # ------------------------------------------------------- number parsing
    _m("underscore", L, "reject", set_cell(L, 1, "eps_max", "0_58"), ["eps_max"], 2),
    _m("arabic-indic digits", L, "reject", set_cell(L, 1, "eps_max", "٠.٥٨"),
       ["eps_max"], 2),
    _m("full-width digits", L, "reject", set_cell(L, 1, "l0_mm", "１８"), ["l0_mm"], 2),
    _m("decimal comma", L, "reject", set_cell(L, 1, "eps_max", "0,58"), ["eps_max"], 2),
    _m("unit in cell", L, "reject", set_cell(L, 1, "l0_mm", "18 mm"), ["l0_mm"], 2),
    _m("thousands space", D, "reject", set_cell(D, 1, "b_Ns_per_m", "1 000"),
       ["b_Ns_per_m"], 2),
    _m("hex", L, "reject", set_cell(L, 1, "l0_mm", "0x12"), ["l0_mm"], 2),
    _m("nan", LC, "reject", set_cell(LC, 7, "Mx_Nm", "nan"), ["Mx_Nm"], 8, cls="error"),
    _m("inf", L, "reject", set_cell(L, 2, "F_max_N", "inf"), ["F_max_N"], 3),
    _m("overflow 1e400", L, "reject", set_cell(L, 1, "l0_mm", "1e400"), ["l0_mm"], 2),
    _m("empty cell", L, "reject", set_cell(L, 3, "l0_mm", ""), ["l0_mm"], 4),
    _m("exponent notation", L, "accept", set_cell(L, 1, "l0_mm", "1.8e1")),
    _m("surrounding spaces", L, "accept", raw_cell(L, 1, "l0_mm", "  18  ")),
    _m("quoted number", L, "accept", raw_cell(L, 1, "l0_mm", '"18"')),
    _m("quoted number with spaces", L, "accept", raw_cell(L, 1, "l0_mm", '" 18 "')),
    _m("leading plus", L, "accept", set_cell(L, 1, "l0_mm", "+18")),
    _m("trailing point", L, "accept", set_cell(L, 1, "l0_mm", "18.")),
    _m("all cells quoted", L, "accept", rewrite(L, quoting=csv.QUOTE_ALL)),
    # ------------------------------------------------------- implausible values (wrong unit, typo)
    _m("l0 in metres", L, "reject", set_cell(L, 1, "l0_mm", "0.018"), ["l0_mm"], 2),
    _m("l0 x100", L, "reject", set_cell(L, 4, "l0_mm", "1600"), ["l0_mm"], 5),
    _m("eps_max in percent", L, "reject", set_cell(L, 1, "eps_max", "58"), ["eps_max"], 2),
    _m("F_max in mN", L, "reject", _scale_cell(L, 2, "F_max_N", 1000.0), ["F_max_N"], 3),
    _m("insertion 1e308", L, "reject", set_cell(L, 3, "c5_x_mm", "1e308"), ["c5_x_mm"], 4),
    _m("insertion in metres", L, "reject", set_cell(L, 4, "c6_x_mm", "-0.0473"),
       ["l0_mm"], 5),
    _m("ligament damping x1000", L, "reject", _scale_cell(L, 1, "b_Ns_per_m", 1000.0),
       ["b_Ns_per_m"], 2),
    _m("curve strains unsorted", L, "reject", set_cell(L, 1, "A_eps_rel", "0.9"),
       ["A_eps_rel"], 2),
    _m("curve force above 1", L, "reject", set_cell(L, 1, "B_F_rel", "1.5"), ["B_F_rel"], 2),
    _m("CL-left on the right", L, "reject",
       set_cells(L, [(5, "c5_y_mm", "-20.3"), (5, "c6_y_mm", "-20.0")]), ["c5_y_mm"], 6),
    _m("disc stiffness x1000", D, "reject", _scale_cell(D, 1, "k_N_per_mm", 1000.0),
       ["k_N_per_mm"], 2),
    _m("disc stiffness 1e-300", D, "reject", set_cell(D, 1, "k_N_per_mm", "1e-300"),
       ["k_N_per_mm"], 2),
    _m("disc stiffness zero", D, "reject", set_cell(D, 2, "k_N_per_mm", "0"), ["k_N_per_mm"], 3),
    _m("disc damping negative", D, "reject", set_cell(D, 1, "b_Ns_per_m", "-1"),
       ["b_Ns_per_m"], 2),
    _m("rot stiffness in N mm/deg", R, "reject", set_cell(R, 3, "k_Nm_per_deg", "210"),
       ["k_Nm_per_deg"], 4),
    _m("rot stiffness per rad typo", R, "reject", set_cell(R, 3, "k_Nm_per_deg", "1e-6"),
       ["k_Nm_per_deg"], 4),
    _m("dof contradicts name", D, "reject", set_cell(D, 1, "dof", "y"), ["dof"], 2),
    _m("side contradicts name", R, "reject", set_cell(R, 1, "side", "-"), ["side"], 2),
    _m("k_quadratic in N/m^2", C, "reject",
       set_cells(C, [(1, "k_quadratic_N_per_mm2", "2e9"), (1, "F_transition_N", "1.8e8")]),
       ["k_quadratic_N_per_mm2"], 2),
    _m("u_transition 1e200", C, "reject", set_cell(C, 1, "u_transition_mm", "1e200"),
       ["u_transition_mm"], 2),
    _m("u_transition 1e100 consistent", C, "reject",
       set_cells(C, [(1, "u_transition_mm", "1e100"), (1, "k_quadratic_N_per_mm2", "1.8e-198")]),
       ["u_transition_mm"], 2),
    _m("F_transition inconsistent", C, "reject", set_cell(C, 1, "F_transition_N", "200"),
       ["F_transition_N"], 2),
    _m("k_linear x1000", C, "reject", _scale_cell(C, 1, "k_linear_N_per_mm", 1000.0),
       ["k_linear_N_per_mm"], 2),
    _m("two law rows", C, "reject", edit_rows(C, _duplicate_row(1)), []),
    _m("facet radius 1e6", F, "reject", set_cell(F, 1, "radius_c6_mm", "1e6"),
       ["radius_c6_mm"], 2),
    _m("facet radius in metres", F, "reject", set_cell(F, 2, "radius_c5_mm", "0.005"),
       ["radius_c5_mm"], 3),
    _m("facet gap 1e308", F, "reject", set_cell(F, 1, "gap_mm", "1e308"), ["gap_mm"], 2),
    _m("facet centre 1e308", F, "reject", set_cell(F, 1, "center_x_mm", "1e308"),
       ["center_x_mm"], 2),
    _m("facet centre -1e308", F, "reject", set_cell(F, 2, "center_z_mm", "-1e308"),
       ["center_z_mm"], 3),
    _m("inclination 100", F, "reject", set_cell(F, 1, "inclination_deg", "100"),
       ["inclination_deg"], 2),
    _m("inclination in rad", F, "reject", set_cell(F, 1, "inclination_deg", "0.746"),
       ["inclination_deg"], 2),
    _m("blend negative", F, "reject", set_cell(F, 1, "blend_C", "-1"), ["blend_C"], 2),
    _m("blend 1e300", F, "reject", set_cell(F, 1, "blend_C", "1e300"), ["blend_C"], 2),
    _m("left facet at negative y", F, "reject", set_cell(F, 1, "center_y_mm", "-20.15"),
       ["center_y_mm"], 2),
    _m("mass in grams", IN, "reject", set_cell(IN, 1, "mass_kg", "230"), ["mass_kg"], 2),
    _m("inertia in kg mm^2", IN, "reject", set_cell(IN, 1, "Ixx_kg_cm2", "230"),
       ["Ixx_kg_cm2"], 2),
    _m("reference offset 1e308", IN, "reject", set_cell(IN, 1, "sz_mm", "1e308"), ["sz_mm"], 2),
    _m("reference offset in metres", IN, "reject", set_cell(IN, 1, "sz_mm", "0.0174"),
       ["sz_mm"], 2),
    _m("reference tilt 1e5 deg", IN, "reject", set_cell(IN, 1, "phi_y_deg", "1e5"),
       ["phi_y_deg"], 2),
    _m("load in N mm", LC, "reject", set_cell(LC, 7, "My_Nm", "1800"), ["My_Nm"], 8),
    _m("load 1e308", LC, "reject", set_cell(LC, 1, "Fx_N", "1e308"), ["Fx_N"], 2),
    _m("load with unit", LC, "reject", set_cell(LC, 1, "Fx_N", "20 N"), ["Fx_N"], 2),
    # ------------------------------------------------------- keys and structure
    _m("unknown ligament", L, "reject", set_cell(L, 1, "name", "ALLL"), ["name"], 2),
    _m("duplicate ligament", L, "reject", set_cell(L, 2, "name", "ALL"), ["name"], 3),
    _m("missing ligament row", L, "reject", edit_rows(L, _drop_row(6)), ["name"]),
    _m("unknown body", IN, "reject", set_cell(IN, 1, "body", "C4"), ["body"], 2),
    _m("duplicate facet side", F, "reject", set_cell(F, 2, "side", "left"), ["side"], 3),
    _m("duplicate load case", LC, "reject", set_cell(LC, 2, "name", "AS"), ["name"], 3),
    _m("empty load name", LC, "reject", set_cell(LC, 2, "name", ""), ["name"], 3),
    _m("empty source", D, "reject", set_cell(D, 2, "source", ""), ["source"], 3),
    _m("missing column", L, "reject", edit_rows(L, _drop_column("l0_mm")), ["l0_mm"],
       cls="error"),
    _m("extra field in a row", L, "reject", edit_rows(L, _extra_field(2)), [], 3, cls="error"),
    _m("header only", D, "reject", edit_rows(D, _header_only), [], cls="error"),
    _m("empty file", D, "reject", transform_text(D, lambda t: ""), [], cls="error"),
    _m("two errors in one file", L, "reject",
       set_cells(L, [(1, "l0_mm", "0_18"), (3, "F_max_N", "x")]), ["l0_mm", "F_max_N"], 2,
       cls="error"),
    # ------------------------------------------------------- encoding and dialect
    _m("UTF-8 BOM", L, "accept", transform_bytes(L, lambda b: b"\xef\xbb\xbf" + b),
       cls="error"),
    _m("BOM on every table", IN, "accept",
       lambda folder: [transform_bytes(t, lambda b: b"\xef\xbb\xbf" + b)(folder)
                       for t in TABLES], cls="error"),
    _m("CRLF line ends", L, "accept", rewrite(L, lineterminator="\r\n")),
    _m("blank lines", LC, "accept", transform_text(LC, _blank_lines)),
    _m("columns reordered", L, "accept", edit_rows(L, _swap_columns)),
    _m("extra column", L, "accept", edit_rows(L, _add_column)),
    _m("semicolon separator", L, "reject", rewrite(L, delimiter=";"), ["';'"], cls="error"),
    _m("tab separator", F, "reject", rewrite(F, delimiter="\t"), ["tab"], cls="error"),
    _m("latin-1 text", IN, "reject", transform_text(IN, _latin1_source, encoding="latin-1"), [],
       cls="error"),
    _m("UTF-16 text", LC, "reject", transform_text(LC, lambda t: t, encoding="utf-16"), [],
       cls="error"),
    _m("table is a folder", F, "reject", make_folder(F), [], cls="error"),
    _m("table missing", C, "reject", remove(C), [], cls="error"),
)


def fingerprint(params) -> np.ndarray:
    """Every number of a :class:`segment.core.io.ModelParameters` as one flat array."""
    parts = [params.reference.s0, params.reference.R0.ravel(), params.disc.k_positive,
             params.disc.k_negative, params.disc.damping]
    for lig in params.ligaments:
        parts += [lig.insertion_c5, lig.insertion_c6, [lig.l0, lig.damping],
                  lig.curve.strain, lig.curve.force]
    for f in params.facets:
        for d in (f.disc_c6, f.disc_c5):
            parts += [d.center, d.normal, [d.radius]]
        parts.append([f.blend])
    parts += [params.contact_law.as_array(), [params.contact_law.damping]]
    for name in sorted(params.load_cases):
        parts.append(params.load_cases[name].as_array())
    for body in sorted(params.inertia):
        b = params.inertia[body]
        parts += [[b.mass, b.cog_x], b.inertia]
    return np.concatenate([np.ravel(np.asarray(p, dtype=float)) for p in parts])


def running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0
