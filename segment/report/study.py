"""What the report's sections show: the model the user gave, its cases, and the tables of the
validation study (:mod:`segment.studies.validation`), computed once and shared by the sections.

A section may add what it computes itself (the failure ramps, the calibration reach) for the
findings, which are written last from every section's numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from segment.core.io import load_parameters
from segment.core.published import c5c6
from segment.elements.loads import Load
from segment.report.picture_cache import PictureCache
from segment.studies import validation as v
from segment.studies.reference import CASES, ReferenceData, load_reference

REPORT_SOBOL_EVALUATIONS = 3000
"""Sobol evaluations of the report (N = 256 for 21 parameters: ~6,000 parameter sets)."""


def report_cases(params) -> dict[str, Load]:
    """The nine Moroney cases of the data folder, each with one load component."""
    file = "load_cases.csv"
    missing = [c for c in CASES if c not in params.load_cases]
    if missing:
        raise ValueError(f"{file}: the validation report needs the nine Moroney cases; "
                         f"missing {missing}")
    cases = {c: params.load_cases[c] for c in CASES}
    for name, load in cases.items():
        if load.main_dof is None:
            raise ValueError(f"{file}, case {name!r}: the report needs exactly one non-zero "
                             f"load component, got {load}")
    return cases


@dataclass
class Study:
    """The inputs and computed tables of one report (see the module docstring).

    ``numbers`` maps a section's key to its number in this report, so that text can refer to
    another section (:meth:`section`) whatever sections come before it.
    """

    data_dir: Path | None
    params: object
    ref: ReferenceData
    model: object
    models: dict
    cases: dict[str, Load]
    space: object
    space_file: Path
    say: Callable[[str], None]
    solver_repeat: int
    uncertainty_samples: int
    sobol_evaluations: int
    numbers: Mapping[str, int] = field(default_factory=dict)
    disp: pd.DataFrame | None = None
    agree: pd.DataFrame | None = None
    curves: pd.DataFrame | None = None
    ligs: pd.DataFrame | None = None
    facets: pd.DataFrame | None = None
    share: pd.DataFrame | None = None
    facet_check: pd.DataFrame | None = None
    unloaded: pd.DataFrame | None = None
    unloaded_ligs: pd.DataFrame | None = None
    sens: pd.DataFrame | None = None
    sobol: object = None
    solver: pd.DataFrame | None = None
    unc: object = None
    unc_bands: pd.DataFrame | None = None
    extra: dict[str, object] = field(default_factory=dict)
    """What sections computed for the findings, by name (e.g. ``failure_loads``)."""
    background: Executor | None = None
    """Where :meth:`later` runs work beside the report (the 3-D renders); None: at once."""
    poses_render: Future | None = None
    """The grid of the nine poses, started on :attr:`background` with the study (None
    without one: the section renders it)."""
    pictures: PictureCache = field(default_factory=PictureCache)
    """Where the 3-D renders are looked up and kept (:mod:`segment.report.picture_cache`;
    the default keeps nothing)."""

    def later(self, fn, *args, **kwargs) -> Future | object:
        """``fn(*args, **kwargs)`` on :attr:`background` (a Future), or its value when there
        is none."""
        if self.background is None:
            return fn(*args, **kwargs)
        return self.background.submit(fn, *args, **kwargs)

    @property
    def names(self) -> list[str]:
        return list(self.cases)

    def section(self, key: str) -> str:
        """``"section N"`` for the section with this key."""
        return f"section {self.numbers[key]}"


def compute_study(*, reference_dir=None, data_dir=None, say: Callable[[str], None],
                  solver_repeat: int, uncertainty_samples: int,
                  sobol_evaluations: int, background: Executor | None = None,
                  pictures: PictureCache | None = None) -> Study:
    """Load the model and references and compute the tables every section draws on.

    With ``background``, the 3-D grid of the nine poses is rendered there while the tables
    are computed (:attr:`Study.poses_render`)."""
    say("loading data and reference tables")
    params = load_parameters(data_dir)
    ref = load_reference(reference_dir)
    model = c5c6(data_dir=data_dir)
    from segment.studies.space import default_space_path, load_space

    space_file = (Path(data_dir) / "parameter_space.csv" if data_dir is not None
                  and (Path(data_dir) / "parameter_space.csv").exists()
                  else default_space_path())
    s = Study(data_dir=None if data_dir is None else Path(data_dir), params=params, ref=ref,
              model=model, models=v.configurations(model), cases=report_cases(params),
              space=load_space(space_file).for_model(model), space_file=space_file, say=say,
              solver_repeat=solver_repeat, uncertainty_samples=uncertainty_samples,
              sobol_evaluations=sobol_evaluations, background=background,
              pictures=pictures or PictureCache())
    if background is not None:
        from segment.report.renders import render_poses  # vtk is imported on first use
        s.poses_render = background.submit(render_poses, model, s.cases, cache=s.pictures)
    say("solving the nine cases in three configurations")
    s.disp = v.displacement_table(s.models, s.cases)
    say("comparing with the references")
    s.agree = v.agreement_table(s.disp, ref, s.cases)
    s.curves = v.load_displacement_curves(s.models, s.cases, progress=say)
    say("element forces and load sharing")
    s.ligs, s.facets, s.share = v.element_force_tables(model, s.cases)
    s.facet_check = v.facet_force_check(model, ref)
    s.unloaded = v.unloaded_table(s.models)
    s.unloaded_ligs = v.unloaded_ligaments(model)
    s.sens = v.sensitivity_table(model, s.cases, progress=say, space=s.space)
    say(f"Sobol indices: >= {sobol_evaluations} evaluations x 9 cases")
    from segment.studies.sobol import sobol_study

    s.sobol = sobol_study(model, space=s.space, cases=s.cases, n=sobol_evaluations, seed=0)
    say("timing the solver")
    s.solver = v.solver_table(model, s.cases, repeat=solver_repeat)
    say(f"parameter uncertainty: {uncertainty_samples} sampled models x 9 cases")
    from segment.studies.uncertainty import uncertainty_bands

    s.unc = uncertainty_bands(model, s.cases, n_samples=uncertainty_samples, space=s.space,
                              seed=0)
    s.unc_bands = s.unc.main_bands()
    return s
