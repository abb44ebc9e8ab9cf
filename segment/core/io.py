"""CSV parameter tables -> validated, immutable parameter records.

Every table lives in ``data/`` (shipped inside the package as ``segment.data``), has its unit
in each column header and a ``source`` column on every row. Loading checks every table before
anything is built: a missing column, a malformed or non-finite number, a length, radius or
stiffness <= 0, an unknown ligament name, unsorted curve points, descriptive columns that
contradict the row's name, and values outside their plausible range (:data:`PLAUSIBLE`, each
bound with its reason; ``strict=False`` makes those warnings) raise ``ValueError`` naming the
file, the file line (1 = header) and data row (1 = first data row), the column and the value;
every error of a file is listed at once (up to :data:`MAX_ERRORS`). Nothing half-loaded is
returned.

What is read: UTF-8 with or without a byte-order mark (a spreadsheet's "CSV UTF-8"), comma
separated (a ``;`` or tab separated file is named as such), numbers as people write them in a
CSV (``18``, ``1.8e1``, `` 18 ``, ``"18"``) but not what they do not mean there: ``0_58`` and
non-ASCII digits (which Python's ``float`` accepts), ``0,58`` (a decimal comma, with a hint),
``18 mm``.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math
import os
import re
import warnings
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from segment.elements.disc import DISC_LAWS, DOF_NAMES, DiscStiffness
from segment.elements.facet import ContactLaw, FacetJoint
from segment.elements.kinematics import ReferencePose
from segment.elements.ligament import MAX_STRIPS, Ligament, TrilinearCurve
from segment.elements.loads import Load

__all__ = ["LIGAMENT_NAMES", "PLAUSIBLE", "BodyInertia", "ImplausibleDataWarning",
           "ModelParameters", "PlausibleRange", "data_dir", "load_parameters", "parse_number"]

LIGAMENT_NAMES = ("ALL", "PLL", "FL", "ISL", "CL-left", "CL-right")
TRANSLATION_COEFFS = ("k_x+", "k_x-", "k_y+", "k_y-", "k_z+", "k_z-")
ROTATION_COEFFS = ("k_phix+", "k_phix-", "k_phiy+", "k_phiy-", "k_phiz+", "k_phiz-")
FACET_SIDES = ("left", "right")
MM_PER_M = 1000.0
NMM_PER_NM = 1000.0


@dataclass(frozen=True, eq=False)
class BodyInertia:
    """Table 1 inertia of one vertebra: mass [kg], principal inertia [kg mm^2], centre of
    gravity x-offset [mm] in its own frame."""

    body: str
    mass: float
    inertia: np.ndarray
    cog_x: float

    def __post_init__(self):
        if not (np.isfinite(self.mass) and self.mass > 0):
            raise ValueError(f"{self.body}: mass must be a finite number > 0 [kg], "
                             f"got {self.mass!r}")
        inertia = np.array(self.inertia, dtype=float)
        if inertia.shape != (3,) or not (np.all(np.isfinite(inertia)) and np.all(inertia > 0)):
            raise ValueError(f"{self.body}: inertia must be 3 finite numbers > 0 [kg mm^2], "
                             f"got {self.inertia!r}")
        if not np.isfinite(self.cog_x):
            raise ValueError(f"{self.body}: cog_x must be a finite number [mm], "
                             f"got {self.cog_x!r}")
        inertia.setflags(write=False)
        object.__setattr__(self, "inertia", inertia)


@dataclass(frozen=True, eq=False)
class ModelParameters:
    """Everything read from ``data/``, in internal units (mm, N, rad, s)."""

    reference: ReferencePose
    disc: DiscStiffness
    ligaments: tuple[Ligament, ...]
    facets: tuple[FacetJoint, ...]
    contact_law: ContactLaw
    load_cases: dict[str, Load]
    inertia: dict[str, BodyInertia]
    files: tuple[Path, ...]


def data_dir() -> Path:
    """Folder of the packaged CSV tables.

    Installed, they are the package ``segment.data``; in a source checkout imported from the
    repository root (where ``segment/`` shadows the installed mapping) they are ``data/`` beside
    the package.
    """
    try:
        return Path(str(resources.files("segment.data")))
    except ModuleNotFoundError:
        checkout = Path(__file__).resolve().parents[2] / "data"
        if checkout.is_dir():
            return checkout
        raise


# Plausibility ranges of every numeric column (issue 14): a value outside is an error unless
# the tables are loaded with ``strict=False`` (CLI: ``--allow-implausible``), which turns it into
# an ImplausibleDataWarning. The bounds are about one to two decades around the published
# values (DETC2000/MECH-6821 Tables 1-4 after de Jager 1996, its contact law and the Moroney et
# al. 1988 test loads), so that a typical unit slip (metres for mm, grams for kg, percent for a
# strain, N mm for N m, SI for mm units) or a stray exponent falls outside, while a parameter
# study within a decade of the published model stays inside.
@dataclass(frozen=True)
class PlausibleRange:
    """Closed interval [lower, upper] of a column, its unit and why."""

    lower: float
    upper: float
    unit: str
    reason: str


_COORD = PlausibleRange(-100.0, 100.0, "mm", "coordinates within one cervical vertebra: the "
                        "published insertions and facet centres lie within 47.3 mm of their "
                        "vertebra's origin; 100 mm is about twice that (a value in metres or a "
                        "stray exponent falls outside)")
_DAMPING_REASON = "a few decades around de Jager's (1996) {}; dynamics only"
PLAUSIBLE: dict[tuple[str, str], PlausibleRange] = {
    ("inertia.csv", "mass_kg"): PlausibleRange(
        0.02, 2.0, "kg", "Table 1 gives 0.23-0.24 kg; a decade either side (grams fall outside)"),
    **{("inertia.csv", c): PlausibleRange(
        0.2, 50.0, "kg cm^2", "Table 1 gives 2.3-4.7 kg cm^2; a decade either side "
        "(kg mm^2 or g cm^2 fall outside)") for c in ("Ixx_kg_cm2", "Iyy_kg_cm2", "Izz_kg_cm2")},
    **{("inertia.csv", c): PlausibleRange(
        -60.0, 60.0, "mm", "Table 1 offsets are within 18.4 mm; 60 mm exceeds a cervical "
        "vertebral body and disc together (metres fall outside unless near 0)")
       for c in ("sx_mm", "gx_mm")},
    ("inertia.csv", "sz_mm"): PlausibleRange(
        5.0, 60.0, "mm", "height of C5's origin above C6's: Table 1 gives 17.4-18.4 mm; 5-60 mm "
        "keeps the vertebrae above one another (a value in metres falls outside)"),
    ("inertia.csv", "phi_y_deg"): PlausibleRange(
        -45.0, 45.0, "deg", "Table 1 gives -5.2/-5.6 deg; a rest tilt beyond 45 deg between "
        "adjacent vertebrae is no physiological posture"),
    ("disc_translational.csv", "k_N_per_mm"): PlausibleRange(
        1.0, 1e4, "N/mm", "Table 2 (Moroney et al. 1988) gives 50-492 N/mm; about 1.5 decades "
        "either side (N/m typed or a x1000 slip fall outside)"),
    ("disc_translational.csv", "b_Ns_per_m"): PlausibleRange(
        0.0, 1e5, "N s/m", _DAMPING_REASON.format("1000 N s/m")),
    ("disc_rotational.csv", "k_Nm_per_deg"): PlausibleRange(
        0.005, 20.0, "N m/deg", "Table 2 gives 0.21-0.42 N m/deg; about 1.5 decades either "
        "side (N mm/deg or N m/rad typos fall outside)"),
    ("disc_rotational.csv", "b_Nms_per_rad"): PlausibleRange(
        0.0, 150.0, "N m s/rad", _DAMPING_REASON.format("1.5 N m s/rad")),
    **{("ligaments.csv", c): _COORD for c in ("c5_x_mm", "c5_y_mm", "c5_z_mm", "c6_x_mm",
                                               "c6_y_mm", "c6_z_mm")},
    ("ligaments.csv", "l0_mm"): PlausibleRange(
        1.0, 60.0, "mm", "Table 4 gives 6-18 mm; a ligament of one motion segment is 1-60 mm "
        "long (metres fall outside)"),
    ("ligaments.csv", "eps_max"): PlausibleRange(
        0.05, 2.0, "-", "Table 3 gives 0.21-0.58 as a fraction; strain in percent falls "
        "outside"),
    ("ligaments.csv", "F_max_N"): PlausibleRange(
        3.0, 2000.0, "N", "Table 3 gives 34-115 N; about 1.2 decades either side (kN or mN "
        "slips fall outside)"),
    ("ligaments.csv", "b_Ns_per_m"): PlausibleRange(
        0.0, 3e4, "N s/m", _DAMPING_REASON.format("300 N s/m")),
    ("facet_contact_law.csv", "k_quadratic_N_per_mm2"): PlausibleRange(
        20.0, 2e5, "N/mm^2", "the paper's 2e9 N/m^2 = 2000 N/mm^2; two decades either side "
        "(the SI value typed into the mm column falls outside)"),
    ("facet_contact_law.csv", "u_transition_mm"): PlausibleRange(
        0.003, 30.0, "mm", "the paper's 3e-4 m = 0.3 mm; two decades either side"),
    ("facet_contact_law.csv", "F_transition_N"): PlausibleRange(
        0.0, 1e7, "N", "k_quadratic * u_transition^2 within the ranges of those two columns"),
    ("facet_contact_law.csv", "k_linear_N_per_mm"): PlausibleRange(
        12.0, 1.2e5, "N/mm", "the paper's 1.2e6 N/m = 1200 N/mm; two decades either side"),
    ("facet_contact_law.csv", "b_Ns_per_m"): PlausibleRange(
        0.0, 3e4, "N s/m", _DAMPING_REASON.format("300 N s/m")),
    **{("facets.csv", c): _COORD for c in ("center_x_mm", "center_y_mm", "center_z_mm")},
    ("facets.csv", "inclination_deg"): PlausibleRange(
        5.0, 85.0, "deg", "the C6 superior facet is inclined 42.3-43.2 deg to the transverse "
        "plane (the source of the packaged facets.csv); 5-85 deg keeps it a posterosuperior "
        "facing face (radians typed fall outside)"),
    **{("facets.csv", c): PlausibleRange(
        0.5, 20.0, "mm", "equivalent-area radius 4.9-5.6 mm; 0.5-20 mm (metres fall "
        "outside)") for c in ("radius_c6_mm", "radius_c5_mm")},
    ("facets.csv", "gap_mm"): PlausibleRange(
        0.0, 10.0, "mm", "0 at rest in the packaged table; a gap above 10 mm (twice the facet "
        "radius) means no facet joint (use facets=False)"),
    ("facets.csv", "blend_C"): PlausibleRange(
        0.0, 1e4, "-", "the packaged 16.7 = radius / transition penetration; above 1e4 the "
        "blend weight 1 - exp(-C sin alpha) is 1 at every tilt above 0.01 deg"),
    **{("disc_law.csv", c): PlausibleRange(
        0.0, 30.0, "deg", "neutral-zone half-width: Panjabi's neutral zones of cervical "
        "segments are a few degrees; 30 deg exceeds the whole range of motion of one lower "
        "cervical segment (radians typed as degrees fall inside, so also see the ratio)")
       for c in ("zone_pos_deg", "zone_neg_deg")},
    ("disc_law.csv", "zone_ratio"): PlausibleRange(
        1e-3, 1.0, "-", "stiffness inside the neutral zone over the stiffness beyond it: at "
        "most 1 (1 is eq. (1)); below 1e-3 the zone is a free joint (the equilibrium would "
        "rest on the ligaments alone)"),
    **{("disc_law.csv", c): PlausibleRange(
        0.5, 600.0, "deg", "angle scale s of the fw35 law: 57.3 deg (1 rad) is Fritzkowski "
        "and Walczak's eq. (35); below 0.5 deg its singularity (pi s) falls below 1.6 deg, "
        "above 600 deg the law is linear within 0.1 % over 20 deg")
       for c in ("angle_scale_pos_deg", "angle_scale_neg_deg")},
    **{("load_cases.csv", c): PlausibleRange(
        -2000.0, 2000.0, "N", "100 x the 20 N Moroney test loads") for c in
       ("Fx_N", "Fy_N", "Fz_N")},
    **{("load_cases.csv", c): PlausibleRange(
        -180.0, 180.0, "N m", "100 x the 1.8 N m Moroney test moments (N mm typed fall "
        "outside)") for c in ("Mx_Nm", "My_Nm", "Mz_Nm")},
    ("validity_limits.csv", "limit_mm"): PlausibleRange(
        0.1, 20.0, "mm", "a bound on a translation of C5 from its unloaded pose: the packaged "
        "3.5 mm is about a facet radius; below 0.1 mm the bound lies inside the Moroney test "
        "range, above 20 mm C5 has left C6 (metres or micrometres typed fall outside)"),
    ("validity_limits.csv", "limit_deg"): PlausibleRange(
        1.0, 90.0, "deg", "a bound on a rotation of C5 from its unloaded pose: the packaged "
        "15.4 deg is the largest quasi-static flexion at failure of Voo et al. 1998; below 1 "
        "deg the bound lies inside the Moroney test range, 90 deg and more is not a cervical "
        "joint (radians typed fall outside)"),
    ("ligament_strips.csv", "width_mm"): PlausibleRange(
        0.0, 40.0, "mm", "assumed (SOURCES.md §6): the packaged widths are 5-11.2 mm and the "
        "widest facet from C3 to L5 is 16.3 mm (Panjabi et al. 1993, SOURCES.md §3); above 40 "
        "mm the strips would spread across the whole vertebra (micrometres typed, 11200 for "
        "11.2, fall outside)"),
}
# ligaments: rest length / insertion distance at the reference pose. The published rest lengths
# are 0.97-1.03 times that distance; outside 0.5-2 the ligament would start half slack or at
# twice its rest length (a unit slip in l0 or an insertion in the wrong frame or unit).
L0_RATIO_RANGE = (0.5, 2.0)
# Columns without a plausible range: bounded by hard checks (curve points sorted within (0, 1),
# inclination within (-90, 90) besides its range above).
UNRANGED = {("ligaments.csv", c) for c in ("A_eps_rel", "A_F_rel", "B_eps_rel", "B_F_rel")}
MAX_ERRORS = 20
"""At most this many errors of one file are listed in one message."""


class ImplausibleDataWarning(UserWarning):
    """A data value outside its plausible range, loaded because ``strict=False``."""


# What people write in a CSV cell for a number: an optional sign, ASCII digits with at most
# one decimal point, an optional exponent (surrounding spaces and quotes are stripped before).
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_DECIMAL_COMMA = re.compile(r"[+-]?[0-9]+,[0-9]+")


def parse_number(text: str) -> float:
    """The float a CSV cell means, or ValueError saying why the text is not a plain number.

    Accepted: ``18``, ``+18``, ``18.``, ``.5``, ``1.8e1``, ``-1E-3`` with surrounding spaces;
    ``nan``/``inf`` spelled out (reported as not finite by the caller). Rejected (Python's
    ``float()`` would accept the first two): ``0_58``, non-ASCII digits, a decimal comma
    ``0,58`` (with a hint), units ``18 mm``, hex.
    """
    raw = text.strip()
    if _NUMBER.fullmatch(raw):
        return float(raw)
    if raw.lower().lstrip("+-") in ("nan", "inf", "infinity"):
        return float(raw)
    if not raw:
        raise ValueError(f"expected a number, got {text!r} (an empty cell)")
    if _DECIMAL_COMMA.fullmatch(raw):
        raise ValueError(f"expected a number, got {text!r}: a decimal comma? write "
                         f"{raw.replace(',', '.')!r} with a decimal point")
    if "_" in raw:
        raise ValueError(f"expected a number, got {text!r}: underscores are not accepted")
    if not raw.isascii():
        raise ValueError(f"expected a number, got {text!r}: only ASCII digits 0-9 are "
                         "accepted")
    raise ValueError(f"expected a plain number (the unit is in the column header), "
                     f"got {text!r}")


def _read_text(path: Path, what: str = "") -> str:
    """The file as text: UTF-8 with or without a byte-order mark (``what``: which kind of
    file, for the not-found message)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ValueError(f"{path}: {what + ' ' if what else ''}file not found") from None
    except IsADirectoryError:
        raise ValueError(f"{path}: is a folder, expected a CSV file") from None
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ValueError(f"{path.name}: UTF-16 text; save the table as UTF-8 (\"CSV UTF-8\")")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path.name}: not UTF-8 text ({exc.reason} at byte "
                         f"{exc.start}); save the table as UTF-8") from None


