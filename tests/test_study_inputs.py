"""Issue 21: studies run the model they are given, and refuse what makes no sense.

* **One model**: a study's nominal values are the model's (``ParameterSpace.for_model``), a
  calibration reads the folder's load cases, and what a command writes records the inputs it
  used.
* **Plausibility of the study inputs** (parameter space, ligament strips, calibration
  targets): the mutation suite of ``tests/study_mutations.py``, one clear error each.
* **Degenerate studies**: too small a Sobol design, out-of-range indices, failed sets.
* **Files read back**: ``SetsResult.read_parquet`` checks what it reads.
* **Limits**: every count and size option of the command line, and the API's arguments.

Each example of the issue is a test here; ``scripts/reliability_census.py --issue 21`` counts
the same classes of input on any version of the code.
"""

import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from data_mutations import set_cell, set_cells
from study_mutations import (
    PARQUET_TAMPERING,
    SPACE,
    STRIPS,
    STUDY_MUTATIONS,
    TARGETS,
    copy_inputs,
    input_fingerprint,
    load_input,
    soften,
    tamper_parquet,
)

import segment
from segment import cli
from segment.core.io import data_dir
from segment.core.tables import ImplausibleDataWarning
from segment.studies.space import load_space

EXIT_USAGE = 2
SAME_RTOL = 1e-12              # the same numbers read from differently written text
BASELINE_ATOL_DEG = 1e-6       # a tornado baseline is the solve itself: equal to rounding
CSV_ATOL_DEG = 1e-5            # ... as written to tornado.csv with 6 significant digits
NORMAL_2SD_MASS = 0.9544997361036416      # erf(2 / sqrt 2): mass of a normal within +-2 SD


def run(capsys, *argv):
    try:
        code = cli.main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code, out, err, *mentions):
    assert code == EXIT_USAGE, (code, out, err)
    assert "Traceback" not in out + err
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith(
        "segment: warning:")]
    assert len(lines) == 1 and lines[0].startswith("segment: error:"), err
    for text in mentions:
        assert text in lines[0], (text, lines[0])


@pytest.fixture(scope="module")
def space():
    return load_space()


@pytest.fixture
def inputs(tmp_path):
    """A private copy of the packaged tables and study inputs."""
    return copy_inputs(data_dir(), tmp_path / "data")


def flx_deg(folder) -> float:
    """``segment --data FOLDER solve FLX``'s main displacement [deg]."""
    model = segment.c5c6(data_dir=folder)
    flx = segment.load_parameters(folder).load_cases["FLX"]
    return float(np.degrees(segment.solve(model, flx).displacement_from_unloaded[4]))


def tornado_flx_baseline(capsys, folder, out, *extra):
    code, _, err = run(capsys, "--data", folder, "sensitivity", "--method", "tornado",
                       "--out", out, *extra)
    assert code == 0, err
    t = pd.read_csv(out / "tornado.csv")
    return float(t[t.case == "FLX"].baseline.iloc[0]), err


# ====================================================================== one model
@pytest.mark.slow
def test_tornado_on_a_data_folder_has_solve_as_its_baseline(capsys, inputs, tmp_path):
    """Issue: ``--data DIR sensitivity --method tornado`` replaced DIR's FL rest length by the
    space's nominal 15 mm (baseline 2.566 deg against solve's)."""
    set_cell("ligaments.csv", 3, "l0_mm", "15.3")(inputs)
    base, err = tornado_flx_baseline(capsys, inputs, tmp_path / "t")
    assert base == pytest.approx(flx_deg(inputs), abs=CSV_ATOL_DEG)
    assert abs(base - 2.566) > 0.1
    # the file's nominal 15 differs from the model's 15.3: said, in one warning line
    warn = [ln for ln in err.splitlines() if ln.startswith("segment: warning:")]
    assert len(warn) == 1 and "l0_FL 15 -> 15.3 mm" in warn[0], err
    text = (tmp_path / "t" / "study_inputs.txt").read_text()
    assert "nominal values: the model's" in text and f"data folder: {inputs}" in text


