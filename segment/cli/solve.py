"""``segment cases`` and ``segment solve``: the load cases, and their static equilibria."""

from __future__ import annotations

import json

from segment.cli._common import (
    UsageError,
    cases,
    command,
    convention_option,
    display,
    model_for,
    number_option,
    state_option,
)
from segment.solvers.equilibrium import solve


def register(sub) -> None:
    p = command(sub, "cases", run_cases, help="list the load cases")
    p.set_defaults(uses_kernels=False)
    p = command(sub, "solve", run_solve, help="solve load cases for static equilibrium")
    p.add_argument("--from", dest="origin", choices=("unloaded", "reference"),
                   default="unloaded",
                   help="measure displacements from the unloaded equilibrium (default, as in "
                        "the validation report) or from the reference pose of Table 1")
    p.add_argument("cases", nargs="*", metavar="CASE", help="load case names (default: all)")
    number_option(p, "--scale", default=1.0, help="multiply every load by X (default 1)")
    p.add_argument("--no-facets", action="store_true", help="leave out the facet joints")
    p.add_argument("--no-ligaments", action="store_true", help="leave out the ligaments")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    state_option(p)
    convention_option(p)


def run_cases(args, argv) -> int:
    known = cases(args, [])
    print(f"{'case':<6}{'Fx':>7}{'Fy':>7}{'Fz':>7} [N]{'Mx':>7}{'My':>7}{'Mz':>7} [N m]")
    for name, load in known.items():
        f = load.force
        m = load.moment / 1000.0
        print(f"{name:<6}{f[0]:7.3g}{f[1]:7.3g}{f[2]:7.3g}    {m[0]:7.3g}{m[1]:7.3g}{m[2]:7.3g}")
    return 0


def check_scale(args, chosen) -> None:
    """A UsageError naming ``--scale`` when a scaled load leaves the plausible range of the
    load-case columns (:func:`segment.core.checks.check_load`: 100 x the Moroney test loads;
    with ``--allow-implausible`` only a load that is no longer finite). ``segment compare
    --scale`` is checked by the same function."""
    import numpy as np

    from segment.core.checks import check_load

    for name, load in chosen.items():
        with np.errstate(over="ignore", invalid="ignore"):
            force, moment = load.force * args.scale, load.moment * args.scale   # N, N mm
        try:
            check_load(force, moment, f"--scale {args.scale:g}: {name}",
                       strict=not args.allow_implausible)
        except ValueError as exc:
            raise UsageError(str(exc) + ("" if args.allow_implausible else
                                         "; --allow-implausible solves it anyway")) from None


def _isb_dict(r) -> dict:
    """The ISB table of a result as {column: {coordinate: value}} (None for NaN)."""
    t = r.table(convention="isb").set_index("coordinate")
    return {col: {k: (None if v != v else float(v)) for k, v in t[col].items()}
            for col in ("absolute", "from_reference", "from_unloaded")}


def run_solve(args, argv) -> int:
    import numpy as np

    chosen = cases(args, args.cases)
    check_scale(args, chosen)
    names = list(chosen)
    model = model_for(args, ligaments=not args.no_ligaments, facets=not args.no_facets)
    results = [solve(model, chosen[n].scaled(args.scale, name=n)) for n in names]
    if args.json:
        dicts = [r.to_dict() for r in results]
        if args.convention == "isb":
            for d, r in zip(dicts, results, strict=True):
                d["isb"] = _isb_dict(r)
        print(json.dumps({"scale": args.scale, "clinical_state": model.clinical_label,
                          "convention": args.convention, "results": dicts}, indent=2))
        return 0 if all(r.converged for r in results) else 1
    config = ("disc" + ("" if args.no_ligaments else " + ligaments")
              + ("" if args.no_facets else " + facets"))
    u = model.unloaded
    if args.origin == "unloaded" and not u.converged:
        raise UsageError(f"the unloaded equilibrium of this model did not converge "
                         f"({u.message}); use --from reference")
    origin = ("the unloaded equilibrium (as in the validation report; see --from)"
              if args.origin == "unloaded" else "the reference pose of Table 1 (see --from)")
    print(f"C5-C6 static equilibrium ({config}), load scale {args.scale:g}, clinical state: "
          f"{model.clinical_label}")
    if args.convention == "isb":
        print(f"displacement of C5 from {origin}, ISB joint coordinate system (Wu et al. "
              "2002): q1 (+ right) q2 (+ anterior) q3 (+ superior) [mm] between the body "
              "centroids, alpha (+ extension) beta (+ right lateral bending) gamma (+ left "
              "axial rotation) [deg]")
        names = ("q1", "q2", "q3", "alpha", "beta", "gamma")
    else:
        print(f"displacement of C5 from {origin}: x y z [mm], phi_x phi_y phi_z [deg]")
        names = ("x", "y", "z", "phi_x", "phi_y", "phi_z")
    print(f"{'case':<5}" + "".join(f"{n:>8}" for n in names)
          + f"{'iter':>6}  facets (left / right)")
    column = "from_unloaded" if args.origin == "unloaded" else "from_reference"
    for r in results:
        if not r.converged:     # no numbers that could be read as a result
            print(f"{r.load.name:<5}  NOT CONVERGED: {r.message}")
            continue
        if args.convention == "isb":
            d = np.round(r.table(convention="isb")[column].to_numpy(float), 3) + 0.0
        else:
            q = r.displacement_from_unloaded if args.origin == "unloaded" else r.q
            d = display(q)
        facets = " / ".join(f"{f.regime} {f.force:.1f} N" for f in r.state.facets) or "-"
        # a dislocated facet or a ligament past eps_max (Table 3)
        flag = "" if r.intact else f"  BEYOND LIMITS: {'; '.join(r.limit_flags)}"
        print(f"{r.load.name:<5}" + "".join(f"{v:8.3f}" for v in d)
              + f"{r.iterations:6d}  {facets}{flag}")
    if u.converged:
        print("unloaded equilibrium, from the reference pose: "
              + " ".join(f"{v:.3f}" for v in display(u.q)))
    else:
        print(f"unloaded equilibrium: {u.message}")
    return 0 if all(r.converged for r in results) else 1
