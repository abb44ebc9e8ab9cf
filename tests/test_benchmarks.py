"""The benchmark scripts the README lists run and write their JSON (tiny settings: the
numbers themselves are measured by running the scripts, never checked here)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # runs every benchmark script

ROOT = Path(__file__).resolve().parents[1]

SMOKE = {
    "bench_solve.py": ["--repeat", "2"],
    "bench_dynamics.py": ["--repeat-newton", "2", "--repeat-relax", "1", "--rounds", "2"],
    "bench_batch.py": ["--n", "200", "--n-single", "10"],
    "bench_explore.py": ["--steps", "2", "--size", "320", "240"],
    "bench_web_explorer.py": ["--moves", "3", "--warmup", "1", "--size", "640", "480"],
    "bench_kernels.py": ["--n", "100"],
    "bench_cli.py": ["--repeat", "1"],
    "bench_cold_start.py": ["--repeat", "1", "--skip-validate"],
    "bench_validate_cpu.py": ["--repeat", "1", "--warmup", "0"],
    "bench_ramp.py": ["--repeat", "1", "--to-scale", "10"],
    "bench_calibration.py": ["--samples", "640", "--walkers", "64", "--baseline", "4",
                             "--repeat", "1"],
    "bench_curves.py": ["--samples", "640", "--baseline", "4", "--repeat", "1",
                        "--specimens", "2"],
    "bench_sensitivity_parts.py": ["--sets", "16", "--repeat", "10"],
    "bench_lsv.py": ["--free-steps", "1000", "--rounds", "1", "--t-end", "0.02",
                     "--conv-t-end", "0.01", "--dts", "2e-5", "1e-5", "--stiff-t-end", "0.004",
                     "--free-t-end", "0.002"],
    "bench_study.py": ["--sets", "40", "--baseline-sets", "4", "--sens-sets", "8",
                       "--sobol-n", "1500", "--rounds", "1", "--sens-rounds", "2"],
}


@pytest.mark.parametrize("script", sorted(SMOKE))
def test_benchmark_script_runs(script, tmp_path):
    if script == "bench_web_explorer.py":
        from segment.views._chromium import chromium_path

        if chromium_path() is None:
            pytest.skip("Debian's chromium is not installed (scripts/setup.sh installs it "
                        "with [dev])")
    out = tmp_path / "out.json"
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), *SMOKE[script],
                    "--out", str(out)], check=True, capture_output=True, text=True,
                   cwd=ROOT / "benchmarks", timeout=600)
    report = json.loads(out.read_text())
    assert report  # each script writes a non-empty JSON object
    if script == "bench_web_explorer.py":
        assert report["not_converged"] == 0
        assert 0 < report["slider_to_drawn"]["median"] <= report["slider_to_image"]["max"]
    if script == "bench_validate_cpu.py":
        assert report["exit_codes"] == [0]
        run = report["runs_s"][0]
        assert run["total_cpu_s"] >= run["main_thread_cpu_s"] > 0
        (read, drawn), = report["pictures_read_drawn"]     # no warm-up: an empty cache
        assert read == 0 and drawn > 0
    if script == "bench_curves.py":
        assert report["each"]["converged"] == 2
        assert report["continuation"]["converged_fraction"] == 1.0
        assert report["continuation"]["same_equilibria_max_abs_q"] < 1e-8
        assert report["posterior"]["draws"] == 640
    if script == "bench_ramp.py":
        assert len(report["cases"]) == 9
        assert report["cases"]["FLX"]["sequence"][:2] == ["FL", "ISL"]
        assert report["cases"]["FLX"]["validity_limit"].startswith("flexion beyond 21.6 deg")
    if script == "bench_study.py":
        assert report["sets"]["converged_fraction"] == 1.0
        assert report["loop_solve_many"]["max_abs_q_difference"] < 1e-8
        assert report["sensitivities"]["finite_fraction"] == 1.0
        assert report["sobol"]["failed"] == 0
    if script == "bench_sensitivity_parts.py":
        assert len(report["per_equilibrium"]) == 9
        assert all(v > 0 for row in report["per_equilibrium"].values() for v in row.values())
        assert report["pack_derivative"]["speedup"] > 0
    if script == "bench_lsv.py":
        for variant in ("implicit", "explicit"):
            assert report["free_body"][variant]["max_orthogonality_error"] < 1e-12
        rows = report["convergence"]["pulse"]["lsv"]
        assert 1.5 < rows[1]["observed_order_mm"] < 2.5
        assert report["cost"]["lsv"]["time_ratio_to_radau_median"] > 0
        assert report["stiff"]["explicit_stability_limit_s"] > 0
    if script == "bench_dynamics.py":
        assert set(report["cases"]) == {"AS", "PS", "LS", "TNS", "CMP", "LB", "FLX", "EXT",
                                        "AR"}
        for case in report["cases"].values():
            assert case["relax_converged"]
            assert case["max_rotation_difference_rad"] < 1e-4
            lo, mid, hi = (case[k]["reference"] for k in
                           ("ratio_min_over_rounds", "ratio", "ratio_max_over_rounds"))
            assert 0 < lo <= mid <= hi


def test_before_after_arm_prints_one_json_line():
    """``bench_sets_ab.py`` (one arm of an alternating old/new comparison) prints its JSON."""
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_sets_ab.py"), "smoke",
                          "--sets", "16", "--sens-sets", "8"], check=True, capture_output=True,
                         text=True, cwd=ROOT / "benchmarks", timeout=600)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["label"] == "smoke" and report["converged"] == 1.0
    assert report["rate_best"] > 0 and report["sens_ratio_of_medians"] > 0
