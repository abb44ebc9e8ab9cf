"""Many static equilibria at once: ``solve_many`` for load sets and parameter sets.

Parameter studies and uncertainty analysis need thousands of equilibria. ``solve_many`` runs the
compiled Newton of :mod:`segment.solvers.equilibrium` (``newton_kernel``: exact Jacobian of
:mod:`segment.elements.tangent`, capped steps, Armijo backtracking) over N load vectors inside one
numba kernel, the loads spread over the CPU cores (``prange``). Each entry runs the very kernel of
:func:`segment.solvers.equilibrium.solve_raw` (``solve_kernel_from``): Newton from ``q0`` at the
full load, and when that fails automatic load stepping from the pose :func:`segment.solve` steps
from (the reference pose with the default predicted start), so the results are those of the
one-at-a-time solver
(to its convergence tolerance; the tests check 1e-8 mm / rad, also at 10x nominal loads).
Non-converged entries are flagged (``converged`` False, a ``status`` code); ``q`` holds their
last finite iterate, never NaN. Equilibria past a failure limit (a dislocated facet, a
ligament past eps_max) have status 6 and are marked in ``facet_dislocated`` /
``ligament_beyond_max``, as :func:`segment.solve` marks them.
"""

from __future__ import annotations

import logging
import numbers
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

from segment._progress import bar
from segment.core.checks import check_start
from segment.core.failure_limits import beyond_limits
from segment.core.model import Segment, predict_row
from segment.core.newton import (
    CONVERGED,
    CONVERGED_BEYOND_LIMITS,
    DEFAULT_TOL,
    solve_kernel_from,
)
from segment.core.status import CONVERGED_STATUSES, Status
from segment.elements.disc import DOF_NAMES
from segment.elements.loads import Load
from segment.jit import load_numba, njit, prange
from segment.solvers.equilibrium import check_tolerances

__all__ = ["BatchResult", "launch", "solve_many"]

log = logging.getLogger(__name__)

CHUNK = 2000
"""Loads per compiled call; progress is logged between chunks."""

_LAUNCH_LOCK = threading.Lock()
_THREAD_SAFE_LAYERS = ("omp", "tbb")


def _thread_safe(numba) -> bool:
    try:
        return numba.threading_layer() in _THREAD_SAFE_LAYERS
    except ValueError:      # no parallel kernel has run yet: the layer is not chosen
        return False


def launch(kernel, *args, n_threads: int | None = None):
    """Call a parallel kernel ``kernel(*args)`` (``@njit(parallel=True)``) safely from any
    thread.

    Without ``n_threads`` (or with 1) the precompiled kernel runs on this thread when there is
    one for these argument types (:mod:`segment.jit`: no numba import, no compile); otherwise,
    and for ``n_threads`` > 1, numba's parallel kernel runs on ``n_threads`` threads (1 ...
    ``NUMBA_NUM_THREADS``; default: all of numba's). The iterations of a parallel kernel are
    independent, so the route changes the time, never the numbers.

    numba's ``workqueue`` threading layer aborts the process when two threads launch
    parallel kernels at once. Launches are therefore serialised by a process-wide lock unless
    numba's threading layer is ``omp`` or ``tbb`` (thread-safe; ``omp`` is numba's choice
    where the OpenMP runtime is installed). numba's thread count is thread-local.
    """
    if n_threads is None or (type(n_threads) is int and n_threads == 1):
        fn = kernel.precompiled_for(args)
        if fn is not None:
            return fn(*args)
    numba = load_numba()
    if n_threads is not None:
        n = int(n_threads)
        if n != n_threads or not 1 <= n <= numba.config.NUMBA_NUM_THREADS:
            raise ValueError(f"n_threads must be an integer in 1 ... "
                             f"{numba.config.NUMBA_NUM_THREADS}, got {n_threads!r}")
    safe = _thread_safe(numba)
    if not safe:
        _LAUNCH_LOCK.acquire()
    try:
        if n_threads is None:
            return kernel.dispatcher(*args)
        old = numba.get_num_threads()
        numba.set_num_threads(int(n_threads))
        try:
            return kernel.dispatcher(*args)
        finally:
            numba.set_num_threads(old)
    finally:
        if not safe:
            _LAUNCH_LOCK.release()


@njit
def _solve_one(packed, f, q0, q_step, tol, max_iterations, log_buf, lig_flags, fac_flags):
    """One equilibrium by ``equilibrium.solve_kernel_from``: (q, status, norm, iterations),
    with the failure limits at q marked in ``lig_flags`` and ``fac_flags`` (status 6 when a
    converged equilibrium is past one, as :func:`segment.solve` reports it)."""
    q, status, norm, _, iterations, _ = solve_kernel_from(packed, f, q0, q_step, tol,
                                                           max_iterations, log_buf)
    if beyond_limits(q, packed, lig_flags, fac_flags) and status == CONVERGED:
        status = CONVERGED_BEYOND_LIMITS
    return q, status, norm, iterations


