"""The ranges of measured quantities and of run settings, written once (issue 31).

:mod:`segment.core.schema` holds a row for every model parameter (a table column or a study
field). This module holds the same kind of row, a :class:`Quantity` (unit, hard limit,
plausible range, each with its reason), for what is *measured* or *set* rather than a
parameter of the model: the points of a specimen curve, the corridor over specimens, the
pulses and payloads of the dynamics, the times of a simulation, the start of a solve and the
loads of a comparison. Every way a quantity arrives goes through its row here: a file (read
with :class:`segment.core.tables.Table`, errors naming the file, line, row, column and
value), an API argument (:meth:`Quantity.check`: a ``TypeError`` or ``ValueError`` naming
the argument and the value), a command-line option (the same call with the option as the
name, turned into a one-line usage error) and the web explorer.

A value outside a **hard** limit is an error whatever ``strict`` says (a negative moment, a
pulse of 105 s); a value outside the **plausible** range is an error unless ``strict=False``
(the command line's ``--allow-implausible``), then an
:class:`~segment.core.tables.ImplausibleDataWarning`. Where no publication gives a range, the
reason says "assumed" and why (``validation/reference/SOURCES.md`` §16 lists them).

Rows and rules of a specimen curve (:func:`segment.studies.curves.load_curves`):

* every point's moment: :data:`CURVE_MOMENT` (>= 0 N m; plausible up to 50 N m);
* every point's rotation, positive in the named direction: :data:`CURVE_ROTATION` per mode;
* every curve: its largest moment (:data:`CURVE_PEAK_MOMENT`), the sign of its rotation there
  (> 0: a rotation against the moment is a flipped sign), and its secant flexibility there,
  rotation over moment (:data:`CURVE_FLEXIBILITY`: radians typed as degrees fall below);
* a point at 0 N m is the unloaded pose, not a measurement: it must be flagged ``ignore``;
* a corridor level needs :data:`CORRIDOR_MIN_SPECIMENS` specimens and an SD > 0
  (:func:`corridor_problem`).
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass

import numpy as np

from segment.core.tables import ANY, NONNEGATIVE, HardRange, ImplausibleDataWarning, PlausibleRange

__all__ = ["CORRIDOR_MIN_SPECIMENS", "CURVE_FLEXIBILITY", "CURVE_MOMENT", "CURVE_PEAK_MOMENT",
           "CURVE_ROTATION", "LSV_DT", "PAYLOAD_COG", "PAYLOAD_INERTIA", "PAYLOAD_MASS",
           "PULSE_DURATION", "PULSE_PEAK", "QUANTITIES", "RAMP_STEPS", "RAMP_TIME", "START_ANGLE",
           "START_TRANSLATION", "T_END", "Quantity", "check_load", "check_start",
           "corridor_problem", "parse_flag"]


@dataclass(frozen=True)
class Quantity:
    """One measured quantity or setting: its name in messages, unit, hard limit (with
    ``why``), plausible range (with its reason) or None."""

    name: str
    unit: str
    hard: HardRange = ANY
    plausible: PlausibleRange | None = None
    why: str = ""

    def problem(self, value: float) -> tuple[str, bool] | None:
        """None when ``value`` (a finite float in :attr:`unit`) is fine, else ``(what is
        wrong, hard)``: hard True for the hard limit, False for the plausible range."""
        if not self.hard.holds(value):
            return self.hard.describe(), True
        p = self.plausible
        if p is not None and not p.lower <= value <= p.upper:
            return (f"{value:g} {p.unit} is outside the plausible range {p.lower:g} to "
                    f"{p.upper:g} {p.unit} ({p.reason})", False)
        return None

    def shown(self, value: float) -> str:
        """``value`` with its unit and, for a value beyond the hard limit, why the limit."""
        unit = "" if self.unit in ("-", "") else f" {self.unit}"
        return f"{value:g}{unit}" + (f" ({self.why})" if self.why else "")

    def check(self, value, name: str, *, strict: bool | None = True) -> float:
        """``value`` as a float, else an error naming ``name`` (an argument or option).

        Booleans, strings and other non-numbers are a ``TypeError``; a value that is not
        finite or outside the hard limit a ``ValueError``; outside the plausible range a
        ``ValueError`` (``strict=True``), a warning (False) or nothing (None: checked before).
        """
        if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name} must be a number [{self.unit}], got {value!r}")
        v = float(value)
        if not math.isfinite(v):
            raise ValueError(f"{name} must be a finite number [{self.unit}], got {value!r}")
        found = self.problem(v)
        if found is None:
            return v
        what, hard = found
        if hard:
            raise ValueError(f"{name} {what}, got {self.shown(v)}")
        if strict:
            raise ValueError(f"{name}: {what}; pass strict=False to accept it")
        if strict is not None:
            warnings.warn(f"{name}: {what}", ImplausibleDataWarning, stacklevel=3)
        return v


# ---------------------------------------------------------------- specimen curves
CURVE_MOMENT = Quantity("moment", "N m", NONNEGATIVE, PlausibleRange(
    0.0, 50.0, "N m", "flexibility tests of cervical motion segments load to 1.5-3.5 N m "
    "(Moroney et al. 1988 up to 2.16 N m, Nightingale et al. 2002 3.5 N m) and mid-lower "
    "cervical joints failed in flexion at 3.8-6.9 N m (Voo et al. 1998, SOURCES.md §5); 50 N m "
    "is seven times the largest of these (N mm typed as N m, 3500 for 3.5, falls outside)"),
    why="the magnitude of the applied moment, in the named direction")
CURVE_PEAK_MOMENT = Quantity("largest moment of a curve", "N m", NONNEGATIVE, PlausibleRange(
    0.1, 50.0, "N m", "assumed: a flexibility test loads a cervical segment to 1.5-3.5 N m "
    "(SOURCES.md §2, §10); a curve that ends below 0.1 N m has a moment in N m typed into a "
    "moment_Nmm column (3.5 for 3500)"))
_ROTATION_REASON = (
    "a rotation in the named direction: the largest rotation at which a training specimen of "
    "Nightingale et al. 2002 still carried load is 21.6 deg (B07's flexion failure test, "
    "SOURCES.md §15) and Voo et al.'s quasi-static failure rotations were 11.0-15.4 deg (§5); "
    "45 deg is twice the largest. Below -5 deg a point turns against its moment by more than "
    "the origin error of a static test explains (SD 1.84 deg, §15): a flipped sign")
CURVE_ROTATION = {mode: Quantity("rotation", "deg", ANY, PlausibleRange(
    -5.0, 45.0, "deg", _ROTATION_REASON if mode in ("flexion", "extension") else
    "assumed as for flexion and extension (no failure rotation of a lower cervical segment "
    "in this direction is in the readable sources; §8 applies 15.4 deg to every direction): "
    + _ROTATION_REASON))
    for mode in ("flexion", "extension", "lateral-bending", "axial-rotation")}
"""The rotation of a curve point per mode [deg], positive in the mode's direction."""
CURVE_FLEXIBILITY = Quantity("rotation over moment at the largest measured moment",
                             "deg/(N m)", ANY, PlausibleRange(
    0.1, 100.0, "deg/(N m)", "assumed from the published curves: Nightingale et al.'s "
    "specimens turn 1.7-5.3 deg per N m at 3.5 N m (SOURCES.md §10) and Voo et al.'s "
    "quasi-static stiffness 0.80-1.35 N m/deg is 0.74-1.25 deg per N m (§5); 0.1 deg per N m "
    "is seven times stiffer than their dynamic stiffness (1.50 N m/deg), and rotations in "
    "radians typed as degrees fall below it (0.03-0.09 for these specimens); above 100 a "
    "moment in N m was typed into a moment_Nmm column"))
