"""Command line: ``segment cases | solve | ramp | validate | render | explore | simulate |
sensitivity | calibrate``.

Errors in the user's input (unknown case, bad number, unreadable data, an output path that
cannot be written) print one line to stderr and exit with code 2, without a traceback; output
paths are checked before any work starts. ``python -m segment`` is the same program.

Options every command takes, before or after the command name: ``--data DIR``,
``-v/--verbose`` (logging: once for progress messages, twice for debug), ``-q/--quiet`` (no
progress bars or messages). ``--version`` prints the version.
``--allow-implausible`` turns data values outside their plausible ranges into one-line
warnings.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import math
import os
import sys
from pathlib import Path

EXIT_USAGE = 2


class UsageError(Exception):
    """Bad input on the command line: reported as one line, exit code 2."""


def _cases(args, names):
    """The named load cases of the data folder, or a UsageError naming the unknown ones."""
    from segment.core.io import load_parameters

    cases = load_parameters(args.data, strict=not args.allow_implausible).load_cases
    unknown = [n for n in names if n not in cases]
    if unknown:
        raise UsageError(f"unknown load case(s) {', '.join(unknown)}; known: {', '.join(cases)}")
    return {n: cases[n] for n in names} if names else dict(cases)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse's default prints usage first)
        self.exit(EXIT_USAGE, f"segment: error: {message}\n")


class _VersionAction(argparse.Action):
    """``--version``: imports the package only when asked (the version lives in one place)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="print the version and exit"):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from segment import __version__
        from segment._extras import DIST_NAME

        print(f"segment {__version__} (distribution {DIST_NAME})")
        parser.exit(0)


# Options that take a number: "--scale -inf" must reach the number check, not be read as an
# option (argparse takes "-inf" for an option because it starts with "-").
NUMBER_OPTIONS = ("--scale", "--t-end", "--ramp")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _join_negative_numbers(argv: list[str]) -> list[str]:
    """``["--scale", "-inf"]`` -> ``["--scale=-inf"]`` so argparse hands it to the checker."""
    out, i = [], 0
    while i < len(argv):
        if argv[i] in NUMBER_OPTIONS and i + 1 < len(argv) and argv[i + 1].startswith("-") \
                and _is_number(argv[i + 1]):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


def _add_common(parser: argparse.ArgumentParser, *, top: bool) -> None:
    """--data, -v, -q on the main parser (with defaults) and on every command (no defaults:
    given after the command name they override, absent they leave the main parser's value)."""
    kw = {} if top else {"default": argparse.SUPPRESS}
    parser.add_argument("--data", metavar="DIR", help="folder with the CSV parameter tables "
                        "(default: packaged data)", **({"default": None} if top else kw))
    parser.add_argument("-v", "--verbose", action="count", help="log progress (-vv: debug)",
                        **({"default": 0} if top else kw))
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="no progress bars or progress messages",
                        **({"default": False} if top else kw))
    parser.add_argument("--allow-implausible", action="store_true",
                        help="load data values outside their plausible ranges with a warning "
                             "instead of an error (not for validate: the report checks strictly)",
                        **({"default": False} if top else kw))


