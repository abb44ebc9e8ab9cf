"""Display geometry that reads as C5 and C6 (numpy only): body with endplates and uncinate
processes, pedicles, articular pillars carrying the contact model's facets, laminae, a bifid
spinous process and transverse processes around a foramen transversarium.

Every dimension is a row of ``data/vertebra_anatomy.csv`` with its source (published
cervical morphometry, Table 4 of the model paper for the ligament insertions, or "assumed"
with the reasoning; ``validation/reference/SOURCES.md`` §7). Display only: the mechanics
never read this table. The articular pillars are built around the model's own facet discs
(``data/facets.csv``), so the drawn facets are where the contact model has them.

Frames and construction (each vertebra in its own frame, +x anterior, +y left, +z superior,
origin at the centre of the body as in the simple geometry)::

        superior view                       lateral view (from the left)
              +x (anterior)                       +z
               ^                                   ^   facet (C6 superior, contact model)
         .-----------.   body                      |  /
        (             )                 body  [====]  pillar /\\
    tp  (o)         (o)  transverse     (ALL)|    |--pedicle|  |--lamina--spinous--< (ISL)
         `--.     .--'   process + foramen    [====]        \\/   (FL)
        pillar\\___/pillar                       pillar: between the inferior facet (C5's in
              | |  laminae                      the contact model) and the superior one
              \\ /  spinous process (bifid)       (C6's), each vertebra in its own frame

* body: a rounded rectangle (superellipse) lofted from the inferior to the superior
  endplate, anterior face through the ALL insertion, posterior face through the PLL
  insertion (Table 4); concave endplates; the anterior-inferior lip prolonged downward;
* uncinate processes: ridges on the posterolateral rim of the superior endplate;
* pedicles: elliptic tubes at the published transverse angle, their medial walls at the
  published canal width at the level of the posterior body wall;
* articular pillars: the published lateral-mass section (width, depth) lofted between the
  vertebra's inferior facet face and its superior facet face (the C5 and C6 discs of the
  contact model, each in the vertebra's own frame: both vertebrae share the facet anatomy of
  ``facets.csv``, as in the simple geometry);
* laminae: from each pillar to a midline junction whose anterior face is the published
  canal depth behind the posterior body wall and whose posterior face passes through the FL
  insertion (Table 4);
* spinous process: from the junction to the ISL insertion (Table 4), bifid;
* transverse processes: a bony ring around the foramen transversarium (published diameter,
  published distance from the uncinate process), a root from the body, anterior and
  posterior tubercles.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from segment.core.io import _Table, data_dir
from segment.core.model import Segment
from segment.views.geometry import (
    VERTEBRAE,
    VertebraGeometry,
    _cos_sin,
    _onto_plane,
    _superellipse,
    _Surface,
    _sweep_rings,
    load_geometry,
)
from segment.views.style import FACET_DEPTH_MM, RING

__all__ = ["ANATOMICAL_PARTS", "ANATOMY_FILE", "DIMENSIONS", "GEOMETRIES",
           "AnatomicalGeometry", "load_anatomy", "resolve_geometry"]

ANATOMY_FILE = "vertebra_anatomy.csv"
GEOMETRIES = ("anatomical", "simple")
"""Names of the display geometries: the default first."""
ANATOMICAL_PARTS = ("body", "uncinate_process", "pedicle", "articular_pillar", "lamina",
                    "spinous_process", "transverse_process")

DIMENSIONS = {
    # name: (lower, upper) plausible bounds of the value, for the table's check
    "body_anterior_x_mm": (3.0, 15.0),
    "body_posterior_x_mm": (-15.0, -3.0),
    "body_width_mm": (10.0, 40.0),
    "body_height_mm": (5.0, 25.0),
    "body_outline_exponent": (2.0, 6.0),
    "endplate_concavity_mm": (0.0, 3.0),
    "anterior_lip_mm": (0.0, 4.0),
    "uncinate_height_mm": (1.0, 10.0),
    "uncinate_length_mm": (3.0, 20.0),
    "uncinate_base_width_mm": (1.0, 10.0),
    "canal_width_mm": (10.0, 35.0),
    "canal_depth_mm": (6.0, 25.0),
    "pedicle_width_mm": (2.0, 10.0),
    "pedicle_height_mm": (3.0, 12.0),
    "pedicle_transverse_angle_deg": (20.0, 70.0),
    "lateral_mass_width_mm": (6.0, 20.0),
    "lateral_mass_depth_mm": (6.0, 20.0),
    "lamina_height_mm": (3.0, 20.0),
    "lamina_thickness_mm": (1.0, 8.0),
    "lamina_junction_x_mm": (-40.0, -12.0),
    "lamina_junction_z_mm": (-15.0, 15.0),
    "spinous_tip_x_mm": (-70.0, -20.0),
    "spinous_tip_z_mm": (-25.0, 15.0),
    "spinous_height_mm": (2.0, 15.0),
    "spinous_width_mm": (1.0, 10.0),
    "bifid_split_mm": (0.0, 10.0),
    "transverse_foramen_diameter_mm": (2.0, 10.0),
    "foramen_to_uncinate_mm": (1.0, 12.0),
    "transverse_bar_height_mm": (1.0, 8.0),
    "transverse_bar_thickness_mm": (0.5, 6.0),
}
"""Every dimension a vertebra needs in ``vertebra_anatomy.csv`` [mm, deg], with the range a
value must lie in (a decade-ish around the published adult values: catches a value typed in
cm or m, or a sign error)."""

_LAMINA_TILT_DEG = 25.0
_LAMINA_UP = (np.sin(np.radians(_LAMINA_TILT_DEG)), 0.0, np.cos(np.radians(_LAMINA_TILT_DEG)))
"""Direction of a lamina's height: the plate slopes down and back (its inferior border
behind its superior one), so that the laminae overlap those below like shingles (Frazer,
SOURCES.md §7 (h); the 25 deg are assumed)."""

_DECIMALS = 6             # mesh coordinates [mm] are rounded to 1 nm (see _vertebra)

# mesh resolution (points per ring): light enough for the browser explorer (four copies of C5)
_BODY_RING = 48
_PART_RING = 16
_PILLAR_RING = 32


# ============================================================== the table
@dataclass(frozen=True, eq=False)
class AnatomicalGeometry:
    """Published dimensions of C5 and C6 (read by :func:`load_anatomy`) and the bone they give.

    Attributes
    ----------
    values : dict of str to dict of str to float
        ``values[vertebra][dimension]`` [mm, deg] (see :data:`DIMENSIONS`).
    path : Path
        The table read.
    """

    values: dict
    path: Path
    name = "anatomical"
    part_names = ANATOMICAL_PARTS
    """Names of the ``part`` indices of :meth:`surface` (cell array ``part`` of the meshes)."""

    def value(self, vertebra: str, dimension: str) -> float:
        return self.values[vertebra][dimension]

    def surface(self, model: Segment, vertebra: str) -> _Surface:
        """The bone of ``vertebra`` (``"C5"`` or ``"C6"``) in its own frame [mm].

        The articular pillars are built around ``model``'s facet discs; a model without facet
        joints gets pillars at the packaged ``facets.csv`` positions (bone only: no facet
        cylinders are drawn for it).
        """
        return _vertebra(self.values[vertebra], _facet_discs(model))

    def endplate(self, vertebra: str, which: str) -> np.ndarray:
        """Rim (RING, 3) of the ``"superior"`` or ``"inferior"`` endplate [mm, own frame]:
        where the drawn disc meets the body."""
        return np.round(_body_ring(self.values[vertebra], RING, which), _DECIMALS) + 0.0


def load_anatomy(path: str | Path | None = None) -> AnatomicalGeometry:
    """Read and validate ``data/vertebra_anatomy.csv`` (or the table at ``path``).

    Columns ``vertebra, dimension, value, source``; one row per vertebra and dimension of
    :data:`DIMENSIONS`. Raises one ``ValueError`` naming the file, the line and row, the
    column and the value: an unknown vertebra or dimension, a value that is not a number or
    outside its range, a duplicate row, a missing one, or dimensions that do not fit together
    (the pillar must lie lateral to the canal and the body).
    """
    path = Path(data_dir() / ANATOMY_FILE if path is None else path)
    t = _Table(path, ("vertebra", "dimension", "value"), collect=True)
    values: dict[str, dict[str, float]] = {v: {} for v in VERTEBRAE}
    rows: dict[tuple[str, str], int] = {}
    for i, row in t.rows():
        v = t.key(i, row, "vertebra", VERTEBRAE)
        d = t.key(i, row, "dimension", tuple(DIMENSIONS))
        if v is None or d is None:
            continue
        if (v, d) in rows:
            t.error(i, "dimension", f"duplicate row for {v} {d!r} (already in row "
                                    f"{rows[v, d]}, line {t.line_of[rows[v, d]]})")
            continue
        rows[v, d] = i
        x = t.number(i, row, "value")
        if not np.isfinite(x):
            continue
        lo, hi = DIMENSIONS[d]
        if not lo <= x <= hi:
            t.error(i, "value", f"{v} {d} must lie in [{lo:g}, {hi:g}], got {x:g}")
            continue
        values[v][d] = x
    for v in VERTEBRAE:
        missing = [d for d in DIMENSIONS if (v, d) not in rows]
        if missing:
            t.error(None, "dimension", f"missing row(s) for {v}: {', '.join(missing)}")
    t.finish()
    for v in VERTEBRAE:
        x = values[v]
        if not x["canal_width_mm"] < x["body_width_mm"] + 2 * x["pedicle_width_mm"]:
            i = rows[v, "canal_width_mm"]
            t.error(i, "value", f"{v} canal_width_mm {x['canal_width_mm']:g} leaves no room for "
                                f"the pedicles beside a body {x['body_width_mm']:g} mm wide")
        if not x["spinous_tip_x_mm"] < x["lamina_junction_x_mm"] - 2.0:
            i = rows[v, "spinous_tip_x_mm"]
            t.error(i, "value", f"{v} spinous_tip_x_mm {x['spinous_tip_x_mm']:g} must lie "
                                f"behind lamina_junction_x_mm {x['lamina_junction_x_mm']:g}")
        if not (x["lamina_junction_x_mm"] < x["body_posterior_x_mm"] - x["canal_depth_mm"]
                - 0.5):
            i = rows[v, "canal_depth_mm"]
            t.error(i, "value", f"{v} canal_depth_mm {x['canal_depth_mm']:g} puts the canal "
                                f"behind the lamina junction at x = "
                                f"{x['lamina_junction_x_mm']:g} mm")
    t.finish()
    return AnatomicalGeometry(values, path)


def resolve_geometry(geometry=None):
    """The display geometry to draw: ``None`` or ``"anatomical"`` (the default),
    ``"simple"``, or an already loaded :class:`AnatomicalGeometry` / ``VertebraGeometry``."""
    if geometry is None or (isinstance(geometry, str) and geometry == "anatomical"):
        return load_anatomy()
    if isinstance(geometry, str) and geometry == "simple":
        return load_geometry()
    if isinstance(geometry, (AnatomicalGeometry, VertebraGeometry)):
        return geometry
    raise ValueError(f"geometry must be one of {', '.join(GEOMETRIES)} or a loaded geometry, "
                     f"got {geometry!r}")


# ============================================================== construction
def _facet_discs(model: Segment) -> list[tuple[object, object]]:
    """(inferior, superior) facet discs per joint, in a vertebra's own frame."""
    joints = model.facets
    if not joints:
        from segment.core.io import load_parameters

        joints = load_parameters().facets
    return [(j.disc_c5, j.disc_c6) for j in joints]


