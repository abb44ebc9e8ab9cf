"""``segment states`` and ``segment compare``: the clinical states, and how they change the
segment's motion and load sharing (:mod:`segment.studies.compare`)."""

from __future__ import annotations

import json
import math

from segment.cli._common import (
    UsageError,
    cases,
    check_output_file,
    check_output_folder,
    command,
    count_option,
    model_for,
    number_option,
    progress_bar,
)
from segment.cli.solve import check_scale
from segment.core.checks import RAMP_STEPS


def register(sub) -> None:
    command(sub, "states", run_states,
            help="list the clinical states of states.csv (surgery, disease) and their "
                 "operations")
    p = command(sub, "compare", run_compare,
                help="compare load cases across clinical states (change from intact)")
    p.add_argument("cases", nargs="*", metavar="CASE", help="load case names (default: all)")
    p.add_argument("--states", required=True, metavar="A,B,...",
                   help="comma-separated clinical states, e.g. "
                        "intact,laminectomy,facetectomy-right-100 (a state may combine "
                        "several with '+'); intact is always included")
    number_option(p, "--scale", default=1.0, help="multiply every load by X (default 1)")
    number_option(p, "--to-scale", default=None, metavar="S",
                  help="also ramp every case to S times its load with ligament rupture and "
                       "compare the failure loads and sequences (segment ramp)")
    count_option(p, "--steps", maximum=RAMP_STEPS, why="RAMP_STEPS", default=200, metavar="N",
                 help=f"load steps of --to-scale (default 200, at most {RAMP_STEPS:,})")
    p.add_argument("--out", metavar="DIR", default=None,
                   help="write comparison.csv, unloaded.csv (and failure.csv) and "
                        "comparison.png into DIR")
    p.add_argument("--figure", metavar="PNG", default=None,
                   help="write the figure to this file (needs matplotlib)")
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")


def run_states(args, argv) -> int:
    from segment.core.states_table import load_states, states_file

    path = states_file(args.data)
    states = load_states(path, strict=not args.allow_implausible)
    print(f"clinical states of {_origin(args, path)}")
    for name, st in states.items():
        ops = []
        for op in st.operations:
            if op.kind in ("cut", "resect"):
                ops.append(f"{op.kind} {op.target}" + ("" if op.value == 1.0
                                                        else f" {100 * op.value:g} %"))
            else:
                ops.append(op.kind + " (" + ", ".join(f"{k} {v:g}" for k, v in op.params)
                           + ")")
        print(f"{name:<26} " + "; ".join(ops))
    return 0


def _origin(args, path) -> str:
    """Which states.csv: the data folder's or the packaged one (no absolute path printed)."""
    from pathlib import Path

    if args.data and Path(path).resolve().parent == Path(args.data).resolve():
        return f"{args.data}/states.csv"
    return "the packaged states.csv"


def _fmt(v, digits=3):
    """``v`` to ``digits`` decimals; ``-`` for NaN; never ``-0.000`` (a change that rounds
    to zero is zero)."""
    if isinstance(v, float) and not math.isfinite(v):
        return "-"
    return f"{round(float(v), digits) + 0.0:.{digits}f}"


def run_compare(args, argv) -> int:
    from segment.studies.compare import BASELINES, compare_states

    chosen = cases(args, args.cases)
    check_scale(args, chosen)          # as segment solve --scale: the same loads are solved
    if args.to_scale is not None and not args.to_scale > 0:
        raise UsageError(f"--to-scale must be > 0, got {args.to_scale:g}")
    if args.out:
        check_output_folder(args.out, "--out")
    if args.figure:
        check_output_file(args.figure, "--figure")
    if args.out or args.figure:
        from segment._extras import require

        # figures are files, never windows: Agg for this command (no environment variable set)
        require("matplotlib", "report", "segment compare --out/--figure").use("Agg")
    model = model_for(args)
    names = [s for s in args.states.split(",")]
    with progress_bar(args, "compare", total=None, unit=" states") as bar:
        def progress(done, total):
            bar.total = total
            bar.update(done - bar.n)

        c = compare_states(model, names, chosen, scale=args.scale, data_dir=args.data,
                           strict=not args.allow_implausible, ramp_to_scale=args.to_scale,
                           steps=args.steps, progress=progress)
    written = []
    if args.out:
        from pathlib import Path

        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        c.frame.to_csv(out / "comparison.csv", index=False)
        c.unloaded.to_csv(out / "unloaded.csv", index=False)
        written += [out / "comparison.csv", out / "unloaded.csv"]
        if c.failure is not None:
            c.failure.to_csv(out / "failure.csv", index=False)
            written.append(out / "failure.csv")
        c.figure(out / "comparison.png")
        written.append(out / "comparison.png")
    if args.figure:
        c.figure(args.figure)
        written.append(args.figure)
    ok = bool(c.frame["converged"].all())
    if args.json:
        print(json.dumps(c.to_dict(), indent=2))
        return 0 if ok else 1
    print(f"C5-C6 clinical states compared, load scale {args.scale:g} (states from "
          f"{_origin(args, c.states_file)})")
    print("main motion [mm or deg], its change from intact and the change of its magnitude [%]"
          ", measured")
    for key, text in BASELINES.items():
        print(f"  {key + ':':<8}{text}")
    facet_cols = [col for col in c.frame.columns if col.startswith("facet_")]
    # the columns as wide as their longest entry: long (combined) state names stay aligned
    w_state = max(len("state"), *(len(s) for s in c.states)) + 2
    w_case = max(len("case"), *(len(ld) for ld in c.loads)) + 2
    print(f"{'state':<{w_state}}{'case':<{w_case}}{'own':>9}{'change':>9}{'%':>8}{'intact':>9}"
          f"{'change':>9}{'%':>8}  facets L / R [N]  status")
    for _, r in c.frame.iterrows():
        if not r["converged"]:
            print(f"{r['state']:<{w_state}}{r['load']:<{w_case}}  NOT CONVERGED (status "
                  f"{r['status']})")
            continue
        facets = " / ".join(_fmt(r[col], 1) for col in facet_cols)
        flag = "" if r["intact"] else f"  BEYOND LIMITS: {r['limit_flags']}"
        print(f"{r['state']:<{w_state}}{r['load']:<{w_case}}{_fmt(r['main_own']):>9}"
              f"{_fmt(r['change_own']):>9}{_fmt(r['change_own_pct'], 1):>8}"
              f"{_fmt(r['main_from_intact']):>9}{_fmt(r['change_from_intact']):>9}"
              f"{_fmt(r['change_from_intact_pct'], 1):>8}  {facets:<17} {r['status']}{flag}")
    print("unloaded pose, change from intact [mm, deg] (x y z phi_x phi_y phi_z):")
    dcols = [col for col in c.unloaded.columns if col.startswith("d_")]
    for _, r in c.unloaded.iterrows():
        print(f"  {r['state']:<{w_state}}" + " ".join(f"{_fmt(r[col]):>7}" for col in dcols))
    if c.failure is not None:
        print(f"ramp to {args.to_scale:g} x the load, {args.steps} steps: first rupture, "
              "ultimate, sequence")
        for _, r in c.failure.iterrows():
            print(f"  {r['state']:<{w_state}}{r['load']:<{w_case}}"
                  f"{_fmt(r['first_rupture'], 2):>8} {r['unit']:<4}"
                  f"{_fmt(r['ultimate'], 2):>8} {r['unit']:<4} {r['sequence'] or '-'}")
    for path in written:
        print(f"wrote {path}")
    return 0 if ok else 1
