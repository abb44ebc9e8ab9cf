"""``segment sensitivity``: which parameters move each case (Sobol indices or a tornado).

The study runs on the model of ``--data`` (the space's nominal values are that model's,
:meth:`segment.studies.space.ParameterSpace.for_model`). Every input is checked before any work, the
``--scheduler`` too, and nothing is written until the study has a result: a refused study
(too small a design, failures that are not random) or a scheduler that does not answer leaves
the output folder as it was. The output folder records what was used (``study_inputs.txt``:
the command, the data folder, the space file with its SHA-256, and the space as used).
"""

from __future__ import annotations

import sys
from pathlib import Path

from segment.cli._common import (
    UsageError,
    bars_on,
    check_output_folder,
    command,
    count_option,
    dask_client,
    scheduler_option,
    seed_option,
    space_and_model,
)
from segment.cli._common import (
    cases as named_cases,
)


def register(sub) -> None:
    from segment._checks import MAX_EVALUATIONS

    p = command(sub, "sensitivity", run, help="which parameters move each case: Sobol indices "
                                              "over the parameter space, or a tornado study")
    p.add_argument("--method", choices=("sobol", "tornado"), default="sobol",
                   help="sobol (default: all parameters at once) or tornado (one at a time "
                        "at the bounds)")
    count_option(p, "--n", maximum=MAX_EVALUATIONS, why="MAX_EVALUATIONS", default=100_000,
                 metavar="N",
                 help="Sobol: minimum number of model evaluations, each the unloaded pose and "
                      "every case (default 100000; at least the design N = 128, and at most "
                      f"{MAX_EVALUATIONS:,} and what fits in memory)")
    p.add_argument("--space", metavar="FILE", default=None,
                   help="parameter-space CSV (default: parameter_space.csv of --data, else "
                        "the packaged one); its nominal values are read from the model")
    p.add_argument("--out", metavar="DIR", default="sensitivity",
                   help="output folder for CSV and figures (default: sensitivity)")
    seed_option(p, "seed of the Sobol design and its bootstrap")
    scheduler_option(p)
    p.add_argument("--save-samples", action="store_true",
                   help="Sobol: also write every solved parameter set to samples.parquet")


def _inputs(args, argv, space_file, space) -> str:
    """What the study used (written to ``study_inputs.txt``), without absolute paths of ours."""
    import io

    from segment.core.io import data_dir

    packaged = Path(space_file).resolve().parent == data_dir().resolve()
    buf = io.StringIO()
    space.table().to_csv(buf, index=False, float_format="%.6g", lineterminator="\n")
    return (f"command: segment {' '.join(argv)}\n"
            f"data folder: {args.data if args.data is not None else 'the packaged data/'}\n"
            f"parameter space: {Path(space_file).name}{' (packaged)' if packaged else ''}, "
            f"sha256 {space.sha256 or 'n/a'}\n"
            "nominal values: the model's (the space file gives ranges and priors); the space "
            "as used:\n" + buf.getvalue())


def run(args, argv) -> int:
    from segment._extras import require

    out = check_output_folder(args.out, "--out")
    # every extra this run needs, before any work: a missing one is one line, not a traceback
    require("matplotlib", "report", "segment sensitivity (its figures)")
    if args.method == "sobol":
        require("SALib", "study", "segment sensitivity")
    if args.save_samples:
        require("pyarrow", "study", "segment sensitivity --save-samples")
    if args.scheduler is not None:
        require("distributed", "study", "segment sensitivity --scheduler")
    space_file, space, model = space_and_model(args, args.space)
    space = space.for_model(model)         # the model's nominal values, said once
    cases = named_cases(args, [])
    bad = [n for n, ld in cases.items() if ld.main_dof is None]
    if bad:
        raise UsageError(f"case(s) {', '.join(bad)} have no single main load component")
    if args.method == "tornado":
        return _tornado(args, argv, out, space_file, space, model, cases)
    from segment.studies.sobol import check_design

    try:
        check_design(args.n, space.dim, len(cases), len(model.facets), name="--n")
    except (TypeError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    import matplotlib.pyplot as plt

    from segment.studies.sobol import dominant_parameters, fig_sobol, sobol_study

    with dask_client(args.scheduler) as client:    # probed before anything is written
        result = sobol_study(model, space=space, cases=cases, n=args.n, seed=args.seed,
                             client=client, progress=bars_on(args),
                             keep_samples=args.save_samples,
                             strict=not args.allow_implausible)
    head = (f"Sobol indices over {space_file.name} ({space.dim} parameters): N = "
            f"{result.n_base}, {result.n_evaluations:,} evaluations x (unloaded + "
            f"{len(cases)} cases)")
    if result.refused:
        print(f"{head}: refused, {result.message}; nothing written to {out}", file=sys.stderr)
        return 1
    out.mkdir(parents=True, exist_ok=True)
    result.to_csv(out / "sobol_indices.csv")
    for index in ("ST", "S1"):
        fig = fig_sobol(result, index=index)
        fig.tight_layout()
        fig.savefig(out / f"sobol_{index}.png", dpi=110)
        plt.close(fig)
    if args.save_samples:
        result.samples.to_parquet(out / "samples.parquet")
    (out / "study_inputs.txt").write_text(_inputs(args, argv, space_file, space),
                                          encoding="utf-8")
    print(f"{head}, {result.n_failed} failed"
          + (f" ({result.message})" if result.n_failed else "") + f", {result.elapsed:.1f} s")
    for line in [*dominant_parameters(result), *dominant_parameters(result, quantity="phi_y")]:
        print(f"  {line}")
    print(f"wrote {out / 'sobol_indices.csv'}, {out / 'sobol_ST.png'}, {out / 'sobol_S1.png'}, "
          f"{out / 'study_inputs.txt'}"
          + (f", {out / 'samples.parquet'}" if args.save_samples else ""))
    return 0


def _tornado(args, argv, out, space_file, space, model, cases) -> int:
    import matplotlib.pyplot as plt

    from segment.report import fig_tornado
    from segment.studies import validation

    table = validation.sensitivity_table(model, cases, space=space)
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "tornado.csv", index=False, float_format="%.6g")
    fig = fig_tornado(table, cases)
    fig.savefig(out / "tornado.png", dpi=110)
    plt.close(fig)
    (out / "study_inputs.txt").write_text(_inputs(args, argv, space_file, space),
                                          encoding="utf-8")
    failed = table[~table.converged]
    ok = table[table.converged]
    top = (ok.assign(a=ok.change_pct.abs()).sort_values("a", ascending=False)
           .drop_duplicates("case").set_index("case"))
    print(f"tornado over {space_file.name} ({space.dim} parameters, each at its bounds, the "
          f"others at the model's values):")
    for case in cases:
        base = table[table.case == case].baseline.iloc[0]
        if case not in top.index:
            print(f"  {case}: baseline {base:.4g}; no variant converged")
            continue
        row = top.loc[case]
        print(f"  {case}: baseline {base:.4g} {row.unit}; largest change {row.change_pct:+.1f} % "
              f"from {row.parameter} {row.setting} ({row.value})")
    if len(failed):
        names = ", ".join(f"{r.parameter} {r.setting} ({r.case})"
                          for r in failed.head(5).itertuples())
        print(f"  {len(failed)} variant solves did not converge (no change shown): {names}"
              + (" ..." if len(failed) > 5 else ""))
    print(f"wrote {out / 'tornado.csv'}, {out / 'tornado.png'} and {out / 'study_inputs.txt'}")
    return 0
