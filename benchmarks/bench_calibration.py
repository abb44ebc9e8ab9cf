"""Benchmark: calibration MAP and posterior sampling (issue targets: MAP <= 2 s; >= 1e5
posterior samples <= 60 s on 2 cores).

Ratios are measured in one run on the same machine:

* ``map``: ``segment.studies.calibration.calibrate`` (exact sensitivities as the Jacobian, the
  misfit analysis off) against the same least-squares problem with scipy's 2-point
  finite-difference Jacobian (``jac="2-point"``, 21 extra solves per Jacobian).
* ``posterior``: ``sample_posterior`` with ``--samples`` draws (the walkers' halves evaluated
  in one parameter-set launch each), against evaluating single parameter sets one launch at
  a time on the first ``--baseline`` draws (draws per second). The MCMC diagnostics
  (acceptance, autocorrelation time, kept chain in autocorrelation times, split-R-hat, the
  converged verdict) are recorded with the time.

    python benchmarks/bench_calibration.py [--samples 100000] [--walkers 64]
                                           [--baseline 200] [--repeat 3] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numba
import numpy as np
from _common import emit, median_time

import segment
from segment.studies import calibration as cal
from segment.studies.space import load_space

TARGET_MAP_S = 2.0
TARGET_SAMPLES_S = 60.0


def _map_fd(model, targets, space):
    """The MAP problem of :func:`calibrate` with a finite-difference Jacobian (baseline)."""
    from scipy.optimize import least_squares

    fwd = cal.Forward(model, space, targets, n_threads=1)

    def fun(p):
        y, _, _ = fwd(p[None])
        r_p, _ = cal.prior_residual(space, p)
        return np.concatenate([(y[0] - targets.values) / targets.sd, r_p])

    return least_squares(fun, np.clip(space.nominal, space.lower, space.upper),
                         jac="2-point", bounds=(space.lower, space.upper),
                         x_scale=space.upper - space.lower, ftol=1e-10, xtol=1e-10,
                         gtol=1e-10, max_nfev=100)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=100_000)
    ap.add_argument("--walkers", type=int, default=64)
    ap.add_argument("--baseline", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    model = segment.c5c6()
    space = load_space()
    targets = cal.load_targets()
    load_before = os.getloadavg()
    r = cal.calibrate(model, targets, space=space, misfit_check=False)   # warm-up
    t_map = median_time(lambda: cal.calibrate(model, targets, space=space,
                                              misfit_check=False), args.repeat)
    t0 = time.perf_counter()
    fd = _map_fd(model, targets, space)
    t_fd = time.perf_counter() - t0
    out = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                       "numba_threads": numba.get_num_threads(),
                       "load_average_before": load_before}}
    out["map"] = {"seconds": t_map, "target_seconds": TARGET_MAP_S,
                  "meets_target": t_map <= TARGET_MAP_S, "evaluations": r.nfev,
                  "status": r.message,
                  "baseline_fd_jacobian_seconds": t_fd, "baseline_fd_evaluations": int(fd.nfev),
                  "speedup_vs_fd": t_fd / t_map,
                  "max_abs_difference_vs_fd_map_in_range_widths":
                      float(np.max(np.abs(fd.x - r.x) / (space.upper - space.lower)))}
    steps = max(4, -(-args.samples // args.walkers))
    post = cal.sample_posterior(model, targets, space=space, start=r, n_walkers=args.walkers,
                                n_steps=steps, seed=0)
    fwd = cal.Forward(model, space, targets, n_threads=1)
    draws = post.samples[: args.baseline]
    t0 = time.perf_counter()
    for p in draws:
        fwd(p[None])
    t_one = (time.perf_counter() - t0) / len(draws)
    out["posterior"] = {
        "draws": post.n_samples, "walkers": args.walkers, "steps": steps,
        "seconds": post.elapsed, "target_seconds": TARGET_SAMPLES_S,
        "meets_target": post.elapsed <= TARGET_SAMPLES_S,
        "draws_per_second": post.n_samples / post.elapsed,
        "baseline_one_set_per_launch_draws_per_second": 1.0 / t_one,
        "speedup_vs_one_set_per_launch": t_one * post.n_samples / post.elapsed,
        "acceptance_mean": float(post.acceptance.mean()),
        "autocorr_max_steps": float(np.nanmax(post.autocorr)),
        "autocorr_reliable": post.autocorr_reliable,
        "rhat_max": float(np.nanmax(post.rhat)),
        "kept_over_autocorr_min": float(np.nanmin(post.kept_steps / post.autocorr)),
        "effective_samples_min": float(np.nanmin(post.effective_samples)),
        "converged": post.converged,
        "discard": post.discard, "thin": post.thin}
    out["machine"]["load_average_after"] = os.getloadavg()
    emit(out, args.out)


if __name__ == "__main__":
    main()
