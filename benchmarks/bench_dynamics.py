"""Benchmark: static equilibrium by Newton vs by dynamic relaxation (the MADYMO-style route).

For each of the nine Moroney cases, in one process after a warm-up that compiles the numba
kernels, the median wall time of reaching the static equilibrium

* by ``segment.solvers.dynamics.relax``: C5 at rest, the load applied as a step, Radau with our
  Jacobian and all of the paper's damping, until the scaled residual and the scaled damping
  force are both below 1e-6 (the MADYMO-style route);
* by ``segment.solve`` (Newton),

compared in matched pairs, each from the same starting state and to the same residual
tolerance (1e-6, the relaxation's criterion). The machine's speed drifts over seconds, so
each case is timed in ``--rounds`` alternating rounds (Newton: median of ``--repeat-newton``
solves; relaxation: median of ``--repeat-relax`` runs); the reported ratio is the median of
the per-round ratios, with their minimum and maximum:

* ``reference``: both start at the reference pose q = 0;
* ``unloaded``: both start from the unloaded equilibrium q_u (relaxation at rest there; q_u
  is computed once per model).

Newton at its default tolerance (1e-10) is reported too. The paper's factor is 350 (MOBILE vs
MADYMO, 5.7 s per MADYMO run on a 175 MHz R10000).

    python benchmarks/bench_dynamics.py [--repeat-newton 200] [--repeat-relax 3] [--rounds 5]
        [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys

import numpy as np
from _common import emit, median_time, progress

import segment
from segment.core.newton import DEFAULT_TOL
from segment.solvers.dynamics import RELAX_TOL, relax

PAPER_RATIO = 350.0



def run(repeat_newton: int, repeat_relax: int, n_rounds: int) -> dict:
    model = segment.c5c6()
    _ = model.unloaded
    for load in segment.LOAD_CASES.values():  # warm-up: compile / load the numba cache
        segment.solve(model, load)
        relax(model, load)
    qu = model.unloaded.q
    zero = np.zeros(6)
    cases = {}
    for name, load in progress(segment.LOAD_CASES.items(), "bench_dynamics"):
        print(f"  {name}...", file=sys.stderr, flush=True)
        s = segment.solve(model, load)
        r = relax(model, load)
        newton = {
            "reference": lambda load=load: segment.solve(model, load, q0=zero, tol=RELAX_TOL),
            "unloaded": lambda load=load: segment.solve(model, load, q0=qu, tol=RELAX_TOL),
            "default_tol_reference": lambda load=load: segment.solve(model, load, q0=zero),
        }
        relaxation = {
            "reference": lambda load=load: relax(model, load),
            "unloaded": lambda load=load: relax(model, load, q0=qu),
        }
        # this VM's speed drifts over seconds: measure in alternating rounds, a ratio per round
        rounds_newton = {k: [] for k in newton}
        rounds_relax = {k: [] for k in relaxation}
        for _ in range(n_rounds):
            for k, fn in newton.items():
                rounds_newton[k].append(median_time(fn, repeat_newton))
            for k, fn in relaxation.items():
                rounds_relax[k].append(median_time(fn, repeat_relax))
        t_newton = {k: statistics.median(v) for k, v in rounds_newton.items()}
        t_relax = {k: statistics.median(v) for k, v in rounds_relax.items()}
        pairs = {"reference": ("reference", "reference"), "unloaded": ("unloaded", "unloaded"),
                 "reference_newton_default_tol": ("reference", "default_tol_reference")}
        round_ratios = {key: [a / b for a, b in zip(rounds_relax[rk], rounds_newton[nk],
                                                      strict=True)]
                        for key, (rk, nk) in pairs.items()}
        d = np.abs(r.q - s.q)
        cases[name] = {
            "newton_ms": {k: 1e3 * v for k, v in t_newton.items()},
            "newton_iterations": {
                "reference": segment.solve(model, load, q0=zero, tol=RELAX_TOL).iterations,
                "unloaded": segment.solve(model, load, q0=qu, tol=RELAX_TOL).iterations,
                "default_tol_reference": segment.solve(model, load, q0=zero).iterations},
            "relax_ms": {k: 1e3 * v for k, v in t_relax.items()},
            "relax_converged": r.converged,
            "relax_simulated_s": r.t_settled,
            "relax_steps": r.steps,
            "ratio": {k: statistics.median(v) for k, v in round_ratios.items()},
            "ratio_min_over_rounds": {k: min(v) for k, v in round_ratios.items()},
            "ratio_max_over_rounds": {k: max(v) for k, v in round_ratios.items()},
            "max_translation_difference_mm": float(d[:3].max()),
            "max_rotation_difference_rad": float(d[3:].max()),
        }
    summary = {"paper_ratio": PAPER_RATIO,
               "all_relaxations_settled": all(c["relax_converged"] for c in cases.values())}
    for key in ("reference", "unloaded", "reference_newton_default_tol"):
        ratios = [c["ratio"][key] for c in cases.values()]
        summary[f"ratio_{key}_min"] = min(ratios)
        summary[f"ratio_{key}_median"] = statistics.median(ratios)
        summary[f"ratio_{key}_all_above_paper"] = all(x > PAPER_RATIO for x in ratios)
        summary[f"ratio_{key}_min_over_rounds"] = min(
            c["ratio_min_over_rounds"][key] for c in cases.values())
    return {
        "benchmark": "static equilibrium: Newton vs dynamic relaxation, nine Moroney cases",
        "machine": {"python": platform.python_version(), "processor": platform.machine(),
                    "cpu_count": os.cpu_count()},
        "settings": {"relax_tol": RELAX_TOL, "relax_integrator": "Radau rtol 1e-3 atol 1e-6",
                     "newton_tol_matched": RELAX_TOL, "newton_tol_default": DEFAULT_TOL,
                     "repeat_newton": repeat_newton, "repeat_relax": repeat_relax,
                     "rounds": n_rounds},
        "cases": cases,
        "summary": summary,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat-newton", type=int, default=200)
    parser.add_argument("--repeat-relax", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5,
                        help="alternating Newton/relaxation rounds; the ratio is their median")
    parser.add_argument("--out", default=None, help="also write the JSON to this file")
    args = parser.parse_args(argv)
    report = run(args.repeat_newton, args.repeat_relax, args.rounds)
    emit(report, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
