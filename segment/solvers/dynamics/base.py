"""Base excitation: a prescribed acceleration history of C6 (translation, no rotation).

Fritzkowski and Walczak (2014, section 4) drive their head-neck model through its base: a
rear-end impact as a horizontal acceleration of the lowest vertebra, a triangular pulse of
``t2 = 105 ms`` with the peak ``a_max = 8.5 g`` at ``t1 = t2 / 2`` (their Fig. 5a). Here C6 is
the base: it translates with the acceleration ``a_b(t)`` (components along the C6 axes, which
do not turn), and C5 moves relative to it. In the frame of C6 every particle of the moving
body feels the transport inertia force ``-dm a_b(t)`` (their eq. (50): ``Q* = -gamma``); for a
rigid body that is ``-M a_b`` at its centre of gravity, a uniform field like gravity. Nothing
else changes in the equations of motion (:mod:`segment.solvers.dynamics.equations`).

A :class:`BaseExcitation` is piecewise linear in time between samples and zero outside them,
so its velocity and displacement (the base's motion in space, C6 starting at rest at the
origin) are integrated exactly. The triangular pulse is three samples.

Eq. (48) of the paper, as printed, is not the base translation of that pulse: its branch for
``t <= t1`` has the velocity ``+a_max t1 / 2`` at ``t1`` and its branch for ``t > t1`` the
velocity ``-a_max (t2 - t1) / 2`` there (a jump, i.e. an impulse the pulse does not contain),
and it returns the base to x = 0 at ``t2`` and holds it there, whereas the pulse leaves the
base moving at ``Delta v = a_max t2 / 2`` (4.38 m/s for 8.5 g over 105 ms). We integrate the
triangular acceleration itself (their Fig. 5a and their words). The relative motion of C5, the
element forces and the energy check depend on the base's acceleration only, so this decision
changes only the reported motion in space.
"""

from __future__ import annotations

import csv
import io
import numbers
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from segment.core.checks import PULSE_DURATION, PULSE_PEAK
from segment.core.tables import parse_number, read_text
from segment.jit import njit

__all__ = ["G_MM_S2", "MAX_BASE_G", "MAX_PULSE_S", "BaseExcitation"]

G_MM_S2 = 9810.0
"""1 g [mm/s^2] (g = 9.81 m/s^2, the value of Fritzkowski and Walczak)."""
MAX_BASE_G = PULSE_PEAK.hard.upper
"""Largest base acceleration accepted [g] (:data:`segment.core.checks.PULSE_PEAK`: whiplash
sled pulses are 2.5-8.5 g, crash pulses a few tens of g; the bound catches mm/s^2 typed for
m/s^2)."""
MAX_PULSE_S = PULSE_DURATION.hard.upper
"""Longest pulse accepted [s]: its last sample time, whichever way it is built
(:data:`segment.core.checks.PULSE_DURATION`: crash pulses last 0.05-0.2 s; catches a table
in milliseconds read as seconds)."""
MAX_SAMPLES = 1_000_000
"""Most samples of an acceleration table."""
DIRECTIONS = {"+x": (1.0, 0.0, 0.0), "-x": (-1.0, 0.0, 0.0), "+y": (0.0, 1.0, 0.0),
              "-y": (0.0, -1.0, 0.0), "+z": (0.0, 0.0, 1.0), "-z": (0.0, 0.0, -1.0)}
"""Named directions along the C6 axes (+x anterior: a rear-end impact pushes C6 forward)."""
_UNITS = {"g": G_MM_S2, "m_s2": 1000.0}
_IGNORED_COLUMNS = ("source", "note")


# ---------------------------------------------------------------- kernels
@njit
def _base_acceleration(t, ts, acc):
    """a_b(t) (3,) [mm/s^2]: linear between the samples ``ts`` (n,), ``acc`` (n, 3); zero
    outside them and for an empty table."""
    out = np.zeros(3)
    n = ts.shape[0]
    if n == 0 or t < ts[0] or t > ts[n - 1]:
        return out
    k = np.searchsorted(ts, t, side="right") - 1
    if k >= n - 1:
        k = n - 2
    if k < 0:
        k = 0
    w = (t - ts[k]) / (ts[k + 1] - ts[k])
    for i in range(3):
        out[i] = acc[k, i] + w * (acc[k + 1, i] - acc[k, i])
    return out


# ---------------------------------------------------------------- record
def _direction(direction) -> np.ndarray:
    if isinstance(direction, str):
        key = direction if direction[:1] in "+-" else "+" + direction
        if key not in DIRECTIONS:
            raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)} or 3 numbers, "
                             f"got {direction!r}")
        return np.array(DIRECTIONS[key])
    try:
        d = np.array(direction, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)} or 3 numbers, got "
                         f"{direction!r}") from None
    if d.shape != (3,) or not np.all(np.isfinite(d)) or not np.linalg.norm(d) > 0:
        raise ValueError(f"direction must be 3 finite numbers, not all zero, got {direction!r}")
    return d / np.linalg.norm(d)


