"""Residual and tangent stiffness (the Jacobian d residual / d q) in real arithmetic.

This is the fast path of the Newton solver. It computes the same residual as
:func:`segment.core.residual._generalized_force` and its exact Jacobian:

* **pose** (DETC2000/MECH-6821 "Basic Model Parameters", see :mod:`segment.elements.kinematics`):
  with
  ``R = R0 Rx Ry Rz`` and the joint axes ``h1 = R0 ex``, ``h2 = R0 Rx ey``,
  ``h3 = R0 Rx Ry ez``, a translation ``q_j`` (j < 3) moves every C5 point by ``g_j = R0 e_j``
  and a rotation ``phi_k`` turns it about ``h_k`` through the C5 origin
  (``dx/dphi_k = h_k x (x - p)``, ``dR/dphi_k = [h_k]x R``); the axes turn with the earlier
  rotations (``dh_m/dphi_k = h_k x h_m`` for k < m, else 0).
* **point force** ``f`` at ``x`` with arm ``a = x - p`` maps to ``Q_t = R0^T f``,
  ``Q_k = h_k . (a x f)``, so column j of its Jacobian is ``R0^T df_j`` and
  ``dh_k,j . (a x f) + h_k . (da_j x f + a x df_j)`` with ``da_j = dx_j - dp_j``.
* **disc** (eq. 1, Table 2): the diagonal ``-k_i(q_i)``; a coordinate on another law of
  :mod:`segment.elements.disc` (neutral zone, fw35) contributes ``-dM/dq_i`` of that law.
* **ligaments** (Tables 3, 4): ``f = T(l) u`` with ``u = (b - a)/l``, so
  ``df = -(T'(l) u u^T + T/l (I - u u^T)) da`` with ``T' = dT/deps / l0`` (the slope of the
  branch the strain selects: the trilinear kinks are kept, one-sided as in the paper's law).
* **facets** (the cylinder paper's regularized contact, :mod:`segment.elements.facet`): the contact
  point and force come out of a long chain of case logic, so their directional derivatives
  come from forward-mode dual numbers (:mod:`segment.elements.facet_dual`, the contact kernel
  evaluated on a value and five derivatives), fed with the exact first-order motion of the C5
  facet disc (centre and normal) for each column of q. Translations move only the centre; the
  motion of the rotation columns is a combination of the three centre directions and two
  directions of the normal (the disc is symmetric about its normal), so one dual evaluation
  with five directions per facet gives the contact and all six columns. A facet that is apart
  (penetration <= 0) exerts no force and has a zero Jacobian (the contact law and its slope
  vanish there). The residual alone evaluates the complex kernel of :mod:`segment.elements.facet`
  with zero imaginary parts.

Branches are chosen as in the complex kernel (on the values), so both kernels agree to
rounding (the one exception, exactly parallel facet faces, is described in
:mod:`segment.elements.facet_dual`). ``tests/test_tangent.py`` checks that against the complex-step
Jacobian of the whole segment, and ``tests/test_model.py`` against central differences in
every contact regime.
"""

from __future__ import annotations

import math

import numpy as np

from segment.elements.contact import end_face_contact
from segment.elements.disc import DISC_LAW_WIDTH, disc_restoring
from segment.elements.dual import const, vscale
from segment.elements.facet import end_face_force
from segment.elements.facet_dual import contact_dual, contact_force_dual
from segment.elements.ligament import trilinear
from segment.elements.restraint import P_K, P_WIDTH, restraint_state
from segment.elements.vec import add, cross, dot, mat_vec, scale, sub
from segment.jit import njit

__all__ = ["pack", "residual_tangent"]


