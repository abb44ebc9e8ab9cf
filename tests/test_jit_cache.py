"""The numba cache folder follows the package's sources, so an edit never runs stale kernels."""

import shutil

import numba

import segment
from segment import _jit_cache


def test_editing_a_kernel_module_changes_the_cache_folder(tmp_path):
    src = tmp_path / "segment"
    shutil.copytree(_jit_cache.SOURCE_DIR, src, ignore=shutil.ignore_patterns("__pycache__"))
    before = _jit_cache.cache_folder(src, base=tmp_path)
    assert before == _jit_cache.cache_folder(src, base=tmp_path)          # deterministic
    for name in ("report.py", "__init__.py"):         # no kernels: compiled code stays valid
        path = src / name
        path.write_text(path.read_text() + "\n# an edit outside the kernels (numba)\n")
        assert _jit_cache.cache_folder(src, base=tmp_path) == before
    facet = src / "facet.py"
    facet.write_text(facet.read_text() + "\n# an edit in a module that kernels call\n")
    assert _jit_cache.cache_folder(src, base=tmp_path) != before


def test_the_package_compiles_into_the_folder_of_its_current_sources():
    if _jit_cache.FOLDER is None:       # the user chose NUMBA_CACHE_DIR, or no writable home
        return
    assert _jit_cache.FOLDER == _jit_cache.cache_folder()
    assert numba.config.CACHE_DIR == str(_jit_cache.FOLDER)
    segment.solve(segment.c5c6(), segment.LOAD_CASES["FLX"])
    assert any(_jit_cache.FOLDER.rglob("*.nbi"))
