"""Exact sensitivities of the equilibrium to the parameters of the parameter space.

At an equilibrium ``R(q*, p) = 0`` the implicit function theorem gives::

    dq*/dp = -(dR/dq)^-1 dR/dp                                    (6 x D)

* ``dR/dq`` is the exact Jacobian of :mod:`segment.tangent` (the solver's own).
* ``dR/dp`` is the directional derivative of the residual along each parameter, with the
  packed arrays' derivative ``d packed / dp_j`` from
  :meth:`segment.space.ParameterSpace.pack_derivative` (complex step through the numpy
  packing, exact to rounding). Along that direction:

  - **disc**: the residual is linear in ``k`` (eq. 1), ``dR_i = -dk_i(q_i) q_i``, exact;
  - **ligaments** (rest length, force axis, insertions): **complex step** through the complex
    reference arithmetic of :mod:`segment.ligament` (``_trilinear``; the real parts choose the
    branch, as in the solver), exact to rounding;
  - **facets** (gap, inclination, blending constant C: centres, normals and C of the packed
    row): **complex step** through the complex reference contact :func:`segment.facet._contact`
    and :func:`segment.facet._contact_force`, exact to rounding;
  - **facet radius**: ``_contact`` takes the radii as real numbers (they select its cases), so
    this one direction is a **central difference** of the contact with step
    :data:`RADIUS_STEP_MM` (truncation error ~ step^2, about 1e-10 relative; measured against
    re-solved equilibria in ``tests/test_sensitivity.py``).

  The load does not depend on p, so ``dR/dp`` does not depend on the load except through q*.
* At a kink of the published laws (disc sign switch, ligament slack or support points,
  contact onset) the derivative is the one-sided derivative of the branch the solution sits
  on, as the Jacobian is.

The kernels here serve both :func:`equilibrium_sensitivity` (one solve) and the parameter-set
kernel of :mod:`segment.sets` (many sets x many loads, ``sensitivities=True``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from segment._vec import add, mat_vec, norm, scale, sub
from segment.disc import DOF_NAMES
from segment.equilibrium import CONVERGED, solve
from segment.facet import _contact, _contact_force
from segment.kinematics import _add_point_force, _pose
from segment.ligament import _trilinear
from segment.loads import Load
from segment.model import _residual_jacobian
from segment.space import ParameterSpace, load_space
from segment.tangent import (
    F_BLEND,
    F_C1,
    F_C2,
    F_N1,
    F_N2,
    F_R1,
    F_R2,
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

__all__ = ["Sensitivity", "equilibrium_sensitivity"]

COMPLEX_STEP = 1e-30
"""Imaginary step of the parameter directions (exact to rounding for any tiny step)."""
RADIUS_STEP_MM = 1e-5
"""Central-difference step of the facet radius direction [mm]."""


@njit(cache=True)
def _c3(a, i, k, da, d, h):
    """Complex 3-tuple ``a[i, k:k+3] + i h da[d, i, k:k+3]``."""
    return (complex(a[i, k], h * da[d, i, k]), complex(a[i, k + 1], h * da[d, i, k + 1]),
            complex(a[i, k + 2], h * da[d, i, k + 2]))


@njit(cache=True)
def _facet_q(Q, p, R, R0, h1, h2, h3, c1_c5, n1_c5, r1, c2, n2, r2, blend, law):
    """Add facet joint's generalized force (complex) to ``Q``; geometry as complex tuples."""
    c1 = add(p, mat_vec(R, c1_c5))
    n1 = mat_vec(R, n1_c5)
    u, point, direction, _, _, _, _ = _contact(c1, n1, r1, c2, n2, r2, blend)
    if u.real > 0.0:
        mag, _ = _contact_force(u, law)
        _add_point_force(Q, point, scale(mag, direction), p, R0, h1, h2, h3)


