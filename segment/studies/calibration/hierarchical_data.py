"""The data and error models of the hierarchical population model
(:mod:`segment.studies.calibration.hierarchical`): Moroney's targets, the specimens' steps,
and the whitening and likelihood of a specimen's steps with its origin error."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from segment.core.io import data_dir
from segment.studies.calibration.hierarchical_forward import Experiment
from segment.studies.calibration.hierarchical_settings import CONFIGS, MIN_STEP_SD_DEG, MORONEY_CV
from segment.studies.curves import MODES

__all__ = ["moroney_targets"]

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
