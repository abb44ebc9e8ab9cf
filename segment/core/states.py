"""Clinical states of the segment: surgery and disease as named operations on the model.

A clinical state is a named list of operations (``data/states.csv``, read by
:func:`segment.core.states_table.load_states`), applied to a :class:`~segment.core.model.Segment` by
:meth:`Segment.with_state <segment.core.model.Segment.with_state>` or :func:`apply_states`. The
operations, each also a function of this module:

* **cut** (:func:`cut`): a fraction of a ligament's fibres (all its strips, or named strips
  ``"CL-left#2"``) removed; 1 = cut through. The strip's force curve is scaled by
  ``1 - fraction`` (``Segment.cut``). A cut strip is no failure: it is not ``ruptured``, it is
  never flagged past eps_max and a result with it is ``intact`` with status 0.
* **resect** (:func:`resect_facet`): a fraction of a facet joint's articular surface removed,
  from the medial side (see "Resection" below); 1 = the facet removed (the joint leaves
  ``Segment.facets``: exactly the model built without it).
* **fuse** (:func:`fuse`): the disc of eq. (1) replaced by a device of the given rotational
  and translational stiffness, the same in every direction and sign. The packaged
  ``fusion`` state uses 100 N m/deg and 1e4 N/mm, about 240-480 times Table 2 in rotation
  and 20-200 times in translation (assumed "rigid"; the motion this leaves is measured in
  ``tests/test_states.py`` and section "Clinical states" of the report).
* **replace-disc** (:func:`replace_disc`): a ball-and-socket prosthesis: the disc's
  translational springs of eq. (1) (which act at the C5 origin) are replaced by a point
  restraint at the device's centre of rotation (:mod:`segment.elements.restraint`), its
  rotational springs by the device's rotational stiffness.
* **degenerate** (:func:`degenerate`): the disc's compression stiffness (k_z-) times
  ``compression`` and its shear stiffnesses (k_x+, k_x-, k_y) times ``shear``. Moroney et al.
  (1988, abstract) found degenerated cervical discs less stiff in compression and stiffer in
  shear, with no significant difference in bending or torsion; the size of the change is not
  available to us, so the packaged factors (0.7 and 1.3) are assumed.

Each element (a ligament strip, a facet, the disc) is operated on once: a second operation on
it is a contradiction and raises ``ValueError`` in one line naming both states. Operations on
different elements commute: any order gives the same packed arrays, bit for bit.

Resection
---------
The paper models each facet as two circular discs (cylinder end faces) of radius r. Removing
a fraction ``f`` of the articular surface from the medial side leaves a circular segment: the
part of the disc lateral of a chord at distance ``d`` from the centre, along the medial unit
vector ``m`` in the facet plane (the direction towards the spinal canal, -y for the left
facet, +y for the right; ``y`` lies in the facet plane of ``data/facets.csv``). The removed
cap has area ``A(d) = r^2 acos(d/r) - d sqrt(r^2 - d^2)`` and ``f = A(d) / (pi r^2)`` fixes d
(monotone, solved to rounding by bisection). The remaining segment is mapped onto the circle
of the same area and centroid::

    r'  = r sqrt(1 - f)
    c'  = c - m * 2 (r^2 - d^2)^(3/2) / (3 (pi r^2 - A(d)))        (centroid of the segment)

for both discs (C6 superior and C5 inferior facet, each in its own frame: a foraminotomy
drills through both articular processes). f = 0 leaves the joint untouched (bit for bit), and
as f -> 1 the circle shrinks to a point at the lateral rim. The contact law of the paper is a
force per penetration of the whole facet; we scale it by the remaining area fraction
``1 - f`` (a thin elastic layer: contact stiffness proportional to contact area), so the
contact force vanishes continuously as f -> 1 and f = 1 is the facet removed. Measured
(right facet, published model, ``tests/test_states.py``): under AR the facet carries 26.2 N
intact; at 90 % resected 20.2 N with the scaling and 24.8 N without it, and without it the
rotation does not grow at all up to 90 % (2.96 deg against 3.00 intact) and jumps when the
remnant slides off its partner (about 99 %). With the scaling AR is 3.00, 3.00, 3.02, 3.08 and
3.72 deg at 0, 50, 75, 90 and 100 %, continuous into the facet removed (99.9 %: 3.718 deg).
Up to about 25 % AR even falls by a few thousandths of a degree: the remaining surface's
centroid moves laterally, away from the axis, which lengthens its lever arm.

Why medial: posterior cervical foraminotomy opens the foramen by removing the medial part of
the facet joint, working laterally from the lamina (the "medial one-half facetectomy" of the
anatomical study of posterior cervical foraminotomy, PMC3389111, abstract); Zdeblick et al.
(1992, abstract) resected 25, 50, 75 and 100 % "of the facet joint and capsule". The packaged
``facetectomy-*`` states therefore also cut the same fraction of that side's capsular ligament
(SOURCES.md §9).

Internal units as everywhere: mm, N, N mm, rad; the CSV columns carry theirs.
"""

