"""Model forms and calibration to specimen curves: the forms' spaces (pack, exact derivatives,
sensitivities), synthetic recovery, the fitted data folders, population.csv, the command line,
the form comparison and the posterior."""

import dataclasses
import shutil

import numpy as np
import pandas as pd
import pytest

import segment
from segment import cli
from segment.elements.tangent import pack
from segment.studies.calibration.curve_fit import (
    calibrate_curves,
    population_table,
    prior_starts,
)
from segment.studies.calibration.curve_forward import CurveForward
from segment.studies.calibration.curve_targets import CurveTargets
from segment.studies.calibration.folder import (
    INPUTS_FILE,
    calibrated_model,
    write_curve_calibration,
)
from segment.studies.curves import default_curves_path, load_curves, model_curve
from segment.studies.forms import form_names, load_form
from segment.studies.packing import complex_step_reference
from segment.studies.space import ParameterSpace

FORMS = ("published", "reference-strain", "neutral-zone", "fw35")
PACK_ATOL = 1e-12
DERIVATIVE_RTOL = 1e-12            # compiled vs complex step through pack: both exact
RESOLVE_RTOL = 2e-4               # dq/dp vs central differences of re-solved equilibria
FORWARD_RTOL = 1e-4               # curve Jacobian vs central differences of the forward
# a folder writes values to 6 significant digits: its curve equals the MAP's to ~1e-5 deg
FOLDER_ATOL_DEG = 1e-3
# synthetic recovery: noise 0.05 deg on every point, SD 0.05 deg in the fit; a recovered
# data-determined parameter lies within 3 Laplace SDs of the truth
RECOVERY_NOISE_DEG = 0.05
RECOVERY_Z = 3.0
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def run(capsys, *argv):
    try:
        code = cli.main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def curves():
    return load_curves()


# ---------------------------------------------------------------- forms and their spaces
def test_packaged_forms(model):
    assert form_names() == FORMS
    pub = load_form("published")
    assert pub.disc_law_path is None and pub.model(model) is model
    assert pub.space.dim == 21                      # the packaged space, today's ranges
    nz = load_form("neutral-zone")
    assert nz.model(model).disc.law[4] == "neutral-zone"
    for name in FORMS[1:]:
        f = load_form(name)
        for src in f.space.sources:
            assert "SOURCES.md §11" in src and "assumed" in src
    with pytest.raises(ValueError, match="unknown form 'cubic'; expected one of published"):
        load_form("cubic")


def test_a_folder_is_a_form(tmp_path):
    shutil.copy(load_form("fw35").space.path, tmp_path / "space.csv")
    shutil.copy(load_form("fw35").disc_law_path, tmp_path / "disc_law.csv")
    f = load_form(tmp_path)
    assert f.space.dim == 7 and f.disc_law_path.name == "disc_law.csv"
    with pytest.raises(ValueError, match=r"needs a space\.csv"):
        load_form(tmp_path / "..")


@pytest.mark.parametrize("name", FORMS[1:])
def test_form_space_packs_like_the_readable_model(model, name):
    form = load_form(name)
    fm = form.model(model)
    P = np.vstack([form.space.sample(6, seed=3), form.space.lower, form.space.upper])
    packed = form.space.pack(fm, P)
    for k in range(P.shape[0]):
        ref = pack(form.space.apply(fm, P[k])._params)
        for a, b in zip(packed, ref[:3], strict=True):
            np.testing.assert_allclose(a[k], b, rtol=0, atol=PACK_ATOL)
    compiled = form.space.pack_derivative(fm, P)
    reference = complex_step_reference(form.space, fm, P)
    for a, b in zip(compiled, reference, strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=DERIVATIVE_RTOL * max(np.abs(b).max(), 1))


@pytest.mark.parametrize("name", ["neutral-zone", "fw35"])
def test_form_sensitivities_match_resolved_equilibria(model, name):
    from segment.studies.sensitivity import equilibrium_sensitivity

    form = load_form(name)
    fm = form.model(model)
    sp = form.space
    p = np.array(sp.nominal)
    p[sp.names.index("facet_gap")] = 0.4
    p[sp.names.index("ref_strain_posterior")] = -0.05
    if name == "fw35":
        p[sp.names.index("angle_scale_flexion")] = 8.0
    load = segment.LOAD_CASES["FLX"]
    s = equilibrium_sensitivity(fm, load, space=sp, p=p)
    for j in range(sp.dim):
        h = 1e-4 * (sp.upper[j] - sp.lower[j])
        pp, pm = p.copy(), p.copy()
        pp[j] += h
        pm[j] -= h
        fd = (segment.solve(sp.apply(fm, pp), load).q
              - segment.solve(sp.apply(fm, pm), load).q) / (2 * h)
        # absolute floor where dq/dp = 0 (a slack ligament): the solver tolerance leaves
        # ~1e-9 of noise in the difference quotient
        scale = max(np.abs(fd).max(), 1e-4)
        assert np.abs(fd - s.dq_dp[:, j]).max() / scale < RESOLVE_RTOL, sp.names[j]


