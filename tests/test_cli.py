"""Command line ``segment cases`` / ``segment solve``: tables, JSON, options and errors.

Most tests call :func:`segment.cli.main` in-process (captured with ``capsys``); the console
script itself is run once per kind of outcome (success, argument error, bad data folder).
"""

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import segment
from segment import cli
from segment.core import io as sio
from segment.elements.contact import REGIMES

CASES = ("AS", "PS", "LS", "TNS", "CMP", "LB", "FLX", "EXT", "AR")
TABLES = ("inertia.csv", "disc_translational.csv", "disc_rotational.csv", "ligaments.csv",
          "facet_contact_law.csv", "facets.csv", "load_cases.csv")
EXIT_OK = 0
EXIT_USAGE = 2

# the disc alone in flexion: 1.8 N m / 0.21 N m/deg (Table 2)
DISC_ONLY_FLX_DEG = 1.8 / 0.21
DISC_ONLY_AS_MM = 20.0 / 62.0
CLOSED_FORM_ATOL = 1e-6        # [mm, deg], as the issue states
JSON_RTOL = 1e-9               # JSON floats round-trip; solver runs are deterministic
JSON_ATOL = 1e-12
TABLE_ATOL = 0.0005 + 1e-9     # the table prints 3 decimals
DIFFERENT_DEG = 0.5            # a removed element must move the answer by more than this
SUBPROCESS_TIMEOUT_S = 120
# e_R (eq. (55)) of a correct 100 s FLX step response: the integrator's rtol 1e-6 keeps the
# balance well below 1e-2 of the largest kinetic energy (measured 6e-6).
ENERGY_ERROR_LONG_RUN = 1e-2


# ---------------------------------------------------------------- helpers
def run(capsys, *argv):
    """``segment ARGV`` in-process: (exit code, stdout, stderr)."""
    try:
        code = cli.main([str(a) for a in argv])
    except SystemExit as exc:            # argparse errors leave through sys.exit
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv):
    code, out, err = run(capsys, "solve", "--json", *argv)
    assert code == EXIT_OK, err
    return json.loads(out)


def console_script() -> Path:
    script = Path(sys.executable).parent / "segment"
    if not script.exists():
        found = shutil.which("segment")
        assert found, "the console script 'segment' is not installed"
        script = Path(found)
    return script


def run_script(*argv, cwd):
    return subprocess.run([str(console_script()), *map(str, argv)], capture_output=True,
                          text=True, timeout=SUBPROCESS_TIMEOUT_S, cwd=cwd, check=False)


def assert_one_line_error(code, out, err, *mentions):
    assert code == EXIT_USAGE, (code, out, err)
    assert "Traceback" not in out + err
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1, repr(err)
    assert err.startswith("segment: error:"), err
    for text in mentions:
        assert text in err, err


def in_degrees(q):
    return np.concatenate([q[:3], np.degrees(q[3:])])


def coords(result: dict) -> np.ndarray:
    """``from_reference`` of one JSON result as (x, y, z [mm], phi_x, phi_y, phi_z [deg])."""
    d = result["from_reference"]
    assert list(d) == list(segment.DOF_NAMES)
    return np.array([d[k] for k in segment.DOF_NAMES])


def table_row(out: str, case: str) -> list[str]:
    rows = [line for line in out.splitlines() if line.split()[:1] == [case]]
    assert len(rows) == 1, out
    return rows[0].split()




@pytest.fixture
def broken_data(data_copy):
    """The copy with l0_mm = -6 in ligaments.csv row 5."""
    df = pd.read_csv(data_copy / "ligaments.csv", dtype=str, keep_default_na=False)
    df.loc[4, "l0_mm"] = "-6"
    df.to_csv(data_copy / "ligaments.csv", index=False)
    return data_copy


