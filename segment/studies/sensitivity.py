"""Exact sensitivities of the equilibrium to the parameters of the parameter space.

At an equilibrium ``R(q*, p) = 0`` the implicit function theorem gives::

    dq*/dp = -(dR/dq)^-1 dR/dp                                    (6 x D)

* ``dR/dq`` is the exact Jacobian of :mod:`segment.elements.tangent` (the solver's own).
* ``dR/dp`` is the directional derivative of the residual along each parameter, with the
  packed arrays' derivative ``d packed / dp_j`` from
  :meth:`segment.studies.space.ParameterSpace.pack_derivative` (compiled from the space's plan,
  :mod:`segment.studies.packing`; exact). Along that direction:

  - **disc**: the residual is linear in ``k`` (eq. 1), ``dR_i = -dk_i(q_i) q_i``, exact; a
    coordinate on another law (:mod:`segment.elements.disc`: neutral zone, fw35) by
    **complex step** through the law (its k+, k- and parameter slots along the direction),
    exact to rounding;
  - **ligaments**: rest length and force axis **analytically** (the trilinear law is linear in
    its forces on the branch the strain selects, and ``dT/dl0 = -slope l / l0^2``), one real
    evaluation per ligament for all directions; insertions or curve strains (not in the
    packaged space) by **complex step** through :func:`segment.elements.ligament.trilinear`;
  - **facets**, gap, inclination (centres and normals of the packed row) and the blending
    constant C: **forward-mode dual numbers** through
    :func:`segment.elements.facet_dual.contact_dual` (the solver's tangent kernel;
    ``end_face_contact`` line for line; C enters as a dual scalar), five directions per
    evaluation, exact;
  - **facet radius**: the contact is homogeneous of degree 1 in the lengths, so with equal
    radii the radius derivative is ``((u, x) - D_c(u, x)[c]) / r``, one more dual slot along
    the centres, exact (:func:`_facets_dual`); unequal radii (not in the packaged space) fall
    back to a central difference with step :data:`RADIUS_STEP_MM`.

  The load does not depend on p, so ``dR/dp`` does not depend on the load except through q*.
* At a kink of the published laws (disc sign switch, ligament slack or support points,
  contact onset) the derivative is the one-sided derivative of the branch the solution sits
  on, as the Jacobian is.

The kernels here serve both :func:`equilibrium_sensitivity` (one solve) and the parameter-set
kernel of :mod:`segment.studies.sets` (many sets x many loads, ``sensitivities=True``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from segment.core.lu6 import lu6_factor, lu6_solve
from segment.core.model import Segment
from segment.core.residual import residual_jacobian
from segment.elements.contact import end_face_contact
from segment.elements.disc import DISC_LAW_WIDTH, DOF_NAMES, disc_restoring
from segment.elements.dual import vscale
from segment.elements.facet import end_face_force
from segment.elements.facet_dual import contact_dual, contact_force_dual
from segment.elements.kinematics import add_point_force, pose_and_axes
from segment.elements.ligament import trilinear
from segment.elements.loads import Load
from segment.elements.tangent import (
    F_BLEND,
    F_C1,
    F_C2,
    F_N1,
    F_N2,
    F_R1,
    F_R2,
    F_SCALE,
    G_DISC,
    G_K_NEG,
    G_K_POS,
    G_LAW,
    G_R0,
    G_S0,
    L_A,
    L_B,
    L_EPS,
    L_F,
    L_L0,
)
from segment.elements.vec import add, cross, dot, mat_vec, norm, scale, sub
from segment.jit import njit
from segment.solvers.equilibrium import solve
from segment.studies.space import ParameterSpace, load_space

__all__ = ["Sensitivity", "equilibrium_sensitivity"]

COMPLEX_STEP = 1e-30
"""Imaginary step of the parameter directions (exact to rounding for any tiny step)."""
RADIUS_STEP_MM = 1e-5
"""Central-difference step of the facet radius direction [mm]."""


@njit
def _c3(a, i, k, da, d, h):
    """Complex 3-tuple ``a[i, k:k+3] + i h da[d, i, k:k+3]``."""
    return (complex(a[i, k], h * da[d, i, k]), complex(a[i, k + 1], h * da[d, i, k + 1]),
            complex(a[i, k + 2], h * da[d, i, k + 2]))


@njit
def _facet_q(Q, p, R, R0, h1, h2, h3, c1_c5, n1_c5, r1, c2, n2, r2, blend, law, s_area):
    """Add facet joint's generalized force (complex) to ``Q``; geometry as complex tuples;
    ``s_area`` the joint's contact scale (``F_SCALE``)."""
    c1 = add(p, mat_vec(R, c1_c5))
    n1 = mat_vec(R, n1_c5)
    u, point, direction, _, _, _, _ = end_face_contact(c1, n1, r1, c2, n2, r2, blend, law[3] > 0.5)
    if u.real > 0.0:
        mag, _ = end_face_force(u, law)
        add_point_force(Q, point, scale(mag * s_area, direction), p, R0, h1, h2, h3)


