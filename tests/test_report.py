"""The validation report: generation, the missing-data path, and freshness of the committed one."""

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import segment
from segment.cli import main
from segment.studies import validation as v
from segment.studies.reference import load_reference, reference_dir

pytestmark = pytest.mark.slow  # builds the validation report

ROOT = Path(__file__).resolve().parent.parent
CSV_RTOL = 1e-5     # the report's CSVs hold 6 significant digits (document.CSV_FLOAT_FORMAT)
COMMITTED = ROOT / "validation" / "report"
# The study is deterministic (Newton to 1e-10): committed and regenerated numbers agree to
# rounding of the CSV (10 significant digits) unless the model or data changed.
FRESH_RTOL = 1e-7
FRESH_ATOL = 1e-9
FIGURES = ("main_displacements", "coupled_displacements", "poses_3d", "load_displacement",
           "load_sharing", "sensitivity", "sensitivity_overview", "uncertainty",
           "failure_curves", "failure_3d", "clinical_states", "population_steps",
           "population_loo")


@pytest.fixture(scope="module")
def report_dir(main_job):
    """The report of the session's one main job (``conftest.main_job``): its folder and the
    names of its tables."""
    assert main_job.returncode == 0, main_job.stderr
    out = main_job.report
    return out, sorted(p.stem for p in (out / "tables").glob("*.csv"))


@pytest.fixture(scope="module")
def study():
    """The report's study, computed in this process (for tests that look at figure objects
    or write one section: the figures are functions of it)."""
    from segment.report.study import REPORT_SOBOL_EVALUATIONS, compute_study

    return compute_study(say=lambda message: None, solver_repeat=1, uncertainty_samples=200,
                         sobol_evaluations=REPORT_SOBOL_EVALUATIONS)


def test_report_writes_every_part(report_dir):
    out, tables = report_dir
    md = (out / "report.md").read_text()
    sections = ("1. Findings", "2. Main and coupled", "3. Agreement", "4. Load–displacement",
                "5. Element forces", "6. The unloaded", "7. Sensitivity", "8. Solver",
                "9. Parameter uncertainty", "10. Up to failure", "11. Clinical states",
                "12. Calibration", "13. A population over laboratories", "14. References",
                "Appendix A. Inputs and run details")
    at = [md.index(f"## {section}") for section in sections]
    assert at == sorted(at), "sections in order, findings first, appendix last"
    for name in FIGURES:
        png = out / "figures" / f"{name}.png"
        assert png.stat().st_size > 10_000 and f"figures/{name}.png" in md
    html = (out / "report.html").read_text()
    assert html.count("data:image/png;base64,") == len(FIGURES)
    assert 'src="http' not in html
    run = json.loads((out / "run.json").read_text())          # timings live here, untracked
    assert set(run["solver_time_ms"]) == set(segment.LOAD_CASES) and run["runtime_s"] > 0
    assert "time_ms" not in pd.read_csv(out / "tables" / "solver.csv").columns
    assert len(tables) > 20 and all((out / "tables" / f"{n}.csv").stat().st_size > 0
                                    for n in tables)


def test_missing_references_are_shown_as_not_available(report_dir):
    out, _ = report_dir
    md = (out / "report.md").read_text()
    assert "not available: Moroney 1988 mean, de Jager 1996" in md
    agree = pd.read_csv(out / "tables" / "agreement.csv")
    force_intact = agree[(agree.comparison == "intact vs Moroney intact")
                         & agree.case.isin(["AS", "PS", "LS", "TNS", "CMP"])]
    assert force_intact["reference"].isna().all()
    assert (force_intact["reference_kind"] == "not available").all()


def test_disc_only_agrees_with_table2_exactly(report_dir):
    out, _ = report_dir
    agree = pd.read_csv(out / "tables" / "agreement.csv")
    disc = agree[agree.comparison == "disc only vs Moroney disc segment"]
    assert len(disc) == 9
    assert np.all(np.abs(disc["deviation_pct"]) < 100 * v.TABLE2_REL_TOL)


