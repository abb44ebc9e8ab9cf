"""Which failure limits a pose is past: ligaments beyond eps_max and dislocated facets.

One concept: the check that turns a numerically converged equilibrium into
``CONVERGED_BEYOND_LIMITS`` (:class:`segment.core.status.Status`): a ligament strip stretched
past eps_max, the strain of point C of DETC2000/MECH-6821 Table 3, or a facet joint whose
contact regime is ``dislocated`` (:mod:`segment.elements.contact`, item 9). The same contact
evaluation gives the facet contact force magnitudes (the residual's facet term), which
:mod:`segment.studies.sets` reports.
"""

from __future__ import annotations

import math

import numpy as np

from segment.elements.contact import DISLOCATED, end_face_contact
from segment.elements.facet import end_face_force
from segment.elements.tangent import (
    F_BLEND,
    F_C1,
    F_C2,
    F_N1,
    F_N2,
    F_R1,
    F_R2,
    F_SCALE,
    G_LAW,
    G_R0,
    G_S0,
    L_A,
    L_B,
    L_EPS,
    L_F,
    L_L0,
    joint_axes,
    rows3,
)
from segment.elements.vec import add, dot, mat_vec, sub
from segment.jit import njit

__all__: list[str] = []


@njit
def beyond_limits(q, packed, lig_out, fac_out):
    """Mark the failure limits at ``q``; returns True when any is reached.

    ``lig_out[i]``: ligament i past eps_max, the strain of point C (Table 3); ``fac_out[j]``:
    facet j dislocated (regime ``dislocated`` of :mod:`segment.elements.contact`, item 9). A
    strip row that carries nothing (F_max = 0: cut through surgically or ruptured) is never
    flagged here: a cut strip is no failure, and a ruptured one is flagged by the caller
    (:func:`segment.core.solve.solve_checked`, ``Segment.ruptured``).
    """
    return limits_and_facet_forces(q, packed, lig_out, fac_out,
                                    np.empty(packed[2].shape[0]))


@njit
def limits_and_facet_forces(q, packed, lig_out, fac_out, force_out):
    """:func:`beyond_limits`, and the contact force magnitude [N] of each facet joint into
    ``force_out`` from the same contact evaluation (the residual's facet term: the force of
    the penetration ``u``, zero when apart)."""
    glob, lig, fac = packed[0], packed[1], packed[2]
    R0 = ((glob[G_R0], glob[G_R0 + 1], glob[G_R0 + 2]),
          (glob[G_R0 + 3], glob[G_R0 + 4], glob[G_R0 + 5]),
          (glob[G_R0 + 6], glob[G_R0 + 7], glob[G_R0 + 8]))
    law = (glob[G_LAW], glob[G_LAW + 1], glob[G_LAW + 2], glob[G_LAW + 3])
    R, _, _ = joint_axes(q, R0)
    p = add((glob[G_S0], glob[G_S0 + 1], glob[G_S0 + 2]), mat_vec(R0, (q[0], q[1], q[2])))
    any_flag = False
    for i in range(lig.shape[0]):
        d = sub(rows3(lig, i, L_B), add(p, mat_vec(R, rows3(lig, i, L_A))))
        strain = (math.sqrt(dot(d, d)) - lig[i, L_L0]) / lig[i, L_L0]
        lig_out[i] = strain > lig[i, L_EPS + 2] and lig[i, L_F + 2] != 0.0
        any_flag = any_flag or lig_out[i]
    zc = 0j
    for i in range(fac.shape[0]):
        c = add(p, mat_vec(R, rows3(fac, i, F_C1)))
        n = mat_vec(R, rows3(fac, i, F_N1))
        c2 = rows3(fac, i, F_C2)
        n2 = rows3(fac, i, F_N2)
        u, _, _, regime, _, _, _ = end_face_contact(
            (c[0] + zc, c[1] + zc, c[2] + zc), (n[0] + zc, n[1] + zc, n[2] + zc),
            fac[i, F_R1], (c2[0] + zc, c2[1] + zc, c2[2] + zc),
            (n2[0] + zc, n2[1] + zc, n2[2] + zc), fac[i, F_R2], fac[i, F_BLEND], law[3] > 0.5)
        force_out[i] = (end_face_force(u, law)[0].real * fac[i, F_SCALE] if u.real > 0.0
                        else 0.0)
        fac_out[i] = regime == DISLOCATED
        any_flag = any_flag or fac_out[i]
    return any_flag
