"""Posterior samples of a curve calibration by MCMC (the sampler of
:func:`~segment.studies.calibration.posterior.sample_posterior`, emcee with
differential-evolution moves, walkers started from the Laplace posterior).

The likelihood is the Gaussian of the calibration's targets (the corridor's mean with the
specimens' SD for the population, a specimen's points with the assumed point SD), each walker
set's curves followed by continuation in one parallel launch per step
(:class:`~segment.studies.calibration.curve_forward.CurveForward`); a set whose equilibria
fail has zero density.
"""

from __future__ import annotations

import numpy as np

from segment.studies.calibration.curve_forward import CurveForward
from segment.studies.calibration.curve_result import CurveCalibration
from segment.studies.calibration.posterior import PosteriorSamples, run_emcee
from segment.studies.forms import load_form

__all__ = ["MIN_WALKERS", "sample_curve_posterior"]

MIN_WALKERS = 32
"""Walkers of the curve posterior at least (and at least twice the parameters)."""


def sample_curve_posterior(fit: CurveCalibration, *, samples: int = 100_000, form=None,
                           model, n_walkers: int | None = None, discard: int | None = None,
                           seed: int | None = 0, progress: bool = False,
                           n_threads: int | None = 1) -> PosteriorSamples:
    """About ``samples`` posterior draws around the MAP of ``fit``.

    Parameters
    ----------
    fit : CurveCalibration
        A converged calibration (its targets, form and Laplace posterior).
    samples : int
        Draws = walkers x steps (steps rounded up).
    form, model
        The form (default the fit's) and the base model .
    n_walkers : int, optional
        Default ``max(MIN_WALKERS, 2 D)`` (even).
    n_threads : int or None
        Threads of the curve kernel per step (default 1; None: numba's). Measured on the
        shared 2-core machine under load (load average 6-7): 1e5 draws took 352 s on two
        threads, and one thread ran 20,000 draws in 12.7 s; on an idle machine two threads
        may pay (``benchmarks/bench_curves.py --threads``).

    Returns
    -------
    PosteriorSamples
    """

    if not fit.success:
        raise ValueError(f"the calibration did not converge ({fit.message}): no posterior")
    form = load_form(fit.form if form is None else form)
    space = form.space
    base = model
    targets = fit.targets
    fwd = CurveForward(form.model(base), space, targets, n_threads=n_threads)
    if n_walkers is None:
        n_walkers = max(MIN_WALKERS, 2 * space.dim)
        n_walkers += n_walkers % 2
    n_steps = max(4, -(-int(samples) // int(n_walkers)))

    def log_likelihood(P):
        y, ok, _ = fwd(P)
        ll = -0.5 * np.sum(((y - targets.values) / targets.sd) ** 2, axis=1)
        ll[~ok] = -np.inf
        return ll

    return run_emcee(space, log_likelihood, start=fit, n_walkers=n_walkers, n_steps=n_steps,
                     discard=discard, seed=seed, progress=progress)
