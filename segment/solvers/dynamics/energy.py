"""Energy bookkeeping of a simulation: the kinetic energy-work relation, eqs. (D2) and (55).

Fritzkowski and Walczak (2014, eqs. (49)-(55)) check an integration by the kinetic
energy-work relation written for a moving base: the kinetic energy relative to the base
``T2`` (the part of ``T = T0 + T1 + T2`` quadratic in the generalized velocities, eq. (49))
changes by the work ``W`` of all forces, the transport inertia forces of the moving base
included (eqs. (50)-(54))::

    T2(t) - T2(0) = W(t)                                                              (D2)

    W = W_load - [V_el(t) - V_el(0)] - [V_g(t) - V_g(0)] + W_facet - E_dissipated
        + W_transport - E_rupture

With C6 fixed, T2 is the kinetic energy and W_transport = 0. The paper's T2(0) = 0; we keep
``T2(0)`` for runs that start moving. The terms:

* ``V_el``: elastic energy of the disc (1/2 k(q_i) q_i^2, or its law's potential) and of the
  ligaments (l0 int F_el d eps), both state functions; ``V_g = M g z_G`` (gravity, with C5's and the
  payload's mass at their common centre of gravity);
* integrals carried alongside the motion (augmented state of the Radau path, trapezoidal sums
  over the steps of the LSV integrator): the work of the external load
  ``W_load = int Q_load . dq/dt dt``; the work of the facets' elastic forces
  ``W_facet = int Q_facet . dq/dt dt`` (the regularized contact pushes along a face normal that
  turns between the two faces' normals, through a blended point, so it is not the gradient of
  a potential; its work is integrated rather than written as an energy); the dissipated energy
  ``E_dissipated = -int Q_damping . dq/dt dt``; and the work of the transport inertia force
  ``W_transport = int -M a_b(t) . v_G dt`` (eq. (50), the paper's ``Q*``, with ``v_G`` the
  velocity of the centre of gravity relative to C6);
* ``E_rupture``: the elastic energy the ruptured strips held when they broke
  (l0 int_0^eps F_el d eps of the strip's curve): it leaves ``V_el`` at the rupture instant
  without doing work on C5 (released by the fracture).

Two relative errors are reported, labelled apart:

* ``e_R`` of eq. (55), exactly as published: ``e_R(t) = |T2(t) - T2(0) - W(t)| / T2,max``
  with ``T2,max`` the largest T2 of the run. We take the maximum of T2 and of the mismatch
  over every accepted integrator step (Radau: the step ends of its dense output; LSV: every
  step), not only over the output times: a long run sampled coarsely would otherwise miss the
  short initial swing of T2 (a 100 s step response sampled every 0.5 s underestimated T2,max
  by orders of magnitude and reported e_R = 3e5 for a correct run). Frame column
  ``e_R_eq55``, result attribute ``e_R``.
* relative to the energy that flowed (our earlier measure): the same mismatch over ``E_ref``,
  the largest magnitude over the history of any term of the balance (T2, W_load,
  V_el - V_el(0), V_g - V_g(0), W_facet, E_dissipated, W_transport). It is never larger than
  e_R and is the better scale for a heavily damped step response, whose kinetic energy stays
  small while much energy flows through the damping. Frame column ``energy_error``, result
  attribute ``energy_error``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from segment.elements.disc import DOF_NAMES
from segment.elements.kinematics import rotation_x, rotation_y, rotation_z
from segment.solvers.dynamics.base import G_MM_S2
from segment.solvers.dynamics.bodies import B_M
from segment.solvers.dynamics.equations import _rigid_body
from segment.solvers.dynamics.forces import _element_forces

__all__: list[str] = []

W_LOAD, W_FACET, E_DISS, W_TRANSPORT = 12, 13, 14, 15
"""Columns of the energy integrals in a state row (after q and dq/dt)."""


def _base_columns(frame, base, R0) -> pd.DataFrame:
    """The motion in space, after the rates: C6's acceleration [g], velocity and displacement
    from t = 0, and C5's origin's velocity and displacement from t = 0 [mm/s, mm] (C6 only
    translates, so C5's rotation in space is its rotation relative to C6)."""
    if frame.empty or base is None:
        return frame
    t = frame["t_s"].to_numpy()
    a_b, v_b, x_b = base.acceleration(t), base.velocity(t), base.displacement(t)
    p = frame[["x_mm", "y_mm", "z_mm"]].to_numpy() @ np.asarray(R0).T   # p - s0, C6 axes
    v = frame[["dx_mm_per_s", "dy_mm_per_s", "dz_mm_per_s"]].to_numpy() @ np.asarray(R0).T
    cols = {}
    for i, c in enumerate("xyz"):
        cols[f"c6_a{c}_g"] = a_b[:, i] / G_MM_S2
    for i, c in enumerate("xyz"):
        cols[f"c6_space_v{c}_mm_per_s"] = v_b[:, i]
    for i, c in enumerate("xyz"):
        cols[f"c6_space_d{c}_mm"] = x_b[:, i]
    for i, c in enumerate("xyz"):
        cols[f"c5_space_v{c}_mm_per_s"] = v_b[:, i] + v[:, i]
    for i, c in enumerate("xyz"):
        cols[f"c5_space_d{c}_mm"] = x_b[:, i] + p[:, i] - p[0, i]
    at = list(frame.columns).index("dphi_z_deg_per_s") + 1
    return pd.concat([frame.iloc[:, :at], pd.DataFrame(cols, index=frame.index),
                      frame.iloc[:, at:]], axis=1)


def _energy_terms(q, qd, f, params, disc_b, lig_b, fac_b, body, grav, elements, Q, lig, fac):
    """(T2, V_el, V_fac, V_g) [N mm] at one state; fills ``Q``, ``lig``, ``fac`` as
    :func:`~segment.solvers.dynamics.forces._element_forces` does."""
    v_el, v_fac = _element_forces(q, qd, f, params, disc_b, lig_b, fac_b, elements, True,
                                  Q, lig, fac)
    M, _, _, r, _, _ = _rigid_body(q, qd, params[1], body)
    p_z = params[0][2] + params[1][2] @ q[:3]
    return 0.5 * qd @ M @ qd, v_el, v_fac, body[B_M] * grav * (p_z + r[2])


def _step_balance(t, Y, load_fn, params, disc_b, lig_b, fac_b, body, grav, elements,
                  released, start):
    """T2 and the mismatch T2 - T2(0) - W of eq. (D2) at the states ``Y`` (e.g. every
    accepted step of an integrator); ``start`` = (T2, V_el, V_g, E_rupture) at t = 0."""
    n, m = params[6].shape[0], params[11].shape[0]
    Q, lig, fac = np.empty((5, 6)), np.zeros((n, 4)), np.zeros((m, 4))
    T = np.empty(len(t))
    mismatch = np.empty(len(t))
    for k in range(len(t)):
        q, qd = Y[k, :6], Y[k, 6:12]
        T[k], v_el, _, v_g = _energy_terms(q, qd, load_fn(t[k]), params, disc_b, lig_b, fac_b,
                                           body, grav, elements, Q, lig, fac)
        work = (Y[k, W_LOAD] - (v_el - start[1]) - (v_g - start[2]) + Y[k, W_FACET]
                - Y[k, E_DISS] + Y[k, W_TRANSPORT] - (released - start[3]))
        mismatch[k] = T[k] - start[0] - work
    return T, mismatch


def _history_rows(model, t, Y, load_fn, params, disc_b, lig_b, fac_b, body, grav, elements,
                  released):
    """One dict per output time: q, rates, load, element forces, energy terms [N mm];
    ``released`` is the elastic energy freed by ruptures before these times."""
    n, m = len(model.strip_names), len(model.facets)
    Q = np.empty((5, 6))
    lig = np.zeros((n, 4))
    fac = np.zeros((m, 4))
    rows = []
    for k in range(len(t)):
        q, qd = Y[k, :6], Y[k, 6:12]
        f = load_fn(t[k])
        T2, v_el, v_fac, v_g = _energy_terms(q, qd, f, params, disc_b, lig_b, fac_b, body, grav,
                                             elements, Q, lig, fac)
        row_ = {"t_s": t[k]}
        for j, name in enumerate(DOF_NAMES):
            row_[f"{name}_mm" if j < 3 else f"{name}_deg"] = q[j] if j < 3 else np.degrees(q[j])
        for j, name in enumerate(DOF_NAMES):
            row_[f"d{name}_mm_per_s" if j < 3 else f"d{name}_deg_per_s"] = (
                qd[j] if j < 3 else np.degrees(qd[j]))
        for j, name in enumerate(("Fx_N", "Fy_N", "Fz_N", "Mx_Nmm", "My_Nmm", "Mz_Nmm")):
            row_[f"load_{name}"] = f[j]
        for j, name in enumerate(DOF_NAMES):
            unit = "N" if j < 3 else "Nmm"
            row_[f"disc_{name}_{unit}"] = Q[0, j]
        for i, name in enumerate(model.strip_names):
            row_[f"{name}_tension_N"] = lig[i, 3]
            row_[f"{name}_length_mm"] = lig[i, 0]
        for i, fc in enumerate(model.facets):
            row_[f"facet_{fc.side}_force_N"] = fac[i, 3]
            row_[f"facet_{fc.side}_penetration_mm"] = fac[i, 0]
        row_["kinetic_Nmm"] = T2
        row_["elastic_Nmm"] = v_el
        row_["facet_law_energy_Nmm"] = v_fac
        row_["gravity_potential_Nmm"] = v_g
        row_["work_load_Nmm"] = Y[k, W_LOAD]
        row_["work_facets_Nmm"] = Y[k, W_FACET]
        row_["dissipated_Nmm"] = Y[k, E_DISS]
        row_["work_transport_Nmm"] = Y[k, W_TRANSPORT]
        row_["rupture_energy_Nmm"] = released
        rows.append(row_)
    return rows


def _rotation_columns(frame) -> None:
    """Intervertebral rotation of C5 relative to C6 from the pose at t = 0: ``ivr_phi_y_deg``
    (the Cardan phi_y minus its start value: the sagittal-plane rotation while the motion stays
    in the sagittal plane; + flexion, - extension) and ``ivr_angle_deg`` (the angle of the
    relative rotation R(0)^T R(t), any axis, >= 0)."""
    if frame.empty:
        return
    ang = np.radians(frame[["phi_x_deg", "phi_y_deg", "phi_z_deg"]].to_numpy())
    R = [rotation_x(a) @ rotation_y(b) @ rotation_z(c) for a, b, c in ang]
    angle = [np.degrees(np.arccos(np.clip(0.5 * (np.trace(R[0].T @ r) - 1.0), -1.0, 1.0)))
             for r in R]
    frame["ivr_phi_y_deg"] = frame["phi_y_deg"] - frame["phi_y_deg"].iloc[0]
    frame["ivr_angle_deg"] = angle


def _energy_columns(frame, steps=None):
    """``work_total_Nmm``, ``energy_error`` (over E_ref) and ``e_R_eq55`` (eq. (55), over
    T2,max) of eq. (D2); returns (frame, max energy_error, max e_R).

    ``steps`` = (T2, mismatch) at every accepted step of the integrator (arrays), for T2,max
    and the largest mismatch between output times; None: the output times only.
    """
    if frame.empty:
        return frame, float("nan"), float("nan")
    _rotation_columns(frame)
    d_t = frame["kinetic_Nmm"] - frame["kinetic_Nmm"].iloc[0]
    work = (frame["work_load_Nmm"] - (frame["elastic_Nmm"] - frame["elastic_Nmm"].iloc[0])
            - (frame["gravity_potential_Nmm"] - frame["gravity_potential_Nmm"].iloc[0])
            + frame["work_facets_Nmm"] - frame["dissipated_Nmm"] + frame["work_transport_Nmm"]
            - (frame["rupture_energy_Nmm"] - frame["rupture_energy_Nmm"].iloc[0]))
    frame["work_total_Nmm"] = work
    mismatch = (d_t - work).abs()
    terms = pd.concat([frame["kinetic_Nmm"], frame["work_load_Nmm"],
                       frame["elastic_Nmm"] - frame["elastic_Nmm"].iloc[0],
                       frame["gravity_potential_Nmm"] - frame["gravity_potential_Nmm"].iloc[0],
                       frame["work_facets_Nmm"], frame["dissipated_Nmm"],
                       frame["work_transport_Nmm"]], axis=1)
    e_ref = float(terms.abs().to_numpy().max())          # E_ref, see the docstring
    t2_max = float(frame["kinetic_Nmm"].max())
    worst = float(mismatch.max())
    if steps is not None and len(steps[0]):
        t2_max = max(t2_max, float(np.max(steps[0])))
        worst = max(worst, float(np.max(np.abs(steps[1]))))
        e_ref = max(e_ref, float(np.max(steps[0])))
    frame["energy_error"] = mismatch / e_ref if e_ref > 0 else np.nan
    frame["e_R_eq55"] = mismatch / t2_max if t2_max > 0 else np.nan
    err = worst / e_ref if e_ref > 0 else float("nan")
    e_r = worst / t2_max if t2_max > 0 else float("nan")
    return frame, err, e_r
