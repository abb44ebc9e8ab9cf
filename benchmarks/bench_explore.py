"""Benchmark the explorer's update path: warm-started solve + in-place scene update.

Drives :class:`segment.views.viz.Explorer` off-screen with random slider changes (one slider per
step, as a user dragging) and prints JSON with the median and 90th-percentile times [ms] of

* ``solve``: the warm-started equilibrium,
* ``scene``: moving the meshes and texts in place,
* ``update``: solve + scene (the target is below 50 ms median),
* ``render_offscreen``: one off-screen render (Mesa, software) of the window, measured
  separately (the interactive window renders on the GPU where there is one).

Usage: ``.venv/bin/python benchmarks/bench_explore.py [--steps 100] [--size 1400 900]``
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("VTK_DEFAULT_OPENGL_WINDOW", "vtkOSOpenGLRenderWindow")

import numpy as np
from _common import emit, progress

import segment
from segment.views.desktop import SLIDERS, Explorer

TARGET_MS = 50.0


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--size", nargs=2, type=int, default=(1400, 900))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--geometry", choices=("anatomical", "simple"), default="anatomical",
                        help="bones drawn (default anatomical)")
    parser.add_argument("--out", default=None, help="also write the JSON to this file")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    ex = Explorer(segment.c5c6(), off_screen=True, size=tuple(args.size), render=False,
                  geometry=args.geometry)
    ex.update(render=True)  # warm-up: compiled kernels, first render
    ex.timings.clear()
    renders, failed = [], 0
    for _ in progress(range(args.steps), "bench_explore"):
        name, _, (lo, hi), _, _ = SLIDERS[rng.integers(len(SLIDERS))]
        # a drag: move the slider by up to a tenth of its range
        value = float(np.clip(ex.values[name] + rng.uniform(-0.1, 0.1) * (hi - lo), lo, hi))
        result = ex.on_slider(name, value)
        failed += not result.converged
        t0 = time.perf_counter()
        ex.plotter.render_window.Render()
        renders.append(time.perf_counter() - t0)
    ex.close()
    t = np.array(ex.timings) * 1000.0
    update = t[:, 0] + t[:, 1]
    render = np.array(renders) * 1000.0

    def stats(x):
        return {"median": round(float(np.median(x)), 3),
                "p90": round(float(np.percentile(x, 90)), 3),
                "max": round(float(np.max(x)), 3)}

    out = {
        "steps": args.steps,
        "geometry": args.geometry,
        "window": list(args.size),
        "unit": "ms",
        "solve": stats(t[:, 0]),
        "scene": stats(t[:, 1]),
        "update": stats(update),
        "render_offscreen": stats(render),
        "update_plus_render": stats(update + render),
        "not_converged": failed,
        "target_update_median_ms": TARGET_MS,
        "meets_target": bool(np.median(update) < TARGET_MS),
    }
    emit(out, args.out)
    return out


if __name__ == "__main__":
    main()