CORRIDOR_MIN_SPECIMENS = 2
"""Specimens a corridor level needs: its mean and SD (n - 1); with one specimen the SD is
undefined, and z = (model - mean) / SD with it."""


def corridor_problem(mode: str, moment_Nm: float, specimens, rotations) -> str | None:
    """None when a corridor level (``rotations`` [deg] of ``specimens`` at ``moment_Nm`` in
    ``mode``) has a mean and an SD > 0, else why not."""
    v = np.asarray(rotations, dtype=float)
    where = f"the {mode} corridor at {moment_Nm:g} N m"
    if v.size < CORRIDOR_MIN_SPECIMENS:
        return (f"{where} has {v.size} specimen ({', '.join(specimens)}); a corridor needs at "
                f"least {CORRIDOR_MIN_SPECIMENS} (its SD is undefined)")
    if not np.ptp(v) > 0:
        return (f"{where} has SD 0: the {v.size} specimens ({', '.join(specimens)}) all turn "
                f"{v[0]:g} deg (copies of one specimen?); z = (model - mean) / SD is undefined")
    return None


# ---------------------------------------------------------------- dynamics
PULSE_DURATION = Quantity("pulse duration", "s", HardRange(0.0, 10.0, lower_open=True),
                          why="crash pulses last 0.05-0.2 s (Fritzkowski and Walczak's "
                              "whiplash pulse 0.105 s, SOURCES.md §1); a table in "
                              "milliseconds read as seconds lasts longer than 10 s")