def _finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def _command(sub, name: str, **kwargs) -> argparse.ArgumentParser:
    """A sub-command that also takes the common options after its name."""
    p = sub.add_parser(name, **kwargs)
    _add_common(p, top=False)
    return p


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="segment", description="Mechanics of the C5-C6 motion segment.")
    parser.add_argument("--version", action=_VersionAction)
    _add_common(parser, top=True)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    _command(sub, "cases", help="list the load cases")
    p = _command(sub, "solve", help="solve load cases for static equilibrium")
    p.add_argument("--from", dest="origin", choices=("unloaded", "reference"),
                   default="unloaded",
                   help="measure displacements from the unloaded equilibrium (default, as in "
                        "the validation report) or from the reference pose of Table 1")
    p.add_argument("cases", nargs="*", metavar="CASE", help="load case names (default: all)")
    p.add_argument("--scale", type=_finite_float, default=1.0,
                   help="multiply every load by X (default 1)")
    p.add_argument("--no-facets", action="store_true", help="leave out the facet joints")
    p.add_argument("--no-ligaments", action="store_true", help="leave out the ligaments")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p = _command(sub, "ramp", help="ramp a load case quasi-statically up to failure "
                                  "(ligament strips rupture at F_max)")
    p.add_argument("case", metavar="CASE", help="load case name")
    p.add_argument("--to-scale", type=_finite_float, required=True, metavar="S",
                   help="last load scale (multiples of the case's load)")
    p.add_argument("--steps", type=int, default=200, metavar="N",
                   help="equal load steps (default 200)")
    p.add_argument("--strips", type=int, default=None, metavar="N",
                   help="split every ligament into N strips (default: data/ligament_strips.csv)")
    p.add_argument("--out", metavar="FILE.csv", default=None,
                   help="write every equilibrium of the ramp (scale, load, q, events) as CSV")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p = _command(sub, "validate", help="write the validation report (Markdown, HTML, CSV)")
    p.add_argument("--out", metavar="DIR", default="validation/report",
                   help="output folder (default: validation/report)")
    p.add_argument("--reference", metavar="DIR", default=None,
                   help="folder of reference CSVs (default: the packaged validation/reference)")
    p = _command(sub, "render", help="render a load case's pose to a PNG (off-screen)")
    p.add_argument("case", metavar="CASE", help="load case name (see 'segment cases')")
    p.add_argument("-o", "--output", metavar="PNG", default=None,
                   help="output image (default: CASE.png)")
    p.add_argument("--size", nargs=2, type=int, metavar=("W", "H"), default=(1200, 900),
                   help="image size in pixels (default 1200 900)")
    p.add_argument("--view", default="auto",
                   choices=("auto", "oblique", "lateral", "posterior", "anterior", "superior"),
                   help="camera (default auto: lateral for sagittal cases, posterior for LS, "
                        "LB, AR)")
    _command(sub, "explore", help="interactive 3-D explorer with load sliders (needs a display)")
    p = _command(sub, "simulate", help="simulate the motion of C5 under a load case "
                                        "(dynamics, all damping of the paper)")
    p.add_argument("case", metavar="CASE", help="load case name")
    p.add_argument("--t-end", type=_finite_float, default=1.0, metavar="S",
                   help="simulated time [s] (default 1)")
    p.add_argument("--ramp", type=_finite_float, default=0.0, metavar="S",
                   help="ramp the load over S seconds (default 0: a step)")
    p.add_argument("--gravity", action="store_true", help="add gravity (-z of C6)")
    p.add_argument("--out", metavar="FILE.csv", default=None,
                   help="write the time history (q, rates, element forces, energies) as CSV")
    p = _command(sub, "sensitivity", help="which parameters move each case: Sobol indices "
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
    _scheduler_option(p)
    p.add_argument("--save-samples", action="store_true",
                   help="Sobol: also write every solved parameter set to samples.parquet")
    p = _command(sub, "calibrate", help="Bayesian calibration against observed responses: "
                                        "MAP, Laplace posterior, identifiability, misfit; "
                                        "writes a calibrated data folder")
    p.add_argument("--targets", metavar="FILE", default=None,
                   help="targets CSV (default: calibration_targets.csv of --data, else the "
                        "packaged one)")
    p.add_argument("--space", metavar="FILE", default=None,
                   help="parameter-space CSV (default: parameter_space.csv of --data, else "
                        "the packaged one)")
    p.add_argument("--out", metavar="DIR", default="calibrated",
                   help="output data folder (default: calibrated)")
    p.add_argument("--samples", type=int, default=0, metavar="N",
                   help="also draw about N posterior samples by MCMC (emcee, c5c6-segment[study]) "
                        "and write posterior_diagnostics.csv (default 0: none)")
    _scheduler_option(p)
    return parser


def _data_file(args, given, name, default):
    if given is not None:
        return Path(given)
    if args.data is not None and (Path(args.data) / name).exists():
        return Path(args.data) / name
    return default


@contextlib.contextmanager
def _dask_client(scheduler):
    """A Dask client for ``--scheduler`` (None: yields None, in-process): an address, or
    ``local`` for a LocalCluster of 2 single-threaded worker processes on this machine."""
    if scheduler is None:
        yield None
        return
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise UsageError('--scheduler needs dask.distributed: pip install '
                         '"c5c6-segment[study]"') from None
    cluster = None
    if scheduler == "local":
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None)
        client = Client(cluster)
    else:
        client = Client(scheduler, timeout=30)
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _bars_on(args) -> bool:
    """Progress bars: off with -q and when stderr is not a terminal (logs, pipes, CI)."""
    return not args.quiet and sys.stderr.isatty()


