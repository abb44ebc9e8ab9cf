"""Plotting a scene with pyvista: :func:`plot`, :func:`render`, :func:`render_grid`, :func:`export`.

Off-screen rendering without a display uses Mesa's OSMesa. VTK picks the window class from
``VTK_DEFAULT_OPENGL_WINDOW`` each time it creates a render window, so :func:`_new_plotter`
sets that variable only while it creates an off-screen plotter on a machine without a display
(and only when the user has not chosen a class), then restores the environment: importing
this module changes nothing in the process environment, and with a display VTK picks its own
window.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from segment._extras import require
from segment.core.equilibrium_result import EquilibriumResult
from segment.views.anatomy import resolve_geometry
from segment.views.parts import _title, check_magnify, magnify_text
from segment.views.scene import Scene, SceneTemplate, build_scene
from segment.views.style import (
    ARROW_COLOR,
    AUTO_VIEW_BY_DOF,
    AXIS_LABEL_MIN_SCREEN,
    BONE_C5,
    BONE_C6,
    BONE_SPECULAR,
    CAMERA_MARGIN,
    CAMERA_VIEW_ANGLE_DEG,
    DEFAULT_SIZE,
    DISC_COLOR,
    DISLOCATED_COLOR,
    FACET_COLOR,
    GHOST,
    GHOST_OPACITY,
    LEGEND,
    MAGNIFIED_COLOR,
    MAGNIFIED_OPACITY,
    RUPTURED_COLOR,
    SLACK_COLOR,
    SSAO_RADIUS_MM,
    TENSION_CMAP,
    VIEWS,
)

pv = require("pyvista", "viz", "segment.views.viz (3-D views)")

__all__ = ["export", "has_display", "plot", "render", "render_grid", "resolve_view", "screen_axes",
           "tension_range"]


def tension_range(results) -> tuple[float, float]:
    """Tension colour range [N] of a set of results: 0 to the largest tension, rounded up to
    5 N (at least 1 N)."""
    return _default_range(results)


def screen_axes(view: str) -> dict[str, tuple[float, float, float]]:
    """Where the C6 axes point in ``view``: name -> (right, up, towards the viewer).

    Components of the unit axes (anterior = +x, left = +y, superior = +z) along the screen's
    right and up directions and along the line of sight towards the camera of :data:`VIEWS`.
    """
    direction, up = (np.asarray(a, float) for a in VIEWS[view])
    towards = direction / np.linalg.norm(direction)
    right = np.cross(-towards, up)
    right /= np.linalg.norm(right)
    true_up = np.cross(right, -towards)
    names = ("anterior", "left", "superior")
    return {n: (float(e @ right), float(e @ true_up), float(e @ towards))
            for n, e in zip(names, np.eye(3), strict=True)}


def _default_range(results) -> tuple[float, float]:
    top = max((s.tension for r in results for s in r.state.ligaments), default=0.0)
    return (0.0, float(max(1.0, np.ceil(top / 5.0) * 5.0)))


def resolve_view(view: str, result: EquilibriumResult) -> str:
    """``view`` itself, or for ``"auto"`` the view of the load's main component."""
    if view == "auto":
        dof = result.load.main_dof
        return "oblique" if dof is None else AUTO_VIEW_BY_DOF[dof]
    if view not in VIEWS:
        raise ValueError(f"view must be one of auto, {', '.join(VIEWS)}, got {view!r}")
    return view


