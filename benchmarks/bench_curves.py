"""Benchmark: calibration to specimen curves (issue 22 goals on the 2-core machine:
per-specimen calibration of the 8 Nightingale specimens, both directions, <= 20 s; population
MAP <= 5 s; population posterior, 1e5 draws, <= 60 s).

Baselines measured in the same run:

* ``each`` and ``population_map``: :func:`calibrate_each` / :func:`calibrate_curves` (exact
  dq*/dp of every curve point as the Jacobian) against the same least-squares problems, same
  solver (:mod:`segment.studies.calibration.lm`) and starts, with a 2-point
  finite-difference Jacobian (D more curve evaluations per Jacobian).
* ``continuation``: the curves of the per-specimen MAP sets followed by continuation
  (:mod:`segment.studies.paths`: each point from the previous ones) against solving every
  point on its own as :func:`segment.solve_sets` does (from the nominal set's equilibrium
  moved by its sensitivities, then ``solve``'s own path): Newton iterations per point and time.
* ``posterior``: :func:`sample_curve_posterior` (each step's walkers in one parallel launch)
  against one set per launch on the first ``--baseline`` draws (draws per second). The MCMC
  diagnostics are recorded with the time.

    python benchmarks/bench_curves.py [--form neutral-zone] [--samples 100000]
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
from segment.studies.calibration.curve_fit import (
    calibrate_curves,
    calibrate_each,
    prior_starts,
)
from segment.studies.calibration.curve_forward import CurveForward
from segment.studies.calibration.curve_posterior import sample_curve_posterior
from segment.studies.calibration.curve_targets import CurveTargets
from segment.studies.calibration.lm import least_squares_bounded
from segment.studies.calibration.prior import prior_residual
from segment.studies.curves import load_curves, mode_load
from segment.studies.forms import load_form
from segment.studies.paths import solve_paths
from segment.studies.sets import solve_sets

TARGET_EACH_S = 20.0
TARGET_MAP_S = 5.0
TARGET_POSTERIOR_S = 60.0


def _fd_fit(model, form, targets, starts):
    """The MAP problem of :func:`calibrate_curves`, same solver and starts, with a 2-point
    finite-difference Jacobian (D more curve evaluations per Jacobian; step 1e-7 of each
    range, forward, backward at the upper bound)."""
    space = form.space
    fwd = CurveForward(form.model(model), space, targets, n_threads=1)
    flat = np.flatnonzero(np.array(space.distributions) == "uniform")
    width = space.upper - space.lower
    best = None
    nfev = 0
    for c in np.vstack([space.nominal[None], prior_starts(space, starts)]):
        def fun(p, c=c):
            y, ok, _ = fwd(p[None])
            data = (y[0] - targets.values) / targets.sd if ok[0] else \
                np.full(len(targets), 1e3)
            ridge = 1e-6 * (p - c)[flat] / width[flat]
            return np.concatenate([data, prior_residual(space, p)[0], ridge])

        def jac(p, fun=fun):
            r0 = fun(p)
            J = np.empty((r0.size, space.dim))
            for j in range(space.dim):
                h = 1e-7 * width[j] * (1.0 if p[j] + 1e-7 * width[j] <= space.upper[j]
                                       else -1.0)
                q = p.copy()
                q[j] += h
                J[:, j] = (fun(q) - r0) / h
            return J

        s = least_squares_bounded(fun, jac, np.clip(c, space.lower, space.upper),
                                  space.lower, space.upper, max_nfev=500)
        nfev += s.nfev + s.njev * (space.dim + 1)
        if best is None or s.cost < best.cost:
            best = s
    return best, nfev


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--form", default="neutral-zone")
    ap.add_argument("--samples", type=int, default=100_000)
    ap.add_argument("--baseline", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1,
                    help="threads of the posterior's curve kernel (default 1)")
    ap.add_argument("--specimens", type=int, default=8,
                    help="the first N specimens (8: all; fewer for a smoke run)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    model = segment.c5c6()
    form = load_form(args.form)
    curves = load_curves()
    names = curves.specimens[: args.specimens]
    load_before = os.getloadavg()
    out = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                       "numba_threads": numba.get_num_threads(),
                       "load_average_before": load_before},
           "form": form.name, "specimens": list(names)}

    # per-specimen calibration, both directions
    fits = calibrate_each(curves, form=form, model=model, specimens=names)   # warm-up
    t_each = median_time(lambda: calibrate_each(curves, form=form, model=model,
                                                specimens=names), args.repeat)
    t0 = time.perf_counter()
    fd = [_fd_fit(model, form, CurveTargets.specimen(curves, s), 3) for s in names]
    t_fd = time.perf_counter() - t0
    out["each"] = {
        "seconds": t_each, "target_seconds": TARGET_EACH_S,
        "meets_target": t_each <= TARGET_EACH_S,
        "converged": sum(f.success for f in fits), "evaluations": [f.nfev for f in fits],
        "rms_deg": {f.targets.label: f.rms_deg for f in fits},
        "baseline_fd_jacobian_seconds": t_fd, "speedup_vs_fd": t_fd / t_each,
        "baseline_fd_evaluations": [n for _, n in fd],
        "fd_cost_minus_exact_cost": [float(b.cost - 0.5 * np.sum(
            ((f.prediction - f.targets.values) / f.targets.sd) ** 2)) for (b, _), f in
            zip(fd, fits, strict=True)],
        "note": "fd cost includes the prior and ridge residuals; exact: the data term only"}

    # population MAP
    pop = calibrate_curves(curves, form=form, model=model)
    t_map = median_time(lambda: calibrate_curves(curves, form=form, model=model), args.repeat)
    t0 = time.perf_counter()
    fd_pop, fd_pop_n = _fd_fit(model, form, CurveTargets.population(curves), 3)
    t_fd_pop = time.perf_counter() - t0
    out["population_map"] = {
        "seconds": t_map, "target_seconds": TARGET_MAP_S, "meets_target": t_map <= TARGET_MAP_S,
        "evaluations": pop.nfev, "status": pop.message, "rms_deg": pop.rms_deg,
        "baseline_fd_jacobian_seconds": t_fd_pop, "baseline_fd_evaluations": int(fd_pop_n),
        "speedup_vs_fd": t_fd_pop / t_map,
        "max_abs_difference_vs_fd_map_in_range_widths": float(np.max(
            np.abs(fd_pop.x - pop.x) / (form.space.upper - form.space.lower)))}

    # continuation vs independent solves, on the per-specimen MAP sets
    fm = form.model(model)
    P = np.array([f.x for f in fits if f.success])
    levels = np.round(np.arange(1, 36) * 0.1, 1)
    cont, indep = {}, {}
    for mode in ("flexion", "extension"):
        F = mode_load(mode, levels)
        r = solve_paths(fm, F, space=form.space, P=P, n_threads=1)
        t_c = median_time(lambda F=F: solve_paths(fm, F, space=form.space, P=P, n_threads=1),
                          args.repeat)
        s = solve_sets(fm, P, F, space=form.space, n_threads=1)
        t_s = median_time(lambda F=F: solve_sets(fm, P, F, space=form.space, n_threads=1),
                          args.repeat)
        cont[mode] = (r, t_c)
        indep[mode] = (s, t_s)
    n_pts = P.shape[0] * levels.size * 2
    out["continuation"] = {
        "sets": int(P.shape[0]), "points": int(n_pts),
        "iterations_per_point": float(sum(c[0].iterations.sum() for c in cont.values())
                                      / n_pts),
        "seconds": float(sum(c[1] for c in cont.values())),
        "baseline_independent_iterations_per_point": float(
            sum(s[0].iterations.sum() for s in indep.values()) / n_pts),
        "baseline_independent_seconds": float(sum(s[1] for s in indep.values())),
        "same_equilibria_max_abs_q": float(max(np.abs(cont[m][0].q - indep[m][0].q)
                                               [cont[m][0].converged & indep[m][0].converged]
                                               .max() for m in cont)),
        "converged_fraction": float(np.mean([c[0].converged.mean() for c in cont.values()])),
        "baseline_converged_fraction": float(np.mean([s[0].converged.mean()
                                                      for s in indep.values()]))}

    # population posterior
    post = sample_curve_posterior(pop, samples=args.samples, form=form, model=model, seed=0,
                                  n_threads=args.threads)
    fwd = CurveForward(fm, form.space, pop.targets, n_threads=1)
    draws = post.samples[: args.baseline]
    t0 = time.perf_counter()
    for p in draws:
        fwd(p[None])
    t_one = (time.perf_counter() - t0) / max(len(draws), 1)
    out["posterior"] = {
        "draws": post.n_samples, "walkers": int(post.chain.shape[1]), "threads": args.threads,
        "steps": int(post.chain.shape[0]), "seconds": post.elapsed,
        "target_seconds": TARGET_POSTERIOR_S,
        "meets_target": post.elapsed <= TARGET_POSTERIOR_S,
        "draws_per_second": post.n_samples / post.elapsed,
        "baseline_one_set_per_launch_draws_per_second": 1.0 / t_one,
        "speedup_vs_one_set_per_launch": t_one * post.n_samples / post.elapsed,
        "acceptance_mean": float(post.acceptance.mean()),
        "autocorr_max_steps": float(np.nanmax(post.autocorr)),
        "rhat_max": float(np.nanmax(post.rhat)),
        "kept_over_autocorr_min": float(np.nanmin(post.kept_steps / post.autocorr)),
        "converged": post.converged, "discard": post.discard, "thin": post.thin}
    out["machine"]["load_average_after"] = os.getloadavg()
    emit(out, args.out)


if __name__ == "__main__":
    main()
