"""The forward model of a curve calibration: the rotations of parameter sets at the target
points and their exact sensitivities, each curve followed by continuation
(:func:`segment.studies.paths.solve_paths`)."""

from __future__ import annotations

import numpy as np

from segment.studies.calibration.curve_targets import CurveTargets
from segment.studies.curves import LEVEL_DIGITS, MODES, mode_load
from segment.studies.paths import solve_paths
from segment.studies.space import ParameterSpace

__all__ = ["CurveForward"]


class CurveForward:
    """Predictions y(P) (M, n) [deg] of curve targets and their derivatives (M, n, D).

    Each mode's path runs through every moment level of the targets' curves up to the
    largest target level (ignored points included: they carry the continuation), in steps of
    the file's levels; sensitivities only where a target sits.
    """

    def __init__(self, model, space: ParameterSpace, targets: CurveTargets, *,
                 n_threads: int | None = 1):
        self.model, self.space, self.targets = model, space, targets
        self.n_threads = n_threads
        self.groups = []
        for mode in targets.mode_set:
            rows = np.flatnonzero(np.array(targets.modes) == mode)
            top = float(np.max(targets.moment_Nm[rows]))
            levels = targets.curves.levels(mode)
            wanted = np.round(targets.moment_Nm[rows], LEVEL_DIGITS)
            levels = np.union1d(levels[levels <= top + 1e-12], wanted)
            levels = levels[levels > 0]
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
        for _, rows, F, want, index, dof, sign in self.groups:
            r = solve_paths(self.model, F, space=self.space, P=P, want=want,
                            sensitivities=sensitivities, n_threads=self.n_threads)
            self.n_solves += m * (F.shape[0] + 1)
            y[:, rows] = sign * np.degrees(r.displacement[:, index, dof])
            ok &= r.converged[:, want].all(axis=1)
            if sensitivities:
                jac[:, rows, :] = sign * np.degrees(r.displacement_dp[:, index, dof, :])
        return y, ok, jac
