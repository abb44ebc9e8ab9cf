"""Many parameter sets x many loads in one compiled, parallel launch; in-process or on Dask.

:func:`solve_sets` takes parameter sets as an array over the parameter space (M, D)
(:class:`segment.space.ParameterSpace`), writes them straight into the solver's packed arrays
(:meth:`~segment.space.ParameterSpace.pack`: no Python ``Segment`` per set) and solves, in one
numba kernel (``prange`` over the cores; :mod:`segment.studies.sets_kernel`: the nominal
start, each set's unloaded equilibrium, every (set, load) pair, optionally the sensitivities
dq*/dp and the facet forces) and returns a
:class:`~segment.studies.sets_result.SetsResult`. One concept: the driver, in chunks, in this
process or on Dask.

Sets are processed in chunks (progress with tqdm, memory bounded). ``client=`` (a
``dask.distributed.Client``) sends the chunks to a Dask cluster instead; the results are the
same numbers (``tests/test_sets.py`` compares a ``LocalCluster`` with the in-process run).

Thread safety: numba's ``workqueue`` threading layer aborts the process when two threads
launch parallel kernels at once (as Dask's threaded workers do). Every launch goes through
:func:`segment.solvers.batch.launch`, which holds a lock unless numba runs on the thread-safe
``omp`` or ``tbb`` layer; with ``n_threads`` it sets numba's (thread-local) thread count.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref

import numpy as np

from segment._checks import check_count, check_memory
from segment.core.model import Segment
from segment.core.newton import CONVERGED, CONVERGED_BEYOND_LIMITS, DEFAULT_TOL
from segment.solvers.batch import as_loads, launch
from segment.solvers.equilibrium import check_tolerances
from segment.studies.packing import pack_plan
from segment.studies.sensitivity import touch_flags
from segment.studies.sets_kernel import _sets_kernel
from segment.studies.sets_result import SetsResult, _require
from segment.studies.space import ParameterSpace, load_space

__all__ = ["CHUNK_SETS", "CHUNK_SETS_SENSITIVITY", "bytes_per_set", "solve_sets"]

log = logging.getLogger(__name__)

CHUNK_SETS = 4096
"""Parameter sets per compiled launch (progress between launches)."""
CHUNK_SETS_SENSITIVITY = 512
"""The same with sensitivities (the packed derivatives take D x the memory)."""



def _no_start(n_loads, d):
    """Start arrays that say "no nominal start": every set solved as :func:`segment.solve`."""
    return (np.full(6, np.nan), np.full((6, d), np.nan), np.full((n_loads, 6), np.nan),
            np.full((n_loads, 6, d), np.nan))


_NOMINAL_CACHE: dict = {}
"""Recent nominal starts by (model, space, loads, tol, max_iterations); entries hold weak
references to the model and the space and count only while both are the same objects."""
NOMINAL_CACHE_SIZE = 8
_NOMINAL_LOCK = threading.Lock()


def _nominal_start(model, space: ParameterSpace, F, tol, max_iterations):
    """The nominal set's equilibria and their sensitivities ``(q_u, dq_u/dp, q, dq/dp)``, the
    start ``q_nom + dq_nom (p - p_nom)`` of every set's Newton (NaN where they failed).

    Cached per model, space, loads and tolerances: a calibration calls :func:`solve_sets`
    with one set many times, and the nominal start (one set with sensitivities, tens of
    milliseconds with the Python packing) would then cost more than the set itself.
    """
    # the space's nominal values are part of the key: its arrays may be edited in place
    key = (id(model), id(space), np.asarray(space.nominal, dtype=float).tobytes(), F.tobytes(),
           float(tol), int(max_iterations))
    with _NOMINAL_LOCK:                 # solve_sets may be called from several threads
        hit = _NOMINAL_CACHE.get(key)
    if hit is not None and hit[0]() is model and hit[1]() is space:
        return hit[2]
    start = _nominal_start_uncached(model, space, F, tol, max_iterations)
    with _NOMINAL_LOCK:
        while len(_NOMINAL_CACHE) >= NOMINAL_CACHE_SIZE:
            _NOMINAL_CACHE.pop(next(iter(_NOMINAL_CACHE)), None)
        _NOMINAL_CACHE[key] = (weakref.ref(model), weakref.ref(space), start)
    return start


def _nominal_start_uncached(model, space: ParameterSpace, F, tol, max_iterations):
    p_nom = space.nominal[None]
    q, st, _, q_u, st_u, _, dq, dq_u = _solve_chunk(model, space, p_nom, F, tol,
                                                    max_iterations, True, None, start=None)
    ok = (CONVERGED, CONVERGED_BEYOND_LIMITS)
    q_u = q_u[0] if st_u[0] in ok else np.full(6, np.nan)
    q = np.where(np.isin(st[0], ok)[:, None], q[0], np.nan)
    return q_u, dq_u[0], q, dq[0]


def _allocate(m_sets, n_loads, n_facets, d, sensitivities):
    """Result arrays of M sets: ``(q, status, iterations, q_u, status_u, facet_force, dq,
    dq_u)``; ``dq``, ``dq_u`` None without sensitivities."""
    return (np.empty((m_sets, n_loads, 6)), np.empty((m_sets, n_loads), dtype=np.int64),
            np.empty((m_sets, n_loads), dtype=np.int64), np.empty((m_sets, 6)),
            np.empty(m_sets, dtype=np.int64), np.zeros((m_sets, n_loads, n_facets)),
            np.empty((m_sets, n_loads, 6, d)) if sensitivities else None,
            np.empty((m_sets, 6, d)) if sensitivities else None)


def _solve_chunk(model, space: ParameterSpace, P, F, tol, max_iterations, sensitivities,
                 n_threads, *, start, out=None):
    """Solve one chunk of parameter sets in this process; the tuple of :func:`_allocate`,
    written into ``out`` when given (views of the whole call's arrays: no copy to join the
    chunks). ``start``: the nominal start of :func:`_nominal_start` (None: none, every set
    as :func:`segment.solve`)."""
    m_sets, n_loads = P.shape[0], F.shape[0]
    glob, lig, fac = space.pack(model, P)
    d = space.dim
    if start is None:
        start = _no_start(n_loads, d)
    q_nom_u, dq_nom_u, q_nom, dq_nom = start
    dP = np.ascontiguousarray(P - space.nominal)
    if sensitivities:
        dglob, dlig, dfac = space.pack_derivative(model, P, n_threads=n_threads)
        # which elements each direction can move, from the space's plan (the same for every
        # set; where a derivative happens to be 0 in a set it is computed as 0)
        touch = touch_flags(*pack_plan(space, model).moved)
    else:
        dglob = np.zeros((1, 1, glob.shape[1]))
        dlig = np.zeros((1, 1, *lig.shape[1:]))
        dfac = np.zeros((1, 1, *fac.shape[1:]))
        touch = np.zeros((1, 2 + lig.shape[1] + fac.shape[1]), dtype=np.int8)
    if out is None:
        out = _allocate(m_sets, n_loads, fac.shape[1], d, sensitivities)
    q, st, it, q_u, st_u, ff, dq, dq_u = out
    it_u = np.empty(m_sets, dtype=np.int64)
    nrm = np.empty((m_sets, n_loads))
    launch(_sets_kernel, glob, lig, fac, model._packed[3], F, tol, max_iterations, dP, q_nom_u,
           dq_nom_u, q_nom,
           dq_nom, bool(sensitivities), dglob, dlig, dfac, touch, q_u, st_u, it_u,
           dq_u if sensitivities else np.zeros((1, 6, 1)), q, st, it, nrm, ff,
           dq if sensitivities else np.zeros((1, 1, 6, 1)), n_threads=n_threads)
    return out


def bytes_per_set(n_loads: int, n_facets: int, d: int, sensitivities: bool) -> int:
    """Memory [bytes] the result arrays of :func:`solve_sets` take per parameter set (the set
    itself, its offset from the nominal one, q, status, iterations, facet forces, residual
    norms and the unloaded pose; with sensitivities dq*/dp)."""
    floats = 2 * d + n_loads * (6 + 2 + n_facets + 1) + 6 + 2
    if sensitivities:
        floats += (n_loads + 1) * 6 * d
    return 8 * floats


def solve_sets(model, P, loads, *, space=None, sensitivities: bool = False,
               tol: float = DEFAULT_TOL, max_iterations: int = 60,
               n_threads: int | None = None, client=None, chunk: int | None = None,
               progress: bool = False, strict: bool = True) -> SetsResult:
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
        Also compute dq*/dp of every equilibrium (:mod:`segment.studies.sensitivity`).
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
    strict : bool
        True (default): a parameter value outside the plausible range of its field (e.g. a
        facet inclination of 1e6 deg, which ``facets.csv`` would refuse) is an error; False
        accepts it with a warning (:meth:`~segment.studies.space.ParameterSpace.check`).

    Returns
    -------
    SetsResult

    Raises
    ------
    TypeError, ValueError
        Naming the argument: ``model`` not a Segment, ``loads`` or ``P`` not numbers of the
        right shape, a parameter outside its limits, a ``chunk`` that is not a count, or sets
        whose results would not fit in the memory available.

    Examples
    --------
    >>> import segment
    >>> from segment.studies.sets import solve_sets
    >>> from segment.studies.space import load_space
    >>> space = load_space()
    >>> r = solve_sets(segment.c5c6(), space.sample(64, seed=1), list(segment.LOAD_CASES.values()))
    >>> r.q.shape, bool(r.converged.all())
    ((64, 9, 6), True)
    """
    from tqdm import tqdm  # plain text bar: tqdm.auto warns in notebooks without ipywidgets

    if not isinstance(model, Segment):
        raise TypeError(f"model must be a segment.Segment, got {type(model).__name__}")
    space = load_space(space)
    tol, max_iterations = check_tolerances(tol, max_iterations)
    P = space.check(P, strict=strict)
    F, names = as_loads(loads)
    m_sets = P.shape[0]
    size = (check_count(chunk, "chunk") if chunk is not None else
            (CHUNK_SETS_SENSITIVITY if sensitivities else CHUNK_SETS))
    check_memory(m_sets * bytes_per_set(F.shape[0], len(model.facets), space.dim,
                                        sensitivities),
                 f"solve_sets: {m_sets:,} parameter sets x {F.shape[0]} loads"
                 + (" with sensitivities" if sensitivities else ""))
    starts = list(range(0, m_sets, size))
    t0 = time.perf_counter()
    nominal = _nominal_start(model, space, F, tol, max_iterations)
    args = (tol, max_iterations, bool(sensitivities), n_threads)
    if client is None:
        whole = _allocate(m_sets, F.shape[0], len(model.facets), space.dim, sensitivities)
        for s in tqdm(starts, disable=not progress, desc="parameter sets", unit="chunk"):
            _solve_chunk(model, space, P[s:s + size], F, *args, start=nominal,
                         out=tuple(None if x is None else x[s:s + size] for x in whole))
            log.info("solve_sets: %d / %d parameter sets", min(m_sets, s + size), m_sets)
        parts = [whole]
    else:
        _require("distributed")
        # hash=False: a fresh key per call. With the default content hash, two calls with the
        # same model share one key, and releasing the first call's future deletes the data
        # the second call's tasks depend on ("lost dependencies"; every MCMC step calls us)
        model_f = client.scatter(model, broadcast=True, hash=False)
        space_f = client.scatter(space, broadcast=True, hash=False)
        futures = [client.submit(_solve_chunk, model_f, space_f, P[s:s + size], F, *args,
                                 start=nominal, pure=False) for s in starts]
        if progress:
            from distributed import as_completed

            for _ in tqdm(as_completed(futures), total=len(futures), desc="parameter sets",
                          unit="chunk"):
                pass
        parts = client.gather(futures)
    elapsed = time.perf_counter() - t0

    def cat(k):
        if parts[0][k] is None:
            return None
        return parts[0][k] if len(parts) == 1 else np.concatenate([p[k] for p in parts])

    return SetsResult(P=P, names=space.names, units=space.units, loads=F, load_names=names,
                      q=cat(0), status=cat(1), iterations=cat(2), q_unloaded=cat(3),
                      status_unloaded=cat(4), facet_force=cat(5),
                      facet_names=tuple(f.side for f in model.facets), dq_dp=cat(6),
                      dq_unloaded_dp=cat(7), elapsed=elapsed)
