"""The clinical-states table (``data/states.csv``): what a clinical state is and how it is read.

A clinical state is a named list of operations on the model (:class:`ClinicalState`, each an
:class:`Operation`), one row per operation or parameter: ``state, operation, target, value,
unit, source`` (:func:`load_states`). A state's name is lower-case letters, digits and hyphens
(:data:`STATE_NAME`); ``intact`` is reserved for the model without any state. The operations
and the rows their parameters are checked by (unit, hard limit, plausible range and its
reason) are :data:`OPERATIONS`; what each operation does to a model, and the functions that
do it, are :mod:`segment.core.states`.

A data folder without ``states.csv`` (a calibrated one, say) uses the packaged states
(:func:`states_file`): they are procedures, not model parameters.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from segment.core.checks import Quantity
from segment.core.io import LIGAMENT_NAMES, data_dir
from segment.core.tables import HardRange, PlausibleRange, Table

__all__ = ["OPERATIONS", "STATE_NAME", "ClinicalState", "Operation", "load_states",
           "state_names", "states_file"]

STATE_NAME = re.compile(r"[a-z0-9][a-z0-9-]*")
"""A state's name: lower-case letters, digits and hyphens (``facetectomy-right-50``)."""
INTACT = "intact"
"""The name of no state at all (the model as built); allowed in lists of states to compare."""
FACET_SIDES = ("left", "right")


_FRACTION_REASON = "a fraction of the element"
_CUT = Quantity("fraction cut", "fraction", HardRange(0.0, 1.0, lower_open=True),
                why=_FRACTION_REASON)
_RESECT = Quantity("fraction resected", "fraction", HardRange(0.0, 1.0), why=_FRACTION_REASON)
_POSITIVE = HardRange(0.0, math.inf, lower_open=True)
_NONNEGATIVE = HardRange(0.0, math.inf)
_ANY = HardRange()


def _param(name, unit, hard, lower, upper, reason):
    return Quantity(name, unit, hard, PlausibleRange(lower, upper, unit, reason))


OPERATIONS: dict[str, dict[str, Quantity]] = {
    "cut": {},          # target: a ligament or strip name; value: _CUT
    "resect": {},       # target: left or right; value: _RESECT
    "fuse": {
        "rotation": _param("rotation", "N m/deg", _POSITIVE, 1.0, 1e4,
                           "a fusion device is at least a few times stiffer than the disc "
                           "(Table 2: 0.21-0.42 N m/deg)"),
        "translation": _param("translation", "N/mm", _POSITIVE, 100.0, 1e6,
                              "a fusion device is stiffer than the disc (Table 2: 50-492 N/mm)"),
    },
    "replace-disc": {
        "rotation": _param("rotation", "N m/deg", _NONNEGATIVE, 0.0, 2.0,
                           "a disc prosthesis is at most a few times stiffer than the disc "
                           "(Table 2: 0.21-0.42 N m/deg); 0 = a frictionless ball and socket"),
        "translation": _param("translation", "N/mm", _POSITIVE, 100.0, 1e6,
                              "the ball-and-socket restraint at the centre of rotation"),
        "cor_x": _param("cor_x", "mm", _ANY, -20.0, 20.0,
                        "within the C6 vertebral body and disc (C6 frame)"),
        "cor_y": _param("cor_y", "mm", _ANY, -10.0, 10.0,
                        "within the C6 vertebral body and disc (C6 frame)"),
        "cor_z": _param("cor_z", "mm", _ANY, -10.0, 20.0,
                        "within the C6 vertebral body and disc (C6 frame; the C5 origin is "
                        "at z = 17.4 mm)"),
    },
    "degenerate": {
        "compression": _param("compression", "factor", _POSITIVE, 0.1, 1.0,
                              "Moroney et al. 1988: degenerated discs are less stiff in "
                              "compression (factor < 1)"),
        "shear": _param("shear", "factor", _POSITIVE, 1.0, 10.0,
                        "Moroney et al. 1988: degenerated discs are stiffer in shear "
                        "(factor > 1)"),
    },
}
"""Operations of ``states.csv`` and the parameters (``target`` column) of each, as rows of
the check layer (:class:`segment.core.checks.Quantity`: unit, hard limit, plausible range
and its reason). ``cut`` targets a ligament or strip name and ``resect`` a facet side; their
value is a fraction. The operation functions (:func:`segment.core.states.fuse`,
:func:`segment.core.states.replace_disc`, ...) check their arguments against the same
rows: a value refused in ``states.csv`` is refused as an argument, with the argument's
name."""


@dataclass(frozen=True)
class Operation:
    """One operation of a state: ``kind`` (a key of :data:`OPERATIONS`), ``target`` (a
    ligament or strip name for ``cut``, a side for ``resect``, else ``""``) and ``value`` (the
    fraction for cut/resect) or ``params`` ({parameter: value} in the CSV units)."""

    kind: str
    target: str = ""
    value: float = 1.0
    params: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class ClinicalState:
    """A named state: its operations in file order and the ``source`` of each row."""

    name: str
    operations: tuple[Operation, ...]
    sources: tuple[str, ...]


