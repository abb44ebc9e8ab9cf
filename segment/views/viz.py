"""3-D views of C5-C6 poses with pyvista: scenes, renders, exports and a live explorer.

Two layers, as elsewhere in the package:

* **Scene** (pure functions and a template): from the model, a display-geometry table and a
  :class:`~segment.model.SegmentState` at a pose, build plain :class:`pyvista.PolyData` meshes
  in C6 coordinates [mm] (C6 fixed, +x anterior, +y left, +z superior). Nothing here opens a
  window or renders; :meth:`SceneTemplate.update` rewrites the meshes' points in place, which is
  what keeps the explorer live.
* **Plotting**: :func:`render`, :func:`render_grid`, :func:`export` and :class:`Explorer` put
  a scene in a :class:`pyvista.Plotter`.

What is drawn, and from where:

=================  ============================================================================
C6, C5             simplified vertebrae: body, pedicles, transverse processes, laminae, spinous
                   process from ``data/vertebra_geometry.csv`` (display dimensions, not used by
                   the mechanics); articular pillars lofted between each vertebra's inferior and
                   superior facet faces of the contact model (``data/facets.csv``). C5 is placed
                   at the solved pose: a C5-frame point ``a`` is drawn at ``p + R a``.
C5 reference       the same C5 at q = 0 (the reference pose of Table 1), translucent ghost.
facet cylinders    the contact model's discs (centre, normal, radius) drawn as cylinders whose
                   end face is the contact face; the solid lies behind the face.
disc               translucent body lofted between the C6 superior and C5 inferior endplates.
ligaments          tubes between the insertions (one per strip), point array ``tension_N`` [N]
                   (NaN where slack: drawn thin and grey); coloured by tension with a scalar
                   bar. A ruptured strip (``Segment.ruptured``) is drawn as two black torn
                   stubs, one from each insertion (mesh ``ruptured``), not as a tube.
dislocated facets  a red disc, wider than the facet, over the C6 facet of a joint whose state
                   reports ``dislocated`` (mesh ``dislocated``), and "DISLOCATED" in its label.
contact arrows     the facet force on C5 [N] at the contact point, length proportional to the
                   magnitude (``ARROW_MM_PER_N``), drawn over the bone so that it stays visible.
=================  ============================================================================

Off-screen rendering without a display uses Mesa's OSMesa. VTK picks the window class from
``VTK_DEFAULT_OPENGL_WINDOW`` each time it creates a render window, so :func:`_new_plotter`
sets that variable only while it creates an off-screen plotter on a machine without a display
(and only when the user has not chosen a class), then restores the environment: importing
this module changes nothing in the process environment, and with a display VTK picks its own
window.

pyvista is the ``viz`` extra: without it, importing this module raises an ImportError that
names the extra (``pip install "c5c6-segment[viz]"``).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from segment._extras import require
from segment.core.io import _Table, data_dir
from segment.core.model import Segment, SegmentState
from segment.core.newton import EquilibriumResult
from segment.elements.disc import DOF_NAMES
from segment.elements.kinematics import pose
from segment.elements.loads import Load
from segment.solvers.equilibrium import solve

pv = require("pyvista", "viz", "segment.viz (3-D views)")

__all__ = [
    "ARROW_MM_PER_N",
    "Explorer",
    "Part",
    "Scene",
    "SceneTemplate",
    "VertebraGeometry",
    "build_scene",
    "explore",
    "export",
    "load_geometry",
    "plot",
    "render",
    "render_grid",
    "screen_axes",
    "tension_range",
]

log = logging.getLogger(__name__)

GEOMETRY_FILE = "vertebra_geometry.csv"
VERTEBRAE = ("C5", "C6")
PARTS = ("body", "pedicle", "transverse_process", "lamina", "spinous_process")

# ---- drawing style (not anatomy): sizes of glyphs [mm], colours
ARROW_MM_PER_N = 0.3           # contact-force arrow length per newton [mm/N]
ARROW_MAX_MM = 30.0            # longer arrows are clipped to this length [mm]
ARROW_SHAFT_MM = 0.7           # shaft radius [mm]
ARROW_HEAD_MM = 1.8            # head radius [mm]
LIGAMENT_TAUT_MM = 1.0         # tube radius of a ligament under tension [mm]
LIGAMENT_SLACK_MM = 0.35       # tube radius of a slack ligament [mm]
FACET_DEPTH_MM = 1.2           # thickness of the drawn facet cylinders behind the face [mm]
PILLAR_RADIUS_FRACTION = 0.92  # articular pillar radius / facet radius (facets stand proud)
DISC_BULGE_MM = 0.6            # outward bulge of the drawn disc at mid-height [mm]
RING = 32                      # points per ring of the lofted bone surfaces
TUBE_RING = 12                 # points per ring of ligament tubes and arrows
RUPTURED_STUB = 0.3            # torn stub length / strip length, drawn from each insertion
HALO_RADIUS_FRACTION = 1.35    # dislocation halo radius / facet radius

BONE_C6 = "#c8b68e"
BONE_C5 = "#f2e8cf"
GHOST = "#5d8aa8"
DISC_COLOR = "#6fa8dc"
FACET_COLOR = "#2e86c1"
ARROW_COLOR = "#d62728"
SLACK_COLOR = "#9a9a9a"
RUPTURED_COLOR = "#111111"
DISLOCATED_COLOR = "#e41a1c"
TENSION_CMAP = "plasma"
DEFAULT_SIZE = (1200, 900)
LEGEND = "\nred arrows: facet force on C5; blue ghost: C5 at the reference pose"

VIEWS = {
    # camera direction (from the focal point towards the eye) and view-up, C6 axes
    "oblique": ((-0.6, 0.85, 0.75), (0.0, 0.0, 1.0)),
    "lateral": ((0.0, 1.0, 0.0), (0.0, 0.0, 1.0)),
    "posterior": ((-1.0, 0.25, 0.35), (0.0, 0.0, 1.0)),
    "anterior": ((1.0, 0.0, 0.15), (0.0, 0.0, 1.0)),
    "superior": ((0.0, 0.0, 1.0), (1.0, 0.0, 0.0)),
}
# "auto": the view that shows a case's main motion best: lateral (from the left) for the
# sagittal motions x, z, phi_y; posterior for y, phi_x, phi_z, where both facets matter.
AUTO_VIEW_BY_DOF = ("lateral", "posterior", "lateral", "posterior", "lateral", "posterior")


# ============================================================== display geometry table
@dataclass(frozen=True, eq=False)
class Part:
    """One bone part: a tapered elliptic tube from ``start`` to ``end`` in its vertebra's frame.

    Attributes
    ----------
    vertebra : str
        ``"C5"`` or ``"C6"``.
    part : str
        One of ``body``, ``pedicle``, ``transverse_process``, ``lamina``, ``spinous_process``.
    start, end : ndarray, shape (3,)
        Centres of the end sections [mm], vertebra frame (for the body: the inferior and
        superior endplate centres).
    semi_axes_start, semi_axes_end : ndarray, shape (2,)
        Semi-axes (a, b) of the end sections [mm]. ``a`` lies along ``axis x (+y)`` (vertical
        for parts running in the transverse plane, antero-posterior for the body), ``b``
        completes the right-handed frame.
    mirror : bool
        Also draw the mirror image in the sagittal plane (y -> -y): left and right parts.
    """

    vertebra: str
    part: str
    start: np.ndarray
    end: np.ndarray
    semi_axes_start: np.ndarray
    semi_axes_end: np.ndarray
    mirror: bool


@dataclass(frozen=True, eq=False)
class VertebraGeometry:
    """The display geometry of both vertebrae (read by :func:`load_geometry`)."""

    parts: tuple[Part, ...]
    path: Path

    def of(self, vertebra: str) -> tuple[Part, ...]:
        """The parts of ``"C5"`` or ``"C6"``."""
        return tuple(p for p in self.parts if p.vertebra == vertebra)

    def body(self, vertebra: str) -> Part:
        """The vertebral body of ``"C5"`` or ``"C6"``."""
        return next(p for p in self.parts if p.vertebra == vertebra and p.part == "body")


def load_geometry(path: str | Path | None = None) -> VertebraGeometry:
    """Read and validate ``data/vertebra_geometry.csv`` (or the table at ``path``).

    Columns: ``vertebra, part, x0_mm, y0_mm, z0_mm, x1_mm, y1_mm, z1_mm, a0_mm, b0_mm, a1_mm,
    b1_mm, mirror, source`` (see :class:`Part`). Raises ``ValueError`` naming the file, the row
    (1 = first data row), the column and the value for a missing column, a non-numeric value, a
    semi-axis <= 0, an unknown vertebra or part, ``mirror`` other than yes/no, a part of zero
    length, a body whose axis does not point up (+z), or a vertebra without exactly one body.
    """
    path = Path(data_dir() / GEOMETRY_FILE if path is None else path)
    coords = ("x0_mm", "y0_mm", "z0_mm", "x1_mm", "y1_mm", "z1_mm")
    axes = ("a0_mm", "b0_mm", "a1_mm", "b1_mm")
    t = _Table(path, ("vertebra", "part", *coords, *axes, "mirror"))
    parts = []
    for i, row in t.rows():
        vertebra = t.key(i, row, "vertebra", VERTEBRAE)
        name = t.key(i, row, "part", PARTS)
        mirror = t.key(i, row, "mirror", ("yes", "no")) == "yes"
        xyz = np.array([t.number(i, row, c) for c in coords]).reshape(2, 3)
        ab = np.array([t.number(i, row, c, positive=True) for c in axes]).reshape(2, 2)
        if not np.linalg.norm(xyz[1] - xyz[0]) > 1e-6:
            raise ValueError(f"{t.name}, row {i}, columns 'x0_mm'..'z1_mm': start and end must "
                             f"differ, got {xyz[0].tolist()} twice")
        if name == "body" and not xyz[1, 2] > xyz[0, 2]:
            raise ValueError(f"{t.name}, row {i}, column 'z1_mm': the body runs from the "
                             f"inferior to the superior endplate, so z1_mm must be > z0_mm "
                             f"= {xyz[0, 2]:g}, got {xyz[1, 2]:g}")
        for a in (*xyz, *ab):
            a.setflags(write=False)
        parts.append(Part(vertebra, name, xyz[0], xyz[1], ab[0], ab[1], mirror))
    for v in VERTEBRAE:
        bodies = [p for p in parts if p.vertebra == v and p.part == "body"]
        if len(bodies) != 1:
            raise ValueError(f"{t.name}, column 'part': vertebra {v} needs exactly one 'body' "
                             f"row, got {len(bodies)}")
    return VertebraGeometry(tuple(parts), path)


# ============================================================== mesh primitives (numpy)
def _section_frame(axis: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors (e_a, e_b) across ``axis``: e_a = axis x (+y), else axis x (+x)."""
    d = axis / np.linalg.norm(axis)
    ea = np.cross(d, [0.0, 1.0, 0.0])
    if np.linalg.norm(ea) < 1e-6:
        ea = np.cross(d, [1.0, 0.0, 0.0])
    ea /= np.linalg.norm(ea)
    return ea, np.cross(d, ea)


