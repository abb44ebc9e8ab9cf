"""One static solve from Python: the compiled Newton kernel's call and the result it returns.

One concept: the call between a :class:`~segment.core.model.Segment` and the kernel of
:mod:`segment.core.newton` (``q0`` checked, the log allocated, the model's ruptured strips
marked in the status), returning an :class:`~segment.core.equilibrium_result.EquilibriumResult`.
:func:`segment.solve` checks its inputs and calls :func:`solve_checked`; so does
``Segment.unloaded`` (the unloaded equilibrium), which is why it lives in the core layer.
"""

from __future__ import annotations

import math

import numpy as np

from segment.core.equilibrium_result import EquilibriumResult
from segment.core.newton import _solve_predicted
from segment.core.status import CONVERGED_STATUSES, Status

__all__: list[str] = []

_NO_PREDICTOR = (False, np.zeros(6), np.zeros((6, 6)))
"""The predictor argument of :func:`_solve_predicted` when none is used."""


def solve_checked(model, load, q0, tol, max_iterations, q_unloaded,
                   predict=False) -> EquilibriumResult:
    """The solve itself, after :func:`segment.solvers.equilibrium._check_inputs` (kept lean:
    it is timed per call).

    ``q_unloaded`` must be a read-only array or None (it is stored as given). With ``predict``
    and no ``q0``, Newton starts from the linear predictor and load stepping, when needed,
    from the reference pose (as :func:`segment.solve_many` does).
    """
    predict = predict and q0 is None
    if q0 is None:
        q = np.zeros(6)
    else:
        q = np.asarray(q0)
        if q.dtype.kind not in "iuf":
            raise TypeError(f"q0 must be 6 real numbers [mm, rad], got dtype {q.dtype} "
                            f"({q0!r})")
        q = np.array(q, dtype=float)
        if q.shape != (6,) or not all(map(math.isfinite, q.tolist())):
            raise ValueError(f"q0 must be 6 finite numbers, got {q0!r}")
    log = np.empty((5 * max_iterations, 3))
    q, status, norm, n_log, n_steps, load_steps = _solve_predicted(
        model._packed, load._vector, q, predict,
        model._predictor if predict else _NO_PREDICTOR, tol, max_iterations, log)
    status = Status(status)
    if status == Status.CONVERGED and model.ruptured:
        status = Status.CONVERGED_BEYOND_LIMITS   # strips broke under load: past a limit
    q.setflags(write=False)      # the result's state is computed from it: keep them together
    return EquilibriumResult(
        q=q, converged=status in CONVERGED_STATUSES, status=status, iterations=n_steps,
        residual_norm=norm, load=load, load_steps=load_steps, q_unloaded=q_unloaded,
        model=model, log=log[:n_log])
