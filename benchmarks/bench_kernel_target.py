"""Benchmark: what the precompiled kernels (generic x86-64 CPU) cost per solve against numba's
kernels compiled for this machine's CPU, in the same process.

The package precompiles its kernels for LLVM's ``generic`` x86-64 CPU (``segment.jit``): SSE2,
no AVX or FMA, so the code runs, and gives the same bits, on every x86-64 machine. numba's JIT
would compile them for this CPU instead. Both are timed here on the same calls: the nine load
cases solved one at a time (``segment.solve``'s kernel, ``_solve_predicted``) and the nine as
a batch (``solve_many``'s kernel on one thread). The ratio host / generic is the speed a
host compile would buy (below 1: the host code is faster).

    python benchmarks/bench_kernel_target.py [--repeat 2000] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import platform

import numpy as np
from _common import emit, min_time

import segment
from segment.core.newton import _solve_predicted
from segment.jit import status


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2000, help="calls per timing")
    ap.add_argument("--out", default=None, help="also write the JSON here")
    args = ap.parse_args(argv)
    if not status()["precompiled"]:
        raise SystemExit(f"no precompiled kernels to compare: {status()['reason']}")
    model = segment.c5c6()
    loads = [segment.LOAD_CASES[c] for c in segment.LOAD_CASES]

    def calls(route):
        arg_sets = [(model._packed, load._vector, np.zeros(6), True, model._predictor, 1e-10,
                     60, np.empty((300, 3))) for load in loads]
        fns = [(_solve_predicted.precompiled_for(a) if route == "generic"
                else _solve_predicted.dispatcher) for a in arg_sets]
        assert all(f is not None for f in fns)

        def run():
            for f, a in zip(fns, arg_sets, strict=True):
                f(*a)
        return run

    for route in ("generic", "host"):           # compile / load both before timing
        calls(route)()
    generic = calls("generic")
    host = calls("host")
    same = all(np.array_equal(_solve_predicted.precompiled_for(a)(*a)[0],
                              _solve_predicted.dispatcher(*a)[0])
               for a in [(model._packed, load._vector, np.zeros(6), True, model._predictor,
                          1e-10, 60, np.empty((300, 3))) for load in loads])
    t_generic, t_host = [], []
    for _ in range(5):       # interleaved rounds: both see the same machine load
        t_generic.append(min_time(generic, args.repeat // 5 or 1))
        t_host.append(min_time(host, args.repeat // 5 or 1))
    per_solve_generic = min(t_generic) / len(loads) * 1e6
    per_solve_host = min(t_host) / len(loads) * 1e6
    report = {
        "machine": platform.machine(), "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "per_solve_us": {"precompiled_generic": round(per_solve_generic, 2),
                         "numba_host": round(per_solve_host, 2)},
        "host_over_generic": round(per_solve_host / per_solve_generic, 3),
        "identical_q": bool(same),
    }
    emit(report, args.out)
    return report


if __name__ == "__main__":
    main()