_ANGLES: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def _cos_sin(n: int) -> tuple[np.ndarray, np.ndarray]:
    if n not in _ANGLES:
        t = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False)
        _ANGLES[n] = (np.cos(t), np.sin(t))
    return _ANGLES[n]


def _ellipse(center, ea, eb, a, b, n) -> np.ndarray:
    """Ring (n, 3) of an ellipse with semi-axes a along ea, b along eb [mm]."""
    c, s = _cos_sin(n)
    return np.asarray(center) + np.outer(a * c, ea) + np.outer(b * s, eb)


_LOFT_FACES: dict[tuple[int, int], np.ndarray] = {}


def _loft_faces(m: int, n: int) -> np.ndarray:
    """Triangle connectivity (k, 3) of a loft through m rings of n points, with capped ends.

    Point layout: the m rings (m * n points), then a copy of the first and of the last ring
    (the caps get their own points so that their normals stay flat), then the two cap centres.
    """
    key = (m, n)
    if key not in _LOFT_FACES:
        tris = []
        j = np.arange(n)
        k = (j + 1) % n
        for i in range(m - 1):
            a, b = i * n + j, (i + 1) * n + j
            a1, b1 = i * n + k, (i + 1) * n + k
            tris += [np.column_stack([a, a1, b1]), np.column_stack([a, b1, b])]
        first, last = m * n, m * n + n
        c0, c1 = m * n + 2 * n, m * n + 2 * n + 1
        tris.append(np.column_stack([np.full(n, c0), first + k, first + j]))
        tris.append(np.column_stack([np.full(n, c1), last + j, last + k]))
        _LOFT_FACES[key] = np.vstack(tris).astype(np.int64)
    return _LOFT_FACES[key]


