"""Benchmark: parameter sets x loads, exact sensitivities, and the Sobol study.

All ratios are measured in one run on the same machine:

* ``sets``: M parameter sets (drawn from data/parameter_space.csv) x the nine cases with
  ``segment.studies.sets.solve_sets`` (one compiled launch per 4096 sets, unloaded equilibria
  included), against looping ``segment.solve_many`` over one ``Segment`` per set
  (``space.apply``) on the first ``--baseline-sets`` of the same sets. Targets: >= 150,000
  equilibria/s on 2 cores, >= 3x the loop.
* ``sensitivities``: ``solve_sets(..., sensitivities=True)`` (dq*/dp for all 21 parameters of
  every equilibrium) against the same solve without, in ``--sens-rounds`` interleaved rounds
  (plain, with, plain, with, ...: both arms under the same machine load); the ratio of the
  median times. Target: <= 2x the solve.
* ``sobol``: ``segment.studies.sobol.sobol_study`` with >= ``--sobol-n`` evaluations x nine cases
  (sampling, solving, indices with bootstrap). Target: <= 30 s for 1e5.

    python benchmarks/bench_study.py [--sets 20000] [--baseline-sets 300]
                                     [--sens-sets 2000] [--sens-rounds 7]
                                     [--sobol-n 100000] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numba
import numpy as np
from _common import emit

import segment
from segment.studies.sets import solve_sets
from segment.studies.sobol import sobol_study
from segment.studies.space import load_space

TARGET_RATE = 150_000
TARGET_LOOP_RATIO = 3.0
TARGET_SENS_RATIO = 2.0
TARGET_SOBOL_S = 30.0
SENS_CHUNK = 512
"""Sets per launch in both arms of the sensitivity ratio (solve_sets' default with
sensitivities)."""


def _best(fn, rounds):
    """``(best time, result of the best run, median time)`` over ``rounds`` runs."""
    best = None
    times = []
    for _ in range(rounds):
        r = fn()
        times.append(r[0])
        best = r if best is None or r[0] < best[0] else best
    return best[0], best[1], float(np.median(times))


def run(n_sets: int, n_baseline: int, n_sens: int, sobol_n: int, rounds: int,
        sens_rounds: int) -> dict:
    model = segment.c5c6()
    space = load_space()
    loads = list(segment.LOAD_CASES.values())
    P = space.sample(n_sets, seed=0)
    solve_sets(model, P[:8], loads)                      # warm-up: compile / load the cache
    solve_sets(model, P[:4], loads, sensitivities=True)
    out = {}

    def sets():
        r = solve_sets(model, P, loads)
        return r.elapsed, r

    print(f"  solve_sets, {n_sets} sets x {len(loads)} cases...", file=sys.stderr, flush=True)
    t_sets, r, t_median = _best(sets, rounds)
    n_eq = n_sets * (len(loads) + 1)
    out["sets"] = {"sets": n_sets, "loads": len(loads), "equilibria": n_eq, "rounds": rounds,
                   "seconds": t_sets, "per_second": n_eq / t_sets,
                   "per_second_median": n_eq / t_median,
                   "converged_fraction": float(r.converged.mean()),
                   "iterations_mean": float(r.iterations.mean())}

    def loop():
        t0 = time.perf_counter()
        qs = []
        for p in P[:n_baseline]:
            m = space.apply(model, p)
            qs.append(segment.solve_many(m, loads).q)
        return time.perf_counter() - t0, np.array(qs)

    print(f"  loop of solve_many over {n_baseline} per-set models...", file=sys.stderr,
          flush=True)
    t_loop, q_loop, _ = _best(loop, rounds)
    loop_rate = n_baseline * (len(loads) + 1) / t_loop
    out["loop_solve_many"] = {"sets": n_baseline, "seconds": t_loop, "per_second": loop_rate,
                              "max_abs_q_difference": float(
                                  np.abs(q_loop - r.q[:n_baseline]).max())}

    Ps = P[:n_sens]

    def plain():
        rr = solve_sets(model, Ps, loads, chunk=SENS_CHUNK)
        return rr.elapsed, rr

    def sens():
        rr = solve_sets(model, Ps, loads, sensitivities=True, chunk=SENS_CHUNK)
        return rr.elapsed, rr

    print(f"  sensitivities, {n_sens} sets, {sens_rounds} interleaved rounds...",
          file=sys.stderr, flush=True)
    # interleaved (plain, sens, plain, sens, ...) so that both see the same machine load;
    # the ratio of the medians, and the median of the per-round ratios
    t_plain, t_sens = [], []
    for _ in range(sens_rounds):
        t_plain.append(plain()[0])
        t, rs = sens()
        t_sens.append(t)
    per_round = [b / a for a, b in zip(t_plain, t_sens, strict=True)]
    ratio = float(np.median(t_sens) / np.median(t_plain))
    out["sensitivities"] = {"sets": n_sens, "parameters": space.dim, "rounds": sens_rounds,
                            "chunk": SENS_CHUNK,
                            "seconds_solve_median": float(np.median(t_plain)),
                            "seconds_solve_and_sensitivities_median": float(np.median(t_sens)),
                            "ratio": ratio,
                            "ratio_per_round_median": float(np.median(per_round)),
                            "ratio_per_round_min_max": [min(per_round), max(per_round)],
                            "finite_fraction": float(np.isfinite(rs.dq_dp).mean())}

    print(f"  Sobol study, >= {sobol_n} evaluations...", file=sys.stderr, flush=True)
    sob = sobol_study(model, space=space, n=sobol_n, seed=0)
    out["sobol"] = {"evaluations": sob.n_evaluations, "n_base": sob.n_base,
                    "equilibria": sob.n_evaluations * (len(loads) + 1),
                    "seconds": sob.elapsed, "failed": sob.n_failed}
    out["summary"] = {
        "sets_per_second": out["sets"]["per_second"], "target_per_second": TARGET_RATE,
        "meets_rate_target": out["sets"]["per_second"] >= TARGET_RATE,
        "speedup_vs_loop": out["sets"]["per_second"] / loop_rate,
        "meets_loop_target": out["sets"]["per_second"] / loop_rate >= TARGET_LOOP_RATIO,
        "sensitivity_cost_ratio": out["sensitivities"]["ratio"],
        "meets_sensitivity_target": out["sensitivities"]["ratio"] <= TARGET_SENS_RATIO,
        "sobol_seconds": sob.elapsed, "sobol_evaluations": sob.n_evaluations,
        "meets_sobol_target": bool(sob.elapsed <= TARGET_SOBOL_S
                                   and sob.n_evaluations >= 100_000),
    }
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", type=int, default=20000)
    ap.add_argument("--baseline-sets", type=int, default=300)
    ap.add_argument("--sens-sets", type=int, default=2000)
    ap.add_argument("--sobol-n", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3,
                    help="runs of the rate and the loop (best and median reported)")
    ap.add_argument("--sens-rounds", type=int, default=7,
                    help="interleaved rounds of the sensitivity ratio (median)")
    ap.add_argument("--out", default=None, help="also write the JSON here")
    a = ap.parse_args(argv)
    report = {
        "benchmark": "parameter sets x nine cases (solve_sets), sensitivities, Sobol study",
        "machine": {"python": platform.python_version(), "processor": platform.machine(),
                    "cpu_count": os.cpu_count(), "numba_threads": numba.get_num_threads(),
                    "load_average_1_5_15": list(os.getloadavg())},
        **run(a.sets, a.baseline_sets, a.sens_sets, a.sobol_n, a.rounds, a.sens_rounds),
    }
    report["machine"]["numba_threading_layer"] = numba.threading_layer()
    report["machine"]["load_average_after"] = list(os.getloadavg())
    emit(report, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
