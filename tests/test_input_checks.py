"""The check layer of issue 31 (segment.core.checks): every faulty input of the issue is
refused with a message naming the file, row or argument and the value, and the valid input
next to it still passes. The faulty inputs are built by ``tests/input_mutations.py`` (shared
with ``scripts/reliability_census.py``)."""

import math
import pickle
import shutil
import warnings

import input_mutations as im
import numpy as np
import pytest

import segment
from segment.core import states as st
from segment.core.checks import (
    CURVE_MOMENT,
    PAYLOAD_MASS,
    QUANTITIES,
    Quantity,
    check_load,
    check_start,
    corridor_problem,
    parse_flag,
)
from segment.core.tables import ImplausibleDataWarning
from segment.solvers.dynamics import BaseExcitation, Payload
from segment.studies.calibration.lm import least_squares_bounded
from segment.studies.compare import compare_states
from segment.studies.curves import compare, load_curves
from segment.studies.population import Population

HEAD = {"inertia_kg_cm2": (200.0, 200.0, 200.0), "cog_mm": (20.0, 0.0, 0.0)}
"""A head-like payload: what the payload checks must let through."""


@pytest.fixture(scope="module")
def model():
    return segment.c5c6()


# ---------------------------------------------------------------- the rows themselves
def test_quantity_check_names_the_argument_and_the_value():
    assert PAYLOAD_MASS.check(4.5, "mass_kg") == 4.5
    with pytest.raises(ValueError, match=r"mass_kg must lie in \(0, 100\], got 4500 kg"):
        PAYLOAD_MASS.check(4500, "mass_kg")
    with pytest.raises(TypeError, match=r"mass_kg must be a number \[kg\], got '4\.5'"):
        PAYLOAD_MASS.check("4.5", "mass_kg")
    with pytest.raises(TypeError, match="got True"):
        PAYLOAD_MASS.check(True, "mass_kg")
    with pytest.raises(ValueError, match="mass_kg must be a finite number"):
        PAYLOAD_MASS.check(math.nan, "mass_kg")
    # plausible range: an error, a warning with strict=False, silence with None
    with pytest.raises(ValueError, match="moment: 60 N m is outside the plausible range"):
        CURVE_MOMENT.check(60.0, "moment")
    with pytest.warns(ImplausibleDataWarning, match="60 N m"):
        assert CURVE_MOMENT.check(60.0, "moment", strict=False) == 60.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert CURVE_MOMENT.check(60.0, "moment", strict=None) == 60.0


def test_every_row_gives_its_reason():
    for key, q in QUANTITIES.items():
        assert isinstance(q, Quantity), key
        assert q.why or (q.plausible is not None and q.plausible.reason), key


def test_sources_names_every_row_and_marks_the_assumed_ones():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "validation" / "reference" /
            "SOURCES.md").read_text(encoding="utf-8")
    section = text.split("## §16 ")[1].split("\n## ")[0]
    assert [k for k in QUANTITIES if f"**{k}**" not in section] == []
    assumed = [k for k, q in QUANTITIES.items()
               if q.plausible is not None and "assumed" in q.plausible.reason]
    assert assumed and all(f"**{k}**" in section for k in assumed)
    for k in assumed:   # the bullet that names it says *assumed*, in it or the one it shares
        bullet = next(b for b in section.split("\n- ") if f"**{k}**" in b)
        assert "*assumed*" in bullet, k


def test_flags_are_parsed_not_cast():
    assert parse_flag("True") and parse_flag(" yes ") and parse_flag("1")
    assert not parse_flag("False") and not parse_flag("no") and not parse_flag("0")
    with pytest.raises(ValueError, match=r"expected True or False .*got 'maybe'"):
        parse_flag("maybe")


def test_start_and_load_limits():
    q = np.array([1.0, 0.0, 0.0, 0.0, 0.1, 0.0])
    assert check_start(q) is not None
    with pytest.raises(ValueError, match="q0: x = 1e\\+200 mm"):
        check_start(np.array([1e200, 0, 0, 0, 0, 0]))
    with pytest.raises(ValueError, match="start: phi_y = 100 deg"):
        check_start(np.radians([0, 0, 0, 0, 100, 0]) * [0, 0, 0, 0, 1, 0], "start")
    check_load([0, 0, -50.0], [2000.0, 0, 0], "FLX")
    with pytest.raises(ValueError, match="FLX would be a moment of 180000 N m"):
        check_load([0, 0, 0], [-1.8e8, 0, 0], "FLX")
    check_load([0, 0, 0], [-1.8e8, 0, 0], "FLX", strict=False)
    with pytest.raises(ValueError, match="FLX would not be finite"):
        check_load([0, 0, 0], [math.inf, 0, 0], "FLX", strict=False)