from __future__ import annotations

import math

import numpy as np

from segment.core.checks import Quantity
from segment.core.states_table import (
    _CUT,
    _RESECT,
    FACET_SIDES,
    INTACT,
    OPERATIONS,
    STATE_NAME,
    ClinicalState,
    load_states,
    states_file,
)
from segment.elements.disc import DiscStiffness
from segment.elements.facet import FacetJoint, rows_in_frame
from segment.elements.facet_face import FacetFace
from segment.elements.restraint import PointRestraint

__all__ = ["apply_states", "cut", "degenerate", "fuse", "replace_disc", "resect_facet",
           "resected_circle"]

NMM_PER_NM = 1000.0
RAD_PER_DEG = math.pi / 180.0


def _arg(row: Quantity, value, name: str, state: str, strict) -> float:
    """An operation's argument checked by its row, errors naming the state and argument."""
    return row.check(value, f"state {state!r}: {name}", strict=strict)


# ---------------------------------------------------------------- the operations
def _record(model, state: str, elements, **changes):
    """``model.replace(**changes)`` with ``state`` appended to ``clinical`` (once) and the
    operated ``elements`` recorded; refuses an element operated on already."""
    operated = dict(model.operated)
    for element in elements:
        if element in operated:
            raise ValueError(f"state {state!r}: {element} was already changed by state "
                             f"{operated[element]!r}; an element is operated on once")
        operated[element] = state
    clinical = model.clinical if model.clinical[-1:] == (state,) else (*model.clinical, state)
    return model.replace(clinical=clinical, operated=operated, **changes)


def _check_state_name(state: str) -> str:
    if not isinstance(state, str) or not STATE_NAME.fullmatch(state) or state == INTACT:
        raise ValueError(f"state name must be lower-case letters, digits and hyphens (not "
                         f"'intact'), got {state!r}")
    return state


def cut(model, names, *, fraction: float = 1.0, state: str = "cut"):
    """``model`` with a ``fraction`` (0, 1] of the fibres of the named ligaments (all their
    strips) or strips (``"CL-left#2"``) cut; see the module docstring."""
    _check_state_name(state)
    names = (names,) if isinstance(names, str) else tuple(names)
    if not all(isinstance(n, str) for n in names):
        raise TypeError(f"state {state!r}: names must be ligament or strip names, got "
                        f"{list(names)!r}")
    fraction = _arg(_CUT, fraction, "fraction", state, None)
    by_ligament = {lig.name: lig.strip_names for lig in model.ligaments}
    strips = []
    for name in names:
        if name in by_ligament:
            strips.extend(by_ligament[name])
        elif name in model.strip_names:
            strips.append(name)
        else:
            where = model.operated.get(f"ligament {name}")
            why = f" (cut by state {where!r})" if where else ""
            raise ValueError(f"state {state!r}: ligament {name!r} is not in this model{why}; "
                             f"it has {list(model.strip_names)}")
    broken = sorted(set(strips) & model.ruptured)
    if broken:
        raise ValueError(f"state {state!r}: strip(s) {broken} already ruptured")
    new_cut = dict(model.cut)
    for s in strips:
        new_cut[s] = float(fraction)
    elements = [f"ligament {s}" for s in strips]
    return _record(model, state, elements, cut=new_cut)


