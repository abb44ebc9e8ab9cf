"""Many parameter sets x many loads in one compiled, parallel launch; in-process or on Dask.

:func:`solve_sets` takes parameter sets as an array over the parameter space (M, D)
(:class:`segment.space.ParameterSpace`), writes them straight into the solver's packed arrays
(:meth:`~segment.space.ParameterSpace.pack`: no Python ``Segment`` per set) and solves, in one
numba kernel (``prange`` over the cores):

1. each set's unloaded equilibrium (Newton from the reference pose, :func:`segment.equilibrium.
   _solve_kernel`) and its stiffness ``K_u``;
2. every (set, load) pair from the linear predictor ``q_u - K_u^-1 f`` (as
   :func:`segment.solve_many`), with load stepping when Newton fails;
3. optionally the exact sensitivities dq*/dp of both (:mod:`segment.sensitivity`), and the
   facet contact forces.

Sets are processed in chunks (progress with tqdm, memory bounded). ``client=`` (a
``dask.distributed.Client``) sends the chunks to a Dask cluster instead; the results are the
same numbers (``tests/test_sets.py`` compares a ``LocalCluster`` with the in-process run).

Thread safety: numba's ``workqueue`` threading layer aborts the process when two threads
launch parallel kernels at once (as Dask's threaded workers do). Every launch goes through
:func:`segment.batch.launch`, which holds a lock unless numba runs on the thread-safe ``omp``
or ``tbb`` layer; with ``n_threads`` it sets numba's (thread-local) thread count.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numba import njit, prange

from segment._vec import add, mat_vec
from segment.batch import _as_loads, launch
from segment.disc import DOF_NAMES
from segment.equilibrium import (
    CONVERGED,
    CONVERGED_BEYOND_LIMITS,
    DEFAULT_TOL,
    _check_tolerances,
    _solve6,
    _solve_kernel,
)
from segment.facet import _contact, _contact_force
from segment.model import _residual_jacobian
from segment.sensitivity import _equilibrium_sensitivity, touch_flags
from segment.space import ParameterSpace, load_space
from segment.tangent import (
    F_BLEND,
    F_C1,
    F_C2,
    F_N1,
    F_N2,
    F_R1,
    F_R2,
    G_LAW,
    G_R0,
    G_S0,
    _axes,
    _rows3,
)

__all__ = ["SetsResult", "solve_sets"]

log = logging.getLogger(__name__)

CHUNK_SETS = 4096
"""Parameter sets per compiled launch (progress between launches)."""
CHUNK_SETS_SENSITIVITY = 512
"""The same with sensitivities (the packed derivatives take D x the memory)."""

@njit(cache=True)
def _facet_magnitudes(q, packed, out):
    """Contact force magnitude [N] of each facet joint at real ``q`` into ``out`` (m,).

    Mirrors the residual-only facet branch of :func:`segment.tangent._residual_tangent`
    (``tests/test_sets.py`` holds it to ``Segment.state``'s facet forces)."""
    glob, _, fac = packed
    R0 = ((glob[G_R0], glob[G_R0 + 1], glob[G_R0 + 2]),
          (glob[G_R0 + 3], glob[G_R0 + 4], glob[G_R0 + 5]),
          (glob[G_R0 + 6], glob[G_R0 + 7], glob[G_R0 + 8]))
    law = (glob[G_LAW], glob[G_LAW + 1], glob[G_LAW + 2], glob[G_LAW + 3])
    R, _, _ = _axes(q, R0)
    p = add((glob[G_S0], glob[G_S0 + 1], glob[G_S0 + 2]), mat_vec(R0, (q[0], q[1], q[2])))
    zc = 0j
    for i in range(fac.shape[0]):
        c = add(p, mat_vec(R, _rows3(fac, i, F_C1)))
        n = mat_vec(R, _rows3(fac, i, F_N1))
        c2 = _rows3(fac, i, F_C2)
        n2 = _rows3(fac, i, F_N2)
        u, _, _, _, _, _, _ = _contact(
            (c[0] + zc, c[1] + zc, c[2] + zc), (n[0] + zc, n[1] + zc, n[2] + zc),
            fac[i, F_R1], (c2[0] + zc, c2[1] + zc, c2[2] + zc),
            (n2[0] + zc, n2[1] + zc, n2[2] + zc), fac[i, F_R2], fac[i, F_BLEND], law[3] > 0.5)
        out[i] = _contact_force(u, law)[0].real if u.real > 0.0 else 0.0


@njit(cache=True, parallel=True)
def _sets_kernel(glob, lig, fac, F, tol, max_iterations, with_sens, dglob, dlig, dfac, touch,
                 q_u, st_u, it_u, dq_u, q_out, st_out, it_out, norm_out, ffac_out, dq_out):
    """Unloaded equilibria of M sets, then every (set, load) pair; see the module doc."""
    m_sets = glob.shape[0]
    n_loads = F.shape[0]
    zero = np.zeros(6)
    J_u = np.empty((m_sets, 6, 6))
    for i in prange(m_sets):
        packed = (glob[i], lig[i], fac[i])
        log_buf = np.zeros((5 * max_iterations, 3))
        q, st, _, _, its, _ = _solve_kernel(packed, zero, zero, tol, max_iterations, log_buf)
        q_u[i] = q
        st_u[i] = st
        it_u[i] = its
        _, J = _residual_jacobian(q, zero, packed)
        J_u[i] = J
        if with_sens:
            if st == CONVERGED or st == CONVERGED_BEYOND_LIMITS:
                _equilibrium_sensitivity(q, J, packed, dglob[i], dlig[i], dfac[i], touch[i],
                                         dq_u[i])
            else:
                dq_u[i] = np.nan
    for k in prange(m_sets * n_loads):
        i = k // n_loads
        j = k - i * n_loads
        packed = (glob[i], lig[i], fac[i])
        f = F[j]
        q0 = np.zeros(6)
        if st_u[i] == CONVERGED or st_u[i] == CONVERGED_BEYOND_LIMITS:
            dq, ok = _solve6(J_u[i], -f)
            good = ok
            for c in range(6):
                if not np.isfinite(dq[c]):
                    good = False
            if good:
                for c in range(6):
                    q0[c] = q_u[i, c] + dq[c]
        log_buf = np.zeros((5 * max_iterations, 3))
        q, st, nrm, _, its, _ = _solve_kernel(packed, f, q0, tol, max_iterations, log_buf)
        q_out[i, j] = q
        st_out[i, j] = st
        it_out[i, j] = its
        norm_out[i, j] = nrm
        _facet_magnitudes(q, packed, ffac_out[i, j])
        if with_sens:
            if st == CONVERGED or st == CONVERGED_BEYOND_LIMITS:
                _, J = _residual_jacobian(q, f, packed)
                _equilibrium_sensitivity(q, J, packed, dglob[i], dlig[i], dfac[i], touch[i],
                                         dq_out[i, j])
            else:
                dq_out[i, j] = np.nan


@dataclass(frozen=True, eq=False)
class SetsResult:
    """Outcome of :func:`solve_sets`: M parameter sets x N loads.

    Attributes
    ----------
    P : ndarray (M, D)
        The parameter sets (units of the space's ``unit`` column).
    names, units : tuple of str
        Parameter names and units.
    loads : ndarray (N, 6)
        Load vectors [N, N mm].
    load_names : tuple of str
    q : ndarray (M, N, 6)
        Equilibria [mm, rad] (last finite iterate where not converged; never NaN).
    status : ndarray of int (M, N)
        Codes of :mod:`segment.equilibrium` (0 converged).
    iterations : ndarray of int (M, N)
    q_unloaded : ndarray (M, 6)
        Each set's unloaded equilibrium [mm, rad].
    status_unloaded : ndarray of int (M,)
    facet_force : ndarray (M, N, m)
        Contact force magnitude of each facet joint [N] (model's facet order).
    facet_names : tuple of str
    dq_dp, dq_unloaded_dp : ndarray (M, N, 6, D) and (M, 6, D), or None
        Exact sensitivities (``sensitivities=True``); NaN where the solve failed.
    elapsed : float
        Wall time [s].
    """

    P: np.ndarray
    names: tuple[str, ...]
    units: tuple[str, ...]
    loads: np.ndarray
    load_names: tuple[str, ...]
    q: np.ndarray
    status: np.ndarray
    iterations: np.ndarray
    q_unloaded: np.ndarray
    status_unloaded: np.ndarray
    facet_force: np.ndarray
    facet_names: tuple[str, ...]
    dq_dp: np.ndarray | None
    dq_unloaded_dp: np.ndarray | None
    elapsed: float

    @property
    def converged(self) -> np.ndarray:
        """(M, N): the loaded and the unloaded solve both converged."""
        ok = (CONVERGED, CONVERGED_BEYOND_LIMITS)     # numerically converged
        return np.isin(self.status, ok) & np.isin(self.status_unloaded, ok)[:, None]

    @property
    def displacement(self) -> np.ndarray:
        """(M, N, 6): q minus the set's unloaded equilibrium [mm, rad]."""
        return self.q - self.q_unloaded[:, None, :]

    @property
    def n_equilibria(self) -> int:
        """Equilibria solved: M x (N + 1), the unloaded ones included."""
        return int(self.q.shape[0] * (self.q.shape[1] + 1))

    @property
    def rate(self) -> float:
        """Equilibria per second of wall time (unloaded ones included)."""
        return self.n_equilibria / self.elapsed if self.elapsed > 0 else float("inf")

    def frame(self) -> pd.DataFrame:
        """Wide table, one row per parameter set: the parameters, then per load its
        displacement from rest (``<load>_<dof>_mm|deg``), facet forces
        (``<load>_facet_<side>_N``) and ``<load>_converged``; then the unloaded pose
        (``unloaded_<dof>_mm|deg``)."""
        data = {name: self.P[:, j] for j, name in enumerate(self.names)}
        disp = self.displacement
        conv = self.converged
        for j, load in enumerate(self.load_names):
            for c, dof in enumerate(DOF_NAMES):
                unit = "mm" if c < 3 else "deg"
                v = disp[:, j, c] if c < 3 else np.degrees(disp[:, j, c])
                data[f"{load}_{dof}_{unit}"] = v
            for k, side in enumerate(self.facet_names):
                data[f"{load}_facet_{side}_N"] = self.facet_force[:, j, k]
            data[f"{load}_converged"] = conv[:, j]
        for c, dof in enumerate(DOF_NAMES):
            unit = "mm" if c < 3 else "deg"
            v = self.q_unloaded[:, c] if c < 3 else np.degrees(self.q_unloaded[:, c])
            data[f"unloaded_{dof}_{unit}"] = v
        data["unloaded_converged"] = np.isin(self.status_unloaded,
                                             (CONVERGED, CONVERGED_BEYOND_LIMITS))
        return pd.DataFrame(data)

    def to_parquet(self, path) -> None:
        """Save everything but the sensitivities (parquet via pyarrow; ``c5c6-segment[study]``)."""
        _require("pyarrow")
        import pyarrow as pa
        import pyarrow.parquet as pq

        m, n = self.status.shape
        table = pa.table({
            "P": pa.array(list(self.P)),
            "q": pa.array(list(self.q.reshape(m, n * 6))),
            "status": pa.array(list(self.status)),
            "iterations": pa.array(list(self.iterations)),
            "q_unloaded": pa.array(list(self.q_unloaded)),
            "status_unloaded": self.status_unloaded,
            "facet_force": pa.array(list(self.facet_force.reshape(m, -1))),
        })
        meta = {"names": self.names, "units": self.units, "loads": self.loads.tolist(),
                "load_names": self.load_names, "facet_names": self.facet_names,
                "elapsed": self.elapsed}
        import json

        table = table.replace_schema_metadata({"segment": json.dumps(meta)})
        pq.write_table(table, str(path))

    @classmethod
    def read_parquet(cls, path) -> SetsResult:
        """Load a result saved by :meth:`to_parquet`."""
        _require("pyarrow")
        import json

        import pyarrow.parquet as pq

        table = pq.read_table(str(path))
        raw = (table.schema.metadata or {}).get(b"segment")
        if raw is None:
            raise ValueError(f"{path}: not a segment parameter-set result (no 'segment' "
                             "metadata)")
        meta = json.loads(raw)
        loads = np.array(meta["loads"], dtype=float).reshape(-1, 6)
        n = loads.shape[0]

        def col(name, dtype=float):
            return np.array(table.column(name).to_pylist(), dtype=dtype)

        P = col("P")
        m = P.shape[0]
        return cls(P=P.reshape(m, -1), names=tuple(meta["names"]), units=tuple(meta["units"]),
                   loads=loads, load_names=tuple(meta["load_names"]),
                   q=col("q").reshape(m, n, 6), status=col("status", np.int64).reshape(m, n),
                   iterations=col("iterations", np.int64).reshape(m, n),
                   q_unloaded=col("q_unloaded").reshape(m, 6),
                   status_unloaded=col("status_unloaded", np.int64).reshape(m),
                   facet_force=col("facet_force").reshape(m, n, -1),
                   facet_names=tuple(meta["facet_names"]), dq_dp=None, dq_unloaded_dp=None,
                   elapsed=float(meta["elapsed"]))


def _require(module: str) -> None:
    import importlib

    try:
        importlib.import_module(module)
    except ImportError:
        raise ImportError(f"{module} is needed for this; install the study extra: "
                          'pip install "c5c6-segment[study]"') from None


def _solve_chunk(model, space: ParameterSpace, P, F, tol, max_iterations, sensitivities,
                 n_threads):
    """Solve one chunk of parameter sets in this process; a tuple of arrays."""
    m_sets, n_loads = P.shape[0], F.shape[0]
    glob, lig, fac = space.pack(model, P)
    d = space.dim
    if sensitivities:
        dglob, dlig, dfac = space.pack_derivative(model, P)
        touch = touch_flags(dglob, dlig, dfac)
        dq_u = np.empty((m_sets, 6, d))
        dq = np.empty((m_sets, n_loads, 6, d))
    else:
        dglob = np.zeros((1, 1, glob.shape[1]))
        dlig = np.zeros((1, 1, *lig.shape[1:]))
        dfac = np.zeros((1, 1, *fac.shape[1:]))
        touch = np.zeros((1, 1, 2 + lig.shape[1] + fac.shape[1]), dtype=np.int8)
        dq_u = np.zeros((1, 6, 1))
        dq = np.zeros((1, 1, 6, 1))
    q_u = np.empty((m_sets, 6))
    st_u = np.empty(m_sets, dtype=np.int64)
    it_u = np.empty(m_sets, dtype=np.int64)
    q = np.empty((m_sets, n_loads, 6))
    st = np.empty((m_sets, n_loads), dtype=np.int64)
    it = np.empty((m_sets, n_loads), dtype=np.int64)
    nrm = np.empty((m_sets, n_loads))
    ff = np.zeros((m_sets, n_loads, fac.shape[1]))
    launch(_sets_kernel, glob, lig, fac, F, tol, max_iterations, bool(sensitivities),
           dglob, dlig, dfac, touch, q_u, st_u, it_u, dq_u, q, st, it, nrm, ff, dq,
           n_threads=n_threads)
    return (q, st, it, q_u, st_u, ff, dq if sensitivities else None,
            dq_u if sensitivities else None)


def solve_sets(model, P, loads, *, space=None, sensitivities: bool = False,
               tol: float = DEFAULT_TOL, max_iterations: int = 60,
               n_threads: int | None = None, client=None, chunk: int | None = None,
               progress: bool = False) -> SetsResult:
    """Equilibria of M parameter sets under N loads (and their sensitivities).

    Parameters
    ----------
    model : Segment
        The base model the parameters are applied to (:meth:`ParameterSpace.pack`).
    P : array_like (M, D)
        Parameter sets over ``space`` (its units).
    loads : array_like (N, 6) or sequence of Load
        Load vectors [N, N mm] or Load records.
    space : ParameterSpace, path or None
        Default: the packaged ``data/parameter_space.csv``.
    sensitivities : bool
        Also compute dq*/dp of every equilibrium (:mod:`segment.sensitivity`).
    tol, max_iterations
        As :func:`segment.solve`.
    n_threads : int, optional
        Threads per launch (default: all of numba's).
    client : dask.distributed.Client, optional
        Send the chunks to this Dask cluster (``c5c6-segment[study]``); default: this process.
    chunk : int, optional
        Sets per launch / per Dask task (default 4096, or 512 with sensitivities).
    progress : bool
        Show a tqdm progress bar over the chunks.

    Returns
    -------
    SetsResult

    Examples
    --------
    >>> import segment
    >>> from segment.sets import solve_sets
    >>> from segment.space import load_space
    >>> space = load_space()
    >>> r = solve_sets(segment.c5c6(), space.sample(64, seed=1), list(segment.LOAD_CASES.values()))
    >>> r.q.shape, bool(r.converged.all())
    ((64, 9, 6), True)
    """
    from tqdm import tqdm  # plain text bar: tqdm.auto warns in notebooks without ipywidgets

    space = load_space(space)
    tol, max_iterations = _check_tolerances(tol, max_iterations)
    P = space.check(P)
    F, names = _as_loads(loads)
    m_sets = P.shape[0]
    size = int(chunk) if chunk else (CHUNK_SETS_SENSITIVITY if sensitivities else CHUNK_SETS)
    if size < 1:
        raise ValueError(f"chunk must be >= 1, got {chunk!r}")
    starts = list(range(0, m_sets, size))
    t0 = time.perf_counter()
    args = (tol, max_iterations, bool(sensitivities), n_threads)
    if client is None:
        parts = []
        for s in tqdm(starts, disable=not progress, desc="parameter sets", unit="chunk"):
            parts.append(_solve_chunk(model, space, P[s:s + size], F, *args))
            log.info("solve_sets: %d / %d parameter sets", min(m_sets, s + size), m_sets)
    else:
        _require("distributed")
        # hash=False: a fresh key per call. With the default content hash, two calls with the
        # same model share one key, and releasing the first call's future deletes the data
        # the second call's tasks depend on ("lost dependencies"; every MCMC step calls us)
        model_f = client.scatter(model, broadcast=True, hash=False)
        space_f = client.scatter(space, broadcast=True, hash=False)
        futures = [client.submit(_solve_chunk, model_f, space_f, P[s:s + size], F, *args,
                                 pure=False) for s in starts]
        if progress:
            from distributed import as_completed

            for _ in tqdm(as_completed(futures), total=len(futures), desc="parameter sets",
                          unit="chunk"):
                pass
        parts = client.gather(futures)
    elapsed = time.perf_counter() - t0

    def cat(k):
        return np.concatenate([p[k] for p in parts]) if parts[0][k] is not None else None

    return SetsResult(P=P, names=space.names, units=space.units, loads=F, load_names=names,
                      q=cat(0), status=cat(1), iterations=cat(2), q_unloaded=cat(3),
                      status_unloaded=cat(4), facet_force=cat(5),
                      facet_names=tuple(f.side for f in model.facets), dq_dp=cat(6),
                      dq_unloaded_dp=cat(7), elapsed=elapsed)
