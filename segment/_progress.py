"""Progress bars for long work (tqdm): on when stderr is a terminal, off otherwise.

Functions that run long (``solve_many``, ``uncertainty_bands``, ``simulate`` through the CLI,
``segment validate``) take ``progress=None``: None follows :data:`ENABLED`, True or False
forces the bar on or off. The command line sets :data:`ENABLED` to False for ``-q``. Bars
write to stderr and disappear when done; logging (``-v``) carries the same information as
lines.
"""

from __future__ import annotations

import sys

__all__ = ["ENABLED", "bar"]

ENABLED: bool | None = None
"""None: bars when stderr is a terminal; False: never (``segment -q``); True: always."""


def bar(*, total=None, desc: str = "", unit: str = "it", progress: bool | None = None):
    """A tqdm bar on stderr, disabled unless ``progress`` (or :data:`ENABLED`) allows it."""
    from tqdm import tqdm

    if progress is None:
        progress = ENABLED if ENABLED is not None else sys.stderr.isatty()
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False,
                disable=not progress, dynamic_ncols=True)
