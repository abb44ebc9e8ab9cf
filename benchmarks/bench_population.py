"""Benchmark: ``segment calibrate --population`` end to end (issue 32 goal on the 2-core
machine: under 2 minutes): the hierarchical calibration, 200 members drawn, their responses,
facetectomy states and failure ramps, and 200 data folders written. One process per run (a
cold start of the command, as a user sees it), wall-clock time; the phases are timed in
process on the last run.

    python benchmarks/bench_population.py [--repeat 1] [--labs new nightingale2002]
                                          [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time

from _common import emit

TARGET_S = 120.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--labs", nargs="+", default=["new", "nightingale2002"],
                    help="labs to time the command for (the first also by phases)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    times = {}
    for lab in args.labs:
        times[lab] = []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as tmp:
                cmd = [sys.executable, "-m", "segment", "calibrate", "--population", "--out",
                       os.path.join(tmp, "pop"), "--lab", lab]
                t0 = time.perf_counter()
                subprocess.run(cmd, check=True, capture_output=True)
                times[lab].append(time.perf_counter() - t0)
    lab0 = None if args.labs[0] == "new" else args.labs[0]
    import segment
    from segment.studies import virtual_population as vp
    from segment.studies.calibration.hierarchical import fit_population
    from segment.studies.population_limits import validity_limits
    from segment.studies.population_result import write_members
    from segment.studies.population_tables import member_table, ramp_table
    from segment.studies.specimens import load_specimens

    phases = {}
    t = time.perf_counter()
    model = segment.c5c6()
    data = load_specimens()
    fit = fit_population(model, data)
    phases["calibration_s"] = time.perf_counter() - t
    t = time.perf_counter()
    P, _ = vp.draw_members(fit, model, vp.MEMBERS, lab=lab0)
    phases["draw_s"] = time.perf_counter() - t
    t = time.perf_counter()
    table = member_table(fit, model, P, lab=lab0 or "new", ramps=False)
    phases["responses_and_states_s"] = time.perf_counter() - t
    t = time.perf_counter()
    ramp_table(vp.member_models(fit, model, P), limits=validity_limits(data))
    phases["ramps_s"] = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        write_members(vp.member_models(fit, model, P), model, tmp, note="bench",
                      limits=validity_limits(data))
        phases["write_s"] = time.perf_counter() - t
    emit({"benchmark": "population", "members": len(table), "wall_s": times,
          "target_s": TARGET_S,
          "meets_target": max(max(v) for v in times.values()) < TARGET_S,
          "phases_lab": args.labs[0],
          "sweeps": fit.sweeps, "phases": phases, "cpu_count": os.cpu_count(),
          "machine": platform.machine(), "python": platform.python_version()}, args.out)


if __name__ == "__main__":
    main()
