"""Section 13: one population of C5-C6 segments over every laboratory and mode, judged by
prediction (issue 32; :mod:`segment.studies.calibration.hierarchical`,
:mod:`segment.studies.calibration.predictive`, :mod:`segment.studies.virtual_population`,
:mod:`segment.studies.population_tables`).

Written from the committed result in ``data/population/`` (``segment calibrate
--population`` and ``scripts/population_loo.py``): nothing here is recomputed but the cheap
checks of :func:`segment.studies.population_result.check_result` (every input's sha256
against the manifest, three members re-solved to their stored rotations). The held-out
checks and the model forms are judged by that committed leave-one-out, not refitted."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from segment.report.drawing import tight
from segment.studies.population_ceiling import LAB_MEMBERS, ceiling_table, facets_coplanar

KEY = "population"
TITLE = "A population over laboratories, judged by prediction"

COVERAGE_GOAL = 0.75
"""Share of a new specimen's raw steps the 5-95 % band should cover (issue 32)."""
CRPS_GOAL = 1.1
"""Largest CRPS of the model over the no-model baseline's (issue 32)."""


def _pct(x: float) -> str:
    return f"{100.0 * x:.0f} %"


def _signed(x: float) -> str:
    """``x`` to a whole number with its sign; 0 without one (not '-0' for -1e-14)."""
    v = round(float(x))
    return f"{v:+d}" if v else "0"


def steps_figure(steps: pd.DataFrame) -> plt.Figure:
    """Every specimen's raw steps (points) and its fitted curve (line), flexion up and
    extension down: what the calibration was fitted to."""
    specs = list(dict.fromkeys(steps["specimen"]))
    fig, axes = plt.subplots(2, 4, figsize=(11, 5.2), sharex=True, sharey=True)
    for ax, sp in zip(axes.ravel(), specs, strict=False):
        for direction, sign, colour in (("flexion", 1.0, "C0"), ("extension", -1.0, "C3")):
            g = steps[(steps["specimen"] == sp) & (steps["direction"] == direction)]
            m = np.concatenate([[0.0], sign * g["moment_Nm"].to_numpy(float)])
            ax.plot(m, np.concatenate([[0.0], sign * g["fitted_deg"].to_numpy(float)]),
                    color=colour, lw=1.2)
            ax.plot(sign * g["moment_Nm"], sign * g["observed_deg"], "o", ms=3.5,
                    color=colour, mfc="none")
        ax.set_title(sp, fontsize=9)
        ax.axhline(0, color="0.8", lw=0.6)
        ax.axvline(0, color="0.8", lw=0.6)
    return _finish_grid(fig, axes)


def _finish_grid(fig, axes) -> plt.Figure:
    """The axis labels of a specimen grid, on its outer panels, and its layout."""
    for ax in axes[-1]:
        ax.set_xlabel("moment [N m]")
    for ax in axes[:, 0]:
        ax.set_ylabel("rotation [deg]")
    tight(fig)
    return fig


def held_out_figure(loo: pd.DataFrame) -> plt.Figure:
    """Each left-out specimen's raw steps (points) against the 5-95 % band and median of the
    population calibrated without it (bars), and the no-model baseline's median (x)."""
    specs = list(dict.fromkeys(loo["specimen"]))
    fig, axes = plt.subplots(2, 4, figsize=(11, 5.2), sharex=True, sharey=True)
    for ax, sp in zip(axes.ravel(), specs, strict=False):
        for direction, sign, colour in (("flexion", 1.0, "C0"), ("extension", -1.0, "C3")):
            g = loo[(loo["specimen"] == sp) & (loo["direction"] == direction)]
            m = sign * g["moment_Nm"].to_numpy(float)
            lo, hi = sign * g["q5_deg"].to_numpy(float), sign * g["q95_deg"].to_numpy(float)
            ax.vlines(m, np.minimum(lo, hi), np.maximum(lo, hi), color=colour, alpha=0.35,
                      lw=5)
            ax.plot(m, sign * g["median_deg"], "_", color=colour, ms=8)
            ax.plot(m, sign * g["baseline_median_deg"], "x", color="0.4", ms=4)
            ax.plot(m, sign * g["observed_deg"], "o", ms=3.5, color="k", mfc="none")
        ax.set_title(f"{sp} left out", fontsize=9)
        ax.axhline(0, color="0.8", lw=0.6)
    return _finish_grid(fig, axes)


