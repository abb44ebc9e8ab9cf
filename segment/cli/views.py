"""``segment render``, ``segment explore`` and ``segment registration``: 3-D views of the
segment (pyvista) and where their bones come from."""

from __future__ import annotations

import sys
from pathlib import Path

from segment.cli._common import (
    EXIT_USAGE,
    UsageError,
    cases,
    check_output_file,
    command,
    model_for,
    state_option,
)
from segment.core.io import load_parameters
from segment.solvers.equilibrium import solve

GEOMETRIES = ("anatomical", "simple")
"""Display geometries (segment.views.anatomy.GEOMETRIES; named here so that the parser does
not import the views, which load pyvista)."""


def register(sub) -> None:
    p = command(sub, "render", run_render,
                help="render a load case's pose to a PNG (off-screen)")
    p.add_argument("case", metavar="CASE", help="load case name (see 'segment cases')")
    p.add_argument("-o", "--output", metavar="PNG", default=None,
                   help="output image (default: CASE.png)")
    p.add_argument("--size", nargs=2, type=int, metavar=("W", "H"), default=(1200, 900),
                   help="image size in pixels (default 1200 900; each side 16 to 16384, at most "
                        "16384 x 8192 pixels)")
    p.add_argument("--view", default="auto",
                   choices=("auto", "oblique", "lateral", "posterior", "anterior", "superior"),
                   help="camera (default auto: lateral for sagittal cases, posterior for LS, "
                        "LB, AR)")
    state_option(p)
    p.add_argument("--magnify", type=float, metavar="K", default=1.0,
                   help="also draw C5 (orange, labelled) with its displacement from the "
                        "unloaded pose magnified K times, next to the true pose (default 1: "
                        "not drawn)")
    p.add_argument("--geometry", choices=GEOMETRIES, default=GEOMETRIES[0],
                   help="display geometry of the bones: anatomical (default: BodyParts3D "
                        "meshes of C5 and C6 registered to the model) or simple (tubes); "
                        "display only")
    e = command(sub, "explore", run_explore,
                help="interactive 3-D explorer with load sliders: a window (needs a display) "
                     "or, with --web, a page in your browser")
    e.add_argument("--web", action="store_true",
                   help="serve the explorer as a web page (no display needed) instead of "
                        "opening a window")
    e.add_argument("--port", type=int, default=8765,
                   help="port of the web page (default 8765; 0 picks a free one)")
    e.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only; any "
                        "other address prints a warning and the page then needs the token "
                        "of the printed URL)")
    e.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="stop the web server after S seconds (default: run until Ctrl-C)")
    e.add_argument("--geometry", choices=GEOMETRIES, default=GEOMETRIES[0],
                   help="display geometry shown first: anatomical (default) or simple; the "
                        "page has a menu to switch")
    state_option(e)
    e.add_argument("--population", metavar="DIR", default=None,
                   help="with --web: also offer the members of a virtual population in the "
                        "model menu (a folder written by 'segment calibrate --curves --each "
                        "--out DIR': one data folder per specimen)")

    g = command(sub, "registration", run_registration,
                help="print how the bone meshes are registered to the model: every landmark, "
                     "its error [mm], RMS and largest error per vertebra")
    g.add_argument("--scale", action="store_true",
                   help="fit a similarity (uniform scale) instead of the rigid motion the views "
                        "use, for comparison")


# What the off-screen renderer (VTK on Mesa's llvmpipe) can produce, measured with
# scripts/render_limits.py (benchmarks/results/render_limits.json): a side of 16,384 pixels
# renders, 16,385 gives a black band; the frame, each side rounded up to llvmpipe's 64-pixel
# tiles, may hold at most 2**27 pixels (16384 x 8192 and 11584 x 11584 render, 16384 x 8193 and
# 11585 x 11585 come out black). Beyond these the PNG is written, and is black.
MIN_RENDER_SIDE = 16
MAX_RENDER_SIDE = 16_384
MAX_RENDER_TILED_PIXELS = 2 ** 27
RENDER_TILE = 64


