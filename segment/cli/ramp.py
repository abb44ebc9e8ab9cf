"""``segment ramp``: a load case ramped quasi-statically up to failure."""

from __future__ import annotations

import json
import math

from segment.cli._common import (
    UsageError,
    cases,
    check_output_file,
    command,
    model_for,
    number_option,
    state_option,
)


def register(sub) -> None:
    p = command(sub, "ramp", run, help="ramp a load case quasi-statically up to failure "
                                       "(ligament strips rupture at F_max)")
    p.add_argument("case", metavar="CASE", help="load case name")
    number_option(p, "--to-scale", required=True, metavar="S",
                  help="last load scale (multiples of the case's load)")
    p.add_argument("--steps", type=int, default=200, metavar="N",
                   help="equal load steps (default 200)")
    p.add_argument("--strips", type=int, default=None, metavar="N",
                   help="split every ligament into N strips (default: data/ligament_strips.csv)")
    p.add_argument("--out", metavar="FILE.csv", default=None,
                   help="write every equilibrium of the ramp (scale, load, q, events) as CSV")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    state_option(p)


def run(args, argv) -> int:
    import segment

    chosen = cases(args, [args.case])
    if not args.to_scale > 0:
        raise UsageError(f"--to-scale must be > 0, got {args.to_scale:g}")
    if args.steps < 1:
        raise UsageError(f"--steps must be >= 1, got {args.steps}")
    if args.strips is not None and args.strips < 1:
        raise UsageError(f"--strips must be >= 1, got {args.strips}")
    if args.out:
        check_output_file(args.out, "--out")
    model = model_for(args)
    if args.strips is not None:
        model = model.with_strips(args.strips)
    r = segment.ramp(model, chosen[args.case], to_scale=args.to_scale, steps=args.steps)
    loads = r.failure_loads()
    if args.out:
        r.frame.to_csv(args.out, index=False)
    if args.json:
        print(json.dumps({
            "case": args.case, "clinical_state": model.clinical_label,
            "to_scale": args.to_scale, "steps": args.steps,
            "status": r.status, "message": r.message,
            "failure_loads": {k: (None if isinstance(v, float) and math.isnan(v) else v)
                              for k, v in loads.items()},
            "events": [{"scale": s, "kind": k, "name": n} for s, k, n in r.events],
            "ligaments": r.state.ligament_table().to_dict(orient="records"),
        }, indent=2))
        return 0 if r.status in (0, 1) else 1
    print(f"C5-C6 load ramp {args.case} x 0..{args.to_scale:g} in {args.steps} steps "
          f"({len(model.strip_names)} ligament strips), clinical state: {model.clinical_label}")
    print(f"status: {r.message}")
    events = r.frame[r.frame["event"] != ""]
    main = "mm" if (chosen[args.case].main_dof or 0) < 3 else "deg"
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