def _loft_points(rings: np.ndarray) -> np.ndarray:
    """Points of :func:`_loft_faces` for rings (m, n, 3)."""
    m, n, _ = rings.shape
    flat = rings.reshape(m * n, 3)
    return np.vstack([flat, rings[0], rings[-1], rings[0].mean(axis=0), rings[-1].mean(axis=0)])


def _polydata(points: np.ndarray, tris: np.ndarray) -> pv.PolyData:
    faces = np.hstack([np.full((len(tris), 1), 3, dtype=np.int64), tris]).ravel()
    mesh = pv.PolyData(np.array(points, dtype=float), faces)  # a copy: updated in place
    mesh.point_data["Normals"] = _normals(points, tris)
    mesh.point_data.active_normals_name = "Normals"
    return mesh


def _normals(points: np.ndarray, tris: np.ndarray) -> np.ndarray:
    """Area-weighted vertex normals (n, 3) of a triangle mesh (outward for our windings)."""
    p0, p1, p2 = points[tris[:, 0]], points[tris[:, 1]], points[tris[:, 2]]
    fn = np.cross(p1 - p0, p2 - p0)
    vn = np.zeros_like(points)
    for c in range(3):
        np.add.at(vn, tris[:, c], fn)
    length = np.linalg.norm(vn, axis=1, keepdims=True)
    return vn / np.where(length > 0, length, 1.0)


def _tube_rings(start, end, a0, b0, a1, b1, n, *, bulge=0.0, m=2) -> np.ndarray:
    """Rings (m, n, 3) of a tapered elliptic tube, optionally bulging at mid-length [mm]."""
    start, end = np.asarray(start, dtype=float), np.asarray(end, dtype=float)
    ea, eb = _section_frame(end - start)
    rings = []
    for t in np.linspace(0.0, 1.0, m):
        grow = bulge * np.sin(np.pi * t)
        rings.append(_ellipse(start + t * (end - start), ea, eb, (1 - t) * a0 + t * a1 + grow,
                              (1 - t) * b0 + t * b1 + grow, n))
    return np.array(rings)


def _facet_rings(center, normal, radius, depth, n) -> np.ndarray:
    """Rings (2, n, 3) of a facet cylinder: the contact face and a copy ``depth`` behind it."""
    c, nrm = np.asarray(center, float), np.asarray(normal, float)
    ea, eb = _section_frame(nrm)
    face = _ellipse(c, ea, eb, radius, radius, n)
    return np.array([face - depth * nrm, face])


@dataclass(frozen=True, eq=False)
class _Surface:
    """A fixed-topology triangle mesh in some body frame: points (k, 3), triangles (t, 3)."""

    points: np.ndarray
    tris: np.ndarray
    part: np.ndarray  # part index per triangle

    @staticmethod
    def concat(surfaces, part_ids) -> _Surface:
        pts, tris, parts, offset = [], [], [], 0
        for s, pid in zip(surfaces, part_ids, strict=True):
            pts.append(s.points)
            tris.append(s.tris + offset)
            parts.append(np.full(len(s.tris), pid))
            offset += len(s.points)
        return _Surface(np.vstack(pts), np.vstack(tris), np.concatenate(parts))

    @staticmethod
    def loft(rings) -> _Surface:
        m, n, _ = rings.shape
        tris = _loft_faces(m, n)
        return _Surface(_loft_points(rings), tris, np.zeros(len(tris), dtype=int))

    def mesh(self) -> pv.PolyData:
        out = _polydata(self.points, self.tris)
        out.cell_data["part"] = self.part
        return out


