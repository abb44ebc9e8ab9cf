"""A content-keyed cache of the report's pictures: a picture already drawn from the same
content on this machine is read back instead of being drawn again (issue 28).

Every figure and 3-D panel of the report is recomputed from its data in every run; only the
drawing (matplotlib's layout and rasterization, VTK's off-screen rendering) is reused, and only
when its key matches. A key is the SHA-256 of

* everything the picture is drawn from: a matplotlib figure's whole pickle (:func:`figure_bytes`,
  which the drawing worker unpickles and draws, so the picture is a function of these bytes) or
  a 3-D panel's equilibrium results (model, pose, forces);
* the code that draws it: the source of every module of :mod:`segment` and the display meshes
  (:func:`package_digest`), for the 3-D panels;
* the drawing environment: Python, matplotlib, numpy, Pillow (and its zlib: it writes the
  PNG), VTK and pyvista versions, the font file matplotlib resolves, its ``matplotlibrc`` and
  the OSMesa library VTK renders with (path, size and time of change of each file), the code
  that draws a figure from its bytes (:mod:`segment.report.drawing`, this module), and the
  Mesa, VTK and display environment variables set (:data:`RENDER_ENVIRONMENT`,
  :data:`DISPLAY_ENVIRONMENT`);
* the resolution, and :data:`KEY_VERSION`.

A changed number, label, colour or line of drawing code gives another key, so a stale picture
is never served; a changed environment does too. A miss costs what the report cost without the
cache, and ``tests/test_picture_cache.py`` checks that a warm build writes the same bytes as a
cold one. The cache lives outside the repository, at ``$SEGMENT_CACHE_DIR`` when set, else
``$XDG_CACHE_HOME/segment/report-pictures`` (``~/.cache/...``), like numba's and pip's caches;
``SEGMENT_CACHE_DIR=off`` (or ``segment validate --no-cache``) turns it off. It keeps the
:data:`MAX_ENTRIES` most recently used pictures.

Why a figure's own pickle is not the key: matplotlib pickles each transform's parents as a
dict keyed by ``id()`` (memory addresses, different in every process). :func:`figure_bytes`
writes the same parents keyed by their order instead (the transform's ``__setstate__`` uses the
keys only to forget a parent), which makes the bytes a function of the figure alone (measured:
the same SHA-256 in separate processes).
"""

from __future__ import annotations

import copyreg
import ctypes.util
import functools
import hashlib
import io
import os
import pickle
import platform
import sys
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from segment.jit.sources import PACKAGE_DIR, files_digest

__all__ = ["CACHE_ENV", "DISPLAY_ENVIRONMENT", "KEY_VERSION", "MAX_ENTRIES",
           "RENDER_ENVIRONMENT", "PictureCache", "cache_root", "figure_bytes", "package_digest"]

CACHE_ENV = "SEGMENT_CACHE_DIR"
"""Environment variable naming the cache folder (``off``: no cache)."""
KEY_VERSION = 1
"""Part of every key: raise it when what a key covers changes."""
MAX_ENTRIES = 300
"""Pictures kept (the most recently used; one report has 13, about 0.2 MB each)."""
RENDER_ENVIRONMENT = ("GALLIUM_", "LIBGL_", "LP_", "MESA_", "VTK_")
"""Environment variables that can change how Mesa and VTK rasterize (the driver, llvmpipe's
threads and SIMD width): those set are part of a 3-D panel's key."""
DISPLAY_ENVIRONMENT = ("DISPLAY", "WAYLAND_DISPLAY")
"""With a display VTK renders through the system's OpenGL, without one through OSMesa
(:mod:`segment.views.render`): these variables are part of a 3-D panel's key too."""
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PNG_END = b"IEND\xaeB`\x82"


def cache_root() -> Path | None:
    """The cache folder: ``$SEGMENT_CACHE_DIR``, else ``$XDG_CACHE_HOME/segment/
    report-pictures`` (default ``~/.cache``); None when ``SEGMENT_CACHE_DIR`` is ``off``."""
    env = os.environ.get(CACHE_ENV)
    if env is not None and env.strip().lower() == "off":
        return None
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = str(Path.home() / ".cache")
        except RuntimeError:                # no home folder: no cache
            return None
    return Path(base) / "segment" / "report-pictures"


def _transform_types() -> list[type]:
    from matplotlib.transforms import TransformNode

    seen, todo = set(), [TransformNode]
    while todo:
        cls = todo.pop()
        if cls not in seen:
            seen.add(cls)
            todo.extend(cls.__subclasses__())
    return list(seen)


def _reduce_transform(obj):
    """A transform as ``object.__reduce_ex__`` gives it, its parents keyed by order."""
    state = obj.__getstate__()
    state["_parents"] = dict(enumerate(state["_parents"].values()))
    return copyreg.__newobj__, (type(obj),), state


def figure_bytes(fig) -> bytes:
    """The pickle of a matplotlib figure, the same bytes in every process for the same figure
    (transform parents keyed by order, not ``id()``); :func:`pickle.loads` restores it."""
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL)
    table = copyreg.dispatch_table.copy()
    for cls in _transform_types():
        table[cls] = _reduce_transform
    pickler.dispatch_table = table
    pickler.dump(fig)
    return buf.getvalue()