class _Table:
    """A CSV file with row/column-aware accessors that collect precise errors.

    Errors name the file line (1 = header) and the data row (1 = first data row). With
    ``collect=True`` (the parameter tables, the parameter-space and target files) up to
    :data:`MAX_ERRORS` of one file are collected and raised together by :meth:`finish`;
    otherwise the first error raises at once. ``what`` names the kind of file in the
    not-found message (e.g. ``"targets"``).
    """

    def __init__(self, path: Path, required: tuple[str, ...], *, strict: bool = True,
                 collect: bool = False, what: str = ""):
        self.path = Path(path)
        self.name = self.path.name
        self.strict = strict
        self.collect = collect       # False: raise at the first error (other modules' tables)
        self.errors: list[str] = []
        self.bad_rows: set[int] = set()
        self.broken_rows: set[int] = set()
        text = _read_text(self.path, what)
        try:
            reader = csv.reader(io.StringIO(text, newline=""))
            lines = []
            for cells in reader:
                if any(cell.strip() for cell in cells):
                    lines.append((reader.line_num, cells))
        except csv.Error as exc:
            raise ValueError(f"{self.name}: not a readable CSV table ({exc})") from None
        if not lines:
            raise ValueError(f"{self.name}: empty file")
        header = [h.strip() for h in lines[0][1]]
        missing = [c for c in (*required, "source") if c not in header]
        if missing:
            hint = ""
            for sep, label in ((";", "';' (semicolons)"), ("\t", "tabs")):
                if len(header) == 1 and sep in header[0]:
                    hint = (f"; the fields are separated by {label}, not commas: save the "
                            "table as comma-separated CSV")
            raise ValueError(f"{self.name}: missing column(s) {missing}; expected "
                             f"{[*required, 'source']}{hint}")
        self.records = []
        self.line_of = {}
        for i, (line, cells) in enumerate(lines[1:], start=1):
            self.line_of[i] = line
            if len(cells) != len(header):
                self.error(i, None, f"expected {len(header)} fields ({', '.join(header)}), "
                                    f"got {len(cells)}")
                self.broken_rows.add(i)      # its cells are not parsed (no follow-up errors)
                cells = (cells + [""] * len(header))[: len(header)]
            self.records.append({h: c.strip() for h, c in zip(header, cells, strict=True)})
        if not self.records:
            raise ValueError(f"{self.name}: no data rows")
        for i, row in self.rows():
            if not row["source"] and i not in self.broken_rows:
                self.error(i, "source", "empty; every row must say where its numbers come from")

    def where(self, i: int | None, col: str | None) -> str:
        parts = [] if i is None else [f"line {self.line_of[i]} (row {i})"]
        if col is not None:
            parts.append(f"column {col!r}" if "'" not in col else f"columns {col}")
        return ", ".join(parts)

    def error(self, i: int | None, col: str | None, what: str) -> None:
        """Record an error of row ``i`` (None: the file) in column ``col``."""
        if i is not None:
            self.bad_rows.add(i)
        self.errors.append(f"{self.where(i, col)}: {what}" if (i or col) else what)
        if not self.collect:
            self.finish()

    def implausible(self, i: int | None, col: str, what: str) -> None:
        """An error, or with ``strict=False`` a warning."""
        if self.strict:
            self.error(i, col, what + "; load with strict=False (CLI: --allow-implausible) "
                               "to accept it")
        else:
            warnings.warn(f"{self.name}, {self.where(i, col)}: {what}", ImplausibleDataWarning,
                          stacklevel=4)

    def finish(self) -> None:
        """Raise one ValueError listing the errors collected so far (if any)."""
        if not self.errors:
            return
        if len(self.errors) == 1:
            raise ValueError(f"{self.name}, {self.errors[0]}")
        shown = self.errors[:MAX_ERRORS]
        more = len(self.errors) - len(shown)
        raise ValueError(f"{self.name}: {len(self.errors)} errors: " + "; ".join(shown)
                         + (f"; and {more} more" if more else ""))

    def ok(self, i: int) -> bool:
        return i not in self.bad_rows

    def rows(self):
        return enumerate(self.records, start=1)

    def number(self, i: int, row: dict, col: str, *, positive=False, nonnegative=False) -> float:
        """The cell as a finite float (NaN after recording an error)."""
        if i in self.broken_rows:
            return math.nan
        raw = row[col]
        try:
            value = parse_number(raw)
        except ValueError as exc:
            self.error(i, col, str(exc))
            return math.nan
        if math.isnan(value) or math.isinf(value):
            self.error(i, col, f"expected a finite number, got {raw!r}")
            return math.nan
        if positive and not value > 0:
            self.error(i, col, f"must be > 0, got {value:g}")
            return math.nan
        if nonnegative and not value >= 0:
            self.error(i, col, f"must be >= 0, got {value:g}")
            return math.nan
        rng = PLAUSIBLE.get((self.name, col))
        if rng is not None and not rng.lower <= value <= rng.upper:
            self.implausible(i, col, f"{value:g} {rng.unit} is outside the plausible range "
                                     f"{rng.lower:g} to {rng.upper:g} {rng.unit} ({rng.reason})")
        return value

    def key(self, i: int, row: dict, col: str, allowed: tuple[str, ...]) -> str | None:
        if i in self.broken_rows:
            return None
        value = row[col]
        if value not in allowed:
            self.error(i, col, f"unknown value {value!r}; expected one of {', '.join(allowed)}")
            return None
        return value

    def build(self, i: int, col: str | None, fn, *args):
        """``fn(*args)`` for a clean row; a ValueError or arithmetic error becomes a row error."""
        if not self.ok(i):
            return None
        try:
            return fn(*args)
        except (ValueError, ArithmeticError) as exc:
            self.error(i, col, str(exc))
            return None

    def require_all(self, col: str, found: list[str | None], expected: tuple[str, ...]):
        for i, k in enumerate(found, start=1):
            if k is not None and k in found[: i - 1]:
                first = found.index(k) + 1
                self.error(i, col, f"duplicate value {k!r} (already in row {first}, line "
                                   f"{self.line_of[first]})")
        missing = [k for k in expected if k not in found]
        if missing:
            self.error(None, col, f"missing row(s) for {missing}")