def _camera(plotter: pv.Plotter, view: str, scene: Scene):
    """Point the active renderer's camera along ``view`` at both vertebrae, close enough
    that their outline (projected on the screen) fills the picture with a margin."""
    if view not in VIEWS:
        raise ValueError(f"view must be one of {', '.join(VIEWS)}, got {view!r}")
    direction, up = (np.asarray(a, float) for a in VIEWS[view])
    towards = direction / np.linalg.norm(direction)
    right = np.cross(-towards, up)
    right /= np.linalg.norm(right)
    true_up = np.cross(right, -towards)
    pts = np.vstack([scene.meshes["c6"].points, scene.meshes["c5"].points])
    screen = pts @ np.column_stack([right, true_up, towards])
    lo, hi = screen.min(axis=0), screen.max(axis=0)
    mid = 0.5 * (lo + hi)
    focal = mid[0] * right + mid[1] * true_up + mid[2] * towards
    x0, y0, x1, y1 = plotter.renderer.GetViewport()
    w, h = plotter.window_size
    aspect = max((x1 - x0) * w, 1.0) / max((y1 - y0) * h, 1.0)
    half = max(0.5 * (hi[1] - lo[1]), 0.5 * (hi[0] - lo[0]) / aspect)
    dist = CAMERA_MARGIN * half / np.tan(np.radians(0.5 * CAMERA_VIEW_ANGLE_DEG)) \
        + 0.5 * (hi[2] - lo[2])
    plotter.camera_position = [tuple(focal + dist * towards), tuple(focal), tuple(true_up)]
    plotter.camera.view_angle = CAMERA_VIEW_ANGLE_DEG
    plotter.renderer.ResetCameraClippingRange()


def _axes_labels(view: str) -> tuple[dict, str]:
    """Labels of the orientation axes in ``view`` and a note for those left out: an axis
    pointing mostly along the line of sight is drawn without a label (its tip lies on the
    origin, where the label would run into the others: "anterioleft") and named in words."""
    labels, along = {}, []
    for key, (name, (dx, dy, dz)) in zip(("xlabel", "ylabel", "zlabel"),
                                         screen_axes(view).items(), strict=True):
        if np.hypot(dx, dy) < AXIS_LABEL_MIN_SCREEN:
            labels[key] = ""
            along.append(f"{name} {'towards' if dz > 0 else 'away from'} the viewer")
        else:
            labels[key] = name
    return labels, "; ".join(along)


class _Overlay:
    """A second renderer layer drawn on top of one renderer: keeps glyphs visible through bone."""

    def __init__(self, plotter: pv.Plotter, renderer):
        import vtk

        self.renderer = vtk.vtkRenderer()
        self.renderer.SetLayer(1)
        self.renderer.InteractiveOff()
        self.renderer.SetActiveCamera(renderer.GetActiveCamera())
        self.renderer.SetViewport(renderer.GetViewport())
        win = plotter.render_window
        win.SetNumberOfLayers(max(2, win.GetNumberOfLayers()))
        win.AddRenderer(self.renderer)
        # same lights as the main renderer
        self.renderer.SetLightFollowCamera(True)

    def add(self, mesh: pv.PolyData, color) -> pv.Actor:
        actor = pv.Actor(mapper=pv.DataSetMapper(mesh))
        actor.mapper.scalar_visibility = False
        actor.prop.color = color
        actor.prop.interpolation = "phong"
        self.renderer.AddActor(actor)
        return actor


@dataclass
class _Drawn:
    """Actors of one scene in one renderer (so that the explorer can update text)."""

    title: object
    facet_text: object
    labels: object | None