def test_a_model_outside_the_space_is_refused(capsys, inputs, tmp_path):
    """The issue's DIR (FL l0 = 16.5 mm, outside the space's 14.5-15.5) has no tornado over
    that space: one error naming the file, row and parameter, nothing written."""
    set_cell("ligaments.csv", 3, "l0_mm", "16.5")(inputs)
    code, out, err = run(capsys, "--data", inputs, "sensitivity", "--method", "tornado",
                         "--out", tmp_path / "t")
    assert_one_line_error(code, out, err, "parameter_space.csv, line 9 (row 8)", "l0_FL",
                          "16.5", "does not contain the model")
    assert not (tmp_path / "t").exists()


@pytest.mark.slow
def test_shipped_calibrated_folder_studies_as_itself(capsys, tmp_path):
    """``--data data/calibrated sensitivity --method tornado`` has solve's FLX as baseline
    (the issue: 2.758 deg from the published nominal values against solve's 3.006)."""
    from segment.studies.calibration import shipped_calibrated_dir

    folder = shipped_calibrated_dir()
    base, _ = tornado_flx_baseline(capsys, folder, tmp_path / "t")
    assert base == pytest.approx(flx_deg(folder), abs=CSV_ATOL_DEG)
    assert abs(base - 2.758) > 0.1


def test_for_model_reads_the_nominal_values_of_the_model():
    from segment.studies.space import ModelNominalWarning

    space = load_space()
    model = segment.c5c6()
    assert space.for_model(model) is space            # the packaged pair agrees
    ligs = tuple(x.with_rest_length(15.25) if x.name == "FL" else x for x in model.ligaments)
    other = model.replace(ligaments=ligs)
    with pytest.warns(ModelNominalWarning, match=r"l0_FL 15 -> 15\.25 mm"):
        s2 = space.for_model(other)
    j = space.names.index("l0_FL")
    assert s2.nominal[j] == 15.25
    assert np.array_equal(np.delete(s2.nominal, j), np.delete(space.nominal, j))
    # a model without the facets keeps the file's nominal facet values
    assert space.for_model(model.replace(facets=())) is space


def test_for_model_refuses_what_the_space_cannot_describe():
    space = load_space()
    model = segment.c5c6()
    ligs = tuple(x.with_rest_length(6.2) if x.name == "CL-right" else x
                 for x in model.ligaments)
    with pytest.raises(ValueError, match=r"parameter_space.csv, line 11 \(row 10\), column "
                                         r"'element': 'l0_CL' sets ligament CL-left l0 and "
                                         r"ligament CL-right l0 to one value, but the model "
                                         r"has 6, 6.2"):
        space.for_model(model.replace(ligaments=ligs))


def test_equilibrium_sensitivity_defaults_to_the_model(inputs):
    from segment.studies.sensitivity import equilibrium_sensitivity
    from segment.studies.space import ModelNominalWarning

    set_cell("ligaments.csv", 3, "l0_mm", "15.3")(inputs)
    model = segment.c5c6(data_dir=inputs)
    with pytest.warns(ModelNominalWarning):
        s = equilibrium_sensitivity(model, segment.LOAD_CASES["FLX"])
    np.testing.assert_allclose(s.q, segment.solve(model, segment.LOAD_CASES["FLX"]).q,
                               atol=1e-10)


def test_calibrate_reads_the_folders_load_cases(capsys, inputs, tmp_path):
    """Issue: ``--data DIR calibrate`` ignored DIR's load_cases.csv (its 'published model' FLX
    was the packaged 1.8 N m one)."""
    set_cell("load_cases.csv", 7, "My_Nm", "2.5")(inputs)
    out = tmp_path / "cal"
    code, _, err = run(capsys, "--data", inputs, "calibrate", "--out", out)
    assert code == 0, err
    a = pd.read_csv(out / "calibration_agreement.csv")
    got = float(a[(a.case == "FLX") & (a.configuration == "intact")].published_model.iloc[0])
    assert got == pytest.approx(flx_deg(inputs), abs=1e-5)


