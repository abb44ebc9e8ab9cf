"""Held-out checks of the population calibration, on the data we have (issue 32):

1. leave-one-specimen-out over the 8 Nightingale specimens (the stand-in for "three further
   specimens of the same study"): band coverage of the left-out specimen's raw steps, CRPS
   against the no-model baseline (the other specimens' own curves) and the published model,
   the failure moment against the band of predicted ultimate moments, members invalid below
   3.5 N m;
2. leave-one-laboratory-out (the stand-in for "a second laboratory"): the population
   calibrated to Nightingale's specimens alone predicts Moroney's laboratory as a new
   laboratory; does its band cover Moroney's mean rotations, and is its median within 1 SD
   (the 30 % between-specimen SD assumed in calibration_targets.csv)?

3. the model forms judged the same way: the population form and the curve forms
   (reference-strain, neutral-zone, fw35), each calibrated hierarchically to Nightingale's
   specimens alone (default hyperpriors where a form has none), leave-one-specimen-out.

Writes ``data/population/loo_steps.csv``, ``loo_summary.csv``, ``loo_failure.csv``,
``lab_out.csv`` and ``loo_forms.csv`` (``%.6g``). Run from the repository root::

    python scripts/population_loo.py [--out data/population] [--members 200] [--ramps 100]

About 25 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

import segment
from segment.studies.calibration.hierarchical import fit_population
from segment.studies.calibration.hierarchical_data import moroney_targets
from segment.studies.calibration.hierarchical_settings import NEW_LAB
from segment.studies.calibration.predictive import (
    BAND,
    crps_ensemble,
    leave_one_out,
    predictive_sample,
    summarize,
)
from segment.studies.population_limits import validity_limits
from segment.studies.specimens import load_specimens


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="data/population")
    ap.add_argument("--members", type=int, default=200)
    ap.add_argument("--ramps", type=int, default=100)
    ap.add_argument("--forms", nargs="*", default=["reference-strain", "neutral-zone", "fw35"],
                    help="curve forms also scored (Nightingale's specimens alone, default "
                         "hyperpriors)")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    model = segment.c5c6()
    data = load_specimens()
    limits = validity_limits(data)
    steps, failure = leave_one_out(
        model, data, n_members=args.members, ramps=args.ramps, limits=limits,
        progress=lambda k, n: print(f"left out {k}/{n} ({time.perf_counter() - t0:.0f} s)",
                                    flush=True))
    summary = summarize(steps)
    fmt = "%.6g"
    steps.to_csv(out / "loo_steps.csv", index=False, float_format=fmt, lineterminator="\n")
    summary.to_csv(out / "loo_summary.csv", index=False, float_format=fmt, lineterminator="\n")
    failure.to_csv(out / "loo_failure.csv", index=False, float_format=fmt, lineterminator="\n")
    print(summary.to_string())
    print(failure.to_string())
    # leave Moroney's laboratory out: Nightingale alone predicts it as a new laboratory
    fit = fit_population(model, data, moroney=False)
    mor = moroney_targets()
    from segment.studies.calibration.hierarchical_forward import Experiment

    exps = tuple(Experiment(c, m, (1.8,)) for c, m in zip(mor["config"], mor["mode"],
                                                          strict=True))
    _, curves, _, ok = predictive_sample(fit, model, exps, n=args.members, lab=NEW_LAB,
                                         seed=7, noise=False)
    curves = curves[ok]
    rows = []
    for k, r in mor.iterrows():
        v = curves[:, k]
        q5, q50, q95 = np.percentile(v, [BAND[0], 50.0, BAND[1]])
        sd = 0.3 * r["value_deg"]       # the between-specimen SD assumed in the targets file
        rows.append({"config": r["config"], "mode": r["mode"], "moroney_deg": r["value_deg"],
                     "assumed_sd_deg": sd, "median_deg": q50, "q5_deg": q5, "q95_deg": q95,
                     "band_overlaps_mean_pm_sd": bool(q5 <= r["value_deg"] + sd
                                                      and q95 >= r["value_deg"] - sd),
                     "median_within_1sd": bool(abs(q50 - r["value_deg"]) <= sd),
                     "crps_deg": crps_ensemble(v, r["value_deg"])})
    lab_out = pd.DataFrame(rows)
    lab_out.to_csv(out / "lab_out.csv", index=False, float_format=fmt, lineterminator="\n")
    print(lab_out.to_string())
    # the forms: each calibrated hierarchically to Nightingale's specimens alone
    parts = [summary.assign(form="population", data="both laboratories")]
    for form in ["population", *args.forms]:
        f_steps, _ = leave_one_out(model, data, form=None if form == "population" else form,
                                   moroney=False, n_members=args.members)
        parts.append(summarize(f_steps).assign(form=form, data="nightingale2002 only"))
        print(f"form {form} done ({time.perf_counter() - t0:.0f} s)", flush=True)
    forms = pd.concat(parts, ignore_index=True)
    forms = forms[["form", "data", *[c for c in forms.columns if c not in ("form", "data")]]]
    forms.to_csv(out / "loo_forms.csv", index=False, float_format=fmt, lineterminator="\n")
    print(forms.to_string())
    print(f"done in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
