"""The forward model of a curve calibration: the rotations of parameter sets at the target
points and their exact sensitivities, each curve followed by continuation
(:mod:`segment.studies.paths`).

The path of a mode runs through the target levels, led in from the unloaded pose by the
curves' levels below the first target at every :data:`LEAD_IN_STEP_NM` (the points flagged
``ignore`` are not fitted, but where they sit the path has to pass anyway). The equilibria
do not depend on the steps (measured: the eight neutral-zone fits of the Nightingale
specimens give the same rotations to 1e-11 deg with steps of 0.1 N m from 0.1 N m and with the
target levels alone); the steps only set the Newton iterations.
"""

from __future__ import annotations

import numpy as np

from segment.studies.calibration.curve_targets import CurveTargets
from segment.studies.curves import LEVEL_DIGITS, MODES, mode_load
from segment.studies.paths import solve_packed, touch_of
from segment.studies.space import ParameterSpace

__all__ = ["LEAD_IN_STEP_NM", "CurveForward"]

LEAD_IN_STEP_NM = 0.5
"""Spacing of the lead-in levels below a mode's first target [N m]."""


class CurveForward:
    """Predictions y(P) (M, n) [deg] of curve targets and their derivatives (M, n, D).

    Each mode's path runs through the target levels with a lead-in (module docstring);
    sensitivities only where a target sits.
    """

    def __init__(self, model, space: ParameterSpace, targets: CurveTargets, *,
                 n_threads: int | None = 1):
        self.model, self.space, self.targets = model, space, targets
        self.n_threads = n_threads
        self.groups = []
        for mode in targets.mode_set:
            rows = np.flatnonzero(np.array(targets.modes) == mode)
            wanted = np.round(targets.moment_Nm[rows], LEVEL_DIGITS)
            first = float(wanted.min())
            lead = targets.curves.levels(mode)
            lead = lead[(lead > 0) & (lead < first - 1e-12)]
            keep = np.round(lead / LEAD_IN_STEP_NM, 6) == np.round(lead / LEAD_IN_STEP_NM)
            levels = np.union1d(lead[keep], wanted)
            index = np.searchsorted(levels, wanted)
            want = np.zeros(levels.size, dtype=bool)
            want[index] = True
            dof, sign = MODES[mode]
            self.groups.append((mode, rows, mode_load(mode, levels), want, index, dof, sign))
        self.n_solves = 0

    def __call__(self, P, *, sensitivities: bool = False):
        """``(y (M, n), ok (M,), jac (M, n, D) or None)``: rotations in the named direction
        from the unloaded equilibrium [deg]; ``ok`` False where an equilibrium failed."""
        P = np.atleast_2d(np.asarray(P, dtype=float))
        m, n, d = P.shape[0], len(self.targets), self.space.dim
        y = np.empty((m, n))
        ok = np.ones(m, dtype=bool)
        jac = np.empty((m, n, d)) if sensitivities else None
        P = self.space.check(P)
        packed = self.space.pack(self.model, P)
        derivative = ((self.space.pack_derivative(self.model, P, n_threads=self.n_threads),
                       touch_of(self.space, self.model)) if sensitivities else None)
        for _, rows, F, want, index, dof, sign in self.groups:
            r = solve_packed(packed, F, want=want, derivative=derivative,
                             n_threads=self.n_threads, pts=self.model._packed[3])
            self.n_solves += m * (F.shape[0] + 1)
            y[:, rows] = sign * np.degrees(r.displacement[:, index, dof])
            ok &= r.converged[:, want].all(axis=1)
            if sensitivities:
                jac[:, rows, :] = sign * np.degrees(r.displacement_dp[:, index, dof, :])
        return y, ok, jac
