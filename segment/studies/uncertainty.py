"""Parameter uncertainty: sample the uncertain parameters, solve the nine cases, give bands.

What is sampled is ``data/parameter_space.csv`` (:mod:`segment.studies.space`), the one definition
of the uncertain parameters: each parameter is drawn from its truncated prior (uniform, normal or
lognormal within its bounds), and the file's ``source`` column says where each range comes
from or that it is assumed. The facet inclination (per side) and the radius are published
ranges; the facet gap, the blending constant C, the ligament rest lengths (the rounding of
Table 4) and the disc and ligament stiffness factors are assumptions, and the output says so.

``stiffness_spread`` (optional) replaces the file's range of every ``stiffness_scale``
parameter by a uniform ``[1 - s, 1 + s]``: no published spread exists for Tables 2 and 3 (the
file's +-20 % is an assumption), so a study may want to vary it.

Every sample is solved for the nine cases and the unloaded equilibrium in one launch of
:func:`segment.studies.sets.solve_sets` (no ``Segment`` per sample).

The space's nominal values are the model's
(:meth:`~segment.studies.space.ParameterSpace.for_model`), and the bands are over the converged
samples; :attr:`UncertaintyResult.failures` says how many failed, why, and whether they are random
(:mod:`segment.studies.failures`), and a warning says so when they are not (then the bands describe
only the part of the space that converged).
"""

from __future__ import annotations

import dataclasses
import logging
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from segment._checks import check_count, check_memory
from segment.core.model import Segment
from segment.core.published import LOAD_CASES
from segment.elements.disc import DOF_NAMES
from segment.elements.loads import Load
from segment.solvers.batch import solve_many
from segment.studies.failures import FailureSummary, summarise_failures
from segment.studies.sets import bytes_per_set, solve_sets
from segment.studies.space import ParameterSpace, load_space

__all__ = [
    "ASSUMED_STIFFNESS_SPREAD",
    "UncertaintyResult",
    "assumptions",
    "sample_models",
    "uncertainty_bands",
    "with_stiffness_spread",
]

log = logging.getLogger(__name__)

MAX_MODELS = 100_000
"""Most models :func:`sample_models` builds (a Python ``Segment`` each, ~10 kB and ~1 ms)."""
ASSUMED_STIFFNESS_SPREAD = 0.20
"""ASSUMED, NOT PUBLISHED: the +-20 % of the stiffness factors in data/parameter_space.csv
(no published spread exists for Table 2 or Table 3)."""


def _check_spread(stiffness_spread) -> float:
    s = float(stiffness_spread)
    if not (np.isfinite(s) and 0.0 <= s < 1.0):
        raise ValueError(f"stiffness_spread must be a relative half-width in [0, 1), got "
                         f"{stiffness_spread!r}")
    return s


def with_stiffness_spread(space: ParameterSpace, stiffness_spread) -> ParameterSpace:
    """``space`` with every ``stiffness_scale`` parameter uniform in ``[1 - s, 1 + s]``."""
    s = _check_spread(stiffness_spread)
    if s == 0.0:
        raise ValueError("stiffness_spread must be > 0 to sample (use a space without the "
                         "stiffness parameters to hold them fixed)")
    scale = np.array([f == "stiffness_scale" for f in space.fields])
    lower = np.where(scale, 1.0 - s, space.lower)
    upper = np.where(scale, 1.0 + s, space.upper)
    nominal = np.where(scale, 1.0, space.nominal)
    dist = tuple("uniform" if k else d for k, d in zip(scale, space.distributions, strict=True))
    mu = np.where(scale, np.nan, space.mu)
    sigma = np.where(scale, np.nan, space.sigma)
    sources = tuple(f"assumed: +-{s:.0%} uniform (stiffness_spread), not published" if k else x
                    for k, x in zip(scale, space.sources, strict=True))
    return dataclasses.replace(space, lower=lower, upper=upper, nominal=nominal,
                               distributions=dist, mu=mu, sigma=sigma, sources=sources)


def _space(space, stiffness_spread) -> ParameterSpace:
    space = load_space(space)
    return space if stiffness_spread is None else with_stiffness_spread(space,
                                                                         stiffness_spread)


