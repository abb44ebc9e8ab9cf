r"""Reading a parameter-space file (``data/parameter_space.csv`` and the model forms' spaces).

One row per parameter: ``name``, the ``element`` and ``field`` it changes, ``unit``,
``nominal``, ``lower``, ``upper``, the prior ``distribution`` (``uniform``, ``normal`` or
``lognormal``) with ``dist_mu`` and ``dist_sigma`` (mean and SD of the parameter for
``normal``, of its logarithm for ``lognormal``; empty for ``uniform``), and ``source``: the
publication the range comes from, or the reasoning, with the word "assumed", when it is an
assumption. Every prior is truncated to ``[lower, upper]``.

Elements are ``disc:<x|y|z|phi_x|phi_y|phi_z>``, ``ligament:<name>`` and ``facet:<left|right>``
(several elements separated by ``;`` share one parameter). The fields of each kind, their
units, laws and ranges are the rows of :data:`segment.core.schema.FIELDS`.

Checks (issue 21), as for the model tables: the ``unit`` must be the field's; the bounds must
respect the field's hard limit; ``nominal``, ``lower`` and ``upper`` must lie within the
field's plausible range (a rest length in metres, an inclination in radians or a stiffness
factor in percent falls outside); a normal or lognormal prior must keep at least
:data:`~segment.studies.priors.MIN_PRIOR_MASS` of its mass within ``[lower, upper]``.
``strict=False`` (CLI: ``--allow-implausible``) turns the plausibility checks into
:class:`~segment.core.tables.ImplausibleDataWarning`\ s; a unit that contradicts the field and
the hard limits are errors either way. Every error of a file is listed at once, each naming
the line, the row, the column and the value.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from segment.core.io import FACET_SIDES, LIGAMENT_NAMES, data_dir, sha256_of
from segment.core.laws import DiscLawParameter
from segment.core.schema import field as schema_field
from segment.core.schema import fields_of
from segment.core.tables import Table, parse_number
from segment.elements.disc import DOF_NAMES
from segment.studies.priors import DISTRIBUTIONS, MIN_PRIOR_MASS, prior_mass

__all__ = ["COLUMNS", "KINDS", "default_space_path", "read_space"]

COLUMNS = ("name", "element", "field", "unit", "nominal", "lower", "upper", "distribution",
           "dist_mu", "dist_sigma", "source")
KINDS = ("disc", "ligament", "facet")
"""The element kinds a parameter can change."""


def default_space_path() -> Path:
    """The packaged ``parameter_space.csv``."""
    return data_dir() / "parameter_space.csv"


def _keys(kind: str) -> tuple[str, ...]:
    return {"disc": DOF_NAMES, "ligament": LIGAMENT_NAMES, "facet": FACET_SIDES}[kind]


def read_space(path: str | Path | None = None, *, strict: bool = True) -> dict:
    """The fields of the :class:`~segment.studies.space.ParameterSpace` of a file (default:
    the packaged one), as keyword arguments of its constructor; see the module docstring for
    what is checked (``ParameterSpace.from_csv`` is the public way in)."""
    if not isinstance(strict, bool):
        raise TypeError(f"strict must be True or False, got {strict!r}")
    path = default_space_path() if path is None else Path(path)
    t = Table(path, tuple(c for c in COLUMNS if c != "source"), collect=True,
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
                if kind not in KINDS or not key:
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
            if field not in fields_of(kind):
                raise err(i, "field", f"unknown field {field!r} for a {kind}; expected one of "
                                      f"{', '.join(fields_of(kind))}")
            f = schema_field(kind, field)
            if isinstance(f.law, DiscLawParameter) and any(
                    key not in ("phi_x", "phi_y", "phi_z") for _, key in targets):
                raise err(i, "element", f"{field} is a parameter of a rotation's law: "
                                        f"expected disc:phi_x, phi_y or phi_z, got "
                                        f"{row['element']!r}")
            for kind_, key in targets:
                tk = (kind_, key, field)
                if tk in seen_targets:
                    raise err(i, "element", f"{kind_}:{key} {field} is already set by row "
                                            f"{seen_targets[tk]}")
                if f.law.sets:        # one field per quantity it sets (e.g. a rest length)
                    other = next((o for (k2, key2, o) in seen_targets
                                  if (k2, key2) == (kind_, key)
                                  and schema_field(k2, o).law.sets == f.law.sets), None)
                    if other is not None:
                        raise err(i, "field", f"the {f.law.sets} of {kind_}:{key} is already "
                                              f"set by {other} in row "
                                              f"{seen_targets[(kind_, key, other)]}; one field "
                                              f"per {f.law.sets}")
                seen_targets[tk] = i
            nominal, lower, upper = (number(i, row, c) for c in ("nominal", "lower", "upper"))
            if not lower < upper:
                raise err(i, "lower", f"lower must be < upper, got lower {lower:g} and upper "
                                      f"{upper:g}")
            if not lower <= nominal <= upper:
                raise err(i, "nominal", f"must lie within [lower, upper] = [{lower:g}, "
                                        f"{upper:g}], got {nominal:g}")
            limit = f.limit
            for col, v, side in (("lower", lower, "lower"), ("upper", upper, "upper")):
                if not limit.holds(v):
                    raise err(i, col, f"{field} must stay {limit.relation(side)}, got {col} "
                                      f"{v:g}")
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
            unit = f.unit
            if row["unit"] != unit:
                raise err(i, "unit", f"{row['unit']!r} is not the unit of {field} (expected "
                                     f"{unit!r}; the values must be in it)")
            rng = f.range
            of = f"{field} ({f.column_label})" if f.column is not None else field
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
    return dict(names=tuple(out["names"]), targets=tuple(out["targets"]),
                fields=tuple(out["fields"]), units=tuple(out["units"]),
                distributions=tuple(out["distributions"]), sources=tuple(out["sources"]),
                path=str(path), lines=tuple(out["lines"]),
                sha256=sha256_of(path), **arrays)
