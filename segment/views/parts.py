"""The pose-dependent pieces of a 3-D view as plain numpy arrays (no pyvista).

:class:`SceneParts` holds what does not change with the pose for one model (the bone and facet
surfaces in each vertebra's frame, the endplate rings, the tube topology) and computes the
pieces that do (disc, ligament tubes, contact arrows, torn stubs, dislocation halos, labels)
for a :class:`~segment.core.model.SegmentState`. The pyvista scene (:mod:`segment.views.scene`) and
the browser explorer (:mod:`segment.views.web`) both draw from it.
"""

from __future__ import annotations

import numpy as np

from segment.core.equilibrium_result import EquilibriumResult
from segment.core.model import Segment, SegmentState
from segment.elements.disc import DOF_NAMES
from segment.views.anatomy import resolve_geometry
from segment.views.geometry import (
    _ellipse,
    _facet_rings,
    _facet_surface,
    _loft_faces,
    _loft_points,
    _moved,
    _section_frame,
    _tube_rings,
)
from segment.views.style import (
    ARROW_HEAD_MM,
    ARROW_MAX_MM,
    ARROW_MM_PER_N,
    ARROW_SHAFT_MM,
    DISC_BULGE_MM,
    HALO_RADIUS_FRACTION,
    LABEL_OFFSET_MM,
    LIGAMENT_SLACK_MM,
    LIGAMENT_TAUT_MM,
    RUPTURED_STUB,
    TUBE_RING,
)

__all__ = ["SceneParts", "check_magnify", "displacement", "magnified_q"]


class SceneParts:
    """Everything about the scene that does not change with the pose, for one model (numpy).

    Parameters
    ----------
    model : Segment
        Supplies the reference pose, the facet discs and the ligaments drawn.
    geometry : str or loaded geometry, optional
        Display geometry: ``"anatomical"`` (default, :mod:`segment.views.anatomy`),
        ``"simple"`` (:func:`segment.views.geometry.load_geometry`), or a loaded one.
    """

    def __init__(self, model: Segment, *, geometry=None):
        self.model = model
        self.geometry = resolve_geometry(geometry)
        self._c6 = self.geometry.surface(model, "C6")
        self._c5 = self.geometry.surface(model, "C5")
        self._fac6 = _facet_surface(model, "c6")
        self._fac5 = _facet_surface(model, "c5")
        # C6 superior endplate (C6 frame) and C5 inferior endplate (C5 frame)
        self._end6 = self.geometry.endplate("C6", "superior")
        self._end5 = self.geometry.endplate("C5", "inferior")
        self._lig_faces = _loft_faces(2, TUBE_RING)
        self._arrow_faces = _loft_faces(4, TUBE_RING)
        self.ligament_names = tuple(model.strip_names)

    @property
    def q_ghost(self) -> np.ndarray:
        """Pose of the ghost C5 [mm, rad]: the unloaded equilibrium (the origin of the
        displacements the titles state), or the reference pose q = 0 when it failed."""
        u = self.model.unloaded
        return np.asarray(u.q, dtype=float) if u.converged else np.zeros(6)

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
            # ruptured: drawn by _ruptured_points; cut through in a clinical state: not there
            if getattr(s, "ruptured", False) or getattr(s, "cut", 0.0) == 1.0:
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
            # behind and lateral of the joint, clear of the articular pillar; the left label
            # above the joint, the right one below: apart in lateral views too
            points.append(joint.disc_c6.center + LABEL_OFFSET_MM * np.array([1.0, side, side]))
            # a dislocated joint (C5's facet has left C6's) is named in capitals
            state_text = "DISLOCATED" if f.dislocated else f.regime
            labels.append(f"{f.side}: {state_text}")
            lines.append(f"facet {f.side}: {state_text}, {f.force:.1f} N")
        broken = [s.name for s in state.ligaments if getattr(s, "ruptured", False)]
        if broken:
            lines.append("ruptured (black stubs): " + ", ".join(broken))
        if getattr(self.model, "clinical", ()):    # a clinical state (segment.core.states)
            lines.append(f"clinical state: {self.model.clinical_label}")
        removed = [s.name for s in state.ligaments if getattr(s, "cut", 0.0) == 1.0]
        if removed:
            lines.append("cut (not drawn): " + ", ".join(removed))
        return np.array(points).reshape(-1, 3), labels, "\n".join(lines)

    # -- public