def assumptions(space: ParameterSpace) -> tuple[str, ...]:
    """One plain sentence per parameter: its range and prior, and whether it is published or
    assumed (from the ``source`` column)."""
    out = []
    for j, name in enumerate(space.names):
        dist = space.distributions[j]
        prior = {"uniform": "uniform",
                 "normal": f"normal {space.mu[j]:g} ± {space.sigma[j]:g}",
                 "lognormal": f"lognormal, median {np.exp(space.mu[j]):.3g}"}[dist]
        unit = "" if space.units[j] in ("-", "") else f" {space.units[j]}"
        kind = ("assumed, not published" if "assumed" in space.sources[j].lower()
                else "published range")
        out.append(f"{name}: {prior} in [{space.lower[j]:g}, {space.upper[j]:g}]{unit} "
                   f"({kind})")
    return tuple(out)


def sample_models(model: Segment, n_samples: int, *, space=None,
                  stiffness_spread: float | None = None,
                  seed: int | None = 0) -> tuple[list[Segment], pd.DataFrame]:
    """Draw ``n_samples`` parameter sets from the space's priors and build their models.

    Parameters
    ----------
    model : Segment
        The base model the parameters are applied to.
    n_samples : int
    space : ParameterSpace, path or None
        Default: the packaged ``data/parameter_space.csv``.
    stiffness_spread : float, optional
        Replace the stiffness factors' range by ``[1 - s, 1 + s]`` (see the module doc).
    seed : int or None
        Seed of :func:`numpy.random.default_rng`; the same seed gives the same samples.

    Returns
    -------
    models : list of Segment
    samples : pandas.DataFrame
        One row per sample, one column per parameter (the space's names and units).
    """
    space = _space(space, stiffness_spread).for_model(model)
    n = check_count(n_samples, "n_samples", maximum=MAX_MODELS,
                    why="each sample builds a Segment; use uncertainty_bands for more")
    P = space.sample(n, seed=seed)
    return [space.apply(model, p) for p in P], space.sets_frame(P)


@dataclass(frozen=True, eq=False)
class UncertaintyResult:
    """Outcome of :func:`uncertainty_bands`.

    Attributes
    ----------
    cases : tuple of str
        Load case names (axis 1 of the arrays).
    main_coordinates : tuple of str or None
        Each case's main coordinate (``Load.main_dof`` as a name; None for a combined load).
    nominal : ndarray, shape (n_cases, 6)
        Displacement from the unloaded equilibrium of the nominal model [mm, rad].
    displacement : ndarray, shape (n_samples, n_cases, 6)
        Each sample's displacement from its own unloaded equilibrium [mm, rad].
    displacement_from_reference : ndarray, shape (n_samples, n_cases, 6)
        Each sample's q, the displacement from the reference pose [mm, rad].
    converged : ndarray of bool, shape (n_samples, n_cases)
        Case and unloaded solve both converged; bands use converged samples only.
    samples : pandas.DataFrame
        The sampled parameters.
    stiffness_spread : float
    assumptions : tuple of str
        Plain-language statements of what is assumed rather than published.
    failures : FailureSummary or None
        The samples that did not converge: how many, why, whether at random.
    """

    cases: tuple[str, ...]
    main_coordinates: tuple[str | None, ...]
    nominal: np.ndarray
    displacement: np.ndarray
    displacement_from_reference: np.ndarray
    converged: np.ndarray
    samples: pd.DataFrame
    stiffness_spread: float
    assumptions: tuple[str, ...]
    failures: FailureSummary | None = None

    def __repr__(self) -> str:
        n, c = self.converged.shape[:2]
        return (f"UncertaintyResult({n} sampled models x {c} cases, "
                f"{int(self.converged.sum())} of {self.converged.size} converged, stiffness "
                f"spread {self.stiffness_spread:.0%} (assumed))")

    def to_frame(self) -> pd.DataFrame:
        """The bands of :meth:`bands` with their defaults (``to_frame``: every result's name)."""
        return self.bands()

    def bands(self, *, quantiles=(0.05, 0.5, 0.95), view: str = "from_unloaded"
              ) -> pd.DataFrame:
        """One row per (case, coordinate): nominal, quantiles, min, max; mm and degrees.

        Parameters
        ----------
        quantiles : three floats
            Lower, middle and upper quantile (default 5 %, 50 %, 95 %).
        view : ``"from_unloaded"`` or ``"from_reference"``
        """
        if view not in ("from_unloaded", "from_reference"):
            raise ValueError(f"view must be 'from_unloaded' or 'from_reference', got {view!r}")
        data = self.displacement if view == "from_unloaded" else self.displacement_from_reference
        lo, mid, hi = quantiles
        rows = []
        for c, case in enumerate(self.cases):
            ok = self.converged[:, c]
            for j, name in enumerate(DOF_NAMES):
                conv = (lambda v: v) if j < 3 else np.degrees
                v = conv(data[ok, c, j])
                rows.append({
                    "case": case, "coordinate": name, "unit": "mm" if j < 3 else "deg",
                    "nominal": float(conv(self.nominal[c, j])) if view == "from_unloaded"
                    else float("nan"),
                    "low": float(np.quantile(v, lo)) if v.size else float("nan"),
                    "median": float(np.quantile(v, mid)) if v.size else float("nan"),
                    "high": float(np.quantile(v, hi)) if v.size else float("nan"),
                    "min": float(v.min()) if v.size else float("nan"),
                    "max": float(v.max()) if v.size else float("nan"),
                    "n_converged": int(ok.sum()), "n_samples": int(ok.size),
                })
        df = pd.DataFrame(rows)
        df.attrs["assumptions"] = self.assumptions
        df.attrs["quantiles"] = tuple(quantiles)
        return df

    def main_bands(self, **kwargs) -> pd.DataFrame:
        """:meth:`bands` restricted to each case's main coordinate (AS/PS x, LS y, ...)."""
        df = self.bands(**kwargs)
        main = dict(zip(self.cases, self.main_coordinates, strict=True))
        keep = [main.get(c) == k for c, k in zip(df["case"], df["coordinate"], strict=True)]
        out = df[keep].reset_index(drop=True)
        out.attrs.update(df.attrs)
        return out


