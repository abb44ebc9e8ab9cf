"""Exact derivatives of the packed arrays by the parameters, compiled.

:meth:`segment.space.ParameterSpace.pack` writes parameter sets into the solver's packed
arrays in numpy; its derivative by each parameter is what the exact sensitivities
(:mod:`segment.sensitivity`) need for every set. The complex step through ``pack`` (one complex
``pack`` of all M sets per parameter) gives it exactly, but it costs D packs of numpy work per
chunk of sets: about 60 us per set for the 21 parameters of the packaged space, as much as
solving the set's ten equilibria. This module gives the same derivatives from a *plan* (what
each parameter does to which packed entry, read once from the space and the model) in one
parallel numba kernel.

What ``pack`` does, and so what the plan holds (``tangent.pack`` layout):

* disc stiffness and ligament force axes are *multiplied*: an entry ends as
  ``b * prod_k p_jk`` over the parameters ``jk`` that act on it (``b`` the model's value), so
  its derivative by ``p_j`` is ``b * sum_{k: jk = j} prod_{l != k} p_jl``;
* a ligament's rest length is *set*: the last parameter that sets it, ``p``, scales each of
  its rows (strips) by ``p / l0_model``, a factor ``c = 1 / l0_model`` per unit parameter;
  set by a reference strain (``ref_strain``), the factor is ``c / (1 + p)`` with
  ``c = l_ref / l0_model`` (a *reciprocal* factor, derivative ``-c / (1 + p)^2``);
* a disc law's parameter (neutral-zone half-widths and ratio, fw35 angle scales) is *set*:
  the entry is ``c p`` with ``c`` the unit conversion (pi / 180 for degrees), base 1;
* facet geometry is *set*: the last parameter that writes a field (inclination, gap, radius,
  C) of a facet determines it, and the facet's row is rebuilt as in
  ``FacetJoint.at_reference``: ``n2 = (-sin a, 0, cos a)``, ``c1 = c2 + gap n2`` (C6), stored as
  ``R0^T (c1 - s0)`` and ``-R0^T n2`` in C5 (the derivatives below are of these expressions).

``tests/test_space.py`` holds the kernel to the complex step through ``pack`` for the packaged
space, for a space where several parameters act on one entry, and to central differences.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass

import numpy as np

from segment.elements.disc import DISC_LAW_WIDTH, DOF_NAMES
from segment.elements.tangent import (
    F_BLEND,
    F_C1,
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
from segment.jit import njit, prange
from segment.solvers.batch import launch

__all__ = ["DISC_LAW_FIELDS", "PackPlan", "complex_step_reference", "disc_law_slot",
           "ligament_rows", "pack_plan"]

COMPLEX_STEP = 1e-30
"""Imaginary step of :func:`complex_step_reference` (exact to rounding for any tiny step)."""

FACET_FIELDS = ("inclination_deg", "gap_mm", "radius_mm", "blend_C")
"""Columns of :attr:`PackPlan.facet_source` (the space's facet fields)."""
DISC_LAW_FIELDS = ("zone_pos_deg", "zone_neg_deg", "zone_ratio", "angle_scale_pos_deg",
                   "angle_scale_neg_deg")
"""Parameter-space fields that set a parameter of a disc coordinate's law."""
_LAW_SLOT = {"zone_pos_deg": ("neutral-zone", 1, math.pi / 180.0),
             "zone_neg_deg": ("neutral-zone", 2, math.pi / 180.0),
             "zone_ratio": ("neutral-zone", 3, 1.0),
             "angle_scale_pos_deg": ("fw35", 1, math.pi / 180.0),
             "angle_scale_neg_deg": ("fw35", 2, math.pi / 180.0)}
MULTIPLY, RECIPROCAL = 0, 1
"""Kinds of factor in :class:`PackPlan`: ``c p`` and ``c / (1 + p)``."""


def disc_law_slot(model, dof: str, field: str) -> tuple[int, float]:
    """Index into the packed ``glob`` of the law parameter ``field`` of disc coordinate
    ``dof``, and the factor from the field's unit to the law's (rad per deg, or 1).

    Raises
    ------
    ValueError
        When the model's coordinate is not on the law the field belongs to.
    """
    law, slot, factor = _LAW_SLOT[field]
    d = DOF_NAMES.index(dof)
    if model.disc.law[d] != law:
        raise ValueError(f"parameter field {field} needs the {law} law on disc {dof}, but the "
                         f"model has {model.disc.law[d]!r} there (disc_law.csv of its data "
                         "folder, or DiscStiffness.with_law)")
    return G_DISC + DISC_LAW_WIDTH * d + slot, factor


@dataclass(frozen=True, eq=False)
class PackPlan:
    """What each parameter of a space does to the packed arrays of one model.

    Attributes
    ----------
    dim : int
        Number of parameters D.
    shapes : tuple
        Shapes of one set's ``glob``, ``lig`` and ``fac``.
    entry : ndarray of int (E,)
        Entries scaled by parameters: flat index into ``glob`` (``< glob.size``) or, offset
        by ``glob.size``, into ``lig``.
    base : ndarray (E,)
        The model's value of each entry.
    start : ndarray of int (E + 1,)
        Entry ``e``'s factors are ``op_j[start[e]:start[e + 1]]``, ``op_c[...]``.
    op_j, op_c : ndarray (K,)
        Parameter index and factor per unit parameter of each multiplication.
    op_kind : ndarray of int (K,)
        :data:`MULTIPLY` (``c p``) or :data:`RECIPROCAL` (``c / (1 + p)``).
    facet_source : ndarray of int (m, 4)
        Parameter that sets each facet's inclination, gap, radius and C (:data:`FACET_FIELDS`),
        -1 where none does.
    facet_base : ndarray (m, 2)
        The model's inclination [deg] and gap [mm] of each facet (used when no parameter
        sets them).
    R0 : ndarray (3, 3)
        Reference orientation of C5 in C6.
    moved : tuple of bool arrays
        ``(D, G)``, ``(D, n, 13)``, ``(D, m, 15)``: the entries each parameter can move (the
        sparsity of :meth:`derivative` for any set; what
        :func:`segment.sensitivity.touch_flags` reads), so a chunk of sets need not be
        scanned for it.
    """

    dim: int
    shapes: tuple
    entry: np.ndarray
    base: np.ndarray
    start: np.ndarray
    op_j: np.ndarray
    op_c: np.ndarray
    op_kind: np.ndarray
    facet_source: np.ndarray
    facet_base: np.ndarray
    R0: np.ndarray
    moved: tuple

    def derivative(self, P, *, n_threads: int | None = None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``dglob (M, D, G)``, ``dlig (M, D, n, 13)``, ``dfac (M, D, m, 15)`` at the real
        parameter sets ``P (M, D)`` (checked by the caller). A parallel launch through
        :func:`segment.batch.launch` (safe from several threads; ``n_threads`` as there)."""
        P = np.ascontiguousarray(P, dtype=float)
        m_sets = P.shape[0]
        g, lg, fc = self.shapes
        dglob = np.empty((m_sets, self.dim, *g))
        dlig = np.empty((m_sets, self.dim, *lg))
        dfac = np.empty((m_sets, self.dim, *fc))
        launch(_derivative_kernel, P, self.entry, self.base, self.start, self.op_j, self.op_c,
               self.op_kind, self.facet_source, self.facet_base, self.R0, dglob, dlig, dfac,
               n_threads=n_threads)
        return dglob, dlig, dfac


_ROWS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def ligament_rows(model) -> dict[str, np.ndarray]:
    """Rows of the packed ``lig`` array that belong to each ligament of ``model``.

    Found by probing, not assumed: each ligament's rest length is changed in turn and the
    rows whose ``l0`` column changes are its rows. So a packing that expands a ligament into
    several rows (strips) maps every strip to its ligament without this module knowing how.
    """
    try:
        return _ROWS[model]
    except KeyError:
        pass
    base = model._packed[1][:, L_L0]
    out = {}
    for k, x in enumerate(model.ligaments):
        ligs = list(model.ligaments)
        ligs[k] = x.with_rest_length(x.l0 * 1.5)
        probe = model.replace(ligaments=tuple(ligs))._packed[1][:, L_L0]
        out[x.name] = np.flatnonzero(probe != base)
    _ROWS[model] = out
    return out


def complex_step_reference(space, model, P):
    """The same derivatives as :meth:`PackPlan.derivative` by the complex step through the
    numpy :meth:`~segment.space.ParameterSpace.pack` (one complex pack of all sets per
    parameter): slow, independent of the plan; what the tests and
    ``benchmarks/bench_sensitivity_parts.py`` hold the compiled kernel to."""
    P = np.asarray(P, dtype=float)
    m_sets, d = P.shape
    out = tuple(np.empty((m_sets, d, *x.shape[1:])) for x in space.pack(model, P))
    Pc = P.astype(complex)
    for j in range(d):
        Pc[:, j] += 1j * COMPLEX_STEP
        for o, x in zip(out, space.pack(model, Pc), strict=True):
            o[:, j] = x.imag / COMPLEX_STEP
        Pc[:, j] = P[:, j]
    return out


_PLANS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def pack_plan(space, model) -> PackPlan:
    """The :class:`PackPlan` of ``space`` (a ``ParameterSpace``) on ``model``, cached while
    both live."""
    per_model = _PLANS.setdefault(model, weakref.WeakKeyDictionary())
    plan = per_model.get(space)
    if plan is None:
        plan = _build(space, model)
        per_model[space] = plan
    return plan


def _build(space, model) -> PackPlan:
    glob0, lig0, fac0 = model._packed[:3]
    n_glob = glob0.size
    rows = ligament_rows(model)
    l0_model = {x.name: x.l0 for x in model.ligaments}
    l_ref = {x.name: x.reference_length(model.reference) for x in model.ligaments}
    sides = [f.side for f in model.facets]
    # entry -> [(j, c, kind)], in pack's order
    ops: dict[int, list[tuple[int, float, int]]] = {}
    unit_base: set[int] = set()        # set entries c p (a law parameter): base 1
    facet_source = np.full((len(sides), len(FACET_FIELDS)), -1, dtype=np.int64)
    for j, (targets, field) in enumerate(zip(space.targets, space.fields, strict=True)):
        for kind, key in targets:
            if kind == "disc":
                d = DOF_NAMES.index(key)
                if field in DISC_LAW_FIELDS:              # set: the last one wins
                    index, factor = disc_law_slot(model, key, field)
                    ops[index] = [(j, factor, MULTIPLY)]
                    unit_base.add(index)
                    continue
                cols = {"stiffness_scale_pos": (G_K_POS + d,),
                        "stiffness_scale_neg": (G_K_NEG + d,)}.get(field,
                                                                   (G_K_POS + d, G_K_NEG + d))
                for col in cols:
                    ops.setdefault(col, []).append((j, 1.0, MULTIPLY))
            elif kind == "ligament":
                r = rows.get(key)
                if r is None:
                    continue        # the model has no such ligament: the parameter does nothing
                for row in r:
                    base = n_glob + int(row) * lig0.shape[1]
                    if field == "l0_mm":                 # set: the last one wins
                        ops[base + L_L0] = [(j, 1.0 / l0_model[key], MULTIPLY)]
                    elif field == "ref_strain":          # set: l0 = l_ref / (1 + p)
                        ops[base + L_L0] = [(j, l_ref[key] / l0_model[key], RECIPROCAL)]
                    else:                                # force axis: multiplied
                        for col in range(L_F, L_F + 3):
                            ops.setdefault(base + col, []).append((j, 1.0, MULTIPLY))
            elif key in sides:
                facet_source[sides.index(key), FACET_FIELDS.index(field)] = j   # last one wins
    entries = sorted(ops)
    start = np.zeros(len(entries) + 1, dtype=np.int64)
    op_j, op_c, op_kind = [], [], []
    for e, entry in enumerate(entries):
        for j, c, k in ops[entry]:
            op_j.append(j)
            op_c.append(c)
            op_kind.append(k)
        start[e + 1] = len(op_j)
    flat0 = np.concatenate([glob0.ravel(), lig0.ravel()])
    flat0[sorted(unit_base)] = 1.0
    ref = model.reference
    geometry = [f.geometry(ref) for f in model.facets]
    facet_base = np.array([[g["inclination_deg"], g["gap"]] for g in geometry],
                          dtype=float).reshape(len(sides), 2)
    d = space.dim
    moved_flat = np.zeros((d, flat0.size), dtype=bool)
    for entry in entries:
        for j, _, _ in ops[entry]:
            moved_flat[j, entry] = True
    moved_fac = np.zeros((d, *fac0.shape), dtype=bool)
    columns = (list(range(F_C1, F_C1 + 3)) + list(range(F_N1, F_N1 + 3))
               + list(range(F_N2, F_N2 + 3)),              # inclination: c1, n1, n2
               list(range(F_C1, F_C1 + 3)), [F_R1, F_R2], [F_BLEND])   # gap, radius, C
    for f in range(len(sides)):
        for field, cols in enumerate(columns):
            if facet_source[f, field] >= 0:
                moved_fac[facet_source[f, field], f, cols] = True
    moved = (moved_flat[:, :n_glob].reshape(d, *glob0.shape),
             moved_flat[:, n_glob:].reshape(d, *lig0.shape), moved_fac)
    return PackPlan(dim=d, shapes=(glob0.shape, lig0.shape, fac0.shape),
                    entry=np.array(entries, dtype=np.int64),
                    base=flat0[np.array(entries, dtype=np.int64)].astype(float),
                    start=start, op_j=np.array(op_j, dtype=np.int64),
                    op_c=np.array(op_c, dtype=float), op_kind=np.array(op_kind, dtype=np.int64),
                    facet_source=facet_source,
                    facet_base=facet_base, R0=np.ascontiguousarray(ref.R0, dtype=float),
                    moved=moved)


@njit(parallel=True)
def _derivative_kernel(P, entry, base, start, op_j, op_c, op_kind, facet_source, facet_base,
                       R0, dglob, dlig, dfac):
    """Fill ``dglob``, ``dlig``, ``dfac`` (see :meth:`PackPlan.derivative` and the module
    doc for the formulas)."""
    m_sets = P.shape[0]
    n_glob = dglob.shape[2]
    n_col = dlig.shape[3]
    deg = math.pi / 180.0
    for i in prange(m_sets):
        p = P[i]
        dglob[i] = 0.0
        dlig[i] = 0.0
        dfac[i] = 0.0
        for e in range(entry.shape[0]):          # multiplied entries
            for k in range(start[e], start[e + 1]):
                others = 1.0
                for m in range(start[e], start[e + 1]):
                    if m != k:
                        if op_kind[m] == MULTIPLY:
                            others *= op_c[m] * p[op_j[m]]
                        else:
                            others *= op_c[m] / (1.0 + p[op_j[m]])
                if op_kind[k] == MULTIPLY:
                    v = base[e] * op_c[k] * others
                else:                            # d/dp c / (1 + p) = -c / (1 + p)^2
                    one_p = 1.0 + p[op_j[k]]     # squared by a product, not pow: same bits
                    v = base[e] * (-op_c[k] / (one_p * one_p)) * others   # on any CPU
                x = entry[e]
                if x < n_glob:
                    dglob[i, op_j[k], x] += v
                else:
                    x -= n_glob
                    dlig[i, op_j[k], x // n_col, x % n_col] += v
        for f in range(facet_source.shape[0]):   # facet rows, FacetJoint.at_reference
            j_incl, j_gap, j_rad, j_blend = (facet_source[f, 0], facet_source[f, 1],
                                             facet_source[f, 2], facet_source[f, 3])
            incl = p[j_incl] if j_incl >= 0 else facet_base[f, 0]
            gap = p[j_gap] if j_gap >= 0 else facet_base[f, 1]
            a = incl * deg
            n2 = (-math.sin(a), 0.0, math.cos(a))
            dn2 = (-math.cos(a) * deg, 0.0, -math.sin(a) * deg)     # d n2 / d incl [1/deg]
            for c in range(3):
                # row vector times R0: component c of R0^T v
                n2_c5 = R0[0, c] * n2[0] + R0[1, c] * n2[1] + R0[2, c] * n2[2]
                dn2_c5 = R0[0, c] * dn2[0] + R0[1, c] * dn2[1] + R0[2, c] * dn2[2]
                if j_gap >= 0:                   # c1 = c2 + gap n2
                    dfac[i, j_gap, f, F_C1 + c] += n2_c5
                if j_incl >= 0:
                    dfac[i, j_incl, f, F_C1 + c] += gap * dn2_c5
                    dfac[i, j_incl, f, F_N1 + c] -= dn2_c5
                    dfac[i, j_incl, f, F_N2 + c] += dn2[c]
            if j_rad >= 0:                       # radius_mm sets both faces
                dfac[i, j_rad, f, F_R1] += 1.0
                dfac[i, j_rad, f, F_R2] += 1.0
            if j_blend >= 0:
                dfac[i, j_blend, f, F_BLEND] += 1.0
