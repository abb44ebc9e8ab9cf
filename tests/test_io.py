"""CSV parameter tables (segment.core.io): published numbers, validation errors, immutability.

Each corruption test copies the packaged tables into ``tmp_path``, breaks exactly one thing and
checks that :func:`segment.load_parameters` raises a ``ValueError`` whose message names the
file, the row (1 = first data row), the column and the offending value.
"""

import math
import re

import numpy as np
import pandas as pd
import pytest

import segment
from segment.core import io as sio

TABLES = ("inertia.csv", "disc_translational.csv", "disc_rotational.csv", "ligaments.csv",
          "facet_contact_law.csv", "facets.csv", "load_cases.csv", "ligament_strips.csv")
LIGAMENTS = ("ALL", "PLL", "FL", "ISL", "CL-left", "CL-right")
CASES = ("AS", "PS", "LS", "TNS", "CMP", "LB", "FLX", "EXT", "AR")

NMM_PER_NM = 1000.0
# 0.21 N m/deg (Table 2, flexion) in N mm/rad
FLEXION_K_NMM_PER_RAD = 0.21 * NMM_PER_NM * 180.0 / math.pi
# unit conversions are a product of a few exact factors: equal up to rounding
CONVERSION_RTOL = 1e-12

# a pose away from every kink (disc sign switch, ligament slack, facet onset) and a load
PROBE_Q = np.array([0.12, -0.05, 0.08, 0.01, 0.02, -0.015])


# ---------------------------------------------------------------- helpers


def read(folder, name) -> pd.DataFrame:
    return pd.read_csv(folder / name, dtype=str, keep_default_na=False)


def write(folder, name, df: pd.DataFrame):
    df.to_csv(folder / name, index=False)


def set_cell(folder, name, row, column, value):
    """Replace one cell; ``row`` counts from 1 = first data row."""
    df = read(folder, name)
    assert column in df.columns and 1 <= row <= len(df), "test set-up: no such cell"
    df.loc[row - 1, column] = value
    write(folder, name, df)


def load_error(folder) -> str:
    with pytest.raises(ValueError) as excinfo:
        segment.load_parameters(folder)
    return str(excinfo.value)


def assert_names(message, *, file, row, column, value):
    """The message names file, row, column (quoted) and the value text."""
    assert file in message, message
    assert re.search(rf"\brow {row}\b", message), message
    assert f"'{column}'" in message, message
    assert value in message, message


# ---------------------------------------------------------------- the packaged tables
def test_data_dir_holds_every_table():
    folder = sio.data_dir()
    for name in TABLES:
        assert (folder / name).is_file(), name


def test_default_tables_give_the_published_numbers():
    p = segment.load_parameters()
    # Table 2, translational [N/mm]
    assert p.disc.k_positive[0] == 62.0          # AS
    assert p.disc.k_negative[0] == 50.0          # PS
    assert p.disc.k_negative[2] == 492.0         # CMP
    # Table 2, rotational: N m/deg -> N mm/rad
    assert p.disc.k_positive[4] == pytest.approx(FLEXION_K_NMM_PER_RAD, rel=CONVERSION_RTOL)
    assert p.disc.k_negative[4] == pytest.approx(0.32 * NMM_PER_NM * 180 / math.pi,
                                                 rel=CONVERSION_RTOL)
    # damping: 1000 N s/m = 1 N s/mm; 1.5 N m s/rad = 1500 N mm s/rad
    np.testing.assert_allclose(p.disc.damping, [1.0] * 3 + [1500.0] * 3, rtol=CONVERSION_RTOL)


def test_default_ligaments_match_tables_3_and_4():
    ligs = segment.load_parameters().ligaments
    assert tuple(lig.name for lig in ligs) == LIGAMENTS
    assert segment.LIGAMENT_NAMES == LIGAMENTS
    all_ = ligs[0]
    # A = (0.24 eps_max, 0.11 F_max), B = (0.80 eps_max, 0.88 F_max), C = (0.58, 111 N)
    np.testing.assert_allclose(all_.curve.strain, [0.24 * 0.58, 0.80 * 0.58, 0.58],
                               rtol=CONVERSION_RTOL)
    np.testing.assert_allclose(all_.curve.force, [0.11 * 111, 0.88 * 111, 111.0],
                               rtol=CONVERSION_RTOL)
    assert all_.l0 == 18.0
    np.testing.assert_array_equal(all_.insertion_c5, [7.7, 0.0, 0.0])
    assert all_.damping == pytest.approx(0.3, rel=CONVERSION_RTOL)   # 300 N s/m in N s/mm
    cl_right = ligs[5]
    np.testing.assert_array_equal(cl_right.insertion_c6, [-12.9, -20.0, 7.2])


