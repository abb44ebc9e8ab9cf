"""Mutation suite of the data tables (issue 14): every malformed copy of ``tests/data_mutations``
is either rejected with one clear message (file, field, file line; one line and exit code 2 on
the command line) or, for the harmless reformattings, accepted with exactly the packaged model.
"""

import warnings

import numpy as np
import pytest
from data_mutations import MUTATIONS, TABLES, copy_tables, fingerprint, set_cell, set_cells

import segment
from segment import cli
from segment.core.io import data_dir
from segment.core.schema import COLUMNS
from segment.core.tables import ImplausibleDataWarning, parse_number

MIN_MUTATIONS = 60
EXIT_USAGE = 2
SAME_MODEL_RTOL = 1e-12      # the same numbers parsed from differently written text


@pytest.fixture(scope="module")
def reference():
    return fingerprint(segment.load_parameters())


def test_suite_is_large_and_covers_every_table():
    assert len(MUTATIONS) >= MIN_MUTATIONS
    assert {m.file for m in MUTATIONS} == set(TABLES)
    assert len({m.id for m in MUTATIONS}) == len(MUTATIONS)


@pytest.mark.parametrize("m", MUTATIONS, ids=[m.id for m in MUTATIONS])
def test_mutation(m, tmp_path, reference, capsys):
    folder = copy_tables(data_dir(), tmp_path / "data")
    m.apply(folder)
    if m.expect == "accept":
        params = segment.load_parameters(folder)
        np.testing.assert_allclose(fingerprint(params), reference, rtol=SAME_MODEL_RTOL, atol=0)
        return
    with pytest.raises(ValueError) as excinfo:
        segment.load_parameters(folder)
    message = str(excinfo.value)
    assert m.file in message, message
    for f in m.fields:
        assert f in message, message
    if m.line is not None:
        assert f"line {m.line}" in message, message
        assert f"(row {m.line - 1})" in message, message
    assert "\n" not in message
    code = cli.main(["--data", str(folder), "cases"])
    err = capsys.readouterr().err
    assert code == EXIT_USAGE
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("segment: error: ") and m.file in err


def test_every_error_of_a_file_is_reported_at_once(data_copy):
    set_cells("ligaments.csv", [(1, "l0_mm", "0_18"), (2, "eps_max", "45"),
                                (3, "F_max_N", "x"), (6, "b_Ns_per_m", "-3")])(data_copy)
    with pytest.raises(ValueError) as excinfo:
        segment.load_parameters(data_copy)
    msg = str(excinfo.value)
    assert msg.startswith("ligaments.csv: 4 errors: ")
    for line, col in ((2, "l0_mm"), (3, "eps_max"), (4, "F_max_N"), (7, "b_Ns_per_m")):
        assert f"line {line} (row {line - 1}), column '{col}'" in msg, msg


def test_error_list_is_capped(data_copy):
    from segment.core.tables import MAX_ERRORS

    cols = ("c5_x_mm", "c5_y_mm", "c5_z_mm", "c6_x_mm", "c6_y_mm", "c6_z_mm")
    set_cells("ligaments.csv", [(r, c, "bad") for r in range(1, 7) for c in cols])(data_copy)
    with pytest.raises(ValueError) as excinfo:
        segment.load_parameters(data_copy)
    msg = str(excinfo.value)
    assert msg.startswith("ligaments.csv: 36 errors: ")
    assert msg.count("expected a plain number") == MAX_ERRORS
    assert msg.endswith(f"and {36 - MAX_ERRORS} more")


@pytest.mark.parametrize(("text", "value"), [
    ("18", 18.0), (" 18 ", 18.0), ("+18", 18.0), ("-0.5", -0.5), ("18.", 18.0), (".5", 0.5),
    ("1.8e1", 18.0), ("1.8E+1", 18.0), ("2e-3", 0.002),
])
def test_parse_number_accepts_what_people_write(text, value):
    assert parse_number(text) == value


@pytest.mark.parametrize(("text", "hint"), [
    ("0_58", "underscores"), ("٠.٥٨", "ASCII"), ("１８", "ASCII"), ("0,58", "'0.58'"),
    ("18 mm", "unit is in the column header"), ("0x12", "plain number"), ("", "empty cell"),
    ("1.2.3", "plain number"), ("e5", "plain number"),
])
def test_parse_number_rejects_what_people_do_not_mean(text, hint):
    with pytest.raises(ValueError, match="expected a") as excinfo:
        parse_number(text)
    assert hint in str(excinfo.value)


def test_python_float_would_accept_what_parse_number_rejects():
    # why segment.core.io has its own parser: float() reads "0_58" as 58 and any Unicode digits
    assert float("0_58") == 58.0
    assert float("٠.٥٨") == 0.58


def test_every_numeric_column_has_a_plausible_range_with_a_reason():
    for name in TABLES:
        header = (data_dir() / name).read_text(encoding="utf-8").splitlines()[0].split(",")
        numeric = [c for c in header if c.endswith(("_mm", "_kg", "_N", "_Nm", "_deg",
                                                    "_cm2", "_per_mm", "_per_mm2", "_per_m",
                                                    "_per_deg", "_per_rad", "_rel", "_C",
                                                    "eps_max"))]
        assert numeric, name
        for col in numeric:
            key = (name, col)
            assert key in COLUMNS, key
            if COLUMNS[key].plausible is not None:
                r = COLUMNS[key].plausible
                assert r.lower < r.upper and len(r.reason) > 20, key


def test_packaged_values_lie_inside_their_ranges():
    with warnings.catch_warnings():
        warnings.simplefilter("error", ImplausibleDataWarning)
        segment.load_parameters(strict=True)


def test_strict_false_turns_implausible_values_into_warnings(data_copy):
    set_cell("ligaments.csv", 1, "l0_mm", "0.018")(data_copy)   # metres in a mm column
    with pytest.raises(ValueError, match=r"l0_mm.*outside the plausible range 1 to 60 mm"):
        segment.load_parameters(data_copy)
    with pytest.warns(ImplausibleDataWarning, match="l0_mm") as record:
        p = segment.load_parameters(data_copy, strict=False)
    assert p.ligaments[0].l0 == 0.018
    assert any("line 2 (row 1)" in str(w.message) for w in record)
    # malformed numbers stay errors with strict=False
    set_cell("ligaments.csv", 1, "l0_mm", "0_018")(data_copy)
    with pytest.raises(ValueError, match="underscores"):
        segment.load_parameters(data_copy, strict=False)


def test_cli_allow_implausible(data_copy, capsys):
    set_cell("disc_translational.csv", 1, "k_N_per_mm", "62000")(data_copy)
    assert cli.main(["--data", str(data_copy), "solve", "AS"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--allow-implausible" in err
    code = cli.main(["--allow-implausible", "--data", str(data_copy), "solve", "AS"])
    out, err = capsys.readouterr()
    assert code == 0
    assert err.strip().splitlines() == [line for line in err.strip().splitlines()
                                        if line.startswith("segment: warning: ")]
    assert "k_N_per_mm" in err and "AS" in out


def test_load_parameters_type_errors_name_the_argument():
    with pytest.raises(TypeError, match="data_dir must be a folder path"):
        segment.c5c6(data_dir=123)
    with pytest.raises(TypeError, match="strict must be True or False"):
        segment.load_parameters(strict="no")
    with pytest.raises(TypeError, match="ligaments must be True, False or a sequence"):
        segment.c5c6(ligaments=0)
    with pytest.raises(TypeError, match="ligaments must be"):
        segment.c5c6(ligaments=("ALL", 3))
    assert len(segment.c5c6(ligaments="ALL").ligaments) == 1
