"""``segment sensitivity``: which parameters move each case (Sobol indices or a tornado)."""

from __future__ import annotations

from pathlib import Path

from segment.cli._common import (
    UsageError,
    bars_on,
    check_output_folder,
    command,
    dask_client,
    scheduler_option,
)
from segment.cli._common import (
    cases as named_cases,
)


def register(sub) -> None:
    p = command(sub, "sensitivity", run, help="which parameters move each case: Sobol indices "
                                              "over the parameter space, or a tornado study")
    p.add_argument("--method", choices=("sobol", "tornado"), default="sobol",
                   help="sobol (default: all parameters at once) or tornado (one at a time "
                        "at the bounds)")
    p.add_argument("--n", type=int, default=100_000, metavar="N",
                   help="Sobol: minimum number of model evaluations, each the unloaded pose "
                        "and every case (default 100000)")
    p.add_argument("--space", metavar="FILE", default=None,
                   help="parameter-space CSV (default: parameter_space.csv of --data, else "
                        "the packaged one)")
    p.add_argument("--out", metavar="DIR", default="sensitivity",
                   help="output folder for CSV and figures (default: sensitivity)")
    p.add_argument("--seed", type=int, default=0, help="seed of the Sobol design (default 0)")
    scheduler_option(p)
    p.add_argument("--save-samples", action="store_true",
                   help="Sobol: also write every solved parameter set to samples.parquet")


def run(args, argv) -> int:
    import segment
    from segment.studies.space import default_space_path, load_space

    if args.n < 1:
        raise UsageError(f"--n must be >= 1, got {args.n}")
    out = Path(args.out)
    check_output_folder(args.out, "--out")
    from segment._extras import require

    # every extra this run needs, before any work: a missing one is one line, not a traceback
    require("matplotlib", "report", "segment sensitivity (its figures)")
    if args.method == "sobol":
        require("SALib", "study", "segment sensitivity")
    if args.save_samples:
        require("pyarrow", "study", "segment sensitivity --save-samples")
    if args.scheduler is not None:
        require("distributed", "study", "segment sensitivity --scheduler")
    if args.space is not None:
        space_file = Path(args.space)
    elif args.data is not None and (Path(args.data) / "parameter_space.csv").exists():
        space_file = Path(args.data) / "parameter_space.csv"
    else:
        space_file = default_space_path()
    space = load_space(space_file)
    cases = named_cases(args, [])
    bad = [n for n, ld in cases.items() if ld.main_dof is None]
    if bad:
        raise UsageError(f"case(s) {', '.join(bad)} have no single main load component")
    model = segment.c5c6(data_dir=args.data, strict=not args.allow_implausible)
    out.mkdir(exist_ok=True)
    if args.method == "tornado":
        import matplotlib.pyplot as plt

        from segment.report import fig_tornado
        from segment.studies import validation

        table = validation.sensitivity_table(model, cases, space=space)
        table.to_csv(out / "tornado.csv", index=False, float_format="%.6g")
        fig = fig_tornado(table, cases)
        fig.savefig(out / "tornado.png", dpi=110)
        plt.close(fig)
        top = (table.assign(a=table.change_pct.abs()).sort_values("a", ascending=False)
               .drop_duplicates("case").set_index("case").loc[list(cases)])
        print(f"tornado over {space_file.name} ({space.dim} parameters, each at its bounds):")
        for case, row in top.iterrows():
            print(f"  {case}: largest change {row.change_pct:+.1f} % from {row.parameter} "
                  f"{row.setting} ({row.value})")
        print(f"wrote {out / 'tornado.csv'} and {out / 'tornado.png'}")
        return 0
    import matplotlib.pyplot as plt

    from segment.studies.sobol import dominant_parameters, fig_sobol, sobol_study

    with dask_client(args.scheduler) as client:
        result = sobol_study(model, space=space, cases=cases, n=args.n, seed=args.seed,
                             client=client, progress=bars_on(args),
                             keep_samples=args.save_samples)
    result.to_csv(out / "sobol_indices.csv")
    for index in ("ST", "S1"):
        fig = fig_sobol(result, index=index)
        fig.tight_layout()
        fig.savefig(out / f"sobol_{index}.png", dpi=110)
        plt.close(fig)
    if args.save_samples:
        result.samples.to_parquet(out / "samples.parquet")
    print(f"Sobol indices over {space_file.name} ({space.dim} parameters): N = "
          f"{result.n_base}, {result.n_evaluations:,} evaluations x (unloaded + "
          f"{len(cases)} cases), {result.n_failed} failed, {result.elapsed:.1f} s")
    for line in [*dominant_parameters(result), *dominant_parameters(result, quantity="phi_y")]:
        print(f"  {line}")
    print(f"wrote {out / 'sobol_indices.csv'}, {out / 'sobol_ST.png'}, {out / 'sobol_S1.png'}"
          + (f", {out / 'samples.parquet'}" if args.save_samples else ""))
    return 0

