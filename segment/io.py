"""CSV parameter tables -> validated, immutable parameter records.

Every table lives in ``data/`` (shipped inside the package as ``segment.data``), has its unit
in each column header and a ``source`` column on every row. Loading checks every table before
anything is built: a missing column, a non-numeric or NaN value, a length, radius or stiffness
<= 0, an unknown ligament name or unsorted curve points raise ``ValueError`` naming the file,
the row (1 = first data row), the column and the value. Nothing half-loaded is returned.
"""

from __future__ import annotations

import csv
import dataclasses
import math
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from segment.disc import DiscStiffness
from segment.facet import ContactLaw, FacetJoint
from segment.kinematics import ReferencePose
from segment.ligament import Ligament, TrilinearCurve
from segment.loads import Load

__all__ = ["LIGAMENT_NAMES", "BodyInertia", "ModelParameters", "data_dir", "load_parameters"]

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
        checkout = Path(__file__).resolve().parent.parent / "data"
        if checkout.is_dir():
            return checkout
        raise


class _Table:
    """A CSV file with row/column-aware accessors that raise precise errors."""

    def __init__(self, path: Path, required: tuple[str, ...]):
        self.path = Path(path)
        self.name = self.path.name
        try:
            with open(self.path, newline="", encoding="utf-8") as fh:
                lines = list(csv.reader(fh, skipinitialspace=True))
        except FileNotFoundError:
            raise ValueError(f"{self.path}: file not found") from None
        except UnicodeDecodeError as exc:
            raise ValueError(f"{self.name}: not UTF-8 text ({exc.reason} at byte "
                             f"{exc.start}); save the table as UTF-8") from None
        except csv.Error as exc:
            raise ValueError(f"{self.name}: not a readable CSV table ({exc})") from None
        lines = [ln for ln in lines if any(cell.strip() for cell in ln)]
        if not lines:
            raise ValueError(f"{self.name}: empty file")
        header = [h.strip() for h in lines[0]]
        missing = [c for c in (*required, "source") if c not in header]
        if missing:
            raise ValueError(f"{self.name}: missing column(s) {missing}; "
                             f"expected {[*required, 'source']}")
        self.records = []
        for i, cells in enumerate(lines[1:], start=1):
            if len(cells) != len(header):
                raise ValueError(f"{self.name}, row {i}: expected {len(header)} fields "
                                 f"({', '.join(header)}), got {len(cells)}")
            self.records.append({h: c.strip() for h, c in zip(header, cells, strict=True)})
        if not self.records:
            raise ValueError(f"{self.name}: no data rows")
        for i, row in self.rows():
            if not row["source"]:
                raise ValueError(f"{self.name}, row {i}, column 'source': empty; every row "
                                 "must say where its numbers come from")

    def rows(self):
        return enumerate(self.records, start=1)

    def number(self, i: int, row: dict, col: str, *, positive=False, nonnegative=False) -> float:
        raw = row[col]
        try:
            value = float(raw)
        except (TypeError, ValueError):
            raise ValueError(f"{self.name}, row {i}, column {col!r}: expected a number, "
                             f"got {raw!r}") from None
        if math.isnan(value) or math.isinf(value):
            raise ValueError(f"{self.name}, row {i}, column {col!r}: expected a finite number, "
                             f"got {raw!r}")
        if positive and not value > 0:
            raise ValueError(f"{self.name}, row {i}, column {col!r}: must be > 0, got {value:g}")
        if nonnegative and not value >= 0:
            raise ValueError(f"{self.name}, row {i}, column {col!r}: must be >= 0, "
                             f"got {value:g}")
        return value

    def key(self, i: int, row: dict, col: str, allowed: tuple[str, ...]) -> str:
        value = row[col]
        if value not in allowed:
            raise ValueError(f"{self.name}, row {i}, column {col!r}: unknown value {value!r}; "
                             f"expected one of {', '.join(allowed)}")
        return value

    def require_all(self, col: str, found: list[str], expected: tuple[str, ...]):
        for i, k in enumerate(found, start=1):
            if k in found[: i - 1]:
                first = found.index(k) + 1
                raise ValueError(f"{self.name}, row {i}, column {col!r}: duplicate value {k!r} "
                                 f"(already in row {first})")
        missing = [k for k in expected if k not in found]
        if missing:
            raise ValueError(f"{self.name}, column {col!r}: missing row(s) for {missing}")


