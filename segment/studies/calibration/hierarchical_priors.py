"""The hyperpriors of the hierarchical population model
(:mod:`segment.studies.calibration.hierarchical`): the unbounded scale of each parameter
(``log``, ``logit``, ``identity``) and ``hyperpriors.csv``, read and checked."""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from segment.core.io import sha256_of
from segment.core.tables import parse_number, read_text
from segment.studies.calibration.hierarchical_settings import LOGIT_BOUND, TRANSFORMS

__all__ = ["DEFAULT_SPECIMEN_SD", "Hyperpriors", "default_hyperpriors", "load_hyperpriors"]


@dataclass(frozen=True, eq=False)
class Hyperpriors:
    """Per parameter of a space: scale ``transform``, prior of the population mean on that
    scale (``m0``, ``s0``), prior specimen SD ``tau0`` and fixed laboratory SD ``tau_lab``.
    Arrays (D,) in the space's order."""

    names: tuple[str, ...]
    transform: tuple[str, ...]
    m0: np.ndarray
    s0: np.ndarray
    tau0: np.ndarray
    tau_lab: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    sources: tuple[str, ...]
    path: str = ""
    sha256: str = ""

    @property
    def dim(self) -> int:
        return len(self.names)

    @property
    def z_lower(self) -> np.ndarray:
        return np.array([_fwd(t, lo, lo, hi) if t != "logit" else -LOGIT_BOUND
                         for t, lo, hi in zip(self.transform, self.lower, self.upper,
                                              strict=True)])

    @property
    def z_upper(self) -> np.ndarray:
        return np.array([_fwd(t, hi, lo, hi) if t != "logit" else LOGIT_BOUND
                         for t, lo, hi in zip(self.transform, self.lower, self.upper,
                                              strict=True)])

    def to_z(self, P) -> np.ndarray:
        P = np.atleast_2d(np.asarray(P, dtype=float))
        return np.array([[_fwd(t, float(v), lo, hi) for t, v, lo, hi in
                          zip(self.transform, row, self.lower, self.upper, strict=True)]
                         for row in P])

    def to_p(self, Z) -> np.ndarray:
        Z = np.atleast_2d(np.asarray(Z, dtype=float))
        return np.array([[_inv(t, float(v), lo, hi) for t, v, lo, hi in
                          zip(self.transform, row, self.lower, self.upper, strict=True)]
                         for row in Z])

    def dp_dz(self, Z) -> np.ndarray:
        Z = np.atleast_2d(np.asarray(Z, dtype=float))
        return np.array([[_slope(t, float(v), lo, hi) for t, v, lo, hi in
                          zip(self.transform, row, self.lower, self.upper, strict=True)]
                         for row in Z])


def _fwd(t, p, lo, hi):
    if t == "log":
        return math.log(p)
    if t == "identity":
        return p
    s = min(max((p - lo) / (hi - lo), 1e-12), 1 - 1e-12)
    return min(max(math.log(s / (1.0 - s)), -LOGIT_BOUND), LOGIT_BOUND)


def _inv(t, z, lo, hi):
    if t == "log":
        return math.exp(z)
    if t == "identity":
        return z
    return lo + (hi - lo) / (1.0 + math.exp(-z))


def _slope(t, z, lo, hi):
    if t == "log":
        return math.exp(z)
    if t == "identity":
        return 1.0
    s = 1.0 / (1.0 + math.exp(-z))
    return (hi - lo) * s * (1.0 - s)


DEFAULT_SPECIMEN_SD = {"log": 0.3, "logit": 1.0}
"""Specimen SD of a form without ``hyperpriors.csv`` (:func:`default_hyperpriors`), per scale;
a normal prior's parameter gets a quarter of its prior SD."""


def default_hyperpriors(space) -> Hyperpriors:
    """Hyperpriors of a form without a ``hyperpriors.csv`` (assumed, SOURCES.md §15): the
    scale from the prior (lognormal: log, normal: identity, uniform: logit), the specimen SD
    of :data:`DEFAULT_SPECIMEN_SD` (as the population form's), the laboratory SD twice it."""
    tr = tuple({"lognormal": "log", "normal": "identity", "uniform": "logit"}[d]
               for d in space.distributions)
    tau0 = np.array([DEFAULT_SPECIMEN_SD.get(t, 0.0) if t != "identity"
                     else 0.25 * float(space.sigma[j]) for j, t in enumerate(tr)])
    m0 = np.array([0.0 if t == "logit" else float(space.mu[j]) for j, t in enumerate(tr)])
    s0 = np.array([math.pi / math.sqrt(3.0) if t == "logit" else float(space.sigma[j])
                   for j, t in enumerate(tr)])
    return Hyperpriors(names=space.names, transform=tr, m0=m0, s0=s0, tau0=tau0,
                       tau_lab=2.0 * tau0, lower=np.array(space.lower, dtype=float),
                       upper=np.array(space.upper, dtype=float),
                       sources=("assumed default (SOURCES.md §15)",) * space.dim,
                       path="", sha256="")


