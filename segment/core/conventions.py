"""Two ways to state where C5 is: the model's joint coordinates and the ISB joint coordinate
system of the spine (Wu et al. 2002, J Biomech 35:543-548; SOURCES.md §12).

**Ours** (``"klg"``, DETC2000/MECH-6821; :mod:`segment.elements.kinematics`): C6 fixed, +x
anterior, +y left, +z superior, origins at the vertebra frames' origins::

    q = (x, y, z, phi_x, phi_y, phi_z)            [mm, rad]
    p_c6    = s0 + R0 (x, y, z)                   C5 origin in C6
    R_c6_c5 = R0 Rx(phi_x) Ry(phi_y) Rz(phi_z)    Cardan x-y-z; phi_y > 0 is flexion

**ISB** (``"isb"``): each vertebra carries an anatomical frame with X anterior, Y superior,
Z right (so Z = -y: our left axis reversed) and its origin at the vertebral body centroid.
The intervertebral rotation is a joint coordinate system (Grood and Suntay 1983)::

    e1 = Z of C6 (the inferior body, fixed)       alpha about e1: flexion-extension
    e3 = Y of C5 (the superior body, moving)      gamma about e3: axial rotation
    e2 = e3 x e1 / |e3 x e1| (floating axis)      beta about e2:  lateral bending

         Y (superior, e3 at neutral)
         ^
         |   X (anterior, e2 at neutral)           R_isb = Rz(alpha) Rx(beta) Ry(gamma)
         |  /                                      (rotation of the C5 frame in the C6
         | /                                        frame, both ISB, components in C6-ISB)
         o-----> Z (right, e1)

and the translation from the C6 centroid to the C5 centroid, ``H = q1 e1 + q2 e2 + q3 e3``
(components along the three JCS axes, which are not orthogonal when beta != 0). Signs follow
the right-hand rule about each axis: **alpha > 0 is extension, alpha < 0 flexion; beta > 0
tilts C5 to the right (right lateral bending); gamma > 0 turns C5's anterior face to the
left (left axial rotation)**; q1 > 0 right, q2 > 0 anterior, q3 > 0 superior. Wu et al. give
the axes and the JCS; that the signs are those of the right-hand rule is our reading of the
JCS (SOURCES.md §12 says what we could and could not verify).

The transform, with ``A`` the change of axes (ours -> ISB: X = x, Y = z, Z = -y)::

    A = [[1, 0, 0], [0, 0, 1], [0, -1, 0]]
    R_isb = A R_c6_c5 A^T
    H     = A (p_c6 + R_c6_c5 c5 - c6)        c5, c6: body centroids in their own frames

*Assumed* (no landmark data to do better): each vertebra's anatomical axes are its model
frame's axes (the display geometry draws the endplates perpendicular to z and the body
symmetric about y = 0, SOURCES.md §7). The centroid is the midpoint of the centres of the
superior and inferior endplates (the definition of Stokes et al.'s proposal to the ISB,
SOURCES.md §12), each endplate centre the middle of the body: x halfway between the
anterior face, which passes through the ALL insertion of Table 4, and the posterior face,
which passes through the PLL insertion (SOURCES.md §7 (j)), y = 0 (the body is
symmetric), z = 0 (the endplates lie symmetric about the frame origin, assumed).
That gives (-0.15, 0, 0) mm in C6 and (-0.2, 0, 0) mm in C5.

Examples
--------
>>> import numpy as np
>>> from segment.core.conventions import IsbFrames, isb_coordinates
>>> from segment.elements.kinematics import ReferencePose
>>> reference = ReferencePose((-2.8, 0.0, 17.4), -5.2)
>>> frames = IsbFrames.from_ligaments()
>>> q = np.array([0, 0, 0, 0, np.radians(4.0), 0])          # 4 deg of flexion
>>> np.round(np.degrees(isb_coordinates(q, reference, frames)[3:]), 9) + 0.0
array([1.2, 0. , 0. ])
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from segment.core.io import load_parameters
from segment.elements.kinematics import cardan_xyz, pose, rotation_x, rotation_y, rotation_z

__all__ = ["AXES_KLG_TO_ISB", "CONVENTIONS", "ISB_COLUMNS", "ISB_COORDINATES", "IsbFrames",
           "check_convention", "from_isb", "isb_coordinates", "isb_frame", "jcs_angles",
           "jcs_axes", "jcs_rotation", "result_table"]

CONVENTIONS = ("klg", "isb")
"""``klg``: the model's joint coordinates (default); ``isb``: the ISB joint coordinate system
of the spine (Wu et al. 2002)."""

AXES_KLG_TO_ISB = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
"""``A``: components in our axes (x anterior, y left, z superior) -> ISB axes (X anterior,
Y superior, Z right). A proper rotation (det = +1)."""
AXES_KLG_TO_ISB.setflags(write=False)

ISB_COORDINATES = (
    ("q1", "mm", "along e1 (C6 Z): + right"),
    ("q2", "mm", "along e2 (floating axis): + anterior"),
    ("q3", "mm", "along e3 (C5 Y): + superior"),
    ("alpha", "deg", "about e1 (C6 Z): + extension, - flexion"),
    ("beta", "deg", "about e2 (floating): + right lateral bending"),
    ("gamma", "deg", "about e3 (C5 Y): + left axial rotation"),
)
"""Name, unit and sign of the six JCS coordinates."""

def check_convention(convention: str) -> str:
    """``convention`` if it is one of :data:`CONVENTIONS`, else a ValueError naming them."""
    if not isinstance(convention, str) or convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {', '.join(CONVENTIONS)}, "
                         f"got {convention!r}")
    return convention


@dataclass(frozen=True, eq=False)
class IsbFrames:
    """Origins of the ISB vertebra frames: the body centroids in each vertebra's own frame.

    Attributes
    ----------
    centroid_c6 : ndarray, shape (3,)
        C6 body centroid in C6 coordinates [mm].
    centroid_c5 : ndarray, shape (3,)
        C5 body centroid in C5 coordinates [mm].
    source : str
        Where the centroids come from.
    """

    centroid_c6: np.ndarray
    centroid_c5: np.ndarray
    source: str = "given"

    def __post_init__(self):
        for name in ("centroid_c6", "centroid_c5"):
            v = np.array(getattr(self, name), dtype=float)
            if v.shape != (3,) or not np.all(np.isfinite(v)):
                raise ValueError(f"{name} must be 3 finite numbers [mm], got "
                                 f"{getattr(self, name)!r}")
            v.setflags(write=False)
            object.__setattr__(self, name, v)

    @classmethod
    def from_ligaments(cls, ligaments=None) -> IsbFrames:
        """Centroids from the insertions of the anterior and posterior longitudinal ligaments
        (Table 4 of KLG2000, after de Jager 1996): the anterior body face passes through the
        ALL insertion and the posterior face through the PLL insertion (SOURCES.md §7 (j));
        the centroid is x halfway between them, y = z = 0 (module docstring).

        ``ligaments``: the ligament records to read (e.g. ``model.ligaments``); default, or
        when they lack the ALL or the PLL, the packaged ``ligaments.csv``."""
        named = {x.name: x for x in (ligaments or ())}
        if "ALL" not in named or "PLL" not in named:
            named = {x.name: x for x in load_parameters().ligaments}
        centroids = {}
        for v, attr in (("C5", "insertion_c5"), ("C6", "insertion_c6")):
            front = float(getattr(named["ALL"], attr)[0])
            back = float(getattr(named["PLL"], attr)[0])
            if not front > back:
                raise ValueError(f"the {v} insertion of the ALL (x = {front:g} mm) must lie in "
                                 f"front of the PLL's (x = {back:g} mm)")
            centroids[v] = np.array([0.5 * (front + back), 0.0, 0.0])
        return cls(centroid_c6=centroids["C6"], centroid_c5=centroids["C5"],
                   source="midpoint of the ALL and PLL insertions of Table 4 (SOURCES.md §12)")


def jcs_rotation(alpha: float, beta: float, gamma: float) -> np.ndarray:
    """``Rz(alpha) Rx(beta) Ry(gamma)`` [rad] -> (3, 3): the rotation of the JCS angles, ISB
    axes (the sequence e1, floating e2, e3 of the module docstring)."""
    return rotation_z(alpha) @ rotation_x(beta) @ rotation_y(gamma)


def jcs_angles(R_isb) -> np.ndarray:
    """JCS angles (alpha, beta, gamma) [rad] of a rotation in ISB axes (inverse of
    :func:`jcs_rotation`; ``|beta| < 90 deg``).

    With ``R = Rz(a) Rx(b) Ry(c)``: ``R[2, 1] = sin b``, ``R[2, 0] = -cos b sin c``,
    ``R[2, 2] = cos b cos c``, ``R[0, 1] = -sin a cos b``, ``R[1, 1] = cos a cos b``.
    """
    R = np.asarray(R_isb, dtype=float)
    b = math.asin(min(1.0, max(-1.0, R[2, 1])))
    a = math.atan2(-R[0, 1], R[1, 1])
    c = math.atan2(-R[2, 0], R[2, 2])
    return np.array([a, b, c])


def jcs_axes(R_isb) -> np.ndarray:
    """The JCS axes (3, 3) as columns e1, e2, e3 (ISB components of the C6 frame): e1 = C6's Z,
    e3 = C5's Y, e2 = e3 x e1 normalised."""
    R = np.asarray(R_isb, dtype=float)
    e1 = np.array([0.0, 0.0, 1.0])
    e3 = R[:, 1]
    e2 = np.cross(e3, e1)
    n = np.linalg.norm(e2)
    if n < 1e-12:
        raise ValueError("the floating axis is undefined: C5's Y axis is parallel to C6's Z "
                         "axis (lateral bending of 90 deg)")
    return np.column_stack([e1, e2 / n, e3])


