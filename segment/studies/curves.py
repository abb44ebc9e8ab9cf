"""Specimen curves: moment-rotation curves of motion segments, specimen by specimen.

Format (``data/curves/*.csv``; units in the headers, one row per curve point)::

    specimen,mode,moment_Nm,rotation_deg,ignore,source[,other columns]

``specimen``
    The specimen's label (any non-empty text).
``mode``
    The load case of the curve (:data:`MODES`): ``flexion`` and ``extension`` (a pure moment
    about the joint's y axis, +My and -My), ``lateral-bending`` (+Mx) and ``axial-rotation``
    (+Mz), as the load cases FLX, EXT, LB and AR of ``load_cases.csv``.
``moment_Nm`` or ``moment_Nmm``
    The applied moment's magnitude (>= 0), in the named direction. Within one curve (specimen
    and mode) the moments must increase strictly in file order.
``rotation_deg`` or ``rotation_rad``
    The segment's rotation about the same axis from its unloaded pose, positive in the named
    direction (the model's ``phi_y``, ``phi_x`` or ``phi_z`` from the unloaded equilibrium,
    signed so).
``ignore``
    ``yes`` for a point that is not a measurement and must not be fitted or scored (for the
    curves of Nightingale et al. 2002, the straight initial line of the processing), ``no``
    otherwise. Ignored points still carry the continuation of a model curve through them.
``source``
    Where the point comes from (``SOURCES.md §N``).

Other columns (e.g. ``age_years``) are kept as descriptive data of the specimen.

:func:`load_curves` validates like the model tables (:mod:`segment.core.io`): a missing column, a
unit that is not one of the above, a non-number or non-finite value, a negative moment, an
unknown mode, an ``ignore`` other than yes/no, a repeated (specimen, mode, moment), moments that
do not increase along a curve, and a curve without a point to fit are each one error naming the
file, the line, the row, the column and the value (every error of a file in one message).

The **corridor** of a mode (:meth:`CurveSet.corridor`) is the mean and SD (n - 1) over the
specimens of the rotation at each moment level, from the points not ignored. Decision: a level
enters only when every specimen of the mode has a point there (``min_specimens=None``); where
some specimens start later (their first measured point sits at a higher moment) the mean would
otherwise jump with the specimens it averages. ``min_specimens=k`` admits levels with at least
k specimens.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from segment.core.io import data_dir
from segment.core.tables import Table
from segment.studies.paths import solve_paths

__all__ = ["LOAD_COLUMNS", "MODES", "RESPONSE_COLUMNS", "Curve", "CurveSet", "compare",
           "default_curves_path", "load_curves", "mode_load", "model_curve"]

MODES = {"flexion": (4, 1.0), "extension": (4, -1.0), "lateral-bending": (3, 1.0),
         "axial-rotation": (5, 1.0)}
"""Mode -> (index of the rotation in q, sign): the load is a moment of that sign about that
axis (load cases FLX, EXT, LB, AR) and the rotation is measured with the same sign."""
LOAD_COLUMNS = {"moment_Nm": 1.0, "moment_Nmm": 1e-3}
"""Accepted load columns and their factor to N m."""
RESPONSE_COLUMNS = {"rotation_deg": 1.0, "rotation_rad": 180.0 / math.pi}
"""Accepted response columns and their factor to degrees."""
LEVEL_DIGITS = 9
"""Moment levels are compared after rounding to this many decimals of N m (a level of one
specimen and of another are the same level when they agree to 1e-9 N m)."""


def default_curves_path() -> Path:
    """The packaged curves of Nightingale et al. 2002 (eight female C5-C6 segments)."""
    return data_dir() / "curves" / "nightingale2002_c5c6_female.csv"


def mode_load(mode: str, moment_Nm) -> np.ndarray:
    """Load vectors (n, 6) [N, N mm] of ``mode`` at the moments ``moment_Nm`` (n,)."""
    index, sign = MODES[mode]
    m = np.atleast_1d(np.asarray(moment_Nm, dtype=float))
    F = np.zeros((m.size, 6))
    F[:, index] = sign * m * 1000.0
    return F


@dataclass(frozen=True, eq=False)
class Curve:
    """One specimen's curve in one mode.

    Attributes
    ----------
    specimen, mode : str
    moment_Nm, rotation_deg : ndarray (n,)
        Moment levels [N m] (increasing) and rotations [deg] in the named direction.
    ignore : ndarray of bool (n,)
        Points not to fit or score.
    rows : ndarray of int (n,)
        The file's data rows (1 = first).
    """

    specimen: str
    mode: str
    moment_Nm: np.ndarray
    rotation_deg: np.ndarray
    ignore: np.ndarray
    rows: np.ndarray

    @property
    def kept(self) -> np.ndarray:
        """Boolean mask of the points to fit and score."""
        return ~self.ignore


@dataclass(frozen=True, eq=False)
class CurveSet:
    """The curves of one file (:func:`load_curves`).

    Attributes
    ----------
    curves : tuple of Curve
        In file order of their first point.
    path : str
    sha256 : str
        Checksum of the file's bytes (calibrated folders record it).
    info : DataFrame
        One row per specimen: its other columns (first value in the file).
    """

    curves: tuple[Curve, ...]
    path: str
    sha256: str
    info: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def specimens(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for c in self.curves:
            seen.setdefault(c.specimen, None)
        return tuple(seen)

    @property
    def modes(self) -> tuple[str, ...]:
        return tuple(m for m in MODES if any(c.mode == m for c in self.curves))

    def curve(self, specimen: str, mode: str) -> Curve:
        for c in self.curves:
            if c.specimen == specimen and c.mode == mode:
                return c
        raise KeyError(f"{Path(self.path).name} has no {mode} curve of specimen {specimen!r}")

    def subset(self, *, specimens=None, modes=None) -> CurveSet:
        """The curves of the given specimens and modes (default: all)."""
        sp = None if specimens is None else set(specimens)
        md = None if modes is None else set(modes)
        for name, want, have in (("specimen", sp, self.specimens), ("mode", md, self.modes)):
            if want is not None:
                unknown = sorted(want - set(have))
                if unknown:
                    raise ValueError(f"unknown {name}(s) {unknown}; {Path(self.path).name} has "
                                     f"{list(have)}")
        curves = tuple(c for c in self.curves if (sp is None or c.specimen in sp)
                       and (md is None or c.mode in md))
        if not curves:
            raise ValueError("the subset has no curve")
        info = self.info
        if sp is not None and len(info):
            info = info[info["specimen"].isin(sp)].reset_index(drop=True)
        return CurveSet(curves=curves, path=self.path, sha256=self.sha256, info=info)

    def frame(self) -> pd.DataFrame:
        """Long table: specimen, mode, moment_Nm, rotation_deg, ignore, row."""
        parts = [pd.DataFrame({"specimen": c.specimen, "mode": c.mode,
                               "moment_Nm": c.moment_Nm, "rotation_deg": c.rotation_deg,
                               "ignore": c.ignore, "row": c.rows}) for c in self.curves]
        return pd.concat(parts, ignore_index=True)

    def levels(self, mode: str) -> np.ndarray:
        """Every moment level of the mode's curves (ignored points included), sorted [N m]."""
        lv = [c.moment_Nm for c in self.curves if c.mode == mode]
        return np.unique(np.round(np.concatenate(lv), LEVEL_DIGITS))

    def corridor(self, *, min_specimens: int | None = None) -> pd.DataFrame:
        """Mean and SD over the specimens per mode and moment level (module docstring).

        Returns
        -------
        DataFrame
            mode, moment_Nm, n (specimens), mean_deg, sd_deg (n - 1; NaN for n = 1),
            lower_deg and upper_deg (mean -+ SD).
        """
        rows = []
        for mode in self.modes:
            curves = [c for c in self.curves if c.mode == mode]
            need = len(curves) if min_specimens is None else int(min_specimens)
            if need < 1:
                raise ValueError(f"min_specimens must be >= 1, got {min_specimens!r}")
            values: dict[float, list[float]] = {}
            for c in curves:
                for m, r, ign in zip(c.moment_Nm, c.rotation_deg, c.ignore, strict=True):
                    if not ign:
                        values.setdefault(round(float(m), LEVEL_DIGITS), []).append(float(r))
            for m in sorted(values):
                v = np.array(values[m])
                if v.size < need:
                    continue
                sd = float(v.std(ddof=1)) if v.size > 1 else math.nan
                mean = float(v.mean())
                rows.append({"mode": mode, "moment_Nm": m, "n": int(v.size), "mean_deg": mean,
                             "sd_deg": sd, "lower_deg": mean - sd, "upper_deg": mean + sd})
        return pd.DataFrame(rows, columns=["mode", "moment_Nm", "n", "mean_deg", "sd_deg",
                                           "lower_deg", "upper_deg"])

    def at(self, moment_Nm: float, *, include_ignored: bool = False) -> pd.DataFrame:
        """Each specimen's rotation at one moment level [deg] per mode (NaN where the
        specimen has no point there, or only an ignored one unless ``include_ignored``)."""
        key = round(float(moment_Nm), LEVEL_DIGITS)
        rows = []
        for c in self.curves:
            lv = np.round(c.moment_Nm, LEVEL_DIGITS)
            hit = np.flatnonzero((lv == key) & (include_ignored | c.kept))
            rows.append({"specimen": c.specimen, "mode": c.mode,
                         "rotation_deg": float(c.rotation_deg[hit[0]]) if hit.size else math.nan})
        return pd.DataFrame(rows)


