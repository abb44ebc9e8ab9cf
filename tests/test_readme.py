"""The README stays true: its Python example runs, its commands run, CI runs its commands."""

import doctest
import re
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def _blocks(lang):
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


@pytest.mark.slow  # every README example
def test_python_examples_run(tmp_path, monkeypatch):
    """The README's example passes the standard tool, ``python -m doctest README.md``: every
    python block, in order, in one namespace, with no option flags beyond the examples' own
    directives; each block ends with a blank line, so doctest does not read the closing fence
    as expected output. (The topic pages' examples run in tests/test_docs.py.)"""
    monkeypatch.chdir(tmp_path)          # examples that write files write them here
    blocks = _blocks("python")
    assert len(blocks) >= 1
    assert all(b.endswith("\n\n") for b in blocks), "end each python block with a blank line"
    result = doctest.testfile(str(ROOT / "README.md"), module_relative=False, report=True,
                              verbose=False)
    assert result.failed == 0 and result.attempted >= 5


def test_readme_is_a_landing_page():
    """At most 15 KB: what it is, a picture, install, the two commands, an example, where the
    documentation is and how to cite; the topics live in docs/."""
    assert len(README.encode()) <= 15 * 1024
    for link in re.findall(r"\]\(([^)#]+)[^)]*\)", README):
        if "://" not in link:
            assert (ROOT / link).exists(), f"README links to a missing file: {link}"


def _segment_commands():
    cmds = []
    for block in _blocks("bash"):
        for line in block.splitlines():
            line = line.split("#")[0].strip()
            if line.startswith(".venv/bin/segment "):
                cmds.append(shlex.split(line)[1:])
    return cmds


@pytest.mark.slow  # every README command
@pytest.mark.parametrize("argv", _segment_commands(), ids=" ".join)
def test_cli_commands_in_readme_run(argv, tmp_path, monkeypatch):
    from segment.cli import main

    monkeypatch.chdir(tmp_path)          # commands that write files write them here
    assert main(argv) == 0


def test_ci_runs_the_readme_commands():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "setup-command" in ci and "test-command" in ci
    for marker in ("setup-command", "test-command"):
        assert f"<!-- {marker} -->\n```bash\n" in README


def test_benchmark_command_in_the_docs_exists():
    page = (ROOT / "docs" / "benchmarks.md").read_text()
    assert "benchmarks/bench_solve.py" in page
    assert (ROOT / "benchmarks" / "bench_solve.py").exists()


@pytest.mark.slow  # builds a wheel
def test_wheel_ships_the_data(wheel, tmp_path):
    """``pip install .`` (not only editable) must find the CSV tables."""
    names = zipfile.ZipFile(wheel).namelist()
    for table in ("ligaments.csv", "facets.csv", "load_cases.csv", "disc_rotational.csv",
                  "vertebra_geometry.csv"):
        assert f"segment/data/{table}" in names
    for mesh in ("bp3d_FJ3167_C5_local.obj", "bp3d_FJ3170_C6_local.obj", "SHA256SUMS",
                 "LICENSE-CC-BY-SA-2.1-JP.txt", "README.md"):   # the bones and their licence
        assert f"segment/views/assets/meshes/{mesh}" in names
    assert "segment/data/calibrated/ligaments.csv" in names      # the shipped calibrated set
    for data in ("curves/nightingale2002_c5c6_female.csv", "forms/forms.csv",
                 "forms/neutral-zone/space.csv", "forms/neutral-zone/disc_law.csv"):
        assert f"segment/data/{data}" in names                   # curves and model forms
    assert "segment/core/model.py" in names and "segment/core/published.py" in names  # layers
    assert "segment/jit/exports.json" in names
    assert any(n.startswith("segment/jit/_aot") and n.endswith(".so") for n in names), \
        "the precompiled kernels are not in the wheel"
    for shipped in ("segment/py.typed", "segment/reference_data/SOURCES.md",
                    "segment/reference_data/REFERENCES.bib"):
        assert shipped in names
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target",
                    str(target), str(wheel)], check=True)
    code = ("import sys, segment; from segment.core.io import data_dir; d = data_dir(); "
            f"assert str(d).startswith({str(target)!r}), d; "
            "print(segment.solve(segment.c5c6(), segment.LOAD_CASES['FLX']).converged, "
            "'numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, check=True,
                         capture_output=True, text=True,
                         env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "True False", "solved from the installed wheel, no numba"
