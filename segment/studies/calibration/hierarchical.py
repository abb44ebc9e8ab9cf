r"""One population of C5-C6 segments calibrated to every laboratory and mode: a hierarchical
model with specimen and laboratory effects (issue 32).

Model (all parameters of a model form's space, each on an unbounded scale ``z = T(p)``: ``log``
for a stiffness factor, ``logit`` of the position in its range for a bounded width or gap,
``identity`` for a reference strain; ``hyperpriors.csv`` of the form names each)::

    z_i    = a_lab(i) + eta_i,        eta_i ~ N(0, diag tau^2)            specimen i
    a_lab  = mu + delta_lab,          delta_lab ~ N(0, diag tau_lab^2)     laboratory
    mu     ~ N(m0, diag s0^2)                                              component priors

``m0`` and ``s0`` are the space's own priors (``dist_mu``/``dist_sigma`` of a normal or
lognormal row; the logistic of a uniform row, ``s0 = pi / sqrt(3)`` on the logit scale):
published component values where the space cites them, "assumed" where it says so.
``tau_lab`` is fixed (two laboratories cannot estimate it; ``hyperpriors.csv`` gives the
reasoning); ``tau`` has a scaled inverse chi-square prior with 2 degrees of freedom around
``specimen_sd`` and is estimated.

Data and error models:

* **Nightingale et al. 2002** (:mod:`segment.studies.specimens`), laboratory
  ``nightingale2002``: the six static steps per direction of each specimen, and nothing
  else (no interpolated point). Measured: the moment (load cell) and the rotation (video) of
  each step, relative to one recorded (0, 0) origin per specimen. Error model of the 12 steps
  of a specimen (rotations as magnitudes, flexion then extension)::

      y = f(p_i, M) + o v + e,   o ~ N(0, sigma_o^2),  e ~ N(0, sigma_e^2 I),
      v = (+1, ..., +1, -1, ..., -1)

  ``o`` is the error of the origin, shared by every step of the record (it adds to the
  flexion magnitudes and subtracts from the extension ones), ``e`` the step-to-step error
  (video reading and what the model cannot follow). Both SDs are estimated by maximum
  likelihood from the steps (``sigma_e`` with a floor :data:`MIN_STEP_SD_DEG`); a fixed
  ``sigma_o`` can be given instead (:data:`ORIGIN_SD_DEG` is the start of the estimate). The
  origin error also carries the part of a specimen's flexion-extension asymmetry that its
  neutral zones do not: steps that start at 1.3 N m cannot tell the two apart. The moments
  are taken as exact (the load cell is far more precise than the video rotation).
* **Moroney et al. 1988**, laboratory ``moroney1988``: the mean rotation at 1.8 N m of the
  intact and of the posterior-removed segments in flexion, extension, lateral bending and
  axial rotation (``data/calibration_targets.csv``: ``intact`` and ``disc segment`` rows,
  SOURCES.md §2). Taken as the response of the laboratory's mean parameters ``a_moroney``
  (an approximation: the mean response of a population is not the response of its mean),
  with an SD of :data:`MORONEY_CV` of the value (assumed, see there).
* **The failure tests as bounds**: every training specimen was failure-tested after its
  static steps, so it was intact through all of them. Each specimen's model must keep every
  ligament below rupture (strain ratio g < 1, Table 3) at its last static step in each
  direction: a one-sided residual ``(g - 1) / INTACT_SD`` where it does not
  (:data:`INTACT_SD`, exact derivative). The failure tests' own peaks are not fitted: they
  were dynamic with 50-100 N of axial force (SOURCES.md §15).

Estimation: the MAP of ``(z_i, a_nightingale, a_moroney)`` for given ``tau``, ``sigma_e``
(block coordinate descent: each specimen's ``z_i`` by the bounded Levenberg-Marquardt of
:mod:`~segment.studies.calibration.lm` with its population prior; ``a_nightingale`` in closed
form; ``a_moroney`` by Levenberg-Marquardt on Moroney's data with its prior given
``a_nightingale``), alternated with the updates of ``tau`` (expectation-maximisation with
the Laplace variance of each ``z_i``) and ``sigma_e`` (maximum likelihood), until the
parameters move less than :data:`SWEEP_TOL`. Laplace (Gaussian) posteriors of the laboratory
means; ``mu`` integrated analytically. Every sum that reaches a written number is a
:func:`math.fsum` and every linear solve the plain-Python Cholesky of
:mod:`~segment.studies.calibration.lm`: the same bits on any CPU.

The predictive distribution of a new specimen (:meth:`PopulationFit.draw`): from a training
laboratory ``z = a_lab + eta`` (with the uncertainty of ``a_lab``), from a new laboratory
``z = mu + delta_new + eta`` with ``delta_new ~ N(0, tau_lab^2)``: the laboratory term is what
a prediction for a laboratory we have no data from must carry. Each member draws its own
``tau`` from the estimate's scaled inverse chi-square (a few specimens estimate it), which
gives the predictive the tails of a Student t. A parameter with ``lab_sd`` 0 in
``hyperpriors.csv`` has no laboratory effect (one mean for every laboratory).
"""

from __future__ import annotations

import csv
import hashlib
import io
import logging
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from segment.core.io import data_dir
from segment.core.laws import ligament_rows
from segment.core.tables import parse_number, read_text
from segment.elements.tangent import F_SCALE, G_R0, G_S0, L_A, L_B, L_EPS, L_F, L_L0
from segment.studies.calibration.lm import least_squares_bounded, spd_inverse
from segment.studies.curves import MODES, mode_load
from segment.studies.paths import solve_packed, touch_of

__all__ = ["CONFIGS", "LABS", "MORONEY_CV", "NEW_LAB", "ORIGIN_SD_DEG", "Experiment",
           "Forward", "Hyperpriors", "PopulationFit", "default_form_path", "fit_population",
           "load_hyperpriors", "moroney_targets"]

