"""The desktop explorer: a pyvista window with load sliders and a live equilibrium."""

from __future__ import annotations

import time

import numpy as np

from segment._extras import require
from segment.core.equilibrium_result import EquilibriumResult
from segment.core.model import Segment
from segment.core.published import LOAD_CASES
from segment.elements.loads import Load
from segment.solvers.equilibrium import solve
from segment.views.parts import _title
from segment.views.render import _check_size, _draw, _new_plotter, has_display
from segment.views.scene import SceneTemplate
from segment.views.style import LEGEND

pv = require("pyvista", "viz", "segment.views.viz (3-D views)")

__all__ = ["SLIDERS", "Explorer", "explore"]

SLIDERS = (
    # name, load index (None: disc scale), range, unit scale to internal, title
    ("Fx", 0, (-40.0, 40.0), 1.0, "Fx [N] (+ anterior)"),
    ("Fy", 1, (-40.0, 40.0), 1.0, "Fy [N] (+ left)"),
    ("Fz", 2, (-40.0, 40.0), 1.0, "Fz [N] (+ up)"),
    ("Mx", 3, (-3.0, 3.0), 1000.0, "Mx [N m] (lat. bend)"),
    ("My", 4, (-3.0, 3.0), 1000.0, "My [N m] (+ flexion)"),
    ("Mz", 5, (-3.0, 3.0), 1000.0, "Mz [N m] (ax. rot.)"),
    ("disc", None, (0.25, 4.0), 1.0, "disc stiffness x"),
)
CASE_KEYS = "123456789"
RESET_KEY = "0"


