"""The bone surfaces of C5 and C6: BodyParts3D meshes shipped with the package (numpy only).

Two closed triangle meshes of one adult male's fifth and sixth cervical vertebrae
(BodyParts3D 4.0, FJ3167 and FJ3170; ``assets/meshes/README.md`` gives their source, licence
and changes; ``validation/reference/SOURCES.md`` §14 the provenance). Each file is in its own
*mesh frame* [mm]: +x anterior, +y left, +z superior, the origin at the vertebral-body centre,
the endplates level on average. The model's vertebra frames are not these frames: the
registration (:mod:`segment.views.registration`) finds the rigid motion from each mesh frame to
its vertebra's frame.

This module reads the files, checks their checksums, and answers the geometric questions the
registration asks of a surface: where a ray crosses it, its nearest point to a given point,
the normals and areas of its triangles, and which selected triangles touch each other.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from segment.views.geometry import _closest_on_triangles

__all__ = ["CHECKSUM_FILE", "MESH_DIR", "MESH_FILES", "TriangleMesh", "load_meshes",
           "read_obj", "recorded_checksums"]

MESH_DIR = Path(__file__).with_name("assets") / "meshes"
"""Folder of the shipped meshes, their licence, attribution and checksums."""
MESH_FILES = {"C5": "bp3d_FJ3167_C5_local.obj", "C6": "bp3d_FJ3170_C6_local.obj"}
"""The mesh of each vertebra (BodyParts3D file ID FJ3167: C5, FJ3170: C6), in its mesh frame."""
CHECKSUM_FILE = "SHA256SUMS"
"""``sha256sum`` format: the recorded digest of every shipped file of :data:`MESH_DIR`."""


@dataclass(frozen=True, eq=False)
class TriangleMesh:
    """A closed triangle mesh in one frame [mm].

    Attributes
    ----------
    points : ndarray, shape (n, 3)
        Vertices [mm].
    tris : ndarray, shape (t, 3)
        Vertex indices of each triangle, counter-clockwise seen from outside.
    name : str
        What it is (a file name), for messages.
    """

    points: np.ndarray
    tris: np.ndarray
    name: str = "mesh"

    def __post_init__(self):
        p = np.asarray(self.points, dtype=float)
        t = np.asarray(self.tris, dtype=np.int64)
        if p.ndim != 2 or p.shape[1] != 3 or not np.all(np.isfinite(p)):
            raise ValueError(f"{self.name}: points must be finite, shape (n, 3), got "
                             f"shape {p.shape}")
        if t.ndim != 2 or t.shape[1] != 3 or (t.size and (t.min() < 0 or t.max() >= len(p))):
            raise ValueError(f"{self.name}: triangles must be (t, 3) indices into the "
                             f"{len(p)} points")
        p.setflags(write=False)
        t.setflags(write=False)
        object.__setattr__(self, "points", p)
        object.__setattr__(self, "tris", t)

    # -- per-triangle quantities
    @functools.cached_property
    def _corners(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return tuple(self.points[self.tris[:, i]] for i in range(3))

    @functools.cached_property
    def _cross(self) -> np.ndarray:
        a, b, c = self._corners
        return np.cross(b - a, c - a)

    @functools.cached_property
    def areas(self) -> np.ndarray:
        """Area of each triangle [mm^2], shape (t,)."""
        return 0.5 * np.linalg.norm(self._cross, axis=1)

    @functools.cached_property
    def normals(self) -> np.ndarray:
        """Outward unit normal of each triangle, shape (t, 3)."""
        length = np.linalg.norm(self._cross, axis=1, keepdims=True)
        return self._cross / np.where(length > 0, length, 1.0)

    @functools.cached_property
    def centroids(self) -> np.ndarray:
        """Centroid of each triangle [mm], shape (t, 3)."""
        a, b, c = self._corners
        return (a + b + c) / 3.0

    @property
    def volume(self) -> float:
        """Enclosed volume [mm^3] (positive for outward normals)."""
        a, b, c = self._corners
        return float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0)

    # -- queries
    def ray_hits(self, origin, direction) -> np.ndarray:
        """Signed distances t [mm] (sorted) at which ``origin + t d`` crosses the surface,
        d = ``direction`` normalised; t < 0 lies behind the origin (Moller-Trumbore)."""
        o = np.asarray(origin, dtype=float)
        d = np.asarray(direction, dtype=float)
        d = d / np.linalg.norm(d)
        a, b, c = self._corners
        e1, e2 = b - a, c - a
        h = np.cross(d, e2)
        det = np.einsum("ij,ij->i", e1, h)
        ok = np.abs(det) > 1e-12
        inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
        s = o - a
        u = inv * np.einsum("ij,ij->i", s, h)
        q = np.cross(s, e1)
        v = inv * (q @ d)
        t = inv * np.einsum("ij,ij->i", e2, q)
        hit = ok & (u >= 0.0) & (v >= 0.0) & (u + v <= 1.0)
        return np.sort(t[hit])

    def closest_point(self, point) -> np.ndarray:
        """The point of the surface nearest to ``point`` (3,) [mm]."""
        p = np.asarray(point, dtype=float)
        a, b, c = self._corners
        q = _closest_on_triangles(p, a, b, c)
        return q[np.argmin(np.einsum("ij,ij->i", q - p, q - p))]

    def contains(self, point) -> bool:
        """Is ``point`` inside the closed surface? (ray parity along a direction that no
        construction plane of the meshes contains)."""
        t = self.ray_hits(point, (0.3141, 0.2718, 0.9106))
        return bool(np.count_nonzero(t > 0.0) % 2)

    def signed_distance(self, point) -> float:
        """Distance [mm] from ``point`` to the surface, negative inside the bone."""
        d = float(np.linalg.norm(self.closest_point(point) - np.asarray(point, float)))
        return -d if self.contains(point) else d

    def components(self, selected) -> np.ndarray:
        """Label (0, 1, ... by decreasing area; -1: not selected) of each triangle: the
        selected triangles (boolean mask, shape (t,)) grouped by shared edges."""
        sel = np.flatnonzero(np.asarray(selected, dtype=bool))
        labels = np.full(len(self.tris), -1)
        if not len(sel):
            return labels
        edges = np.sort(np.concatenate([self.tris[sel][:, [0, 1]], self.tris[sel][:, [1, 2]],
                                        self.tris[sel][:, [2, 0]]]), axis=1)
        owner = np.tile(np.arange(len(sel)), 3)
        key = edges[:, 0] * len(self.points) + edges[:, 1]
        order = np.argsort(key, kind="stable")
        same = key[order][1:] == key[order][:-1]
        a, b = owner[order][:-1][same], owner[order][1:][same]
        graph = coo_matrix((np.ones(len(a)), (a, b)), shape=(len(sel), len(sel)))
        _, lab = connected_components(graph, directed=False)
        area = np.bincount(lab, weights=self.areas[sel])
        rank = np.empty(len(area), dtype=int)
        rank[np.argsort(-area, kind="stable")] = np.arange(len(area))
        labels[sel] = rank[lab]
        return labels

    def moved(self, R, t, scale: float = 1.0) -> TriangleMesh:
        """The mesh with every point x at ``scale R x + t`` (another frame) [mm]."""
        R = np.asarray(R, dtype=float)
        return TriangleMesh(scale * self.points @ R.T + np.asarray(t, float), self.tris,
                            self.name)


def read_obj(path: str | Path) -> TriangleMesh:
    """Read the vertices and triangles of a Wavefront OBJ file [mm].

    Reads ``v x y z`` and ``f a b c`` lines (``a``, ``a/b`` or ``a//c`` indices, 1-based);
    comments and other records are skipped. Raises ``ValueError`` naming the file and the line
    for a face that is not a triangle, an index out of range or a non-numeric coordinate.
    """
    path = Path(path)
    points, tris = [], []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        fields = line.split()
        if not fields or fields[0] not in ("v", "f"):
            continue
        try:
            if fields[0] == "v":
                if len(fields) < 4:
                    raise ValueError("a vertex needs three coordinates")
                points.append([float(x) for x in fields[1:4]])
            else:
                if len(fields) != 4:
                    raise ValueError(f"faces must be triangles, got {len(fields) - 1} corners")
                tris.append([int(x.split("/")[0]) - 1 for x in fields[1:]])
        except ValueError as exc:
            raise ValueError(f"{path.name}, line {n}: {exc} ({line.strip()!r})") from None
    tris_a = np.array(tris, dtype=np.int64).reshape(-1, 3)
    if tris_a.size and (tris_a.min() < 0 or tris_a.max() >= len(points)):
        raise ValueError(f"{path.name}: a face refers to a vertex beyond the {len(points)} "
                         f"read (indices are 1-based)")
    return TriangleMesh(np.array(points, dtype=float).reshape(-1, 3), tris_a, path.name)


@functools.lru_cache(maxsize=4)
def _load(folder: Path) -> dict[str, TriangleMesh]:
    return {v: read_obj(folder / name) for v, name in MESH_FILES.items()}


def load_meshes(folder: str | Path | None = None) -> dict[str, TriangleMesh]:
    """The mesh of each vertebra, ``{"C5": ..., "C6": ...}``, in its mesh frame [mm].

    ``folder``: a folder with the files of :data:`MESH_FILES` (default: the shipped ones).
    """
    return _load(Path(MESH_DIR if folder is None else folder).resolve())


def recorded_checksums(folder: str | Path | None = None) -> dict[str, str]:
    """``{file name: digest}`` as recorded in the folder's :data:`CHECKSUM_FILE`."""
    text = (Path(MESH_DIR if folder is None else folder) / CHECKSUM_FILE).read_text("utf-8")
    out = {}
    for line in text.splitlines():
        if line.strip():
            digest, name = line.split(maxsplit=1)
            out[name.strip().lstrip("*")] = digest
    return out