def test_corridor_problem_needs_two_specimens_and_a_spread():
    assert corridor_problem("flexion", 2.0, ["B03", "B04"], [3.0, 4.0]) is None
    assert "needs at least 2" in corridor_problem("flexion", 2.0, ["B03"], [3.0])
    assert "SD 0" in corridor_problem("flexion", 2.0, ["B03", "B99"], [3.0, 3.0])


# ---------------------------------------------------------------- curve files
def test_the_packaged_curves_pass(model):
    curves = load_curves()
    assert len(curves.corridor()) > 0
    assert np.isfinite(compare(model, curves)["z"]).all()


@pytest.mark.parametrize("fault", list(im.CURVE_FAULTS))
def test_a_faulty_curve_file_is_refused_naming_file_line_and_column(tmp_path, fault):
    path = im.curve_file(tmp_path, fault)
    _, line, column = im.CURVE_FAULTS[fault]
    with pytest.raises(ValueError) as err:
        load_curves(path)
    msg = str(err.value)
    assert path.name in msg and column in msg, msg
    if line is not None:
        assert f"line {line}" in msg, msg


@pytest.mark.parametrize("fault", ["every rotation negated", "origin points marked as measured"])
def test_hard_faults_stay_errors_with_allow_implausible(tmp_path, fault):
    warnings.simplefilter("ignore", ImplausibleDataWarning)
    with pytest.raises(ValueError, match=im.curve_file(tmp_path, fault).name):
        load_curves(im.curve_file(tmp_path, fault), strict=False)


def test_radians_are_a_warning_with_allow_implausible(tmp_path):
    path = im.curve_file(tmp_path, "rotations in radians under rotation_deg")
    with pytest.warns(ImplausibleDataWarning, match="rotation_rad"):
        load_curves(path, strict=False)


@pytest.mark.parametrize("fault", list(im.CORRIDOR_FAULTS))
def test_a_curve_file_without_a_corridor_is_refused_naming_file_and_mode(model, tmp_path,
                                                                         fault):
    path = im.curve_file(tmp_path, fault)
    with pytest.raises(ValueError) as err:
        compare(model, path)
    msg = str(err.value)
    assert path.name in msg and "flexion" in msg, msg
    assert "nan" not in msg.lower() and "concatenate" not in msg, msg


def test_corridor_min_specimens_below_two_is_refused():
    with pytest.raises(ValueError, match="min_specimens"):
        load_curves().corridor(min_specimens=1)


def test_compare_names_a_wrong_model_or_curves(model):
    with pytest.raises(TypeError, match=r"model must be a segment\.Segment, got NoneType"):
        compare(None)
    with pytest.raises(TypeError, match=r"curves must be a path .* got int"):
        compare(model, 3)


