"""Many parameter sets x many loads in one compiled, parallel launch; in-process or on Dask.

:func:`solve_sets` takes parameter sets as an array over the parameter space (M, D)
(:class:`segment.studies.space.ParameterSpace`), writes them straight into the solver's packed
arrays (:meth:`~segment.studies.space.ParameterSpace.pack`: no Python ``Segment`` per set) and
solves, in one numba kernel (``prange`` over the cores):

1. the nominal set's equilibria (unloaded and under every load) and their exact
   sensitivities dq*/dp, once per call (:func:`_nominal_start`);
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
import math
import threading
import time
import weakref
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from segment._checks import check_count, check_memory
from segment.core.model import Segment
from segment.core.newton import (
    CONVERGED,
    CONVERGED_BEYOND_LIMITS,
    DEFAULT_TOL,
    MAX_ITERATIONS,
    STATUS_TEXT,
    _limits_and_facet_forces,
    _lu6,
    _lu6_solve,
    _newton_kernel,
    _solve_kernel,
    _solve_kernel_from,
)
from segment.core.residual import _residual_jacobian
from segment.elements.disc import DOF_NAMES
from segment.jit import njit, prange
from segment.solvers.batch import _as_loads, launch
from segment.solvers.equilibrium import _check_tolerances
from segment.studies.packing import pack_plan
from segment.studies.sensitivity import _equilibrium_sensitivity, touch_flags
from segment.studies.space import ParameterSpace, load_space

__all__ = ["SetsResult", "solve_sets"]

log = logging.getLogger(__name__)

CHUNK_SETS = 4096
"""Parameter sets per compiled launch (progress between launches)."""
CHUNK_SETS_SENSITIVITY = 512
"""The same with sensitivities (the packed derivatives take D x the memory)."""
STATUS_CODES = dict(enumerate(STATUS_TEXT))
"""Status codes of the solves (``status``, ``status_unloaded``) and what they mean."""
PARQUET_FORMAT = 1
"""Format of :meth:`SetsResult.to_parquet` (the metadata key ``format``)."""
PARQUET_COLUMNS = ("P", "q", "status", "iterations", "q_unloaded", "status_unloaded",
                   "facet_force")
PARQUET_META_KEYS = ("names", "units", "loads", "load_names", "facet_names", "elapsed")

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
    beyond = _limits_and_facet_forces(q, packed, lig_flags, fac_flags, ffac)
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
            q, st, _, its = _newton_kernel(packed, zero, q0, tol, max_iterations, sub_log)
        if st != CONVERGED:
            q, st, _, _, its2, _ = _solve_kernel(packed, zero, zero, tol, max_iterations,
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
                _, J = _residual_jacobian(q, zero, packed)
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
                q, st, nrm, its = _newton_kernel(packed, f, q0, tol, max_iterations, sub_log)
            if st != CONVERGED:     # solve()'s path
                for c in range(6):
                    q0[c] = 0.0
                if unloaded_ok:
                    if not have_lu:
                        _, J = _residual_jacobian(q_u[i], zero, packed)
                        lu, piv, lu_ok = _lu6(J)
                        have_lu = True
                    if lu_ok:
                        dq = np.empty((6, 1))
                        for c in range(6):
                            dq[c, 0] = -f[c]
                        _lu6_solve(lu, piv, dq)
                        good = True
                        for c in range(6):
                            good = good and math.isfinite(dq[c, 0])
                        if good:
                            for c in range(6):
                                q0[c] = q_u[i, c] + dq[c, 0]
                q, st, nrm, _, its2, _ = _solve_kernel_from(packed, f, q0, zero, tol,
                                                            max_iterations, log_buf)
                its += its2
            q_out[i, j] = q
            st_out[i, j] = _finish(q, st, packed, lig_flags, fac_flags, ffac_out[i, j])
            it_out[i, j] = its
            norm_out[i, j] = nrm
            if with_sens:
                if st == CONVERGED:
                    _, J = _residual_jacobian(q, f, packed)
                    _equilibrium_sensitivity(q, J, packed, dglob[i], dlig[i], dfac[i], touch,
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
        Codes of :mod:`segment.solvers.equilibrium` (0 converged).
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
        meta = {"format": PARQUET_FORMAT, "names": self.names, "units": self.units,
                "loads": self.loads.tolist(), "load_names": self.load_names,
                "facet_names": self.facet_names, "elapsed": self.elapsed}
        import json

        table = table.replace_schema_metadata({"segment": json.dumps(meta)})
        pq.write_table(table, str(path))

    @classmethod
    def read_parquet(cls, path) -> SetsResult:
        """Load a result saved by :meth:`to_parquet`, checked against what wrote it.

        Raises
        ------
        ValueError
            Naming the file: not a parquet file or not one of ours, metadata that is not
            JSON or lacks a key, a missing column, rows of the wrong length for the names,
            loads and facets of the metadata (e.g. 5 names for 21 parameter columns), values
            that are not finite (q, the unloaded pose, facet forces, loads, parameters:
            :func:`solve_sets` never writes NaN), an unknown status code, or a format this
            version does not know.
        """
        _require("pyarrow")
        import json

        import pyarrow as pa
        import pyarrow.parquet as pq

        if isinstance(path, bool) or not isinstance(path, str | Path):
            raise TypeError(f"path must be a file path, got {type(path).__name__}")
        file = Path(path)
        name = str(path) if str(path).strip() else repr(str(path))   # Path("") is "."

        def bad(what):
            return ValueError(f"{name}: {what}; not a parameter-set result as "
                              "SetsResult.to_parquet writes it")

        # one file, never a dataset: pyarrow would read a folder as one and name its files
        if not str(path).strip() or not file.exists():
            raise ValueError(f"{name}: file not found")
        if file.is_dir():
            raise ValueError(f"{name}: is a folder, expected the parquet file "
                             "SetsResult.to_parquet writes")
        size = file.stat().st_size
        try:
            table = pq.read_table(pa.OSFile(name))
        except (OSError, pa.ArrowException):
            raise ValueError(f"{name}: not a readable parquet file ({size:,} bytes; a parquet "
                             "file ends in the footer 'PAR1', which is missing or damaged "
                             "here)") from None
        raw = (table.schema.metadata or {}).get(b"segment")
        if raw is None:
            raise ValueError(f"{name}: not a segment parameter-set result (no 'segment' "
                             "metadata)")
        try:
            meta = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise bad(f"its 'segment' metadata is not JSON ({exc})") from None
        if not isinstance(meta, dict):
            raise bad("its 'segment' metadata is not a JSON object")
        fmt = meta.get("format", 1)       # files of 0.2 have no format key: format 1
        if fmt != PARQUET_FORMAT:
            raise bad(f"format {fmt!r}, this version reads format {PARQUET_FORMAT}")
        missing = [k for k in PARQUET_META_KEYS if k not in meta]
        if missing:
            raise bad(f"metadata key(s) {missing} missing")
        cols = [c for c in PARQUET_COLUMNS if c not in table.column_names]
        if cols:
            raise bad(f"column(s) {cols} missing")
        for key in ("names", "units", "load_names", "facet_names"):
            if not (isinstance(meta[key], list) and all(isinstance(x, str) for x in meta[key])):
                raise bad(f"metadata {key!r} is not a list of names")
        names, units = tuple(meta["names"]), tuple(meta["units"])
        if len(units) != len(names):
            raise bad(f"{len(units)} units for {len(names)} parameter names")
        try:
            loads = np.array(meta["loads"], dtype=float)
            elapsed = float(meta["elapsed"])
        except (TypeError, ValueError):
            raise bad("metadata 'loads' or 'elapsed' are not numbers") from None
        if loads.ndim != 2 or loads.shape[1] != 6 or len(loads) == 0:
            raise bad(f"metadata 'loads' must be N rows of 6 numbers, got shape {loads.shape}")
        if not np.all(np.isfinite(loads)):
            raise bad("metadata 'loads' are not all finite")
        n, d, f = loads.shape[0], len(names), len(meta["facet_names"])
        if len(meta["load_names"]) != n:
            raise bad(f"{len(meta['load_names'])} load names for {n} loads")
        m = table.num_rows

        def col(key, width, dtype=float):
            values = table.column(key).to_pylist()
            if width is None:                      # one scalar per row
                try:
                    a = np.array(values, dtype=dtype)
                except (TypeError, ValueError):
                    raise bad(f"column {key!r} holds values that are not numbers") from None
                return a
            if any(v is None or len(v) != width for v in values):
                lengths = sorted({None if v is None else len(v) for v in values},
                                 key=lambda x: -1 if x is None else x)
                raise bad(f"column {key!r} must hold {width} values per row (from the "
                          f"metadata), got {lengths}")
            try:
                return np.array(values, dtype=dtype).reshape(m, width)
            except (TypeError, ValueError):
                raise bad(f"column {key!r} holds values that are not numbers") from None

        P = col("P", d)
        q = col("q", n * 6).reshape(m, n, 6)
        status = col("status", n, np.int64)
        iterations = col("iterations", n, np.int64)
        q_unloaded = col("q_unloaded", 6)
        status_unloaded = col("status_unloaded", None, np.int64).reshape(m)
        facet_force = col("facet_force", n * f).reshape(m, n, f)
        for key, a in (("P", P), ("q", q), ("q_unloaded", q_unloaded),
                       ("facet_force", facet_force)):
            if not np.all(np.isfinite(a)):
                where = np.argwhere(~np.isfinite(a.reshape(m, -1)))[0]
                raise bad(f"column {key!r}, row {where[0]}: not finite (solve_sets never "
                          "writes NaN)")
        known = np.array(sorted(STATUS_CODES))
        for key, a in (("status", status), ("status_unloaded", status_unloaded)):
            unknown = np.setdiff1d(a, known)
            if unknown.size:
                raise bad(f"column {key!r}: unknown status code(s) {unknown.tolist()}")
        if (iterations < 0).any():
            raise bad("column 'iterations': negative counts")
        return cls(P=P, names=names, units=units, loads=loads,
                   load_names=tuple(meta["load_names"]), q=q, status=status,
                   iterations=iterations, q_unloaded=q_unloaded,
                   status_unloaded=status_unloaded, facet_force=facet_force,
                   facet_names=tuple(meta["facet_names"]), dq_dp=None, dq_unloaded_dp=None,
                   elapsed=elapsed)


def _require(module: str) -> None:
    import importlib

    try:
        importlib.import_module(module)
    except ImportError:
        raise ImportError(f"{module} is needed for this; install the study extra: "
                          'pip install "c5c6-segment[study]"') from None


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
    tol, max_iterations = _check_tolerances(tol, max_iterations)
    P = space.check(P, strict=strict)
    F, names = _as_loads(loads)
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