@pytest.fixture
def extra_field_data(data_copy):
    """The copy with an eleventh field appended to facets.csv row 2 (file line 3)."""
    path = data_copy / "facets.csv"
    lines = path.read_text().splitlines()
    lines[2] += ",extra"
    path.write_text("\n".join(lines) + "\n")
    return data_copy


# ---------------------------------------------------------------- cases
def test_cases_lists_the_nine_cases(capsys):
    code, out, err = run(capsys, "cases")
    assert code == EXIT_OK and err == ""
    lines = out.splitlines()
    assert len(lines) == 1 + len(CASES)                   # header + one row per case
    assert [line.split()[0] for line in lines[1:]] == list(CASES)
    flx = table_row(out, "FLX")
    assert [float(v) for v in flx[1:]] == [0, 0, 0, 0, 1.8, 0]   # N, then N m
    assert [float(v) for v in table_row(out, "PS")[1:]] == [-20, 0, 0, 0, 0, 0]


# ---------------------------------------------------------------- solve: table
def test_solve_flx_prints_a_table_row(capsys):
    code, out, err = run(capsys, "solve", "--from", "reference", "FLX")
    assert code == EXIT_OK and err == ""
    assert "[mm]" in out and "[deg]" in out
    assert "from the reference pose of Table 1" in out
    row = table_row(out, "FLX")
    expected = segment.solve(segment.c5c6(), segment.LOAD_CASES["FLX"])
    np.testing.assert_allclose([float(v) for v in row[1:7]], in_degrees(expected.q),
                               rtol=0, atol=TABLE_ATOL)
    assert int(row[7]) == expected.iterations
    facets = " ".join(row[8:]).split(" / ")
    assert len(facets) == 2
    for facet in facets:
        regime, force, unit = facet.split()
        assert regime in REGIMES and unit == "N" and float(force) >= 0


def test_solve_marks_rows_beyond_the_failure_limits(capsys):
    """FLX at 15x: FL past eps_max (Table 3); the row says so, the JSON too."""
    code, out, err = run(capsys, "solve", "--scale", "15", "FLX")
    assert code == EXIT_OK and err == ""
    line = next(x for x in out.splitlines() if x.startswith("FLX"))
    assert "BEYOND LIMITS:" in line and "ligament FL beyond eps_max" in line
    data = run_json(capsys, "--scale", "15", "FLX")
    (r,) = data["results"]
    assert r["intact"] is False and any(f.startswith("ligament FL") for f in r["limit_flags"])
    assert "dislocated" in r["facets"][0]
    code, out, _ = run(capsys, "solve", "FLX")
    assert "BEYOND LIMITS" not in out


def test_solve_without_cases_solves_all_nine(capsys):
    data = run_json(capsys, "--no-facets", "--no-ligaments")
    assert [r["load"] for r in data["results"]] == list(CASES)
    assert all(r["converged"] for r in data["results"])


def test_no_facets_table_shows_no_facet_column(capsys):
    code, out, _ = run(capsys, "solve", "--no-facets", "EXT")
    assert code == EXIT_OK
    assert table_row(out, "EXT")[8:] == ["-"]


# ---------------------------------------------------------------- solve: JSON
def test_solve_json_gives_converged_results_in_mm_and_degrees(capsys):
    data = run_json(capsys, "AS", "PS")
    assert data["scale"] == 1.0
    results = data["results"]
    assert [r["load"] for r in results] == ["AS", "PS"]
    model = segment.c5c6()
    for r in results:
        assert r["converged"] is True
        assert r["units"]["translation"] == "mm" and r["units"]["rotation"] == "deg"
        expected = segment.solve(model, segment.LOAD_CASES[r["load"]])
        np.testing.assert_allclose(coords(r), in_degrees(expected.q), rtol=JSON_RTOL,
                                   atol=JSON_ATOL)
    # AS and PS push C5 opposite ways
    assert coords(results[0])[0] > 0 > coords(results[1])[0]