def _inertia(path: Path, strict: bool) -> tuple[ReferencePose, dict[str, BodyInertia]]:
    cols = ("body", "mass_kg", "Ixx_kg_cm2", "Iyy_kg_cm2", "Izz_kg_cm2", "sx_mm", "sz_mm",
            "gx_mm", "phi_y_deg")
    t = _Table(path, cols, strict=strict, collect=True)
    bodies, ref, found = {}, None, []
    for i, row in t.rows():
        body = t.key(i, row, "body", ("C5", "C6"))
        found.append(body)
        mass = t.number(i, row, "mass_kg", positive=True)
        inertia = np.array([t.number(i, row, c, positive=True)
                            for c in ("Ixx_kg_cm2", "Iyy_kg_cm2", "Izz_kg_cm2")]) * 100.0
        inertia.setflags(write=False)
        sx, sz = t.number(i, row, "sx_mm"), t.number(i, row, "sz_mm")
        phi = t.number(i, row, "phi_y_deg")
        gx = t.number(i, row, "gx_mm")
        bodies[body] = t.build(i, None, lambda b=body, m=mass, j=inertia, g=gx:
                               BodyInertia(b, m, j, g))
        if body == "C5":
            ref = t.build(i, None, lambda sx=sx, sz=sz, phi=phi: ReferencePose([sx, 0.0, sz],
                                                                               phi))
    t.require_all("body", found, ("C5", "C6"))
    t.finish()
    return ref, bodies