def _isb_pose(q, reference, frames: IsbFrames) -> tuple[np.ndarray, np.ndarray]:
    """(H, R_isb): C6 centroid -> C5 centroid and the C5 rotation, ISB components."""
    p, R = pose(q, reference)
    A = AXES_KLG_TO_ISB
    H = A @ (p + R @ frames.centroid_c5 - frames.centroid_c6)
    return H, A @ R @ A.T


def isb_coordinates(q, reference, frames: IsbFrames) -> np.ndarray:
    """The ISB JCS coordinates (q1, q2, q3 [mm], alpha, beta, gamma [rad]) of the pose ``q``.

    Parameters
    ----------
    q : array_like, shape (6,)
        Our joint coordinates [mm, rad].
    reference : ReferencePose
        The model's reference pose (``model.reference``).
    frames : IsbFrames
        The body centroids (:meth:`IsbFrames.from_ligaments`).
    """
    H, R_isb = _isb_pose(q, reference, frames)
    angles = jcs_angles(R_isb)
    translation = np.linalg.solve(jcs_axes(R_isb), H)    # H = q1 e1 + q2 e2 + q3 e3
    return np.concatenate([translation, angles])


def from_isb(coordinates, reference, frames: IsbFrames) -> np.ndarray:
    """Our joint coordinates q (6,) [mm, rad] of the ISB JCS coordinates (inverse of
    :func:`isb_coordinates`; ``|phi_y| < 90 deg``)."""
    c = np.asarray(coordinates, dtype=float)
    if c.shape != (6,) or not np.all(np.isfinite(c)):
        raise ValueError(f"ISB coordinates must be 6 finite numbers (q1, q2, q3 [mm], alpha, "
                         f"beta, gamma [rad]), got {coordinates!r}")
    A = AXES_KLG_TO_ISB
    R_isb = jcs_rotation(*c[3:])
    H = jcs_axes(R_isb) @ c[:3]
    R = A.T @ R_isb @ A
    p = A.T @ H + frames.centroid_c6 - R @ frames.centroid_c5
    phi = cardan_xyz(reference.R0.T @ R)
    t = reference.R0.T @ (p - reference.s0)
    return np.concatenate([t, phi])


