"""The C5-C6 segment: a tuple of force elements, its residual and its Jacobian.

The residual is the sum of generalized forces on the six joint coordinates (N for x, y, z;
N mm for the rotations)::

    residual(q, load) = Q_disc(q) + sum Q_ligament(q) + sum Q_facet(q) + Q_load(q)

and static equilibrium is ``residual = 0``. Two compiled implementations exist:

* :func:`_generalized_force`, in complex arithmetic: the reference. Its complex-step
  derivative (Squire and Trapp 1998; exact to rounding, no step-size trade-off, one complex
  evaluation per column) is :func:`residual_jacobian_complex_step`.
* :mod:`segment.elements.tangent`, in real arithmetic with the exact Jacobian written out (the facet
  contact's derivatives by forward-mode dual numbers, :mod:`segment.elements.facet_dual`): several
  times faster, used by the solvers. The tests hold it to the complex-step Jacobian and to central
  differences.

The kinks of the published laws (disc sign switch, ligament slack and support points, contact
onset) are kept: at a kink the Jacobian is the one-sided derivative of the branch the real part
selects.
"""

from __future__ import annotations

import dataclasses
import functools
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

from segment.core.io import BodyInertia
from segment.core.newton import DEFAULT_TOL
from segment.core.residual import (
    _element_state,
    predict_row,
    residual_jacobian,
    residual_real,
)
from segment.core.solve import solve_checked
from segment.elements.contact import DISLOCATED, REGIMES
from segment.elements.disc import DiscStiffness
from segment.elements.facet import ContactLaw, FacetJoint
from segment.elements.kinematics import ReferencePose
from segment.elements.ligament import Ligament
from segment.elements.loads import Load
from segment.elements.restraint import PointRestraint, pack_restraints
from segment.elements.tangent import pack

__all__ = ["PUBLISHED_FACET_DAMPING", "FacetState", "LigamentState", "RestraintState", "Segment",
           "SegmentState"]

PUBLISHED_FACET_DAMPING = 0.3
"""Facet contact damping b_f [N s/mm]: 300 N s/m (DETC2000/MECH-6821, "Facet Joints", after
de Jager 1996); the default of a :class:`Segment` built by hand."""















# ---------------------------------------------------------------- state records
@dataclass(frozen=True, eq=False)
class LigamentState:
    """A ligament (or one strip of it) at a pose: length [mm], strain [-], tension [N] and
    where it acts.

    ``name`` is the strip's name (the ligament's when it is one strip), ``ligament`` the
    ligament's; ``strip`` counts from 1 of ``strips``. ``ruptured``: the strip broke (it is in
    ``Segment.ruptured``) and carries nothing. ``cut``: the fraction of the strip's fibres
    removed surgically (``Segment.cut``, :mod:`segment.core.states`; 1.0 = cut through, it
    carries nothing, and it is not a failure). The length and strain are those of the line
    between the insertions, also for a strip that carries nothing.
    """

    name: str
    length: float
    strain: float
    tension: float
    beyond_max: bool
    insertion_c5_in_c6: np.ndarray
    insertion_c6: np.ndarray
    force_on_c5: np.ndarray
    ligament: str = ""
    strip: int = 1
    strips: int = 1
    ruptured: bool = False
    cut: float = 0.0


@dataclass(frozen=True, eq=False)
class RestraintState:
    """A point restraint of a device (:mod:`segment.elements.restraint`) at a pose: the C5
    point [mm] and the force on C5 [N], both in C6 coordinates (C6 receives ``-force_on_c5``),
    and the displacement of the C5 point from its C6 anchor [mm]."""

    name: str
    point: np.ndarray
    force_on_c5: np.ndarray
    displacement: np.ndarray


@dataclass(frozen=True, eq=False)
class FacetState:
    """A facet joint at a pose: regime, penetration [mm], contact point and force on C5.

    The point [mm] and force [N] are in C6 coordinates; C6 receives ``-force_on_c5``.
    """

    side: str
    regime: str
    case: str
    penetration: float
    force: float
    point: np.ndarray
    direction: np.ndarray
    force_on_c5: np.ndarray
    blend_weight: float
    sin_alpha: float
    dislocated: bool = False
    """C5's facet has left C6's: the projected faces no longer overlap while the C5 face lies
    below the plane of the C6 face beside it (regime ``dislocated``, :mod:`segment.elements.facet`
    item 9). No force then."""