# ---------------------------------------------------------------- the CSV table
def states_file(directory=None) -> Path:
    """``directory/states.csv`` when it exists, else the packaged ``data/states.csv`` (the
    states are procedures, not model parameters: a data folder without the file, such as a
    calibrated one, uses the packaged states)."""
    if directory is not None:
        candidate = Path(directory) / "states.csv"
        if candidate.exists():
            return candidate
    return data_dir() / "states.csv"


def _is_strip_name(name: str) -> bool:
    base, _, k = name.partition("#")
    return base in LIGAMENT_NAMES and (not k or (k.isdigit() and int(k) >= 1))


def load_states(path=None, *, strict: bool = True) -> dict[str, ClinicalState]:
    """The states of a ``states.csv`` (default: :func:`states_file`), by name.

    Columns: ``state, operation, target, value, unit, source``. Every error names the file,
    line, row, column and value, all errors of the file in one ``ValueError``; a value outside
    its plausible range is an error unless ``strict=False`` (then a warning), as for the
    parameter tables (:mod:`segment.core.io`).
    """
    path = states_file() if path is None else Path(path)
    t = Table(path, ("state", "operation", "target", "value", "unit"), strict=strict,
               collect=True, what="states")
    seen: dict[tuple[str, str, str], int] = {}
    rows: dict[str, list[tuple[int, str, str, float]]] = {}
    sources: dict[str, list[str]] = {}
    for i, row in t.rows():
        if i in t.broken_rows:
            continue
        name = row["state"]
        if not STATE_NAME.fullmatch(name):
            t.error(i, "state", f"{name!r} is not a state name (lower-case letters, digits "
                                f"and hyphens, e.g. 'facetectomy-right-50')")
            continue
        if name == INTACT:
            t.error(i, "state", "'intact' is reserved for the model without any state")
            continue
        kind = t.key(i, row, "operation", tuple(OPERATIONS))
        if kind is None:
            continue
        target = row["target"]
        value = t.number(i, row, "value")
        if kind in ("cut", "resect"):
            param = _CUT if kind == "cut" else _RESECT
            if kind == "cut" and not _is_strip_name(target):
                t.error(i, "target", f"unknown ligament or strip {target!r}; expected one of "
                                     f"{', '.join(LIGAMENT_NAMES)} or a strip such as "
                                     f"'CL-left#2'")
                continue
            if kind == "resect" and target not in FACET_SIDES:
                t.error(i, "target", f"unknown facet {target!r}; expected left or right")
                continue
        else:
            param = OPERATIONS[kind].get(target)
            if param is None:
                t.error(i, "target", f"unknown parameter {target!r} of operation {kind!r}; "
                                     f"expected one of {', '.join(OPERATIONS[kind])}")
                continue
        if row["unit"] != param.unit:
            t.error(i, "unit", f"expected {param.unit!r} for {kind} {target}, got "
                               f"{row['unit']!r}")
            continue
        if math.isnan(value):
            continue
        found = param.problem(value)
        if found is not None and found[1]:
            rng = param.hard.relation()
            t.error(i, "value", f"{value:g} {param.unit} is outside "
                                f"{rng.removeprefix('within ')} ({param.why})"
                    if rng.startswith("within") else
                    f"{param.name} {found[0]}, got {param.shown(value)}")
            continue
        if found is not None:
            t.implausible(i, "value", found[0])
        key = (name, kind, target)
        if key in seen:
            t.error(i, "target", f"duplicate {kind} {target!r} of state {name!r} (already in "
                                 f"row {seen[key]}, line {t.line_of[seen[key]]})")
            continue
        seen[key] = i
        rows.setdefault(name, []).append((i, kind, target, value))
        sources.setdefault(name, []).append(row["source"])
    states = {}
    for name, items in rows.items():
        ops: list[Operation] = []
        grouped: dict[str, dict[str, float]] = {}
        first_row: dict[str, int] = {}
        for i, kind, target, value in items:
            if kind in ("cut", "resect"):
                ops.append(Operation(kind, target, value))
            else:
                if kind not in grouped:
                    grouped[kind] = {}
                    first_row[kind] = i
                    ops.append(Operation(kind))     # placeholder, filled below
                grouped[kind][target] = value
        for kind, params in grouped.items():
            missing = [p for p in OPERATIONS[kind] if p not in params]
            if missing:
                t.error(first_row[kind], "target",
                        f"state {name!r}: operation {kind!r} needs rows for {missing}")
                continue
            k = next(j for j, op in enumerate(ops) if op.kind == kind and not op.params)
            ops[k] = Operation(kind, "", 1.0, tuple(sorted(params.items())))
        states[name] = ClinicalState(name, tuple(ops), tuple(sources[name]))
    t.finish()
    return states


def state_names(directory=None) -> tuple[str, ...]:
    """Names of the states of :func:`states_file` (``directory``'s, else the packaged)."""
    return tuple(load_states(states_file(directory)))