def _mirror_y(a) -> np.ndarray:
    return np.asarray(a) * [1.0, -1.0, 1.0]


def _vertebra_surface(geometry: VertebraGeometry, model: Segment, vertebra: str) -> _Surface:
    """The bone of one vertebra in its own frame [mm].

    The articular pillars join each vertebra's inferior facet face (the contact model's C5
    facet, in the C5 frame) to its superior facet face (the contact model's C6 facet, in the
    C6 frame): both vertebrae share the facet anatomy of ``facets.csv``.
    """
    surfaces, ids = [], []
    for part in geometry.of(vertebra):
        copies = [(part.start, part.end)]
        if part.mirror:
            copies.append((_mirror_y(part.start), _mirror_y(part.end)))
        for s, e in copies:
            rings = _tube_rings(s, e, *part.semi_axes_start, *part.semi_axes_end, RING)
            surfaces.append(_Surface.loft(rings))
            ids.append(PARTS.index(part.part))
    for joint in model.facets:
        inf, sup = joint.disc_c5, joint.disc_c6
        # faces set back by the drawn facet depth so that the facet cylinders sit on top
        lo = inf.center - FACET_DEPTH_MM * inf.normal
        hi = sup.center - FACET_DEPTH_MM * sup.normal
        ea, eb = _section_frame(sup.normal)
        r_lo, r_hi = PILLAR_RADIUS_FRACTION * inf.radius, PILLAR_RADIUS_FRACTION * sup.radius
        # project the rings onto the two (nearly parallel) face planes: an oblique cylinder
        ring = _ellipse(np.zeros(3), ea, eb, 1.0, 1.0, RING)
        bottom = lo + _onto_plane(ring * r_lo, inf.normal, sup.normal)
        top = hi + ring * r_hi
        surfaces.append(_Surface.loft(np.array([bottom, top])))
        ids.append(len(PARTS))
    return _Surface.concat(surfaces, ids)


def _onto_plane(vectors, normal, along) -> np.ndarray:
    """Move in-plane ``vectors`` (k, 3) along ``along`` onto the plane with ``normal``."""
    denom = float(np.dot(along, normal))
    if abs(denom) < 1e-6:
        return vectors
    return vectors - np.outer(vectors @ normal / denom, along)


def _facet_surface(model: Segment, which: str) -> _Surface:
    """The contact model's facet cylinders: ``"c6"`` (C6 frame) or ``"c5"`` (C5 frame)."""
    discs = [j.disc_c6 if which == "c6" else j.disc_c5 for j in model.facets]
    surfaces = [_Surface.loft(_facet_rings(d.center, d.normal, d.radius, FACET_DEPTH_MM, RING))
                for d in discs]
    return _Surface.concat(surfaces, range(len(surfaces)))


def _moved(points_local: np.ndarray, p: np.ndarray, R: np.ndarray) -> np.ndarray:
    """C5-frame points (k, 3) -> C6 coordinates ``p + R a`` [mm]."""
    return points_local @ R.T + p


# ============================================================== scene (pure data)
@dataclass
class Scene:
    """The meshes of one pose, all in C6 coordinates [mm].

    Attributes
    ----------
    meshes : dict of str to pyvista.PolyData
        ``c6``, ``c5``, ``c5_reference``, ``facets_c6``, ``facets_c5``, ``disc``,
        ``ligaments`` (point array ``tension_N`` [N], NaN where slack; cell array
        ``ligament`` indexing ``ligament_names``), ``arrows`` (facet forces on C5; point array
        ``force_N`` [N]), ``ruptured`` (torn stubs of ruptured strips) and ``dislocated``
        (halos of dislocated facets, collapsed when seated).
    title : str
        Load case and the main displacement.
    facet_text : str
        One line per facet: side, regime, force [N].
    label_points : ndarray, shape (k, 3)
        Where the facet regime labels go [mm].
    labels : list of str
        One regime label per facet.
    ligament_names : tuple of str
    """

    meshes: dict
    title: str
    facet_text: str
    label_points: np.ndarray
    labels: list
    ligament_names: tuple

    def multiblock(self) -> pv.MultiBlock:
        """The meshes as one :class:`pyvista.MultiBlock`, block names as in :attr:`meshes`."""
        return pv.MultiBlock({k: v.copy() for k, v in self.meshes.items()})


