"""The main job leaves a checkout clean: `segment validate` rewrites only identical files."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # the main job in a fresh copy

ROOT = Path(__file__).resolve().parent.parent


def _git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                    reason="needs git and a git checkout")
def test_validate_leaves_a_copy_of_the_repository_clean(tmp_path):
    """Export the last commit (what a fresh clone holds: not the working tree, which CI's own
    `segment validate` has already rewritten) into another folder, run the README's main job
    there, and ask git whether anything tracked changed. The other folder matters: a figure
    whose layout moved with the folder once passed a same-folder check."""
    copy = tmp_path / "clone"
    copy.mkdir()
    archive = subprocess.run(["git", "archive", "--format=tar", "HEAD"], cwd=ROOT,
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(copy)], input=archive, check=True)
    _git(copy, "init", "-q")
    _git(copy, "add", "-A")
    _git(copy, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "copy")
    run = subprocess.run([sys.executable, "-m", "segment", "-q", "validate"], cwd=copy,
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    status = _git(copy, "status", "--porcelain", "--untracked-files=all").stdout
    assert status == "", f"`segment validate` changed tracked files:\n{status}"
    assert (copy / "validation" / "report" / "run.json").is_file()     # ignored, not absent