def test_default_reference_contact_facets_cases_inertia():
    p = segment.load_parameters()
    np.testing.assert_array_equal(p.reference.s0, [-2.8, 0.0, 17.4])
    assert p.reference.phi_y == pytest.approx(math.radians(-5.2), rel=CONVERSION_RTOL)
    law = p.contact_law
    assert (law.k_quadratic, law.u_transition, law.k_linear) == (2000.0, 0.3, 1200.0)
    assert law.force_at_transition == pytest.approx(180.0, rel=CONVERSION_RTOL)
    assert [f.side for f in p.facets] == ["left", "right"]
    assert all(f.disc_c6.radius == 5.0 and f.disc_c5.radius == 5.0 for f in p.facets)
    assert tuple(p.load_cases) == CASES
    np.testing.assert_array_equal(p.load_cases["AS"].force, [20.0, 0.0, 0.0])
    np.testing.assert_array_equal(p.load_cases["FLX"].moment, [0.0, 1800.0, 0.0])  # N mm
    c5 = p.inertia["C5"]
    assert c5.mass == 0.23
    np.testing.assert_allclose(c5.inertia, [230.0, 230.0, 450.0], rtol=CONVERSION_RTOL)
    assert [f.name for f in p.files] == list(TABLES)


READ_ONLY = {
    "disc.k_positive": lambda p: p.disc.k_positive,
    "disc.k_negative": lambda p: p.disc.k_negative,
    "disc.damping": lambda p: p.disc.damping,
    "ligament.insertion_c5": lambda p: p.ligaments[0].insertion_c5,
    "ligament.insertion_c6": lambda p: p.ligaments[3].insertion_c6,
    "ligament.curve.strain": lambda p: p.ligaments[1].curve.strain,
    "ligament.curve.force": lambda p: p.ligaments[2].curve.force,
    "facet.disc_c6.center": lambda p: p.facets[0].disc_c6.center,
    "facet.disc_c5.normal": lambda p: p.facets[1].disc_c5.normal,
    "reference.s0": lambda p: p.reference.s0,
    "reference.R0": lambda p: p.reference.R0,
    "load.force": lambda p: p.load_cases["AS"].force,
    "load.moment": lambda p: p.load_cases["FLX"].moment,
}


@pytest.mark.parametrize("getter", READ_ONLY.values(), ids=READ_ONLY.keys())
def test_loaded_arrays_are_read_only(getter):
    arr = getter(segment.load_parameters())
    assert isinstance(arr, np.ndarray)
    before = arr.copy()
    with pytest.raises(ValueError, match="read-only"):
        arr.flat[0] = 123.0
    np.testing.assert_array_equal(arr, before)


def test_inertia_array_is_read_only():
    arr = segment.load_parameters().inertia["C5"].inertia
    with pytest.raises(ValueError, match="read-only"):
        arr[0] = 123.0


def test_package_load_cases_mapping_is_read_only():
    with pytest.raises(TypeError):
        segment.LOAD_CASES["FLX"] = segment.LOAD_CASES["EXT"]


# ---------------------------------------------------------------- reading another folder
def test_rewritten_copy_loads_like_the_defaults(data_copy):
    """The pandas round trip used by the corruption tests changes nothing by itself."""
    for name in TABLES:
        write(data_copy, name, read(data_copy, name))
    load = segment.LOAD_CASES["FLX"]
    expected = segment.c5c6().residual(PROBE_Q, load)
    got = segment.c5c6(data_dir=data_copy).residual(PROBE_Q, load)
    np.testing.assert_array_equal(got, expected)
    p = segment.load_parameters(data_copy)
    assert p.files[0].parent == data_copy


def test_data_dir_argument_is_used(data_copy):
    """A valid edit in the copied folder shows up in load_parameters and c5c6."""
    set_cell(data_copy, "disc_translational.csv", 1, "k_N_per_mm", "124")   # k_x+ doubled
    set_cell(data_copy, "ligaments.csv", 1, "l0_mm", "19.5")
    p = segment.load_parameters(data_copy)
    assert p.disc.k_positive[0] == 124.0
    assert p.ligaments[0].l0 == 19.5
    as_load = segment.LOAD_CASES["AS"]
    default = segment.solve(segment.c5c6(ligaments=False, facets=False), as_load)
    stiffer = segment.solve(segment.c5c6(ligaments=False, facets=False, data_dir=data_copy),
                            as_load)
    assert stiffer.q[0] == pytest.approx(default.q[0] / 2, rel=CONVERSION_RTOL)