class SceneTemplate:
    """Everything about the scene that does not change with the pose, for one model.

    Build once (a few ms), then :meth:`build` meshes for a state or :meth:`update` existing
    meshes in place (fixed topology: only points and point arrays change).

    Parameters
    ----------
    model : Segment
        Supplies the reference pose, the facet discs and the ligaments drawn.
    geometry : VertebraGeometry, optional
        Display geometry (default: :func:`load_geometry`).
    """

    def __init__(self, model: Segment, *, geometry: VertebraGeometry | None = None):
        self.model = model
        self.geometry = load_geometry() if geometry is None else geometry
        self._c6 = _vertebra_surface(self.geometry, model, "C6")
        self._c5 = _vertebra_surface(self.geometry, model, "C5")
        self._fac6 = _facet_surface(model, "c6")
        self._fac5 = _facet_surface(model, "c5")
        b6, b5 = self.geometry.body("C6"), self.geometry.body("C5")
        # C6 superior endplate (C6 frame) and C5 inferior endplate (C5 frame)
        self._end6 = _tube_rings(b6.start, b6.end, *b6.semi_axes_start, *b6.semi_axes_end,
                                 RING)[-1]
        self._end5 = _tube_rings(b5.start, b5.end, *b5.semi_axes_start, *b5.semi_axes_end,
                                 RING)[0]
        self._lig_faces = _loft_faces(2, TUBE_RING)
        self._arrow_faces = _loft_faces(4, TUBE_RING)
        self.ligament_names = tuple(model.strip_names)

    # -- pieces
    def _disc_points(self, p, R) -> np.ndarray:
        top = _moved(self._end5, p, R)
        bottom = self._end6
        centre_b, centre_t = bottom.mean(axis=0), top.mean(axis=0)
        rings = []
        for t in np.linspace(0.0, 1.0, 7):
            ring = (1 - t) * bottom + t * top
            centre = (1 - t) * centre_b + t * centre_t
            out = ring - centre
            out /= np.linalg.norm(out, axis=1, keepdims=True)
            rings.append(ring + DISC_BULGE_MM * np.sin(np.pi * t) * out)
        return _loft_points(np.array(rings))

    def _ligament_points(self, state: SegmentState) -> tuple[np.ndarray, np.ndarray]:
        pts, tension = [], []
        n_pts = 2 * TUBE_RING + 2 * TUBE_RING + 2
        for s in state.ligaments:
            taut = s.tension > 0.0
            r = LIGAMENT_TAUT_MM if taut else LIGAMENT_SLACK_MM
            if getattr(s, "ruptured", False):   # drawn by _ruptured_points: collapse the tube
                rings = _tube_rings(s.insertion_c6, s.insertion_c5_in_c6, 1e-4, 1e-4, 1e-4,
                                    1e-4, TUBE_RING)
                rings[:] = s.insertion_c6
            else:
                rings = _tube_rings(s.insertion_c6, s.insertion_c5_in_c6, r, r, r, r,
                                    TUBE_RING)
            pts.append(_loft_points(rings))
            tension.append(np.full(n_pts, s.tension if taut else np.nan))
        if not pts:
            return np.zeros((0, 3)), np.zeros(0)
        return np.vstack(pts), np.concatenate(tension)

    def _ruptured_points(self, state: SegmentState) -> np.ndarray:
        """Two torn stubs per ruptured strip, one from each insertion (points of 2 tubes)."""
        pts = []
        r = 0.8 * LIGAMENT_TAUT_MM
        for s in state.ligaments:
            if not getattr(s, "ruptured", False):
                continue
            a, b = np.asarray(s.insertion_c5_in_c6), np.asarray(s.insertion_c6)
            for start, end in ((b, b + RUPTURED_STUB * (a - b)), (a, a + RUPTURED_STUB * (b - a))):
                pts.append(_loft_points(_tube_rings(start, end, r, r, 0.4 * r, 0.4 * r,
                                                    TUBE_RING)))
        return np.vstack(pts) if pts else np.zeros((0, 3))

    def _halo_points(self, state: SegmentState) -> np.ndarray:
        """A halo around each C6 facet disc; collapsed to its centre unless dislocated."""
        pts = []
        for joint, f in zip(self.model.facets, state.facets, strict=True):
            d = joint.disc_c6
            r = HALO_RADIUS_FRACTION * d.radius
            rings = _facet_rings(d.center + 0.3 * d.normal, d.normal, r, 0.6, TUBE_RING)
            if not f.dislocated:
                rings[:] = d.center
            pts.append(_loft_points(rings))
        return np.vstack(pts) if pts else np.zeros((0, 3))

    def _arrow_points(self, state: SegmentState) -> tuple[np.ndarray, np.ndarray]:
        pts, force = [], []
        n_pts = 4 * TUBE_RING + 2 * TUBE_RING + 2
        for f in state.facets:
            length = min(ARROW_MM_PER_N * f.force, ARROW_MAX_MM)
            d = f.force_on_c5 / f.force if f.force > 0 else np.array([0.0, 0.0, 1.0])
            head = min(4.0, 0.4 * length)
            start, neck, tip = f.point, f.point + (length - head) * d, f.point + length * d
            ea, eb = _section_frame(d)
            shaft, cone = ARROW_SHAFT_MM * min(1.0, length), ARROW_HEAD_MM * min(1.0, length)
            rings = np.array([_ellipse(start, ea, eb, shaft, shaft, TUBE_RING),
                              _ellipse(neck, ea, eb, shaft, shaft, TUBE_RING),
                              _ellipse(neck, ea, eb, cone, cone, TUBE_RING),
                              _ellipse(tip, ea, eb, 1e-3, 1e-3, TUBE_RING)])
            pts.append(_loft_points(rings))
            force.append(np.full(n_pts, f.force))
        if not pts:
            return np.zeros((0, 3)), np.zeros(0)
        return np.vstack(pts), np.concatenate(force)

    def _labels(self, state: SegmentState):
        points, labels, lines = [], [], []
        for joint, f in zip(self.model.facets, state.facets, strict=True):
            side = np.sign(joint.disc_c6.center[1]) or 1.0
            # left label above the joint, right label below: apart in lateral views too
            points.append(joint.disc_c6.center + np.array([-6.0, 8.0 * side, 12.0 * side]))
            # a dislocated joint (C5's facet has left C6's) is named in capitals
            state_text = "DISLOCATED" if f.dislocated else f.regime
            labels.append(f"{f.side}: {state_text}")
            lines.append(f"facet {f.side}: {state_text}, {f.force:.1f} N")
        broken = [s.name for s in state.ligaments if getattr(s, "ruptured", False)]
        if broken:
            lines.append("ruptured (black stubs): " + ", ".join(broken))
        return np.array(points).reshape(-1, 3), labels, "\n".join(lines)

    # -- public
    def build(self, state: SegmentState, *, title: str = "") -> Scene:
        """New meshes for the pose ``state.q`` (see :class:`Scene`)."""
        p, R = pose(state.q, self.model.reference)
        p_ref, R_ref = pose(np.zeros(6), self.model.reference)
        meshes = {
            "c6": self._c6.mesh(),
            "c5": self._c5.mesh(),
            "c5_reference": self._c5.mesh(),
            "facets_c6": self._fac6.mesh(),
            "facets_c5": self._fac5.mesh(),
            "disc": _polydata(self._disc_points(p, R), _loft_faces(7, RING)),
        }
        meshes["c5_reference"].points = _moved(self._c5.points, p_ref, R_ref)
        meshes["c5_reference"].point_data["Normals"] = _normals(
            meshes["c5_reference"].points, self._c5.tris)
        n_lig = len(state.ligaments)
        lig_tris = np.vstack([self._lig_faces + k * (4 * TUBE_RING + 2) for k in range(n_lig)]) \
            if n_lig else np.zeros((0, 3), dtype=np.int64)
        pts, tension = self._ligament_points(state)
        meshes["ligaments"] = _polydata(pts, lig_tris)
        meshes["ligaments"].point_data["tension_N"] = tension
        meshes["ligaments"].cell_data["ligament"] = np.repeat(np.arange(n_lig),
                                                              len(self._lig_faces))
        n_fac = len(state.facets)
        arrow_tris = np.vstack([self._arrow_faces + k * (6 * TUBE_RING + 2)
                                for k in range(n_fac)]) if n_fac else np.zeros((0, 3), np.int64)
        pts, force = self._arrow_points(state)
        meshes["arrows"] = _polydata(pts, arrow_tris)
        meshes["arrows"].point_data["force_N"] = force
        n_broken = sum(bool(getattr(s, "ruptured", False)) for s in state.ligaments)
        stub_tris = np.vstack([self._lig_faces + k * (4 * TUBE_RING + 2)
                               for k in range(2 * n_broken)]) if n_broken else np.zeros(
            (0, 3), dtype=np.int64)
        meshes["ruptured"] = (_polydata(self._ruptured_points(state), stub_tris) if n_broken
                              else pv.PolyData())
        halo_tris = np.vstack([self._lig_faces + k * (4 * TUBE_RING + 2)
                               for k in range(n_fac)]) if n_fac else np.zeros((0, 3), np.int64)
        meshes["dislocated"] = (_polydata(self._halo_points(state), halo_tris) if n_fac
                                else pv.PolyData())
        label_points, labels, text = self._labels(state)
        scene = Scene(meshes, title, text, label_points, labels, self.ligament_names)
        self._place(scene, p, R, state)
        return scene

    def update(self, scene: Scene, state: SegmentState, *, title: str | None = None) -> Scene:
        """Move ``scene`` (built by :meth:`build`) to the pose ``state.q``, in place."""
        p, R = pose(state.q, self.model.reference)
        self._place(scene, p, R, state)
        if title is not None:
            scene.title = title
        label_points, labels, text = self._labels(state)
        scene.label_points, scene.labels, scene.facet_text = label_points, labels, text
        return scene

    def _place(self, scene: Scene, p, R, state):
        m = scene.meshes
        _set_points(m["c5"], _moved(self._c5.points, p, R), self._c5.tris, R=R,
                    normals_local=self._c5_normals)
        _set_points(m["facets_c5"], _moved(self._fac5.points, p, R), self._fac5.tris, R=R,
                    normals_local=self._fac5_normals)
        _set_points(m["disc"], self._disc_points(p, R), _loft_faces(7, RING))
        pts, tension = self._ligament_points(state)
        _set_points(m["ligaments"], pts, m["ligaments"].regular_faces)
        m["ligaments"].point_data["tension_N"][:] = tension
        pts, force = self._arrow_points(state)
        _set_points(m["arrows"], pts, m["arrows"].regular_faces)
        m["arrows"].point_data["force_N"][:] = force
        for name, pts in (("ruptured", self._ruptured_points(state)),
                          ("dislocated", self._halo_points(state))):
            if len(pts) and len(pts) == m[name].n_points:
                _set_points(m[name], pts, m[name].regular_faces)

    @property
    def _c5_normals(self):
        if not hasattr(self, "_c5n"):
            self._c5n = _normals(self._c5.points, self._c5.tris)
        return self._c5n

    @property
    def _fac5_normals(self):
        if not hasattr(self, "_fac5n"):
            self._fac5n = _normals(self._fac5.points, self._fac5.tris)
        return self._fac5n