@dataclass(frozen=True, eq=False)
class SegmentState:
    """Every element of the segment at one pose ``q``.

    ``disc_force`` holds the disc's generalized restoring forces (6,) [N, N mm].
    """

    q: np.ndarray
    disc_force: np.ndarray
    ligaments: tuple[LigamentState, ...]
    facets: tuple[FacetState, ...]
    restraints: tuple[RestraintState, ...] = ()

    def ligament_table(self) -> pd.DataFrame:
        """One row per ligament (per strip when split): length [mm], strain [-], tension [N],
        past eps_max, ruptured, fraction cut surgically."""
        import pandas as pd  # lazy: `import segment` stays light

        return pd.DataFrame(
            [{"ligament": s.name, "length_mm": s.length, "strain": s.strain,
              "tension_N": s.tension, "beyond_eps_max": s.beyond_max, "ruptured": s.ruptured,
              "cut": s.cut}
             for s in self.ligaments],
            columns=["ligament", "length_mm", "strain", "tension_N", "beyond_eps_max",
                     "ruptured", "cut"])

    def facet_table(self) -> pd.DataFrame:
        """One row per facet: regime, dislocated, penetration [mm], force [N], point and
        force in C6."""
        import pandas as pd  # lazy: `import segment` stays light

        rows = []
        for s in self.facets:
            rows.append({
                "facet": s.side, "regime": s.regime, "dislocated": s.dislocated,
                "penetration_mm": s.penetration, "force_N": s.force,
                **{f"point_{a}_mm": v for a, v in zip("xyz", s.point, strict=True)},
                **{f"force_on_c5_{a}_N": v for a, v in zip("xyz", s.force_on_c5, strict=True)},
            })
        return pd.DataFrame(rows)


# ---------------------------------------------------------------- the segment
def _segment_from_fields(fields: dict) -> Segment:
    """A :class:`Segment` from the fields :meth:`Segment.__reduce__` pickled."""
    return Segment(**fields)


