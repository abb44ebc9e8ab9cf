"""``segment calibrate``: Bayesian calibration against observed responses; writes a
calibrated data folder.

The calibration runs on the model and the load cases of ``--data``; the folder it writes
records the targets and the space it used (:func:`segment.studies.calibration.write_calibrated`).
Everything is checked first (inputs, ``--samples``, the ``--scheduler`` address) and the folder
is written only once every result is in: a failure leaves it as it was.

With ``--curves FILE``: calibration to specimen curves in a model form (``--form``): the
population's corridor, one specimen (``--specimen``), or every specimen its own set
(``--each``: ``DIR/<specimen>/`` and ``DIR/population.csv``).

With ``--population``: the hierarchical calibration of every laboratory and mode
(:mod:`segment.studies.calibration.hierarchical`) and a virtual population drawn from its
predictive distribution for a new specimen, of a new laboratory or of ``--lab NAME``
(:mod:`segment.studies.virtual_population`): ``DIR/member_NNN/`` and ``DIR/population.csv``.
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
    data_file,
    model_for,
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
    p.add_argument("--out", metavar="DIR", default=None,
                   help="output data folder (default: calibrated; with --population: "
                        "population)")
    p.add_argument("--curves", metavar="FILE", nargs="?", const="", default=None,
                   help="calibrate to the specimen curves of FILE (format: "
                        "segment.studies.curves; without FILE the packaged curves of "
                        "Nightingale et al. 2002) instead of --targets: the corridor's mean "
                        "within its SD, or with --each every specimen")
    p.add_argument("--form", metavar="NAME", default=None,
                   help="model form for --curves: published (default), reference-strain, "
                        "neutral-zone, fw35 (data/forms/forms.csv), or a folder with a "
                        "space.csv and optionally a disc_law.csv")
    p.add_argument("--each", action="store_true",
                   help="with --curves: every specimen its own parameter set, written to "
                        "DIR/<specimen>/, and DIR/population.csv")
    p.add_argument("--specimen", metavar="NAME", default=None,
                   help="with --curves: calibrate to this specimen's curves only")
    from segment.studies.calibration.hierarchical_settings import LABS, NEW_LAB

    p.add_argument("--population", action="store_true",
                   help="calibrate one hierarchical population to every laboratory and mode "
                        "(the raw steps of Nightingale et al. 2002, Moroney et al. 1988's "
                        "intact and posterior-removed means) and write a virtual population "
                        "of 200 members drawn for a new specimen: DIR/member_NNN/ and "
                        "DIR/population.csv")
    p.add_argument("--lab", metavar="NAME", default=None, choices=(*LABS, NEW_LAB),
                   help="with --population: draw the members for a new specimen of this "
                        f"laboratory: {', '.join(LABS)}, or {NEW_LAB} (default: a new "
                        "laboratory, with the between-laboratory spread)")
    count_option(p, "--samples", minimum=0, maximum=MAX_DRAWS, why="MAX_DRAWS", default=0,
                 metavar="N",
                 help="also draw about N posterior samples by MCMC (emcee, c5c6-segment[study]) "
                      f"and write posterior_diagnostics.csv (default 0: none; at most "
                      f"{MAX_DRAWS:,} and what fits in memory)")
    scheduler_option(p)


def run(args, argv) -> int:
    if args.population:
        return run_population(args, argv)
    if args.lab is not None:
        raise UsageError("--lab goes with --population")
    if args.out is None:
        args.out = "calibrated"
    if args.curves is not None:
        return run_curves(args, argv)
    for option in ("form", "specimen"):
        if getattr(args, option) is not None:
            raise UsageError(f"--{option} goes with --curves")
    if args.each:
        raise UsageError("--each goes with --curves")
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


def run_curves(args, argv) -> int:
    """``segment calibrate --curves FILE [--form NAME] [--each | --specimen S]``."""
    from segment.studies.calibration import write_curve_calibration, write_population
    from segment.studies.calibration.curve_fit import calibrate_curves, calibrate_each
    from segment.studies.curves import load_curves
    from segment.studies.forms import load_form

    for option in ("targets", "space"):
        if getattr(args, option) is not None:
            raise UsageError(f"--{option} does not go with --curves (the form names its "
                             "parameter space; give --form FOLDER for another)")
    if args.each and args.specimen is not None:
        raise UsageError("--each and --specimen exclude each other")
    if args.samples and (args.each or args.specimen is not None):
        raise UsageError("--samples with --curves samples the population posterior: not with "
                         "--each or --specimen")
    if args.scheduler is not None:
        raise UsageError("--scheduler does not go with --curves (the curve posterior runs "
                         "in-process)")
    out = check_output_folder(args.out, "--out")
    if args.samples:        # before any work: a missing extra is one line, not a traceback
        from segment._extras import require

        require("emcee", "study", "segment calibrate --curves --samples")
    curves = load_curves(args.curves or None, strict=not args.allow_implausible)
    form = load_form(args.form)
    if args.specimen is not None and args.specimen not in curves.specimens:
        raise UsageError(f"--specimen {args.specimen}: not in {Path(curves.path).name} "
                         f"(it has {', '.join(curves.specimens)})")
    model = model_for(args)
    command = "segment " + " ".join(argv)
    if args.each:
        fits = calibrate_each(curves, form=form, model=model, progress=bars_on(args))
        print(f"every specimen of {Path(curves.path).name} in form {form.name} "
              f"({form.space.dim} parameters); fit error over the points not flagged:")
        print(f"{'specimen':>10} {'converged':>9} {'points':>6} {'RMS':>6} {'largest':>7}  "
              "[deg]")
        for f in fits:
            print(f"{f.targets.label:>10} {f.success!s:>9} {f.n_points:6d} "
                  f"{f.rms_deg:6.2f} {f.max_deg:7.2f}")
        _warn_misfits(fits, model)
        written, failed = write_population(fits, out, form=form, source_dir=args.data,
                                           command=command,
                                           strict=not args.allow_implausible)
        print(f"wrote {len(written)} files to {out} (one folder per converged specimen, "
              "population.csv)")
        if failed:
            print(f"segment: calibration did not converge for {', '.join(failed)}: no folder "
                  "written for them", file=sys.stderr)
            return 1
        return 0
    fit = calibrate_curves(curves, form=form, model=model, specimen=args.specimen)
    print(fit.summary())
    _warn_misfits([fit], model)
    if not fit.success:
        print(f"segment: calibration failed: {fit.message}; nothing written", file=sys.stderr)
        return 1
    post = None
    if args.samples:
        from segment.studies.calibration.curve_posterior import sample_curve_posterior

        post = sample_curve_posterior(fit, samples=args.samples, form=form, model=model,
                                      progress=bars_on(args))
        print(post.summary())
        if not post.converged:      # the README's contract: nothing written, exit code 1
            print("segment: the posterior samples did not converge; nothing written (draw "
                  "more with a larger --samples)", file=sys.stderr)
            return 1
    written = write_curve_calibration(fit, out, form=form, source_dir=args.data,
                                      command=command, strict=not args.allow_implausible)
    if post is not None:
        post.diagnostics().to_csv(out / "posterior_diagnostics.csv", index=False,
                                  float_format="%.6g", lineterminator="\n")
        written.append(out / "posterior_diagnostics.csv")
    elif (out / "posterior_diagnostics.csv").exists():
        (out / "posterior_diagnostics.csv").unlink()      # from an earlier run: stale now
    print(f"wrote {len(written)} files to {out}")
    return 0


def _warn_misfits(fits, model) -> None:
    """A warning on stderr for each fit whose RMS is far above its points' SD, naming the
    packaged form that fits those points (:func:`~segment.studies.calibration.curve_fit.
    form_that_fits`: one calibration per other form, only for a flagged fit)."""
    from segment.studies.calibration.curve_fit import form_that_fits

    for f in fits:
        if f.success and f.misfit_warning() is not None:
            better = form_that_fits(f, model=model)
            print(f"segment: warning: {f.misfit_warning(better=better)}", file=sys.stderr)


def run_population(args, argv) -> int:
    """``segment calibrate --population [--lab NAME] [--out DIR]``."""
    import time

    from segment.studies import (
        population_limits,
        population_result,
        population_tables,
        virtual_population,
    )
    from segment.studies.calibration.hierarchical import fit_population
    from segment.studies.calibration.hierarchical_settings import NEW_LAB
    from segment.studies.specimens import load_specimens

    for option in ("curves", "targets", "space", "form", "specimen", "scheduler"):
        if getattr(args, option) is not None:
            raise UsageError(f"--{option} does not go with --population (it calibrates the "
                             "population form to every dataset)")
    if args.each or args.samples:
        raise UsageError("--each and --samples do not go with --population")
    out = check_output_folder(args.out or "population", "--out")
    t0 = time.perf_counter()
    model = model_for(args)
    data = load_specimens()
    fit = fit_population(model, data)
    print(f"population calibration: {fit.message}; step SD {fit.sigma_e:.3g} deg, origin SD "
          f"{fit.sigma_o:.3g} deg ({len(fit.specimens)} specimens, Moroney's 8 means)")
    if not fit.converged:
        print("segment: the population calibration did not converge; nothing written",
              file=sys.stderr)
        return 1
    lab = None if args.lab in (None, NEW_LAB) else args.lab
    limits = population_limits.validity_limits(data)
    # a further specimen of Nightingale's study is one that survived its static protocol
    survive = virtual_population.STATIC_PROTOCOL_NM if lab == data.laboratory else None
    condition = ("" if survive is None else
                 f"carries {survive:g} N m in flexion and extension intact within its "
                 f"validity limits (the static protocol every training specimen of {lab} "
                 "survived)")
    try:
        P, rejected = virtual_population.draw_members(
            fit, model, virtual_population.MEMBERS, lab=lab, seed=virtual_population.SEED,
            survive_nm=survive, limits=limits)
    except ValueError as exc:
        print(f"segment: {exc}; nothing written", file=sys.stderr)
        return 1
    if rejected:
        print(f"{rejected} draw(s) skipped: no equilibrium at 1.8 N m in some mode"
              + (f", or not surviving {survive:g} N m" if survive else ""))
    table = population_tables.member_table(fit, model, P, lab=lab or NEW_LAB, limits=limits)
    command = "segment " + " ".join(argv)
    models = virtual_population.member_models(fit, model, P)
    note = (f"population member drawn for a new specimen of {lab or 'a new laboratory'} from "
            f"the hierarchical calibration of `{command}`")
    population_result.remove_stale(out, len(models))
    written = population_result.write_members(models, model, out, note=note, limits=limits,
                                              source_dir=args.data)
    written += population_result.write_result(fit, table, limits, out, command=command,
                                              lab=lab, rejected=rejected, condition=condition)
    files = ", ".join(population_result.RESULT_FILES)
    print(f"wrote {len(models)} member folders and the tables {files} "
          f"to {out} in {time.perf_counter() - t0:.0f} s")
    return 0