def _draw(plotter: pv.Plotter, scene: Scene, *, clim, view="oblique", compact=False,
          labels=True, axes=True, scalar_bar=True) -> _Drawn:
    """Add the meshes of ``scene`` to the active renderer of ``plotter``."""
    m = scene.meshes
    font = 9 if compact else 12
    bone = dict(smooth_shading=False, specular=BONE_SPECULAR, specular_power=20.0)
    bones = [plotter.add_mesh(m["c6"], color=BONE_C6, name="c6", **bone),
             plotter.add_mesh(m["c5"], color=BONE_C5, name="c5", **bone),
             plotter.add_mesh(m["c5_reference"], color=GHOST, opacity=GHOST_OPACITY,
                              name="c5_reference", smooth_shading=False)]
    if scene.magnify > 1.0:   # next to the true pose, never instead of it
        bones.append(plotter.add_mesh(m["c5_magnified"], color=MAGNIFIED_COLOR,
                                      opacity=MAGNIFIED_OPACITY, smooth_shading=False,
                                      name="c5_magnified"))
    for actor in bones:       # shaded with the meshes' own point normals (kept up to date)
        actor.prop.interpolation = "phong"
    for actor in bones[2:]:   # behind C5 where they coincide (the ghost at rest): no z-fight
        actor.mapper.SetResolveCoincidentTopologyToPolygonOffset()
        actor.mapper.SetRelativeCoincidentTopologyPolygonOffsetParameters(2.0, 4.0)
    if scene.magnify > 1.0 and not compact:      # grid panels say it in their titles
        plotter.add_point_labels(
            scene.magnify_label_point[None, :], [f"C5 x{scene.magnify:g}"],
            font_size=font + (2 if not compact else 0), point_size=1, shape_opacity=0.6,
            shape_color="white", text_color=MAGNIFIED_COLOR, always_visible=True,
            show_points=False, name="magnified_label")
    plotter.add_mesh(m["facets_c6"], color=FACET_COLOR, name="facets_c6")
    plotter.add_mesh(m["facets_c5"], color=FACET_COLOR, name="facets_c5")
    plotter.add_mesh(m["disc"], color=DISC_COLOR, opacity=0.45, name="disc", specular=0.3)
    bar = dict(title="ligament tension [N]", vertical=True, position_x=0.9, position_y=0.3,
               height=0.4, width=0.04, title_font_size=font + 2, label_font_size=font + 1,
               fmt="%.0f", n_labels=5) if not compact else dict(
        title="tension [N]", vertical=True, position_x=0.82, position_y=0.25, height=0.5,
        width=0.06, title_font_size=font, label_font_size=font, fmt="%.0f", n_labels=3)
    plotter.add_mesh(m["ligaments"], scalars="tension_N", cmap=TENSION_CMAP, clim=clim,
                     nan_color=SLACK_COLOR, show_scalar_bar=scalar_bar, scalar_bar_args=bar,
                     name="ligaments")
    if "ruptured" in m and m["ruptured"].n_points:
        plotter.add_mesh(m["ruptured"], color=RUPTURED_COLOR, name="ruptured")
    overlay = _Overlay(plotter, plotter.renderer)
    overlay.add(m["arrows"], ARROW_COLOR)
    if "dislocated" in m and m["dislocated"].n_points:     # over the bone: an alarm
        overlay.add(m["dislocated"], DISLOCATED_COLOR).prop.opacity = 0.7
    title = plotter.add_text(scene.title, position="upper_edge", font_size=font,
                             color="black", name="title")
    legend = "" if compact else LEGEND
    if scene.magnify > 1.0 and not compact:      # grid panels say it in their titles
        legend += "\n" + magnify_text(scene.magnify)
    facet_text = plotter.add_text(scene.facet_text + legend, position="lower_right",
                                  font_size=font - 3 if not compact else font - 1,
                                  color="black", name="facet_text")
    label_actor = None
    if labels and len(scene.labels):
        label_actor = plotter.add_point_labels(
            scene.label_points, scene.labels, font_size=font + (2 if not compact else 0),
            point_size=1, shape_opacity=0.6, shape_color="white", text_color="black",
            always_visible=True, show_points=False, name="facet_labels")
    if axes:
        names, note = _axes_labels(view)
        box = (0.0, 0.0, 0.22, 0.22) if not compact else (0.0, 0.0, 0.3, 0.3)
        plotter.add_axes(**names, line_width=3, color="black", viewport=box)
        if note:
            plotter.add_text(note, position="lower_left", font_size=font - 5,
                             color="black", name="axes_note")
    plotter.set_background("white")
    plotter.enable_ssao(radius=SSAO_RADIUS_MM, bias=0.3, kernel_size=64)
    _camera(plotter, view, scene)
    return _Drawn(title, facet_text, label_actor)


def _check_size(size) -> tuple[int, int]:
    s = tuple(int(v) for v in size)
    if len(s) != 2 or min(s) < 16:
        raise ValueError(f"size must be (width, height) in pixels, each >= 16, got {size!r}")
    return s


