"""The model as a MuJoCo file (MJCF), and its static equilibrium found by MuJoCo.

What is written (SI units, :mod:`segment.export.common`)::

    worldbody
      body C6 (at the world origin, no joint: fixed)      ligament and facet anchor sites
        body C5   pos = s0, quat = R0 (the joint frame of Table 1)
          joint x, y, z        slide along the body's x, y, z
          joint phi_x, phi_y, phi_z   hinge about x, y, z, in this order
    so that p_C5 = s0 + R0 (x, y, z) and R_C5 = R0 Rx Ry Rz (MuJoCo composes the joints of
    one body in order, each about its axis in the frame the previous ones left): qpos is the
    model's q, in m and rad.

MuJoCo's springs are linear, but a tendon spring may have a dead band: with
``springlength="lo hi"`` it pulls back with ``-k (L - hi)`` above ``hi``, ``-k (L - lo)``
below ``lo`` and is slack between. One such spring is a ramp ``k max(L - hi, 0)`` (or
``k min(L - lo, 0)``), and every continuous piecewise-linear law is a sum of ramps
(:meth:`~segment.export.common.PiecewiseLinear.ramps`), a ramp's stiffness being the change
of slope at its knot (negative where the slope falls, which MuJoCo accepts). Hence, exactly:

* disc, per coordinate: fixed tendons ``disc_<q>_...`` of length ``q`` (coefficient 1), one
  ramp each side of 0 for eq. (1) (stiffness k+ above, k- below), two more each side for the
  neutral zone; joint damping = the disc damping.
* ligament, per strip: spatial tendons ``<name>_1..3`` between its two insertion sites with
  ``springlength = (0, l0 (1 + eps_k))`` for the knots eps = 0, eps_A, eps_B and stiffness
  the slope changes over l0: tension-only, trilinear, the B-C slope continued past C.

The facet approximation (:data:`~segment.export.common.FACET_APPROXIMATION`) is a spatial
tendon from the C5 facet centre to an anchor on C6 at ``FACET_ANCHOR_DEPTH_M`` below the C6
facet centre along its normal, so that its length is that depth minus the penetration, to
``(lateral offset)^2 / (2 * depth)`` (5e-9 m for a 1 mm offset); pushing ramps below the
anchor depth give the contact law, its quadratic part interpolated at
``FACET_SEGMENTS`` equal steps up to u_t (at most k2 (u_t / n)^2 / 4 = 0.11 N above the
published law). The file says so (comment and ``custom/text``).

Not written: ligament and facet damping (a MuJoCo tendon damps also when slack), gravity (0).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from segment._extras import require
from segment._version import __version__
from segment.core.io import BodyInertia
from segment.core.model import Segment
from segment.elements.disc import DOF_NAMES
from segment.elements.loads import Load
from segment.export.common import (
    FACET_APPROXIMATION,
    KG_M2_PER_KG_MM2,
    M_PER_MM,
    NM_PER_NMM,
    ExportResult,
    PiecewiseLinear,
    ToolEquilibrium,
    disc_functions,
    fmt,
    newton_fd,
    si_q,
)
from segment.export.document import DAMPING_SI, export_content, sub, vec, write_document

__all__ = ["FACET_ANCHOR_DEPTH_M", "FACET_SEGMENTS", "MuJoCoResidual", "mjcf_equilibrium",
           "mjcf_xml", "write_mjcf"]

FAR = 1.0e6
"""The open end of a one-sided dead band [m or rad]: never reached."""
FACET_ANCHOR_DEPTH_M = 100.0
"""Distance of a facet tendon's C6 anchor below the C6 facet centre [m] (module docstring)."""
FACET_SEGMENTS = 20
"""Linear pieces of the quadratic part of the contact law (0 <= u <= u_t)."""


def _quat(R) -> np.ndarray:
    """Unit quaternion (w, x, y, z) of the rotation matrix ``R`` (3, 3)."""
    R = np.asarray(R, float)
    w = np.sqrt(max(0.0, 1.0 + R[0, 0] + R[1, 1] + R[2, 2])) / 2.0
    x = np.copysign(np.sqrt(max(0.0, 1.0 + R[0, 0] - R[1, 1] - R[2, 2])) / 2.0, R[2, 1] - R[1, 2])
    y = np.copysign(np.sqrt(max(0.0, 1.0 - R[0, 0] + R[1, 1] - R[2, 2])) / 2.0, R[0, 2] - R[2, 0])
    z = np.copysign(np.sqrt(max(0.0, 1.0 - R[0, 0] - R[1, 1] + R[2, 2])) / 2.0, R[1, 0] - R[0, 1])
    q = np.array([w, x, y, z])
    return q / np.linalg.norm(q)


