"""Benchmark: static equilibrium of the nine Moroney cases, Newton vs scipy's hybr.

Solves each case ``--repeat`` times in one process (after a warm-up that compiles the numba
kernels) and prints JSON: median wall time per case, Newton iterations, and the same for
``scipy.optimize.root(method="hybr")`` with its finite-difference Jacobian on the same
residual, measured in the same run. ``ratio`` = scipy median / Newton median.

    python benchmarks/bench_solve.py [--repeat 200] [--out FILE]
"""

from __future__ import annotations

import argparse
import platform

import numpy as np
from _common import emit, median_time, progress
from scipy.optimize import root

import segment

TARGET_MEDIAN_MS = 2.0
TARGET_ITERATIONS = 15



def run(repeat: int) -> dict:
    model = segment.c5c6()
    _ = model.unloaded                              # cached once per model, as in normal use
    for load in segment.LOAD_CASES.values():        # warm-up (numba compile / cache load)
        segment.solve(model, load)
    cases = {}
    for name, load in progress(segment.LOAD_CASES.items(), "bench_solve"):
        result = segment.solve(model, load)
        t_newton = median_time(lambda load=load: segment.solve(model, load), repeat)

        def fun(q, load=load):
            return model.residual(q, load)

        sol = root(fun, np.zeros(6), method="hybr")
        t_scipy = median_time(lambda fun=fun: root(fun, np.zeros(6), method="hybr"), repeat)
        cases[name] = {
            "newton_median_ms": 1e3 * t_newton,
            "newton_iterations": result.iterations,
            "newton_converged": result.converged,
            "scipy_hybr_median_ms": 1e3 * t_scipy,
            "scipy_hybr_nfev": int(sol.nfev),
            "scipy_hybr_success": bool(sol.success),
            "max_abs_q_difference": float(np.max(np.abs(sol.x - result.q))),
            "ratio_scipy_over_newton": t_scipy / t_newton,
        }
    medians = [c["newton_median_ms"] for c in cases.values()]
    return {
        "benchmark": "static equilibrium, nine Moroney cases, from q = 0",
        "machine": {"python": platform.python_version(), "processor": platform.machine(),
                    "cpu_count": __import__("os").cpu_count()},
        "repeat": repeat,
        "cases": cases,
        "summary": {
            "newton_median_ms_max_over_cases": max(medians),
            "newton_iterations_max": max(c["newton_iterations"] for c in cases.values()),
            "ratio_min_over_cases": min(c["ratio_scipy_over_newton"] for c in cases.values()),
            "target_median_ms": TARGET_MEDIAN_MS,
            "target_iterations": TARGET_ITERATIONS,
            "meets_targets": (max(medians) < TARGET_MEDIAN_MS
                              and all(c["newton_iterations"] <= TARGET_ITERATIONS
                                      for c in cases.values())
                              and all(c["ratio_scipy_over_newton"] > 1 for c in cases.values())),
        },
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--out", default=None, help="also write the JSON to this file")
    args = parser.parse_args(argv)
    report = run(args.repeat)
    emit(report, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
