"""Data never used as a calibration target (validation only): flexion stiffness at large
moments (Voo et al. 1998) and the centre of rotation in flexion-extension (Anderst et al.
2013)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from segment.core.io import data_dir
from segment.core.tables import Table
from segment.elements.loads import Load
from segment.solvers.equilibrium import solve

VOO_MOMENTS_NM = (3.8, 5.0, 6.9)
"""Flexion moments [N m] spanning the peak moments of Voo, Pintar, Yoganandan & Liu 1998
(J Biomech Eng 120:693-696): flexion to failure of mid-lower cervical joints, quasi-static
stiffness 0.80-1.35 N m/deg (mean 1.03 +- 0.11) at peak moments 3.8-6.9 N m."""
VOO_STIFFNESS_RANGE = (0.80, 1.35)
ANDERST_ICR_MM = {"superior": (2.5, 3.2, 3.9), "anterior": (-3.1, -2.0, -1.0)}
"""C5/C6 instantaneous centre of rotation in flexion-extension, in vivo, Anderst et al. 2013
(Spine 38(10):E594-E601, Table 2): 95 % CI low / mean / CI high [mm] from the reference point
of the inferior (C6) vertebra. Validation only, never a calibration target.

Their reference point and axes could not be established: the paper's text (methods, table
caption) was not available to us, only the table's numbers. Which point of C6 the offsets are
measured from is therefore an assumption here (:data:`ICR_REFERENCE_POINTS`), never a value
taken from the paper. An offset moves exactly 1 mm per mm that the reference point moves
(a translation), so every candidate is reported, with the point that would put our centre on
their mean."""
ICR_REFERENCE_POINTS = ("posterior-superior corner", "superior endplate centre",
                        "anterior-superior corner")
"""Candidate reference points on C6, from the C6 body of ``data/vertebra_geometry.csv``
(display geometry: axis from (x0, z0) to the superior endplate centre (x1, z1), anterior-
posterior half-depth a1): the superior endplate at z1, its posterior corner at x1 - a1, its
centre at x1, its anterior corner at x1 + a1 [mm, C6 frame]. Assumed, see
:data:`ANDERST_ICR_MM`."""
ICR_SMALL_MOMENT_NM = 0.1
"""Moment [N m] of the instantaneous (tangent) centre: the finite centre between the +-0.1 N m
equilibria, the chord across the disc's flexion/extension stiffness kink at zero."""


def _pose_xz(model, q):
    """C5 origin (x, z) [mm] and sagittal angle [rad] of pose q in C6 coordinates."""
    ref = model.reference
    p = np.asarray(ref.s0) + np.asarray(ref.R0) @ np.asarray(q[:3])
    return np.array([p[0], p[2]]), ref.phi_y + q[4]


def planar_centre(p1, a1: float, p2, a2: float) -> np.ndarray:
    """Centre (x, z) of the planar rigid motion between two sagittal poses.

    A pose is a body point's position ``p`` (x, z) [mm] and the body's angle ``a`` [rad] about
    +y (+x anterior, +z superior, +y = z x x: a positive angle turns +z towards +x,
    flexion)::

        X(u) = p + R(a) u,   R(a) = [[cos a, sin a], [-sin a, cos a]]  (Ry on (x, z))

    The centre is the one point that does not move: ``(I - R(d)) c = p2 - R(d) p1`` with
    ``d = a2 - a1`` (Reuleaux's pole of the finite displacement). Raises ValueError when the
    poses do not differ in angle (a translation has no centre).
    """
    p1, p2 = np.asarray(p1, dtype=float), np.asarray(p2, dtype=float)
    d = float(a2) - float(a1)
    if not abs(d) > 1e-12:
        raise ValueError(f"the two poses must differ in angle for a centre of rotation, got "
                         f"a difference of {d:g} rad (a pure translation)")
    c, s = math.cos(d), math.sin(d)
    Rd = np.array([[c, s], [-s, c]])
    return np.linalg.solve(np.eye(2) - Rd, p2 - Rd @ p1)


def flexion_extension_centre(model, *, moment_Nm: float = 1.8) -> np.ndarray:
    """Finite centre of rotation (x, z) [mm, C6 frame] of C5 between the extension and the
    flexion equilibria at +-``moment_Nm`` (:func:`planar_centre`; the helical axis of the
    finite motion is sagittal here: the model is left-right symmetric)."""
    poses = []
    for sign in (-1.0, 1.0):
        r = solve(model, Load.from_si(moment_Nm=(0.0, sign * moment_Nm, 0.0)))
        if not r.converged:
            raise ValueError(f"the {'extension' if sign < 0 else 'flexion'} equilibrium at "
                             f"{moment_Nm:g} N m did not converge ({r.message})")
        poses.append(_pose_xz(model, r.q))
    (p1, a1), (p2, a2) = poses
    return planar_centre(p1, a1, p2, a2)