log = logging.getLogger("segment.studies.calibration")

NIGHTINGALE = "nightingale2002"
MORONEY = "moroney1988"
LABS = (NIGHTINGALE, MORONEY)
"""The training laboratories (``--lab`` names)."""
NEW_LAB = "new"
"""The label of a prediction for a laboratory outside the training set."""
CONFIGS = ("intact", "posterior-removed")
POSTERIOR = ("FL", "ISL", "CL-left", "CL-right")
"""Ligaments cut in the posterior-removed configuration (with both facets): the state
``posterior-removed`` of ``data/states.csv``, done on the packed arrays."""
TRANSFORMS = ("log", "identity", "logit")
LOGIT_BOUND = 10.0
"""Bounds of a logit-scale parameter (a value within 5e-5 of its range's ends)."""
ORIGIN_SD_DEG = 1.0
"""Start of the estimate of the origin SD [deg] (or its value when a fit is told to hold it):
the unloaded pose of a segment with a neutral zone is not unique (Panjabi 1992), and the
records hold one (0, 0) pair and no unloading branch; 1 deg is of the order of the rotation
between two load steps (0.2-1.5 deg). The committed fit estimates 1.8 deg."""
MIN_STEP_SD_DEG = 0.05
"""Floor of the estimated step SD [deg]: the video rotations are given to 1e-3 deg, and a fit
better than 0.05 deg would be fitting the rounding of the interpolation, not the data."""
MORONEY_CV = {"posterior-removed": 0.10, "intact": 0.20}
"""SD of a Moroney mean rotation as a fraction of it, per configuration (assumed). Both: the
standard error of a mean of 35 specimens with an assumed 30 % between-specimen spread (5 %;
Moroney's SDs are not available to us), the transcribed stiffness rounded to 0.01 N m/deg
(up to 5 %) and the mean-response-at-mean-parameters approximation: 10 % in all. Intact
segments also carry the model's structural error in the posterior elements (Table 4
insertions, an assumed facet geometry; measured: no set of the population form's ranges turns
less than about 2 deg in axial rotation at 1.8 N m, where Moroney's mean is 1.55 deg), so
20 %; the posterior-removed segment is the disc of eq. (1), whose Table 2 is Moroney's own
measurement."""
LEAD_IN_NM = 0.25
"""Spacing of the load levels that lead a path from the unloaded pose to its first target
[N m] (continuation; the equilibria do not depend on it)."""
SPECIMEN_SD_DOF = 2.0
"""Degrees of freedom of the scaled inverse chi-square prior of each specimen SD tau_j."""
SWEEP_TOL = 2e-3
"""Convergence of the sweeps: largest change of a z, a laboratory mean or a log tau (the
posterior SDs on these scales are 0.01-1: a change of 2e-3 moves no reported band)."""
MAX_SWEEPS = 40
LM_OPTIONS = {"gtol": 1e-8, "ftol": 1e-8, "xtol": 1e-10, "max_nfev": 100}
"""Tolerances of each block's Levenberg-Marquardt: a relative fall of the cost below 1e-8
moves no z by more than about 1e-4 of its posterior SD, far inside :data:`SWEEP_TOL` (the
block is solved again in every sweep, from where it stopped)."""
FAILED_RESIDUAL = 1e3
INTACT_SD = 0.02
"""Softness of the intact bound (the failure tests as bounds): a training specimen was intact
at its last static step (each was failure-tested afterwards), so its model's strain ratio g of
every ligament there must stay below 1; a residual ``(g - 1) / INTACT_SD`` where it does not
(a one-sided penalty: 2 % of the rupture strain costs as much as one SD of a step)."""
FD_STEP = 1e-7
"""Step [mm, rad] of the central differences of the strain ratios by the pose."""
TIE_DIGITS = 12


def default_form_path() -> Path:
    """The population form, ``data/forms/population/`` (space, disc law, hyperpriors)."""
    return data_dir() / "forms" / "population"


# ---------------------------------------------------------------------------- hyperpriors
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
                       sha256=hashlib.sha256(path.read_bytes()).hexdigest())


# ---------------------------------------------------------------------------- forward model
@dataclass(frozen=True)
class Experiment:
    """One loaded path: configuration (:data:`CONFIGS`), mode (:data:`MODES`) and the moments
    [N m] (increasing, > 0) at which the rotation [deg] in the named direction is wanted."""

    config: str
    mode: str
    moment_Nm: tuple[float, ...]