# ---------------------------------------------------------------- packed parameters
# The fast path takes the model as three arrays instead of the 17 of ``Segment._params``:
# passing and unpacking a tuple of 17 arrays (reference counting of each) cost ~0.6 us per
# kernel call, half of a residual evaluation (benchmarks/bench_kernels.py: residual 1.3 ->
# 0.67 us, residual and Jacobian 1.8 -> 1.1 us). Column offsets:
G_S0, G_R0, G_K_POS, G_K_NEG, G_LAW = 0, 3, 12, 18, 24   # glob: R0 row-major
G_DISC = 28       # the disc law of each coordinate: 6 rows of (code, 3 slots), row-major
G_WIDTH = G_DISC + 6 * DISC_LAW_WIDTH                      # glob (52,)
L_A, L_B, L_L0, L_EPS, L_F = 0, 3, 6, 7, 10                # lig (n, 13): one row per ligament
F_C1, F_N1, F_R1, F_C2, F_N2, F_R2, F_BLEND = 0, 3, 6, 7, 10, 13, 14   # fac (m, 16)
F_SCALE = 15          # contact_scale of FacetJoint (1 = the published law), appended last
L_WIDTH, F_WIDTH = L_F + 3, F_SCALE + 1


def pack(params):
    """``Segment._params`` (20 arrays) -> the packed ``(glob, lig, fac, pts)`` of this module.

    ``lig`` rows: C5 insertion (C5 frame), C6 insertion (C6 frame), l0, the three strains
    and the three forces of the trilinear law; ``fac`` rows: C5 facet centre and normal (C5
    frame) and radius, C6 facet centre and normal (C6 frame) and radius, blend constant C,
    contact scale (the remaining area fraction of a resected facet, 1 for the published one);
    ``pts`` rows: the point restraints of :mod:`segment.elements.restraint` (C5 point, C6
    point, stiffness; zero rows for a model without a device), appended last so that the
    first three entries keep their layout.
    """
    (s0, r0, k_pos, k_neg, lig_a, lig_b, lig_l0, lig_eps, lig_f,
     fac_c1, fac_n1, fac_r1, fac_c2, fac_n2, fac_r2, fac_blend, law, pts, fac_scale,
     disc_law) = params
    glob = np.concatenate([s0, np.asarray(r0).ravel(), k_pos, k_neg, law,
                           np.asarray(disc_law).ravel()])
    lig = np.column_stack([lig_a, lig_b, lig_l0, lig_eps, lig_f]).reshape(-1, L_WIDTH)
    fac = np.column_stack([fac_c1, fac_n1, fac_r1, fac_c2, fac_n2, fac_r2,
                           fac_blend, fac_scale]).reshape(-1, F_WIDTH)
    return (np.ascontiguousarray(glob, dtype=float), np.ascontiguousarray(lig, dtype=float),
            np.ascontiguousarray(fac, dtype=float),
            np.ascontiguousarray(np.asarray(pts, dtype=float).reshape(-1, P_WIDTH)))


@njit
def rows3(a, i, k):
    """``(a[i, k], a[i, k + 1], a[i, k + 2])``."""
    return (a[i, k], a[i, k + 1], a[i, k + 2])


@njit
def joint_axes(q, R0):
    """``R`` (C5 -> C6), the columns ``g`` of R0 and the joint axes ``h`` = (h1, h2, h3).

    ``R0`` is the reference rotation as a tuple of row tuples; R is returned the same way.
    """
    cx, sx = math.cos(q[3]), math.sin(q[3])
    cy, sy = math.cos(q[4]), math.sin(q[4])
    cz, sz = math.cos(q[5]), math.sin(q[5])
    # columns of R0 Rx: (R0 ex, R0 (0, cx, sx), R0 (0, -sx, cx))
    g0 = (R0[0][0], R0[1][0], R0[2][0])
    g1 = (R0[0][1], R0[1][1], R0[2][1])
    g2 = (R0[0][2], R0[1][2], R0[2][2])
    a1 = add(scale(cx, g1), scale(sx, g2))           # R0 Rx ey = h2
    a2 = sub(scale(cx, g2), scale(sx, g1))           # R0 Rx ez
    # columns of R0 Rx Ry: (cy g0 - sy a2, a1, sy g0 + cy a2)
    b0 = sub(scale(cy, g0), scale(sy, a2))
    b2 = add(scale(sy, g0), scale(cy, a2))           # R0 Rx Ry ez = h3
    # columns of R = R0 Rx Ry Rz: (cz b0 + sz a1, -sz b0 + cz a1, b2)
    c0 = add(scale(cz, b0), scale(sz, a1))
    c1 = sub(scale(cz, a1), scale(sz, b0))
    R = ((c0[0], c1[0], b2[0]), (c0[1], c1[1], b2[1]), (c0[2], c1[2], b2[2]))
    return R, (g0, g1, g2), (g0, a1, b2)


