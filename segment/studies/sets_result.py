"""The record of M parameter sets x N loads: :class:`SetsResult`, and its parquet file.

One concept: what :func:`segment.studies.sets.solve_sets` returns (equilibria, statuses,
iterations, the unloaded poses, facet forces, optionally the sensitivities dq*/dp), its wide
table, and its round trip through a parquet file (``c5c6-segment[study]``), checked on
reading. ``status`` and ``status_unloaded`` hold codes of :class:`~segment.core.status.Status`
(0-6, a static solve's; ``Status(code).text`` says them in words).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from segment.core.status import CONVERGED_STATUSES, SOLVE_STATUSES
from segment.elements.disc import DOF_NAMES

__all__ = ["PARQUET_COLUMNS", "PARQUET_FORMAT", "PARQUET_META_KEYS", "SetsResult"]

PARQUET_FORMAT = 1
"""Format of :meth:`SetsResult.to_parquet` (the metadata key ``format``)."""
PARQUET_COLUMNS = ("P", "q", "status", "iterations", "q_unloaded", "status_unloaded",
                   "facet_force")
PARQUET_META_KEYS = ("names", "units", "loads", "load_names", "facet_names", "elapsed")


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
        Codes of :class:`~segment.core.status.Status` (0 converged).
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
        ok = CONVERGED_STATUSES     # numerically converged
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
        data["unloaded_converged"] = np.isin(self.status_unloaded, CONVERGED_STATUSES)
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
        known = np.array(SOLVE_STATUSES, dtype=np.int64)
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