def _display(v) -> np.ndarray:
    return np.concatenate([v[:3], np.degrees(v[3:])])


def result_table(result, *, convention: str = "isb", frames: IsbFrames | None = None):
    """The displacement table of an :class:`~segment.EquilibriumResult` in ``convention``.

    ``"klg"`` is :meth:`EquilibriumResult.table`. ``"isb"``: one row per JCS coordinate
    (:data:`ISB_COORDINATES`) with its unit and sign, and the columns ``absolute`` (C5
    relative to C6 at the equilibrium: the centroid translation and the JCS angles between
    the anatomical frames), ``from_reference`` and ``from_unloaded`` (their change from the
    reference pose of Table 1 and from the unloaded equilibrium; NaN when that did not
    converge). Translations in mm, angles in degrees.
    """
    import pandas as pd

    if check_convention(convention) == "klg":
        return result.table()
    frames = IsbFrames.from_ligaments() if frames is None else frames
    reference = result.model.reference
    now = isb_coordinates(result.q, reference, frames)
    ref = isb_coordinates(np.zeros(6), reference, frames)
    unloaded = (None if result.q_unloaded is None
                else isb_coordinates(result.q_unloaded, reference, frames))
    return pd.DataFrame({
        "coordinate": [c[0] for c in ISB_COORDINATES],
        "unit": [c[1] for c in ISB_COORDINATES],
        "sign": [c[2] for c in ISB_COORDINATES],
        "absolute": _display(now),
        "from_reference": _display(now - ref),
        "from_unloaded": (_display(now - unloaded) if unloaded is not None
                          else [float("nan")] * 6),
    })