def write(rep, s) -> None:
    """Write this section into ``rep`` from the committed population result; its findings go
    to ``s.extra["findings_more"]``."""
    from segment.studies.calibration.predictive import FAILURE_COMPARISON
    from segment.studies.population_result import read_result
    from segment.studies.population_tables import SUBSTANTIAL_PCT, section_tables
    from segment.studies.virtual_population import MEMBERS

    s.say("population: reading the committed result (data/population/) and checking it")
    t = section_tables(s.model)
    res = read_result()
    man = res["manifest"]
    checks = t["checks"]
    n_ok = int(checks["ok"].sum())
    rep.text(
        "One hierarchical population of C5–C6 segments is calibrated to every laboratory and "
        "mode the package holds, and judged by what it predicts for specimens and a "
        "laboratory it never saw. This section reads the committed result "
        f"(`data/population/`, made by `{man['command']}` and `python "
        "scripts/population_loo.py`); it recomputes nothing but cheap checks (every input's "
        "checksum against the manifest and the first members re-solved to their stored "
        f"rotations: {n_ok} of {len(checks)} checks pass) and the small table of the "
        "axial-rotation paragraph. Model, data and error model: `docs/population.md`.")
    rep.table("population_checks", checks)

    rep.subheading("Fitted: what the calibration saw")
    fitted = t["fitted"]
    st = fitted[fitted["data"].str.startswith("Nightingale")]
    rms = st.pivot(index="specimen", columns="direction", values="rms_deg").reset_index()
    mor = fitted[fitted["data"].str.startswith("Moroney")][
        ["config", "mode", "value_deg", "sd_deg", "fitted_deg", "z"]]
    rep.text(
        "Data as measured: the six static load steps per direction of Nightingale et al.'s "
        "eight female specimens (96 steps, 1.3–4.8 N·m; never the 0.1 N·m straight-line "
        "fill, which is interpolation), and Moroney et al.'s mean rotations at 1.8 N·m intact "
        "and posterior-removed in four modes (8 numbers; SDs assumed 20 % intact, 10 % "
        "posterior-removed). Error model of the steps: an origin error per record and a step "
        f"error, both estimated: step SD {float(man['sigma_e_deg']):.3g}°, origin SD "
        f"{float(man['sigma_o_deg']):.3g}° ({man['fit']}). RMS of the fitted steps per "
        "specimen and direction [deg] (fitted, not predicted):")
    rep.table("population_fit_steps", rms)
    rep.figure("population_steps", steps_figure(res["steps.csv"]),
               "What was fitted: each training specimen's raw static steps (circles) and its "
               "calibrated curve (line); flexion up, extension down")
    worst = mor.loc[mor["z"].abs().idxmax()]
    rep.text(
        "Moroney's means against the fitted laboratory mean (z = (fit − value) / SD; fitted, "
        f"not predicted). The largest miss is {worst['config']} {worst['mode']} "
        f"({worst['fitted_deg']:.2f}° against {worst['value_deg']:.2f}°, z "
        f"{worst['z']:+.2f}): no parameter set of the form turns as little as Moroney's "
        "intact segments in axial rotation.")
    rep.table("population_fit_moroney", mor)
    hyper = t["hyper"][["name", "transform", "median_nightingale2002", "median_moroney1988",
                        "median_new_lab", "tau", "tau_lab"]]
    rep.text("The laboratory medians of each parameter (fitted), the estimated specimen SD "
             "`tau` and the assumed laboratory SD `tau_lab` (on the transform's scale):")
    rep.table("population_hyper", hyper)

    rep.subheading("Held out: specimens and a laboratory the calibration never saw")
    if "loo" in t:
        loo = t["loo"].set_index("direction")
        allr = loo.loc["all"]
        cover_ok = allr["coverage"] >= COVERAGE_GOAL
        crps_ok = allr["ratio"] <= CRPS_GOAL
        rep.text(
            "Leave one specimen out (the stand-in for further specimens of the same study, "
            "which we do not have): each training specimen in turn is left out, the "
            f"population is calibrated without it and {MEMBERS} members of its laboratory "
            "predict its raw steps, with the step error model. The no-model baseline is the "
            "other specimens' own measured curves; the published model is a point forecast "
            f"(its CRPS is its absolute error). Coverage of the 5–95 % band: "
            f"{_pct(allr['coverage'])} of the 96 steps (goal ≥ {_pct(COVERAGE_GOAL)}: "
            f"{'met' if cover_ok else 'not met'}; baseline {_pct(allr['baseline_coverage'])}); "
            f"CRPS {allr['crps_deg']:.2f}° against the baseline's "
            f"{allr['baseline_crps_deg']:.2f}° ({allr['ratio']:.2f}×; goal ≤ {CRPS_GOAL:g}×: "
            f"{'met' if crps_ok else 'not met'}) and the published model's "
            f"{allr['published_crps_deg']:.2f}°. Predicted, never fitted:")
        rep.table("population_loo", t["loo"])
        loo_steps = pd.read_csv(_folder() / "loo_steps.csv")
        rep.figure("population_loo", held_out_figure(loo_steps),
                   "Held out: each specimen's raw steps (circles) against the 5–95 % band "
                   "(bar) and median (dash) of the population calibrated without it, and "
                   "the no-model baseline's median (x)")
    if "forms" in t:
        forms = t["forms"]
        rep.text(
            "Model forms judged by the same prediction (each calibrated hierarchically to "
            "Nightingale's specimens alone, leave one specimen out; the population form also "
            "with both laboratories). CRPS over the baseline below 1 beats the no-model "
            "baseline; the log score rewards a calibrated error model (higher is better). "
            "These replace the fits to interpolated curve points of earlier versions:")
        rep.table("population_forms", forms[forms["direction"] == "all"])
    if "lab_out" in t:
        lab = t["lab_out"]
        n_band = int(lab["band_overlaps_mean_pm_sd"].sum())
        n_med = int(lab["median_within_1sd"].sum())
        intact = lab[lab["config"] == "intact"]
        rep.text(
            "Leave the laboratory out (the stand-in for a second laboratory): calibrated to "
            "Nightingale's specimens alone, the population predicts Moroney's laboratory as "
            "a new one (mean ± the 30 % between-specimen SD assumed in "
            f"`calibration_targets.csv`). The band overlaps mean ± SD in {n_band} of "
            f"{len(lab)} (intact modes {int(intact['band_overlaps_mean_pm_sd'].sum())} of "
            f"{len(intact)}); the median lies within 1 SD in {n_med} of {len(lab)} (intact "
            f"modes {int(intact['median_within_1sd'].sum())} of {len(intact)}; goal ≥ 3 of "
            "the four moment modes). Predicted, never fitted:")
        rep.table("population_lab_out", lab)

    rep.subheading("Predicted for a new laboratory: the whole segment and clinical states")
    pred = t["predicted"]
    rep.text(
        f"The committed {len(res['population.csv'])} members (`{man['command']}`, drawn for a "
        f"specimen of {'a new laboratory' if man['lab'] == 'new' else man['lab']}, the "
        "laboratory term included): median and 5–95 % band of each quantity over the "
        "members, never fitted; Moroney's intact/posterior-removed ratio where one exists.")
    rep.table("population_predicted", pred.drop(columns=["column"]))
    p = pred.set_index("column")
    lb, ar = p.loc["ratio_lateral-bending"], p.loc["ratio_axial-rotation"]
    rep.text(
        "A whole segment carries part of each load in its posterior elements: Moroney's "
        f"intact/posterior-removed rotation is {lb['moroney']:.2f} in lateral bending and "
        f"{ar['moroney']:.2f} in axial rotation; the members' medians are "
        f"{lb['median']:.2f} and {ar['median']:.2f} (goal ≤ 0.8: "
        f"{'met' if lb['median'] <= 0.8 else 'not met'} in lateral bending, "
        f"{'met' if ar['median'] <= 0.8 else 'not met'} in axial rotation).")
    _ceiling(rep, s, t, lb, ar, res["population.csv"])
    if "clinical" in t:
        clin = t["clinical"]
        rep.text(
            "Clinical states over the population against the in-vitro trends of Zdeblick et "
            "al. 1992 (abstract: torsional stiffness statistically equivalent for intact, "
            "laminectomy, 25 and 50 % facetectomy, 'decreased dramatically' past 50 %; their "
            "values are not available to us). Change of the rotation at 1.8 N·m, median and "
            "5–95 % over the members (predicted, never fitted):")
        rep.table("population_clinical", clin)
        lam = clin[clin["state"] == "laminectomy"].set_index("mode")
        if {"AR", "FLX"} <= set(lam.index):
            words = {c: "agrees" if lam.loc[c, "agrees_with_pattern"] else "disagrees"
                     for c in ("AR", "FLX")}
            rep.text(
                f"Laminectomy (FL and ISL cut, `data/states.csv`): axial rotation "
                f"{lam.loc['AR', 'median_pct']:+.1f} % (median; {words['AR']} with Zdeblick's "
                f"'equivalent to intact'), flexion {lam.loc['FLX', 'median_pct']:+.1f} % "
                f"(5–95 % {_signed(lam.loc['FLX', 'q5_pct'])} to "
                f"{_signed(lam.loc['FLX', 'q95_pct'])} %; {words['FLX']} with the pattern; "
                "Zdeblick's flexion measure is a posterior strain, so only the pattern "
                "compares).")
    z = t["zdeblick"].set_index("mode")
    zar = z.loc["AR"]
    rep.text(
        "Graded bilateral facetectomy in axial rotation: median change "
        + ", ".join(f"{f} % {zar[f'median_{f}_pct']:+.1f} %" for f in (25, 50, 75, 100))
        + f" (100 %: 5–95 % {zar['q5_100_pct']:+.0f} to {zar['q95_100_pct']:+.0f} %). "
        "Zdeblick's pattern (little change up to 50 %, the largest at 75–100 %): "
        + ("agrees" if zar["pattern_agrees"] else "disagrees")
        + f"; the size (≥ {SUBSTANTIAL_PCT:g} % at 100 %, issue 32's reading of "
        "'dramatically'): " + ("reached" if zar["change_100_at_least_20_pct"] else
                               "not reached") + ".")
    rep.table("population_zdeblick", t["zdeblick"])

    rep.subheading("Failure tests and validity limits")
    rep.text(FAILURE_COMPARISON)
    if "loo_failure" in t:
        fail = t["loo_failure"]
        ok = fail[(fail["failure_direction"].fillna("") != "") & ~fail["doubtful"]]
        cols = ["specimen", "failure_direction", "failure_moment_Nm",
                "failure_rotation_from_start_deg", "doubtful", "flexion_first_rupture_q5",
                "flexion_first_rupture_q95", "flexion_ultimate_n", "flexion_limit_q5",
                "flexion_limit_q95", "failure_in_ultimate_band",
                "peak_above_first_rupture_share", "baseline_low_Nm", "baseline_high_Nm",
                "baseline_covers", "invalid_below_3.5Nm"]
        cols = [c for c in cols if c in fail.columns]
        n_inside = int((ok["failure_in_ultimate_band"].astype(str) == "True").sum())
        n_none = int((ok["failure_in_ultimate_band"].astype(str) == "not predicted").sum())
        above = ok.get("peak_above_first_rupture_share")
        n_above = int((above == 1.0).sum()) if above is not None else 0
        base = ok.get("baseline_covers")
        n_base = int((base.astype(str) == "True").sum()) if base is not None else 0
        rep.text(
            f"Each left-out specimen's failure test against 100 members of its laboratory "
            f"ramped to failure. Of the {len(ok)} undoubted records the measured peak lies in "
            f"the band of predicted ultimate moments in {n_inside}; for {n_none} no member "
            "reaches an ultimate load (not predicted: the ramps reach the validity limit "
            f"first). The one-sided check: in {n_above} of {len(ok)} the peak lies at or "
            "above every member's quasi-static first rupture; the no-model baseline (the "
            f"range of the other undoubted peaks) covers the peak in {n_base} of {len(ok)}. "
            "Members whose validity limit falls below 3.5 N·m are counted per fold "
            "(unconditioned draws; the committed `--lab nightingale2002` members are "
            "conditioned on carrying the static protocol):")
        rep.table("population_failure", fail, fail[cols])
    rep.text("The members' validity limits in flexion and extension, from the training "
             "records (the packaged `data/validity_limits.csv` holds the same rows):")
    rep.table("population_validity", t["validity"])

    s.extra["findings_more"] = [_finding(s.section(KEY), man, mor, t, lb, ar, zar)]


