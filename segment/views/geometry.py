"""Display geometry of C5 and C6 (numpy only): the table, mesh primitives, bone surfaces.

The vertebra shapes come from ``data/vertebra_geometry.csv`` (display dimensions: the
mechanics never use them); the facet cylinders are the contact model's discs
(``data/facets.csv``). Everything here is plain numpy in the vertebra's own frame [mm]; the
pyvista scene (:mod:`segment.views.scene`) and the web explorer (:mod:`segment.views.web`)
turn it into meshes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from segment.core.io import data_dir
from segment.core.model import Segment
from segment.core.tables import Table
from segment.views.style import FACET_DEPTH_MM, PILLAR_RADIUS_FRACTION, RING

__all__ = ["GEOMETRY_FILE", "PARTS", "VERTEBRAE", "Part", "VertebraGeometry", "load_geometry",
           "surface_distance"]

GEOMETRY_FILE = "vertebra_geometry.csv"
VERTEBRAE = ("C5", "C6")
PARTS = ("body", "pedicle", "transverse_process", "lamina", "spinous_process")


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
    """The simple display geometry of both vertebrae (read by :func:`load_geometry`): tapered
    elliptic tubes, and articular pillars lofted between the contact model's facet faces.

    ``geometry="simple"`` in the views; the default is the anatomical geometry
    (:mod:`segment.views.anatomy`). Both have the same interface: :attr:`name`,
    :attr:`part_names`, :meth:`surface` and :meth:`endplate`.
    """

    parts: tuple[Part, ...]
    path: Path
    name = "simple"
    part_names = (*PARTS, "articular_pillar")
    """Names of the ``part`` indices of :meth:`surface` (cell array ``part`` of the meshes)."""

    def surface(self, model: Segment, vertebra: str) -> _Surface:
        """The bone of ``vertebra`` in its own frame [mm] (see :func:`_vertebra_surface`)."""
        return _vertebra_surface(self, model, vertebra)

    def endplate(self, vertebra: str, which: str) -> np.ndarray:
        """Rim (RING, 3) of the ``"superior"`` or ``"inferior"`` endplate [mm, own frame]:
        where the drawn disc meets the body."""
        b = self.body(vertebra)
        rings = _tube_rings(b.start, b.end, *b.semi_axes_start, *b.semi_axes_end, RING)
        return rings[-1] if which == "superior" else rings[0]

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
    t = Table(path, ("vertebra", "part", *coords, *axes, "mirror"))
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


def _ring_faces(m: int, n: int) -> np.ndarray:
    """Triangle connectivity of a closed loop of m rings of n points (a torus, no caps)."""
    j = np.arange(n)
    k = (j + 1) % n
    tris = []
    for i in range(m):
        i1 = (i + 1) % m
        a, b, a1, b1 = i * n + j, i1 * n + j, i * n + k, i1 * n + k
        tris += [np.column_stack([a, a1, b1]), np.column_stack([a, b1, b])]
    return np.vstack(tris).astype(np.int64)


def _superellipse(center, e1, e2, a, b, exponent, n) -> np.ndarray:
    """Ring (n, 3) of a superellipse |u/a|^p + |v/b|^p = 1 (p = ``exponent``; 2: an ellipse,
    larger: a rounder rectangle) with u along e1 and v along e2 [mm]; the points at angles
    0, 90, 180, 270 deg (n divisible by 4) are the extreme points +a e1, +b e2, -a e1, -b e2."""
    c, s = _cos_sin(n)
    f = 2.0 / exponent
    u = np.sign(c) * np.abs(c) ** f
    v = np.sign(s) * np.abs(s) ** f
    return np.asarray(center, float) + np.outer(a * u, e1) + np.outer(b * v, e2)


def _sweep_rings(path, half_a, half_b, n, *, up=(0.0, 0.0, 1.0), exponent=2.0,
                 closed=False) -> np.ndarray:
    """Rings (m, n, 3) swept along ``path`` (m, 3): superellipse sections across the path
    with semi-axis ``half_a`` [mm] along ``up`` (made perpendicular to the path) and
    ``half_b`` along tangent x that direction; the semi-axes may vary along the path (m,).

    A path and its mirror image in the sagittal plane (y -> -y) give mirror-image rings with
    the same orientation (outward normals on both sides)."""
    path = np.asarray(path, dtype=float)
    m = len(path)
    half_a = np.broadcast_to(np.asarray(half_a, float), (m,))
    half_b = np.broadcast_to(np.asarray(half_b, float), (m,))
    if closed:
        tangent = np.roll(path, -1, axis=0) - np.roll(path, 1, axis=0)
    else:
        tangent = np.gradient(path, axis=0)
    up = np.asarray(up, dtype=float)
    rings = []
    for i in range(m):
        t = tangent[i] / np.linalg.norm(tangent[i])
        ea = up - (up @ t) * t
        if np.linalg.norm(ea) < 1e-6:
            ea = np.array([1.0, 0.0, 0.0]) - t[0] * t
        ea /= np.linalg.norm(ea)
        eb = np.cross(t, ea)
        rings.append(_superellipse(path[i], ea, eb, half_a[i], half_b[i], exponent, n))
    return np.array(rings)


def _loft_points(rings: np.ndarray) -> np.ndarray:
    """Points of :func:`_loft_faces` for rings (m, n, 3)."""
    m, n, _ = rings.shape
    flat = rings.reshape(m * n, 3)
    return np.vstack([flat, rings[0], rings[-1], rings[0].mean(axis=0), rings[-1].mean(axis=0)])


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
        surfaces = list(surfaces)
        if not surfaces:      # e.g. the facets of a model without facet joints
            return _Surface(np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64),
                            np.zeros(0, dtype=int))
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

    @staticmethod
    def torus(rings) -> _Surface:
        """A closed loop of rings (m, n, 3), e.g. a bony ring around a foramen."""
        m, n, _ = rings.shape
        tris = _ring_faces(m, n)
        return _Surface(rings.reshape(m * n, 3).copy(), tris, np.zeros(len(tris), dtype=int))

    def of_part(self, part_id: int) -> _Surface:
        """The triangles of one part (all points kept)."""
        keep = self.part == part_id
        return _Surface(self.points, self.tris[keep], self.part[keep])

def surface_distance(points, surface: _Surface) -> np.ndarray:
    """Distance [mm] from each point (k, 3) to the nearest triangle of ``surface`` (exact
    point-triangle distance, Ericson's closest-point regions; numpy, no pyvista)."""
    pts = np.atleast_2d(np.asarray(points, dtype=float))
    a = surface.points[surface.tris[:, 0]]
    b = surface.points[surface.tris[:, 1]]
    c = surface.points[surface.tris[:, 2]]
    return np.array([np.sqrt(np.min(np.sum((_closest_on_triangles(p, a, b, c) - p) ** 2,
                                           axis=1))) for p in pts])


def _closest_on_triangles(p, a, b, c) -> np.ndarray:
    """Closest point of each triangle (a[i], b[i], c[i]) to the point p (t, 3)."""
    ab, ac, ap = b - a, c - a, p - a
    d1, d2 = np.einsum("ij,ij->i", ab, ap), np.einsum("ij,ij->i", ac, ap)
    bp = p - b
    d3, d4 = np.einsum("ij,ij->i", ab, bp), np.einsum("ij,ij->i", ac, bp)
    cp = p - c
    d5, d6 = np.einsum("ij,ij->i", ab, cp), np.einsum("ij,ij->i", ac, cp)
    va, vb, vc = d3 * d6 - d5 * d4, d5 * d2 - d1 * d6, d1 * d4 - d3 * d2
    with np.errstate(divide="ignore", invalid="ignore"):
        denom = va + vb + vc
        v_in, w_in = vb / denom, vc / denom
        out = a + ab * v_in[:, None] + ac * w_in[:, None]           # inside the face
        t_ab = d1 / (d1 - d3)
        t_ac = d2 / (d2 - d6)
        t_bc = (d4 - d3) / ((d4 - d3) + (d5 - d6))
    # Ericson's regions in reverse order of precedence (vertex A wins, then B, edge AB, C,
    # edge AC, edge BC); the face is the default
    edge_bc = (va <= 0) & (d4 - d3 >= 0) & (d5 - d6 >= 0)
    out = np.where(edge_bc[:, None], b + (c - b) * t_bc[:, None], out)
    edge_ac = (vb <= 0) & (d2 >= 0) & (d6 <= 0)
    out = np.where(edge_ac[:, None], a + ac * t_ac[:, None], out)
    out = np.where(((d6 >= 0) & (d5 <= d6))[:, None], c, out)
    edge_ab = (vc <= 0) & (d1 >= 0) & (d3 <= 0)
    out = np.where(edge_ab[:, None], a + ab * t_ab[:, None], out)
    out = np.where(((d3 >= 0) & (d4 <= d3))[:, None], b, out)
    out = np.where(((d1 <= 0) & (d2 <= 0))[:, None], a, out)
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

