"""The scene of one pose (pyvista meshes in C6 coordinates) and its template.

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

Nothing here opens a window or renders; :meth:`SceneTemplate.update` rewrites the meshes'
points in place, which is what keeps the explorer live.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from segment._extras import require
from segment.core.model import Segment, SegmentState
from segment.core.newton import EquilibriumResult
from segment.elements.disc import DOF_NAMES
from segment.elements.kinematics import pose
from segment.views.geometry import (
    VertebraGeometry,
    _ellipse,
    _facet_rings,
    _facet_surface,
    _loft_faces,
    _loft_points,
    _moved,
    _normals,
    _section_frame,
    _Surface,
    _tube_rings,
    _vertebra_surface,
    load_geometry,
)
from segment.views.style import (
    ARROW_HEAD_MM,
    ARROW_MAX_MM,
    ARROW_MM_PER_N,
    ARROW_SHAFT_MM,
    DISC_BULGE_MM,
    HALO_RADIUS_FRACTION,
    LIGAMENT_SLACK_MM,
    LIGAMENT_TAUT_MM,
    RING,
    RUPTURED_STUB,
    TUBE_RING,
)

pv = require("pyvista", "viz", "segment.viz (3-D views)")

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
            "c6": _surface_mesh(self._c6),
            "c5": _surface_mesh(self._c5),
            "c5_reference": _surface_mesh(self._c5),
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

