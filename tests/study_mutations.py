"""Malformed copies of the study inputs, each with its expected outcome (issue 21).

The model tables have :mod:`data_mutations`; these are the files the studies read besides
them: the parameter space (``parameter_space.csv``), the ligament strips
(``ligament_strips.csv``, read with the model) and the calibration targets
(``calibration_targets.csv``). Every :class:`data_mutations.Mutation` here breaks (or
harmlessly reformats) one thing in a private copy of the packaged file; ``expect`` is
``"reject"`` (loading raises a ``ValueError`` naming the file, the field and, for a cell, its
file line) or ``"accept"`` (loading gives what the unmodified file gives).

Used by ``tests/test_study_inputs.py`` and ``scripts/reliability_census.py`` (which counts the
outcomes on any version of the code).
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import numpy as np
from data_mutations import (
    TABLES,
    Mutation,
    edit_rows,
    raw_cell,
    rewrite,
    set_cell,
    set_cells,
    transform_bytes,
)

SPACE, STRIPS, TARGETS = "parameter_space.csv", "ligament_strips.csv", "calibration_targets.csv"
STUDY_FILES = (SPACE, STRIPS, TARGETS)


def copy_inputs(src: Path, dst: Path) -> Path:
    """The model tables and the three study inputs of ``src`` in a new folder ``dst``."""
    dst.mkdir(parents=True, exist_ok=True)
    for name in (*TABLES, *STUDY_FILES):
        shutil.copy(src / name, dst / name)
    return dst


def _m(id, file, expect, apply, fields=(), line=None):
    return Mutation(id, file, expect, apply, tuple(fields), line, "study")


def _swap_first_columns(rows):
    return [[r[1], r[0], *r[2:]] for r in rows]


# parameter_space.csv rows (1 = first data row): 1 facet_gap, 2-3 facet inclinations (normal
# priors), 4 facet_radius, 5 facet_blend_C (lognormal), 6-10 rest lengths, 11-15 ligament
# stiffness, 16-21 disc stiffness
SPACE_MUTATIONS: tuple[Mutation, ...] = (
    _m("space: rest length bounds in metres", SPACE, "reject",
       set_cells(SPACE, [(6, "nominal", "0.018"), (6, "lower", "0.0175"),
                         (6, "upper", "0.0185")]), ["lower"], 7),
    _m("space: inclination bounds in radians", SPACE, "reject",
       set_cells(SPACE, [(2, "nominal", "0.7461"), (2, "lower", "0.5655"),
                         (2, "upper", "0.9425"), (2, "dist_mu", "0.7540"),
                         (2, "dist_sigma", "0.0942")]), ["lower"], 3),
    _m("space: unit m on l0_mm", SPACE, "reject", set_cell(SPACE, 8, "unit", "m"), ["unit"],
       9),
    _m("space: unit rad on inclination_deg", SPACE, "reject",
       set_cell(SPACE, 3, "unit", "rad"), ["unit"], 4),
    _m("space: unit mm on a stiffness factor", SPACE, "reject",
       set_cell(SPACE, 16, "unit", "mm"), ["unit"], 17),
    _m("space: normal prior mean 1000", SPACE, "reject", set_cell(SPACE, 2, "dist_mu", "1000"),
       ["dist_mu"], 3),
    _m("space: lognormal mu typed as the median", SPACE, "reject",
       set_cell(SPACE, 5, "dist_mu", "16.7"), ["dist_mu"], 6),
    _m("space: normal prior SD 1e6", SPACE, "reject", set_cell(SPACE, 3, "dist_sigma", "1e6"),
       ["dist_sigma"], 4),
    _m("space: stiffness factor in percent", SPACE, "reject",
       set_cells(SPACE, [(11, "nominal", "100"), (11, "lower", "80"), (11, "upper", "120")]),
       ["lower"], 12),
    _m("space: facet radius in metres", SPACE, "reject",
       set_cells(SPACE, [(4, "nominal", "0.005"), (4, "lower", "0.0049"),
                         (4, "upper", "0.0056")]), ["lower"], 5),
    _m("space: gap upper 1e308", SPACE, "reject", set_cell(SPACE, 1, "upper", "1e308"),
       ["upper"], 2),
    _m("space: blend_C upper 1e6", SPACE, "reject", set_cell(SPACE, 5, "upper", "1e6"),
       ["upper"], 6),
    _m("space: disc factor upper 1e300", SPACE, "reject", set_cell(SPACE, 20, "upper", "1e300"),
       ["upper"], 21),
    _m("space: lower above upper", SPACE, "reject",
       set_cells(SPACE, [(7, "lower", "17.5"), (7, "upper", "16.5")]), ["lower"], 8),
    _m("space: nominal outside bounds", SPACE, "reject", set_cell(SPACE, 9, "nominal", "20"),
       ["nominal"], 10),
    _m("space: unknown distribution", SPACE, "reject",
       set_cell(SPACE, 1, "distribution", "beta"), ["distribution"], 2),
    _m("space: empty source", SPACE, "reject", set_cell(SPACE, 4, "source", ""), ["source"], 5),
    _m("space: quoted number", SPACE, "accept", raw_cell(SPACE, 6, "lower", '"17.5"')),
    _m("space: all cells quoted", SPACE, "accept", rewrite(SPACE, quoting=csv.QUOTE_ALL)),
    _m("space: UTF-8 BOM", SPACE, "accept", transform_bytes(SPACE, lambda b: b"\xef\xbb\xbf" + b)),
    _m("space: CRLF line ends", SPACE, "accept", rewrite(SPACE, lineterminator="\r\n")),
    _m("space: columns reordered", SPACE, "accept", edit_rows(SPACE, _swap_first_columns)),
)

# ligament_strips.csv rows: 1 ALL, 2 PLL, 3 FL, 4 ISL, 5 CL-left, 6 CL-right
STRIPS_MUTATIONS: tuple[Mutation, ...] = (
    _m("strips: width in micrometres", STRIPS, "reject", set_cell(STRIPS, 5, "width_mm", "11200"),
       ["width_mm"], 6),
    _m("strips: width 1e308", STRIPS, "reject", set_cell(STRIPS, 1, "width_mm", "1e308"),
       ["width_mm"], 2),
    _m("strips: 1e300 strips", STRIPS, "reject", set_cell(STRIPS, 2, "strips", "1e300"),
       ["strips"], 3),
    _m("strips: 100000 strips", STRIPS, "reject", set_cell(STRIPS, 3, "strips", "100000"),
       ["strips"], 4),
    _m("strips: axis 1e308", STRIPS, "reject",
       set_cells(STRIPS, [(4, "axis_x", "1e308"), (4, "axis_y", "1e308")]), ["axis"], 5),
    _m("strips: zero strips", STRIPS, "reject", set_cell(STRIPS, 1, "strips", "0"), ["strips"],
       2),
    _m("strips: 2.5 strips", STRIPS, "reject", set_cell(STRIPS, 1, "strips", "2.5"),
       ["strips"], 2),
    _m("strips: negative width", STRIPS, "reject", set_cell(STRIPS, 4, "width_mm", "-1"),
       ["width_mm"], 5),
    _m("strips: quoted number", STRIPS, "accept", raw_cell(STRIPS, 1, "width_mm", '"7.5"')),
    _m("strips: UTF-8 BOM", STRIPS, "accept",
       transform_bytes(STRIPS, lambda b: b"\xef\xbb\xbf" + b)),
)

# calibration_targets.csv rows: 1-4 intact LB, FLX, EXT, AR (deg); 5-8 disc segment
# rotations; 9-13 disc segment translations (mm)
TARGETS_MUTATIONS: tuple[Mutation, ...] = (
    _m("targets: SD 1e-9", TARGETS, "reject", set_cell(TARGETS, 1, "SD", "1e-9"), ["SD"], 2),
    _m("targets: SD in percent", TARGETS, "reject", set_cell(TARGETS, 2, "SD", "30"), ["SD"], 3),
    _m("targets: SD 0.1 % of the value", TARGETS, "reject", set_cell(TARGETS, 9, "SD", "0.0003"),
       ["SD"], 10),
    _m("targets: rotation 1e6 deg", TARGETS, "reject", set_cell(TARGETS, 4, "value", "1e6"),
       ["value"], 5),
    _m("targets: translation in micrometres", TARGETS, "reject",
       set_cells(TARGETS, [(10, "value", "-400"), (10, "SD", "120")]), ["value"], 11),
    _m("targets: SD zero", TARGETS, "reject", set_cell(TARGETS, 3, "SD", "0"), ["SD"], 4),
    _m("targets: unknown case", TARGETS, "reject", set_cell(TARGETS, 1, "case", "XX"), ["case"],
       2),
    _m("targets: quoted number", TARGETS, "accept", raw_cell(TARGETS, 1, "SD", '"0.7941"')),
    _m("targets: CRLF line ends", TARGETS, "accept", rewrite(TARGETS, lineterminator="\r\n")),
)

STUDY_MUTATIONS = SPACE_MUTATIONS + STRIPS_MUTATIONS + TARGETS_MUTATIONS


def load_input(m: Mutation, folder: Path):
    """Load the mutated file of ``m`` as the package does (strict)."""
    import segment

    if m.file == SPACE:
        from segment.studies.space import ParameterSpace

        return ParameterSpace.from_csv(folder / SPACE)
    if m.file == TARGETS:
        from segment.studies.calibration import Targets

        return Targets.from_csv(folder / TARGETS)
    return segment.load_parameters(folder)


def input_fingerprint(obj) -> np.ndarray:
    """Every number of a loaded study input (space, targets or model parameters)."""
    if hasattr(obj, "lower") and hasattr(obj, "distributions"):        # ParameterSpace
        parts = [obj.nominal, obj.lower, obj.upper, np.nan_to_num(obj.mu, nan=-1.0),
                 np.nan_to_num(obj.sigma, nan=-1.0)]
    elif hasattr(obj, "sd"):                                           # Targets
        parts = [obj.values, obj.sd]
    else:                                                              # ModelParameters
        parts = []
        for lig in obj.ligaments:
            parts += [[lig.strips, lig.width], lig.width_axis]
    return np.concatenate([np.ravel(np.asarray(p, dtype=float)) for p in parts])


# ---------------------------------------------------------------- files read back
def tamper_parquet(src: Path, dst: Path, *, meta=None, raw_meta=None, drop=None, column=None):
    """A copy of a parquet file of ``SetsResult.to_parquet`` with its metadata edited
    (``meta(dict)``), replaced (``raw_meta`` bytes), a column dropped, or a column's rows
    edited (``column=(name, fn(list of rows))``)."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(str(src))
    md = dict(table.schema.metadata)
    if meta is not None:
        d = json.loads(md[b"segment"])
        meta(d)
        md[b"segment"] = json.dumps(d).encode()
    if raw_meta is not None:
        md[b"segment"] = raw_meta
    if drop is not None:
        table = table.drop_columns([drop])
    if column is not None:
        name, fn = column
        rows = fn(table.column(name).to_pylist())
        i = table.schema.get_field_index(name)
        table = table.set_column(i, name, pa.array(rows))
    table = table.replace_schema_metadata(md)
    pq.write_table(table, str(dst))
    return dst


