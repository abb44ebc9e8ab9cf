"""The free rotation of the Lie-Stormer-Verlet integrator: C5's rotation over one step.

The seed (Applied Mechanics Lab, *Lie-Stormer-Verlet integration of rigid-body motion*, web
page; SOURCES.md section 1, ``LSV``) integrates a rigid body ``x = Q X + c`` with the rotation
``Q`` kept on SO(3): the rotation is only ever multiplied by exponentials of the angular
velocity (:mod:`segment.solvers.dynamics.so3`), so ``Q^T Q = 1`` holds to rounding, and the
angular momentum is transported exactly, so it is conserved exactly without torque. One
concept: that rotation update without forces (the "drift" of
:mod:`segment.solvers.dynamics.lsv`), implicit and explicit, and the torque-free body it
integrates alone (:func:`free_rigid_body`, the seed's test case). Its implicit algorithm, in
its notation (``J`` the inertia tensor, ``*w`` the skew matrix of ``w``)::

    w_{n+1/2} = 1/2 (J^-1 e^{dt *w_{n+1/2}} J w_n + w_n)          (implicit: solved for w)
    Q_{n+1}   = Q_n e^{-dt *w_{n+1/2}}
    w_{n+1}   = J^-1 e^{dt *w_{n+1/2}} J w_n

We read the first line with the parenthesis its 1/2 implies (``w_{n+1/2}`` the mean of
``w_n`` and ``w_{n+1}``; as printed, without it, the method would not reduce to the identity
for dt -> 0) and write it in the body frame with ``R = Q`` (C5 -> C6), body angular momentum
``Pi = J W`` and ``F = e^{dt [W]x}`` (the seed's sign of the exponent follows from its
``*w = Q^T dQ/dt`` with the opposite orientation of the skew matrix)::

    W = 1/2 (J^-1 Pi_n + J^-1 F(W)^T Pi_n),   R_{n+1} = R_n F(W),   Pi_{n+1} = F(W)^T Pi_n

``F^T`` maps ``Pi_n`` to ``Pi_{n+1}``, so the spatial angular momentum ``R Pi`` does not change
at all (``R_{n+1} Pi_{n+1} = R_n F F^T Pi_n``) and ``|Pi|`` neither. With ``W`` the midpoint
of ``J^-1 Pi_n`` and ``J^-1 Pi_{n+1}`` the kinetic energy is conserved exactly too:
``E_{n+1} - E_n = (Pi_{n+1} - Pi_n) . W = Pi_n . (F(W) - 1) W = 0`` (a rotation about ``W``
leaves ``W`` unchanged). We solve for ``W`` by fixed-point iteration to rounding
(:data:`ROTATION_TOL`).

The seed names an explicit version, cheaper and "not conserving the energy as well", without
its equations. Ours: the free rotation over the step is the symmetric composition of the exact
flows of the three parts ``Pi_i^2 / (2 J_i)`` of the kinetic energy in the principal frame
(the splitting of McLachlan 1993 and Dullweber, Leimkuhler and McLachlan 1997):
``X(dt/2) Y(dt/2) Z(dt) Y(dt/2) X(dt/2)``, each a rotation about one principal axis by
``tau Pi_i / J_i`` of the seed's form (``R <- R F``, ``Pi <- F^T Pi``). Explicit, second order,
time-symmetric and symplectic: momentum exact, ``Q^T Q = 1`` to rounding, energy error
bounded (it oscillates, it does not drift). (SOURCES.md section 1: ``McLachlan1993``,
``DLM1997``.)
"""

from __future__ import annotations

import numpy as np

from segment.core.status import Status
from segment.jit import njit
from segment.solvers.dynamics.so3 import _axis_rotation, _exp_skew

__all__ = ["ROTATION_MAX_ITER", "ROTATION_TOL", "free_rigid_body"]

ROTATION_TOL = 4.0 * np.finfo(float).eps
"""Fixed-point tolerance of the implicit rotation update (relative to |W|)."""
ROTATION_MAX_ITER = 100

# The outcome of a rotation update, as plain integers for the kernels: OK, or the code of
# Status.ROTATION_FAILED (segment.core.status)
OK = 0
ROTATION_FAILED = int(Status.ROTATION_FAILED)


