"""Drawing the report's figures to PNG in a second process, while the report goes on.

A matplotlib figure of the report is built in the main process (its data, artists and labels)
and drawn by a worker process: the figure is pickled as soon as a section hands it to the
report (:meth:`segment.report.document.Report.figure`), and the worker applies its tight
layout (:func:`tight`, deferred while :func:`deferred_layout` is active), draws it and returns
the PNG bytes. Layout and drawing are most of a figure's cost (about 0.3-1 s each for the
report's multi-panel figures); on a second core they overlap with the sections that follow.

The bytes are those of drawing the figure in the main process: a pickled figure carries every
artist and property, the worker uses the same matplotlib, fonts and Agg backend, and the
report sets no rcParams (``tests/test_report_drawing.py`` compares both routes byte for
byte). The worker is started with ``spawn`` (no fork of a process that runs threads).
"""

from __future__ import annotations

import contextlib
import contextvars
import io
import multiprocessing
import pickle
from concurrent.futures import Future, ProcessPoolExecutor

__all__ = ["FigureDrawer", "deferred_layout", "png_bytes", "tight"]

_DEFER = contextvars.ContextVar("segment_report_defer_layout", default=False)
LAYOUT_ATTRIBUTE = "_segment_tight_layout"
"""Where :func:`tight` records a deferred layout on a figure (pickled with it)."""


def tight(fig, rect=None) -> None:
    """``fig.tight_layout(rect=rect)``; while :func:`deferred_layout` is active, recorded on
    the figure and applied where it is drawn (:func:`png_bytes`). The last call of a figure
    function: nothing may depend on the layout before the figure is drawn."""
    kwargs = {} if rect is None else {"rect": tuple(rect)}
    if _DEFER.get():
        setattr(fig, LAYOUT_ATTRIBUTE, kwargs)
    else:
        fig.tight_layout(**kwargs)


@contextlib.contextmanager
def deferred_layout():
    """Within this block (this thread), :func:`tight` records the layout instead of applying
    it."""
    token = _DEFER.set(True)
    try:
        yield
    finally:
        _DEFER.reset(token)


def png_bytes(fig, dpi: float) -> bytes:
    """PNG of ``fig`` (a Figure or its pickle) at ``dpi``, after its deferred layout."""
    if isinstance(fig, bytes):
        fig = pickle.loads(fig)
    layout = getattr(fig, LAYOUT_ATTRIBUTE, None)
    if layout is not None:
        fig.tight_layout(**layout)
        delattr(fig, LAYOUT_ATTRIBUTE)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


class FigureDrawer:
    """A worker process that draws pickled figures (:func:`png_bytes`); a context manager.

    ``drawer(fig)`` returns a Future of the PNG bytes and closes ``fig`` here.
    """

    def __init__(self, dpi: float):
        self.dpi = dpi
        self._pool = ProcessPoolExecutor(max_workers=1,
                                         mp_context=multiprocessing.get_context("spawn"))

    def __call__(self, fig) -> Future:
        import matplotlib.pyplot as plt

        data = pickle.dumps(fig)
        plt.close(fig)
        return self._pool.submit(png_bytes, data, self.dpi)

    def __enter__(self) -> FigureDrawer:
        return self

    def __exit__(self, *exc) -> None:
        self._pool.shutdown(wait=True, cancel_futures=exc[0] is not None)