def _set_points(mesh: pv.PolyData, points, tris, *, R=None, normals_local=None):
    """Overwrite a mesh's points in place (and its normals: rotated, or recomputed)."""
    if len(points) == 0:
        return
    mesh.points[:] = points
    normals = normals_local @ R.T if R is not None else _normals(points, tris)
    mesh.point_data["Normals"][:] = normals
    mesh.Modified()


def _title(result: EquilibriumResult, *, short: bool = False) -> str:
    """Load case, its load and the main displacement from the reference pose."""
    load = result.load
    f = load.as_array()
    i = load.main_dof
    comps = [f"{n} = {v:+g} N" for n, v in zip(("Fx", "Fy", "Fz"), f[:3], strict=True) if v]
    comps += [f"{n} = {v / 1000:+g} N m" for n, v in zip(("Mx", "My", "Mz"), f[3:], strict=True)
              if v]
    q = result.q
    if i is None:  # combined load: the largest displacement, 1 mm ~ 1 deg
        i = int(np.argmax(np.abs(np.concatenate([q[:3], np.degrees(q[3:])]))))
    value = q[i] if i < 3 else np.degrees(q[i])
    unit = "mm" if i < 3 else "deg"
    load_text = ", ".join(comps) or "no load"
    flag = "" if result.converged else "  [NOT CONVERGED]"
    if result.converged and not result.intact:   # dislocated facet, ligament past eps_max
        flag = "  [BEYOND LIMITS]"
    if short:
        return f"{load.name}: {DOF_NAMES[i]} = {value:+.2f} {unit}{flag}"
    return f"{load.name} ({load_text}): {DOF_NAMES[i]} = {value:+.2f} {unit}{flag}"