class Forward:
    """Rotations of parameter sets in a list of experiments, with their exact derivatives
    (:func:`segment.studies.paths.solve_packed`: continuation from the unloaded pose; the
    posterior-removed configuration is the packed arrays with FL, ISL and both CL carrying
    no force and both facets no contact, the same equilibria as ``Segment.with_state(
    "posterior-removed")`` to the last bit)."""

    def __init__(self, model, space, *, n_threads: int | None = 1):
        self.model, self.space, self.n_threads = model, space, n_threads
        rows = ligament_rows(model)
        self.cut = np.concatenate([rows[n] for n in POSTERIOR])
        self.n_solves = 0

    def _packed(self, P, config, sensitivities):
        glob, lig, fac = self.space.pack(self.model, P)
        der = None
        if sensitivities:
            dglob, dlig, dfac = self.space.pack_derivative(self.model, P,
                                                           n_threads=self.n_threads)
            der = [dglob, dlig, dfac]
        if config == "posterior-removed":
            lig = lig.copy()
            fac = fac.copy()
            lig[:, self.cut, L_F:L_F + 3] = 0.0
            fac[:, :, F_SCALE] = 0.0
            if der is not None:
                der[1] = der[1].copy()
                der[2] = der[2].copy()
                der[1][:, :, self.cut, L_F:L_F + 3] = 0.0
                der[2][:, :, :, F_SCALE] = 0.0
        derivative = ((tuple(der), touch_of(self.space, self.model))
                      if der is not None else None)
        return (glob, lig, fac), derivative

    def __call__(self, P, experiments, *, sensitivities: bool = False, states: bool = False):
        """``(y (M, n), ok (M,), jac (M, n, D) or None)``: rotations [deg] at every moment of
        every experiment in order; ``ok`` False where an equilibrium failed. With ``states``
        (and ``sensitivities``) :attr:`last` holds, per experiment, the equilibrium at its
        largest moment ``q (M, 6)`` [mm, rad], ``dq_dp (M, 6, D)``, the packed ``glob (M, G)``
        and ligament rows ``lig (M, n, 13)``, and ``dl0_dp (M, D, n)``."""
        P = np.atleast_2d(np.asarray(P, dtype=float))
        m = P.shape[0]
        sizes = [len(e.moment_Nm) for e in experiments]
        n, d = sum(sizes), self.space.dim
        y = np.empty((m, n))
        ok = np.ones(m, dtype=bool)
        jac = np.empty((m, n, d)) if sensitivities else None
        packs = {}
        self.last = []
        start = 0
        for e, k in zip(experiments, sizes, strict=True):
            if e.config not in CONFIGS:
                raise ValueError(f"unknown configuration {e.config!r}; expected one of "
                                 f"{', '.join(CONFIGS)}")
            if e.config not in packs:
                packs[e.config] = self._packed(P, e.config, sensitivities)
            packed, derivative = packs[e.config]
            want_m = np.asarray(e.moment_Nm, dtype=float)
            lead = np.arange(1, int(want_m[0] / LEAD_IN_NM) + 1) * LEAD_IN_NM
            lead = lead[lead < want_m[0] - 1e-9]
            levels = np.concatenate([lead, want_m])
            want = np.zeros(levels.size, dtype=bool)
            want[lead.size:] = True
            r = solve_packed(packed, mode_load(e.mode, levels), want=want,
                             derivative=derivative, n_threads=self.n_threads,
                             pts=self.model._packed[3])
            self.n_solves += m * (levels.size + 1)
            dof, sign = MODES[e.mode]
            y[:, start:start + k] = sign * np.degrees(r.displacement[:, lead.size:, dof])
            ok &= r.converged[:, want].all(axis=1)
            if sensitivities:
                jac[:, start:start + k] = sign * np.degrees(
                    r.displacement_dp[:, lead.size:, dof, :])
                if states:
                    self.last.append((r.q[:, -1].copy(), r.dq_dp[:, -1].copy(), packed[0],
                                      packed[1], derivative[0][1][:, :, :, L_L0]))
            start += k
        return y, ok, jac


def _rotation(q, R0):
    """``R0 Rx(q3) Ry(q4) Rz(q5)`` (:mod:`segment.elements.kinematics`), written out element
    by element (no BLAS: the same bits on any CPU)."""
    def mul(A, B):
        return [[A[i][0] * B[0][j] + A[i][1] * B[1][j] + A[i][2] * B[2][j] for j in range(3)]
                for i in range(3)]

    cx, sx = math.cos(q[3]), math.sin(q[3])
    cy, sy = math.cos(q[4]), math.sin(q[4])
    cz, sz = math.cos(q[5]), math.sin(q[5])
    rx = [[1.0, 0.0, 0.0], [0.0, cx, -sx], [0.0, sx, cx]]
    ry = [[cy, 0.0, sy], [0.0, 1.0, 0.0], [-sy, 0.0, cy]]
    rz = [[cz, -sz, 0.0], [sz, cz, 0.0], [0.0, 0.0, 1.0]]
    return mul(mul(mul(R0, rx), ry), rz)


def strain_ratios(q, glob, lig) -> np.ndarray:
    """Strain over the strain at F_max, ``g = (l / l0 - 1) / eps_C`` (Table 3), of every
    packed ligament row (n,) at the pose ``q`` [mm, rad]; g >= 1 is past rupture. Elementwise
    arithmetic only (the same bits on any CPU)."""
    R0 = [[float(glob[G_R0 + 3 * i + j]) for j in range(3)] for i in range(3)]
    R = _rotation([float(v) for v in q], R0)
    p = [float(glob[G_S0 + k]) + R0[k][0] * q[0] + R0[k][1] * q[1] + R0[k][2] * q[2]
         for k in range(3)]
    a0, a1, a2 = lig[:, L_A], lig[:, L_A + 1], lig[:, L_A + 2]
    d = [lig[:, L_B + k] - (p[k] + R[k][0] * a0 + R[k][1] * a1 + R[k][2] * a2)
         for k in range(3)]
    length = np.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
    return (length / lig[:, L_L0] - 1.0) / lig[:, L_EPS + 2]


# ---------------------------------------------------------------------------- data
def moroney_targets(path=None) -> pd.DataFrame:
    """Moroney et al.'s mean rotations at 1.8 N m (``calibration_targets.csv``, rows intact and
    disc segment in FLX, EXT, LB, AR): config, mode, value_deg (magnitude in the named
    direction), sd_deg (:data:`MORONEY_CV` of it), source."""
    path = data_dir() / "calibration_targets.csv" if path is None else Path(path)
    t = pd.read_csv(path)
    modes = {"FLX": "flexion", "EXT": "extension", "LB": "lateral-bending",
             "AR": "axial-rotation"}
    rows = []
    for _, r in t.iterrows():
        if r["case"] not in modes or r["configuration"] not in ("intact", "disc segment"):
            continue
        mode = modes[r["case"]]
        value = MODES[mode][1] * float(r["value"])
        rows.append({"config": "intact" if r["configuration"] == "intact"
                     else "posterior-removed", "mode": mode, "moment_Nm": 1.8,
                     "value_deg": value,
                     "sd_deg": MORONEY_CV["intact" if r["configuration"] == "intact"
                                          else "posterior-removed"] * value,
                     "source": r["source"]})
    out = pd.DataFrame(rows)
    order = {(c, m): i for i, (c, m) in enumerate((c, m) for c in CONFIGS for m in MODES)}
    out["_o"] = [order[(c, m)] for c, m in zip(out["config"], out["mode"], strict=True)]
    return out.sort_values("_o").drop(columns="_o").reset_index(drop=True)


