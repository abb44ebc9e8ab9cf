"""Benchmark: Lie-Stormer-Verlet against Radau (conservation, order, cost, stiffness).

Four measurements, in one process after a warm-up that compiles the numba kernels:

* ``free_body``: a torque-free rigid body (principal moments 0.23, 0.30, 0.45 N mm s^2,
  spinning at (20, -10, 300) rad/s in its body frame) over ``--free-steps`` steps of 1e-5 s,
  both variants: largest relative change of the spatial angular momentum and of the kinetic
  energy, largest |R^T R - 1|, and the energy error in the first and the last tenth (drift).
* ``free_c5``: C5 without elements, spinning (as in the tests) for ``--free-t-end`` seconds
  through ``simulate``: Radau at rtol 1e-6 and 1e-10 against both LSV variants at 1e-5 s:
  the largest relative change of the kinetic energy and the angular momentum, and the cost
  (Radau integrates the Cardan angles, which are singular at phi_y = +-90 deg; LSV the
  rotation itself).
* ``convergence``: C5 under the seed paper's triangular pulse (8.5 g, 105 ms) and under the
  EXT step load, by LSV at halving steps against Radau at rtol 1e-11 (the reference): the
  largest error of q over the output times [mm, rad], the observed order
  log2(e(dt) / e(dt/2)), and e_R of eq. (55).
* ``cost``: the whiplash run of ``segment simulate --base-pulse triangular --peak-g 8.5
  --duration 0.105 --t-end 0.3`` (301 output times) by Radau at its default rtol 1e-6 and by
  both LSV variants at the default step 1e-5 s, timed in ``--rounds`` alternating rounds (the
  ratio is the median of the per-round ratios); each run's error against the reference and its
  e_R; and LSV at the largest step of the convergence table whose error does not exceed
  Radau's (equal accuracy).
* ``stiff``: the stiffest case, EXT x 3 (both facets in contact): the largest natural
  frequency omega_max of M^-1 K at the equilibrium, the explicit stability limit 2 / omega_max
  of the elastic forces, and LSV at steps up to 1 ms with and without damping (success, e_R,
  error against Radau at rtol 1e-10).

    python benchmarks/bench_lsv.py [--free-steps 100000] [--rounds 5] [--t-end 0.3]
        [--conv-t-end 0.12] [--dts 4e-5 2e-5 1e-5 5e-6 2.5e-6] [--stiff-t-end 0.1]
        [--free-t-end 1] [--out FILE]
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import platform
import statistics
import time

import numpy as np
from _common import emit

import segment
from segment.solvers.dynamics import BaseExcitation, free_rigid_body, mass_matrix, simulate

FREE_INERTIA = (0.23, 0.30, 0.45)
FREE_OMEGA = (20.0, -10.0, 300.0)


def free_body(n_steps: int) -> dict:
    out = {}
    for variant in ("implicit", "explicit"):
        free_rigid_body(FREE_INERTIA, FREE_OMEGA, dt=1e-5, n_steps=10, variant=variant)
        t0 = time.perf_counter()
        r = free_rigid_body(FREE_INERTIA, FREE_OMEGA, dt=1e-5, n_steps=n_steps,
                            variant=variant, stride=10)
        wall = time.perf_counter() - t0
        E, L = r["energy"], r["angular_momentum"]
        dE = np.abs(E - E[0]) / E[0]
        dL = np.linalg.norm(L - L[0], axis=1) / np.linalg.norm(L[0])
        tenth = max(1, len(dE) // 10)
        out[variant] = {
            "steps": n_steps, "dt_s": 1e-5, "success": bool(r["success"]),
            "max_relative_angular_momentum_change": float(dL.max()),
            "max_orthogonality_error": float(r["orthogonality"].max()),
            "max_relative_energy_error": float(dE.max()),
            "energy_error_first_tenth": float(dE[:tenth].max()),
            "energy_error_last_tenth": float(dE[-tenth:].max()),
            "wall_s": wall,
        }
    return out


def free_c5(model, t_end: float) -> dict:
    """C5 without elements, spun at (10, -5, 3) mm/s and (20, -10, 300) rad/s about the joint
    axes, through ``simulate``: Radau (default and tight tolerances) vs LSV."""
    from segment.solvers.dynamics import angular_momentum, kinetic_energy

    free = model.replace(ligaments=(), facets=())
    qd0 = np.array([10.0, -5.0, 3.0, 20.0, -10.0, 300.0])
    runs = {"radau_rtol_1e-6": {}, "radau_rtol_1e-10": {"rtol": 1e-10, "atol": 1e-12},
            "lsv": {"method": "lsv", "dt": 1e-5},
            "lsv-explicit": {"method": "lsv-explicit", "dt": 1e-5}}
    out = {"t_end_s": t_end}
    for kw in runs.values():             # warm-up: compile or load the cache for this case
        simulate(free, None, t_end=1e-3, qd0=qd0, elements=False, n_output=3, **kw)
    for name, kw in runs.items():
        t0 = time.perf_counter()
        r = simulate(free, None, t_end=t_end, qd0=qd0, elements=False, n_output=101, **kw)
        wall = time.perf_counter() - t0
        row = {"settings": kw or {"rtol": 1e-6}, "success": r.success, "message": r.message,
               "wall_s": wall, "steps": r.steps}
        if len(r.t) > 1:
            T = np.array([kinetic_energy(q, qd) for q, qd in zip(r.q, r.qd, strict=True)])
            L = np.array([angular_momentum(q, qd) for q, qd in zip(r.q, r.qd, strict=True)])
            row.update({"t_reached_s": float(r.t[-1]),
                        "max_relative_energy_change": float(np.max(np.abs(T - T[0])) / T[0]),
                        "max_relative_angular_momentum_change": float(
                            np.max(np.linalg.norm(L - L[0], axis=1)) / np.linalg.norm(L[0])),
                        "max_abs_phi_y_deg": float(np.degrees(np.max(np.abs(r.q[:, 4]))))})
        out[name] = row
    return out


def _error(r, ref) -> tuple[float, float]:
    d = np.abs(r.q - ref.q)
    return float(d[:, :3].max()), float(d[:, 3:].max())


def convergence(model, t_end: float, dts: list[float]) -> dict:
    pulse = BaseExcitation.triangular(peak_g=8.5, duration_s=0.105)
    runs = {"pulse": {"load": None, "base_acceleration": pulse},
            "ext_step": {"load": segment.LOAD_CASES["EXT"], "base_acceleration": None}}
    n_output = round(t_end / 1e-3) + 1
    out = {}
    for name, kw in runs.items():
        ref = simulate(model, kw["load"], base_acceleration=kw["base_acceleration"],
                       t_end=t_end, n_output=n_output, rtol=1e-11, atol=1e-14)
        case = {"reference": {"method": "Radau", "rtol": 1e-11, "e_R": ref.e_R,
                              "steps": ref.steps}, "t_end_s": t_end}
        for method in ("lsv", "lsv-explicit"):
            rows = []
            for dt in dts:
                r = simulate(model, kw["load"], base_acceleration=kw["base_acceleration"],
                             t_end=t_end, n_output=n_output, method=method, dt=dt)
                mm, rad = _error(r, ref)
                rows.append({"dt_s": dt, "success": r.success, "error_mm": mm,
                             "error_rad": rad, "e_R": r.e_R})
            for a, b in itertools.pairwise(rows):
                ratio = a["dt_s"] / b["dt_s"]
                b["observed_order_mm"] = math.log(a["error_mm"] / b["error_mm"], ratio)
                b["observed_order_rad"] = math.log(a["error_rad"] / b["error_rad"], ratio)
                b["observed_order_e_R"] = math.log(a["e_R"] / b["e_R"], ratio)
            case[method] = rows
        out[name] = case
    return out


def cost(model, t_end: float, rounds: int, conv: dict) -> dict:
    pulse = BaseExcitation.triangular(peak_g=8.5, duration_s=0.105)
    n_output = round(t_end / 1e-3) + 1
    kw = {"base_acceleration": pulse, "t_end": t_end, "n_output": n_output}
    ref = simulate(model, None, rtol=1e-11, atol=1e-14, **kw)
    runs = {"radau": {}, "lsv": {"method": "lsv"}, "lsv-explicit": {"method": "lsv-explicit"}}
    # equal accuracy: the largest LSV step of the convergence table not less accurate than Radau
    radau = simulate(model, None, **kw)
    radau_err = _error(radau, ref)
    table = conv.get("pulse", {}).get("lsv", [])
    matched = [row["dt_s"] for row in table
               if row["error_mm"] <= radau_err[0] and row["error_rad"] <= radau_err[1]]
    if matched:
        runs["lsv-equal-accuracy"] = {"method": "lsv", "dt": max(matched)}
    times = {k: [] for k in runs}
    results = {}
    for k, extra in runs.items():         # warm-up and results
        results[k] = simulate(model, None, **kw, **extra)
    for _ in range(rounds):
        for k, extra in runs.items():
            t0 = time.perf_counter()
            simulate(model, None, **kw, **extra)
            times[k].append(time.perf_counter() - t0)
    out = {"run": f"8.5 g triangular pulse, 105 ms, t_end {t_end} s, {n_output} outputs",
           "rounds": rounds}
    for k, extra in runs.items():
        r = results[k]
        mm, rad = _error(r, ref)
        out[k] = {"settings": {key: v for key, v in extra.items()} or {"rtol": 1e-6},
                  "median_s": statistics.median(times[k]), "min_s": min(times[k]),
                  "steps": r.steps, "force_evaluations": r.nfev, "error_mm": mm,
                  "error_rad": rad, "e_R": r.e_R, "success": r.success}
        if k != "radau":
            ratios = [a / b for a, b in zip(times[k], times["radau"], strict=True)]
            out[k]["time_ratio_to_radau_median"] = statistics.median(ratios)
            out[k]["time_ratio_to_radau_min"] = min(ratios)
            out[k]["time_ratio_to_radau_max"] = max(ratios)
    return out


def stiff(model, t_end: float) -> dict:
    load = segment.LOAD_CASES["EXT"].scaled(3.0)
    s = segment.solve(model, load)
    K = -model.jacobian(s.q, load)
    M = mass_matrix(s.q, model=model)
    omega = np.sort(np.sqrt(np.abs(np.linalg.eigvals(np.linalg.solve(M, K)).real)))
    facets = [f.regime for f in s.state.facets]
    ref = simulate(model, load, t_end=t_end, n_output=51, rtol=1e-10, atol=1e-13,
                   rupture=False)
    t0 = time.perf_counter()
    simulate(model, load, t_end=t_end, n_output=51, rupture=False)
    radau_s = time.perf_counter() - t0
    rows = []
    for damping in (True, False):
        ref_d = ref if damping else simulate(model, load, t_end=t_end, n_output=51, rtol=1e-10,
                                             atol=1e-13, rupture=False, damping=False)
        for dt in (1e-5, 1e-4, 4e-4, 1e-3):
            t0 = time.perf_counter()
            r = simulate(model, load, t_end=t_end, n_output=51, method="lsv", dt=dt,
                         rupture=False, damping=damping)
            wall = time.perf_counter() - t0
            mm, rad = _error(r, ref_d) if len(r.t) == len(ref_d.t) else (math.nan, math.nan)
            rows.append({"damping": damping, "dt_s": dt, "dt_times_omega_max":
                         dt * float(omega[-1]), "success": r.success, "message": r.message,
                         "e_R": r.e_R, "error_mm": mm, "error_rad": rad, "wall_s": wall})
    return {"case": f"EXT x 3, step, t_end {t_end} s", "facets_at_equilibrium": facets,
            "natural_frequencies_rad_s": omega.tolist(),
            "explicit_stability_limit_s": 2.0 / float(omega[-1]),
            "radau_default_wall_s": radau_s, "lsv": rows}


def run(n_free: int, rounds: int, t_end: float, conv_t_end: float, dts: list[float],
        stiff_t_end: float, free_t_end: float) -> dict:
    model = segment.c5c6()
    pulse = BaseExcitation.triangular(peak_g=8.5, duration_s=0.105)
    for method in ("Radau", "lsv", "lsv-explicit"):      # warm-up: compile or load the cache
        simulate(model, None, base_acceleration=pulse, t_end=0.002, n_output=3, method=method)
    conv = convergence(model, conv_t_end, dts)
    return {
        "benchmark": "Lie-Stormer-Verlet vs Radau: conservation, order, cost, stiffness",
        "machine": {"python": platform.python_version(), "processor": platform.machine(),
                    "cpu_count": os.cpu_count()},
        "free_body": free_body(n_free),
        "free_c5": free_c5(model, free_t_end),
        "convergence": conv,
        "cost": cost(model, t_end, rounds, conv),
        "stiff": stiff(model, stiff_t_end),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--free-steps", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--t-end", type=float, default=0.3, help="whiplash run [s]")
    parser.add_argument("--conv-t-end", type=float, default=0.12,
                        help="convergence runs [s] (the pulse and the first swing)")
    parser.add_argument("--dts", type=float, nargs="+",
                        default=[4e-5, 2e-5, 1e-5, 5e-6, 2.5e-6])
    parser.add_argument("--stiff-t-end", type=float, default=0.1, help="stiff case runs [s]")
    parser.add_argument("--free-t-end", type=float, default=1.0,
                        help="free spinning C5 through simulate [s]")
    parser.add_argument("--out", default=None, help="also write the JSON to this file")
    args = parser.parse_args(argv)
    emit(run(args.free_steps, args.rounds, args.t_end, args.conv_t_end, args.dts,
             args.stiff_t_end, args.free_t_end), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
