"""``segment ramp``: a load case ramped quasi-statically up to failure."""

from __future__ import annotations

import json
import math

from segment._checks import MAX_STRIPS
from segment.cli._common import (
    UsageError,
    cases,
    check_output_file,
    command,
    convention_option,
    count_option,
    model_for,
    number_option,
    state_option,
)
from segment.core.checks import RAMP_STEPS as MAX_RAMP_STEPS
from segment.core.status import Status
from segment.solvers.ramp import MAX_TO_SCALE, ramp


def register(sub) -> None:
    p = command(sub, "ramp", run, help="ramp a load case quasi-statically up to failure "
                                       "(ligament strips rupture at F_max)")
    p.add_argument("case", metavar="CASE", help="load case name")
    number_option(p, "--to-scale", required=True, metavar="S",
                  help="last load scale (multiples of the case's load)")
    count_option(p, "--steps", maximum=MAX_RAMP_STEPS, why="MAX_RAMP_STEPS", default=200,
                 metavar="N", help=f"equal load steps (default 200, at most {MAX_RAMP_STEPS:,})")
    count_option(p, "--strips", maximum=MAX_STRIPS, why="MAX_STRIPS", default=None,
                 metavar="N", help="split every ligament into N strips (default: "
                                   f"data/ligament_strips.csv; at most {MAX_STRIPS})")
    p.add_argument("--out", metavar="FILE.csv", default=None,
                   help="write every equilibrium of the ramp (scale, load, q, events) as CSV")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--no-limit", action="store_true",
                   help="do not stop at the validity limit of the model "
                        "(data/validity_limits.csv): the path beyond it is not a prediction")
    state_option(p)
    convention_option(p)


