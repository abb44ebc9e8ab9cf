"""What experimenters report (segment.studies.curve_metrics): each metric against a closed form
on a synthetic curve, the helical axis of a known screw motion, the metrics of the specimen
curves (what is and is not available), and the model's ICR against Anderst et al. 2013."""

import math

import numpy as np
import pytest

import segment
from segment.studies.curve_metrics import (
    curve_metrics,
    elastic_zone_stiffness,
    range_of_motion,
    signed_curve,
    zero_load_neutral_zone,
)
from segment.studies.curves import load_curves
from segment.studies.double_sigmoid import (
    DoubleSigmoid,
    double_sigmoid_neutral_zone,
    fit_double_sigmoid,
)
from segment.studies.helical_axis import finite_helical_axis, sagittal_icr
from segment.studies.icr import ANDERST2013_C5C6, anderst_comparison, icr_path

EXACT = 1e-12            # closed forms evaluated in double precision
NZ_RTOL = 1e-9           # NZ bounds refined by a bounded scalar search to 1e-13 N m
FIT_RTOL = 1e-5          # a 7-parameter least-squares fit of noise-free data recovers the NZ
LN_2_PLUS_SQRT3 = math.log(2.0 + math.sqrt(3.0))   # extremes of a logistic's 2nd derivative


# ---------------------------------------------------------------- ROM, stiffness
def test_rom_at_the_largest_moment_and_interpolated():
    m = np.linspace(0.0, 3.5, 36)
    r = m / 0.4                                  # 0.4 N m/deg
    assert range_of_motion(m, r).value == pytest.approx(3.5 / 0.4, abs=EXACT)
    assert range_of_motion(m, r, at_Nm=1.85).value == pytest.approx(1.85 / 0.4, abs=EXACT)


def test_rom_is_not_available_outside_the_measured_points():
    m = np.linspace(0.0, 3.5, 36)
    kept = m >= 1.5                              # an unmeasured initial line, as Nightingale's
    v = range_of_motion(m, m / 0.4, kept=kept, at_Nm=1.0)
    assert v.value is None and "outside the measured moments (1.5-3.5 N m)" in v.note
    assert str(v) == "not available"


def test_elastic_zone_stiffness_of_a_bilinear_curve():
    """Compliant up to 0.5 N m (0.05 N m/deg), then 0.6 N m/deg: the EZ slope is 0.6."""
    m = np.linspace(0.0, 3.0, 61)
    r = np.where(m <= 0.5, m / 0.05, 0.5 / 0.05 + (m - 0.5) / 0.6)
    assert elastic_zone_stiffness(m, r, from_Nm=0.5).value == pytest.approx(0.6, rel=EXACT)
    assert elastic_zone_stiffness(m, r, from_Nm=3.5).value is None


# ---------------------------------------------------------------- zero-load NZ
def test_zero_load_neutral_zone_of_a_hysteresis_loop():
    """Unloading branches theta = M/k +- delta/2: the zero-load points are delta apart."""
    m = np.linspace(-2.0, 2.0, 81)
    k, delta = 0.3, 1.7
    v = zero_load_neutral_zone((m[::-1], m[::-1] / k + delta / 2), (m, m / k - delta / 2))
    assert v.value == pytest.approx(delta, abs=EXACT)


def test_zero_load_neutral_zone_needs_the_unloading_branches():
    v = zero_load_neutral_zone()
    assert v.value is None and "unloading branches" in v.note


# ---------------------------------------------------------------- double sigmoid
@pytest.mark.parametrize("a1, a2, c, w", [(3.0, 3.0, 0.0, 0.5), (2.0, 5.0, 0.3, 0.8)])
def test_neutral_zone_of_one_logistic_closed_form(a1, a2, c, w):
    """Two logistic terms with one centre and width are one logistic of amplitude a = a1 + a2:
    theta'' is extreme at c -+ w ln(2 + sqrt 3), so NZ = a / sqrt 3 and the NZ stiffness
    (1 / the largest compliance, a / 4w at c) is 4 w / a."""
    f = DoubleSigmoid(d=0.7, a1=a1, c1=c, w1=w, a2=a2, c2=c, w2=w)
    nz = f.neutral_zone(-6.0, 6.0)
    a = a1 + a2
    assert nz.lower_Nm == pytest.approx(c - w * LN_2_PLUS_SQRT3, rel=NZ_RTOL)
    assert nz.upper_Nm == pytest.approx(c + w * LN_2_PLUS_SQRT3, rel=NZ_RTOL)
    assert nz.size_deg == pytest.approx(a / math.sqrt(3.0), rel=NZ_RTOL)
    assert nz.stiffness_Nm_per_deg == pytest.approx(4.0 * w / a, rel=NZ_RTOL)