@functools.lru_cache(maxsize=1)
def package_digest() -> str:
    """SHA-256 of the source of every module of :mod:`segment` and of its display meshes
    (relative path and bytes, in sorted order): the code that draws a 3-D panel."""
    files = sorted((p for p in PACKAGE_DIR.rglob("*") if p.is_file()
                    and "__pycache__" not in p.parts
                    and (p.suffix == ".py" or "meshes" in p.relative_to(PACKAGE_DIR).parts)),
                   key=lambda p: p.relative_to(PACKAGE_DIR).as_posix())
    return files_digest(files)


def _file_identity(path) -> str:
    if not path:
        return "none"
    try:
        p = Path(path).resolve()
        st = p.stat()
    except OSError:
        return f"{path}:missing"
    return f"{p}:{st.st_size}:{st.st_mtime_ns}"


@functools.lru_cache(maxsize=2)
def _environment(kind: str) -> bytes:
    import matplotlib
    import numpy
    from matplotlib import font_manager
    from PIL import features

    parts = [f"key {KEY_VERSION}", sys.version, platform.machine(),
             f"matplotlib {matplotlib.__version__}", f"numpy {numpy.__version__}",
             f"Pillow {_installed('Pillow')} zlib {features.version('zlib')} zlib-ng "
             f"{features.check_feature('zlib_ng')}",
             _file_identity(font_manager.findfont(font_manager.FontProperties())),
             _file_identity(matplotlib.matplotlib_fname()), _drawing_digest()]
    if kind == "render":
        osmesa = ctypes.util.find_library("OSMesa")
        # the installed versions, not the packages: a picture read back never loads VTK
        parts += [f"vtk {_installed('vtk')}", f"pyvista {_installed('pyvista')}",
                  _file_identity(_library_path(osmesa)), package_digest()]
        parts += [f"{k}={v}" for k, v in sorted(os.environ.items())
                  if k.startswith(RENDER_ENVIRONMENT) or k in DISPLAY_ENVIRONMENT]
    return "\n".join(parts).encode()


def _installed(distribution: str) -> str:
    """The installed version of a distribution, or ``unknown`` (a package installed without
    its metadata, or under another name)."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "unknown"


def _drawing_digest() -> str:
    """SHA-256 of the code that turns a figure's bytes into a PNG: the drawing module
    (:mod:`segment.report.drawing`) and this one."""
    return files_digest([PACKAGE_DIR / "report" / "drawing.py", Path(__file__).resolve()])


def _library_path(name: str | None) -> str | None:
    """The file of a shared library ``find_library`` named (searched in the usual folders)."""
    if not name:
        return None
    if os.path.isabs(name):
        return name
    for folder in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/usr/lib64",
                   "/usr/lib", "/lib"):
        candidate = Path(folder) / name
        if candidate.exists():
            return str(candidate)
    return name


class PictureCache:
    """PNG bytes by key in a folder (``root`` None: nothing is kept). Thread-safe: each entry
    is written to a temporary file and renamed into place."""

    def __init__(self, root: Path | None = None, max_entries: int = MAX_ENTRIES):
        self.root = None if root is None else Path(root)
        self.max_entries = max_entries
        self.hits = 0
        """Pictures read back."""
        self.misses = 0
        """Pictures asked for and not read back (to be drawn)."""

    @classmethod
    def default(cls) -> PictureCache:
        """The cache at :func:`cache_root` (off when that is None)."""
        return cls(cache_root())

    def key(self, kind: str, *parts: bytes | str) -> str:
        """The key of a picture of ``kind`` (``"figure"`` or ``"render"``) drawn from
        ``parts`` in this environment."""
        h = hashlib.sha256(_environment(kind))
        for part in (kind, *parts):
            data = part.encode() if isinstance(part, str) else part
            h.update(len(data).to_bytes(8, "little"))
            h.update(data)
        return h.hexdigest()

    def _path(self, key: str) -> Path:
        return self.root / f"{key}.png"

    def get(self, key: str) -> bytes | None:
        """The picture stored under ``key``, or None (no cache, no entry, or not a whole
        PNG)."""
        if self.root is None:
            self.misses += 1
            return None
        path = self._path(key)
        try:
            data = path.read_bytes()
        except OSError:
            self.misses += 1
            return None
        if not (data.startswith(PNG_SIGNATURE) and data.endswith(PNG_END)):
            self.misses += 1
            return None
        try:
            os.utime(path)          # most recently used
        except OSError:
            pass
        self.hits += 1
        return data

    def put(self, key: str, png: bytes) -> None:
        """Store ``png`` under ``key`` (best effort: a cache that cannot be written is
        skipped)."""
        if self.root is None:
            return
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            tmp = self.root / f".{key}.{os.getpid()}.tmp"
            tmp.write_bytes(png)
            os.replace(tmp, self._path(key))
        except OSError:
            pass

    def cached(self, key: str, make) -> bytes:
        """The picture under ``key``, else ``make()`` stored under it."""
        png = self.get(key)
        if png is None:
            png = make()
            self.put(key, png)
        return png

    def prune(self) -> None:
        """Keep the :attr:`max_entries` most recently used pictures, and remove temporary
        files a failed write left more than an hour ago. Best effort: never raises."""
        if self.root is None:
            return
        try:
            entries = []
            for p in self.root.iterdir():
                st = p.stat()
                if p.suffix == ".png" and len(p.stem) == 64:
                    entries.append((st.st_mtime_ns, p.name, p))
                elif p.suffix == ".tmp" and p.name.startswith(".") and \
                        time.time() - st.st_mtime > 3600:
                    p.unlink(missing_ok=True)
            entries.sort(reverse=True)
            for _, _, p in entries[self.max_entries:]:
                p.unlink(missing_ok=True)
        except OSError:
            pass