class Explorer:
    """Interactive explorer: sliders for the load and the disc stiffness, live equilibrium.

    Every slider change re-solves the equilibrium warm-started from the last converged pose
    and moves the scene in place. Keys ``1``-``9`` jump to the nine load cases (in the order
    of ``data/load_cases.csv``), ``0`` resets to no load and disc scale 1.

    Parameters
    ----------
    model : Segment
        The model explored (e.g. ``segment.c5c6()``).
    off_screen : bool
        True builds the plotter without a window (tests, benchmarks).
    size : (int, int)
        Window size [pixels].
    cases : mapping of str to Load, optional
        The cases on the number keys (default: the nine Moroney cases, ``segment.LOAD_CASES``).
    tension_range : (float, float)
        Colour range of the ligament tension [N].
    render : bool
        Render after each update (False: only solve and move the meshes).
    geometry : str or loaded geometry, optional
        Display geometry: ``"anatomical"`` (default) or ``"simple"``.

    Examples
    --------
    >>> import segment
    >>> ex = Explorer(segment.c5c6(), off_screen=True)  # doctest: +SKIP
    >>> ex.on_slider("My", 1.8)                         # doctest: +SKIP
    >>> ex.result.q[4] > 0                              # doctest: +SKIP
    True
    """

    def __init__(self, model: Segment, *, off_screen: bool = False,
                 size=(1400, 900), cases=None, tension_range=(0.0, 60.0),
                 render: bool = True, geometry=None):
        self.base_model = model
        self.cases = dict(LOAD_CASES if cases is None else cases)
        self.values = {name: 0.0 for name, *_ in SLIDERS}
        self.values["disc"] = 1.0
        self.render_on_update = render
        self._models: dict[float, Segment] = {1.0: self.base_model}
        self.model = self.base_model
        self.template = SceneTemplate(self.base_model, geometry=geometry)
        self.case_name = "unloaded"
        self.result = solve(self.model, self.load)
        self.scene = self.template.build(self.result.state, title=self._title())
        self.plotter = _new_plotter(off_screen=off_screen, window_size=_check_size(size))
        self._drawn = _draw(self.plotter, self.scene, clim=tension_range, view="oblique")
        self._labels = tuple(self.scene.labels)
        self.timings: list[tuple[float, float, float]] = []
        self._ready = False  # pyvista calls each slider callback once when adding it
        self.widgets = {}
        for k, (name, _, rng, _, title) in enumerate(SLIDERS):
            y = 0.93 - 0.085 * k
            self.widgets[name] = self.plotter.add_slider_widget(
                lambda v, n=name: self.on_slider(n, v), rng, value=self.values[name],
                title=title, pointa=(0.03, y), pointb=(0.24, y), style="modern",
                interaction_event="always", title_height=0.018, fmt="%.2f",
                color="black")
        for key, name in zip(CASE_KEYS, self.cases, strict=False):
            self.plotter.add_key_event(key, lambda n=name: self.jump_to_case(n))
        self.plotter.add_key_event(RESET_KEY, self.reset)
        self._ready = True

    # -- state
    @property
    def load(self) -> Load:
        """The load of the sliders (joint frame, fixed in space)."""
        f = np.zeros(6)
        for name, idx, _, unit, _ in SLIDERS:
            if idx is not None:
                f[idx] = self.values[name] * unit
        return Load(f[:3], f[3:], self.case_name)

    def _title(self) -> str:
        r = self.result
        return _title(r) + f"   disc stiffness x {self.values['disc']:.2f}"

    # -- callbacks
    def on_slider(self, name: str, value: float) -> EquilibriumResult:
        """Slider callback: set ``name`` (``Fx`` ... ``Mz`` [N, N m] or ``disc``) and update."""
        if name not in self.values:
            raise ValueError(f"unknown slider {name!r}; known: {', '.join(self.values)}")
        if not self._ready:
            return self.result
        self.values[name] = float(value)
        self.case_name = "custom"
        return self.update()

    def jump_to_case(self, name: str) -> EquilibriumResult:
        """Set the sliders to load case ``name`` and update."""
        load = self.cases[name]
        f = load.as_array()
        for n, idx, _, unit, _ in SLIDERS:
            if idx is not None:
                self.values[n] = f[idx] / unit
        self._sync_widgets()
        self.case_name = name
        return self.update()

    def reset(self) -> EquilibriumResult:
        """No load, disc scale 1."""
        for n in self.values:
            self.values[n] = 1.0 if n == "disc" else 0.0
        self._sync_widgets()
        self.case_name = "unloaded"
        return self.update()

    def _sync_widgets(self):
        for n, w in self.widgets.items():
            w.GetRepresentation().SetValue(self.values[n])

    def _model(self) -> Segment:
        scale = round(self.values["disc"], 3)
        if scale not in self._models:
            if len(self._models) > 64:
                self._models = {1.0: self.base_model}
            self._models[scale] = self.base_model.replace(
                disc=self.base_model.disc.scaled(scale))
        return self._models[scale]

    def update(self, *, render: bool | None = None) -> EquilibriumResult:
        """Re-solve (warm-started) and move the scene; returns the new result.

        A failed solve keeps the last converged pose on screen and says so in the title.
        """
        t0 = time.perf_counter()
        self.model = self._model()
        result = solve(self.model, self.load, q0=self.result.q if self.result.converged
                       else None)
        if not result.converged:  # retry from the reference pose with load stepping
            result = solve(self.model, self.load)
        t1 = time.perf_counter()
        if result.converged:
            self.result = result
            self.template.update(self.scene, result.state, title=self._title())
        else:
            self.scene.title = _title(result) + "  (showing the last converged pose)"
        self._update_text()
        t2 = time.perf_counter()
        if self.render_on_update if render is None else render:
            self.plotter.render()
        t3 = time.perf_counter()
        self.timings.append((t1 - t0, t2 - t1, t3 - t2))
        return result

    def _update_text(self):
        self._drawn.title.set_text("upper_edge", self.scene.title)
        self._drawn.facet_text.set_text(
            "lower_right",
            self.scene.facet_text + LEGEND)
        if tuple(self.scene.labels) != self._labels and self._drawn.labels is not None:
            self._labels = tuple(self.scene.labels)
            self._drawn.labels = self.plotter.add_point_labels(
                self.scene.label_points, self.scene.labels, font_size=14, point_size=1,
                shape_opacity=0.6, shape_color="white", text_color="black",
                always_visible=True, show_points=False, name="facet_labels", render=False)

    def show(self):
        """Open the window (blocks until it is closed)."""
        self.plotter.show(title="segment explore: C5-C6")

    def close(self):
        self.plotter.close()



def explore(model: Segment, **kwargs) -> Explorer:
    """Open the interactive explorer window (see :class:`Explorer`).

    Raises
    ------
    RuntimeError
        When there is no display to open a window on.
    """
    if not has_display():
        raise RuntimeError("the desktop explorer needs a display (no DISPLAY or "
                           "WAYLAND_DISPLAY); use 'segment explore --web' for the explorer "
                           "in a browser, or segment.explore(model) in a notebook")
    ex = Explorer(model, off_screen=False, **kwargs)
    ex.show()
    return ex
