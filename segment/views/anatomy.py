"""The default display geometry: C5 and C6 as the registered BodyParts3D meshes (numpy only).

Each vertebra is the surface mesh of a real fifth or sixth cervical vertebra (one adult male,
BodyParts3D; :mod:`segment.views.meshes`), moved rigidly into its vertebra frame by the
registration of :mod:`segment.views.registration`: its body where the model's origin is, its
articular facets on the contact model's facet discs, its bone under the insertions of Table 4.
Display only: the mechanics never read it. The registration uses the packaged model's
landmarks, so every model is drawn on the same bones; a model whose insertions or facets were
moved shows them off the bone.

The disc of the drawing is lofted between outlines of C6's and C5's bodies near the endplates
that face each other (:meth:`AnatomicalGeometry.endplate`): rays from the body's axis (the line
through its two endplate centroids), across it, at :data:`ENDPLATE_RING_LEVEL` of the way from
the body centre to the endplate, to the body's wall: just inside the endplate, below its
concavity and its rim, and above the pedicles (attached at mid-height). Where a transverse
process's root joins the body over its whole height (beside C6's superior endplate) a ray
runs on into the root: every ray stops at the latest at the body's published half-width
(:data:`BODY_WIDTH_MM`) from the axis, where the uncinate processes bound the disc.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from segment.core.model import Segment
from segment.views.geometry import VertebraGeometry, _cos_sin, _Surface, load_geometry
from segment.views.meshes import MESH_DIR, TriangleMesh, load_meshes
from segment.views.registration import Registration, mesh_features, register
from segment.views.style import RING

__all__ = ["ANATOMICAL_PARTS", "BODY_WIDTH_MM", "ENDPLATE_RING_LEVEL", "GEOMETRIES",
           "AnatomicalGeometry", "endplate_ring", "load_anatomy", "resolve_geometry"]

GEOMETRIES = ("anatomical", "simple")
"""Names of the display geometries: the default first."""
ANATOMICAL_PARTS = ("bone", "endplate", "facet")
"""Names of the ``part`` indices of :meth:`AnatomicalGeometry.surface`: ``endplate`` and
``facet`` are the triangles the registration found as the endplates and as the articular
facets of the C5-C6 joints (C6's superior, C5's inferior); ``bone`` is the rest."""
ENDPLATE_RING_LEVEL = 0.8
"""Where the drawn disc meets each body, as a fraction of the way from the body centre to the
endplate centroid: 1.2 mm inside a 12 mm high body, so that no gap shows between the disc and
the bone (the endplates are concave by a millimetre or two and their rims rise higher)."""
BODY_WIDTH_MM = {"C5": 23.6, "C6": 24.7}
"""Transverse diameter of the C5 and C6 bodies [mm] (SOURCES.md §7 (a), 404 vertebrae): the
drawn disc is no wider."""
_MIN_RADIUS_MM = 3.0       # a ray of the ring that stops sooner has not found the body's wall
_DECIMALS = 6             # coordinates [mm] are rounded to 1 nm (see AnatomicalGeometry)


@dataclass(frozen=True, eq=False)
class AnatomicalGeometry:
    """C5 and C6 as the registered meshes (read by :func:`load_anatomy`).

    Coordinates are rounded to 1 nm: the registration's last bits may differ between CPUs'
    numpy loops, the drawing (and the report's renders) should not.

    Attributes
    ----------
    meshes : dict of str to TriangleMesh
        Each vertebra's mesh in its mesh frame [mm].
    registrations : dict of str to Registration
        Each mesh's motion into its vertebra frame, with the landmark errors.
    folder : Path
        Where the meshes were read.
    """

    meshes: dict
    registrations: dict
    folder: Path
    name = "anatomical"
    part_names = ANATOMICAL_PARTS
    """Names of the ``part`` indices of :meth:`surface` (cell array ``part`` of the meshes)."""

    def registration(self, vertebra: str) -> Registration:
        """The registration of ``"C5"`` or ``"C6"`` (landmark errors, transform)."""
        return self.registrations[_checked(vertebra)]

    def surface(self, model: Segment | None, vertebra: str) -> _Surface:
        """The bone of ``vertebra`` (``"C5"`` or ``"C6"``) in its own frame [mm].

        ``model`` is accepted for the interface of the display geometries and not used: the
        bones are registered once, to the packaged model's landmarks.
        """
        return _surface(self, _checked(vertebra))

    def endplate(self, vertebra: str, which: str) -> np.ndarray:
        """Rim (RING, 3) of the ``"superior"`` or ``"inferior"`` endplate [mm, own frame]:
        where the drawn disc meets the body; point k at angle 2 pi k / RING about the body's
        axis, counted from anterior towards the left, on both endplates."""
        if which not in ("superior", "inferior"):
            raise ValueError(f"which must be 'superior' or 'inferior', got {which!r}")
        return _endplate(self, _checked(vertebra), which)


def _checked(vertebra: str) -> str:
    if vertebra not in ("C5", "C6"):
        raise ValueError(f"vertebra must be 'C5' or 'C6', got {vertebra!r}")
    return vertebra


def _rounded(points) -> np.ndarray:
    return np.round(np.asarray(points, dtype=float), _DECIMALS) + 0.0


@functools.lru_cache(maxsize=8)
def _surface(geometry: AnatomicalGeometry, vertebra: str) -> _Surface:
    mesh = geometry.meshes[vertebra]
    feats = mesh_features(vertebra, mesh)
    part = np.zeros(len(mesh.tris), dtype=int)
    for tris in feats["endplate_triangles"].values():
        part[tris] = ANATOMICAL_PARTS.index("endplate")
    for tris in feats["facet_triangles"].values():
        part[tris] = ANATOMICAL_PARTS.index("facet")
    points = _rounded(geometry.registrations[vertebra].apply(mesh.points))
    points.setflags(write=False)
    return _Surface(points, np.array(mesh.tris), part)


@functools.lru_cache(maxsize=8)
def _endplate(geometry: AnatomicalGeometry, vertebra: str, which: str) -> np.ndarray:
    mesh = geometry.meshes[vertebra]
    ring = endplate_ring(mesh, vertebra, which)
    out = _rounded(geometry.registrations[vertebra].apply(ring))
    out.setflags(write=False)
    return out


def endplate_ring(mesh: TriangleMesh, vertebra: str, which: str, n: int = RING) -> np.ndarray:
    """Outline (n, 3) of the body near its ``"superior"`` or ``"inferior"`` endplate, in the
    mesh frame [mm] (see the module docstring); point k at angle 2 pi k / n about the body's
    axis, counted from anterior towards the left."""
    centre, u, r = _outline(mesh, vertebra, which, n)
    lateral = np.abs(u[:, 1])
    half = 0.5 * BODY_WIDTH_MM[vertebra]
    cap = np.where(lateral > 1e-9, half / np.maximum(lateral, 1e-9), np.inf)
    return centre + np.minimum(r, cap)[:, None] * u


def _outline(mesh, vertebra, which, n):
    """Centre (3,), ray directions (n, 3) and distances to the first wall (n,) [mm]."""
    points = mesh_features(vertebra, mesh)["points"]
    body, plate = points["body"], points[f"endplate-{which}"]
    axis = points["endplate-superior"] - points["endplate-inferior"]
    axis /= np.linalg.norm(axis)                            # up, on both endplates
    centre = body + ENDPLATE_RING_LEVEL * (plate - body)
    e1 = np.array([1.0, 0.0, 0.0]) - axis[0] * axis
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(axis, e1)                                 # left
    c, s = _cos_sin(n)
    u = np.outer(c, e1) + np.outer(s, e2)
    r = np.empty(n)
    for k in range(n):
        t = mesh.ray_hits(centre, u[k])
        ahead = t[t > 0.0]
        if not len(ahead) or ahead[0] < _MIN_RADIUS_MM:
            raise ValueError(f"{mesh.name}: the {which} body outline's ray at "
                             f"{np.degrees(2 * np.pi * k / n):.0f} deg finds no wall beyond "
                             f"{_MIN_RADIUS_MM:g} mm")
        r[k] = ahead[0]
    return centre, u, r


@functools.lru_cache(maxsize=4)
def _load(folder: Path) -> AnatomicalGeometry:
    meshes = load_meshes(folder)
    if folder == MESH_DIR.resolve():
        regs = {v: register(v) for v in meshes}
    else:
        regs = {v: register(v, mesh=m) for v, m in meshes.items()}
    return AnatomicalGeometry(meshes, regs, folder)


def load_anatomy(folder: str | Path | None = None) -> AnatomicalGeometry:
    """The anatomical geometry: the shipped meshes (or those of ``folder``, same file names,
    :data:`segment.views.meshes.MESH_FILES`) registered to the packaged model."""
    return _load(Path(MESH_DIR if folder is None else folder).resolve())


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
