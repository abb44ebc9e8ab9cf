"""The report's figures drawn in a worker process are the bytes of drawing them here."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from segment.report.drawing import (
    LAYOUT_ATTRIBUTE,
    FigureDrawer,
    deferred_layout,
    png_bytes,
    tight,
)

DPI = 110


def _figure(rect):
    """A multi-panel figure like the report's, ending with its tight layout."""
    fig, axes = plt.subplots(2, 3, figsize=(10, 6))
    x = np.linspace(0.0, 3.6, 37)
    for k, ax in enumerate(axes.ravel()):
        ax.plot(x, np.sin((k + 1) * x), label="model")
        ax.set_title(f"case {k}")
        ax.set_xlabel("moment [N m]")
        ax.set_ylabel("rotation [deg]")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="lower center")
    tight(fig, rect=rect)
    return fig


def test_tight_applies_at_once_outside_the_report():
    fig = _figure((0, 0.05, 1, 1))
    assert not hasattr(fig, LAYOUT_ATTRIBUTE)          # laid out already
    plt.close(fig)


@pytest.mark.slow
def test_a_figure_drawn_by_the_worker_is_the_same_png():
    rect = (0, 0.08, 1, 0.97)
    here = png_bytes(_figure(rect), DPI)
    with deferred_layout():
        deferred = _figure(rect)
    assert getattr(deferred, LAYOUT_ATTRIBUTE) == {"rect": rect}
    with FigureDrawer(DPI) as draw:
        there = draw(deferred).result(timeout=120)
    assert there == here
    # and the layout was really applied there: without it the picture differs
    with deferred_layout():
        plain = _figure(rect)
    delattr(plain, LAYOUT_ATTRIBUTE)
    assert png_bytes(plain, DPI) != here


def test_deferral_is_per_block():
    with deferred_layout():
        pass
    fig = _figure(None)
    assert not hasattr(fig, LAYOUT_ATTRIBUTE)
    plt.close(fig)
