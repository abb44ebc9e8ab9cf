"""``segment simulate``: the base excitation of Fritzkowski and Walczak, payload and LSV options,
one unit convention (mm, degrees) labelled everywhere, and one-line errors for bad options."""

import numpy as np
import pandas as pd
import pytest

import segment
from segment import cli

EXIT_OK, EXIT_USAGE = 0, 2
TABLE_ATOL = 0.0005 + 1e-9     # the tables print 3 decimals
DONE_WHEN = ["simulate", "--base-pulse", "triangular", "--peak-g", "8.5", "--duration", "0.105",
             "--t-end", "0.3"]


def run(capsys, *argv):
    try:
        code = cli.main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code, out, err, *mentions):
    assert code == EXIT_USAGE, (code, out, err)
    assert out == "" and "Traceback" not in err
    assert err.startswith("segment: error:") and err.count("\n") == 1, repr(err)
    for text in mentions:
        assert text in err, err


def test_the_issues_command_prints_e_r_and_writes_the_history(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *DONE_WHEN)
    assert code == EXIT_OK, err
    assert "triangular pulse 8.5 g peak at 52.5 ms, 105 ms, along +x" in out
    line = next(x for x in out.splitlines() if x.startswith("kinetic energy-work check"))
    assert "e_R = " in line and "eq. (55)" in line and "relative to the largest energy" in line
    assert float(line.split("e_R = ")[1].split()[0]) < 1e-3
    assert "not validated against whiplash experiments" in out
    assert "C5 relative to C6, displacement from the pose at t = 0" in out
    frame = pd.read_csv(tmp_path / "simulate_history.csv")
    assert len(frame) == 301 and frame["t_s"].iloc[-1] == pytest.approx(0.3)
    assert not [c for c in frame.columns if "rad" in c]
    for col in ("phi_y_deg", "dphi_y_deg_per_s", "x_mm", "dx_mm_per_s", "c6_ax_g",
                "c6_space_dx_mm", "c5_space_dx_mm", "c5_space_vx_mm_per_s", "ivr_phi_y_deg",
                "e_R_eq55", "work_transport_Nmm"):
        assert col in frame.columns, col
    pulse = segment.solvers.dynamics.BaseExcitation.triangular(peak_g=8.5, duration_s=0.105)
    np.testing.assert_allclose(frame["c6_ax_g"], pulse.acceleration(frame["t_s"])[:, 0] / 9810,
                               rtol=1e-12, atol=1e-12)
    # the printed extremes are the history's, relative to the pose at t = 0
    row = next(x for x in out.splitlines() if x.startswith("min phi_y")).split()
    assert float(row[-2]) == pytest.approx(frame["ivr_phi_y_deg"].min(), abs=TABLE_ATOL)


def test_load_run_table_says_it_measures_from_the_unloaded_equilibrium(capsys, tmp_path):
    out_csv = tmp_path / "ar.csv"
    code, out, err = run(capsys, "simulate", "AR", "--t-end", "0.3", "--out", out_csv)
    assert code == EXIT_OK, err
    assert ("displacement of C5 from the unloaded equilibrium (as segment solve prints): "
            "x y z [mm], phi_x phi_y phi_z [deg]") in out
    model = segment.c5c6()
    static = segment.solve(model, segment.LOAD_CASES["AR"])
    row = next(x for x in out.splitlines() if x.startswith("static")).split()[1:]
    expected = static.displacement_from_unloaded
    np.testing.assert_allclose([float(v) for v in row],
                               np.concatenate([expected[:3], np.degrees(expected[3:])]),
                               atol=TABLE_ATOL)
    # the CSV is in mm and degrees, from the reference pose, and says so in its names
    frame = pd.read_csv(out_csv)
    sim = segment.simulate(model, segment.LOAD_CASES["AR"], t_end=0.3)
    np.testing.assert_allclose(frame["phi_z_deg"], np.degrees(sim.q[:, 5]), rtol=1e-9)
    np.testing.assert_allclose(frame["dphi_z_deg_per_s"], np.degrees(sim.qd[:, 5]), rtol=1e-9,
                               atol=1e-9)
    np.testing.assert_allclose(frame["x_mm"], sim.q[:, 0], rtol=1e-9, atol=1e-12)
    assert "from the reference pose in mm and degrees" in out


