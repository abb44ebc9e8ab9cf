"""Where numba keeps the kernels it compiles: a folder keyed on the package's sources.

The second route of :mod:`segment.jit` (a kernel without precompiled code for its argument
types, or the precompiled module not in use). numba's own cache (``cache=True``) checks only the
source file of each compiled function, so a kernel that calls a function of another module
(``residual._generalized_force`` calls ``contact.end_face_contact``) would keep running the old
machine code after that other module is edited: wrong numbers, silently. Our kernels are therefore
cached in a folder named after :func:`segment.jit.sources.digest` and the numba version, so
that any edit of a kernel module compiles afresh (editing the others, e.g. the report, keeps
them).

Scope: only functions defined in this package's own source folder (and its subfolders). A
cache locator is put in front of numba's list of locators when numba is first needed
(:func:`configure`, called by :mod:`segment.jit.kernel`) and claims our files only; the
process environment (``NUMBA_CACHE_DIR``) and ``numba.config`` are left untouched, so a user's
own ``@njit(cache=True)`` functions cache where numba puts them by default, and our pruning of
old folders never touches them.

* Set ``NUMBA_CACHE_DIR`` yourself to choose the folder (then nothing here applies).
* If the folder cannot be created, numba's default (``__pycache__`` beside the sources) stays.
* When a new folder is made, only the most recent :data:`KEEP` folders are kept.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import shutil
from pathlib import Path

from segment.jit import sources

__all__ = ["COLD_COMPILE_S", "FOLDER", "cache_folder", "configure", "is_cold"]

KEEP = 4
COLD_COMPILE_S = 20
"""What compiling every kernel of ``segment solve FLX`` takes on the 2-core reference machine
[s], rounded up (``benchmarks/bench_cold_start.py``, numba route); the command line says it
once when the kernels are not precompiled and the cache is empty."""

FOLDER: Path | None = None
"""The folder in use once :func:`configure` has run (None: numba's default applies)."""


def cache_folder(source_dir: Path = sources.PACKAGE_DIR, base: Path | None = None) -> Path:
    """The cache folder for the sources in ``source_dir``: their digest and numba's version."""
    digest = hashlib.sha256()
    digest.update(importlib.metadata.version("numba").encode())
    digest.update(sources.digest(source_dir).encode())
    if base is None:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "segment"
    return Path(base) / "numba" / digest.hexdigest()[:16]


def _prune(folder: Path) -> None:
    siblings = sorted((p for p in folder.parent.iterdir() if p.is_dir() and p != folder),
                      key=lambda p: p.stat().st_mtime, reverse=True)
    for old in siblings[KEEP - 1:]:
        shutil.rmtree(old, ignore_errors=True)


def _locator_class():
    """numba's locator for a user-chosen folder, narrowed to this package's files."""
    from numba.core import caching

    # renamed without the underscore in numba 0.61
    base = getattr(caching, "UserProvidedCacheLocator", None) or \
        caching._UserProvidedCacheLocator

    class _SegmentCacheLocator(base):
        """Cache locator for the functions of this package only: they go to :data:`FOLDER`."""

        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = os.path.join(str(FOLDER),
                                            self.get_suitable_cache_subpath(py_file))

        def get_cache_path(self):
            return self._cache_path

        @classmethod
        def from_function(cls, py_func, py_file):
            if FOLDER is None or os.environ.get("NUMBA_CACHE_DIR"):
                return None
            try:
                if sources.PACKAGE_DIR not in Path(py_file).resolve().parents:
                    return None         # not ours: numba's own locators decide
            except OSError:
                return None
            # skip numba's check of config.CACHE_DIR; keep its "file exists, folder writable"
            return super(base, cls).from_function(py_func, py_file)

    return caching, _SegmentCacheLocator


def configure() -> Path | None:
    """Create :func:`cache_folder` and register the locator (once); return the folder (None:
    numba's default). Imports numba."""
    global FOLDER
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
    caching, locator = _locator_class()
    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # renamed in 0.61
    locators = impl._locator_classes
    if not any(getattr(c, "__name__", "") == "_SegmentCacheLocator" for c in locators):
        locators.insert(0, locator)
    FOLDER = folder
    return folder


def is_cold(folder: Path | None = None) -> bool:
    """True when the cache folder holds no compiled kernel yet (a first numba compile).

    ``folder`` defaults to the folder :func:`configure` would use. Unknown (False) when
    numba's own cache applies (``NUMBA_CACHE_DIR`` set, or no home folder)."""
    if folder is None:
        if os.environ.get("NUMBA_CACHE_DIR"):
            return False
        try:
            folder = cache_folder()
        except (OSError, RuntimeError, KeyError):
            return False
    if not Path(folder).is_dir():
        return True
    return not any(Path(folder).rglob("*.nbi"))
