"""Provenance lives in the repository: SOURCES.md, REFERENCES.bib, and no pointer outside it."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from segment.studies.reference import format_reference, read_bibliography, reference_dir

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "validation" / "reference" / "SOURCES.md"
OUR_NOTEBOOK = "FACTS" + ".md"          # split so that this file does not match itself


def _git_grep(pattern: str, *, regex: bool = False) -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run(["git", "grep", "-n", "-E" if regex else "-F", pattern], cwd=ROOT,
                         capture_output=True, text=True, check=False)
    assert out.returncode in (0, 1), out.stderr
    return out.stdout.splitlines()


def test_nothing_cites_the_notebook_outside_the_repository():
    assert _git_grep(OUR_NOTEBOOK) == []
    # no absolute path of a developer's machine either
    assert _git_grep(r"[\"'(` ]/(home|work|root)/[A-Za-z]", regex=True) == []


def test_every_sources_pointer_names_an_existing_section():
    sections = set(re.findall(r"^## §(\d+)", SOURCES.read_text(encoding="utf-8"), re.M))
    assert sections == {str(k) for k in range(1, len(sections) + 1)}   # numbered 1..n
    pointers = _git_grep("SOURCES.md §")
    assert len(pointers) >= 10                       # data, reference CSVs, code, report
    for line in pointers:
        for number in re.findall(r"SOURCES\.md §(\d+)", line):
            assert number in sections, line


def test_bibliography_parses_and_formats_every_entry():
    bib = read_bibliography()
    assert {"KLG2000", "Moroney1988", "deJager1996", "Jaumard2011"} <= set(bib)
    assert bib["Moroney1988"]["pages"] == "769–779"
    assert bib["KLG2000"]["author"].startswith("Kecskeméthy")
    for key, entry in bib.items():
        text = format_reference(entry)
        assert "{" not in text and "\\" not in text, (key, text)
        assert entry.get("title") or entry.get("note"), key
    # shipped with the package, beside the reference tables
    assert (reference_dir() / "REFERENCES.bib").is_file()
    assert (reference_dir() / "SOURCES.md").is_file()


def test_unbalanced_bibliography_is_named(tmp_path):
    bad = tmp_path / "bad.bib"
    bad.write_text("@article{X,\n  title = {open {brace,\n}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.bib: field 'title' of entry 'X' has unbalanced"):
        read_bibliography(bad)
    bad.write_text("@article{X,\n  title = {fine},\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.bib: entry 'X' is not closed"):
        read_bibliography(bad)


def test_bibtex_accents_print_as_letters():
    """The report's reference list turns BibTeX accents into letters (a raw ``Di\\"een``
    was printed for van Dieën)."""
    from segment.studies.reference import _plain

    assert _plain(r'van Die{\"e}n, Universit{\"a}t, {\'E}cole, {\l}ukasz, a--b') == \
        "van Dieën, Universität, École, łukasz, a–b"