def build_scene(result: EquilibriumResult, *, geometry: VertebraGeometry | None = None,
                template: SceneTemplate | None = None) -> Scene:
    """Meshes of C6, C5 at ``result.q`` and the element forces of ``result.state``.

    Parameters
    ----------
    result : EquilibriumResult
    geometry : VertebraGeometry, optional
        Display geometry (default: the packaged table).
    template : SceneTemplate, optional
        Reuse a template built for ``result.model`` (faster for many results).

    Returns
    -------
    Scene
        Meshes in C6 coordinates [mm].
    """
    template = SceneTemplate(result.model, geometry=geometry) if template is None else template
    return template.build(result.state, title=_title(result))


# ============================================================== plotting layer
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


def _resolve_view(view: str, result: EquilibriumResult) -> str:
    """``view`` itself, or for ``"auto"`` the view of the load's main component."""
    if view == "auto":
        dof = result.load.main_dof
        return "oblique" if dof is None else AUTO_VIEW_BY_DOF[dof]
    if view not in VIEWS:
        raise ValueError(f"view must be one of auto, {', '.join(VIEWS)}, got {view!r}")
    return view


def _camera(plotter: pv.Plotter, view: str, scene: Scene):
    if view not in VIEWS:
        raise ValueError(f"view must be one of {', '.join(VIEWS)}, got {view!r}")
    direction, up = VIEWS[view]
    bounds = np.array(scene.meshes["c6"].bounds).reshape(3, 2)
    hi = np.array(scene.meshes["c5"].bounds).reshape(3, 2)
    lo_all, hi_all = np.minimum(bounds[:, 0], hi[:, 0]), np.maximum(bounds[:, 1], hi[:, 1])
    focal = 0.5 * (lo_all + hi_all)
    size = float(np.linalg.norm(hi_all - lo_all))
    d = np.asarray(direction, float) / np.linalg.norm(direction)
    plotter.camera_position = [tuple(focal + 1.65 * size * d), tuple(focal), up]
    plotter.camera.view_angle = 30.0


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
    plotter.add_mesh(m["c6"], color=BONE_C6, smooth_shading=False, specular=0.2, name="c6")
    plotter.add_mesh(m["c5"], color=BONE_C5, smooth_shading=False, specular=0.2, name="c5")
    plotter.add_mesh(m["c5_reference"], color=GHOST, opacity=0.18, name="c5_reference",
                     smooth_shading=False)
    plotter.add_mesh(m["facets_c6"], color=FACET_COLOR, name="facets_c6")
    plotter.add_mesh(m["facets_c5"], color=FACET_COLOR, name="facets_c5")
    plotter.add_mesh(m["disc"], color=DISC_COLOR, opacity=0.45, name="disc", specular=0.3)
    bar = dict(title="ligament tension [N]", vertical=True, position_x=0.86, position_y=0.3,
               height=0.4, width=0.05, title_font_size=font + 2, label_font_size=font + 1,
               fmt="%.0f", n_labels=5) if not compact else dict(
        title="tension [N]", vertical=True, position_x=0.82, position_y=0.25, height=0.5,
        width=0.06, title_font_size=font, label_font_size=font, fmt="%.0f", n_labels=3)
    plotter.add_mesh(m["ligaments"], scalars="tension_N", cmap=TENSION_CMAP, clim=clim,
                     nan_color=SLACK_COLOR, show_scalar_bar=scalar_bar, scalar_bar_args=bar,
                     name="ligaments")
    if "ruptured" in m and m["ruptured"].n_points:
        plotter.add_mesh(m["ruptured"], color=RUPTURED_COLOR, name="ruptured")
    if "dislocated" in m and m["dislocated"].n_points:
        plotter.add_mesh(m["dislocated"], color=DISLOCATED_COLOR, opacity=0.7,
                         name="dislocated")
    overlay = _Overlay(plotter, plotter.renderer)
    overlay.add(m["arrows"], ARROW_COLOR)
    title = plotter.add_text(scene.title, position="upper_edge", font_size=font,
                             color="black", name="title")
    legend = "" if compact else LEGEND
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
        plotter.add_axes(xlabel="anterior", ylabel="left", zlabel="superior", line_width=3,
                         color="black", viewport=(0.0, 0.0, 0.22, 0.22) if not compact
                         else (0.0, 0.0, 0.3, 0.3))
    plotter.set_background("white")
    _camera(plotter, view, scene)
    return _Drawn(title, facet_text, label_actor)


def _check_size(size) -> tuple[int, int]:
    s = tuple(int(v) for v in size)
    if len(s) != 2 or min(s) < 16:
        raise ValueError(f"size must be (width, height) in pixels, each >= 16, got {size!r}")
    return s


