"""How a study parameter acts on a model: the law of each parameter field.

A parameter of a study (a row of a parameter-space file, :mod:`segment.studies.space`) names a
field of :mod:`segment.core.schema` and one or more elements; the field's law says what a value
``p`` does, in three equivalent forms that the tests hold equal:

* on the element records (:meth:`Law.apply`: readable, one model at a time),
* on the solver's packed arrays (:meth:`Law.ops`: a list of :class:`Op`, from which
  :mod:`segment.studies.packing` writes many parameter sets at once and differentiates them),
* and back (:meth:`Law.values`: the value a model has, the nominal point of a study).

The packed-array form is a product per array entry: an entry ends as ``b * prod_k f_k(p_k)``
with ``b`` the model's value (or 1) and each factor ``f = c p`` (:data:`MULTIPLY`) or
``f = c / (1 + p)`` (:data:`RECIPROCAL`); a factor that *sets* an entry replaces the factors
before it (the last parameter that sets a rest length wins, as :meth:`apply` does). The facet
geometry is the one law that is not a product (its rows are rebuilt as in
``FacetJoint.at_reference``): :class:`FacetGeometry` says which geometry field it sets and
:mod:`segment.studies.packing` rebuilds the rows.

Adding a parameter field is one row of :data:`segment.core.schema.FIELDS` with one of these
laws (or a new law written here, with its tests: the packed form against the record form,
its derivative against the complex step).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from segment.elements.disc import DISC_LAW_WIDTH, DOF_NAMES
from segment.elements.ligament import TrilinearCurve
from segment.elements.tangent import G_DISC, G_K_NEG, G_K_POS, L_F, L_L0

__all__ = ["MULTIPLY", "RECIPROCAL", "DiscLawParameter", "DiscStiffnessScale", "Edit",
           "FacetGeometry", "Law", "LigamentForceScale", "Op", "ReferenceStrain", "RestLength",
           "ligament_rows"]

MULTIPLY, RECIPROCAL = 0, 1
"""Kinds of factor of an :class:`Op`: ``c p`` and ``c / (1 + p)``."""
GLOB, LIG = 0, 1
"""Which packed array an :class:`Op` writes: ``glob`` or ``lig`` (``tangent.pack``)."""


@dataclass(frozen=True)
class Op:
    """One factor on one entry of the packed arrays (see the module docstring).

    ``array`` :data:`GLOB` or :data:`LIG`; ``index`` the entry (``(column,)`` of glob,
    ``(row, column)`` of lig); ``c``, ``divisor`` and ``kind`` the factor, ``(c p) / divisor``
    or ``(c / (1 + p)) / divisor`` (kept apart so that numpy computes the very bits of the
    formula as written: ``p / l0`` and ``(1 / l0) p`` differ in the last bit, which a
    calibration's optimiser can amplify); ``sets`` True when it replaces the factors before
    it; ``unit_base`` True when the entry's base is 1 instead of the model's value (a law
    parameter: its packed value is ``c p``).
    """

    array: int
    index: tuple[int, ...]
    c: float
    kind: int = MULTIPLY
    sets: bool = False
    unit_base: bool = False
    divisor: float = 1.0


@dataclass
class Edit:
    """A model taken apart for :meth:`Law.apply`: the disc's arrays, the ligaments by name and
    the facets' geometry (``FacetJoint.geometry``) by side; :meth:`model` puts it together."""

    base: object
    k_pos: np.ndarray
    k_neg: np.ndarray
    law_parameters: np.ndarray
    ligaments: dict
    facets: dict

    @classmethod
    def of(cls, model) -> Edit:
        ref = model.reference
        return cls(base=model, k_pos=model.disc.k_positive.copy(),
                   k_neg=model.disc.k_negative.copy(),
                   law_parameters=np.array(model.disc.law_parameters, dtype=float),
                   ligaments={x.name: x for x in model.ligaments},
                   facets={f.side: f.geometry(ref) for f in model.facets})

    def model(self):
        from segment.elements.disc import DiscStiffness

        m = self.base
        disc = DiscStiffness(self.k_pos, self.k_neg, m.disc.damping, m.disc.law,
                             self.law_parameters)
        return m.replace(disc=disc, ligaments=tuple(self.ligaments[x.name] for x in m.ligaments),
                         facets=tuple(f.modified(m.reference, **self.facets[f.side])
                                      for f in m.facets))


def ligament_rows(model) -> dict[str, np.ndarray]:
    """Rows of the packed ``lig`` array that belong to each ligament of ``model`` (one per
    strip, in the order of ``Segment.strip_ligament``)."""
    out: dict[str, list[int]] = {x.name: [] for x in model.ligaments}
    for row, k in enumerate(model.strip_ligament):
        out[model.ligaments[k].name].append(row)
    return {name: np.array(rows, dtype=np.int64) for name, rows in out.items()}


class Law:
    """How a field acts (the module docstring); subclasses set ``kind`` and implement."""

    kind = ""
    """The element kind the law applies to: ``disc``, ``ligament`` or ``facet``."""
    facet_field: str | None = None
    """For :class:`FacetGeometry`: the ``FacetJoint.geometry`` entry it sets."""
    sets = ""
    """The quantity the law sets (``"rest length"``): one field per quantity and element in
    a parameter space (a rest length set by ``l0_mm`` and by ``ref_strain`` would be two
    answers); empty for a factor, which combines."""

    def present(self, model, key) -> bool:
        """Whether ``model`` has the element ``key`` (a ligament or facet may be absent)."""
        if self.kind == "ligament":
            return any(x.name == key for x in model.ligaments)
        if self.kind == "facet":
            return any(f.side == key for f in model.facets)
        return True

    def values(self, model, key) -> list[tuple[str, float]]:
        """``(label, value)`` of the field in element ``key`` of ``model``: what the model
        has (empty when the element has no such value)."""
        raise NotImplementedError

    def apply(self, edit: Edit, key: str, p: float) -> None:
        """Set the field of element ``key`` to ``p`` in ``edit``."""
        raise NotImplementedError

    def ops(self, model, key) -> list[Op]:
        """The factors the field puts on the packed arrays of ``model`` (per unit parameter;
        empty for a facet field)."""
        return []


@dataclass(frozen=True)
class DiscStiffnessScale(Law):
    """A factor on the disc's stiffness of one coordinate (Table 2): both signs, or only
    ``k+`` (``sign=+1``, q >= 0) or ``k-`` (``sign=-1``). The model's value is 1."""

    sign: int = 0
    kind = "disc"

    def values(self, model, key):
        return [(f"disc {key} stiffness factor", 1.0)]

    def apply(self, edit, key, p):
        d = DOF_NAMES.index(key)
        if self.sign >= 0:
            edit.k_pos[d] *= p
        if self.sign <= 0:
            edit.k_neg[d] *= p

    def ops(self, model, key):
        d = DOF_NAMES.index(key)
        cols = {1: (G_K_POS + d,), -1: (G_K_NEG + d,)}.get(self.sign, (G_K_POS + d, G_K_NEG + d))
        return [Op(GLOB, (c,), 1.0) for c in cols]


@dataclass(frozen=True)
class DiscLawParameter(Law):
    """A parameter of a disc rotation's law (:mod:`segment.elements.disc`): ``slot`` of the
    law ``law`` (1-based within the law's packed row), ``factor`` from the field's unit to the
    law's (rad per deg, or 1). Needs the model's coordinate on that law."""

    law: str = ""
    slot: int = 1
    factor: float = 1.0
    kind = "disc"

    def index(self, model, key) -> int:
        """The entry of the packed ``glob``; a ValueError when the coordinate is not on the
        law."""
        d = DOF_NAMES.index(key)
        if model.disc.law[d] != self.law:
            raise ValueError(f"this parameter needs the {self.law} law on disc {key}, but the "
                             f"model has {model.disc.law[d]!r} there (disc_law.csv of its data "
                             "folder, or DiscStiffness.with_law)")
        return G_DISC + DISC_LAW_WIDTH * d + self.slot

    def values(self, model, key):
        d = DOF_NAMES.index(key)
        if model.disc.law[d] != self.law:
            return []
        return [(f"disc {key} {self.law} parameter {self.slot}",
                 model.disc.law_parameters[d][self.slot - 1] / self.factor)]

    def apply(self, edit, key, p):
        d = DOF_NAMES.index(key)
        self.index(edit.base, key)
        edit.law_parameters[d, self.slot - 1] = p * self.factor

    def ops(self, model, key):
        return [Op(GLOB, (self.index(model, key),), self.factor, sets=True, unit_base=True)]


@dataclass(frozen=True)
class RestLength(Law):
    """A ligament's rest length l0 (Table 4), given in units of ``scale`` mm (1: mm). Every
    strip's rest length follows in proportion (``Segment._strip_rows``)."""

    scale: float = 1.0
    kind = "ligament"
    sets = "rest length"

    def values(self, model, key):
        x = next(x for x in model.ligaments if x.name == key)
        return [(f"ligament {key} l0", x.l0 / self.scale)]

    def apply(self, edit, key, p):
        edit.ligaments[key] = edit.ligaments[key].with_rest_length(p * self.scale)

    def ops(self, model, key):
        l0 = next(x.l0 for x in model.ligaments if x.name == key)
        return [Op(LIG, (int(r), L_L0), self.scale, sets=True, divisor=l0)
                for r in ligament_rows(model)[key]]


@dataclass(frozen=True)
class ReferenceStrain(Law):
    """A ligament's rest length by its strain at the reference pose, ``l0 = l_ref / (1 + p)``
    (Blankevoort and Huiskes 1991; ``Ligament.with_reference_strain``)."""

    kind = "ligament"
    sets = "rest length"

    def values(self, model, key):
        x = next(x for x in model.ligaments if x.name == key)
        return [(f"ligament {key} reference strain",
                 x.reference_length(model.reference) / x.l0 - 1.0)]

    def apply(self, edit, key, p):
        edit.ligaments[key] = edit.ligaments[key].with_reference_strain(p,
                                                                         edit.base.reference)

    def ops(self, model, key):
        x = next(x for x in model.ligaments if x.name == key)
        return [Op(LIG, (int(r), L_L0), x.reference_length(model.reference), kind=RECIPROCAL,
                   sets=True, divisor=x.l0) for r in ligament_rows(model)[key]]


@dataclass(frozen=True)
class LigamentForceScale(Law):
    """A factor on a ligament's force axis (Table 3: the forces of points A, B and C). The
    model's value is 1."""

    kind = "ligament"

    def values(self, model, key):
        return [(f"ligament {key} force factor", 1.0)]

    def apply(self, edit, key, p):
        x = edit.ligaments[key]
        edit.ligaments[key] = dataclasses.replace(
            x, curve=TrilinearCurve(x.curve.strain, x.curve.force * p))    # keeps its strips

    def ops(self, model, key):
        return [Op(LIG, (int(r), c), 1.0) for r in ligament_rows(model)[key]
                for c in range(L_F, L_F + 3)]


@dataclass(frozen=True)
class FacetGeometry(Law):
    """A parameter of a facet joint's geometry (``FacetJoint.at_reference``): ``field`` one of
    ``inclination_deg``, ``sagittal_deg``, ``gap``, ``radius`` (both faces) or ``blend``.

    ``sagittal_deg`` turns the face's normal about z, out of the sagittal plane towards the
    facet's lateral side by ``sagittal_deg - 90``, keeping its angle to the transverse plane
    (:func:`segment.elements.facet.c6_normals`; the published C6 superior facet measures
    92.3 +- 11.5 deg on the right and 93.5 +- 9.4 deg on the left, PMC2219934 Table 2,
    SOURCES.md §3)."""

    field: str = ""
    kind = "facet"

    @property
    def sets(self):
        return f"facet {self.field}"

    @property
    def facet_field(self):
        return self.field

    def values(self, model, key):
        g = next(f for f in model.facets if f.side == key).geometry(model.reference)
        if self.field == "radius":
            return [(f"facet {key} radius_c6", g["radius_c6"]),
                    (f"facet {key} radius_c5", g["radius_c5"])]
        return [(f"facet {key} {self.field}", g[self.field])]

    def apply(self, edit, key, p):
        if self.field == "radius":
            edit.facets[key]["radius_c6"] = edit.facets[key]["radius_c5"] = p
        else:
            edit.facets[key][self.field] = p


DEG = math.pi / 180.0
