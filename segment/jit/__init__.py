"""Compiled kernels: written once in Python, run as precompiled machine code or with numba.

Every numerical kernel of the package is a plain Python function decorated with
:func:`njit` (this package's, not numba's). A kernel runs, in this order of preference:

1. **Precompiled** (ahead of time, :mod:`segment.jit.aot`): the package's installation
   compiles the entry points listed in ``exports.json`` for a baseline x86-64 CPU (LLVM's
   ``generic`` model: SSE2, no AVX, no FMA) into the extension module ``segment.jit._aot``
   (:mod:`segment.jit.build`, run by ``setup.py``). Loading it takes a millisecond and does not
   import numba, so the first ``segment solve`` answers at once and gives the same bits on
   every x86-64 CPU. A call runs precompiled code only when the types of its arguments are
   exactly those the code was compiled for (:func:`segment.jit.types.type_key`, the rule
   numba's own dispatch follows) and when the kernel sources are those the module was built
   from (:func:`segment.jit.sources.digest`): an edited kernel is never served stale.
2. **numba JIT** otherwise: compiled for this CPU on first use and cached in a folder keyed on
   the sources (:mod:`segment.jit.cache`). A kernel declared ``parallel=True`` runs here when
   a caller asks for several threads (:func:`segment.solvers.batch.launch`).

Inside a kernel, a call to another kernel is compiled into the caller (numba types a
:class:`Kernel` as its dispatcher, :attr:`Kernel._numba_type_`), so the choice above is made
once per call from Python. Nothing here changes the process's environment or numba's settings:
a user's own numba functions are untouched. ``status()`` says which route is in use and why.
"""

from segment.jit.kernel import KERNELS, Kernel, load_numba, njit, prange, status

__all__ = ["KERNELS", "Kernel", "load_numba", "njit", "prange", "status"]
