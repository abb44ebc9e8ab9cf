"""``segment render`` and ``segment explore``: 3-D views of the segment (pyvista)."""

from __future__ import annotations

import sys

from segment.cli._common import EXIT_USAGE, cases, check_output_file, command


def register(sub) -> None:
    p = command(sub, "render", run_render,
                help="render a load case's pose to a PNG (off-screen)")
    p.add_argument("case", metavar="CASE", help="load case name (see 'segment cases')")
    p.add_argument("-o", "--output", metavar="PNG", default=None,
                   help="output image (default: CASE.png)")
    p.add_argument("--size", nargs=2, type=int, metavar=("W", "H"), default=(1200, 900),
                   help="image size in pixels (default 1200 900)")
    p.add_argument("--view", default="auto",
                   choices=("auto", "oblique", "lateral", "posterior", "anterior", "superior"),
                   help="camera (default auto: lateral for sagittal cases, posterior for LS, "
                        "LB, AR)")
    p.add_argument("--magnify", type=float, metavar="K", default=1.0,
                   help="also draw C5 (orange, labelled) with its displacement from the "
                        "unloaded pose magnified K times, next to the true pose (default 1: "
                        "not drawn)")
    command(sub, "explore", run_explore,
            help="interactive 3-D explorer with load sliders (needs a display)")


def run_render(args, argv) -> int:
    import segment
    from segment._extras import require

    chosen = cases(args, [args.case])
    if min(args.size) < 16:
        print(f"segment: error: --size must be at least 16 16 pixels, got {args.size}",
              file=sys.stderr)
        return EXIT_USAGE
    if not (args.magnify >= 1.0 and args.magnify < float("inf")):
        print(f"segment: error: --magnify must be a number >= 1, got {args.magnify:g}",
              file=sys.stderr)
        return EXIT_USAGE
    output = check_output_file(args.output or f"{args.case}.png", "-o")
    require("pyvista", "viz", "segment render")
    from segment.views import viz  # imports vtk: only for this command

    model = segment.c5c6(data_dir=args.data, strict=not args.allow_implausible)
    result = segment.solve(model, chosen[args.case])
    path = viz.render(result, output, size=tuple(args.size), view=args.view,
                      magnify=args.magnify)
    print(f"{path}: {result.load.name}, {result.message}")
    return 0 if result.converged else 1


def run_explore(args, argv) -> int:
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
