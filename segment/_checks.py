"""Checks of counts, seeds and memory shared by every layer and the command line (issue 21).

Counts are integers (``True``, ``2.5``, ``"5"`` and complex numbers are ``TypeError``\\ s naming
the argument; an integral float such as ``1e5`` is accepted), within stated bounds; a study
checks the memory its arrays need against the memory available before it allocates them.
"""

from __future__ import annotations

import math
import numbers
import os

__all__ = ["MAX_DRAWS", "MAX_EVALUATIONS", "MAX_SEED", "MAX_STRIPS", "available_memory",
           "check_count", "check_memory", "check_seed", "format_bytes"]

MAX_SEED = 2 ** 32 - 1
"""Largest seed of the studies' generators (SALib's scrambled Sobol sequence takes 32 bits)."""
# Upper bounds of counts, here so that the command line states them without importing the
# studies; each is explained where it is used.
MAX_STRIPS = 100
"""Strips per ligament: :data:`segment.elements.ligament.MAX_STRIPS`."""
MAX_EVALUATIONS = 10 ** 8
"""Evaluations of one Sobol study: :data:`segment.studies.sobol.MAX_EVALUATIONS`."""
MAX_DRAWS = 10 ** 8
"""Posterior draws of one MCMC run: :data:`segment.studies.calibration.posterior.MAX_DRAWS`."""
MEMORY_FRACTION = 0.8
"""A study may use at most this share of the memory available when it starts (the rest is
for the interpreter, numba and the other processes of the machine)."""


def check_count(value, name: str, *, minimum: int = 1, maximum: int | None = None,
                why: str = "") -> int:
    """``value`` as an int within ``[minimum, maximum]``, else an error naming ``name``.

    ``why`` (optional) is appended to the message of a value above ``maximum``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if not isinstance(value, numbers.Integral):
        if not math.isfinite(value) or value != int(value):
            raise TypeError(f"{name} must be an integer, got {value!r}")
    n = int(value)
    if n < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {n}")
    if maximum is not None and n > maximum:
        raise ValueError(f"{name} must be <= {maximum:,}, got {n:,}" + (f" ({why})" if why
                                                                        else ""))
    return n


def check_seed(value, name: str = "seed", *, allow_none: bool = True) -> int | None:
    """A generator seed: None (if allowed) or an integer in ``[0, MAX_SEED]``."""
    if value is None and allow_none:
        return None
    return check_count(value, name, minimum=0, maximum=MAX_SEED)


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation (Linux ``MemAvailable``, else the
    free physical pages), or None when the system does not say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return None


def format_bytes(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB", "PB"):
        if abs(n) < 1000 or unit == "PB":
            return f"{n:.3g} {unit}"
        n /= 1000.0
    return f"{n:.3g} PB"      # pragma: no cover


def check_memory(nbytes: float, what: str, *, hint: str = "") -> None:
    """A ValueError when ``what`` needs more than :data:`MEMORY_FRACTION` of the available
    memory (nothing is checked when the system does not say how much is available)."""
    free = available_memory()
    if free is None:
        return
    if nbytes > MEMORY_FRACTION * free:
        raise ValueError(f"{what} needs about {format_bytes(nbytes)} of memory, "
                         f"{format_bytes(free)} are available" + (f"; {hint}" if hint else ""))
