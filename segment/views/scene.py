"""The scene of one pose (pyvista meshes in C6 coordinates) and its template.

What is drawn, and from where:

=================  ============================================================================
C6, C5             display geometry, not used by the mechanics. ``"anatomical"`` (default,
                   :mod:`segment.views.anatomy`): the BodyParts3D surface meshes of a real
                   C5 and C6, registered to the model's landmarks (body centres, facet
                   centres, ligament insertions; :mod:`segment.views.registration`).
                   ``"simple"`` (``data/vertebra_geometry.csv``): tapered tubes, with
                   articular pillars between each vertebra's inferior and superior facet
                   faces of the contact model (``data/facets.csv``). C5 is placed at the
                   solved pose: a C5-frame point ``a`` is drawn at ``p + R a``.
C5 reference       the same C5 at the unloaded equilibrium, translucent ghost.
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

Nothing here opens a window or renders; :meth:`SceneTemplate.update` rewrites the meshes'
points in place, which is what keeps the explorer live.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from segment._extras import require
from segment.core.equilibrium_result import EquilibriumResult
from segment.core.model import SegmentState
from segment.elements.kinematics import pose
from segment.views.geometry import (
    _loft_faces,
    _moved,
    _normals,
    _Surface,
)
from segment.views.parts import SceneParts, _title, check_magnify
from segment.views.style import (
    RING,
    TUBE_RING,
)

pv = require("pyvista", "viz", "segment.views.viz (3-D views)")

__all__ = ["Scene", "SceneTemplate", "build_scene"]


def _polydata(points: np.ndarray, tris: np.ndarray) -> pv.PolyData:
    faces = np.hstack([np.full((len(tris), 1), 3, dtype=np.int64), tris]).ravel()
    mesh = pv.PolyData(np.array(points, dtype=float), faces)  # a copy: updated in place
    mesh.point_data["Normals"] = _normals(points, tris)
    mesh.point_data.active_normals_name = "Normals"
    return mesh




def _surface_mesh(surface: _Surface) -> pv.PolyData:
    """A pyvista mesh of ``surface`` with its cell array ``part``."""
    out = _polydata(surface.points, surface.tris)
    out.cell_data["part"] = surface.part
    return out


@dataclass
class Scene:
    """The meshes of one pose, all in C6 coordinates [mm].

    Attributes
    ----------
    meshes : dict of str to pyvista.PolyData
        ``c6``, ``c5``, ``c5_reference``, ``facets_c6``, ``facets_c5``, ``disc``,
        ``ligaments`` (point array ``tension_N`` [N], NaN where slack; cell array
        ``ligament`` indexing ``ligament_names``), ``arrows`` (facet forces on C5; point array
        ``force_N`` [N]), ``ruptured`` (torn stubs of ruptured strips), ``dislocated``
        (halos of dislocated facets, collapsed when seated) and ``c5_magnified`` (C5 at the
        magnified pose, drawn only when ``magnify`` > 1).
    title : str
        Load case and the main displacement.
    facet_text : str
        One line per facet: side, regime, force [N].
    label_points : ndarray, shape (k, 3)
        Where the facet regime labels go [mm].
    labels : list of str
        One regime label per facet.
    ligament_names : tuple of str
    magnify : float
        Factor of the magnified C5 (1: none drawn), see
        :func:`segment.views.parts.magnified_q`.
    """

    meshes: dict
    title: str
    facet_text: str
    label_points: np.ndarray
    labels: list
    ligament_names: tuple
    magnify: float = 1.0

    @property
    def magnify_label_point(self) -> np.ndarray:
        """Where the label of the magnified C5 goes [mm]: above its superior endplate."""
        b = np.array(self.meshes["c5_magnified"].bounds).reshape(3, 2)
        return np.array([b[0, 1], 0.5 * (b[1, 0] + b[1, 1]), b[2, 1] + 2.0])

    def multiblock(self) -> pv.MultiBlock:
        """The meshes as one :class:`pyvista.MultiBlock`, block names as in :attr:`meshes`."""
        return pv.MultiBlock({k: v.copy() for k, v in self.meshes.items()})


class SceneTemplate(SceneParts):
    """Everything about the scene that does not change with the pose, for one model.

    Build once (a few ms), then :meth:`build` meshes for a state or :meth:`update` existing
    meshes in place (fixed topology: only points and point arrays change).

    Parameters
    ----------
    model : Segment
        Supplies the reference pose, the facet discs and the ligaments drawn.
    geometry : str or loaded geometry, optional
        Display geometry: ``"anatomical"`` (default) or ``"simple"``, or a loaded one.
    """

    def build(self, state: SegmentState, *, title: str = "", magnify: float = 1.0) -> Scene:
        """New meshes for the pose ``state.q`` (see :class:`Scene`).

        ``magnify`` > 1 adds C5 at the pose whose displacement from the unloaded equilibrium
        is ``magnify`` times the true one (mesh ``c5_magnified``; display only).
        """
        magnify = check_magnify(magnify)
        p, R = pose(state.q, self.model.reference)
        p_ref, R_ref = pose(self.q_ghost, self.model.reference)
        meshes = {
            "c6": _surface_mesh(self._c6),
            "c5": _surface_mesh(self._c5),
            "c5_reference": _surface_mesh(self._c5),
            "c5_magnified": _surface_mesh(self._c5),
            "facets_c6": _surface_mesh(self._fac6),
            "facets_c5": _surface_mesh(self._fac5),
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
        scene = Scene(meshes, title, text, label_points, labels, self.ligament_names, magnify)
        self._place(scene, p, R, state)
        return scene

    def update(self, scene: Scene, state: SegmentState, *, title: str | None = None,
               magnify: float | None = None) -> Scene:
        """Move ``scene`` (built by :meth:`build`) to the pose ``state.q``, in place
        (``magnify``: a new factor of the magnified C5; default: keep the scene's)."""
        if magnify is not None:
            scene.magnify = check_magnify(magnify)
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
        q_u = self.q_ghost
        p_mag, R_mag = pose(q_u + scene.magnify * (np.asarray(state.q) - q_u),
                            self.model.reference)
        _set_points(m["c5_magnified"], _moved(self._c5.points, p_mag, R_mag), self._c5.tris,
                    R=R_mag, normals_local=self._c5_normals)
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



def build_scene(result: EquilibriumResult, *, geometry=None,
                template: SceneTemplate | None = None, magnify: float = 1.0) -> Scene:
    """Meshes of C6, C5 at ``result.q`` and the element forces of ``result.state``.

    Parameters
    ----------
    result : EquilibriumResult
    geometry : str or loaded geometry, optional
        ``"anatomical"`` (default) or ``"simple"``, or a loaded geometry.
    template : SceneTemplate, optional
        Reuse a template built for ``result.model`` (faster for many results).
    magnify : float
        >= 1; above 1 the scene also holds C5 with its displacement from the unloaded
        equilibrium magnified by this factor (``c5_magnified``), next to the true pose.

    Returns
    -------
    Scene
        Meshes in C6 coordinates [mm].
    """
    template = SceneTemplate(result.model, geometry=geometry) if template is None else template
    return template.build(result.state, title=_title(result), magnify=magnify)