def plot(result: EquilibriumResult, *, size=DEFAULT_SIZE, view: str = "auto", clim=None,
         geometry=None, off_screen: bool | None = None,
         plotter: pv.Plotter | None = None, magnify: float = 1.0) -> pv.Plotter:
    """A plotter with the posed scene drawn, not yet shown.

    In a notebook, ``pv.set_jupyter_backend("static")`` then ``plot(result).show()`` gives a
    picture; :func:`render` saves the same scene to a file. Parameters as for :func:`render`;
    ``plotter``: draw into this :class:`pyvista.Plotter` (its active subplot) instead of a new
    one (``size`` and ``off_screen`` then belong to it and are not used).
    """
    view = resolve_view(view, result)
    scene = build_scene(result, geometry=geometry, magnify=magnify)
    clim = _default_range([result]) if clim is None else clim
    pl = plotter if plotter is not None else _new_plotter(off_screen=off_screen,
                                                          window_size=_check_size(size))
    _draw(pl, scene, clim=clim, view=view)
    return pl


def render(result: EquilibriumResult, path: str | Path, *, size=DEFAULT_SIZE,
           view: str = "auto", clim=None, geometry=None,
           magnify: float = 1.0) -> Path:
    """Render one pose off-screen to a PNG.

    Parameters
    ----------
    result : EquilibriumResult
    path : path
        Output image (``.png``; the suffix chooses the format).
    size : (int, int)
        Width and height [pixels].
    view : str
        ``auto`` (default: lateral for AS, PS, TNS, CMP, FLX, EXT; posterior for LS, LB, AR;
        oblique for combined loads), ``oblique`` (posterolateral from the left and above),
        ``lateral`` (from the left, a little in front and above the true lateral, so that
        the transverse processes do not hide the bodies), ``posterior``, ``anterior`` or
        ``superior`` (:data:`segment.views.style.VIEWS`).
    clim : (float, float), optional
        Tension colour range [N] (default: 0 to the largest tension, rounded up to 5 N).
    geometry : str or loaded geometry, optional
        Display geometry of the bones: ``"anatomical"`` (default: the BodyParts3D meshes of
        a real C5 and C6 registered to the model's landmarks, :mod:`segment.views.anatomy`)
        or ``"simple"`` (tapered tubes, ``data/vertebra_geometry.csv``). Display only: the
        mechanics never read it.
    magnify : float
        >= 1. Above 1, C5 is drawn a second time, orange and labelled ``C5 xK``, with its
        displacement from the unloaded equilibrium magnified K times, next to the true pose
        (display only: the title and the labels state the true values).

    Returns
    -------
    Path
        The file written: ``path``, with ``.png`` added when it has no suffix.
    """
    path = _image_path(path)
    pl = plot(result, size=size, view=view, clim=clim, geometry=geometry, off_screen=True,
              magnify=magnify)
    try:
        pl.screenshot(str(path))
    finally:
        pl.close()
    return path