def _nan_first(rows):
    rows[0] = [float("nan"), *rows[0][1:]]
    return rows


def _short(rows):
    return [r[:-1] for r in rows]


def _status99(rows):
    rows[0] = [99, *rows[0][1:]]
    return rows


def _nan_load(d):
    d["loads"][0][0] = float("nan")


PARQUET_TAMPERING = {
    "5 names for 21 parameter columns": dict(meta=lambda d: d.update(names=d["names"][:5])),
    "units of another length": dict(meta=lambda d: d.update(units=d["units"][:3])),
    "NaN in q, every entry converged": dict(column=("q", _nan_first)),
    "NaN in P": dict(column=("P", _nan_first)),
    "NaN load": dict(meta=_nan_load),
    "load names of another length": dict(
        meta=lambda d: d.update(load_names=d["load_names"][:1])),
    "missing key 'load_names'": dict(meta=lambda d: d.pop("load_names")),
    "missing key 'elapsed'": dict(meta=lambda d: d.pop("elapsed")),
    "metadata not JSON": dict(raw_meta=b"{not json"),
    "missing column 'q_unloaded'": dict(drop="q_unloaded"),
    "q rows too short": dict(column=("q", _short)),
    "facet_force rows too short": dict(column=("facet_force", _short)),
    "unknown status code 99": dict(column=("status", _status99)),
}
"""Tampered copies of a saved SetsResult (each must be refused, naming the file), by what
was changed; keyword arguments of :func:`tamper_parquet`."""


def soften(folder: Path, factor: float = 0.001) -> Path:
    """Multiply every disc stiffness and ligament force of a data folder by ``factor``: with
    0.001 no equilibrium converges (a model every study set fails for; the tables' plausible
    ranges refuse it unless ``strict=False``)."""
    for name, cols in (("disc_translational.csv", ("k_N_per_mm",)),
                       ("disc_rotational.csv", ("k_Nm_per_deg",)),
                       ("ligaments.csv", ("F_max_N",))):
        path = folder / name
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
        for col in cols:
            j = rows[0].index(col)
            for r in rows[1:]:
                r[j] = repr(float(r[j]) * factor)
        with open(path, "w", newline="", encoding="utf-8") as fh:
            csv.writer(fh, lineterminator="\n").writerows(rows)
    return folder
