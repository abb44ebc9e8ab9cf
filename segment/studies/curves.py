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
file, the line, the row, the column and the value (every error of a file in one message). The
ranges of the measured quantities are the rows of :mod:`segment.core.checks` (each with its
reason): a moment or rotation outside its plausible range (N mm typed as N m, a rotation of
1e6 deg), a curve whose rotation at its largest measured moment is not positive (a flipped
sign), whose rotation over moment there is implausible (radians typed as degrees) or whose
largest moment is implausibly small, a point at 0 N m not flagged ``ignore`` (the unloaded
pose is no measurement), and a curve that repeats another specimen's are errors too
(plausible ranges: warnings with ``strict=False``).

The **corridor** of a mode (:meth:`CurveSet.corridor`) is the mean and SD (n - 1) over the
specimens of the rotation at each moment level, from the points not ignored. Decision: a level
enters only when every specimen of the mode has a point there (``min_specimens=None``); where
some specimens start later (their first measured point sits at a higher moment) the mean would
otherwise jump with the specimens it averages. ``min_specimens=k`` admits levels with at least
k specimens. A corridor needs at least two specimens at a level and an SD > 0 there
(:data:`segment.core.checks.CORRIDOR_MIN_SPECIMENS`): a file with one specimen in a mode, two
identical specimens, or a mode without a level every specimen shares is an error naming the
file, the mode and the level, never a NaN or infinite z.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from segment._checks import check_count
from segment.core.checks import (
    CORRIDOR_MIN_SPECIMENS,
    CURVE_FLEXIBILITY,
    CURVE_MOMENT,
    CURVE_PEAK_MOMENT,
    CURVE_ROTATION,
    corridor_problem,
)
from segment.core.io import data_dir, sha256_of
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
            mode, moment_Nm, n (specimens, >= 2), mean_deg, sd_deg (n - 1, > 0), lower_deg
            and upper_deg (mean -+ SD).

        Raises
        ------
        ValueError
            Naming the file, the mode and the level: a mode with fewer than two specimens,
            a level whose specimens all turn the same (SD 0), or a mode without a level
            that ``min_specimens`` specimens share; ``min_specimens`` below 2.
        """
        name = Path(self.path).name
        if min_specimens is not None:
            min_specimens = check_count(min_specimens, "min_specimens",
                                        minimum=CORRIDOR_MIN_SPECIMENS)
        rows = []
        for mode in self.modes:
            curves = [c for c in self.curves if c.mode == mode]
            if len(curves) < CORRIDOR_MIN_SPECIMENS:
                raise ValueError(f"{name}: the {mode} curves have {len(curves)} specimen "
                                 f"({curves[0].specimen}); a corridor needs at least "
                                 f"{CORRIDOR_MIN_SPECIMENS} (its SD is undefined)")
            need = len(curves) if min_specimens is None else min_specimens
            values: dict[float, list[tuple[str, float]]] = {}
            for c in curves:
                for m, r, ign in zip(c.moment_Nm, c.rotation_deg, c.ignore, strict=True):
                    if not ign:
                        values.setdefault(round(float(m), LEVEL_DIGITS), []).append(
                            (c.specimen, float(r)))
            found = 0
            for m in sorted(values):
                if len(values[m]) < need:
                    continue
                who = [s for s, _ in values[m]]
                v = np.array([r for _, r in values[m]])
                problem = corridor_problem(mode, m, who, v)
                if problem is not None:
                    raise ValueError(f"{name}: {problem}")
                sd = float(v.std(ddof=1))
                mean = float(v.mean())
                found += 1
                rows.append({"mode": mode, "moment_Nm": m, "n": int(v.size), "mean_deg": mean,
                             "sd_deg": sd, "lower_deg": mean - sd, "upper_deg": mean + sd})
            if not found:
                who = ", ".join(c.specimen for c in curves)
                raise ValueError(
                    f"{name}: the {mode} curves ({who}) have no moment level where "
                    + (f"all {need} specimens have" if min_specimens is None else
                       f"{need} or more specimens have") + " a measured point"
                    + ("; min_specimens (segment curves --min-specimens) admits levels with "
                       "fewer" if need > CORRIDOR_MIN_SPECIMENS else ""))
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


def load_curves(path=None, *, strict: bool = True) -> CurveSet:
    """Read and check a curves file (default: :func:`default_curves_path`); see the module
    docstring for the format and the checks.

    ``strict`` (default True): a value outside its plausible range
    (:mod:`segment.core.checks`) is an error; False: it is used, with an
    :class:`~segment.core.tables.ImplausibleDataWarning` (CLI: ``--allow-implausible``).

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
    if path is not None and not isinstance(path, str | Path):
        raise TypeError(f"curves must be a path to a curves CSV or a CurveSet, got "
                        f"{type(path).__name__}")
    path = default_curves_path() if path is None else Path(path)
    t = Table(path, ("specimen", "mode", "ignore"), strict=strict, collect=True,
              what="curves")
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

    flagged: set[tuple[str, str, str]] = set()

    def measured(i, col, quantity, value, raw, curve) -> bool:
        """Check one value (converted to the row's unit) against its row: False after a hard
        error. A plausible range is reported once per curve and column."""
        found = quantity.problem(value)
        if found is None:
            return True
        what, hard = found
        cell = "" if LOAD_COLUMNS.get(col, RESPONSE_COLUMNS.get(col)) == 1.0 else \
            f" (the cell: {raw})"
        if hard:
            t.error(i, col, f"{quantity.name} {what}, got {quantity.shown(value)}{cell}")
            return False
        if (*curve, col) not in flagged:
            flagged.add((*curve, col))
            t.implausible(i, col, f"{quantity.name} of the {curve[1]} curve of {curve[0]!r}: "
                                  f"{what}{cell}")
        return True

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
        if not (measured(i, load_col, CURVE_MOMENT, m * to_nm, row[load_col],
                         (specimen, mode))
                and measured(i, resp_col, CURVE_ROTATION[mode], r * to_deg, row[resp_col],
                             (specimen, mode))):
            continue
        if m == 0.0 and flag == "no":
            t.error(i, "ignore", f"a point at 0 {'N m' if to_nm == 1.0 else 'N mm'} is the "
                                 "unloaded pose (rotation 0 by definition), not a measurement: "
                                 "flag it ignore = yes")
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
    seen: dict[tuple, tuple[str, int]] = {}
    for (specimen, mode), pts in points.items():
        kept = [p for p in pts if not p[2]]
        if not kept:
            t.error(pts[0][3], "ignore", f"the {mode} curve of {specimen!r} has no point to "
                                         "fit (every point is ignored)")
            continue
        m_top, r_top, _, i_top = kept[-1]       # the largest measured moment
        curve = f"the {mode} curve of {specimen!r}"
        found = CURVE_PEAK_MOMENT.problem(m_top)
        if found is not None and (specimen, mode, load_col) not in flagged:
            t.implausible(i_top, load_col, f"{curve} ends at {m_top:g} N m: "
                                           f"{CURVE_PEAK_MOMENT.name}: {found[0]}")
        if not r_top > 0:
            t.error(i_top, resp_col, f"{curve} turns {r_top:g} deg at its largest measured "
                                     f"moment ({m_top:g} N m): rotations are positive in the "
                                     f"named direction ({_DIRECTION[mode]}); a flipped sign?")
            continue
        found = CURVE_FLEXIBILITY.problem(r_top / m_top) if m_top > 0 else None
        if found is not None:
            hint = ("; rotations in radians? name the column rotation_rad"
                    if resp_col == "rotation_deg" and r_top / m_top < 1.0 else "")
            t.implausible(i_top, resp_col, f"{curve} turns {r_top:g} deg at {m_top:g} N m: "
                                           f"{CURVE_FLEXIBILITY.name}: {found[0]}{hint}")
        shape = (mode, tuple((p[0], p[1], p[2]) for p in pts))
        if shape in seen:
            other, j = seen[shape]
            t.error(pts[0][3], "specimen", f"{curve} repeats that of {other!r} (from row {j}, "
                                           f"line {t.line_of[j]}) point for point: one "
                                           "specimen counted twice?")
            continue
        seen[shape] = (specimen, pts[0][3])
    t.finish()
    curves = tuple(Curve(specimen=s, mode=mo, moment_Nm=_frozen([p[0] for p in pts]),
                         rotation_deg=_frozen([p[1] for p in pts]),
                         ignore=_frozen([p[2] for p in pts], bool),
                         rows=_frozen([p[3] for p in pts], int))
                   for (s, mo), pts in points.items())
    table = pd.DataFrame([{"specimen": s, **v} for s, v in info.items()])
    return CurveSet(curves=curves, path=str(path),
                    sha256=sha256_of(path), info=table)


_DIRECTION = {"flexion": "+phi_y", "extension": "-phi_y", "lateral-bending": "+phi_x",
              "axial-rotation": "+phi_z"}


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
    if not np.isfinite(m[-1] * 1000.0):
        raise ValueError(f"moments of the {mode} curve must be finite in N mm, got up to "
                         f"{m[-1]:g} N m")
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
    from segment.core.model import Segment

    if not isinstance(model, Segment):
        raise TypeError(f"model must be a segment.Segment, got {type(model).__name__}")
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
