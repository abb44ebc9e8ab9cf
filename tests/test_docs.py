"""The documentation site stays true: every ``segment ...`` line of its pages' bash blocks runs,
the site builds with warnings as errors, every example of its pages runs, and the API
reference covers the public API."""

import pkgutil
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import segment

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
MY_TABLES = "my_tables"
"""What the pages call "your own tables" (``segment --data my_tables ...``): a copy of the
packaged data in the folder a command runs in."""


def _blocks(text, lang):
    return re.findall(rf"^```{lang}\n(.*?)^```", text, flags=re.S | re.M)


def _page_commands():
    """(page, argv) of every ``segment ...`` line of the pages' ``bash`` blocks; a command
    that two pages show runs once (under the first page)."""
    found = {}
    for page in PAGES:
        for block in _blocks(page.read_text(), "bash"):
            for line in block.splitlines():
                line = line.split("#")[0].strip()
                for prefix in ("segment ", ".venv/bin/segment "):
                    if line.startswith(prefix):
                        argv = shlex.split(line)[1:]
                        found.setdefault(tuple(argv), (page.name, argv))
    return list(found.values())


COMMANDS = _page_commands()


def test_the_pages_have_commands_and_examples():
    assert len(COMMANDS) >= 40
    pages_with_examples = [p.name for p in PAGES if _blocks(p.read_text(), "python")]
    for name in ("model.md", "dynamics.md", "sensitivity.md", "failure.md", "clinical.md",
                 "calibration.md", "curves.md", "data.md", "views.md", "index.md"):
        assert name in pages_with_examples
    for page in PAGES:    # doctest reads a fence right after the last line as expected output
        for block in _blocks(page.read_text(), "python"):
            if block.lstrip().startswith(">>>"):
                assert block.endswith("\n\n"), f"{page.name}: end a >>> block with a blank line"


@pytest.mark.slow
@pytest.mark.parametrize(("page", "argv"), COMMANDS,
                         ids=[f"{page}: {' '.join(argv)}" for page, argv in COMMANDS])
def test_page_command_runs(page, argv, tmp_path, monkeypatch):
    from segment.cli import main
    from segment.core.io import data_dir

    if MY_TABLES in argv:
        shutil.copytree(data_dir(), tmp_path / MY_TABLES)
    monkeypatch.chdir(tmp_path)          # commands that write files write them here
    assert main(argv) == 0


def test_every_public_subpackage_is_in_the_api_reference():
    """api.md lists the layers by name (autosummary documents each one's modules): a new
    public subpackage must be added there."""
    api = (DOCS / "api.md").read_text()
    subpackages = [name for _, name, ispkg in pkgutil.iter_modules(segment.__path__)
                   if ispkg and not name.startswith("_")]
    assert subpackages
    missing = [name for name in subpackages if f"   segment.{name}\n" not in api]
    assert not missing, f"add to docs/api.md: {missing}"


def _sphinx(builder, out, doctrees):
    return subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b",
                           builder, "-d", str(doctrees), str(DOCS), str(out)],
                          cwd=ROOT, capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The HTML site, built once (its doctrees serve the doctest builder too)."""
    pytest.importorskip("sphinx", reason="the docs extra is not installed")
    base = tmp_path_factory.mktemp("site")
    run = _sphinx("html", base / "html", base / "doctrees")
    return base, run


@pytest.mark.slow
def test_site_builds_without_a_warning(site):
    base, run = site
    assert run.returncode == 0 and "WARNING" not in run.stderr, run.stderr[-6000:]
    html = base / "html"
    for page in PAGES:
        assert (html / f"{page.stem}.html").is_file(), page.name
    assert len(list((html / "notebooks").glob("*.html"))) == len(list(
        (ROOT / "notebooks").glob("*.ipynb")))
    api = (html / "generated" / "segment.html").read_text()
    for name in segment.__all__:           # the API reference covers the public API
        assert f'id="segment.{name}"' in api, name


@pytest.mark.slow
def test_every_example_of_the_pages_runs(site):
    """Sphinx's doctest builder runs every python block of the pages (docs/conf.py marks
    them) and every docstring example of the API reference."""
    base, run = site
    assert run.returncode == 0, run.stderr[-6000:]
    doctest = _sphinx("doctest", base / "doctest", base / "doctrees")
    report = (base / "doctest" / "output.txt").read_text()
    assert doctest.returncode == 0, report[-6000:] + doctest.stderr[-3000:]
    assert "0 failures in tests" in report
    documents = {block.split("\n", 1)[0]: block for block in report.split("Document: ")[1:]}
    for page in PAGES:                     # each page with examples ran them all
        if _blocks(page.read_text(), "python"):
            assert "passed all tests" in documents.get(page.stem, ""), page.name
    assert "passed all tests" in documents["generated/segment"]     # and the docstrings


def test_segment_docs_says_how_to_build_and_open_the_site(capsys):
    from segment.cli import main

    assert main(["docs"]) == 0
    out = capsys.readouterr().out
    assert 'pip install -e "' in out and "[docs]" in out
    assert f"sphinx-build -W --keep-going -b html {DOCS}" in out
    assert str(DOCS / "_build" / "html" / "index.html") in out


def test_segment_docs_build_runs_sphinx(tmp_path, monkeypatch, capsys):
    """``--build`` runs the command ``segment docs`` prints (not run here: the slow tests build
    the site) and names the index page it wrote."""
    pytest.importorskip("sphinx", reason="the docs extra is not installed")
    from segment.cli import docs, main

    calls = []

    def fake_run(argv, check):
        calls.append(argv)
        return subprocess.CompletedProcess(argv, 0)

    monkeypatch.setattr(docs.subprocess, "run", fake_run)
    out = tmp_path / "site"
    assert main(["docs", "--build", "--out", str(out)]) == 0
    assert calls == [[sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html",
                      str(DOCS), str(out)]]
    assert str(out / "index.html") in capsys.readouterr().out
    assert main(["docs", "--build", "--out", str(tmp_path / "missing" / "site")]) == 2