def _cap_area(t: float) -> float:
    """Area of the cap of the unit disc beyond a chord at distance ``t`` in [-1, 1]."""
    return math.acos(t) - t * math.sqrt(max(0.0, 1.0 - t * t))


def resected_circle(radius: float, fraction: float) -> tuple[float, float]:
    """``(r', shift)``: the radius [mm] of the circle of the remaining area and how far [mm]
    its centre moves laterally (to the centroid of the remaining segment) when ``fraction`` of
    a disc of ``radius`` is removed from one side (module docstring, "Resection")."""
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"resected fraction must be in [0, 1], got {fraction!r}")
    if fraction == 0.0:
        return radius, 0.0
    if fraction == 1.0:
        return 0.0, radius
    # f(t) = cap(t) / pi decreases from 1 (t = -1) to 0 (t = 1): bisection to rounding
    lo, hi = -1.0, 1.0
    target = fraction * math.pi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if _cap_area(mid) > target:
            lo = mid
        else:
            hi = mid
    t = 0.5 * (lo + hi)
    remaining = math.pi - _cap_area(t)
    shift = 2.0 * (1.0 - t * t) ** 1.5 / (3.0 * remaining)
    return radius * math.sqrt(1.0 - fraction), radius * shift


def _resect_disc(disc: FacetFace, medial, fraction: float) -> FacetFace:
    """The disc of the remaining surface. Written out in scalar products and sums (no BLAS),
    so that the bits do not depend on the CPU (as :func:`segment.elements.facet.rows_in_frame`)."""
    n = [float(x) for x in disc.normal]
    m = [float(x) for x in medial]
    mn = (m[0] * n[0] + m[1] * n[1]) + m[2] * n[2]
    m = [m[k] - mn * n[k] for k in range(3)]
    size = math.hypot(m[0], m[1], m[2])
    if not size > 1e-9:
        raise ValueError("the medial direction is normal to the facet face: cannot resect")
    r_new, shift = resected_circle(float(disc.radius), fraction)
    c = [float(x) for x in disc.center]
    return FacetFace(np.array([c[k] - shift * (m[k] / size) for k in range(3)]), disc.normal,
                     r_new)


def resect_facet(model, side: str, fraction: float, *, state: str = "resect",
                 area_scaling: bool = True):
    """``model`` with ``fraction`` [0, 1] of the ``side`` facet's articular surface removed
    from the medial side (module docstring, "Resection"); 1 removes the joint, 0 changes
    nothing but the record. ``area_scaling=False`` keeps the contact law of the whole facet
    (for the measurement of its effect only)."""
    _check_state_name(state)
    if side not in FACET_SIDES:
        raise ValueError(f"state {state!r}: side must be 'left' or 'right', got {side!r}")
    fraction = _arg(_RESECT, fraction, "fraction", state, None)
    sides = [f.side for f in model.facets]
    if side not in sides:
        where = model.operated.get(f"facet {side}")
        why = f" (removed by state {where!r})" if where else ""
        raise ValueError(f"state {state!r}: facet {side!r} is not in this model{why}; it has "
                         f"{sides}")
    element = [f"facet {side}"]
    if fraction == 0.0:
        return _record(model, state, element)
    if fraction == 1.0:
        return _record(model, state, element,
                       facets=tuple(f for f in model.facets if f.side != side))
    joint = model.facets[sides.index(side)]
    y = float(np.sign(joint.disc_c6.center[1]))
    if y == 0.0:
        raise ValueError(f"state {state!r}: facet {side!r} lies on the midline (y = 0); its "
                         f"medial side is not defined")
    medial_c6 = np.array([0.0, -y, 0.0])
    medial_c5 = rows_in_frame(model.reference.R0, medial_c6[None])[0]
    scale = joint.contact_scale * (1.0 - fraction) if area_scaling else joint.contact_scale
    new = FacetJoint(joint.side, _resect_disc(joint.disc_c6, medial_c6, fraction),
                     _resect_disc(joint.disc_c5, medial_c5, fraction), joint.blend, scale)
    facets = tuple(new if f.side == side else f for f in model.facets)
    return _record(model, state, element, facets=facets)