@njit
def _dv(a):
    """Dual vector (3 dual scalars of 6) from an array (3, 6)."""
    return ((a[0, 0], a[0, 1], a[0, 2], a[0, 3], a[0, 4], a[0, 5]),
            (a[1, 0], a[1, 1], a[1, 2], a[1, 3], a[1, 4], a[1, 5]),
            (a[2, 0], a[2, 1], a[2, 2], a[2, 3], a[2, 4], a[2, 5]))


@njit
def _facets_dual(q, packed, dfac, touch, p, R, R0, h1, h2, h3, law, n_lig, out):
    """Add the facets' centre/normal, blending-constant and radius directions to ``out``
    (6, D) by forward-mode dual numbers (:func:`segment.elements.facet_dual.contact_dual`, exact),
    five directions per call. C rides in a slot of its own like the geometry (one contact
    evaluation per facet for all its directions; a complex step through
    :func:`segment.elements.contact.end_face_contact` per direction and facet did the same work
    again).

    Radius: the contact (penetration, point) is homogeneous of degree 1 in the lengths (scale
    the C6 positions of both centres and both radii by s and it scales by s; normals, the
    force direction and the blend weight do not change), so with ``r1 = r2 = r``
    ``d(u, x)/dr = ((u, x) - D_c(u, x)[c]) / r`` where ``D_c[c]`` is the derivative along the
    centres themselves: one more dual slot, exact. (Radii that differ fall back to a central
    difference in the caller.)
    """
    fac = packed[2]
    pr = (p[0].real, p[1].real, p[2].real)
    Rr = ((R[0][0].real, R[0][1].real, R[0][2].real), (R[1][0].real, R[1][1].real,
                                                      R[1][2].real),
          (R[2][0].real, R[2][1].real, R[2][2].real))
    R0r = ((R0[0][0].real, R0[0][1].real, R0[0][2].real), (R0[1][0].real, R0[1][1].real,
                                                           R0[1][2].real),
           (R0[2][0].real, R0[2][1].real, R0[2][2].real))
    hr = ((h1[0].real, h1[1].real, h1[2].real), (h2[0].real, h2[1].real, h2[2].real),
          (h3[0].real, h3[1].real, h3[2].real))
    n_dir = dfac.shape[0]
    items = np.empty(n_dir + 1, dtype=np.int64)
    dc1 = np.zeros((3, 6))
    dn1 = np.zeros((3, 6))
    dc2 = np.zeros((3, 6))
    dn2 = np.zeros((3, 6))
    dbl = np.zeros(6)
    dQ = np.zeros(6)
    for i in range(fac.shape[0]):
        r1, r2 = fac[i, F_R1], fac[i, F_R2]
        n_items = 0
        radial = False
        for d in range(n_dir):
            flag = touch[d, 1 + n_lig + i]
            if flag & 5:        # centres/normals or C
                items[n_items] = d
                n_items += 1
            if (flag & 2) and r1 == r2 and dfac[d, i, F_R1] == dfac[d, i, F_R2]:
                radial = True
        if radial:
            items[n_items] = -1
            n_items += 1
        if n_items == 0:
            continue
        c1 = add(pr, mat_vec(Rr, (fac[i, F_C1], fac[i, F_C1 + 1], fac[i, F_C1 + 2])))
        n1 = mat_vec(Rr, (fac[i, F_N1], fac[i, F_N1 + 1], fac[i, F_N1 + 2]))
        c2 = (fac[i, F_C2], fac[i, F_C2 + 1], fac[i, F_C2 + 2])
        n2 = (fac[i, F_N2], fac[i, F_N2 + 1], fac[i, F_N2 + 2])
        start = 0
        while start < n_items:
            ns = min(5, n_items - start)
            dbl[0] = fac[i, F_BLEND]
            for s in range(1, 6):
                dbl[s] = 0.0
            for k in range(3):
                dc1[k, 0] = c1[k]
                dn1[k, 0] = n1[k]
                dc2[k, 0] = c2[k]
                dn2[k, 0] = n2[k]
                for s in range(1, 6):
                    dc1[k, s] = 0.0
                    dn1[k, s] = 0.0
                    dc2[k, s] = 0.0
                    dn2[k, s] = 0.0
            for s in range(ns):
                d = items[start + s]
                if d >= 0:
                    v1 = mat_vec(Rr, (dfac[d, i, F_C1], dfac[d, i, F_C1 + 1],
                                      dfac[d, i, F_C1 + 2]))
                    w1 = mat_vec(Rr, (dfac[d, i, F_N1], dfac[d, i, F_N1 + 1],
                                      dfac[d, i, F_N1 + 2]))
                    for k in range(3):
                        dc1[k, 1 + s] = v1[k]
                        dn1[k, 1 + s] = w1[k]
                        dc2[k, 1 + s] = dfac[d, i, F_C2 + k]
                        dn2[k, 1 + s] = dfac[d, i, F_N2 + k]
                    dbl[1 + s] = dfac[d, i, F_BLEND]
                else:   # the scaling direction: the centres themselves
                    for k in range(3):
                        dc1[k, 1 + s] = c1[k]
                        dc2[k, 1 + s] = c2[k]
            blend = (dbl[0], dbl[1], dbl[2], dbl[3], dbl[4], dbl[5])
            ud, pd, dd = contact_dual(_dv(dc1), _dv(dn1), r1, _dv(dc2), _dv(dn2), r2, blend,
                                       law[3] > 0.5)
            if ud[0] > 0.0:   # in contact (apart: force and its derivatives vanish)
                fd = vscale(contact_force_dual(ud, law), dd)
                s_area = fac[i, F_SCALE]
                if s_area != 1.0:   # a resected facet: the law times its area fraction
                    fd = ((fd[0][0] * s_area, fd[0][1] * s_area, fd[0][2] * s_area,
                           fd[0][3] * s_area, fd[0][4] * s_area, fd[0][5] * s_area),
                          (fd[1][0] * s_area, fd[1][1] * s_area, fd[1][2] * s_area,
                           fd[1][3] * s_area, fd[1][4] * s_area, fd[1][5] * s_area),
                          (fd[2][0] * s_area, fd[2][1] * s_area, fd[2][2] * s_area,
                           fd[2][3] * s_area, fd[2][4] * s_area, fd[2][5] * s_area))
                f = (fd[0][0], fd[1][0], fd[2][0])
                pt = (pd[0][0], pd[1][0], pd[2][0])
                arm = sub(pt, pr)
                slope = end_face_force(ud[0] + 0j, law)[1] * s_area
                for s in range(ns):
                    d = items[start + s]
                    dfs = (fd[0][1 + s], fd[1][1 + s], fd[2][1 + s])
                    dps = (pd[0][1 + s], pd[1][1 + s], pd[2][1 + s])
                    if d < 0:   # d/dr from the scaling identity (docstring)
                        dfs = ((slope * ud[0] * dd[0][0] - dfs[0]) / r1,
                               (slope * ud[0] * dd[1][0] - dfs[1]) / r1,
                               (slope * ud[0] * dd[2][0] - dfs[2]) / r1)
                        dps = ((pt[0] - dps[0]) / r1, (pt[1] - dps[1]) / r1,
                               (pt[2] - dps[2]) / r1)
                    dm = add(cross(dps, f), cross(arm, dfs))
                    for k in range(3):
                        dQ[k] = R0r[0][k] * dfs[0] + R0r[1][k] * dfs[1] + R0r[2][k] * dfs[2]
                        dQ[3 + k] = dot(hr[k], dm)
                    if d >= 0:
                        for k in range(6):
                            out[k, d] += dQ[k]
                    else:
                        for d2 in range(n_dir):
                            if (touch[d2, 1 + n_lig + i] & 2) and \
                                    dfac[d2, i, F_R1] == dfac[d2, i, F_R2]:
                                for k in range(6):
                                    out[k, d2] += dfac[d2, i, F_R1] * dQ[k]
            start += ns


