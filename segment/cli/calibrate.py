"""``segment calibrate``: Bayesian calibration against observed responses; writes a
calibrated data folder.

The calibration runs on the model and the load cases of ``--data``; the folder it writes
records the targets and the space it used (:func:`segment.calibration.write_calibrated`).
Everything is checked first (inputs, ``--samples``, the ``--scheduler`` address) and the folder
is written only once every result is in: a failure leaves it as it was.
"""

from __future__ import annotations

import sys

from segment.cli._common import (
    UsageError,
    bars_on,
    check_output_folder,
    command,
    count_option,
    dask_client,
    data_file,
    scheduler_option,
    space_and_model,
)


def register(sub) -> None:
    from segment._checks import MAX_DRAWS

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
    count_option(p, "--samples", minimum=0, maximum=MAX_DRAWS, why="MAX_DRAWS", default=0,
                 metavar="N",
                 help="also draw about N posterior samples by MCMC (emcee, c5c6-segment[study]) "
                      f"and write posterior_diagnostics.csv (default 0: none; at most "
                      f"{MAX_DRAWS:,} and what fits in memory)")
    scheduler_option(p)


def run(args, argv) -> int:
    import contextlib

    from segment._checks import check_memory
    from segment._extras import require
    from segment.core.io import load_parameters
    from segment.studies.calibration import (
        calibrate,
        default_targets_path,
        load_targets,
        sample_posterior,
        write_calibrated,
    )

    out = check_output_folder(args.out, "--out")
    if args.scheduler is not None and not args.samples:
        raise UsageError("--scheduler sends the posterior draws to Dask: give --samples N too "
                         "(the MAP estimate itself runs in-process)")
    if args.samples:        # before any work: a missing extra is one line, not a traceback
        require("emcee", "study", "segment calibrate --samples")
    if args.scheduler is not None:
        require("distributed", "study", "segment calibrate --scheduler")
    _, space, model = space_and_model(args, args.space)
    space = space.for_model(model)            # the model's nominal values, said once
    targets = load_targets(data_file(args, args.targets, "calibration_targets.csv",
                                      default_targets_path()),
                           strict=not args.allow_implausible)
    cases = load_parameters(args.data, strict=not args.allow_implausible).load_cases
    n_walkers = max(2 * space.dim, 64)
    n_walkers += n_walkers % 2
    n_steps = max(4, -(-args.samples // n_walkers))
    if args.samples:
        try:
            check_memory(8.0 * n_walkers * n_steps * (2 * space.dim + 1),
                         f"--samples {args.samples:,}: {n_walkers * n_steps:,} draws")
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    # the scheduler is connected before any work, the folder written after all of it
    with (dask_client(args.scheduler) if args.samples else contextlib.nullcontext()) as client:
        result = calibrate(model, targets, space=space, cases=cases)
        print(result.summary())
        if not result.success:
            print(f"segment: calibration failed: {result.message}; nothing written",
                  file=sys.stderr)
            return 1
        post = None
        if args.samples:
            post = sample_posterior(model, targets, space=space, start=result,
                                    n_walkers=n_walkers, n_steps=n_steps,
                                    progress=bars_on(args), client=client, cases=cases)
    if post is not None:
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