# ---------------------------------------------------------------- one bad cell
BAD_CELLS = [
    # file, row, column, written value, how the value appears in the message
    ("ligaments.csv", 5, "l0_mm", "-6", "got -6"),
    ("ligaments.csv", 6, "eps_max", "0", "got 0"),
    ("ligaments.csv", 4, "F_max_N", "-34", "got -34"),
    ("facets.csv", 1, "radius_c6_mm", "0", "got 0"),
    ("facets.csv", 2, "radius_c5_mm", "-5", "got -5"),
    ("facets.csv", 2, "gap_mm", "-0.1", "got -0.1"),
    ("disc_translational.csv", 3, "k_N_per_mm", "abc", "'abc'"),
    ("disc_translational.csv", 6, "k_N_per_mm", "0", "got 0"),
    ("disc_rotational.csv", 4, "k_Nm_per_deg", "-0.32", "got -0.32"),
    ("facet_contact_law.csv", 1, "k_linear_N_per_mm", "-1200", "got -1200"),
    ("inertia.csv", 2, "mass_kg", "0", "got 0"),
    # empty cells
    ("ligaments.csv", 2, "F_max_N", "", "got ''"),
    ("facets.csv", 1, "center_z_mm", "", "got ''"),
    ("load_cases.csv", 3, "Fy_N", "", "got ''"),
    # NaN and infinity
    ("inertia.csv", 2, "mass_kg", "nan", "'nan'"),
    ("load_cases.csv", 7, "My_Nm", "NaN", "'NaN'"),
    ("ligaments.csv", 1, "c5_x_mm", "nan", "'nan'"),
    ("facets.csv", 1, "center_x_mm", "inf", "'inf'"),
    # non-numeric
    ("facets.csv", 2, "blend_C", "16,7", "'16,7'"),
    ("disc_rotational.csv", 1, "b_Nms_per_rad", "1.5.0", "'1.5.0'"),
    # unknown names
    ("ligaments.csv", 3, "name", "XYZ", "'XYZ'"),
    ("facets.csv", 2, "side", "middle", "'middle'"),
    ("disc_translational.csv", 2, "coefficient", "k_w-", "'k_w-'"),
    ("inertia.csv", 1, "body", "C7", "'C7'"),
]


@pytest.mark.parametrize(("file", "row", "column", "value", "shown"), BAD_CELLS,
                         ids=[f"{f}-row{r}-{c}={v!r}" for f, r, c, v, _ in BAD_CELLS])
def test_bad_cell_names_file_row_column_value(data_copy, file, row, column, value, shown):
    set_cell(data_copy, file, row, column, value)
    message = load_error(data_copy)
    assert_names(message, file=file, row=row, column=column, value=shown)


def test_facet_inclination_out_of_range(data_copy):
    set_cell(data_copy, "facets.csv", 2, "inclination_deg", "95")
    assert_names(load_error(data_copy), file="facets.csv", row=2, column="inclination_deg",
                 value="95")


UNSORTED_CURVES = [
    # row, changed column, new value, the columns the message must name, the values shown
    (2, "A_eps_rel", "0.9", ("A_eps_rel", "B_eps_rel"), "0.9, 0.78"),   # A_eps > B_eps
    (4, "B_eps_rel", "1.2", ("A_eps_rel", "B_eps_rel"), "0.33, 1.2"),   # B beyond C
    (1, "A_eps_rel", "0", ("A_eps_rel", "B_eps_rel"), "0, 0.8"),        # A at the origin
    (3, "A_F_rel", "0.95", ("A_F_rel", "B_F_rel"), "0.95, 0.89"),       # A_F > B_F
    (6, "B_F_rel", "1.5", ("A_F_rel", "B_F_rel"), "0.16, 1.5"),         # B_F above F_max
]


@pytest.mark.parametrize(("row", "column", "value", "named", "shown"), UNSORTED_CURVES,
                         ids=[f"row{r}-{c}={v}" for r, c, v, _, _ in UNSORTED_CURVES])
def test_unsorted_curve_points(data_copy, row, column, value, named, shown):
    set_cell(data_copy, "ligaments.csv", row, column, value)
    message = load_error(data_copy)
    for col in named:
        assert_names(message, file="ligaments.csv", row=row, column=col, value=shown)


MISSING_COLUMNS = [
    ("ligaments.csv", "l0_mm"),
    ("facets.csv", "radius_c5_mm"),
    ("disc_rotational.csv", "k_Nm_per_deg"),
    ("facet_contact_law.csv", "F_transition_N"),
    ("load_cases.csv", "source"),
    ("inertia.csv", "body"),
]


