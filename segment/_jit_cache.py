"""Where numba keeps the compiled kernels: a folder keyed on the package's sources.

numba's own cache (``cache=True``) checks only the source file of each compiled function, so a
kernel that calls a function of another module (``model._generalized_force`` calls
``facet._contact``) keeps running the old machine code after that other module is edited: wrong
numbers, silently. We therefore point numba at a folder named after a hash of every
``segment/*.py`` file that defines kernels (``@njit``) and of the numba version, so that any
edit of a kernel module compiles afresh (editing the others, e.g. the report, keeps them).

* Set ``NUMBA_CACHE_DIR`` yourself to choose the folder (then nothing here applies).
* If the folder cannot be created, numba's default (``__pycache__`` beside the sources) stays.
* When a new folder is made, only the most recent :data:`KEEP` folders are kept.

This module must be imported before the first ``@njit(cache=True)`` decorator runs, which is why
``segment/__init__.py`` imports it first.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import numba

__all__ = ["cache_folder", "configure"]

KEEP = 4
SOURCE_DIR = Path(__file__).resolve().parent


def cache_folder(source_dir: Path = SOURCE_DIR, base: Path | None = None) -> Path:
    """The cache folder for the sources in ``source_dir``: a hash of its kernel modules."""
    digest = hashlib.sha256()
    digest.update(numba.__version__.encode())
    for path in sorted(Path(source_dir).glob("*.py")):
        text = path.read_bytes()
        if b"@njit" in text:
            digest.update(path.name.encode())
            digest.update(text)
    if base is None:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "segment"
    return Path(base) / "numba" / digest.hexdigest()[:16]


def _prune(folder: Path) -> None:
    siblings = sorted((p for p in folder.parent.iterdir() if p.is_dir() and p != folder),
                      key=lambda p: p.stat().st_mtime, reverse=True)
    for old in siblings[KEEP - 1:]:
        shutil.rmtree(old, ignore_errors=True)


def configure() -> Path | None:
    """Point numba's cache at :func:`cache_folder`; return it (None when left to numba)."""
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
    # both: numba re-reads its configuration from the environment at times
    os.environ["NUMBA_CACHE_DIR"] = str(folder)
    numba.config.CACHE_DIR = str(folder)
    return folder


FOLDER = configure()