def plot(result: EquilibriumResult, *, size=DEFAULT_SIZE, view: str = "auto", clim=None,
         geometry: VertebraGeometry | None = None, off_screen: bool | None = None,
         plotter: pv.Plotter | None = None) -> pv.Plotter:
    """A plotter with the posed scene drawn, not yet shown.

    In a notebook, ``pv.set_jupyter_backend("static")`` then ``plot(result).show()`` gives a
    picture; :func:`render` saves the same scene to a file. Parameters as for :func:`render`;
    ``plotter``: draw into this :class:`pyvista.Plotter` (its active subplot) instead of a new
    one (``size`` and ``off_screen`` then belong to it and are not used).
    """
    view = _resolve_view(view, result)
    scene = build_scene(result, geometry=geometry)
    clim = _default_range([result]) if clim is None else clim
    pl = plotter if plotter is not None else _new_plotter(off_screen=off_screen,
                                                          window_size=_check_size(size))
    _draw(pl, scene, clim=clim, view=view)
    return pl


def render(result: EquilibriumResult, path: str | Path, *, size=DEFAULT_SIZE,
           view: str = "auto", clim=None, geometry: VertebraGeometry | None = None) -> Path:
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
        ``lateral`` (from the left), ``posterior``, ``anterior`` or ``superior``.
    clim : (float, float), optional
        Tension colour range [N] (default: 0 to the largest tension, rounded up to 5 N).
    geometry : VertebraGeometry, optional

    Returns
    -------
    Path
        The file written: ``path``, with ``.png`` added when it has no suffix.
    """
    path = _image_path(path)
    pl = plot(result, size=size, view=view, clim=clim, geometry=geometry, off_screen=True)
    try:
        pl.screenshot(str(path))
    finally:
        pl.close()
    return path


def render_grid(results, path: str | Path, *, size=(1800, 1500), view: str = "auto",
                geometry: VertebraGeometry | None = None, scalar_bar: bool = True,
                axes: bool = True) -> Path:
    """Render up to nine poses in a 3 x 3 grid (row by row) to one PNG.

    One tension colour range [N] (:func:`tension_range`) serves all panels, so colours compare
    across cases. With ``view="auto"`` each panel uses the view of its own case (see
    :func:`render`). ``scalar_bar`` and ``axes`` draw the colour bar and the orientation axes in
    the first panel; a caller that draws one shared colour bar and its own orientation keys
    (the validation report) turns them off.
    """
    results = list(results)
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
            scene = tpl.build(r.state, title=_title(r, short=True))
            _draw(pl, scene, clim=clim, view=_resolve_view(view, r), compact=True, labels=False,
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
           geometry: VertebraGeometry | None = None) -> Path:
    """Write the posed scene for other tools; the suffix chooses the format.

    ``.gltf``: glTF 2.0 via VTK's exporter (colours, no scalar bar), C6 axes, mm. (VTK writes
    no binary ``.glb``; any glTF tool converts the ``.gltf``.)
    ``.vtm``: a VTK multiblock (one ``.vtp`` per mesh in a folder beside it) with the point
    arrays ``tension_N`` and ``force_N`` kept for ParaView.
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


# ============================================================== explorer
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
    model : Segment, optional
        Default: :func:`segment.c5c6`.
    off_screen : bool
        True builds the plotter without a window (tests, benchmarks).
    size : (int, int)
        Window size [pixels].
    cases : mapping of str to Load, optional
        The cases on the number keys (default: ``segment.LOAD_CASES``).
    tension_range : (float, float)
        Colour range of the ligament tension [N].
    render : bool
        Render after each update (False: only solve and move the meshes).

    Examples
    --------
    >>> ex = Explorer(off_screen=True)            # doctest: +SKIP
    >>> ex.on_slider("My", 1.8)                   # doctest: +SKIP
    >>> ex.result.q[4] > 0                        # doctest: +SKIP
    True
    """

    def __init__(self, model: Segment | None = None, *, off_screen: bool = False,
                 size=(1400, 900), cases=None, tension_range=(0.0, 60.0),
                 render: bool = True, geometry: VertebraGeometry | None = None):
        import segment

        self.base_model = segment.c5c6() if model is None else model
        self.cases = dict(segment.LOAD_CASES if cases is None else cases)
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


OFFSCREEN_WINDOW = "vtkOSOpenGLRenderWindow"
"""VTK's Mesa off-screen window class, used when rendering without a display."""


def _new_plotter(*, off_screen: bool | None, **kwargs) -> pv.Plotter:
    """A :class:`pyvista.Plotter`; off-screen without a display, on Mesa's OSMesa window.

    The variable ``VTK_DEFAULT_OPENGL_WINDOW`` is set only while the plotter (and so its
    render window) is created, and only when the user has not set it; it is removed afterwards.
    """
    offscreen = off_screen if off_screen is not None else bool(pv.OFF_SCREEN)
    if not offscreen or has_display() or "VTK_DEFAULT_OPENGL_WINDOW" in os.environ:
        return pv.Plotter(off_screen=off_screen, **kwargs)
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


def explore(model: Segment | None = None, **kwargs) -> Explorer:
    """Open the interactive explorer window (see :class:`Explorer`).

    Raises
    ------
    RuntimeError
        When there is no display to open a window on.
    """
    if not has_display():
        raise RuntimeError("segment explore needs a display (no DISPLAY or WAYLAND_DISPLAY); "
                           "use 'segment render CASE' for pictures without one")
    ex = Explorer(model, off_screen=False, **kwargs)
    ex.show()
    return ex