def render_grid(results, path: str | Path, *, size=(1800, 1500), view: str = "auto",
                geometry=None, scalar_bar: bool = True,
                axes: bool = True, magnify: float = 1.0) -> Path:
    """Render up to nine poses in a 3 x 3 grid (row by row) to one PNG.

    One tension colour range [N] (:func:`tension_range`) serves all panels, so colours compare
    across cases. With ``view="auto"`` each panel uses the view of its own case (see
    :func:`render`). ``scalar_bar`` and ``axes`` draw the colour bar and the orientation axes in
    the first panel; a caller that draws one shared colour bar and its own orientation keys
    (the validation report) turns them off. ``magnify`` > 1 adds the magnified C5 to every
    panel (as in :func:`render`); ``geometry`` as in :func:`render`.
    """
    results = list(results)
    magnify = check_magnify(magnify)
    geometry = resolve_geometry(geometry)        # loaded once for all panels
    if not 1 <= len(results) <= 9:
        raise ValueError(f"render_grid takes 1 to 9 results, got {len(results)}")
    size = _check_size(size)
    clim = _default_range(results)
    template = SceneTemplate(results[0].model, geometry=geometry)
    pl = _new_plotter(off_screen=True, window_size=size, shape=(3, 3), border=False)
    try:
        for k, r in enumerate(results):
            pl.subplot(k // 3, k % 3)
            tpl = template if r.model is template.model else SceneTemplate(r.model,
                                                                          geometry=geometry)
            title = _title(r, short=True)
            if magnify > 1.0:
                title += f"\norange: C5 displacement x{magnify:g}"
            scene = tpl.build(r.state, title=title, magnify=magnify)
            _draw(pl, scene, clim=clim, view=resolve_view(view, r), compact=True, labels=False,
                  axes=axes and k == 0, scalar_bar=scalar_bar and k == 0)
        path = _image_path(path)
        pl.screenshot(str(path))
    finally:
        pl.close()
    return path


def _image_path(path: str | Path) -> Path:
    """The file the screenshot is written to: a name without suffix gets ``.png``."""
    path = Path(path)
    return path if path.suffix else path.with_name(path.name + ".png")


def export(result: EquilibriumResult, path: str | Path, *,
           geometry=None) -> Path:
    """Write the posed scene for other tools; the suffix chooses the format.

    ``.gltf``: glTF 2.0 via VTK's exporter (colours, no scalar bar), C6 axes, mm. (VTK writes
    no binary ``.glb``; any glTF tool converts the ``.gltf``.)
    ``.vtm``: a VTK multiblock (one ``.vtp`` per mesh in a folder beside it) with the point
    arrays ``tension_N`` and ``force_N`` kept for ParaView. ``geometry`` as in :func:`render`.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    scene = build_scene(result, geometry=geometry)
    if suffix == ".vtm":
        scene.multiblock().save(str(path))
        return path
    if suffix != ".gltf":
        raise ValueError(f"export format is chosen by the suffix: .gltf or .vtm, "
                         f"got {path.name!r}")
    pl = _new_plotter(off_screen=True)
    try:
        m = scene.meshes
        for name, color, opacity in (("c6", BONE_C6, 1.0), ("c5", BONE_C5, 1.0),
                                     ("c5_reference", GHOST, 0.2),
                                     ("facets_c6", FACET_COLOR, 1.0),
                                     ("facets_c5", FACET_COLOR, 1.0),
                                     ("disc", DISC_COLOR, 0.45), ("arrows", ARROW_COLOR, 1.0)):
            pl.add_mesh(m[name], color=color, opacity=opacity, name=name)
        lig = m["ligaments"].copy()
        lig.point_data["tension_N"] = np.nan_to_num(lig.point_data["tension_N"], nan=-1.0)
        pl.add_mesh(lig, scalars="tension_N", cmap=TENSION_CMAP,
                    clim=_default_range([result]), below_color=SLACK_COLOR,
                    show_scalar_bar=False, name="ligaments")
        pl.export_gltf(str(path))
    finally:
        pl.close()
    return path



OFFSCREEN_WINDOW = "vtkOSOpenGLRenderWindow"
"""VTK's Mesa off-screen window class, used when rendering without a display."""


def _new_plotter(*, off_screen: bool | None, **kwargs) -> pv.Plotter:
    """A :class:`pyvista.Plotter`; off-screen without a display, on Mesa's OSMesa window.

    The variable ``VTK_DEFAULT_OPENGL_WINDOW`` is set only while the plotter (and so its
    render window) is created, and only when the user has not set it; it is removed afterwards.
    """
    # without a display a window can only be off-screen (a notebook's static picture): ask
    # for it, or VTK first tries an X window and prints "bad X server connection"
    offscreen = (off_screen if off_screen is not None
                 else bool(pv.OFF_SCREEN) or not has_display())
    if not offscreen or has_display() or "VTK_DEFAULT_OPENGL_WINDOW" in os.environ:
        return pv.Plotter(off_screen=offscreen, **kwargs)
    os.environ["VTK_DEFAULT_OPENGL_WINDOW"] = OFFSCREEN_WINDOW
    try:
        return pv.Plotter(off_screen=True, **kwargs)
    finally:
        del os.environ["VTK_DEFAULT_OPENGL_WINDOW"]


def has_display() -> bool:
    """True when an interactive window can open (a display on Linux; always elsewhere)."""
    if not sys.platform.startswith("linux"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))

