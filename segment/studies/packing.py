"""Exact derivatives of the packed arrays by the parameters, compiled.

:meth:`segment.studies.space.ParameterSpace.pack` writes parameter sets into the solver's packed
arrays in numpy; its derivative by each parameter is what the exact sensitivities
(:mod:`segment.studies.sensitivity`) need for every set. The complex step through ``pack`` (one
complex ``pack`` of all M sets per parameter) gives it exactly, but it costs D packs of numpy work
per chunk of sets: about 60 us per set for the 21 parameters of the packaged space, as much as
solving the set's ten equilibria. This module gives the same derivatives from a *plan* (what
each parameter does to which packed entry, read once from the space and the model) in one
parallel numba kernel.

Both :func:`pack_sets` (numpy, complex-safe: the reference) and the plan come from one list
per packed entry of the factors the parameters' laws put on it
(:meth:`segment.core.laws.Law.ops`); this module knows no field by name. What the laws do
(``tangent.pack`` layout):

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
  C, sagittal angle) of a facet determines it, and the facet's row is rebuilt as in
  ``FacetJoint.at_reference``: ``n2 = (-sin a cos d, s sin a sin d, cos a)`` with
  ``d = sagittal - 90 deg`` and ``s`` the facet's lateral side (:func:`~segment.elements.
  facet.c6_normals`), ``c1 = c2 + gap n2`` (C6), stored as ``R0^T (c1 - s0)`` and
  ``-R0^T n2`` in C5 (the derivatives below are of these expressions).

``tests/test_space.py`` holds the kernel to the complex step through ``pack`` for the packaged
space, for a space where several parameters act on one entry, and to central differences.
"""

from __future__ import annotations

import functools
import math
import weakref
from dataclasses import dataclass

import numpy as np

from segment.core.laws import GLOB, MULTIPLY
from segment.core.schema import field as schema_field
from segment.elements.facet import c6_normals, rows_in_frame
from segment.elements.tangent import (
    F_BLEND,
    F_C1,
    F_C2,
    F_N1,
    F_N2,
    F_R1,
    F_R2,
)
from segment.jit import njit, prange
from segment.solvers.batch import launch

__all__ = ["FACET_FIELDS", "PackPlan", "complex_step_reference", "pack_plan", "pack_sets"]

COMPLEX_STEP = 1e-30
"""Imaginary step of :func:`complex_step_reference` (exact to rounding for any tiny step)."""

FACET_FIELDS = ("inclination_deg", "gap", "radius", "blend", "sagittal_deg")
"""Columns of :attr:`PackPlan.facet_source`: the facet geometry a parameter can set
(:attr:`segment.core.laws.FacetGeometry.field`; ``radius`` sets both faces)."""


@dataclass(frozen=True)
class _Entries:
    """The factors on each packed entry (flat index into ``glob`` then ``lig``), in the
    parameters' order, with ``unit_base`` entries (base 1) and the parameter that sets each
    facet's geometry field (-1: none)."""

    ops: dict
    unit_base: frozenset
    facet_source: np.ndarray


@functools.lru_cache(maxsize=32)
def _entries(space, model) -> _Entries:
    """What ``space`` does to ``model``'s packed arrays. Both are frozen records (hashed by
    identity), so this is computed once per pair, not once per :func:`pack_sets` call (a
    calibration packs hundreds of times: 1 s of the report's calibration section). The cache
    holds its keys, so an identity is never reused while cached."""
    glob0, lig0 = model._packed[:2]
    n_glob, n_col = glob0.size, lig0.shape[1]
    sides = [f.side for f in model.facets]
    ops: dict[int, list[tuple[int, float, int, float]]] = {}
    unit_base = set()
    facet_source = np.full((len(sides), len(FACET_FIELDS)), -1, dtype=np.int64)
    for j, (targets, name) in enumerate(zip(space.targets, space.fields, strict=True)):
        for kind, key in targets:
            law = schema_field(kind, name).law
            if not law.present(model, key):
                continue          # the model has no such element: the parameter does nothing
            if law.facet_field is not None:                  # the last one wins
                facet_source[sides.index(key), FACET_FIELDS.index(law.facet_field)] = j
                continue
            for op in law.ops(model, key):
                flat = (op.index[0] if op.array == GLOB
                        else n_glob + op.index[0] * n_col + op.index[1])
                if op.sets:                                  # the last one wins
                    ops[flat] = [(j, op.c, op.kind, op.divisor)]
                else:
                    ops.setdefault(flat, []).append((j, op.c, op.kind, op.divisor))
                if op.unit_base:
                    unit_base.add(flat)
    for i, f in enumerate(model.facets):
        if facet_source[i, FACET_FIELDS.index("sagittal_deg")] >= 0 and f.disc_c6.center[1] == 0:
            raise ValueError(f"facet {f.side!r} lies on the midline (y = 0): it has no lateral "
                             "side to turn its face towards (sagittal_deg)")
    return _Entries(ops, frozenset(unit_base), facet_source)