@njit
def _add_point_force_jacobian(r, J, f, a, df, da, g, h):
    """Add a point force's generalized force to ``r`` and its Jacobian columns to ``J``.

    ``f`` (3,), ``a`` = point - p (3,) in C6; ``df[j]``, ``da[j]`` their derivatives by q_j
    (arrays (6, 3)); ``g`` the columns of R0, ``h`` the joint axes.
    """
    m = cross(a, f)
    for k in range(3):
        r[k] += dot(g[k], f)
        r[3 + k] += dot(h[k], m)
    for j in range(6):
        dfj = (df[j, 0], df[j, 1], df[j, 2])
        daj = (da[j, 0], da[j, 1], da[j, 2])
        dm = add(cross(daj, f), cross(a, dfj))
        for k in range(3):
            J[k, j] += dot(g[k], dfj)
            J[3 + k, j] += dot(h[k], dm)
    # the axes turn with the earlier rotations: dh_m / dphi_k = h_k x h_m (k < m)
    for k in range(3):
        for mm in range(k + 1, 3):
            J[3 + mm, 3 + k] += dot(cross(h[k], h[mm]), m)


@njit
def _material_motion(a, g, h, dx):
    """Rows j of ``dx``: the motion d x / d q_j of a C5 point with arm ``a`` (= x - p)."""
    for j in range(3):
        for k in range(3):
            dx[j, k] = g[j][k]
        v = cross(h[j], a)
        for k in range(3):
            dx[3 + j, k] = v[k]


@njit
def _facet_jacobian_terms(c, n, r1, c2, n2, r2, blend, law, p, g, h, df, da):
    """Force on C5, contact point and their q-derivatives for one facet (see module doc).

    ``c``, ``n``: centre and normal of the C5 facet disc in C6 (real tuples). Fills ``df`` and
    ``da`` (arrays (6, 3)); returns ``(force, point, in_contact)``.
    """
    # five basis motions, carried as the five derivative slots of one dual evaluation: the
    # centre along the three columns of R0 (= translations q_0..2), and the normal along two
    # unit vectors t1, t2 perpendicular to it
    t1 = cross(n, g[0])
    if dot(t1, t1) < 0.25:
        t1 = cross(n, g[1])
    t1 = scale(1.0 / math.sqrt(dot(t1, t1)), t1)
    t2 = cross(n, t1)
    cd = ((c[0], g[0][0], g[1][0], g[2][0], 0.0, 0.0),
          (c[1], g[0][1], g[1][1], g[2][1], 0.0, 0.0),
          (c[2], g[0][2], g[1][2], g[2][2], 0.0, 0.0))
    nd = ((n[0], 0.0, 0.0, 0.0, t1[0], t2[0]),
          (n[1], 0.0, 0.0, 0.0, t1[1], t2[1]),
          (n[2], 0.0, 0.0, 0.0, t1[2], t2[2]))
    ud, pd, dd = contact_dual(cd, nd, r1, (const(c2[0]), const(c2[1]), const(c2[2])),
                               (const(n2[0]), const(n2[1]), const(n2[2])), r2,
                               const(blend), law[3] > 0.5)
    pt = (pd[0][0], pd[1][0], pd[2][0])
    if ud[0] <= 0.0:  # apart: no force, and the law's value and slope vanish
        return (0.0, 0.0, 0.0), pt, False
    fd = vscale(contact_force_dual(ud, law), dd)
    force = (fd[0][0], fd[1][0], fd[2][0])
    # translations: the centre moves by g_j; the contact point moves by slot j, p by g_j
    for j in range(3):
        for k in range(3):
            df[j, k] = fd[k][1 + j]
            da[j, k] = pd[k][1 + j] - g[j][k]
    # rotation phi_k: centre moves by h_k x (c - p), normal by h_k x n; p does not move. In
    # the five basis motions that is w = (g . dc, t1 . dn, t2 . dn)
    arm = sub(c, p)
    for kk in range(3):
        dc = cross(h[kk], arm)
        dn = cross(h[kk], n)
        w0, w1, w2 = dot(g[0], dc), dot(g[1], dc), dot(g[2], dc)
        w3, w4 = dot(t1, dn), dot(t2, dn)
        for k in range(3):
            fk = fd[k]
            pk = pd[k]
            df[3 + kk, k] = w0 * fk[1] + w1 * fk[2] + w2 * fk[3] + w3 * fk[4] + w4 * fk[5]
            da[3 + kk, k] = w0 * pk[1] + w1 * pk[2] + w2 * pk[3] + w3 * pk[4] + w4 * pk[5]
    return force, pt, True