@njit(parallel=True)
def _solve_batch(packed, F, Q0, Qstep, predictor, tol, max_iterations, q_out, status_out,
                 norm_out, iter_out, lig_out, fac_out):
    """``predictor[0]`` True: start each load from the linear predictor (``Q0`` ignored), as
    :func:`segment.solve` does, by the same compiled function."""
    available, q_u, k_inv = predictor
    for k in prange(F.shape[0]):
        log_buf = np.zeros((5 * max_iterations, 3))
        q0 = Q0[k].copy()
        if available:
            predict_row(q_u, k_inv, F[k], q0)
        q, st, nrm, it = _solve_one(packed, F[k], q0, Qstep[k], tol, max_iterations,
                                    log_buf, lig_out[k], fac_out[k])
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
        Numerically converged (status 0 or 6).
    status : ndarray of int
        Values of :class:`~segment.core.status.Status` (0 converged, 1 iteration limit,
        2 line search failed, 3 load stepping failed, 4 non-finite, 5 singular Jacobian,
        6 converged beyond the failure limits); ``Status(code).text`` says it in words.
    iterations : ndarray of int
        Newton steps taken, over all load steps.
    residual_norm : ndarray
        Scaled residual ``max(|F_i| / 20 N, |M_i| / 1800 N mm)``.
    loads : ndarray, shape (N, 6)
        The load vectors [N, N mm].
    load_names : tuple of str
    elapsed : float
        Wall time of the solve [s].
    ligament_beyond_max : ndarray of bool, shape (..., n_ligaments)
        Ligament past eps_max (point C of Table 3) at q, in the model's ligament order.
    facet_dislocated : ndarray of bool, shape (..., n_facets)
        Facet dislocated at q (:mod:`segment.elements.facet`, item 9), in the model's facet order.
    """

    q: np.ndarray
    converged: np.ndarray
    status: np.ndarray
    iterations: np.ndarray
    residual_norm: np.ndarray
    loads: np.ndarray
    load_names: tuple[str, ...]
    elapsed: float
    ligament_beyond_max: np.ndarray | None = None
    facet_dislocated: np.ndarray | None = None

    @property
    def intact(self) -> np.ndarray:
        """No facet dislocated, no ligament past eps_max at q and none ruptured (status 6 is
        never intact) (bool, shape (...))."""
        return ~(self.ligament_beyond_max.any(axis=-1) | self.facet_dislocated.any(axis=-1)
                 | (self.status == CONVERGED_BEYOND_LIMITS))

    def __repr__(self) -> str:
        n = int(np.size(self.converged))
        shape = "x".join(str(k) for k in self.converged.shape)
        return (f"BatchResult({n} equilibria ({shape}), {n - self.n_failed} converged, "
                f"{self.n_failed} failed, {self.elapsed:.3g} s)")

    @property
    def n_failed(self) -> int:
        return int(np.size(self.converged) - np.count_nonzero(self.converged))

    @property
    def rate(self) -> float:
        """Equilibria per second of wall time."""
        return float(np.size(self.converged) / self.elapsed) if self.elapsed > 0 else np.inf

    def frame(self) -> pd.DataFrame:
        """Long table: one row per equilibrium, q in mm and degrees, status and message."""
        import pandas as pd  # lazy: `import segment` stays light

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
        data["intact"] = self.intact.reshape(-1)
        data["status"] = status
        data["message"] = [Status(s).text for s in status]
        data["iterations"] = self.iterations.reshape(-1)
        data["residual_norm"] = self.residual_norm.reshape(-1)
        return pd.DataFrame(data)

    def to_frame(self) -> pd.DataFrame:
        """The table of :meth:`frame` (``to_frame`` is the name every result uses)."""
        return self.frame()


def _si_loads(loads, force_N, moment_Nm):
    """``loads``, or the (N, 6) internal-unit array of ``force_N`` [N] and ``moment_Nm`` [N m]."""
    if force_N is None and moment_Nm is None:
        if loads is None:
            raise ValueError("solve_many needs loads (Load records or an (N, 6) array in N and "
                             "N mm) or force_N and moment_Nm (SI), got none")
        return loads
    if loads is not None:
        raise ValueError("give either loads or force_N and moment_Nm, not both")
    if force_N is None or moment_Nm is None:
        raise ValueError("force_N and moment_Nm go together (use zeros for the one you do "
                         "not need)")
    f = np.asarray(force_N, dtype=float)
    m = np.asarray(moment_Nm, dtype=float)
    if f.ndim != 2 or f.shape[1] != 3 or m.shape != f.shape:
        raise ValueError(f"force_N and moment_Nm must both have shape (N, 3), got {f.shape} "
                         f"and {m.shape}")
    return np.concatenate([f, 1000.0 * m], axis=1)       # N m -> N mm, the internal unit


def as_loads(loads) -> tuple[np.ndarray, tuple[str, ...]]:
    if not isinstance(loads, (Load, np.ndarray, Sequence)) or isinstance(loads, (str, bytes)):
        raise TypeError(f"loads must be an (N, 6) array or a sequence of segment.Load, got "
                        f"{type(loads).__name__}")
    if isinstance(loads, Load):
        loads = [loads]
    if isinstance(loads, np.ndarray) or (
            isinstance(loads, Sequence) and loads and not isinstance(loads[0], Load)):
        F = np.asarray(loads)
        if F.dtype.kind not in "iuf":
            raise TypeError(f"loads must be real numbers [N, N mm], got dtype {F.dtype}")
        F = np.array(F, dtype=float)
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


def _as_q0(q0, n: int) -> np.ndarray | None:
    if q0 is None or (isinstance(q0, str) and q0 == "predict"):
        return None
    if isinstance(q0, str):
        if q0 != "reference":
            raise ValueError(f"q0 must be 'predict', 'reference' or an array, got {q0!r}")
        return np.zeros((n, 6))
    q = np.asarray(q0)
    if q.dtype.kind not in "iuf":
        raise TypeError(f"q0 must be real numbers [mm, rad], got dtype {q.dtype}")
    q = np.array(q, dtype=float)
    if q.shape == (6,):
        q = np.tile(q, (n, 1))
    if q.shape != (n, 6) or not np.all(np.isfinite(q)):
        raise ValueError(f"q0 must be 6 finite numbers or shape ({n}, 6), got {q.shape}")
    check_start(q, "q0")        # as segment.solve: within 100 mm and 90 deg
    return np.ascontiguousarray(q)


def _solve_model(model, F, Q0, Qstep, predict, tol, max_iterations, progress_label, total,
                 done, n_threads=None):
    n = F.shape[0]
    q = np.empty((n, 6))
    status = np.empty(n, dtype=np.int64)
    norm = np.empty(n)
    iters = np.empty(n, dtype=np.int64)
    packed = model._packed
    lig = np.zeros((n, packed[1].shape[0]), dtype=np.bool_)
    fac = np.zeros((n, packed[2].shape[0]), dtype=np.bool_)
    predictor = model._predictor if predict else (False, np.zeros(6), np.zeros((6, 6)))
    for start in range(0, n, CHUNK):
        sl = slice(start, min(n, start + CHUNK))
        launch(_solve_batch, packed, F[sl], Q0[sl], Qstep[sl], predictor, tol, max_iterations,
               q[sl], status[sl], norm[sl], iters[sl], lig[sl], fac[sl], n_threads=n_threads)
        if model.ruptured:   # strips broke under load: past a failure limit (as solve says)
            status[sl][status[sl] == CONVERGED] = CONVERGED_BEYOND_LIMITS
        done += sl.stop - sl.start
        if total > CHUNK:
            log.info("%s: %d / %d equilibria", progress_label, done, total)
    return q, status, norm, iters, lig, fac, done


def solve_many(model, loads=None, *, force_N=None, moment_Nm=None, q0="predict",
               tol: float = DEFAULT_TOL, max_iterations: int = 60,
               n_models: int | None = None, n_threads: int | None = None,
               progress: bool | None = None) -> BatchResult:
    """Static equilibria for many loads and, optionally, many parameter sets.

    Units: the package's internal ones, N and N mm, for a raw ``loads`` array; give
    ``force_N`` and ``moment_Nm`` instead to pass SI arrays explicitly, or :class:`Load`
    records, which carry their own units.

    Parameters
    ----------
    model : Segment, sequence of Segment, or callable
        One model; or M parameter sets (every load is solved for every model); or a function
        ``i -> Segment`` called for i = 0 ... ``n_models`` - 1.
    loads : sequence of Load, or array_like, shape (N, 6)
        Load records; or load vectors in **internal units**: Fx, Fy, Fz [N] and Mx, My, Mz
        [N mm] (1.8 N m is 1800), joint frame. Leave out when giving ``force_N`` and
        ``moment_Nm``.
    force_N, moment_Nm : array_like, shape (N, 3), keyword-only
        The same loads in SI units: force [N] through the C5 origin and moment [N m], joint
        frame. Both or neither; not together with ``loads``.
    q0 : "predict", "reference" or array_like, shape (6,) or (N, 6)
        Starting points. ``"predict"`` (default): the linear predictor
        ``q_u - K_u^-1 f`` from each model's unloaded equilibrium ``q_u`` with its stiffness
        ``K_u`` (1.3-1.7x faster than starting at the reference pose for random loads in
        ``benchmarks/bench_batch.py``), the start :func:`segment.solve` takes by default, so
        both give the same statuses and equilibria (also at 10x nominal loads, where several
        equilibria exist). ``"reference"``: q = 0, the start of ``solve(..., q0=np.zeros(6))``.
    tol, max_iterations
        As :func:`segment.solve`.
    n_models : int, optional
        Number of models when ``model`` is a callable.
    n_threads : int, optional
        Threads of the compiled launches (default: all of numba's). Safe to call from
        several threads at once (e.g. Dask's threaded workers): launches are serialised by
        :func:`launch` unless numba runs on a thread-safe threading layer (omp, tbb).
        For many parameter sets of one space, :func:`segment.studies.sets.solve_sets` is faster
        (one launch, no ``Segment`` per set).
    progress : bool, optional
        A progress bar on stderr (default: when stderr is a terminal; see
        :mod:`segment._progress`).

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
    >>> si = segment.solve_many(segment.c5c6(), force_N=[[0, 0, 0]], moment_Nm=[[0, 1.8, 0]])
    >>> bool(np.allclose(si.q[0], r.q[6]))            # the same as FLX (1.8 N m about y)
    True
    """
    tol, max_iterations = check_tolerances(tol, max_iterations)
    F, names = as_loads(_si_loads(loads, force_N, moment_Nm))
    Q0 = _as_q0(q0, F.shape[0])
    single = isinstance(model, Segment)
    if single:
        models: Sequence[Segment] | Callable = [model]
        m = 1
    elif callable(model):
        if n_models is None:
            raise ValueError("n_models must be given (an integer >= 1) with a model function")
        if isinstance(n_models, bool) or not isinstance(n_models, numbers.Integral):
            raise TypeError(f"n_models must be an integer >= 1 with a model function, got "
                            f"{n_models!r}")
        if n_models < 1:
            raise ValueError(f"n_models must be >= 1 with a model function, got {n_models!r}")
        models, m = model, int(n_models)
    elif not isinstance(model, Iterable):
        raise TypeError(f"model must be a segment.Segment, a sequence of them or a function "
                        f"i -> Segment, got {type(model).__name__}")
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
    out_lig, out_fac = [], []
    done = 0
    with bar(total=m * F.shape[0], desc="solve_many", unit=" eq", progress=progress) as pbar:
        for i in range(m):
            mod = models(i) if callable(models) else models[i]
            if not isinstance(mod, Segment):
                raise TypeError(f"model {i} must be a segment.Segment, got "
                                f"{type(mod).__name__}")
            # Newton from the start; load stepping, when needed, from where solve() takes it
            # (the reference pose for "predict", else the given start)
            start = np.zeros_like(F) if Q0 is None else Q0
            before = done
            q, s, nrm, it, lig, fac, done = _solve_model(mod, F, start, start, Q0 is None, tol,
                                                         max_iterations, "solve_many",
                                                         m * F.shape[0], done, n_threads)
            pbar.update(done - before)
            out_q[i], out_s[i], out_n[i], out_i[i] = q, s, nrm, it
            out_lig.append(lig)
            out_fac.append(fac)
            if m > 1 and (i + 1) % max(1, m // 10) == 0:
                log.info("solve_many: %d / %d parameter sets", i + 1, m)
    elapsed = time.perf_counter() - t0
    lig_flags = _stack_flags(out_lig)
    fac_flags = _stack_flags(out_fac)
    if single:
        out_q, out_s, out_n, out_i = out_q[0], out_s[0], out_n[0], out_i[0]
        lig_flags, fac_flags = lig_flags[0], fac_flags[0]
    return BatchResult(q=out_q, converged=np.isin(out_s, CONVERGED_STATUSES), status=out_s,
                       iterations=out_i, residual_norm=out_n, loads=F, load_names=names,
                       elapsed=elapsed, ligament_beyond_max=lig_flags,
                       facet_dislocated=fac_flags)


def _stack_flags(arrays: list[np.ndarray]) -> np.ndarray:
    """(M, N, k) from M arrays (N, k); models of different k are padded with False."""
    k = max(a.shape[1] for a in arrays)
    out = np.zeros((len(arrays), arrays[0].shape[0], k), dtype=bool)
    for i, a in enumerate(arrays):
        out[i, :, :a.shape[1]] = a
    return out


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