def test_disc_alone_flexion_is_closed_form(capsys):
    r, = run_json(capsys, "--no-facets", "--no-ligaments", "FLX")["results"]
    q = coords(r)
    assert q[4] == pytest.approx(DISC_ONLY_FLX_DEG, abs=CLOSED_FORM_ATOL)   # 8.5714 deg
    np.testing.assert_allclose(np.delete(q, 4), 0.0, atol=CLOSED_FORM_ATOL)
    assert r["ligaments"] == [] and r["facets"] == []


def test_no_ligaments_changes_flexion(capsys):
    full, = run_json(capsys, "FLX")["results"]
    no_lig, = run_json(capsys, "--no-ligaments", "FLX")["results"]
    assert no_lig["ligaments"] == [] and len(full["ligaments"]) == len(segment.LIGAMENT_NAMES)
    assert coords(no_lig)[4] - coords(full)[4] > DIFFERENT_DEG     # ligaments resist flexion


def test_no_facets_changes_extension(capsys):
    full, = run_json(capsys, "EXT")["results"]
    no_fac, = run_json(capsys, "--no-facets", "EXT")["results"]
    assert no_fac["facets"] == [] and len(full["facets"]) == 2
    assert coords(full)[4] - coords(no_fac)[4] > DIFFERENT_DEG     # facets resist extension


def test_scale_halves_the_disc_only_displacement(capsys):
    one, = run_json(capsys, "--no-facets", "--no-ligaments", "AS")["results"]
    data = run_json(capsys, "--no-facets", "--no-ligaments", "--scale", "0.5", "AS")
    assert data["scale"] == 0.5
    half, = data["results"]
    assert half["load"] == "AS"
    assert coords(one)[0] == pytest.approx(DISC_ONLY_AS_MM, abs=CLOSED_FORM_ATOL)
    assert coords(half)[0] == pytest.approx(DISC_ONLY_AS_MM / 2, abs=CLOSED_FORM_ATOL)
    assert coords(half)[0] == pytest.approx(coords(one)[0] / 2, rel=JSON_RTOL)


def test_data_option_reads_another_folder(capsys, data_copy):
    folder = data_copy
    df = pd.read_csv(folder / "disc_rotational.csv", dtype=str, keep_default_na=False)
    df.loc[df["coefficient"] == "k_phiy+", "k_Nm_per_deg"] = "0.42"      # twice as stiff
    df.to_csv(folder / "disc_rotational.csv", index=False)
    code, out, err = run(capsys, "--data", folder, "solve", "--json", "--no-facets",
                         "--no-ligaments", "FLX")
    assert code == EXIT_OK, err
    r, = json.loads(out)["results"]
    assert coords(r)[4] == pytest.approx(DISC_ONLY_FLX_DEG / 2, abs=CLOSED_FORM_ATOL)


# ---------------------------------------------------------------- errors
BAD_ARGS = {
    "unknown case": (("solve", "FLX", "XYZ"), ("XYZ",)),
    "scale abc": (("solve", "--scale", "abc", "FLX"), ("--scale", "abc")),
    "scale inf": (("solve", "--scale", "inf", "FLX"), ("--scale", "inf")),
    "scale nan": (("solve", "--scale", "nan", "AS"), ("--scale", "nan")),
    "scale missing": (("solve", "FLX", "--scale"), ("--scale",)),
    "unknown option": (("solve", "--bogus"), ("--bogus",)),
    "no command": ((), ()),
    "unknown command": (("frobnicate",), ("frobnicate",)),
}


@pytest.mark.parametrize(("argv", "mentions"), BAD_ARGS.values(), ids=BAD_ARGS.keys())
def test_bad_arguments_one_line_exit_2(capsys, argv, mentions):
    assert_one_line_error(*run(capsys, *argv), *mentions)


