"""A virtual population: one model per calibrated specimen, and what it says next to the
published model.

The per-specimen calibrations of :func:`~segment.studies.calibration.curve_fit.calibrate_each`
are a population of parameter sets (``population.csv``, or one data folder per specimen).
:class:`Population` solves for every member:

* the nine Moroney cases (:meth:`Population.cases`), each displacement from the member's
  unloaded pose;
* the load ramps to failure with ligament rupture (:meth:`Population.ramps`,
  :func:`segment.ramp`);
* the validation comparisons (:meth:`Population.validation`): Moroney's intact rotations
  (the intact rows of ``calibration_targets.csv``, SDs assumed there), Voo et al.'s flexion
  stiffness and Anderst et al.'s centre of rotation (:mod:`segment.studies.validation_only`);
* the members' model curves over the specimens' load levels (:meth:`Population.curves`),

and summarises each quantity as population bands (:func:`bands`): the median and the 5 and
95 % quantiles over the members (linear interpolation between members: with eight members the
5 and 95 % quantiles lie between the two lowest and the two highest), the mean and the SD over
the members (n - 1), and where the published model sits, ``z = (published - mean) / SD`` in
specimen SDs.

Members whose calibration did not converge are not in the population (``population.csv``
keeps their row with ``converged`` False).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from segment.core.model import Segment
from segment.core.published import LOAD_CASES, c5c6
from segment.solvers.equilibrium import solve
from segment.solvers.ramp import ramp
from segment.studies.calibration.curve_fit import population_table
from segment.studies.calibration.targets import load_targets
from segment.studies.curves import load_curves, model_curve
from segment.studies.forms import load_form
from segment.studies.reference import CASES, DISPLACEMENT_COLUMNS
from segment.studies.validation_only import validation_only

__all__ = ["BAND_QUANTILES", "Population", "bands"]

BAND_QUANTILES = (5.0, 95.0)
"""The population band [%]."""


def bands(table: pd.DataFrame, by: list[str], value: str = "value",
          published: pd.DataFrame | None = None) -> pd.DataFrame:
    """Median, 5-95 % band, mean and SD (n - 1) of ``value`` over the members per group
    ``by``; with ``published`` (the same columns, one row per group) its value and ``z`` =
    (published - mean) / SD. ``members`` holds each group's member values (for figures)."""
    lo, hi = BAND_QUANTILES
    rows = []
    for key, g in table.groupby(by, sort=False):
        v = g[value].to_numpy(float)
        v = v[np.isfinite(v)]
        row = dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True))
        row.update(n=int(v.size),
                   median=float(np.median(v)) if v.size else math.nan,
                   q5=float(np.percentile(v, lo)) if v.size else math.nan,
                   q95=float(np.percentile(v, hi)) if v.size else math.nan,
                   mean=float(v.mean()) if v.size else math.nan,
                   sd=float(v.std(ddof=1)) if v.size > 1 else math.nan,
                   members=v.tolist())
        rows.append(row)
    out = pd.DataFrame(rows)
    if published is not None:
        out = out.merge(published[[*by, value]].rename(columns={value: "published"}), on=by,
                        how="left")
        with np.errstate(invalid="ignore", divide="ignore"):
            out["z_published"] = (out["published"] - out["mean"]) / out["sd"]
    return out