def load_hyperpriors(space, path=None) -> Hyperpriors:
    """The hyperpriors of ``space``'s parameters from ``path`` (default: ``hyperpriors.csv``
    beside the space file). Columns: name, transform (log, identity, logit), specimen_sd,
    lab_sd (specimen_sd > 0, lab_sd >= 0; on the transform's
    scale), source. Every parameter of the space needs one
    row; a log transform needs a lognormal prior, identity a normal one, logit a uniform one
    (so the prior of the population mean is the space's prior on that scale). ``lab_sd`` 0
    means no laboratory effect: the parameter's population mean is shared by every
    laboratory.

    Raises
    ------
    ValueError
        Naming the file, line, column and value.
    """
    path = Path(space.path).parent / "hyperpriors.csv" if path is None else Path(path)
    text = read_text(path, "hyperpriors")
    rows = list(csv.reader(io.StringIO(text)))
    header = [h.strip() for h in rows[0]] if rows else []
    need = ("name", "transform", "specimen_sd", "lab_sd", "source")
    missing = [c for c in need if c not in header]
    if missing:
        raise ValueError(f"{path.name}, line 1: missing column(s) {missing}")
    errors: list[str] = []
    got: dict[str, tuple[str, float, float, str]] = {}
    seen: set[str] = set()
    want = {"log": "lognormal", "identity": "normal", "logit": "uniform"}
    for line, cells in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != len(header):
            errors.append(f"line {line}: expected {len(header)} fields, got {len(cells)}")
            continue
        row = dict(zip(header, (c.strip() for c in cells), strict=True))
        name = row["name"]
        seen.add(name)
        if name not in space.names:
            errors.append(f"line {line}, column 'name' (value {name!r}): not a parameter of "
                          f"{Path(space.path).name} ({', '.join(space.names)})")
            continue
        if name in got:
            errors.append(f"line {line}, column 'name' (value {name!r}): duplicate")
            continue
        t = row["transform"]
        j = space.names.index(name)
        if t not in TRANSFORMS:
            errors.append(f"line {line}, column 'transform' (value {t!r}): expected one of "
                          f"{', '.join(TRANSFORMS)}")
            continue
        if space.distributions[j] != want[t]:
            errors.append(f"line {line}, column 'transform' (value {t!r}): the {t} scale "
                          f"needs a {want[t]} prior in the space, {name} has "
                          f"{space.distributions[j]}")
            continue
        vals = []
        for col in ("specimen_sd", "lab_sd"):
            try:
                v = parse_number(row[col])
            except ValueError as exc:
                errors.append(f"line {line}, column {col!r} (value {row[col]!r}): {exc}")
                break
            if not (math.isfinite(v) and (v > 0 if col == "specimen_sd" else v >= 0)):
                errors.append(f"line {line}, column {col!r} (value {row[col]!r}): must be a "
                              f"finite number {'> 0' if col == 'specimen_sd' else '>= 0'}")
                break
            vals.append(v)
        if len(vals) != 2:
            continue
        if not row["source"]:
            errors.append(f"line {line}, column 'source': empty; every row says where its "
                          "numbers come from")
            continue
        got[name] = (t, vals[0], vals[1], row["source"])
    lacking = [n for n in space.names if n not in seen]
    if lacking:
        errors.append(f"no row for parameter(s) {lacking}")
    if errors:
        raise ValueError(f"{path.name}: {len(errors)} error(s): " + "; ".join(errors))
    tr = tuple(got[n][0] for n in space.names)
    m0 = np.array([0.0 if t == "logit" else float(space.mu[j]) for j, t in enumerate(tr)])
    s0 = np.array([math.pi / math.sqrt(3.0) if t == "logit" else float(space.sigma[j])
                   for j, t in enumerate(tr)])
    return Hyperpriors(names=space.names, transform=tr, m0=m0, s0=s0,
                       tau0=np.array([got[n][1] for n in space.names]),
                       tau_lab=np.array([got[n][2] for n in space.names]),
                       lower=np.array(space.lower, dtype=float),
                       upper=np.array(space.upper, dtype=float),
                       sources=tuple(got[n][3] for n in space.names), path=str(path),
                       sha256=sha256_of(path))
