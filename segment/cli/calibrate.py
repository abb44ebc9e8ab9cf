"""``segment calibrate``: Bayesian calibration against observed responses; writes a
calibrated data folder."""

from __future__ import annotations

import sys
from pathlib import Path

from segment.cli._common import (
    UsageError,
    bars_on,
    check_output_folder,
    command,
    dask_client,
    data_file,
    scheduler_option,
)


def register(sub) -> None:
    p = command(sub, "calibrate", run, help="Bayesian calibration against observed responses: "
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
    scheduler_option(p)


def run(args, argv) -> int:
    import segment
    from segment._extras import require
    from segment.studies.calibration import (
        calibrate,
        default_targets_path,
        load_targets,
        sample_posterior,
        write_calibrated,
    )
    from segment.studies.space import default_space_path, load_space

    out = Path(args.out)
    check_output_folder(args.out, "--out")
    if args.samples < 0:
        raise UsageError(f"--samples must be >= 0, got {args.samples}")
    if args.scheduler is not None and not args.samples:
        raise UsageError("--scheduler sends the posterior draws to Dask: give --samples N too "
                         "(the MAP estimate itself runs in-process)")
    if args.samples:        # before any work: a missing extra is one line, not a traceback
        require("emcee", "study", "segment calibrate --samples")
    if args.scheduler is not None:
        require("distributed", "study", "segment calibrate --scheduler")
    space = load_space(data_file(args, args.space, "parameter_space.csv",
                                  default_space_path()))
    targets = load_targets(data_file(args, args.targets, "calibration_targets.csv",
                                      default_targets_path()))
    model = segment.c5c6(data_dir=args.data, strict=not args.allow_implausible)
    result = calibrate(model, targets, space=space)
    print(result.summary())
    if not result.success:
        print(f"segment: calibration failed: {result.message}; nothing written",
              file=sys.stderr)
        return 1
    post = None
    if args.samples:
        n_walkers = max(2 * space.dim, 64)
        n_walkers += n_walkers % 2
        with dask_client(args.scheduler) as client:
            post = sample_posterior(model, targets, space=space, start=result,
                                    n_walkers=n_walkers,
                                    n_steps=max(4, -(-args.samples // n_walkers)),
                                    progress=bars_on(args), client=client)
        print(post.summary())
        if not post.converged:      # the README's contract: nothing written, exit code 1
            print("segment: the posterior samples did not converge; nothing written (draw "
                  "more with a larger --samples)", file=sys.stderr)
            return 1
    command = "segment " + " ".join(argv)
    written = write_calibrated(result, out, source_dir=args.data, command=command)
    if post is not None:
        post.diagnostics().to_csv(out / "posterior_diagnostics.csv", index=False,
                                  float_format="%.6g")
        written.append(out / "posterior_diagnostics.csv")
    elif (out / "posterior_diagnostics.csv").exists():
        (out / "posterior_diagnostics.csv").unlink()      # from an earlier run: stale now
    if result.misfit:
        print("structural misfit: some targets are out of reach within the parameter ranges "
              "(see calibration_misfits.csv)")
    print(f"wrote {len(written)} files to {out}")
    return 0