def run(args, argv) -> int:
    chosen = cases(args, [args.case])
    if not args.to_scale > 0:
        raise UsageError(f"--to-scale must be > 0, got {args.to_scale:g}")
    if args.to_scale > MAX_TO_SCALE:
        raise UsageError(f"--to-scale must be at most {MAX_TO_SCALE:g} (x the case's load), "
                         f"got {args.to_scale:g}")
    if args.out:
        check_output_file(args.out, "--out")
    model = model_for(args)
    if args.strips is not None:
        model = model.with_strips(args.strips)
    limits = None if args.no_limit else _limits(args.data, args.allow_implausible)
    r = ramp(model, chosen[args.case], to_scale=args.to_scale, steps=args.steps,
             limits=limits)
    loads = r.failure_loads()
    frame = r.frame
    if args.convention == "isb":
        frame = _with_isb(r, model)
    if args.out:
        frame.to_csv(args.out, index=False)
    limit = None if r.limit is None else {
        "rule": r.limit.rule, "description": r.limit.description, "source": r.limit.source,
        "scale": r.limit.scale, "reached_by": r.limit.reached_by, "beyond": r.limit.beyond}
    if args.json:
        print(json.dumps({
            "case": args.case, "clinical_state": model.clinical_label,
            "to_scale": args.to_scale, "steps": args.steps,
            "status": r.status, "message": r.message,
            "failure_loads": {k: (None if isinstance(v, float) and math.isnan(v) else v)
                              for k, v in loads.items()},
            "validity_limit": limit,
            "validity_limit_applied": limits is not None,
            "events": [{"scale": s, "kind": k, "name": n} for s, k, n in r.events],
            "ligaments": r.state.ligament_table().to_dict(orient="records"),
            **({"isb_last": {c: float(frame[c].iloc[-1]) for c in frame.columns
                             if c.startswith("isb_")}} if args.convention == "isb" else {}),
        }, indent=2))
        return 0 if r.status != Status.UNLOADED_NOT_FOUND else 1
    print(f"C5-C6 load ramp {args.case} x 0..{args.to_scale:g} in {args.steps} steps "
          f"({len(model.strip_names)} ligament strips), clinical state: {model.clinical_label}")
    print(f"status: {r.message}")
    if r.limit is not None:
        print(f"validity limit: {r.limit.description}, at scale {r.limit.scale:.4g}, reached "
              f"by {r.limit.reached_by}; source: {r.limit.source}")
        print(f"  {r.limit.beyond}")
    elif limits is None:
        print("validity limit: not applied (--no-limit); displacements past "
              "data/validity_limits.csv are not a prediction")
    else:
        print("validity limit: not reached")
    events = r.frame[r.frame["event"] != ""]
    column = r.main_column
    unit = column.rsplit("_", 1)[1] if column.endswith(("_mm", "_deg")) else "-"
    isb = _isb_main(r.load) if args.convention == "isb" else None
    extra = "" if isb is None else f"  {'ISB ' + isb[0] + ' [' + isb[1] + ']':>18}"
    print(f"{'scale':>10}  {'main displacement [' + unit + ']':>26}{extra}  event")
    for k, row in events.iterrows():
        shown = "" if isb is None else f"  {frame.loc[k, isb[2]]:18.3f}"
        print(f"{row['scale']:10.4f}  {row[column]:26.3f}{shown}  {row['event']}")
    unit = "N" if "first_rupture_N" in loads else "Nm"
    shown = unit.replace("Nm", "N m")
    ultimate = (f"scale {loads['ultimate_scale']:.4g} ({loads[f'ultimate_{unit}']:.4g} {shown})"
                if loads["ultimate_scale"] == loads["ultimate_scale"] else
                "not predicted (beyond the validity limit)" if r.limit is not None else
                "not reached")
    print(f"first rupture: scale {loads['first_rupture_scale']:.4g} "
          f"({loads[f'first_rupture_{unit}']:.4g} {shown}); ultimate: {ultimate}"
          + (f"; validity limit: scale {loads['limit_scale']:.4g} "
             f"({loads[f'limit_{unit}']:.4g} {shown})" if r.limit is not None else ""))
    print("main displacement: from the unloaded equilibrium"
          + (f"; q in {args.out} (x_mm ... phi_z_deg): from the reference pose of Table 1"
             if args.out else ""))
    if args.convention == "isb":
        print("ISB: joint coordinate system of Wu et al. 2002, change from the unloaded "
              "equilibrium (alpha + extension, beta + right lateral bending, gamma + left axial "
              "rotation; q1 right, q2 anterior, q3 superior)"
              + (f"; the isb_* columns of {args.out} hold the absolute values and the changes"
                 if args.out else ""))
    print("final state:")
    print(r.state.ligament_table().to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    if args.out:
        print(f"wrote {args.out} ({len(r.frame)} rows)")
    return 0 if r.status != Status.UNLOADED_NOT_FOUND else 1


_ISB_OF_DOF = ("q2", "q1", "q3", "beta", "alpha", "gamma")
"""The JCS coordinate nearest to each of our coordinates at the reference pose (x: q2,
y: -q1, z: q3, phi_x: beta, phi_y: -alpha, phi_z: gamma)."""


def _isb_main(load):
    """(name, unit, column) of the ISB coordinate of the load's main coordinate, or None."""
    from segment.core.conventions import ISB_COORDINATES

    main = load.main_dof
    if main is None:
        return None
    name = _ISB_OF_DOF[main]
    unit = dict((n, u) for n, u, _ in ISB_COORDINATES)[name]
    return name, unit, f"isb_{name}_from_unloaded_{unit}"


def _with_isb(r, model):
    """The ramp's frame with the ISB JCS coordinates of every row (absolute, and the change
    from the unloaded equilibrium)."""
    import numpy as np
    import pandas as pd

    from segment.core.conventions import isb_frame

    f = r.frame
    q = np.column_stack([f[["x_mm", "y_mm", "z_mm"]].to_numpy(float),
                         np.radians(f[["phi_x_deg", "phi_y_deg", "phi_z_deg"]]
                                    .to_numpy(float))])
    u = model.unloaded
    isb = isb_frame(q, model.reference, q_unloaded=u.q if u.converged else None)
    isb.index = f.index
    return pd.concat([f, isb], axis=1)


def _limits(data, allow_implausible):
    """The validity limits of ``--data DIR`` when it has the table, else the packaged ones."""
    from pathlib import Path

    from segment.core.validity import FILE_NAME, load_validity_limits

    if data is not None and (Path(data) / FILE_NAME).exists():
        return load_validity_limits(data, strict=not allow_implausible)
    return "default"
