"""The population calibration of issue 32: raw specimen records, the step error model, the
scores, synthetic recovery of known hyper-parameters, validity limits, rupture ties, the
member folders and the committed result."""

import math
import subprocess
import sys

import numpy as np
import pytest

import segment
from segment.core.io import data_dir
from segment.studies import population_limits, population_result, population_tables
from segment.studies import virtual_population as vp
from segment.studies.calibration.hierarchical import fit_population
from segment.studies.calibration.hierarchical_data import _whiten
from segment.studies.calibration.hierarchical_forward import Experiment, Forward
from segment.studies.calibration.hierarchical_priors import load_hyperpriors
from segment.studies.calibration.hierarchical_settings import LABS, NEW_LAB
from segment.studies.calibration.predictive import baseline_curve, crps_ensemble
from segment.studies.space import ParameterSpace
from segment.studies.specimens import load_specimens

WHITEN_TOL = 1e-12
"""The whitening is exact linear algebra: identity covariance to rounding."""
RECOVERY_Z = 3.0
"""A recovered hyper-parameter lies within this many of its stated SDs of the truth."""
RESOLVE_RTOL = 1e-5
"""A member re-solved from its folder matches population.csv (written at 6 digits)."""


# ----------------------------------------------------------------------------- the records
def test_records_are_the_measured_steps():
    data = load_specimens()
    assert data.specimens == ("B03", "B04", "B05", "B06", "B07", "B10", "B12", "B13")
    assert len(data.steps) == 8 * 2 * 6
    m, r = data.curve("B03", "extension")
    assert m[0] == pytest.approx(1.573) and r[-1] == pytest.approx(12.309)   # magnitudes
    assert (data.steps["moment_Nm"] > 1.3).all()          # nothing measured below 1.3 N m
    f = data.failure.set_index("specimen")
    assert f.loc["B03", "failure_moment_Nm"] == pytest.approx(17.198299)
    assert f.loc["B04", "doubtful"] and not f.loc["B03", "doubtful"]
    assert math.isnan(f.loc["B06", "failure_moment_Nm"])   # no failure record


def _raw_copy(tmp_path, edit):
    src = load_specimens().paths
    text = open(src[0], encoding="utf-8").read().splitlines()
    text = edit(text)
    raw = tmp_path / "raw.csv"
    raw.write_text("\n".join(text) + "\n", encoding="utf-8")
    return raw, src[1]


def test_reader_errors_name_file_line_column_value(tmp_path):
    def bad_number(lines):
        k = next(i for i, s in enumerate(lines) if s.startswith("B03,") and ",load_step," in s)
        lines[k] = lines[k].replace("9.531000", "9.5x1")
        return lines

    raw, fail = _raw_copy(tmp_path, bad_number)
    with pytest.raises(ValueError, match=r"raw\.csv: 1 error\(s\): line \d+, column "
                                         r"'rotation_deg' \(value '9\.5x1'\)"):
        load_specimens(raw, fail)

    def wrong_sign(lines):
        k = next(i for i, s in enumerate(lines) if s.startswith("B04,") and ",load_step," in s
                 and ",flexion," in s)
        lines[k] = lines[k].replace(",1.949000,", ",-1.949000,")
        return lines

    raw, fail = _raw_copy(tmp_path, wrong_sign)
    with pytest.raises(ValueError, match=r"column 'moment_Nm' \(value '-1\.949000'\): a "
                                         r"flexion step must be positive"):
        load_specimens(raw, fail)


def test_hyperprior_errors_are_named(tmp_path):
    form = tmp_path / "f"
    form.mkdir()
    src = data_dir() / "forms" / "population"
    (form / "space.csv").write_bytes((src / "space.csv").read_bytes())
    text = (src / "hyperpriors.csv").read_text(encoding="utf-8")
    (form / "hyperpriors.csv").write_text(text.replace("zone_flexion,logit,1.0",
                                                       "zone_flexion,log,1.0"), encoding="utf-8")
    space = ParameterSpace.from_csv(form / "space.csv")
    with pytest.raises(ValueError, match=r"hyperpriors\.csv: 1 error\(s\): line 6, column "
                                         r"'transform' \(value 'log'\): the log scale needs a "
                                         r"lognormal prior"):
        load_hyperpriors(space)


# ----------------------------------------------------------------------------- error model
def test_whitening_gives_unit_covariance():
    signs = np.array([1.0] * 6 + [-1.0] * 6)
    se, so = 0.12, 1.8
    cov = se ** 2 * np.eye(12) + so ** 2 * np.outer(signs, signs)
    W = np.column_stack([_whiten(col, signs, se, so) for col in np.eye(12)])
    np.testing.assert_allclose(W @ cov @ W.T, np.eye(12), atol=WHITEN_TOL)


def test_crps_of_point_and_two_point_forecasts():
    assert crps_ensemble([2.0], 5.0) == pytest.approx(3.0)         # the absolute error
    # two members 0 and 2, y = 1: E|X - y| = 1, E|X - X'| / 2 = 0.5
    assert crps_ensemble([0.0, 2.0], 1.0) == pytest.approx(0.5)
    assert crps_ensemble([0.0, 2.0], 1.0) < crps_ensemble([0.0, 2.0], 3.0)