@pytest.mark.parametrize("argv", [("cases",), ("solve", "FLX"), ("solve", "--json")])
def test_broken_data_folder_one_line_exit_2(capsys, broken_data, argv):
    code, out, err = run(capsys, "--data", broken_data, *argv)
    assert_one_line_error(code, out, err, "ligaments.csv", "row 5", "'l0_mm'", "-6")


def test_missing_data_folder_one_line_exit_2(capsys, tmp_path):
    assert_one_line_error(*run(capsys, "--data", tmp_path / "nowhere", "cases"), "nowhere")


def test_row_with_an_extra_field_exits_2(capsys, extra_field_data):
    code, out, err = run(capsys, "--data", extra_field_data, "cases")
    assert code == EXIT_USAGE and out == "" and "Traceback" not in err
    assert err.startswith("segment: error:") and "facets.csv" in err, err


def test_row_with_an_extra_field_one_line(capsys, extra_field_data):
    assert_one_line_error(*run(capsys, "--data", extra_field_data, "cases"), "facets.csv")


def test_data_option_pointing_to_a_file(capsys):
    target = sio.data_dir() / "ligaments.csv"
    assert_one_line_error(*run(capsys, "--data", target, "cases"))


# ---------------------------------------------------------------- the console script
def test_console_script_cases(tmp_path):
    proc = run_script("cases", cwd=tmp_path)
    assert proc.returncode == EXIT_OK, proc.stderr
    rows = proc.stdout.splitlines()[1:]
    assert [line.split()[0] for line in rows] == list(CASES)


def test_console_script_bad_scale(tmp_path):
    proc = run_script("solve", "FLX", "--scale", "abc", cwd=tmp_path)
    assert_one_line_error(proc.returncode, proc.stdout, proc.stderr, "abc")


def test_console_script_broken_data(broken_data, tmp_path):
    proc = run_script("--data", broken_data, "solve", "FLX", cwd=tmp_path)
    assert_one_line_error(proc.returncode, proc.stdout, proc.stderr, "ligaments.csv",
                          "row 5")


def test_console_script_solve_json(tmp_path):
    proc = run_script("solve", "--json", "--no-facets", "--no-ligaments", "FLX", cwd=tmp_path)
    assert proc.returncode == EXIT_OK, proc.stderr
    r, = json.loads(proc.stdout)["results"]
    assert r["converged"] is True
    assert coords(r)[4] == pytest.approx(DISC_ONLY_FLX_DEG, abs=CLOSED_FORM_ATOL)
    assert math.isclose(coords(r)[4], 8.5714, abs_tol=1e-4)


def test_output_into_a_missing_folder_one_line_exit_2(capsys, tmp_path):
    missing = tmp_path / "nowhere"
    assert_one_line_error(*run(capsys, "simulate", "FLX", "--t-end", "0.01", "--out",
                               missing / "flx.csv"), "nowhere")
    assert_one_line_error(*run(capsys, "render", "FLX", "-o", missing / "flx.png"), "nowhere")


# ---------------------------------------------------------------- issue 15: rough edges
def test_default_table_measures_from_the_unloaded_equilibrium_as_the_report(capsys):
    code, out, _ = run(capsys, "solve", "FLX")
    assert code == EXIT_OK
    assert "from the unloaded equilibrium (as in the validation report; see --from)" in out
    expected = segment.solve(segment.c5c6(), segment.LOAD_CASES["FLX"])
    np.testing.assert_allclose([float(v) for v in table_row(out, "FLX")[1:7]],
                               in_degrees(expected.displacement_from_unloaded), atol=TABLE_ATOL)
    report = pd.read_csv(Path(__file__).resolve().parent.parent / "validation" / "report"
                         / "tables" / "displacements.csv")
    row = report[(report.configuration == "intact") & (report.case == "FLX")]
    assert float(table_row(out, "FLX")[5]) == pytest.approx(float(row.phi_y_deg.iloc[0]),
                                                             abs=TABLE_ATOL)
    assert "-0.000" not in out


