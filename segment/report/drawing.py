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
byte). The worker is started with ``spawn`` (no fork of a process that runs threads), and only
when a figure has to be drawn: a figure whose pickle is in the picture cache
(:mod:`segment.report.picture_cache`) is read from there.
"""

from __future__ import annotations

import contextlib
import contextvars
import io
import multiprocessing
import pickle
from concurrent.futures import Future, ProcessPoolExecutor

from segment.report.picture_cache import PictureCache, figure_bytes

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

    ``drawer(fig)`` returns a Future of the PNG bytes and closes ``fig`` here. With a
    ``cache``, a figure drawn before from the same pickle is read from it, and what the worker
    draws is stored in it; the worker is started on the first figure the cache does not hold.
    """

    def __init__(self, dpi: float, cache: PictureCache | None = None):
        self.dpi = dpi
        self.cache = cache or PictureCache(None)
        self._pool: ProcessPoolExecutor | None = None

    def __call__(self, fig) -> Future:
        import matplotlib.pyplot as plt

        data = figure_bytes(fig)
        plt.close(fig)
        key = self.cache.key("figure", f"dpi {self.dpi!r}", data)
        png = self.cache.get(key)
        if png is not None:
            done: Future = Future()
            done.set_result(png)
            return done
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=1,
                                             mp_context=multiprocessing.get_context("spawn"))
        drawn = self._pool.submit(png_bytes, data, self.dpi)
        def store(f: Future) -> None:
            if not f.cancelled() and f.exception() is None:
                self.cache.put(key, f.result())

        drawn.add_done_callback(store)
        return drawn

    def __enter__(self) -> FigureDrawer:
        return self

    def __exit__(self, *exc) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=exc[0] is not None)
