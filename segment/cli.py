"""Command line: ``segment cases | solve | validate | render | explore | simulate |
sensitivity | calibrate``.

Errors in the user's input (unknown case, bad number, unreadable data) print one line to
stderr and exit with code 2, without a traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

# Off-screen rendering must be chosen before vtk is first imported (see segment.viz).
os.environ.setdefault("VTK_DEFAULT_OPENGL_WINDOW", "vtkOSOpenGLRenderWindow")
os.environ.setdefault("MPLBACKEND", "Agg")  # report figures are files, never windows

EXIT_USAGE = 2


class UsageError(Exception):
    """Bad input on the command line: reported as one line, exit code 2."""


def _cases(args, names):
    """The named load cases of the data folder, or a UsageError naming the unknown ones."""
    from segment.io import load_parameters

    cases = load_parameters(args.data).load_cases
    unknown = [n for n in names if n not in cases]
    if unknown:
        raise UsageError(f"unknown load case(s) {', '.join(unknown)}; known: {', '.join(cases)}")
    return {n: cases[n] for n in names} if names else dict(cases)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse's default prints usage first)
        self.exit(EXIT_USAGE, f"segment: error: {message}\n")


def _finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="segment", description="Mechanics of the C5-C6 motion segment.")
    parser.add_argument("--data", metavar="DIR", default=None,
                        help="folder with the CSV parameter tables (default: packaged data)")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    sub.add_parser("cases", help="list the load cases")
    p = sub.add_parser("solve", help="solve load cases for static equilibrium")
    p.add_argument("cases", nargs="*", metavar="CASE", help="load case names (default: all)")
    p.add_argument("--scale", type=_finite_float, default=1.0,
                   help="multiply every load by X (default 1)")
    p.add_argument("--no-facets", action="store_true", help="leave out the facet joints")
    p.add_argument("--no-ligaments", action="store_true", help="leave out the ligaments")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p = sub.add_parser("validate", help="write the validation report (Markdown, HTML, CSV)")
    p.add_argument("--out", metavar="DIR", default="validation/report",
                   help="output folder (default: validation/report)")
    p.add_argument("--reference", metavar="DIR", default=None,
                   help="folder of reference CSVs (default: the packaged validation/reference)")
    p = sub.add_parser("render", help="render a load case's pose to a PNG (off-screen)")
    p.add_argument("case", metavar="CASE", help="load case name (see 'segment cases')")
    p.add_argument("-o", "--output", metavar="PNG", default=None,
                   help="output image (default: CASE.png)")
    p.add_argument("--size", nargs=2, type=int, metavar=("W", "H"), default=(1200, 900),
                   help="image size in pixels (default 1200 900)")
    p.add_argument("--view", default="auto",
                   choices=("auto", "oblique", "lateral", "posterior", "anterior", "superior"),
                   help="camera (default auto: lateral for sagittal cases, posterior for LS, "
                        "LB, AR)")
    sub.add_parser("explore", help="interactive 3-D explorer with load sliders (needs a display)")
    p = sub.add_parser("simulate", help="simulate the motion of C5 under a load case "
                                        "(dynamics, all damping of the paper)")
    p.add_argument("case", metavar="CASE", help="load case name")
    p.add_argument("--t-end", type=_finite_float, default=1.0, metavar="S",
                   help="simulated time [s] (default 1)")
    p.add_argument("--ramp", type=_finite_float, default=0.0, metavar="S",
                   help="ramp the load over S seconds (default 0: a step)")
    p.add_argument("--gravity", action="store_true", help="add gravity (-z of C6)")
    p.add_argument("--out", metavar="FILE.csv", default=None,
                   help="write the time history (q, rates, element forces, energies) as CSV")
    p = sub.add_parser("sensitivity", help="which parameters move each case: Sobol indices "
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
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="Dask scheduler address (tcp://host:8786), or 'local' for a "
                        "LocalCluster on this machine (default: in-process, all cores)")
    p.add_argument("--save-samples", action="store_true",
                   help="Sobol: also write every solved parameter set to samples.parquet")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p = sub.add_parser("calibrate", help="Bayesian calibration against observed responses: "
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
                   help="also draw about N posterior samples by MCMC (emcee, segment[study]) "
                        "and write posterior_diagnostics.csv (default 0: none)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def _data_file(args, given, name, default):
    if given is not None:
        return Path(given)
    if args.data is not None and (Path(args.data) / name).exists():
        return Path(args.data) / name
    return default


def _cmd_calibrate(args, argv) -> int:
    import segment
    from segment.calibration import (
        calibrate,
        default_targets_path,
        load_targets,
        sample_posterior,
        write_calibrated,
    )
    from segment.space import default_space_path, load_space

    out = Path(args.out)
    if not out.resolve().parent.is_dir():
        raise UsageError(f"--out {args.out}: folder {out.resolve().parent} does not exist")
    if args.samples < 0:
        raise UsageError(f"--samples must be >= 0, got {args.samples}")
    space = load_space(_data_file(args, args.space, "parameter_space.csv",
                                  default_space_path()))
    targets = load_targets(_data_file(args, args.targets, "calibration_targets.csv",
                                      default_targets_path()))
    model = segment.c5c6(data_dir=args.data)
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
        post = sample_posterior(model, targets, space=space, start=result, n_walkers=n_walkers,
                                n_steps=max(4, -(-args.samples // n_walkers)),
                                progress=not args.quiet)
        post.diagnostics().to_csv(out / "posterior_diagnostics.csv", index=False,
                                  float_format="%.6g")
        written.append(out / "posterior_diagnostics.csv")
        verdict = ("reliable" if post.autocorr_reliable
                   else "chain too short for a reliable estimate")
        print(f"posterior: {post.n_samples} draws in {post.elapsed:.1f} s, acceptance "
              f"{post.acceptance.mean():.2f}, max autocorrelation time "
              f"{post.autocorr.max():.0f} steps ({verdict}), max split-R-hat "
              f"{post.rhat.max():.3f}")
    if result.misfit:
        print("structural misfit: some targets are out of reach within the parameter ranges "
              "(see calibration_misfits.csv)")
    print(f"wrote {len(written)} files to {out}")
    return 0


def _cmd_sensitivity(args) -> int:
    import segment
    from segment.space import default_space_path, load_space

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
    model = segment.c5c6(data_dir=args.data)
    out.mkdir(exist_ok=True)
    if args.method == "tornado":
        import matplotlib.pyplot as plt

        from segment import validation
        from segment.report import fig_tornado

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

    from segment.sobol import dominant_parameters, fig_sobol, sobol_study

    client = cluster = None
    try:
        if args.scheduler is not None:
            try:
                from distributed import Client, LocalCluster
            except ImportError:
                raise UsageError('--scheduler needs dask.distributed: pip install '
                                 '"segment[study]"') from None
            if args.scheduler == "local":
                cluster = LocalCluster(n_workers=2, threads_per_worker=1,
                                       dashboard_address=None)
                client = Client(cluster)
            else:
                client = Client(args.scheduler, timeout=30)
        result = sobol_study(model, space=space, cases=cases, n=args.n, seed=args.seed,
                             client=client, progress=not args.quiet,
                             keep_samples=args.save_samples)
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
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
    import numpy as np

    import segment

    cases = _cases(args, args.cases)
    names = list(cases)
    model = segment.c5c6(ligaments=not args.no_ligaments, facets=not args.no_facets,
                         data_dir=args.data)
    results = [segment.solve(model, cases[n].scaled(args.scale, name=n)) for n in names]
    if args.json:
        print(json.dumps({"scale": args.scale, "results": [r.to_dict() for r in results]},
                         indent=2))
        return 0 if all(r.converged for r in results) else 1
    config = ("disc" + ("" if args.no_ligaments else " + ligaments")
              + ("" if args.no_facets else " + facets"))
    print(f"C5-C6 static equilibrium ({config}), load scale {args.scale:g}")
    print("displacement from the reference pose: x y z [mm], phi_x phi_y phi_z [deg]")
    print(f"{'case':<5}{'x':>8}{'y':>8}{'z':>8}{'phi_x':>8}{'phi_y':>8}{'phi_z':>8}"
          f"{'iter':>6}  facets (left / right)")
    for r in results:
        d = np.concatenate([r.q[:3], np.degrees(r.q[3:])])
        facets = " / ".join(f"{f.regime} {f.force:.1f} N" for f in r.state.facets) or "-"
        flag = "" if r.converged else f"  NOT CONVERGED: {r.message}"
        print(f"{r.load.name:<5}" + "".join(f"{v:8.3f}" for v in d)
              + f"{r.iterations:6d}  {facets}{flag}")
    u = model.unloaded
    if u.converged:
        d = np.concatenate([u.q[:3], np.degrees(u.q[3:])])
        print("unloaded equilibrium (from the reference pose): "
              + " ".join(f"{v:.3f}" for v in d))
    return 0 if all(r.converged for r in results) else 1


def _cmd_validate(args) -> int:
    import time

    from segment.report import build_report

    t0 = time.perf_counter()
    stages = iter(range(1, 100))

    def progress(message: str) -> None:
        print(f"[{time.perf_counter() - t0:5.1f} s] {next(stages):2d}. {message}",
              file=sys.stderr, flush=True)

    build_report(args.out, reference_dir=args.reference, data_dir=args.data, progress=progress)
    print(f"validation report: {args.out}/report.md and {args.out}/report.html")
    return 0


def _cmd_render(args) -> int:
    import segment

    cases = _cases(args, [args.case])
    if min(args.size) < 16:
        print(f"segment: error: --size must be at least 16 16 pixels, got {args.size}",
              file=sys.stderr)
        return EXIT_USAGE
    from segment import viz  # imports vtk: only for this command

    result = segment.solve(segment.c5c6(data_dir=args.data), cases[args.case])
    path = viz.render(result, args.output or f"{args.case}.png", size=tuple(args.size),
                      view=args.view)
    print(f"{path}: {result.load.name}, {result.message}")
    return 0 if result.converged else 1


def _cmd_explore(args) -> int:
    import segment
    from segment import viz

    if not viz.has_display():
        print("segment: error: explore needs a display (DISPLAY or WAYLAND_DISPLAY is not set); "
              "use 'segment render CASE' for pictures", file=sys.stderr)
        return EXIT_USAGE
    viz.explore(segment.c5c6(data_dir=args.data))
    return 0


def _cmd_simulate(args) -> int:
    import numpy as np

    import segment
    from segment import dynamics

    cases = _cases(args, [args.case])
    if not args.t_end > 0 or args.ramp < 0:
        print("segment: error: --t-end must be > 0 and --ramp >= 0", file=sys.stderr)
        return EXIT_USAGE
    if args.out and not Path(args.out).resolve().parent.is_dir():
        raise UsageError(f"--out {args.out}: folder {Path(args.out).resolve().parent} does not "
                         "exist")
    model = segment.c5c6(data_dir=args.data)
    print(f"simulating {args.case} for {args.t_end:g} s "
          f"({'step' if args.ramp == 0 else f'ramp {args.ramp:g} s'})...", file=sys.stderr)
    r = dynamics.simulate(model, cases[args.case], t_end=args.t_end, ramp=args.ramp,
                          gravity=args.gravity)
    s = segment.solve(model, cases[args.case])
    q = np.concatenate([r.q[-1, :3], np.degrees(r.q[-1, 3:])])
    qs = np.concatenate([s.q[:3], np.degrees(s.q[3:])])
    print(f"{args.case}: {r.message} ({r.nfev} evaluations)")
    print("              x [mm]  y [mm]  z [mm]  phi_x   phi_y   phi_z [deg]")
    print("at t_end    " + "".join(f"{v:8.4f}" for v in q))
    print("static      " + "".join(f"{v:8.4f}" for v in qs))
    print(f"kinetic energy-work error e_R = {r.energy_error:.2e}")
    if args.out:
        r.frame.to_csv(args.out, index=False)
        print(f"wrote {args.out} ({len(r.frame)} rows)")
    return 0 if r.success else 1


def main(argv=None) -> int:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
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
        if args.command == "sensitivity":
            return _cmd_sensitivity(args)
        if args.command == "calibrate":
            return _cmd_calibrate(args, argv)
        return _cmd_solve(args)
    except (UsageError, ValueError) as exc:  # bad input or data: one line, no traceback
        print(f"segment: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:  # e.g. an output folder that does not exist
        print(f"segment: error: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