def _inertia(path: Path) -> tuple[ReferencePose, dict[str, BodyInertia]]:
    cols = ("body", "mass_kg", "Ixx_kg_cm2", "Iyy_kg_cm2", "Izz_kg_cm2", "sx_mm", "sz_mm",
            "gx_mm", "phi_y_deg")
    t = _Table(path, cols)
    bodies, ref = {}, None
    for i, row in t.rows():
        body = t.key(i, row, "body", ("C5", "C6"))
        mass = t.number(i, row, "mass_kg", positive=True)
        inertia = np.array([t.number(i, row, c, positive=True)
                            for c in ("Ixx_kg_cm2", "Iyy_kg_cm2", "Izz_kg_cm2")]) * 100.0
        inertia.setflags(write=False)
        sx, sz = t.number(i, row, "sx_mm"), t.number(i, row, "sz_mm")
        phi = t.number(i, row, "phi_y_deg")
        bodies[body] = BodyInertia(body, mass, inertia, t.number(i, row, "gx_mm"))
        if body == "C5":
            ref = ReferencePose([sx, 0.0, sz], phi)
    t.require_all("body", [r["body"] for _, r in t.rows()], ("C5", "C6"))
    return ref, bodies


def _disc(path_t: Path, path_r: Path) -> DiscStiffness:
    k = {}
    b = {}
    for path, coeffs, kcol, bcol, kconv, bconv in (
        (path_t, TRANSLATION_COEFFS, "k_N_per_mm", "b_Ns_per_m", 1.0, 1.0 / MM_PER_M),
        (path_r, ROTATION_COEFFS, "k_Nm_per_deg", "b_Nms_per_rad", NMM_PER_NM * 180.0 / math.pi,
         NMM_PER_NM),
    ):
        t = _Table(path, ("coefficient", kcol, bcol))
        found = []
        for i, row in t.rows():
            name = t.key(i, row, "coefficient", coeffs)
            found.append(name)
            k[name] = t.number(i, row, kcol, positive=True) * kconv
            b[name] = t.number(i, row, bcol, nonnegative=True) * bconv
        t.require_all("coefficient", found, coeffs)
    coeffs = TRANSLATION_COEFFS + ROTATION_COEFFS
    k_pos = [k[c] for c in coeffs[0::2]]
    k_neg = [k[c] for c in coeffs[1::2]]
    damping = [b[c] for c in coeffs[0::2]]
    return DiscStiffness(np.array(k_pos), np.array(k_neg), np.array(damping))


def _ligaments(path: Path) -> tuple[Ligament, ...]:
    cols = ("name", "c5_x_mm", "c5_y_mm", "c5_z_mm", "c6_x_mm", "c6_y_mm", "c6_z_mm", "l0_mm",
            "eps_max", "F_max_N", "A_eps_rel", "A_F_rel", "B_eps_rel", "B_F_rel", "b_Ns_per_m")
    t = _Table(path, cols)
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
        if not (0 < rel["A_eps_rel"] < rel["B_eps_rel"] < 1.0):
            raise ValueError(f"{t.name}, row {i}, columns 'A_eps_rel', 'B_eps_rel': curve "
                             f"strains must be sorted 0 < A < B < 1, got "
                             f"{rel['A_eps_rel']:g}, {rel['B_eps_rel']:g}")
        if not (rel["A_F_rel"] <= rel["B_F_rel"] <= 1.0):
            raise ValueError(f"{t.name}, row {i}, columns 'A_F_rel', 'B_F_rel': curve forces "
                             f"must be sorted A <= B <= 1, got {rel['A_F_rel']:g}, "
                             f"{rel['B_F_rel']:g}")
        curve = TrilinearCurve.from_table3(eps_max=eps_max, f_max_N=f_max,
                                           a_rel=(rel["A_eps_rel"], rel["A_F_rel"]),
                                           b_rel=(rel["B_eps_rel"], rel["B_F_rel"]))
        damping = t.number(i, row, "b_Ns_per_m", nonnegative=True) / MM_PER_M
        out.append(Ligament(name, np.array(c5), np.array(c6), l0, curve, damping))
    t.require_all("name", found, LIGAMENT_NAMES)
    return tuple(out)


def _strips(path: Path, ligaments: tuple[Ligament, ...]) -> tuple[Ligament, ...]:
    """Strip count and insertion width per ligament (``ligament_strips.csv``, eq. 9a of
    Tejszerska and Gzik); a data folder without the table keeps one strip per ligament."""
    if not path.exists():
        return ligaments
    t = _Table(path, ("name", "strips", "width_mm", "axis_x", "axis_y", "axis_z"))
    spec, found = {}, []
    for i, row in t.rows():
        name = t.key(i, row, "name", LIGAMENT_NAMES)
        found.append(name)
        n = t.number(i, row, "strips", positive=True)
        if n != int(n):
            raise ValueError(f"{t.name}, row {i}, column 'strips': expected an integer >= 1, "
                             f"got {row['strips']!r}")
        width = t.number(i, row, "width_mm", nonnegative=True)
        axis = [t.number(i, row, c) for c in ("axis_x", "axis_y", "axis_z")]
        if not any(axis):
            raise ValueError(f"{t.name}, row {i}, columns 'axis_x', 'axis_y', 'axis_z': "
                             f"expected a direction, got (0, 0, 0)")
        spec[name] = (int(n), width, np.array(axis))
    t.require_all("name", found, LIGAMENT_NAMES)
    return tuple(dataclasses.replace(lig, strips=spec[lig.name][0], width=spec[lig.name][1],
                                     width_axis=spec[lig.name][2]) for lig in ligaments)