def test_calibrate_writes_the_inputs_it_used(capsys, inputs, tmp_path):
    """Issue: ``calibrate --targets ONE.csv --out cal`` wrote the packaged 13 targets (and the
    packaged space) into the folder, not what was used."""
    import hashlib

    rows = (inputs / TARGETS).read_text(encoding="utf-8").splitlines()
    one = tmp_path / "one.csv"
    one.write_text("\n".join([rows[0], rows[2]]) + "\n", encoding="utf-8")
    set_cells(SPACE, [(8, "lower", "14.8"), (8, "upper", "15.2")])(inputs)
    out = tmp_path / "cal"
    code, _, err = run(capsys, "calibrate", "--targets", one, "--space", inputs / SPACE,
                       "--out", out)
    assert code == 0, err
    assert (out / "calibration_targets.csv").read_bytes() == one.read_bytes()
    assert (out / "calibration_space.csv").read_bytes() == (inputs / SPACE).read_bytes()
    summary = (out / "calibration_summary.txt").read_text()
    assert hashlib.sha256(one.read_bytes()).hexdigest() in summary
    assert hashlib.sha256((inputs / SPACE).read_bytes()).hexdigest() in summary
    assert f"`segment calibrate --targets {one}" in summary
    written = pd.read_csv(out / "parameter_space.csv").set_index("name")
    assert written.loc["l0_FL", "lower"] == 14.8


@pytest.mark.slow
def test_a_calibrated_folder_studies_as_itself(capsys, tmp_path):
    """The folder calibrate writes holds the space centred on its model: its tornado has
    solve's baseline without any warning, and its stiffness factors span the same absolute
    range as the calibration's."""
    out = tmp_path / "cal"
    code, _, err = run(capsys, "calibrate", "--out", out)
    assert code == 0, err
    base, err = tornado_flx_baseline(capsys, out, tmp_path / "t")
    assert "warning" not in err, err
    assert base == pytest.approx(flx_deg(out), abs=CSV_ATOL_DEG)
    used = load_space(out / "calibration_space.csv")
    centred = load_space(out / "parameter_space.csv")
    cal = pd.read_csv(out / "calibration_parameters.csv").set_index("parameter")
    for j, name in enumerate(used.names):
        x = cal.loc[name, "MAP"]
        if used.fields[j] == "stiffness_scale":
            assert centred.nominal[j] == 1.0
            assert centred.lower[j] * x == pytest.approx(used.lower[j], rel=2e-5)
            assert centred.upper[j] * x == pytest.approx(used.upper[j], rel=2e-5)
        else:
            assert centred.nominal[j] == pytest.approx(x, rel=1e-5)
            assert (centred.lower[j], centred.upper[j]) == (used.lower[j], used.upper[j])


# ====================================================================== plausibility
@pytest.mark.parametrize("m", STUDY_MUTATIONS, ids=[m.id for m in STUDY_MUTATIONS])
def test_study_input_mutation(m, inputs, capsys, tmp_path):
    reference = input_fingerprint(load_input(m, copy_inputs(data_dir(), tmp_path / "ref")))
    m.apply(inputs)
    if m.expect == "accept":
        np.testing.assert_allclose(input_fingerprint(load_input(m, inputs)), reference,
                                   rtol=SAME_RTOL, atol=0)
        return
    with pytest.raises(ValueError) as excinfo:
        load_input(m, inputs)
    message = str(excinfo.value)
    assert m.file in message and "\n" not in message, message
    for f in m.fields:
        assert f in message, message
    if m.line is not None:
        assert f"line {m.line} (row {m.line - 1})" in message, message
    # the command line says it in one line, exit code 2, before any work
    argv = {SPACE: ("sensitivity", "--method", "tornado", "--space", inputs / SPACE, "--out",
                    tmp_path / "t"),
            TARGETS: ("calibrate", "--targets", inputs / TARGETS, "--out", tmp_path / "c"),
            STRIPS: ("--data", inputs, "cases")}[m.file]
    assert_one_line_error(*run(capsys, *argv), m.file)
    assert not (tmp_path / "t").exists() and not (tmp_path / "c").exists()