def _disc(path_t: Path, path_r: Path, strict: bool) -> DiscStiffness:
    k = {}
    b = {}
    for path, coeffs, kcol, bcol, kconv, bconv in (
        (path_t, TRANSLATION_COEFFS, "k_N_per_mm", "b_Ns_per_m", 1.0, 1.0 / MM_PER_M),
        (path_r, ROTATION_COEFFS, "k_Nm_per_deg", "b_Nms_per_rad", NMM_PER_NM * 180.0 / math.pi,
         NMM_PER_NM),
    ):
        t = _Table(path, ("coefficient", kcol, bcol), strict=strict, collect=True)
        found = []
        for i, row in t.rows():
            name = t.key(i, row, "coefficient", coeffs)
            found.append(name)
            k[name] = t.number(i, row, kcol, positive=True) * kconv
            b[name] = t.number(i, row, bcol, nonnegative=True) * bconv
            # optional descriptive columns must agree with the coefficient's name
            if name is not None:
                dof, side = name[2:-1].replace("phi", "phi_"), name[-1]
                for col, expected in (("dof", dof), ("side", side)):
                    if col in row and row[col] != expected:
                        t.error(i, col, f"{row[col]!r} contradicts coefficient {name!r} "
                                        f"(expected {expected!r})")
        t.require_all("coefficient", found, coeffs)
        t.finish()
    coeffs = TRANSLATION_COEFFS + ROTATION_COEFFS
    k_pos = [k[c] for c in coeffs[0::2]]
    k_neg = [k[c] for c in coeffs[1::2]]
    damping = [b[c] for c in coeffs[0::2]]
    return DiscStiffness(np.array(k_pos), np.array(k_neg), np.array(damping))