def test_baseline_curve_is_the_measured_steps():
    m, r = np.array([1.0, 2.0, 3.0]), np.array([5.0, 6.0, 8.0])
    np.testing.assert_allclose(baseline_curve(m, r, [0.5, 2.5, 4.0]), [2.5, 7.0, 10.0])


# ----------------------------------------------------------------------------- recovery
def _synthetic(tmp_path, truth_mu, truth_tau, n, seed):
    """A two-parameter form (flexion and extension disc factors), specimens drawn from known
    hyper-parameters and their steps written as raw records (with a small error)."""
    form = tmp_path / "form"
    form.mkdir()
    src = data_dir() / "forms" / "population" / "space.csv"
    lines = src.read_text(encoding="utf-8").splitlines()
    keep = [lines[0]] + [s for s in lines[1:] if s.startswith(("disc_phi_y_flexion",
                                                                "disc_phi_y_extension"))]
    (form / "space.csv").write_text("\n".join(keep) + "\n", encoding="utf-8")
    (form / "hyperpriors.csv").write_text(
        "name,transform,specimen_sd,lab_sd,source\n"
        "disc_phi_y_flexion,log,0.3,0.6,test\ndisc_phi_y_extension,log,0.3,0.6,test\n",
        encoding="utf-8")
    space = ParameterSpace.from_csv(form / "space.csv")
    rng = np.random.default_rng(seed)
    Z = np.asarray(truth_mu) + np.asarray(truth_tau) * rng.standard_normal((n, 2))
    moments = (1.5, 2.0, 2.5, 3.0, 3.5, 4.0)
    fwd = Forward(segment.c5c6(), space)
    exps = (Experiment("intact", "flexion", moments), Experiment("intact", "extension", moments))
    y, ok, _ = fwd(np.exp(Z), exps)
    assert ok.all()
    y = y + 0.05 * rng.standard_normal(y.shape)
    head = ("specimen,test_type,direction,point,point_type,time_s,moment_Nm,rotation_deg,"
            "rotation_from_start_deg,is_peak_moment")
    rows = [head]
    for i in range(n):
        for d, (direction, sign) in enumerate((("flexion", 1), ("extension", -1))):
            rows.append(f"S{i:02d},flexibility,{direction},0,origin,,0,0,0,")
            for k, m in enumerate(moments):
                rows.append(f"S{i:02d},flexibility,{direction},{k + 1},load_step,,"
                            f"{sign * m},{sign * y[i, 6 * d + k]:.6f},0,")
    raw = tmp_path / "raw.csv"
    raw.write_text("\n".join(rows) + "\n", encoding="utf-8")
    fail = tmp_path / "failure.csv"
    fail.write_text(",".join(("specimen", "age_years", "direction", "failure_moment_Nm",
                              "failure_rotation_from_start_deg", "first_drop_peak_Nm",
                              "first_drop_rotation_deg", "rotation_start_deg",
                              "Fx_at_failure_N", "Fz_at_failure_N",
                              "earlier_drops_before_peak", "test_comment_ev5", "injury_ev5"))
                    + "\n" + "".join(f"S{i:02d},40" + "," * 11 + "\n" for i in range(n)),
                    encoding="utf-8")
    return form, load_specimens(raw, fail)


def test_synthetic_population_is_recovered(tmp_path):
    mu, tau = np.array([math.log(1.6), math.log(0.8)]), np.array([0.35, 0.2])
    form, data = _synthetic(tmp_path, mu, tau, n=16, seed=5)
    fit = fit_population(segment.c5c6(), data, form=form, moroney=False, sigma_o=0.05,
                         intact=False)
    assert fit.converged, fit.message
    a = fit.a["nightingale2002"]
    se = np.sqrt(fit.var_a["nightingale2002"])
    assert np.all(np.abs(a - mu) <= RECOVERY_Z * se), (a, mu, se)
    h = fit.hyper_table()
    assert np.all(np.abs(h["tau"] - tau) <= RECOVERY_Z * h["tau_se"]), (h["tau"], tau)
    assert fit.sigma_e == pytest.approx(0.05, rel=0.3)


# ----------------------------------------------------------------------------- limits, ties
def test_validity_limits_never_inside_a_training_specimen_range():
    data = load_specimens()
    lim = population_limits.validity_limits(data).set_index("direction")["limit_deg"]
    for sign, direction in (("+", "flexion"), ("-", "extension")):
        largest, _ = data.largest_rotation(direction)
        assert lim[sign] >= round(largest, 2)
        assert (data.steps.loc[data.steps["direction"] == direction, "rotation_deg"]
                <= lim[sign] + 0.005).all()


