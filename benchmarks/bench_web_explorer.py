"""Benchmark the browser explorer: slider move to new image, in headless Chromium.

Starts the web explorer (``segment.views.web``) on 127.0.0.1 in this process, opens it in
Debian's headless Chromium (Playwright, software WebGL) and moves one random slider at a time
(load components and the scales, by up to a tenth of its range, as a user dragging). For each
move the page records when the input event fired and when the new frame was on the canvas
(the animation frame after three.js drew it); the benchmark waits for that frame before the
next move. Prints JSON [ms]:

* ``slider_to_image``: input event -> new image (request, warm-started solve, frame JSON,
  three.js render, next animation frame): the user's latency; goal <= 50 ms median;
* ``slider_to_drawn``: input event -> three.js finished drawing;
* ``server_update``: the session's re-solve and frame (inside the request), for comparison.

By default it runs twice with the same moves: with the anatomical bones (the default, the
numbers at the top level) and with the simple ones (``baseline``), and reports the ratio of
the medians measured in the same run.

Usage: ``.venv/bin/python benchmarks/bench_web_explorer.py [--moves 200] [--size 1400 900]
[--geometry both|anatomical|simple]``
"""

from __future__ import annotations

import argparse

import numpy as np
from _common import emit, progress

import segment
from segment.views import web
from segment.views._chromium import chromium_path, headless_page
from segment.views.session import CONTROLS

TARGET_MS = 50.0
MOVED = [c for c in CONTROLS if c.name != "magnify"]


def _stats(x) -> dict:
    x = np.asarray(x, dtype=float)
    return {"median": round(float(np.median(x)), 2),
            "p10": round(float(np.percentile(x, 10)), 2),
            "p90": round(float(np.percentile(x, 90)), 2),
            "max": round(float(np.max(x)), 2)}


def measure(geometry: str, args) -> dict:
    """Slider moves in one page showing ``geometry``'s bones (the same moves for each)."""
    rng = np.random.default_rng(args.seed)
    server = web.start({"intact": segment.c5c6()}, port=0, geometry=geometry)
    latency, drawn, failed = [], [], 0
    try:
        with headless_page(width=args.size[0], height=args.size[1]) as page:
            page.goto(server.url)
            page.wait_for_function("globalThis.__segmentExplorer?.ready === true",
                                   timeout=60000)
            info = page.evaluate("globalThis.__segmentExplorer.view.meshInfo()")
            values = {c.name: c.default for c in MOVED}
            for k in progress(range(args.warmup + args.moves), f"bench_web_explorer {geometry}"):
                c = MOVED[rng.integers(len(MOVED))]
                step = rng.uniform(-0.1, 0.1) * (c.high - c.low)
                v = float(np.clip(values[c.name] + step, c.low, c.high))
                v = round(round(v / c.step) * c.step, 6) or c.step   # a slider stop
                if v == values[c.name]:
                    v = float(np.clip(v + c.step, c.low, c.high)) if v < c.high else v - c.step
                values[c.name] = v
                seq = server.session.seq + 1
                page.eval_on_selector(f"input[data-control={c.name}]",
                                      "(i, v) => { i.value = v; "
                                      "i.dispatchEvent(new Event('input')); }", v)
                page.wait_for_function(
                    f"globalThis.__segmentExplorer.frames[{seq}] !== undefined", timeout=30000)
                t = page.evaluate(f"(() => {{ const r = globalThis.__segmentExplorer; "
                                  f"return [r.inputs[{seq}], r.frames[{seq}].drawn, "
                                  f"r.frames[{seq}].presented]; }})()")
                failed += not server.session.result.converged
                if k >= args.warmup:
                    latency.append(t[2] - t[0])
                    drawn.append(t[1] - t[0])
    finally:
        server.shutdown()
        server.server_close()
    update = np.array(server.session.timings_ms[-args.moves:])
    return {"geometry": geometry,
            "triangles_c6_c5": [info["c6"][1], info["c5"][1]],
            "slider_to_image": _stats(latency),
            "slider_to_drawn": _stats(drawn),
            "server_update": _stats(update),
            "not_converged": failed}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--size", nargs=2, type=int, default=(1400, 900))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--geometry", choices=("both", "anatomical", "simple"), default="both",
                        help="bones drawn (default both: the anatomical default, then the "
                             "simple ones as the baseline of the same run)")
    parser.add_argument("--out", default=None, help="also write the JSON to this file")
    args = parser.parse_args(argv)
    if chromium_path() is None:
        raise SystemExit("bench_web_explorer: Debian's chromium is not installed "
                         "(scripts/setup.sh installs it with the dev extra)")
    runs = [measure(g, args) for g in (("anatomical", "simple") if args.geometry == "both"
                                       else (args.geometry,))]
    first = runs[0]
    out = {
        "moves": args.moves,
        "viewport": list(args.size),
        "browser": "headless chromium (Debian), software WebGL",
        "unit": "ms",
        **first,
        "target_median_ms": TARGET_MS,
        "meets_target": bool(first["slider_to_image"]["median"] <= TARGET_MS),
    }
    if len(runs) == 2:
        out["baseline"] = runs[1]
        out["median_ratio_to_baseline"] = round(
            first["slider_to_image"]["median"] / runs[1]["slider_to_image"]["median"], 2)
        out["not_converged"] = first["not_converged"] + runs[1]["not_converged"]
    emit(out, args.out)
    return out


if __name__ == "__main__":
    main()