DISC_LAW_COLUMNS = ("dof", "law", "zone_pos_deg", "zone_neg_deg", "zone_ratio",
                    "angle_scale_pos_deg", "angle_scale_neg_deg")
_LAW_COLUMNS = {"linear": (), "neutral-zone": ("zone_pos_deg", "zone_neg_deg", "zone_ratio"),
                "fw35": ("angle_scale_pos_deg", "angle_scale_neg_deg")}
ROTATION_DOFS = ("phi_x", "phi_y", "phi_z")


def _disc_law_table(path: Path, disc: DiscStiffness, strict: bool) -> DiscStiffness:
    """The restoring law of the disc's rotations (``disc_law.csv``, optional): one row per
    rotation (phi_x, phi_y, phi_z) with its law (:data:`segment.elements.disc.DISC_LAWS`) and
    the law's parameters in degrees; the cells of other laws' parameters stay empty. A folder
    without the table, or a rotation without a row, keeps eq. (1) (the published model)."""
    if not path.exists():
        return disc
    t = _Table(path, DISC_LAW_COLUMNS, strict=strict, collect=True)
    found = []
    laws = list(disc.law)
    lp = np.array(disc.law_parameters, dtype=float)
    for i, row in t.rows():
        dof = t.key(i, row, "dof", ROTATION_DOFS)
        law = t.key(i, row, "law", DISC_LAWS)
        if dof is not None and dof in found:
            first = found.index(dof) + 1
            t.error(i, "dof", f"duplicate value {dof!r} (already in row {first}, line "
                              f"{t.line_of[first]})")
        found.append(dof)
        if law is None:
            continue
        wanted = _LAW_COLUMNS[law]
        values = {}
        for col in DISC_LAW_COLUMNS[2:]:
            if col in wanted:
                if not row[col]:
                    t.error(i, col, f"the {law} law needs {', '.join(wanted)}; got an empty "
                                    "cell")
                    continue
                values[col] = t.number(i, row, col, positive=col != "zone_pos_deg"
                                       and col != "zone_neg_deg", nonnegative=True)
            elif row[col]:
                t.error(i, col, f"not a parameter of the {law} law (it takes "
                                f"{', '.join(wanted) or 'none'}); leave the cell empty, got "
                                f"{row[col]!r}")
        if dof is None or not t.ok(i):
            continue
        k = DOF_NAMES.index(dof)
        laws[k] = law
        lp[k] = 0.0
        rad = math.pi / 180.0
        if law == "neutral-zone":
            lp[k] = (values["zone_pos_deg"] * rad, values["zone_neg_deg"] * rad,
                     values["zone_ratio"])
            if values["zone_ratio"] > 1.0:
                t.error(i, "zone_ratio", f"must be <= 1 (the zone is the compliant part), "
                                         f"got {values['zone_ratio']:g}")
        elif law == "fw35":
            lp[k, :2] = (values["angle_scale_pos_deg"] * rad,
                         values["angle_scale_neg_deg"] * rad)
    t.finish()
    return DiscStiffness(disc.k_positive, disc.k_negative, disc.damping, tuple(laws), lp)


