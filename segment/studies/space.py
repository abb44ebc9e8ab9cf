r"""The uncertain parameters of the model as data: a parameter space.

A :class:`ParameterSpace` is read from a file (``data/parameter_space.csv``, a model form's
``space.csv``; the format and its checks: :mod:`segment.studies.space_file`): per parameter the
element(s) and the field it changes, its unit, nominal value, bounds and prior
(:mod:`segment.studies.priors`). What a field does is its schema row's law
(:data:`segment.core.schema.FIELDS`, :mod:`segment.core.laws`), so this module knows no field
by name.

One model (issue 21): a study runs on the model it is given. The space gives the ranges and the
priors; the nominal value of each parameter is the model's own (:meth:`ParameterSpace.
for_model`). Where the file's ``nominal`` column says something else, the model's value is
used and a :class:`ModelNominalWarning` names every such parameter. A model value outside the
parameter's ``[lower, upper]`` is an error: that space does not contain the model.

This file is the one definition of the uncertain parameters: the tornado study, the
uncertainty bands, the exact sensitivities, the Sobol study and the calibrations read it.

Two layers: :meth:`ParameterSpace.apply` builds one :class:`~segment.core.model.Segment`
(readable, slow); :meth:`ParameterSpace.pack` writes M parameter sets straight into the packed
arrays of the solver (:mod:`segment.studies.packing`), and :meth:`pack_derivative` gives their
exact derivatives. ``pack`` is plain numpy and accepts complex parameter values: the complex
step through it is the reference the compiled derivative is tested against.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from segment._checks import check_count, check_memory, check_seed
from segment.core.laws import Edit, ReferenceStrain
from segment.core.schema import Field
from segment.core.schema import field as schema_field
from segment.core.tables import ImplausibleDataWarning
from segment.studies import priors
from segment.studies.packing import pack_plan, pack_sets
from segment.studies.space_file import default_space_path, read_space

__all__ = ["ModelNominalWarning", "ParameterSpace", "default_space_path", "load_space"]

SAME_VALUE_RTOL = 1e-9
"""A model value and a file's nominal value are the same within this relative tolerance (the
facet geometry is recovered from the packed discs with rounding)."""


class ModelNominalWarning(UserWarning):
    """A space file's nominal value differs from the model's; the study uses the model's."""


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= SAME_VALUE_RTOL * max(1.0, abs(a), abs(b))


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

    @functools.cached_property
    def schema_fields(self) -> tuple[Field, ...]:
        """The schema row of each parameter's field (:data:`segment.core.schema.FIELDS`)."""
        return tuple(schema_field(t[0][0], f) for t, f in zip(self.targets, self.fields,
                                                              strict=True))

    @functools.cached_property
    def _bounds(self) -> tuple[np.ndarray, ...]:
        """Per parameter, as arrays (D,): each field's hard limit (lower, upper, whether each
        end is open) and its plausible range (lower, upper): :meth:`check` compares a whole
        matrix at once."""
        limits = [f.limit for f in self.schema_fields]
        ranges = [f.range for f in self.schema_fields]
        return (np.array([h.lower for h in limits], float),
                np.array([h.upper for h in limits], float),
                np.array([h.lower_open for h in limits], bool),
                np.array([h.upper_open for h in limits], bool),
                np.array([r.lower for r in ranges], float),
                np.array([r.upper for r in ranges], float))

    @classmethod
    def from_csv(cls, path: str | Path | None = None, *, strict: bool = True) -> ParameterSpace:
        """Read and check a parameter-space file (default: the packaged one):
        :func:`segment.studies.space_file.read_space`."""
        return cls(**read_space(path, strict=strict))

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
        """Unit-cube points (M, D) -> parameter sets (M, D) through each truncated prior's
        inverse CDF (:func:`segment.studies.priors.ppf`)."""
        return priors.ppf(self, u)

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

    def where(self, j: int) -> str:
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
            (:data:`segment.core.schema.FIELDS`, e.g. an inclination of 1e6 deg or one in
            radians) is an error; False: it is used, with one
            :class:`~segment.core.tables.ImplausibleDataWarning`;
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
        lo, hi, lo_open, hi_open, plo, phi = self._bounds
        inside = (np.where(lo_open, P > lo, P >= lo) & np.where(hi_open, P < hi, P <= hi))
        plausible = (P >= plo) & (P <= phi)
        if inside.all() and (strict is None or plausible.all()):
            return P                     # the common case: one pass, no message to build
        implausible = []
        for j, f in enumerate(self.schema_fields):
            field, col = f.name, P[:, j]
            out = ~f.limit.holds(col)
            if out.any():
                m = int(np.argmax(out))
                raise ValueError(f"parameter set {m}, {self.names[j]!r}: {field} "
                                 f"{f.limit.describe()}, got {P[m, j]:g}")
            rng = f.range
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
        """Each parameter's value in ``model`` (D,), by its field's law
        (:meth:`segment.core.laws.Law.values`): 1 for a stiffness factor (a factor on the
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
        out = np.full(self.dim, np.nan)
        errors = []
        for j, (targets, f) in enumerate(zip(self.targets, self.schema_fields, strict=True)):
            vals = [v for _, key in targets if f.law.present(model, key)
                    for v in f.law.values(model, key)]
            if not vals:       # no such element, or a law parameter of another law
                continue
            if any(not _same(v, vals[0][1]) for _, v in vals):
                if isinstance(f.law, ReferenceStrain):
                    # one reference strain for several ligaments (Blankevoort's model) is a
                    # family of rest lengths; a model whose ligaments differ is not in it: the
                    # file's nominal is kept (the published model: FL 0.026, ISL -0.029)
                    continue
                errors.append(f"{self.where(j)}, column 'element': {self.names[j]!r} sets "
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
                outside.append(f"{self.where(j)}: the model's {self.names[j]} is "
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
        """The :class:`~segment.core.model.Segment` of parameter set ``p`` (D,) (readable,
        slow: use :meth:`pack` for many sets): each parameter's law applied to the elements
        it targets (:meth:`segment.core.laws.Law.apply`; an element the model lacks is
        skipped)."""
        p = self.check(p, strict=None)[0]
        edit = Edit.of(model)
        for j, (targets, f) in enumerate(zip(self.targets, self.schema_fields, strict=True)):
            for _, key in targets:
                if f.law.present(model, key):
                    f.law.apply(edit, key, p[j])
        return edit.model()

    # ------------------------------------------------------------------ packed sets
    def pack(self, model, P):
        """M parameter sets written into the model's packed arrays
        (:func:`segment.studies.packing.pack_sets`).

        Parameters
        ----------
        model : Segment
        P : array_like, shape (M, D)
            Parameter sets; complex values are allowed (complex step).

        Returns
        -------
        glob (M, 52), lig (M, n, 13), fac (M, m, 16) : ndarray
            The layout of ``tangent.pack``, one slice per set; float unless ``P`` is complex.
            Row ``k`` equals ``pack(self.apply(model, P[k])._params)`` to rounding
            (``tests/test_space.py``).
        """
        P = np.asarray(P)
        if np.iscomplexobj(P):
            if P.ndim != 2 or P.shape[1] != self.dim:
                raise ValueError(f"parameter sets must have shape (M, {self.dim}), got "
                                 f"{P.shape}")
        else:
            P = self.check(P, strict=None)
        return pack_sets(self, model, P)

    def pack_derivative(self, model, P, *, n_threads: int | None = None):
        """Exact derivatives of :meth:`pack` by each parameter.

        Compiled from a plan of what each parameter does to which packed entry
        (:mod:`segment.studies.packing`); equal to the complex step through :meth:`pack`
        (complex ``P``) to rounding, at a fraction of its cost (``tests/test_space.py``).

        Returns
        -------
        dglob (M, D, 52), dlig (M, D, n, 13), dfac (M, D, m, 16) : ndarray
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