@pytest.mark.parametrize(("file", "column"), MISSING_COLUMNS)
def test_removed_column(data_copy, file, column):
    """A missing column concerns no particular row or value: file and column are named."""
    write(data_copy, file, read(data_copy, file).drop(columns=[column]))
    message = load_error(data_copy)
    assert file in message
    missing_part = message.split("expected")[0]      # not the list of expected columns
    assert "missing column" in missing_part and f"'{column}'" in missing_part, message


@pytest.mark.parametrize(("file", "row", "value"), [
    ("ligaments.csv", 3, ""),
    ("load_cases.csv", 9, ""),
    ("facet_contact_law.csv", 1, ""),
    ("inertia.csv", 2, "   "),
])
def test_empty_source(data_copy, file, row, value):
    set_cell(data_copy, file, row, "source", value)
    assert_names(load_error(data_copy), file=file, row=row, column="source", value="empty")


def duplicate_first_ligament(folder):
    """Append a copy of row 1 (ALL) as row 7."""
    df = read(folder, "ligaments.csv")
    write(folder, "ligaments.csv", pd.concat([df, df.iloc[[0]]], ignore_index=True))


def test_duplicate_ligament_is_rejected(data_copy):
    duplicate_first_ligament(data_copy)
    message = load_error(data_copy)
    assert "ligaments.csv" in message
    assert "'name'" in message and "duplicate" in message and "'ALL'" in message, message


def test_duplicate_ligament_error_names_the_row(data_copy):
    duplicate_first_ligament(data_copy)
    assert_names(load_error(data_copy), file="ligaments.csv", row=7, column="name",
                 value="'ALL'")


def test_missing_ligament_row(data_copy):
    df = read(data_copy, "ligaments.csv")
    write(data_copy, "ligaments.csv", df[df["name"] != "ISL"])
    message = load_error(data_copy)
    assert "ligaments.csv" in message and "'name'" in message and "'ISL'" in message, message


def test_duplicate_load_case(data_copy):
    set_cell(data_copy, "load_cases.csv", 8, "name", "FLX")
    assert_names(load_error(data_copy), file="load_cases.csv", row=8, column="name",
                 value="'FLX'")


def test_contact_law_must_be_continuous(data_copy):
    set_cell(data_copy, "facet_contact_law.csv", 1, "F_transition_N", "200")
    assert_names(load_error(data_copy), file="facet_contact_law.csv", row=1,
                 column="F_transition_N", value="got 200")


def test_consistent_contact_law_change_loads(data_copy):
    """The check is k2 u_t^2 = F_t, not a fixed 180 N: 1000 * 0.3^2 = 90 N is accepted."""
    set_cell(data_copy, "facet_contact_law.csv", 1, "k_quadratic_N_per_mm2", "1000")
    set_cell(data_copy, "facet_contact_law.csv", 1, "F_transition_N", "90")
    set_cell(data_copy, "facet_contact_law.csv", 1, "k_linear_N_per_mm", "600")  # 2 k2 u_t
    law = segment.load_parameters(data_copy).contact_law
    assert law.k_quadratic == 1000.0
    assert law.force_at_transition == pytest.approx(90.0, rel=CONVERSION_RTOL)


def test_row_with_an_extra_field_names_the_file(data_copy):
    path = data_copy / "ligaments.csv"
    lines = path.read_text().splitlines()
    lines[2] += ",extra"
    path.write_text("\n".join(lines) + "\n")
    assert "ligaments.csv" in load_error(data_copy)


def test_extra_field_on_the_first_row_is_blamed_on_row_1(data_copy):
    path = data_copy / "facets.csv"
    lines = path.read_text().splitlines()
    lines[1] += ",extra"
    path.write_text("\n".join(lines) + "\n")
    message = load_error(data_copy)
    assert "facets.csv" in message
    assert re.search(r"\brow 1\b|\bline 2\b", message), message


def test_missing_table_names_the_file(data_copy):
    (data_copy / "facets.csv").unlink()
    assert "facets.csv" in load_error(data_copy)


def test_table_without_data_rows(data_copy):
    write(data_copy, "facets.csv", read(data_copy, "facets.csv").iloc[:0])
    message = load_error(data_copy)
    assert "facets.csv" in message and "no data rows" in message


def test_non_utf8_table_names_the_file(data_copy):
    path = data_copy / "inertia.csv"
    text = path.read_text(encoding="utf-8").replace("de Jager", "de J\u00e4ger")
    path.write_bytes(text.encode("latin-1"))
    assert "inertia.csv" in load_error(data_copy)