@dataclass(frozen=True, eq=False)
class Population:
    """Members (one model each) of a virtual population.

    Attributes
    ----------
    names : tuple of str
        Member labels (the specimens).
    models : tuple of Segment
    form : str
        The model form the members were calibrated in.
    fit : DataFrame
        The members' rows of ``population.csv`` (parameters, fit error), if known.
    published : Segment
        The published model the population is compared with.
    """

    names: tuple[str, ...]
    models: tuple
    form: str
    fit: pd.DataFrame
    published: object

    def __len__(self) -> int:
        return len(self.names)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_fits(cls, fits, model: Segment, *, form=None) -> Population:
        """The converged calibrations of ``fits`` (CurveCalibration, one per specimen) applied
        to ``model``'s form (the ``published`` model the population is compared with)."""
        fits = [f for f in fits if f.success]
        if not fits:
            raise ValueError("no converged calibration: an empty population")
        form = load_form(fits[0].form if form is None else form)
        fm = form.model(model)
        return cls(names=tuple(f.targets.label for f in fits),
                   models=tuple(form.space.apply(fm, f.x) for f in fits), form=form.name,
                   fit=population_table(fits), published=model)

    @classmethod
    def from_csv(cls, path, model: Segment, *, form=None) -> Population:
        """The converged rows of a ``population.csv`` (its ``form`` column names the form,
        unless ``form`` is given; its parameter columns are the form's space) applied to
        ``model``'s form (the ``published`` model the population is compared with)."""
        path = Path(path)
        table = pd.read_csv(path)
        for col in ("specimen", "form", "converged"):
            if col not in table.columns:
                raise ValueError(f"{path.name}: missing column {col!r}; expected the "
                                 "population.csv of segment calibrate --curves --each")
        forms = sorted(set(table["form"]))
        if form is None and len(forms) != 1:
            raise ValueError(f"{path.name}: one form per population, got {forms}")
        form = load_form(forms[0] if form is None else form)
        missing = [n for n in form.space.names if n not in table.columns]
        if missing:
            raise ValueError(f"{path.name}: no column for parameter(s) {missing} of form "
                             f"{form.name}")
        ok = table[table["converged"].astype(bool)].reset_index(drop=True)
        if ok.empty:
            raise ValueError(f"{path.name}: no converged member")
        fm = form.model(model)
        P = ok[list(form.space.names)].to_numpy(float)
        return cls(names=tuple(ok["specimen"].astype(str)),
                   models=tuple(form.space.apply(fm, p) for p in P), form=form.name,
                   fit=ok, published=model)

    @classmethod
    def from_folders(cls, folder, model: Segment) -> Population:
        """Every data folder under ``folder`` (``folder/<specimen>/``, as written by
        ``segment calibrate --curves --each``), read with the strict checks; ``model`` is the
        ``published`` model the population is compared with."""
        folder = Path(folder)
        subs = sorted(p for p in folder.iterdir() if (p / "ligaments.csv").is_file())
        if not subs:
            raise ValueError(f"{folder}: no data folder in it")
        fit = pd.read_csv(folder / "population.csv") if (folder / "population.csv").is_file() \
            else pd.DataFrame()
        form = str(fit["form"].iloc[0]) if len(fit) else "unknown"
        return cls(names=tuple(p.name for p in subs),
                   models=tuple(c5c6(data_dir=p) for p in subs), form=form,
                   fit=fit, published=model)

    # ------------------------------------------------------------------ what it says
    def _each(self):
        yield "published", self.published
        yield from zip(self.names, self.models, strict=True)

    def cases(self, cases=None) -> pd.DataFrame:
        """Every member (and ``published``) in the nine cases: member, case, component, unit,
        value (displacement from the member's unloaded pose [mm, deg]), main (the case's
        main component), converged."""
        cases = {c: LOAD_CASES[c] for c in (CASES if cases is None else cases)}
        rows = []
        for name, m in self._each():
            for case, load in cases.items():
                r = solve(m, load)
                d = r.displacement_from_unloaded
                for k, comp in enumerate(DISPLACEMENT_COLUMNS):
                    rows.append({"member": name, "case": case, "component": comp,
                                 "unit": "mm" if k < 3 else "deg",
                                 "value": float(d[k] if k < 3 else math.degrees(d[k])),
                                 "main": k == load.main_dof, "converged": r.converged})
        return pd.DataFrame(rows)

    def case_bands(self, table: pd.DataFrame | None = None) -> pd.DataFrame:
        """:func:`bands` of the main displacement per case, with the published model."""
        t = self.cases() if table is None else table
        main = t[t["main"]]
        pub = main[main["member"] == "published"]
        return bands(main[main["member"] != "published"], ["case", "component", "unit"],
                     published=pub)

    def ramps(self, cases=("FLX", "EXT"), *, to_scale: float = 10.0,
              steps: int = 100) -> pd.DataFrame:
        """Each member (and ``published``) ramped in ``cases`` to ``to_scale`` times the
        case's load with ligament rupture (:func:`segment.ramp`): first rupture and ultimate
        load [N m or N] and the first strip that broke (NaN and empty where none broke), the
        load where the ramp reached the model's validity limit (``limit_load``, NaN where
        not reached) with what it was (``limit``), and the ramp's message (``status``)."""
        rows = []
        for name, m in self._each():
            for case in cases:
                load = LOAD_CASES[case]
                r = ramp(m, load, to_scale=to_scale, steps=steps)
                unit = 1000.0 if load.main_dof >= 3 else 1.0
                nominal = abs(float(load.as_array()[load.main_dof])) / unit
                first = [e for e in r.events if e[1] == "ruptured"]
                rows.append({"member": name, "case": case,
                             "unit": "N m" if load.main_dof >= 3 else "N",
                             "first_rupture": nominal * r.first_rupture_scale,
                             "first_strip": first[0][2] if first else "",
                             "ultimate": nominal * r.ultimate_scale,
                             "limit_load": (nominal * r.limit.scale if r.limit is not None
                                            else math.nan),
                             "limit": r.limit.description if r.limit is not None else "",
                             "status": r.message})
        return pd.DataFrame(rows)

    def validation(self, *, geometry=None) -> dict:
        """Validation comparisons per member (and ``published``): ``moroney`` (the intact
        rotations of ``calibration_targets.csv``: value, target, SD and z), and
        ``flexion_stiffness`` and ``icr`` of :func:`segment.studies.validation_only.
        validation_only`."""
        targets = load_targets()
        rows = []
        for name, m in self._each():
            for case, config, qty, value, sd in zip(targets.cases, targets.configurations,
                                                    targets.quantities, targets.values,
                                                    targets.sd, strict=True):
                if config != "intact":
                    continue
                r = solve(m, LOAD_CASES[case])
                k = DISPLACEMENT_COLUMNS.index(qty)
                d = r.displacement_from_unloaded[k]
                got = float(d if k < 3 else math.degrees(d))
                rows.append({"member": name, "case": case, "quantity": qty, "value": got,
                             "target": float(value), "SD": float(sd),
                             "z": (got - value) / sd, "converged": r.converged})
        val = validation_only(dict(self._each()), geometry=geometry)
        return {"moroney": pd.DataFrame(rows), **val}

    def curves(self, curves=None) -> pd.DataFrame:
        """Every member's (and the published) model curve at the curves' levels of each mode
        (:func:`segment.studies.curves.model_curve`), from the origin (the unloaded pose):
        member, mode, moment_Nm, rotation_deg, converged."""
        curves = load_curves(curves)
        parts = []
        for name, m in self._each():
            for mode in curves.modes:
                lv = curves.levels(mode)
                c = model_curve(m, mode, lv[lv > 0])
                origin = pd.DataFrame({"mode": [mode], "moment_Nm": [0.0],
                                       "rotation_deg": [0.0], "converged": [True]})
                c = pd.concat([origin, c], ignore_index=True)   # from the unloaded pose
                c.insert(0, "member", name)
                parts.append(c)
        return pd.concat(parts, ignore_index=True)
