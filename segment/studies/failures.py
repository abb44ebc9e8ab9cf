"""Which parameter sets of a study failed, why, and whether the failures are random.

A study over a parameter space (Sobol indices, uncertainty bands) summarises the sets that
converged. That is an answer about the space only when the failed sets are a random part of
it; failures piled in one corner (e.g. every set with a low disc stiffness) would make the
survivors describe another space. :func:`summarise_failures` counts the failed sets and their
reasons (the solver's status codes) and tests, per parameter, whether the failed sets sit
elsewhere than the converged ones: a two-sample Kolmogorov-Smirnov test of their positions in
the parameter's range, at level :data:`CONCENTRATION_ALPHA` divided by the number of
parameters (Bonferroni). A study refuses to present the survivors as its answer when the
failures are concentrated, when every set failed, or when more than
:data:`MAX_FAILED_FRACTION` failed (:attr:`FailureSummary.acceptable`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from segment.core.status import CONVERGED_STATUSES, Status

__all__ = ["CONCENTRATION_ALPHA", "MAX_FAILED_FRACTION", "MIN_FAILED_FOR_TEST",
           "FailureSummary", "summarise_failures"]

CONCENTRATION_ALPHA = 0.01
"""Family-wise level of the test "the failed sets lie where the others lie"."""
MIN_FAILED_FOR_TEST = 5
"""Fewer failed sets than this cannot show a concentration (the test is not run)."""
MAX_FAILED_FRACTION = 0.01
"""A study whose failed sets are random still refuses above this share: each failed output is
replaced by the mean of the converged ones (the Saltelli design needs every row), which pulls
every variance towards zero by up to that share."""


@dataclass(frozen=True)
class FailureSummary:
    """Failed sets of a study.

    Attributes
    ----------
    n_sets, n_failed : int
    reasons : tuple of (str, int)
        What failed and how often, over every failed solve (``"<case>: <status>"``), most
        frequent first.
    concentrated : tuple of (str, str, float)
        Parameters along which the failed sets lie elsewhere than the converged ones:
        (name, ``"low"`` or ``"high"`` end of its range, p-value), smallest p first.
    tested : bool
        Whether the concentration test ran (enough failed and converged sets).
    """

    n_sets: int
    n_failed: int
    reasons: tuple[tuple[str, int], ...] = ()
    concentrated: tuple[tuple[str, str, float], ...] = ()
    tested: bool = False

    @property
    def fraction(self) -> float:
        return self.n_failed / self.n_sets if self.n_sets else 0.0

    @property
    def acceptable(self) -> bool:
        """Survivors may stand for the space: none failed, or few and at random."""
        if self.n_failed == 0:
            return True
        return (self.n_failed < self.n_sets and not self.concentrated
                and self.fraction <= MAX_FAILED_FRACTION)

    def describe(self) -> str:
        """One sentence: how many failed, why, and where (empty when none failed)."""
        if not self.n_failed:
            return ""
        why = ", ".join(f"{k} x {n}" for k, n in self.reasons[:4])
        more = len(self.reasons) - 4
        text = (f"{self.n_failed:,} of {self.n_sets:,} parameter sets failed "
                f"({self.fraction:.1%}; {why}"
                + (f", and {more} more reason{'s' if more > 1 else ''}" if more > 0 else "")
                + ")")
        if self.n_failed == self.n_sets:
            return text + ": every set failed"
        if self.concentrated:
            where = ", ".join(f"{n} ({end} end of its range, p = {p:.1e})"
                              for n, end, p in self.concentrated[:3])
            return text + f"; the failures are not random, they concentrate along {where}"
        if not self.tested:
            return text + "; too few to test whether they are random"
        return text + "; they look random (no parameter separates them from the others)"


def summarise_failures(positions, ok, *, names, status=None, status_unloaded=None,
                       case_names=None) -> FailureSummary:
    """Count and locate the failed sets.

    Parameters
    ----------
    positions : ndarray (M, D)
        Each set's position in the unit cube (or in its ranges, scaled to [0, 1]).
    ok : ndarray of bool (M,)
        The set converged (every solve of it).
    names : sequence of str
        Parameter names (D).
    status, status_unloaded : ndarray of int (M, N) and (M,), optional
        Solver status codes, for the reasons.
    case_names : sequence of str, optional
        Names of the N loads.
    """
    from scipy.stats import ks_2samp

    ok = np.asarray(ok, dtype=bool)
    m = ok.size
    failed = int(m - ok.sum())
    if not failed:
        return FailureSummary(n_sets=m, n_failed=0)
    reasons = Counter()
    if status_unloaded is not None:
        for code in np.asarray(status_unloaded)[~ok]:
            if code not in CONVERGED_STATUSES:
                reasons[f"unloaded: {Status(int(code)).text}"] += 1
    if status is not None:
        st = np.asarray(status)[~ok]
        cases = case_names or [f"load {k}" for k in range(st.shape[1])]
        for j, case in enumerate(cases):
            for code, n in zip(*np.unique(st[:, j], return_counts=True), strict=True):
                if code not in CONVERGED_STATUSES:
                    reasons[f"{case}: {Status(int(code)).text}"] += int(n)
    conc = []
    tested = failed >= MIN_FAILED_FOR_TEST and (m - failed) >= MIN_FAILED_FOR_TEST
    if tested:
        pos = np.asarray(positions, dtype=float)
        level = CONCENTRATION_ALPHA / max(1, pos.shape[1])
        for j, name in enumerate(names):
            p = float(ks_2samp(pos[~ok, j], pos[ok, j]).pvalue)
            if p < level:
                end = "low" if np.median(pos[~ok, j]) < np.median(pos[ok, j]) else "high"
                conc.append((name, end, p))
        conc.sort(key=lambda c: c[2])
    return FailureSummary(n_sets=m, n_failed=failed,
                          reasons=tuple(sorted(reasons.items(), key=lambda kv: -kv[1])),
                          concentrated=tuple(conc), tested=tested)