@njit
def _residual_parameter_derivative(q, packed, dglob, dlig, dfac, touch, out):
    """``out[:, d]`` = dR/dp_d at real ``q`` (6,) for the D directions of ``dglob (D, 52)``,
    ``dlig (D, n, 13)``, ``dfac (D, m, 15)`` (see the module docstring); ``touch`` (D,
    1 + n + m) are the flags of :func:`touch_flags` (which elements each direction moves)."""
    glob, lig, fac = packed[0], packed[1], packed[2]
    h = COMPLEX_STEP
    n_dir = dglob.shape[0]
    qc = np.empty(6, dtype=np.complex128)
    for k in range(6):
        qc[k] = q[k]
    s0 = np.empty(3)
    r0 = np.empty((3, 3))
    for k in range(3):
        s0[k] = glob[G_S0 + k]
        for m in range(3):
            r0[k, m] = glob[G_R0 + 3 * k + m]
    p, R, R0, h1, h2, h3 = pose_and_axes(qc, s0, r0)
    law = (glob[G_LAW], glob[G_LAW + 1], glob[G_LAW + 2], glob[G_LAW + 3])
    # ligaments whose insertions and curve strains stay fixed (every ligament parameter of the
    # space: rest length, force axis): the tension is linear in the force axis on the branch
    # the strain selects and dT/dl0 = -slope * length / l0^2, so each row needs one real
    # evaluation, G = generalized force of a unit tension, for all directions
    n_lig = lig.shape[0]
    lig_T = np.zeros(n_lig)         # dT/dl0 per unit dl0
    lig_G = np.zeros((n_lig, 6))
    lig_strain = np.zeros(n_lig)
    G = np.zeros(6, dtype=np.complex128)
    for i in range(n_lig):
        a = add(p, mat_vec(R, _c3(lig, i, L_A, dlig, 0, 0.0)))
        dv = sub(_c3(lig, i, L_B, dlig, 0, 0.0), a)
        length = norm(dv).real
        if not length > 0.0:
            continue
        l0 = lig[i, L_L0]
        strain = (length - l0) / l0
        eps = (lig[i, L_EPS], lig[i, L_EPS + 1], lig[i, L_EPS + 2])
        f = (lig[i, L_F], lig[i, L_F + 1], lig[i, L_F + 2])
        _, slope = trilinear(strain + 0j, eps, f)
        lig_strain[i] = strain
        lig_T[i] = -slope * length / (l0 * l0)
        for k in range(6):
            G[k] = 0j
        add_point_force(G, a, scale(1.0 / length, dv), p, R0, h1, h2, h3)
        for k in range(6):
            lig_G[i, k] = G[k].real
    Q = np.zeros(6, dtype=np.complex128)
    Qp = np.zeros(6, dtype=np.complex128)
    Qm = np.zeros(6, dtype=np.complex128)
    law_row = np.zeros(DISC_LAW_WIDTH, dtype=np.complex128)
    for d in range(n_dir):
        for k in range(6):
            Q[k] = 0j
        for i in range(6):   # disc, eq. (1): linear in k
            if touch[d, 0]:
                row = G_DISC + DISC_LAW_WIDTH * i
                if glob[row] == 0.0:
                    dk = dglob[d, G_K_POS + i] if q[i] >= 0.0 else dglob[d, G_K_NEG + i]
                    out[i, d] = -dk * q[i]
                else:   # another law: complex step through it (k+, k-, its slots)
                    for c in range(DISC_LAW_WIDTH):
                        law_row[c] = complex(glob[row + c], h * dglob[d, row + c])
                    m, _ = disc_restoring(law_row, complex(q[i], 0.0),
                                     complex(glob[G_K_POS + i], h * dglob[d, G_K_POS + i]),
                                     complex(glob[G_K_NEG + i], h * dglob[d, G_K_NEG + i]))
                    out[i, d] = -m.imag / h
            else:
                out[i, d] = 0.0
        if touch[d, 1 + n_lig + fac.shape[0]] == 0:
            continue     # no ligament or facet moves along this direction
        for i in range(n_lig):
            flag = touch[d, 1 + i]
            if flag == 0:
                continue
            if flag == 1:   # rest length and force axis: real, exact (see above)
                eps = (lig[i, L_EPS], lig[i, L_EPS + 1], lig[i, L_EPS + 2])
                df = (dlig[d, i, L_F], dlig[d, i, L_F + 1], dlig[d, i, L_F + 2])
                dT = lig_T[i] * dlig[d, i, L_L0] + trilinear(lig_strain[i] + 0j, eps,
                                                               df)[0].real
                for k in range(6):
                    out[k, d] += dT * lig_G[i, k]
                continue
            # insertions or curve strains move: complex step through the complex law
            a = add(p, mat_vec(R, _c3(lig, i, L_A, dlig, d, h)))
            dv = sub(_c3(lig, i, L_B, dlig, d, h), a)
            length = norm(dv)
            if not length.real > 0.0:
                continue
            l0 = complex(lig[i, L_L0], h * dlig[d, i, L_L0])
            eps = (lig[i, L_EPS], lig[i, L_EPS + 1], lig[i, L_EPS + 2])
            tension, _ = trilinear((length - l0) / l0, eps, _c3(lig, i, L_F, dlig, d, h))
            add_point_force(Q, a, scale(tension / length, dv), p, R0, h1, h2, h3)
        for i in range(fac.shape[0]):
            flag = touch[d, 1 + n_lig + i]
            r1, r2 = fac[i, F_R1], fac[i, F_R2]
            dr1, dr2 = dfac[d, i, F_R1], dfac[d, i, F_R2]
            if (flag & 2) and not (r1 == r2 and dr1 == dr2):
                # radii apart: central difference (the scaling identity below needs r1 = r2)
                c1r = _c3(fac, i, F_C1, dfac, d, 0.0)
                n1r = _c3(fac, i, F_N1, dfac, d, 0.0)
                c2r = _c3(fac, i, F_C2, dfac, d, 0.0)
                n2r = _c3(fac, i, F_N2, dfac, d, 0.0)
                br = fac[i, F_BLEND] + 0j
                st = RADIUS_STEP_MM
                for k in range(6):
                    Qp[k] = 0j
                    Qm[k] = 0j
                _facet_q(Qp, p, R, R0, h1, h2, h3, c1r, n1r, r1 + st * dr1, c2r, n2r,
                         r2 + st * dr2, br, law, fac[i, F_SCALE])
                _facet_q(Qm, p, R, R0, h1, h2, h3, c1r, n1r, r1 - st * dr1, c2r, n2r,
                         r2 - st * dr2, br, law, fac[i, F_SCALE])
                for k in range(6):
                    out[k, d] += (Qp[k].real - Qm[k].real) / (2.0 * st)
        for k in range(6):
            out[k, d] += Q[k].imag / h
    _facets_dual(q, packed, dfac, touch, p, R, R0, h1, h2, h3, law, n_lig, out)