def test_segment_curves_refuses_a_negated_file_in_one_line(tmp_path, capsys):
    from segment.cli import main

    path = im.curve_file(tmp_path, "every rotation negated")
    code = main(["curves", str(path), "--no-metrics", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and path.name in err and "rotation_deg" in err, err
    assert not (tmp_path / "o").exists()


# ---------------------------------------------------------------- least squares
def test_least_squares_stops_on_nan_residuals_and_says_why():
    r = least_squares_bounded(lambda p: np.full(3, np.nan), lambda p: np.ones((3, 2)),
                              [0.5, 0.5], [0.0, 0.0], [1.0, 1.0])
    assert r.status == -1 and "not finite" in r.message and r.nfev == 1
    r = least_squares_bounded(lambda p: np.array([p[0] - 0.3, p[1] - 0.6]),
                              lambda p: np.eye(2), [0.5, 0.5], [0.0, 0.0], [1.0, 1.0])
    assert r.status > 0
    np.testing.assert_allclose(r.x, [0.3, 0.6], atol=1e-8)


def test_least_squares_stops_on_a_nan_jacobian():
    r = least_squares_bounded(lambda p: np.array([p[0] - 0.3]),
                              lambda p: np.full((1, 1), np.nan), [0.5], [0.0], [1.0])
    assert r.status == -1 and "Jacobian" in r.message


# ---------------------------------------------------------------- populations
def test_a_valid_population_csv_reads(model, tmp_path):
    pop = Population.from_csv(im.curve_population(tmp_path), model)
    assert pop.names == ("B03", "B04", "B05") and pop.form == im.FORM


@pytest.mark.parametrize("fault", [k for k in im.POPULATION_CSV_FAULTS
                                   if k != "converged = no counts"])
def test_a_faulty_population_csv_is_refused_naming_line_and_column(model, tmp_path, fault):
    edit, line, column = im.POPULATION_CSV_FAULTS[fault]
    path = im.curve_population(tmp_path, edit)
    with pytest.raises(ValueError) as err:
        Population.from_csv(path, model)
    msg = str(err.value)
    assert path.name in msg, msg
    if line is not None:
        assert f"line {line}" in msg, msg
    if column is not None:
        assert column in msg, msg


def test_converged_no_is_not_a_member(model, tmp_path):
    edit = im.POPULATION_CSV_FAULTS["converged = no counts"][0]
    pop = Population.from_csv(im.curve_population(tmp_path, edit), model)
    assert pop.names == ("B03", "B05")


def test_a_mixture_of_forms_is_read_when_asked(model, tmp_path):
    edit = im.POPULATION_CSV_FAULTS["a member of another form"][0]
    pop = Population.from_csv(im.curve_population(tmp_path, edit), model, mixed=True)
    assert len(pop.names) == 4 and "fw35" in pop.form and im.FORM in pop.form


@pytest.fixture(scope="module")
def members(tmp_path_factory):
    return im.virtual_population(tmp_path_factory.mktemp("members"))


def test_a_valid_population_folder_reads(model, members):
    pop = Population.from_folders(members, model)
    assert pop.names == ("member_001", "member_002", "member_003")


@pytest.mark.parametrize("fault", list(im.POPULATION_FOLDER_FAULTS))
def test_a_faulty_population_folder_is_refused_naming_the_member(model, members, tmp_path,
                                                                 fault):
    edit, words = im.POPULATION_FOLDER_FAULTS[fault]
    folder = tmp_path / "pop"
    shutil.copytree(members, folder)
    edit(folder)
    with pytest.raises(ValueError) as err:
        Population.from_folders(folder, model)
    msg = str(err.value)
    assert all(w in msg for w in words), msg


# ---------------------------------------------------------------- dynamics
def test_a_pulse_table_in_ms_is_refused_naming_file_line_and_column(tmp_path):
    path = im.pulse_in_ms(tmp_path)
    with pytest.raises(ValueError) as err:
        BaseExcitation.from_csv(path)
    msg = str(err.value)
    assert path.name in msg and "line 3" in msg and "t_s" in msg and "52.5" in msg, msg
    path.write_text("t_s,ax_g,source\n0,0,s\n0.0525,8.5,s\n0.105,0,s\n", encoding="utf-8")
    assert BaseExcitation.from_csv(path).t_s[-1] == pytest.approx(0.105)


def test_from_samples_refuses_what_triangular_refuses():
    acc = [[0, 0, 0], [1, 0, 0], [0, 0, 0]]
    with pytest.raises(ValueError, match="lasts 20 s"):
        BaseExcitation.from_samples([0.0, 10.0, 20.0], acceleration_g=acc)
    with pytest.raises(ValueError, match="duration_s"):
        BaseExcitation.triangular(duration_s=20.0)
    BaseExcitation.from_samples([0.0, 0.05, 0.1], acceleration_g=acc)


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"mass_kg": 4500.0}, ["mass_kg", "4500"]),
    ({"mass_kg": 4.5, "inertia_kg_cm2": (1e7, 1e7, 1e7)}, ["inertia_kg_cm2", "1e+07"]),
    ({"mass_kg": 4.5, "cog_mm": (5000.0, 0.0, 0.0)}, ["cog_mm", "5000"]),
])
def test_a_payload_out_of_range_is_refused(kwargs, words):
    with pytest.raises(ValueError) as err:
        Payload(**{**HEAD, **kwargs})
    assert all(w in str(err.value) for w in words), str(err.value)
    assert Payload(mass_kg=4.5, **HEAD).mass_kg == 4.5


@pytest.mark.parametrize(("kwargs", "word"), [
    ({"t_end": 1e7}, "t_end"),
    ({"t_end": 0.001, "ramp": 1e7}, "ramp"),
    ({"t_end": 0.02, "method": "lsv", "dt": 0.01}, "dt"),
    ({"t_end": 0.001, "q0": np.array([1e200, 0, 0, 0, 0, 0])}, "q0"),
])
def test_simulate_refuses_run_settings_before_running(model, kwargs, word):
    with pytest.raises(ValueError, match=word):
        segment.simulate(model, segment.LOAD_CASES["FLX"], **kwargs)


