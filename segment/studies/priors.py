"""The priors of a parameter space: truncated uniform, normal and lognormal distributions.

Every prior of a parameter-space file (:mod:`segment.studies.space_file`) is truncated to its
parameter's ``[lower, upper]``. :func:`prior_mass` is the share of a prior's mass inside its
bounds (a file whose prior keeps less than :data:`MIN_PRIOR_MASS` is refused: computed, not
assumed); :func:`ppf` maps points of the unit cube to parameter sets through each truncated
prior's inverse CDF (what sampling, Sobol designs and uncertainty bands draw from).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["DISTRIBUTIONS", "MIN_PRIOR_MASS", "ppf", "prior_mass"]

DISTRIBUTIONS = ("uniform", "normal", "lognormal")
MIN_PRIOR_MASS = 0.01
"""A truncated normal or lognormal prior keeps at least this share of its mass within
[lower, upper]. The packaged priors keep 95 % (bounds at +-2 SD); a prior with less than 1 %
inside is practically an exponential piled against one bound, which no published range means:
a mean typed in another unit (1000 for bounds 32-54) or a lognormal's median typed as its
``dist_mu`` (16.7 for ln 16.7 = 2.8) leaves 1e-120 and less, and its samples are noise of the
inverse CDF's far tail."""


def prior_mass(dist: str, mu: float, sigma: float, lower: float, upper: float) -> float:
    """Share of a normal or lognormal prior's mass within [lower, upper] (1 for uniform)."""
    from scipy.special import ndtr

    if dist == "uniform":
        return 1.0
    if dist == "lognormal":
        if not lower > 0:
            return 0.0
        lower, upper = math.log(lower), math.log(upper)
    a, b = (lower - mu) / sigma, (upper - mu) / sigma
    # the difference of the upper tails where both bounds lie above the mean (no cancellation)
    return float(ndtr(-a) - ndtr(-b)) if a > 0 else float(ndtr(b) - ndtr(a))


def ppf(space, u) -> np.ndarray:
    """Map points of the unit cube (M, D) to parameter sets (M, D) of ``space`` through each
    truncated prior's inverse CDF (uniform: ``lower + u (upper - lower)``)."""
    from scipy import stats

    u = np.array(u, dtype=float)
    if u.ndim != 2 or u.shape[1] != space.dim:
        raise ValueError(f"unit-cube points must have shape (M, {space.dim}), got {u.shape}")
    if not np.all((u >= 0) & (u <= 1)):
        raise ValueError("unit-cube points must lie in [0, 1]")
    out = np.empty_like(u)
    for j, dist in enumerate(space.distributions):
        lo, hi = space.lower[j], space.upper[j]
        if dist == "uniform":
            out[:, j] = lo + u[:, j] * (hi - lo)
            continue
        mu, sigma = space.mu[j], space.sigma[j]
        if dist == "normal":
            z = stats.truncnorm.ppf(u[:, j], (lo - mu) / sigma, (hi - mu) / sigma)
            out[:, j] = mu + sigma * z
        else:
            z = stats.truncnorm.ppf(u[:, j], (math.log(lo) - mu) / sigma,
                                    (math.log(hi) - mu) / sigma)
            out[:, j] = np.exp(mu + sigma * z)
        if not np.all(np.isfinite(out[:, j])):
            raise ValueError(f"{space.where(j)}: the {dist} prior of {space.names[j]!r} "
                             f"cannot be sampled within [{lo:g}, {hi:g}] (its mass there "
                             f"is {prior_mass(dist, mu, sigma, lo, hi):.2g})")
        np.clip(out[:, j], lo, hi, out=out[:, j])
    return out