def touch_flags(dglob, dlig, dfac) -> np.ndarray:
    """Which elements each parameter direction moves: int8 array (..., D, 1 + n + m + 1).

    Column 0: the disc stiffness or its law's parameters; 1 ... n: ligament rows (1 = only
    rest length and force axis, the real path; 2 = insertions or curve strains, the complex
    path); then the facet rows (bit 1: centres or normals; bit 2: radii; bit 4: blending
    constant C); last: 1 when any ligament or facet moves. ``dglob (..., D, 52)``,
    ``dlig (..., D, n, 13)``, ``dfac (..., D, m, 15)`` from
    :meth:`segment.studies.space.ParameterSpace.pack_derivative`.
    """
    disc = ((dglob[..., G_K_POS:G_K_NEG + 6] != 0).any(axis=-1)
            | (dglob[..., G_DISC:G_DISC + 6 * DISC_LAW_WIDTH] != 0).any(axis=-1))
    real_cols = np.zeros(dlig.shape[-1], dtype=bool)
    real_cols[L_L0] = True
    real_cols[L_F:L_F + 3] = True
    nz = dlig != 0
    lig = np.where((nz & ~real_cols).any(axis=-1), 2, np.where(nz.any(axis=-1), 1, 0))
    radial_cols = np.zeros(dfac.shape[-1], dtype=bool)
    radial_cols[[F_R1, F_R2]] = True
    blend_cols = np.zeros(dfac.shape[-1], dtype=bool)
    blend_cols[F_BLEND] = True
    nzf = dfac != 0
    fac = ((nzf & ~radial_cols & ~blend_cols).any(axis=-1) * 1
           + (nzf & radial_cols).any(axis=-1) * 2 + (nzf & blend_cols).any(axis=-1) * 4)
    anything = (lig != 0).any(axis=-1) | (fac != 0).any(axis=-1)
    return np.ascontiguousarray(np.concatenate(
        [disc[..., None], lig, fac, anything[..., None]], axis=-1).astype(np.int8))


