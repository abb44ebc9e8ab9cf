"""Posterior samples by MCMC (emcee) and their convergence diagnostics."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from segment import _checks
from segment._checks import check_count, check_memory, check_seed
from segment.studies.calibration.forward import Forward
from segment.studies.calibration.prior import _bounded_x0, log_prior
from segment.studies.calibration.targets import load_targets
from segment.studies.space import load_space

log = logging.getLogger("segment.studies.calibration")

@dataclass(frozen=True, eq=False)
class PosteriorSamples:
    """Posterior samples from :func:`sample_posterior` and their diagnostics.

    Attributes
    ----------
    chain : ndarray (steps, walkers, D)
        Every draw (burn-in included).
    discard : int
        Steps dropped as burn-in.
    acceptance : ndarray (walkers,)
        Acceptance fraction of each walker.
    autocorr : ndarray (D,)
        Integrated autocorrelation time per parameter [steps] (emcee, tol=0: a lower bound
        when the chain is short; see ``autocorr_reliable``).
    autocorr_reliable : bool
        The kept chain is longer than 50 autocorrelation times (emcee's criterion).
    rhat : ndarray (D,)
        Split-R-hat over walkers (Gelman et al. 2013, Bayesian Data Analysis, 3rd ed., eq. 11.4
        on each half of every walker's kept chain).
    n_samples : int
        Draws made (steps x walkers).
    elapsed : float
    thin : int
        Every ``thin``-th kept step is returned by :attr:`samples` (half the shortest
        autocorrelation time, emcee's advice; 1 when that is below 2 steps).
    """

    names: tuple[str, ...]
    chain: np.ndarray
    log_prob: np.ndarray
    discard: int
    acceptance: np.ndarray
    autocorr: np.ndarray
    autocorr_reliable: bool
    rhat: np.ndarray
    n_samples: int
    elapsed: float
    thin: int = 1

    @property
    def samples(self) -> np.ndarray:
        """Kept draws (after burn-in, thinned by :attr:`thin`), flattened (K, D)."""
        return self.chain[self.discard::self.thin].reshape(-1, self.chain.shape[2])

    @property
    def kept_steps(self) -> int:
        return self.chain.shape[0] - self.discard

    @property
    def effective_samples(self) -> np.ndarray:
        """Effective sample size (D,): kept draws / autocorrelation time."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.kept_steps * self.chain.shape[1] / self.autocorr

    @property
    def converged(self) -> bool:
        """Every split-R-hat below :data:`RHAT_CONVERGED` and the kept chain longer than 50
        autocorrelation times (:attr:`autocorr_reliable`)."""
        return bool(np.all(self.rhat < RHAT_CONVERGED) and self.autocorr_reliable)

    def summary(self) -> str:
        """One line: draws, time, acceptance, autocorrelation, R-hat and the verdict."""
        if np.isfinite(self.autocorr).any():
            tau = float(np.nanmax(self.autocorr))
            ac = (f"max autocorrelation time {tau:.0f} steps (kept chain "
                  f"{self.kept_steps / tau:.0f} times that)")
        else:
            ac = "autocorrelation time not estimable (chain too short)"
        rhat = f"{np.nanmax(self.rhat):.3f}" if np.isfinite(self.rhat).any() else "nan"
        return (f"posterior: {self.n_samples} draws ({self.chain.shape[1]} walkers x "
                f"{self.chain.shape[0]} steps, burn-in {self.discard}, thin {self.thin}) in "
                f"{self.elapsed:.1f} s, acceptance {self.acceptance.mean():.2f}, {ac}, "
                f"max split-R-hat {rhat}: "
                + ("converged" if self.converged else
                   f"NOT converged (needs every R-hat < {RHAT_CONVERGED:g} and a kept chain "
                   "> 50 autocorrelation times)"))

    def diagnostics(self) -> pd.DataFrame:
        s = self.samples
        lo, med, hi = np.percentile(s, [2.5, 50, 97.5], axis=0)
        return pd.DataFrame({"parameter": self.names, "mean": s.mean(axis=0),
                             "sd": s.std(axis=0), "q2.5": lo, "median": med, "q97.5": hi,
                             "autocorr_steps": self.autocorr,
                             "kept_over_autocorr": self.kept_steps / self.autocorr,
                             "effective_samples": self.effective_samples, "rhat": self.rhat})


RHAT_CONVERGED = 1.1
"""Split-R-hat below which a parameter's chains count as mixed (Gelman et al. 2013, Bayesian
Data Analysis, 3rd ed., section 11.4: "below 1.1"; stricter 1.01 in Vehtari et al. 2021)."""
INIT_REDRAWS = 100
"""Rounds of redrawing the initial walkers that fell outside the ranges."""
BURN_IN_TAUS = 5
"""Automatic burn-in: this many of the largest autocorrelation times (estimated on the second
half of the chain), at most half the chain."""


def split_rhat(chain) -> np.ndarray:
    """Split-R-hat (D,) of ``chain`` (steps, chains, D): each chain cut in two halves."""
    chain = np.asarray(chain, dtype=float)
    n = chain.shape[0] // 2
    if n < 2:
        return np.full(chain.shape[2], np.nan)
    halves = np.concatenate([chain[:n], chain[n:2 * n]], axis=1)       # (n, 2m, D)
    means = halves.mean(axis=0)
    W = halves.var(axis=0, ddof=1).mean(axis=0)
    B = n * means.var(axis=0, ddof=1)
    var = (n - 1) / n * W + B / n
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sqrt(var / W)


MAX_DRAWS = _checks.MAX_DRAWS
"""Most posterior draws (n_walkers x n_steps) of one run: the chain alone is 8 D bytes per
draw (17 GB at 1e8 draws of 21 parameters); the memory available is checked too."""


def sample_posterior(model, targets=None, *, space=None, start=None, n_walkers: int = 64,
                     n_steps: int = 1000, discard: int | None = None, seed: int | None = 0,
                     progress: bool = False, n_threads: int | None = 1,
                     client=None, cases=None) -> PosteriorSamples:
    """Posterior samples of (1) by emcee's ensemble sampler (differential-evolution moves).

    Every step evaluates half the walkers at once in the parameter-set kernel (``vectorize``).
    A set whose equilibrium fails has zero posterior density (it is rejected), never a guess.

    Parameters
    ----------
    start : CalibrationResult or array (D,), optional
        A CalibrationResult: walkers start as draws from its Laplace posterior truncated to
        the ranges (draws outside redrawn; clipping them instead piled the walkers of a MAP at
        a bound onto the face, deep in the logit tail, a transient the burn-in had to
        remove). An array (or None: the nominal set): a small ball (1 % of
        the ranges) around it.
    n_walkers, n_steps : int
        Draws = n_walkers x n_steps.
    n_threads : int or None
        Threads of the parameter-set kernel (default 1; see :func:`calibrate`).
    discard : int, optional
        Burn-in steps (default: :data:`BURN_IN_TAUS` autocorrelation times, estimated on the
        second half of the chain, at most half the chain).
    client : dask.distributed.Client, optional
        Evaluate on a Dask cluster (``c5c6-segment[study]``).
    cases : mapping name -> Load, optional
        As :func:`calibrate`.

    Returns
    -------
    PosteriorSamples
    """
    space = load_space(space).for_model(model)
    targets = load_targets(targets)
    n_walkers = check_count(n_walkers, "n_walkers", minimum=2)
    n_steps = check_count(n_steps, "n_steps", minimum=4)
    seed = check_seed(seed)
    _check_chain(space, n_walkers, n_steps, discard)
    fwd = Forward(model, space, targets, n_threads=n_threads, client=client, cases=cases)

    def log_likelihood(P):
        y, ok, _ = fwd(P)
        ll = -0.5 * np.sum(((y - targets.values) / targets.sd) ** 2, axis=1)
        ll[~ok] = -np.inf
        return ll

    return run_emcee(space, log_likelihood, start=start, n_walkers=n_walkers,
                     n_steps=n_steps, discard=discard, seed=seed, progress=progress)


def _check_chain(space, n_walkers, n_steps, discard) -> None:
    if n_walkers < 2 * space.dim or n_walkers % 2:
        raise ValueError(f"n_walkers must be even and >= 2 x {space.dim} parameters, got "
                         f"{n_walkers}")
    draws = n_walkers * n_steps
    if draws > MAX_DRAWS:
        raise ValueError(f"n_walkers x n_steps must be <= {MAX_DRAWS:,} draws (MAX_DRAWS), got "
                         f"{draws:,}")
    # the chain in z and in p and its log densities
    check_memory(8.0 * draws * (2 * space.dim + 1), f"{draws:,} posterior draws")
    if discard is not None and not 0 <= int(discard) <= n_steps - 3:
        raise ValueError(f"discard must be in [0, {n_steps - 3}] (keep >= 3 steps), got "
                         f"{discard}")


def run_emcee(space, log_likelihood, *, start=None, n_walkers: int = 64, n_steps: int = 1000,
              discard: int | None = None, seed: int | None = 0,
              progress: bool = False) -> PosteriorSamples:
    """The MCMC of :func:`sample_posterior` for any likelihood over ``space``:
    ``log_likelihood(P (K, D)) -> (K,)`` (``-inf`` where a set's equilibria fail), with the
    space's truncated priors; ``start`` as there (anything with ``x`` and ``covariance``, e.g.
    a :class:`CalibrationResult` or a curve calibration, or an array (D,) or None)."""
    import time

    try:
        import emcee
    except ImportError:
        raise ImportError('emcee is needed for posterior samples; install the study extra: '
                          'pip install "c5c6-segment[study]"') from None
    n_walkers = check_count(n_walkers, "n_walkers", minimum=2)
    n_steps = check_count(n_steps, "n_steps", minimum=4)
    seed = check_seed(seed)
    _check_chain(space, n_walkers, n_steps, discard)
    has_cov = hasattr(start, "covariance") and hasattr(start, "x")
    center = start.x if has_cov else _bounded_x0(space, start)

    lo, width = space.lower, space.upper - space.lower

    def to_p(Z):
        return lo + width / (1.0 + np.exp(-Z))

    def log_prob(Z):
        # walkers live in z = logit((p - lower) / width), unbounded: no proposal leaves the
        # ranges (a stretch move in the box rejected ~95 % near its faces); the density
        # carries the Jacobian |dp/dz| = width s (1 - s)
        s = 1.0 / (1.0 + np.exp(-Z))
        P = lo + width * s
        with np.errstate(divide="ignore"):
            lp = log_prior(space, P) + np.sum(np.log(s * (1.0 - s)), axis=1)
        good = np.isfinite(lp)
        if good.any():
            lp[good] += log_likelihood(P[good])
        return lp

    rng = np.random.default_rng(seed)
    if has_cov and np.all(np.isfinite(start.covariance)):
        p0 = rng.multivariate_normal(center, start.covariance, size=n_walkers,
                                     check_valid="ignore")
        for _ in range(INIT_REDRAWS):
            out = np.any((p0 <= lo) | (p0 >= lo + width), axis=1)
            if not out.any():
                break
            p0[out] = rng.multivariate_normal(center, start.covariance, size=int(out.sum()),
                                              check_valid="ignore")
    else:
        p0 = center + 0.01 * width * rng.standard_normal((n_walkers, space.dim))
    u0 = np.clip((p0 - lo) / width, 1e-3, 1 - 1e-3)        # after INIT_REDRAWS: rare
    z0 = np.log(u0 / (1.0 - u0))
    # differential-evolution moves (with 20 % snooker): measured on the default problem, 64
    # walkers x 800 steps, split-R-hat 1.19 and autocorrelation 37 steps, against 1.55 and 50
    # for emcee's default stretch move
    moves = [(emcee.moves.DEMove(), 0.8), (emcee.moves.DESnookerMove(), 0.2)]
    sampler = emcee.EnsembleSampler(n_walkers, space.dim, log_prob, vectorize=True,
                                    moves=moves)
    if seed is not None:
        sampler.random_state = np.random.RandomState(int(seed)).get_state()
    t0 = time.perf_counter()
    sampler.run_mcmc(z0, n_steps, progress=progress)
    elapsed = time.perf_counter() - t0
    chain = to_p(sampler.get_chain())
    with np.errstate(invalid="ignore", divide="ignore"):   # a walker that never moved
        if discard is None:
            half = np.asarray(sampler.get_autocorr_time(discard=n_steps // 2, tol=0,
                                                        quiet=True))
            # not estimable (a walker that never moved, a short chain): half the chain
            discard = (min(n_steps // 2, math.ceil(BURN_IN_TAUS * float(np.nanmax(half))))
                       if np.isfinite(half).any() else n_steps // 2)
        discard = int(discard)
        tau = np.asarray(sampler.get_autocorr_time(discard=discard, tol=0, quiet=True))
    kept = n_steps - discard
    t_min = float(np.nanmin(tau)) if np.isfinite(tau).any() else 0.0
    thin = max(1, int(0.5 * t_min))
    log.info("sample_posterior: %d draws in %.1f s (burn-in %d steps, thin %d)",
             n_walkers * n_steps, elapsed, discard, thin)
    return PosteriorSamples(
        names=space.names, chain=chain, log_prob=sampler.get_log_prob(), discard=discard,
        acceptance=np.asarray(sampler.acceptance_fraction), autocorr=tau,
        autocorr_reliable=bool(np.all(kept > 50 * tau)), rhat=split_rhat(chain[discard:]),
        n_samples=n_walkers * n_steps, elapsed=elapsed, thin=thin)