@dataclass(frozen=True, eq=False)
class _Specimen:
    name: str
    experiments: tuple[Experiment, ...]
    observed: np.ndarray          # (12,) magnitudes, flexion then extension
    signs: np.ndarray             # (12,) +1 flexion, -1 extension


def _specimens(data) -> list[_Specimen]:
    out = []
    for s in data.specimens:
        exps, obs, signs = [], [], []
        for direction, sign in (("flexion", 1.0), ("extension", -1.0)):
            m, r = data.curve(s, direction)
            exps.append(Experiment("intact", direction, tuple(float(v) for v in m)))
            obs.extend(float(v) for v in r)
            signs.extend([sign] * len(r))
        out.append(_Specimen(s, tuple(exps), np.array(obs), np.array(signs)))
    return out


def _whiten(r, signs, sigma_e, sigma_o):
    """``Sigma^-1/2 r`` for ``Sigma = sigma_e^2 I + sigma_o^2 v v^T`` (v = signs): the
    component of r along v scaled by ``1 / sqrt(sigma_e^2 + n sigma_o^2)``, the rest by
    ``1 / sigma_e``."""
    n = len(r)
    proj = math.fsum(float(a) * float(b) for a, b in zip(r, signs, strict=True)) / n
    c = 1.0 - sigma_e / math.sqrt(sigma_e ** 2 + n * sigma_o ** 2)
    return (np.asarray(r) - c * proj * np.asarray(signs)) / sigma_e


def _whiten_rows(J, signs, sigma_e, sigma_o):
    """:func:`_whiten` applied to every column of J (n, D)."""
    return np.column_stack([_whiten(J[:, k], signs, sigma_e, sigma_o)
                            for k in range(J.shape[1])])


def _step_loglik(resid, signs_list, sigma_e, sigma_o) -> float:
    """Log-likelihood of the residual vectors under the step error model (one per
    specimen)."""
    total = []
    for r, v in zip(resid, signs_list, strict=True):
        n = len(r)
        proj = math.fsum(float(a) * float(b) for a, b in zip(r, v, strict=True)) / n
        along = n * proj * proj                       # |P_v r|^2
        perp = math.fsum(float(a) ** 2 for a in r) - along
        var_v = sigma_e ** 2 + n * sigma_o ** 2
        total.append(-0.5 * (perp / sigma_e ** 2 + along / var_v)
                     - 0.5 * ((n - 1) * math.log(sigma_e ** 2) + math.log(var_v)))
    return math.fsum(total)


def _golden(f, lo, hi, iterations=60):
    """Minimiser of ``f`` on [lo, hi] by golden-section search."""
    g = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = lo, hi
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(iterations):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = f(d)
    return 0.5 * (a + b)


def _ml_error_sds_fixed(resid, signs_list, sigma_o) -> float:
    """Maximum-likelihood ``sigma_e`` [deg] for a given ``sigma_o``."""
    x = _golden(lambda v: -_step_loglik(resid, signs_list, math.exp(v), sigma_o),
                math.log(0.01), math.log(10))
    return max(MIN_STEP_SD_DEG, math.exp(x))


def _ml_error_sds(resid, signs_list) -> tuple[float, float]:
    """Maximum-likelihood ``(sigma_e, sigma_o)`` [deg] of the step error model, each
    profiled by golden section on its logarithm (0.01-10 deg), alternated to convergence;
    ``sigma_e`` floored at :data:`MIN_STEP_SD_DEG`."""
    le, lo_ = math.log(0.3), math.log(1.0)
    for _ in range(10):
        le_new = _golden(lambda x, o=lo_: -_step_loglik(resid, signs_list, math.exp(x),
                                                        math.exp(o)),
                         math.log(0.01), math.log(10))
        lo_new = _golden(lambda x, e=le_new: -_step_loglik(resid, signs_list, math.exp(e),
                                                           math.exp(x)),
                         math.log(0.01), math.log(10))
        done = abs(le_new - le) < 1e-7 and abs(lo_new - lo_) < 1e-7
        le, lo_ = le_new, lo_new
        if done:
            break
    return max(MIN_STEP_SD_DEG, math.exp(le)), math.exp(lo_)


