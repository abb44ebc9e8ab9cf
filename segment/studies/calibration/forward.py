"""The forward model of the calibration: the responses of a parameter set and their exact
sensitivities, per target configuration."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from segment.studies.calibration.targets import CONFIGURATIONS, Targets
from segment.studies.reference import CASES, DISPLACEMENT_COLUMNS
from segment.studies.space import ParameterSpace


def configuration_model(model, configuration: str):
    """The model of a target configuration derived from the intact ``model``."""
    if configuration == "intact":
        return model
    if configuration == "disc segment":
        return model.with_ligaments(("ALL", "PLL")).replace(facets=())
    raise ValueError(f"unknown configuration {configuration!r}; expected one of "
                     f"{', '.join(CONFIGURATIONS)}")


def check_cases(cases, targets: Targets) -> dict:
    """The load cases of a calibration (default: the packaged ones): a mapping name -> Load
    holding every case the targets name."""
    from segment.core.published import LOAD_CASES
    from segment.elements.loads import Load

    cases = dict(LOAD_CASES) if cases is None else cases
    if not hasattr(cases, "items") or not all(isinstance(v, Load) for v in cases.values()):
        raise TypeError("cases must be a mapping of case names to segment.Load records, got "
                        f"{type(cases).__name__}")
    missing = sorted({c for c in targets.cases if c not in cases}, key=CASES.index)
    if missing:
        raise ValueError(f"{Path(targets.path).name}: target case(s) {missing} are not among "
                         f"the load cases {list(cases)}")
    return dict(cases)


class Forward:
    """Predictions y(P) (M, n) of the targets and their exact derivatives (M, n, D).

    ``cases``: the load cases the targets refer to by name (default: the packaged ones); a
    calibration of a data folder passes the folder's.
    """

    def __init__(self, model, space: ParameterSpace, targets: Targets, *, n_threads=None,
                 client=None, cases=None):
        self.space, self.targets = space, targets
        self.n_threads, self.client = n_threads, client
        self.cases = check_cases(cases, targets)
        self.groups = []
        for config in CONFIGURATIONS:
            rows = [i for i, g in enumerate(targets.configurations) if g == config]
            if not rows:
                continue
            cases = sorted({targets.cases[i] for i in rows}, key=CASES.index)
            loads = [self.cases[c] for c in cases]
            col = [DISPLACEMENT_COLUMNS.index(targets.quantities[i]) for i in rows]
            load_idx = [cases.index(targets.cases[i]) for i in rows]
            self.groups.append((configuration_model(model, config), loads, np.array(rows),
                                np.array(load_idx), np.array(col)))
        self.n_solves = 0

    def __call__(self, P, *, sensitivities=False, progress=False, strict=True):
        """``strict=False``: parameter values outside their plausible ranges are solved (the
        misfit search for a needed value), see :func:`~segment.studies.sets.solve_sets`."""
        from segment.studies.sets import solve_sets

        P = np.atleast_2d(np.asarray(P, dtype=float))
        m, n, d = P.shape[0], len(self.targets), self.space.dim
        y = np.empty((m, n))
        ok = np.ones(m, dtype=bool)
        jac = np.empty((m, n, d)) if sensitivities else None
        for cfg_model, loads, rows, load_idx, col in self.groups:
            r = solve_sets(cfg_model, P, loads, space=self.space, sensitivities=sensitivities,
                           n_threads=self.n_threads, client=self.client, progress=progress,
                           strict=strict)
            self.n_solves += m * (len(loads) + 1)
            disp = r.displacement[:, load_idx, col]                  # (M, k)
            rot = col >= 3
            y[:, rows] = np.where(rot, np.degrees(disp), disp)
            ok &= r.converged.all(axis=1)
            if sensitivities:
                dd = r.dq_dp - r.dq_unloaded_dp[:, None]             # (M, N, 6, D)
                g = dd[:, load_idx, col, :]                          # (M, k, D)
                jac[:, rows, :] = np.where(rot[None, :, None], np.degrees(g), g)
        return y, ok, jac
