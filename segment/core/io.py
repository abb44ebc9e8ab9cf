"""The parameter tables of ``data/`` <-> validated, immutable parameter records.

:func:`load_parameters` reads a data folder and :func:`save_parameters` writes one: every number
column of a table has its row in :mod:`segment.core.schema` (unit, the factor to the package's
units, hard limit, plausible range with its reason), and both directions take it from there.
Loading checks every table before anything is built: a missing column, a malformed or
non-finite number (the reader of :mod:`segment.core.tables`), a value outside its hard limit, an
unknown ligament name, unsorted curve points, descriptive columns that contradict the row's
name, and values outside their plausible range (``strict=False`` makes those warnings) raise
``ValueError`` naming the file, the file line (1 = header) and data row (1 = first data row),
the column and the value; every error of a file is listed at once. Nothing half-loaded is
returned.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from segment.core.schema import COLUMNS, L0_RATIO_RANGE, columns_of
from segment.core.tables import Table
from segment.elements.disc import DISC_LAWS, DOF_NAMES, DiscStiffness
from segment.elements.facet import SAGITTAL_NEUTRAL_DEG, ContactLaw, FacetJoint
from segment.elements.kinematics import ReferencePose
from segment.elements.ligament import MAX_STRIPS, Ligament, TrilinearCurve
from segment.elements.loads import Load

__all__ = ["DISC_LAW_COLUMNS", "LIGAMENT_NAMES", "MODEL_TABLES", "ROTATION_DOFS", "BodyInertia",
           "ModelParameters", "data_dir", "load_parameters", "read_disc_law", "sha256_of"]

LIGAMENT_NAMES = ("ALL", "PLL", "FL", "ISL", "CL-left", "CL-right")
TRANSLATION_COEFFS = ("k_x+", "k_x-", "k_y+", "k_y-", "k_z+", "k_z-")
ROTATION_COEFFS = ("k_phix+", "k_phix-", "k_phiy+", "k_phiy-", "k_phiz+", "k_phiz-")
FACET_SIDES = ("left", "right")
MODEL_TABLES = ("inertia.csv", "disc_translational.csv", "disc_rotational.csv",
                "ligaments.csv", "facet_contact_law.csv", "facets.csv", "load_cases.csv")
"""The tables every data folder has; ``ligament_strips.csv`` and ``disc_law.csv`` are
optional."""


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


def sha256_of(path) -> str:
    """The SHA-256 of a file's bytes (hex): the checksum every provenance record of the
    package uses (input files, written tables, meshes, the report's references)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


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


def _inertia(path: Path, strict: bool) -> tuple[ReferencePose, dict[str, BodyInertia]]:
    cols = ("body", "mass_kg", "Ixx_kg_cm2", "Iyy_kg_cm2", "Izz_kg_cm2", "sx_mm", "sz_mm",
            "gx_mm", "phi_y_deg")
    t = Table(path, cols, strict=strict, collect=True, columns=columns_of(path.name))
    to_kg_mm2 = COLUMNS[("inertia.csv", "Ixx_kg_cm2")].to_internal
    bodies, ref, found = {}, None, []
    for i, row in t.rows():
        body = t.key(i, row, "body", ("C5", "C6"))
        found.append(body)
        mass = t.number(i, row, "mass_kg")
        inertia = np.array([t.number(i, row, c)
                            for c in ("Ixx_kg_cm2", "Iyy_kg_cm2", "Izz_kg_cm2")]) * to_kg_mm2
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
    for path, coeffs, kcol, bcol in (
        (path_t, TRANSLATION_COEFFS, "k_N_per_mm", "b_Ns_per_m"),
        (path_r, ROTATION_COEFFS, "k_Nm_per_deg", "b_Nms_per_rad"),
    ):
        columns = columns_of(path.name)
        t = Table(path, ("coefficient", kcol, bcol), strict=strict, collect=True,
                  columns=columns)
        kconv, bconv = columns[kcol].to_internal, columns[bcol].to_internal
        found = []
        for i, row in t.rows():
            name = t.key(i, row, "coefficient", coeffs)
            found.append(name)
            k[name] = t.number(i, row, kcol) * kconv
            b[name] = t.number(i, row, bcol) * bconv
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


def read_disc_law(path: Path, disc: DiscStiffness, strict: bool) -> DiscStiffness:
    """The restoring law of the disc's rotations (``disc_law.csv``, optional): one row per
    rotation (phi_x, phi_y, phi_z) with its law (:data:`segment.elements.disc.DISC_LAWS`) and
    the law's parameters in degrees; the cells of other laws' parameters stay empty. A folder
    without the table, or a rotation without a row, keeps eq. (1) (the published model)."""
    if not path.exists():
        return disc
    t = Table(path, DISC_LAW_COLUMNS, strict=strict, collect=True,
              columns=columns_of("disc_law.csv"))
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
                values[col] = t.number(i, row, col)
            elif row[col]:
                t.error(i, col, f"not a parameter of the {law} law (it takes "
                                f"{', '.join(wanted) or 'none'}); leave the cell empty, got "
                                f"{row[col]!r}")
        if dof is None or not t.ok(i):
            continue
        k = DOF_NAMES.index(dof)
        laws[k] = law
        lp[k] = 0.0
        for slot, col in enumerate(wanted):     # the law's parameters in its own units
            lp[k, slot] = values[col] * COLUMNS[("disc_law.csv", col)].to_internal
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
    t = Table(path, cols, strict=strict, collect=True, columns=columns_of(path.name))
    to_ns_per_mm = COLUMNS[("ligaments.csv", "b_Ns_per_m")].to_internal
    out, found = [], []
    for i, row in t.rows():
        name = t.key(i, row, "name", LIGAMENT_NAMES)
        found.append(name)
        c5 = [t.number(i, row, c) for c in ("c5_x_mm", "c5_y_mm", "c5_z_mm")]
        c6 = [t.number(i, row, c) for c in ("c6_x_mm", "c6_y_mm", "c6_z_mm")]
        l0 = t.number(i, row, "l0_mm")
        eps_max = t.number(i, row, "eps_max")
        f_max = t.number(i, row, "F_max_N")
        rel = {c: t.number(i, row, c) for c in ("A_eps_rel", "A_F_rel", "B_eps_rel", "B_F_rel")}
        damping = t.number(i, row, "b_Ns_per_m") * to_ns_per_mm
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
        x = t.build(i, None, _ligament, name, c5, c6, l0, eps_max, f_max, rel, damping)
        out.append(t.build(i, None, _optional_columns, t, i, row, x, cols))
    t.require_all("name", found, LIGAMENT_NAMES)
    t.finish()
    return tuple(out)


def _optional_columns(t: Table, i: int, row: dict, record, required: tuple[str, ...]):
    """``record`` with the optional columns of its table read: every schema column the file
    has beyond ``required`` whose row can ``set`` a record (a parameter added to the schema is
    read with no other change); an empty cell of such a column leaves the record as it is."""
    for name, col in t.columns.items():
        if (name in required or not row.get(name, "").strip() or col.set is None
                or record is None):
            continue
        record = col.set(record, t.number(i, row, name) * col.to_internal)
    return record


def _strips(path: Path, ligaments: tuple[Ligament, ...], strict: bool) -> tuple[Ligament, ...]:
    """Strip count and insertion width per ligament (``ligament_strips.csv``, eq. 9a of
    Tejszerska and Gzik); a data folder without the table keeps one strip per ligament."""
    if not path.exists():
        return ligaments
    t = Table(path, ("name", "strips", "width_mm", "axis_x", "axis_y", "axis_z"), strict=strict,
              collect=True, columns=columns_of(path.name))
    spec, found = {}, []
    for i, row in t.rows():
        name = t.key(i, row, "name", LIGAMENT_NAMES)
        found.append(name)
        n = t.number(i, row, "strips")
        # a hard limit (memory and time), not a plausibility: strict=False does not lift it
        if t.ok(i) and not (n == int(n) and n <= MAX_STRIPS):
            t.error(i, "strips", f"expected an integer from 1 to {MAX_STRIPS}, got "
                                 f"{row['strips']!r} (MAX_STRIPS: every strip is a row of the "
                                 "compiled kernels; 100 strips of an 11.2 mm insertion lie "
                                 "0.11 mm apart)")
        width = t.number(i, row, "width_mm")
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
    t = Table(path, cols, strict=strict, collect=True, columns=columns_of(path.name))
    if len(t.records) != 1:
        raise ValueError(f"{t.name}: expected exactly one data row, got {len(t.records)}")
    (i, row), = t.rows()
    values = {c: t.number(i, row, c) * t.columns[c].to_internal for c in cols}
    law = t.build(i, None, lambda: ContactLaw(
        k_quadratic=values["k_quadratic_N_per_mm2"], u_transition=values["u_transition_mm"],
        k_linear=values["k_linear_N_per_mm"], damping=values["b_Ns_per_m"]))
    f_t = values["F_transition_N"]
    if law is not None and not math.isclose(f_t, law.force_at_transition, rel_tol=1e-9):
        t.error(i, "F_transition_N", f"the law must be continuous, k_quadratic * "
                f"u_transition^2 = {law.force_at_transition:g} N, got {f_t:g}")
    t.finish()
    return law


def _facets(path: Path, reference: ReferencePose, strict: bool) -> tuple[FacetJoint, ...]:
    cols = ("side", "center_x_mm", "center_y_mm", "center_z_mm", "inclination_deg",
            "radius_c6_mm", "radius_c5_mm", "gap_mm", "blend_C")
    t = Table(path, cols, strict=strict, collect=True, columns=columns_of(path.name))
    out, found = [], []
    for i, row in t.rows():
        side = t.key(i, row, "side", FACET_SIDES)
        found.append(side)
        center = [t.number(i, row, c) for c in ("center_x_mm", "center_y_mm", "center_z_mm")]
        incl = t.number(i, row, "inclination_deg")
        radii = [t.number(i, row, c) for c in ("radius_c6_mm", "radius_c5_mm")]
        gap = t.number(i, row, "gap_mm")
        blend = t.number(i, row, "blend_C")
        sagittal = (t.number(i, row, "sagittal_deg") if row.get("sagittal_deg", "").strip()
                    else SAGITTAL_NEUTRAL_DEG)
        if side is not None and t.ok(i) and (center[1] > 0) != (side == "left") and center[1] != 0:
            t.implausible(i, "center_y_mm", f"the {side} facet is centred at y = "
                                            f"{center[1]:g} mm (+y is left)")
        joint = t.build(i, None, lambda side=side, center=center, incl=incl, radii=radii,
                        gap=gap, blend=blend, sagittal=sagittal: FacetJoint.at_reference(
            side, center_c6=center, inclination_deg=incl, radius_c6=radii[0],
            radius_c5=radii[1], gap=gap, blend=blend, reference=reference,
            sagittal_deg=sagittal))
        out.append(t.build(i, None, _optional_columns, t, i, row, joint, cols))
    t.require_all("side", found, FACET_SIDES)
    t.finish()
    return tuple(out)


def _load_cases(path: Path, strict: bool) -> dict[str, Load]:
    cols = ("name", "Fx_N", "Fy_N", "Fz_N", "Mx_Nm", "My_Nm", "Mz_Nm", "description")
    t = Table(path, cols, strict=strict, collect=True, columns=columns_of(path.name))
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
        True (default): a value outside its plausible range (its row in
        :data:`segment.core.schema.COLUMNS`, with the reason of each bound) or a cross-column
        implausibility is an error. False: it is an
        :class:`ImplausibleDataWarning` and the value is used, for users who know what they do.
        Malformed numbers, non-finite values, wrong signs and contradicting columns are errors
        either way.

    Raises
    ------
    ValueError
        Naming the file, the file line and data row, the column and the value; every error of
        one file (up to :data:`segment.core.tables.MAX_ERRORS`) in one message.
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
    files = {name: d / name for name in MODEL_TABLES}
    reference, inertia = _inertia(files["inertia.csv"], strict)
    disc = read_disc_law(d / "disc_law.csv",
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