def _body_frame(x):
    xc = 0.5 * (x["body_anterior_x_mm"] + x["body_posterior_x_mm"])
    a = 0.5 * (x["body_anterior_x_mm"] - x["body_posterior_x_mm"])
    return xc, a, 0.5 * x["body_width_mm"], 0.5 * x["body_height_mm"]


def _body_ring(x, n, level, scale=1.0) -> np.ndarray:
    """A ring (n, 3) of the body outline at ``level``: ``"inferior"``/``"superior"`` rim (the
    inferior one with the anterior lip), or a height z [mm]; ``scale`` shrinks it towards the
    axis (the concave endplates)."""
    xc, a, b, h = _body_frame(x)
    p = x["body_outline_exponent"]
    ring = _superellipse((xc, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), scale * a,
                         scale * b, p, n)
    if level == "superior":
        ring[:, 2] = h
    elif level == "inferior":
        c, _ = _cos_sin(n)
        ring[:, 2] = -h - x["anterior_lip_mm"] * np.clip(c, 0.0, None) ** 4   # Gray: lip
    else:
        ring[:, 2] = float(level)
    return ring


def _body(x) -> _Surface:
    """The vertebral body: concave inferior endplate (cap), walls, concave superior endplate.

    The walls have a ring at z = 0, so the ALL and PLL insertions (x = anterior / posterior
    face, y = z = 0) are points of the mesh."""
    _, _, _, h = _body_frame(x)
    k = x["endplate_concavity_mm"]
    n = _BODY_RING
    rings = []
    for s, dz in ((0.45, 0.8), (0.8, 0.36)):           # inferior endplate, concave upward
        r = _body_ring(x, n, -h + k * dz, s)
        rings.append(r)
    rings.append(_body_ring(x, n, "inferior"))
    for z in (-0.6 * h, 0.0, 0.6 * h):
        rings.append(_body_ring(x, n, z))
    rings.append(_body_ring(x, n, "superior"))
    for s, dz in ((0.8, 0.36), (0.45, 0.8)):           # superior endplate, concave downward
        rings.append(_body_ring(x, n, h - k * dz, s))
    return _Surface.loft(np.array(rings))


