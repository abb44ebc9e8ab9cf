"""Where numba keeps our compiled kernels: a folder keyed on the package's sources.

numba's own cache (``cache=True``) checks only the source file of each compiled function, so a
kernel that calls a function of another module (``model._generalized_force`` calls
``facet._contact``) keeps running the old machine code after that other module is edited: wrong
numbers, silently. Our kernels are therefore cached in a folder named after a hash of every
``segment/**/*.py`` file that defines kernels (``@njit``) and of the numba version, so that any
edit of a kernel module compiles afresh (editing the others, e.g. the report, keeps them).

Scope: only functions defined in this package's own source folder (and its subfolders). A
cache locator (:class:`_SegmentCacheLocator`) is put in front of numba's list of locators and
claims our files only; the process environment (``NUMBA_CACHE_DIR``) and ``numba.config`` are left
untouched, so a user's own ``@njit(cache=True)`` functions cache where numba puts them by
default, and our pruning of old folders never touches them.

* Set ``NUMBA_CACHE_DIR`` yourself to choose the folder (then nothing here applies).
* If the folder cannot be created, numba's default (``__pycache__`` beside the sources) stays.
* When a new folder is made, only the most recent :data:`KEEP` folders are kept.

This module must be imported before the first ``@njit(cache=True)`` function is compiled, which
is why ``segment/__init__.py`` imports it first.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import numba
from numba.core import caching as _caching

__all__ = ["COLD_COMPILE_S", "cache_folder", "configure", "is_cold"]

KEEP = 4
COLD_COMPILE_S = 20
"""What compiling every kernel of ``segment solve FLX`` takes on the 2-core reference machine
[s], rounded up (``benchmarks/bench_cold_start.py``); the command line says it once when the
cache is empty."""
SOURCE_DIR = Path(__file__).resolve().parent


def cache_folder(source_dir: Path = SOURCE_DIR, base: Path | None = None) -> Path:
    """The cache folder for the sources in ``source_dir``: a hash of its kernel modules."""
    digest = hashlib.sha256()
    digest.update(numba.__version__.encode())
    source_dir = Path(source_dir)
    for path in sorted(source_dir.rglob("*.py")):     # subpackages too (a later re-layout)
        text = path.read_bytes()
        if b"@njit" in text:
            digest.update(path.relative_to(source_dir).as_posix().encode())
            digest.update(text)
    if base is None:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "segment"
    return Path(base) / "numba" / digest.hexdigest()[:16]


def _prune(folder: Path) -> None:
    siblings = sorted((p for p in folder.parent.iterdir() if p.is_dir() and p != folder),
                      key=lambda p: p.stat().st_mtime, reverse=True)
    for old in siblings[KEEP - 1:]:
        shutil.rmtree(old, ignore_errors=True)


def _locator_base():
    """numba's locator for a user-chosen folder (renamed without underscore in numba 0.61)."""
    return getattr(_caching, "UserProvidedCacheLocator", None) or \
        _caching._UserProvidedCacheLocator


class _SegmentCacheLocator(_locator_base()):
    """Cache locator for the functions of this package only: they go to :data:`FOLDER`."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = os.path.join(str(FOLDER), self.get_suitable_cache_subpath(py_file))

    def get_cache_path(self):
        return self._cache_path

    @classmethod
    def from_function(cls, py_func, py_file):
        if FOLDER is None or os.environ.get("NUMBA_CACHE_DIR"):
            return None
        try:
            if SOURCE_DIR not in Path(py_file).resolve().parents:
                return None         # not ours: numba's own locators decide
        except OSError:
            return None
        # skip numba's check of config.CACHE_DIR; keep its "file exists, folder writable"
        return super(_locator_base(), cls).from_function(py_func, py_file)


def configure() -> Path | None:
    """Create :func:`cache_folder` and register the locator; return it (None: numba's default)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return None
    try:
        folder = cache_folder()
    except (OSError, RuntimeError, KeyError):  # no home folder to be found: numba's default
        return None
    try:
        if folder.is_dir():
            os.utime(folder)
        else:
            folder.mkdir(parents=True)
            _prune(folder)
    except OSError:
        return None
    impl = getattr(_caching, "CacheImpl", None) or _caching._CacheImpl  # renamed in 0.61
    locators = impl._locator_classes
    if not any(getattr(c, "__name__", "") == "_SegmentCacheLocator" for c in locators):
        locators.insert(0, _SegmentCacheLocator)
    return folder


FOLDER = configure()


def is_cold(folder: Path | None = None) -> bool:
    """True when the cache folder holds no compiled kernel yet (the first run compiles them).

    Unknown (False) when numba's own cache applies (``NUMBA_CACHE_DIR`` set, no folder)."""
    folder = FOLDER if folder is None else folder
    if folder is None or not Path(folder).is_dir():
        return folder is not None
    return not any(Path(folder).rglob("*.nbi"))
