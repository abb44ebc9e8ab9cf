"""The model as an OpenSim 4.6 file (``.osim``), and its static equilibrium found by OpenSim.

What is written (SI units, :mod:`segment.export.common`)::

    ground --WeldJoint "ground_C6"--> body C6 (the C6 frame of the model)
    C6 --CustomJoint "C6_C5"--> body C5
        parent frame: C6 offset by s0, orientation R0 (the joint frame of Table 1)
        SpatialTransform: rotation1..3 = phi_x, phi_y, phi_z about x, y, z (body-fixed, in
        this order), translation1..3 = x, y, z along the parent frame's axes, all with
        LinearFunction(1, 0)
    so that p_C5 = s0 + R0 (x, y, z) and R_C5 = R0 Rx Ry Rz: the coordinates are q, in m and
    rad.

    FunctionBasedBushingForce "disc" (joint frame on C6 -> C5 frame): one
        PiecewiseLinearFunction per coordinate, the restoring law M_i of eq. (1)
        (:func:`~segment.export.common.disc_functions`); the disc damping as the bushing's.
        A bushing's deflections are the body-fixed x-y-z angles and the translation in frame 1,
        which here are q itself, and its moments are mapped with the same Euler-angle matrix
        as :mod:`segment.elements.kinematics` (virtual work), so Q_i = -M_i(q_i) exactly.
    Ligament per strip: a straight GeometryPath from the C6 to the C5 insertion,
        resting_length l0, pcsa_force 1 N and force_length_curve the trilinear curve against
        l / l0 (0 up to 1, the B-C slope continued past C).
    ExpressionBasedBushingForce "facet_<side>" per facet (the approximation of
        :data:`~segment.export.common.FACET_APPROXIMATION`): frame 1 at the C6 facet centre
        with z along its normal, frame 2 at the C5 facet centre; Fz the contact law of
        -delta_z.

Ligament and facet damping are not written (OpenSim's ``Ligament`` has none); gravity is 0
(the model's loads are the applied ones only). C6's mass is written when given (the CLI gives
Table 1's); it is welded to ground and plays no part.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from segment._extras import require
from segment._version import __version__
from segment.core.io import BodyInertia
from segment.core.model import Segment
from segment.elements.disc import DOF_NAMES
from segment.elements.kinematics import cardan_xyz
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

__all__ = ["OSIM_VERSION", "OpenSimResidual", "osim_equilibrium", "osim_xml", "write_osim"]

OSIM_VERSION = "40600"
"""The document version written (OpenSim 4.6)."""
JOINT = "C6_C5"
BUSHING_FUNCTIONS = ("f_x_delta_x_function", "f_y_delta_y_function", "f_z_delta_z_function",
                     "m_x_theta_x_function", "m_y_theta_y_function", "m_z_theta_z_function")
"""The bushing's function of each coordinate, in the order of :data:`DOF_NAMES`."""


def _offset_frame(parent, name: str, body: str, translation_m, orientation_rad) -> None:
    f = sub(parent, "PhysicalOffsetFrame", name=name)
    sub(f, "socket_parent", f"/bodyset/{body}")
    sub(f, "translation", vec(translation_m))
    sub(f, "orientation", vec(orientation_rad))


def _plf(parent, fn: PiecewiseLinear, name=None) -> None:
    e = sub(parent, "PiecewiseLinearFunction", **({"name": name} if name else {}))
    sub(e, "x", vec(fn.x))
    sub(e, "y", vec(fn.y))


def _body(parent, name: str, inertia: BodyInertia | None) -> None:
    b = sub(parent, "Body", name=name)
    if inertia is None:
        b.append(ET.Comment(f" {name}: no mass given (welded to ground: no part in the "
                            f"mechanics) "))
        mass, com, diag = 0.0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    else:
        mass = inertia.mass
        com = (inertia.cog_x * M_PER_MM, 0.0, 0.0)
        diag = np.asarray(inertia.inertia, float) * KG_M2_PER_KG_MM2
    sub(b, "mass", fmt(mass))
    sub(b, "mass_center", vec(com))
    sub(b, "inertia", vec([*diag, 0.0, 0.0, 0.0]))


