"""``segment export``: the model as an OpenSim (``.osim``) or MuJoCo (MJCF) file.

Writing needs neither tool. ``--check`` loads the written file in its tool, finds the nine
load cases' static equilibria there (:func:`segment.export.osim.osim_equilibrium`,
:func:`segment.export.mjcf.mjcf_equilibrium`) and prints how far they lie from
``segment solve``'s; it needs the extra ``opensim`` or ``mujoco``.
"""

from __future__ import annotations

import numpy as np

from segment.cli._common import (
    UsageError,
    cases,
    check_output_file,
    command,
    model_for,
    state_option,
)
from segment.core.io import load_parameters
from segment.solvers.equilibrium import solve

FORMATS = ("osim", "mjcf")
SUFFIXES = {".osim": "osim", ".xml": "mjcf", ".mjcf": "mjcf"}
"""The format a file name implies when ``--format`` is not given."""
EXTRAS = {"osim": ("opensim", "opensim"), "mjcf": ("mujoco", "mujoco")}
"""Per format: the module the check imports and the extra that installs it."""


def register(sub) -> None:
    p = command(sub, "export", run, help="write the model for OpenSim (.osim) or MuJoCo (MJCF); "
                                         "the facet joints are approximated")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="osim (OpenSim 4.6) or mjcf (MuJoCo); default from the file name "
                        "(.osim; .xml or .mjcf)")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="file to write")
    p.add_argument("--no-facets", action="store_true",
                   help="leave the facet joints out (the export is then exact)")
    p.add_argument("--check", action="store_true",
                   help="load the file in its tool, find the nine load cases' equilibria "
                        "there and print their difference from segment solve (needs the "
                        "extra opensim or mujoco)")
    state_option(p)


def _format(args) -> str:
    if args.format is not None:
        return args.format
    from pathlib import Path

    suffix = Path(args.output).suffix.lower()
    if suffix not in SUFFIXES:
        raise UsageError(f"-o {args.output}: cannot tell the format from {suffix or 'no'} "
                         f"suffix; give --format osim or --format mjcf")
    return SUFFIXES[suffix]


def run(args, argv) -> int:
    from segment._extras import require

    fmt = _format(args)
    out = check_output_file(args.output, "-o")
    if args.check:   # a missing extra is said before anything is written
        module, extra = EXTRAS[fmt]
        require(module, extra, f"segment export --format {fmt} --check")
    model = model_for(args)
    if args.no_facets:   # after the state, which may resect a facet
        model = model.replace(facets=())
    c6 = load_parameters(args.data, strict=not args.allow_implausible).inertia["C6"]
    if fmt == "osim":
        from segment.export.osim import osim_equilibrium as equilibrium
        from segment.export.osim import write_osim as write
    else:
        from segment.export.mjcf import mjcf_equilibrium as equilibrium
        from segment.export.mjcf import write_mjcf as write
    result = write(model, out, c6_inertia=c6)
    print(result.summary())
    for text in result.approximations:
        print(f"approximation: {text}")
    for text in result.omitted:
        print(f"not exported: {text}")
    if not args.check:
        return 0
    return _check(args, model, out, equilibrium)


def _check(args, model, out, equilibrium) -> int:
    print(f"equilibria found in the tool against segment solve "
          f"({'with' if model.facets else 'without'} facets):")
    print(f"{'case':<5} {'max |dx| mm':>12} {'max |dphi| deg':>15}  tool")
    failed = 0
    for name, load in cases(args, []).items():
        ours = solve(model, load)
        tool = equilibrium(out, load)
        if not (ours.converged and tool.converged):
            failed += 1
            why = tool.message if not tool.converged else ours.message
            print(f"{name:<5} {'-':>12} {'-':>15}  not converged: {why}")
            continue
        d = tool.q - ours.q
        print(f"{name:<5} {np.max(np.abs(d[:3])):12.3e} {np.degrees(np.max(np.abs(d[3:]))):15.3e}"
              f"  {tool.message}")
    return 1 if failed else 0