@njit
def _rotate_explicit(R, Pi, lam, h):
    """Free rotation over ``h``: X(h/2) Y(h/2) Z(h) Y(h/2) X(h/2), principal frame."""
    for i, tau in ((0, 0.5 * h), (1, 0.5 * h), (2, h), (1, 0.5 * h), (0, 0.5 * h)):
        F = _axis_rotation(i, tau * Pi[i] / lam[i])
        R = R @ F
        Pi = F.T @ Pi
    return R, Pi, OK


@njit
def _rotate_implicit(R, Pi, lam, h):
    """Free rotation over ``h``: the seed's implicit midpoint update (module docstring)."""
    W0 = Pi / lam
    W = W0.copy()
    status = ROTATION_FAILED
    for _ in range(ROTATION_MAX_ITER):
        F = _exp_skew(W, h)
        W_new = 0.5 * (W0 + (F.T @ Pi) / lam)
        change = np.max(np.abs(W_new - W))
        W = W_new
        if change <= ROTATION_TOL * (np.max(np.abs(W)) + 1e-300):
            status = OK
            break
    F = _exp_skew(W, h)
    return R @ F, F.T @ Pi, status


@njit
def _rotate(R, Pi, lam, h, implicit):
    if implicit:
        return _rotate_implicit(R, Pi, lam, h)
    return _rotate_explicit(R, Pi, lam, h)


# ---------------------------------------------------------------- free rigid body
@njit
def _free_body(lam, R, Pi, h, n, implicit, stride):
    """``n`` steps of the free rotation; every ``stride`` steps the kinetic energy, the spatial
    angular momentum R Pi and ``max |R^T R - 1|``."""
    m = n // stride + 1
    E = np.empty(m)
    L = np.empty((m, 3))
    orth = np.empty(m)
    status = OK
    j = 0
    for k in range(n + 1):
        if k % stride == 0:
            E[j] = 0.5 * np.sum(Pi * Pi / lam)
            L[j] = R @ Pi
            orth[j] = np.max(np.abs(R.T @ R - np.eye(3)))
            j += 1
        if k == n:
            break
        R, Pi, st = _rotate(R, Pi, lam, h, implicit)
        if st != OK:
            status = st
    return E[:j], L[:j], orth[:j], R, Pi, status


def free_rigid_body(inertia, omega0, *, dt: float, n_steps: int, variant: str = "implicit",
                    R0=None, stride: int = 1) -> dict:
    """A torque-free rigid body integrated by LSV (the seed's test case).

    Parameters
    ----------
    inertia : array_like, shape (3,)
        Principal moments of inertia [any consistent unit], > 0.
    omega0 : array_like, shape (3,)
        Initial angular velocity in the principal (body) frame [rad/s].
    dt : float
        Step [s].
    n_steps : int
        Number of steps.
    variant : {"implicit", "explicit"}
    R0 : array_like, shape (3, 3), optional
        Initial rotation (default the identity).
    stride : int
        Record every ``stride`` steps.

    Returns
    -------
    dict
        ``t`` [s], ``energy`` (kinetic), ``angular_momentum`` (spatial, (m, 3)),
        ``orthogonality`` (``max |R^T R - 1|`` per record), ``R`` and ``Pi`` at the end,
        ``success``.
    """
    lam = np.array(inertia, dtype=float)
    w0 = np.array(omega0, dtype=float)
    if lam.shape != (3,) or not np.all(np.isfinite(lam)) or not np.all(lam > 0):
        raise ValueError(f"inertia must be 3 finite numbers > 0, got {inertia!r}")
    if w0.shape != (3,) or not np.all(np.isfinite(w0)):
        raise ValueError(f"omega0 must be 3 finite numbers [rad/s], got {omega0!r}")
    if variant not in ("implicit", "explicit"):
        raise ValueError(f"variant must be 'implicit' or 'explicit', got {variant!r}")
    if not (np.isfinite(dt) and dt > 0):
        raise ValueError(f"dt must be a finite number > 0 [s], got {dt!r}")
    if int(n_steps) < 1 or int(stride) < 1:
        raise ValueError(f"n_steps and stride must be >= 1, got {n_steps!r}, {stride!r}")
    R = np.eye(3) if R0 is None else np.array(R0, dtype=float)
    E, L, orth, R_end, Pi_end, status = _free_body(lam, R, lam * w0, float(dt), int(n_steps),
                                                   variant == "implicit", int(stride))
    return {"t": np.arange(len(E)) * float(dt) * int(stride), "energy": E,
            "angular_momentum": L, "orthogonality": orth, "R": R_end, "Pi": Pi_end,
            "success": status == OK}
