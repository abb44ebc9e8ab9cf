"""Benchmark: where the CPU time of a warm ``segment validate`` goes, beside its wall time.

``segment validate`` uses both cores: the main thread computes the study and builds the
figures; a second thread renders the 3-D panels (VTK on Mesa's llvmpipe, which rasterizes on
threads of its own); a spawned worker process lays out and draws the matplotlib figures
(:mod:`segment.report.drawing`). On a machine with ``cpus`` cores the wall time cannot be
below ``total CPU / cpus``: this script prints that bound next to the wall time, so it shows
whether a faster report needs less work or better overlap.

Each run is a new process (after ``--warmup`` runs that warm the bytecode caches and fill
a picture cache of this benchmark's own, :mod:`segment.report.picture_cache`) that measures
itself: the main thread's CPU (``time.thread_time``), the whole process's
(``time.process_time``: every thread) and its children's (``RUSAGE_CHILDREN``: the drawing
worker), and how many pictures it read from the cache and drew. ``--no-cache`` draws every
picture in every run (what a report whose pictures all changed costs).

    python benchmarks/bench_validate_cpu.py [--repeat 3] [--warmup 1] [--no-cache] [--out FILE]

Prints JSON: per run and as medians [s].
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import emit, progress

ROOT = Path(__file__).resolve().parents[1]


def _child(out: str) -> None:
    """One measured ``segment validate`` in this process; prints its figures as JSON."""
    import resource
    import time

    from segment.cli import main

    t0, c0, p0 = time.perf_counter(), time.thread_time(), time.process_time()
    code = main(["-q", "validate", "--out", out])
    wall = time.perf_counter() - t0
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    pictures = json.loads((Path(out) / "run.json").read_text())["pictures"]
    print(json.dumps({"exit_code": code, "wall_s": wall,
                      "pictures_read": pictures["read"], "pictures_drawn": pictures["drawn"],
                      "main_thread_cpu_s": time.thread_time() - c0,
                      "process_cpu_s": time.process_time() - p0,
                      "children_cpu_s": children.ru_utime + children.ru_stime}))


def _run(pictures: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        run = subprocess.run([sys.executable, __file__, "--child", str(Path(tmp) / "report")],
                             cwd=tmp, capture_output=True, text=True, check=True,
                             env={**os.environ, "SEGMENT_CACHE_DIR": pictures})
    return json.loads(run.stdout.strip().splitlines()[-1])


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="measured runs")
    ap.add_argument("--warmup", type=int, default=1,
                    help="unmeasured runs first (bytecode and caches; default 1)")
    ap.add_argument("--no-cache", action="store_true",
                    help="draw every picture in every run (no picture cache)")
    ap.add_argument("--out", default=None, help="also write the JSON here")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.repeat < 1 or args.warmup < 0:
        ap.error(f"--repeat must be >= 1 and --warmup >= 0, got --repeat {args.repeat} "
                 f"--warmup {args.warmup}")
    if args.child is not None:
        _child(args.child)
        return {}
    with tempfile.TemporaryDirectory() as cache:
        pictures = "off" if args.no_cache else cache
        for _ in range(args.warmup):                # warm: bytecode and pictures
            _run(pictures)
        runs = [_run(pictures) for _ in progress(range(args.repeat), "warm segment validate")]
    cpus = os.cpu_count() or 1
    for r in runs:
        r["other_threads_cpu_s"] = r["process_cpu_s"] - r["main_thread_cpu_s"]
        r["total_cpu_s"] = r["process_cpu_s"] + r["children_cpu_s"]
        r["wall_bound_s"] = r["total_cpu_s"] / cpus
    keys = ("wall_s", "main_thread_cpu_s", "other_threads_cpu_s", "children_cpu_s",
            "total_cpu_s", "wall_bound_s")
    result = {"cpus": cpus, "repeat": args.repeat, "picture_cache": not args.no_cache,
              "exit_codes": [r["exit_code"] for r in runs],
              "pictures_read_drawn": [[r["pictures_read"], r["pictures_drawn"]] for r in runs],
              "median_s": {k: round(statistics.median(r[k] for r in runs), 2) for k in keys},
              "runs_s": [{k: round(r[k], 2) for k in keys} for r in runs]}
    emit(result, args.out)
    return result


if __name__ == "__main__":
    main()