def test_derivatives_match_central_differences():
    f = DoubleSigmoid(d=0.2, a1=6.0, c1=-0.4, w1=0.5, a2=5.0, c2=0.6, w2=0.4)
    M = np.linspace(-3.0, 3.0, 13)
    h = 1e-5
    for order in (1, 2, 3):
        lower = f if order == 1 else (lambda x, o=order - 1: f.derivative(x, o))
        numeric = (lower(M + h) - lower(M - h)) / (2 * h)
        np.testing.assert_allclose(f.derivative(M, order), numeric, rtol=1e-6, atol=1e-6)


def test_no_s_shape_within_the_range_is_none():
    f = DoubleSigmoid(d=0.0, a1=3.0, c1=0.0, w1=0.5, a2=3.0, c2=0.0, w2=0.5)
    assert f.neutral_zone(0.5, 3.0) is None          # the compliance only falls there


def test_fit_recovers_the_neutral_zone_of_an_asymmetric_double_sigmoid():
    truth = DoubleSigmoid(d=-5.4, a1=6.0, c1=-0.4, w1=0.5, a2=5.0, c2=0.6, w2=0.4)
    M = np.linspace(-3.5, 3.5, 71)
    expected = truth.neutral_zone(-3.5, 3.5)
    got = double_sigmoid_neutral_zone(M, truth(M))
    assert got["fit"].r2 > 1 - 1e-10
    assert got["size"].value == pytest.approx(expected.size_deg, rel=FIT_RTOL)
    assert got["stiffness"].value == pytest.approx(expected.stiffness_Nm_per_deg, rel=FIT_RTOL)
    assert got["lower_Nm"].value == pytest.approx(expected.lower_Nm, rel=FIT_RTOL)
    assert got["upper_Nm"].value == pytest.approx(expected.upper_Nm, rel=FIT_RTOL)


def test_fit_refuses_too_few_points():
    with pytest.raises(ValueError, match="at least 8 points"):
        fit_double_sigmoid([0, 1, 2], [0, 1, 2])


def test_neutral_zone_not_available_when_its_range_is_unmeasured():
    """The Nightingale case: the points below 1.5 N m are the processing's straight line."""
    truth = DoubleSigmoid(d=-5.4, a1=6.0, c1=-0.4, w1=0.5, a2=5.0, c2=0.6, w2=0.4)
    M = np.linspace(-3.5, 3.5, 71)
    kept = np.abs(M) >= 1.5
    got = double_sigmoid_neutral_zone(M, truth(M), kept=kept)
    assert got["size"].value is None
    assert "unmeasured" in got["size"].note or "no S-shape" in got["size"].note


def test_signed_curve_joins_two_directions():
    M, R, K = signed_curve(([0.0, 1.0, 2.0], [0.0, 2.0, 3.0], [False, True, True]),
                           ([0.0, 1.0], [0.0, 1.5], None))
    np.testing.assert_array_equal(M, [-1.0, 0.0, 1.0, 2.0])
    np.testing.assert_array_equal(R, [-1.5, 0.0, 2.0, 3.0])
    np.testing.assert_array_equal(K, [True, True, True, True])


# ---------------------------------------------------------------- specimen curves
@pytest.fixture(scope="module")
def curves():
    return load_curves()


def _direction(curves, specimen, mode):
    c = curves.curve(specimen, mode)
    return c.moment_Nm, c.rotation_deg, c.kept


