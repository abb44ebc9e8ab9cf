"""The numba cache folder follows the package's sources, so an edit never runs stale kernels."""

import importlib.util
import os
import shutil

import numba

import segment
from segment import _jit_cache


def test_editing_a_kernel_module_changes_the_cache_folder(tmp_path):
    src = tmp_path / "segment"
    shutil.copytree(_jit_cache.SOURCE_DIR, src, ignore=shutil.ignore_patterns("__pycache__"))
    before = _jit_cache.cache_folder(src, base=tmp_path)
    assert before == _jit_cache.cache_folder(src, base=tmp_path)          # deterministic
    for name in ("report/build.py", "__init__.py"):   # no kernels: compiled code stays valid
        path = src / name
        path.write_text(path.read_text() + "\n# an edit outside the kernels (numba)\n")
        assert _jit_cache.cache_folder(src, base=tmp_path) == before
    facet = src / "elements" / "facet.py"
    facet.write_text(facet.read_text() + "\n# an edit in a module that kernels call\n")
    assert _jit_cache.cache_folder(src, base=tmp_path) != before


def test_the_package_compiles_into_the_folder_of_its_current_sources():
    if _jit_cache.FOLDER is None:       # the user chose NUMBA_CACHE_DIR, or no writable home
        return
    assert _jit_cache.FOLDER == _jit_cache.cache_folder()
    segment.solve(segment.c5c6(), segment.LOAD_CASES["FLX"])
    assert any(_jit_cache.FOLDER.rglob("*.nbi"))


def test_a_users_own_kernels_are_not_cached_in_our_folder(tmp_path):
    """The workaround is scoped to our sources: numba's settings and the environment stay."""
    if _jit_cache.FOLDER is None:
        return
    assert "NUMBA_CACHE_DIR" not in os.environ
    assert numba.config.CACHE_DIR == ""
    module = tmp_path / "users_kernel.py"
    module.write_text("from numba import njit\n\n@njit(cache=True)\n"
                      "def twice(x):\n    return 2 * x\n")
    spec = importlib.util.spec_from_file_location("users_kernel", module)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    before = set(_jit_cache.FOLDER.rglob("*"))
    assert mod.twice(3) == 6
    assert any((tmp_path / "__pycache__").glob("users_kernel.twice*.nbi"))   # numba's default
    assert set(_jit_cache.FOLDER.rglob("*")) == before