def _body_half_width(x, xv) -> float:
    """Half-width [mm] of the body outline at x = ``xv`` (superellipse)."""
    xc, a, b, _ = _body_frame(x)
    p = x["body_outline_exponent"]
    u = min(abs(xv - xc) / a, 1.0)
    return b * (1.0 - u ** p) ** (1.0 / p)


def _uncinate(x, side: float) -> _Surface:
    """Ridge on the posterolateral rim of the superior endplate (Gray: 'a projecting lip on
    either side'): published height and length; its medial margin ``uncinate_base_width_mm``
    inside the body's half-width, its lateral face flush with the body wall (narrower where
    the outline rounds into the posterior corner)."""
    h = _body_frame(x)[3]
    post = x["body_posterior_x_mm"]
    length = x["uncinate_length_mm"]
    height, base = x["uncinate_height_mm"], x["uncinate_base_width_mm"]
    b = _body_frame(x)[2]
    xs = np.linspace(post + 1.0, post + 1.0 + length, 9)
    y_in = b - 0.15 - base                           # the medial margin, parallel to x
    rings = []
    for xv in xs:
        u = (xv - xs[0]) / length                    # 0 at the posterior end
        top = 1.0 + height * (1.0 - u) ** 0.8        # highest posteriorly, low in front
        y_out = max(_body_half_width(x, xv) - 0.15, y_in + 1.5)   # on the rounded corner
        z0 = h - 1.0                                 # rooted 1 mm in the body
        # medial face sloping up from the endplate, lateral face continuing the body wall
        tri = np.array([[y_in, z0], [y_out - 0.3 * base, z0 + top],
                        [y_out, z0 + 0.75 * top], [y_out, z0]])
        rings.append(_polygon_ring(xv, tri, side, 12))
    return _Surface.loft(np.array(rings))