def load_curves(path=None) -> CurveSet:
    """Read and check a curves file (default: :func:`default_curves_path`); see the module
    docstring for the format and the checks.

    Raises
    ------
    ValueError
        One message with every error of the file, each naming the line, the row, the column
        and the value.

    Examples
    --------
    >>> from segment.studies.curves import load_curves
    >>> curves = load_curves()
    >>> len(curves.specimens), curves.modes
    (8, ('flexion', 'extension'))
    """
    if isinstance(path, CurveSet):
        return path
    path = default_curves_path() if path is None else Path(path)
    t = Table(path, ("specimen", "mode", "ignore"), collect=True, what="curves")
    header = list(t.records[0]) if t.records else []
    load_cols = [c for c in header if c in LOAD_COLUMNS]
    resp_cols = [c for c in header if c in RESPONSE_COLUMNS]
    for cols, kind, known in ((load_cols, "load", LOAD_COLUMNS),
                              (resp_cols, "response", RESPONSE_COLUMNS)):
        if len(cols) != 1:
            stem = "moment" if kind == "load" else "rotation"
            unknown = [c for c in header if c.startswith(stem) and c not in known]
            what = (f"found {unknown} (unknown unit)" if unknown and not cols else
                    f"found {cols}" if cols else "found none")
            raise ValueError(f"{t.name}: expected one {kind} column with its unit in the header, "
                             f"one of {list(known)}; {what}")
    load_col, resp_col = load_cols[0], resp_cols[0]
    to_nm, to_deg = LOAD_COLUMNS[load_col], RESPONSE_COLUMNS[resp_col]
    extra = [c for c in header if c not in ("specimen", "mode", "ignore", "source", load_col,
                                            resp_col)]
    points: dict[tuple[str, str], list[tuple[float, float, bool, int]]] = {}
    first_row: dict[tuple[str, str, float], int] = {}
    info: dict[str, dict[str, str]] = {}
    for i, row in t.rows():
        if i in t.broken_rows:
            continue
        specimen = row["specimen"]
        if not specimen:
            t.error(i, "specimen", "empty; every point must name its specimen")
        mode = t.key(i, row, "mode", tuple(MODES))
        flag = t.key(i, row, "ignore", ("yes", "no"))
        m = t.number(i, row, load_col, nonnegative=True)
        r = t.number(i, row, resp_col)
        if not t.ok(i) or mode is None or flag is None:
            continue
        key = (specimen, mode)
        level = round(m * to_nm, LEVEL_DIGITS)
        if (specimen, mode, level) in first_row:
            j = first_row[(specimen, mode, level)]
            t.error(i, load_col, f"duplicate point: specimen {specimen!r}, {mode}, "
                                 f"{row[load_col]} (already in row {j}, line {t.line_of[j]})")
            continue
        prev = points.get(key)
        if prev and not m * to_nm > prev[-1][0]:
            t.error(i, load_col, f"moments must increase along a curve: {row[load_col]} after "
                                 f"{prev[-1][0] / to_nm:g} (row {prev[-1][3]}) in the {mode} "
                                 f"curve of {specimen!r}")
            continue
        first_row[(specimen, mode, level)] = i
        points.setdefault(key, []).append((m * to_nm, r * to_deg, flag == "yes", i))
        info.setdefault(specimen, {c: row[c] for c in extra})
    for (specimen, mode), pts in points.items():
        if all(p[2] for p in pts):
            i = pts[0][3]
            t.error(i, "ignore", f"the {mode} curve of {specimen!r} has no point to fit (every "
                                 "point is ignored)")
    t.finish()
    curves = tuple(Curve(specimen=s, mode=mo, moment_Nm=_frozen([p[0] for p in pts]),
                         rotation_deg=_frozen([p[1] for p in pts]),
                         ignore=_frozen([p[2] for p in pts], bool),
                         rows=_frozen([p[3] for p in pts], int))
                   for (s, mo), pts in points.items())
    table = pd.DataFrame([{"specimen": s, **v} for s, v in info.items()])
    return CurveSet(curves=curves, path=str(path),
                    sha256=hashlib.sha256(path.read_bytes()).hexdigest(), info=table)