def _disc_element(model, state):
    return ["disc"]


def fuse(model, *, k_rotation_Nm_per_deg: float, k_translation_N_per_mm: float,
         state: str = "fusion", strict: bool | None = True):
    """``model`` with the disc replaced by a device of the given stiffness in every direction
    and sign [N m/deg, N/mm] (module docstring); the disc's damping is kept, its restoring law
    is not (the device is linear, eq. (1), whatever law the disc had). The stiffnesses are
    checked by the rows of ``states.csv``'s ``fuse``
    (:data:`~segment.core.states_table.OPERATIONS`): > 0, and within the plausible range
    unless ``strict=False`` (a warning)."""
    _check_state_name(state)
    rows = OPERATIONS["fuse"]
    k_rot = _arg(rows["rotation"], k_rotation_Nm_per_deg, "k_rotation_Nm_per_deg", state,
                 strict) * NMM_PER_NM / RAD_PER_DEG
    k_t = _arg(rows["translation"], k_translation_N_per_mm, "k_translation_N_per_mm", state,
               strict)
    k = np.array([k_t, k_t, k_t, k_rot, k_rot, k_rot])
    disc = DiscStiffness(k, k, model.disc.damping)
    return _record(model, state, _disc_element(model, state), disc=disc)


def replace_disc(model, *, cor_c6_mm, k_rotation_Nm_per_deg: float,
                 k_translation_N_per_mm: float, state: str = "arthroplasty",
                 strict: bool | None = True):
    """``model`` with a ball-and-socket disc prosthesis: a point restraint of stiffness
    ``k_translation_N_per_mm`` at the centre of rotation ``cor_c6_mm`` (C6 frame, 3 numbers
    [mm]) instead of the disc's translational springs, and ``k_rotation_Nm_per_deg`` about
    every axis instead of its rotational ones (module docstring). Every argument is checked by
    its row of ``states.csv``'s ``replace-disc`` (:data:`~segment.core.states_table.OPERATIONS`;
    ``strict`` as :func:`fuse`)."""
    _check_state_name(state)
    rows = OPERATIONS["replace-disc"]
    k_rot = _arg(rows["rotation"], k_rotation_Nm_per_deg, "k_rotation_Nm_per_deg", state,
                 strict) * NMM_PER_NM / RAD_PER_DEG
    k_t = _arg(rows["translation"], k_translation_N_per_mm, "k_translation_N_per_mm", state,
               strict)
    cor = np.asarray(cor_c6_mm, dtype=object)
    if cor.shape != (3,):
        raise ValueError(f"state {state!r}: cor_c6_mm must be 3 numbers (x, y, z) [mm] in the "
                         f"C6 frame, got {cor_c6_mm!r}")
    cor_c6_mm = np.array([_arg(rows[f"cor_{a}"], v, f"cor_c6_mm[{k}] ({a})", state, strict)
                          for k, (a, v) in enumerate(zip("xyz", cor, strict=True))])
    k = np.array([0.0, 0.0, 0.0, k_rot, k_rot, k_rot])
    disc = DiscStiffness(k, k, model.disc.damping)
    ball = PointRestraint.at_point(f"{state} centre of rotation", cor_c6_mm,
                                   stiffness=k_t, reference=model.reference)
    return _record(model, state, _disc_element(model, state), disc=disc,
                   restraints=(*model.restraints, ball))


