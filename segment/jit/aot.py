"""The precompiled kernels: the extension module ``segment.jit._aot``, if it is valid here.

:mod:`segment.jit.build` writes the module at installation. It carries its manifest: the
:func:`segment.jit.sources.digest` of the sources it was compiled from and, per entry point,
the kernel and the argument types (:mod:`segment.jit.types`). The module is used only when
that digest is the digest of the sources now (so an edited kernel is never served stale);
otherwise, or when it is missing or does not load, every call goes to numba (the reason is in
:func:`status`).
"""

from __future__ import annotations

import importlib
import json
import logging
import threading

from segment.jit import sources
from segment.jit.types import from_json

__all__ = ["MODULE", "entry_points", "status"]

log = logging.getLogger(__name__)

MODULE = "segment.jit._aot"
_LOCK = threading.Lock()
_STATE: dict | None = None


def _load() -> dict:
    try:
        module = importlib.import_module(MODULE)
    except ImportError as exc:
        return {"precompiled": False, "entry_points": 0, "tables": {},
                "reason": f"no precompiled kernels ({MODULE} not built: {exc})"}
    try:
        manifest = json.loads(module.manifest())
        built_from = manifest["digest"]
        exports = manifest["exports"]
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        return {"precompiled": False, "entry_points": 0, "tables": {},
                "reason": f"{module.__file__} has no valid manifest ({exc})"}
    if built_from != sources.digest():
        return {"precompiled": False, "entry_points": 0, "tables": {},
                "reason": (f"the kernel sources changed since {module.__file__} was built "
                           f"(reinstall the package to rebuild it)")}
    tables: dict[str, dict] = {}
    for entry in exports:
        tables.setdefault(entry["kernel"], {})[from_json(entry["args"])] = getattr(
            module, entry["symbol"])
    return {"precompiled": True, "entry_points": len(exports), "tables": tables,
            "reason": f"precompiled for a generic x86-64 CPU ({module.__file__})"}


def _state() -> dict:
    global _STATE
    if _STATE is None:
        with _LOCK:
            if _STATE is None:
                _STATE = _load()
                log.debug("kernels: %s", _STATE["reason"])
    return _STATE


def entry_points(kernel: str) -> dict:
    """Argument-type key -> precompiled function of one kernel (empty when none)."""
    return _state()["tables"].get(kernel, {})


def status() -> dict:
    """``precompiled``, ``reason`` and ``entry_points`` of the precompiled module."""
    st = _state()
    return {k: st[k] for k in ("precompiled", "reason", "entry_points")}