def _polygon_ring(xv, yz, side, n) -> np.ndarray:
    """A ring (n, 3) in the plane x = xv through the corners ``yz`` (k, 2), resampled
    evenly, y mirrored by ``side``; ordered so that sweeping along +x gives outward normals."""
    closed = np.vstack([yz, yz[:1]])
    seg = np.linalg.norm(np.diff(closed, axis=0), axis=1)
    t = np.concatenate([[0.0], np.cumsum(seg)])
    s = np.linspace(0.0, t[-1], n, endpoint=False)
    y = np.interp(s, t, closed[:, 0])
    z = np.interp(s, t, closed[:, 1])
    ring = np.column_stack([np.full(n, xv), side * y, z])
    return ring[::-1] if side > 0 else ring


def _pillar(x, inferior, superior) -> tuple[_Surface, dict]:
    """Articular pillar between the inferior and the superior facet faces (lateral-mass
    width and depth, published), set back by the drawn facet depth so that the contact
    model's facet cylinders sit on it. Returns the surface and its key points."""
    lo = inferior.center - FACET_DEPTH_MM * inferior.normal
    hi = superior.center - FACET_DEPTH_MM * superior.normal
    axis = hi - lo
    half_d, half_w = 0.5 * x["lateral_mass_depth_mm"], 0.5 * x["lateral_mass_width_mm"]
    ring = _superellipse(np.zeros(3), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), half_d, half_w, 2.4,
                         _PILLAR_RING)
    unit = axis / np.linalg.norm(axis)
    bottom = lo + _onto_plane(ring, inferior.normal, unit)
    top = hi + _onto_plane(ring, superior.normal, unit)
    mid = 0.5 * (lo + hi)
    rings = []
    for t in np.linspace(0.0, 1.0, 5):     # point by point between the two cut faces
        r = (1.0 - t) * bottom + t * top
        across = r - (mid + ((r - mid) @ unit)[:, None] * unit)
        rings.append(r - 0.06 * np.sin(np.pi * t) * across)        # a slight waist
    def centre(z):
        """Centre of the pillar section at height z [mm]."""
        t = (z - lo[2]) / axis[2]
        return lo + t * axis

    return _Surface.loft(np.array(rings)), {"centre": centre, "half_d": half_d,
                                            "half_w": half_w}