def degenerate(model, *, compression: float, shear: float, state: str = "degenerated",
               strict: bool | None = True):
    """``model`` with k_z- times ``compression`` and k_x+, k_x-, k_y times ``shear``
    (Moroney et al. 1988: direction; module docstring). The factors are checked by the rows
    of ``states.csv``'s ``degenerate`` (:data:`~segment.core.states_table.OPERATIONS`;
    ``strict`` as :func:`fuse`)."""
    _check_state_name(state)
    rows = OPERATIONS["degenerate"]
    compression = _arg(rows["compression"], compression, "compression", state, strict)
    shear = _arg(rows["shear"], shear, "shear", state, strict)
    kp = np.array(model.disc.k_positive, dtype=float)
    kn = np.array(model.disc.k_negative, dtype=float)
    kn[2] *= compression
    for a in (kp, kn):
        a[0] *= shear
        a[1] *= shear
    # the disc's restoring laws (segment.elements.disc: a model form's neutral zone, fw35)
    # stay: degeneration scales the translational stiffness only
    disc = DiscStiffness(kp, kn, model.disc.damping, model.disc.law, model.disc.law_parameters)
    return _record(model, state, _disc_element(model, state), disc=disc)


# ---------------------------------------------------------------- states by name
def _apply(model, st: ClinicalState):
    for op in st.operations:
        p = dict(op.params)
        if op.kind == "cut":
            model = cut(model, [op.target], fraction=op.value, state=st.name)
        elif op.kind == "resect":
            model = resect_facet(model, op.target, op.value, state=st.name)
        elif op.kind == "fuse":      # strict=None: checked when states.csv was read
            model = fuse(model, k_rotation_Nm_per_deg=p["rotation"],
                         k_translation_N_per_mm=p["translation"], state=st.name, strict=None)
        elif op.kind == "replace-disc":
            model = replace_disc(model, cor_c6_mm=(p["cor_x"], p["cor_y"], p["cor_z"]),
                                 k_rotation_Nm_per_deg=p["rotation"],
                                 k_translation_N_per_mm=p["translation"], state=st.name,
                                 strict=None)
        elif op.kind == "degenerate":
            model = degenerate(model, compression=p["compression"], shear=p["shear"],
                               state=st.name, strict=None)
        else:  # pragma: no cover - load_states admits only OPERATIONS
            raise ValueError(f"unknown operation {op.kind!r}")
    if st.name not in model.clinical:
        model = model.replace(clinical=(*model.clinical, st.name))
    return model


def split_names(names) -> tuple[str, ...]:
    """``("a+b", "c")`` or ``"a+b,c"`` -> ``("a", "b", "c")`` (no empty names)."""
    if isinstance(names, str):
        names = (names,)
    out = []
    for item in names:
        if not isinstance(item, str):
            raise TypeError(f"state names must be strings, got {item!r}")
        for part in item.replace(",", "+").split("+"):
            part = part.strip()
            if not part:
                raise ValueError(f"empty state name in {item!r}")
            out.append(part)
    return tuple(out)


def apply_states(model, names, *, data_dir=None, strict: bool = True, states=None):
    """``model`` in the named states, applied in order (``"intact"`` applies nothing).

    ``states`` (a :func:`~segment.core.states_table.load_states` result) is read from
    :func:`~segment.core.states_table.states_file` (``data_dir``'s ``states.csv``, else the
    packaged one) when not given. An unknown name is one
    ``ValueError`` listing the known names; so is a contradiction (module docstring).
    """
    parts = split_names(names)
    if all(p == INTACT for p in parts):
        return model
    if states is None:
        states = load_states(states_file(data_dir), strict=strict)
    for name in parts:
        if name == INTACT:
            if len(parts) > 1:
                raise ValueError(f"'intact' cannot be combined with other states, got "
                                 f"{'+'.join(parts)!r}")
            continue
        if name not in states:
            raise ValueError(f"unknown clinical state {name!r}; known: {', '.join(states)}")
        if name in model.clinical:
            raise ValueError(f"state {name!r} is already applied to this model")
        model = _apply(model, states[name])
    return model