# ---------------------------------------------------------------------------- result
@dataclass(frozen=True, eq=False)
class PopulationFit:
    """The calibrated hierarchy (module docstring). Arrays (D,) on the transform scales
    unless said otherwise.

    Attributes
    ----------
    names, transform : tuple of str
    a : dict
        Laboratory mean ``a_lab`` per training laboratory (those with data).
    var_a : dict
        Its posterior variance (Laplace).
    mu, var_mu : ndarray
        Posterior mean and variance of the population mean over laboratories.
    tau, tau_lab : ndarray
        Specimen SD (estimated) and laboratory SD (fixed).
    sigma_e, sigma_o : float
        Step SD (estimated) and origin SD (assumed) [deg].
    specimens : tuple of str
    z, z_sd : ndarray (n, D)
        Each specimen's MAP and Laplace SD.
    steps : DataFrame
        Every fitted step: specimen, direction, point, moment_Nm, observed_deg, fitted_deg,
        residual_deg.
    moroney : DataFrame
        Moroney's targets with the fitted laboratory mean's response and z.
    sweeps : int
    converged : bool
    message : str
    hyper : Hyperpriors
    form_path : str
    inputs : dict
        File name -> sha256 of every input.
    elapsed : float [s]
    """

    names: tuple[str, ...]
    transform: tuple[str, ...]
    a: dict
    var_a: dict
    mu: np.ndarray
    var_mu: np.ndarray
    tau: np.ndarray
    tau_lab: np.ndarray
    sigma_e: float
    sigma_o: float
    specimens: tuple[str, ...]
    z: np.ndarray
    z_sd: np.ndarray
    steps: pd.DataFrame
    moroney: pd.DataFrame
    sweeps: int
    converged: bool
    message: str
    hyper: Hyperpriors
    form_path: str
    inputs: dict = field(default_factory=dict)
    elapsed: float = 0.0

    @property
    def labs(self) -> tuple[str, ...]:
        return tuple(self.a)

    def lab_distribution(self, lab: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Mean and variance (D,) of ``z`` of a new specimen of ``lab`` (a training
        laboratory) or of a new laboratory (None or :data:`NEW_LAB`), all uncertainty
        included (laboratory mean, laboratory effect, specimen)."""
        if lab is None or lab == NEW_LAB:     # tau_lab = 0 where the parameter is shared
            return self.mu.copy(), self.var_mu + self.tau_lab ** 2 + self.tau ** 2
        if lab not in self.a:
            raise ValueError(f"unknown laboratory {lab!r}; expected one of "
                             f"{', '.join([*self.a, NEW_LAB])}")
        return self.a[lab].copy(), self.var_a[lab] + self.tau ** 2

    def draw(self, n: int, *, lab: str | None = None, seed: int = 0) -> np.ndarray:
        """``n`` parameter sets (n, D) in the space's units from the predictive distribution
        of a new specimen (:meth:`lab_distribution`), each coordinate truncated to the
        space's range by redrawing it (the same numbers on any CPU: numpy's PCG64 draws and
        scalar exp/log).

        The specimen SD is uncertain (estimated from a few specimens): each member draws its
        own ``tau_j^2 = nu tau_j^2 / chi2_nu`` with ``nu`` = specimens + the prior's degrees
        of freedom (the scaled inverse chi-square of the estimate), so the predictive has
        the heavier tails of a Student t, not a normal's."""
        mean, _ = self.lab_distribution(lab)
        new = lab is None or lab == NEW_LAB
        base = (self.var_mu + self.tau_lab ** 2) if new else self.var_a[lab]
        nu = len(self.specimens) + SPECIMEN_SD_DOF
        rng = np.random.default_rng(seed)
        lo, hi = self.hyper.z_lower, self.hyper.z_upper
        Z = np.empty((int(n), len(mean)))
        for i in range(int(n)):
            chi = rng.chisquare(nu, size=len(mean))
            for j in range(len(mean)):
                sd = math.sqrt(float(base[j]) + nu * float(self.tau[j]) ** 2 / float(chi[j]))
                for _ in range(1000):
                    v = float(mean[j]) + sd * float(rng.standard_normal())
                    if lo[j] <= v <= hi[j]:
                        break
                else:
                    v = min(max(v, lo[j]), hi[j])
                Z[i, j] = v
        return self.hyper.to_p(Z)

    def hyper_table(self) -> pd.DataFrame:
        """One row per parameter: transform, prior of the population mean (m0, s0), the
        laboratory means and their SDs, mu and its SD, tau (and its prior), tau_lab, each
        on the transform scale, and the medians in the parameter's unit."""
        rows = []
        for j, name in enumerate(self.names):
            row = {"name": name, "transform": self.transform[j],
                   "prior_mean": self.hyper.m0[j], "prior_sd": self.hyper.s0[j]}
            for lab in self.a:
                row[f"a_{lab}"] = self.a[lab][j]
                row[f"a_{lab}_sd"] = math.sqrt(self.var_a[lab][j])
            row.update(mu=self.mu[j], mu_sd=math.sqrt(self.var_mu[j]), tau=self.tau[j],
                       tau_se=self.tau[j] / math.sqrt(2.0 * max(1.0, self._n_eff(j))),
                       tau_prior=self.hyper.tau0[j], tau_lab=self.tau_lab[j])
            for lab in self.a:
                row[f"median_{lab}"] = _inv(self.transform[j], float(self.a[lab][j]),
                                            self.hyper.lower[j], self.hyper.upper[j])
            row["median_new_lab"] = _inv(self.transform[j], float(self.mu[j]),
                                         self.hyper.lower[j], self.hyper.upper[j])
            rows.append(row)
        return pd.DataFrame(rows)

    def _n_eff(self, j) -> float:
        """Specimens that inform parameter j: sum of tau^2 / (tau^2 + V_ij)... the share of
        each specimen's variance the population prior does not explain."""
        t2 = float(self.tau[j]) ** 2
        return math.fsum(max(0.0, 1.0 - float(s) ** 2 / t2) for s in self.z_sd[:, j])

    def specimen_table(self) -> pd.DataFrame:
        """Each specimen's MAP (parameter units) and Laplace SD (transform scale)."""
        P = self.hyper.to_p(self.z)
        rows = []
        for i, s in enumerate(self.specimens):
            row = {"specimen": s}
            for j, name in enumerate(self.names):
                row[name] = P[i, j]
                row[f"{name}_sd_z"] = self.z_sd[i, j]
            rows.append(row)
        return pd.DataFrame(rows)


