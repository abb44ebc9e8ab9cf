"""Dynamics of C5 on C6: equations of motion, simulation, dynamic relaxation, energy checks.

The paper's MADYMO model reached each equilibrium by simulating the motion of C5 until it
settled (DETC2000/MECH-6821, "Madymo Model": 5.7 s per run on a 175 MHz MIPS R10000); the
MOBILE model solved the static equilibrium by Newton-Raphson, 350 times faster. This module is
that dynamic baseline, built on the same force elements as :mod:`segment.model`.

Equations of motion
-------------------
C5 is one rigid body on the 6-DOF joint of :mod:`segment.kinematics`. With Table 1's mass
``m`` [kg -> N s^2/mm: x 1e-3], principal inertia ``I`` about the centre of gravity along the
C5 axes [kg mm^2 -> N mm s^2: x 1e-3] and the centre of gravity at ``g = (g_x, 0, 0)`` in the
C5 frame (g_x = -8.1 mm), the velocity of the centre of gravity and the angular velocity, both
in C6 coordinates, are linear in the joint rates ``dq/dt``::

    v_G   = J_v(q) dq/dt,    J_v = [R0, -[r]x H],      r = R g
    omega = J_w(q) dq/dt,    J_w = [0,   H],           H = [h1, h2, h3]

and projecting Newton-Euler's equations on the joint (Kane's equations, i.e. virtual power)::

    M(q) d2q/dt2 = Q(q, dq/dt, t) + Q_g(q) - b(q, dq/dt)                         (D1)

    M   = m J_v^T J_v + J_w^T I_c J_w,               I_c = R diag(I) R^T
    b   = m J_v^T a_0 + J_w^T (I_c alpha_0 + omega x I_c omega)
    alpha_0 = dh2/dt dphi_y/dt + dh3/dt dphi_z/dt,   dh2/dt = (h1 dphi_x/dt) x h2,
              dh3/dt = (h1 dphi_x/dt + h2 dphi_y/dt) x h3
    a_0 = alpha_0 x r + omega x (omega x r)
    Q_g = J_v^T (0, 0, -m g)                          (optional gravity, -z of C6)

``Q`` is the residual of :mod:`segment.model` (disc, ligaments, facets, load) plus the damping
terms of the paper:

* disc, eq. (1): ``-b_t dq_i/dt`` on x, y, z and ``-b_phi dq_i/dt`` on the rotations
  (b_t = 1000 N s/m = 1 N s/mm, b_phi = 1.5 N m s/rad = 1500 N mm s/rad);
* ligaments: ``F_l = F_el(eps) + b_l dl/dt`` while taut (b_l = 300 N s/m = 0.3 N s/mm; see
  :mod:`segment.ligament` for reading b_l as acting on dl/dt); the total tension is clipped at 0
  (a ligament cannot push);
* facets: ``F_c = F_el(u) + b_f du/dt`` while penetrating (b_f = 300 N s/m = 0.3 N s/mm),
  clipped at 0 (a contact cannot pull).

The rates ``dl/dt`` and ``du/dt`` are exact: the element kernels are evaluated once at the
complex pose ``q + i h dq/dt`` (h = 1e-20); real parts are the element values, imaginary
parts divided by h their time derivatives (the complex-step trick of :mod:`segment._vec`
applied along the velocity). The static kernels are reused unchanged.

Integration
-----------
First-order form ``y = (q, dq/dt)`` with :func:`scipy.integrate.solve_ivp` (``Radau`` by
default, implicit and L-stable; the disc damping makes the system stiff). The Jacobian handed
to the integrator is::

    d(dy/dt)/dy ~ [[0, 1], [M^-1 K, M^-1 C]]

with ``K`` the exact static Jacobian (:mod:`segment.tangent`) and ``C`` the (linear)
damping matrix; velocity-product terms are left out of it (an approximate Jacobian only slows
the integrator's Newton iterations, it does not change the solution).

Energy bookkeeping
------------------
The kinetic energy-work relation of Fritzkowski and Walczak (their eqs. 51-55) is checked as::

    T(t) - T(0) = W(t),     e_R(t) = |T(t) - T(0) - W(t)| / E_ref                       (D2)

    W = W_load - [V_el(t) - V_el(0)] - [V_g(t) - V_g(0)] + W_facet - E_dissipated - E_rupture

with ``V_el`` the elastic energy of the disc (1/2 k(q_i) q_i^2, or the potential of its law of
:mod:`segment.elements.disc`) and the ligaments (l0 int F_el d eps), both state functions;
``V_g = m g z_G``; and three integrals carried alongside the motion (augmented state): the
work of the external load ``W_load = int Q_load . dq/dt dt``, the work of the facets' elastic forces
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

import logging
import math
import numbers
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numba import njit
from scipy.integrate import Radau, solve_ivp

from segment.core.io import BodyInertia, load_parameters
from segment.core.model import Segment, _residual, _residual_jacobian
from segment.core.newton import FORCE_SCALE_N, MOMENT_SCALE_NMM, _norm_phi
from segment.elements._vec import cross, row, scale, sub
from segment.elements.disc import DOF_NAMES, _add_disc_force, _disc_law_energy
from segment.elements.facet import ContactLaw, _contact, _contact_force, _facet_state
from segment.elements.kinematics import _add_load, _add_point_force, _pose
from segment.elements.ligament import _ligament_state
from segment.elements.loads import Load
from segment.elements.restraint import P_B, P_K, _restraint_state
from segment.elements.tangent import L_EPS, _axes

__all__ = [
    "GRAVITY_MM_S2",
    "RELAX_TOL",
    "DiscPlaneResult",
    "RelaxationResult",
    "SimulationResult",
    "angular_momentum",
    "disc_plane_drop",
    "kinetic_energy",
    "mass_matrix",
    "plot_disc_plane",
    "relax",
    "simulate",
]

log = logging.getLogger(__name__)

GRAVITY_MM_S2 = 9810.0
"""Standard gravity [mm/s^2]."""
KG_TO_T = 1e-3
"""kg -> N s^2/mm (tonne); also kg mm^2 -> N mm s^2."""
RATE_STEP = 1e-20
"""Imaginary step h of the velocity-direction complex step (rates = Im(.)/h)."""
RELAX_TOL = 1e-6
"""Default settling tolerance of :func:`relax` (scaled residual and scaled damping force)."""
_N_ENERGY = 3  # augmented states: W_load, W_facet, E_dissipated
_SCALE = np.array([FORCE_SCALE_N] * 3 + [MOMENT_SCALE_NMM] * 3)


# ---------------------------------------------------------------- kernels
@njit(cache=True)
def _re(v):
    """Real part of a complex 3-tuple, kept complex-typed."""
    return (v[0].real + 0j, v[1].real + 0j, v[2].real + 0j)


@njit(cache=True)
def _trilinear_energy(eps, e, f):
    """int_0^eps F(s) ds of the trilinear law of :func:`segment.ligament._trilinear` [N]."""
    if eps <= 0.0:
        return 0.0
    s0 = f[0] / e[0]
    if eps < e[0]:
        return 0.5 * s0 * eps * eps
    w = 0.5 * f[0] * e[0]
    s1 = (f[1] - f[0]) / (e[1] - e[0])
    if eps < e[1]:
        d = eps - e[0]
        return w + f[0] * d + 0.5 * s1 * d * d
    d1 = e[1] - e[0]
    w += f[0] * d1 + 0.5 * s1 * d1 * d1
    s2 = (f[2] - f[1]) / (e[2] - e[1])
    d = eps - e[1]
    return w + f[1] * d + 0.5 * s2 * d * d


@njit(cache=True)
def _contact_energy(u, law):
    """int_0^u F_c(s) ds of the facet contact law [N mm]."""
    k2, ut, k1 = law[0], law[1], law[2]
    if u <= 0.0:
        return 0.0
    if u <= ut:
        return k2 * u**3 / 3.0
    d = u - ut
    return k2 * ut**3 / 3.0 + k2 * ut * ut * d + 0.5 * k1 * d * d


@njit(cache=True)
def _element_forces(q, qd, load, params, disc_b, lig_b, fac_b, elements, clip, Q, lig, fac):
    """Generalized forces of every element at (q, dq/dt), split by kind.

    Writes ``Q`` (5, 6): rows disc elastic, ligament elastic, facet elastic, all damping, load;
    ``lig`` (n, 4): length [mm], dl/dt [mm/s], elastic and total tension [N]; ``fac`` (m, 4):
    penetration [mm], du/dt [mm/s], elastic and total contact force [N]. Returns the elastic
    energy of disc and ligaments [N mm] and the contact-law energy of the facets [N mm].
    ``clip`` False skips the tension-only / compression-only clipping (linear damping matrix).
    """
    (s0, r0, k_pos, k_neg, lig_a, lig_c6, lig_l0, lig_eps, lig_f,
     fac_c1, fac_n1, fac_r1, fac_c2, fac_n2, fac_r2, fac_blend, law, pts, fac_scale,
     disc_law) = params
    Qc = np.zeros((5, 6), dtype=np.complex128)
    qc = np.empty(6, dtype=np.complex128)
    for k in range(6):
        qc[k] = q[k] + 1j * RATE_STEP * qd[k]
    p, R, R0, h1, h2, h3 = _pose(qc, s0, r0)
    pr, h1r, h2r, h3r = _re(p), _re(h1), _re(h2), _re(h3)
    v_el = 0.0
    v_fac = 0.0
    if elements:
        _add_disc_force(Qc[0], q, k_pos, k_neg, disc_law)  # disc, eq. (1), and its damping
        for i in range(6):
            Qc[3, i] -= disc_b[i] * qd[i]
            if disc_law[i, 0] == 0.0:
                v_el -= 0.5 * Qc[0, i].real * q[i]   # 1/2 k(q_i) q_i^2
            else:   # another law of segment.elements.disc: its potential
                v_el += _disc_law_energy(disc_law[i], q[i], k_pos[i], k_neg[i])
        for i in range(lig_l0.shape[0]):
            a, length, strain, tension, _ = _ligament_state(i, p, R, lig_a, lig_c6, lig_l0,
                                                            lig_eps, lig_f)
            ln = length.real
            rate = length.imag / RATE_STEP
            f_el = tension.real
            total = 0.0
            if strain.real >= 0.0:
                total = f_el + lig_b[i] * rate
                if clip and total < 0.0:
                    total = 0.0
            lig[i, 0] = ln
            lig[i, 1] = rate
            lig[i, 2] = f_el
            lig[i, 3] = total
            v_el += lig_l0[i] * _trilinear_energy(strain.real, lig_eps[i], lig_f[i])
            if ln > 0.0:
                ar = _re(a)
                d = sub(row(lig_c6, i), ar)
                _add_point_force(Qc[1], ar, scale(f_el / ln, d), pr, R0, h1r, h2r, h3r)
                _add_point_force(Qc[3], ar, scale((total - f_el) / ln, d), pr, R0, h1r, h2r,
                                 h3r)
        for i in range(fac_r1.shape[0]):
            st = _facet_state(i, p, R, fac_c1, fac_n1, fac_r1, fac_c2, fac_n2, fac_r2,
                              fac_blend, law)
            u = st[0]
            rate = u.imag / RATE_STEP
            f_el = st[7].real * fac_scale[i]   # a resected facet: times its area fraction
            total = 0.0
            if u.real > 0.0:
                total = f_el + fac_b * fac_scale[i] * rate
                if clip and total < 0.0:
                    total = 0.0
            fac[i, 0] = max(u.real, 0.0)
            fac[i, 1] = rate
            fac[i, 2] = f_el
            fac[i, 3] = total
            v_fac += _contact_energy(u.real, law) * fac_scale[i]
            point = _re(st[1])
            direction = _re(st[2])
            _add_point_force(Qc[2], point, scale(f_el, direction), pr, R0, h1r, h2r, h3r)
            _add_point_force(Qc[3], point, scale(total - f_el, direction), pr, R0, h1r, h2r,
                             h3r)
        # point restraints of a device (segment.elements.restraint): elastic, booked with
        # the disc (row 0) whose place they take; V = 1/2 d . K d
        for i in range(pts.shape[0]):
            x, force = _restraint_state(i, p, R, pts)
            for k in range(3):
                d = x[k].real - pts[i, P_B + k]
                v_el += 0.5 * pts[i, P_K + k] * d * d
            _add_point_force(Qc[0], _re(x), _re(force), pr, R0, h1r, h2r, h3r)
    _add_load(Qc[4], load, r0, h1r, h2r, h3r)
    for r_ in range(5):
        for k in range(6):
            Q[r_, k] = Qc[r_, k].real
    return v_el, v_fac


@njit(cache=True)
def _cross3(a, b):
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]])


@njit(cache=True)
def _rigid_body(q, qd, r0, inertia):
    """Mass matrix (6, 6), velocity-product term b (6,), J_v (3, 6), r = R g (3,), omega (3,),
    I_c (3, 3) of eq. (D1). ``inertia`` = (m [N s^2/mm], g_x [mm], Ixx, Iyy, Izz [N mm s^2])."""
    m = inertia[0]
    gx = inertia[1]
    R0t = ((r0[0, 0], r0[0, 1], r0[0, 2]), (r0[1, 0], r0[1, 1], r0[1, 2]),
           (r0[2, 0], r0[2, 1], r0[2, 2]))
    Rt, _, ht = _axes(q, R0t)            # R (row tuples) and the joint axes (segment.tangent)
    R0 = np.ascontiguousarray(r0)
    R = np.empty((3, 3))
    H = np.empty((3, 3))
    for i in range(3):
        for k in range(3):
            R[i, k] = Rt[i][k]
            H[i, k] = ht[k][i]            # column k is the axis h_k
    r = R[:, 0] * gx
    rx = np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])
    Jv = np.empty((3, 6))
    Jv[:, :3] = R0
    Jv[:, 3:] = -(rx @ H)
    w = qd[3:].copy()
    omega = H @ w
    Ic = R @ np.diag(inertia[2:5]) @ R.T
    M = m * (Jv.T @ Jv)
    M[3:, 3:] += H.T @ Ic @ H
    hd2 = _cross3(H[:, 0] * w[0], H[:, 1])
    hd3 = _cross3(H[:, 0] * w[0] + H[:, 1] * w[1], H[:, 2])
    alpha0 = hd2 * w[1] + hd3 * w[2]
    a0 = _cross3(alpha0, r) + _cross3(omega, _cross3(omega, r))
    b = m * (Jv.T @ a0)
    b[3:] += H.T @ (Ic @ alpha0 + _cross3(omega, Ic @ omega))
    return M, b, Jv, r, omega, Ic


@njit(cache=True)
def _rhs(y, load, params, disc_b, lig_b, fac_b, inertia, grav, elements, energy):
    """d y / d t of the first-order system (q, dq/dt[, W_load, W_facet, E_dissipated])."""
    q = y[:6].copy()
    qd = y[6:12].copy()
    n = params[6].shape[0]
    mfac = params[11].shape[0]
    Q = np.empty((5, 6))
    lig = np.empty((n, 4))
    fac = np.empty((mfac, 4))
    _element_forces(q, qd, load, params, disc_b, lig_b, fac_b, elements, True, Q, lig, fac)
    M, b, Jv, _, _, _ = _rigid_body(q, qd, params[1], inertia)
    rhs = Q[0] + Q[1] + Q[2] + Q[3] + Q[4] - b
    if grav != 0.0:
        rhs -= inertia[0] * grav * Jv[2, :]
    qdd = np.linalg.solve(M, rhs)
    dy = np.empty(y.shape[0])
    dy[:6] = qd
    dy[6:12] = qdd
    if energy:
        dy[12] = np.dot(Q[4], qd)
        dy[13] = np.dot(Q[2], qd)
        dy[14] = -np.dot(Q[3], qd)
    return dy


@njit(cache=True)
def _jac(y, load, params, packed, disc_b, lig_b, fac_b, inertia, elements, energy):
    """Approximate Jacobian [[0, 1], [M^-1 K, M^-1 C]] of :func:`_rhs` (see module doc);
    ``packed`` is ``Segment._packed`` (for K), ``params`` ``Segment._params``."""
    q = y[:6].copy()
    qd = y[6:12].copy()
    ny = y.shape[0]
    n = params[6].shape[0]
    mfac = params[11].shape[0]
    if elements:
        _, K = _residual_jacobian(q, load, packed)
    else:
        K = np.zeros((6, 6))
    C = np.zeros((6, 6))
    Q = np.empty((5, 6))
    lig = np.empty((n, 4))
    fac = np.empty((mfac, 4))
    e = np.zeros(6)
    for j in range(6):
        e[:] = 0.0
        e[j] = 1.0
        _element_forces(q, e, load, params, disc_b, lig_b, fac_b, elements, False, Q, lig, fac)
        C[:, j] = Q[3]
    M, _, _, _, _, _ = _rigid_body(q, qd, params[1], inertia)
    Minv = np.linalg.inv(M)
    J = np.zeros((ny, ny))
    for k in range(6):
        J[k, 6 + k] = 1.0
    J[6:12, :6] = Minv @ K
    J[6:12, 6:12] = Minv @ C
    return J


# ---------------------------------------------------------------- helpers
def _inertia_array(inertia: BodyInertia | None, model: Segment | None = None) -> np.ndarray:
    """Inertia of C5 as given, else the model's (its data folder), else the packaged Table 1."""
    if inertia is None and model is not None:
        inertia = model.inertia
    if inertia is None:
        inertia = load_parameters().inertia["C5"]
    if not isinstance(inertia, BodyInertia):
        raise TypeError(f"inertia must be a segment.io.BodyInertia, got {type(inertia).__name__}")
    return np.array([inertia.mass * KG_TO_T, inertia.cog_x,
                     *(np.asarray(inertia.inertia, dtype=float) * KG_TO_T)])


