"""Calibration: the targets file's bad inputs, the exact Jacobian of the predictions, synthetic
recovery (truth inside the 95 % interval), prior-determined parameters, structural misfit with
the parameter that would have to leave its range, the calibrated data folder and the shipped
set's staleness, MCMC diagnostics, and the CLI's exit codes."""

import csv
import math

import numpy as np
import pandas as pd
import pytest

import segment
from segment.studies import calibration as cal
from segment.studies.calibration import (
    Targets,
    calibrate,
    load_targets,
    reach,
    sample_posterior,
    shipped_calibrated_dir,
    split_rhat,
    write_calibrated,
)
from segment.studies.calibration.targets import _frozen
from segment.studies.space import load_space

Z95 = 1.959963984540054
# finite differences of re-solved equilibria vs the exact dy/dp (as tests/test_sensitivity.py)
JACOBIAN_RTOL = 2e-4
# noise-free synthetic targets with 1 % SDs: a data-determined parameter lands on the truth
# to the optimizer's tolerance (ftol 1e-10), far inside its posterior SD
RECOVERY_ATOL_SD = 0.05
# the shipped set is written to 6 significant digits
SHIPPED_RTOL = 1e-5
# the MAP of an unseen lognormal parameter sits at the mode of its log-residual, exp(mu), to
# the optimizer's tolerances (its gradient there is tiny)
PRIOR_MODE_RTOL = 2e-3
DISC_RATES = ["disc_x", "disc_z", "disc_phi_x", "disc_phi_y", "disc_phi_z"]


@pytest.fixture(scope="module")
def space():
    return load_space()


@pytest.fixture(scope="module")
def targets():
    return load_targets()


# ---------------------------------------------------------------------------- targets file
def test_default_targets_are_moroney_responses_with_assumed_sds(targets):
    assert len(targets) == 13
    assert set(targets.sd_basis) == {"assumed"}
    i = targets.labels.index("AR intact phi_z_deg")
    assert targets.values[i] == pytest.approx(1.8 / 1.16, rel=1e-4)
    i = targets.labels.index("FLX disc segment phi_y_deg")
    assert targets.values[i] == pytest.approx(1.8 / 0.21, rel=1e-4)
    assert np.all(targets.sd > 0)


def _write(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)


