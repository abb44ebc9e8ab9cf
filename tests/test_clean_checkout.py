"""The main job leaves a checkout clean: `segment validate` rewrites only identical files."""

import pytest
from conftest import git

pytestmark = pytest.mark.slow  # the main job in a fresh copy


def test_validate_leaves_a_copy_of_the_repository_clean(main_job):
    """The README's main job in another folder (a copy of the checkout, committed there: what
    a fresh clone holds), then git is asked whether anything tracked changed. The other folder
    matters: a figure whose layout moved with the folder once passed a same-folder check."""
    assert main_job.returncode == 0, main_job.stderr
    status = git(main_job.clone, "status", "--porcelain", "--untracked-files=all")
    assert status == "", f"`segment validate` changed tracked files:\n{status}"
    assert (main_job.report / "run.json").is_file()     # ignored, not absent


def test_the_main_job_needs_no_compile(main_job):
    """With the kernels precompiled at installation, the main job never starts numba."""
    import segment.jit

    if not segment.jit.status()["precompiled"]:
        pytest.skip(segment.jit.status()["reason"])
    assert main_job.returncode == 0, main_job.stderr
    assert not main_job.numba_imported, "a kernel of the main job is not precompiled"