def _shares_inverted(c, lb, ar) -> bool:
    """Whether every row of the ceiling table has its posterior elements take a larger share
    of lateral bending than of axial rotation (1 - ratio), and Moroney's the reverse."""
    model = (1.0 - c["ratio_LB"]) > (1.0 - c["ratio_AR"])
    return bool(model.all()) and (1.0 - ar["moroney"]) > (1.0 - lb["moroney"])


def _ceiling(rep, s, t, lb, ar, pop) -> None:
    """Why the axial-rotation ratio stays high: the laboratories' median members as calibrated
    and with the posterior elements at the stiff ends of their ranges
    (:func:`segment.studies.population_ceiling.ceiling_table`, computed here)."""
    c = ceiling_table(s.model, t["hyper"])
    first = {m: g.iloc[0] for m, g in c.groupby("member", sort=False)}
    last = {m: g.iloc[-1] for m, g in c.groupby("member", sort=False)}
    new, mor, nig = (label for _, label in LAB_MEMBERS)
    calibrated = c.groupby("member", sort=False).head(1)
    cut = calibrated["capsules_cut_AR_fraction"]
    stiff = c.groupby("member", sort=False).tail(1)
    ratios = pop["ratio_axial-rotation"].to_numpy(float)
    at_one = float(np.mean(ratios[np.isfinite(ratios)] >= 0.99))
    cl_upper = last[new]["ref_strain_CL"]
    text = [
        "The table below measures why the axial-rotation ratio stays high. Each "
        "laboratory's median member (every parameter at its laboratory's median in "
        "`hyperparameters.csv`; not one of the drawn members) is solved as calibrated and "
        "with the parameters of the posterior elements moved to the stiff ends of their "
        "ranges: no facet gap, the capsules and FL/ISL at their largest reference strain "
        "(the least slack), the posterior ligaments' force factor at its largest. The disc "
        "keeps its calibrated factors, so the posterior-removed rotation, which Moroney "
        "measured, does not change. Computed here in every run (a few dozen equilibria), "
        "never fitted. The ratios are intact / posterior-removed rotation at 1.8 N·m; "
        "`capsules_cut_AR_fraction` is the axial rotation with both capsules cut (facets, FL "
        "and ISL kept) over the posterior-removed one; `coupled_LB_deg` is the lateral "
        "bending φx that comes with 1.8 N·m of axial rotation, `facet_force_N` the force of "
        "the more loaded facet there, `facetectomy_100_AR_pct` the change of axial rotation "
        "after bilateral 100 % facetectomy."]
    if facets_coplanar(s.model):
        text.append(
            "Both facet faces of the model lie in one plane (`data/facets.csv`: parallel "
            "faces, each centre in the other's plane), so a rotation "
            "about their common normal (axial rotation with coupled lateral bending) slides "
            "both faces within it.")
    text.append(
        "At 1.8 N·m in axial rotation the new laboratory's median member couples "
        f"{abs(first[new]['coupled_LB_deg']):.1f}° of lateral bending and its more loaded "
        f"facet carries {first[new]['facet_force_N']:.1f} N; as calibrated, the median "
        f"members with both capsules cut turn {_pct(cut.min())} to {_pct(cut.max())} of "
        "their posterior-removed rotation"
        + (": what their posterior elements carry in axial rotation is mostly the capsules' "
           "tension." if cut.min() >= 0.9 else "."))
    text.append(
        f"Nightingale's median member (facet gap {first[nig]['facet_gap_mm']:.2f} mm, capsule "
        f"reference strain {first[nig]['ref_strain_CL']:+.3f}) has the ratio "
        f"{first[nig]['ratio_AR']:.2f}, Moroney's {first[mor]['ratio_AR']:.2f}, the new "
        f"laboratory's {first[new]['ratio_AR']:.2f}.")
    if first[mor]["ref_strain_CL"] >= cl_upper:
        text.append(
            f"Moroney's capsule reference strain is calibrated to the upper end of its range "
            f"({cl_upper:+g}): his segments ask for tighter capsules than the form allows, and "
            "the table's capsule row repeats his calibrated one.")
    text.append(
        f"The members' median is {ar['median']:.2f}: {_pct(at_one)} of the members "
        "(`data/population/population.csv`) have a ratio of 0.99 or more, and a ratio "
        "cannot exceed 1.")
    text.append(
        "With every posterior parameter at its stiff end the axial-rotation ratio falls to "
        f"{stiff['ratio_AR'].min():.2f}–{stiff['ratio_AR'].max():.2f} (Moroney "
        f"{ar['moroney']:.2f}) and the lateral-bending ratio to "
        f"{stiff['ratio_LB'].min():.2f}–{stiff['ratio_LB'].max():.2f} (Moroney "
        f"{lb['moroney']:.2f}), and the more loaded facet carries "
        f"{stiff['facet_force_N'].min():.0f}–{stiff['facet_force_N'].max():.0f} N.")
    if c.drop(columns=["member", "setting"]).isna().to_numpy().any():
        text.append("A row with an empty value is one whose equilibrium failed.")
    if _shares_inverted(c, lb, ar):
        text.append(
            "In every row the model's posterior elements take a larger share of lateral "
            "bending than of axial rotation; Moroney's took the larger share of axial "
            "rotation. No setting in the table gives both of his ratios. An element that "
            "resists rotation about the facets' common normal (the uncovertebral joints, for "
            "instance) is not part of the model of Kecskeméthy et al. (disc, six ligaments, "
            "two facets), and we hold no source to add one.")
    text.append("The facets' measured angle to the sagittal plane changes the median ratio "
                "by less than 0.01 (`scripts/facet_orientation.py`).")
    rep.text(" ".join(text))
    rep.table("population_ceiling", c)
    t["ceiling"] = c


