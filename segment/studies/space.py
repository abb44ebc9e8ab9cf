r"""The uncertain parameters of the model as data: ``data/parameter_space.csv``.

One row per parameter: ``name``, the ``element`` and ``field`` it changes, ``unit``,
``nominal``, ``lower``, ``upper``, the prior ``distribution`` (``uniform``, ``normal`` or
``lognormal``) with ``dist_mu`` and ``dist_sigma`` (mean and SD of the parameter for
``normal``, of its logarithm for ``lognormal``; empty for ``uniform``), and ``source``: the
publication the range comes from, or the reasoning, with the word "assumed", when it is an
assumption. Every prior is truncated to ``[lower, upper]``.

Elements and fields (several elements separated by ``;`` share one parameter)::

    disc:<x|y|z|phi_x|phi_y|phi_z>      stiffness_scale   factor on k of both signs (Table 2)
                                        stiffness_scale_pos, stiffness_scale_neg
                                                          factor on k+ (q >= 0) or k- only
    disc:<phi_x|phi_y|phi_z>            zone_pos_deg, zone_neg_deg, zone_ratio
                                                          neutral-zone law: half-widths [deg]
                                                          and stiffness ratio [-]
                                        angle_scale_pos_deg, angle_scale_neg_deg
                                                          fw35 law: angle scales s [deg]
    ligament:<name>                     l0_mm             rest length [mm] (Table 4)
                                        ref_strain        rest length by the strain at the
                                                          reference pose, l0 = l_ref / (1 + p)
                                                          (Blankevoort; Ligament.
                                                          with_reference_strain) [-]
                                        stiffness_scale   factor on the force axis (Table 3)
    facet:<left|right>                  gap_mm            gap at the reference pose [mm]
                                        inclination_deg   C6 facet angle to the transverse plane
                                        radius_mm         radius of both faces [mm]
                                        blend_C           blending constant C

A law's parameters (zone, angle scale) need the model's disc coordinate on that law
(:mod:`segment.elements.disc`, ``disc_law.csv``); :meth:`ParameterSpace.pack` and
:meth:`ParameterSpace.apply` say so when it is not. A ligament's rest length is set by
``l0_mm`` or ``ref_strain``, not both.

Plausibility (issue 21), as for the model tables (:data:`segment.io.PLAUSIBLE`): the ``unit`` must
be the field's (:data:`FIELD_UNITS`); ``nominal``, ``lower`` and ``upper`` must lie within the
plausible range of the table column the field changes (:data:`FIELD_PLAUSIBLE`: a rest length
in metres, an inclination in radians or a stiffness factor in percent falls outside); a normal or
lognormal prior must keep at least :data:`MIN_PRIOR_MASS` of its mass within ``[lower, upper]``
(computed from the prior, not assumed: a mean typed in another unit, or a lognormal's median
typed where ``ln(median)`` belongs, leaves far less). ``strict=False`` (CLI:
``--allow-implausible``) turns these into :class:`~segment.io.ImplausibleDataWarning`\ s; a unit
that contradicts the field and the hard limits (a length > 0, an inclination within (-90, 90))
are errors either way.

One model (issue 21): a study runs on the model it is given. The space gives the ranges and the
priors; the nominal value of each parameter is the model's own (:meth:`ParameterSpace.for_model`:
1 for a stiffness factor, the model's rest length, gap, inclination, radius or C otherwise).
Where the file's ``nominal`` column says something else, the model's value is used and a
:class:`ModelNominalWarning` names every such parameter (a stated re-reading, not an error: a
data folder copied with its space file and then edited stays usable). A model value outside
the parameter's ``[lower, upper]`` is an error: that space does not contain the model.

This file is the one definition of the uncertain parameters: the one-at-a-time tornado study
(:func:`segment.validation.sensitivity_variants`), the uncertainty bands
(:func:`segment.uncertainty.uncertainty_bands`), the exact sensitivities
(:mod:`segment.sensitivity`) and the Sobol study (:mod:`segment.sobol`) all read it.

Two layers: :meth:`ParameterSpace.apply` builds one :class:`~segment.model.Segment` (readable,
slow); :meth:`ParameterSpace.pack` writes M parameter sets straight into the packed arrays of
:func:`segment.tangent.pack` (``glob (M, 52)``, ``lig (M, n, 13)``, ``fac (M, m, 15)``), on top
of the model's own packing, so ligament rows the packing adds (e.g. strips of one ligament)
follow their ligament. ``pack`` is plain numpy and accepts complex parameter values: the
complex step through it is the reference the compiled :meth:`pack_derivative` is tested
against.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from segment._checks import check_count, check_memory, check_seed
from segment.core.io import (
    FACET_SIDES,
    LIGAMENT_NAMES,
    PLAUSIBLE,
    ImplausibleDataWarning,
    PlausibleRange,
    _Table,
    data_dir,
    parse_number,
)
from segment.elements.disc import DOF_NAMES
from segment.elements.facet import c6_normals, rows_in_frame
from segment.elements.tangent import (
    F_BLEND,
    F_C1,
    F_C2,
    F_N1,
    F_N2,
    F_R1,
    F_R2,
    G_DISC,
    G_K_NEG,
    G_K_POS,
    L_F,
    L_L0,
)
from segment.studies.packing import DISC_LAW_FIELDS, disc_law_slot, ligament_rows, pack_plan

__all__ = ["DISTRIBUTIONS", "FIELDS", "FIELD_PLAUSIBLE", "FIELD_UNITS", "MIN_PRIOR_MASS",
           "ModelNominalWarning", "ParameterSpace", "default_space_path", "load_space"]

FIELDS = {
    "disc": ("stiffness_scale", "stiffness_scale_pos", "stiffness_scale_neg",
             *DISC_LAW_FIELDS),
    "ligament": ("l0_mm", "stiffness_scale", "ref_strain"),
    "facet": ("gap_mm", "inclination_deg", "radius_mm", "blend_C"),
}
"""Fields each element kind accepts."""
DISTRIBUTIONS = ("uniform", "normal", "lognormal")
_POSITIVE = ("stiffness_scale", "stiffness_scale_pos", "stiffness_scale_neg", "l0_mm",
             "radius_mm", "zone_ratio", "angle_scale_pos_deg", "angle_scale_neg_deg")
COLUMNS = ("name", "element", "field", "unit", "nominal", "lower", "upper", "distribution",
           "dist_mu", "dist_sigma", "source")
_FACET_FIELD = {"gap_mm": "gap", "inclination_deg": "inclination_deg", "radius_mm": "radius",
                "blend_C": "blend"}
FIELD_UNITS = {"stiffness_scale": "-", "stiffness_scale_pos": "-", "stiffness_scale_neg": "-",
               "l0_mm": "mm", "ref_strain": "-", "gap_mm": "mm", "inclination_deg": "deg",
               "radius_mm": "mm", "blend_C": "-", "zone_pos_deg": "deg", "zone_neg_deg": "deg",
               "zone_ratio": "-", "angle_scale_pos_deg": "deg", "angle_scale_neg_deg": "deg"}
"""The ``unit`` each field's rows must state."""
STIFFNESS_SCALE_RANGE = PlausibleRange(
    0.05, 20.0, "-", "a factor on the model's stiffness; the tables' plausible stiffness ranges "
    "reach 1.2-1.5 decades either side of the published values (disc 1-1e4 N/mm around "
    "50-492 N/mm, ligament F_max 3-2000 N around 34-115 N), and 0.05-20 keeps a factor within "
    "them (a percentage, 80 for 0.8, falls outside)")
