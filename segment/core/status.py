"""How a solve, a ramp, a run or a study ended: one status enum and one message table.

Every result of the package says how it ended with a :class:`Status` (``result.status``;
an integer array of its values for the results of many solves) and a one-line ``message``
that starts from, or is, the member's :attr:`Status.text` (:data:`MESSAGES`). The members are
grouped by what reports them; the numbers are part of the results (JSON output, CSV and
parquet files), so a member keeps its number:

=====  ==========================  =========================================================
code   member                      reported by
=====  ==========================  =========================================================
0-6    ``CONVERGED`` ...           a static solve: the compiled Newton kernel's own codes
                                   (:mod:`segment.core.newton`); arrays of them in
                                   ``BatchResult``, ``SetsResult``, ``PathResult``
10-13  ``REACHED_TO_SCALE`` ...    a load ramp with rupture (:mod:`segment.solvers.ramp`)
21-23  ``ROTATION_FAILED`` ...     a Lie-Stormer-Verlet run
                                   (:mod:`segment.solvers.dynamics.lsv`)
30-31  ``COMPLETED``, ``REFUSED``  a Sobol study (:mod:`segment.studies.sobol`)
41-42  ``OPTIMIZER_STOPPED`` ...   a calibration (``CONVERGED`` when it converged)
=====  ==========================  =========================================================

Compiled kernels cannot hold an enum: they return the plain integer of a member
(``int(Status.CONVERGED)``), defined once next to them from this enum.

Examples
--------
>>> Status.SINGULAR_JACOBIAN.text
'singular Jacobian'
>>> Status(6) is Status.CONVERGED_BEYOND_LIMITS
True
>>> int(Status.VALIDITY_LIMIT)
13
"""

from __future__ import annotations

import enum
from types import MappingProxyType

__all__ = ["CONVERGED_STATUSES", "MESSAGES", "SOLVE_STATUSES", "Status"]


class Status(enum.IntEnum):
    """How a computation ended (the module docstring lists who reports which)."""

    # a static solve (the Newton kernel's codes, segment.core.newton)
    CONVERGED = 0
    MAX_ITERATIONS = 1
    LINE_SEARCH_FAILED = 2
    LOAD_STEPPING_FAILED = 3
    NOT_FINITE = 4
    SINGULAR_JACOBIAN = 5
    CONVERGED_BEYOND_LIMITS = 6
    # a load ramp with rupture (segment.solvers.ramp)
    REACHED_TO_SCALE = 10
    NO_EQUILIBRIUM = 11
    UNLOADED_NOT_FOUND = 12
    VALIDITY_LIMIT = 13
    # a Lie-Stormer-Verlet run (segment.solvers.dynamics.lsv)
    ROTATION_FAILED = 21
    DAMPING_FAILED = 22
    STATE_NOT_FINITE = 23
    # a Sobol study (segment.studies.sobol)
    COMPLETED = 30
    REFUSED = 31
    # a calibration (segment.studies.calibration; CONVERGED when it converged)
    OPTIMIZER_STOPPED = 41
    EQUILIBRIUM_FAILED_AT_MAP = 42

    # printed as its number on every Python (3.11's IntEnum does so; 3.10's printed the name):
    # JSON, CSV and f-strings show what they showed when a status was a plain int
    __str__ = int.__repr__
    __format__ = int.__format__

    @property
    def text(self) -> str:
        """What the status means, in words (:data:`MESSAGES`)."""
        return MESSAGES[self]


MESSAGES = MappingProxyType({
    Status.CONVERGED: "converged",
    Status.MAX_ITERATIONS: "iteration limit reached",
    Status.LINE_SEARCH_FAILED: "line search failed",
    Status.LOAD_STEPPING_FAILED: "load stepping could not advance",
    Status.NOT_FINITE: "non-finite residual or step",
    Status.SINGULAR_JACOBIAN: "singular Jacobian",
    Status.CONVERGED_BEYOND_LIMITS: "converged beyond the failure limits",
    Status.REACHED_TO_SCALE: "reached to_scale",
    Status.NO_EQUILIBRIUM: "no equilibrium",
    Status.UNLOADED_NOT_FOUND: "unloaded equilibrium not found",
    Status.VALIDITY_LIMIT: "validity limit",
    Status.ROTATION_FAILED: "the implicit rotation update did not converge: the step is too "
                            "large for the angular velocity",
    Status.DAMPING_FAILED: "the implicit damping update did not converge",
    Status.STATE_NOT_FINITE: "the state became infinite or NaN: the step is too large for the "
                             "stiffness (explicit elastic forces are unstable beyond dt ~ 2 / "
                             "omega_max)",
    Status.COMPLETED: "ok",
    Status.REFUSED: "refused",
    Status.OPTIMIZER_STOPPED: "the optimizer stopped without convergence",
    Status.EQUILIBRIUM_FAILED_AT_MAP: "an equilibrium did not converge at the MAP",
})
"""The one message table: a one-line text per :class:`Status`."""

SOLVE_STATUSES = tuple(s for s in Status if s <= Status.CONVERGED_BEYOND_LIMITS)
"""The statuses a static solve reports (what a saved array of solve statuses may hold)."""

CONVERGED_STATUSES = (Status.CONVERGED, Status.CONVERGED_BEYOND_LIMITS)
"""Statuses of a numerically converged solve (``converged`` True): the second one has a
dislocated facet or a ligament past eps_max at its equilibrium (see ``limit_flags``)."""