def uncertainty_bands(model: Segment, cases=None, *, n_samples: int = 200,
                      space=None, stiffness_spread: float | None = None,
                      seed: int | None = 0, progress: bool | None = None) -> UncertaintyResult:
    """Sample parameters, solve every case for every sample, return the spread.

    Parameters
    ----------
    model : Segment
        Nominal model: the sampled parameters are applied to it.
    cases : mapping name -> Load, optional
        Default: the nine Moroney cases.
    n_samples : int
    space : ParameterSpace, path or None
        The uncertain parameters (default: the packaged ``data/parameter_space.csv``).
    stiffness_spread : float, optional
        Replace the stiffness factors' range (an assumption in the file) by
        ``[1 - s, 1 + s]``.
    seed : int or None
    progress : bool, optional
        A progress bar over the sampled equilibria (default: when stderr is a terminal).

    Returns
    -------
    UncertaintyResult
        ``bands()`` gives the table the validation report draws as bands.

    Examples
    --------
    >>> import segment
    >>> from segment.studies.uncertainty import uncertainty_bands
    >>> u = uncertainty_bands(segment.c5c6(), n_samples=8, seed=1)
    >>> u.displacement.shape
    (8, 9, 6)
    """
    space = _space(space, stiffness_spread).for_model(model)
    if cases is None:
        cases = dict(LOAD_CASES)
    names = tuple(cases)
    n = check_count(n_samples, "n_samples")
    check_memory(n * (bytes_per_set(len(names), len(model.facets), space.dim, False)
                      + 16 * space.dim),
                 f"n_samples = {n:,}: {n:,} sampled models x {len(names)} cases",
                 hint="lower n_samples")
    P = space.sample(n, seed=seed)
    log.info("uncertainty: %d samples x %d cases", n, len(names))
    res = solve_sets(model, P, [cases[k] for k in names], space=space, progress=progress)
    width = space.upper - space.lower
    failures = summarise_failures((P - space.lower) / np.where(width > 0, width, 1.0),
                                  res.converged.all(axis=1), names=space.names,
                                  status=res.status, status_unloaded=res.status_unloaded,
                                  case_names=list(names))
    if failures.n_failed and not failures.acceptable:
        warnings.warn(f"uncertainty bands: {failures.describe()}; the bands describe only the "
                      "samples that converged", RuntimeWarning, stacklevel=2)
    nominal = solve_many(model, [Load.zero(), *[cases[k] for k in names]], progress=False)
    main = tuple(None if cases[k].main_dof is None else DOF_NAMES[cases[k].main_dof]
                 for k in names)
    s = ASSUMED_STIFFNESS_SPREAD if stiffness_spread is None else float(stiffness_spread)
    return UncertaintyResult(cases=names, main_coordinates=main,
                             nominal=nominal.q[1:] - nominal.q[0],
                             displacement=res.displacement,
                             displacement_from_reference=res.q.copy(),
                             converged=res.converged, samples=space.sets_frame(P),
                             stiffness_spread=s, assumptions=assumptions(space),
                             failures=failures)