REF_STRAIN_RANGE = PlausibleRange(
    -0.8, 0.8, "-", "assumed: the strain of a ligament at its reference length as a fraction "
    "(the model forms of data/forms range over -0.4 to 0.1); a strain in percent, 10 for 0.1, "
    "falls outside")
ZONE_RANGE = PlausibleRange(
    0.0, 30.0, "deg", "assumed: a neutral zone is a part of the range of motion, and the whole "
    "flexion-extension range of a cervical motion segment is about 20-30 deg at 3.5 N m "
    "(the packaged specimen curves reach 8-15 deg per direction); an angle in radians lies "
    "inside and cannot be told from this range")
ZONE_RATIO_RANGE = PlausibleRange(
    1e-3, 1.0, "-", "the zone's stiffness as a fraction of the coordinate's (at most 1: the "
    "zone is the compliant part); below 1e-3 the zone has practically no stiffness, which "
    "the law's regularity does not resolve (assumed)")
ANGLE_SCALE_RANGE = PlausibleRange(
    0.5, 1000.0, "deg", "assumed: the angle scale of Fritzkowski and Walczak's eq. (35) law; "
    "the model form fw35 ranges over 1-600 deg (1 rad = 57.3 deg makes the law's initial "
    "slope the table's); an angle in radians below 0.5 deg falls outside")
FIELD_PLAUSIBLE: dict[str, tuple[str, PlausibleRange]] = {
    "stiffness_scale": ("", STIFFNESS_SCALE_RANGE),
    "stiffness_scale_pos": ("", STIFFNESS_SCALE_RANGE),
    "stiffness_scale_neg": ("", STIFFNESS_SCALE_RANGE),
    "ref_strain": ("", REF_STRAIN_RANGE),
    "zone_pos_deg": ("disc_law.csv zone", ZONE_RANGE),
    "zone_neg_deg": ("disc_law.csv zone", ZONE_RANGE),
    "zone_ratio": ("disc_law.csv zone ratio", ZONE_RATIO_RANGE),
    "angle_scale_pos_deg": ("disc_law.csv angle scale", ANGLE_SCALE_RANGE),
    "angle_scale_neg_deg": ("disc_law.csv angle scale", ANGLE_SCALE_RANGE),
    "l0_mm": ("ligaments.csv l0_mm", PLAUSIBLE[("ligaments.csv", "l0_mm")]),
    "gap_mm": ("facets.csv gap_mm", PLAUSIBLE[("facets.csv", "gap_mm")]),
    "inclination_deg": ("facets.csv inclination_deg",
                        PLAUSIBLE[("facets.csv", "inclination_deg")]),
    "radius_mm": ("facets.csv radius_c6_mm", PLAUSIBLE[("facets.csv", "radius_c6_mm")]),
    "blend_C": ("facets.csv blend_C", PLAUSIBLE[("facets.csv", "blend_C")]),
}
"""Per field: the model-table column it changes and that column's plausible range
(:data:`segment.io.PLAUSIBLE`), which the bounds, the nominal value and every parameter set
must respect; the stiffness factors have a range of their own."""
MIN_PRIOR_MASS = 0.01
"""A truncated normal or lognormal prior keeps at least this share of its mass within
[lower, upper]. The packaged priors keep 95 % (bounds at +-2 SD); a prior with less than 1 %
inside is practically an exponential piled against one bound, which no published range means:
a mean typed in another unit (1000 for bounds 32-54) or a lognormal's median typed as its
``dist_mu`` (16.7 for ln 16.7 = 2.8) leaves 1e-120 and less, and its samples are noise of the
inverse CDF's far tail."""
SAME_VALUE_RTOL = 1e-9
"""A model value and a file's nominal value are the same within this relative tolerance (the
facet geometry is recovered from the packed discs with rounding)."""