@njit
def _equilibrium_sensitivity(q, J, packed, dglob, dlig, dfac, touch, out):
    """``out (6, D)`` = dq*/dp = -J^-1 dR/dp at the equilibrium ``q`` with Jacobian ``J``.

    Returns False (and leaves NaN in ``out``) when J is singular.
    """
    a, piv, ok = lu6_factor(J)
    if not ok:
        out[:, :] = np.nan
        return False
    _residual_parameter_derivative(q, packed, dglob, dlig, dfac, touch, out)
    lu6_solve(a, piv, out)     # one factorisation for all D columns
    for k in range(6):
        for d in range(out.shape[1]):
            out[k, d] = -out[k, d]
    return True


@dataclass(frozen=True, eq=False)
class Sensitivity:
    """dq*/dp of one equilibrium (from :func:`equilibrium_sensitivity`).

    Attributes
    ----------
    q : ndarray (6,)
        The equilibrium [mm, rad].
    dq_dp : ndarray (6, D)
        Its derivative by each parameter [mm or rad per parameter unit].
    dq_unloaded_dp : ndarray (6, D)
        The same for the unloaded equilibrium of the same parameter set.
    names : tuple of str
        Parameter names (columns).
    units : tuple of str
        Parameter units.
    """

    q: np.ndarray
    q_unloaded: np.ndarray
    dq_dp: np.ndarray
    dq_unloaded_dp: np.ndarray
    names: tuple[str, ...]
    units: tuple[str, ...]

    @property
    def displacement_dp(self) -> np.ndarray:
        """d(q - q_unloaded)/dp (6, D): the derivative of the displacement from rest."""
        return self.dq_dp - self.dq_unloaded_dp

    def frame(self, *, from_unloaded: bool = False):
        """Long table: coordinate x parameter, derivatives in mm or deg per parameter unit."""
        import pandas as pd

        d = self.displacement_dp if from_unloaded else self.dq_dp
        rows = []
        for i, c in enumerate(DOF_NAMES):
            conv = 1.0 if i < 3 else 180.0 / np.pi
            for j, name in enumerate(self.names):
                rows.append({"coordinate": c, "unit": "mm" if i < 3 else "deg",
                             "parameter": name, "parameter_unit": self.units[j],
                             "derivative": conv * d[i, j]})
        return pd.DataFrame(rows)