def test_space_rejects_bad_form_fields(tmp_path):
    head = "name,element,field,unit,nominal,lower,upper,distribution,dist_mu,dist_sigma,source\n"
    cases = [
        ("z,disc:x,zone_pos_deg,deg,1,0,2,uniform,,,s", "zone_pos_deg is a parameter of a "
                                                         "rotation's law"),
        ("z,disc:phi_y,zone_ratio,-,0.5,0.1,1.5,uniform,,,s", "zone_ratio must stay <= 1"),
        ("e,ligament:FL,ref_strain,-,0,-0.95,0.1,uniform,,,s", "ref_strain must stay > -0.9"),
        ("a,ligament:FL,l0_mm,mm,15,14,16,uniform,,,s\nb,ligament:FL,ref_strain,-,0,-0.1,0.1,"
         "uniform,,,s", "the rest length of ligament:FL is already set by l0_mm in row 1"),
    ]
    for row, message in cases:
        path = tmp_path / "s.csv"
        path.write_text(head + row + "\n", encoding="utf-8")
        with pytest.raises(ValueError, match=r"s\.csv") as err:
            ParameterSpace.from_csv(path)
        assert message in str(err.value)


def test_a_law_field_needs_the_law_on_the_model(model):
    space = load_form("neutral-zone").space
    with pytest.raises(ValueError, match="needs the neutral-zone law on disc phi_y, but the "
                                         "model has 'linear'"):
        space.pack(model, space.nominal[None])


def test_prior_starts_are_deterministic_and_inside():
    sp = load_form("neutral-zone").space
    a, b = prior_starts(sp, 5), prior_starts(sp, 5)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (5, sp.dim) and np.all((a >= sp.lower) & (a <= sp.upper))


# ---------------------------------------------------------------- forward and fit
def test_curve_forward_jacobian_matches_central_differences(model, curves):
    form = load_form("neutral-zone")
    fm = form.model(model)
    t = CurveTargets.specimen(curves, "B07")
    fwd = CurveForward(fm, form.space, t)
    p = np.array([0.8, 1.5, -0.3, -0.02, 9.0, 3.0, 0.3])
    y, ok, J = fwd(p[None], sensitivities=True)
    assert ok[0]
    for j in range(form.space.dim):
        h = 1e-5 * (form.space.upper[j] - form.space.lower[j])
        pp, pm = p.copy(), p.copy()
        pp[j] += h
        pm[j] -= h
        fd = (fwd(pp[None])[0][0] - fwd(pm[None])[0][0]) / (2 * h)
        np.testing.assert_allclose(J[0, :, j], fd, rtol=FORWARD_RTOL,
                                   atol=FORWARD_RTOL * max(np.abs(fd).max(), 1e-3))
    # and the forward's rotation is the model's curve
    m = form.space.apply(fm, p)
    flex = [i for i, mo in enumerate(t.modes) if mo == "flexion"]
    c = model_curve(m, "flexion", t.moment_Nm[flex])
    np.testing.assert_allclose(y[0, flex], c["rotation_deg"], atol=1e-8)


def _synthetic(tmp_path, curves, truth, form, model, noise):
    """The B07 curve levels with rotations of the model at ``truth`` (+ noise)."""
    fm = form.model(model)
    m = form.space.apply(fm, truth)
    rng = np.random.default_rng(22)
    f = pd.read_csv(default_curves_path())
    f = f[f["specimen"] == "B07"].copy()
    for mode in ("flexion", "extension"):
        sel = f["mode"] == mode
        c = model_curve(m, mode, f.loc[sel, "moment_Nm"].to_numpy()[1:])
        f.loc[sel, "rotation_deg"] = np.r_[0.0, c["rotation_deg"].to_numpy()
                                           + noise * rng.standard_normal(len(c))]
    f["specimen"] = "SYN"
    path = tmp_path / "syn.csv"
    f.to_csv(path, index=False)
    return load_curves(path)