def _damping_arrays(model: Segment, damping: bool):
    f = 1.0 if damping else 0.0
    disc_b = np.array(model.disc.damping, dtype=float) * f
    # per strip row: the ligament's damping over its strip count, none for a ruptured strip
    lig_b = np.array([model.ligaments[j].damping / model.ligaments[j].strips
                      for j in model.strip_ligament], dtype=float).reshape(-1) * f * model._carrying
    return disc_b, lig_b, float(model.contact_law.damping) * f


def _load_function(load, ramp: float) -> tuple[Callable[[float], np.ndarray], bool]:
    """(t -> load vector (6,) [N, N mm], constant?) from a Load, None or a callable."""
    if not (np.isfinite(ramp) and ramp >= 0):
        raise ValueError(f"ramp must be >= 0 [s], got {ramp!r}")
    if load is None:
        load = Load.zero()
    if isinstance(load, Load):
        f = load.as_array()
        if ramp == 0.0:
            return (lambda t: f), True
        return (lambda t: f * min(max(t / ramp, 0.0), 1.0)), False
    if callable(load):
        def fn(t):
            v = load(t)
            v = v.as_array() if isinstance(v, Load) else np.asarray(v, dtype=float)
            if v.shape != (6,) or not np.all(np.isfinite(v)):
                raise ValueError(f"load function must return a Load or 6 finite numbers "
                                 f"[N, N mm], got {v!r} at t = {t} s")
            return v
        return fn, False
    raise TypeError(f"load must be a segment.Load, a callable t -> Load or None, got "
                    f"{type(load).__name__}")