# ---------------------------------------------------------------------------- fitting
def fit_population(model, data, *, form=None, hyper=None, moroney: bool = True,
                   sigma_o: float | None = None, intact: bool = True,
                   max_sweeps: int = MAX_SWEEPS,
                   n_threads: int | None = 1, progress=None) -> PopulationFit:
    """Calibrate the hierarchy of the module docstring.

    Parameters
    ----------
    model : Segment
        The intact base model (the form's disc law is applied to it).
    data : SpecimenData
        The specimens' static steps (:func:`segment.studies.specimens.load_specimens`).
    form : Form, name or folder, optional
        Default: the population form (:func:`default_form_path`).
    hyper : Hyperpriors, optional
        Default: ``hyperpriors.csv`` beside the form's space, or where there is none
        :func:`default_hyperpriors`.
    moroney : bool
        Also fit Moroney's laboratory (default True); False: the Nightingale laboratory alone
        (its mean then has the prior ``N(m0, s0^2 + tau_lab^2)``).
    intact : bool
        The intact bound (:data:`INTACT_SD`): each specimen's model keeps every ligament
        below rupture at its last static step (default True).
    sigma_o : float, optional
        Origin SD [deg]; default None: estimated with the step SD by maximum likelihood
        (starting from :data:`ORIGIN_SD_DEG`).
    max_sweeps : int
    n_threads : int or None
    progress : callable, optional
        Called with (sweep, change) after each sweep.

    Returns
    -------
    PopulationFit
    """
    from segment.studies.forms import load_form

    t0 = time.perf_counter()
    form = load_form(default_form_path() if form is None else form)
    space = form.space
    if hyper is None:
        hyper = (load_hyperpriors(space)
                 if (Path(space.path).parent / "hyperpriors.csv").is_file()
                 else default_hyperpriors(space))
    hp = hyper
    fm = form.model(model)
    fwd = Forward(fm, space, n_threads=n_threads)
    specs = _specimens(data)
    n, d = len(specs), space.dim
    zlo, zhi = hp.z_lower, hp.z_upper
    m0, s0, tl = hp.m0, hp.s0, hp.tau_lab
    S = s0 ** 2 + 0.5 * tl ** 2                  # prior variance of (a + b) / 2
    shared = tl == 0.0                           # no laboratory effect: a = b = mu

    tau = 2.0 * hp.tau0
    sigma_e = 0.5
    estimate_origin = sigma_o is None
    sigma_o = ORIGIN_SD_DEG if sigma_o is None else float(sigma_o)
    a = np.clip(m0.copy(), zlo, zhi)
    b = a.copy()
    Z = np.tile(a, (n, 1))
    V = np.tile(tau ** 2, (n, 1))
    mor = moroney_targets() if moroney else None
    mor_exps = (tuple(Experiment(c, m, (1.8,)) for c, m in zip(mor["config"], mor["mode"],
                                                                strict=True))
                if moroney else ())
    var_b = tl ** 2
    converged, sweep, change = False, 0, math.inf
    for sweep in range(1, max_sweeps + 1):
        Z_old, tau_old, a_old, b_old = Z.copy(), tau.copy(), a.copy(), b.copy()
        for i, sp in enumerate(specs):
            Z[i], V[i] = _fit_specimen(fwd, hp, sp, Z[i], a, tau, sigma_e, sigma_o,
                                         intact)
        # a: closed form given b (or the prior alone), the specimens, tau; for a parameter
        # without a laboratory effect (tau_lab = 0) a = b = mu, updated with b when Moroney's
        # laboratory is fitted
        prec, rhs = [], []
        for j in range(d):
            pj = n / tau[j] ** 2
            rj = math.fsum(float(Z[i, j]) for i in range(n)) / tau[j] ** 2
            if not shared[j] and moroney:
                pj += 1.0 / (2.0 * tl[j] ** 2) + 1.0 / (4.0 * S[j])
                rj += b[j] / (2.0 * tl[j] ** 2) + (m0[j] - 0.5 * b[j]) / (2.0 * S[j])
            else:
                pj += 1.0 / (s0[j] ** 2 + tl[j] ** 2)
                rj += m0[j] / (s0[j] ** 2 + tl[j] ** 2)
            prec.append(pj)
            rhs.append(rj)
        a = np.clip(np.array([r / p for r, p in zip(rhs, prec, strict=True)]), zlo, zhi)
        var_a = np.array([1.0 / p for p in prec])
        if moroney:
            b, var_b = _fit_lab(fwd, hp, mor, mor_exps, b, a, S, Z, tau, shared)
            a = np.where(shared, b, a)
            var_a = np.where(shared, var_b, var_a)
        # tau: EM with the Laplace variances; sigma_e: maximum likelihood
        tau = np.array([math.sqrt((SPECIMEN_SD_DOF * hp.tau0[j] ** 2 + math.fsum(
            (float(Z[i, j]) - float(a[j])) ** 2 + float(V[i, j]) for i in range(n)))
            / (SPECIMEN_SD_DOF + n)) for j in range(d)])
        resid = [sp.observed - _predict(fwd, hp, sp, Z[i]) for i, sp in enumerate(specs)]
        if estimate_origin:
            sigma_e, sigma_o = _ml_error_sds(resid, [sp.signs for sp in specs])
        else:
            sigma_e = _ml_error_sds_fixed(resid, [sp.signs for sp in specs], sigma_o)
        change = max(float(np.max(np.abs(Z - Z_old))), float(np.max(np.abs(a - a_old))),
                     float(np.max(np.abs(b - b_old))),
                     max(abs(math.log(t / u)) for t, u in zip(tau, tau_old, strict=True)))
        log.info("population sweep %d: change %.3g, sigma_e %.4g, sigma_o %.4g", sweep, change,
                 sigma_e, sigma_o)
        if progress is not None:
            progress(sweep, change)
        if change < SWEEP_TOL:
            converged = True
            break
    # final: each specimen's Laplace variance at the final hyper-parameters
    for i, sp in enumerate(specs):
        Z[i], V[i] = _fit_specimen(fwd, hp, sp, Z[i], a, tau, sigma_e, sigma_o,
                                         intact)
    labs = {NIGHTINGALE: a}
    var_labs = {NIGHTINGALE: var_a}
    if moroney:
        labs[MORONEY] = b
        var_labs[MORONEY] = var_b
        # mu | a, b: precision 1/s0^2 + 2/tau_lab^2
        t2 = np.where(shared, 1.0, tl ** 2)
        pm = 1.0 / s0 ** 2 + 2.0 / t2
        mu = np.where(shared, a, (m0 / s0 ** 2 + (a + b) / t2) / pm)
        var_mu = np.where(shared, var_a, 1.0 / pm + (var_a + var_b) / (t2 ** 2 * pm ** 2))
    else:
        t2 = np.where(shared, 1.0, tl ** 2)
        pm = 1.0 / s0 ** 2 + 1.0 / t2
        mu = np.where(shared, a, (m0 / s0 ** 2 + a / t2) / pm)
        var_mu = np.where(shared, var_a, 1.0 / pm + var_a / (t2 ** 2 * pm ** 2))
    steps = _steps_table(fwd, hp, specs, Z)
    mor_table = _moroney_table(fwd, hp, mor, mor_exps, b) if moroney else pd.DataFrame()
    message = (f"converged in {sweep} sweeps" if converged else
               f"not converged after {sweep} sweeps (last change {change:.3g})")
    inputs = {Path(p).name: h for p, h in zip(data.paths, data.sha256, strict=True)}
    inputs.update({Path(p).name if Path(p).name != "space.csv" else "population/space.csv":
                   hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in form.files()})
    if hp.sha256:
        inputs["hyperpriors.csv"] = hp.sha256
    if moroney:
        tp = data_dir() / "calibration_targets.csv"
        inputs["calibration_targets.csv"] = hashlib.sha256(tp.read_bytes()).hexdigest()
    return PopulationFit(
        names=space.names, transform=hp.transform, a=labs, var_a=var_labs, mu=mu,
        var_mu=var_mu, tau=tau, tau_lab=tl.copy(), sigma_e=sigma_e, sigma_o=sigma_o,
        specimens=tuple(sp.name for sp in specs), z=Z, z_sd=np.sqrt(V), steps=steps,
        moroney=mor_table, sweeps=sweep, converged=converged, message=message, hyper=hp,
        form_path=str(Path(space.path).parent), inputs=inputs,
        elapsed=time.perf_counter() - t0)


