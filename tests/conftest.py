"""Shared fixtures. (segment.views.viz chooses VTK's off-screen window itself, per plotter.)"""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import segment
from segment.core.io import data_dir
from segment.report.picture_cache import CACHE_ENV


def pytest_collection_modifyitems(config, items):
    """The notebooks (``notebooks/*.ipynb``, executed by nbmake) are in the slow tier."""
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session", autouse=True)
def picture_cache(tmp_path_factory):
    """The report's picture cache of this test run (and of the commands it starts): a folder
    of its own, not the user's ``~/.cache`` (:mod:`segment.report.picture_cache`)."""
    folder = tmp_path_factory.mktemp("pictures")
    old = os.environ.get(CACHE_ENV)
    os.environ[CACHE_ENV] = str(folder)
    yield folder
    if old is None:
        os.environ.pop(CACHE_ENV, None)
    else:
        os.environ[CACHE_ENV] = old


@pytest.fixture(scope="session")
def model():
    return segment.c5c6()


@pytest.fixture
def data_copy(tmp_path):
    """A private copy of the packaged CSV tables (every ``data/*.csv``)."""
    folder = tmp_path / "data"
    folder.mkdir()
    for path in data_dir().glob("*.csv"):
        shutil.copy(path, folder / path.name)
    return folder


@pytest.fixture(scope="session")
def disc_only():
    return segment.c5c6(ligaments=False, facets=False)


def central_jacobian(m, q, load, h):
    """d residual / d q by central differences with step ``h`` (6,) [mm, rad]."""
    J = np.empty((6, 6))
    for j in range(6):
        dq = np.zeros(6)
        dq[j] = h[j]
        J[:, j] = (m.residual(q + dq, load) - m.residual(q - dq, load)) / (2 * h[j])
    return J


ROOT = Path(__file__).resolve().parent.parent
OTHER_BLAS = "Nehalem"
MAIN_JOB_TIMEOUT_S = 1800


def other_cpu_env() -> dict[str, str]:
    """This environment with numba, numpy and OpenBLAS told to use another CPU's machine code:
    numba compiles for the baseline ``generic`` CPU (where a kernel is not precompiled),
    numpy's dispatched loops are off (its baseline code only), OpenBLAS runs its Nehalem
    kernels (SSE4.2, which every CPU numpy runs on has)."""
    from numpy._core import _multiarray_umath as npcore

    dispatched = [f for f in npcore.__cpu_dispatch__ if npcore.__cpu_features__.get(f)]
    env = dict(os.environ)
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop("NUMBA_CPU_FEATURES", None)      # generic: no features (numba's default)
    env.update(NUMBA_CPU_NAME="generic",
               NPY_DISABLE_CPU_FEATURES=" ".join(dispatched), OPENBLAS_CORETYPE=OTHER_BLAS)
    return env


def git(cwd, *args) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          check=True).stdout


@dataclass(frozen=True)
class MainJob:
    """One run of the README's main job: ``clone`` (the copy it ran in), ``report`` (its
    output), ``returncode``, ``stderr`` and whether numba was imported."""

    clone: Path
    report: Path
    returncode: int
    stderr: str
    numba_imported: bool
    pictures: Path


def once_per_run(tmp_path_factory, name: str, build, *, encode, decode):
    """``build(folder)`` once per test run, its result shared by every pytest-xdist worker.

    Without xdist (no ``PYTEST_XDIST_WORKER`` in the environment) the folder is this
    session's own. Under xdist the first worker to ask builds into ``<run's temp root>/name``
    while holding a file lock; the others wait for the lock and read what it recorded
    (``encode``/``decode``: the result to and from a JSON-able dict). The README's test command
    runs two workers; the report is built once per run, not once per worker (issue 28)."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return build(tmp_path_factory.mktemp(name))
    from filelock import FileLock

    root = tmp_path_factory.getbasetemp().parent        # shared by the workers of this run
    record = root / f"{name}.json"
    with FileLock(str(root / f"{name}.lock")):
        if record.is_file():
            return decode(json.loads(record.read_text(encoding="utf-8")))
        folder = root / name
        shutil.rmtree(folder, ignore_errors=True)       # what a failed build left
        folder.mkdir()
        result = build(folder)
        record.write_text(json.dumps(encode(result)), encoding="utf-8")
        return result


@pytest.fixture(scope="session")
def main_job(tmp_path_factory) -> MainJob:
    """``segment validate``, run once per test run as a fresh clone on another CPU runs it.

    The checkout's files (tracked and new, as they are on disk: what a commit of the working
    tree holds) are copied into another folder and committed there, with the precompiled
    kernels that installing the package built; the main job runs there with the environment
    of :func:`other_cpu_env`. ``tests/test_clean_checkout.py`` asks git whether it changed a
    tracked file, ``tests/test_cross_cpu.py`` compares its bytes with the checkout's report,
    ``tests/test_report.py`` reads its tables and text. One build serves all three.
    """
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout")

    def build(clone: Path) -> MainJob:
        files = [f for f in git(ROOT, "ls-files", "-z", "--cached", "--others",
                                "--exclude-standard").split("\0") if f and (ROOT / f).is_file()]
        for name in files:
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, clone / name)
        spec = importlib.util.find_spec("segment.jit._aot")
        if spec is not None and spec.origin:               # built at installation, not tracked
            shutil.copy2(spec.origin, clone / "segment" / "jit" / Path(spec.origin).name)
        git(clone, "init", "-q")
        git(clone, "add", "-A")
        git(clone, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "copy")
        code = ("import sys; from segment.cli import main; code = main(['-q', 'validate']); "
                "print(f'numba imported: {\"numba\" in sys.modules}', file=sys.stderr); "
                "sys.exit(code)")
        pictures = clone.with_name(clone.name + "-pictures")   # empty: every picture drawn
        shutil.rmtree(pictures, ignore_errors=True)
        run = subprocess.run([sys.executable, "-c", code], cwd=clone,
                             env={**other_cpu_env(), CACHE_ENV: str(pictures)},
                             capture_output=True, text=True, timeout=MAIN_JOB_TIMEOUT_S,
                             check=False)
        return MainJob(clone=clone, report=clone / "validation" / "report",
                       returncode=run.returncode, stderr=run.stderr,
                       numba_imported="numba imported: True" in run.stderr,
                       pictures=pictures)

    paths = ("clone", "report", "pictures")
    return once_per_run(
        tmp_path_factory, "clone", build,
        encode=lambda job: {**job.__dict__, **{k: str(getattr(job, k)) for k in paths}},
        decode=lambda d: MainJob(**{**d, **{k: Path(d[k]) for k in paths}}))


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    """The package's wheel, built once per test run (``pip wheel .``) from the checkout's
    files. The precompiled kernels this installation built are copied into it
    (``SEGMENT_PRECOMPILED``, see ``setup.py``) instead of compiled again."""

    def build(out: Path) -> Path:
        env = {k: v for k, v in os.environ.items() if k != "SEGMENT_PRECOMPILED"}
        spec = importlib.util.find_spec("segment.jit._aot")
        if spec is not None and spec.origin:
            env["SEGMENT_PRECOMPILED"] = spec.origin
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                        "-q", "-w", str(out), str(ROOT)], check=True, env=env,
                       timeout=MAIN_JOB_TIMEOUT_S)
        (built,) = out.glob("c5c6_segment-*.whl")     # the distribution name (issue 15)
        return built

    return once_per_run(tmp_path_factory, "wheel", build,
                        encode=lambda path: {"path": str(path)},
                        decode=lambda d: Path(d["path"]))
