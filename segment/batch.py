"""Many static equilibria at once: ``solve_many`` for load sets and parameter sets.

Parameter studies and uncertainty analysis need thousands of equilibria. ``solve_many`` runs the
compiled Newton of :mod:`segment.equilibrium` (``_newton_kernel``: exact Jacobian of
:mod:`segment.tangent`, capped steps, Armijo backtracking) over N load vectors inside one
numba kernel, the loads spread over the CPU cores (``prange``). Each entry runs the very kernel of
:func:`segment.equilibrium.solve_raw` (``_solve_kernel``): Newton from ``q0`` at the full
load, and when that fails automatic load stepping, so the results are those of the
one-at-a-time solver
(to its convergence tolerance; the tests check 1e-8 mm / rad). Non-converged entries are
flagged (``converged`` False, a ``status`` code); ``q`` holds their last finite iterate,
never NaN.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numba
import numpy as np
import pandas as pd
from numba import njit, prange

from segment.disc import DOF_NAMES
from segment.equilibrium import (
    CONVERGED,
    DEFAULT_TOL,
    STATUS_TEXT,
    _check_tolerances,
    _solve_kernel,
)
from segment.loads import Load
from segment.model import Segment

__all__ = ["BatchResult", "launch", "solve_many"]

log = logging.getLogger(__name__)

CHUNK = 2000
"""Loads per compiled call; progress is logged between chunks."""

_LAUNCH_LOCK = threading.Lock()
_THREAD_SAFE_LAYERS = ("omp", "tbb")


def _thread_safe() -> bool:
    try:
        return numba.threading_layer() in _THREAD_SAFE_LAYERS
    except ValueError:      # no parallel kernel has run yet: the layer is not chosen
        return False


def launch(kernel, *args, n_threads: int | None = None):
    """Call a parallel numba ``kernel(*args)`` safely from any thread.

    numba's ``workqueue`` threading layer aborts the process when two threads launch
    parallel kernels at once. Launches are therefore serialised by a process-wide lock unless
    numba's threading layer is ``omp`` or ``tbb`` (thread-safe; ``omp`` is numba's choice
    where the OpenMP runtime is installed). ``n_threads`` (1 ... ``NUMBA_NUM_THREADS``)
    limits the threads of this launch (numba's setting is thread-local).
    """
    if n_threads is not None:
        n = int(n_threads)
        if n != n_threads or not 1 <= n <= numba.config.NUMBA_NUM_THREADS:
            raise ValueError(f"n_threads must be an integer in 1 ... "
                             f"{numba.config.NUMBA_NUM_THREADS}, got {n_threads!r}")
    safe = _thread_safe()
    if not safe:
        _LAUNCH_LOCK.acquire()
    try:
        if n_threads is None:
            return kernel(*args)
        old = numba.get_num_threads()
        numba.set_num_threads(int(n_threads))
        try:
            return kernel(*args)
        finally:
            numba.set_num_threads(old)
    finally:
        if not safe:
            _LAUNCH_LOCK.release()


@njit(cache=True)
def _solve_one(packed, f, q0, tol, max_iterations, log_buf):
    """One equilibrium by ``equilibrium._solve_kernel``: (q, status, norm, iterations)."""
    q, status, norm, _, iterations, _ = _solve_kernel(packed, f, q0, tol, max_iterations,
                                                      log_buf)
    return q, status, norm, iterations


@njit(cache=True, parallel=True)
def _solve_batch(packed, F, Q0, tol, max_iterations, q_out, status_out, norm_out, iter_out):
    for k in prange(F.shape[0]):
        log_buf = np.zeros((5 * max_iterations, 3))
        q, st, nrm, it = _solve_one(packed, F[k], Q0[k], tol, max_iterations, log_buf)
        q_out[k] = q
        status_out[k] = st
        norm_out[k] = nrm
        iter_out[k] = it


@dataclass(frozen=True, eq=False)
class BatchResult:
    """Outcome of :func:`solve_many`.

    Shapes: ``(N, ...)`` for one model, ``(M, N, ...)`` for M parameter sets.

    Attributes
    ----------
    q : ndarray, shape (..., 6)
        Joint coordinates [mm, rad] (last finite iterate where not converged).
    converged : ndarray of bool
    status : ndarray of int
        Codes of :mod:`segment.equilibrium` (0 converged, 1 iteration limit, 2 line search
        failed, 3 load stepping failed, 4 non-finite, 5 singular Jacobian).
    iterations : ndarray of int
        Newton steps taken, over all load steps.
    residual_norm : ndarray
        Scaled residual ``max(|F_i| / 20 N, |M_i| / 1800 N mm)``.
    loads : ndarray, shape (N, 6)
        The load vectors [N, N mm].
    load_names : tuple of str
    elapsed : float
        Wall time of the solve [s].
    """

    q: np.ndarray
    converged: np.ndarray
    status: np.ndarray
    iterations: np.ndarray
    residual_norm: np.ndarray
    loads: np.ndarray
    load_names: tuple[str, ...]
    elapsed: float

    @property
    def n_failed(self) -> int:
        return int(np.size(self.converged) - np.count_nonzero(self.converged))

    @property
    def rate(self) -> float:
        """Equilibria per second of wall time."""
        return float(np.size(self.converged) / self.elapsed) if self.elapsed > 0 else np.inf

    def frame(self) -> pd.DataFrame:
        """Long table: one row per equilibrium, q in mm and degrees, status and message."""
        q = self.q.reshape(-1, 6)
        n = self.loads.shape[0]
        m = q.shape[0] // n
        data = {"model": np.repeat(np.arange(m), n), "load": np.tile(np.arange(n), m),
                "load_name": list(self.load_names) * m}
        for j, name in enumerate(DOF_NAMES):
            data[f"{name}_{'mm' if j < 3 else 'deg'}"] = q[:, j] if j < 3 else np.degrees(
                q[:, j])
        status = self.status.reshape(-1)
        data["converged"] = self.converged.reshape(-1)
        data["status"] = status
        data["message"] = [STATUS_TEXT[s] for s in status]
        data["iterations"] = self.iterations.reshape(-1)
        data["residual_norm"] = self.residual_norm.reshape(-1)
        return pd.DataFrame(data)


def _as_loads(loads) -> tuple[np.ndarray, tuple[str, ...]]:
    if isinstance(loads, Load):
        loads = [loads]
    if isinstance(loads, np.ndarray) or (
            isinstance(loads, Sequence) and loads and not isinstance(loads[0], Load)):
        F = np.array(loads, dtype=float)
        if F.ndim != 2 or F.shape[1] != 6:
            raise ValueError(f"loads must have shape (N, 6) [N, N mm], got {F.shape}")
        names = tuple(f"load {k}" for k in range(F.shape[0]))
    else:
        loads = list(loads)
        bad = [type(x).__name__ for x in loads if not isinstance(x, Load)]
        if bad:
            raise TypeError(f"loads must be an (N, 6) array or segment.Load records, got {bad[0]}")
        F = np.array([x.as_array() for x in loads], dtype=float).reshape(-1, 6)
        names = tuple(x.name for x in loads)
    if F.shape[0] == 0:
        raise ValueError("loads must hold at least one load, got none")
    if not np.all(np.isfinite(F)):
        raise ValueError("loads must be finite")
    return np.ascontiguousarray(F), names


def _predict(model: Segment, F: np.ndarray) -> np.ndarray:
    """Linear predictor q_u - K_u^-1 f from the unloaded equilibrium (N, 6) [mm, rad]."""
    unloaded = model.unloaded
    if not unloaded.converged:
        return np.zeros_like(F)
    K = model.jacobian(unloaded.q, Load.zero())
    try:
        Q0 = unloaded.q - np.linalg.solve(K, F.T).T
    except np.linalg.LinAlgError:
        return np.zeros_like(F)
    return np.ascontiguousarray(Q0) if np.all(np.isfinite(Q0)) else np.zeros_like(F)


def _as_q0(q0, n: int) -> np.ndarray | None:
    if q0 is None or (isinstance(q0, str) and q0 == "predict"):
        return None
    if isinstance(q0, str):
        if q0 != "reference":
            raise ValueError(f"q0 must be 'predict', 'reference' or an array, got {q0!r}")
        return np.zeros((n, 6))
    q = np.array(q0, dtype=float)
    if q.shape == (6,):
        q = np.tile(q, (n, 1))
    if q.shape != (n, 6) or not np.all(np.isfinite(q)):
        raise ValueError(f"q0 must be 6 finite numbers or shape ({n}, 6), got {q.shape}")
    return np.ascontiguousarray(q)


def _solve_model(model, F, Q0, tol, max_iterations, progress_label, total, done,
                 n_threads=None):
    n = F.shape[0]
    q = np.empty((n, 6))
    status = np.empty(n, dtype=np.int64)
    norm = np.empty(n)
    iters = np.empty(n, dtype=np.int64)
    packed = model._packed
    for start in range(0, n, CHUNK):
        sl = slice(start, min(n, start + CHUNK))
        launch(_solve_batch, packed, F[sl], Q0[sl], tol, max_iterations, q[sl], status[sl],
               norm[sl], iters[sl], n_threads=n_threads)
        done += sl.stop - sl.start
        if total > CHUNK:
            log.info("%s: %d / %d equilibria", progress_label, done, total)
    return q, status, norm, iters, done


def solve_many(model, loads, *, q0="predict", tol: float = DEFAULT_TOL, max_iterations: int = 60,
               n_models: int | None = None, n_threads: int | None = None) -> BatchResult:
    """Static equilibria for many loads and, optionally, many parameter sets.

    Parameters
    ----------
    model : Segment, sequence of Segment, or callable
        One model; or M parameter sets (every load is solved for every model); or a function
        ``i -> Segment`` called for i = 0 ... ``n_models`` - 1.
    loads : array_like, shape (N, 6), or sequence of Load
        Load vectors (Fx, Fy, Fz [N], Mx, My, Mz [N mm], joint frame) or Load records.
    q0 : "predict", "reference" or array_like, shape (6,) or (N, 6)
        Starting points. ``"predict"`` (default): the linear predictor
        ``q_u - K_u^-1 f`` from each model's unloaded equilibrium ``q_u`` with its stiffness
        ``K_u`` (1.3-1.7x faster than starting at the reference pose for random loads in
        ``benchmarks/bench_batch.py``, and the same equilibria: 1e-11 mm / rad apart there).
        ``"reference"``: q = 0, the start of :func:`segment.solve`.
    tol, max_iterations
        As :func:`segment.solve`.
    n_models : int, optional
        Number of models when ``model`` is a callable.
    n_threads : int, optional
        Threads of the compiled launches (default: all of numba's). Safe to call from
        several threads at once (e.g. Dask's threaded workers): launches are serialised by
        :func:`launch` unless numba runs on a thread-safe threading layer (omp, tbb).
        For many parameter sets of one space, :func:`segment.sets.solve_sets` is faster
        (one launch, no ``Segment`` per set).

    Returns
    -------
    BatchResult
        Arrays of shape (N, ...) for one model, (M, N, ...) for M models.

    Examples
    --------
    >>> import numpy as np, segment
    >>> r = segment.solve_many(segment.c5c6(), list(segment.LOAD_CASES.values()))
    >>> r.q.shape, bool(r.converged.all())
    ((9, 6), True)
    """
    tol, max_iterations = _check_tolerances(tol, max_iterations)
    F, names = _as_loads(loads)
    Q0 = _as_q0(q0, F.shape[0])
    single = isinstance(model, Segment)
    if single:
        models: Sequence[Segment] | Callable = [model]
        m = 1
    elif callable(model):
        if n_models is None or int(n_models) < 1:
            raise ValueError(f"n_models must be >= 1 with a model function, got {n_models!r}")
        models, m = model, int(n_models)
    else:
        models = list(model)
        m = len(models)
        if m == 0:
            raise ValueError("model must be a Segment or a non-empty sequence of Segment")
    t0 = time.perf_counter()
    out_q = np.empty((m, F.shape[0], 6))
    out_s = np.empty((m, F.shape[0]), dtype=np.int64)
    out_n = np.empty((m, F.shape[0]))
    out_i = np.empty((m, F.shape[0]), dtype=np.int64)
    done = 0
    for i in range(m):
        mod = models(i) if callable(models) else models[i]
        if not isinstance(mod, Segment):
            raise TypeError(f"model {i} must be a segment.Segment, got {type(mod).__name__}")
        start = _predict(mod, F) if Q0 is None else Q0
        q, s, nrm, it, done = _solve_model(mod, F, start, tol, max_iterations,
                                           "solve_many", m * F.shape[0], done, n_threads)
        out_q[i], out_s[i], out_n[i], out_i[i] = q, s, nrm, it
        if m > 1 and (i + 1) % max(1, m // 10) == 0:
            log.info("solve_many: %d / %d parameter sets", i + 1, m)
    elapsed = time.perf_counter() - t0
    if single:
        out_q, out_s, out_n, out_i = out_q[0], out_s[0], out_n[0], out_i[0]
    return BatchResult(q=out_q, converged=out_s == CONVERGED, status=out_s, iterations=out_i,
                       residual_norm=out_n, loads=F, load_names=names, elapsed=elapsed)


def random_loads(n: int, *, scale: float = 2.0, force_N: float = 20.0,
                 moment_Nm: float = 1.8, seed: int | None = 0) -> np.ndarray:
    """N random loads (N, 6) [N, N mm] within ``scale`` x the nominal magnitudes.

    The force has a direction uniform on the sphere and a magnitude uniform in
    [0, scale * force_N]; the moment likewise up to scale * moment_Nm (the nine Moroney cases
    are 20 N and 1.8 N m). Force and moment are drawn independently, so most loads are
    combined loads.
    """
    rng = np.random.default_rng(seed)
    out = np.empty((int(n), 6))
    for k, mag in ((0, force_N), (3, moment_Nm * 1000.0)):
        d = rng.normal(size=(int(n), 3))
        d /= np.linalg.norm(d, axis=1, keepdims=True)
        out[:, k:k + 3] = d * rng.uniform(0.0, scale * mag, size=(int(n), 1))
    return out