class ModelNominalWarning(UserWarning):
    """A space file's nominal value differs from the model's; the study uses the model's."""


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= SAME_VALUE_RTOL * max(1.0, abs(a), abs(b))


def _hard_limit(field: str) -> tuple[float, float, bool]:
    """(lower, upper, open) bounds a field's values must respect whatever ``strict`` says."""
    if field in _POSITIVE:      # zone_ratio's upper limit 1 is checked apart (closed there)
        return 0.0, math.inf, True
    if field in ("gap_mm", "blend_C", "zone_pos_deg", "zone_neg_deg"):
        return 0.0, math.inf, False
    if field == "ref_strain":
        return -1.0, math.inf, True     # l0 = l_ref / (1 + p)
    return -90.0, 90.0, True             # inclination_deg


def _element_values(model, kind: str, key: str, field: str, ligs: dict,
                    facets: dict) -> list[tuple[str, float]]:
    """(name, value) of ``field`` in one element of ``model`` (for
    :meth:`ParameterSpace.model_values`; empty for a disc-law field of a coordinate that is
    not on that law)."""
    if field in DISC_LAW_FIELDS:
        try:
            index, factor = disc_law_slot(model, key, field)
        except ValueError:
            return []
        d = DOF_NAMES.index(key)
        return [(f"disc {key} {field}",
                 model.disc.law_parameters[d][index - G_DISC - 1 - 4 * d] / factor)]
    if kind == "ligament" and field == "ref_strain":
        x = ligs[key]
        return [(f"ligament {key} reference strain",
                 x.reference_length(model.reference) / x.l0 - 1.0)]
    if kind == "ligament":
        return [(f"ligament {key} l0", ligs[key].l0)]
    if field == "radius_mm":
        return [(f"facet {key} radius_c6", facets[key]["radius_c6"]),
                (f"facet {key} radius_c5", facets[key]["radius_c5"])]
    return [(f"facet {key} {_FACET_FIELD[field]}", facets[key][_FACET_FIELD[field]])]


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


def default_space_path() -> Path:
    """The packaged ``parameter_space.csv``."""
    return data_dir() / "parameter_space.csv"


def _keys(kind: str) -> tuple[str, ...]:
    return {"disc": DOF_NAMES, "ligament": LIGAMENT_NAMES, "facet": FACET_SIDES}[kind]


