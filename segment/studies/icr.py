"""The model's sagittal ICR along flexion-extension, against Anderst et al. 2013.

One concept (SOURCES.md §5, §13): the instantaneous centre of rotation of C5 on C6 along a
flexion-extension path of the model (pure moments about the joint's y axis, continuation
from the unloaded equilibrium), each step's helical axis crossing C6's mid-sagittal plane
(:mod:`segment.studies.helical_axis`), and the comparison of its mean with the in vivo ICR
of Anderst et al. 2013 (Table 2, C5/C6; validation only, never a calibration target).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from segment.core.status import CONVERGED_STATUSES
from segment.studies.helical_axis import finite_helical_axis, helical_axes, sagittal_icr

__all__ = ["ANDERST2013_C5C6", "MIN_ICR_STEP_DEG", "anderst_comparison", "icr_path"]

MIN_ICR_STEP_DEG = 0.01
"""Helical axes of steps smaller than this are not used for the ICR (the axis of a tiny
rotation is ill-conditioned: its position error grows as 1/angle)."""

ANDERST2013_C5C6 = {"si_mean_mm": 3.2, "si_ci_mm": (2.5, 3.9),
                    "ap_mean_mm": -2.0, "ap_ci_mm": (-3.1, -1.0)}
"""Anderst et al. 2013, Table 2, C5/C6 in vivo flexion-extension ICR (SOURCES.md §5):
mean and 95 % CI of the mean, mm from the centre of the C6 body, + superior and + anterior.
Validation only: never a calibration target."""



def _poses(model, q_rows):
    from segment.elements.kinematics import pose

    out = [pose(q, model.reference) for q in q_rows]
    return np.array([o[1] for o in out]), np.array([o[0] for o in out])


def _fe_path(model, extension_Nm, flexion_Nm, steps):
    """(moments (n,) signed [N m], q (n, 6), converged (n,)) from the extended through the
    unloaded to the flexed pose."""
    from segment.studies.paths import solve_paths

    if not (extension_Nm > 0 and flexion_Nm > 0 and int(steps) >= 1):
        raise ValueError(f"extension_Nm and flexion_Nm must be > 0 and steps >= 1, got "
                         f"{extension_Nm!r}, {flexion_Nm!r}, {steps!r}")
    sides = {}
    for sign, top in ((-1.0, extension_Nm), (1.0, flexion_Nm)):
        m = np.linspace(0.0, top, int(steps) + 1)[1:]
        F = np.zeros((m.size, 6))
        F[:, 4] = sign * m * 1000.0
        r = solve_paths(model, F)
        sides[sign] = (sign * m, r.q[0], r.converged[0], r)
    m_e, q_e, ok_e, r = sides[-1.0]
    m_f, q_f, ok_f, _ = sides[1.0]
    unloaded_ok = bool(np.isin(r.status_unloaded[0], CONVERGED_STATUSES))
    moments = np.concatenate([m_e[::-1], [0.0], m_f])
    q = np.concatenate([q_e[::-1], r.q_unloaded[:1], q_f])
    ok = np.concatenate([ok_e[::-1], [unloaded_ok], ok_f])
    return moments, q, ok


def icr_path(model, *, extension_Nm: float = 1.8, flexion_Nm: float = 1.8, steps: int = 36,
             frames=None) -> pd.DataFrame:
    """The model's sagittal ICR along flexion-extension, from ``extension_Nm`` of extension
    through the unloaded pose to ``flexion_Nm`` of flexion, ``steps`` moment steps per
    direction (pure moments about the joint's y axis, continuation from the unloaded
    equilibrium).

    The ICR of each step is where the helical axis of the step crosses C6's mid-sagittal
    plane, given relative to the C6 body centroid (the ISB origin,
    :class:`segment.core.conventions.IsbFrames`): ``ap_mm`` along C6's x (+ anterior), ``si_mm``
    along C6's z (+ superior).

    Returns
    -------
    DataFrame
        moment_from_Nm, moment_to_Nm (signed, + flexion), phi_y_deg (flexion from the unloaded
        pose at the step's end), step_deg (the step's rotation), ap_mm, si_mm, converged (the
        step is used: both ends converged and it turned at least MIN_ICR_STEP_DEG).
    """
    from segment.core.conventions import IsbFrames

    frames = IsbFrames.from_ligaments() if frames is None else frames
    moments, Q, ok = _fe_path(model, extension_Nm, flexion_Nm, steps)
    Rs, ps = _poses(model, Q)
    c6 = frames.centroid_c6
    q_u = Q[int(np.flatnonzero(moments == 0.0)[0])]
    out = []
    for k, axis in enumerate(helical_axes(Rs, ps)):
        icr = None if axis is None else sagittal_icr(axis, plane_y_mm=c6[1])
        step = 0.0 if axis is None else math.degrees(axis.angle_rad)
        good = bool(ok[k] and ok[k + 1] and icr is not None and step >= MIN_ICR_STEP_DEG)
        out.append({"moment_from_Nm": moments[k], "moment_to_Nm": moments[k + 1],
                    "phi_y_deg": math.degrees(Q[k + 1, 4] - q_u[4]), "step_deg": step,
                    "ap_mm": (icr[0] - c6[0]) if good else float("nan"),
                    "si_mm": (icr[1] - c6[2]) if good else float("nan"), "converged": good})
    return pd.DataFrame(out)


def anderst_comparison(model, *, extension_Nm: float = 1.8, flexion_Nm: float = 1.8,
                       steps: int = 36) -> pd.DataFrame:
    """The model's mean sagittal ICR along flexion-extension against Anderst et al. 2013
    (Table 2, C5/C6; validation only, SOURCES.md §5).

    The model's mean weights each step by its rotation (a mean per degree of motion; how
    Anderst et al. averaged over their frames is not available to us). Also the ICR of the
    whole motion: the one helical axis from the extended to the flexed pose.

    Returns
    -------
    DataFrame
        direction (``superior-inferior``, ``anterior-posterior``), model_mean_mm,
        model_min_mm, model_max_mm (over the steps), model_whole_motion_mm, anderst_mean_mm,
        anderst_ci_low_mm, anderst_ci_high_mm, within_ci, difference_mm (model mean -
        Anderst mean).
    """
    from segment.core.conventions import IsbFrames

    frames = IsbFrames.from_ligaments()
    path = icr_path(model, extension_Nm=extension_Nm, flexion_Nm=flexion_Nm, steps=steps,
                    frames=frames)
    good = path[path["converged"]]
    if good.empty:
        raise ValueError("no converged step of the flexion-extension path")
    w = good["step_deg"].to_numpy()
    _, Q, ok = _fe_path(model, extension_Nm, flexion_Nm, 1)
    whole = None
    if ok.all():
        Rs, ps = _poses(model, Q[[0, -1]])
        axis = finite_helical_axis(Rs[0], ps[0], Rs[1], ps[1])
        icr = None if axis is None else sagittal_icr(axis, plane_y_mm=frames.centroid_c6[1])
        if icr is not None:
            whole = (icr[0] - frames.centroid_c6[0], icr[1] - frames.centroid_c6[2])
    rows = []
    for direction, col, key, idx in (("superior-inferior", "si_mm", "si", 1),
                                     ("anterior-posterior", "ap_mm", "ap", 0)):
        mean = float(np.sum(w * good[col]) / np.sum(w))
        lo, hi = ANDERST2013_C5C6[f"{key}_ci_mm"]
        rows.append({"direction": direction, "model_mean_mm": mean,
                     "model_min_mm": float(good[col].min()),
                     "model_max_mm": float(good[col].max()),
                     "model_whole_motion_mm": float("nan") if whole is None else float(whole[idx]),
                     "anderst_mean_mm": ANDERST2013_C5C6[f"{key}_mean_mm"],
                     "anderst_ci_low_mm": lo, "anderst_ci_high_mm": hi,
                     "within_ci": bool(lo <= mean <= hi),
                     "difference_mm": mean - ANDERST2013_C5C6[f"{key}_mean_mm"]})
    return pd.DataFrame(rows)
