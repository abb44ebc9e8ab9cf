"""Specimen curves (Nightingale et al. 2002), the model forms fitted to them, which form the
data support, and the virtual population of per-specimen calibrations next to the published
model (issue 22; :mod:`segment.studies.curves`, :mod:`segment.studies.forms`,
:mod:`segment.studies.calibration.forms_compare`, :mod:`segment.studies.population`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

KEY = "population"
TITLE = "Specimen curves, model forms and a virtual population"

RAMP_TO_SCALE = 10.0
"""Load scale of the population's ramps (x the case load, 18 N m in flexion)."""
RAMP_STEPS = 50


def _levels(curves, mode):
    lv = curves.levels(mode)
    return lv[lv > 0]


def _range(values) -> str:
    """``a–b`` of the values at one decimal, or ``a`` when both round alike."""
    lo, hi = f"{min(values):.1f}", f"{max(values):.1f}"
    return lo if lo == hi else f"{lo}–{hi}"


def _curves_of(model, curves) -> pd.DataFrame:
    from segment.studies.curves import model_curve

    parts = []
    for m in curves.modes:     # from the origin (the unloaded pose) to the curves' levels
        parts.append(pd.DataFrame({"mode": [m], "moment_Nm": [0.0], "rotation_deg": [0.0],
                                   "converged": [True]}))
        parts.append(model_curve(model, m, _levels(curves, m)))
    return pd.concat(parts, ignore_index=True)