PULSE_PEAK = Quantity("base acceleration", "g", HardRange(0.0, 100.0, lower_open=True),
                      why="whiplash sled pulses are 2.5-8.5 g and crash pulses a few tens of "
                          "g; the segment's ligaments break within milliseconds far below "
                          "100 g (mm/s^2 typed for m/s^2 falls outside)")
PAYLOAD_MASS = Quantity("payload mass", "kg", HardRange(0.0, 100.0, lower_open=True),
                        why="a head weighs about 4-5 kg; grams typed as kg fall outside")
PAYLOAD_INERTIA = Quantity("payload inertia entry", "kg cm^2", HardRange(-1e5, 1e5),
                           why="a head's principal moments are of the order of 200-300 kg "
                               "cm^2; kg mm^2 or g cm^2 typed as kg cm^2 fall outside")
PAYLOAD_COG = Quantity("distance of the payload's centre of gravity from the C5 origin", "mm",
                       HardRange(0.0, 1000.0), why="a metre; metres typed as mm are far "
                                                   "inside, micrometres outside")
T_END = Quantity("simulated time", "s", HardRange(0.0, 1000.0, lower_open=True),
                 why="a step response of the segment settles in well under a second of "
                     "model time; 1000 s keeps a run within minutes of wall time")
RAMP_TIME = Quantity("ramp duration", "s", HardRange(0.0, 1000.0),
                     why="no run is longer than 1000 s of model time (the simulated "
                         "time's limit), so a longer ramp never ends")
LSV_DT = Quantity("LSV step", "s", HardRange(1e-7, 1e-3),
                  why="below, a run of 0.3 s takes millions of steps; above 1 ms the step "
                      "exceeds the explicit stability limit 2 / omega_max = 0.68 ms of the "
                      "segment in facet contact (omega_max = 2940 rad/s, "
                      "benchmarks/results/bench_lsv.json)")

# ---------------------------------------------------------------- statics
START_TRANSLATION = Quantity("start translation", "mm", HardRange(-100.0, 100.0),
                             why="C5's origin within 100 mm of its reference pose (every "
                                 "insertion and facet centre lies within 47.3 mm of its "
                                 "vertebra's origin, schema._COORD)")
START_ANGLE = Quantity("start rotation", "deg", HardRange(-90.0, 90.0, True, True),
                       why="the Cardan angles x-y-z of the joint are singular at phi_y = "
                           "+-90 deg, and no rotation of a cervical segment comes near it")
RAMP_STEPS = 100_000
"""Most load steps of a ramp, whichever way it is asked for (``segment ramp --steps``,
``segment compare --steps``, :func:`segment.studies.compare.compare_states`): ``segment ramp
FLX --to-scale 100 --steps 100000`` takes 28 s on the 2-core machine (to its validity limit,
3568 rows) and a step costs 0.07-0.1 ms (bench_ramp: 200 steps in 14-19 ms); finer steps add
nothing, the ramp refines its increments and locates ruptures between steps itself. 1e9 steps
would allocate 45 GB."""