def _frozen(values, dtype=float) -> np.ndarray:
    a = np.array(values, dtype=dtype)
    a.setflags(write=False)
    return a


def model_curve(model, mode: str, moment_Nm, *, n_threads: int | None = None) -> pd.DataFrame:
    """The model's rotation [deg] in ``mode`` at the moments ``moment_Nm`` (increasing, N m),
    each from the unloaded equilibrium, the curve followed by continuation
    (:func:`segment.studies.paths.solve_paths`).

    Returns
    -------
    DataFrame
        mode, moment_Nm, rotation_deg (NaN where the equilibrium did not converge), converged.
    """
    m = np.asarray(moment_Nm, dtype=float)
    if m.ndim != 1 or m.size == 0 or not np.all(np.diff(m) > 0) or m[0] <= 0:
        raise ValueError("moments must be a sequence of increasing numbers > 0 [N m]")
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
    dof, sign = MODES[mode]
    r = solve_paths(model, mode_load(mode, m), n_threads=n_threads)
    ok = r.converged[0]
    rot = np.where(ok, sign * np.degrees(r.displacement[0, :, dof]), np.nan)
    return pd.DataFrame({"mode": mode, "moment_Nm": m, "rotation_deg": rot, "converged": ok})


def compare(model, curves=None, *, min_specimens: int | None = None) -> pd.DataFrame:
    """The model against the curves' corridor, per mode and moment level.

    Returns
    -------
    DataFrame
        mode, moment_Nm, n (specimens), mean_deg, sd_deg, model_deg, difference_deg (model -
        mean) and z (difference in specimen SDs), converged; the corridor of
        :meth:`CurveSet.corridor` (``min_specimens`` as there).

    Examples
    --------
    >>> import segment
    >>> from segment.studies.curves import compare
    >>> table = compare(segment.c5c6())
    >>> flexion = table[table["mode"] == "flexion"]
    >>> bool((flexion["z"] < -2).all())      # the published model: > 2 SDs too stiff in flexion
    True
    """
    curves = load_curves(curves)
    cor = curves.corridor(min_specimens=min_specimens)
    parts = []
    for mode in curves.modes:
        c = cor[cor["mode"] == mode]
        if c.empty:
            continue
        levels = curves.levels(mode)
        levels = levels[(levels > 0) & (levels <= c["moment_Nm"].max() + 1e-12)]
        mc = model_curve(model, mode, levels).set_index("moment_Nm")
        got = mc.loc[c["moment_Nm"].round(LEVEL_DIGITS)]
        part = c.copy()
        part["model_deg"] = got["rotation_deg"].to_numpy()
        part["converged"] = got["converged"].to_numpy()
        parts.append(part)
    out = pd.concat(parts, ignore_index=True)
    out["difference_deg"] = out["model_deg"] - out["mean_deg"]
    out["z"] = out["difference_deg"] / out["sd_deg"]
    return out[["mode", "moment_Nm", "n", "mean_deg", "sd_deg", "model_deg", "difference_deg",
                "z", "converged"]]
