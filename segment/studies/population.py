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

import hashlib
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from segment.core.io import sha256_of
from segment.core.model import Segment
from segment.core.published import LOAD_CASES, c5c6
from segment.solvers.equilibrium import solve
from segment.solvers.ramp import ramp
from segment.studies.calibration.curve_fit import population_table
from segment.studies.calibration.folder import INPUTS_FILE, read_inputs
from segment.studies.calibration.population_file import POPULATION_FILE, read_population
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


def _form_label(forms) -> str:
    """The population's form: the one form, or ``"mixed (a, b)"``."""
    used = list(dict.fromkeys(forms))
    return used[0] if len(used) == 1 else f"mixed ({', '.join(used)})"


@dataclass(frozen=True, eq=False)
class Population:
    """Members (one model each) of a virtual population.

    Attributes
    ----------
    names : tuple of str
        Member labels (the specimens).
    models : tuple of Segment
    form : str
        The model form the members were calibrated in (``"mixed (a, b)"`` for a mixture,
        read only when asked with ``mixed=True``).
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
    def from_csv(cls, path, model: Segment, *, form=None, mixed: bool = False,
                 strict: bool = True) -> Population:
        """The converged rows of a ``population.csv``
        (:func:`~segment.studies.calibration.population_file.read_population`: the file's
        checks; its ``form`` column names each member's form, which must be ``form`` when
        given and one form for all unless ``mixed``; its parameter columns are the form's
        space) applied to ``model``'s form (the ``published`` model the population is compared
        with)."""
        table = read_population(path, form=form, mixed=mixed, strict=strict)
        ok = table.converged
        base = model
        built: dict[str, tuple] = {}
        models = []
        for _, row in ok.iterrows():
            if row["form"] not in built:
                f = load_form(row["form"])
                built[row["form"]] = (f, f.model(base))
            f, fm = built[row["form"]]
            p = row[list(f.space.names)].to_numpy(float)
            models.append(f.space.apply(fm, p))
        return cls(names=tuple(ok[table.label].astype(str)), models=tuple(models),
                   form=_form_label(table.forms), fit=ok, published=base)

    @classmethod
    def from_folders(cls, folder, model: Segment, *, mixed: bool = False,
                     strict: bool = True) -> Population:
        """Every data folder under ``folder`` (``folder/<member>/``, as written by
        ``segment calibrate --curves --each`` or ``--population``), read with the strict
        checks, each checked against what was recorded when it was written:

        * ``folder/population.csv`` (when present, checked by
          :func:`~segment.studies.calibration.population_file.read_population`): every folder
          has a row whose ``converged`` is true, every converged row has a folder;
        * the member's form (its ``curve_calibration_inputs.csv``, else its row) is the
          population's: one form for all unless ``mixed``; a form with a disc law needs the
          member's ``disc_law.csv`` with that law (else the member would load as the linear
          disc of eq. (1));
        * the checksums its ``curve_calibration_inputs.csv`` records (``file_sha256``: every
          table as written; ``form_file_sha256 disc_law.csv``: the form had a law) and the
          specimen it names (``fitted``) match the folder;
        * no two members are the same tables (one member counted twice).

        ``model`` is the ``published`` model the population is compared with. Every error
        names the member (and the file, line and column); ``strict`` as for
        :func:`segment.c5c6`.
        """
        folder = Path(folder)
        if not folder.is_dir():
            raise ValueError(f"{folder}: no such folder")
        subs = sorted(p for p in folder.iterdir() if (p / "ligaments.csv").is_file())
        if not subs:
            raise ValueError(f"{folder}: no data folder in it")
        table = None
        if (folder / POPULATION_FILE).is_file():
            table = read_population(folder / POPULATION_FILE, mixed=mixed, strict=strict)
            rows = {str(r[table.label]): r for _, r in table.frame.iterrows()}
            for p in subs:
                r = rows.get(p.name)
                if r is None:
                    raise ValueError(f"member {p.name}: the folder {p.name}/ has no row in "
                                     f"{POPULATION_FILE}: not a member of this population "
                                     f"(copied in from another?)")
                if not r["converged"]:
                    raise ValueError(f"member {p.name}: {table.where(p.name)} records "
                                     f"converged = False, but its folder exists (from an "
                                     f"earlier run?)")
            have = {p.name for p in subs}
            missing = [m for m in table.converged[table.label].astype(str) if m not in have]
            if missing:
                raise ValueError(f"{folder / POPULATION_FILE}: converged member(s) "
                                 f"{missing} have no folder in {folder.name}/")
        names, models, forms, seen, laws = [], [], [], {}, {}
        for p in subs:
            inputs = read_inputs(p)
            row_form = None if table is None else str(rows[p.name]["form"])
            form = inputs.get("form", row_form)
            who = f"member {p.name}"
            if row_form is not None and form != row_form:
                raise ValueError(f"{who}: {p.name}/{INPUTS_FILE} says form {form!r}, "
                                 f"{table.where(p.name)} says {row_form!r}")
            fitted = inputs.get("fitted")
            if fitted is not None and fitted != p.name:
                raise ValueError(f"{who}: {p.name}/{INPUTS_FILE} says it was fitted to "
                                 f"{fitted!r}: the folder of another specimen?")
            for key, recorded in inputs.items():
                kind, _, name = key.partition(" ")
                target = p / name
                if kind == "file_sha256":
                    if not target.is_file():
                        raise ValueError(f"{who}: {name} is missing, but {INPUTS_FILE} "
                                         f"records its sha256 (deleted after the calibration "
                                         f"wrote it)")
                    got = sha256_of(target)
                    if got != recorded:
                        raise ValueError(f"{who}: {name} differs from what the calibration "
                                         f"wrote (sha256 {got[:12]}, {INPUTS_FILE} records "
                                         f"{recorded[:12]}): edited or corrupted")
                elif kind == "form_file_sha256" and name == "disc_law.csv" \
                        and not target.is_file():
                    raise ValueError(f"{who}: no disc_law.csv, but its form {form!r} has a "
                                     f"disc law ({INPUTS_FILE} records its sha256): the "
                                     f"member would load as the linear disc of eq. (1)")
            try:
                m = c5c6(data_dir=p, strict=strict)
            except (ValueError, OSError) as exc:
                raise ValueError(f"{who} ({p.name}/): {exc}") from None
            law = None
            if form not in (None, "unknown"):
                try:
                    f = load_form(form)
                except (ValueError, OSError) as exc:
                    raise ValueError(f"{who}: unknown form {form!r} ({exc})") from None
                if f.disc_law_path is not None:
                    if form not in laws:
                        laws[form] = f.model(model).disc.law
                    law = laws[form]
            if law is not None and tuple(m.disc.law) != tuple(law):
                what = ("no disc_law.csv" if not (p / "disc_law.csv").is_file()
                        else f"the disc law {sorted(set(m.disc.law))}")
                raise ValueError(f"{who}: {what}, but its form {form!r} has the disc law "
                                 f"{sorted(set(law) - {'linear'})} (a member without it loads "
                                 f"as the linear disc of eq. (1))")
            digest = hashlib.sha256()
            for t in sorted(x for x in p.glob("*.csv") if not x.name.startswith("curve_")):
                digest.update(t.name.encode() + b"\0" + t.read_bytes())
            key = digest.hexdigest()
            if key in seen:
                raise ValueError(f"{who}: its tables are those of member {seen[key]} (one "
                                 f"member counted twice)")
            seen[key] = p.name
            names.append(p.name)
            models.append(m)
            forms.append(form or "unknown")
        used = list(dict.fromkeys(forms))
        if len(used) > 1 and not mixed:
            by = {f: [n for n, g in zip(names, forms, strict=True) if g == f] for f in used}
            raise ValueError(f"{folder}: the members are of different forms ("
                             + "; ".join(f"{f}: {', '.join(m)}" for f, m in by.items())
                             + "); a population has one form (pass mixed=True to compare a "
                               "mixture)")
        fit = table.converged if table is not None else pd.DataFrame()
        return cls(names=tuple(names), models=tuple(models), form=_form_label(forms),
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