def _pedicle(x, side) -> tuple[_Surface, np.ndarray, np.ndarray]:
    """Elliptic tube at the published transverse angle (to the sagittal plane), its medial
    wall at half the published canal width where it passes the posterior body wall, from
    inside the body to inside the pillar. Returns the surface, its axis point at the body
    wall and its unit direction (posterolateral)."""
    ang = np.radians(x["pedicle_transverse_angle_deg"])
    d = np.array([-np.cos(ang), side * np.sin(ang), 0.0])          # posterolateral
    n_lat = np.array([np.sin(ang), side * np.cos(ang), 0.0])       # across, anterolateral
    half_w, half_h = 0.5 * x["pedicle_width_mm"], 0.5 * x["pedicle_height_mm"]
    medial = np.array([x["body_posterior_x_mm"], side * 0.5 * x["canal_width_mm"], 0.0])
    at_wall = medial + half_w * n_lat
    start, end = at_wall - 4.0 * d, at_wall + 9.0 * d
    path = np.array([start, 0.5 * (start + end), end])
    rings = _sweep_rings(path, half_h, half_w, _PART_RING)
    return _Surface.loft(rings), at_wall, d


def _lamina_junction(x) -> tuple[_Surface, np.ndarray, float, float]:
    """The midline junction of the laminae: its anterior face at the published canal depth
    behind the posterior body wall, its posterior face through the FL insertion (Table 4),
    tilted like the laminae. The FL insertion is the posterior extreme of its section."""
    front = x["body_posterior_x_mm"] - x["canal_depth_mm"]
    fl = np.array([x["lamina_junction_x_mm"], 0.0, x["lamina_junction_z_mm"]])
    beta = np.radians(_LAMINA_TILT_DEG)
    across = np.array([np.cos(beta), 0.0, -np.sin(beta)])     # y x up: the section's b axis
    half_d = 0.5 * (front - fl[0]) / np.cos(beta)
    half_h = 0.5 * x["lamina_height_mm"]
    centre = fl + half_d * across
    side = np.array([0.0, 2.5, 0.0])
    path = np.array([centre - side, centre, centre + side])
    rings = _sweep_rings(path, half_h, half_d, _PART_RING, up=_LAMINA_UP, exponent=3.0)
    return _Surface.loft(rings), centre, half_d, half_h


