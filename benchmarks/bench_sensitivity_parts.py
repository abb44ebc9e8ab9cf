"""Benchmark: where the cost of the exact sensitivities dq*/dp goes (bench_study.py's ratio).

All in one run:

* ``pack_derivative``: the packed arrays' derivative by every parameter for one chunk of sets
  (``ParameterSpace.pack_derivative``, compiled from the space's plan; timed on one thread and
  on all) against the complex step through the numpy ``pack`` it is tested against (one
  complex pack per parameter, numpy on one thread); both exact, the ratio is the speed-up.
* per equilibrium of the nine cases at the nominal set (single-threaded compiled loops): the
  Newton solve from the reference pose (``solve``'s kernel), the Jacobian at the solution,
  dR/dp for all D directions, and the whole sensitivity (LU, dR/dp, solve for D columns)
  given the Jacobian [us].

    python benchmarks/bench_sensitivity_parts.py [--sets 512] [--repeat 2000] [--out FILE]
"""

from __future__ import annotations

import argparse
import platform

import numba
import numpy as np
from _common import emit, median_time
from numba import njit

import segment
from segment.core.newton import solve_kernel
from segment.core.residual import residual_jacobian
from segment.solvers.batch import as_loads
from segment.studies.packing import complex_step_reference
from segment.studies.sensitivity import (
    _equilibrium_sensitivity,
    _residual_parameter_derivative,
    touch_flags,
)
from segment.studies.space import load_space


@njit
def _loop_solve(packed, f, log, n):
    z = np.zeros(6)
    s = 0.0
    for _ in range(n):
        q = solve_kernel(packed, f, z, 1e-10, 60, log)[0]
        s += q[0]
    return s


@njit
def _loop_jacobian(q, f, packed, n):
    s = 0.0
    for _ in range(n):
        s += residual_jacobian(q, f, packed)[1][0, 0]
    return s


@njit
def _loop_dr_dp(q, packed, dg, dl, df, touch, out, n):
    for _ in range(n):
        _residual_parameter_derivative(q, packed, dg, dl, df, touch, out)


@njit
def _loop_sensitivity(q, J, packed, dg, dl, df, touch, out, n):
    for _ in range(n):
        _equilibrium_sensitivity(q, J, packed, dg, dl, df, touch, out)


def run(n_sets: int, repeat: int) -> dict:
    model = segment.c5c6()
    space = load_space()
    P = space.sample(n_sets, seed=0)
    space.pack_derivative(model, P)                              # compile / load the cache
    compiled = median_time(lambda: space.pack_derivative(model, P), 21)
    compiled_1 = median_time(lambda: space.pack_derivative(model, P, n_threads=1), 21)
    reference = median_time(lambda: complex_step_reference(space, model, P), 7)
    out = {"pack_derivative": {"sets": n_sets, "parameters": space.dim,
                               "seconds_compiled": compiled,
                               "seconds_compiled_one_thread": compiled_1,
                               "seconds_complex_step_reference": reference,
                               "speedup": reference / compiled,
                               "speedup_one_thread": reference / compiled_1,
                               "us_per_set_compiled": compiled / n_sets * 1e6,
                               "us_per_set_reference": reference / n_sets * 1e6}}
    packed = model._packed
    dg, dl, df = (x[0] for x in space.pack_derivative(model, space.nominal[None]))
    touch = touch_flags(dg, dl, df)
    cases = list(segment.LOAD_CASES.values())
    F, names = as_loads(cases)
    log = np.zeros((5 * 60, 3))
    sens = np.empty((6, space.dim))
    rows = {}
    for name, f, case in zip(names, F, cases, strict=True):
        q = segment.solve(model, case).q
        _, J = residual_jacobian(q, f, packed)
        loops = [(_loop_solve, (packed, f, log)),                # the last argument: n
                 (_loop_jacobian, (q, f, packed)),
                 (_loop_dr_dp, (q, packed, dg, dl, df, touch, sens)),
                 (_loop_sensitivity, (q, J, packed, dg, dl, df, touch, sens))]
        times = []
        for fn, a in loops:
            fn(*a, 1)                                            # compile
            times.append(median_time(lambda fn=fn, a=a: fn(*a, repeat), 5) / repeat * 1e6)
        rows[name] = dict(zip(("solve_from_reference_us", "jacobian_us", "dr_dp_us",
                               "sensitivity_given_jacobian_us"), times, strict=True))
    out["per_equilibrium"] = rows
    out["per_equilibrium_median"] = {k: float(np.median([r[k] for r in rows.values()]))
                                     for k in next(iter(rows.values()))}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", type=int, default=512, help="sets per pack_derivative call")
    ap.add_argument("--repeat", type=int, default=2000, help="calls per timed loop")
    ap.add_argument("--out", help="write the JSON here (default: print only)")
    args = ap.parse_args()
    result = {"benchmark": "sensitivity parts: pack derivative, Jacobian, dR/dp",
              "machine": {"cpus": numba.config.NUMBA_NUM_THREADS,
                          "python": platform.python_version(), "numba": numba.__version__},
              **run(args.sets, args.repeat)}
    emit(result, args.out)


if __name__ == "__main__":
    main()