def _ligament(name, c5, c6, l0, eps_max, f_max, rel, damping) -> Ligament:
    curve = TrilinearCurve.from_table3(eps_max=eps_max, f_max_N=f_max,
                                       a_rel=(rel["A_eps_rel"], rel["A_F_rel"]),
                                       b_rel=(rel["B_eps_rel"], rel["B_F_rel"]))
    return Ligament(name, np.array(c5), np.array(c6), l0, curve, damping)


def _ligaments(path: Path, reference: ReferencePose, strict: bool) -> tuple[Ligament, ...]:
    cols = ("name", "c5_x_mm", "c5_y_mm", "c5_z_mm", "c6_x_mm", "c6_y_mm", "c6_z_mm", "l0_mm",
            "eps_max", "F_max_N", "A_eps_rel", "A_F_rel", "B_eps_rel", "B_F_rel", "b_Ns_per_m")
    t = _Table(path, cols, strict=strict, collect=True)
    out, found = [], []
    for i, row in t.rows():
        name = t.key(i, row, "name", LIGAMENT_NAMES)
        found.append(name)
        c5 = [t.number(i, row, c) for c in ("c5_x_mm", "c5_y_mm", "c5_z_mm")]
        c6 = [t.number(i, row, c) for c in ("c6_x_mm", "c6_y_mm", "c6_z_mm")]
        l0 = t.number(i, row, "l0_mm", positive=True)
        eps_max = t.number(i, row, "eps_max", positive=True)
        f_max = t.number(i, row, "F_max_N", positive=True)
        rel = {c: t.number(i, row, c, nonnegative=True)
               for c in ("A_eps_rel", "A_F_rel", "B_eps_rel", "B_F_rel")}
        damping = t.number(i, row, "b_Ns_per_m", nonnegative=True) / MM_PER_M
        if not t.ok(i):
            continue
        if not (0 < rel["A_eps_rel"] < rel["B_eps_rel"] < 1.0):
            t.error(i, "'A_eps_rel', 'B_eps_rel'", f"curve strains must be sorted "
                    f"0 < A < B < 1, got {rel['A_eps_rel']:g}, {rel['B_eps_rel']:g}")
        if not (rel["A_F_rel"] <= rel["B_F_rel"] <= 1.0):
            t.error(i, "'A_F_rel', 'B_F_rel'", f"curve forces must be sorted A <= B <= 1, "
                    f"got {rel['A_F_rel']:g}, {rel['B_F_rel']:g}")
        # cross-column plausibility: the sides of the capsular ligaments, and l0 against the
        # insertion distance at the reference pose (see L0_RATIO_RANGE)
        side = {"CL-left": 1.0, "CL-right": -1.0}.get(name, 0.0)
        for col, y in (("c5_y_mm", c5[1]), ("c6_y_mm", c6[1])):
            if side * y < 0:
                t.implausible(i, col, f"{name} inserts at y = {y:g} mm, on the "
                                      f"{'right' if y < 0 else 'left'} (+y is left)")
        if reference is not None:
            dist = float(np.linalg.norm(reference.s0 + reference.R0 @ np.array(c5)
                                        - np.array(c6)))
            lo, hi = L0_RATIO_RANGE
            if not lo * dist <= l0 <= hi * dist:
                t.implausible(i, "'l0_mm', 'c5_*_mm', 'c6_*_mm'",
                              f"rest length {l0:g} mm is {l0 / dist:.3g} x the distance "
                              f"{dist:.3g} mm of the insertions at the reference pose, outside "
                              f"{lo:g}-{hi:g} x (published rest lengths are 0.97-1.03 x; a "
                              "unit slip in l0 or an insertion in the wrong frame or unit?)")
        out.append(t.build(i, None, _ligament, name, c5, c6, l0, eps_max, f_max, rel, damping))
    t.require_all("name", found, LIGAMENT_NAMES)
    t.finish()
    return tuple(out)


