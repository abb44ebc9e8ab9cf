"""The priors of the parameter space as least-squares residuals and as a log density."""

from __future__ import annotations

import math

import numpy as np

from segment.studies.space import ParameterSpace


def _prior_rows(space: ParameterSpace):
    """Indices of the parameters with a Gaussian residual (normal, lognormal)."""
    return np.array([j for j, d in enumerate(space.distributions) if d != "uniform"], dtype=int)


def prior_residual(space: ParameterSpace, p):
    idx = _prior_rows(space)
    r = np.empty(idx.size)
    dr = np.zeros((idx.size, space.dim))
    for k, j in enumerate(idx):
        if space.distributions[j] == "normal":
            r[k] = (p[j] - space.mu[j]) / space.sigma[j]
            dr[k, j] = 1.0 / space.sigma[j]
        else:
            r[k] = (math.log(p[j]) - space.mu[j]) / space.sigma[j]
            dr[k, j] = 1.0 / (space.sigma[j] * p[j])
    return r, dr


def _uniform_precision(space: ParameterSpace) -> np.ndarray:
    """Diagonal precision 12 / (upper - lower)^2 of the uniform priors, 0 for the others."""
    w = space.upper - space.lower
    return np.where(np.array(space.distributions) == "uniform", 12.0 / w ** 2, 0.0)


def log_prior(space: ParameterSpace, P) -> np.ndarray:
    """Log density (1) of the truncated priors, up to a constant, for sets P (M, D)."""
    P = np.atleast_2d(np.asarray(P, dtype=float))
    out = np.zeros(P.shape[0])
    inside = np.all((P >= space.lower) & (P <= space.upper), axis=1)
    out[~inside] = -np.inf
    for j, dist in enumerate(space.distributions):
        if dist == "normal":
            out -= 0.5 * ((P[:, j] - space.mu[j]) / space.sigma[j]) ** 2
        elif dist == "lognormal":
            with np.errstate(invalid="ignore", divide="ignore"):
                lp = np.log(np.where(P[:, j] > 0, P[:, j], np.nan))
            out -= np.where(np.isfinite(lp), 0.5 * ((lp - space.mu[j]) / space.sigma[j]) ** 2
                            + lp, np.inf)
    return out


def _bounded_x0(space, x0):
    x0 = np.array(space.nominal if x0 is None else x0, dtype=float)
    return np.clip(x0, space.lower, space.upper)