def test_non_converged_rows_say_so_in_place_of_numbers(capsys, monkeypatch):
    real = segment.solve

    def one_iteration(model, load, **kw):
        return real(model, load, max_iterations=1)

    monkeypatch.setattr(segment.cli.solve, "solve", one_iteration)   # the command's solve
    code, out, _ = run(capsys, "solve", "FLX")
    assert code == 1
    row = next(line for line in out.splitlines() if line.startswith("FLX"))
    assert row.split()[1:3] == ["NOT", "CONVERGED:"] and "did not converge" in row
    assert "0.000" not in row and "apart" not in row     # no numbers or regimes as if a result


@pytest.mark.parametrize("value", ["-inf", "-nan", "-1e400"])
def test_negative_non_finite_scale_is_a_clear_error(capsys, value):
    assert_one_line_error(*run(capsys, "solve", "--scale", value, "FLX"),
                          "--scale", "finite", value)


def test_negative_scale_is_a_number_not_an_option(capsys):
    r, = run_json(capsys, "--no-facets", "--no-ligaments", "--scale", "-1", "AS")["results"]
    # -20 N along x meets the posterior-shear stiffness of Table 2 (50 N/mm), not 62 N/mm
    assert coords(r)[0] == pytest.approx(-20.0 / 50.0, abs=CLOSED_FORM_ATOL)


def test_data_option_after_the_command(capsys, data_copy):
    df = pd.read_csv(data_copy / "disc_rotational.csv", dtype=str, keep_default_na=False)
    df.loc[df["coefficient"] == "k_phiy+", "k_Nm_per_deg"] = "0.42"
    df.to_csv(data_copy / "disc_rotational.csv", index=False)
    code, out, err = run(capsys, "solve", "--json", "--no-facets", "--no-ligaments", "FLX",
                         "--data", data_copy)
    assert code == EXIT_OK, err
    r, = json.loads(out)["results"]
    assert coords(r)[4] == pytest.approx(DISC_ONLY_FLX_DEG / 2, abs=CLOSED_FORM_ATOL)


def test_version(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == EXIT_OK and out == f"segment {segment.__version__} (distribution c5c6-segment)\n"


def test_python_dash_m_segment(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "segment", "cases"], capture_output=True,
                          text=True, timeout=SUBPROCESS_TIMEOUT_S, cwd=tmp_path, check=False)
    assert proc.returncode == EXIT_OK, proc.stderr
    assert [line.split()[0] for line in proc.stdout.splitlines()[1:]] == list(CASES)


def test_verbose_logs_and_quiet_silences(capsys, tmp_path):
    import logging

    logger = logging.getLogger("segment")
    before = (list(logger.handlers), logger.level, logger.propagate)
    code, _, err = run(capsys, "-v", "simulate", "FLX", "--t-end", "0.01")
    assert code == EXIT_OK and "segment.simulate: simulating FLX for 0.01 s (step)" in err
    code, _, err = run(capsys, "simulate", "FLX", "--t-end", "0.01", "-q")
    assert code == EXIT_OK and err == ""
    code, _, _ = run(capsys, "solve", "FLX", "-vv")
    assert code == EXIT_OK
    # the command line leaves the logger as it found it (no handler bound to a stderr that
    # the caller may close: a test's capture, a notebook's)
    assert (list(logger.handlers), logger.level, logger.propagate) == before


@pytest.mark.slow
def test_render_prints_the_file_it_wrote(capsys, tmp_path):
    code, out, err = run(capsys, "render", "FLX", "-o", tmp_path / "flx", "--size", "64", "48")
    assert code == EXIT_OK, err
    written = tmp_path / "flx.png"
    assert written.is_file() and not (tmp_path / "flx").exists()
    assert out.startswith(f"{written}: FLX")


