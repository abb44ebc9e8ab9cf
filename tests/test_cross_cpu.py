"""The committed report is the same bytes whichever x86-64 CPU generates it (issue 20).

A fresh clone on another CPU runs other machine code in three places: numba compiles the
kernels for the host CPU, numpy dispatches its loops to the widest SIMD the CPU has (AVX-512
here, AVX2 elsewhere), and OpenBLAS picks kernels per CPU (SkylakeX, Haswell, ...). Each
changes the last digits of the numbers (measured: only the BLAS and numpy dispatch did;
numba's generic and host builds gave the same bytes). This test regenerates the report with all
three switched to another target in one process: numba compiled for the baseline ``generic``
CPU, numpy's dispatched loops off (its baseline code only), OpenBLAS's Nehalem kernels (SSE4.2,
which every CPU numpy runs on has). Every file of ``validation/report`` must come out
byte-identical to the checkout's (``tests/test_report.py`` holds the checkout to a host build;
``tests/test_clean_checkout.py`` a fresh clone to the commit).
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # the main job with another CPU's kernels

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "validation" / "report"
TIMEOUT_S = 1800          # numba compiles every kernel afresh for the generic CPU: ~1 min
OTHER_BLAS = "Nehalem"


def other_cpu_env() -> dict[str, str]:
    """This environment with numba, numpy and OpenBLAS told to use other machine code."""
    from numpy._core import _multiarray_umath as npcore

    dispatched = [f for f in npcore.__cpu_dispatch__ if npcore.__cpu_features__.get(f)]
    env = dict(os.environ)
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop("NUMBA_CPU_FEATURES", None)      # generic: no features (numba's default)
    env.update(NUMBA_CPU_NAME="generic",
               NPY_DISABLE_CPU_FEATURES=" ".join(dispatched), OPENBLAS_CORETYPE=OTHER_BLAS)
    return env


def _tracked(folder: Path) -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z", "--", "."], cwd=folder, check=True,
                         capture_output=True, text=True).stdout
    return sorted(filter(None, out.split("\0")))


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                    reason="needs git and a git checkout")
def test_report_is_the_same_bytes_with_other_cpu_kernels(tmp_path):
    env = other_cpu_env()
    check = subprocess.run([sys.executable, "-c", "import numpy; numpy.show_runtime()"],
                           env=env, capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stderr          # numpy accepted the disabled features
    run = subprocess.run([sys.executable, "-m", "segment", "-q", "validate", "--out",
                          str(tmp_path / "report")], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    assert run.returncode == 0, run.stderr
    files = _tracked(REPORT)
    assert files, "no committed report"
    differ = [name for name in files
              if (tmp_path / "report" / name).read_bytes() != (REPORT / name).read_bytes()]
    assert not differ, (f"regenerated with other CPU kernels, these report files differ from "
                        f"the checkout: {differ}")