@njit(cache=True)
def _residual_parameter_derivative(q, packed, dglob, dlig, dfac, out):
    """``out[:, d]`` = dR/dp_d at real ``q`` (6,) for the D directions of ``dglob (D, 27)``,
    ``dlig (D, n, 13)``, ``dfac (D, m, 15)`` (see the module docstring)."""
    glob, lig, fac = packed
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
    p, R, R0, h1, h2, h3 = _pose(qc, s0, r0)
    law = (glob[G_LAW], glob[G_LAW + 1], glob[G_LAW + 2])
    for d in range(n_dir):
        Q = np.zeros(6, dtype=np.complex128)
        for i in range(6):   # disc, eq. (1): linear in k
            dk = dglob[d, G_K_POS + i] if q[i] >= 0.0 else dglob[d, G_K_NEG + i]
            out[i, d] = -dk * q[i]
        for i in range(lig.shape[0]):
            touched = False
            for k in range(lig.shape[1]):
                if dlig[d, i, k] != 0.0:
                    touched = True
            if not touched:
                continue
            a = add(p, mat_vec(R, _c3(lig, i, L_A, dlig, d, h)))
            dv = sub(_c3(lig, i, L_B, dlig, d, h), a)
            length = norm(dv)
            if not length.real > 0.0:
                continue
            l0 = complex(lig[i, L_L0], h * dlig[d, i, L_L0])
            eps = (lig[i, L_EPS], lig[i, L_EPS + 1], lig[i, L_EPS + 2])
            tension, _ = _trilinear((length - l0) / l0, eps, _c3(lig, i, L_F, dlig, d, h))
            _add_point_force(Q, a, scale(tension / length, dv), p, R0, h1, h2, h3)
        for i in range(fac.shape[0]):
            geometric = False
            for k in range(fac.shape[1]):
                if k != F_R1 and k != F_R2 and dfac[d, i, k] != 0.0:
                    geometric = True
            r1, r2 = fac[i, F_R1], fac[i, F_R2]
            c1 = _c3(fac, i, F_C1, dfac, d, h)
            n1 = _c3(fac, i, F_N1, dfac, d, h)
            c2 = _c3(fac, i, F_C2, dfac, d, h)
            n2 = _c3(fac, i, F_N2, dfac, d, h)
            blend = complex(fac[i, F_BLEND], h * dfac[d, i, F_BLEND])
            if geometric:
                _facet_q(Q, p, R, R0, h1, h2, h3, c1, n1, r1, c2, n2, r2, blend, law)
            dr1, dr2 = dfac[d, i, F_R1], dfac[d, i, F_R2]
            if dr1 != 0.0 or dr2 != 0.0:
                c1r = (c1[0].real + 0j, c1[1].real + 0j, c1[2].real + 0j)
                n1r = (n1[0].real + 0j, n1[1].real + 0j, n1[2].real + 0j)
                c2r = (c2[0].real + 0j, c2[1].real + 0j, c2[2].real + 0j)
                n2r = (n2[0].real + 0j, n2[1].real + 0j, n2[2].real + 0j)
                br = blend.real + 0j
                st = RADIUS_STEP_MM
                Qp = np.zeros(6, dtype=np.complex128)
                Qm = np.zeros(6, dtype=np.complex128)
                _facet_q(Qp, p, R, R0, h1, h2, h3, c1r, n1r, r1 + st * dr1, c2r, n2r,
                         r2 + st * dr2, br, law)
                _facet_q(Qm, p, R, R0, h1, h2, h3, c1r, n1r, r1 - st * dr1, c2r, n2r,
                         r2 - st * dr2, br, law)
                for k in range(6):
                    out[k, d] += (Qp[k].real - Qm[k].real) / (2.0 * st)
        for k in range(6):
            out[k, d] += Q[k].imag / h


@njit(cache=True)
def _solve6_multi(J, B):
    """``J^-1 B`` for (6, 6) ``J`` and (6, D) ``B`` by Gaussian elimination with partial
    pivoting; ``(X, ok)`` with ok False for an exactly singular J."""
    n = 6
    a = J.copy()
    x = B.copy()
    nd = B.shape[1]
    for k in range(n):
        piv = k
        big = abs(a[k, k])
        for i in range(k + 1, n):
            if abs(a[i, k]) > big:
                big = abs(a[i, k])
                piv = i
        if big == 0.0:
            return x, False
        if piv != k:
            for j in range(k, n):
                a[k, j], a[piv, j] = a[piv, j], a[k, j]
            for j in range(nd):
                x[k, j], x[piv, j] = x[piv, j], x[k, j]
        for i in range(k + 1, n):
            factor = a[i, k] / a[k, k]
            if factor != 0.0:
                for j in range(k + 1, n):
                    a[i, j] -= factor * a[k, j]
                for j in range(nd):
                    x[i, j] -= factor * x[k, j]
    for k in range(n - 1, -1, -1):
        for j in range(nd):
            s = x[k, j]
            for m in range(k + 1, n):
                s -= a[k, m] * x[m, j]
            x[k, j] = s / a[k, k]
    return x, True


@njit(cache=True)
def _equilibrium_sensitivity(q, J, packed, dglob, dlig, dfac, out):
    """``out (6, D)`` = dq*/dp = -J^-1 dR/dp at the equilibrium ``q`` with Jacobian ``J``.

    Returns False (and leaves NaN in ``out``) when J is singular.
    """
    dR = np.empty((6, dglob.shape[0]))
    _residual_parameter_derivative(q, packed, dglob, dlig, dfac, dR)
    x, ok = _solve6_multi(J, dR)
    if not ok:
        out[:, :] = np.nan
        return False
    for k in range(6):
        for d in range(dR.shape[1]):
            out[k, d] = -x[k, d]
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
        Parameter set (default: the space's nominal values).

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
    >>> from segment.sensitivity import equilibrium_sensitivity
    >>> s = equilibrium_sensitivity(segment.c5c6(), segment.LOAD_CASES["FLX"])
    >>> s.dq_dp.shape
    (6, 21)
    """
    space = load_space(space)
    p = space.nominal.copy() if p is None else space.check(p)[0]
    variant = space.apply(model, p)
    packed = space.pack(model, p[None])
    packed = tuple(np.ascontiguousarray(x[0]) for x in packed)
    dg, dl, df = _dpacked(space, model, p)
    out = {}
    for key, ld in (("loaded", load), ("unloaded", Load.zero())):
        r = solve(variant, ld)
        if r.status != CONVERGED:
            raise ValueError(f"{key} equilibrium under {ld.name!r} did not converge "
                             f"({r.message}): no sensitivity")
        _, J = _residual_jacobian(r.q, ld.as_array(), packed)
        d = np.empty((6, space.dim))
        if not _equilibrium_sensitivity(np.array(r.q), J, packed, dg, dl, df, d):
            raise ValueError(f"{key} equilibrium under {ld.name!r}: singular Jacobian, "
                             "no sensitivity")
        out[key] = (np.array(r.q), d)
    return Sensitivity(q=out["loaded"][0], q_unloaded=out["unloaded"][0],
                       dq_dp=out["loaded"][1], dq_unloaded_dp=out["unloaded"][1],
                       names=space.names, units=space.units)