def _strips(path: Path, ligaments: tuple[Ligament, ...], strict: bool) -> tuple[Ligament, ...]:
    """Strip count and insertion width per ligament (``ligament_strips.csv``, eq. 9a of
    Tejszerska and Gzik); a data folder without the table keeps one strip per ligament."""
    if not path.exists():
        return ligaments
    t = _Table(path, ("name", "strips", "width_mm", "axis_x", "axis_y", "axis_z"), strict=strict,
               collect=True)
    spec, found = {}, []
    for i, row in t.rows():
        name = t.key(i, row, "name", LIGAMENT_NAMES)
        found.append(name)
        n = t.number(i, row, "strips", positive=True)
        # a hard limit (memory and time), not a plausibility: strict=False does not lift it
        if t.ok(i) and not (n == int(n) and n <= MAX_STRIPS):
            t.error(i, "strips", f"expected an integer from 1 to {MAX_STRIPS}, got "
                                 f"{row['strips']!r} (MAX_STRIPS: every strip is a row of the "
                                 "compiled kernels; 100 strips of an 11.2 mm insertion lie "
                                 "0.11 mm apart)")
        width = t.number(i, row, "width_mm", nonnegative=True)
        axis = [t.number(i, row, c) for c in ("axis_x", "axis_y", "axis_z")]
        if t.ok(i) and not (np.isfinite(np.linalg.norm(axis)) and any(axis)):
            t.error(i, "'axis_x', 'axis_y', 'axis_z'", f"expected a direction of finite length, "
                    f"got ({', '.join(f'{a:g}' for a in axis)})")
        if t.ok(i) and name is not None:
            spec[name] = (int(n), width, np.array(axis))
    t.require_all("name", found, LIGAMENT_NAMES)
    t.finish()
    return tuple(dataclasses.replace(lig, strips=spec[lig.name][0], width=spec[lig.name][1],
                                     width_axis=spec[lig.name][2]) for lig in ligaments)


def _contact_law(path: Path, strict: bool) -> ContactLaw:
    cols = ("k_quadratic_N_per_mm2", "u_transition_mm", "F_transition_N", "k_linear_N_per_mm",
            "b_Ns_per_m")
    t = _Table(path, cols, strict=strict, collect=True)
    if len(t.records) != 1:
        raise ValueError(f"{t.name}: expected exactly one data row, got {len(t.records)}")
    (i, row), = t.rows()
    values = {c: t.number(i, row, c, positive=c != "b_Ns_per_m", nonnegative=True)
              for c in cols}
    law = t.build(i, None, lambda: ContactLaw(
        k_quadratic=values["k_quadratic_N_per_mm2"], u_transition=values["u_transition_mm"],
        k_linear=values["k_linear_N_per_mm"], damping=values["b_Ns_per_m"] / MM_PER_M))
    f_t = values["F_transition_N"]
    if law is not None and not math.isclose(f_t, law.force_at_transition, rel_tol=1e-9):
        t.error(i, "F_transition_N", f"the law must be continuous, k_quadratic * "
                f"u_transition^2 = {law.force_at_transition:g} N, got {f_t:g}")
    t.finish()
    return law