@dataclass(frozen=True, eq=False)
class ParameterSpace:
    """The uncertain parameters: names, targets, bounds and priors (see the module doc).

    Build it with :meth:`from_csv`. Arrays have shape (D,), one entry per parameter, in file
    order; parameter sets are arrays (M, D) in the units of the ``unit`` column.
    """

    names: tuple[str, ...]
    targets: tuple[tuple[tuple[str, str], ...], ...]
    fields: tuple[str, ...]
    units: tuple[str, ...]
    nominal: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    distributions: tuple[str, ...]
    mu: np.ndarray
    sigma: np.ndarray
    sources: tuple[str, ...]
    path: str = "parameter_space.csv"
    lines: tuple[int, ...] = ()
    """File line of each parameter's row (1 = header; empty for a space built by hand)."""
    sha256: str = ""
    """Checksum of the file as read (empty for a space built by hand)."""

    @property
    def dim(self) -> int:
        """Number of parameters D."""
        return len(self.names)

    # ------------------------------------------------------------------ reading
    @classmethod
    def from_csv(cls, path: str | Path | None = None, *, strict: bool = True) -> ParameterSpace:
        r"""Read and check a parameter-space file (default: the packaged one).

        Parameters
        ----------
        path : str or path-like, optional
        strict : bool
            True (default): bounds or a nominal value outside the plausible range of their
            field (:data:`FIELD_PLAUSIBLE`) and a prior with less than :data:`MIN_PRIOR_MASS`
            within its bounds are errors; False: :class:`~segment.io.ImplausibleDataWarning`\ s.

        Raises
        ------
        ValueError
            One message with every error of the file (up to ``io.MAX_ERRORS``), each naming
            the line, the row (1 = first data row), the column and the value (the reader of
            :mod:`segment.io`: a byte-order mark is accepted, a ';'- or tab-separated file gets
            a hint): missing column, empty or duplicate name, unknown element or field, a target
            set twice, a non-number, lower > upper, nominal outside the bounds, a unit that is
            not the field's, an unknown distribution or one without its parameters, an empty
            source, and the plausibility checks above.
        """
        if not isinstance(strict, bool):
            raise TypeError(f"strict must be True or False, got {strict!r}")
        path = default_space_path() if path is None else Path(path)
        t = _Table(path, tuple(c for c in COLUMNS if c != "source"), collect=True,
                   what="parameter-space", strict=strict)

        class _RowError(Exception):
            pass

        def err(i, col, msg):
            # recorded in the table (all errors of the file raise together at the end); the
            # rest of this row is skipped, its checks depend on the failed cell
            t.error(i, col, msg)
            return _RowError()

        def number(i, row, col):
            raw = row[col]
            try:
                v = parse_number(raw)
            except ValueError as exc:
                raise err(i, col, str(exc)) from None
            if not math.isfinite(v):
                raise err(i, col, f"expected a finite number, got {raw!r}")
            return v

        out = {k: [] for k in ("names", "targets", "fields", "units", "nominal", "lower",
                               "upper", "distributions", "mu", "sigma", "sources", "lines")}
        seen_targets: dict[tuple[str, str, str], int] = {}
        seen_names: dict[str, int] = {}
        for i, row in t.rows():
            if i in t.broken_rows:
                continue
            try:
                pname = row["name"]
                if not pname:
                    raise err(i, "name", "empty")
                if pname in seen_names:
                    raise err(i, "name", f"duplicate parameter {pname!r} (already in row "
                                         f"{seen_names[pname]})")
                seen_names[pname] = i
                targets = []
                for part in row["element"].split(";"):
                    kind, _, key = part.strip().partition(":")
                    if kind not in FIELDS or not key:
                        raise err(i, "element", f"unknown element {part.strip()!r}; expected "
                                                "disc:<dof>, ligament:<name> or facet:<side>")
                    if key not in _keys(kind):
                        raise err(i, "element", f"unknown {kind} {key!r}; expected one of "
                                                f"{', '.join(_keys(kind))}")
                    targets.append((kind, key))
                kinds = {k for k, _ in targets}
                if len(kinds) != 1:
                    raise err(i, "element", f"one parameter changes one kind of element, got "
                                            f"{row['element']!r}")
                kind = targets[0][0]
                field = row["field"]
                if field not in FIELDS[kind]:
                    raise err(i, "field", f"unknown field {field!r} for a {kind}; expected one of "
                                          f"{', '.join(FIELDS[kind])}")
                if field in DISC_LAW_FIELDS and any(
                        key not in ("phi_x", "phi_y", "phi_z") for _, key in targets):
                    raise err(i, "element", f"{field} is a parameter of a rotation's law: "
                                            f"expected disc:phi_x, phi_y or phi_z, got "
                                            f"{row['element']!r}")
                for kind_, key in targets:
                    tk = (kind_, key, field)
                    if tk in seen_targets:
                        raise err(i, "element", f"{kind_}:{key} {field} is already set by row "
                                                f"{seen_targets[tk]}")
                    other = {"l0_mm": "ref_strain", "ref_strain": "l0_mm"}.get(field)
                    if other and (kind_, key, other) in seen_targets:
                        raise err(i, "field", f"the rest length of {kind_}:{key} is already set "
                                              f"by {other} in row "
                                              f"{seen_targets[(kind_, key, other)]}; one of "
                                              "l0_mm and ref_strain per ligament")
                    seen_targets[tk] = i
                nominal, lower, upper = (number(i, row, c) for c in ("nominal", "lower", "upper"))
                if not lower < upper:
                    raise err(i, "lower", f"lower must be < upper, got lower {lower:g} and upper "
                                          f"{upper:g}")
                if not lower <= nominal <= upper:
                    raise err(i, "nominal", f"must lie within [lower, upper] = [{lower:g}, "
                                            f"{upper:g}], got {nominal:g}")
                if field in _POSITIVE and not lower > 0:
                    raise err(i, "lower", f"{field} must stay > 0, got lower {lower:g}")
                if field in ("zone_pos_deg", "zone_neg_deg") and lower < 0:
                    raise err(i, "lower", f"{field} must stay >= 0, got lower {lower:g}")
                if field == "zone_ratio" and upper > 1:
                    raise err(i, "upper", f"zone_ratio must stay <= 1 (the zone is the "
                                          f"compliant part), got upper {upper:g}")
                if field == "ref_strain" and not lower > -0.9:
                    raise err(i, "lower", f"ref_strain must stay > -0.9 (a rest length at most "
                                          f"10 times the reference length), got lower "
                                          f"{lower:g}")
                if field == "gap_mm" and lower < 0:
                    raise err(i, "lower", f"gap_mm must stay >= 0, got lower {lower:g}")
                if field == "blend_C" and lower < 0:
                    raise err(i, "lower", f"blend_C must stay >= 0, got lower {lower:g}")
                if field == "inclination_deg" and not (-90 < lower and upper < 90):
                    raise err(i, "lower", f"inclination_deg must stay within (-90, 90), got "
                                          f"[{lower:g}, {upper:g}]")
                dist = row["distribution"]
                if dist not in DISTRIBUTIONS:
                    raise err(i, "distribution", f"unknown distribution {dist!r}; expected one of "
                                                 f"{', '.join(DISTRIBUTIONS)}")
                mu = sigma = math.nan
                if dist != "uniform":
                    for col in ("dist_mu", "dist_sigma"):
                        if not row[col]:
                            what = ("mean and SD of ln(value)" if dist == "lognormal"
                                    else "mean and SD")
                            raise err(i, col, f"a {dist} prior needs dist_mu and dist_sigma "
                                              f"({what}), got an empty cell")
                    mu, sigma = number(i, row, "dist_mu"), number(i, row, "dist_sigma")
                    if not sigma > 0:
                        raise err(i, "dist_sigma", f"must be > 0, got {sigma:g}")
                    if dist == "lognormal" and not lower > 0:
                        raise err(i, "lower", f"a lognormal prior needs lower > 0, got {lower:g}")
                else:
                    for col in ("dist_mu", "dist_sigma"):
                        if row[col]:
                            raise err(i, col, f"a uniform prior takes no parameters (its bounds "
                                              f"are lower and upper), got {row[col]!r}")
                unit = FIELD_UNITS[field]
                if row["unit"] != unit:
                    raise err(i, "unit", f"{row['unit']!r} is not the unit of {field} (expected "
                                         f"{unit!r}; the values must be in it)")
                column, rng = FIELD_PLAUSIBLE[field]
                of = f"{field} ({column})" if column else field
                for col, v in (("nominal", nominal), ("lower", lower), ("upper", upper)):
                    if not rng.lower <= v <= rng.upper:
                        t.implausible(i, col, f"{v:g} {unit} is outside the plausible range "
                                      f"{rng.lower:g} to {rng.upper:g} {unit} of {of} "
                                      f"({rng.reason})")
                if dist != "uniform":
                    mass = prior_mass(dist, mu, sigma, lower, upper)
                    if not mass >= MIN_PRIOR_MASS:
                        center = math.exp(mu) if dist == "lognormal" else mu
                        col = "dist_mu" if not lower <= center <= upper else "dist_sigma"
                        what = (f"median exp({mu:g}) = {center:.4g}, log-SD {sigma:g}"
                                if dist == "lognormal" else f"mean {mu:g}, SD {sigma:g}")
                        t.implausible(i, col, f"the {dist} prior ({what}) keeps "
                                      f"{mass:.2g} of its mass within [lower, upper] = "
                                      f"[{lower:g}, {upper:g}], less than MIN_PRIOR_MASS "
                                      f"{MIN_PRIOR_MASS:g} (a mean in another unit"
                                      + (", or the median typed where ln(median) belongs?)"
                                         if dist == "lognormal" else "?)"))
            except _RowError:
                continue
            if not t.ok(i):      # e.g. an empty source
                continue
            out["names"].append(pname)
            out["targets"].append(tuple(targets))
            out["fields"].append(field)
            out["units"].append(row["unit"])
            out["nominal"].append(nominal)
            out["lower"].append(lower)
            out["upper"].append(upper)
            out["distributions"].append(dist)
            out["mu"].append(mu)
            out["sigma"].append(sigma)
            out["sources"].append(row["source"])
            out["lines"].append(t.line_of[i])
        t.finish()
        arrays = {}
        for k in ("nominal", "lower", "upper", "mu", "sigma"):
            a = np.array(out[k], dtype=float)
            a.setflags(write=False)
            arrays[k] = a
        return cls(names=tuple(out["names"]), targets=tuple(out["targets"]),
                   fields=tuple(out["fields"]), units=tuple(out["units"]),
                   distributions=tuple(out["distributions"]), sources=tuple(out["sources"]),
                   path=str(path), lines=tuple(out["lines"]),
                   sha256=hashlib.sha256(path.read_bytes()).hexdigest(), **arrays)

    def table(self):
        """The space as a DataFrame (one row per parameter)."""
        import pandas as pd

        return pd.DataFrame({
            "name": self.names,
            "element": [";".join(f"{k}:{x}" for k, x in t) for t in self.targets],
            "field": self.fields, "unit": self.units, "nominal": self.nominal,
            "lower": self.lower, "upper": self.upper, "distribution": self.distributions,
            "dist_mu": self.mu, "dist_sigma": self.sigma, "source": self.sources})

    def subset(self, names) -> ParameterSpace:
        """A space with only the named parameters (in the given order)."""
        names = list(names)
        unknown = [n for n in names if n not in self.names]
        if unknown:
            raise ValueError(f"unknown parameter(s) {unknown}; {Path(self.path).name} has "
                             f"{list(self.names)}")
        idx = [self.names.index(n) for n in names]
        return ParameterSpace(
            names=tuple(names), targets=tuple(self.targets[i] for i in idx),
            fields=tuple(self.fields[i] for i in idx), units=tuple(self.units[i] for i in idx),
            nominal=self.nominal[idx], lower=self.lower[idx], upper=self.upper[idx],
            distributions=tuple(self.distributions[i] for i in idx), mu=self.mu[idx],
            sigma=self.sigma[idx], sources=tuple(self.sources[i] for i in idx), path=self.path,
            lines=tuple(self.lines[i] for i in idx) if self.lines else ())

    # ------------------------------------------------------------------ priors
    def ppf(self, u) -> np.ndarray:
        """Map points of the unit cube (M, D) to parameter sets (M, D) through each truncated
        prior's inverse CDF (uniform: ``lower + u (upper - lower)``)."""
        from scipy import stats

        u = np.array(u, dtype=float)
        if u.ndim != 2 or u.shape[1] != self.dim:
            raise ValueError(f"unit-cube points must have shape (M, {self.dim}), got {u.shape}")
        if not np.all((u >= 0) & (u <= 1)):
            raise ValueError("unit-cube points must lie in [0, 1]")
        out = np.empty_like(u)
        for j, dist in enumerate(self.distributions):
            lo, hi = self.lower[j], self.upper[j]
            if dist == "uniform":
                out[:, j] = lo + u[:, j] * (hi - lo)
                continue
            if dist == "normal":
                a, b = (lo - self.mu[j]) / self.sigma[j], (hi - self.mu[j]) / self.sigma[j]
                z = stats.truncnorm.ppf(u[:, j], a, b)
                out[:, j] = self.mu[j] + self.sigma[j] * z
            else:
                a = (math.log(lo) - self.mu[j]) / self.sigma[j]
                b = (math.log(hi) - self.mu[j]) / self.sigma[j]
                z = stats.truncnorm.ppf(u[:, j], a, b)
                out[:, j] = np.exp(self.mu[j] + self.sigma[j] * z)
            if not np.all(np.isfinite(out[:, j])):
                raise ValueError(f"{self._where(j)}: the {dist} prior of {self.names[j]!r} "
                                 f"cannot be sampled within [{lo:g}, {hi:g}] (its mass there "
                                 f"is {prior_mass(dist, self.mu[j], self.sigma[j], lo, hi):.2g})")
            np.clip(out[:, j], lo, hi, out=out[:, j])
        return out

    def sample(self, n: int, *, seed: int | None = 0) -> np.ndarray:
        """``n`` independent draws (n, D) from the truncated priors.

        ``n`` is an integer >= 1 whose sets (and their unit-cube points) fit in the memory
        available (:func:`segment._checks.check_memory`); ``seed`` None or an integer in
        [0, 2**32 - 1].
        """
        n = check_count(n, "n")
        seed = check_seed(seed)
        check_memory(16.0 * n * self.dim, f"n = {n:,}: {n:,} parameter sets of {self.dim} "
                     "parameters", hint="lower n")
        return self.ppf(np.random.default_rng(seed).random((n, self.dim)))

    def _where(self, j: int) -> str:
        """``"<file>, line L (row i)"`` of parameter ``j`` (the file alone for a space built
        by hand)."""
        name = Path(self.path).name
        if not self.lines:
            return name
        line = self.lines[j]
        return f"{name}, line {line} (row {line - 1})"

    def check(self, P, *, strict: bool | None = True) -> np.ndarray:
        """``P`` as a float array (M, D); an error naming the first bad entry.

        Parameters
        ----------
        P : array_like (M, D) or (D,)
            Parameter sets in the space's units (real numbers; strings, booleans and complex
            numbers are a TypeError naming ``P``).
        strict : bool or None
            True (default): a value outside the plausible range of its field
            (:data:`FIELD_PLAUSIBLE`, e.g. an inclination of 1e6 deg or one in radians) is an
            error; False: it is used, with one :class:`~segment.io.ImplausibleDataWarning`;
            None: not checked (:meth:`apply`, :meth:`pack` and :meth:`pack_derivative`, whose
            callers, the studies, have checked it).
            Values outside a field's hard limits (a length <= 0, an inclination outside
            (-90, 90) deg) are errors either way. Values outside ``[lower, upper]`` are
            accepted: the bounds are the priors' truncation, not a limit of the model.
        """
        raw = np.asarray(P) if not isinstance(P, np.ndarray) else P
        if raw.dtype.kind not in "iuf":
            raise TypeError(f"P must be an array of real numbers (M, {self.dim}), got dtype "
                            f"{raw.dtype}" + (f" ({P!r})" if raw.dtype.kind == "O" and
                                              raw.size < 4 else ""))
        P = np.array(raw, dtype=float)
        if P.ndim == 1:
            P = P[None, :]
        if P.ndim != 2 or P.shape[1] != self.dim:
            raise ValueError(f"parameter sets must have shape (M, {self.dim}) (the parameters "
                             f"of {Path(self.path).name}), got {P.shape}")
        bad = ~np.isfinite(P)
        if bad.any():
            m, j = np.argwhere(bad)[0]
            raise ValueError(f"parameter set {m}, {self.names[j]!r}: expected a finite number, "
                             f"got {P[m, j]}")
        implausible = []
        for j, field in enumerate(self.fields):
            lo, hi, open_ = _hard_limit(field)
            col = P[:, j]
            out = ((col <= lo) | (col >= hi)) if open_ else ((col < lo) | (col > hi))
            if out.any():
                m = int(np.argmax(out))
                rel = (f"must be > {lo:g}" if hi == math.inf and open_ else
                       f"must be >= {lo:g}" if hi == math.inf else
                       f"must lie within ({lo:g}, {hi:g})")
                raise ValueError(f"parameter set {m}, {self.names[j]!r}: {field} {rel}, got "
                                 f"{P[m, j]:g}")
            if field == "zone_ratio" and (P[:, j] > 1).any():
                m = int(np.argmax(P[:, j] > 1))
                raise ValueError(f"parameter set {m}, {self.names[j]!r}: zone_ratio must lie "
                                 f"in (0, 1], got {P[m, j]:g}")
            _, rng = FIELD_PLAUSIBLE[field]
            out = (col < rng.lower) | (col > rng.upper)
            if strict is not None and out.any():
                m = int(np.argmax(out))
                implausible.append(f"parameter set {m}, {self.names[j]!r}: {P[m, j]:g} "
                                   f"{rng.unit} is outside the plausible range "
                                   f"{rng.lower:g} to {rng.upper:g} {rng.unit} of {field} "
                                   f"({rng.reason})")
        if implausible:
            more = f" (and {len(implausible) - 1} more parameters)" if len(implausible) > 1 \
                else ""
            if strict:
                raise ValueError(implausible[0] + more + "; pass strict=False to accept it")
            warnings.warn(implausible[0] + more, ImplausibleDataWarning, stacklevel=3)
        return P

    # ------------------------------------------------------------------ one model
    def model_values(self, model) -> np.ndarray:
        """Each parameter's value in ``model`` (D,): 1 for a stiffness factor (a factor on the
        model's own stiffness); the rest length, reference strain (``l_ref / l0 - 1``), gap,
        inclination, radius, blending constant or disc-law parameter of the element(s) it
        changes otherwise; NaN where the model has none of them (e.g. the facets of a model
        without facets, or a law parameter of a coordinate that is not on that law) and where
        one reference strain sets several ligaments whose model strains differ (the model is
        not in that family of rest lengths; the space's nominal value is kept).

        Raises
        ------
        ValueError
            When one parameter sets several elements (or both radii of a facet) to one value
            but the model's values differ: the space cannot describe that model.
        """
        ref = model.reference
        ligs = {x.name: x for x in model.ligaments}
        facets = {f.side: f.geometry(ref) for f in model.facets}
        out = np.full(self.dim, np.nan)
        errors = []
        for j, (targets, field) in enumerate(zip(self.targets, self.fields, strict=True)):
            present = [(k, key) for k, key in targets
                       if k == "disc" or (k == "ligament" and key in ligs)
                       or (k == "facet" and key in facets)]
            if not present:
                continue
            if field in ("stiffness_scale", "stiffness_scale_pos", "stiffness_scale_neg"):
                out[j] = 1.0
                continue
            vals = [v for kind, key in present
                    for v in _element_values(model, kind, key, field, ligs, facets)]
            if not vals:       # a law parameter of coordinates that are not on that law
                continue
            if any(not _same(v, vals[0][1]) for _, v in vals):
                if field == "ref_strain":
                    # one reference strain for several ligaments (Blankevoort's model) is a
                    # family of rest lengths; a model whose ligaments differ is not in it: the
                    # file's nominal is kept (the published model: FL 0.026, ISL -0.029)
                    continue
                errors.append(f"{self._where(j)}, column 'element': {self.names[j]!r} sets "
                              f"{' and '.join(n for n, _ in vals)} to one value, but the model "
                              f"has {', '.join(f'{v:.6g}' for _, v in vals)}; give each its "
                              "own row")
                continue
            out[j] = vals[0][1]
        if errors:
            raise ValueError("; ".join(errors))
        return out

    def for_model(self, model, *, warn: bool = True) -> ParameterSpace:
        """This space with the nominal values of ``model`` (the contract of the module doc).

        The ranges and priors stay the file's; the nominal value of each parameter becomes
        :meth:`model_values` (kept where the model lacks the parameter's elements). Where the
        file's nominal value differs, one :class:`ModelNominalWarning` (unless ``warn`` is
        False) names every such parameter with both values. Returns ``self`` when nothing
        changes.

        Raises
        ------
        ValueError
            Naming the file, row and parameter, when a model value lies outside the
            parameter's [lower, upper] (the space does not contain the model), or see
            :meth:`model_values`.
        """
        values = self.model_values(model)
        nominal = np.array(self.nominal, dtype=float)
        changed, outside = [], []
        for j, v in enumerate(values):
            if not math.isfinite(v) or _same(v, nominal[j]):
                continue
            lo, hi = self.lower[j], self.upper[j]
            if not (lo <= v <= hi or _same(v, lo) or _same(v, hi)):
                unit = "" if self.units[j] in ("-", "") else f" {self.units[j]}"
                outside.append(f"{self._where(j)}: the model's {self.names[j]} is "
                               f"{v:.6g}{unit}, outside [lower, upper] = [{lo:g}, {hi:g}]"
                               f"{unit}")
                continue
            changed.append(j)
            nominal[j] = min(max(v, lo), hi)
        if outside:
            raise ValueError("; ".join(outside) + ": this parameter space does not contain the "
                             "model it is to study; give one whose bounds contain the model's "
                             "values (--space FILE)")
        if not changed:
            return self
        if warn:
            parts = []
            for j in changed:
                unit = "" if self.units[j] in ("-", "") else f" {self.units[j]}"
                parts.append(f"{self.names[j]} {self.nominal[j]:g} -> {nominal[j]:.6g}{unit}")
            warnings.warn(f"{Path(self.path).name}: nominal values differ from the model's, "
                          f"the study uses the model's (the space gives ranges and priors): "
                          + ", ".join(parts), ModelNominalWarning, stacklevel=2)
        nominal.setflags(write=False)
        return dataclasses.replace(self, nominal=nominal)

    def apply(self, model, p):
        """The :class:`~segment.model.Segment` of parameter set ``p`` (D,) (readable, slow:
        use :meth:`pack` for many sets)."""
        from segment.elements.disc import DiscStiffness
        from segment.elements.ligament import TrilinearCurve

        p = self.check(p, strict=None)[0]
        ref = model.reference
        k_pos = model.disc.k_positive.copy()
        k_neg = model.disc.k_negative.copy()
        law_parameters = np.array(model.disc.law_parameters, dtype=float)
        ligs = {x.name: x for x in model.ligaments}
        facets = {f.side: f.geometry(ref) for f in model.facets}
        for j, (targets, field) in enumerate(zip(self.targets, self.fields, strict=True)):
            for kind, key in targets:
                if kind == "disc":
                    d = DOF_NAMES.index(key)
                    if field in DISC_LAW_FIELDS:
                        index, factor = disc_law_slot(model, key, field)
                        law_parameters[d, index - G_DISC - 1 - 4 * d] = p[j] * factor
                        continue
                    if field != "stiffness_scale_neg":
                        k_pos[d] *= p[j]
                    if field != "stiffness_scale_pos":
                        k_neg[d] *= p[j]
                elif kind == "ligament":
                    if key not in ligs:
                        continue   # the model has no such ligament (e.g. posterior removed)
                    x = ligs[key]
                    if field == "l0_mm":
                        ligs[key] = x.with_rest_length(p[j])
                    elif field == "ref_strain":
                        ligs[key] = x.with_reference_strain(p[j], ref)
                    else:
                        curve = TrilinearCurve(x.curve.strain, x.curve.force * p[j])
                        ligs[key] = dataclasses.replace(x, curve=curve)   # keeps its strips
                elif key in facets:
                    if field == "radius_mm":
                        facets[key]["radius_c6"] = facets[key]["radius_c5"] = p[j]
                    else:
                        facets[key][_FACET_FIELD[field]] = p[j]
        disc = DiscStiffness(k_pos, k_neg, model.disc.damping, model.disc.law, law_parameters)
        return model.replace(
            disc=disc, ligaments=tuple(ligs[x.name] for x in model.ligaments),
            facets=tuple(f.modified(ref, **facets[f.side]) for f in model.facets))

    # ------------------------------------------------------------------ packed sets
    def pack(self, model, P):
        """M parameter sets written into the model's packed arrays.

        Parameters
        ----------
        model : Segment
        P : array_like, shape (M, D)
            Parameter sets; complex values are allowed (complex step).

        Returns
        -------
        glob (M, 52), lig (M, n, 13), fac (M, m, 15) : ndarray
            The layout of :func:`segment.tangent.pack`, one slice per set; float unless
            ``P`` is complex. Row ``k`` equals ``pack(self.apply(model, P[k])._params)`` to
            rounding (``tests/test_space.py``).
        """
        P = np.asarray(P)
        if np.iscomplexobj(P):
            if P.ndim != 2 or P.shape[1] != self.dim:
                raise ValueError(f"parameter sets must have shape (M, {self.dim}), got "
                                 f"{P.shape}")
            dtype = complex
        else:
            P = self.check(P, strict=None)
            dtype = float
        m_sets = P.shape[0]
        glob0, lig0, fac0 = model._packed[:3]
        glob = np.repeat(glob0[None].astype(dtype), m_sets, axis=0)
        lig = np.repeat(lig0[None].astype(dtype), m_sets, axis=0)
        fac = np.repeat(fac0[None].astype(dtype), m_sets, axis=0)
        rows = ligament_rows(model)
        l0_model = {x.name: x.l0 for x in model.ligaments}
        ref = model.reference
        l_ref = {x.name: x.reference_length(ref) for x in model.ligaments}
        geo = {f.side: {k: np.full(m_sets, v, dtype=dtype) if np.ndim(v) == 0 else v
                        for k, v in f.geometry(ref).items()} for f in model.facets}
        touched = set()
        for j, (targets, field) in enumerate(zip(self.targets, self.fields, strict=True)):
            pj = P[:, j]
            for kind, key in targets:
                if kind == "disc":
                    d = DOF_NAMES.index(key)
                    if field in DISC_LAW_FIELDS:     # set, in the law's units (rad)
                        index, factor = disc_law_slot(model, key, field)
                        glob[:, index] = pj * factor
                        continue
                    if field != "stiffness_scale_neg":
                        glob[:, G_K_POS + d] *= pj
                    if field != "stiffness_scale_pos":
                        glob[:, G_K_NEG + d] *= pj
                elif kind == "ligament":
                    r = rows.get(key)
                    if r is None:
                        continue
                    if field == "l0_mm":     # set (the last one wins), as apply does
                        lig[:, r, L_L0] = lig0[r, L_L0] * (pj / l0_model[key])[:, None]
                    elif field == "ref_strain":     # set: l0 = l_ref / (1 + p)
                        lig[:, r, L_L0] = lig0[r, L_L0] * (
                            l_ref[key] / (1.0 + pj) / l0_model[key])[:, None]
                    else:
                        lig[:, r, L_F:L_F + 3] *= pj[:, None, None]
                elif key in geo:
                    touched.add(key)
                    if field == "radius_mm":
                        geo[key]["radius_c6"] = geo[key]["radius_c5"] = pj.astype(dtype)
                    else:
                        geo[key][_FACET_FIELD[field]] = pj.astype(dtype)
        R0, s0 = ref.R0, ref.s0
        for i, f in enumerate(model.facets):
            if f.side not in touched:
                continue
            g = geo[f.side]
            # FacetJoint.at_reference, vectorised (and complex-safe)
            n2 = c6_normals(g["inclination_deg"])
            c2 = np.broadcast_to(np.asarray(g["center_c6"], dtype=float), n2.shape)
            c1_c6 = c2 + g["gap"][:, None] * n2
            fac[:, i, F_C1:F_C1 + 3] = rows_in_frame(R0, c1_c6 - s0)   # R0^T (c1 - s0)
            fac[:, i, F_N1:F_N1 + 3] = rows_in_frame(R0, -n2)
            fac[:, i, F_R1] = g["radius_c5"]
            fac[:, i, F_C2:F_C2 + 3] = c2
            fac[:, i, F_N2:F_N2 + 3] = n2
            fac[:, i, F_R2] = g["radius_c6"]
            fac[:, i, F_BLEND] = g["blend"]
        return glob, lig, fac

    def pack_derivative(self, model, P, *, n_threads: int | None = None):
        """Exact derivatives of :meth:`pack` by each parameter.

        Compiled from a plan of what each parameter does to which packed entry
        (:mod:`segment.studies.packing`); equal to the complex step through :meth:`pack`
        (complex ``P``) to rounding, at a fraction of its cost (``tests/test_space.py``).

        Returns
        -------
        dglob (M, D, 52), dlig (M, D, n, 13), dfac (M, D, m, 15) : ndarray
        """
        return pack_plan(self, model).derivative(self.check(P, strict=None),
                                                 n_threads=n_threads)

    def sets_frame(self, P):
        """Parameter sets (M, D) as a DataFrame with the parameter names as columns."""
        import pandas as pd

        return pd.DataFrame(np.asarray(P, dtype=float), columns=list(self.names))


@functools.lru_cache(maxsize=8)
def _default_space(path: str) -> ParameterSpace:
    return ParameterSpace.from_csv(path)


def load_space(space=None, *, strict: bool = True) -> ParameterSpace:
    """``space`` as a :class:`ParameterSpace`: None (the packaged file), a path, or a space
    (``strict``: see :meth:`ParameterSpace.from_csv`)."""
    if isinstance(space, ParameterSpace):
        return space
    if space is None:
        return _default_space(str(default_space_path()))
    if not isinstance(space, (str, Path)) and not hasattr(space, "__fspath__"):
        raise TypeError(f"space must be a ParameterSpace, a path or None, got "
                        f"{type(space).__name__}")
    return ParameterSpace.from_csv(space, strict=strict)
