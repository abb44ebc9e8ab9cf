"""One arm of a before/after comparison of the parameter-set kernel (prints one JSON line).

Run it alternately on two checkouts of the package (same machine, back to back, so both arms
see the same load), e.g. ``PYTHONPATH=OLD python bench_sets_ab.py old`` then
``python bench_sets_ab.py new``, repeated. Measures the ``solve_sets`` rate on 20,000 sets x
the nine cases (best and median of 3) and the sensitivity cost ratio (2,000 sets, chunk 512,
5 interleaved rounds, ratio of the medians).

    python benchmarks/bench_sets_ab.py LABEL [--sets 20000] [--sens-sets 2000]
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np

import segment
from segment.studies.sets import solve_sets
from segment.studies.space import load_space


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("label")
    ap.add_argument("--sets", type=int, default=20000)
    ap.add_argument("--sens-sets", type=int, default=2000)
    a = ap.parse_args(argv)
    space = load_space()
    model = segment.c5c6()
    loads = list(segment.LOAD_CASES.values())
    P = space.sample(a.sets, seed=0)
    solve_sets(model, P[:8], loads)                       # warm-up: compile / load the cache
    solve_sets(model, P[:4], loads, sensitivities=True)
    load_before = os.getloadavg()
    times = []
    for _ in range(3):
        r = solve_sets(model, P, loads)
        times.append(r.elapsed)
    Ps = P[:a.sens_sets]
    t_plain, t_sens = [], []
    for _ in range(5):
        t_plain.append(solve_sets(model, Ps, loads, chunk=512).elapsed)
        t_sens.append(solve_sets(model, Ps, loads, chunk=512, sensitivities=True).elapsed)
    n_eq = a.sets * (len(loads) + 1)
    print(json.dumps({
        "label": a.label, "rate_best": n_eq / min(times),
        "rate_median": n_eq / float(np.median(times)),
        "iterations_mean": float(r.iterations.mean()), "converged": float(r.converged.mean()),
        "sens_ratio_of_medians": float(np.median(t_sens) / np.median(t_plain)),
        "load_before": list(load_before), "load_after": list(os.getloadavg())}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