def _lamina(x, pillar, junction_centre, half_d_j, half_h_j, side) -> _Surface:
    """From the posteromedial part of the pillar to the junction (published thickness is not
    available to us: assumed), thickening towards the midline."""
    z = junction_centre[2] + 1.5             # sloping down towards the midline (shingled)
    c = pillar["centre"](z)
    start = c + np.array([-0.35 * pillar["half_d"], -side * 0.45 * pillar["half_w"], 0.0])
    end = junction_centre + np.array([0.0, side * 2.0, 0.0])
    path = np.array([start + (start - end) * 0.05, 0.5 * (start + end), end])
    t = 0.5 * x["lamina_thickness_mm"]
    half_h = 0.5 * x["lamina_height_mm"]
    rings = _sweep_rings(path, [half_h, half_h, half_h_j], [t, t, half_d_j], _PART_RING,
                         up=_LAMINA_UP, exponent=3.0)
    return _Surface.loft(rings)


def _spinous(x, junction_centre) -> list[_Surface]:
    """From the junction to the ISL insertion (Table 4): the tip ring is centred on it, so
    the insertion is the centre of the tip face. Bifid: two tubercles beside the tip."""
    tip = np.array([x["spinous_tip_x_mm"], 0.0, x["spinous_tip_z_mm"]])
    u = tip - junction_centre
    u /= np.linalg.norm(u)
    half_h, half_w = 0.5 * x["spinous_height_mm"], 0.5 * x["spinous_width_mm"]
    path = np.array([junction_centre, 0.5 * (junction_centre + tip), tip])
    shaft = _Surface.loft(_sweep_rings(path, [half_h, 0.75 * half_h, 0.55 * half_h],
                                       [half_w, 0.85 * half_w, 0.75 * half_w], _PART_RING,
                                       exponent=2.6))
    out = [shaft]
    split = 0.5 * x["bifid_split_mm"]
    if split > 0:
        y = np.array([0.0, 1.0, 0.0])
        for side in (1.0, -1.0):
            a = tip - 3.0 * u + side * 0.6 * y
            b = tip + 2.0 * u + side * split * y - np.array([0.0, 0.0, 0.4])
            r = 0.45 * half_h
            out.append(_Surface.loft(_sweep_rings(np.array([a, 0.5 * (a + b), b]),
                                                  [r, r, 0.7 * r], [0.45 * half_w, 0.45 *
                                                                    half_w, 0.35 * half_w],
                                                  _PART_RING)))
    return out


