"""Record the kernel entry points the package calls from Python: segment/jit/exports.json.

The precompiled module (:mod:`segment.jit`) holds one entry point per kernel and argument
types called from Python. This script runs what users and the tests run, with a recorder on
every kernel call: the commands and API calls of a user (the validation report, the commands
of the command-line section, the studies and dynamics) and the fast test tier
(``pytest -m "not slow"``, in this process), and writes the calls it saw, sorted, to
``segment/jit/exports.json``. Rerun it when a kernel's arguments change or a new kernel is
called from Python, then rebuild (``python -m segment.jit.build``); ``tests/test_jit.py``
and ``tests/test_clean_checkout.py`` check that a solve and the main job call no kernel the
file lacks.

    .venv/bin/python scripts/record_kernels.py          # writes segment/jit/exports.json
    .venv/bin/python scripts/record_kernels.py --check  # exit 1 if the file would change
    .venv/bin/python scripts/record_kernels.py --no-tests   # the user workloads only
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

from segment.jit import kernel as jit_kernel
from segment.jit.build import EXPORTS
from segment.jit.types import to_json, type_key

ROOT = Path(__file__).resolve().parents[1]
CALLS: set[tuple[str, tuple]] = set()


def _install_recorder() -> None:
    call, lookup = jit_kernel.Kernel.__call__, jit_kernel.Kernel.precompiled_for

    def recording_call(self, *args):
        _record(self, args)
        return call(self, *args)

    def recording_lookup(self, args):
        _record(self, args)
        return lookup(self, args)

    jit_kernel.Kernel.__call__ = recording_call
    jit_kernel.Kernel.precompiled_for = recording_lookup


def _record(kernel, args) -> None:
    key = type_key(args)
    if key is not None:
        CALLS.add((kernel.name, key))


def _cli(*argv: str) -> None:
    from segment.cli import main

    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["-q", *argv])
    if code not in (0, None):
        raise SystemExit(f"record_kernels: segment {' '.join(argv)} exited {code}")


def workloads(tmp: Path) -> None:
    """What users run: the main job, the commands, the API."""
    import segment
    from segment.solvers.dynamics import BaseExcitation, disc_plane_drop, relax, simulate

    _cli("validate", "--out", str(tmp / "report"))
    _cli("solve")
    _cli("solve", "--state", "laminectomy")
    _cli("solve", "FLX", "--scale", "2", "--json")
    _cli("ramp", "FLX", "--to-scale", "20", "--out", str(tmp / "ramp.csv"))
    _cli("compare", "--states", "laminectomy,facetectomy-bilateral-100")
    _cli("curves", "--out", str(tmp / "curves"))
    _cli("simulate", "FLX", "--t-end", "0.05", "--out", str(tmp / "sim.csv"))
    model = segment.c5c6()
    q = np.zeros(6)
    load = segment.LOAD_CASES["FLX"]
    model.residual(q, load)
    model.jacobian(q, load)
    model.residual_and_jacobian(q, load)
    model.state(q)
    for case in segment.LOAD_CASES:
        result = segment.solve(model, segment.LOAD_CASES[case])
        result.state.facet_table()
        result.to_dict()
    segment.solve_many(model, [segment.LOAD_CASES[c] for c in segment.LOAD_CASES])
    segment.ramp(model, load, to_scale=5.0)
    relax(model, load, t_max=0.05)
    simulate(model, load, t_end=0.05)
    pulse = BaseExcitation.triangular()
    for method in ("Radau", "lsv", "lsv-explicit"):
        simulate(model, None, t_end=0.01, base_acceleration=pulse, method=method,
                 **({} if method == "Radau" else {"dt": 1e-4}))
    disc_plane_drop(t_end=0.05, n_output=11)
    space = segment.load_space()
    sets = space.sample(8, seed=1)
    segment.solve_sets(model, sets, [load], sensitivities=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="do not write; exit 1 if exports.json would change")
    parser.add_argument("--no-tests", action="store_true",
                        help="record the user workloads only, not the fast test tier")
    args = parser.parse_args(argv)
    _install_recorder()
    with warnings.catch_warnings(), tempfile.TemporaryDirectory() as tmp:
        warnings.simplefilter("ignore")          # the workloads' own warnings: not the point
        workloads(Path(tmp))
    if not args.no_tests:
        import pytest

        # left out: the check that the precompiled module matches the sources (recording comes
        # before the rebuild it asks for) and the probe that looks up float32 arguments (a
        # lookup is recorded as a call: the probe would export the types it checks are absent)
        code = pytest.main(["-q", "-m", "not slow", "-p", "no:cacheprovider",
                            "--deselect",
                            "tests/test_jit.py::test_the_precompiled_module_is_built_here",
                            "--deselect",
                            "tests/test_jit.py::test_a_float32_array_never_reaches_float64_code",
                            str(ROOT)])
        if code != 0:
            raise SystemExit(f"record_kernels: the fast tier failed (exit {code}); fix it "
                             "first: its kernel calls are part of the record")
    entries = [{"kernel": name, "args": to_json(key)} for name, key in CALLS]
    entries.sort(key=lambda e: (e["kernel"], json.dumps(e["args"])))
    text = json.dumps(entries, indent=1) + "\n"
    if args.check:
        same = EXPORTS.is_file() and EXPORTS.read_text() == text
        print(f"{EXPORTS}: {'up to date' if same else 'would change'} ({len(entries)} entries)")
        return 0 if same else 1
    EXPORTS.write_text(text)
    print(f"wrote {len(entries)} entry points of "
          f"{len({e['kernel'] for e in entries})} kernels to {EXPORTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
