"""The sources a compiled kernel depends on, and one hash of them.

A compiled kernel (precompiled or cached by numba) is valid only for the sources it was
compiled from. numba's own cache checks just the file of the function it compiles, so a kernel
that calls into another module (``residual._generalized_force`` calls
``contact.end_face_contact``) would keep running old machine code after that other module is
edited. Both routes of
:mod:`segment.jit` therefore key their compiled code on :func:`digest`: a hash of every module
of the package that defines a kernel (its text contains ``@njit``), of the modules whose
constants kernels read (:data:`CONSTANT_MODULES`; ``tests/test_jit.py`` checks that every
global a kernel reads is defined in one of the hashed files), and of what shapes the
precompiled module (the entry-point list ``exports.json``, the type rules and the builder).
Editing any other module (the report, the command line) keeps the compiled kernels.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["CONSTANT_MODULES", "PACKAGE_DIR", "digest", "files_digest", "kernel_files"]

PACKAGE_DIR = Path(__file__).resolve().parent.parent
"""The ``segment`` source folder."""

MARKER = b"@njit"
"""What marks a module that defines kernels."""

CONSTANT_MODULES = ("core/laws.py", "core/status.py", "solvers/dynamics/bodies.py")
"""Modules (relative to :data:`PACKAGE_DIR`) without kernels whose module-level constants
kernels read; hashed as if they defined kernels."""

BUILD_FILES = ("jit/exports.json", "jit/types.py", "jit/build.py")
"""What decides the machine code of the precompiled module besides the kernel sources."""


def kernel_files(source_dir: Path = PACKAGE_DIR) -> list[Path]:
    """The files :func:`digest` hashes, in a fixed order (sorted relative paths)."""
    source_dir = Path(source_dir)
    machinery = source_dir / "jit"        # mentions the marker in its documentation only
    chosen = {p for p in source_dir.rglob("*.py")
              if p.parent != machinery and MARKER in p.read_bytes()}
    chosen |= {source_dir / rel for rel in (*CONSTANT_MODULES, *BUILD_FILES)
               if (source_dir / rel).is_file()}
    return sorted(chosen, key=lambda p: p.relative_to(source_dir).as_posix())


def files_digest(paths, source_dir: Path = PACKAGE_DIR) -> str:
    """SHA-256 (hex) of the relative path (to ``source_dir``) and bytes of each of ``paths``,
    in the order given."""
    source_dir = Path(source_dir)
    h = hashlib.sha256()
    for path in paths:
        h.update(Path(path).relative_to(source_dir).as_posix().encode())
        h.update(b"\0")
        h.update(Path(path).read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def digest(source_dir: Path = PACKAGE_DIR) -> str:
    """SHA-256 (hex) of the relative path and bytes of every file of :func:`kernel_files`."""
    return files_digest(kernel_files(source_dir), source_dir)