def _inertial(body, inertia: BodyInertia | None) -> None:
    if inertia is None:
        return
    sub(body, "inertial", pos=vec((inertia.cog_x * M_PER_MM, 0.0, 0.0)),
         mass=fmt(inertia.mass),
         diaginertia=vec(np.asarray(inertia.inertia, float) * KG_M2_PER_KG_MM2))


def _ramp_spring(tendons, kind: str, name: str, side: str, knot: float, stiffness: float):
    """One dead-band spring: ``stiffness * max(L - knot, 0)`` (right) or ``min(...)`` (left)
    pulling back on the tendon length L."""
    band = (-FAR, knot) if side == "right" else (knot, FAR)
    return sub(tendons, kind, name=name, stiffness=fmt(stiffness), springlength=vec(band))


def facet_law_function(fc) -> PiecewiseLinear:
    """The contact force [N] against penetration [m] as written: the quadratic part
    interpolated at :data:`FACET_SEGMENTS` steps, linear past u_t, zero below 0."""
    ut = fc.u_transition
    u = np.linspace(0.0, ut, FACET_SEGMENTS + 1)
    x = [-ut, *u, 2.0 * ut]
    return PiecewiseLinear(x, fc.force(np.array(x)))


def mjcf_xml(model: Segment, *, c6_inertia: BodyInertia | None = None,
             name: str = "C5-C6") -> tuple[ET.ElementTree, ExportResult]:
    """The MJCF document of ``model`` and what it holds (``path`` left empty); see
    :func:`write_mjcf`."""
    content = export_content(model, tool="MuJoCo",
                             no_damping="a MuJoCo tendon damps also when slack")
    ref = model.reference
    ligs, facets, approximations = content.ligaments, content.facets, content.approximations

    root = ET.Element("mujoco", model=name)
    content.header(root, model, coordinates="Joints")
    sub(root, "compiler", angle="radian", autolimits="true")
    sub(root, "option", gravity="0 0 0")
    custom = sub(root, "custom")
    sub(custom, "text", name="segment_source",
         data=f"segment {__version__}; clinical state {model.clinical_label}; units m kg N rad")
    if approximations:
        sub(custom, "text", name="segment_approximations", data="; ".join(approximations))

    world = sub(root, "worldbody")
    c6 = sub(world, "body", name="C6", pos="0 0 0")
    _inertial(c6, c6_inertia)
    c5 = sub(c6, "body", name="C5", pos=vec(np.asarray(ref.s0, float) * M_PER_MM),
              quat=vec(_quat(ref.R0)))
    _inertial(c5, model.inertia)
    damping = np.asarray(model.disc.damping, float)
    for i, dof in enumerate(DOF_NAMES):
        axis = ("1 0 0", "0 1 0", "0 0 1")[i % 3]
        sub(c5, "joint", name=dof, type="slide" if i < 3 else "hinge", axis=axis,
             pos="0 0 0", damping=fmt(damping[i] * DAMPING_SI[0 if i < 3 else 1]))
    for row in ligs:
        sub(c6, "site", name=f"{row.name}-C6", pos=vec(row.insertion_c6), size="0.0005")
        sub(c5, "site", name=f"{row.name}-C5", pos=vec(row.insertion_c5), size="0.0005")
    for fc in facets:
        sub(c6, "site", name=f"facet_{fc.side}-anchor",
             pos=vec(fc.center_c6 - FACET_ANCHOR_DEPTH_M * fc.normal_c6), size="0.0005")
        sub(c5, "site", name=f"facet_{fc.side}-C5", pos=vec(fc.center_c5), size="0.0005")

    tendons = sub(root, "tendon")
    tendons.append(ET.Comment(" disc (eq. 1, Table 2): per coordinate, dead-band springs on "
                              "a fixed tendon of length q whose sum is the piecewise-linear "
                              "restoring law "))
    for dof, fn in zip(DOF_NAMES, disc_functions(model), strict=True):
        for k, (side, knot, c) in enumerate(fn.ramps(), start=1):
            t = _ramp_spring(tendons, "fixed", f"disc_{dof}_{k}", side, knot, c)
            sub(t, "joint", joint=dof, coef="1")
    tendons.append(ET.Comment(" ligaments: per strip, dead-band springs between the "
                              "insertions whose sum is the trilinear tension-only curve "))
    for row in ligs:
        for k, (side, knot, c) in enumerate(row.curve.ramps(), start=1):
            if side != "right":
                raise ValueError(f"ligament {row.name!r}: a tension-only curve has no ramp "
                                 f"below zero strain")
            t = sub(tendons, "spatial", name=f"{row.name}_{k}", stiffness=fmt(c / row.l0),
                     springlength=vec((0.0, row.l0 * (1.0 + knot))))
            sub(t, "site", site=f"{row.name}-C6")
            sub(t, "site", site=f"{row.name}-C5")
    for fc in facets:
        tendons.append(ET.Comment(f" {FACET_APPROXIMATION} "))
        for k, (_side, knot, c) in enumerate(facet_law_function(fc).ramps(), start=1):
            # pushes when the length falls below the anchor depth minus the knot
            t = sub(tendons, "spatial", name=f"facet_{fc.side}_{k}", stiffness=fmt(c),
                     springlength=vec((FACET_ANCHOR_DEPTH_M - knot, FAR)))
            sub(t, "site", site=f"facet_{fc.side}-anchor")
            sub(t, "site", site=f"facet_{fc.side}-C5")

    ET.indent(root, space="  ")
    return ET.ElementTree(root), content.result("MuJoCo model (MJCF)", DOF_NAMES)


