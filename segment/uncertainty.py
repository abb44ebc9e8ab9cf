"""Parameter uncertainty: sample the uncertain parameters, solve the nine cases, give bands.

What is sampled, and where each spread comes from (``validation/reference/SOURCES.md``):

* **Facet inclination** to the transverse plane, per side, uniform within +-1 SD of the
  published mean (PMC2219934 Table 2, C6 superior facet): right 42.3 +- 4.4 deg, left
  43.2 +- 5.4 deg. *Published.*
* **Facet radius**, per joint (both faces of a joint together), uniform in 4.9-5.6 mm, the
  equivalent-area circle radii of the published facet areas (Panjabi 1993 / Patel 2007).
  *Computed from published numbers.*
* **Disc stiffness** (Table 2, one factor per coordinate, applied to both signs) and
  **ligament stiffness** (Table 3, one factor per ligament scaling the force axis of its
  curve): the sources give *no spread*. The relative half-width is therefore a *required*
  argument, ``stiffness_spread``; factors are uniform in ``[1 - s, 1 + s]``. The default study
  of :func:`uncertainty_bands` uses :data:`ASSUMED_STIFFNESS_SPREAD` = 0.20, an
  **assumption, not a published spread**, and says so in its output.

Everything else (reference pose, insertions, rest lengths, contact law, facet centres and
gaps) stays at its nominal value. Every sample is solved for the nine cases and the unloaded
equilibrium with :func:`segment.batch.solve_many`.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd

from segment.anatomy import FACET_INCLINATION_DEG, FACET_RADIUS_MM
from segment.batch import solve_many
from segment.disc import DOF_NAMES, DiscStiffness
from segment.ligament import TrilinearCurve
from segment.loads import Load
from segment.model import Segment

__all__ = [
    "ASSUMED_STIFFNESS_SPREAD",
    "FACET_INCLINATION_DEG",
    "FACET_RADIUS_MM",
    "UncertaintyResult",
    "sample_models",
    "uncertainty_bands",
]

log = logging.getLogger(__name__)

ASSUMED_STIFFNESS_SPREAD = 0.20
"""ASSUMED, NOT PUBLISHED: +-20 % uniform band on disc and ligament stiffness for the default
study. No source in SOURCES.md gives a spread for Table 2 or Table 3."""
ASSUMPTION_NOTE = ("disc and ligament stiffness spread +-{:.0%} uniform: assumed, not published "
                   "(no spread is available for Tables 2 and 3)")


def _check_spread(stiffness_spread) -> float:
    s = float(stiffness_spread)
    if not (np.isfinite(s) and 0.0 <= s < 1.0):
        raise ValueError(f"stiffness_spread must be a relative half-width in [0, 1), got "
                         f"{stiffness_spread!r}")
    return s


def sample_models(model: Segment, n_samples: int, *, stiffness_spread: float,
                  seed: int | None = 0) -> tuple[list[Segment], pd.DataFrame]:
    """Draw ``n_samples`` parameter sets (see the module docstring).

    Stiffnesses are scaled around ``model``'s; the facet inclination and radius are drawn
    within the *published* spreads (each side's mean +- SD, the radius range), not around
    ``model``'s own facets, whose nominal 42.75 deg is the mean of the two sides.

    Parameters
    ----------
    model : Segment
        The nominal model (its facets must be named ``left`` and ``right``).
    n_samples : int
    stiffness_spread : float
        Relative half-width ``s`` of the uniform disc and ligament stiffness factors,
        ``[1 - s, 1 + s]``. Required: no published spread exists (use
        :data:`ASSUMED_STIFFNESS_SPREAD` for the documented default study).
    seed : int or None
        Seed of :func:`numpy.random.default_rng`; the same seed gives the same samples.

    Returns
    -------
    models : list of Segment
    samples : pandas.DataFrame
        One row per sample: ``incl_<side>_deg``, ``radius_<side>_mm``, ``disc_<dof>_factor``,
        ``<ligament>_factor``.
    """
    s = _check_spread(stiffness_spread)
    n = int(n_samples)
    if n < 1:
        raise ValueError(f"n_samples must be >= 1, got {n_samples!r}")
    rng = np.random.default_rng(seed)
    ref = model.reference
    models, rows = [], []
    for _ in range(n):
        row = {}
        facets = []
        for joint in model.facets:
            incl = joint.geometry(ref)["inclination_deg"]
            if joint.side in FACET_INCLINATION_DEG:
                mean, sd = FACET_INCLINATION_DEG[joint.side]
                incl = rng.uniform(mean - sd, mean + sd)
            radius = rng.uniform(*FACET_RADIUS_MM)
            row[f"incl_{joint.side}_deg"] = incl
            row[f"radius_{joint.side}_mm"] = radius
            facets.append(joint.modified(ref, inclination_deg=incl, radius_c6=radius,
                                         radius_c5=radius))
        k = rng.uniform(1.0 - s, 1.0 + s, size=6)
        for j, name in enumerate(DOF_NAMES):
            row[f"disc_{name}_factor"] = k[j]
        disc = DiscStiffness(model.disc.k_positive * k, model.disc.k_negative * k,
                             model.disc.damping)
        ligs = []
        for lig in model.ligaments:
            f = rng.uniform(1.0 - s, 1.0 + s)
            row[f"{lig.name}_factor"] = f
            curve = TrilinearCurve(lig.curve.strain, lig.curve.force * f)
            ligs.append(dataclasses.replace(lig, curve=curve))   # keeps its strips
        models.append(model.replace(disc=disc, ligaments=tuple(ligs), facets=tuple(facets)))
        rows.append(row)
    return models, pd.DataFrame(rows)


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


def uncertainty_bands(model: Segment | None = None, cases=None, *, n_samples: int = 200,
                      stiffness_spread: float, seed: int | None = 0,
                      progress: bool | None = None) -> UncertaintyResult:
    """Sample parameters, solve every case for every sample, return the spread.

    Parameters
    ----------
    model : Segment, optional
        Nominal model (default :func:`segment.c5c6`).
    cases : mapping name -> Load, optional
        Default: the nine Moroney cases.
    n_samples : int
    stiffness_spread : float
        Required (no published spread): relative half-width of the disc and ligament stiffness
        factors. :data:`ASSUMED_STIFFNESS_SPREAD` (0.20) is the documented default study,
        an assumption.
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
    >>> from segment.uncertainty import ASSUMED_STIFFNESS_SPREAD, uncertainty_bands
    >>> u = uncertainty_bands(n_samples=8, stiffness_spread=ASSUMED_STIFFNESS_SPREAD, seed=1)
    >>> u.displacement.shape
    (8, 9, 6)
    """
    import segment

    s = _check_spread(stiffness_spread)
    if model is None:
        model = segment.c5c6()
    if cases is None:
        cases = dict(segment.LOAD_CASES)
    names = tuple(cases)
    loads = [Load.zero(), *[cases[n] for n in names]]
    models, samples = sample_models(model, n_samples, stiffness_spread=s, seed=seed)
    log.info("uncertainty: %d samples x %d cases", len(models), len(names))
    res = solve_many(models, loads, progress=progress)
    nominal = solve_many(model, loads, progress=False)
    q = res.q  # (M, 1 + n_cases, 6)
    conv = res.converged[:, 1:] & res.converged[:, :1]
    assumptions = (ASSUMPTION_NOTE.format(s),
                   "facet inclination uniform within +-1 SD of the published mean "
                   "(PMC2219934 Table 2)",
                   f"facet radius uniform in {FACET_RADIUS_MM[0]}-{FACET_RADIUS_MM[1]} mm "
                   "(computed from published areas)")
    main = tuple(None if cases[n].main_dof is None else DOF_NAMES[cases[n].main_dof]
                 for n in names)
    return UncertaintyResult(cases=names, main_coordinates=main,
                             nominal=nominal.q[1:] - nominal.q[0],
                             displacement=q[:, 1:] - q[:, :1],
                             displacement_from_reference=q[:, 1:].copy(), converged=conv,
                             samples=samples, stiffness_spread=s, assumptions=assumptions)