def test_implausible_study_inputs_load_with_allow_implausible(inputs):
    from segment.studies.calibration import Targets
    from segment.studies.space import ParameterSpace

    set_cells(SPACE, [(6, "nominal", "0.018"), (6, "lower", "0.0175"),
                      (6, "upper", "0.0185")])(inputs)
    with pytest.warns(ImplausibleDataWarning, match="plausible range 1 to 60 mm"):
        space = ParameterSpace.from_csv(inputs / SPACE, strict=False)
    assert space.lower[space.names.index("l0_ALL")] == 0.0175
    set_cell(TARGETS, 1, "SD", "1e-9")(inputs)
    with pytest.warns(ImplausibleDataWarning, match="SD_RATIO_RANGE"):
        Targets.from_csv(inputs / TARGETS, strict=False)
    set_cell(STRIPS, 5, "width_mm", "11200")(inputs)
    with pytest.warns(ImplausibleDataWarning, match="width_mm"):
        segment.load_parameters(inputs, strict=False)
    # a unit that contradicts the field, and a strip count past MAX_STRIPS, stay errors
    set_cell(SPACE, 8, "unit", "m")(inputs)
    with pytest.raises(ValueError, match="'m' is not the unit of l0_mm"):
        ParameterSpace.from_csv(inputs / SPACE, strict=False)
    set_cell(STRIPS, 2, "strips", "1e300")(inputs)
    with pytest.raises(ValueError, match="expected an integer from 1 to 100"):
        segment.load_parameters(inputs, strict=False)


def test_prior_mass_is_computed_not_assumed():
    from segment.studies.priors import MIN_PRIOR_MASS, prior_mass

    assert prior_mass("normal", 43.2, 5.4, 32.4, 54.0) == pytest.approx(NORMAL_2SD_MASS,
                                                                         rel=1e-12)
    ln = math.log
    assert prior_mass("lognormal", ln(16.7), 0.5, 16.7 * math.exp(-1.0),
                      16.7 * math.exp(1.0)) == pytest.approx(NORMAL_2SD_MASS, rel=1e-12)
    # the issue's priors: no mass inside (mean 1000) and a median typed as dist_mu
    assert prior_mass("normal", 1000.0, 5.4, 32.4, 54.0) < 1e-300
    assert prior_mass("lognormal", 16.7, 0.549, 5.57, 50.1) < 1e-100
    # both bounds far above the mean: the upper tails, not 1 - 1
    assert prior_mass("normal", 0.0, 1.0, 8.0, 9.0) == pytest.approx(6.22096e-16, rel=1e-5)
    for dist, mu, sigma, lo, hi in zip(*[load_space().distributions, load_space().mu,
                                         load_space().sigma, load_space().lower,
                                         load_space().upper], strict=True):
        assert prior_mass(dist, mu, sigma, lo, hi) >= MIN_PRIOR_MASS


def test_targets_sd_1e9_is_refused_on_the_command_line(capsys, inputs, tmp_path):
    """Issue: targets with SD = 1e-9 made all 21 parameters 'determined by data' with
    posterior SD 0."""
    set_cell(TARGETS, 1, "SD", "1e-9")(inputs)
    code, out, err = run(capsys, "calibrate", "--targets", inputs / TARGETS, "--out",
                         tmp_path / "c")
    assert_one_line_error(code, out, err, "calibration_targets.csv", "line 2 (row 1)", "'SD'",
                          "1e-09")


def test_solve_sets_refuses_a_parameter_the_tables_would_refuse(model, space):
    """Issue: ``solve_sets`` accepted a facet inclination of 1e6 deg that facets.csv refuses."""
    from segment.studies.sets import solve_sets

    P = space.sample(2, seed=0)
    j = space.names.index("facet_inclination_left")
    for value, match in ((1e6, r"must lie in \(-90, 90\)"), (0.75, "plausible range 5 to 85 deg"),
                         (89.0, "plausible range 5 to 85 deg")):
        Q = P.copy()
        Q[:, j] = value
        with pytest.raises(ValueError, match=match):
            solve_sets(model, Q, [segment.LOAD_CASES["FLX"]], space=space)
    Q[:, j] = 86.0
    with pytest.warns(ImplausibleDataWarning, match="facet_inclination_left"):
        r = solve_sets(model, Q, [segment.LOAD_CASES["FLX"]], space=space, strict=False)
    assert r.q.shape == (2, 1, 6)


