"""``segment curves``: the model (``--data``) against specimen curves: the corridor per load
level, the model's rotation and its distance in specimen SDs; prints, plots and writes a CSV."""

from __future__ import annotations

from pathlib import Path

from segment.cli._common import UsageError, check_output_folder, command, model_for

COMPARISON_CSV = "curves_comparison.csv"
COMPARISON_PNG = "curves_comparison.png"


def register(sub) -> None:
    p = command(sub, "curves", run, help="the model against specimen curves: corridor (mean "
                                         "+- SD per load level), model, z; writes a CSV and a "
                                         "figure")
    p.add_argument("file", metavar="FILE", nargs="?", default=None,
                   help="curves CSV (default: the packaged curves of Nightingale et al. 2002)")
    p.add_argument("--out", metavar="DIR", default="curves",
                   help=f"folder for {COMPARISON_CSV} and {COMPARISON_PNG} (default: curves)")
    p.add_argument("--min-specimens", type=int, default=None, metavar="N",
                   help="corridor levels with at least N specimens, N >= 2 (default: every "
                        "specimen of the mode)")
    p.add_argument("--no-metrics", action="store_true",
                   help="leave out ROM, neutral zone, NZ and elastic-zone stiffness of the "
                        "model and the specimens, and the model's ICR against Anderst et al. "
                        "2013 (curves_metrics.csv, curves_icr.csv)")


def run(args, argv) -> int:
    import sys

    import numpy as np
    import pandas as pd

    from segment._extras import require
    from segment.core.checks import CORRIDOR_MIN_SPECIMENS
    from segment.studies.curves import compare, load_curves, model_curve

    if args.min_specimens is not None and args.min_specimens < CORRIDOR_MIN_SPECIMENS:
        raise UsageError(f"--min-specimens must be >= {CORRIDOR_MIN_SPECIMENS} (a corridor "
                         f"level's SD needs two specimens), got {args.min_specimens}")
    out = check_output_folder(args.out, "--out")
    require("matplotlib", "report", "segment curves")
    curves = load_curves(args.file, strict=not args.allow_implausible)
    model = model_for(args)
    table = compare(model, curves, min_specimens=args.min_specimens)
    label = "model" if args.data is None else f"model of {Path(args.data).name}"
    print(f"{label} against {Path(curves.path).name}: {len(curves.specimens)} specimens, "
          f"modes {', '.join(curves.modes)}; corridor = mean +- SD over the specimens with a "
          "measured point at the level; z = (model - mean) / SD")
    print(f"{'mode':>10} {'M [N m]':>8} {'n':>3} {'mean':>7} {'SD':>6} {'model':>7} "
          f"{'z':>6}")
    for r in table.itertuples():
        model_deg = "failed" if not r.converged else f"{r.model_deg:7.2f}"
        print(f"{r.mode:>10} {r.moment_Nm:8.2f} {r.n:3d} {r.mean_deg:7.2f} {r.sd_deg:6.2f} "
              f"{model_deg:>7} {r.z:6.2f}")
    for mode, g in table.groupby("mode", sort=False):
        print(f"{mode}: the model is {g['z'].min():.1f} to {g['z'].max():.1f} specimen SDs "
              "from the mean")
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / COMPARISON_CSV, index=False, float_format="%.6g", lineterminator="\n")
    import matplotlib

    matplotlib.use("Agg")
    from segment.report.curve_figures import corridor_figure

    models = {}
    frames = [model_curve(model, m, curves.levels(m)[curves.levels(m) > 0])
              for m in curves.modes]
    models[label] = pd.concat(frames, ignore_index=True)
    fig = corridor_figure(curves, curves.corridor(min_specimens=args.min_specimens), models,
                          title=f"{label} against {Path(curves.path).name}")
    fig.savefig(out / COMPARISON_PNG, dpi=110, metadata={"Software": None})
    import matplotlib.pyplot as plt

    plt.close(fig)
    print(f"wrote {out / COMPARISON_CSV} and {out / COMPARISON_PNG}")
    if not args.no_metrics:
        from segment.cli._curve_metrics import report

        for path in report(model, curves, out):
            print(f"wrote {path}")
    failed = int((~table["converged"]).sum())
    if failed:
        print(f"segment: {failed} model points did not converge", file=sys.stderr)
        return 1
    return 0 if np.isfinite(table["z"]).all() else 1
