"""Energy bookkeeping of a simulation: the kinetic energy-work relation, eq. (D2).

The kinetic energy-work relation of Fritzkowski and Walczak (their eqs. 51-55) is checked as::

    T(t) - T(0) = W(t),     e_R(t) = |T(t) - T(0) - W(t)| / E_ref                       (D2)

    W = W_load - [V_el(t) - V_el(0)] - [V_g(t) - V_g(0)] + W_facet - E_dissipated - E_rupture

with ``V_el`` the elastic energy of the disc (1/2 k(q_i) q_i^2) and the ligaments
(l0 int F_el d eps), both state functions; ``V_g = m g z_G``; and three integrals carried
alongside the motion (augmented state): the work of the external load
``W_load = int Q_load . dq/dt dt``, the work of the facets' elastic forces
``W_facet = int Q_facet . dq/dt dt`` (the regularized contact pushes along a face normal that
turns between the two faces' normals, through a blended point, so it is not the gradient of
a potential; its work is
integrated rather than written as an energy), and the dissipated energy
``E_dissipated = -int Q_damping . dq/dt dt``.

Normalisation (our decision). Fritzkowski and Walczak divide by the largest kinetic energy.
For a damped step response that is a poor scale: over a long run (``t_end = 100`` s) the
output times sample the short initial swing coarsely, the sampled peak of T can be orders of
magnitude below the true one, and a correct run reported e_R = 3e5. We divide instead by
``E_ref``, the largest magnitude over the history of any term of the balance (T, W_load,
V_el - V_el(0), V_g - V_g(0), W_facet, E_dissipated): the energy that actually flowed
through the system. It is never smaller than max T, so e_R is never larger than with the
paper's scale; for a free body (no load, no damping) both are the same.

``E_dissipated = -int Q_damping . dq/dt dt``. ``E_rupture`` is the elastic energy the
ruptured strips held when they broke (l0 int_0^eps_max F_el d eps of the strip's curve): it
leaves ``V_el`` at the rupture instant without doing work on C5 (released by the fracture).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from segment.elements.disc import DOF_NAMES
from segment.solvers.dynamics.equations import _rigid_body
from segment.solvers.dynamics.forces import _element_forces

__all__: list[str] = []


def _history_frame(model, t, Y, load_fn, params, disc_b, lig_b, fac_b, iner, grav, elements):
    """Element forces and the energy terms of eq. (D2) at each output time."""
    return _energy_columns(pd.DataFrame(_history_rows(model, t, Y, load_fn, params, disc_b,
                                                      lig_b, fac_b, iner, grav, elements,
                                                      0.0)))


def _history_rows(model, t, Y, load_fn, params, disc_b, lig_b, fac_b, iner, grav, elements,
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
        v_el, v_fac = _element_forces(q, qd, f, params, disc_b, lig_b, fac_b, elements, True,
                                      Q, lig, fac)
        M, _, _, r, _, _ = _rigid_body(q, qd, params[1], iner)
        p_z = params[0][2] + params[1][2] @ q[:3]
        row_ = {"t_s": t[k]}
        for j, name in enumerate(DOF_NAMES):
            unit = "mm" if j < 3 else "rad"
            row_[f"{name}_{unit}"] = q[j]
        for j, name in enumerate(DOF_NAMES):
            unit = "mm_s" if j < 3 else "rad_s"
            row_[f"d{name}_{unit}"] = qd[j]
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
        row_["kinetic_Nmm"] = 0.5 * qd @ M @ qd
        row_["elastic_Nmm"] = v_el
        row_["facet_law_energy_Nmm"] = v_fac
        row_["gravity_potential_Nmm"] = iner[0] * grav * (p_z + r[2])
        row_["work_load_Nmm"] = Y[k, 12]
        row_["work_facets_Nmm"] = Y[k, 13]
        row_["dissipated_Nmm"] = Y[k, 14]
        row_["rupture_energy_Nmm"] = released
        rows.append(row_)
    return rows


def _energy_columns(frame):
    """``work_total_Nmm`` and ``energy_error`` of eq. (D2); returns (frame, max error)."""
    if frame.empty:
        return frame, float("nan")
    d_t = frame["kinetic_Nmm"] - frame["kinetic_Nmm"].iloc[0]
    work = (frame["work_load_Nmm"] - (frame["elastic_Nmm"] - frame["elastic_Nmm"].iloc[0])
            - (frame["gravity_potential_Nmm"] - frame["gravity_potential_Nmm"].iloc[0])
            + frame["work_facets_Nmm"] - frame["dissipated_Nmm"]
            - (frame["rupture_energy_Nmm"] - frame["rupture_energy_Nmm"].iloc[0]))
    frame["work_total_Nmm"] = work
    terms = pd.concat([frame["kinetic_Nmm"], frame["work_load_Nmm"],
                       frame["elastic_Nmm"] - frame["elastic_Nmm"].iloc[0],
                       frame["gravity_potential_Nmm"] - frame["gravity_potential_Nmm"].iloc[0],
                       frame["work_facets_Nmm"], frame["dissipated_Nmm"]], axis=1)
    e_ref = float(terms.abs().to_numpy().max())          # E_ref of eq. (D2), see the docstring
    frame["energy_error"] = (d_t - work).abs() / e_ref if e_ref > 0 else np.nan
    err = float(frame["energy_error"].max()) if e_ref > 0 else float("nan")
    return frame, err