def test_synthetic_recovery(tmp_path, model, curves):
    """Curves computed from a known parameter set (+ noise) give it back, within the Laplace
    SD for every parameter the data determine."""
    form = load_form("neutral-zone")
    truth = np.array([0.9, 1.4, -0.28, -0.05, 8.0, 3.0, 0.5])
    syn = _synthetic(tmp_path, curves, truth, form, model, RECOVERY_NOISE_DEG)
    fit = calibrate_curves(syn, form=form, model=model, specimen="SYN",
                           point_sd=RECOVERY_NOISE_DEG)
    assert fit.success, fit.message
    assert fit.rms_deg < 2 * RECOVERY_NOISE_DEG
    data = [j for j, v in enumerate(fit.verdicts) if v == "data"]
    assert len(data) >= 5
    z = (fit.x - truth) / fit.posterior_sd
    assert np.all(np.abs(z[data]) < RECOVERY_Z), dict(zip(fit.names, z.round(2), strict=True))


@pytest.mark.slow
def test_the_fit_ignores_the_initial_line(tmp_path, model, curves):
    text = default_curves_path().read_text(encoding="utf-8").splitlines()
    moved = [line.replace(",yes,", ",yes,") for line in text]
    for k, line in enumerate(moved):
        if line.startswith("B07,") and ",yes," in line and ",0.0,0.0," not in line:
            parts = line.split(",")
            parts[5] = str(float(parts[5]) * 3)      # triple the interpolated rotations
            moved[k] = ",".join(parts)
    path = tmp_path / "moved.csv"
    path.write_text("\n".join(moved) + "\n", encoding="utf-8")
    a = calibrate_curves(curves, form="reference-strain", model=model, specimen="B07")
    b = calibrate_curves(load_curves(path), form="reference-strain", model=model,
                         specimen="B07")
    np.testing.assert_array_equal(a.x, b.x)
    assert a.n_points == 42


@pytest.mark.slow
def test_population_and_specimen_fits(model, curves):
    pub = calibrate_curves(curves, form="published", model=model, specimen="B07", starts=0)
    assert pub.success and pub.rms_deg > 4.0          # no set within today's ranges
    nz = calibrate_curves(curves, form="neutral-zone", model=model, specimen="B07")
    assert nz.success and nz.rms_deg < 0.2
    assert 0 < nz.effective_parameters <= nz.names.__len__()
    assert nz.aic < pub.aic and nz.bic < pub.bic
    pop = calibrate_curves(curves, form="neutral-zone", model=model)
    assert pop.targets.label == "population" and pop.targets.sd_basis == "specimens"
    assert pop.rms_deg < 0.2
    t = population_table([nz])
    assert list(t.columns[:6]) == ["specimen", "form", "converged", "n_points", "rms_deg",
                                   "max_deg"]
    assert t["rms_deg"].iloc[0] == pytest.approx(nz.rms_deg)


# ---------------------------------------------------------------- data folders and CLI
@pytest.mark.slow
def test_folder_is_complete_loadable_and_the_map(tmp_path, model, curves):
    fit = calibrate_curves(curves, form="neutral-zone", model=model, specimen="B10")
    out = tmp_path / "b10"
    write_curve_calibration(fit, out, command="segment calibrate --curves X")
    loaded = segment.c5c6(data_dir=out)               # strict checks pass
    assert loaded.disc.law[4] == "neutral-zone"
    for mode in ("flexion", "extension"):
        lv = np.round(np.arange(15, 36) * 0.1, 1)
        a = model_curve(loaded, mode, lv)["rotation_deg"]
        b = model_curve(calibrated_model(fit, model=model), mode, lv)["rotation_deg"]
        np.testing.assert_allclose(a, b, atol=FOLDER_ATOL_DEG)
    inputs = pd.read_csv(out / INPUTS_FILE).set_index("key")["value"]
    assert inputs["curves_sha256"] == curves.sha256
    assert inputs["fitted"] == "B10" and inputs["form"] == "neutral-zone"
    assert inputs["command"] == "segment calibrate --curves X"
    assert (out / "curve_calibration_space.csv").read_bytes() == \
        open(load_form("neutral-zone").space.path, "rb").read()
    src = pd.read_csv(out / "ligaments.csv").set_index("name")["source"]
    assert src["FL"].startswith("calibrated (MAP) to the B10 curves")
    assert "was: DETC2000/MECH-6821" in src["FL"]


def test_a_calibration_that_did_not_converge_writes_nothing(tmp_path, model, curves):
    fit = calibrate_curves(curves, form="neutral-zone", model=model, specimen="B07",
                           starts=0, max_nfev=2)
    assert not fit.success and fit.status == 1
    with pytest.raises(ValueError, match="did not converge"):
        write_curve_calibration(fit, tmp_path / "x")
    assert not (tmp_path / "x").exists()