# ====================================================================== degenerate studies
def test_sobol_n_1_is_refused_with_the_minimum(capsys, tmp_path):
    """Issue: ``sensitivity --n 1`` exited 0 with 'dominated by facet_gap (ST 99.39 ± 0.00)'."""
    from segment.studies.sobol import MIN_BASE_SAMPLES, min_evaluations

    code, out, err = run(capsys, "sensitivity", "--n", "1", "--out", tmp_path / "s")
    low = min_evaluations(21)
    assert_one_line_error(code, out, err, "--n must be at least", f"{low:,}",
                          f"N >= {MIN_BASE_SAMPLES}")
    assert not (tmp_path / "s").exists()
    with pytest.raises(ValueError, match=f"n must be at least {low:,}"):
        segment.sobol_study(segment.c5c6(), n=low - 1)


def test_out_of_range_indices_are_never_printed():
    from segment.studies.sobol import SobolResult, dominant_parameters, fig_sobol

    rows = [{"output": "FLX main", "case": "FLX", "quantity": "main", "unit": "deg",
             "parameter": p, "S1": s1, "S1_conf": 0.0, "ST": st, "ST_conf": 0.0,
             "constant": False} for p, s1, st in (("a", 0.2, 1.55), ("b", 0.1, 0.3))]
    rows += [{**r, "output": "AR main", "case": "AR", "ST": 0.4 + 0.1 * k, "S1": 0.3}
             for k, r in enumerate(rows)]
    res = SobolResult(indices=pd.DataFrame(rows), n_base=128, n_evaluations=128 * 4,
                      n_failed=0, elapsed=0.0, conf_level=0.95)
    lines = dominant_parameters(res)
    assert lines[0].startswith("FLX main: not resolved") and "1.55" not in lines[0]
    assert lines[1].startswith("AR main: dominated by b (ST 0.50")
    fig = fig_sobol(res)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "1.55" not in texts and "0.50" in texts
    import matplotlib.pyplot as plt

    plt.close(fig)


@pytest.mark.slow  # a Sobol study
def test_a_study_where_failures_concentrate_is_refused(inputs):
    """Every stiffness of the model at 5 % of the published one (loaded with strict=False):
    most sets fail, and which ones depends on the disc's flexion stiffness factor. The
    survivors would describe another part of the space, so the study refuses, saying why."""
    soften(inputs, 0.05)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ImplausibleDataWarning)
        model = segment.c5c6(data_dir=inputs, strict=False)
    r = segment.sobol_study(model, n=1473)
    assert r.refused and 0 < r.n_failed < r.n_evaluations
    assert "not random" in r.message and "disc_phi_y (low end of its range" in r.message
    assert r.indices[["S1", "ST"]].isna().all().all()
    assert r.failures.reasons and r.failures.concentrated[0][:2] == ("disc_phi_y", "low")
    assert segment.studies.sobol.dominant_parameters(r)[0].startswith("no Sobol indices:")


@pytest.mark.slow  # a Sobol study on the command line
def test_a_study_where_every_set_fails_is_refused_on_the_command_line(capsys, inputs,
                                                                       tmp_path):
    """Issue: a study where every set failed gave exit 0, '736 failed', then 'does not vary
    over the space (no indices)'. Here the model itself has no equilibrium (every stiffness
    x 0.001, loaded with --allow-implausible)."""
    soften(inputs)
    code, out, err = run(capsys, "--data", inputs, "--allow-implausible", "sensitivity",
                         "--n", "1473", "--out", tmp_path / "s")
    assert code == 1, (out, err)
    assert "refused" in err and "every set failed" in err, err
    assert "load stepping could not advance" in err, err                # why
    assert "dominated" not in out and not (tmp_path / "s").exists()


