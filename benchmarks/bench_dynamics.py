"""Benchmark: static equilibrium by Newton vs by dynamic relaxation (the MADYMO-style route).

For each of the nine Moroney cases, in one process after a warm-up that compiles the numba
kernels: the median wall time of ``segment.solve`` (Newton from q = 0), of the bare compiled
Newton kernel, and of ``segment.dynamics.relax`` (C5 at rest at q = 0, the load applied as a
step, Radau with our Jacobian, all of the paper's damping, until the scaled residual and the
scaled damping force are both below 1e-6), their ratio, and how far the settled pose is from
the Newton one. The paper's factor is 350 (MOBILE vs MADYMO, 5.7 s per MADYMO run).

    python benchmarks/bench_dynamics.py [--repeat-newton 200] [--repeat-relax 5] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

import segment
from segment.dynamics import RELAX_TOL, relax
from segment.equilibrium import DEFAULT_TOL, _newton_kernel

PAPER_RATIO = 350.0


def _median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def run(repeat_newton: int, repeat_relax: int) -> dict:
    model = segment.c5c6()
    _ = model.unloaded
    params = model._params
    for load in segment.LOAD_CASES.values():  # warm-up: compile / load the numba cache
        segment.solve(model, load)
        relax(model, load)
    cases = {}
    for name, load in segment.LOAD_CASES.items():
        print(f"  {name}...", file=sys.stderr, flush=True)
        s = segment.solve(model, load)
        r = relax(model, load)
        f = load.as_array()
        log = np.zeros((60, 2))
        t_solve = _median_time(lambda load=load: segment.solve(model, load), repeat_newton)
        t_kernel = _median_time(
            lambda f=f, log=log: _newton_kernel(params, f, np.zeros(6), DEFAULT_TOL, 60, log),
            repeat_newton)
        t_relax = _median_time(lambda load=load: relax(model, load), repeat_relax)
        d = np.abs(r.q - s.q)
        cases[name] = {
            "newton_solve_ms": 1e3 * t_solve,
            "newton_kernel_ms": 1e3 * t_kernel,
            "newton_iterations": s.iterations,
            "relax_ms": 1e3 * t_relax,
            "relax_converged": r.converged,
            "relax_simulated_s": r.t_settled,
            "relax_steps": r.steps,
            "relax_rhs_evaluations": r.nfev,
            "relax_jacobians": r.njev,
            "ratio_relax_over_solve": t_relax / t_solve,
            "ratio_relax_over_kernel": t_relax / t_kernel,
            "max_translation_difference_mm": float(d[:3].max()),
            "max_rotation_difference_rad": float(d[3:].max()),
        }
    ratios = [c["ratio_relax_over_solve"] for c in cases.values()]
    return {
        "benchmark": "static equilibrium: Newton vs dynamic relaxation, nine Moroney cases",
        "machine": {"python": platform.python_version(), "processor": platform.machine(),
                    "cpu_count": os.cpu_count()},
        "settings": {"relax_tol": RELAX_TOL, "relax_integrator": "Radau rtol 1e-3 atol 1e-6",
                     "newton_tol": DEFAULT_TOL, "repeat_newton": repeat_newton,
                     "repeat_relax": repeat_relax},
        "cases": cases,
        "summary": {
            "ratio_relax_over_solve_min": min(ratios),
            "ratio_relax_over_solve_median": statistics.median(ratios),
            "ratio_relax_over_kernel_min": min(c["ratio_relax_over_kernel"]
                                               for c in cases.values()),
            "paper_ratio": PAPER_RATIO,
            "all_above_paper_ratio": all(x > PAPER_RATIO for x in ratios),
            "all_relaxations_settled": all(c["relax_converged"] for c in cases.values()),
        },
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat-newton", type=int, default=200)
    parser.add_argument("--repeat-relax", type=int, default=5)
    parser.add_argument("--out", default=None, help="also write the JSON to this file")
    args = parser.parse_args(argv)
    report = run(args.repeat_newton, args.repeat_relax)
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