def _initial(q0, qd0) -> tuple[np.ndarray, np.ndarray]:
    out = []
    for name, v in (("q0", q0), ("qd0", qd0)):
        a = np.zeros(6) if v is None else np.array(v, dtype=float)
        if a.shape != (6,) or not np.all(np.isfinite(a)):
            raise ValueError(f"{name} must be 6 finite numbers, got {v!r}")
        out.append(a)
    return out[0], out[1]


def mass_matrix(q, *, inertia: BodyInertia | None = None, model: Segment | None = None):
    """Mass matrix M(q) (6, 6) of eq. (D1) [N s^2/mm, N s^2, N mm s^2].

    Parameters
    ----------
    q : array_like, shape (6,)
    inertia : BodyInertia, optional
        Default: the model's (its data folder), else Table 1, C5 of the packaged data.
    model : Segment, optional
        Supplies the reference orientation R0 (default: the packaged model's).
    """
    q, _ = _initial(q, None)
    r0 = (model.reference.R0 if model is not None else load_parameters().reference.R0)
    M, _, _, _, _, _ = _rigid_body(q, np.zeros(6), np.ascontiguousarray(r0),
                                   _inertia_array(inertia, model))
    return M


def kinetic_energy(q, qd, *, inertia: BodyInertia | None = None,
                   model: Segment | None = None) -> float:
    """Kinetic energy 1/2 m |v_G|^2 + 1/2 omega . I_c omega [N mm] at (q, dq/dt)."""
    q, qd = _initial(q, qd)
    r0 = (model.reference.R0 if model is not None else load_parameters().reference.R0)
    return float(0.5 * qd @ _rigid_body(q, qd, np.ascontiguousarray(r0),
                                        _inertia_array(inertia, model))[0] @ qd)