def test_failure_summary_tells_random_from_concentrated():
    from segment.studies.failures import MAX_FAILED_FRACTION, summarise_failures

    rng = np.random.default_rng(1)
    pos = rng.random((2000, 3))
    random_fail = np.ones(2000, dtype=bool)
    random_fail[rng.choice(2000, 15, replace=False)] = False
    s = summarise_failures(pos, random_fail, names=("a", "b", "c"))
    assert s.tested and not s.concentrated and s.acceptable
    assert s.fraction <= MAX_FAILED_FRACTION
    corner = pos[:, 1] > 0.02                       # the 2 % with the lowest b fail
    s = summarise_failures(pos, corner, names=("a", "b", "c"))
    assert [c[:2] for c in s.concentrated] == [("b", "low")] and not s.acceptable
    many = np.ones(2000, dtype=bool)
    many[rng.choice(2000, 100, replace=False)] = False   # 5 % at random: too many
    s = summarise_failures(pos, many, names=("a", "b", "c"))
    assert not s.concentrated and not s.acceptable


# ====================================================================== files read back
@pytest.fixture(scope="module")
def saved_sets(tmp_path_factory):
    pytest.importorskip("pyarrow")
    from segment.studies.sets import solve_sets

    space = load_space()
    res = solve_sets(segment.c5c6(), space.sample(4, seed=3),
                     [segment.LOAD_CASES[c] for c in ("FLX", "AR")], space=space)
    path = tmp_path_factory.mktemp("sets") / "sets.parquet"
    res.to_parquet(path)
    return res, path


def test_untampered_sets_read_back_equal(saved_sets):
    from segment.studies.sets import SetsResult

    res, path = saved_sets
    back = SetsResult.read_parquet(path)
    for k in ("P", "q", "status", "iterations", "q_unloaded", "status_unloaded",
              "facet_force", "loads"):
        assert np.array_equal(getattr(back, k), getattr(res, k)), k
    assert (back.names, back.load_names, back.facet_names) == (res.names, res.load_names,
                                                               res.facet_names)


@pytest.mark.parametrize("what", list(PARQUET_TAMPERING))
def test_tampered_sets_file_is_refused_naming_it(saved_sets, tmp_path, what):
    """Issue: read_parquet accepted 5 names for 21 columns, NaN in q with every entry
    converged and NaN loads, and answered a missing key or column with a bare KeyError,
    JSONDecodeError or reshape error that did not name the file."""
    from segment.studies.sets import SetsResult

    _, path = saved_sets
    bad = tamper_parquet(path, tmp_path / "tampered.parquet", **PARQUET_TAMPERING[what])
    with pytest.raises(ValueError, match=re.escape(str(bad))) as excinfo:
        SetsResult.read_parquet(bad)
    assert "not a parameter-set result" in str(excinfo.value)


def test_missing_or_foreign_file_is_named(tmp_path):
    pytest.importorskip("pyarrow")
    from segment.studies.sets import SetsResult

    with pytest.raises(ValueError, match=r"nothing\.parquet: file not found"):
        SetsResult.read_parquet(tmp_path / "nothing.parquet")
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"not parquet at all")
    with pytest.raises(ValueError, match=r"junk\.parquet: not a readable parquet file"):
        SetsResult.read_parquet(junk)