def _transverse(x, pedicle_wall, pedicle_dir, pillar, side) -> list[_Surface]:
    """Bony ring around the foramen transversarium (published diameter; its medial edge the
    published distance lateral of the uncinate process's medial margin), a root from the
    body, and anterior and posterior tubercles reaching as far lateral as the pillar."""
    r_f = 0.5 * x["transverse_foramen_diameter_mm"]
    bar_h, bar_t = 0.5 * x["transverse_bar_height_mm"], 0.5 * x["transverse_bar_thickness_mm"]
    _, _, b, _ = _body_frame(x)
    uncinate_medial = b - x["uncinate_base_width_mm"]
    y_f = uncinate_medial + x["foramen_to_uncinate_mm"] + r_f
    # in front of the pedicle: the hole clears its anterolateral wall by the bar thickness
    ang = np.radians(x["pedicle_transverse_angle_deg"])
    n_lat = np.array([np.sin(ang), side * np.cos(ang), 0.0])
    wall = pedicle_wall + 0.5 * x["pedicle_width_mm"] * n_lat      # on the anterolateral wall
    # the point of the wall line at y = y_f, then forward (+x) until the hole's edge is a
    # bar thickness away from the wall (distance to the wall grows by sin(angle) per mm)
    t = (side * y_f - wall[1]) / pedicle_dir[1]
    on_wall = wall + t * pedicle_dir
    centre = on_wall + np.array([(r_f + bar_t) / np.sin(ang), 0.0, 0.0])
    R = r_f + bar_t
    c, s = _cos_sin(24)
    loop = centre + R * np.column_stack([c, side * s, np.zeros_like(c)])
    ring = _Surface.torus(_sweep_rings(loop, bar_h, bar_t, 12, closed=True))
    out = [ring]
    # anterior root: from inside the body to the front of the ring
    root_a = np.array([centre[0] + 1.0, side * (b - 2.5), 0.0])
    root_b = centre + np.array([R * 0.7, -side * R * 0.7, 0.0])
    out.append(_Surface.loft(_sweep_rings(np.array([root_a, 0.5 * (root_a + root_b), root_b]),
                                          bar_h, bar_t, 12)))
    # tubercles: from the ring's anterolateral / posterolateral sides out to the pillar's
    # lateral face, ending in knobs, with a thinner floor between them: the groove that
    # carries the spinal nerve (Gray 1918, Frazer)
    y_tip = side * (pillar["y"] + pillar["half_w"])
    ends = []
    for ang_deg, dx in ((55.0, 3.5), (125.0, -0.5)):
        a_ = np.radians(ang_deg)
        a = centre + R * np.array([np.cos(a_), side * np.sin(a_), 0.0])
        tip = np.array([centre[0] + dx, y_tip, -0.8])
        ends.append((a, tip))
        path = np.array([a, 0.5 * (a + tip), tip])
        out.append(_Surface.loft(_sweep_rings(path, [bar_h, bar_h, 1.15 * bar_h],
                                              [bar_t, bar_t, 1.25 * bar_t], 12)))
    (a0, t0), (a1, t1) = ends
    start, stop = 0.5 * (a0 + a1), 0.5 * (t0 + t1)
    half_span = 0.5 * np.linalg.norm(a0 - a1)
    floor = np.array([0.0, 0.0, -0.45 * bar_h])
    path = np.array([start, 0.5 * (start + stop), stop]) + floor
    out.append(_Surface.loft(_sweep_rings(path, 0.4 * bar_h, [half_span, half_span,
                                                              0.5 * np.linalg.norm(t0 - t1)],
                                          12, exponent=3.0)))
    return out


def _vertebra(x, discs) -> _Surface:
    """All parts of one vertebra (own frame [mm]); part ids index :data:`ANATOMICAL_PARTS`."""
    pid = {name: k for k, name in enumerate(ANATOMICAL_PARTS)}
    surfaces, ids = [_body(x)], [pid["body"]]
    junction, j_centre, half_d_j, half_h_j = _lamina_junction(x)
    for inferior, superior in discs:
        side = 1.0 if superior.center[1] >= 0 else -1.0
        pillar, keys = _pillar(x, inferior, superior)
        keys["y"] = abs(superior.center[1])
        surfaces.append(pillar)
        ids.append(pid["articular_pillar"])
        surfaces.append(_uncinate(x, side))
        ids.append(pid["uncinate_process"])
        ped, wall, d = _pedicle(x, side)
        surfaces.append(ped)
        ids.append(pid["pedicle"])
        surfaces.append(_lamina(x, keys, j_centre, half_d_j, half_h_j, side))
        ids.append(pid["lamina"])
        for s in _transverse(x, wall, d, keys, side):
            surfaces.append(s)
            ids.append(pid["transverse_process"])
    surfaces.append(junction)
    ids.append(pid["lamina"])
    for s in _spinous(x, j_centre):
        surfaces.append(s)
        ids.append(pid["spinous_process"])
    out = _Surface.concat(surfaces, ids)
    # to 1 nm: the trigonometry's last bits differ between CPUs' numpy loops; the drawing
    # (and the report's renders) should not
    return _Surface(np.round(out.points, _DECIMALS) + 0.0, out.tris, out.part)