BAD_OUTPUTS = {
    "render into a missing folder": (("render", "FLX", "-o", "{missing}/x.png"), "does not exist"),
    "render under a file": (("render", "FLX", "-o", "{file}/x.png"), "does not exist"),
    "render onto a folder": (("render", "FLX", "-o", "{folder}"), "is a folder"),
    "validate onto a file": (("validate", "--out", "{file}"), "is not a folder"),
    "validate under a file": (("validate", "--out", "{file}/sub"), "is not a folder"),
    "simulate into a missing folder": (("simulate", "FLX", "--t-end", "1000", "--out",
                                        "{missing}/x.csv"), "does not exist"),
}


@pytest.mark.parametrize(("argv", "why"), BAD_OUTPUTS.values(), ids=BAD_OUTPUTS.keys())
def test_bad_output_paths_fail_before_any_work(capsys, tmp_path, monkeypatch, argv, why):
    """The error comes before solving: solve, simulate and the report are never called."""
    import segment.cli
    import segment.report
    import segment.solvers.dynamics

    def forbidden(*a, **k):
        raise AssertionError("work started before the output path was checked")

    for command in (segment.cli.solve, segment.cli.views, segment.cli.simulate,
                    segment.cli.export):          # each command's own name for solve
        monkeypatch.setattr(command, "solve", forbidden)
    monkeypatch.setattr(segment.solvers.dynamics, "simulate", forbidden)
    monkeypatch.setattr(segment.report, "build_report", forbidden)
    (tmp_path / "file").write_text("x")
    (tmp_path / "folder").mkdir()
    names = {"missing": tmp_path / "nowhere", "file": tmp_path / "file",
             "folder": tmp_path / "folder"}
    argv = [a.format(**names) for a in argv]
    option = "-o" if "-o" in argv else "--out"
    assert_one_line_error(*run(capsys, *argv), f"{option} {argv[argv.index(option) + 1]}", why)


def test_simulate_long_run_energy_error_is_small(capsys):
    """A correct 100 s run: eq. (55) divides by the largest T2 over every accepted step, not
    by a coarsely sampled kinetic-energy peak (which gave 3e5 here)."""
    code, out, err = run(capsys, "simulate", "FLX", "--t-end", "100", "-q")
    assert code == EXIT_OK, err
    line = next(x for x in out.splitlines() if x.startswith("kinetic energy-work check"))
    assert float(line.split("e_R =")[1].split()[0]) < ENERGY_ERROR_LONG_RUN


# ---------------------------------------------------------------- segment ramp
def test_ramp_prints_events_failure_loads_and_final_state(capsys, tmp_path):
    out_csv = tmp_path / "flx_ramp.csv"
    code, out, err = run(capsys, "ramp", "FLX", "--to-scale", "5", "--steps", "25",
                         "--out", out_csv)
    assert code == EXIT_OK, err
    direct = segment.ramp(segment.c5c6(), segment.LOAD_CASES["FLX"], to_scale=5.0, steps=25)
    assert f"status: {direct.message}" in out
    assert "ruptured: FL" in out and "F_max: FL" in out
    first = direct.first_rupture_scale
    assert f"first rupture: scale {first:.4g} ({first * 1.8:.4g} N m)" in out
    assert "ruptured" in out.splitlines()[-8]     # the final state table's header
    frame = pd.read_csv(out_csv, keep_default_na=False)
    np.testing.assert_allclose(frame["scale"], direct.frame["scale"], rtol=1e-12)
    assert list(frame["event"]) == list(direct.frame["event"])