def displacement(result: EquilibriumResult) -> tuple[np.ndarray, str]:
    """The displacement the views show [mm, rad] and what it is measured from.

    The project's convention (as ``segment solve`` and the report's tables): from the unloaded
    equilibrium, ``q - q_unloaded``; from the reference pose of Table 1 (``q``) only when the
    unloaded solve failed, and then labelled so.
    """
    d = result.displacement_from_unloaded
    if d is None:
        return np.asarray(result.q, dtype=float), "from the reference pose"
    return np.asarray(d, dtype=float), "from unloaded"


def magnified_q(result: EquilibriumResult, factor: float) -> np.ndarray:
    """The pose drawn magnified: ``q_u + factor (q - q_u)`` [mm, rad] (q_u: unloaded).

    Display only: the displacement from the unloaded equilibrium (or from the reference pose
    when that is not available, as in :func:`displacement`) scaled by ``factor``, Cardan angles
    scaled like the translations.
    """
    factor = check_magnify(factor)
    q = np.asarray(result.q, dtype=float)
    q_u = np.zeros(6) if result.q_unloaded is None else np.asarray(result.q_unloaded, float)
    return q_u + factor * (q - q_u)


def check_magnify(factor) -> float:
    """``factor`` as a float >= 1 (a clear ``ValueError`` otherwise)."""
    try:
        value = float(factor)
    except (TypeError, ValueError):
        raise ValueError(f"magnify must be a number >= 1, got {factor!r}") from None
    if not (np.isfinite(value) and value >= 1.0):
        raise ValueError(f"magnify must be a number >= 1, got {factor!r}")
    return value


def magnify_text(factor: float) -> str:
    """Legend line of a magnified pose (empty when ``factor`` is 1)."""
    if factor == 1.0:
        return ""
    return (f"orange: C5 with its displacement from the unloaded pose magnified x{factor:g} "
            "(display only)")


def _title(result: EquilibriumResult, *, short: bool = False) -> str:
    """Load case, its load and the main displacement from the unloaded equilibrium (labelled).

    The main displacement is that of the load's one non-zero component, or for a combined
    load the largest one (1 mm ~ 1 deg). It is measured from the unloaded equilibrium, as in
    the tables of ``segment solve`` and the report (:func:`displacement`).
    """
    load = result.load
    f = load.as_array()
    i = load.main_dof
    comps = [f"{n} = {v:+g} N" for n, v in zip(("Fx", "Fy", "Fz"), f[:3], strict=True) if v]
    comps += [f"{n} = {v / 1000:+g} N m" for n, v in zip(("Mx", "My", "Mz"), f[3:], strict=True)
              if v]
    d, origin = displacement(result)
    if i is None:  # combined load: the largest displacement, 1 mm ~ 1 deg
        i = int(np.argmax(np.abs(np.concatenate([d[:3], np.degrees(d[3:])]))))
    value = d[i] if i < 3 else np.degrees(d[i])
    unit = "mm" if i < 3 else "deg"
    load_text = ", ".join(comps) or "no load"
    flag = "" if result.converged else "  [NOT CONVERGED]"
    if result.converged and not result.intact:   # dislocated facet, ligament past eps_max
        flag = "  [BEYOND LIMITS]"
    if short:   # grid panels: the flag on its own line, so that titles do not overlap
        flag = f"\n{flag.strip()}" if flag else ""
        return f"{load.name}: {DOF_NAMES[i]} = {value:+.2f} {unit} {origin}{flag}"
    return f"{load.name} ({load_text}): {DOF_NAMES[i]} = {value:+.2f} {unit} {origin}{flag}"