@njit
def residual_tangent(q, load, packed, with_jacobian):
    """Residual (6,) and, when ``with_jacobian``, its Jacobian (6, 6) at real ``q``.

    ``packed`` is the ``(glob, lig, fac, pts)`` of :func:`pack`.
    """
    glob, lig, fac, pts = packed
    r = np.zeros(6)
    J = np.zeros((6, 6))
    R0 = ((glob[G_R0], glob[G_R0 + 1], glob[G_R0 + 2]),
          (glob[G_R0 + 3], glob[G_R0 + 4], glob[G_R0 + 5]),
          (glob[G_R0 + 6], glob[G_R0 + 7], glob[G_R0 + 8]))
    law = (glob[G_LAW], glob[G_LAW + 1], glob[G_LAW + 2], glob[G_LAW + 3])
    R, g, h = joint_axes(q, R0)
    p = add((glob[G_S0], glob[G_S0 + 1], glob[G_S0 + 2]), mat_vec(R0, (q[0], q[1], q[2])))
    # disc, eq. (1): Q_i = -k_i(q_i) q_i, or the coordinate's law (segment.elements.disc)
    for i in range(6):
        row = G_DISC + DISC_LAW_WIDTH * i
        if glob[row] == 0.0:
            k = glob[G_K_POS + i] if q[i] >= 0.0 else glob[G_K_NEG + i]
            r[i] -= k * q[i]
            J[i, i] -= k
        else:
            m, slope = disc_restoring(glob[row:row + DISC_LAW_WIDTH], q[i], glob[G_K_POS + i],
                                 glob[G_K_NEG + i])
            r[i] -= m
            J[i, i] -= slope
    df = np.zeros((6, 3))
    da = np.zeros((6, 3))
    # ligaments: tension-only trilinear law along the insertion line
    for i in range(lig.shape[0]):
        arm = mat_vec(R, rows3(lig, i, L_A))
        x = add(p, arm)
        d = sub(rows3(lig, i, L_B), x)
        length = math.sqrt(dot(d, d))
        if not length > 0.0:
            continue   # coincident insertions: eps = -1, slack (as in ligament.ligament_state)
        l0 = lig[i, L_L0]
        strain = (length - l0) / l0
        tension_c, slope = trilinear(strain + 0j, rows3(lig, i, L_EPS), rows3(lig, i, L_F))
        tension = tension_c.real
        if tension == 0.0 and slope == 0.0:
            continue   # slack
        u = scale(1.0 / length, d)
        f = scale(tension, u)
        if with_jacobian:
            _material_motion(arm, g, h, da)
            kl = slope / l0                 # dT/dl
            kt = tension / length
            for j in range(6):
                dx = (da[j, 0], da[j, 1], da[j, 2])
                ud = dot(u, dx)
                # df = -(kl u u^T + kt (I - u u^T)) dx
                for k in range(3):
                    df[j, k] = -(kl * u[k] * ud + kt * (dx[k] - u[k] * ud))
            for j in range(3):   # da = dx - dp: translations do not change the arm
                for k in range(3):
                    da[j, k] = 0.0
            _add_point_force_jacobian(r, J, f, arm, df, da, g, h)
        else:
            m = cross(arm, f)
            for k in range(3):
                r[k] += dot(g[k], f)
                r[3 + k] += dot(h[k], m)
    # facets: regularized cylinder end-face contact
    for i in range(fac.shape[0]):
        c = add(p, mat_vec(R, rows3(fac, i, F_C1)))
        n = mat_vec(R, rows3(fac, i, F_N1))
        c2 = rows3(fac, i, F_C2)
        n2 = rows3(fac, i, F_N2)
        r1, r2, blend = fac[i, F_R1], fac[i, F_R2], fac[i, F_BLEND]
        s_area = fac[i, F_SCALE]
        if with_jacobian:
            f, pt, touching = _facet_jacobian_terms(c, n, r1, c2, n2, r2, blend, law, p, g,
                                                    h, df, da)
            if touching:
                if s_area != 1.0:   # a resected facet: force and its slope times the area
                    f = scale(s_area, f)
                    for j in range(6):
                        for k in range(3):
                            df[j, k] *= s_area
                _add_point_force_jacobian(r, J, f, sub(pt, p), df, da, g, h)
        else:
            zc = 0j
            u, point, direction, _, _, _, _ = end_face_contact(
                (c[0] + zc, c[1] + zc, c[2] + zc), (n[0] + zc, n[1] + zc, n[2] + zc),
                r1, (c2[0] + zc, c2[1] + zc, c2[2] + zc),
                (n2[0] + zc, n2[1] + zc, n2[2] + zc), r2, blend, law[3] > 0.5)
            if u.real > 0.0:
                mag, _ = end_face_force(u, law)
                mr = mag.real * s_area
                f = (mr * direction[0].real, mr * direction[1].real, mr * direction[2].real)
                m = cross((point[0].real - p[0], point[1].real - p[1], point[2].real - p[2]),
                          f)
                for k in range(3):
                    r[k] += dot(g[k], f)
                    r[3 + k] += dot(h[k], m)
    # point restraints (segment.elements.restraint): f = -K (p + R a - b), df = -K dx
    for i in range(pts.shape[0]):
        x, f = restraint_state(i, p, R, pts)
        arm = sub(x, p)
        if with_jacobian:
            _material_motion(arm, g, h, da)
            for j in range(6):
                for k in range(3):
                    df[j, k] = -pts[i, P_K + k] * da[j, k]
            for j in range(3):   # translations do not change the arm
                for k in range(3):
                    da[j, k] = 0.0
            _add_point_force_jacobian(r, J, f, arm, df, da, g, h)
        else:
            m = cross(arm, f)
            for k in range(3):
                r[k] += dot(g[k], f)
                r[3 + k] += dot(h[k], m)
    # load: force through the C5 origin (Q_t = F), moment fixed in the joint frame
    r[0] += load[0]
    r[1] += load[1]
    r[2] += load[2]
    mc6 = mat_vec(R0, (load[3], load[4], load[5]))
    for k in range(3):
        r[3 + k] += dot(h[k], mc6)
    if with_jacobian:
        for k in range(3):
            for mm in range(k + 1, 3):
                J[3 + mm, 3 + k] += dot(cross(h[k], h[mm]), mc6)
    return r, J
