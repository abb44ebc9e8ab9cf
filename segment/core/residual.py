"""The residual of C5's equations and its Jacobian, as compiled kernels on packed arrays.

``residual(q, load) = Q(q) + f`` sums the generalized forces of the disc (eq. (1), Table 2), the
ligaments (Tables 3-4) and the facet contacts at the joint coordinates ``q`` with the applied
load ``f`` (see :mod:`segment.core.model` for the conventions and the two implementations). These
kernels need only the force elements and their packing (:mod:`segment.elements.tangent`), so that
both the :class:`~segment.core.model.Segment` and the Newton iteration (:mod:`segment.core.newton`)
can use them without importing each other.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from segment.jit import njit

if TYPE_CHECKING:
    pass

from segment.elements.disc import add_disc_force
from segment.elements.facet import facet_state
from segment.elements.kinematics import add_load, add_point_force, pose_and_axes
from segment.elements.ligament import ligament_state
from segment.elements.restraint import restraint_state
from segment.elements.tangent import residual_tangent
from segment.elements.vec import scale

COMPLEX_STEP = 1e-20
"""Imaginary step of the complex-step reference Jacobian (exact to rounding for any tiny h)."""


# ---------------------------------------------------------------- kernels
@njit
def _generalized_force(q, load, params):
    """Residual at complex ``q`` (6,): internal generalized forces plus the load."""
    (s0, r0, k_pos, k_neg, lig_a, lig_b, lig_l0, lig_eps, lig_f,
     fac_c1, fac_n1, fac_r1, fac_c2, fac_n2, fac_r2, fac_blend, law, pts, fac_scale,
     disc_law) = params
    Q = np.zeros(6, dtype=np.complex128)
    p, R, R0, h1, h2, h3 = pose_and_axes(q, s0, r0)
    add_disc_force(Q, q, k_pos, k_neg, disc_law)
    for i in range(lig_l0.shape[0]):
        a, _, _, _, force = ligament_state(i, p, R, lig_a, lig_b, lig_l0, lig_eps, lig_f)
        add_point_force(Q, a, force, p, R0, h1, h2, h3)
    for i in range(fac_r1.shape[0]):
        st = facet_state(i, p, R, fac_c1, fac_n1, fac_r1, fac_c2, fac_n2, fac_r2, fac_blend,
                          law)
        add_point_force(Q, st[1], scale(fac_scale[i], st[8]), p, R0, h1, h2, h3)
    for i in range(pts.shape[0]):
        x, force = restraint_state(i, p, R, pts)
        add_point_force(Q, x, force, p, R0, h1, h2, h3)
    add_load(Q, load, r0, h1, h2, h3)
    return Q


@njit
def predict_row(q_u, k_inv, f, out):
    """``out = q_u - K_u^-1 f`` in a fixed order; zeros when not finite (the linear start)."""
    ok = True
    for i in range(6):
        acc = 0.0
        for j in range(6):
            acc += k_inv[i, j] * f[j]
        out[i] = q_u[i] - acc
        ok = ok and math.isfinite(out[i])
    if not ok:
        for i in range(6):
            out[i] = 0.0


@njit
def residual_real(q, load, packed):
    """Residual (6,) at real ``q`` (the real-arithmetic kernel of :mod:`segment.elements.tangent`;
    ``packed`` = ``Segment._packed``)."""
    return residual_tangent(q, load, packed, False)[0]


@njit
def residual_jacobian(q, load, packed):
    """Residual (6,) and its exact Jacobian (6, 6) (:mod:`segment.elements.tangent`; ``packed`` =
    ``Segment._packed``)."""
    return residual_tangent(q, load, packed, True)


@njit
def residual_jacobian_complex_step(q, load, params):
    """Residual and Jacobian by six complex-step evaluations of the whole segment.

    The independent reference for :func:`residual_jacobian` (tests), and what the solver
    used before the real-arithmetic kernel.
    """
    r = np.empty(6)
    J = np.empty((6, 6))
    qc = np.empty(6, dtype=np.complex128)
    for j in range(6):
        for k in range(6):
            qc[k] = q[k]
        qc[j] += 1j * COMPLEX_STEP
        Q = _generalized_force(qc, load, params)
        for k in range(6):
            J[k, j] = Q[k].imag / COMPLEX_STEP
        if j == 0:
            for k in range(6):
                r[k] = Q[k].real
    return r, J


@njit
def _element_state(q, params):
    """Per-element quantities at real ``q`` (see :meth:`Segment.state`): disc, ligament,
    facet and point-restraint rows."""
    (s0, r0, k_pos, k_neg, lig_a, lig_b, lig_l0, lig_eps, lig_f,
     fac_c1, fac_n1, fac_r1, fac_c2, fac_n2, fac_r2, fac_blend, law, pts, fac_scale,
     disc_law) = params
    qc = q.astype(np.complex128)
    p, R, _, _, _, _ = pose_and_axes(qc, s0, r0)
    disc = np.zeros(6, dtype=np.complex128)
    add_disc_force(disc, qc, k_pos, k_neg, disc_law)
    n = lig_l0.shape[0]
    lig = np.empty((n, 9))  # length, strain, tension, a (3), force (3)
    for i in range(n):
        a, length, strain, tension, force = ligament_state(i, p, R, lig_a, lig_b, lig_l0,
                                                            lig_eps, lig_f)
        lig[i, 0] = length.real
        lig[i, 1] = strain.real
        lig[i, 2] = tension.real
        for k in range(3):
            lig[i, 3 + k] = a[k].real
            lig[i, 6 + k] = force[k].real
    m = fac_r1.shape[0]
    fac = np.empty((m, 15))  # u, weight, sin_a, magnitude, regime, case, point, dir, force
    for i in range(m):
        u, point, direction, regime, case, weight, sin_a, mag, force = facet_state(
            i, p, R, fac_c1, fac_n1, fac_r1, fac_c2, fac_n2, fac_r2, fac_blend, law)
        fac[i, 0] = max(u.real, 0.0)
        fac[i, 1] = weight.real
        fac[i, 2] = sin_a.real
        fac[i, 3] = mag.real * fac_scale[i]
        fac[i, 4] = regime
        fac[i, 5] = case
        for k in range(3):
            fac[i, 6 + k] = point[k].real
            fac[i, 9 + k] = direction[k].real
            fac[i, 12 + k] = force[k].real * fac_scale[i]
    k = pts.shape[0]
    res = np.empty((k, 6))  # C5 point (3), force on C5 (3), both in C6
    for i in range(k):
        x, force = restraint_state(i, p, R, pts)
        for j in range(3):
            res[i, j] = x[j].real
            res[i, 3 + j] = force[j].real
    return disc.real, lig, fac, res
