"""Every model parameter written down once: the columns of the parameter tables and the fields
a study can vary.

Two kinds of row:

* a :class:`Column` is a number of a parameter table in ``data/``: its table and column name,
  unit, the factor to the package's units (mm, N, N mm, rad, s, kg, kg mm^2), its hard limit
  (an error whatever ``strict`` says) and its plausible range (an error, or with
  ``strict=False`` a warning; :data:`COLUMNS`). The readers of :mod:`segment.core.io` check
  every number against its row, and :func:`segment.core.io.save_parameters` writes every
  column whose row can ``get`` its value from a model.
* a :class:`Field` is a parameter a study can vary (:mod:`segment.studies.space`): the kind of
  element, its name and unit as a parameter-space file writes them, the table column it
  corresponds to (its plausible range and hard limit are that column's unless the field has
  its own), and its law (:mod:`segment.core.laws`: what a value does to the element records
  and to the solver's packed arrays, and the value a model has). From them derive the
  parameter-space checks, ``ParameterSpace.apply``, ``pack`` and ``pack_derivative``.

Adding a parameter is one :class:`Field` (and, for a new table column, one :class:`Column`
with ``get``/``set``) plus its law: ``tests/test_schema.py`` adds a made-up ligament
parameter in a test and loads, writes back, packs, differentiates and range-checks it with no
other change.

The plausible ranges (issue 14) are about one to two decades around the published values
(DETC2000/MECH-6821 Tables 1-4 after de Jager 1996, its contact law and the Moroney et al.
1988 test loads), so that a typical unit slip (metres for mm, grams for kg, percent for a
strain, N mm for N m, SI for mm units) or a stray exponent falls outside, while a parameter
study within a decade of the published model stays inside. Each carries its reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from segment.core.laws import (
    DEG,
    DiscLawParameter,
    DiscStiffnessScale,
    FacetGeometry,
    Law,
    LigamentForceScale,
    ReferenceStrain,
    RestLength,
)
from segment.core.tables import ANY, NONNEGATIVE, POSITIVE, HardRange, PlausibleRange

__all__ = ["COLUMNS", "FIELDS", "L0_RATIO_RANGE", "Column", "Field", "column", "columns_of",
           "field", "fields_of", "register"]

MM_PER_M = 1000.0
NMM_PER_NM = 1000.0


@dataclass(frozen=True)
class Column:
    """One number column of a parameter table (see the module docstring).

    ``get(record, model)`` returns the column's value in the package's units from an element
    record of ``model`` (None: the table's writer composes it); ``set(record, value)`` returns
    the record with the value (for an optional column read after the record is built; None:
    the table's reader uses it). ``absent`` is the value (CSV units) that a table without
    this optional column means: the writer adds the column to such a table only for a model
    whose value differs from it.
    """

    table: str
    name: str
    unit: str
    to_internal: float = 1.0
    hard: HardRange = ANY
    plausible: PlausibleRange | None = None
    get: Callable | None = None
    set: Callable | None = None
    absent: float | None = None


@dataclass(frozen=True)
class Field:
    """One parameter field of a study (see the module docstring). ``kind`` is ``disc``,
    ``ligament`` or ``facet``; ``name`` and ``unit`` as the parameter-space file writes them;
    ``column`` the table column it corresponds to (``(table, column)``, or None); ``law`` what
    it does; ``plausible`` and ``hard`` its own ranges (default: the column's)."""

    kind: str
    name: str
    unit: str
    law: Law
    column: tuple[str, str] | None = None
    plausible: PlausibleRange | None = None
    hard: HardRange | None = None
    doc: str = ""

    @property
    def range(self) -> PlausibleRange:
        """The plausible range of the field's values."""
        if self.plausible is not None:
            return self.plausible
        return COLUMNS[self.column].plausible

    @property
    def limit(self) -> HardRange:
        """The hard limit of the field's values."""
        if self.hard is not None:
            return self.hard
        return COLUMNS[self.column].hard

    @property
    def column_label(self) -> str:
        """``"ligaments.csv l0_mm"`` (empty without a column)."""
        return "" if self.column is None else " ".join(self.column)


# ---------------------------------------------------------------- plausible ranges
_COORD = PlausibleRange(-100.0, 100.0, "mm", "coordinates within one cervical vertebra: the "
                        "published insertions and facet centres lie within 47.3 mm of their "
                        "vertebra's origin; 100 mm is about twice that (a value in metres or a "
                        "stray exponent falls outside)")
_DAMPING = "a few decades around de Jager's (1996) {}; dynamics only"


def _c(table, name, unit, to_internal=1.0, hard=ANY, plausible=None, get=None, set=None,
       absent=None):
    return Column(table, name, unit, to_internal, hard, plausible, get, set, absent)


def _trilinear_rel(point: int, axis: str):
    """The getter of Table 3's relative curve columns (point A = 0, B = 1; strain or force
    relative to point C)."""
    def get(x, model):
        values = x.curve.strain if axis == "eps" else x.curve.force
        return values[point] / values[2]
    return get


def _facet(key: str, index: int | None = None):
    def get(f, model):
        v = f.geometry(model.reference)[key]
        return v if index is None else v[index]
    return get


_LIG = "ligaments.csv"
_FAC = "facets.csv"
_INCL = PlausibleRange(5.0, 85.0, "deg", "the C6 superior facet is inclined 42.3-43.2 deg to "
                       "the transverse plane (the source of the packaged facets.csv); 5-85 deg "
                       "keeps it a posterosuperior facing face (radians typed fall outside)")
_RADIUS = PlausibleRange(0.5, 20.0, "mm", "equivalent-area radius 4.9-5.6 mm; 0.5-20 mm "
                         "(metres fall outside)")
_ZONE = PlausibleRange(0.0, 30.0, "deg", "neutral-zone half-width: Panjabi's neutral zones of "
                       "cervical segments are a few degrees; 30 deg exceeds the whole range of "
                       "motion of one lower cervical segment (radians typed as degrees fall "
                       "inside, so also see the ratio)")
_ZONE_RATIO = PlausibleRange(1e-3, 1.0, "-", "stiffness inside the neutral zone over the "
                             "stiffness beyond it: at most 1 (1 is eq. (1)); below 1e-3 the zone "
                             "is a free joint (the equilibrium would rest on the ligaments "
                             "alone)")
_ANGLE_SCALE = PlausibleRange(0.5, 600.0, "deg", "angle scale s of the fw35 law: 57.3 deg "
                              "(1 rad) is Fritzkowski and Walczak's eq. (35); below 0.5 deg its "
                              "singularity (pi s) falls below 1.6 deg, above 600 deg the law is "
                              "linear within 0.1 % over 20 deg")

_COLUMN_LIST = [
    # Table 1 (inertia.csv): mass, principal inertia, C5's position and tilt in C6
    _c("inertia.csv", "mass_kg", "kg", 1.0, POSITIVE, PlausibleRange(
        0.02, 2.0, "kg", "Table 1 gives 0.23-0.24 kg; a decade either side (grams fall "
        "outside)")),
    *[_c("inertia.csv", c, "kg cm^2", 100.0, POSITIVE, PlausibleRange(
        0.2, 50.0, "kg cm^2", "Table 1 gives 2.3-4.7 kg cm^2; a decade either side (kg mm^2 "
        "or g cm^2 fall outside)")) for c in ("Ixx_kg_cm2", "Iyy_kg_cm2", "Izz_kg_cm2")],
    *[_c("inertia.csv", c, "mm", 1.0, ANY, PlausibleRange(
        -60.0, 60.0, "mm", "Table 1 offsets are within 18.4 mm; 60 mm exceeds a cervical "
        "vertebral body and disc together (metres fall outside unless near 0)"))
      for c in ("sx_mm", "gx_mm")],
    _c("inertia.csv", "sz_mm", "mm", 1.0, ANY, PlausibleRange(
        5.0, 60.0, "mm", "height of C5's origin above C6's: Table 1 gives 17.4-18.4 mm; 5-60 mm "
        "keeps the vertebrae above one another (a value in metres falls outside)")),
    _c("inertia.csv", "phi_y_deg", "deg", DEG, ANY, PlausibleRange(
        -45.0, 45.0, "deg", "Table 1 gives -5.2/-5.6 deg; a rest tilt beyond 45 deg between "
        "adjacent vertebrae is no physiological posture")),
    # Table 2 (disc_*.csv, eq. 1)
    _c("disc_translational.csv", "k_N_per_mm", "N/mm", 1.0, POSITIVE, PlausibleRange(
        1.0, 1e4, "N/mm", "Table 2 (Moroney et al. 1988) gives 50-492 N/mm; about 1.5 decades "
        "either side (N/m typed or a x1000 slip fall outside)")),
    _c("disc_translational.csv", "b_Ns_per_m", "N s/m", 1.0 / MM_PER_M, NONNEGATIVE,
       PlausibleRange(0.0, 1e5, "N s/m", _DAMPING.format("1000 N s/m"))),
    _c("disc_rotational.csv", "k_Nm_per_deg", "N m/deg", NMM_PER_NM / DEG, POSITIVE,
       PlausibleRange(0.005, 20.0, "N m/deg", "Table 2 gives 0.21-0.42 N m/deg; about 1.5 "
                      "decades either side (N mm/deg or N m/rad typos fall outside)")),
    _c("disc_rotational.csv", "b_Nms_per_rad", "N m s/rad", NMM_PER_NM, NONNEGATIVE,
       PlausibleRange(0.0, 150.0, "N m s/rad", _DAMPING.format("1.5 N m s/rad"))),
    # the laws of the disc's rotations (disc_law.csv, optional)
    _c("disc_law.csv", "zone_pos_deg", "deg", DEG, NONNEGATIVE, _ZONE),
    _c("disc_law.csv", "zone_neg_deg", "deg", DEG, NONNEGATIVE, _ZONE),
    _c("disc_law.csv", "zone_ratio", "-", 1.0, HardRange(0.0, 1.0, lower_open=True),
       _ZONE_RATIO),
    _c("disc_law.csv", "angle_scale_pos_deg", "deg", DEG, POSITIVE, _ANGLE_SCALE),
    _c("disc_law.csv", "angle_scale_neg_deg", "deg", DEG, POSITIVE, _ANGLE_SCALE),
    # Tables 3 and 4 (ligaments.csv)
    *[_c(_LIG, f"c{v}_{a}_mm", "mm", 1.0, ANY, _COORD,
         get=(lambda x, model, v=v, k=k: (x.insertion_c5 if v == 5 else x.insertion_c6)[k]))
      for v in (5, 6) for k, a in enumerate("xyz")],
    _c(_LIG, "l0_mm", "mm", 1.0, POSITIVE, PlausibleRange(
        1.0, 60.0, "mm", "Table 4 gives 6-18 mm; a ligament of one motion segment is 1-60 mm "
        "long (metres fall outside)"), get=lambda x, model: x.l0),
    _c(_LIG, "eps_max", "-", 1.0, POSITIVE, PlausibleRange(
        0.05, 2.0, "-", "Table 3 gives 0.21-0.58 as a fraction; strain in percent falls "
        "outside"), get=lambda x, model: x.curve.strain[2]),
    _c(_LIG, "F_max_N", "N", 1.0, POSITIVE, PlausibleRange(
        3.0, 2000.0, "N", "Table 3 gives 34-115 N; about 1.2 decades either side (kN or mN "
        "slips fall outside)"), get=lambda x, model: x.curve.force[2]),
    # relative curve points: bounded by the reader's sorting check (0 < A < B < 1)
    _c(_LIG, "A_eps_rel", "-", 1.0, NONNEGATIVE, get=_trilinear_rel(0, "eps")),
    _c(_LIG, "A_F_rel", "-", 1.0, NONNEGATIVE, get=_trilinear_rel(0, "F")),
    _c(_LIG, "B_eps_rel", "-", 1.0, NONNEGATIVE, get=_trilinear_rel(1, "eps")),
    _c(_LIG, "B_F_rel", "-", 1.0, NONNEGATIVE, get=_trilinear_rel(1, "F")),
    _c(_LIG, "b_Ns_per_m", "N s/m", 1.0 / MM_PER_M, NONNEGATIVE, PlausibleRange(
        0.0, 3e4, "N s/m", _DAMPING.format("300 N s/m")), get=lambda x, model: x.damping),
    # ligament strips (ligament_strips.csv, Tejszerska and Gzik eq. 9a)
    _c("ligament_strips.csv", "strips", "-", 1.0, POSITIVE),
    _c("ligament_strips.csv", "width_mm", "mm", 1.0, NONNEGATIVE, PlausibleRange(
        0.0, 40.0, "mm", "assumed (SOURCES.md §6): the packaged widths are 5-11.2 mm and the "
        "widest facet from C3 to L5 is 16.3 mm (Panjabi et al. 1993, SOURCES.md §3); above 40 "
        "mm the strips would spread across the whole vertebra (micrometres typed, 11200 for "
        "11.2, fall outside)")),
    *[_c("ligament_strips.csv", c, "-") for c in ("axis_x", "axis_y", "axis_z")],
    # the facet contact law (facet_contact_law.csv)
    _c("facet_contact_law.csv", "k_quadratic_N_per_mm2", "N/mm^2", 1.0, POSITIVE,
       PlausibleRange(20.0, 2e5, "N/mm^2", "the paper's 2e9 N/m^2 = 2000 N/mm^2; two decades "
                      "either side (the SI value typed into the mm column falls outside)")),
    _c("facet_contact_law.csv", "u_transition_mm", "mm", 1.0, POSITIVE, PlausibleRange(
        0.003, 30.0, "mm", "the paper's 3e-4 m = 0.3 mm; two decades either side")),
    _c("facet_contact_law.csv", "F_transition_N", "N", 1.0, POSITIVE, PlausibleRange(
        0.0, 1e7, "N", "k_quadratic * u_transition^2 within the ranges of those two columns")),
    _c("facet_contact_law.csv", "k_linear_N_per_mm", "N/mm", 1.0, POSITIVE, PlausibleRange(
        12.0, 1.2e5, "N/mm", "the paper's 1.2e6 N/m = 1200 N/mm; two decades either side")),
    _c("facet_contact_law.csv", "b_Ns_per_m", "N s/m", 1.0 / MM_PER_M, NONNEGATIVE,
       PlausibleRange(0.0, 3e4, "N s/m", _DAMPING.format("300 N s/m"))),
    # the facet joints (facets.csv)
    *[_c(_FAC, f"center_{a}_mm", "mm", 1.0, ANY, _COORD, get=_facet("center_c6", k))
      for k, a in enumerate("xyz")],
    _c(_FAC, "inclination_deg", "deg", 1.0, HardRange(-90.0, 90.0, True, True), _INCL,
       get=_facet("inclination_deg")),
    _c(_FAC, "sagittal_deg", "deg", 1.0, HardRange(0.0, 180.0, True, True), PlausibleRange(
        45.0, 135.0, "deg", "the C6 superior facet's angle to the sagittal plane is "
        "92.3 +- 11.5 (right) and 93.5 +- 9.4 deg (left), C3's 70 deg (PMC2219934 Table 2, "
        "SOURCES.md §3); 45-135 deg keeps the face turned less than halfway towards the "
        "midline or the side (radians typed fall outside)"),
       get=_facet("sagittal_deg"), absent=90.0),
    _c(_FAC, "radius_c6_mm", "mm", 1.0, POSITIVE, _RADIUS, get=_facet("radius_c6")),
    _c(_FAC, "radius_c5_mm", "mm", 1.0, POSITIVE, _RADIUS, get=_facet("radius_c5")),
    _c(_FAC, "gap_mm", "mm", 1.0, NONNEGATIVE, PlausibleRange(
        0.0, 10.0, "mm", "0 at rest in the packaged table; a gap above 10 mm (twice the facet "
        "radius) means no facet joint (use facets=False)"), get=_facet("gap")),
    _c(_FAC, "blend_C", "-", 1.0, NONNEGATIVE, PlausibleRange(
        0.0, 1e4, "-", "the packaged 16.7 = radius / transition penetration; above 1e4 the "
        "blend weight 1 - exp(-C sin alpha) is 1 at every tilt above 0.01 deg"),
       get=_facet("blend")),
    # the load cases (load_cases.csv)
    *[_c("load_cases.csv", c, "N", 1.0, ANY, PlausibleRange(
        -2000.0, 2000.0, "N", "100 x the 20 N Moroney test loads")) for c in
      ("Fx_N", "Fy_N", "Fz_N")],
    *[_c("load_cases.csv", c, "N m", NMM_PER_NM, ANY, PlausibleRange(
        -180.0, 180.0, "N m", "100 x the 1.8 N m Moroney test moments (N mm typed fall "
        "outside)")) for c in ("Mx_Nm", "My_Nm", "Mz_Nm")],
    # the validity limits of a ramp (validity_limits.csv)
    _c("validity_limits.csv", "limit_mm", "mm", 1.0, POSITIVE, PlausibleRange(
        0.1, 20.0, "mm", "a bound on a translation of C5 from its unloaded pose: the packaged "
        "3.5 mm is about a facet radius; below 0.1 mm the bound lies inside the Moroney test "
        "range, above 20 mm C5 has left C6 (metres or micrometres typed fall outside)")),
    _c("validity_limits.csv", "limit_deg", "deg", DEG, POSITIVE, PlausibleRange(
        1.0, 90.0, "deg", "a bound on a rotation of C5 from its unloaded pose: the packaged "
        "15.4 deg is the largest quasi-static flexion at failure of Voo et al. 1998; below 1 "
        "deg the bound lies inside the Moroney test range, 90 deg and more is not a cervical "
        "joint (radians typed fall outside)")),
]
COLUMNS: dict[tuple[str, str], Column] = {(c.table, c.name): c for c in _COLUMN_LIST}
"""Every number column of the parameter tables, by ``(table, column)``."""

L0_RATIO_RANGE = (0.5, 2.0)
"""A ligament's rest length over its insertion distance at the reference pose. The published
rest lengths are 0.97-1.03 times that distance; outside 0.5-2 the ligament would start half
slack or at twice its rest length (a unit slip in l0 or an insertion in the wrong frame or
unit)."""

# ---------------------------------------------------------------- study fields
STIFFNESS_SCALE_RANGE = PlausibleRange(
    0.05, 20.0, "-", "a factor on the model's stiffness; the tables' plausible stiffness ranges "
    "reach 1.2-1.5 decades either side of the published values (disc 1-1e4 N/mm around "
    "50-492 N/mm, ligament F_max 3-2000 N around 34-115 N), and 0.05-20 keeps a factor within "
    "them (a percentage, 80 for 0.8, falls outside)")
REF_STRAIN_RANGE = PlausibleRange(
    -0.8, 0.8, "-", "assumed: the strain of a ligament at its reference length as a fraction "
    "(the model forms of data/forms range over -0.4 to 0.1); a strain in percent, 10 for 0.1, "
    "falls outside")
ZONE_STUDY_RANGE = PlausibleRange(
    0.0, 30.0, "deg", "assumed: a neutral zone is a part of the range of motion, and the whole "
    "flexion-extension range of a cervical motion segment is about 20-30 deg at 3.5 N m "
    "(the packaged specimen curves reach 8-15 deg per direction); an angle in radians lies "
    "inside and cannot be told from this range")
ZONE_RATIO_STUDY_RANGE = PlausibleRange(
    1e-3, 1.0, "-", "the zone's stiffness as a fraction of the coordinate's (at most 1: the "
    "zone is the compliant part); below 1e-3 the zone has practically no stiffness, which "
    "the law's regularity does not resolve (assumed)")
ANGLE_SCALE_STUDY_RANGE = PlausibleRange(
    0.5, 1000.0, "deg", "assumed: the angle scale of Fritzkowski and Walczak's eq. (35) law; "
    "the model form fw35 ranges over 1-600 deg (1 rad = 57.3 deg makes the law's initial "
    "slope the table's); an angle in radians below 0.5 deg falls outside")
_FACTOR = HardRange(0.0, math.inf, lower_open=True)

_FIELD_LIST = [
    Field("disc", "stiffness_scale", "-", DiscStiffnessScale(0),
          plausible=STIFFNESS_SCALE_RANGE, hard=_FACTOR,
          doc="factor on k of both signs (Table 2)"),
    Field("disc", "stiffness_scale_pos", "-", DiscStiffnessScale(1),
          plausible=STIFFNESS_SCALE_RANGE, hard=_FACTOR, doc="factor on k+ (q >= 0) only"),
    Field("disc", "stiffness_scale_neg", "-", DiscStiffnessScale(-1),
          plausible=STIFFNESS_SCALE_RANGE, hard=_FACTOR, doc="factor on k- (q < 0) only"),
    Field("disc", "zone_pos_deg", "deg", DiscLawParameter("neutral-zone", 1, DEG),
          ("disc_law.csv", "zone_pos_deg"), plausible=ZONE_STUDY_RANGE,
          doc="neutral-zone law: half-width on the positive side [deg]"),
    Field("disc", "zone_neg_deg", "deg", DiscLawParameter("neutral-zone", 2, DEG),
          ("disc_law.csv", "zone_neg_deg"), plausible=ZONE_STUDY_RANGE,
          doc="neutral-zone law: half-width on the negative side [deg]"),
    Field("disc", "zone_ratio", "-", DiscLawParameter("neutral-zone", 3, 1.0),
          ("disc_law.csv", "zone_ratio"), plausible=ZONE_RATIO_STUDY_RANGE,
          doc="neutral-zone law: stiffness ratio inside the zone [-]"),
    Field("disc", "angle_scale_pos_deg", "deg", DiscLawParameter("fw35", 1, DEG),
          ("disc_law.csv", "angle_scale_pos_deg"), plausible=ANGLE_SCALE_STUDY_RANGE,
          doc="fw35 law: angle scale s for q >= 0 [deg]"),
    Field("disc", "angle_scale_neg_deg", "deg", DiscLawParameter("fw35", 2, DEG),
          ("disc_law.csv", "angle_scale_neg_deg"), plausible=ANGLE_SCALE_STUDY_RANGE,
          doc="fw35 law: angle scale s for q < 0 [deg]"),
    Field("ligament", "l0_mm", "mm", RestLength(), (_LIG, "l0_mm"),
          doc="rest length [mm] (Table 4)"),
    Field("ligament", "stiffness_scale", "-", LigamentForceScale(),
          plausible=STIFFNESS_SCALE_RANGE, hard=_FACTOR,
          doc="factor on the force axis (Table 3)"),
    Field("ligament", "ref_strain", "-", ReferenceStrain(), plausible=REF_STRAIN_RANGE,
          hard=HardRange(-0.9, math.inf, lower_open=True),
          doc="rest length by the strain at the reference pose, l0 = l_ref / (1 + p) [-]"),
    Field("facet", "gap_mm", "mm", FacetGeometry("gap"), (_FAC, "gap_mm"),
          doc="gap at the reference pose [mm]"),
    Field("facet", "inclination_deg", "deg", FacetGeometry("inclination_deg"),
          (_FAC, "inclination_deg"), doc="C6 facet angle to the transverse plane [deg]"),
    Field("facet", "sagittal_deg", "deg", FacetGeometry("sagittal_deg"),
          (_FAC, "sagittal_deg"), doc="C6 facet angle to the sagittal plane [deg] (90: facing "
          "straight back; above 90 posterolaterally)"),
    Field("facet", "radius_mm", "mm", FacetGeometry("radius"), (_FAC, "radius_c6_mm"),
          doc="radius of both faces [mm]"),
    Field("facet", "blend_C", "-", FacetGeometry("blend"), (_FAC, "blend_C"),
          doc="blending constant C of the cylinder paper"),
]
FIELDS: dict[tuple[str, str], Field] = {(f.kind, f.name): f for f in _FIELD_LIST}
"""Every parameter field of a study, by ``(kind, name)``."""


def column(table: str, name: str) -> Column:
    """The schema row of a table column (KeyError naming it when there is none)."""
    try:
        return COLUMNS[(table, name)]
    except KeyError:
        raise KeyError(f"no schema row for column {name!r} of {table}") from None


def columns_of(table: str) -> dict[str, Column]:
    """The schema rows of one table, by column name (in schema order)."""
    return {c.name: c for (t, _), c in COLUMNS.items() if t == table}


def field(kind: str, name: str) -> Field:
    """The field ``name`` of an element kind."""
    return FIELDS[(kind, name)]


def fields_of(kind: str) -> tuple[str, ...]:
    """The field names of an element kind, in schema order."""
    return tuple(n for k, n in FIELDS if k == kind)


@contextmanager
def register(*rows: Column | Field) -> Iterator[None]:
    """Add columns and fields to the schema for the duration of a ``with`` block (tests of
    the schema's reach; a new parameter of the package is a row of the lists above)."""
    added = []
    try:
        for row in rows:
            if isinstance(row, Column):
                key, table = (row.table, row.name), COLUMNS
            else:
                key, table = (row.kind, row.name), FIELDS
            if key in table:
                raise ValueError(f"the schema already has {key}")
            table[key] = row
            added.append((table, key))
        yield
    finally:
        for table, key in reversed(added):
            del table[key]