def _evaluator(fwd, hp, experiments, *, intact: bool = False):
    """``evaluate(z) -> (y, ok, J_z, h, Jh_z)`` with a one-entry cache (the LM asks for the
    residuals and the Jacobian at the same point). With ``intact``: ``h`` the intact-bound
    residuals (:data:`INTACT_SD`) of every ligament row at the largest moment of each
    experiment, ``Jh_z`` their Jacobian; empty otherwise."""
    cache: dict = {}

    def evaluate(z):
        key = z.tobytes()
        if key not in cache:
            cache.clear()
            p = hp.to_p(z)
            y, ok, jac = fwd(p, experiments, sensitivities=True, states=intact)
            dpz = hp.dp_dz(z)[0]
            h, Jh = np.zeros(0), np.zeros((0, len(z)))
            if intact and ok[0]:
                h, Jh = _intact_rows(fwd)
                Jh = Jh * dpz[None, :]
            cache[key] = (y[0], bool(ok[0]), jac[0] * dpz[None, :], h, Jh)
        return cache[key]

    return evaluate


def _intact_rows(fwd):
    """The intact-bound residuals and their derivative by p (:data:`INTACT_SD`): g from
    :func:`strain_ratios`, dg/dq by central differences, dg/dl0 exactly, dq/dp and dl0/dp from
    the solve. Only rows past rupture carry a residual; where none is, no derivative is
    computed (the residuals and their Jacobian are zero)."""
    rows, jrows = [], []
    for q, dq, glob, lig, dl0 in fwd.last:
        q, dq, glob, lig, dl0 = q[0], dq[0], glob[0], lig[0], dl0[0]
        d = dq.shape[1]
        g = strain_ratios(q, glob, lig)
        past = (g > 1.0) & (lig[:, L_F + 2] != 0.0)
        rows.extend(np.where(past, (g - 1.0) / INTACT_SD, 0.0).tolist())
        if not past.any():
            jrows.extend([np.zeros(d)] * g.size)
            continue
        dg_dq = np.empty((g.size, 6))
        for c in range(6):
            e = np.zeros(6)
            e[c] = FD_STEP
            dg_dq[:, c] = (strain_ratios(q + e, glob, lig)
                           - strain_ratios(q - e, glob, lig)) / (2.0 * FD_STEP)
        for i in range(g.size):
            if not past[i]:
                jrows.append(np.zeros(d))
                continue
            l0, eps = float(lig[i, L_L0]), float(lig[i, L_EPS + 2])
            dg_dl0 = -(g[i] * eps + 1.0) / (l0 * eps)
            row = np.array([math.fsum(float(dg_dq[i, c]) * float(dq[c, k]) for c in range(6))
                            + dg_dl0 * float(dl0[k, i]) for k in range(d)])
            jrows.append(row / INTACT_SD)
    return np.array(rows), np.array(jrows).reshape(len(rows), -1)


def _predict(fwd, hp, sp, z):
    y, _, _ = fwd(hp.to_p(z), sp.experiments)
    return y[0]


def n_intact(fwd, sp) -> int:
    """Intact-bound residuals of a specimen: every packed ligament row at the largest moment
    of each of its experiments."""
    return fwd.model._packed[1].shape[0] * len(sp.experiments)