def _ceiling_clause(t, lb, ar) -> str:
    """``; ...`` when every row of the ceiling table has the shares of lateral bending and
    axial rotation the other way round from Moroney's."""
    c = t.get("ceiling")
    if c is None or not _shares_inverted(c, lb, ar):
        return ""
    return ("; in every setting of the posterior elements in that section's table the "
            "model's take a larger share of lateral bending than of axial rotation, Moroney's "
            "the reverse")


def _finding(where, man, mor, t, lb, ar, zar) -> str:
    """The population's finding for section 1: what was fitted, what was predicted."""
    m = mor.set_index(["config", "mode"])
    z_ar = float(m.loc[("intact", "axial-rotation"), "z"])
    text = (f"Population ({where}): one hierarchy calibrated to Nightingale et al.'s 96 raw "
            "steps and Moroney et al.'s 8 means (fitted: a record's steps to "
            f"{float(man['sigma_e_deg']):.2f}° each; Moroney's intact axial rotation missed "
            f"by z {z_ar:+.1f})")
    if "loo" in t:
        a = t["loo"].set_index("direction").loc["all"]
        text += (f". Predicted for left-out specimens: the band covers {_pct(a['coverage'])} "
                 f"of their raw steps, CRPS {a['ratio']:.2f}× the no-model baseline's "
                 f"(published model {a['published_crps_deg'] / a['baseline_crps_deg']:.1f}×)")
    z50, z100 = zar["median_50_pct"], zar["median_100_pct"]
    twice = z100 >= 2.0 * abs(z50)
    text += (f". For a new laboratory the members keep a whole segment in lateral bending "
             f"(median intact/posterior-removed {lb['median']:.2f}; Moroney {lb['moroney']:.2f})"
             f"{' and' if ar['median'] <= 0.8 else ' but not'} in axial rotation "
             f"({ar['median']:.2f}; Moroney {ar['moroney']:.2f}"
             + _ceiling_clause(t, lb, ar) + "); a bilateral 100 % "
             f"facetectomy changes axial rotation by {z100:+.0f} % (median), "
             f"{'at least' if twice else 'less than'} twice the change at 50 % "
             f"({z50:+.1f} %). No member predicts an ultimate moment: the disc has no failure "
             "law.")
    return text


def _folder():
    from segment.core.io import data_dir

    return data_dir() / "population"