def _scheduler_option(p) -> None:
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="Dask scheduler address (tcp://host:8786), or 'local' for a "
                        "LocalCluster on this machine (default: in-process, all cores)")


def _cmd_calibrate(args, argv) -> int:
    import segment
    from segment.studies.calibration import (
        calibrate,
        default_targets_path,
        load_targets,
        sample_posterior,
        write_calibrated,
    )
    from segment.studies.space import default_space_path, load_space

    out = Path(args.out)
    if not out.resolve().parent.is_dir():
        raise UsageError(f"--out {args.out}: folder {out.resolve().parent} does not exist")
    if args.samples < 0:
        raise UsageError(f"--samples must be >= 0, got {args.samples}")
    if args.scheduler is not None and not args.samples:
        raise UsageError("--scheduler sends the posterior draws to Dask: give --samples N too "
                         "(the MAP estimate itself runs in-process)")
    space = load_space(_data_file(args, args.space, "parameter_space.csv",
                                  default_space_path()))
    targets = load_targets(_data_file(args, args.targets, "calibration_targets.csv",
                                      default_targets_path()))
    model = segment.c5c6(data_dir=args.data, strict=not args.allow_implausible)
    result = calibrate(model, targets, space=space)
    print(result.summary())
    if not result.success:
        print(f"segment: calibration failed: {result.message}; nothing written",
              file=sys.stderr)
        return 1
    command = "segment " + " ".join(argv)
    written = write_calibrated(result, out, source_dir=args.data, command=command)
    if args.samples:
        n_walkers = max(2 * space.dim, 64)
        n_walkers += n_walkers % 2
        with _dask_client(args.scheduler) as client:
            post = sample_posterior(model, targets, space=space, start=result,
                                    n_walkers=n_walkers,
                                    n_steps=max(4, -(-args.samples // n_walkers)),
                                    progress=_bars_on(args), client=client)
        post.diagnostics().to_csv(out / "posterior_diagnostics.csv", index=False,
                                  float_format="%.6g")
        written.append(out / "posterior_diagnostics.csv")
        print(post.summary())
    elif (out / "posterior_diagnostics.csv").exists():
        (out / "posterior_diagnostics.csv").unlink()      # from an earlier run: stale now
    if result.misfit:
        print("structural misfit: some targets are out of reach within the parameter ranges "
              "(see calibration_misfits.csv)")
    print(f"wrote {len(written)} files to {out}")
    return 0


def _cmd_sensitivity(args) -> int:
    import segment
    from segment.studies.space import default_space_path, load_space

    if args.n < 1:
        raise UsageError(f"--n must be >= 1, got {args.n}")
    out = Path(args.out)
    if not out.resolve().parent.is_dir():
        raise UsageError(f"--out {args.out}: folder {out.resolve().parent} does not exist")
    if args.space is not None:
        space_file = Path(args.space)
    elif args.data is not None and (Path(args.data) / "parameter_space.csv").exists():
        space_file = Path(args.data) / "parameter_space.csv"
    else:
        space_file = default_space_path()
    space = load_space(space_file)
    cases = _cases(args, [])
    bad = [n for n, ld in cases.items() if ld.main_dof is None]
    if bad:
        raise UsageError(f"case(s) {', '.join(bad)} have no single main load component")
    model = segment.c5c6(data_dir=args.data, strict=not args.allow_implausible)
    out.mkdir(exist_ok=True)
    if args.method == "tornado":
        import matplotlib.pyplot as plt

        from segment.studies import validation
        from segment.studies.report import fig_tornado

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

    with _dask_client(args.scheduler) as client:
        result = sobol_study(model, space=space, cases=cases, n=args.n, seed=args.seed,
                             client=client, progress=_bars_on(args),
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


def _cmd_cases(args) -> int:
    cases = _cases(args, [])
    print(f"{'case':<6}{'Fx':>7}{'Fy':>7}{'Fz':>7} [N]{'Mx':>7}{'My':>7}{'Mz':>7} [N m]")
    for name, load in cases.items():
        f = load.force
        m = load.moment / 1000.0
        print(f"{name:<6}{f[0]:7.3g}{f[1]:7.3g}{f[2]:7.3g}    {m[0]:7.3g}{m[1]:7.3g}{m[2]:7.3g}")
    return 0


def _cmd_solve(args) -> int:
    import segment

    cases = _cases(args, args.cases)
    names = list(cases)
    model = segment.c5c6(ligaments=not args.no_ligaments, facets=not args.no_facets,
                         data_dir=args.data, strict=not args.allow_implausible)
    results = [segment.solve(model, cases[n].scaled(args.scale, name=n)) for n in names]
    if args.json:
        print(json.dumps({"scale": args.scale, "results": [r.to_dict() for r in results]},
                         indent=2))
        return 0 if all(r.converged for r in results) else 1
    config = ("disc" + ("" if args.no_ligaments else " + ligaments")
              + ("" if args.no_facets else " + facets"))
    u = model.unloaded
    if args.origin == "unloaded" and not u.converged:
        raise UsageError(f"the unloaded equilibrium of this model did not converge "
                         f"({u.message}); use --from reference")
    origin = ("the unloaded equilibrium (as in the validation report; see --from)"
              if args.origin == "unloaded" else "the reference pose of Table 1 (see --from)")
    print(f"C5-C6 static equilibrium ({config}), load scale {args.scale:g}")
    print(f"displacement of C5 from {origin}: x y z [mm], phi_x phi_y phi_z [deg]")
    print(f"{'case':<5}{'x':>8}{'y':>8}{'z':>8}{'phi_x':>8}{'phi_y':>8}{'phi_z':>8}"
          f"{'iter':>6}  facets (left / right)")
    for r in results:
        if not r.converged:     # no numbers that could be read as a result
            print(f"{r.load.name:<5}  NOT CONVERGED: {r.message}")
            continue
        q = r.displacement_from_unloaded if args.origin == "unloaded" else r.q
        d = _display(q)
        facets = " / ".join(f"{f.regime} {f.force:.1f} N" for f in r.state.facets) or "-"
        # a dislocated facet or a ligament past eps_max (Table 3)
        flag = "" if r.intact else f"  BEYOND LIMITS: {'; '.join(r.limit_flags)}"
        print(f"{r.load.name:<5}" + "".join(f"{v:8.3f}" for v in d)
              + f"{r.iterations:6d}  {facets}{flag}")
    if u.converged:
        print("unloaded equilibrium, from the reference pose: "
              + " ".join(f"{v:.3f}" for v in _display(u.q)))
    else:
        print(f"unloaded equilibrium: {u.message}")
    return 0 if all(r.converged for r in results) else 1


def _cmd_ramp(args) -> int:
    import segment

    cases = _cases(args, [args.case])
    if not args.to_scale > 0:
        raise UsageError(f"--to-scale must be > 0, got {args.to_scale:g}")
    if args.steps < 1:
        raise UsageError(f"--steps must be >= 1, got {args.steps}")
    if args.strips is not None and args.strips < 1:
        raise UsageError(f"--strips must be >= 1, got {args.strips}")
    if args.out:
        _check_output_file(args.out, "--out")
    model = segment.c5c6(data_dir=args.data, strict=not args.allow_implausible)
    if args.strips is not None:
        model = model.with_strips(args.strips)
    r = segment.ramp(model, cases[args.case], to_scale=args.to_scale, steps=args.steps)
    loads = r.failure_loads()
    if args.out:
        r.frame.to_csv(args.out, index=False)
    if args.json:
        print(json.dumps({
            "case": args.case, "to_scale": args.to_scale, "steps": args.steps,
            "status": r.status, "message": r.message,
            "failure_loads": {k: (None if isinstance(v, float) and math.isnan(v) else v)
                              for k, v in loads.items()},
            "events": [{"scale": s, "kind": k, "name": n} for s, k, n in r.events],
            "ligaments": r.state.ligament_table().to_dict(orient="records"),
        }, indent=2))
        return 0 if r.status in (0, 1) else 1
    print(f"C5-C6 load ramp {args.case} x 0..{args.to_scale:g} in {args.steps} steps "
          f"({len(model.strip_names)} ligament strips)")
    print(f"status: {r.message}")
    events = r.frame[r.frame["event"] != ""]
    main = "mm" if (cases[args.case].main_dof or 0) < 3 else "deg"
    print(f"{'scale':>10}  {'main displacement [' + main + ']':>26}  event")
    for _, row in events.iterrows():
        print(f"{row['scale']:10.4f}  {row['main_displacement']:26.3f}  {row['event']}")
    unit = "N" if "first_rupture_N" in loads else "Nm"
    print(f"first rupture: scale {loads['first_rupture_scale']:.4g} "
          f"({loads[f'first_rupture_{unit}']:.4g} {unit.replace('Nm', 'N m')}); "
          f"ultimate: scale {loads['ultimate_scale']:.4g} "
          f"({loads[f'ultimate_{unit}']:.4g} {unit.replace('Nm', 'N m')})")
    print("final state:")
    print(r.state.ligament_table().to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    if args.out:
        print(f"wrote {args.out} ({len(r.frame)} rows)")
    return 0 if r.status in (0, 1) else 1


def _display(q):
    """mm and degrees, rounded to the printed 3 decimals without a "-0.000"."""
    import numpy as np

    d = np.concatenate([q[:3], np.degrees(q[3:])])
    return np.round(d, 3) + 0.0


def _check_output_file(path: str, option: str) -> Path:
    """An output file we can write: its folder exists and is writable, it is not a folder."""
    p = Path(path)
    folder = p.resolve().parent
    if p.is_dir():
        raise UsageError(f"{option} {path}: is a folder, expected a file name")
    if not folder.is_dir():
        raise UsageError(f"{option} {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise UsageError(f"{option} {path}: folder {folder} is not writable")
    return p


def _check_output_folder(path: str, option: str) -> Path:
    """An output folder we can create or write into (checked before any work)."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UsageError(f"{option} {path}: exists and is not a folder")
    existing = p.resolve()
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"{option} {path}: {existing} is not a folder")
    if not os.access(existing, os.W_OK):
        raise UsageError(f"{option} {path}: folder {existing} is not writable")
    return p


def _progress_bar(args, desc: str, total=None, unit="it"):
    """A tqdm bar on stderr; off with -q or when stderr is not a terminal (segment._progress)."""
    from segment._progress import bar

    return bar(total=total, desc=desc, unit=unit, progress=False if args.quiet else None)


def _cmd_validate(args) -> int:
    _check_output_folder(args.out, "--out")
    from segment._extras import require

    # figures are files, never windows: Agg for this command (no environment variable set)
    require("matplotlib", "report", "segment validate (the report's figures)").use("Agg")
    from segment.studies.report import build_report

    log = logging.getLogger("segment.validate")
    with _progress_bar(args, "validate", unit=" stages") as bar:
        def progress(message: str) -> None:
            log.info(message)
            bar.set_postfix_str(message[:50], refresh=False)
            bar.update()

        build_report(args.out, reference_dir=args.reference, data_dir=args.data,
                     progress=progress)
    print(f"validation report: {args.out}/report.md and {args.out}/report.html")
    return 0


def _cmd_render(args) -> int:
    import segment
    from segment._extras import require

    cases = _cases(args, [args.case])
    if min(args.size) < 16:
        print(f"segment: error: --size must be at least 16 16 pixels, got {args.size}",
              file=sys.stderr)
        return EXIT_USAGE
    output = _check_output_file(args.output or f"{args.case}.png", "-o")
    require("pyvista", "viz", "segment render")
    from segment.views import viz  # imports vtk: only for this command

    model = segment.c5c6(data_dir=args.data, strict=not args.allow_implausible)
    result = segment.solve(model, cases[args.case])
    path = viz.render(result, output, size=tuple(args.size), view=args.view)
    print(f"{path}: {result.load.name}, {result.message}")
    return 0 if result.converged else 1


def _cmd_explore(args) -> int:
    import segment
    from segment._extras import require

    require("pyvista", "viz", "segment explore")
    from segment.views import viz

    if not viz.has_display():
        print("segment: error: explore needs a display (DISPLAY or WAYLAND_DISPLAY is not set); "
              "use 'segment render CASE' for pictures", file=sys.stderr)
        return EXIT_USAGE
    viz.explore(segment.c5c6(data_dir=args.data, strict=not args.allow_implausible))
    return 0


def _cmd_simulate(args) -> int:
    import numpy as np

    import segment
    from segment.solvers import dynamics

    cases = _cases(args, [args.case])
    if not args.t_end > 0 or args.ramp < 0:
        print("segment: error: --t-end must be > 0 and --ramp >= 0", file=sys.stderr)
        return EXIT_USAGE
    if args.out:
        _check_output_file(args.out, "--out")
    model = segment.c5c6(data_dir=args.data, strict=not args.allow_implausible)
    logging.getLogger("segment.simulate").info(
        "simulating %s for %g s (%s)", args.case, args.t_end,
        "step" if args.ramp == 0 else f"ramp {args.ramp:g} s")
    with _progress_bar(args, f"simulate {args.case}", total=args.t_end, unit=" s") as bar:
        def progress(t: float) -> None:
            bar.update(t - bar.n)

        r = dynamics.simulate(model, cases[args.case], t_end=args.t_end, ramp=args.ramp,
                              gravity=args.gravity, progress=progress)
    s = segment.solve(model, cases[args.case])
    q = np.concatenate([r.q[-1, :3], np.degrees(r.q[-1, 3:])])
    qs = np.concatenate([s.q[:3], np.degrees(s.q[3:])])
    print(f"{args.case}: {r.message} ({r.nfev} evaluations)")
    print("              x [mm]  y [mm]  z [mm]  phi_x   phi_y   phi_z [deg]")
    print("at t_end    " + "".join(f"{v:8.4f}" for v in q))
    print("static      " + "".join(f"{v:8.4f}" for v in qs))
    print(f"kinetic energy-work error e_R = {r.energy_error:.2e} (relative to the largest "
          "energy term of the run)")
    if args.out:
        r.frame.to_csv(args.out, index=False)
        print(f"wrote {args.out} ({len(r.frame)} rows)")
    return 0 if r.success else 1


def _configure_logging(args) -> None:
    level = (logging.ERROR if args.quiet else
             {0: logging.WARNING, 1: logging.INFO}.get(args.verbose, logging.DEBUG))
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    root = logging.getLogger("segment")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False
    logging.captureWarnings(False)


def _warn_one_line(message, category, filename, lineno, file=None, line=None):
    print(f"segment: warning: {message}", file=sys.stderr)


def main(argv=None) -> int:
    import warnings

    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = parser.parse_args(_join_negative_numbers(argv))
    except SystemExit as exc:   # --help, --version and usage errors: argparse has printed
        return int(exc.code or 0)
    _configure_logging(args)
    from segment import _progress

    _progress.ENABLED = False if args.quiet else None
    with warnings.catch_warnings():
        warnings.showwarning = _warn_one_line
        return _run(args, argv)


def _run(args, argv) -> int:
    try:
        if args.command == "cases":
            return _cmd_cases(args)
        if args.command == "validate":
            return _cmd_validate(args)
        if args.command == "render":
            return _cmd_render(args)
        if args.command == "explore":
            return _cmd_explore(args)
        if args.command == "simulate":
            return _cmd_simulate(args)
        if args.command == "ramp":
            return _cmd_ramp(args)
        if args.command == "sensitivity":
            return _cmd_sensitivity(args)
        if args.command == "calibrate":
            return _cmd_calibrate(args, argv)
        return _cmd_solve(args)
    except ImportError as exc:  # a missing extra: one line naming it
        from segment._extras import MissingExtraError

        if not isinstance(exc, MissingExtraError):
            raise
        print(f"segment: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (UsageError, ValueError) as exc:  # bad input or data: one line, no traceback
        print(f"segment: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:  # e.g. an output folder that does not exist
        print(f"segment: error: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