def _positive(name: str, value, upper: float, unit: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number [{unit}], got {type(value).__name__}")
    if not (np.isfinite(value) and 0 < value <= upper):
        raise ValueError(f"{name} must be a finite number in (0, {upper:g}] [{unit}], got "
                         f"{value!r}")
    return float(value)


@dataclass(frozen=True, eq=False)
class BaseExcitation:
    """Prescribed acceleration of C6 in space: linear between samples, zero outside them.

    Build one with :meth:`triangular`, :meth:`from_samples` or :meth:`from_csv`.

    Attributes
    ----------
    t_s : ndarray, shape (n,)
        Sample times [s], strictly increasing, from 0.
    acceleration_mm_s2 : ndarray, shape (n, 3)
        Acceleration of C6 at the samples, along the C6 axes [mm/s^2].
    name : str
        Label shown in results.
    """

    t_s: np.ndarray
    acceleration_mm_s2: np.ndarray
    name: str = "base excitation"

    def __post_init__(self):
        t = np.array(self.t_s, dtype=float)
        a = np.array(self.acceleration_mm_s2, dtype=float)
        if t.ndim != 1 or t.shape[0] < 2:
            raise ValueError(f"{self.name}: t_s must hold at least 2 sample times [s], got "
                             f"shape {t.shape}")
        if t.shape[0] > MAX_SAMPLES:
            raise ValueError(f"{self.name}: at most {MAX_SAMPLES:,} samples, got {t.shape[0]:,}")
        if a.shape != (t.shape[0], 3):
            raise ValueError(f"{self.name}: acceleration_mm_s2 must have shape "
                             f"({t.shape[0]}, 3), got {a.shape}")
        if not (np.all(np.isfinite(t)) and np.all(np.isfinite(a))):
            raise ValueError(f"{self.name}: sample times and accelerations must be finite")
        if t[0] < 0:
            raise ValueError(f"{self.name}: the first sample time must be >= 0 s, got {t[0]:g}")
        steps = np.diff(t)
        if np.any(steps <= 0):
            k = int(np.argmax(steps <= 0))
            raise ValueError(f"{self.name}: sample times must increase strictly; sample {k + 2} "
                             f"(t = {t[k + 1]:g} s) follows t = {t[k]:g} s")
        if t[-1] > MAX_PULSE_S:
            raise ValueError(f"{self.name}: t_s: the excitation lasts {t[-1]:g} s (its last "
                             f"sample); at most {MAX_PULSE_S:g} s is accepted "
                             f"({PULSE_DURATION.why})")
        peak = float(np.max(np.abs(a))) / G_MM_S2
        if peak > MAX_BASE_G:
            raise ValueError(f"{self.name}: |acceleration| reaches {peak:.4g} g; at most "
                             f"{MAX_BASE_G:g} g is accepted (a unit mistake?)")
        t.setflags(write=False)
        a.setflags(write=False)
        object.__setattr__(self, "t_s", t)
        object.__setattr__(self, "acceleration_mm_s2", a)

    # -- constructors
    @classmethod
    def triangular(cls, *, peak_g: float = 8.5, duration_s: float = 0.105,
                   peak_at: float = 0.5, direction="+x") -> BaseExcitation:
        """The triangular pulse of Fritzkowski and Walczak (Fig. 5a): 0 at t = 0, ``peak_g``
        at ``peak_at * duration_s``, 0 at ``duration_s`` and after.

        Parameters
        ----------
        peak_g : float
            Peak acceleration [g], in (0, :data:`MAX_BASE_G`] (paper: 8.5 g).
        duration_s : float
            Pulse duration t2 [s], in (0, :data:`MAX_PULSE_S`] (paper: 0.105 s).
        peak_at : float
            Time of the peak as a fraction of the duration, in (0, 1) (paper: 0.5).
        direction : str or array_like
            ``"+x"`` (anterior, the default: a rear-end impact pushes C6 forward), ``"-x"``,
            ``"+y"``, ``"-y"``, ``"+z"``, ``"-z"`` or a vector along the C6 axes.
        """
        peak = _positive("peak_g", peak_g, MAX_BASE_G, "g")
        t2 = _positive("duration_s", duration_s, MAX_PULSE_S, "s")
        if isinstance(peak_at, bool) or not isinstance(peak_at, numbers.Real) or not (
                np.isfinite(peak_at) and 0 < peak_at < 1):
            raise ValueError(f"peak_at must be a number in (0, 1), got {peak_at!r}")
        d = _direction(direction)
        a = np.outer([0.0, peak * G_MM_S2, 0.0], d)
        label = direction if isinstance(direction, str) else "(" + ", ".join(
            f"{v:.3g}" for v in d) + ")"
        return cls(np.array([0.0, peak_at * t2, t2]), a,
                   f"triangular pulse {peak:g} g peak at {1e3 * peak_at * t2:.4g} ms, "
                   f"{1e3 * t2:.4g} ms, along {label}")

    @classmethod
    def from_samples(cls, t_s, *, acceleration_g=None, acceleration_m_s2=None,
                     name: str = "sampled base acceleration") -> BaseExcitation:
        """From sample times [s] and accelerations (n, 3) along the C6 axes, in g or m/s^2
        (give exactly one)."""
        if (acceleration_g is None) == (acceleration_m_s2 is None):
            raise ValueError("give exactly one of acceleration_g and acceleration_m_s2")
        values, scale = ((acceleration_g, G_MM_S2) if acceleration_g is not None
                         else (acceleration_m_s2, 1000.0))
        try:
            a = np.array(values, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"{name}: accelerations must be numbers, got {values!r}") from None
        return cls(np.array(t_s, dtype=float), a * scale, name)

    @classmethod
    def from_csv(cls, path) -> BaseExcitation:
        """Read a table of time and acceleration: one row per sample.

        Columns: ``t_s`` and at least one of ``ax``, ``ay``, ``az`` with its unit,
        ``_g`` or ``_m_s2`` (e.g. ``t_s,ax_g``); a missing component is zero. Optional
        ``source`` and ``note`` columns are ignored. Errors name the file, the line and
        data row, the column and the value.
        """
        path = Path(path)
        text = read_text(path, "base acceleration")
        rows = [(n, cells) for n, cells in _csv_lines(path, text)]
        if not rows:
            raise ValueError(f"{path.name}: empty file")
        header = [h.strip() for h in rows[0][1]]
        where = f"{path.name}, line {rows[0][0]} (header)"
        if "t_s" not in header:
            hint = _separator_hint(header)
            raise ValueError(f"{where}: no column 't_s' (time [s]); expected t_s and ax_g, "
                             f"ay_g, az_g or ax_m_s2, ay_m_s2, az_m_s2{hint}")
        columns = {}
        for c in header:
            if c == "t_s" or c in _IGNORED_COLUMNS:
                continue
            comp, _, unit = c.partition("_")
            if comp not in ("ax", "ay", "az"):
                raise ValueError(f"{where}: unknown column {c!r}; expected t_s and ax, ay, az "
                                 f"with a unit (_g or _m_s2), optionally source and note")
            if unit not in _UNITS:
                raise ValueError(f"{where}: column {c!r} has no unit; write {comp}_g or "
                                 f"{comp}_m_s2")
            if comp in [k for k, _ in columns.values()]:
                raise ValueError(f"{where}: two columns for {comp}")
            columns[c] = (comp, _UNITS[unit])
        if not columns:
            raise ValueError(f"{where}: no acceleration column; expected ax_g, ay_g, az_g or "
                             f"ax_m_s2, ay_m_s2, az_m_s2")
        if len(set(header)) != len(header):
            raise ValueError(f"{where}: a column appears twice")
        data = rows[1:]
        if len(data) < 2:
            raise ValueError(f"{path.name}: at least 2 data rows (samples) needed, got "
                             f"{len(data)}")
        if len(data) > MAX_SAMPLES:
            raise ValueError(f"{path.name}: at most {MAX_SAMPLES:,} samples, got {len(data):,}")
        t = np.empty(len(data))
        a = np.zeros((len(data), 3))
        for i, (line, cells) in enumerate(data, start=1):
            at = f"{path.name}, line {line} (row {i})"
            if len(cells) != len(header):
                raise ValueError(f"{at}: expected {len(header)} fields ({', '.join(header)}), "
                                 f"got {len(cells)}")
            row = dict(zip(header, cells, strict=True))
            t[i - 1] = _cell(row, "t_s", at)
            if t[i - 1] < 0:
                raise ValueError(f"{at}, column 't_s': time must be >= 0 s, got {row['t_s']!r}")
            if i > 1 and not t[i - 1] > t[i - 2]:
                raise ValueError(f"{at}, column 't_s': time must increase strictly, got "
                                 f"{row['t_s'].strip()} after {t[i - 2]:g} s (line "
                                 f"{data[i - 2][0]})")
            if t[i - 1] > MAX_PULSE_S:
                raise ValueError(f"{at}, column 't_s': {row['t_s'].strip()} s is beyond "
                                 f"{MAX_PULSE_S:g} s, the longest excitation accepted "
                                 f"({PULSE_DURATION.why})")
            for c, (comp, scale) in columns.items():
                value = _cell(row, c, at) * scale
                if abs(value) > MAX_BASE_G * G_MM_S2:
                    raise ValueError(f"{at}, column {c!r}: {row[c].strip()} is beyond "
                                     f"{MAX_BASE_G:g} g (a unit mistake?)")
                a[i - 1, "xyz".index(comp[1])] = value
        return cls(t, a, f"{path.name}")

    # -- the motion of C6 in space
    def acceleration(self, t) -> np.ndarray:
        """Acceleration of C6 [mm/s^2] at time(s) ``t`` [s]: shape (..., 3)."""
        t = np.asarray(t, dtype=float)
        return np.stack([np.interp(t, self.t_s, self.acceleration_mm_s2[:, i], left=0.0,
                                   right=0.0) for i in range(3)], axis=-1)

    def _knots(self):
        """Velocity and displacement [mm/s, mm] at the samples (C6 at rest at 0 before)."""
        t, a = self.t_s, self.acceleration_mm_s2
        dt = np.diff(t)[:, None]
        dv = 0.5 * (a[:-1] + a[1:]) * dt
        v = np.vstack([np.zeros(3), np.cumsum(dv, axis=0)])
        dx = v[:-1] * dt + (a[:-1] / 3.0 + a[1:] / 6.0) * dt**2
        x = np.vstack([np.zeros(3), np.cumsum(dx, axis=0)])
        return v, x

    def velocity(self, t) -> np.ndarray:
        """Velocity of C6 in space [mm/s] at time(s) ``t`` [s] (at rest before the first
        sample), shape (..., 3)."""
        return self._motion(t)[0]

    def displacement(self, t) -> np.ndarray:
        """Displacement of C6 in space from its position at t = 0 [mm], shape (..., 3)."""
        return self._motion(t)[1]

    def _motion(self, t):
        t = np.asarray(t, dtype=float)
        flat = np.atleast_1d(t).ravel()
        ts, a = self.t_s, self.acceleration_mm_s2
        vk, xk = self._knots()
        k = np.clip(np.searchsorted(ts, flat, side="right") - 1, 0, len(ts) - 1)
        tau = flat - ts[k]
        before = flat < ts[0]
        after = k == len(ts) - 1
        kk = np.minimum(k, len(ts) - 2)
        slope = (a[kk + 1] - a[kk]) / (ts[kk + 1] - ts[kk])[:, None]
        slope[after] = 0.0
        a0 = a[k].copy()
        a0[after] = 0.0
        tc = tau[:, None]
        v = vk[k] + a0 * tc + 0.5 * slope * tc**2
        x = xk[k] + vk[k] * tc + 0.5 * a0 * tc**2 + slope * tc**3 / 6.0
        v[before] = 0.0
        x[before] = 0.0
        shape = (*t.shape, 3)
        return v.reshape(shape), x.reshape(shape)

    @property
    def peak_g(self) -> float:
        """Largest |acceleration| over the samples [g]."""
        return float(np.max(np.linalg.norm(self.acceleration_mm_s2, axis=1))) / G_MM_S2

    @property
    def delta_v_m_s(self) -> np.ndarray:
        """Velocity change of C6 over the excitation [m/s], shape (3,)."""
        return self._knots()[0][-1] / 1000.0

    @property
    def end_s(self) -> float:
        """Time of the last sample [s]: the acceleration is zero afterwards."""
        return float(self.t_s[-1])

    def __str__(self) -> str:
        return self.name


def _csv_lines(path: Path, text: str):
    try:
        reader = csv.reader(io.StringIO(text, newline=""))
        for cells in reader:
            if any(c.strip() for c in cells):
                yield reader.line_num, cells
    except csv.Error as exc:
        raise ValueError(f"{path.name}: not a readable CSV table ({exc})") from None


def _separator_hint(header) -> str:
    for sep, label in ((";", "';' (semicolons)"), ("\t", "tabs")):
        if len(header) == 1 and sep in header[0]:
            return (f"; the fields are separated by {label}, not commas: save the table as "
                    "comma-separated CSV")
    return ""


def _cell(row: dict, col: str, at: str) -> float:
    raw = row[col]
    try:
        value = parse_number(raw)
    except ValueError as exc:
        raise ValueError(f"{at}, column {col!r}: {exc}") from None
    if not np.isfinite(value):
        raise ValueError(f"{at}, column {col!r}: expected a finite number, got {raw.strip()!r}")
    return value