QUANTITIES = {
    "curve moment": CURVE_MOMENT, "curve largest moment": CURVE_PEAK_MOMENT,
    **{f"curve rotation ({m})": q for m, q in CURVE_ROTATION.items()},
    "curve flexibility": CURVE_FLEXIBILITY, "pulse duration": PULSE_DURATION,
    "pulse peak": PULSE_PEAK, "payload mass": PAYLOAD_MASS, "payload inertia": PAYLOAD_INERTIA,
    "payload centre of gravity": PAYLOAD_COG, "simulated time": T_END,
    "ramp duration": RAMP_TIME, "LSV step": LSV_DT, "start translation": START_TRANSLATION,
    "start rotation": START_ANGLE}
"""Every row of this module, by what it is (``validation/reference/SOURCES.md`` §16 names
each; ``tests/test_input_checks.py`` holds it to that)."""


def check_start(q0, name: str = "q0") -> np.ndarray:
    """A start pose ``q0`` (6,) [mm, rad] within :data:`START_TRANSLATION` and
    :data:`START_ANGLE`, else a ``ValueError`` naming ``name``, the coordinate and the
    value (the caller has checked that it holds 6 finite real numbers)."""
    q = np.asarray(q0, dtype=float)
    rows = np.atleast_2d(q)
    for k in range(6):
        v = rows[:, k]
        row, shown = ((START_TRANSLATION, v) if k < 3 else (START_ANGLE, np.degrees(v)))
        bad = ~row.hard.holds(shown)
        if bad.any():
            coord = ("x", "y", "z", "phi_x", "phi_y", "phi_z")[k]
            value = float(shown[np.argmax(bad)])
            raise ValueError(f"{name}: {coord} = {value:g} {row.unit}; a start "
                             f"{row.hard.describe()} {row.unit} ({row.why})")
    return q


def check_load(force_N, moment_Nmm, name: str, *, strict: bool = True) -> None:
    """A load (force [N], moment [N mm]) within the plausible loads of ``load_cases.csv``
    (:data:`segment.core.schema.COLUMNS`: 100 x the Moroney test loads), else a
    ``ValueError`` naming ``name``; with ``strict=False`` only a load that is not finite."""
    from segment.core.schema import COLUMNS

    with np.errstate(over="ignore", invalid="ignore"):
        force = np.asarray(force_N, dtype=float)
        moment = np.asarray(moment_Nmm, dtype=float) / 1000.0
    if not (np.all(np.isfinite(force)) and np.all(np.isfinite(moment))):
        raise ValueError(f"{name} would not be finite")
    f_max = COLUMNS[("load_cases.csv", "Fx_N")].plausible.upper
    m_max = COLUMNS[("load_cases.csv", "Mx_Nm")].plausible.upper
    worst_f = float(np.abs(force).max()) if force.size else 0.0
    worst_m = float(np.abs(moment).max()) if moment.size else 0.0
    if not strict or (worst_f <= f_max and worst_m <= m_max):
        return
    what = f"a force of {worst_f:g} N" if worst_f > f_max else f"a moment of {worst_m:g} N m"
    raise ValueError(f"{name} would be {what}, outside the plausible loads of load_cases.csv "
                     f"(within {f_max:g} N and {m_max:g} N m, 100 x the Moroney test loads)")


# ---------------------------------------------------------------- recorded flags
_FLAGS = {"true": True, "false": False, "yes": True, "no": False, "1": True, "0": False}


def parse_flag(text: str) -> bool:
    """``True``/``False`` (as pandas writes them), ``yes``/``no`` or ``1``/``0`` (any case)
    as a bool, else a ``ValueError`` saying what was expected (a string is not cast: ``"no"``
    is False)."""
    key = str(text).strip().lower()
    if key not in _FLAGS:
        raise ValueError(f"expected True or False (or yes/no, 1/0), got {text!r}")
    return _FLAGS[key]
