"""Build the precompiled kernels: ``python -m segment.jit.build [OUTPUT]`` (run by ``setup.py``).

Compiles every entry point of ``exports.json`` (a kernel and the argument types it is called
with from Python, recorded by ``scripts/record_kernels.py``) ahead of time with numba's pycc
into one extension module, for LLVM's ``generic`` x86-64 CPU (SSE2: it runs on every x86-64
machine and gives the same bits on all of them). The module carries its manifest (the source
digest and the entry points, :mod:`segment.jit.aot`).

After editing a kernel, ``python -m segment.jit.build`` rebuilds the module in place (in the
source folder, where an editable install loads it); until then the kernels run through numba.

The build runs in its own process with ``NUMBA_CPU_NAME=generic`` and a private numba cache
folder (:func:`environment`): the kernels a kernel calls are compiled by numba's JIT and linked
into the module as LLVM IR, so they too must be compiled for the generic CPU. The environment
of the process that asks for the build is not changed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import sysconfig
import tempfile
import time
import warnings
from pathlib import Path

__all__ = ["EXPORTS", "build", "build_in_subprocess", "environment", "inplace_output",
           "load_exports"]

EXPORTS = Path(__file__).resolve().parent / "exports.json"
"""The entry points to precompile: ``[{"kernel": "module.name", "args": [...]}, ...]``."""

CPU = "generic"


def load_exports(path: Path = EXPORTS) -> list[dict]:
    """The entry points of ``exports.json``, checked: each a kernel name and argument keys."""
    data = json.loads(Path(path).read_text())
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of entry points, got {type(data).__name__}")
    for i, entry in enumerate(data):
        if not (isinstance(entry, dict) and isinstance(entry.get("kernel"), str)
                and isinstance(entry.get("args"), list)):
            raise ValueError(f"{path}: entry {i} must have 'kernel' (str) and 'args' (list), "
                             f"got {entry!r}")
    return data


def environment(cache_dir: str) -> dict:
    """The environment of the build process: this one's, with numba set to the generic CPU and
    a private cache folder."""
    return {**os.environ, "NUMBA_CPU_NAME": CPU, "NUMBA_CPU_FEATURES": "",
            "NUMBA_CACHE_DIR": cache_dir}


def build(output: Path, *, exports: Path = EXPORTS) -> dict:
    """Compile the entry points into the extension module file ``output``; return the
    manifest. Must run in a process with :func:`environment` (checked)."""
    if os.environ.get("NUMBA_CPU_NAME") != CPU:
        raise RuntimeError(f"build the precompiled kernels with NUMBA_CPU_NAME={CPU} "
                           f"(build_in_subprocess does), got {os.environ.get('NUMBA_CPU_NAME')!r}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # pycc's pending deprecation notice
        from numba.pycc import CC

    from segment.jit import sources
    from segment.jit.kernel import _kernel_by_name
    from segment.jit.types import from_json, numba_type

    output = Path(output).resolve()
    entries = load_exports(exports)
    cc = CC("_aot", source_module="segment.jit")
    cc.output_dir = str(output.parent)
    cc.output_file = output.name
    cc.target_cpu = CPU
    manifest = {"digest": sources.digest(), "cpu": CPU, "exports": []}
    for i, entry in enumerate(entries):
        kernel = _kernel_by_name(entry["kernel"])
        signature = tuple(numba_type(from_json(a)) for a in entry["args"])
        symbol = f"k{i}"
        cc.export(symbol, signature)(kernel.py_func)
        manifest["exports"].append({"symbol": symbol, **entry})
    namespace: dict = {}
    exec(f"def manifest():\n    return {json.dumps(manifest, sort_keys=True)!r}\n", namespace)
    cc.export("manifest", "unicode_type()")(namespace["manifest"])
    output.parent.mkdir(parents=True, exist_ok=True)
    cc.compile()
    return manifest


def build_in_subprocess(output: Path, *, source_root: Path | None = None,
                        quiet: bool = False) -> subprocess.CompletedProcess:
    """Run :func:`build` in a new Python process with :func:`environment` (``source_root``:
    the folder holding the ``segment`` sources to build, default this package's parent)."""
    root = Path(source_root) if source_root else Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory(prefix="segment-jit-build-") as cache:
        env = environment(cache)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(root), *filter(None, [os.environ.get("PYTHONPATH")])])
        return subprocess.run([sys.executable, "-m", "segment.jit.build", str(output)],
                              cwd=root, env=env, check=False,
                              capture_output=quiet, text=True)


def inplace_output() -> Path:
    """The module file next to this one (where an editable install and ``import`` find it)."""
    return Path(__file__).resolve().parent / ("_aot" + sysconfig.get_config_var("EXT_SUFFIX"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m segment.jit.build", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output", type=Path, nargs="?", default=None,
                        help="the extension module file to write (default: in place, "
                             f"{inplace_output().name} next to this module)")
    args = parser.parse_args(argv)
    output = args.output or inplace_output()
    if os.environ.get("NUMBA_CPU_NAME") != CPU:       # not yet the build process: start it
        return build_in_subprocess(output).returncode
    start = time.perf_counter()
    n = len(load_exports())
    print(f"segment: precompiling {n} kernel entry points for a {CPU} x86-64 CPU "
          f"(numba pycc) into {output}", flush=True)
    manifest = build(output)
    print(f"segment: precompiled {len(manifest['exports'])} entry points in "
          f"{time.perf_counter() - start:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