def _rows():
    with open(cal.default_targets_path(), newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


@pytest.mark.parametrize(("column", "value", "message"), [
    ("case", "XYZ", "column 'case': unknown value 'XYZ'"),
    ("configuration", "cadaver", "column 'configuration': unknown value 'cadaver'"),
    ("quantity", "phi_q_deg", "column 'quantity': unknown value 'phi_q_deg'"),
    ("SD", "0", "column 'SD': must be > 0, got 0"),
    ("SD", "-0.1", "column 'SD': must be > 0, got -0.1"),
    ("SD", "nan", "column 'SD': expected a finite number, got 'nan'"),
    ("value", "inf", "column 'value': expected a finite number, got 'inf'"),
    ("value", "", "column 'value': expected a number, got '' (an empty cell)"),
    ("value", "abc", "column 'value': expected a plain number (the unit is in the column "
                     "header), got 'abc'"),
    ("SD_basis", "guessed", "column 'SD_basis': unknown value 'guessed'"),
    ("source", "", "column 'source': empty"),
])
def test_bad_target_is_a_clear_error(tmp_path, column, value, message):
    rows = _rows()
    rows[2][rows[0].index(column)] = value
    path = tmp_path / "t.csv"
    _write(path, rows)
    with pytest.raises(ValueError, match="t.csv, line 3 \\(row 2\\), " + _re(message)):
        Targets.from_csv(path)


def _re(text):
    import re

    return re.escape(text)


def test_targets_file_structure_errors(tmp_path):
    rows = _rows()
    path = tmp_path / "t.csv"
    _write(path, [rows[0][:-1]] + [r[:-1] for r in rows[1:]])
    with pytest.raises(ValueError, match=r"missing column\(s\) \['source'\]"):
        Targets.from_csv(path)
    _write(path, [rows[0], rows[1], rows[1]])
    with pytest.raises(ValueError, match=r"\(row 2\): duplicate target"):
        Targets.from_csv(path)
    _write(path, [rows[0]])
    with pytest.raises(ValueError, match="no data rows"):
        Targets.from_csv(path)
    _write(path, [rows[0], rows[1][:3]])
    with pytest.raises(ValueError, match=r"\(row 1\): expected 7 fields \(.*\), got 3"):
        Targets.from_csv(path)
    with pytest.raises(ValueError, match="targets file not found"):
        Targets.from_csv(tmp_path / "missing.csv")
    with pytest.raises(ValueError, match="SD factor must be a finite number > 0"):
        load_targets().with_sd_scaled(0)


def test_targets_share_the_io_reader(tmp_path, targets):
    """Byte-order mark accepted, a ';'-separated file gets a hint, every error of the file in
    one message naming line, row, column and value."""
    rows = _rows()
    path = tmp_path / "t.csv"
    _write(path, rows)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    back = Targets.from_csv(path)
    assert back.labels == targets.labels
    np.testing.assert_array_equal(back.values, targets.values)
    path.write_text(";".join(rows[0]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"separated by ';' \(semicolons\), not commas"):
        Targets.from_csv(path)
    bad = [list(r) for r in rows]
    bad[1][rows[0].index("SD")] = "-1"
    bad[3][rows[0].index("case")] = "XYZ"
    bad[5][rows[0].index("value")] = "1,5"
    _write(path, bad)
    with pytest.raises(ValueError) as exc:
        Targets.from_csv(path)
    text = str(exc.value)
    assert text.startswith("t.csv: 3 errors: ")
    for part in ("line 2 (row 1), column 'SD': must be > 0, got -1",
                 "line 4 (row 3), column 'case': unknown value 'XYZ'",
                 "line 6 (row 5), column 'value': expected a number, got '1,5': a decimal "
                 "comma?"):
        assert part in text


# ---------------------------------------------------------------------------- forward model
def test_prediction_jacobian_matches_resolved_equilibria(model, space, targets):
    fwd = cal.Forward(model, space, targets)
    p = space.nominal.copy()
    p[space.names.index("facet_gap")] = 0.2           # away from the gap's bound
    _, ok, J = fwd(p[None], sensitivities=True)
    assert ok[0]
    for j in range(space.dim):
        h = 1e-4 * (space.upper[j] - space.lower[j])
        P = np.array([p, p])
        P[0, j] += h
        P[1, j] -= h
        y, ok2, _ = fwd(P)
        assert ok2.all()
        fd = (y[0] - y[1]) / (2 * h)
        scale = max(np.abs(J[0, :, j]).max(), 1e-12)
        np.testing.assert_allclose(J[0, :, j], fd, atol=JACOBIAN_RTOL * scale,
                                   err_msg=space.names[j])


def test_wrong_jacobian_would_be_caught(model, space, targets):
    """The check above bites: a Jacobian column swapped for another's fails it."""
    fwd = cal.Forward(model, space, targets)
    p = space.nominal.copy()
    _, _, J = fwd(p[None], sensitivities=True)
    j, k = space.names.index("disc_phi_y"), space.names.index("disc_phi_z")
    h = 1e-4 * 0.4
    P = np.array([p, p])
    P[0, j] += h
    P[1, j] -= h
    y, _, _ = fwd(P)
    fd = (y[0] - y[1]) / (2 * h)
    assert not np.allclose(J[0, :, k], fd, atol=JACOBIAN_RTOL * np.abs(fd).max())


# ---------------------------------------------------------------------------- recovery
@pytest.fixture(scope="module")
def synthetic(model, space, targets):
    sub = space.subset([*DISC_RATES, "facet_gap", "l0_CL"])
    truth = np.array([0.9, 1.1, 0.93, 1.12, 0.95, 0.2, 6.2])
    y, ok, _ = cal.Forward(model, sub, targets)(truth[None])
    assert ok[0]
    synth = Targets(cases=targets.cases, configurations=targets.configurations,
                    quantities=targets.quantities, values=_frozen(y[0]),
                    sd=_frozen(0.01 * np.abs(y[0])), sd_basis=targets.sd_basis,
                    sources=targets.sources, path="synthetic.csv")
    return sub, truth, synth, calibrate(model, synth, space=sub)


def test_synthetic_recovery_truth_inside_95_percent_interval(synthetic):
    sub, truth, _, r = synthetic
    assert r.success, r.message
    assert np.all((r.x >= sub.lower) & (r.x <= sub.upper))
    inside = np.abs(r.x - truth) <= Z95 * r.posterior_sd
    assert inside.all(), dict(zip(sub.names, r.x - truth, strict=True))
    for j, name in enumerate(sub.names):
        if r.verdicts[j] == "data":
            assert abs(r.x[j] - truth[j]) <= RECOVERY_ATOL_SD * r.posterior_sd[j], name
    assert {sub.names[j] for j, v in enumerate(r.verdicts) if v == "data"} >= set(DISC_RATES)
    assert not r.misfit and len(r.misfits) == 0
    assert np.allclose(r.correlation, r.correlation.T)
    assert np.allclose(np.diag(r.correlation), 1.0)


def test_caller_arrays_unchanged(model, synthetic):
    sub, _, synth, _ = synthetic
    x0 = sub.nominal.copy()
    before = x0.copy()
    calibrate(model, synth, space=sub, x0=x0, misfit_check=False)
    np.testing.assert_array_equal(x0, before)


def test_parameter_the_targets_cannot_see_is_prior_determined(model, space, targets):
    """Disc-segment targets have no facets and no posterior ligaments: those parameters keep
    their prior (posterior SD = prior SD, verdict 'prior', MAP where it started)."""
    disc_rows = [i for i, g in enumerate(targets.configurations) if g == "disc segment"]
    r = calibrate(model, targets.subset(disc_rows), space=space)
    assert r.success
    for name in ("facet_gap", "facet_blend_C", "l0_FL", "stiffness_ISL", "l0_CL"):
        j = space.names.index(name)
        assert r.verdicts[j] == "prior", name
        assert r.posterior_sd[j] == pytest.approx(r.prior_sd[j], rel=1e-9)
        if space.distributions[j] == "uniform":      # flat: stays where it started
            assert r.x[j] == pytest.approx(space.nominal[j], abs=1e-9)
        else:                                        # pulled to the prior's mode only
            assert r.x[j] == pytest.approx(math.exp(space.mu[j]), rel=PRIOR_MODE_RTOL)
    s = r.parameters().set_index("parameter")
    assert s.loc["facet_gap", "determined_by"] == "prior"


# ---------------------------------------------------------------------------- misfit
def test_unreachable_target_is_reported_as_misfit_with_the_parameter_to_move(model, space,
                                                                            targets):
    """Disc-segment AR at 2.0 deg (SD 0.05) with only the disc's AR factor free (0.8-1.2):
    no set within the range reaches it; the disc factor would have to rise beyond 1.2, and
    the model re-solved at the reported value meets the target."""
    sub = space.subset(["disc_phi_z"])
    i = targets.labels.index("AR disc segment phi_z_deg")
    t = targets.subset([i]).with_values([2.0]).with_sd_scaled(0.05 / targets.sd[i])
    r = calibrate(model, t, space=sub)
    assert r.success
    assert r.x[0] == pytest.approx(1.2)               # on its bound, never beyond
    assert r.at_bound == ("upper",)
    assert r.misfit
    row = r.misfits.iloc[0]
    assert not row.reachable
    assert row.parameter == "disc_phi_z"
    assert row.needed > 1.2 and row.outside_by == pytest.approx(row.needed - 1.2)
    check = cal.Forward(model, sub, t)(np.array([[row.needed]]))[0][0, 0]
    assert check == pytest.approx(2.0, rel=1e-3)
    assert "misfit" not in r.message and r.status == 0


def test_reach_of_a_reachable_target(model, targets):
    df = reach(model, targets, which=["LB intact phi_x_deg"])
    assert bool(df.reachable.iloc[0]) and df.parameter.iloc[0] == ""
    with pytest.raises(ValueError, match="unknown target 'nope'"):
        reach(model, targets, which=["nope"])
    with pytest.raises(ValueError, match="z must be a finite number >= 0"):
        reach(model, targets, which=[0], z=-1)


def test_non_convergence_is_reported_not_raised(model, synthetic):
    sub, _, synth, _ = synthetic
    r = calibrate(model, synth, space=sub, max_nfev=1, misfit_check=False)
    assert not r.success and r.status == 1
    assert "without convergence" in r.message


# ---------------------------------------------------------------------------- output
def test_calibrated_folder_is_the_map_model(model, space, tmp_path):
    r = calibrate(model, space=space, misfit_check=False)
    written = write_calibrated(r, tmp_path, command="test command")
    # each file once ("wrote 18 files" was printed for 17: calibration_targets.csv twice)
    assert sorted(written) == sorted(p for p in tmp_path.iterdir() if p.is_file())
    m2 = segment.c5c6(data_dir=tmp_path)
    m3 = space.apply(model, r.x)
    for a, b in zip(m2._packed, m3._packed, strict=True):
        np.testing.assert_allclose(a, b, rtol=SHIPPED_RTOL, atol=1e-9)
    lig = pd.read_csv(tmp_path / "ligaments.csv").set_index("name")
    changed = lig.source.str.startswith("calibrated")
    assert changed.all()                   # every ligament has a calibrated parameter
    assert lig.source.str.contains("by `test command`").all()
    assert lig.source.str.contains("was: DETC2000").all()
    inert = pd.read_csv(tmp_path / "inertia.csv")
    assert not inert.source.str.startswith("calibrated").any()
    assert (tmp_path / "calibration_parameters.csv").exists()


def test_shipped_calibrated_set_is_current(model, tmp_path):
    """Stale when the model, the targets or the space changed: regenerate with
    ``segment calibrate --out data/calibrated``."""
    r = calibrate(model)
    write_calibrated(r, tmp_path, command=cal.REGENERATE_COMMAND)
    shipped = shipped_calibrated_dir()
    names = sorted(p.name for p in tmp_path.iterdir())
    # posterior_diagnostics.csv comes from the command's MCMC (minutes): checked for its
    # parameters and diagnostics here, its numbers are regenerated by the command
    post = pd.read_csv(shipped / "posterior_diagnostics.csv")
    assert post.parameter.tolist() == list(load_space().names)
    for c in ("rhat", "autocorr_steps", "kept_over_autocorr", "effective_samples"):
        assert np.isfinite(post[c]).all(), c
    assert names == sorted(p.name for p in shipped.iterdir()
                           if p.name != "posterior_diagnostics.csv")
    for name in names:
        if not name.endswith(".csv"):
            continue
        new, old = pd.read_csv(tmp_path / name), pd.read_csv(shipped / name)
        assert list(new.columns) == list(old.columns), name
        assert len(new) == len(old), name
        for c in new.columns:
            if pd.api.types.is_numeric_dtype(new[c]) and len(new):
                np.testing.assert_allclose(new[c].to_numpy(float), old[c].to_numpy(float),
                                           rtol=1e-4, atol=1e-6,
                                           err_msg=f"{name}:{c} stale; run "
                                                   f"{cal.REGENERATE_COMMAND}")
            elif c != "source":
                assert new[c].astype(str).tolist() == old[c].astype(str).tolist(), (name, c)


# ---------------------------------------------------------------------------- MCMC
def test_split_rhat_detects_unmixed_chains():
    rng = np.random.default_rng(0)
    iid = rng.standard_normal((2000, 8, 2))
    assert np.all(np.abs(split_rhat(iid) - 1) < 0.01)
    stuck = iid + np.arange(8)[None, :, None]
    assert np.all(split_rhat(stuck) > 1.5)


@pytest.mark.slow
def test_posterior_samples_cover_the_truth(model, space, targets):
    sub = space.subset(["disc_phi_y", "disc_phi_z"])
    rows = [targets.labels.index(x) for x in ("FLX disc segment phi_y_deg",
                                              "EXT disc segment phi_y_deg",
                                              "AR disc segment phi_z_deg")]
    t0 = targets.subset(rows)
    truth = np.array([1.05, 0.9])
    y = cal.Forward(model, sub, t0)(truth[None])[0][0]
    t = t0.with_values(y).with_sd_scaled(1.0)
    r = calibrate(model, t, space=sub)
    post = sample_posterior(model, t, space=sub, start=r, n_walkers=16, n_steps=1500, seed=1)
    s = post.samples
    assert np.all((s >= sub.lower) & (s <= sub.upper))
    lo, hi = np.percentile(s, [2.5, 97.5], axis=0)
    assert np.all((lo <= truth) & (truth <= hi))
    assert np.all(post.rhat < 1.1), post.rhat
    assert 0.2 < post.acceptance.mean() < 0.9
    assert np.all(np.isfinite(post.autocorr))
    # the Laplace SD and the sampled SD agree where the posterior is nearly Gaussian
    np.testing.assert_allclose(s.std(axis=0), r.posterior_sd, rtol=0.35)
    assert post.diagnostics().shape[0] == 2
    # burn-in and thinning from the autocorrelation time
    tau = post.autocorr.max()
    assert 0 < post.discard <= 1500 // 2
    assert post.discard == pytest.approx(cal.BURN_IN_TAUS * tau, rel=0.5)
    assert post.thin == max(1, int(0.5 * post.autocorr.min()))
    assert post.samples.shape == (len(range(post.discard, 1500, post.thin)) * 16, 2)
    assert post.converged and post.summary().endswith(": converged")
    with pytest.raises(ValueError, match="n_walkers must be even"):
        sample_posterior(model, t, space=sub, n_walkers=3)


def _two_parameter_problem(model, space, targets):
    sub = space.subset(["disc_phi_y", "disc_phi_z"])
    rows = [targets.labels.index(x) for x in ("FLX disc segment phi_y_deg",
                                              "EXT disc segment phi_y_deg",
                                              "AR disc segment phi_z_deg")]
    t0 = targets.subset(rows)
    y = cal.Forward(model, sub, t0)(np.array([[1.05, 0.9]]))[0][0]
    return sub, t0.with_values(y)


def test_short_chain_says_not_converged_and_walkers_start_inside(model, space, targets):
    sub, t = _two_parameter_problem(model, space, targets)
    # a MAP on the upper bound of disc_phi_z: truth beyond the range
    t = t.with_values(cal.Forward(model, sub, t)(np.array([[1.05, 1.4]]))[0][0])
    r = calibrate(model, t, space=sub)
    assert r.x[1] == pytest.approx(sub.upper[1])
    post = sample_posterior(model, t, space=sub, start=r, n_walkers=8, n_steps=12, seed=1)
    assert not post.converged
    assert "NOT converged" in post.summary()
    # walkers start inside the ranges (Laplace draws redrawn, not clipped onto the face)
    u = (post.chain[0] - sub.lower) / (sub.upper - sub.lower)
    assert np.all((u > 1e-3) & (u < 1 - 1e-3))
    assert len(np.unique(post.chain[0][:, 1])) == 8
    with pytest.raises(ValueError, match="discard must be in"):
        sample_posterior(model, t, space=sub, n_walkers=8, n_steps=12, discard=11)


@pytest.mark.slow
def test_posterior_on_a_dask_cluster_is_the_in_process_chain(model, space, targets):
    """Same seed, same chain: the parameter-set kernel gives identical numbers on a real
    LocalCluster (2 worker processes, one thread each: numba's workqueue layer is not
    re-entrant across threads), so emcee makes identical accept/reject decisions."""
    distributed = pytest.importorskip("distributed")
    sub, t = _two_parameter_problem(model, space, targets)
    kw = {"space": sub, "n_walkers": 8, "n_steps": 12, "seed": 3}
    here = sample_posterior(model, t, **kw)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        there = sample_posterior(model, t, client=client, **kw)
    np.testing.assert_array_equal(there.chain, here.chain)
    np.testing.assert_array_equal(there.log_prob, here.log_prob)
    assert here.chain.std(axis=(0, 1)).min() > 0      # the walkers moved


# ---------------------------------------------------------------------------- CLI
def test_cli_calibrate_writes_a_folder_segment_reads(tmp_path, capsys):
    from segment.cli import main

    out = tmp_path / "cal"
    assert main(["calibrate", "--out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "calibration: converged" in text
    assert main(["--data", str(out), "solve", "AR"]) == 0
    src = pd.read_csv(out / "disc_rotational.csv").source
    assert src.str.contains(f"segment calibrate --out {out} --quiet", regex=False).any()


@pytest.mark.slow
def test_cli_calibrate_samples_on_a_local_dask_cluster(tmp_path, capsys):
    pytest.importorskip("distributed")
    from segment.cli import main

    out = tmp_path / "cal"
    # 256 draws cannot converge: the draws ran on the cluster, and nothing is written
    assert main(["calibrate", "--out", str(out), "--quiet", "--samples", "256",
                 "--scheduler", "local"]) == 1
    captured = capsys.readouterr()
    assert "posterior: 256 draws" in captured.out and "NOT converged" in captured.out
    assert "did not converge; nothing written" in captured.err
    assert not out.exists()


@pytest.mark.slow
def test_cli_unconverged_posterior_writes_nothing_and_exits_1(tmp_path, capsys):
    """The README's contract (issue 20): a calibration that does not converge, MAP or MCMC,
    writes nothing and exits with code 1."""
    from segment.cli import main

    out = tmp_path / "cal"
    assert main(["calibrate", "--out", str(out), "--quiet", "--samples", "256"]) == 1
    captured = capsys.readouterr()
    assert "NOT converged" in captured.out
    assert captured.err.strip().splitlines()[-1] == (
        "segment: the posterior samples did not converge; nothing written (draw more with a "
        "larger --samples)")
    assert not out.exists()


def test_cli_bad_targets_is_one_line_error(tmp_path, capsys):
    from segment.cli import main

    rows = _rows()
    rows[1][rows[0].index("SD")] = "-1"
    bad = tmp_path / "t.csv"
    _write(bad, rows)
    assert main(["calibrate", "--targets", str(bad), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "t.csv, line 2 (row 1), column 'SD': must be > 0" in err
    assert not (tmp_path / "o").exists()


def test_cli_non_convergence_exits_non_zero(tmp_path, capsys, monkeypatch):
    from segment.cli import main

    real = cal.calibrate
    monkeypatch.setattr(cal, "calibrate", lambda *a, **k: real(*a, **k, max_nfev=1))
    assert main(["calibrate", "--out", str(tmp_path / "o")]) == 1
    assert "calibration failed" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_log_prior_is_minus_infinity_outside_the_ranges(space):
    p = space.nominal.copy()
    lp = cal.log_prior(space, np.array([p, np.where(np.arange(space.dim) == 0, -1.0, p)]))
    assert math.isfinite(lp[0]) and lp[1] == -math.inf


# ---------------------------------------------------------------------------- prediction
def test_cross_validation_holds_out_each_case(model, synthetic):
    """On noise-free synthetic targets every held-out target is predicted within its
    predictive SD where the other cases determine the parameters it depends on."""
    sub, _, synth, _ = synthetic
    cv = cal.cross_validate(model, synth, space=sub)
    assert sorted(set(cv.case)) == sorted(set(synth.cases))
    assert len(cv) == len(synth)
    assert (cv.status == "converged").all()
    assert np.all(np.isfinite(cv.z))
    assert np.all(np.abs(cv.z) < 3.0)


def test_predictive_bands_nine_cases_six_components(model, synthetic):
    sub, _, _, r = synthetic
    b = cal.predictive_bands(model, r, space=sub, n=64)
    assert len(b) == 9 * 6
    assert (b["q2.5"] <= b["median"]).all() and (b["median"] <= b["q97.5"]).all()
    assert (b.converged_fraction == 1.0).all()
    with pytest.raises(ValueError, match="unknown configuration"):
        cal.predictive_bands(model, r, space=sub, n=8, configuration="cadaver")


# ---------------------------------------------------------------------------- ICR (validation)
# closed-form centres: solve of a 2x2 system, round-off only
ICR_ATOL_MM = 1e-9


@pytest.mark.parametrize(("centre", "a1", "a2"), [
    ((-6.6, 5.5), 0.0, math.radians(2.6)),
    ((3.0, -20.0), math.radians(-5.6), math.radians(4.0)),
    ((0.0, 0.0), 0.3, -0.2),
])
def test_planar_centre_recovers_a_pure_rotation_about_a_known_point(centre, a1, a2):
    c = np.array(centre)
    u = np.array([-2.8, 17.4])              # a body point in body coordinates [mm]

    def R(a):
        return np.array([[math.cos(a), math.sin(a)], [-math.sin(a), math.cos(a)]])

    # the body turns about c: X(a) = c + R(a) (X0 - c), X0 = u at a = 0
    p1, p2 = c + R(a1) @ (u - c), c + R(a2) @ (u - c)
    np.testing.assert_allclose(cal.planar_centre(p1, a1, p2, a2), c, atol=ICR_ATOL_MM)
    # the order of the poses does not matter
    np.testing.assert_allclose(cal.planar_centre(p2, a2, p1, a1), c, atol=ICR_ATOL_MM)
    with pytest.raises(ValueError, match="must differ in angle"):
        cal.planar_centre(p1, a1, p1 + 1.0, a1)


def test_icr_offset_maps_translation_and_rotation_of_the_reference():
    c = np.array([-8.6, 8.7])
    np.testing.assert_allclose(cal.icr_offset(c, (-8.0, 6.0)), [-0.6, 2.7], atol=1e-12)
    # a 1 mm shift of the reference point shifts the offset by -1 mm
    np.testing.assert_allclose(cal.icr_offset(c, (-7.0, 6.0)) - cal.icr_offset(c, (-8.0, 6.0)),
                               [-1.0, 0.0], atol=1e-12)
    # axes turned by 90 deg about +y: their anterior axis is our -z (Ry(90) maps x to -z)
    np.testing.assert_allclose(cal.icr_offset((0.0, 1.0), (0.0, 0.0), axes_deg=90.0),
                               [-1.0, 0.0], atol=1e-12)
    # a turn of the axes keeps the distance
    d = cal.icr_offset(c, (0.0, 6.0), axes_deg=7.0)
    assert np.linalg.norm(d) == pytest.approx(np.linalg.norm(c - [0.0, 6.0]))


def test_reference_points_follow_the_c6_body_of_the_geometry_file(tmp_path):
    refs = cal.c6_reference_points()
    np.testing.assert_allclose(refs["superior endplate centre"], [0.0, 6.0])
    np.testing.assert_allclose(refs["posterior-superior corner"], [-8.0, 6.0])
    np.testing.assert_allclose(refs["anterior-superior corner"], [8.0, 6.0])
    rows = list(csv.reader(open(segment.core.io.data_dir() / "vertebra_geometry.csv",
                                encoding="utf-8")))
    i = next(k for k, r in enumerate(rows) if r[:2] == ["C6", "body"])
    rows[i][rows[0].index("z1_mm")] = "7.5"
    rows[i][rows[0].index("a1_mm")] = "7"
    path = tmp_path / "g.csv"
    _write(path, rows)
    refs = cal.c6_reference_points(path)
    np.testing.assert_allclose(refs["posterior-superior corner"], [-7.0, 7.5])
    _write(path, [r for r in rows if r[:2] != ["C6", "body"]])
    with pytest.raises(ValueError, match="no C6 body row"):
        cal.c6_reference_points(path)


def test_icr_comparison_verdicts_follow_the_published_ci(model):
    t = cal.icr_comparison({"published": model}, moments_Nm=(1.8,))
    assert list(t.reference_point) == list(cal.ICR_REFERENCE_POINTS)
    c = cal.flexion_extension_centre(model, moment_Nm=1.8)
    np.testing.assert_allclose(t[["x_mm", "z_mm"]].to_numpy(), np.tile(c, (3, 1)))
    lo_a, mean_a, hi_a = cal.ANDERST_ICR_MM["anterior"]
    lo_s, mean_s, hi_s = cal.ANDERST_ICR_MM["superior"]
    for row in t.itertuples():
        assert row.anterior_mm == pytest.approx(row.x_mm - row.ref_x_mm)
        assert row.superior_mm == pytest.approx(row.z_mm - row.ref_z_mm)
        inside = lo_a <= row.anterior_mm <= hi_a and lo_s <= row.superior_mm <= hi_s
        assert (row.verdict == "within") == inside
        # the point that would put our centre on their mean does so
        np.testing.assert_allclose(
            cal.icr_offset(c, (row.ref_for_mean_x_mm, row.ref_for_mean_z_mm)),
            [mean_a, mean_s], atol=1e-12)
    # the finite centre of the model lies in the sagittal plane between the bodies' origins:
    # below the C5 origin (s_z = 17.4 mm above C6's), posterior of the disc's anterior face
    assert 0.0 < c[1] < 17.4 and c[0] < 8.0


def test_the_docs_quote_the_shipped_posterior_diagnostics():
    """The calibration page's convergence numbers are those of the shipped
    posterior_diagnostics.csv (regenerating the set with another chain must update the page
    too)."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "calibration.md").read_text()
    text = " ".join(page.split())
    m = re.search(r"max split-R-hat ([\d.]+), kept chain at least ([\d.]+) autocorrelation "
                  r"times, effective sample size at least (\d+) per parameter", text)
    assert m, "docs/calibration.md sentence on the shipped chain's convergence not found"
    d = pd.read_csv(cal.shipped_calibrated_dir() / "posterior_diagnostics.csv")
    assert float(m.group(1)) == round(d.rhat.max(), 3)
    assert float(m.group(2)) == round(d.kept_over_autocorr.min(), 1)
    assert int(m.group(3)) == int(d.effective_samples.min())
    assert d.rhat.max() < 1.1 and d.kept_over_autocorr.min() > 50     # "converged" holds


def test_cli_scheduler_without_samples_is_a_usage_error(tmp_path, capsys):
    """--scheduler only sends the MCMC draws to Dask: alone it would silently do nothing."""
    from segment.cli import main

    assert main(["calibrate", "--out", str(tmp_path / "o"), "--scheduler", "local"]) == 2
    assert "give --samples N" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()            # checked before any work


def test_a_parameter_at_its_bound_is_reported_there(model):
    """The trust-region steps stop a hair inside an active bound: the published targets push
    l0_ISL to its upper bound 16.5 mm, which the table must say (issue 20: it said "no")."""
    result = calibrate(model)
    table = result.parameters().set_index("parameter")
    space = load_space()
    j = space.names.index("l0_ISL")
    assert abs(result.x[j] - space.upper[j]) < 1e-3
    assert table.loc["l0_ISL", "at_bound"] == "upper"