def test_symmetric_capsules_are_reported_as_a_tie():
    """The published model flexed to failure: both capsular ligaments reach F_max at the
    same load (the model is symmetric in y); the ramp breaks one of them first (index
    order), and rupture_ties says they tied."""
    r = segment.ramp(segment.c5c6(), segment.LOAD_CASES["FLX"], to_scale=20, steps=80,
                     limits=None)
    assert ["CL-left", "CL-right"] in population_tables.rupture_ties(r)


# ----------------------------------------------------------------------------- CLI, members
@pytest.mark.slow
def test_cli_lists_the_laboratories_and_checks_lab():
    run = [sys.executable, "-m", "segment", "calibrate"]
    out = subprocess.run([*run, "--help"], capture_output=True, text=True, check=True).stdout
    for name in (*LABS, NEW_LAB):
        assert name in out
    bad = subprocess.run([*run, "--lab", "nightingale2002"], capture_output=True, text=True)
    assert bad.returncode != 0 and "--lab goes with --population" in bad.stderr
    bad = subprocess.run([*run, "--population", "--lab", "elsewhere"], capture_output=True,
                         text=True)
    assert bad.returncode != 0 and "invalid choice: 'elsewhere'" in bad.stderr


def test_committed_result_checks_and_members_load(tmp_path):
    model = segment.c5c6()
    checks = population_result.check_result(model, members=2)
    assert checks["ok"].all(), checks[~checks["ok"]]
    res = population_result.read_result()
    pop = res["population.csv"]
    assert len(pop) >= vp.MEMBERS
    from segment.studies.calibration.hierarchical_settings import default_form_path
    from segment.studies.forms import load_form

    form = load_form(default_form_path())
    P = pop[list(form.space.names)].to_numpy(float)[:2]
    fm = form.model(model)
    models = [form.space.apply(fm, p) for p in P]
    population_result.write_members(models, model, tmp_path, note="population member (test)",
                                    limits=res["validity_limits.csv"])
    for k in range(2):
        m = segment.c5c6(data_dir=tmp_path / f"member_{k + 1:03d}")
        got = population_tables._rotation_at(m, "flexion")
        assert got == pytest.approx(pop["intact_flexion_deg"].iloc[k], rel=RESOLVE_RTOL)
    pop.head(2).to_csv(tmp_path / "population.csv", index=False)
    from segment.studies.population import Population

    read = Population.from_folders(tmp_path, segment.c5c6())   # segment.studies.population reads it
    assert read.names == ("member_001", "member_002") and read.form == "population"


def test_intact_bound_derivative_matches_central_differences():
    """The failure tests as bounds: B13's fitted model is past rupture in FL and ISL at its
    last flexion step without the bound; the bound's Jacobian (dg/dq dq/dz + dg/dl0 dl0/dz)
    equals central differences of the residuals."""
    from segment.studies.calibration import hierarchical as h
    from segment.studies.forms import load_form

    form = load_form(h.default_form_path())
    hp = h.load_hyperpriors(form.space)
    fwd = h.Forward(form.model(segment.c5c6()), form.space)
    sp = next(s for s in h._specimens(load_specimens()) if s.name == "B13")
    P = np.array([[0.883, 1.813, 1.006, 1.042, 10.98, 6.607, -0.105, -0.140, -0.016, 0.420,
                   0.773]])
    z = hp.to_z(P)[0]
    _, ok, _, res, J = h._evaluator(fwd, hp, sp.experiments, intact=True)(z)
    assert ok and (res > 0).sum() >= 2
    for k in range(z.size):
        e = np.zeros(z.size)
        e[k] = 1e-6
        up = h._evaluator(fwd, hp, sp.experiments, intact=True)(z + e)[3]
        down = h._evaluator(fwd, hp, sp.experiments, intact=True)(z - e)[3]
        np.testing.assert_allclose(J[:, k], (up - down) / 2e-6, rtol=1e-4, atol=1e-3)


def test_section_tables_read_the_committed_result():
    t = population_tables.section_tables(segment.c5c6(), check=False)
    assert {"fitted", "hyper", "predicted", "zdeblick", "validity"} <= set(t)
    pred = t["predicted"].set_index("column")
    assert pred.loc["ratio_axial-rotation", "members"] >= vp.MEMBERS - 5
    assert (t["fitted"]["data"].str.contains("fitted")).all()


def test_survival_of_the_static_protocol():
    """The published model carries 3.5 N m both ways intact (its first rupture is FL at
    6.26 N m in flexion) and does not carry 7 N m."""
    model = segment.c5c6()
    assert vp.survives(model, vp.STATIC_PROTOCOL_NM)
    assert not vp.survives(model, 7.0)


def test_packaged_phi_y_limits_are_the_training_specimens():
    """``data/validity_limits.csv`` holds the flexion and extension bounds that
    :func:`validity_limits` derives from the training records, word for word: the packaged
    model and the population's members stop at the same rotations."""
    from segment.core.validity import load_validity_limits

    packaged = load_validity_limits()
    for _, row in population_limits.validity_limits(load_specimens()).iterrows():
        b = packaged.bound("phi_y", 1 if row["direction"] == "+" else -1)
        assert b.value == row["limit_deg"] and b.source == row["source"]