# ====================================================================== limits
LIMIT_CASES = {
    "render --size 20000 100": (("render", "FLX", "--size", "20000", "100"), "--size"),
    "render --size 1000000 1000000": (("render", "FLX", "--size", "1000000", "1000000"),
                                      "--size"),
    "render --size 16384 8193": (("render", "FLX", "--size", "16384", "8193"), "--size"),
    "ramp --steps 1000000000": (("ramp", "FLX", "--to-scale", "2", "--steps", "1000000000"),
                                "--steps"),
    "ramp --steps 1e9": (("ramp", "FLX", "--to-scale", "2", "--steps", "1e9"), "--steps"),
    "ramp --strips 100000": (("ramp", "FLX", "--to-scale", "2", "--strips", "100000"),
                             "--strips"),
    "sensitivity --n 1e11": (("sensitivity", "--n", "1e11"), "--n"),
    "sensitivity --n 100000000000": (("sensitivity", "--n", "100000000000"), "--n"),
    "sensitivity --n 99999999999999999999999": (
        ("sensitivity", "--n", "99999999999999999999999"), "--n"),
    "sensitivity --n 2.5": (("sensitivity", "--n", "2.5"), "--n"),
    "sensitivity --seed -1": (("sensitivity", "--n", "3000", "--seed", "-1"), "--seed"),
    "sensitivity --seed 2**32": (("sensitivity", "--seed", str(2 ** 32)), "--seed"),
    "solve --scale 1e306": (("solve", "FLX", "--scale", "1e306"), "--scale"),
    "solve --scale 1000": (("solve", "FLX", "--scale", "1000"), "--scale"),
    "calibrate --samples 10000000000": (("calibrate", "--samples", "10000000000"),
                                        "--samples"),
    "calibrate --samples -5": (("calibrate", "--samples", "-5"), "--samples"),
    "simulate --t-end 1e9 --ramp 1e9": (("simulate", "FLX", "--t-end", "1e9", "--ramp", "1e9"),
                                        "--t-end"),
}


@pytest.mark.parametrize("name", list(LIMIT_CASES))
def test_count_and_size_options_have_limits(capsys, tmp_path, monkeypatch, name):
    """Issue: these ran out of memory, hung, wrote a black PNG with exit 0, or failed with
    a message that did not name the option."""
    monkeypatch.chdir(tmp_path)
    argv, option = LIMIT_CASES[name]
    assert_one_line_error(*run(capsys, *argv), option)
    assert list(tmp_path.iterdir()) == []                  # nothing written


def test_scale_beyond_the_plausible_loads_runs_with_allow_implausible(capsys):
    code, out, _ = run(capsys, "--allow-implausible", "solve", "FLX", "--scale", "150")
    assert code in (0, 1) and "FLX" in out
    code, out, err = run(capsys, "--allow-implausible", "solve", "FLX", "--scale", "1e306")
    assert_one_line_error(code, out, err, "--scale", "not be finite")


def test_counts_accept_integers_written_as_floats():
    from segment.cli._common import count

    assert count(maximum=10 ** 6)("1e5") == 100_000
    assert count()(" 7 ") == 7
    for bad in ("1.5", "nan", "inf", "x", "0"):
        with pytest.raises(Exception, match=r"expected an integer|must be >= 1"):
            count()(bad)


@pytest.mark.parametrize("scheduler_first", [True, False])
def test_a_scheduler_that_does_not_answer_leaves_the_output_as_it_was(capsys, tmp_path,
                                                                     scheduler_first):
    """Issue: a scheduler on a closed port failed after rewriting the output folder."""
    import socket

    with socket.socket() as s:                 # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    out = tmp_path / "out"
    if scheduler_first:
        argv = ("sensitivity", "--n", "3000", "--scheduler", address, "--out", out)
    else:
        out.mkdir()
        (out / "keep.txt").write_text("old\n")
        argv = ("calibrate", "--samples", "200", "--scheduler", address, "--out", out)
    before = sorted(p.name for p in out.iterdir()) if out.exists() else None
    assert_one_line_error(*run(capsys, *argv), "--scheduler", "no scheduler answers")
    after = sorted(p.name for p in out.iterdir()) if out.exists() else None
    assert after == before
    if not scheduler_first:
        assert (out / "keep.txt").read_text() == "old\n"


