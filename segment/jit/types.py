"""Argument types of a kernel call, as numba's dispatch sees them, without importing numba.

Precompiled code has no type checks of its own: given a float32 array where it was compiled for
float64, it reads the memory as float64. A call is therefore routed to precompiled code only
when :func:`type_key` of its arguments equals the key of a signature it was compiled for. The
key follows ``numba.typeof`` exactly for the types the kernels take (tests hold the two
equal, ``tests/test_jit.py``); anything else has no key (None) and goes to numba's dispatcher.

Keys (also the JSON form in ``exports.json``, with lists for tuples):

========================  ====================================================================
``"f8"`` ``"i8"``          Python float / numpy float64, Python int / numpy int64
``"b1"`` ``"c16"``         Python bool / numpy bool, Python complex / numpy complex128
``"none"``                 None
``("A", c, n, L, w)``      ndarray: dtype character ``c``, ``n`` dimensions, layout ``L``
                           (``C``, ``F`` or ``A`` as numba's ``map_layout``), writeable ``w``;
                           an array that is not aligned has no key
``("T", k1, k2, ...)``     tuple of the keys of its items
========================  ====================================================================
"""

from __future__ import annotations

import numpy as np

__all__ = ["from_json", "numba_type", "to_json", "type_key"]

_SCALARS = {float: "f8", np.float64: "f8", int: "i8", np.int64: "i8", bool: "b1",
            np.bool_: "b1", complex: "c16", np.complex128: "c16", type(None): "none"}
_INT64_MIN, _INT64_MAX = -(2 ** 63), 2 ** 63 - 1
# numpy's flag bits (ndarray.flags.num): C_CONTIGUOUS 0x1, F_CONTIGUOUS 0x2, ALIGNED 0x100,
# WRITEABLE 0x400. Layout as numba's map_layout: C when C-contiguous, else F, else A.
_LAYOUT = {0: "A", 1: "C", 2: "F", 3: "C"}
_ndarray = np.ndarray


def _key(x):
    t = type(x)
    if t is _ndarray:
        bits = x.flags.num
        if not bits & 0x100:
            return None             # not aligned: numba's dispatch decides
        return ("A", x.dtype.char, x.ndim, _LAYOUT[bits & 3], (bits & 0x400) != 0)
    if t is tuple:
        keys = tuple([_key(item) for item in x])
        return None if None in keys else ("T", *keys)
    if t is int and not _INT64_MIN <= x <= _INT64_MAX:
        return None                 # numba types it uint64 or refuses it
    return _SCALARS.get(t)


def type_key(args: tuple):
    """The key of a call's argument tuple (hashable), or None when an argument has none."""
    keys = tuple([_key(a) for a in args])
    return None if None in keys else keys


def to_json(key):
    """A key as JSON data (tuples become lists)."""
    if isinstance(key, tuple):
        return [to_json(k) for k in key]
    return key


def from_json(data):
    """The key of :func:`to_json`'s data (lists become tuples)."""
    if isinstance(data, list):
        return tuple(from_json(d) for d in data)
    return data


def numba_type(key):
    """The numba type of one argument's key (imports numba: build time and tests only)."""
    from numba.core import types
    from numba.np import numpy_support

    if isinstance(key, tuple) and key[0] == "A":
        _, char, ndim, layout, writeable = key
        return types.Array(numpy_support.from_dtype(np.dtype(char)), ndim, layout,
                           readonly=not writeable)
    if isinstance(key, tuple) and key[0] == "T":
        return types.BaseTuple.from_types([numba_type(k) for k in key[1:]])
    scalars = {"f8": types.float64, "i8": types.int64, "b1": types.boolean,
               "c16": types.complex128, "none": types.none}
    return scalars[key]