@pytest.mark.slow
def test_cli_calibrate_curves_each(tmp_path, capsys):
    out = tmp_path / "each"
    code, text, err = run(capsys, "calibrate", "--curves", default_curves_path(), "--form",
                          "reference-strain", "--each", "--out", out)
    assert code == EXIT_OK, err
    pop = pd.read_csv(out / "population.csv")
    assert list(pop["specimen"]) == list(load_curves().specimens)
    assert pop["converged"].all()
    for s in pop["specimen"]:
        assert (out / s / "curve_calibration_points.csv").is_file()
        segment.c5c6(data_dir=out / s)
    assert "RMS" in text and "B05" in text


@pytest.mark.slow
def test_cli_calibrate_curves_one_specimen_and_curves_command(tmp_path, capsys):
    out = tmp_path / "b13"
    code, text, err = run(capsys, "calibrate", "--curves", default_curves_path(), "--form",
                          "neutral-zone", "--specimen", "B13", "--out", out)
    assert code == EXIT_OK, err
    assert "fit error over" in text
    code, text, err = run(capsys, "--data", out, "curves", "--out", tmp_path / "cmp")
    assert code == EXIT_OK, err
    table = pd.read_csv(tmp_path / "cmp" / "curves_comparison.csv")
    assert len(table) == 32 and (tmp_path / "cmp" / "curves_comparison.png").is_file()
    assert "specimen SDs from the mean" in text


def test_cli_curve_usage_errors(tmp_path, capsys):
    curves = str(default_curves_path())
    for argv, message in (
        (["calibrate", "--each"], "--each goes with --curves"),
        (["calibrate", "--form", "fw35"], "--form goes with --curves"),
        (["calibrate", "--curves", curves, "--targets", curves], "--targets does not go "
                                                                 "with --curves"),
        (["calibrate", "--curves", curves, "--form", "cubic"], "unknown form 'cubic'"),
        (["calibrate", "--curves", curves, "--specimen", "B99"], "--specimen B99: not in"),
        (["calibrate", "--curves", curves, "--each", "--samples", "10"],
         "--samples with --curves samples the population posterior"),
        (["calibrate", "--curves", str(tmp_path / "none.csv")], "curves file not found"),
        (["curves", "--min-specimens", "0"], "--min-specimens must be >= 2"),
    ):
        code, _, err = run(capsys, *argv, "--out", tmp_path / "o")
        assert code == EXIT_USAGE, (argv, err)
        assert message in err and err.count("\n") == 1, err


# ---------------------------------------------------------------- comparison and posterior
@pytest.mark.slow
def test_form_comparison_on_two_specimens(model, curves):
    from segment.studies.calibration.forms_compare import compare_forms, verdict

    sub = curves.subset(specimens=["B07", "B12", "B13"])
    c = compare_forms(sub, forms=["reference-strain", "neutral-zone"], model=model)
    s = c.summary()
    assert list(s["form"]) == ["reference-strain", "neutral-zone"]
    assert len(c.loso) == 6 and len(c.cross) == 12
    with pytest.raises(ValueError, match="at least three specimens"):
        compare_forms(curves.subset(specimens=["B07", "B12"]), forms=["fw35"], model=model)
    assert set(c.cross["fitted"]) == {"flexion", "extension"}
    assert s["delta_aic"].min() == 0.0
    v = verdict(c)
    assert v["best_aic"] in ("reference-strain", "neutral-zone")
    assert set(c.identifiability["form"]) == {"reference-strain", "neutral-zone"}


def test_population_posterior_runs(model, curves):
    from segment.studies.calibration.curve_posterior import sample_curve_posterior

    fit = calibrate_curves(curves, form="reference-strain", model=model)
    post = sample_curve_posterior(fit, samples=320, n_threads=1, model=model)
    assert post.chain.shape == (10, 32, 5)
    s = post.samples
    assert np.all(np.isfinite(s))
    sp = load_form("reference-strain").space
    assert np.all((s >= sp.lower) & (s <= sp.upper))


@pytest.mark.slow
def test_population_table_survives_a_failed_member(model, curves):
    ok = calibrate_curves(curves, form="reference-strain", model=model, specimen="B07")
    bad = dataclasses.replace(ok, success=False, status=1, message="stopped")
    t = population_table([ok, bad])
    assert list(t["converged"]) == [True, False]