def test_payload_lsv_and_a_csv_pulse(capsys, tmp_path):
    pulse = tmp_path / "pulse.csv"
    pulse.write_text("t_s,ax_g\n0,0\n0.01,4\n0.02,0\n")
    out_csv = tmp_path / "h.csv"
    code, out, err = run(capsys, "simulate", "--base-csv", pulse, "--t-end", "0.03",
                         "--payload-mass", "0.5", "--payload-inertia", "20", "20", "10",
                         "--payload-cog", "0", "0", "20", "--gravity", "--method", "lsv",
                         "--dt", "2e-5", "--n-output", "31", "--out", out_csv)
    assert code == EXIT_OK, err
    assert "payload (0.5 kg, inertia (20, 20, 10) kg cm^2" in out
    assert "lsv-implicit" in out and "steps" in out
    frame = pd.read_csv(out_csv)
    assert frame["c6_ax_g"].max() == pytest.approx(4.0)    # 0.01 s is an output time
    assert len(frame) == 31


BAD = {
    "nothing to simulate": (["simulate"], "needs a load case (CASE), a base excitation"),
    "peak-g zero": (["--peak-g", "0"], "--peak-g must lie in (0, 100], got 0"),
    "peak-g huge": (["--peak-g", "850"], "--peak-g must lie in (0, 100]"),
    "peak-g nan": (["--peak-g", "nan"], "expected a finite number"),
    "peak-g text": (["--peak-g", "high"], "expected a number, got 'high'"),
    "duration": (["--duration", "105"], "--duration must lie in (0, 10]"),
    "peak-at": (["--peak-at", "1"], "--peak-at must lie in (0, 1)"),
    "t-end huge": (["--t-end", "1e9"], "--t-end must lie in (0, 1000]"),
    "t-end negative": (["--t-end", "-1"], "--t-end must lie in (0, 1000]"),
    "too many lsv steps": (["--t-end", "1000", "--method", "lsv"],
                           "steps; at most 10,000,000: shorten --t-end"),
    "dt range": (["--method", "lsv", "--dt", "1e-9"], "--dt must lie in [1e-07, 0.001]"),
    "dt with radau": (["--dt", "1e-5"], "--dt is the step of --method lsv"),
    "n-output": (["--n-output", "1"], "--n-output must lie in [2, 100000]"),
    "both bases": (["--base-csv", "x.csv"], "give --base-pulse or --base-csv, not both"),
    "payload partial": (["--payload-mass", "4"], "a payload needs --payload-mass, "
                                                 "--payload-inertia and --payload-cog"),
    "payload mass": (["--payload-mass", "4500", "--payload-inertia", "1", "1", "1",
                      "--payload-cog", "0", "0", "0"], "--payload-mass must lie in (0, 100]"),
    "payload triangle": (["--payload-mass", "4", "--payload-inertia", "1", "1", "3",
                          "--payload-cog", "0", "0", "0"],
                         "--payload-inertia: principal moments"),
    "payload inertia count": (["--payload-mass", "4", "--payload-inertia", "1", "1", "1", "1",
                               "--payload-cog", "0", "0", "0"], "takes 3 or 6 numbers, got 4"),
    "payload inertia text": (["--payload-mass", "4", "--payload-inertia", "1", "a", "1",
                              "--payload-cog", "0", "0", "0"], "expected a number, got 'a'"),
    "payload cog": (["--payload-mass", "4", "--payload-inertia", "1", "1", "1",
                     "--payload-cog", "0", "0", "5000"], "within 1000 mm"),
    "payload asymmetric sign": (["--payload-mass", "4", "--payload-inertia", "1", "1", "1",
                                 "-5", "0", "0", "--payload-cog", "0", "0", "0"],
                                "positive definite"),
}


@pytest.mark.parametrize(("extra", "why"), BAD.values(), ids=BAD.keys())
def test_bad_options_are_one_line_errors(capsys, tmp_path, monkeypatch, extra, why):
    monkeypatch.chdir(tmp_path)

    def forbidden(*a, **k):
        raise AssertionError("the simulation started before the options were checked")

    import segment.solvers.dynamics
    monkeypatch.setattr(segment.solvers.dynamics, "simulate", forbidden)
    argv = extra if extra[:1] == ["simulate"] else [*DONE_WHEN[:3], *extra]
    assert_one_line_error(*run(capsys, *argv), why)
    assert not (tmp_path / "simulate_history.csv").exists()


def test_bad_acceleration_table_names_file_row_and_column(capsys, tmp_path):
    table = tmp_path / "sled.csv"
    table.write_text("t_s,ax_g\n0,0\n0.02,8.5\n0.01,0\n")
    assert_one_line_error(*run(capsys, "simulate", "--base-csv", table),
                          "sled.csv, line 4 (row 3), column 't_s'", "increase strictly")
    assert_one_line_error(*run(capsys, "simulate", "--base-csv", tmp_path / "none.csv"),
                          "none.csv", "file not found")
