"""The notebook explorer: ipywidgets sliders and the three.js view (anywidget) in Jupyter.

:func:`explore` in a Jupyter kernel returns an :class:`ExplorerWidget`: sliders for the six
load components [N, N m], the disc and ligament stiffness scales and the magnification,
menus for the named load cases and the model variants, the 3-D view and the table. Every
change re-solves (:class:`~segment.views.session.ExplorerSession`, warm-started) and sends
the new frame to the view. The view is the same ES module the browser page uses
(``assets/explorer.js``); three.js travels with the widget (its vendored source as a trait),
so nothing is fetched from a CDN and a saved notebook's widget state is complete.

anywidget and ipywidgets are the ``notebook`` extra (``pip install "c5c6-segment[notebook]"``).
"""

from __future__ import annotations

from collections.abc import Mapping

from segment._extras import require
from segment.core.model import Segment
from segment.views.anatomy import GEOMETRIES
from segment.views.session import CONTROLS, ExplorerSession
from segment.views.web import ASSETS

anywidget = require("anywidget", "notebook", "the notebook explorer")
widgets = require("ipywidgets", "notebook", "the notebook explorer")
traitlets = require("traitlets", "notebook", "the notebook explorer")

__all__ = ["ExplorerView", "ExplorerWidget", "explore"]


class ExplorerView(anywidget.AnyWidget):
    """The 3-D view and the table (front end: ``assets/explorer.js``)."""

    _esm = (ASSETS / "explorer.js").read_text(encoding="utf-8")
    _three_js = traitlets.Unicode((ASSETS / "three.module.min.js").read_text(encoding="utf-8")
                                  ).tag(sync=True)
    three_url = traitlets.Unicode("").tag(sync=True)
    scene = traitlets.Dict().tag(sync=True)
    frame = traitlets.Dict().tag(sync=True)
    view = traitlets.Unicode("lateral").tag(sync=True)


class ExplorerWidget(widgets.VBox):
    """Sliders, menus, the 3-D view and the table, driven by one :class:`ExplorerSession`.

    Parameters
    ----------
    models : Segment or mapping of str to Segment
        The model, or the model variants of the model menu by name (``{"intact": m1, ...}``).
    view : str
        Initial camera: ``lateral`` (default), ``posterior``, ``oblique``, ``anterior`` or
        ``superior``.
    **session_options
        ``cases``, ``geometry`` (``"anatomical"``, the default, or ``"simple"``; the menu
        switches), ``magnify``, ``tension_range`` of :class:`ExplorerSession`.

    Attributes
    ----------
    session : ExplorerSession
    sliders : dict of str to ipywidgets.FloatSlider
    case, model, geometry : ipywidgets.Dropdown
    view : ExplorerView
    """

    def __init__(self, models: Segment | Mapping[str, Segment], *,
                 view: str = "lateral", **session_options):
        self.session = s = ExplorerSession(models, **session_options)
        self._syncing = False
        style = {"description_width": "230px"}
        layout = widgets.Layout(width="480px")
        self.sliders = {
            c.name: widgets.FloatSlider(value=s.values[c.name], min=c.low, max=c.high,
                                        step=c.step, description=c.label, style=style,
                                        layout=layout, readout_format=".2f",
                                        continuous_update=True)
            for c in CONTROLS}
        self.case = widgets.Dropdown(options=["custom", "unloaded", *s.cases],
                                     value=s.case, description="load case", style=style,
                                     layout=layout)
        self.model = widgets.Dropdown(options=list(s.models), value=s.model_name,
                                      description="model", style=style, layout=layout)
        self.geometry = widgets.Dropdown(options=list(GEOMETRIES), value=s.geometry_name,
                                         description="bones (display only)", style=style,
                                         layout=layout)
        self.view = ExplorerView(scene=s.scene(), frame=s.frame(), view=view)
        for name, w in self.sliders.items():
            w.observe(lambda ch, n=name: self._changed(n, ch["new"]), names="value")
        self.case.observe(lambda ch: self._changed("case", ch["new"]), names="value")
        self.model.observe(lambda ch: self._changed("model", ch["new"]), names="value")
        self.geometry.observe(lambda ch: self._changed("geometry", ch["new"]), names="value")
        controls = widgets.VBox([self.model, self.case, self.geometry,
                                 *self.sliders.values()])
        super().__init__([controls, self.view])

    def _changed(self, name: str, value) -> None:
        if self._syncing or (name == "case" and value == "custom"):
            return
        self.set(**{name: value})

    def set(self, **changes):
        """Change controls as a user would (names of :meth:`ExplorerSession.update`) and
        update the view; returns the new :class:`~segment.EquilibriumResult`."""
        s = self.session
        key = s.scene_key
        result = s.update(**changes)
        self._syncing = True
        try:
            for name, w in self.sliders.items():
                w.value = s.values[name]
            self.case.value = s.case
            self.model.value = s.model_name
            self.geometry.value = s.geometry_name
        finally:
            self._syncing = False
        if s.scene_key != key:
            self.view.scene = s.scene()
        self.view.frame = s.frame()
        return result

    @property
    def result(self):
        """The equilibrium shown."""
        return self.session.result


def explore(models: Segment | Mapping[str, Segment], **options) -> ExplorerWidget:
    """The notebook explorer (see :class:`ExplorerWidget`); display it as a cell's result."""
    return ExplorerWidget(models, **options)