def _facets(path: Path, reference: ReferencePose, strict: bool) -> tuple[FacetJoint, ...]:
    cols = ("side", "center_x_mm", "center_y_mm", "center_z_mm", "inclination_deg",
            "radius_c6_mm", "radius_c5_mm", "gap_mm", "blend_C")
    t = _Table(path, cols, strict=strict, collect=True)
    out, found = [], []
    for i, row in t.rows():
        side = t.key(i, row, "side", FACET_SIDES)
        found.append(side)
        center = [t.number(i, row, c) for c in ("center_x_mm", "center_y_mm", "center_z_mm")]
        incl = t.number(i, row, "inclination_deg")
        if not -90.0 < incl < 90.0:
            t.error(i, "inclination_deg", f"must lie in (-90, 90), got {incl:g}")
        radii = [t.number(i, row, c, positive=True) for c in ("radius_c6_mm", "radius_c5_mm")]
        gap = t.number(i, row, "gap_mm", nonnegative=True)
        blend = t.number(i, row, "blend_C", nonnegative=True)
        if side is not None and t.ok(i) and (center[1] > 0) != (side == "left") and center[1] != 0:
            t.implausible(i, "center_y_mm", f"the {side} facet is centred at y = "
                                            f"{center[1]:g} mm (+y is left)")
        out.append(t.build(i, None, lambda side=side, center=center, incl=incl, radii=radii,
                           gap=gap, blend=blend: FacetJoint.at_reference(
            side, center_c6=center, inclination_deg=incl, radius_c6=radii[0],
            radius_c5=radii[1], gap=gap, blend=blend, reference=reference)))
    t.require_all("side", found, FACET_SIDES)
    t.finish()
    return tuple(out)


def _load_cases(path: Path, strict: bool) -> dict[str, Load]:
    cols = ("name", "Fx_N", "Fy_N", "Fz_N", "Mx_Nm", "My_Nm", "Mz_Nm", "description")
    t = _Table(path, cols, strict=strict, collect=True)
    out: dict[str, Load] = {}
    first: dict[str, int] = {}
    for i, row in t.rows():
        name = row["name"]
        if not name:
            t.error(i, "name", "empty")
        elif name in first:
            t.error(i, "name", f"duplicate {name!r} (already in row {first[name]}, line "
                               f"{t.line_of[first[name]]})")
        else:
            first[name] = i
        force = [t.number(i, row, c) for c in ("Fx_N", "Fy_N", "Fz_N")]
        moment = [t.number(i, row, c) for c in ("Mx_Nm", "My_Nm", "Mz_Nm")]
        load = t.build(i, None, lambda f=force, m=moment, n=name: Load.from_si(
            force_N=f, moment_Nm=m, name=n))
        if load is not None:
            out[name] = load
    t.finish()
    return out


def load_parameters(directory: str | os.PathLike | None = None, *,
                    strict: bool = True) -> ModelParameters:
    """Read and validate every table of ``directory`` (default: the packaged ``data/``).

    Parameters
    ----------
    directory : str or path-like, optional
        A folder with the CSV tables of ``data/``.
    strict : bool
        True (default): a value outside its plausible range (:data:`PLAUSIBLE`, with the
        reason of each bound) or a cross-column implausibility is an error. False: it is an
        :class:`ImplausibleDataWarning` and the value is used, for users who know what they do.
        Malformed numbers, non-finite values, wrong signs and contradicting columns are errors
        either way.

    Raises
    ------
    ValueError
        Naming the file, the file line and data row, the column and the value; every error of
        one file (up to :data:`MAX_ERRORS`) in one message.
    """
    if directory is not None and not isinstance(directory, (str, os.PathLike)):
        raise TypeError(f"data_dir must be a folder path (str or os.PathLike) or None, got "
                        f"{type(directory).__name__}")
    if not isinstance(strict, bool):
        raise TypeError(f"strict must be True or False, got {strict!r}")
    d = data_dir() if directory is None else Path(directory)
    if not d.is_dir():
        raise ValueError(f"{d}: not a folder of parameter tables (expected the CSV files of "
                         f"data/)")
    files = {name: d / name for name in (
        "inertia.csv", "disc_translational.csv", "disc_rotational.csv", "ligaments.csv",
        "facet_contact_law.csv", "facets.csv", "load_cases.csv")}
    reference, inertia = _inertia(files["inertia.csv"], strict)
    disc = _disc_law_table(d / "disc_law.csv",
                     _disc(files["disc_translational.csv"], files["disc_rotational.csv"],
                           strict), strict)
    ligaments = _strips(d / "ligament_strips.csv",
                        _ligaments(files["ligaments.csv"], reference, strict), strict)
    law = _contact_law(files["facet_contact_law.csv"], strict)
    facets = _facets(files["facets.csv"], reference, strict)
    cases = _load_cases(files["load_cases.csv"], strict)
    optional = tuple(d / name for name in ("ligament_strips.csv", "disc_law.csv")
                     if (d / name).exists())
    return ModelParameters(reference, disc, ligaments, facets, law, cases, inertia,
                           tuple(files.values()) + optional)