ISB_COLUMNS = tuple(f"isb_{name}_{unit}" for name, unit, _ in ISB_COORDINATES)
"""Column names of :func:`isb_frame` (``isb_q1_mm`` ... ``isb_gamma_deg``)."""


def isb_frame(q_rows, reference, frames: IsbFrames | None = None, *, q_unloaded=None):
    """ISB JCS coordinates of many poses as a table.

    Parameters
    ----------
    q_rows : array_like, shape (n, 6)
        Our joint coordinates [mm, rad], one pose a row.
    reference : ReferencePose
    frames : IsbFrames, optional
        Default: :meth:`IsbFrames.from_ligaments`.
    q_unloaded : array_like, shape (6,), optional
        With it, the columns ``isb_*_from_unloaded_*`` give the change from that pose.

    Returns
    -------
    DataFrame
        ``isb_q1_mm`` ... ``isb_gamma_deg`` (absolute), and the changes from the unloaded pose
        when given.
    """
    import pandas as pd

    frames = IsbFrames.from_ligaments() if frames is None else frames
    q_rows = np.atleast_2d(np.asarray(q_rows, dtype=float))
    if q_rows.ndim != 2 or q_rows.shape[1] != 6:
        raise ValueError(f"q_rows must have shape (n, 6), got {q_rows.shape}")
    values = np.array([_display(isb_coordinates(q, reference, frames)) for q in q_rows])
    values = values.reshape(len(q_rows), 6)
    out = pd.DataFrame(values, columns=list(ISB_COLUMNS))
    if q_unloaded is not None:
        u = _display(isb_coordinates(q_unloaded, reference, frames))
        for k, (name, unit, _) in enumerate(ISB_COORDINATES):
            out[f"isb_{name}_from_unloaded_{unit}"] = values[:, k] - u[k]
    return out
