"""The forward model of the hierarchical population model
(:mod:`segment.studies.calibration.hierarchical`): one experiment's rotations at its load
steps and the ligaments' strain ratios, with their derivatives by the parameters."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from segment.core.laws import ligament_rows
from segment.elements.tangent import F_SCALE, G_R0, G_S0, L_A, L_B, L_EPS, L_F, L_L0
from segment.studies.calibration.hierarchical_settings import CONFIGS, LEAD_IN_NM, POSTERIOR
from segment.studies.curves import MODES, mode_load
from segment.studies.paths import solve_packed, touch_of

__all__ = ["Experiment", "Forward", "strain_ratios"]


@dataclass(frozen=True)
class Experiment:
    """One loaded path: configuration (:data:`CONFIGS`), mode (:data:`MODES`) and the moments
    [N m] (increasing, > 0) at which the rotation [deg] in the named direction is wanted."""

    config: str
    mode: str
    moment_Nm: tuple[float, ...]


class Forward:
    """Rotations of parameter sets in a list of experiments, with their exact derivatives
    (:func:`segment.studies.paths.solve_packed`: continuation from the unloaded pose; the
    posterior-removed configuration is the packed arrays with FL, ISL and both CL carrying
    no force and both facets no contact, the same equilibria as ``Segment.with_state(
    "posterior-removed")`` to the last bit)."""

    def __init__(self, model, space, *, n_threads: int | None = 1):
        self.model, self.space, self.n_threads = model, space, n_threads
        rows = ligament_rows(model)
        self.cut = np.concatenate([rows[n] for n in POSTERIOR])
        self.n_solves = 0

    def _packed(self, P, config, sensitivities):
        glob, lig, fac = self.space.pack(self.model, P)
        der = None
        if sensitivities:
            dglob, dlig, dfac = self.space.pack_derivative(self.model, P,
                                                           n_threads=self.n_threads)
            der = [dglob, dlig, dfac]
        if config == "posterior-removed":
            lig = lig.copy()
            fac = fac.copy()
            lig[:, self.cut, L_F:L_F + 3] = 0.0
            fac[:, :, F_SCALE] = 0.0
            if der is not None:
                der[1] = der[1].copy()
                der[2] = der[2].copy()
                der[1][:, :, self.cut, L_F:L_F + 3] = 0.0
                der[2][:, :, :, F_SCALE] = 0.0
        derivative = ((tuple(der), touch_of(self.space, self.model))
                      if der is not None else None)
        return (glob, lig, fac), derivative

    def __call__(self, P, experiments, *, sensitivities: bool = False, states: bool = False):
        """``(y (M, n), ok (M,), jac (M, n, D) or None)``: rotations [deg] at every moment of
        every experiment in order; ``ok`` False where an equilibrium failed. With ``states``
        (and ``sensitivities``) :attr:`last` holds, per experiment, the equilibrium at its
        largest moment ``q (M, 6)`` [mm, rad], ``dq_dp (M, 6, D)``, the packed ``glob (M, G)``
        and ligament rows ``lig (M, n, 13)``, and ``dl0_dp (M, D, n)``."""
        P = np.atleast_2d(np.asarray(P, dtype=float))
        m = P.shape[0]
        sizes = [len(e.moment_Nm) for e in experiments]
        n, d = sum(sizes), self.space.dim
        y = np.empty((m, n))
        ok = np.ones(m, dtype=bool)
        jac = np.empty((m, n, d)) if sensitivities else None
        packs = {}
        self.last = []
        start = 0
        for e, k in zip(experiments, sizes, strict=True):
            if e.config not in CONFIGS:
                raise ValueError(f"unknown configuration {e.config!r}; expected one of "
                                 f"{', '.join(CONFIGS)}")
            if e.config not in packs:
                packs[e.config] = self._packed(P, e.config, sensitivities)
            packed, derivative = packs[e.config]
            want_m = np.asarray(e.moment_Nm, dtype=float)
            lead = np.arange(1, int(want_m[0] / LEAD_IN_NM) + 1) * LEAD_IN_NM
            lead = lead[lead < want_m[0] - 1e-9]
            levels = np.concatenate([lead, want_m])
            want = np.zeros(levels.size, dtype=bool)
            want[lead.size:] = True
            r = solve_packed(packed, mode_load(e.mode, levels), want=want,
                             derivative=derivative, n_threads=self.n_threads,
                             pts=self.model._packed[3])
            self.n_solves += m * (levels.size + 1)
            dof, sign = MODES[e.mode]
            y[:, start:start + k] = sign * np.degrees(r.displacement[:, lead.size:, dof])
            ok &= r.converged[:, want].all(axis=1)
            if sensitivities:
                jac[:, start:start + k] = sign * np.degrees(
                    r.displacement_dp[:, lead.size:, dof, :])
                if states:
                    self.last.append((r.q[:, -1].copy(), r.dq_dp[:, -1].copy(), packed[0],
                                      packed[1], derivative[0][1][:, :, :, L_L0]))
            start += k
        return y, ok, jac


def _rotation(q, R0):
    """``R0 Rx(q3) Ry(q4) Rz(q5)`` (:mod:`segment.elements.kinematics`), written out element
    by element (no BLAS: the same bits on any CPU)."""
    def mul(A, B):
        return [[A[i][0] * B[0][j] + A[i][1] * B[1][j] + A[i][2] * B[2][j] for j in range(3)]
                for i in range(3)]

    cx, sx = math.cos(q[3]), math.sin(q[3])
    cy, sy = math.cos(q[4]), math.sin(q[4])
    cz, sz = math.cos(q[5]), math.sin(q[5])
    rx = [[1.0, 0.0, 0.0], [0.0, cx, -sx], [0.0, sx, cx]]
    ry = [[cy, 0.0, sy], [0.0, 1.0, 0.0], [-sy, 0.0, cy]]
    rz = [[cz, -sz, 0.0], [sz, cz, 0.0], [0.0, 0.0, 1.0]]
    return mul(mul(mul(R0, rx), ry), rz)


def strain_ratios(q, glob, lig) -> np.ndarray:
    """Strain over the strain at F_max, ``g = (l / l0 - 1) / eps_C`` (Table 3), of every
    packed ligament row (n,) at the pose ``q`` [mm, rad]; g >= 1 is past rupture. Elementwise
    arithmetic only (the same bits on any CPU)."""
    R0 = [[float(glob[G_R0 + 3 * i + j]) for j in range(3)] for i in range(3)]
    R = _rotation([float(v) for v in q], R0)
    p = [float(glob[G_S0 + k]) + R0[k][0] * q[0] + R0[k][1] * q[1] + R0[k][2] * q[2]
         for k in range(3)]
    a0, a1, a2 = lig[:, L_A], lig[:, L_A + 1], lig[:, L_A + 2]
    d = [lig[:, L_B + k] - (p[k] + R[k][0] * a0 + R[k][1] * a1 + R[k][2] * a2)
         for k in range(3)]
    length = np.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
    return (length / lig[:, L_L0] - 1.0) / lig[:, L_EPS + 2]
