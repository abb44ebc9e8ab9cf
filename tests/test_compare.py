"""Clinical states compared (segment.studies.compare, ``segment compare``, ``segment states``)."""

import json
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import segment
from segment.cli import main
from segment.core.io import data_dir

LOADS = {k: segment.LOAD_CASES[k] for k in ("FLX", "AR")}


@pytest.fixture(scope="module")
def comparison():
    return segment.compare_states(segment.c5c6(), "laminectomy,facetectomy-right-100", LOADS)


def test_both_baselines_and_changes_from_intact(comparison):
    f = comparison.frame.set_index(["state", "load"])
    assert comparison.states == ("intact", "laminectomy", "facetectomy-right-100")
    intact_u = segment.c5c6().unloaded.q
    for state, model in comparison.models.items():
        for name, load in LOADS.items():
            r = segment.solve(model, load)
            dof = load.main_dof
            own = np.degrees((r.q - model.unloaded.q)[dof])
            ref = np.degrees((r.q - intact_u)[dof])
            assert f.loc[(state, name), "main_own"] == pytest.approx(own, abs=1e-12)
            assert f.loc[(state, name), "main_from_intact"] == pytest.approx(ref, abs=1e-12)
            base = f.loc[("intact", name)]
            assert f.loc[(state, name), "change_own"] == pytest.approx(own - base["main_own"])
    # the intact rows are their own reference; the user's question (issue 23)
    assert (f.loc["intact", "change_own"] == 0).all()
    assert f.loc[("laminectomy", "FLX"), "main_own"] == pytest.approx(5.135, abs=5e-4)
    assert f.loc[("facetectomy-right-100", "AR"), "main_own"] == pytest.approx(3.717, abs=5e-4)
    # own and intact baselines differ by the change of the unloaded pose
    du = comparison.unloaded.set_index("state").loc["laminectomy", "d_phi_y_deg"]
    lam = f.loc[("laminectomy", "FLX")]
    assert lam["main_from_intact"] - lam["main_own"] == pytest.approx(du, abs=1e-12)
    assert f.loc[("laminectomy", "FLX"), "FL_N"] == 0.0       # cut: carries nothing
    assert f.loc[("facetectomy-right-100", "AR"), "facet_right_N"] == 0.0


def test_needs_the_intact_model_and_known_states():
    with pytest.raises(ValueError, match="needs the intact model, got one in state "
                                         "'laminectomy'"):
        segment.compare_states(segment.c5c6(state="laminectomy"), "fusion", LOADS)
    with pytest.raises(ValueError, match="unknown clinical state 'bogus'"):
        segment.compare_states(segment.c5c6(), "bogus", LOADS)


def test_ramps_compare_the_failure_sequence():
    c = segment.compare_states(segment.c5c6(), ["laminectomy"], {"FLX": LOADS["FLX"]},
                               ramp_to_scale=10, steps=40)
    fail = c.failure.set_index("state")
    assert fail.loc["intact", "sequence"].startswith("FL > ISL")
    assert "FL" not in fail.loc["laminectomy", "sequence"].split(" > ")
    assert fail.loc["intact", "unit"] == "N m"


def test_json_has_no_nan(comparison):
    text = json.dumps(comparison.to_dict(), allow_nan=False)
    assert "baselines" in json.loads(text)


@pytest.mark.slow
def test_cli_compare_with_data_folder_out_and_json(tmp_path, capsys):
    folder = tmp_path / "data"
    shutil.copytree(data_dir(), folder, ignore=shutil.ignore_patterns("calibrated", "*.py"))
    # the user's model, never the package defaults: a stiffer disc in flexion changes FLX
    rot = folder / "disc_rotational.csv"
    rot.write_text(rot.read_text(encoding="utf-8").replace("k_phiy+,phi_y,+,FLX,0.21",
                                                           "k_phiy+,phi_y,+,FLX,0.42"),
                   encoding="utf-8")
    out = tmp_path / "cmp"
    code = main(["--data", str(folder), "compare", "--states", "intact,laminectomy",
                 "FLX", "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 0
    assert "own:" in text and "intact:" in text and "laminectomy" in text
    assert f"states from {folder}/states.csv" in text
    table = pd.read_csv(out / "comparison.csv")
    mine = segment.c5c6(data_dir=folder)
    flx = np.degrees(segment.solve(mine, LOADS["FLX"]).displacement_from_unloaded[4])
    assert table.loc[table.state == "intact", "main_own"].iloc[0] == pytest.approx(flx)
    assert (out / "comparison.png").stat().st_size > 10_000
    assert (out / "unloaded.csv").exists()
    code = main(["compare", "--states", "laminectomy", "FLX", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["states"] == ["intact", "laminectomy"]


def test_cli_errors_are_one_line(capsys):
    assert main(["compare", "--states", "intact,nonsense", "FLX"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("segment: error: unknown clinical state 'nonsense'")
    assert err.count("\n") == 1
    assert main(["solve", "FLX", "--state", "laminectomy+posterior-removed"]) == 2
    assert "ligament FL was already changed by state 'laminectomy'" in capsys.readouterr().err


def test_cli_state_option_and_states_listing(capsys):
    assert main(["solve", "FLX", "AR", "--state", "laminectomy"]) == 0
    out = capsys.readouterr().out
    assert "clinical state: laminectomy" in out and "5.135" in out
    assert main(["ramp", "FLX", "--to-scale", "5", "--steps", "20", "--state",
                 "laminectomy"]) == 0
    assert "clinical state: laminectomy" in capsys.readouterr().out
    assert main(["states"]) == 0
    out = capsys.readouterr().out
    assert "facetectomy-right-50" in out and "resect right 50 %; cut CL-right 50 %" in out


@pytest.mark.slow
def test_python_m_segment_compare_runs():
    out = subprocess.run([sys.executable, "-m", "segment", "compare", "--states",
                          "facetectomy-right-100", "AR"], capture_output=True, text=True,
                         check=False, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "3.717" in out.stdout
