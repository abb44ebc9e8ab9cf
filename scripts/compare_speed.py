"""Solve and batch speed of two checkouts of segment, measured side by side in one run.

On a shared machine consecutive benchmark runs differ by up to 2x. This script starts one
worker process per checkout (``--old DIR``: a checkout put first on PYTHONPATH; the other is
the importable ``segment``) and alternates short timing batches between them, so both see the
same load: per round, each of the nine Moroney cases solved 20 times (``segment.solve``, as
``benchmarks/bench_solve.py``) and 2000 random loads to 2x nominal by ``solve_many`` from the
linear predictor and from the reference pose (as ``benchmarks/bench_batch.py``). Reported:
new/old ratios of the minimum solve times (robust to interruptions) and of the batch rates.

    git archive <old-commit> | tar -x -C /tmp/old
    NUMBA_NUM_THREADS=1 python scripts/compare_speed.py --old /tmp/old [--rounds 60] [--out F]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

N_LOADS = 2000
SOLVES_PER_CASE = 20


def worker() -> None:
    import numpy as np

    import segment
    from segment.solvers.batch import random_loads, solve_many

    model = segment.c5c6()
    _ = model.unloaded
    cases = dict(segment.LOAD_CASES)
    F = random_loads(N_LOADS, seed=0)
    for load in cases.values():
        segment.solve(model, load)
    solve_many(model, F[:50])
    solve_many(model, F[:50], q0="reference")
    print(json.dumps({"ready": segment.__file__}), flush=True)
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "solve":
            out = {}
            for name, load in cases.items():
                ts = []
                for _ in range(SOLVES_PER_CASE):
                    t0 = time.perf_counter()
                    segment.solve(model, load)
                    ts.append(time.perf_counter() - t0)
                out[name] = [min(ts), float(np.median(ts))]
            print(json.dumps(out), flush=True)
        elif cmd in ("predict", "reference"):
            r = solve_many(model, F, q0=cmd)
            print(json.dumps({"elapsed": r.elapsed, "converged": int(r.converged.sum())}),
                  flush=True)
        else:
            return


def _start(pythonpath: str | None):
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    p = subprocess.Popen([sys.executable, __file__, "--worker"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True, env=env,
                         cwd=pythonpath or str(Path(__file__).resolve().parent.parent))
    ready = json.loads(p.stdout.readline())["ready"]
    return p, ready


def _ask(p, cmd):
    p.stdin.write(cmd + "\n")
    p.stdin.flush()
    return json.loads(p.stdout.readline())


def compare(old_dir: str, rounds: int) -> dict:
    workers, files = {}, {}
    for version, path in (("old", old_dir), ("new", None)):
        workers[version], files[version] = _start(path)
    res = {v: {"solve": [], "predict": [], "reference": []} for v in workers}
    for i in range(rounds):
        order = ("old", "new") if i % 2 == 0 else ("new", "old")
        for cmd in ("solve", "predict", "reference"):
            for v in order:
                res[v][cmd].append(_ask(workers[v], cmd))
    for p in workers.values():
        p.stdin.write("quit\n")
        p.stdin.flush()
        p.wait()
    per_case = {}
    for c in res["old"]["solve"][0]:
        mo = min(x[c][0] for x in res["old"]["solve"])
        mn = min(x[c][0] for x in res["new"]["solve"])
        per_case[c] = {"old_min_us": 1e6 * mo, "new_min_us": 1e6 * mn, "ratio": mn / mo}
    out = {"old": Path(files["old"]).parent.name + " (older copy)",
           "new": Path(files["new"]).parent.name + " (this checkout)", "rounds": rounds,
           "numba_threads": os.environ.get("NUMBA_NUM_THREADS", "default"),
           "solve_min_time_per_case": per_case,
           "solve_time_ratio_new_over_old": (sum(v["new_min_us"] for v in per_case.values())
                                             / sum(v["old_min_us"] for v in per_case.values()))}
    for cmd in ("predict", "reference"):
        eo = [x["elapsed"] for x in res["old"][cmd]]
        en = [x["elapsed"] for x in res["new"][cmd]]
        out[f"batch_{cmd}"] = {
            "old_best_per_s": N_LOADS / min(eo), "new_best_per_s": N_LOADS / min(en),
            "rate_ratio_new_over_old_best": min(eo) / min(en),
            "rate_ratio_new_over_old_paired_median": statistics.median(
                o / n for o, n in zip(eo, en, strict=True))}
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", help="folder of the old checkout")
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--out", default=None)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker()
        return 0
    if not args.old:
        parser.error("--old DIR is required")
    report = compare(args.old, args.rounds)
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
