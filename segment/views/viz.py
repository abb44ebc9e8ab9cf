"""3-D views of C5-C6 poses with pyvista: scenes, renders, exports and a live explorer.

This module is the one import path for their public names (private helpers stay in their
modules); the code lives in one module per concept:

* :mod:`segment.views.style`: glyph sizes [mm], colours and cameras;
* :mod:`segment.views.geometry`: the simple display geometry table, mesh primitives and the
  facet surfaces (numpy only, in each vertebra's frame);
* :mod:`segment.views.meshes`, :mod:`segment.views.registration`,
  :mod:`segment.views.anatomy`: the anatomical display geometry (the default), BodyParts3D
  meshes of C5 and C6 registered to the model's landmarks (numpy only);
* :mod:`segment.views.scene`: the pyvista meshes of one pose (:class:`Scene`,
  :class:`SceneTemplate`, :func:`build_scene`), updated in place for live views;
* :mod:`segment.views.render`: :func:`plot`, :func:`render`, :func:`render_grid`,
  :func:`export`, and the off-screen plotter;
* :mod:`segment.views.desktop`: the desktop :class:`Explorer` window.

pyvista is the ``viz`` extra: without it, importing this module raises an ImportError that
names the extra (``pip install "c5c6-segment[viz]"``).
"""

from __future__ import annotations

from segment.views.anatomy import (
    ANATOMICAL_PARTS,
    GEOMETRIES,
    AnatomicalGeometry,
    load_anatomy,
    resolve_geometry,
)
from segment.views.desktop import CASE_KEYS, RESET_KEY, SLIDERS, Explorer, explore
from segment.views.geometry import (
    GEOMETRY_FILE,
    PARTS,
    VERTEBRAE,
    Part,
    VertebraGeometry,
    load_geometry,
)
from segment.views.render import (
    OFFSCREEN_WINDOW,
    export,
    has_display,
    plot,
    render,
    render_grid,
    resolve_view,
    screen_axes,
    tension_range,
)
from segment.views.scene import Scene, SceneTemplate, build_scene
from segment.views.style import *  # noqa: F403  (every glyph size, colour and view)
from segment.views.style import ARROW_MM_PER_N

__all__ = [
    "ANATOMICAL_PARTS",
    "ARROW_MM_PER_N",
    "CASE_KEYS",
    "GEOMETRIES",
    "GEOMETRY_FILE",
    "OFFSCREEN_WINDOW",
    "PARTS",
    "RESET_KEY",
    "SLIDERS",
    "VERTEBRAE",
    "AnatomicalGeometry",
    "Explorer",
    "Part",
    "Scene",
    "SceneTemplate",
    "VertebraGeometry",
    "build_scene",
    "explore",
    "export",
    "has_display",
    "load_anatomy",
    "load_geometry",
    "plot",
    "render",
    "render_grid",
    "resolve_geometry",
    "resolve_view",
    "screen_axes",
    "tension_range",
]