def _contact_law(path: Path) -> ContactLaw:
    cols = ("k_quadratic_N_per_mm2", "u_transition_mm", "F_transition_N", "k_linear_N_per_mm",
            "b_Ns_per_m")
    t = _Table(path, cols)
    if len(t.records) != 1:
        raise ValueError(f"{t.name}: expected exactly one data row, got {len(t.records)}")
    (i, row), = t.rows()
    law = ContactLaw(
        k_quadratic=t.number(i, row, "k_quadratic_N_per_mm2", positive=True),
        u_transition=t.number(i, row, "u_transition_mm", positive=True),
        k_linear=t.number(i, row, "k_linear_N_per_mm", positive=True),
        damping=t.number(i, row, "b_Ns_per_m", nonnegative=True) / MM_PER_M,
    )
    f_t = t.number(i, row, "F_transition_N", positive=True)
    if not math.isclose(f_t, law.force_at_transition, rel_tol=1e-9):
        raise ValueError(f"{t.name}, row {i}, column 'F_transition_N': the law must be "
                         f"continuous, k_quadratic * u_transition^2 = "
                         f"{law.force_at_transition:g} N, got {f_t:g}")
    return law


def _facets(path: Path, reference: ReferencePose) -> tuple[FacetJoint, ...]:
    cols = ("side", "center_x_mm", "center_y_mm", "center_z_mm", "inclination_deg",
            "radius_c6_mm", "radius_c5_mm", "gap_mm", "blend_C")
    t = _Table(path, cols)
    out, found = [], []
    for i, row in t.rows():
        side = t.key(i, row, "side", FACET_SIDES)
        found.append(side)
        center = [t.number(i, row, c) for c in ("center_x_mm", "center_y_mm", "center_z_mm")]
        incl = t.number(i, row, "inclination_deg")
        if not -90.0 < incl < 90.0:
            raise ValueError(f"{t.name}, row {i}, column 'inclination_deg': must lie in "
                             f"(-90, 90), got {incl:g}")
        out.append(FacetJoint.at_reference(
            side, center_c6=center, inclination_deg=incl,
            radius_c6=t.number(i, row, "radius_c6_mm", positive=True),
            radius_c5=t.number(i, row, "radius_c5_mm", positive=True),
            gap=t.number(i, row, "gap_mm", nonnegative=True),
            blend=t.number(i, row, "blend_C", nonnegative=True),
            reference=reference))
    t.require_all("side", found, FACET_SIDES)
    return tuple(out)


def _load_cases(path: Path) -> dict[str, Load]:
    cols = ("name", "Fx_N", "Fy_N", "Fz_N", "Mx_Nm", "My_Nm", "Mz_Nm", "description")
    t = _Table(path, cols)
    out: dict[str, Load] = {}
    for i, row in t.rows():
        name = row["name"]
        if not name:
            raise ValueError(f"{t.name}, row {i}, column 'name': empty")
        if name in out:
            raise ValueError(f"{t.name}, row {i}, column 'name': duplicate {name!r}")
        force = [t.number(i, row, c) for c in ("Fx_N", "Fy_N", "Fz_N")]
        moment = [t.number(i, row, c) for c in ("Mx_Nm", "My_Nm", "Mz_Nm")]
        out[name] = Load.from_si(force_N=force, moment_Nm=moment, name=name)
    return out


def load_parameters(directory: str | Path | None = None) -> ModelParameters:
    """Read and validate every table of ``directory`` (default: the packaged ``data/``)."""
    d = data_dir() if directory is None else Path(directory)
    if not d.is_dir():
        raise ValueError(f"{d}: not a folder of parameter tables (expected the CSV files of "
                         f"data/)")
    files = {name: d / name for name in (
        "inertia.csv", "disc_translational.csv", "disc_rotational.csv", "ligaments.csv",
        "facet_contact_law.csv", "facets.csv", "load_cases.csv")}
    reference, inertia = _inertia(files["inertia.csv"])
    disc = _disc(files["disc_translational.csv"], files["disc_rotational.csv"])
    ligaments = _strips(d / "ligament_strips.csv", _ligaments(files["ligaments.csv"]))
    law = _contact_law(files["facet_contact_law.csv"])
    facets = _facets(files["facets.csv"], reference)
    cases = _load_cases(files["load_cases.csv"])
    strips = d / "ligament_strips.csv"
    return ModelParameters(reference, disc, ligaments, facets, law, cases, inertia,
                           tuple(files.values()) + ((strips,) if strips.exists() else ()))
