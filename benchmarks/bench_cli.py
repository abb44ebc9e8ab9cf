"""Benchmark: cold start of the command line, ``segment solve FLX`` as a whole process.

"Cold" is a new process each time; the numba cache is warm (one untimed run first fills it),
as it is for every run after the first. Each run is timed from spawn to exit, interleaved with
two baselines measured in the same rounds on the same machine:

* ``python``: the interpreter alone (``python -c pass``);
* ``numba floor``: what any numba program pays before its own code runs: importing numpy and
  numba and loading one cached ``@njit`` function (numba's target initialization).

It prints JSON: the median and minimum wall time of each, and ``segment_over_floor`` = what
``segment solve FLX`` costs above the numba floor. Issue 15's target is 0.5 s for the whole
process (0.85 s before it) on an otherwise idle 2-core machine; on a loaded machine compare
the ratio against the floor rather than the absolute time.

    python benchmarks/bench_cli.py [--repeat 15] [--out FILE]
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

TARGET_S = 0.5
BEFORE_ISSUE_15_S = 0.85

FLOOR = """
import numpy
from numba import njit

@njit(cache=True)
def f(x):
    return 2.0 * x

f(1.0)
"""


def _segment_command() -> list[str]:
    script = Path(sys.executable).parent / "segment"
    if script.exists():
        return [str(script), "solve", "FLX", "-q"]
    return [sys.executable, "-m", "segment", "solve", "FLX", "-q"]


def _time(cmd: list[str], cwd: str) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def run(repeat: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        floor_file = os.path.join(tmp, "floor.py")
        Path(floor_file).write_text(FLOOR)
        commands = {"segment solve FLX": _segment_command(),
                    "python": [sys.executable, "-c", "pass"],
                    "numba floor": [sys.executable, floor_file]}
        for cmd in commands.values():           # warm-up: fills the numba caches
            _time(cmd, tmp)
        times = {name: [] for name in commands}
        for _ in progress(range(repeat), "bench_cli"):   # interleaved: same load for all three
            for name, cmd in commands.items():
                times[name].append(_time(cmd, tmp))
    summary = {name: {"median_s": statistics.median(t), "min_s": min(t)}
               for name, t in times.items()}
    seg, floor = summary["segment solve FLX"], summary["numba floor"]
    return {
        "benchmark": "cold start of `segment solve FLX` (new process, warm numba cache)",
        "machine": platform.machine(), "python": platform.python_version(),
        "cpu_count": os.cpu_count(), "repeat": repeat,
        "runs": summary,
        "segment_over_floor_median_s": seg["median_s"] - floor["median_s"],
        "ratio_to_floor_median": seg["median_s"] / floor["median_s"],
        "target_s": TARGET_S, "before_issue_15_s": BEFORE_ISSUE_15_S,
        "meets_target_min": seg["min_s"] <= TARGET_S,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    emit(run(args.repeat), args.out)


if __name__ == "__main__":
    main()