def write_mjcf(model: Segment, path, *, c6_inertia: BodyInertia | None = None,
               name: str = "C5-C6") -> ExportResult:
    """Write ``model`` as a MuJoCo MJCF file (see the module docstring).

    Needs no MuJoCo; :func:`mjcf_equilibrium` loads the file in MuJoCo to check it.
    """
    tree, result = mjcf_xml(model, c6_inertia=c6_inertia, name=name)
    return write_document(tree, result, path, xml_declaration=False)


# ---------------------------------------------------------------- checked in MuJoCo
class MuJoCoResidual:
    """An exported MJCF file loaded in MuJoCo, with a load applied: its residual generalized
    forces by MuJoCo's own functions.

    At zero velocity and acceleration ``mj_inverse`` returns the generalized force that would
    have to be applied for equilibrium (``qfrc_inverse``: here minus the passive forces of the
    springs); the load, a force through the C5 origin and a moment with world (= C6)
    components ``R0 F`` and ``R0 M``, is mapped by ``mj_applyFT``. The residual is
    ``load - qfrc_inverse`` (:meth:`segment.Segment.residual` in SI units).
    """

    def __init__(self, path, load: Load | None = None):
        mujoco = require("mujoco", "mujoco", "checking an export in MuJoCo")
        self._mj = mujoco
        self.model = mujoco.MjModel.from_xml_path(str(path))
        self.data = mujoco.MjData(self.model)
        m = self.model
        self._qpos = [int(m.jnt_qposadr[m.joint(n).id]) for n in DOF_NAMES]
        self._dof = [int(m.jnt_dofadr[m.joint(n).id]) for n in DOF_NAMES]
        self._c5 = int(m.body("C5").id)
        c6 = m.body("C6").id
        r_c6_c5 = np.empty(9)
        mujoco.mju_quat2Mat(r_c6_c5, m.body_quat[self._c5])
        r0 = r_c6_c5.reshape(3, 3)
        if np.any(m.body_quat[c6] != np.array([1.0, 0.0, 0.0, 0.0])) or \
                np.any(m.body_pos[c6] != 0.0):
            raise ValueError(f"{path}: body C6 must sit at the world origin, unrotated")
        if load is None:
            load = Load.zero()
        self._force = r0 @ np.asarray(load.force, float)
        self._torque = r0 @ (np.asarray(load.moment, float) * NM_PER_NMM)

    def __call__(self, q_si) -> np.ndarray:
        """Residual (6,) [N, N m] at q (6,) [m, rad], in the order x, y, z, phi_x, ..."""
        mj, m, d = self._mj, self.model, self.data
        d.qpos[self._qpos] = q_si
        d.qvel[:] = 0.0
        d.qacc[:] = 0.0
        mj.mj_inverse(m, d)
        load = np.zeros(m.nv)
        mj.mj_applyFT(m, d, self._force, self._torque, d.xpos[self._c5].copy(), self._c5, load)
        return (load - d.qfrc_inverse)[self._dof]


def mjcf_equilibrium(path, load: Load, *, q0=None) -> ToolEquilibrium:
    """The static equilibrium of an exported MJCF file under ``load``, found in MuJoCo.

    Newton-Raphson (:func:`segment.export.common.newton_fd`) on MuJoCo's residual
    (:class:`MuJoCoResidual`) from ``q0`` [mm, rad] (default: the reference pose, q = 0).
    Returns q in mm and rad.
    """
    residual = MuJoCoResidual(path, load)
    return newton_fd(residual, None if q0 is None else si_q(q0))