def _dpacked(space: ParameterSpace, model, p):
    dg, dl, df = space.pack_derivative(model, p[None])
    return dg[0], dl[0], df[0]


def equilibrium_sensitivity(model, load: Load, *, space=None, p=None) -> Sensitivity:
    """dq*/dp of the equilibrium under ``load`` for the parameter set ``p``.

    Parameters
    ----------
    model : Segment
        The base model the space's parameters are applied to.
    load : Load
    space : ParameterSpace, path or None
        Default: the packaged ``data/parameter_space.csv``.
    p : array_like (D,), optional
        Parameter set (default: the model's own values,
        :meth:`~segment.studies.space.ParameterSpace.for_model`).

    Returns
    -------
    Sensitivity

    Raises
    ------
    ValueError
        When the equilibrium (loaded or unloaded) does not converge: no derivative exists.

    Examples
    --------
    >>> import segment
    >>> from segment.studies.sensitivity import equilibrium_sensitivity
    >>> s = equilibrium_sensitivity(segment.c5c6(), segment.LOAD_CASES["FLX"])
    >>> s.dq_dp.shape
    (6, 21)
    """
    if not isinstance(model, Segment):
        raise TypeError(f"model must be a segment.Segment, got {type(model).__name__}")
    if not isinstance(load, Load):
        raise TypeError(f"load must be a segment.Load, got {type(load).__name__}")
    space = load_space(space).for_model(model)
    p = space.nominal.copy() if p is None else space.check(p)[0]
    variant = space.apply(model, p)
    packed = space.pack(model, p[None])
    packed = (*(np.ascontiguousarray(x[0]) for x in packed), model._packed[3])
    dg, dl, df = _dpacked(space, model, p)
    out = {}
    for key, ld in (("loaded", load), ("unloaded", Load.zero())):
        r = solve(variant, ld)
        if not r.converged:
            raise ValueError(f"{key} equilibrium under {ld.name!r} did not converge "
                             f"({r.message}): no sensitivity")
        _, J = residual_jacobian(r.q, ld.as_array(), packed)
        d = np.empty((6, space.dim))
        if not _equilibrium_sensitivity(np.array(r.q), J, packed, dg, dl, df,
                                        touch_flags(dg, dl, df), d):
            raise ValueError(f"{key} equilibrium under {ld.name!r}: singular Jacobian, "
                             "no sensitivity")
        out[key] = (np.array(r.q), d)
    return Sensitivity(q=out["loaded"][0], q_unloaded=out["unloaded"][0],
                       dq_dp=out["loaded"][1], dq_unloaded_dp=out["unloaded"][1],
                       names=space.names, units=space.units)
