"""Benchmark: equilibria per second with ``segment.solve_many``.

N random loads (force and moment each with a uniformly random direction and a magnitude
uniform up to 2x the nominal 20 N / 1.8 N m), solved by ``solve_many`` (numba, prange over
the CPU cores) with its default start (linear predictor) and from the reference pose, and a
sample of them one at a time with ``segment.solve`` in the same run; the largest difference
between the batch and the one-at-a-time equilibria. Target: >= 10,000 equilibria/s.

    python benchmarks/bench_batch.py [--n 10000] [--n-single 500] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numba
import numpy as np
from _common import emit, progress

import segment
from segment.solvers.batch import random_loads, solve_many

TARGET_PER_S = 10_000


def run(n: int, n_single: int, seed: int) -> dict:
    model = segment.c5c6()
    _ = model.unloaded
    F = random_loads(n, seed=seed)
    solve_many(model, F[:50])  # warm-up: compile / load the numba cache
    solve_many(model, F[:50], q0="reference")
    out = {}
    results = {}
    for start in progress(("predict", "reference"), "bench_batch"):
        print(f"  solve_many, start={start}, N={n}...", file=sys.stderr, flush=True)
        best = None
        for _ in range(3):
            r = solve_many(model, F, q0=start)
            best = r if best is None or r.elapsed < best.elapsed else best
        results[start] = best
        out[f"batch_{start}"] = {
            "seconds": best.elapsed, "per_second": best.rate,
            "converged": int(best.converged.sum()), "failed": best.n_failed,
            "iterations_mean": float(best.iterations.mean()),
            "iterations_max": int(best.iterations.max()),
        }
    print(f"  segment.solve one at a time, {n_single} loads...", file=sys.stderr, flush=True)
    idx = np.linspace(0, n - 1, n_single).astype(int)
    t0 = time.perf_counter()
    singles = [segment.solve(model, segment.Load(F[k, :3], F[k, 3:])) for k in idx]
    t_single = (time.perf_counter() - t0) / n_single
    q_single = np.array([s.q for s in singles])
    ok = np.array([s.converged for s in singles])
    diffs = {start: float(np.max(np.abs(results[start].q[idx][ok] - q_single[ok])))
             for start in results}
    rate = out["batch_predict"]["per_second"]
    return {
        "benchmark": f"solve_many, N = {n} random loads within 2x nominal in any direction",
        "machine": {"python": platform.python_version(), "processor": platform.machine(),
                    "cpu_count": os.cpu_count(), "numba_threads": numba.get_num_threads()},
        **out,
        "single_solve": {"loads": n_single, "seconds_per_solve": t_single,
                         "per_second": 1.0 / t_single, "converged": int(ok.sum())},
        "max_abs_q_difference_vs_single": diffs,
        "summary": {"per_second": rate, "target_per_second": TARGET_PER_S,
                    "meets_target": rate >= TARGET_PER_S,
                    "speedup_vs_single": rate * t_single},
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--n-single", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="also write the JSON to this file")
    args = parser.parse_args(argv)
    report = run(args.n, args.n_single, args.seed)
    emit(report, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
