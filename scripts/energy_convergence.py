"""e_R as a convergence study: the energy balance of one run against tolerance, step size and
integrator (issue 32, item 6).

Fritzkowski and Walczak's eq. (55), ``e_R = max |T2 - T2(0) - W| / max T2``
(:mod:`segment.solvers.dynamics.energy`), measures how well an integration keeps the kinetic
energy-work balance. It is a property of the numerical solution, not of the model: it should
fall as the tolerance (Radau) or the step (Lie-Stormer-Verlet) shrinks, at the integrator's
order where the forces are smooth. Comparing it with the paper's own e_R (0.0103, another
model, another solver) tests nothing; this study does what can be tested: e_R, the balance
relative to the energy that flowed (``energy_error``) and the solution's distance from a
reference run, for each integrator and setting, on one run: the published model under the
paper's rear-end base pulse (triangular, 8.5 g peak, 105 ms; ``t_end`` 0.3 s).

Reference solution: Radau at rtol 1e-10, atol 1e-12. ``dq_ref``: the largest difference of
the rotations [deg] and translations [mm] from it at the output times.

Run from the repository root::

    python scripts/energy_convergence.py [--out benchmarks/results/energy_convergence.csv]

About 5 minutes on 2 cores, most of it compiling the kernels in the first Radau and LSV
runs (their ``wall_s`` includes it). The table is in ``docs/dynamics.md``.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd

import segment
from segment.solvers.dynamics import BaseExcitation

T_END_S = 0.3
N_OUTPUT = 301
RUNS = (
    [("Radau", {"rtol": r, "atol": r * 1e-3}) for r in (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8)]
    + [("lsv", {"dt": d}) for d in (4e-5, 2e-5, 1e-5, 5e-6, 2.5e-6)]
    + [("lsv-explicit", {"dt": d}) for d in (2e-5, 1e-5, 5e-6)]
)
"""Integrator and settings of each run; Radau's atol follows its rtol (1e-3 of it, in the
state's units: mm, rad, and their rates)."""
REFERENCE = ("Radau", {"rtol": 1e-10, "atol": 1e-12})


def run(model, pulse, method, settings):
    t0 = time.perf_counter()
    r = segment.simulate(model, None, base_acceleration=pulse, t_end=T_END_S,
                         n_output=N_OUTPUT, method=method, **settings)
    return r, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None, help="CSV of the table (default: print only)")
    args = ap.parse_args()
    model = segment.c5c6()
    pulse = BaseExcitation.triangular(peak_g=8.5, duration_s=0.105)
    ref, ref_wall = run(model, pulse, *REFERENCE)
    if not ref.success:
        raise SystemExit(f"reference run failed: {ref.message}")
    rows = []
    for method, settings in [REFERENCE, *RUNS]:
        r, wall = (ref, ref_wall) if (method, settings) == REFERENCE else run(
            model, pulse, method, settings)
        dq = np.abs(r.q - ref.q) if r.success and r.q.shape == ref.q.shape else None
        rows.append({
            "integrator": method + (" (reference)" if (method, settings) == REFERENCE else ""),
            "rtol": settings.get("rtol", math.nan), "atol": settings.get("atol", math.nan),
            "dt_s": settings.get("dt", math.nan),
            "success": bool(r.success), "steps": int(r.steps),
            "e_R": float(r.e_R), "energy_error": float(r.energy_error),
            "dq_ref_deg": float(np.degrees(dq[:, 3:].max())) if dq is not None else math.nan,
            "dq_ref_mm": float(dq[:, :3].max()) if dq is not None else math.nan,
            "min_ivr_phi_y_deg": float(r.frame["ivr_phi_y_deg"].min()),
            "wall_s": wall})
        print(f"{method:13s} {settings}: e_R {r.e_R:.3g}, steps {r.steps}, {wall:.1f} s",
              flush=True)
    table = pd.DataFrame(rows)
    # observed order of e_R between successive settings of each integrator
    order = []
    for method, g in table.groupby("integrator", sort=False):
        x = g["rtol"] if method.startswith("Radau") else g["dt_s"]
        e = g["e_R"]
        slope = np.log(e.to_numpy()[1:] / e.to_numpy()[:-1]) / np.log(
            x.to_numpy()[1:] / x.to_numpy()[:-1])
        order.extend([math.nan, *slope])
    table["observed_order"] = order
    pd.set_option("display.width", 200)
    print(table.to_string(index=False))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(args.out, index=False, float_format="%.6g", lineterminator="\n")


if __name__ == "__main__":
    main()
