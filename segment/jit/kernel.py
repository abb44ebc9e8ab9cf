"""The kernel decorator: one Python function, run precompiled or compiled by numba on demand.

``@njit`` (this module's) replaces ``numba.njit(cache=True)`` throughout the package. It
returns a :class:`Kernel`, which imports nothing at definition: ``import segment`` and a solve
from precompiled code never import numba. See :mod:`segment.jit` for the two routes.
"""

from __future__ import annotations

import logging
import threading
import types
from collections.abc import Callable

from segment.jit import aot
from segment.jit.types import type_key

__all__ = ["KERNELS", "Kernel", "load_numba", "njit", "prange", "status"]

log = logging.getLogger(__name__)

KERNELS: dict[str, Kernel] = {}
"""Every kernel defined so far, by ``module.qualname``."""

prange = range
"""``for i in prange(n)`` in a kernel: a parallel loop under numba's parallel JIT
(``njit(parallel=True)``), an ordinary loop in Python and in the precompiled module, which
runs on one thread (its iterations are independent, so the results are the same)."""

_LOCK = threading.RLock()
_NUMBA = None
_UNSET = object()
_OPTIONS = frozenset({"parallel"})


def load_numba():
    """numba, imported on first use (a JIT compile, a parallel launch), with the cache folder of
    :mod:`segment.jit.cache` configured."""
    global _NUMBA
    if _NUMBA is None:
        with _LOCK:
            if _NUMBA is None:
                import numba

                from segment.jit import cache

                cache.configure()
                _NUMBA = numba
    return _NUMBA


class Kernel:
    """A compiled function of the package (see :mod:`segment.jit`).

    Calling it runs the precompiled entry point for exactly these argument types when there is
    one, else numba's dispatcher (:attr:`dispatcher`, compiled for this CPU on first use).
    Attributes of numba's dispatcher (``signatures``, ``inspect_types``, ...) are reached
    through it. A kernel pickles by name.
    """

    def __init__(self, py_func: Callable, *, parallel: bool = False):
        self.py_func = py_func
        self.parallel = bool(parallel)
        self.name = f"{py_func.__module__}.{py_func.__qualname__}"
        self.__name__ = py_func.__name__
        self.__qualname__ = py_func.__qualname__
        self.__module__ = py_func.__module__
        self.__doc__ = py_func.__doc__
        self.__wrapped__ = py_func
        self._dispatcher = None
        self._aot = _UNSET

    def __repr__(self) -> str:
        return f"<segment kernel {self.name}>"

    def __reduce__(self):
        return _kernel_by_name, (self.name,)

    def __call__(self, *args):
        fn = self.precompiled_for(args)
        if fn is not None:
            return fn(*args)
        return self.dispatcher(*args)

    def precompiled_for(self, args: tuple):
        """The precompiled entry point for exactly the types of ``args``, or None."""
        table = self._aot
        if table is _UNSET:
            table = self._aot = aot.entry_points(self.name)
        return table.get(type_key(args)) if table else None

    @property
    def dispatcher(self):
        """numba's dispatcher of this kernel (created, and numba imported, on first use).

        ``parallel=True`` kernels get numba's parallel loops here: the dispatcher compiles a
        copy of the function whose ``prange`` is numba's."""
        if self._dispatcher is None:
            numba = load_numba()
            with _LOCK:
                if self._dispatcher is None:
                    func = self.py_func
                    if self.parallel:
                        func = types.FunctionType(
                            func.__code__, {**func.__globals__, "prange": numba.prange},
                            func.__name__, func.__defaults__, func.__closure__)
                        func.__qualname__ = self.py_func.__qualname__
                        func.__module__ = self.py_func.__module__
                        func.__doc__ = self.py_func.__doc__
                    self._dispatcher = numba.njit(cache=True, parallel=self.parallel)(func)
                    log.debug("numba dispatcher for %s", self.name)
        return self._dispatcher

    @property
    def _numba_type_(self):
        # numba types a global kernel inside another kernel as its dispatcher: the call is
        # compiled into the caller
        return self.dispatcher._numba_type_

    def __getattr__(self, attr):
        if attr.startswith("__") or attr in ("_dispatcher", "_aot"):
            raise AttributeError(attr)
        return getattr(self.dispatcher, attr)


def _kernel_by_name(name: str) -> Kernel:
    if name not in KERNELS:
        import importlib

        importlib.import_module(name.rsplit(".", 1)[0])   # kernels are module-level
    return KERNELS[name]


def njit(func: Callable | None = None, *, cache: bool = True, parallel: bool = False):
    """Declare a kernel: ``@njit`` or ``@njit(parallel=True)`` (``cache`` is accepted for
    numba's spelling and always on)."""
    if not cache:
        raise ValueError("segment kernels are always cached (cache=True)")

    def wrap(f):
        kernel = Kernel(f, parallel=parallel)
        with _LOCK:
            KERNELS[kernel.name] = kernel       # a reloaded module replaces its kernels
        return kernel

    return wrap if func is None else wrap(func)


def status() -> dict:
    """Which route the kernels take in this process: ``precompiled`` (bool), ``reason``
    (why not, or the module's path), ``entry_points`` (count) and ``numba_imported``."""
    st = aot.status()
    st["numba_imported"] = _NUMBA is not None
    return st
