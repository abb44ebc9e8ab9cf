"""Helpers shared by the benchmark scripts: timing and JSON output."""

from __future__ import annotations

import json
import statistics
import time


def median_time(fn, repeat: int) -> float:
    """Median wall time [s] of ``fn()`` over ``repeat`` calls."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def progress(items, desc: str):
    """``items`` with a progress bar on stderr (tqdm; off when stderr is not a terminal)."""
    from segment._progress import bar

    items = list(items)
    with bar(total=len(items), desc=desc) as pbar:
        for item in items:
            yield item
            pbar.update()


def min_time(fn, repeat: int) -> float:
    """Smallest wall time [s] of ``fn()`` over ``repeat`` calls (least disturbed by other load
    on a shared machine)."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def emit(report: dict, out: str | None) -> None:
    """Print the report as JSON; also write it to ``out`` when given."""
    text = json.dumps(report, indent=2)
    print(text)
    if out:
        with open(out, "w") as fh:
            fh.write(text + "\n")