def test_ramp_prints_the_validity_limit_and_its_source(capsys, tmp_path):
    """Issue 20: `segment ramp FLX --to-scale 10000` stops at the validity limit (flexion
    21.6 deg, the training specimens of Nightingale et al. 2002), says what lies beyond, and
    reports no ultimate load there; --no-limit gives the path past it (ultimate 56.6 N m in
    any step size)."""
    out_csv = tmp_path / "flx.csv"
    code, out, err = run(capsys, "ramp", "FLX", "--to-scale", "10000", "--out", out_csv)
    assert code == EXIT_OK, err
    assert ("validity limit: flexion beyond 21.6 deg from the unloaded equilibrium, at scale "
            "3.562, reached by rupture of CL-left and CL-right; source: Nightingale et al. "
            "2002 (SOURCES.md §8, §15)") in out
    assert "carries the load without a failure law: not a prediction" in out
    assert "ultimate: not predicted (beyond the validity limit); validity limit: scale 3.562 " \
           "(6.412 N m)" in out
    frame = pd.read_csv(out_csv, keep_default_na=False)
    assert {"main_from_unloaded_deg", "within_limit", "x_mm", "phi_y_deg"} <= set(frame.columns)
    assert frame["main_from_unloaded_deg"][frame["within_limit"]].max() <= 21.6 + 1e-6
    code, out, err = run(capsys, "ramp", "FLX", "--to-scale", "10000", "--no-limit", "--json")
    d = json.loads(out)
    assert d["validity_limit"] is None and d["validity_limit_applied"] is False
    assert round(d["failure_loads"]["ultimate_Nm"], 1) == 56.6
    code, out, err = run(capsys, "ramp", "FLX", "--to-scale", "10", "--json")
    d = json.loads(out)
    assert d["validity_limit"]["source"].startswith("Nightingale et al. 2002")
    assert d["failure_loads"]["limit_rule"] == d["validity_limit"]["description"]


def test_ramp_json_and_strips(capsys):
    code, out, err = run(capsys, "ramp", "AR", "--to-scale", "6", "--steps", "12",
                         "--strips", "2", "--json")
    assert code == EXIT_OK, err
    d = json.loads(out)
    assert d["failure_loads"]["sequence"][0].startswith("CL-")
    assert d["failure_loads"]["ultimate_scale"] is None        # not reached: null, not NaN
    assert len(d["ligaments"]) == 12 and all("ruptured" in x for x in d["ligaments"])


@pytest.mark.parametrize(("argv", "mentions"), [
    (("ramp", "FLX", "--to-scale", "0"), ("--to-scale", "0")),
    (("ramp", "FLX"), ("--to-scale",)),
    (("ramp", "FLX", "--to-scale", "2", "--steps", "0"), ("--steps", "0")),
    (("ramp", "FLX", "--to-scale", "2", "--strips", "0"), ("--strips", "0")),
    (("ramp", "XYZ", "--to-scale", "2"), ("XYZ",)),
    (("ramp", "FLX", "--to-scale", "1e300"), ("--to-scale", "at most 1e+06", "1e+300")),
])
def test_ramp_bad_arguments_one_line_exit_2(capsys, argv, mentions):
    assert_one_line_error(*run(capsys, *argv), *mentions)


@pytest.mark.slow
def test_sensitivity_sobol_writes_indices_and_heat_maps(tmp_path, capsys):
    from segment.cli import main as cli_main

    out = tmp_path / "sens"
    code = cli_main(["sensitivity", "--n", "1500", "--out", str(out), "--quiet",
                     "--save-samples"])
    text = capsys.readouterr().out
    assert code == 0
    assert "LS main: dominated by disc_y" in text
    for name in ("sobol_indices.csv", "sobol_ST.png", "sobol_S1.png", "samples.parquet"):
        assert (out / name).stat().st_size > 0
    import pandas as pd

    df = pd.read_csv(out / "sobol_indices.csv")
    assert {"output", "parameter", "S1", "S1_conf", "ST", "ST_conf"} <= set(df.columns)
    assert len(df) == 21 * (9 + 9 + 3)