def test_specimen_metrics_say_what_is_not_available(curves):
    t = curve_metrics(_direction(curves, "B03", "flexion"),
                      _direction(curves, "B03", "extension")).set_index(["metric", "direction"])
    rom = t.loc[("ROM", "flexion")]
    assert rom["value"] == pytest.approx(curves.curve("B03", "flexion").rotation_deg[-1])
    for metric in ("NZ, zero load (Panjabi)", "NZ, double sigmoid (Smit 2011)",
                   "NZ stiffness, double sigmoid"):
        row = t.loc[(metric, "both")]
        assert math.isnan(row["value"]) and row["note"].startswith("not available")
    assert t.loc[("elastic-zone stiffness", "extension"), "value"] > 0


def test_model_curve_metrics_of_the_published_model():
    """The published model's curve (sampled from 0.05 N m on) is nearly linear in each
    direction: ROM and elastic-zone stiffness exist, its compliance has no S-shape within
    +-3.5 N m, so the double-sigmoid NZ is not available (and Panjabi's needs unloading)."""
    from segment.studies.curves import model_curve

    m = np.round(np.arange(1, 71) * 0.05, 10)
    model = segment.c5c6()
    parts = []
    for mode in ("flexion", "extension"):
        c = model_curve(model, mode, m)
        parts.append((np.r_[0.0, m], np.r_[0.0, c["rotation_deg"]], None))
    t = curve_metrics(*parts).set_index(["metric", "direction"])
    assert t.loc[("ROM", "flexion"), "value"] == pytest.approx(parts[0][1][-1])
    assert t.loc[("elastic-zone stiffness", "flexion"), "value"] > 0
    assert math.isnan(t.loc[("NZ, zero load (Panjabi)", "both"), "value"])
    nz = t.loc[("NZ, double sigmoid (Smit 2011)", "both")]
    assert math.isnan(nz["value"]) and "no S-shape" in nz["note"]