def write(rep, s) -> None:
    """Write this section into ``rep`` from the study ``s``; keeps the comparison's verdict
    and the published model's distance from the population in ``s.extra``."""
    from segment.report.curve_figures import corridor_figure, fits_figure, population_bands_figure
    from segment.studies.calibration.curve_fit import calibrate_curves
    from segment.studies.calibration.curve_folder import calibrated_model
    from segment.studies.calibration.curve_targets import POINT_SD_DEG
    from segment.studies.calibration.forms_compare import MISSED_RMS_DEG, compare_forms, verdict
    from segment.studies.curves import compare, load_curves
    from segment.studies.forms import form_names, load_form
    from segment.studies.population import Population

    curves = load_curves()
    n_spec = len(curves.specimens)
    frame = curves.frame()
    first = frame[~frame["ignore"]].groupby(["specimen", "mode"])["moment_Nm"].min()
    cor = curves.corridor()
    lo_level, hi_level = cor["moment_Nm"].min(), cor["moment_Nm"].max()
    at = curves.corridor(min_specimens=2)
    at18 = at[np.isclose(at["moment_Nm"], 1.8)].set_index("mode")
    rep.text(
        f"Nightingale et al. (2002, J Biomech 35:725–732) tested {n_spec} female C5–C6 motion "
        "segments in pure flexion and extension moments; their curves, specimen by specimen, "
        "come from the NHTSA biomechanics database as processed into moment steps of 0.1 N·m "
        "by a public repository (`data/curves/nightingale2002_c5c6_female.csv`, SOURCES.md "
        "§10). Every curve starts with a straight line from the origin to its first recorded "
        f"sample, which the processing added: those points (first sample at "
        f"{first.min():.1f}–{first.max():.1f} N·m) are interpolation, not measurements. They "
        "are ignored in every fit and error measure here and drawn dotted. The corridor is "
        "the mean ± SD over the specimens at each moment level, only where every specimen "
        f"has a measured point ({lo_level:.1f}–{hi_level:.1f} N·m); at 1.8 N·m, where some "
        f"specimens are still on their initial line, the {int(at18.loc['flexion', 'n'])} "
        f"measured flexion points give {at18.loc['flexion', 'mean_deg']:.1f} ± "
        f"{at18.loc['flexion', 'sd_deg']:.1f}° and the {int(at18.loc['extension', 'n'])} "
        f"extension points {at18.loc['extension', 'mean_deg']:.1f} ± "
        f"{at18.loc['extension', 'sd_deg']:.1f}°.")
    table = compare(s.model, curves)
    rep.table("curves_published_vs_corridor", table)
    z = {m: g["z"] for m, g in table.groupby("mode")}
    rep.text(
        "The published model against the corridor: in flexion it rotates "
        f"{abs(z['flexion'].max()):.1f}–{abs(z['flexion'].min()):.1f} specimen SDs less than "
        f"the specimens' mean at every level, in extension "
        f"{abs(z['extension'].max()):.1f}–{abs(z['extension'].min()):.1f} SDs less. Within "
        "today's ranges (the published form below) no parameter set comes near: the disc "
        "of eq. (1) alone, without ligaments and facets, rotates "
        f"{1.8 / 0.21:.1f}° at 1.8 N·m in flexion (Table 2), less than the specimens.")

    say = s.say
    say("specimen curves: fitting every model form (per specimen, population, leave one "
        "out, across directions)")
    cmp = compare_forms(curves, model=s.model)
    v = verdict(cmp)
    summary = cmp.summary()
    forms = pd.DataFrame([{"form": n, "parameters": load_form(n).space.dim,
                           "description": load_form(n).description,
                           "source": load_form(n).source} for n in form_names()])
    rep.text(
        "Model forms: each is a disc law with its parameters and a parameter space with a "
        "prior and a source (or the word assumed and the reasoning) per parameter, in "
        "`data/forms/`. The published model stays the default; a form is only used where "
        "named (`segment calibrate --curves FILE --form NAME`). Dataset-specific "
        "calibration needs wider priors than the published model's ranges; each is stated "
        "in its space file.")
    rep.table("model_forms", forms)
    rep.text(
        "Every specimen its own parameter set, in every form: MAP by least squares on the "
        "points not flagged with the exact sensitivities of every curve point (each an "
        "equilibrium, the curve followed by continuation), from the form's nominal set and "
        "three starts drawn from the priors (local minima). A point's SD is assumed "
        f"{POINT_SD_DEG:g}°. Fit error per specimen (RMS and largest over the points not "
        "flagged, degrees):")
    fits = cmp.fits.pivot(index="specimen", columns="form", values=["rms_deg", "max_deg"])
    fits = fits.reindex(list(curves.specimens))
    fits.columns = [f"{f}_{k.replace('_deg', '')}_deg" for k, f in fits.columns]
    fits = fits[[f"{f}_{k}_deg" for f in form_names() for k in ("rms", "max")]]
    rep.table("curve_fit_error", fits.reset_index())
    rep.text("Which form do the data support? Summed over the specimens, the information "
             "criteria use each fit's effective number of parameters p_D (how many "
             "parameters the data determine); leave-one-specimen-out fits the corridor of "
             "the others and predicts the left-out specimen; across directions fits a "
             "specimen's flexion alone and predicts its extension, and the reverse (RMS over "
             "the specimens of each prediction's RMS):")
    rep.table("form_comparison", summary)
    best = v["supported"] or v["best_aic"]
    sb = summary.set_index("form")
    others = sb.drop(index=best)
    runner = others["aic"].idxmin()
    missed = v["missed_by_all"]
    cross_best = sb.loc[best]
    new_forms = sb.drop(index="published", errors="ignore")
    pub_rms = sb.loc["published", "fit_rms_mean_deg"] if "published" in sb.index else np.nan
    pub_missed = sum(1 for f in v["missed"].values() if "published" in f)
    text = (
        f"Verdict: the data support **{best}**"
        + ("" if v["supported"] else " by AIC (BIC prefers " + v["best_bic"] + ")")
        + f": its summed AIC is {others.loc[runner, 'delta_aic']:.0f} below the next form's "
        f"({runner}) and its specimens' fits average {sb.loc[best, 'fit_rms_mean_deg']:.2f}° "
        f"RMS against {others.loc[runner, 'fit_rms_mean_deg']:.2f}°; the published form "
        f"within today's ranges misses {pub_missed} of {n_spec} specimens by more than "
        f"{MISSED_RMS_DEG:g}° RMS ({pub_rms:.1f}° on average). Prediction tells the forms "
        "apart less: leaving one specimen out, the new forms predict the new specimen to "
        f"{_range(new_forms['loso_rms_deg'])}° RMS: the corridor's SD, the specimens' own "
        "spread, dominates. ")
    if missed:
        sp = ", ".join(missed)
        worst = cmp.fits[cmp.fits["specimen"].isin(missed)].groupby("specimen")[
            "rms_deg"].min()
        text += (f"No form fits {sp} within {MISSED_RMS_DEG:g}° RMS (best "
                 + ", ".join(f"{k} {x:.2f}°" for k, x in worst.items()) + "). ")
    f2e = new_forms["flexion_to_extension_rms_deg"]
    e2f = new_forms["extension_to_flexion_rms_deg"]
    loso_best = float(new_forms["loso_rms_deg"].min())
    better = min(f2e.min(), e2f.min()) < loso_best
    text += (
        "Across directions: fitted to its flexion alone, a specimen's extension is predicted "
        f"to {_range(f2e)}° RMS by the new forms ({best} "
        f"{cross_best['flexion_to_extension_rms_deg']:.1f}°); "
        f"fitted to its extension alone, its flexion to {_range(e2f)}° ({best} "
        f"{cross_best['extension_to_flexion_rms_deg']:.1f}°). "
        + ("That is no better than the population's corridor predicts a new specimen "
           f"({loso_best:.1f}° RMS, leave one out): what no form reproduces is one "
           "direction from the other. The parameters the curves determine are "
           "direction-specific (the disc's flexion and extension factors, the posterior "
           "ligaments' and the ALL's slack, the zone on each side), so a specimen's flexion "
           "says little about its extension in any of these forms."
           if not better else
           "The best of these beats the corridor's leave-one-out prediction "
           f"({loso_best:.1f}° RMS): the forms carry some of one direction to the other."))
    rep.text(text)
    ident = cmp.identifiability.copy()
    rep.text("Identifiability per form and parameter: in how many specimens the data at "
             "least halve the prior variance, and the median ratio of posterior to prior SD "
             "(Laplace):")
    rep.table("form_identifiability", ident)
    s.extra["form_verdict"] = v
    s.extra["form_comparison"] = summary

    # the population of the supported form
    pop_fits = cmp.each[best]
    pop = Population.from_fits(pop_fits, form=best, model=s.model)
    say(f"virtual population ({best}, {len(pop)} members): nine cases, ramps, validation")
    pop_map = calibrate_curves(curves, form=best, model=s.model)
    models = {"published model": _curves_of(s.model, curves),
              f"{best}, population MAP": _curves_of(calibrated_model(pop_map,
                                                                       model=s.model), curves)}
    rep.figure("curves_corridor", corridor_figure(curves, cor, models),
               f"The {n_spec} specimens (grey; dotted: the processing's initial line, ignored), "
               "their corridor (mean ± SD where every specimen has a measured point), the "
               f"published model and the {best} form fitted to the corridor")
    fitted = {}
    for name, per in (("published form (today's ranges)", cmp.each["published"]),
                      (best, pop_fits)):
        fitted[name] = {f.targets.label: _curves_of(calibrated_model(f, model=s.model), curves)
                        for f in per if f.success}
    rep.figure("curves_fits", fits_figure(curves, fitted),
               f"Each specimen (points: measured; dotted: initial line, ignored) with its own "
               f"fit in the {best} form and in the published form within today's ranges; "
               "flexion up, extension down")
    cases = pop.cases()
    cb = pop.case_bands(cases)
    rep.text(
        f"The virtual population: the {len(pop)} per-specimen sets of the {best} form, each "
        "solved in the nine Moroney cases, ramped to failure and compared with the "
        "validation data, against the published model. Bands: median and 5–95 % over the "
        f"members (with {len(pop)} members the 5 and 95 % quantiles interpolate between the "
        "two lowest and the two highest); z: the published model's distance from the "
        "members' mean in the members' SD. The curves load only flexion and extension, so "
        "translations and the other rotations move only through the shared ligaments and "
        "facets: there the members' SD is small and a large z means little.")
    rep.table("population_case_bands", cb.drop(columns=["members"]))
    rep.figure("population_bands", population_bands_figure(cb),
               f"Main displacement of the nine cases: the {best} population (band 5–95 %, "
               "median, members) and the published model (cross)")
    flx = cb.set_index("case").loc["FLX"]
    ext = cb.set_index("case").loc["EXT"]
    rep.text(
        f"The published model sits {abs(flx['z_published']):.1f} specimen SDs below the "
        f"population's mean in flexion at 1.8 N·m ({flx['published']:.2f}° against "
        f"{flx['mean']:.1f} ± {flx['sd']:.1f}°) and {abs(ext['z_published']):.1f} SDs in "
        f"extension ({abs(ext['published']):.2f}° against {abs(ext['mean']):.1f} ± "
        f"{ext['sd']:.1f}°).")
    s.extra["published_vs_population"] = cb
    ramps = pop.ramps(("FLX", "EXT"), to_scale=RAMP_TO_SCALE, steps=RAMP_STEPS)
    rep.text(f"Ramps with ligament rupture (to {RAMP_TO_SCALE:g} times the case load in "
             f"{RAMP_STEPS} steps; the published model's failure loads are in "
             f"{s.section('failure')}; a ramp stops at the model's validity limit of that "
             "section, where the disc of eq. (1) carries the load without a failure law; "
             "limit_load is the load there):")
    rep.table("population_ramps", ramps, ramps.drop(columns=["status"]))
    members_r = ramps[ramps["member"] != "published"]
    n_ruptured = int(np.isfinite(members_r["first_rupture"]).sum())
    n_limit = int(np.isfinite(members_r["limit_load"]).sum())
    rep.text(f"{n_ruptured} of {len(members_r)} member ramps rupture a ligament before the "
             f"validity limit; {n_limit} of {len(members_r)} reach the limit"
             + (" first: these members rotate so far under the ligaments' load that the "
                "ligaments' failure is not predicted within the model's validity"
                if n_ruptured == 0 and n_limit else "") + ".")
    val = pop.validation()
    mor = val["moroney"]
    mor_b = (mor[mor["member"] != "published"].groupby("case", sort=False)["z"]
             .agg(["median", "min", "max"]).reset_index())
    pub_z = mor[mor["member"] == "published"].set_index("case")["z"]
    mor_b["published_z"] = mor_b["case"].map(pub_z)
    rep.text("Moroney's intact rotations at 1.8 N·m (the intact rows of "
             "`calibration_targets.csv`, SDs assumed 30 %), in target SDs: the members "
             "(median, range) and the published model. Nightingale's specimens are far more "
             "flexible than Moroney's means, so a population fitted to them misses Moroney:")
    rep.table("population_moroney", mor_b)
    fs = val["flexion_stiffness"]
    fs_b = (fs[fs["model"] != "published"].groupby("moment_Nm")["secant_stiffness_Nm_per_deg"]
            .agg(["median", "min", "max"]).reset_index())
    fs_b["published"] = fs_b["moment_Nm"].map(
        fs[fs["model"] == "published"].set_index("moment_Nm")["secant_stiffness_Nm_per_deg"])
    lo_v, hi_v = fs["Voo_1998_low"].iloc[0], fs["Voo_1998_high"].iloc[0]
    rep.text("Validation only: the secant flexion stiffness at Voo et al.'s (1998) peak "
             f"moments against their corridor {lo_v:g}–{hi_v:g} N·m/deg (the members' "
             "median and range, and the published model):")
    rep.table("population_voo", fs_b)
    icr = val["icr"]
    point = icr["reference_point"].iloc[0]
    shown = icr[(icr["reference_point"] == point) & icr["centre"].str.startswith("+-1.8")]
    n_within = int((icr[icr["model"] != "published"]["verdict"] == "within").sum())
    rep.text(f"Centre of rotation against Anderst et al. (2013), as in "
             f"{s.section('calibration')} (their reference point is not available to us; "
             f"three assumed points): {n_within} of "
             f"{int((icr['model'] != 'published').sum())} comparisons of the members lie "
             f"within both confidence intervals. Shown: the finite centre between ±1.8 N·m "
             f"from the {point} (every centre and point in the table's CSV):")
    rep.table("population_icr", icr, shown)
    flx_r = ramps[(ramps["case"] == "FLX") & (ramps["member"] != "published")]
    pub_r = ramps[(ramps["case"] == "FLX") & (ramps["member"] == "published")].iloc[0]
    s.extra["findings_more"] = [
        f"Specimen curves ({s.section(KEY)}): against the flexion and extension curves of "
        f"{n_spec} female C5–C6 segments (Nightingale et al. 2002) the published model is "
        f"{abs(z['flexion'].max()):.1f}–{abs(z['flexion'].min()):.1f} specimen SDs too stiff "
        f"in flexion and {abs(z['extension'].max()):.1f}–{abs(z['extension'].min()):.1f} in "
        f"extension, and no parameter set within today's ranges fits a specimen "
        f"({pub_rms:.1f}° RMS on average). Of the model forms, {best} fits "
        f"{n_spec - len(missed)} of {n_spec} specimens within {MISSED_RMS_DEG:g}° RMS "
        f"({sb.loc[best, 'fit_rms_mean_deg']:.2f}° on average) and has the lowest AIC"
        + (" and BIC" if v["supported"] else "") + "; fitted to one direction, "
        + ("no form predicts the other better than the corridor predicts a new specimen "
           if not better else "the best form predicts the other better than the corridor "
           "predicts a new specimen ")
        + f"(best {min(f2e.min(), e2f.min()):.1f}° RMS against {loso_best:.1f}°). Its virtual "
        "population "
        f"flexes {flx['mean']:.1f} ± {flx['sd']:.1f}° at 1.8 N·m, {abs(flx['z_published']):.1f} "
        "SDs from the published model, and " + _rupture_words(flx_r, pub_r) + "."]


def _rupture_words(members, published) -> str:
    """The population's first rupture in flexion in words: a range where members rupture,
    else where they reach the validity limit (never a range of NaN)."""
    pub = (f"published: first rupture {published['first_rupture']:.1f} N·m"
           if np.isfinite(published["first_rupture"]) else "published: none before its limit")
    fr = members["first_rupture"].to_numpy(float)
    lim = members["limit_load"].to_numpy(float)
    n = len(members)
    if np.isfinite(fr).any():
        ok = fr[np.isfinite(fr)]
        return (f"first ruptures a ligament in flexion at {ok.min():.1f}–{ok.max():.1f} N·m in "
                f"{len(ok)} of {n} members ({pub})")
    if np.isfinite(lim).any():
        ok = lim[np.isfinite(lim)]
        return (f"reaches the model's validity limit in flexion at {ok.min():.1f}–"
                f"{ok.max():.1f} N·m before any ligament ruptures (all {n} members; {pub}), "
                "so its failure loads are not predicted")
    return f"ruptures no ligament in flexion within the ramp ({pub})"
