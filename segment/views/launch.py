"""``segment.explore(model)``: the explorer that fits where it is called.

In a Jupyter kernel: the notebook widget (:mod:`segment.views.notebook`). Elsewhere: the
desktop window (:mod:`segment.views.desktop`, needs a display); without a display, a
``RuntimeError`` that points to ``segment explore --web`` (the browser page,
:mod:`segment.views.web`).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

from segment.core.model import Segment

__all__ = ["explore"]


def _in_kernel() -> bool:
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    shell = ipython.get_ipython()
    return shell is not None and hasattr(shell, "kernel")


def explore(models: Segment | Mapping[str, Segment], **options):
    """Open the explorer: a widget in a notebook, else a desktop window.

    Parameters
    ----------
    models : Segment or mapping of str to Segment
        The model (e.g. ``segment.c5c6()``), or named model variants for the model menu
        (e.g. ``{"intact": m1, "posterior removed": m2}``). The desktop window shows the
        first one.
    **options
        For the notebook: ``cases``, ``geometry``, ``magnify``, ``tension_range``, ``view``
        (:class:`segment.views.notebook.ExplorerWidget`); for the window, those of
        :class:`segment.views.desktop.Explorer`.

    Returns
    -------
    ExplorerWidget or Explorer
    """
    if _in_kernel():
        from segment.views.notebook import ExplorerWidget

        return ExplorerWidget(models, **options)
    from segment.views.desktop import explore as desktop

    if isinstance(models, Mapping):
        models = next(iter(models.values()))
    return desktop(models, **options)
