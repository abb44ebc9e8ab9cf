"""A virtual population drawn from the hierarchical calibration's predictive distribution
(issue 32): the members' parameter sets and their models.

``segment calibrate --population [--lab NAME] [--out DIR]`` calibrates the hierarchy
(:mod:`segment.studies.calibration.hierarchical`), draws the members (:func:`draw_members`),
tabulates what they predict (:mod:`segment.studies.population_tables`) and writes:

* ``DIR/member_NNN/``: one complete data folder per member (every table of the source data
  folder with the member's values, ``disc_law.csv`` and the validity limits of
  :func:`segment.studies.population_limits.validity_limits`), loadable by
  ``segment.c5c6(data_dir=...)``;
* ``DIR/population.csv``: one row per member: its parameters, laboratory, form, and what it
  predicts (rotations at 1.8 N m intact and posterior-removed in four modes, axial rotation
  after bilateral facetectomy, first rupture and ultimate moment in flexion and extension);
* the calibration's tables (:func:`segment.studies.population_result.write_result`):
  ``hyperparameters.csv``, ``specimens.csv``, ``steps.csv``, ``moroney.csv``,
  ``validity_limits.csv`` and ``manifest.csv`` (sha256 of every input, the command, the
  software's numbers).

``data/population/`` holds the committed result of the default command (the tables, not the
200 folders: they follow from ``population.csv``); the report reads it and checks it cheaply
(:func:`segment.studies.population_result.check_result`: the inputs unchanged, a few members
re-solved to the stored numbers).
"""

from __future__ import annotations

import functools

import numpy as np

from segment.core.io import load_parameters
from segment.solvers.ramp import ramp
from segment.studies.calibration.hierarchical_forward import Experiment, Forward
from segment.studies.calibration.hierarchical_settings import CONFIGS
from segment.studies.curves import MODES
from segment.studies.forms import load_form
from segment.studies.population_limits import _limits_object

__all__ = [
    "MEMBERS",
    "MORONEY_EXPERIMENTS",
    "SEED",
    "STATIC_PROTOCOL_NM",
    "draw_members",
    "member_models",
    "survives",
]

MEMBERS = 200
"""Members of the virtual population (issue 32: at least 200)."""
SEED = 32
"""Seed of the members' draw (the same members on any CPU)."""


def member_models(fit, model, P, *, form=None) -> list:
    """The Segments of parameter sets ``P`` (M, D) in the fit's form on ``model``."""
    form = load_form(fit.form_path if form is None else form)
    fm = form.model(model)
    return [form.space.apply(fm, p) for p in np.atleast_2d(P)]


STATIC_PROTOCOL_NM = 3.5
"""Moment [N m] every training specimen of Nightingale et al. carried intact in both
directions (their last static steps: 3.6-4.8 N m)."""


@functools.lru_cache(maxsize=1)
def _cases():
    """The packaged load cases (FLX, EXT: pure moments of 1.8 N m, ``load_cases.csv``)."""
    return load_parameters().load_cases


def survives(model, moment_Nm: float = STATIC_PROTOCOL_NM, *, limits="default") -> bool:
    """True when ``model`` carries ``moment_Nm`` in flexion and in extension with no strip
    ruptured and within its validity limit (:func:`segment.solvers.ramp.ramp`)."""
    for case in ("FLX", "EXT"):
        r = ramp(model, _cases()[case], to_scale=moment_Nm / 1.8, steps=20, limits=limits)
        if not r.ok or any(e[1] == "ruptured" for e in r.events):
            return False
    return True


def draw_members(fit, model, n: int = MEMBERS, *, lab=None, seed: int = SEED, form=None,
                 survive_nm: float | None = None, limits=None) -> tuple[np.ndarray, int]:
    """``(P (n, D), rejected)``: the first ``n`` draws of the fit's predictive distribution
    (:meth:`~segment.studies.calibration.hierarchical.PopulationFit.draw`) that have an
    equilibrium at 1.8 N m in every mode, intact and posterior-removed, and how many draws
    before them were skipped (the population is the predictive distribution restricted to
    models that can carry Moroney's loads: a stated truncation).

    With ``survive_nm`` also only draws that carry that moment in flexion and extension
    intact and within ``limits`` (the phi_y rows of
    :func:`~segment.studies.population_limits.validity_limits`; :func:`survives`): the
    specimens of a study whose static protocol went to that moment are those that survived
    it (every training specimen did), so a prediction for "a further specimen of the same
    study" is conditioned on it. A selection, stated in the
    manifest with the number rejected; the unconditioned share is reported by
    ``scripts/population_loo.py``."""
    form = load_form(fit.form_path if form is None else form)
    fwd = Forward(form.model(model), form.space)
    P = fit.draw(2 * n + 16, lab=lab, seed=seed)
    _, ok, _ = fwd(P, MORONEY_EXPERIMENTS)
    keep = []
    lim = _limits_object(limits) if survive_nm is not None else None
    for k in np.flatnonzero(ok):
        if survive_nm is not None and not survives(
                member_models(fit, model, P[k:k + 1], form=form)[0], survive_nm, limits=lim):
            continue
        keep.append(k)
        if len(keep) == n:
            break
    if len(keep) < n:
        raise ValueError(f"only {len(keep)} of {P.shape[0]} draws have equilibria at 1.8 N m"
                         + ("" if survive_nm is None else
                            f" and survive {survive_nm:g} N m"))
    keep = np.array(keep)
    return P[keep], int(keep[-1] + 1 - n)



MORONEY_EXPERIMENTS = tuple(Experiment(c, m, (1.8,)) for c in CONFIGS for m in MODES)
"""Rotation at 1.8 N m in every mode, intact and posterior-removed (Moroney's tests)."""