def pack_sets(space, model, P):
    """M parameter sets (M, D; real or complex) written into ``model``'s packed arrays:
    ``glob (M, 52), lig (M, n, 13), fac (M, m, 16)`` (what
    :meth:`segment.studies.space.ParameterSpace.pack` returns; the caller checks ``P``)."""
    dtype = complex if np.iscomplexobj(P) else float
    glob0, lig0, fac0 = model._packed[:3]
    m_sets = P.shape[0]
    e = _entries(space, model)
    flat = np.repeat(np.concatenate([glob0.ravel(), lig0.ravel()])[None].astype(dtype),
                     m_sets, axis=0)
    for entry, factors in e.ops.items():
        v = np.ones(m_sets, dtype=dtype) if entry in e.unit_base else flat[:, entry]
        for j, c, kind, d in factors:
            v = v * ((c * P[:, j]) / d) if kind == MULTIPLY else v * ((c / (1.0 + P[:, j])) / d)
        flat[:, entry] = v
    glob = flat[:, :glob0.size].reshape(m_sets, *glob0.shape)
    lig = flat[:, glob0.size:].reshape(m_sets, *lig0.shape)
    fac = np.repeat(fac0[None].astype(dtype), m_sets, axis=0)
    ref = model.reference
    R0, s0 = ref.R0, ref.s0
    for i, f in enumerate(model.facets):
        source = e.facet_source[i]
        if (source < 0).all():
            continue
        g = f.geometry(ref)
        g = {k: (np.full(m_sets, v, dtype=dtype) if np.ndim(v) == 0 else v)
             for k, v in g.items()}
        for k, name in enumerate(FACET_FIELDS):
            if source[k] >= 0:
                values = P[:, source[k]].astype(dtype)
                if name == "radius":
                    g["radius_c6"] = g["radius_c5"] = values
                else:
                    g[name] = values
        # FacetJoint.at_reference, vectorised (and complex-safe)
        center = np.asarray(g["center_c6"], dtype=float)
        n2 = c6_normals(g["inclination_deg"], g["sagittal_deg"],
                        -1.0 if center[1] < 0.0 else 1.0)
        c2 = np.broadcast_to(center, n2.shape)
        c1_c6 = c2 + g["gap"][:, None] * n2
        fac[:, i, F_C1:F_C1 + 3] = rows_in_frame(R0, c1_c6 - s0)   # R0^T (c1 - s0)
        fac[:, i, F_N1:F_N1 + 3] = rows_in_frame(R0, -n2)
        fac[:, i, F_R1] = g["radius_c5"]
        fac[:, i, F_C2:F_C2 + 3] = c2
        fac[:, i, F_N2:F_N2 + 3] = n2
        fac[:, i, F_R2] = g["radius_c6"]
        fac[:, i, F_BLEND] = g["blend"]
    return glob, lig, fac


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
    facet_source : ndarray of int (m, 5)
        Parameter that sets each facet's inclination, gap, radius, C and sagittal angle
        (:data:`FACET_FIELDS`), -1 where none does.
    facet_base : ndarray (m, 4)
        The model's inclination [deg], gap [mm] and sagittal angle [deg] of each facet (used
        when no parameter sets them), and its lateral side (+1: +y, -1: -y).
    R0 : ndarray (3, 3)
        Reference orientation of C5 in C6.
    moved : tuple of bool arrays
        ``(D, G)``, ``(D, n, 13)``, ``(D, m, 15)``: the entries each parameter can move (the
        sparsity of :meth:`derivative` for any set; what
        :func:`segment.studies.sensitivity.touch_flags` reads), so a chunk of sets need not be
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
        :func:`segment.solvers.batch.launch` (safe from several threads; ``n_threads`` as there)."""
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


def complex_step_reference(space, model, P):
    """The same derivatives as :meth:`PackPlan.derivative` by the complex step through the
    numpy :meth:`~segment.studies.space.ParameterSpace.pack` (one complex pack of all sets per
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
    plan_entries = _entries(space, model)
    ops, facet_source = plan_entries.ops, plan_entries.facet_source
    sides = [f.side for f in model.facets]
    entries = sorted(ops)
    start = np.zeros(len(entries) + 1, dtype=np.int64)
    op_j, op_c, op_kind = [], [], []
    for e, entry in enumerate(entries):
        for j, c, k, d in ops[entry]:
            op_j.append(j)
            op_c.append(c / d)
            op_kind.append(k)
        start[e + 1] = len(op_j)
    flat0 = np.concatenate([glob0.ravel(), lig0.ravel()])
    flat0[sorted(plan_entries.unit_base)] = 1.0
    ref = model.reference
    geometry = [f.geometry(ref) for f in model.facets]
    facet_base = np.array([[g["inclination_deg"], g["gap"], g["sagittal_deg"],
                            -1.0 if g["center_c6"][1] < 0.0 else 1.0] for g in geometry],
                          dtype=float).reshape(len(sides), 4)
    d = space.dim
    moved_flat = np.zeros((d, flat0.size), dtype=bool)
    for entry in entries:
        for j, *_ in ops[entry]:
            moved_flat[j, entry] = True
    moved_fac = np.zeros((d, *fac0.shape), dtype=bool)
    columns = (list(range(F_C1, F_C1 + 3)) + list(range(F_N1, F_N1 + 3))
               + list(range(F_N2, F_N2 + 3)),              # inclination: c1, n1, n2
               list(range(F_C1, F_C1 + 3)), [F_R1, F_R2], [F_BLEND],   # gap, radius, C
               list(range(F_C1, F_C1 + 3)) + list(range(F_N1, F_N1 + 3))
               + list(range(F_N2, F_N2 + 3)))                          # sagittal: as incl.
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
            j_incl, j_gap, j_rad, j_blend, j_sag = (
                facet_source[f, 0], facet_source[f, 1], facet_source[f, 2],
                facet_source[f, 3], facet_source[f, 4])
            incl = p[j_incl] if j_incl >= 0 else facet_base[f, 0]
            gap = p[j_gap] if j_gap >= 0 else facet_base[f, 1]
            sag = p[j_sag] if j_sag >= 0 else facet_base[f, 2]
            lat = facet_base[f, 3]
            a = incl * deg
            dd = (sag - 90.0) * deg
            sa, ca, sd, cd = math.sin(a), math.cos(a), math.sin(dd), math.cos(dd)
            n2 = (-sa * cd, lat * sa * sd, ca)
            dn2 = (-ca * cd * deg, lat * ca * sd * deg, -sa * deg)   # d n2 / d incl [1/deg]
            dn2s = (sa * sd * deg, lat * sa * cd * deg, 0.0)        # d n2 / d sagittal
            for c in range(3):
                # row vector times R0: component c of R0^T v
                n2_c5 = R0[0, c] * n2[0] + R0[1, c] * n2[1] + R0[2, c] * n2[2]
                dn2_c5 = R0[0, c] * dn2[0] + R0[1, c] * dn2[1] + R0[2, c] * dn2[2]
                dn2s_c5 = R0[0, c] * dn2s[0] + R0[1, c] * dn2s[1] + R0[2, c] * dn2s[2]
                if j_gap >= 0:                   # c1 = c2 + gap n2
                    dfac[i, j_gap, f, F_C1 + c] += n2_c5
                if j_incl >= 0:
                    dfac[i, j_incl, f, F_C1 + c] += gap * dn2_c5
                    dfac[i, j_incl, f, F_N1 + c] -= dn2_c5
                    dfac[i, j_incl, f, F_N2 + c] += dn2[c]
                if j_sag >= 0:
                    dfac[i, j_sag, f, F_C1 + c] += gap * dn2s_c5
                    dfac[i, j_sag, f, F_N1 + c] -= dn2s_c5
                    dfac[i, j_sag, f, F_N2 + c] += dn2s[c]
            if j_rad >= 0:                       # radius_mm sets both faces
                dfac[i, j_rad, f, F_R1] += 1.0
                dfac[i, j_rad, f, F_R2] += 1.0
            if j_blend >= 0:
                dfac[i, j_blend, f, F_BLEND] += 1.0
