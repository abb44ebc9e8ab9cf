"""The part of ``segment curves`` that reports what experimenters report: ROM, neutral zone,
NZ and elastic-zone stiffness of the model and of each specimen side by side, and the model's
sagittal ICR along flexion-extension against Anderst et al. 2013
(:mod:`segment.studies.curve_metrics`, :mod:`segment.studies.icr`)."""

from __future__ import annotations

import math

METRICS_CSV = "curves_metrics.csv"
ICR_CSV = "curves_icr.csv"


def _cell(values) -> str:
    """mean +- SD (n) of the available values, or 'not available'."""
    v = [x for x in values if not math.isnan(x)]
    if not v:
        return "not available"
    if len(v) == 1:
        return f"{v[0]:.3g}"
    mean = sum(v) / len(v)
    sd = math.sqrt(sum((x - mean) ** 2 for x in v) / (len(v) - 1))
    return f"{mean:.3g} +- {sd:.2g} (n={len(v)}, {min(v):.3g}-{max(v):.3g})"


def report(model, curves, out) -> list:
    """Print the metrics and the ICR comparison; write them into ``out``; return the paths."""
    from segment.studies.curve_metrics import EZ_WINDOW_NM, metrics_table
    from segment.studies.icr import anderst_comparison

    modes = ("flexion", "extension")
    if not all(m in curves.modes for m in modes):
        print("metrics: the curves need flexion and extension; skipped")
        return []
    table = metrics_table(model, curves, modes=modes)
    print(f"\nwhat experimenters report (model and the {len(curves.specimens)} specimens; "
          f"elastic-zone stiffness over {EZ_WINDOW_NM[0]:g}-{EZ_WINDOW_NM[1]:g} N m for all)")
    print(f"{'metric':<40}{'direction':<11}{'model':>14}  specimens: mean +- SD (n, range)")
    for (metric, direction), g in table.groupby(["metric", "direction"], sort=False):
        unit = g["unit"].iloc[0]
        mod = g[g["source"] == "model"]
        spec = g[g["source"] != "model"]
        mv = float(mod["value"].iloc[0])
        shown = "not available" if math.isnan(mv) else f"{mv:.3g}"
        print(f"{metric + ' [' + unit + ']':<40}{direction:<11}{shown:>14}  "
              f"{_cell(spec['value'].tolist())}")
    notes = {}
    for src, g in table.groupby("source", sort=False):
        for r in g.itertuples():
            if r.note.startswith("not available") and r.metric.startswith("NZ, double"):
                notes[src] = r.note
    if "model" in notes:
        print(f"  model NZ: {notes['model']}")
    spec_notes = [n for s, n in notes.items() if s != "model"]
    if spec_notes:
        print(f"  specimens' NZ not available for {len(spec_notes)} of "
              f"{len(curves.specimens)}, e.g. {spec_notes[0].split(': ', 1)[1]}")
    print("  Panjabi's zero-load NZ needs the unloading branches; the specimen curves and the "
          "model's are loading branches (the model is elastic: its unloading retraces them)")
    icr = anderst_comparison(model)
    print("\nsagittal ICR along flexion-extension (pure moments to 1.8 N m each way), mm from "
          "the C6 body centroid (+ superior, + anterior), against Anderst et al. 2013 "
          "(in vivo, C5/C6, validation only)")
    print(f"{'direction':<20}{'model mean':>11}{'model range':>18}{'whole motion':>13}"
          f"{'Anderst mean [95% CI]':>26}")
    for r in icr.itertuples():
        span = f"{r.model_min_mm:.1f} to {r.model_max_mm:.1f}"
        ref = f"{r.anderst_mean_mm:.1f} [{r.anderst_ci_low_mm:.1f}, {r.anderst_ci_high_mm:.1f}]"
        print(f"{r.direction:<20}{r.model_mean_mm:11.2f}{span:>18}{r.model_whole_motion_mm:13.2f}"
              f"{ref:>26}" + ("  within the CI" if r.within_ci else "  outside the CI"))
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / METRICS_CSV, index=False, float_format="%.6g", lineterminator="\n")
    icr.to_csv(out / ICR_CSV, index=False, float_format="%.6g", lineterminator="\n")
    return [out / METRICS_CSV, out / ICR_CSV]