def test_file_instead_of_folder(data_copy):
    target = data_copy / "ligaments.csv"
    with pytest.raises(ValueError, match=r"ligaments\.csv"):
        segment.load_parameters(target)


# ---------------------------------------------------------------- nothing half-loaded
def test_failed_load_leaves_the_default_model_unchanged(data_copy):
    load = segment.LOAD_CASES["FLX"]
    before = segment.c5c6().residual(PROBE_Q, load)
    cases_before = {n: c.as_array().copy() for n, c in segment.LOAD_CASES.items()}
    # valid but different numbers in the early tables, a broken last table
    set_cell(data_copy, "disc_rotational.csv", 3, "k_Nm_per_deg", "0.5")
    set_cell(data_copy, "ligaments.csv", 1, "l0_mm", "12")
    set_cell(data_copy, "facet_contact_law.csv", 1, "k_quadratic_N_per_mm2", "1000")
    set_cell(data_copy, "facet_contact_law.csv", 1, "F_transition_N", "90")
    set_cell(data_copy, "facet_contact_law.csv", 1, "k_linear_N_per_mm", "600")
    set_cell(data_copy, "load_cases.csv", 9, "Mz_Nm", "abc")
    with pytest.raises(ValueError, match=r"load_cases\.csv"):
        segment.load_parameters(data_copy)
    with pytest.raises(ValueError, match=r"load_cases\.csv"):
        segment.c5c6(data_dir=data_copy)
    after = segment.c5c6().residual(PROBE_Q, load)
    np.testing.assert_array_equal(after, before)
    assert set(segment.LOAD_CASES) == set(cases_before)
    for name, arr in cases_before.items():
        np.testing.assert_array_equal(segment.LOAD_CASES[name].as_array(), arr)
    # the edits were real: with the last table repaired the model differs from the default
    set_cell(data_copy, "load_cases.csv", 9, "Mz_Nm", "1.8")
    edited = segment.c5c6(data_dir=data_copy).residual(PROBE_Q, load)
    assert not np.allclose(edited, before)


@pytest.mark.parametrize(("field", "value", "message"), [
    ("mass", 0.0, "mass must be a finite number > 0"),
    ("mass", float("nan"), "mass must be a finite number > 0"),
    ("inertia", [1.0, 2.0], "inertia must be 3 finite numbers > 0"),
    ("inertia", [1.0, -2.0, 3.0], "inertia must be 3 finite numbers > 0"),
    ("cog_x", float("inf"), "cog_x must be a finite number"),
])
def test_body_inertia_rejects_bad_values(field, value, message):
    from segment.core.io import BodyInertia
    good = {"body": "C5", "mass": 0.2, "inertia": [200.0, 200.0, 300.0], "cog_x": -8.1}
    with pytest.raises(ValueError, match=f"C5: {message}"):
        BodyInertia(**{**good, field: value})


def test_contact_law_slope_must_be_continuous(data_copy):
    """k_linear = 2 k_quadratic u_transition (1200 = 2 * 2000 * 0.3), else the slope jumps."""
    set_cell(data_copy, "facet_contact_law.csv", 1, "k_linear_N_per_mm", "1000")
    message = str(load_error(data_copy))
    assert "facet_contact_law.csv" in message and "row 1" in message
    assert "k_linear must equal 2 k_quadratic u_transition = 1200" in message


# ---------------------------------------------------------------- ligament strips
def test_strip_table_defaults_to_one_strip_and_states_sources():
    """One strip per ligament (the published model); widths have a source or say 'assumed'."""
    p = segment.load_parameters()
    assert [lig.strips for lig in p.ligaments] == [1] * 6
    table = read(sio.data_dir(), "ligament_strips.csv")
    for _, row in table.iterrows():
        assert float(row["width_mm"]) > 0
        assert row["source"].startswith("assumed"), row["name"]   # no verified published width


def test_strip_table_errors_name_file_row_column(data_copy):
    table = read(data_copy, "ligament_strips.csv")
    table.loc[2, "strips"] = "1.5"
    write(data_copy, "ligament_strips.csv", table)
    with pytest.raises(ValueError) as err:
        segment.load_parameters(data_copy)
    assert_names(str(err.value), file="ligament_strips.csv", row=3, column="strips",
                 value="1.5")


def test_folder_without_strip_table_keeps_one_strip(data_copy):
    (data_copy / "ligament_strips.csv").unlink()
    p = segment.load_parameters(data_copy)
    assert [lig.strips for lig in p.ligaments] == [1] * 6
