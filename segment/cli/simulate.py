"""``segment simulate``: the motion of C5 under a load case (dynamics)."""

from __future__ import annotations

import logging
import sys

from segment.cli._common import (
    EXIT_USAGE,
    cases,
    check_output_file,
    command,
    model_for,
    number_option,
    progress_bar,
    state_option,
)

MAX_T_END_S = 1000.0
"""Longest simulated time [s] (and load ramp): a damped step response settles in well under
1000 s of model time, and a run's cost grows with its length (issue 21: ``--t-end 1e9`` ran
200 s in silence)."""


def register(sub) -> None:
    p = command(sub, "simulate", run, help="simulate the motion of C5 under a load case "
                                           "(dynamics, all damping of the paper)")
    p.add_argument("case", metavar="CASE", help="load case name")
    number_option(p, "--t-end", default=1.0, metavar="S",
                  help=f"simulated time [s], at most {MAX_T_END_S:g} (default 1)")
    number_option(p, "--ramp", default=0.0, metavar="S",
                  help=f"ramp the load over S seconds, at most {MAX_T_END_S:g} (default 0: a "
                       "step)")
    p.add_argument("--gravity", action="store_true", help="add gravity (-z of C6)")
    p.add_argument("--out", metavar="FILE.csv", default=None,
                   help="write the time history (q, rates, element forces, energies) as CSV")
    state_option(p)


def run(args, argv) -> int:
    import numpy as np

    import segment
    from segment.solvers import dynamics

    chosen = cases(args, [args.case])
    if not args.t_end > 0 or args.ramp < 0:
        print("segment: error: --t-end must be > 0 and --ramp >= 0", file=sys.stderr)
        return EXIT_USAGE
    for option, value in (("--t-end", args.t_end), ("--ramp", args.ramp)):
        if value > MAX_T_END_S:
            print(f"segment: error: {option} must be at most {MAX_T_END_S:g} s, got {value:g}",
                  file=sys.stderr)
            return EXIT_USAGE
    if args.out:
        check_output_file(args.out, "--out")
    model = model_for(args)
    logging.getLogger("segment.simulate").info(
        "simulating %s for %g s (%s)", args.case, args.t_end,
        "step" if args.ramp == 0 else f"ramp {args.ramp:g} s")
    with progress_bar(args, f"simulate {args.case}", total=args.t_end, unit=" s") as bar:
        def progress(t: float) -> None:
            bar.update(t - bar.n)

        r = dynamics.simulate(model, chosen[args.case], t_end=args.t_end, ramp=args.ramp,
                              gravity=args.gravity, progress=progress)
    s = segment.solve(model, chosen[args.case])
    q = np.concatenate([r.q[-1, :3], np.degrees(r.q[-1, 3:])])
    qs = np.concatenate([s.q[:3], np.degrees(s.q[3:])])
    print(f"{args.case} ({model.clinical_label}): {r.message} ({r.nfev} evaluations)")
    print("              x [mm]  y [mm]  z [mm]  phi_x   phi_y   phi_z [deg]")
    print("at t_end    " + "".join(f"{v:8.4f}" for v in q))
    print("static      " + "".join(f"{v:8.4f}" for v in qs))
    print(f"kinetic energy-work error e_R = {r.energy_error:.2e} (relative to the largest "
          "energy term of the run)")
    if args.out:
        r.frame.to_csv(args.out, index=False)
        print(f"wrote {args.out} ({len(r.frame)} rows)")
    return 0 if r.success else 1
