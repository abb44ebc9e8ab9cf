"""Benchmark: cost of one residual / residual-and-Jacobian evaluation inside compiled code.

Times, at each of the nine Moroney equilibria, in a numba loop (no Python call overhead):

* ``residual``: the real-arithmetic residual of :mod:`segment.tangent` (line-search trials);
* ``tangent``: residual and exact Jacobian of :mod:`segment.tangent` (the solver's);
* ``complex_step``: residual and Jacobian by six complex-step evaluations of the whole segment
  (:func:`segment.model._residual_jacobian_complex_step`, the solver's Jacobian before);

and the ratio complex_step / tangent, all in the same run.

    python benchmarks/bench_kernels.py [--n 100000] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import numpy as np
from _common import emit
from numba import njit

import segment
from segment.model import _residual, _residual_jacobian, _residual_jacobian_complex_step


@njit(cache=False)
def _residual_only(x, f, params):
    return _residual(x, f, params)[0]


@njit(cache=False)
def _tangent(x, f, params):
    r, J = _residual_jacobian(x, f, params)
    return r[0] + J[0, 0]


@njit(cache=False)
def _complex_step(x, f, params):
    r, J = _residual_jacobian_complex_step(x, f, params)
    return r[0] + J[0, 0]


@njit(cache=False)
def _loop(kernel, q, f, params, n):
    s = 0.0
    x = q.copy()
    for k in range(n):
        x[5] = q[5] + 1e-15 * (k % 2)      # keep the call from being hoisted out of the loop
        s += kernel(x, f, params)
    return s


KERNELS = {"residual": _residual_only, "tangent": _tangent, "complex_step": _complex_step}


def run(n: int) -> dict:
    model = segment.c5c6()
    params = model._params
    cases = {}
    for name, load in segment.LOAD_CASES.items():
        q = np.array(segment.solve(model, load).q)
        f = load.as_array()
        row = {}
        for key, kernel in KERNELS.items():
            _loop(kernel, q, f, params, 10)             # compile
            t0 = time.perf_counter()
            _loop(kernel, q, f, params, n)
            row[f"{key}_us"] = 1e6 * (time.perf_counter() - t0) / n
        row["ratio_complex_step_over_tangent"] = row["complex_step_us"] / row["tangent_us"]
        row["facet_regimes"] = [s.regime for s in model.state(q).facets]
        cases[name] = row
    ratios = [c["ratio_complex_step_over_tangent"] for c in cases.values()]
    return {
        "benchmark": "residual and Jacobian kernels at the nine equilibria (numba loop)",
        "machine": {"python": platform.python_version(), "processor": platform.machine(),
                    "cpu_count": os.cpu_count()},
        "settings": {"evaluations_per_timing": n},
        "cases": cases,
        "summary": {"ratio_min": min(ratios), "ratio_median": statistics.median(ratios),
                    "tangent_us_max": max(c["tangent_us"] for c in cases.values())},
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--out", default=None, help="also write the JSON to this file")
    args = parser.parse_args(argv)
    emit(run(args.n), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