def test_api_arguments_are_checked_and_named(model, space):
    """Issue: solve_sets(None, ...), Load.from_si(force_N=["a", 0, 0]) and huge counts ended
    in errors that did not name the argument (or in memory errors)."""
    from segment.studies.sets import solve_sets
    from segment.studies.uncertainty import sample_models

    flx = segment.LOAD_CASES["FLX"]
    P = space.sample(2, seed=0)
    cases = [
        (lambda: solve_sets(None, P, [flx]), TypeError, "model must be a segment.Segment"),
        (lambda: solve_sets(model, P.astype(str), [flx]), TypeError, "P must be an array"),
        (lambda: solve_sets(model, P, [flx], chunk=2.5), TypeError, "chunk must be an integer"),
        (lambda: segment.Load.from_si(force_N=["a", 0, 0]), TypeError, "force_N must be 3"),
        (lambda: segment.Load.from_si(moment_Nm=[0, math.nan, 0]), ValueError,
         "moment_Nm must be finite"),
        (lambda: segment.sobol_study(model, n=True), TypeError, "n must be an integer"),
        (lambda: segment.sobol_study(model, n=10 ** 9), ValueError, "n must be <= "),
        (lambda: segment.sobol_study(model, n=3000, seed=-1), ValueError, "seed must be >= 0"),
        (lambda: segment.uncertainty_bands(model, n_samples=10 ** 11), ValueError,
         "n_samples = 100,000,000,000"),
        (lambda: segment.uncertainty_bands(model, n_samples="5"), TypeError,
         "n_samples must be an integer"),
        (lambda: sample_models(model, 10 ** 6), ValueError, "n_samples must be <= 100,000"),
        (lambda: space.sample(10 ** 12), ValueError, "n = 1,000,000,000,000"),
        (lambda: space.sample("5"), TypeError, "n must be an integer"),
        (lambda: space.sample(5, seed=-3), ValueError, "seed must be >= 0"),
        (lambda: model.with_strips(100000), ValueError, "strips must be an integer from 1"),
        (lambda: load_space(42), TypeError, "space must be a ParameterSpace"),
        (lambda: segment.simulate(model, flx, t_end="1"), TypeError,
         "t_end must be a number [s], got '1'"),
    ]
    for fn, kind, text in cases:
        with pytest.raises(kind, match=re.escape(text)):
            fn()


def test_relaxation_reports_a_singular_mass_matrix_as_a_status(model):
    """Issue: ``relax(m, FLX.scaled(1000))`` raised LinAlgError: C5 turns to phi_y = 270 deg,
    where the Cardan mass matrix is singular."""
    r = segment.relax(model, segment.LOAD_CASES["FLX"].scaled(1000))
    assert not r.converged
    assert "singular" in r.message and "cos(phi_y) = 0" in r.message


def test_memory_is_checked_before_allocating(monkeypatch):
    from segment import _checks

    monkeypatch.setattr(_checks, "available_memory", lambda: 10 ** 9)
    with pytest.raises(ValueError, match=r"needs about 2 GB of memory, 1 GB are available"):
        _checks.check_memory(2e9, "this")
    _checks.check_memory(7e8, "this")                           # within MEMORY_FRACTION
    monkeypatch.setattr(_checks, "available_memory", lambda: None)
    _checks.check_memory(1e30, "unknown memory: not checked")


def test_check_count_names_the_argument():
    from segment import _checks

    assert _checks.check_count(5.0, "k") == 5
    assert _checks.check_count(np.int64(3), "k") == 3
    for bad, kind in ((True, TypeError), ("3", TypeError), (2.5, TypeError), (1j, TypeError),
                      (math.inf, TypeError), (0, ValueError)):
        with pytest.raises(kind, match=r"^k must"):
            _checks.check_count(bad, "k")
    with pytest.raises(ValueError, match=r"k must be <= 10, got 11 \(why\)"):
        _checks.check_count(11, "k", maximum=10, why="why")


def test_the_reliability_census_runs_the_issue_21_classes():
    """The census script imports and names every class of issue 21 (the full run takes
    minutes and is made by hand; its results are in benchmarks/results)."""
    import importlib.util
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("census", root / "scripts"
                                                  / "reliability_census.py")
    census = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(census)
    assert callable(census.run_issue21)
    after = json.loads((root / "benchmarks" / "results"
                        / "reliability_census_issue21_after.json").read_text())
    counts = after["issue21"]["counts"]
    assert set(counts) == {"E_parameter_space", "E_ligament_strips", "E_calibration_targets",
                           "F_parquet_read_back", "G_cli_sizes_and_counts",
                           "H_api_argument_types", "I_one_model_degenerate_studies"}
