"""The report's 3-D panels (pyvista, off-screen): the nine poses and the first ruptures."""

from __future__ import annotations

import io as _io
import pickle
from collections.abc import Mapping
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure
from matplotlib.image import imread

from segment.report.picture_cache import PictureCache
from segment.solvers.equilibrium import solve

POSES_MAGNIFY = 10
"""Magnification of C5's motion in the report's grid of the nine poses (display only). At
the nominal loads the motions are 2-3 deg and 0.1-0.4 mm, invisible at the scale of a
vertebra; ten times that (20-30 deg, 1-4 mm) is visible in every panel without the magnified
C5 leaving the picture. The true pose stays drawn; the panel titles and the tables give the
true values, and the caption states the factor."""


def render_poses(model, cases, *, magnify: float = POSES_MAGNIFY,
                 cache: PictureCache | None = None) -> bytes:
    """PNG bytes of the 3 x 3 grid of the nine poses (pyvista, off-screen).

    Each panel draws C5 at its true pose and, orange, with its displacement from the unloaded
    pose multiplied by ``magnify`` (:data:`POSES_MAGNIFY`; the panel title says so).
    pyvista draws the poses without colour bar or axes; matplotlib adds one shared tension
    colour bar (with the slack colour) below the grid and, in each panel, an orientation key
    made from that panel's camera (:func:`segment.views.viz.screen_axes`): arrows for the axes in
    the picture plane, the axis pointing at the viewer named in words, so no labels overlap.
    With a ``cache``, a grid drawn before from the same results is read from it
    (:mod:`segment.report.picture_cache`).
    """
    results = [solve(model, load) for load in cases.values()]
    cache = cache or PictureCache(None)
    key = cache.key("render", "poses", f"magnify {magnify!r}", pickle.dumps(results))
    return cache.cached(key, lambda: _annotated_grid(results, magnify))


def _annotated_grid(results, magnify: float) -> bytes:
    """PNG of the 3 x 3 grid of ``results`` (pyvista) with one shared tension colour bar below
    it and an orientation key in each panel (matplotlib): :func:`render_poses`'s picture,
    also that of :func:`render_failures` (``magnify`` 1: no magnified copy)."""
    import tempfile

    from matplotlib import colors as mcolors
    from matplotlib.cm import ScalarMappable

    from segment.views import viz  # imports vtk: only when the report is built

    with tempfile.TemporaryDirectory() as tmp:
        path = viz.render_grid(results, Path(tmp) / "poses.png", scalar_bar=False, axes=False,
                               magnify=magnify)
        img = imread(path)
    h, w = img.shape[:2]
    # matplotlib's object API, not pyplot: this runs on the report's render thread
    fig = Figure(figsize=(w / 150, (h + 190) / 150), dpi=150)
    ax = fig.add_axes((0, 190 / (h + 190), 1, h / (h + 190)))
    ax.imshow(img)
    ax.set_axis_off()
    pw, ph = w / 3, h / 3
    for k, r in enumerate(results):
        view = viz.resolve_view("auto", r)
        x0, y0 = (k % 3) * pw + 0.25 * pw, (k // 3) * ph + 0.87 * ph   # image rows go down
        depth = []
        for name, (dx, dy, dz) in viz.screen_axes(view).items():
            if np.hypot(dx, dy) < 0.5:       # mostly along the line of sight: say so in words
                depth.append(f"{name} {'towards' if dz > 0 else 'away from'} the viewer")
                continue
            L = 0.08 * pw / np.hypot(dx, dy)
            ax.annotate("", xy=(x0 + L * dx, y0 - L * dy), xytext=(x0, y0),
                        arrowprops=dict(arrowstyle="-|>", color="black", lw=1.2))
            vertical = abs(dx) < 0.5
            ax.text(x0 + L * dx + (0.02 * pw if vertical else 0.15 * L * dx),
                    y0 - L * dy, name, fontsize=7, va="center",
                    ha="left" if vertical or dx > 0 else "right")
        ax.text(x0 - 0.2 * pw, y0 + 0.05 * ph, f"{view} view; " + ", ".join(depth),
                fontsize=7, ha="left", va="center", color="#333")
    lo, hi = viz.tension_range(results)
    cax = fig.add_axes((0.25, 95 / (h + 190), 0.5, 30 / (h + 190)))
    fig.colorbar(ScalarMappable(mcolors.Normalize(lo, hi), viz.TENSION_CMAP), cax=cax,
                 orientation="horizontal")
    cax.set_xlabel("ligament tension [N], same scale in every panel (grey: slack)",
                   fontsize=9)
    cax.tick_params(labelsize=8)
    buf = _io.BytesIO()
    fig.savefig(buf, format="png", dpi=150)
    return buf.getvalue()


def render_failures(ramps: Mapping[str, object], *,
                    cache: PictureCache | None = None) -> bytes:
    """PNG of each case just after its first rupture within the validity limit (the last pose
    within the limit when none broke there), drawn to scale: near failure the motions are
    large enough to see without magnification. Annotated as :func:`render_poses` (one shared
    colour bar, an orientation key in each panel). With a ``cache``, as
    :func:`render_poses`."""
    results = []
    for r in ramps.values():
        f = r.frame
        shown = f["within_limit"] & ~f["event"].str.contains("no equilibrium")
        k = np.flatnonzero(shown & f["event"].str.contains("ruptured: "))
        good = np.flatnonzero(shown)
        results.append(r.result_at(int(k[0]) if len(k) else int(good[-1])))
    cache = cache or PictureCache(None)
    key = cache.key("render", "failures", pickle.dumps(results))
    return cache.cached(key, lambda: _draw_failures(results))


def _draw_failures(results) -> bytes:
    return _annotated_grid(results, 1.0)
