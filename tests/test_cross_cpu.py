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

import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # the main job with another CPU's kernels

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "validation" / "report"


def _tracked(folder: Path) -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z", "--", "."], cwd=folder, check=True,
                         capture_output=True, text=True).stdout
    return sorted(filter(None, out.split("\0")))


def test_report_is_the_same_bytes_with_other_cpu_kernels(main_job):
    """The session's main job (``conftest.main_job``) ran with numba, numpy and OpenBLAS on
    another CPU's code (``conftest.other_cpu_env``): every tracked file of its report must be
    the checkout's, byte for byte."""
    import sys

    env_check = subprocess.run([sys.executable, "-c", "import numpy; numpy.show_runtime()"],
                               capture_output=True, text=True, check=False,
                               env=__import__("conftest").other_cpu_env())
    assert env_check.returncode == 0, env_check.stderr     # numpy accepted the disabled features
    assert main_job.returncode == 0, main_job.stderr
    files = _tracked(REPORT)
    assert files, "no committed report"
    differ = [name for name in files
              if (main_job.report / name).read_bytes() != (REPORT / name).read_bytes()]
    assert not differ, (f"regenerated with other CPU kernels, these report files differ from "
                        f"the checkout: {differ}")