@dataclass(frozen=True, eq=False)
class Segment:
    """A C5-C6 motion segment: reference pose, disc, ligaments and facet joints.

    Build the published model with :func:`segment.c5c6`; derive variants with
    :meth:`replace`. Positions in mm, forces in N, moments in N mm, angles in rad.
    ``inertia`` (Table 1, C5) is used by the dynamics only; statics never need it.
    ``contact_law`` defaults to the published facet law with its damping b_f = 0.3 N s/mm
    (:data:`PUBLISHED_FACET_DAMPING`).

    Clinical states (:mod:`segment.core.states`, ``Segment.with_state``) add three fields:

    * ``cut`` ``{strip name: fraction}``: fibres removed surgically, a fraction in (0, 1] of
      each named strip (1 = cut through). A cut strip's force curve is scaled by
      ``1 - fraction``; a strip cut through carries nothing, is never flagged past eps_max and
      never ruptures. It is not a failure: ``ruptured`` holds only strips that broke under
      load (a ramp or a simulation, or :meth:`with_ruptured`).
    * ``restraints``: point restraints of a device (:mod:`segment.elements.restraint`), e.g.
      the ball of a disc prosthesis at its centre of rotation.
    * ``clinical``: the names of the clinical states applied, in order (empty: the model as
      built). Results report them (:attr:`clinical_label`).
    * ``operated`` ``{element: state}``: which state changed which element (``"ligament FL"``,
      ``"facet right"``, ``"disc"``); an element is operated on once (a second operation on
      it is a contradiction, refused by :mod:`segment.core.states`).
    """

    reference: ReferencePose
    disc: DiscStiffness
    ligaments: tuple[Ligament, ...] = ()
    facets: tuple[FacetJoint, ...] = ()
    contact_law: ContactLaw = field(
        default_factory=lambda: ContactLaw(2000.0, 0.3, 1200.0, damping=PUBLISHED_FACET_DAMPING))
    inertia: BodyInertia | None = None
    ruptured: frozenset[str] = frozenset()
    restraints: tuple[PointRestraint, ...] = ()
    cut: Mapping[str, float] = field(default_factory=dict)
    clinical: tuple[str, ...] = ()
    operated: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self):
        for name, kind in (("reference", ReferencePose), ("disc", DiscStiffness),
                           ("contact_law", ContactLaw)):
            if not isinstance(getattr(self, name), kind):
                raise TypeError(f"Segment {name} must be a {kind.__name__}, got "
                                f"{type(getattr(self, name)).__name__}")
        if self.inertia is not None and not isinstance(self.inertia, BodyInertia):
            raise TypeError(f"Segment inertia must be a BodyInertia or None, got "
                            f"{type(self.inertia).__name__}")
        object.__setattr__(self, "ligaments", tuple(self.ligaments))
        object.__setattr__(self, "facets", tuple(self.facets))
        for lig in self.ligaments:
            if not isinstance(lig, Ligament):
                raise TypeError(f"ligaments must be Ligament records, got {type(lig).__name__}")
        for fac in self.facets:
            if not isinstance(fac, FacetJoint):
                raise TypeError(f"facets must be FacetJoint records, got {type(fac).__name__}")
        names = [lig.name for lig in self.ligaments]
        if len(set(names)) != len(names):
            raise ValueError(f"ligament names must be unique, got {names}")
        if isinstance(self.ruptured, str):
            raise TypeError(f"Segment ruptured must be a collection of strip names, got the "
                            f"string {self.ruptured!r}")
        object.__setattr__(self, "ruptured", frozenset(self.ruptured))
        unknown = sorted(self.ruptured - set(self.strip_names))
        if unknown:
            raise ValueError(f"Segment ruptured: unknown strip(s) {unknown}; this model has "
                             f"{list(self.strip_names)}")
        object.__setattr__(self, "restraints", tuple(self.restraints))
        for res in self.restraints:
            if not isinstance(res, PointRestraint):
                raise TypeError(f"restraints must be PointRestraint records, got "
                                f"{type(res).__name__}")
        if not isinstance(self.cut, Mapping):
            raise TypeError(f"Segment cut must be a mapping {{strip name: fraction}}, got "
                            f"{type(self.cut).__name__}")
        cut = {}
        for name, frac in sorted(self.cut.items()):
            if name not in self.strip_names:
                raise ValueError(f"Segment cut: unknown strip {name!r}; this model has "
                                 f"{list(self.strip_names)}")
            if isinstance(frac, bool) or not isinstance(frac, numbers.Real) \
                    or not 0.0 < float(frac) <= 1.0:
                raise ValueError(f"Segment cut: the fraction of strip {name!r} must be in "
                                 f"(0, 1], got {frac!r}")
            cut[name] = float(frac)
        both = sorted(n for n, f in cut.items() if f == 1.0 and n in self.ruptured)
        if both:
            raise ValueError(f"Segment: strip(s) {both} are both cut and ruptured; a strip cut "
                             f"through cannot rupture")
        object.__setattr__(self, "cut", MappingProxyType(cut))
        if isinstance(self.clinical, str):
            raise TypeError(f"Segment clinical must be a tuple of state names, got the string "
                            f"{self.clinical!r}")
        object.__setattr__(self, "clinical", tuple(str(c) for c in self.clinical))
        if not isinstance(self.operated, Mapping):
            raise TypeError(f"Segment operated must be a mapping {{element: state}}, got "
                            f"{type(self.operated).__name__}")
        object.__setattr__(self, "operated", MappingProxyType(dict(self.operated)))

    def __reduce__(self):
        """Pickled as its fields, the read-only mappings (``cut``, ``operated``) as dicts, and
        rebuilt by the constructor on loading (its checks run again; the caches, such as the
        packed arrays and the unloaded equilibrium, are recomputed when first asked for)."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        fields["cut"] = dict(self.cut)
        fields["operated"] = dict(self.operated)
        return (_segment_from_fields, (fields,))

    @property
    def clinical_label(self) -> str:
        """The clinical state in one word: ``"intact"`` or the applied states joined by
        ``+`` (e.g. ``"laminectomy+facetectomy-right-100"``)."""
        return "+".join(self.clinical) if self.clinical else "intact"

    # -- strips (Tejszerska and Gzik, eq. 9a): one kernel row per strip
    @functools.cached_property
    def strip_names(self) -> tuple[str, ...]:
        """Names of the kernel's ligament rows: one per strip (see
        :attr:`segment.Ligament.strip_names`), in ligament order."""
        return tuple(n for lig in self.ligaments for n in lig.strip_names)

    @functools.cached_property
    def strip_ligament(self) -> np.ndarray:
        """Index (into ``ligaments``) of the ligament of each strip row, shape (n_strips,)."""
        return np.array([i for i, lig in enumerate(self.ligaments) for _ in range(lig.strips)],
                        dtype=np.int64)

    @functools.cached_property
    def alive(self) -> np.ndarray:
        """1.0 for an intact strip row, 0.0 for a ruptured one, shape (n_strips,)."""
        return np.array([0.0 if n in self.ruptured else 1.0 for n in self.strip_names])

    @functools.cached_property
    def fibres(self) -> np.ndarray:
        """The fraction of each strip row's fibres left by surgery (``1 - cut``), shape
        (n_strips,)."""
        return np.array([1.0 - self.cut.get(n, 0.0) for n in self.strip_names])

    @functools.cached_property
    def _carrying(self) -> np.ndarray:
        """Multiplier of each strip row's force curve: ``alive * fibres`` (0 for a ruptured
        strip and for one cut through: such rows never rupture again)."""
        return self.alive * self.fibres

    def with_strips(self, strips) -> Segment:
        """The ligaments split into parallel strips: an int for every ligament or a mapping
        ``{name: n}`` (others unchanged). Widths are the ligaments' own
        (``data/ligament_strips.csv``). Rupture marks are cleared. A surgical cut of a whole
        ligament (every strip cut by the same fraction) carries over to its new strips; a cut
        of some strips only cannot be re-split (``ValueError``)."""
        if isinstance(strips, dict):
            known = [lig.name for lig in self.ligaments]
            missing = [n for n in strips if n not in known]
            if missing:
                raise ValueError(f"unknown ligament(s) {missing}; this model has {known}")
            ligs = tuple(lig.split(strips[lig.name]) if lig.name in strips else lig
                         for lig in self.ligaments)
        else:
            ligs = tuple(lig.split(strips) for lig in self.ligaments)
        cut = {}
        for old, new in zip(self.ligaments, ligs, strict=True):
            fractions = {self.cut.get(n, 0.0) for n in old.strip_names}
            if new is old or fractions == {0.0}:
                cut.update({n: self.cut[n] for n in old.strip_names if n in self.cut})
                continue
            if len(fractions) > 1:
                raise ValueError(f"ligament {old.name!r}: some of its strips are cut "
                                 f"({sorted(n for n in old.strip_names if n in self.cut)}); "
                                 f"split it before the state that cuts them")
            fraction = fractions.pop()
            cut.update({n: fraction for n in new.strip_names})
        return self.replace(ligaments=ligs, ruptured=frozenset(), cut=cut)

    def with_ruptured(self, names) -> Segment:
        """A copy in which the named strips (added to those already broken) carry nothing.

        A ruptured strip broke under load: an equilibrium of such a model is past a failure
        limit (status 6, ``intact`` False, the strip named in ``limit_flags``). To remove a
        ligament surgically, cut it instead (:meth:`with_state`, :mod:`segment.core.states`):
        a cut strip is no failure."""
        if isinstance(names, str):
            names = (names,)
        return self.replace(ruptured=self.ruptured | frozenset(names))

    def with_state(self, *names, data_dir=None, strict: bool = True) -> Segment:
        """This model in the named clinical states, applied in order (e.g.
        ``model.with_state("laminectomy", "facetectomy-right-100")``, or one name joined by
        ``+``). The states are those of ``data/states.csv`` (or ``data_dir/states.csv``); see
        :mod:`segment.core.states` for the operations, their sources and the contradictions
        refused."""
        from segment.core.states import apply_states  # the CSV of states: only when asked

        return apply_states(self, names, data_dir=data_dir, strict=strict)

    # -- packing for the compiled kernels (built once per model)
    @functools.cached_property
    def _params(self):
        def rows(values, width):
            a = np.ascontiguousarray(np.array(values, dtype=float).reshape(-1, width))
            return a

        lig_a, lig_b, lig_l0, lig_eps, lig_f = self._strip_rows()
        fac = self.facets
        return (
            np.ascontiguousarray(self.reference.s0, dtype=float),
            np.ascontiguousarray(self.reference.R0, dtype=float),
            np.ascontiguousarray(self.disc.k_positive, dtype=float),
            np.ascontiguousarray(self.disc.k_negative, dtype=float),
            rows(lig_a, 3),
            rows(lig_b, 3),
            rows(lig_l0, 1)[:, 0].copy(),
            rows(lig_eps, 3),
            rows(lig_f, 3),
            rows([f.disc_c5.center for f in fac], 3),
            rows([f.disc_c5.normal for f in fac], 3),
            rows([f.disc_c5.radius for f in fac], 1)[:, 0].copy(),
            rows([f.disc_c6.center for f in fac], 3),
            rows([f.disc_c6.normal for f in fac], 3),
            rows([f.disc_c6.radius for f in fac], 1)[:, 0].copy(),
            rows([f.blend for f in fac], 1)[:, 0].copy(),
            np.ascontiguousarray(self.contact_law.as_array()),
            pack_restraints(self.restraints),
            rows([f.contact_scale for f in fac], 1)[:, 0].copy(),
            np.ascontiguousarray(self.disc.packed_law()),
        )

    def _strip_rows(self):
        """Per strip row: C5 and C6 insertions, rest length, curve strains and forces.

        A ligament of n strips gives n rows: insertions spread by eq. (9a), rest length
        ``l0 L_k / L`` (same reference strain as the ligament, see
        :mod:`segment.elements.ligament`), the curve's forces over n, times the strip's carrying
        multiplier (0 for a ruptured strip, ``1 - cut`` for one cut surgically). One strip is the
        ligament's own numbers, unchanged to the bit.
        """
        a_rows, b_rows, l0_rows, eps_rows, f_rows = [], [], [], [], []
        s0 = np.asarray(self.reference.s0, dtype=float)
        R0 = np.asarray(self.reference.R0, dtype=float)
        alive = iter(self._carrying)
        for lig in self.ligaments:
            n = lig.strips
            if n == 1:
                a_k = [lig.insertion_c5]
                b_k = [lig.insertion_c6]
                l0_k = [lig.l0]
                force = lig.curve.force
            else:
                off = lig.strip_offsets()[:, None] * lig.width_axis
                a_k = list(lig.insertion_c5 + off)
                b_k = list(lig.insertion_c6 + off)
                length = np.linalg.norm(lig.insertion_c6 - (s0 + R0 @ lig.insertion_c5))
                l0_k = [lig.l0 * np.linalg.norm(b - (s0 + R0 @ a)) / length
                        for a, b in zip(a_k, b_k, strict=True)]
                force = lig.curve.force / n
            for k in range(n):
                a_rows.append(a_k[k])
                b_rows.append(b_k[k])
                l0_rows.append(l0_k[k])
                eps_rows.append(lig.curve.strain)
                f_rows.append(force * next(alive))
        return a_rows, b_rows, l0_rows, eps_rows, f_rows

    @functools.cached_property
    def _packed(self):
        """The three arrays of :func:`segment.elements.tangent.pack`: the solvers' layout."""
        return pack(self._params)

    @staticmethod
    def _check(q, load) -> tuple[np.ndarray, np.ndarray]:
        q = np.array(q, dtype=float)
        if q.shape != (6,):
            raise ValueError(f"q must have shape (6,), got {q.shape}")
        if not np.all(np.isfinite(q)):
            raise ValueError(f"q must be finite, got {q.tolist()}")
        if not isinstance(load, Load):
            raise TypeError(f"load must be a segment.Load, got {type(load).__name__}")
        return q, load.as_array()

    def residual(self, q, load: Load) -> np.ndarray:
        """Sum of generalized forces (6,) [N, N mm] at ``q`` under ``load``; 0 at equilibrium."""
        q, f = self._check(q, load)
        return residual_real(q, f, self._packed)

    def jacobian(self, q, load: Load) -> np.ndarray:
        """d residual / d q, shape (6, 6) [N/mm, N/rad, N mm/mm, N mm/rad]."""
        return self.residual_and_jacobian(q, load)[1]

    def residual_and_jacobian(self, q, load: Load) -> tuple[np.ndarray, np.ndarray]:
        """Both at once (one pass of the exact tangent, :mod:`segment.elements.tangent`)."""
        q, f = self._check(q, load)
        return residual_jacobian(q, f, self._packed)

    def state(self, q) -> SegmentState:
        """Every element's forces at ``q``."""
        q, _ = self._check(q, Load.zero())
        disc, lig, fac, res = _element_state(q, self._params)
        lig_b = self._params[5]
        strip_no = [k for x in self.ligaments for k in range(1, x.strips + 1)]
        ligs = tuple(
            LigamentState(name=name, length=lig[i, 0], strain=lig[i, 1], tension=lig[i, 2],
                          beyond_max=bool(lig[i, 1] > x.curve.strain[2])
                          and self.cut.get(name, 0.0) < 1.0,
                          insertion_c5_in_c6=lig[i, 3:6].copy(),
                          insertion_c6=lig_b[i].copy(), force_on_c5=lig[i, 6:9].copy(),
                          ligament=x.name, strip=strip_no[i], strips=x.strips,
                          ruptured=name in self.ruptured, cut=self.cut.get(name, 0.0))
            for i, (name, x) in enumerate(zip(
                self.strip_names, (self.ligaments[j] for j in self.strip_ligament),
                strict=True)))
        facs = tuple(
            FacetState(side=f.side, regime=REGIMES[int(fac[i, 4])], case=REGIMES[int(fac[i, 5])],
                       penetration=fac[i, 0], force=fac[i, 3], point=fac[i, 6:9].copy(),
                       direction=fac[i, 9:12].copy(), force_on_c5=fac[i, 12:15].copy(),
                       blend_weight=fac[i, 1], sin_alpha=fac[i, 2],
                       dislocated=int(fac[i, 4]) == DISLOCATED)
            for i, f in enumerate(self.facets))
        rest = tuple(
            RestraintState(name=x.name, point=res[i, :3].copy(), force_on_c5=res[i, 3:].copy(),
                           displacement=res[i, :3] - x.point_c6)
            for i, x in enumerate(self.restraints))
        return SegmentState(q=q, disc_force=disc, ligaments=ligs, facets=facs, restraints=rest)

    def replace(self, **changes) -> Segment:
        """A copy with some fields replaced (``disc=``, ``ligaments=``, ``facets=`` ...)."""
        fields = {"reference": self.reference, "disc": self.disc, "ligaments": self.ligaments,
                  "facets": self.facets, "contact_law": self.contact_law,
                  "inertia": self.inertia, "ruptured": self.ruptured,
                  "restraints": self.restraints, "cut": self.cut, "clinical": self.clinical,
                  "operated": self.operated}
        unknown = set(changes) - set(fields)
        if unknown:
            raise TypeError(f"unknown Segment fields {sorted(unknown)}; known: {sorted(fields)}")
        fields.update(changes)
        return Segment(**fields)

    def with_ligaments(self, names) -> Segment:
        """Keep only the named ligaments (e.g. ``("ALL", "PLL")``)."""
        names = tuple(names)
        known = [lig.name for lig in self.ligaments]
        missing = [n for n in names if n not in known]
        if missing:
            raise ValueError(f"unknown ligament(s) {missing}; this model has {known}")
        kept = tuple(x for x in self.ligaments if x.name in names)
        strips = {n for x in kept for n in x.strip_names}
        return self.replace(ligaments=kept, ruptured=self.ruptured & strips,
                            cut={n: f for n, f in self.cut.items() if n in strips})

    @functools.cached_property
    def _predictor(self):
        """``(available, q_u, K_u^-1)`` for the linear start ``q_u - K_u^-1 f`` of
        :meth:`predict_start`; ``available`` False (and zeros) when the unloaded equilibrium did
        not converge or its stiffness is singular."""
        u = self.unloaded
        none = (False, np.zeros(6), np.zeros((6, 6)))
        if not u.converged:
            return none
        try:
            k_inv = np.linalg.inv(self.jacobian(u.q, Load.zero()))
        except np.linalg.LinAlgError:
            return none
        if not np.all(np.isfinite(k_inv)):
            return none
        return True, np.array(u.q, dtype=float), np.ascontiguousarray(k_inv)

    def predict_start(self, F) -> np.ndarray:
        """Linear predictor ``q_u - K_u^-1 f`` (N, 6) [mm, rad] for load rows ``F`` (N, 6).

        The start of :func:`segment.solve` and :func:`segment.solve_many` (computed inside
        their kernels by the same compiled function, so one load gets bit for bit the start it
        gets among many); q = 0 where the unloaded equilibrium is not available or the
        prediction is not finite.
        """
        F = np.ascontiguousarray(np.asarray(F, dtype=float).reshape(-1, 6))
        available, q_u, k_inv = self._predictor
        out = np.zeros_like(F)
        if available:
            for k in range(F.shape[0]):
                predict_row(q_u, k_inv, F[k], out[k])
        return out

    @functools.cached_property
    def unloaded(self):
        """The unloaded equilibrium (an :class:`~segment.core.newton.EquilibriumResult`)."""
        return solve_checked(self, Load.zero(), None, DEFAULT_TOL, 60, None)