def test_report_numbers_are_the_models(report_dir):
    out, _ = report_dir
    disp = pd.read_csv(out / "tables" / "displacements.csv")
    r = segment.solve(segment.c5c6(), segment.LOAD_CASES["FLX"])
    row = disp[(disp.configuration == "intact") & (disp.case == "FLX")].iloc[0]
    assert row["phi_y_deg"] == pytest.approx(np.degrees(r.displacement_from_unloaded[4]),
                                             rel=CSV_RTOL)
    assert row["phi_y_deg_from_reference"] == pytest.approx(np.degrees(r.q[4]), rel=CSV_RTOL)
    share = pd.read_csv(out / "tables" / "load_sharing.csv")
    totals = share.groupby("case")["share_pct"].sum()
    # equilibrium: shares add up (each written with 6 significant digits)
    np.testing.assert_allclose(totals, 100.0, atol=1e-3)


def test_filled_in_reference_values_appear_in_report_and_figure(tmp_path, monkeypatch):
    refdir = tmp_path / "reference"
    shutil.copytree(reference_dir(), refdir)
    table = pd.read_csv(refdir / "published_displacements.csv", dtype=str,
                        keep_default_na=False)
    def put(series, case, col, value):
        table.loc[(table.series == series) & (table.case == case), col] = value
    put("Moroney 1988 mean", "FLX", "phi_y_deg", "3.91")
    put("Moroney 1988 SD", "FLX", "phi_y_deg", "1.23")
    put("de Jager 1996", "AS", "x_mm", "0.277")
    table.to_csv(refdir / "published_displacements.csv", index=False)

    from segment.report.document import Report
    from segment.report.sections import displacements
    from segment.report.study import REPORT_SOBOL_EVALUATIONS, compute_study

    # one section, from a study that read the filled-in folder (the poses are not rendered:
    # they do not read the references)
    s = compute_study(reference_dir=refdir, say=lambda m: None, solver_repeat=1,
                      uncertainty_samples=2, sobol_evaluations=REPORT_SOBOL_EVALUATIONS)
    monkeypatch.setattr(displacements, "render_poses", lambda *a, **k: b"\x89PNG\r\n\x1a\n")
    rep = Report("test")
    displacements.write(rep, s)
    md = rep.markdown()
    assert "Published displacements (as filled in the reference table)" in md
    assert "3.91" in md and "0.277" in md
    assert "not available: MADYMO (Kecskemethy 2000), MOBILE" in md
    assert "not available: Moroney 1988 mean" not in md
    fig = rep.figures["main_displacements"]
    labels = {t.get_text() for t in fig.legends[0].get_texts()}
    assert {"Moroney 1988 mean", "de Jager 1996"} <= labels
    heights = [p.get_height() for ax in fig.axes for p in ax.patches]
    assert any(h == pytest.approx(3.91) for h in heights)
    assert any(h == pytest.approx(0.277) for h in heights)
    caps = [line for ax in fig.axes for line in ax.lines
            if np.isclose(np.asarray(line.get_ydata(), float), 3.91 + 1.23).any()]
    assert caps, "the SD error bar of the filled-in mean is drawn"