def _fit_specimen(fwd, hp, sp, z0, a, tau, sigma_e, sigma_o, intact=True):
    """MAP of one specimen's z under ``N(a, tau^2)`` and its Laplace variances (D,)."""
    evaluate = _evaluator(fwd, hp, sp.experiments, intact=intact)
    n = len(sp.observed)
    n_h = n_intact(fwd, sp) if intact else 0

    def fun(z):
        y, ok, _, h, _ = evaluate(z)
        data = (_whiten(sp.observed - y, sp.signs, sigma_e, sigma_o) if ok
                else np.full(n, FAILED_RESIDUAL))
        return np.concatenate([data, h if ok else np.zeros(n_h), (z - a) / tau])

    def jac(z):
        _, ok, J, _, Jh = evaluate(z)
        jd = (-_whiten_rows(J, sp.signs, sigma_e, sigma_o) if ok
              else np.zeros((n, len(z))))
        return np.vstack([jd, Jh if ok else np.zeros((n_h, len(z))), np.diag(1.0 / tau)])

    start = np.clip(z0, hp.z_lower, hp.z_upper)
    if not evaluate(start)[1]:
        start = np.clip(a, hp.z_lower, hp.z_upper)
    s = least_squares_bounded(fun, jac, start, hp.z_lower, hp.z_upper, **LM_OPTIONS)
    z = np.clip(s.x, hp.z_lower, hp.z_upper)
    return z, _laplace_var(jac(z)[:n + n_h], 1.0 / tau ** 2)


def _laplace_var(Jw, prior_prec) -> np.ndarray:
    """Diagonal of ``(Jw^T Jw + diag(prior_prec))^-1`` (correctly rounded sums, Cholesky)."""
    d = Jw.shape[1]
    H = np.array([[math.fsum(float(Jw[i, p]) * float(Jw[i, q]) for i in range(Jw.shape[0]))
                   for q in range(d)] for p in range(d)]) + np.diag(prior_prec)
    inv = spd_inverse(H)
    if inv is None:
        return 1.0 / np.asarray(prior_prec, dtype=float)
    return np.clip(np.diag(inv), 0.0, None)


def _fit_lab(fwd, hp, mor, exps, b0, a, S, Z, tau, shared):
    """MAP of Moroney's laboratory mean ``b`` and its Laplace variances. A parameter with a
    laboratory effect has the prior of ``b`` given ``a`` (two linear residuals: the
    difference ``b - a`` of two laboratory effects and the mean ``(a + b) / 2`` about m0); a
    shared one (``a = b = mu``) has the specimens' residuals ``(z_i - b) / tau`` and its
    prior ``(b - m0) / s0``."""
    evaluate = _evaluator(fwd, hp, exps)
    obs = mor["value_deg"].to_numpy(float)
    sd = mor["sd_deg"].to_numpy(float)
    tl, m0, s0 = hp.tau_lab, hp.m0, hp.s0
    k, d, n = len(obs), len(b0), Z.shape[0]
    own = np.flatnonzero(~shared)
    common = np.flatnonzero(shared)

    def prior_rows(b):
        r = [(b[j] - a[j]) / (math.sqrt(2.0) * tl[j]) for j in own]
        r += [(0.5 * (a[j] + b[j]) - m0[j]) / math.sqrt(S[j]) for j in own]
        r += [(b[j] - Z[i, j]) / tau[j] for j in common for i in range(n)]
        r += [(b[j] - m0[j]) / s0[j] for j in common]
        return np.array(r)

    def prior_jac():
        rows = []
        for j in own:
            e = np.zeros(d)
            e[j] = 1.0 / (math.sqrt(2.0) * tl[j])
            rows.append(e)
        for j in own:
            e = np.zeros(d)
            e[j] = 0.5 / math.sqrt(S[j])
            rows.append(e)
        for j in common:
            for _ in range(n):
                e = np.zeros(d)
                e[j] = 1.0 / tau[j]
                rows.append(e)
        for j in common:
            e = np.zeros(d)
            e[j] = 1.0 / s0[j]
            rows.append(e)
        return np.array(rows).reshape(-1, d)

    Jp = prior_jac()

    def fun(b):
        y, ok, _, _, _ = evaluate(b)
        data = (y - obs) / sd if ok else np.full(k, FAILED_RESIDUAL)
        return np.concatenate([data, prior_rows(b)])

    def jac(b):
        _, ok, J, _, _ = evaluate(b)
        jd = J / sd[:, None] if ok else np.zeros((k, d))
        return np.vstack([jd, Jp])

    start = np.clip(b0, hp.z_lower, hp.z_upper)
    if not evaluate(start)[1]:
        start = np.clip(a, hp.z_lower, hp.z_upper)
    s = least_squares_bounded(fun, jac, start, hp.z_lower, hp.z_upper, **LM_OPTIONS)
    b = np.clip(s.x, hp.z_lower, hp.z_upper)
    prior_prec = np.array([math.fsum(float(Jp[r, j]) ** 2 for r in range(Jp.shape[0]))
                           for j in range(d)])
    return b, _laplace_var(jac(b)[:k], prior_prec)


def _steps_table(fwd, hp, specs, Z) -> pd.DataFrame:
    rows = []
    for i, sp in enumerate(specs):
        y = _predict(fwd, hp, sp, Z[i])
        k = 0
        for e in sp.experiments:
            for point, m in enumerate(e.moment_Nm, start=1):
                rows.append({"specimen": sp.name, "direction": e.mode, "point": point,
                             "moment_Nm": m, "observed_deg": sp.observed[k],
                             "fitted_deg": y[k], "residual_deg": sp.observed[k] - y[k]})
                k += 1
    return pd.DataFrame(rows)


def _moroney_table(fwd, hp, mor, exps, b) -> pd.DataFrame:
    y, ok, _ = fwd(hp.to_p(b), exps)
    out = mor[["config", "mode", "moment_Nm", "value_deg", "sd_deg"]].copy()
    out["fitted_deg"] = y[0] if ok[0] else np.nan
    out["z"] = (out["fitted_deg"] - out["value_deg"]) / out["sd_deg"]
    return out
