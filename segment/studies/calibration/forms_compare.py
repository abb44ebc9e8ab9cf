"""Which model form do the curves support? The forms of :mod:`segment.studies.forms` compared
on the same curves by what they fit, what they predict and what the data determine.

For each form:

* **fit**: every specimen its own parameter set
  (:func:`~segment.studies.calibration.curve_fit.calibrate_each`): RMS and largest error over
  the points not flagged, and the population's corridor fitted alike;
* **information criteria** summed over the specimens: ``AIC = sum n ln(RSS / n) + 2 p_D`` and
  ``BIC = sum n ln(RSS / n) + p_D ln n`` with ``p_D`` the effective number of parameters of
  each fit (:class:`~segment.studies.calibration.curve_result.CurveCalibration`; the nominal
  number is in ``parameters``). Differences between forms on the same points are what count:
  the points of one curve are correlated, which inflates both criteria's data term alike;
* **leave one specimen out**: the corridor of the other specimens fitted, the left-out
  specimen's points predicted (RMS and largest error) — how well the form's population fit
  predicts a new specimen;
* **across directions**: each specimen fitted to its flexion points alone, its extension
  points predicted, and the reverse — how much of one direction the form's structure carries
  to the other;
* **identifiability**: per parameter, in how many specimens the data determine it (the data at
  least halve the prior variance) and the median posterior/prior SD ratio.

:func:`verdict` reads the tables: the form with the lowest summed criteria, whether it also
predicts best, and the specimens and directions no form fits within a threshold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from segment.studies.calibration.curve_fit import (
    calibrate_curves,
    calibrate_each,
    population_table,
)
from segment.studies.calibration.curve_forward import CurveForward
from segment.studies.calibration.curve_targets import POINT_SD_DEG, CurveTargets
from segment.studies.curves import load_curves
from segment.studies.forms import form_names, load_form

__all__ = ["MISSED_RMS_DEG", "FormComparison", "compare_forms", "verdict"]

MISSED_RMS_DEG = 1.0
"""A fit with an RMS error above this [deg] misses its curve: twice the assumed point SD
(:data:`~segment.studies.calibration.curve_targets.POINT_SD_DEG`)."""


@dataclass(frozen=True, eq=False)
class FormComparison:
    """Tables of :func:`compare_forms` (one row per form, specimen, direction as named)."""

    fits: pd.DataFrame
    population: pd.DataFrame
    loso: pd.DataFrame
    cross: pd.DataFrame
    identifiability: pd.DataFrame
    each: dict

    def summary(self) -> pd.DataFrame:
        """One row per form: parameters, specimens converged, mean and worst specimen RMS,
        summed p_D, AIC and BIC (and their difference to the best form), the population fit's
        RMS, the leave-one-out and across-direction prediction errors (RMS over the
        specimens' RMS)."""
        rows = []
        for form, f in self.fits.groupby("form", sort=False):
            lo = self.loso[self.loso["form"] == form]
            cr = self.cross[self.cross["form"] == form]
            pop = self.population[self.population["form"] == form].iloc[0]
            rows.append({
                "form": form, "parameters": int(pop["parameters"]),
                "converged": f"{int(f['converged'].sum())}/{len(f)}",
                "fit_rms_mean_deg": f["rms_deg"].mean(), "fit_rms_worst_deg": f["rms_deg"].max(),
                "effective_parameters": f["effective_parameters"].sum(),
                "aic": f["aic"].sum(), "bic": f["bic"].sum(),
                "population_rms_deg": pop["rms_deg"],
                "loso_rms_deg": _pooled(lo["rms_deg"]),
                "flexion_to_extension_rms_deg": _pooled(
                    cr[cr["fitted"] == "flexion"]["rms_deg"]),
                "extension_to_flexion_rms_deg": _pooled(
                    cr[cr["fitted"] == "extension"]["rms_deg"]),
            })
        out = pd.DataFrame(rows)
        out["delta_aic"] = out["aic"] - out["aic"].min()
        out["delta_bic"] = out["bic"] - out["bic"].min()
        return out


def _pooled(rms) -> float:
    """Root mean square of per-specimen RMS values (NaN when none is finite)."""
    v = np.asarray(rms, dtype=float)
    v = v[np.isfinite(v)]
    return float(np.sqrt(np.mean(v ** 2))) if v.size else math.nan


def _predict(fit, targets: CurveTargets, form, fmodel):
    """RMS and largest error [deg] of ``fit``'s MAP on other targets (NaN when the fit or an
    equilibrium failed)."""
    if not fit.success:
        return math.nan, math.nan
    y, ok, _ = CurveForward(fmodel, form.space, targets)(fit.x[None])
    if not ok[0]:
        return math.nan, math.nan
    r = y[0] - targets.values
    return float(np.sqrt(np.mean(r ** 2))), float(np.max(np.abs(r)))


def compare_forms(curves=None, *, forms=None, model=None, point_sd: float = POINT_SD_DEG,
                  n_threads: int | None = 1, progress=None) -> FormComparison:
    """Fit, information criteria, leave-one-specimen-out and across-direction prediction, and
    identifiability of each form (module docstring).

    Parameters
    ----------
    curves : CurveSet, path or None
        Default: the packaged curves of Nightingale et al. 2002.
    forms : sequence of names, folders or Forms, optional
        Default: every packaged form (:func:`segment.studies.forms.form_names`).
    model : Segment, optional
        The base model .
    progress : callable, optional
        Called with a short message per form and stage.
    """

    curves = load_curves(curves)
    if len(curves.specimens) < 3:
        raise ValueError(f"comparing forms needs at least three specimens (leaving one out "
                         f"must leave a corridor with an SD), got {len(curves.specimens)}")
    base = model
    say = progress or (lambda _msg: None)
    fits, pops, loso, cross, ident, each = [], [], [], [], [], {}
    for name in (form_names() if forms is None else forms):
        form = load_form(name)
        fmodel = form.model(base)
        say(f"{form.name}: every specimen")
        specimen_fits = calibrate_each(curves, form=form, model=base, point_sd=point_sd,
                                       n_threads=n_threads)
        each[form.name] = specimen_fits
        fits.append(population_table(specimen_fits)[
            ["specimen", "form", "converged", "n_points", "rms_deg", "max_deg",
             "effective_parameters", "aic", "bic", "status"]])
        say(f"{form.name}: the population")
        pop = calibrate_curves(curves, form=form, model=base, n_threads=n_threads)
        pops.append({**pop.fit_row(), "parameters": form.space.dim})
        for f in specimen_fits:
            for j, pname in enumerate(f.names):
                ident.append({"form": form.name, "parameter": pname, "specimen":
                              f.targets.label, "verdict": f.verdicts[j],
                              "sd_ratio": (f.posterior_sd[j] / f.prior_sd[j]
                                           if f.success else math.nan)})
        say(f"{form.name}: leave one specimen out")
        for s in curves.specimens:
            others = [x for x in curves.specimens if x != s]
            fit = calibrate_curves(targets=CurveTargets.population(curves, specimens=others),
                                   form=form, model=base, n_threads=n_threads)
            rms, worst = _predict(fit, CurveTargets.specimen(curves, s, point_sd=point_sd),
                                  form, fmodel)
            loso.append({"form": form.name, "specimen": s, "converged": fit.success,
                         "rms_deg": rms, "max_deg": worst})
        say(f"{form.name}: across directions")
        for s in curves.specimens:
            modes = curves.subset(specimens=[s]).modes
            if len(modes) < 2:
                continue
            for fitted, predicted in ((modes[0], modes[1]), (modes[1], modes[0])):
                fit = calibrate_curves(curves, form=form, model=base, specimen=s,
                                       modes=[fitted], point_sd=point_sd, n_threads=n_threads)
                rms, worst = _predict(fit, CurveTargets.specimen(curves, s, modes=[predicted],
                                                                 point_sd=point_sd),
                                      form, fmodel)
                cross.append({"form": form.name, "specimen": s, "fitted": fitted,
                              "predicted": predicted, "converged": fit.success,
                              "fit_rms_deg": fit.rms_deg, "rms_deg": rms, "max_deg": worst})
    ident = pd.DataFrame(ident)
    table = (ident.groupby(["form", "parameter"], sort=False)
             .agg(data_determined=("verdict", lambda v: int((v == "data").sum())),
                  specimens=("verdict", "size"), median_sd_ratio=("sd_ratio", "median"))
             .reset_index())
    return FormComparison(fits=pd.concat(fits, ignore_index=True),
                          population=pd.DataFrame(pops), loso=pd.DataFrame(loso),
                          cross=pd.DataFrame(cross), identifiability=table, each=each)


def verdict(comparison: FormComparison, *, missed_rms_deg: float = MISSED_RMS_DEG) -> dict:
    """What the comparison says, as numbers a text can quote.

    Returns
    -------
    dict
        ``best_aic``, ``best_bic``, ``best_loso``, ``best_cross`` (form names), ``supported``
        (the form best by both criteria, or None when they disagree), ``missed`` (per
        specimen, the forms whose fit misses it: RMS > ``missed_rms_deg``) and
        ``missed_by_all`` (the specimens every form misses).
    """
    s = comparison.summary()
    best = {k: str(s.loc[s[col].idxmin(), "form"]) for k, col in
            (("best_aic", "aic"), ("best_bic", "bic"), ("best_loso", "loso_rms_deg"))}
    cross = s["flexion_to_extension_rms_deg"] ** 2 + s["extension_to_flexion_rms_deg"] ** 2
    best["best_cross"] = str(s.loc[cross.idxmin(), "form"])
    f = comparison.fits
    missed = {sp: list(g.loc[~(g["rms_deg"] <= missed_rms_deg), "form"])
              for sp, g in f.groupby("specimen", sort=False)}
    n_forms = f["form"].nunique()
    return {**best,
            "supported": best["best_aic"] if best["best_aic"] == best["best_bic"] else None,
            "missed": {k: v for k, v in missed.items() if v},
            "missed_by_all": [k for k, v in missed.items() if len(v) == n_forms]}