def test_bad_reference_folder_is_a_one_line_error(tmp_path, capsys):
    refdir = tmp_path / "reference"
    shutil.copytree(reference_dir(), refdir)
    text = (refdir / "moroney_rotational_stiffness.csv").read_text()
    (refdir / "moroney_rotational_stiffness.csv").write_text(text.replace("0.21", "-0.21", 1))
    code = main(["validate", "--out", str(tmp_path / "out"), "--reference", str(refdir)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err[-1].startswith("segment: error: moroney_rotational_stiffness.csv, line 3 (row 2)")
    with pytest.raises(ValueError, match=r"must be > 0, got -0\.21"):
        load_reference(refdir)


def _numeric_equal(a: pd.DataFrame, b: pd.DataFrame, name: str):
    assert list(a.columns) == list(b.columns), name
    assert len(a) == len(b), name
    for col in a.columns:
        if pd.api.types.is_numeric_dtype(a[col]) and pd.api.types.is_numeric_dtype(b[col]):
            np.testing.assert_allclose(a[col].to_numpy(float), b[col].to_numpy(float),
                                       rtol=FRESH_RTOL, atol=FRESH_ATOL,
                                       err_msg=f"{name}.csv column {col}")
        else:
            assert a[col].astype(str).tolist() == b[col].astype(str).tolist(), f"{name}:{col}"


def test_committed_report_is_fresh(report_dir):
    """Regenerate and compare with validation/report: rerun `segment validate` if this fails."""
    out, tables = report_dir
    committed = sorted(p.name for p in (COMMITTED / "tables").glob("*.csv"))
    assert committed == sorted(f"{n}.csv" for n in tables), \
        "committed report has other tables: run `segment validate`"
    for name in tables:
        _numeric_equal(pd.read_csv(out / "tables" / f"{name}.csv"),
                       pd.read_csv(COMMITTED / "tables" / f"{name}.csv"), name)
    for name in FIGURES:
        assert (COMMITTED / "figures" / f"{name}.png").exists()
    assert (COMMITTED / "report.md").exists() and (COMMITTED / "report.html").exists()


def test_report_with_a_data_folder_missing_a_moroney_case_is_a_clear_error(data_copy, tmp_path,
                                                                           capsys):
    text = (data_copy / "load_cases.csv").read_text()
    (data_copy / "load_cases.csv").write_text(text.replace("\nFLX,", "\nFLEX,"))
    code = main(["--data", str(data_copy), "validate", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err[-1] == ("segment: error: load_cases.csv: the validation report needs the nine "
                       "Moroney cases; missing ['FLX']")


def test_a_variant_without_unloaded_equilibrium_is_named_not_a_type_error():
    """Displacements from the unloaded pose need that pose: a plain error names the variant."""
    from types import SimpleNamespace

    failed = SimpleNamespace(displacement_from_unloaded=None, model=SimpleNamespace(
        unloaded=SimpleNamespace(message="did not converge: line search failed")))
    with pytest.raises(ValueError, match=r"variant facet gap: the unloaded equilibrium did not "
                                         r"converge.*line search failed"):
        v._from_unloaded(failed, "variant facet gap")


def test_failure_section_numbers_are_the_ramps(report_dir):
    """Section 10: failure loads and sequence are those of segment.ramp for each case."""
    from segment.report import RAMP_STEPS, RAMP_TO_SCALE

    out, _ = report_dir
    fail = pd.read_csv(out / "tables" / "failure_loads.csv").set_index("case")
    seq = pd.read_csv(out / "tables" / "failure_sequence.csv")
    r = segment.ramp(segment.c5c6(), segment.LOAD_CASES["FLX"], to_scale=RAMP_TO_SCALE,
                     steps=RAMP_STEPS)
    assert fail.loc["FLX", "first_rupture_scale"] == pytest.approx(r.first_rupture_scale)
    assert fail.loc["FLX", "first_rupture_load"] == pytest.approx(1.8 * r.first_rupture_scale)
    assert fail.loc["FLX", "ultimate_scale"] == pytest.approx(r.ultimate_scale, nan_ok=True)
    assert np.isnan(fail.loc["FLX", "ultimate_scale"])            # past the validity limit
    assert fail.loc["FLX", "limit_scale"] == pytest.approx(r.limit.scale)
    assert fail.loc["FLX", "limit_source"] == r.limit.source
    assert seq[seq.case == "FLX"]["strip"].tolist() == r.failure_loads()["sequence"]
    assert len(fail) == 9
    # issue 20: no case's curve goes past its bound (flexion 21.6 deg, not 270)
    assert (seq["main_displacement_before"].abs() <= 21.6 + 1e-6).all()
    md = (out / "report.md").read_text()
    assert "not a prediction" in md and "Voo" in md and "assumed" in md


def test_findings_open_the_report_and_come_from_the_numbers(report_dir):
    """Findings first, with the model's and Moroney's numbers as computed; checksums last."""
    out, _ = report_dir
    md = (out / "report.md").read_text()
    agree = pd.read_csv(out / "tables" / "agreement.csv")
    intact = agree[agree.comparison == "intact vs Moroney intact"].set_index("case")
    findings = md[md.index("## 1. Findings"):md.index("## 2. Main")]
    for case, word in (("FLX", "stiffer"), ("AR", "softer")):
        r = intact.loc[case]
        assert (f"{case} is {word} than Moroney (model {r.model:.2f} deg vs "
                f"{r.reference:.2f} deg at 1.8 N m") in findings
    assert "LB match" in findings and "coincidence" in findings
    reach = pd.read_csv(out / "tables" / "calibration_reach.csv")
    for t in reach.itertuples():
        assert f"needs {t.parameter} = {t.needed:.2f}" in findings
    assert "sha256" not in md[:md.index("## 14. References")]
    assert md.index("| file | sha256 |") > md.index("## Appendix A")


def test_verdict_per_comparison_uses_the_stated_corridor(report_dir):
    """Within/outside against reference +- the assumed SD; the fraction is the calibration's."""
    from segment.report import VERDICT_SD_FRACTION
    from segment.studies.calibration import load_targets

    out, _ = report_dir
    ver = pd.read_csv(out / "tables" / "verdicts.csv")
    intact = ver[ver.comparison == "intact vs Moroney intact"].set_index("case")
    assert intact.loc["FLX", "verdict"] == "outside" and intact.loc["AR", "verdict"] == "outside"
    assert intact.loc["LB", "verdict"] == "within" and intact.loc["EXT", "verdict"] == "within"
    np.testing.assert_allclose(intact["corridor_high"] - intact["reference"],
                               VERDICT_SD_FRACTION * intact["reference"], rtol=CSV_RTOL)
    inside = (intact.model >= intact.corridor_low) & (intact.model <= intact.corridor_high)
    assert ((intact.verdict == "within") == inside).all()
    assert set(ver[ver.comparison.str.startswith("disc only")].verdict) == {"within"}
    # issue 20: the checks against the tests the disc stiffness came from are counted apart
    checks = ver[ver.kind == "consistency check"]
    assert set(checks.comparison) == {"disc only vs Moroney disc segment",
                                      "posterior removed vs Moroney disc segment"}
    assert set(ver[ver.kind == "validation"].comparison) >= {"intact vs Moroney intact"}
    md = (out / "report.md").read_text()
    n_val, n_chk = int((ver.kind == "validation").sum()), len(checks)
    assert (f"Validation against independent data: "
            f"{int(((ver.kind == 'validation') & (ver.verdict == 'within')).sum())} of {n_val} "
            "within") in md
    assert (f"Consistency checks (the tests the disc stiffness came from): "
            f"{int((checks.verdict == 'within').sum())} of {n_chk} within") in md
    assert (ver.comparison.str.contains("Voo")).any()
    # the centre of rotation rests on an assumed reference point: judged in section 12 only
    assert not ver.comparison.str.contains("Anderst").any()
    targets = load_targets().frame()
    assumed = targets[targets.SD_basis == "assumed"]
    np.testing.assert_allclose(assumed.SD / assumed.value.abs(), VERDICT_SD_FRACTION, rtol=1e-3)


def test_verdict_kinds_come_first_validations_then_checks():
    from segment.report.verdicts import verdict_count, verdict_table

    agree = pd.DataFrame([
        {"comparison": "disc only vs Moroney disc segment", "case": "FLX", "unit": "deg",
         "model": 8.5714, "reference": 8.5714},
        {"comparison": "intact vs Moroney intact", "case": "FLX", "unit": "deg",
         "model": 2.57, "reference": 4.19},
        {"comparison": "posterior removed vs Moroney disc segment", "case": "AR",
         "unit": "deg", "model": 4.3, "reference": 4.29},
        {"comparison": "intact vs Moroney intact", "case": "EXT", "unit": "deg",
         "model": 2.6, "reference": 2.47}])
    ver = verdict_table(agree)
    assert ver.kind.tolist() == ["validation"] * 2 + ["consistency check"] * 2
    assert verdict_count(ver) == ("Validation against independent data: 1 of 2 within, 1 "
                                  "outside: intact FLX; Consistency checks (the tests the disc "
                                  "stiffness came from): 2 of 2 within, 0 outside.")


def test_tornado_panels_are_sorted_by_effect():
    """Largest effect on top of each panel (issue 20: the chart was in the space's order)."""
    import segment
    from segment.report import fig_tornado

    rows = [(p, st, c, ch) for p, lo, hi in (("a", -1.0, 2.0), ("b", -30.0, 5.0),
                                             ("c", 0.0, 0.0), ("d", 7.0, -8.0))
            for st, ch in (("low", lo), ("high", hi)) for c in ("FLX", "AR")]
    sens = pd.DataFrame(rows, columns=["parameter", "setting", "case", "change_pct"])
    flx_first = sens.assign(change_pct=np.where(sens.case == "AR", -sens.change_pct[::-1].values,
                                                sens.change_pct))
    cases = {c: segment.LOAD_CASES[c] for c in ("FLX", "AR")}
    fig = fig_tornado(flx_first, cases)
    ax = fig.axes[0]
    top_down = [t.get_text() for t in ax.get_yticklabels()][::-1]
    assert top_down == ["b", "d", "a", "c"]
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_shown_numbers_are_rounded_to_their_meaning():
    """No 1e-20 in a table: one precision per quantity, zero-ish values print as 0."""
    from segment.report import md_table as _md_table

    df = pd.DataFrame({"case": ["a", "b", "c", "d"], "unit": ["mm", "mm", "deg", "deg"],
                       "value": [0.561, -2.83e-20, 8.571, -4.0e-4],
                       "residual": [1.7e-11, 0.0, 7.8e-11, 5.0e-11]})
    rows = [line.split(" | ") for line in _md_table(df).splitlines()[2:]]
    assert [r[2] for r in rows] == ["0.561", "0", "8.57", "0"]
    assert rows[0][3] == "1.70e-11 |" and rows[1][3] == "0 |"
    assert "e-20" not in _md_table(df)


def test_figures_have_one_unit_per_axis_and_distinct_panels(study):
    from segment.report.figures import fig_coupled, fig_curves, fig_uncertainty

    s = study
    coupled = fig_coupled(s.disp, s.ref, s.cases)
    ylabels = [ax.get_ylabel() for ax in coupled.axes if ax.get_ylabel()]
    assert len(ylabels) == 18 and set(ylabels) == {"[mm]", "[deg]"}
    # a fixed layout: the constrained-layout solver's result (and the PNG) moved with the
    # folder the package ran from, so a fresh clone elsewhere rewrote the committed figure
    assert coupled.get_layout_engine() is None
    curves = fig_curves(s.curves, s.ref, s.cases)
    data = [tuple(np.round(np.asarray(line.get_ydata(), float), 9))
            for ax in curves.axes if ax.get_visible() for line in ax.lines[:1]]
    assert len(data) == 6 and len(set(data)) == 6, "every panel shows a different curve"
    unc = s.unc_bands
    figure = fig_uncertainty(s.unc_bands, s.ref, s.cases, s.uncertainty_samples)
    for ax, unit in zip(figure.axes, ("mm", "deg"), strict=True):
        sel = unc[unc.unit == unit]
        lo, hi = ax.get_ylim()
        assert lo < sel["low"].min() and hi > sel["high"].max(), "bands inside the axes"


def test_percentages_print_without_scientific_notation():
    from segment.report import pct as _pct

    assert [_pct(x) for x in (0.36, -4.94, 9.96, 99.6, -39.2, 150.0)] == \
        ["+0.36 %", "-4.9 %", "+10 %", "+100 %", "-39 %", "+150 %"]


def test_pose_grid_draws_the_magnified_motion_and_says_so(report_dir, monkeypatch):
    """The report's 3-D pose panels magnify C5's motion (the true pose stays drawn): the
    caption states the factor, and the grid is rendered with it."""
    from segment.report import renders
    from segment.views import viz

    out, _ = report_dir
    md = (out / "report.md").read_text()
    end = md.index("](figures/poses_3d.png)")
    caption = md[md.rindex("![", 0, end):end]
    assert f"magnified {renders.POSES_MAGNIFY}×" in caption and "true pose" in caption
    assert "reference pose" not in caption        # the ghost is the unloaded equilibrium
    seen = {}

    def spy(results, path, **kwargs):
        seen.update(kwargs)
        return real(results, path, **kwargs)

    real = viz.render_grid
    monkeypatch.setattr(viz, "render_grid", spy)
    model = segment.c5c6()
    png = renders.render_poses(model, dict(list(segment.LOAD_CASES.items())[:1]))
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and seen["magnify"] == renders.POSES_MAGNIFY


def test_population_section_numbers_are_the_tables(report_dir):
    """Section 13 reads the committed population (data/population/) and writes its numbers
    from the section's own tables: held-out coverage and CRPS, the whole-segment ratios, the
    clinical states; the findings say what was fitted and what predicted."""
    out, _ = report_dir
    md = (out / "report.md").read_text()
    sec = md[md.index("## 13. A population over laboratories"):md.index("## 14. References")]
    checks = pd.read_csv(out / "tables" / "population_checks.csv")
    assert checks["ok"].all() and f"{len(checks)} of {len(checks)} checks pass" in sec
    loo = pd.read_csv(out / "tables" / "population_loo.csv").set_index("direction")
    assert f"{100 * loo.loc['all', 'coverage']:.0f} % of the 96 steps" in sec
    assert f"({loo.loc['all', 'ratio']:.2f}×" in sec
    pred = pd.read_csv(out / "tables" / "population_predicted.csv").set_index("quantity")
    ar = pred.loc["intact / posterior-removed, axial rotation"]
    assert f"{ar['median']:.2f}" in sec
    clin = pd.read_csv(out / "tables" / "population_clinical.csv")
    assert {"laminectomy", "facetectomy-bilateral-100"} <= set(clin["state"])
    assert "not predicted" in sec                       # no faked ultimate moment
    findings = md[md.index("## 1. Findings"):md.index("## 2. Main")]
    assert "Population (section 13)" in findings and "fitted" in findings


def test_population_section_recomputes_no_calibration(monkeypatch):
    """The section reads the committed result: no curve or population calibration runs."""
    from segment.report.document import Report
    from segment.report.sections import population
    from segment.studies.calibration import curve_fit, hierarchical

    def refuse(*args, **kwargs):
        raise AssertionError("the report must not calibrate")

    monkeypatch.setattr(curve_fit, "calibrate_curves", refuse)
    monkeypatch.setattr(hierarchical, "fit_population", refuse)

    class Study:
        model = segment.c5c6()

        def __init__(self):
            self.extra = {}

        def say(self, message):
            pass

        def section(self, key):
            return "section 13"

    rep = Report("test")
    s = Study()
    population.write(rep, s)
    assert "population_loo" in rep.tables and s.extra["findings_more"]
    md = rep.markdown()
    fail = pd.read_csv(population._folder() / "loo_failure.csv")
    ok = fail[fail["failure_direction"].notna() & ~fail["doubtful"]]
    n_above = int((ok["peak_above_first_rupture_share"] == 1.0).sum())
    assert f"in {n_above} of {len(ok)} the peak lies at or above every member's" in md
    assert "Laminectomy (FL and ISL cut" in md and "% -0 " not in md