@pytest.mark.slow
def test_sensitivity_tornado_and_bad_space_file(tmp_path, capsys):
    from segment.cli import main as cli_main
    from segment.studies.space import default_space_path

    code = cli_main(["sensitivity", "--method", "tornado", "--out", str(tmp_path / "t")])
    assert code == 0 and (tmp_path / "t" / "tornado.csv").exists()
    bad = tmp_path / "space.csv"
    bad.write_text(default_space_path().read_text().replace("disc:phi_z", "disc:phi_w"))
    code = cli_main(["sensitivity", "--space", str(bad), "--out", str(tmp_path / "u")])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.startswith("segment: error: space.csv, line 22 (row 21), column 'element': "
                          "unknown disc "
                          "'phi_w'")


# ---------------------------------------------------------------- issue 20: plumbing
EXIT_BROKEN_PIPE = 141      # 128 + SIGPIPE: what a shell reports for a program SIGPIPE ended


@pytest.mark.parametrize("argv", [["cases"], ["solve", "FLX"], ["ramp", "FLX", "--to-scale",
                                                                "5"]])
def test_a_closed_pipe_ends_quietly(argv, tmp_path):
    """``segment ... | head -2`` printed "segment: error: : Broken pipe" with exit code 2."""
    code = ("import os, sys\nr, w = os.pipe()\nos.close(r)\nos.dup2(w, 1)\n"
            f"from segment.cli import main\nsys.exit(main({argv!r}))\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=SUBPROCESS_TIMEOUT_S, check=False)
    assert proc.returncode == EXIT_BROKEN_PIPE, proc.stderr
    assert proc.stderr == ""


def test_validate_refuses_a_missing_parent_folder_like_every_command(tmp_path, capsys):
    code, out, err = run(capsys, "validate", "--out", tmp_path / "no" / "such" / "report")
    assert code == EXIT_USAGE and out == ""
    assert err.strip() == (f"segment: error: --out {tmp_path / 'no' / 'such' / 'report'}: "
                           f"folder {tmp_path / 'no' / 'such'} does not exist")
    assert not (tmp_path / "no").exists()


@pytest.mark.parametrize("where", ["before", "after"])
def test_validate_refuses_allow_implausible_in_one_line(where, tmp_path, capsys):
    """The report checks its data strictly: the option was accepted and silently ignored."""
    argv = (["--allow-implausible", "validate"] if where == "before"
            else ["validate", "--allow-implausible"])
    code, out, err = run(capsys, *argv, "--out", tmp_path / "r")
    assert code == EXIT_USAGE and out == ""
    assert err.startswith("segment: error: --allow-implausible: the validation report checks")
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("tty", [True, False])
@pytest.mark.parametrize("precompiled", [True, False])
def test_a_compile_is_announced_in_a_terminal_only(tty, precompiled, capsys, monkeypatch):
    """One line when numba must compile (no precompiled kernels, empty cache), in a terminal;
    nothing when the kernels are precompiled."""
    from segment import jit
    from segment.jit import cache

    reason = "precompiled" if precompiled else "no precompiled kernels (test)"
    monkeypatch.setattr(jit, "status", lambda: {"precompiled": precompiled, "reason": reason,
                                                "entry_points": 0, "numba_imported": False})
    monkeypatch.setattr(cache, "is_cold", lambda folder=None: True)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: tty)
    code, _, err = run(capsys, "solve", "FLX")
    assert code == EXIT_OK
    notice = [line for line in err.splitlines() if "compiling the numba kernels" in line]
    assert len(notice) == (1 if tty and not precompiled else 0), err
    if notice:
        assert f"about {cache.COLD_COMPILE_S} s" in notice[0] and reason in notice[0]
    code, _, err = run(capsys, "cases")              # lists data only: compiles nothing
    assert "compiling" not in err


def test_is_cold_reads_the_cache_folder(tmp_path):
    from segment.jit import cache

    assert cache.is_cold(tmp_path)
    (tmp_path / "model-1.py311.nbi").write_bytes(b"")
    assert not cache.is_cold(tmp_path)
