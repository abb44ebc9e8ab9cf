"""Benchmark: the first run on a new machine, when numba compiles every kernel, against later
runs with the kernels cached, for ``segment solve FLX`` and ``segment validate``.

Each command runs as a whole new process. "Cold" points ``XDG_CACHE_HOME`` at an empty
temporary folder (where ``segment`` keeps its compiled kernels: ``segment/_jit_cache.py``), so
numba compiles everything, as on a fresh install; "warm" runs the same command again with that
folder filled. The README's timings and the compile notice of the command line
(``segment._jit_cache.COLD_COMPILE_S``) quote this script.

    python benchmarks/bench_cold_start.py [--repeat 3] [--skip-validate] [--out FILE]

Prints JSON: per command the cold and warm wall times [s] (median and each run).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import emit, progress


def _segment() -> list[str]:
    script = Path(sys.executable).parent / "segment"
    return [str(script)] if script.exists() else [sys.executable, "-m", "segment"]


def _time(argv: list[str], *, cache: str, cwd: str) -> float:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = cache
    t0 = time.perf_counter()
    subprocess.run([*_segment(), "-q", *argv], cwd=cwd, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="cold and warm runs per command")
    ap.add_argument("--skip-validate", action="store_true",
                    help="time `segment solve FLX` only (validate takes about a minute cold)")
    ap.add_argument("--out", default=None, help="also write the JSON here")
    args = ap.parse_args(argv)
    commands = {"solve FLX": ["solve", "FLX"]}
    if not args.skip_validate:
        commands["validate"] = ["validate", "--out", "report"]
    result = {"machine": platform.machine(), "cpus": os.cpu_count(),
              "python": platform.python_version(), "repeat": args.repeat, "commands": {}}
    for name, cmd in commands.items():
        cold, warm = [], []
        for _ in progress(range(args.repeat), f"{name} cold and warm"):
            with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as cwd:
                cold.append(_time(cmd, cache=cache, cwd=cwd))
                warm.append(_time(cmd, cache=cache, cwd=cwd))
        result["commands"][name] = {
            "cold_s": round(statistics.median(cold), 2),
            "warm_s": round(statistics.median(warm), 2),
            "cold_runs_s": [round(t, 2) for t in cold],
            "warm_runs_s": [round(t, 2) for t in warm]}
    emit(result, args.out)
    return result


if __name__ == "__main__":
    main()