def check_size(size) -> None:
    """A UsageError naming --size when the renderer cannot produce that image."""
    w, h = size
    if min(w, h) < MIN_RENDER_SIDE:
        raise UsageError(f"--size must be at least {MIN_RENDER_SIDE} {MIN_RENDER_SIDE} pixels, "
                         f"got {w} {h}")
    if max(w, h) > MAX_RENDER_SIDE:
        raise UsageError(f"--size: each side must be at most {MAX_RENDER_SIDE:,} pixels (the "
                         f"off-screen renderer draws nothing beyond), got {w} {h}")
    def tiled(n):
        return -(-n // RENDER_TILE) * RENDER_TILE

    if tiled(w) * tiled(h) > MAX_RENDER_TILED_PIXELS:
        raise UsageError(f"--size {w} {h}: too many pixels for the off-screen renderer (each "
                         f"side rounded up to {RENDER_TILE}, at most {MAX_RENDER_TILED_PIXELS:,}"
                         f" pixels, e.g. 16384 8192 or 11584 11584); the image would be black")


def run_render(args, argv) -> int:
    from segment._extras import require

    chosen = cases(args, [args.case])
    check_size(args.size)
    if not (args.magnify >= 1.0 and args.magnify < float("inf")):
        print(f"segment: error: --magnify must be a number >= 1, got {args.magnify:g}",
              file=sys.stderr)
        return EXIT_USAGE
    output = check_output_file(args.output or f"{args.case}.png", "-o")
    require("pyvista", "viz", "segment render")
    from segment.views import viz  # imports vtk: only for this command

    model = model_for(args)
    result = solve(model, chosen[args.case])
    path = viz.render(result, output, size=tuple(args.size), view=args.view,
                      magnify=args.magnify, geometry=args.geometry)
    print(f"{path}: {result.load.name} ({model.clinical_label}), {result.message}")
    return 0 if result.converged else 1


def explorer_models(args) -> dict:
    """The model menu of ``explore --web``: the model of ``--data`` (named ``published``, or
    after its folder) and the members of ``--population`` (named after their specimens)."""

    model = model_for(args)
    models = {"published" if args.data is None else Path(args.data).resolve().name: model}
    if args.population is not None:
        from segment.studies.population import Population

        folder = Path(args.population)
        if not folder.is_dir():
            raise UsageError(f"--population {folder}: no such folder")
        population = Population.from_folders(folder, model=model)
        for name, member in zip(population.names, population.models, strict=True):
            if name in models:
                raise UsageError(f"--population {folder}: member {name!r} has the name of "
                                 "the --data model")
            models[name] = member
    return models


def run_explore(args, argv) -> int:
    from segment._extras import require

    if args.web:
        if not 0 <= args.port <= 65535:
            print(f"segment: error: --port must be 0-65535, got {args.port}", file=sys.stderr)
            return EXIT_USAGE
        if args.timeout is not None and not args.timeout > 0:
            print(f"segment: error: --timeout must be > 0 s, got {args.timeout:g}",
                  file=sys.stderr)
            return EXIT_USAGE
        from segment.core.states_table import INTACT, load_states, states_file
        from segment.views import web

        models = explorer_models(args)
        states = load_states(states_file(args.data), strict=not args.allow_implausible)
        try:
            web.serve(models, host=args.host, port=args.port,
                      timeout_s=args.timeout, announce=lambda s: print(s, flush=True),
                      geometry=args.geometry, states=states, state=args.state or INTACT)
        except OSError as exc:
            print(f"segment: error: cannot listen on {args.host}:{args.port}: {exc.strerror}",
                  file=sys.stderr)
            return EXIT_USAGE
        return 0
    if args.population is not None:
        raise UsageError("--population needs --web (the desktop explorer shows one model)")
    require("pyvista", "viz", "segment explore")
    from segment.views import viz

    if not viz.has_display():
        print("segment: error: explore needs a display (DISPLAY or WAYLAND_DISPLAY is not set); "
              "use 'segment explore --web' for the explorer in a browser", file=sys.stderr)
        return EXIT_USAGE
    viz.explore(model_for(args), geometry=args.geometry)
    return 0


def run_registration(args, argv) -> int:
    import pandas as pd

    from segment.views.registration import register, registration_table, summary

    params = load_parameters(args.data, strict=not args.allow_implausible)
    table = registration_table(parameters=params, scale=args.scale)
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(table.round(2).to_string(index=False))
    for v in ("C5", "C6"):
        print(summary(register(v, parameters=params, scale=args.scale)))
    print("point and surface landmarks are fitted (error: distance to the partner on the bone, "
          "mm); check: not fitted (error: signed distance to the bone, negative inside)")
    return 0
