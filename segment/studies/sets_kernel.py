"""The compiled launch of many parameter sets x many loads (``prange`` over the sets).

One concept: the kernel :func:`_sets_kernel` that :func:`segment.studies.sets.solve_sets`
launches on the packed arrays of M parameter sets
(:meth:`~segment.studies.space.ParameterSpace.pack`), the per-set solve of
:mod:`segment.core.newton` made in parallel:

1. the nominal set's equilibria (unloaded and under every load) and their exact
   sensitivities dq*/dp, once per call (:func:`segment.studies.sets._nominal_start`);
2. each set's unloaded equilibrium, then every (set, load) pair, by Newton from the nominal
   equilibrium moved to the set by its sensitivities, ``q_nom + dq_nom (p - p_nom)``. Over the
   packaged space this start is closer than the linear predictor ``q_u - K_u^-1 f`` of
   :func:`segment.solve` (median scaled residual 0.30 against 0.59 over 300 random sets x
   nine cases; 3.38 Newton steps per equilibrium against 3.74) and needs no stiffness
   ``K_u`` per set. When that Newton fails the pair is solved exactly as :func:`segment.solve`
   solves it (Newton from the linear predictor, then load stepping from the reference pose;
   the predictor is rebuilt here with the kernel's own 6x6 LU, so it agrees with ``solve``'s
   to rounding, not bit for bit). Where the Newton from the sensitivity start converges it is
   accepted: in principle it could reach another equilibrium than ``solve`` (another facet
   branch) and nothing here would notice. ``tests/test_sets.py`` checks that it does not on
   random sets, the bounds of the space and a Sobol set that once failed here: same status
   (``CONVERGED_BEYOND_LIMITS`` past a failure limit), q within 1e-8 and facet forces;
3. optionally the exact sensitivities dq*/dp of both (:mod:`segment.studies.sensitivity`), and the
   facet contact forces (from the same contact evaluation as the failure limits).

Statuses are the codes of :class:`~segment.core.status.Status` (0-6), as :func:`segment.solve`
reports them.
"""

from __future__ import annotations

import math

import numpy as np

from segment.core.failure_limits import limits_and_facet_forces
from segment.core.lu6 import lu6_factor, lu6_solve
from segment.core.newton import (
    CONVERGED,
    CONVERGED_BEYOND_LIMITS,
    MAX_ITERATIONS,
    newton_kernel,
    solve_kernel,
    solve_kernel_from,
)
from segment.core.residual import residual_jacobian
from segment.jit import njit, prange
from segment.studies.sensitivity import _equilibrium_sensitivity

__all__: list[str] = []


@njit
def _start(q_nom, dq_nom, dp, out):
    """``out = q_nom + dq_nom dp``: the nominal set's equilibrium moved to this set by its
    sensitivities (first-order Taylor in p); False when not finite (no nominal solution)."""
    ok = True
    for k in range(6):
        acc = q_nom[k]
        for d in range(dp.shape[0]):
            acc += dq_nom[k, d] * dp[d]
        out[k] = acc
        ok = ok and math.isfinite(acc)
    return ok


@njit
def _finish(q, st, packed, lig_flags, fac_flags, ffac):
    """Facet forces at ``q`` into ``ffac`` and the status of :func:`segment.solve`:
    ``CONVERGED_BEYOND_LIMITS`` for a converged equilibrium past a failure limit."""
    beyond = limits_and_facet_forces(q, packed, lig_flags, fac_flags, ffac)
    return CONVERGED_BEYOND_LIMITS if (st == CONVERGED and beyond) else st


@njit(parallel=True)
def _sets_kernel(glob, lig, fac, pts, F, tol, max_iterations, dP, q_nom_u, dq_nom_u, q_nom,
                 dq_nom,
                 with_sens, dglob, dlig, dfac, touch,
                 q_u, st_u, it_u, dq_u, q_out, st_out, it_out, norm_out, ffac_out, dq_out):
    """Unloaded equilibria of M sets, then every (set, load) pair; see the module doc.

    Each equilibrium is first tried by Newton from the nominal set's equilibrium moved by its
    sensitivities (``q_nom + dq_nom dP[i]``; NaN rows: no such start). When that Newton fails,
    or when no start is available, the set is solved as :func:`segment.solve` solves it: the
    unloaded one from the reference pose, a loaded one by Newton from the linear predictor
    ``q_u - K_u^-1 f`` with load stepping from the reference pose.
    """
    m_sets = glob.shape[0]
    n_loads = F.shape[0]
    for i in prange(m_sets):
        packed = (glob[i], lig[i], fac[i], pts)
        zero = np.zeros(6)
        log_buf = np.zeros((5 * max_iterations, 3))
        sub_log = np.zeros((max_iterations, 2))
        lig_flags = np.empty(lig.shape[1], dtype=np.bool_)
        fac_flags = np.empty(fac.shape[1], dtype=np.bool_)
        ffac_u = np.empty(fac.shape[1])
        q0 = np.empty(6)
        # unloaded
        q = zero
        st = MAX_ITERATIONS
        its = 0
        if _start(q_nom_u, dq_nom_u, dP[i], q0):
            q, st, _, its = newton_kernel(packed, zero, q0, tol, max_iterations, sub_log)
        if st != CONVERGED:
            q, st, _, _, its2, _ = solve_kernel(packed, zero, zero, tol, max_iterations,
                                                 log_buf)
            its += its2
        st_u[i] = _finish(q, st, packed, lig_flags, fac_flags, ffac_u)
        q_u[i] = q
        it_u[i] = its
        unloaded_ok = st == CONVERGED
        have_lu = False
        lu = np.zeros((6, 6))
        piv = np.zeros(6, dtype=np.int64)
        lu_ok = False
        if with_sens:
            if unloaded_ok:
                _, J = residual_jacobian(q, zero, packed)
                _equilibrium_sensitivity(q, J, packed, dglob[i], dlig[i], dfac[i], touch,
                                         dq_u[i])
            else:
                dq_u[i] = np.nan
        for j in range(n_loads):
            f = F[j]
            q = zero
            nrm = 0.0
            st = MAX_ITERATIONS
            its = 0
            if _start(q_nom[j], dq_nom[j], dP[i], q0):
                q, st, nrm, its = newton_kernel(packed, f, q0, tol, max_iterations, sub_log)
            if st != CONVERGED:     # solve()'s path
                for c in range(6):
                    q0[c] = 0.0
                if unloaded_ok:
                    if not have_lu:
                        _, J = residual_jacobian(q_u[i], zero, packed)
                        lu, piv, lu_ok = lu6_factor(J)
                        have_lu = True
                    if lu_ok:
                        dq = np.empty((6, 1))
                        for c in range(6):
                            dq[c, 0] = -f[c]
                        lu6_solve(lu, piv, dq)
                        good = True
                        for c in range(6):
                            good = good and math.isfinite(dq[c, 0])
                        if good:
                            for c in range(6):
                                q0[c] = q_u[i, c] + dq[c, 0]
                q, st, nrm, _, its2, _ = solve_kernel_from(packed, f, q0, zero, tol,
                                                            max_iterations, log_buf)
                its += its2
            q_out[i, j] = q
            st_out[i, j] = _finish(q, st, packed, lig_flags, fac_flags, ffac_out[i, j])
            it_out[i, j] = its
            norm_out[i, j] = nrm
            if with_sens:
                if st == CONVERGED:
                    _, J = residual_jacobian(q, f, packed)
                    _equilibrium_sensitivity(q, J, packed, dglob[i], dlig[i], dfac[i], touch,
                                             dq_out[i, j])
                else:
                    dq_out[i, j] = np.nan