def angular_momentum(q, qd, *, inertia: BodyInertia | None = None,
                     model: Segment | None = None) -> np.ndarray:
    """Angular momentum about the centre of gravity, C6 coordinates (3,) [N mm s]."""
    q, qd = _initial(q, qd)
    r0 = (model.reference.R0 if model is not None else load_parameters().reference.R0)
    _, _, _, _, omega, Ic = _rigid_body(q, qd, np.ascontiguousarray(r0),
                                        _inertia_array(inertia, model))
    return Ic @ omega


# ---------------------------------------------------------------- simulation
@dataclass(frozen=True, eq=False)
class SimulationResult:
    """Outcome of :func:`simulate`.

    Attributes
    ----------
    t : ndarray, shape (n,)
        Output times [s].
    q, qd : ndarray, shape (n, 6)
        Joint coordinates [mm, rad] and their rates [mm/s, rad/s].
    frame : pandas.DataFrame
        One row per output time: ``t_s``, q (``x_mm`` ... ``phi_z_rad``), rates (``dx_mm_s``
        ... ``dphi_z_rad_s``), the load, element forces (disc generalized forces, ligament
        tensions and lengths per strip, facet forces and penetrations) and the energy terms of
        eq. (D2) [N mm], ``rupture_energy_Nmm`` the elastic energy released by the strips
        ruptured so far.
    energy_error : float
        max_t e_R(t) of eq. (D2), relative to the largest energy term of the run (NaN
        when the energy terms were not integrated).
    success : bool
    message : str
    nfev, njev, nlu : int
        Integrator statistics.
    model : Segment or None
        The model at the end: the input model with the strips that ruptured in ``ruptured``.
    events : tuple of (float, str, str)
        (t [s], ``"ruptured"``, strip name) in order.
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    frame: pd.DataFrame
    energy_error: float
    success: bool
    message: str
    nfev: int
    njev: int
    nlu: int
    model: Segment | None = None
    events: tuple = ()

    def __repr__(self) -> str:
        return (f"SimulationResult({len(self.t)} output times to t = {self.t[-1]:.4g} s, "
                f"success={self.success}, energy_error={self.energy_error:.2e})"
                if len(self.t) else f"SimulationResult(no output: {self.message})")

    def to_frame(self) -> pd.DataFrame:
        """The time history (``frame``): one row per output time."""
        return self.frame


def simulate(model: Segment, load=None, *, t_end: float, ramp: float = 0.0,
             q0=None, qd0=None, inertia: BodyInertia | None = None, gravity: bool = False,
             elements: bool = True, damping: bool = True, method: str = "Radau",
             rtol: float = 1e-6, atol: float = 1e-9, n_output: int = 201,
             max_step: float = np.inf, rupture: bool = True,
             progress: Callable[[float], None] | None = None) -> SimulationResult:
    """Simulate the motion of C5 under a load history, eq. (D1).

    Parameters
    ----------
    model : Segment
        Force elements; their damping (``disc.damping``, ``Ligament.damping``,
        ``contact_law.damping``) is used unless ``damping=False``.
    load : Load, callable or None
        A :class:`~segment.loads.Load` applied as a step at t = 0 (or ramped over ``ramp``
        seconds), or a function ``t [s] -> Load`` or ``-> (Fx, Fy, Fz, Mx, My, Mz)``
        [N, N mm]; None for no load.
    t_end : float
        End time [s].
    ramp : float
        Ramp duration [s] for a :class:`Load` (0: step).
    q0, qd0 : array_like, shape (6,), optional
        Initial coordinates [mm, rad] and rates [mm/s, rad/s] (default: at rest at q = 0,
        the reference pose).
    inertia : BodyInertia, optional
        Mass, inertia and centre of gravity of C5 (default: ``model.inertia``, which
        :func:`segment.c5c6` reads from Table 1 of its data folder).
    gravity : bool
        Add gravity, 9810 mm/s^2 along -z of C6.
    elements : bool
        False switches every force element off (a free rigid body; loads still act).
    damping : bool
        False leaves out every damping term.
    method : str
        ``"Radau"`` or ``"BDF"`` (implicit, with our Jacobian), or any other
        :func:`scipy.integrate.solve_ivp` method.
    rtol, atol : float
        Integrator tolerances (atol on mm, rad, mm/s, rad/s and the energy integrals).
    n_output : int
        Number of equally spaced output times.
    max_step : float
        Largest integrator step [s].
    rupture : bool
        Ligament strips rupture (True, default): a strip whose strain reaches eps_max (its
        elastic force F_max, point C of Table 3) breaks at that instant and carries nothing
        afterwards. Event detection, no hidden state: the integration stops at the event
        (a terminal root of ``max_i eps_i / eps_max,i - 1``), the strip joins the model's
        ``ruptured`` set and the integration restarts from the state at the event. The
        events and the final model are in the result; the elastic energy the strip held is
        booked as released by the fracture in the energy balance (D2). False: the published
        curves continue past C.
    progress : callable, optional
        Called with the simulated time reached so far [s] (non-decreasing, at most about ten
        times a second of wall time), e.g. to advance a progress bar.

    Returns
    -------
    SimulationResult
    """
    if not isinstance(model, Segment):
        raise TypeError(f"model must be a segment.Segment, got {type(model).__name__}")
    for name, value in (("t_end", t_end), ("ramp", ramp)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name} must be a number [s], got {type(value).__name__}")
    if not (np.isfinite(t_end) and t_end > 0):
        raise ValueError(f"t_end must be > 0 [s], got {t_end!r}")
    if isinstance(n_output, bool) or not isinstance(n_output, numbers.Integral) \
            or n_output < 2:
        raise ValueError(f"n_output must be an integer >= 2, got {n_output!r}")
    load_fn, _ = _load_function(load, ramp)
    q0, qd0 = _initial(q0, qd0)
    params = model._params
    packed = model._packed
    disc_b, lig_b, fac_b = _damping_arrays(model, damping)
    iner = _inertia_array(inertia, model)
    grav = GRAVITY_MM_S2 if gravity else 0.0
    y0 = np.concatenate([q0, qd0, np.zeros(_N_ENERGY)])
    wall = [time.perf_counter(), time.perf_counter(), 0.0]   # last log, last progress, max t

    def fun(t, y):
        _report_time(t, t_end, wall, progress)
        return _rhs(y, load_fn(t), params, disc_b, lig_b, fac_b, iner, grav, elements, True)

    def jac(t, y):
        return _jac(y, load_fn(t), params, packed, disc_b, lig_b, fac_b, iner, elements, True)

    t_eval = np.linspace(0.0, float(t_end), int(n_output))
    kwargs = {"jac": jac} if method in ("Radau", "BDF", "LSODA") else {}
    if not rupture:
        sol = solve_ivp(fun, (0.0, float(t_end)), y0, method=method, t_eval=t_eval, rtol=rtol,
                        atol=atol, max_step=max_step, **kwargs)
        frame, err = _history_frame(model, sol.t, sol.y.T, load_fn, params, disc_b, lig_b,
                                    fac_b, iner, grav, elements)
        if progress is not None:
            progress(float(sol.t[-1]) if len(sol.t) else 0.0)
        return SimulationResult(t=sol.t, q=sol.y[:6].T.copy(), qd=sol.y[6:12].T.copy(),
                                frame=frame, energy_error=err, success=bool(sol.success),
                                message=str(sol.message), nfev=int(sol.nfev),
                                njev=int(sol.njev), nlu=int(sol.nlu), model=model)
    return _simulate_with_rupture(model, load_fn, y0, float(t_end), t_eval, damping, iner,
                                  grav, elements, method, rtol, atol, max_step, wall, progress)


def _report_time(t: float, t_end: float, wall: list, progress) -> None:
    """Log the simulated time every 5 s of wall time and feed ``progress`` at most ten times a
    second; ``wall`` = [last log, last progress, largest t reported] (wall-clock seconds)."""
    now = time.perf_counter()
    if now - wall[0] > 5.0:
        wall[0] = now
        log.info("simulate: t = %.4g s of %.4g s", t, t_end)
    if progress is not None and now - wall[1] > 0.1:
        wall[1] = now
        wall[2] = max(wall[2], float(t))
        progress(wall[2])


def _simulate_with_rupture(model, load_fn, y0, t_end, t_eval, damping, iner, grav, elements,
                           method, rtol, atol, max_step, wall, progress=None):
    """:func:`simulate` in pieces between rupture events (see its docstring).

    Each piece integrates the model with the strips broken so far; a terminal event
    ``max_i eps_i / eps_max,i - 1`` (intact strips) ends it where a strip reaches eps_max
    (F_el = F_max); that strip joins ``ruptured`` and the next piece starts from the state
    at the event. The strip's elastic energy at that moment leaves the elastic energy and is
    booked as ``rupture_energy_Nmm`` (released by the fracture) in eq. (D2).
    """
    from segment.solvers.ramp import _max_ratio

    current = model
    t0, y = 0.0, y0
    pieces, events = [], []
    released = 0.0
    nfev = njev = nlu = 0
    success, message = True, ""
    while True:
        params, packed = current._params, current._packed
        disc_b, lig_b, fac_b = _damping_arrays(current, damping)
        glob, lig = packed[0], packed[1]
        alive = current._carrying

        def fun(t, y_, params=params, disc_b=disc_b, lig_b=lig_b, fac_b=fac_b):
            _report_time(t, t_end, wall, progress)
            return _rhs(y_, load_fn(t), params, disc_b, lig_b, fac_b, iner, grav, elements,
                        True)

        def jac(t, y_, params=params, packed=packed, disc_b=disc_b, lig_b=lig_b, fac_b=fac_b):
            return _jac(y_, load_fn(t), params, packed, disc_b, lig_b, fac_b, iner, elements,
                        True)

        def strain_event(t, y_, glob=glob, lig=lig, alive=alive):
            return _max_ratio(y_[:6], glob, lig, alive)[0] - 1.0

        strain_event.terminal = True
        strain_event.direction = 1.0
        g0, i0 = _max_ratio(y[:6], glob, lig, alive)
        if elements and i0 >= 0 and g0 >= 1.0 and pieces:
            # another strip is already at or past eps_max where the last one broke: cascade
            t_e, y_e, i_break = t0, y, i0
        else:
            mask = (t_eval >= t0) if not pieces else (t_eval > t0)
            kwargs = {"jac": jac} if method in ("Radau", "BDF", "LSODA") else {}
            sol = solve_ivp(fun, (t0, t_end), y, method=method, t_eval=t_eval[mask],
                            rtol=rtol, atol=atol, max_step=max_step,
                            events=strain_event if (elements and i0 >= 0) else None, **kwargs)
            nfev += int(sol.nfev)
            njev += int(sol.njev)
            nlu += int(sol.nlu)
            pieces.append((current, sol.t, sol.y.T, params, disc_b, lig_b, fac_b, released))
            success, message = bool(sol.success), str(sol.message)
            if sol.status != 1:
                break
            t_e, y_e = float(sol.t_events[0][0]), sol.y_events[0][0]
            _, i_break = _max_ratio(y_e[:6], glob, lig, alive)
        name = current.strip_names[i_break]
        ratio, _ = _max_ratio(y_e[:6], glob, lig, alive)
        eps_c = lig[i_break, L_EPS + 2]
        released += params[6][i_break] * _trilinear_energy(ratio * eps_c, params[7][i_break],
                                                            params[8][i_break])
        events.append((t_e, "ruptured", name))
        log.info("simulate: %s ruptured at t = %.6g s", name, t_e)
        current = current.with_ruptured([name])
        t0, y = t_e, np.array(y_e, dtype=float)
    if progress is not None:
        progress(float(pieces[-1][1][-1]) if pieces and len(pieces[-1][1]) else t0)
    frames = []
    for cur, t, Y, prm, db, lb, fb, rel in pieces:
        if len(t):
            frames.append(_history_rows(cur, t, Y, load_fn, prm, db, lb, fb, iner, grav,
                                        elements, rel))
    frame = pd.DataFrame([r for rows in frames for r in rows])
    frame, err = _energy_columns(frame)
    if events:
        message = (f"{message} {len(events)} rupture(s): "
                   + ", ".join(f"{n} at t = {t:.4g} s" for t, _, n in events))
    tt = frame["t_s"].to_numpy() if not frame.empty else np.empty(0)
    Yall = (np.concatenate([p[2] for p in pieces if len(p[1])])
            if any(len(p[1]) for p in pieces) else np.empty((0, 15)))
    return SimulationResult(t=tt, q=Yall[:, :6].copy(), qd=Yall[:, 6:12].copy(), frame=frame,
                            energy_error=err, success=success, message=message, nfev=nfev,
                            njev=njev, nlu=nlu, model=current, events=tuple(events))


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


# ---------------------------------------------------------------- dynamic relaxation
@dataclass(frozen=True, eq=False)
class RelaxationResult:
    """Outcome of :func:`relax`.

    Attributes
    ----------
    q : ndarray, shape (6,)
        Settled pose [mm, rad] (the last state when not settled).
    converged : bool
        The settling criterion was met before ``t_max``.
    t_settled : float
        Simulated time at which it was met [s].
    steps, nfev, njev : int
        Integrator steps, right-hand side and Jacobian evaluations.
    residual_norm : float
        Scaled static residual ``max(|F_i| / 20 N, |M_i| / 1800 N mm)`` at ``q``.
    damping_norm : float
        Scaled disc damping force ``max(b_i |dq_i/dt| / scale_i)`` at the end.
    message : str
    """

    q: np.ndarray
    converged: bool
    t_settled: float
    steps: int
    nfev: int
    njev: int
    residual_norm: float
    damping_norm: float
    message: str

    def __repr__(self) -> str:
        return f"RelaxationResult({self.message})"

    @property
    def x(self) -> np.ndarray:
        """Alias of ``q`` (scipy.optimize-style)."""
        return self.q

    @property
    def success(self) -> bool:
        """Alias of ``converged``."""
        return self.converged


def relax(model: Segment, load: Load, *, tol: float = RELAX_TOL, t_max: float = 20.0,
          q0=None, inertia: BodyInertia | None = None, rtol: float = 1e-3,
          atol: float = 1e-6, first_step: float = 1e-5) -> RelaxationResult:
    """Static equilibrium by dynamic relaxation: the MADYMO-style baseline.

    C5 starts at rest at ``q0`` (default the reference pose q = 0, where Newton starts too),
    ``load`` is applied as a step, and eq. (D1) with all of the paper's damping is integrated
    (Radau, our Jacobian) until the motion has settled, checked after every step:

        max(|F_i| / 20 N, |M_i| / 1800 N mm) <= tol     (static residual, as segment.solve)
        max(b_i |dq_i/dt| / scale_i)          <= tol     (disc damping force of the motion)

    The settled pose satisfies the static equations to ``tol`` by construction, whatever the
    integrator tolerances; ``rtol`` and ``atol`` only set how faithfully the path is followed
    (loose by default: the baseline is timed, and a faster baseline is the fair comparison).

    Parameters
    ----------
    model : Segment
    load : Load
    tol : float
        Settling tolerance (default 1e-6, i.e. 2e-5 N and 1.8e-3 N mm).
    t_max : float
        Give up after this much simulated time [s].
    q0 : array_like, shape (6,), optional
    inertia : BodyInertia, optional
    rtol, atol : float
        Integrator tolerances.
    first_step : float
        First integrator step [s].

    Returns
    -------
    RelaxationResult
        Never raises for a motion that does not settle: ``converged`` is False with a message.
    """
    if not isinstance(model, Segment):
        raise TypeError(f"model must be a segment.Segment, got {type(model).__name__}")
    if not isinstance(load, Load):
        raise TypeError(f"load must be a segment.Load, got {type(load).__name__}")
    for name, value in (("tol", tol), ("t_max", t_max), ("rtol", rtol), ("atol", atol),
                        ("first_step", first_step)):
        if not (isinstance(value, numbers.Real) and np.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    q0, _ = _initial(q0, None)
    params = model._params
    packed = model._packed
    f = load.as_array()
    disc_b, lig_b, fac_b = _damping_arrays(model, True)
    iner = _inertia_array(inertia, model)
    vel_scale = disc_b / _SCALE

    def fun(t, y):
        return _rhs(y, f, params, disc_b, lig_b, fac_b, iner, 0.0, True, False)

    def jac(t, y):
        return _jac(y, f, params, packed, disc_b, lig_b, fac_b, iner, True, False)

    solver = Radau(fun, 0.0, np.concatenate([q0, np.zeros(6)]), float(t_max), jac=jac,
                   rtol=rtol, atol=atol, first_step=first_step)
    steps = 0
    converged = False
    message = ""
    wall = time.perf_counter()
    while solver.status == "running":
        try:
            msg = solver.step()
        except np.linalg.LinAlgError as exc:      # a status, never a raw LinAlgError
            message = (f"integrator failed at t = {solver.t:.4g} s: singular matrix ({exc}); "
                       "the mass matrix of the joint coordinates is singular where cos(phi_y) "
                       f"= 0, and C5 has rotated to phi_y = {np.degrees(solver.y[4]):.4g} deg")
            break
        steps += 1
        if solver.status == "failed":
            message = f"integrator failed: {msg}"
            break
        y = solver.y
        damp = float(np.max(np.abs(y[6:12] * vel_scale)))
        if damp <= tol:
            if _norm_phi(_residual(y[:6], f, packed))[0] <= tol:
                converged = True
                solver.status = "finished"
                break
        if time.perf_counter() - wall > 5.0:
            wall = time.perf_counter()
            log.info("relax %s: t = %.4g s, %d steps", load.name, solver.t, steps)
    y = solver.y
    res = float(_norm_phi(_residual(y[:6], f, packed))[0])
    damp = float(np.max(np.abs(y[6:12] * vel_scale)))
    if converged:
        message = f"settled at t = {solver.t:.4g} s after {steps} steps"
    elif not message:
        message = (f"not settled by t = {t_max:g} s: residual {res:.1e}, damping force "
                   f"{damp:.1e} (scaled), tolerance {tol:.1e}")
    return RelaxationResult(q=y[:6].copy(), converged=converged, t_settled=float(solver.t),
                            steps=steps, nfev=int(solver.nfev), njev=int(solver.njev),
                            residual_norm=res, damping_norm=damp, message=message)


# ---------------------------------------------------------------- disc-plane example
@dataclass(frozen=True, eq=False)
class DiscPlaneResult:
    """Time history of :func:`disc_plane_drop` (the cylinder paper's Fig. 7).

    Attributes
    ----------
    frame : pandas.DataFrame
        ``t_s``, ``x_mm``, ``z_mm`` (disc centre), ``tilt_rad``, ``sin_alpha``, ``r_over_r0``
        (distance of the virtual contact point from the disc centre over the radius,
        = 1 - exp(-C sin alpha) while the disc lies within the plane patch), ``penetration_mm``,
        ``force_N``.
    success : bool
    message : str
    """

    frame: pd.DataFrame
    success: bool
    message: str


@njit(cache=True)
def _disc_plane_rhs(y, m, inertia, radius, blend, law, damping, grav, plane_radius):
    """Planar (x, z, tilt) motion of a disc dropped on the plane z = 0.

    Returns dy/dt and (u, sin_alpha, r/r0, force)."""
    x, z, th = y[0], y[1], y[2]
    vx, vz, w = y[3], y[4], y[5]
    h = RATE_STEP
    thc = th + 1j * h * w
    c1 = (x + 1j * h * vx, 0j, z + 1j * h * vz)
    n1 = (-np.sin(thc) + 0j, 0j, -np.cos(thc) + 0j)  # face points down (tilt about y)
    c2 = (x + 0j, 0j, 0j)  # plane patch centred below the disc: the disc stays inside it
    n2 = (0j, 0j, 1.0 + 0j)
    u, point, direction, _, _, weight, sin_a = _contact(c1, n1, radius, c2, n2,
                                                         plane_radius, blend, law[3] > 0.5)
    f_el, _ = _contact_force(u, law)
    rate = u.imag / h
    total = 0.0
    if u.real > 0.0:
        total = max(f_el.real + damping * rate, 0.0)
    fx = total * direction[0].real
    fz = total * direction[2].real
    arm = sub(_re(point), (x + 0j, 0j, z + 0j))
    moment_y = cross(arm, (fx + 0j, 0j, fz + 0j))[1].real
    dy = np.empty(6)
    dy[0] = vx
    dy[1] = vz
    dy[2] = w
    dy[3] = fx / m
    dy[4] = fz / m - grav
    dy[5] = moment_y / inertia
    # r / r0 = |M P'| / |M P| = 1 - exp(-C sin alpha): here M = C1 (the disc lies within the
    # plane patch) and |MP| = r0, the disc radius (cylinder paper, section 1.3)
    rr = weight.real
    return dy, max(u.real, 0.0), sin_a.real, rr, total


def disc_plane_drop(*, radius: float = 5.0, thickness: float = 2.0,
                    mass_kg: float | None = None, tilt_deg: float = 30.0, height: float = 0.5,
                    blend: float = 16.7, law: ContactLaw | None = None, damping: float = 0.3,
                    t_end: float = 1.0, n_output: int = 401,
                    rtol: float = 1e-6) -> DiscPlaneResult:
    """A disc dropped tilted onto a plane with the regularized contact (cylinder paper, Fig. 7).

    A uniform disc (radius, thickness [mm], mass [kg]; default the C5 mass of Table 1, the
    paper gives no values for this example) is released at rest with its face tilted by
    ``tilt_deg`` and its lowest rim point ``height`` [mm] above the plane z = 0, under
    gravity. Motion in the x-z plane (x, z of the centre, tilt about y). The contact is
    :func:`segment.facet._contact` between the disc's end face and a plane patch (a disc of
    radius 100 r0 centred below the disc, so the disc always lies within it: the flat contact
    point M is the disc centre and r = r0 (1 - exp(-C sin alpha))), with the facet contact law
    and damping ``damping`` [N s/mm] on du/dt; frictionless, so the disc may slide, but
    nothing pushes it sideways: the force is along the plane's normal (the edge rests on the
    plane's face, :mod:`segment.facet` item 8), and x stays 0 (with the former bisector
    line of action it drifted to 8.7 mm by t = 1 s). The paper's claim: "the motion
    asymptotically approaches fully flat contact with the virtual contact point at the circle
    center", i.e. r/r0 -> 0 and sin alpha -> 0. Near flat the rocking is only lightly damped
    (the virtual point, where du/dt is taken, approaches the centre), so the approach is slow:
    r/r0 < 0.1 after 0.3 s, about 0.01 after 1 s.

    ``mass_kg`` defaults to C5's mass and ``law`` to the facet contact law, both from the
    packaged data (Table 1 and the paper's law).

    Returns
    -------
    DiscPlaneResult
    """
    params = load_parameters()
    mass_kg = params.inertia["C5"].mass if mass_kg is None else mass_kg
    law = params.contact_law if law is None else law
    for name, value in (("radius", radius), ("thickness", thickness), ("mass_kg", mass_kg),
                        ("t_end", t_end)):
        if not (np.isfinite(value) and value > 0):
            raise ValueError(f"disc_plane_drop: {name} must be > 0, got {value!r}")
    if not (np.isfinite(height) and height >= 0 and np.isfinite(blend) and blend >= 0
            and np.isfinite(damping) and damping >= 0):
        raise ValueError(f"disc_plane_drop: height, blend and damping must be >= 0, got "
                         f"{height!r}, {blend!r}, {damping!r}")
    if not 0.0 < tilt_deg < 90.0:
        raise ValueError(f"disc_plane_drop: tilt_deg must lie in (0, 90), got {tilt_deg!r}")
    if not isinstance(law, ContactLaw):
        raise TypeError(f"disc_plane_drop: law must be a segment.ContactLaw, got "
                        f"{type(law).__name__}")
    mass = mass_kg * KG_TO_T  # N s^2/mm
    inertia = mass * (3 * radius**2 + thickness**2) / 12.0  # about a diameter [N mm s^2]
    law_a = law.as_array()
    th0 = math.radians(tilt_deg)
    z0 = height + radius * math.sin(th0)
    y0 = np.array([0.0, z0, th0, 0.0, 0.0, 0.0])
    args = (mass, inertia, float(radius), float(blend), law_a, float(damping), GRAVITY_MM_S2,
            100.0 * radius)
    def fun(t, y):
        return _disc_plane_rhs(y, *args)[0]

    def jac(t, y):  # central differences with fixed steps (scipy's adaptive num_jac grows
        J = np.empty((6, 6))  # its step without bound during free fall, where J is constant)
        for j in range(6):
            h = 1e-7 * max(1.0, abs(y[j]))
            e = np.zeros(6)
            e[j] = h
            J[:, j] = (fun(t, y + e) - fun(t, y - e)) / (2.0 * h)
        return J

    sol = solve_ivp(fun, (0.0, t_end), y0, method="Radau", jac=jac, rtol=rtol, atol=1e-3 * rtol,
                    t_eval=np.linspace(0.0, t_end, n_output))
    rows = []
    for k in range(len(sol.t)):
        _, u, sin_a, rr, force = _disc_plane_rhs(sol.y[:, k], *args)
        rows.append({"t_s": sol.t[k], "x_mm": sol.y[0, k], "z_mm": sol.y[1, k],
                     "tilt_rad": sol.y[2, k], "sin_alpha": sin_a, "r_over_r0": rr,
                     "penetration_mm": u, "force_N": force})
    return DiscPlaneResult(frame=pd.DataFrame(rows), success=bool(sol.success),
                           message=str(sol.message))


def plot_disc_plane(result: DiscPlaneResult, path=None, *, ax=None):
    """r/r0 and sin(alpha) over time (the cylinder paper's Fig. 7) as a matplotlib figure.

    Drawn into ``ax`` when given (a matplotlib Axes of your figure), else into a new figure.
    Saved as an image at ``path`` when given (and then closed). Returns the figure.
    """
    from segment._extras import require

    plt = require("matplotlib.pyplot", "report", "plot_disc_plane")

    df = result.frame
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(6.0, 3.6), dpi=120)
    else:
        fig = ax.figure
    ax.plot(df["t_s"] * 1e3, df["r_over_r0"], label="r / r0 (virtual contact point)")
    ax.plot(df["t_s"] * 1e3, df["sin_alpha"], "--", label="sin alpha (tilt)")
    ax.set_xlabel("time [ms]")
    ax.set_ylabel("[-]")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("Disc dropped tilted on a plane: steep-to-flat transition")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right")
    if own:
        fig.tight_layout()
    if path is not None:
        fig.savefig(path)
        plt.close(fig)
    return fig
