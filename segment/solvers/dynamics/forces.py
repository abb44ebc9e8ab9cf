"""Generalized forces of the force elements at a pose *and* a velocity: the paper's damping.

:mod:`segment.core.residual` gives the static generalized forces (disc, ligaments, facets,
load) at a pose. The dynamics also need their damping terms (DETC2000/MECH-6821):

* disc, eq. (1): ``-b_t dq_i/dt`` on x, y, z and ``-b_phi dq_i/dt`` on the rotations
  (b_t = 1000 N s/m = 1 N s/mm, b_phi = 1.5 N m s/rad = 1500 N mm s/rad);
* ligaments: ``F_l = F_el(eps) + b_l dl/dt`` while taut (b_l = 300 N s/m = 0.3 N s/mm; see
  :mod:`segment.elements.ligament` for reading b_l as acting on dl/dt); the total tension is clipped
  at 0 (a ligament cannot push);
* facets: ``F_c = F_el(u) + b_f du/dt`` while penetrating (b_f = 300 N s/m = 0.3 N s/mm),
  clipped at 0 (a contact cannot pull).

The rates ``dl/dt`` and ``du/dt`` are exact: the element kernels (the same ones the residual
sums) are evaluated once at the complex pose ``q + i h dq/dt`` (h = 1e-20); real parts are
the element values, imaginary parts divided by h their time derivatives (the complex-step trick
of :mod:`segment.elements.vec` applied along the velocity). At rest the sum of the elastic rows
equals the static residual to rounding (``tests/test_dynamics.py``).

The elastic energies of the disc (1/2 k(q_i) q_i^2, or the potential of its law of
:mod:`segment.elements.disc`) and of the ligaments (l0 int F_el d eps) and the contact-law
energy of the facets come out of the same call, for the energy bookkeeping of
:mod:`segment.solvers.dynamics.energy`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from segment.core.model import Segment
from segment.elements.disc import add_disc_force, disc_energy
from segment.elements.facet import facet_state
from segment.elements.kinematics import add_load, add_point_force, pose_and_axes
from segment.elements.ligament import ligament_state
from segment.elements.loads import Load
from segment.elements.restraint import P_B, P_K, restraint_state
from segment.elements.vec import row, scale, sub
from segment.jit import njit

__all__: list[str] = []

RATE_STEP = 1e-20
"""Imaginary step h of the velocity-direction complex step (rates = Im(.)/h)."""


# ---------------------------------------------------------------- kernels
@njit
def _re(v):
    """Real part of a complex 3-tuple, kept complex-typed."""
    return (v[0].real + 0j, v[1].real + 0j, v[2].real + 0j)


@njit
def _trilinear_energy(eps, e, f):
    """int_0^eps F(s) ds of the trilinear law of :func:`segment.elements.ligament.trilinear`
    [N]."""
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


@njit
def _contact_energy(u, law):
    """int_0^u F_c(s) ds of the facet contact law [N mm]."""
    k2, ut, k1 = law[0], law[1], law[2]
    if u <= 0.0:
        return 0.0
    if u <= ut:
        return k2 * u**3 / 3.0
    d = u - ut
    return k2 * ut**3 / 3.0 + k2 * ut * ut * d + 0.5 * k1 * d * d


@njit
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
    p, R, R0, h1, h2, h3 = pose_and_axes(qc, s0, r0)
    pr, h1r, h2r, h3r = _re(p), _re(h1), _re(h2), _re(h3)
    v_el = 0.0
    v_fac = 0.0
    if elements:
        add_disc_force(Qc[0], q, k_pos, k_neg, disc_law)  # disc, eq. (1), and its damping
        for i in range(6):
            Qc[3, i] -= disc_b[i] * qd[i]
            if disc_law[i, 0] == 0.0:
                v_el -= 0.5 * Qc[0, i].real * q[i]   # 1/2 k(q_i) q_i^2
            else:   # another law of segment.elements.disc: its potential
                v_el += disc_energy(disc_law[i], q[i], k_pos[i], k_neg[i])
        for i in range(lig_l0.shape[0]):
            a, length, strain, tension, _ = ligament_state(i, p, R, lig_a, lig_c6, lig_l0,
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
                add_point_force(Qc[1], ar, scale(f_el / ln, d), pr, R0, h1r, h2r, h3r)
                add_point_force(Qc[3], ar, scale((total - f_el) / ln, d), pr, R0, h1r, h2r,
                                 h3r)
        for i in range(fac_r1.shape[0]):
            st = facet_state(i, p, R, fac_c1, fac_n1, fac_r1, fac_c2, fac_n2, fac_r2,
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
            add_point_force(Qc[2], point, scale(f_el, direction), pr, R0, h1r, h2r, h3r)
            add_point_force(Qc[3], point, scale(total - f_el, direction), pr, R0, h1r, h2r,
                             h3r)
        # point restraints of a device (segment.elements.restraint): elastic, booked with
        # the disc (row 0) whose place they take; V = 1/2 d . K d
        for i in range(pts.shape[0]):
            x, force = restraint_state(i, p, R, pts)
            for k in range(3):
                d = x[k].real - pts[i, P_B + k]
                v_el += 0.5 * pts[i, P_K + k] * d * d
            add_point_force(Qc[0], _re(x), _re(force), pr, R0, h1r, h2r, h3r)
    add_load(Qc[4], load, r0, h1r, h2r, h3r)
    for r_ in range(5):
        for k in range(6):
            Q[r_, k] = Qc[r_, k].real
    return v_el, v_fac



# ---------------------------------------------------------------- damping and load inputs
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