def icr_offset(centre_c6, reference_c6, *, axes_deg: float = 0.0) -> np.ndarray:
    """(anterior, superior) offset [mm] of a centre from a reference point, both (x, z) in C6.

    ``axes_deg`` turns the comparison axes against ours about +y (a rotation of the anterior
    axis towards superior for a negative angle, as Ry): the offset is ``R(axes)^T (c - r)``.
    A 1 mm shift of the reference point shifts the offset by exactly -1 mm; a 1 deg turn of
    the axes moves it by ``|c - r| pi / 180``.
    """
    d = np.asarray(centre_c6, dtype=float) - np.asarray(reference_c6, dtype=float)
    t = math.radians(axes_deg)
    c, s = math.cos(t), math.sin(t)
    return np.array([[c, s], [-s, c]]).T @ d


def c6_reference_points(path=None) -> dict[str, np.ndarray]:
    """The candidate reference points :data:`ICR_REFERENCE_POINTS`, (x, z) [mm, C6 frame],
    from the C6 body row of ``vertebra_geometry.csv`` (default: the packaged one)."""
    path = data_dir() / "vertebra_geometry.csv" if path is None else Path(path)
    t = Table(path, ("vertebra", "part", "x1_mm", "z1_mm", "a1_mm"), what="geometry")
    for i, row in t.rows():
        if row["vertebra"] == "C6" and row["part"] == "body":
            x1, z1 = t.number(i, row, "x1_mm"), t.number(i, row, "z1_mm")
            a1 = t.number(i, row, "a1_mm", positive=True)
            return {ICR_REFERENCE_POINTS[0]: np.array([x1 - a1, z1]),
                    ICR_REFERENCE_POINTS[1]: np.array([x1, z1]),
                    ICR_REFERENCE_POINTS[2]: np.array([x1 + a1, z1])}
    raise ValueError(f"{path.name}: no C6 body row (vertebra 'C6', part 'body')")


def icr_comparison(models: dict, *, geometry=None,
                   moments_Nm=(1.8, ICR_SMALL_MOMENT_NM)) -> pd.DataFrame:
    """Our flexion-extension centres against Anderst et al. 2013 (:data:`ANDERST_ICR_MM`).

    One row per model, centre (finite between the +-M equilibria for each of ``moments_Nm``)
    and candidate reference point (:func:`c6_reference_points` of ``geometry``): the centre in
    our C6 frame, its (anterior, superior) offset from the point, whether each lies in
    Anderst's 95 % CI, and the reference point that would put the centre on their mean.
    """
    refs = c6_reference_points(geometry)
    lo_a, mean_a, hi_a = ANDERST_ICR_MM["anterior"]
    lo_s, mean_s, hi_s = ANDERST_ICR_MM["superior"]
    rows = []
    for label, m in models.items():
        for M in moments_Nm:
            c = flexion_extension_centre(m, moment_Nm=M)
            needed = c - np.array([mean_a, mean_s])
            for name, r in refs.items():
                ant, sup = icr_offset(c, r)
                ok_a, ok_s = lo_a <= ant <= hi_a, lo_s <= sup <= hi_s
                rows.append({"model": label, "centre": f"+-{M:g} N m",
                             "x_mm": c[0], "z_mm": c[1], "reference_point": name,
                             "ref_x_mm": r[0], "ref_z_mm": r[1],
                             "anterior_mm": ant, "superior_mm": sup,
                             "anterior_in_CI": ok_a, "superior_in_CI": ok_s,
                             "verdict": "within" if ok_a and ok_s else "outside",
                             "ref_for_mean_x_mm": needed[0], "ref_for_mean_z_mm": needed[1]})
    return pd.DataFrame(rows)


def validation_only(models: dict, *, geometry=None) -> dict:
    """Compare models with published data never used as a target.

    ``models`` maps a label (e.g. ``published``, ``calibrated``) to an intact model. Returns
    two DataFrames: ``flexion_stiffness`` (secant flexion stiffness M / phi_y from the
    unloaded pose at :data:`VOO_MOMENTS_NM`, against Voo et al. 1998's corridor) and ``icr``
    (:func:`icr_comparison`: the flexion-extension centre of rotation against Anderst et al.
    2013, from each assumed reference point of :data:`ICR_REFERENCE_POINTS` on the C6 body of
    ``geometry``, a ``vertebra_geometry.csv``; default: the packaged one).
    """
    rows = []
    for label, m in models.items():
        q_u = m.unloaded.q if getattr(m, "unloaded", None) is not None else None
        if q_u is None:
            q_u = solve(m, Load.zero()).q
        for M in VOO_MOMENTS_NM:
            r = solve(m, Load.from_si(moment_Nm=(0.0, M, 0.0)))
            rot = math.degrees(r.q[4] - q_u[4])
            rows.append({"model": label, "moment_Nm": M, "converged": r.converged,
                         "phi_y_deg": rot, "secant_stiffness_Nm_per_deg": M / rot,
                         "Voo_1998_low": VOO_STIFFNESS_RANGE[0],
                         "Voo_1998_high": VOO_STIFFNESS_RANGE[1]})
    return {"flexion_stiffness": pd.DataFrame(rows),
            "icr": icr_comparison(models, geometry=geometry)}