# ---------------------------------------------------------------- helical axis
def _rodrigues(n, angle):
    n = np.asarray(n, float) / np.linalg.norm(n)
    K = np.array([[0, -n[2], n[1]], [n[2], 0, -n[0]], [-n[1], n[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


@pytest.mark.parametrize("seed", range(6))
def test_helical_axis_of_a_known_screw_motion(seed):
    """Rotate by angle about the unit axis n through point c and slide t along n: the axis,
    the angle and the slide come back, and the axis point lies on the axis, nearest the origin."""
    rng = np.random.default_rng(seed)
    n = rng.normal(size=3)
    n /= np.linalg.norm(n)
    angle, slide = rng.uniform(0.01, 2.5), rng.uniform(-2.0, 2.0)
    c = rng.uniform(-20.0, 20.0, 3)
    R1 = _rodrigues(rng.normal(size=3), rng.uniform(0, 1))
    p1 = rng.uniform(-10, 10, 3)
    D = _rodrigues(n, angle)
    R2, p2 = D @ R1, D @ (p1 - c) + c + slide * n
    ax = finite_helical_axis(R1, p1, R2, p2)
    np.testing.assert_allclose(ax.direction, n, atol=1e-10)
    assert ax.angle_rad == pytest.approx(angle, abs=1e-12)
    assert ax.slide_mm == pytest.approx(slide, abs=1e-10)
    off = (c - ax.point_mm) - ((c - ax.point_mm) @ n) * n      # c's distance from the axis
    np.testing.assert_allclose(off, 0.0, atol=1e-9)
    assert ax.point_mm @ n == pytest.approx(0.0, abs=1e-9)


def test_sagittal_icr_of_a_rotation_about_a_transverse_axis():
    """Flexion about the axis parallel to y through (x, z) = (-3, 5): the ICR is (-3, 5)."""
    c = np.array([-3.0, 7.0, 5.0])
    D = _rodrigues([0, 1, 0], math.radians(4.0))
    ax = finite_helical_axis(np.eye(3), np.zeros(3), D, D @ (-c) + c)
    np.testing.assert_allclose(sagittal_icr(ax), [-3.0, 5.0], atol=1e-10)
    assert finite_helical_axis(np.eye(3), np.zeros(3), np.eye(3), [1.0, 0, 0]) is None


# ---------------------------------------------------------------- the model, Anderst 2013
def test_icr_path_of_the_model_stays_in_the_sagittal_plane():
    p = icr_path(segment.c5c6(), steps=6)
    assert len(p) == 12 and p["converged"].all()
    assert np.all(np.diff(p["phi_y_deg"]) > 0)          # from extension to flexion
    assert np.isfinite(p[["ap_mm", "si_mm"]].to_numpy()).all()


def test_anderst_numbers_are_those_of_sources_section_5():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "validation" / "reference"
            / "SOURCES.md").read_text()
    assert "superior–inferior 2.5 / 3.2 / 3.9 mm, anterior–posterior −3.1 / −2.0 / −1.0 mm" in text
    assert ANDERST2013_C5C6 == {"si_mean_mm": 3.2, "si_ci_mm": (2.5, 3.9),
                                "ap_mean_mm": -2.0, "ap_ci_mm": (-3.1, -1.0)}


def test_anderst_comparison_table():
    t = anderst_comparison(segment.c5c6(), steps=12).set_index("direction")
    for d in ("superior-inferior", "anterior-posterior"):
        r = t.loc[d]
        assert r["model_min_mm"] <= r["model_mean_mm"] <= r["model_max_mm"]
        assert r["within_ci"] == (r["anderst_ci_low_mm"] <= r["model_mean_mm"]
                                  <= r["anderst_ci_high_mm"])
        assert np.isfinite(r["model_whole_motion_mm"])


# ---------------------------------------------------------------- the command line
def _run(capsys, *argv):
    from segment import cli

    try:
        code = cli.main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_cli_curves_reports_the_metrics_side_by_side(tmp_path, capsys):
    import pandas as pd

    code, text, err = _run(capsys, "curves", "--out", tmp_path)
    assert code == 0, err
    assert "what experimenters report" in text and "Anderst mean [95% CI]" in text
    t = pd.read_csv(tmp_path / "curves_metrics.csv")
    assert set(t["source"]) == {"model", *load_curves().specimens}
    rom = t[(t["metric"] == "ROM") & (t["source"] == "B03") & (t["direction"] == "flexion")]
    assert float(rom["value"].iloc[0]) == pytest.approx(
        load_curves().curve("B03", "flexion").rotation_deg[-1])
    icr = pd.read_csv(tmp_path / "curves_icr.csv")
    assert list(icr["direction"]) == ["superior-inferior", "anterior-posterior"]
    code, text, err = _run(capsys, "curves", "--out", tmp_path / "plain", "--no-metrics")
    assert code == 0 and "what experimenters report" not in text
    assert not (tmp_path / "plain" / "curves_metrics.csv").exists()


def test_cli_solve_and_ramp_in_isb(tmp_path, capsys):
    import json

    import pandas as pd

    code, text, err = _run(capsys, "solve", "FLX", "--convention", "isb")
    assert code == 0, err
    assert "alpha (+ extension)" in text
    row = next(line for line in text.splitlines() if line.startswith("FLX"))
    alpha = float(row.split()[4])
    r = segment.solve(segment.c5c6(), segment.LOAD_CASES["FLX"])
    assert alpha == pytest.approx(-math.degrees(r.displacement_from_unloaded[4]), abs=1e-3)
    code, text, err = _run(capsys, "solve", "FLX", "--convention", "isb", "--json")
    d = json.loads(text)
    assert d["convention"] == "isb"
    assert d["results"][0]["isb"]["from_unloaded"]["alpha"] == pytest.approx(alpha, abs=1e-3)
    out = tmp_path / "ramp.csv"
    code, text, err = _run(capsys, "ramp", "FLX", "--to-scale", "2", "--steps", "10",
                           "--convention", "isb", "--out", out)
    assert code == 0, err
    f = pd.read_csv(out)
    np.testing.assert_allclose(f["isb_alpha_from_unloaded_deg"], -f["main_from_unloaded_deg"],
                               atol=1e-9)
    code, text, err = _run(capsys, "solve", "FLX", "--convention", "iso")
    assert code == 2 and "invalid choice: 'iso'" in err
