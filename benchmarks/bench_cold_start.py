"""Benchmark: what a person waits for, each beside a reference measured in the same run.

Every command runs as a whole new process. The reference is the import of the scientific
stack the package builds on, ``python -c "import numpy, scipy.optimize, pandas"``: each figure
is also given as a ratio to it, so the numbers of two machines (or two loads of one machine)
compare.

* ``solve FLX``, ``validate``: "cold" is a first run after installation: an empty numba cache
  (a new ``XDG_CACHE_HOME``) and no bytecode of this package (its ``__pycache__`` folders
  removed); "warm" runs the same command again. The kernels are precompiled at installation
  (``segment.jit``), so cold and warm differ by Python's bytecode compile only; the numba
  route is timed too (``--numba``: the precompiled module hidden, every kernel compiled).
* ``--tests``: the README's test command (read from the README's ``test-command`` block, as
  ``.ci/run`` reads it: everything, two pytest-xdist workers) and the fast tier (the same
  command with ``-m "not slow"``), once each.

    python benchmarks/bench_cold_start.py [--repeat 3] [--skip-validate] [--numba] [--tests]
                                          [--out FILE]

Prints JSON: per figure the median and each run [s], and the ratio to the reference.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import emit, progress

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = [sys.executable, "-c", "import numpy, scipy.optimize, pandas"]
EXIT_CODES: list[int] = []
"""Exit code of each command :func:`_run` ran, in order."""


def _segment() -> list[str]:
    script = Path(sys.executable).parent / "segment"
    return [str(script)] if script.exists() else [sys.executable, "-m", "segment"]


def _clear_bytecode() -> None:
    import segment

    for folder in Path(segment.__file__).resolve().parent.rglob("__pycache__"):
        shutil.rmtree(folder, ignore_errors=True)


def _run(argv: list[str], *, cache: str, cwd: str, env_extra: dict | None = None,
         check: bool = True) -> float:
    """Wall time [s] of ``argv``; with ``check=False`` a failing command is timed too and
    its exit code is left in :data:`EXIT_CODES` (a test run that fails is still a time)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "SEGMENT_CACHE_DIR")}   # both under XDG_CACHE_HOME
    env["XDG_CACHE_HOME"] = cache
    env.update(env_extra or {})
    t0 = time.perf_counter()
    run = subprocess.run(argv, cwd=cwd, env=env, check=check, stdout=subprocess.DEVNULL)
    EXIT_CODES.append(run.returncode)
    return time.perf_counter() - t0


def readme_test_command() -> list[str]:
    """The README's test command (its ``test-command`` block, as ``.ci/run`` reads it), split
    into words: ``[".venv/bin/python", "-m", "pytest", ...]``."""
    import shlex

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("<!-- test-command -->", 1)[1].split("```bash\n", 1)[1]
    return shlex.split(block.split("```", 1)[0].strip())


def _figure(runs: list[float], reference: float) -> dict:
    median = statistics.median(runs)
    return {"median_s": round(median, 2), "runs_s": [round(t, 2) for t in runs],
            "ratio_to_reference": round(median / reference, 1)}


def _hidden_module():
    """Context: the precompiled module renamed away, so every kernel goes through numba."""
    import contextlib
    import importlib.util

    @contextlib.contextmanager
    def hide():
        spec = importlib.util.find_spec("segment.jit._aot")
        if spec is None or spec.origin is None:
            yield
            return
        path = Path(spec.origin)
        away = path.with_name(path.name + ".hidden")
        path.rename(away)
        try:
            yield
        finally:
            away.rename(path)
    return hide()


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="cold and warm runs per command")
    ap.add_argument("--skip-validate", action="store_true", help="time `segment solve FLX` only")
    ap.add_argument("--numba", action="store_true",
                    help="also time the numba route (the precompiled module hidden)")
    ap.add_argument("--tests", action="store_true",
                    help="also time the README's test command and the fast tier (minutes)")
    ap.add_argument("--out", default=None, help="also write the JSON here")
    args = ap.parse_args(argv)
    commands = {"solve FLX": ["solve", "FLX"]}
    if not args.skip_validate:
        commands["validate"] = ["validate", "--out", "report"]
    with tempfile.TemporaryDirectory() as cache:
        reference_runs = [_run(REFERENCE, cache=cache, cwd=str(ROOT))
                          for _ in range(max(3, args.repeat))]
    reference = statistics.median(reference_runs)
    result = {"machine": platform.machine(), "cpus": os.cpu_count(),
              "python": platform.python_version(), "repeat": args.repeat,
              "reference": {"command": "python -c 'import numpy, scipy.optimize, pandas'",
                            "median_s": round(reference, 3),
                            "runs_s": [round(t, 3) for t in reference_runs]},
              "figures": {}}
    routes = [("precompiled", None)] + ([("numba", _hidden_module)] if args.numba else [])
    for route, context in routes:
        for name, cmd in commands.items():
            cold, warm = [], []
            for _ in progress(range(args.repeat), f"{name} ({route}) cold and warm"):
                with tempfile.TemporaryDirectory() as cache, \
                        tempfile.TemporaryDirectory() as cwd:
                    if context is not None:
                        with context():
                            _clear_bytecode()
                            cold.append(_run([*_segment(), "-q", *cmd], cache=cache, cwd=cwd))
                            warm.append(_run([*_segment(), "-q", *cmd], cache=cache, cwd=cwd))
                    else:
                        _clear_bytecode()
                        cold.append(_run([*_segment(), "-q", *cmd], cache=cache, cwd=cwd))
                        warm.append(_run([*_segment(), "-q", *cmd], cache=cache, cwd=cwd))
            result["figures"][f"{name} cold ({route})"] = _figure(cold, reference)
            result["figures"][f"{name} warm ({route})"] = _figure(warm, reference)
    if args.tests:
        command = readme_test_command()
        pytest = [sys.executable, *command[1:], "-q", "-p", "no:cacheprovider"]
        shown = " ".join(command[1:])
        for name, extra in ((f"tests: fast tier ({shown} -m 'not slow')", ["-m", "not slow"]),
                            (f"tests: README command ({shown})", [])):
            with tempfile.TemporaryDirectory() as cache:
                t = _run([*pytest, *extra], cache=cache, cwd=str(ROOT), check=False)
            result["figures"][name] = {**_figure([t], reference), "exit_code": EXIT_CODES[-1]}
    emit(result, args.out)
    return result


if __name__ == "__main__":
    main()