def _frame_with_z(normal) -> np.ndarray:
    """A rotation (3, 3) whose third column is the unit vector ``normal``."""
    z = np.asarray(normal, float) / np.linalg.norm(normal)
    helper = np.array([0.0, 1.0, 0.0]) if abs(z[1]) < 0.9 else np.array([1.0, 0.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


def osim_xml(model: Segment, *, c6_inertia: BodyInertia | None = None,
             name: str = "C5-C6") -> tuple[ET.ElementTree, ExportResult]:
    """The OpenSim document of ``model`` and what it holds (``path`` left empty).

    Parameters
    ----------
    model : Segment
        The model to write (``segment.c5c6(...)``, a clinical state, ...).
    c6_inertia : BodyInertia, optional
        C6's mass and inertia (Table 1); C6 is welded to ground, so this only completes the
        file.
    name : str
        The model's name in OpenSim.
    """
    content = export_content(model, tool="OpenSim", no_damping="OpenSim's Ligament has none")
    ref = model.reference
    s0_m = np.asarray(ref.s0, float) * M_PER_MM
    r0_xyz = cardan_xyz(np.asarray(ref.R0, float))
    ligs, facets, approximations = content.ligaments, content.facets, content.approximations

    root = ET.Element("OpenSimDocument", Version=OSIM_VERSION)
    content.header(root, model, coordinates="Coordinates")
    m = sub(root, "Model", name=name)
    sub(m, "credits", f"exported by segment {__version__} (distribution c5c6-segment)")
    sub(m, "publications", "Kecskemethy, Lange, Grabner, DETC2000/MECH-6821"
                            + ("; " + "; ".join(approximations) if approximations else ""))
    sub(m, "length_units", "meters")
    sub(m, "force_units", "N")
    sub(m, "gravity", "0 0 0")

    bodies = sub(sub(m, "BodySet", name="bodyset"), "objects")
    _body(bodies, "C6", c6_inertia)
    _body(bodies, "C5", model.inertia)

    joints = sub(sub(m, "JointSet", name="jointset"), "objects")
    weld = sub(joints, "WeldJoint", name="ground_C6")
    sub(weld, "socket_parent_frame", "/ground")
    sub(weld, "socket_child_frame", "/bodyset/C6")
    cj = sub(joints, "CustomJoint", name=JOINT)
    sub(cj, "socket_parent_frame", "C6_offset")
    sub(cj, "socket_child_frame", "C5_offset")
    coords = sub(cj, "coordinates")
    for i, dof in enumerate(DOF_NAMES):
        c = sub(coords, "Coordinate", name=dof)
        sub(c, "default_value", "0")
        sub(c, "range", "-0.05 0.05" if i < 3 else "-1.5707963267948966 1.5707963267948966")
        sub(c, "clamped", "false")
        sub(c, "locked", "false")
    frames = sub(cj, "frames")
    _offset_frame(frames, "C6_offset", "C6", s0_m, r0_xyz)
    _offset_frame(frames, "C5_offset", "C5", (0, 0, 0), (0, 0, 0))
    st = sub(cj, "SpatialTransform")
    axes = ("1 0 0", "0 1 0", "0 0 1")
    for k, (slot, dof) in enumerate(zip(
            ("rotation1", "rotation2", "rotation3", "translation1", "translation2",
             "translation3"), ("phi_x", "phi_y", "phi_z", "x", "y", "z"), strict=True)):
        ax = sub(st, "TransformAxis", name=slot)
        sub(ax, "coordinates", dof)
        sub(ax, "axis", axes[k % 3])
        sub(sub(ax, "LinearFunction", name="function"), "coefficients", "1 0")

    forces = sub(sub(m, "ForceSet", name="forceset"), "objects")
    forces.append(ET.Comment(" disc (eq. 1, Table 2): Q_i = -M_i(q_i), one piecewise-linear "
                             "function per coordinate, N and N m against m and rad "))
    bushing = sub(forces, "FunctionBasedBushingForce", name="disc")
    sub(bushing, "socket_frame1", "joint_frame")
    sub(bushing, "socket_frame2", "C5_origin")
    bframes = sub(bushing, "frames")
    _offset_frame(bframes, "joint_frame", "C6", s0_m, r0_xyz)
    _offset_frame(bframes, "C5_origin", "C5", (0, 0, 0), (0, 0, 0))
    by_dof = dict(zip(BUSHING_FUNCTIONS, disc_functions(model), strict=True))
    for prop in ("m_x_theta_x_function", "m_y_theta_y_function", "m_z_theta_z_function",
                 "f_x_delta_x_function", "f_y_delta_y_function", "f_z_delta_z_function"):
        _plf(sub(bushing, prop), by_dof[prop])
    b = np.asarray(model.disc.damping, float)
    sub(bushing, "rotational_damping", vec(b[3:] * DAMPING_SI[1]))
    sub(bushing, "translational_damping", vec(b[:3] * DAMPING_SI[0]))

    for row in ligs:
        lig = sub(forces, "Ligament", name=row.name)
        path = sub(lig, "GeometryPath", name="path")
        points = sub(sub(path, "PathPointSet"), "objects")
        for pname, body, loc in ((f"{row.name}-C6", "C6", row.insertion_c6),
                                 (f"{row.name}-C5", "C5", row.insertion_c5)):
            pp = sub(points, "PathPoint", name=pname)
            sub(pp, "socket_parent_frame", f"/bodyset/{body}")
            sub(pp, "location", vec(loc))
        sub(lig, "resting_length", fmt(row.l0))
        sub(lig, "pcsa_force", "1")
        # tension [N] against l / l0 = 1 + strain
        _plf(lig, PiecewiseLinear(row.curve.x + 1.0, row.curve.y), name="force_length_curve")

    for fc in facets:
        forces.append(ET.Comment(f" {FACET_APPROXIMATION} "))
        f = sub(forces, "ExpressionBasedBushingForce", name=f"facet_{fc.side}")
        sub(f, "socket_frame1", "C6_facet")
        sub(f, "socket_frame2", "C5_facet")
        ff = sub(f, "frames")
        R1 = _frame_with_z(fc.normal_c6)
        _offset_frame(ff, "C6_facet", "C6", fc.center_c6, cardan_xyz(R1))
        # frame 2 coincides with frame 1 at the reference pose (only delta_z is used)
        _offset_frame(ff, "C5_facet", "C5", fc.center_c5,
                      cardan_xyz(np.asarray(ref.R0, float).T @ R1))
        for comp in ("Mx", "My", "Mz", "Fx", "Fy"):
            sub(f, f"{comp}_expression", "0")
        u = "max(-delta_z,0)"
        sub(f, "Fz_expression",
             f"-{fmt(fc.scale)}*({fmt(fc.k_quadratic)}*min({u},{fmt(fc.u_transition)})^2"
             f"+{fmt(fc.k_linear)}*max(-delta_z-{fmt(fc.u_transition)},0))")

    ET.indent(root, space="\t")
    return ET.ElementTree(root), content.result("OpenSim 4.6 model", DOF_NAMES)


def write_osim(model: Segment, path, *, c6_inertia: BodyInertia | None = None,
               name: str = "C5-C6") -> ExportResult:
    """Write ``model`` as an OpenSim 4.6 model file (see the module docstring).

    Needs no OpenSim; :func:`osim_equilibrium` loads the file in OpenSim to check it.

    Returns
    -------
    ExportResult
        The path, the elements written, the approximations (flagged in the file too) and what
        was left out.
    """
    tree, result = osim_xml(model, c6_inertia=c6_inertia, name=name)
    return write_document(tree, result, path, xml_declaration=True)


# ---------------------------------------------------------------- checked in OpenSim
class OpenSimResidual:
    """An exported ``.osim`` file loaded in OpenSim, with a load applied: its residual
    generalized forces by OpenSim's own inverse dynamics.

    The load (:class:`segment.Load`, joint-frame components fixed in space) is a
    ``PrescribedForce`` on C5 at its origin, force and torque in ground (= C6) components
    ``R0 F`` and ``R0 M``. At zero speed and acceleration, the ``InverseDynamicsSolver`` returns
    the generalized forces that would have to be added for equilibrium; the residual is
    their negative (:meth:`segment.Segment.residual` in SI units).
    """

    def __init__(self, path, load: Load | None = None):
        osim = require("opensim", "opensim", "checking an export in OpenSim")
        osim.Logger.setLevelString("warn")
        self._osim = osim
        model = osim.Model(str(path))
        model.setUseVisualizer(False)
        joint = model.getJointSet().get(JOINT)
        parent = osim.PhysicalOffsetFrame.safeDownCast(joint.getParentFrame())
        if load is not None:
            r0 = np.array([[parent.getOffsetTransform().R().get(i, j) for j in range(3)]
                           for i in range(3)])
            f = r0 @ np.asarray(load.force, float)
            t = r0 @ (np.asarray(load.moment, float) * NM_PER_NMM)
            pf = osim.PrescribedForce("segment_load", model.getBodySet().get("C5"))
            pf.setForceIsInGlobalFrame(True)
            pf.setPointIsInGlobalFrame(False)
            pf.setForceFunctions(*(osim.Constant(float(v)) for v in f))
            pf.setTorqueFunctions(*(osim.Constant(float(v)) for v in t))
            pf.setPointFunctions(*(osim.Constant(0.0) for _ in range(3)))
            model.addForce(pf)
        self.state = model.initSystem()
        self.model = model
        cs = model.getCoordinateSet()
        self._coords = [cs.get(n) for n in DOF_NAMES]
        self._index = [c.getMobilizerQIndex() for c in self._coords]
        self._solver = osim.InverseDynamicsSolver(model)
        self._udot = osim.Vector(model.getNumSpeeds(), 0.0)

    def __call__(self, q_si) -> np.ndarray:
        """Residual (6,) [N, N m] at q (6,) [m, rad], in the order x, y, z, phi_x, ..."""
        s = self.state
        for c, v in zip(self._coords, q_si, strict=True):
            c.setValue(s, float(v), False)
        tau = self._solver.solve(s, self._udot)
        return -np.array([tau.get(k) for k in self._index])


def osim_equilibrium(path, load: Load, *, q0=None) -> ToolEquilibrium:
    """The static equilibrium of an exported ``.osim`` file under ``load``, found in OpenSim.

    Newton-Raphson (:func:`segment.export.common.newton_fd`) on OpenSim's residual
    (:class:`OpenSimResidual`) from ``q0`` [mm, rad] (default: the reference pose, q = 0).
    Returns q in mm and rad.
    """
    residual = OpenSimResidual(path, load)
    return newton_fd(residual, None if q0 is None else si_q(q0))
