"""Benchmark: the quasi-static load ramp to failure (segment.ramp), 200 steps.

For each of the nine Moroney cases, times ``segment.ramp(model, case, to_scale=S,
steps=200)`` (median of ``--repeat`` runs; S = 100 by default) twice: with the validity limit
of the model (the default: the ramp stops at the limit) and with ``limits=None`` (the whole
path, past any meaning, to "no equilibrium" or S; its increments are refined where Newton
fails, issue 20). As the baseline measured in the same run, the same 200 load levels solved
one by one with :func:`segment.solve` from the reference pose (history-free: no rupture, the
published curves continued), up to the last level the unlimited ramp carried. Goal (issue
13): FLX to failure in <= 20 ms (median of the unlimited ramp; the minimum over the runs is
reported too, the machine is shared).

    python benchmarks/bench_ramp.py [--repeat 7] [--to-scale 100] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import platform

import numpy as np
from _common import emit, median_time, min_time

import segment

GOAL_MS = 20.0
STEPS = 200


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--to-scale", type=float, default=100.0)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    model = segment.c5c6()
    segment.ramp(model, segment.LOAD_CASES["FLX"], to_scale=2.0, steps=4)   # compile / load
    cases = {}
    for name, load in segment.LOAD_CASES.items():
        result = segment.ramp(model, load, to_scale=args.to_scale, steps=STEPS, limits=None)
        limited = segment.ramp(model, load, to_scale=args.to_scale, steps=STEPS)

        def run(load=load):
            segment.ramp(model, load, to_scale=args.to_scale, steps=STEPS, limits=None)

        def run_limited(load=load):
            segment.ramp(model, load, to_scale=args.to_scale, steps=STEPS)

        t_ramp = median_time(run, args.repeat)
        t_ramp_min = min_time(run, args.repeat)
        t_limited = median_time(run_limited, args.repeat)
        last = float(result.frame["scale"][~result.frame["event"].str.contains(
            "no equilibrium")].max())
        levels = args.to_scale * np.arange(1, STEPS + 1) / STEPS
        levels = levels[levels <= last]

        def one_by_one(load=load, levels=levels):
            for s in levels:
                segment.solve(model, load.scaled(float(s)))

        t_base = median_time(one_by_one, max(1, args.repeat // 3))
        loads = result.failure_loads()
        cases[name] = {
            "ramp_ms": 1e3 * t_ramp,
            "ramp_ms_min": 1e3 * t_ramp_min,
            "ramp_to_validity_limit_ms": 1e3 * t_limited,
            "baseline_solve_each_level_ms": 1e3 * t_base,
            "baseline_levels": len(levels),
            "speedup_vs_baseline": t_base / t_ramp,
            "rows": len(result.frame),
            "status": result.message,
            "first_rupture_scale": loads["first_rupture_scale"],
            "ultimate_scale": loads["ultimate_scale"],
            "sequence": loads["sequence"],
            "validity_limit_scale": limited.failure_loads()["limit_scale"],
            "validity_limit": limited.failure_loads()["limit_rule"],
        }
    flx = cases["FLX"]
    report = {
        "benchmark": "bench_ramp",
        "steps": STEPS,
        "to_scale": args.to_scale,
        "repeat": args.repeat,
        "goal_ms": GOAL_MS,
        "flx_ramp_ms": flx["ramp_ms"],
        "flx_ramp_ms_min": flx["ramp_ms_min"],
        "flx_meets_goal": flx["ramp_ms"] <= GOAL_MS,
        "max_ramp_ms_over_cases": max(c["ramp_ms"] for c in cases.values()),
        "flx_ramp_to_validity_limit_ms": flx["ramp_to_validity_limit_ms"],
        "cases": cases,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "platform": platform.platform()},
    }
    emit(report, args.out)


if __name__ == "__main__":
    main()