# ---------------------------------------------------------------- states and compare
@pytest.mark.parametrize(("call", "error", "words"), [
    (lambda m: st.resect_facet(m, "right", "half"), TypeError, ["fraction", "'half'"]),
    (lambda m: st.resect_facet(m, "middle", 0.5), ValueError, ["side", "'middle'"]),
    (lambda m: st.cut(m, ["FL"], fraction="half"), TypeError, ["fraction", "'half'"]),
    (lambda m: st.replace_disc(m, cor_c6_mm=(0.0, 1.0), k_rotation_Nm_per_deg=0.5,
                               k_translation_N_per_mm=1e4), ValueError,
     ["cor_c6_mm", "(0.0, 1.0)"]),
    (lambda m: st.fuse(m, k_rotation_Nm_per_deg=1e9, k_translation_N_per_mm=1e4), ValueError,
     ["k_rotation_Nm_per_deg", "1e+09"]),
    (lambda m: st.degenerate(m, compression="x", shear=1.3), TypeError, ["compression", "'x'"]),
])
def test_an_operation_argument_is_refused_by_name(model, call, error, words):
    with pytest.raises(error) as err:
        call(model)
    assert all(w in str(err.value) for w in words), str(err.value)


def test_operations_with_valid_arguments_still_apply(model):
    assert st.resect_facet(model, "right", 0.5).clinical
    assert st.replace_disc(model, cor_c6_mm=(0.0, 0.0, 5.0), k_rotation_Nm_per_deg=0.5,
                           k_translation_N_per_mm=1e4).clinical
    with pytest.warns(ImplausibleDataWarning, match="k_rotation_Nm_per_deg"):
        st.fuse(model, k_rotation_Nm_per_deg=1e9, k_translation_N_per_mm=1e4, strict=False)


@pytest.mark.parametrize(("kwargs", "error", "word"), [
    ({"scale": -1e5}, ValueError, "scale"),
    ({"scale": 1e306}, ValueError, "scale"),
    ({"ramp_to_scale": 2.0, "steps": 10 ** 9}, ValueError, "steps"),
])
def test_compare_states_refuses_absurd_settings(model, kwargs, error, word):
    with pytest.raises(error, match=word):
        compare_states(model, ["laminectomy"], {"FLX": segment.LOAD_CASES["FLX"]}, **kwargs)
    with pytest.raises(TypeError, match=r"model must be a segment\.Segment, got NoneType"):
        compare_states(None, ["laminectomy"], {"FLX": segment.LOAD_CASES["FLX"]})


@pytest.mark.parametrize("argv", [["--scale", "-1e5"], ["--scale", "1e306"],
                                  ["--to-scale", "2", "--steps", "1000000000"]])
def test_segment_compare_refuses_absurd_options_in_one_line(capsys, argv):
    from segment.cli import main

    code = main(["compare", "FLX", "--states", "laminectomy", *argv])
    err = capsys.readouterr().err
    assert code == 2 and argv[-2] in err and err.count("\n") == 1, err


# ---------------------------------------------------------------- results
def test_a_model_and_the_results_of_a_clinical_state_pickle(model):
    flx = segment.LOAD_CASES["FLX"]
    lam = model.with_state("laminectomy")
    back = pickle.loads(pickle.dumps(lam))
    assert dict(back.cut) == dict(lam.cut) and back.clinical == lam.clinical
    r = segment.solve(lam, flx)
    r2 = pickle.loads(pickle.dumps(r))
    np.testing.assert_array_equal(r2.q, r.q)
    np.testing.assert_array_equal(segment.solve(back, flx).q, r.q)


def test_an_absurd_start_is_refused_by_name(model):
    flx = segment.LOAD_CASES["FLX"]
    with pytest.raises(ValueError, match="q0: x = 1e\\+200 mm"):
        segment.solve(model, flx, q0=np.full(6, 1e200))
    with pytest.raises(ValueError, match="q0"):
        segment.solve_many(model, np.array([flx.as_array()]), q0=np.full(6, 1e200))
    assert segment.solve(model, flx, q0=np.zeros(6)).converged


def test_read_parquet_names_the_file(tmp_path):
    from segment.studies.sets import SetsResult

    text = tmp_path / "notes.parquet"
    text.write_text("not parquet\n", encoding="utf-8")
    for path, words in (("", ["''", "not found"]), (str(tmp_path), [str(tmp_path), "folder"]),
                        (str(text), [str(text), "not a readable parquet file"])):
        with pytest.raises(ValueError) as err:
            SetsResult.read_parquet(path)
        msg = str(err.value)
        assert all(w in msg for w in words) and not msg.startswith(".:"), msg
        assert "magic bytes" not in msg and "Parquet" not in msg, msg
