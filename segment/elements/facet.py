"""Facet joints: two facet faces in contact, pushed apart by the contact force law.

Source: DETC2000/MECH-6821 ("Facet Joints": the contact force law, the facets' geometry and
blending constant; Table 1 for the reference pose). A force element is geometry plus a force
law: the geometry is the contact of the joint's two faces (:mod:`segment.elements.contact`,
the regularized cylinder end-face contact of the cylinder paper, on the records of
:mod:`segment.elements.facet_face`), the law is :class:`ContactLaw` below. One concept: the
facet joint, its faces placed in C6 and C5 (:class:`FacetJoint`) and the compiled evaluation
of its force on C5 at a pose (:func:`facet_state`).

Contact force law (DETC2000/MECH-6821, "Facet Joints")::

    F_c = b_f du/dt + { k2 u^2                     0 <= u <= u_t
                      { k2 u_t^2 + k1 (u - u_t)    u > u_t

with k2 = 2e9 N/m^2 = 2000 N/mm^2, u_t = 0.3 mm, k1 = 1.2e6 N/m = 1200 N/mm (continuous in value
and slope at u_t). The force on disc 1 (C5) is ``F_c * direction``; C6 receives the opposite.

:func:`end_face_force` is the law in the kernels (complex arithmetic, the complex-step
reference); :func:`segment.elements.facet_dual.contact_force_dual` is it again in dual numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from segment.elements.contact import _check_penetration_at, end_face_contact
from segment.elements.facet_face import FacetFace
from segment.elements.vec import add, mat_vec, row, scale
from segment.jit import njit

__all__ = ["LAW_SLOPE_RTOL", "ContactLaw", "FacetJoint", "c6_normals", "rows_in_frame"]

# Relative tolerance of the contact law's slope continuity k1 = 2 k2 u_t.
LAW_SLOPE_RTOL = 1e-9
SAGITTAL_NEUTRAL_DEG = 90.0
"""Angle of a facet face to the sagittal plane [deg] whose normal lies in the sagittal plane
(the published model's facets; :func:`c6_normals`)."""


@dataclass(frozen=True)
class ContactLaw:
    """Quadratic-then-linear facet contact law (DETC2000/MECH-6821).

    Parameters
    ----------
    k_quadratic : float
        k2 [N/mm^2] (2e9 N/m^2 = 2000 N/mm^2).
    u_transition : float
        u_t [mm] (0.3 mm).
    k_linear : float
        k1 [N/mm] (1.2e6 N/m = 1200 N/mm).
    damping : float
        b_f [N s/mm] (300 N s/m = 0.3 N s/mm); dynamics only.
    penetration_at : {"virtual", "edge"}
        Where the penetration u is measured once the contact point is blended: at the
        virtual point P' (default) or at the edge point P (item 10 of
        :mod:`segment.elements.contact`).

    The law is continuous in value by construction and in slope when
    ``k_linear = 2 k_quadratic u_transition`` (the published values: 1200 = 2 * 2000 * 0.3);
    a law whose slope would jump at u_t is rejected (relative tolerance
    :data:`LAW_SLOPE_RTOL`, rounding of values given in other units).
    """

    k_quadratic: float
    u_transition: float
    k_linear: float
    damping: float = 0.0
    penetration_at: str = "virtual"

    def __post_init__(self):
        for name in ("k_quadratic", "u_transition", "k_linear"):
            v = getattr(self, name)
            if not (np.isfinite(v) and v > 0):
                raise ValueError(f"contact law: {name} must be > 0, got {v}")
        if not (np.isfinite(self.damping) and self.damping >= 0):
            raise ValueError(f"contact law: damping must be >= 0, got {self.damping}")
        slope = 2.0 * self.k_quadratic * self.u_transition
        if not abs(self.k_linear - slope) <= LAW_SLOPE_RTOL * slope:
            raise ValueError(f"contact law: k_linear must equal 2 k_quadratic u_transition = "
                             f"{slope:g} N/mm (continuous slope at u_transition), got "
                             f"{self.k_linear:g}")
        _check_penetration_at(self.penetration_at, "contact law")

    @property
    def force_at_transition(self) -> float:
        """k2 u_t^2 [N] (180 N for the published law)."""
        # a product, not ``**2``: inf for huge values instead of Python's OverflowError
        return self.k_quadratic * (self.u_transition * self.u_transition)

    def as_array(self) -> np.ndarray:
        """``[k2, u_t, k1, at_edge]`` for the kernels (at_edge 1.0 for ``"edge"``, else 0.0)."""
        return np.array([self.k_quadratic, self.u_transition, self.k_linear,
                         1.0 if self.penetration_at == "edge" else 0.0])

    def __call__(self, u: float) -> tuple[float, float]:
        """Return force [N] and slope dF/du [N/mm] at penetration ``u`` [mm]."""
        f, s = end_face_force(complex(u), self.as_array())
        return f.real, s


@njit
def end_face_force(u, law):
    """Contact law value (complex, analytic in u) and slope (real).

    Mirrored in dual numbers by :func:`segment.elements.facet_dual.contact_force_dual`.
    """
    k2, ut, k1 = law[0], law[1], law[2]
    x = u.real
    if x <= 0.0:
        return 0j, 0.0
    if x <= ut:
        return k2 * u * u, 2.0 * k2 * x
    return k2 * ut * ut + k1 * (u - ut), k1


def rows_in_frame(R: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``R^T v`` for each row of ``v`` (n, 3): vectors of the parent frame expressed in the
    frame that ``R`` (3, 3) rotates into it; complex-safe.

    Written out as products and sums, so that one joint and many parameter sets get the same
    bits: ``R.T @ v`` and ``v @ R`` go through the CPU's BLAS, whose kernels differ."""
    v = np.asarray(v)
    return np.stack([(v[:, 0] * R[0, k] + v[:, 1] * R[1, k]) + v[:, 2] * R[2, k]
                     for k in range(3)], axis=-1)


def c6_normals(inclination_deg, sagittal_deg=SAGITTAL_NEUTRAL_DEG, lateral=1.0) -> np.ndarray:
    """C6 facet normals (n, 3) for inclinations (n,) [deg] to the transverse plane and angles
    (n,) [deg] to the sagittal plane, facing posterosuperior; complex-safe (the complex-step
    reference).

    The normal ``(-sin a, 0, cos a)`` of a face inclined ``a`` to the transverse plane is
    turned about z by ``d = sagittal_deg - 90`` towards the lateral side ``lateral`` (+1: +y,
    a left facet; -1: -y, a right one)::

        n2 = (-sin a cos d, lateral sin a sin d, cos a)

    so the face keeps its angle ``a`` to the transverse plane, and its trace in a transverse
    section makes the angle ``sagittal_deg`` with the sagittal plane (the angle of an axial CT
    slice): 90 deg faces straight back (the normal in the sagittal plane, as published model's
    facets), above 90 posterolaterally, below 90 posteromedially (the convention of
    PMC2219934 Table 2, read from its trend: C3 facets, which face posteromedially, measure
    about 70 deg there; SOURCES.md §3). At exactly 90 deg the normal is the one-angle normal
    to the last bit (``n_y = 0``).

    The one place the normal is computed from the angles, for one joint
    (:meth:`FacetJoint.at_reference`) and for many parameter sets
    (:meth:`segment.studies.space.ParameterSpace.pack`) alike: numpy evaluates sin and cos of
    an array with other instructions than of a single number on some CPUs (AVX-512), and
    the two results then differ in the last bit.
    """
    a = np.asarray(inclination_deg) * (np.pi / 180.0)      # np.radians, complex-safe
    d = (np.asarray(sagittal_deg) - SAGITTAL_NEUTRAL_DEG) * (np.pi / 180.0)
    a, d = np.broadcast_arrays(a, d)
    sin_a = np.sin(a)
    lateral_y = np.where(d == 0, 0.0, lateral * sin_a * np.sin(d))
    x = np.where(d == 0, -sin_a, -sin_a * np.cos(d))
    return np.stack([x, lateral_y, np.cos(a)], axis=-1)


def lateral_sign(center_c6, sagittal_deg: float, side: str = "") -> float:
    """+1 for a facet centred at y > 0 (left), -1 at y < 0; a facet on the midline has no
    lateral side, which only a face turned out of the sagittal plane needs (ValueError)."""
    y = float(np.real(center_c6[1]))
    if y == 0.0 and np.real(sagittal_deg) != SAGITTAL_NEUTRAL_DEG:
        raise ValueError(f"facet {side!r}: sagittal_deg must be {SAGITTAL_NEUTRAL_DEG:g} for a "
                         f"facet on the midline (y = 0: no lateral side), got {sagittal_deg!r}")
    return -1.0 if y < 0.0 else 1.0



@dataclass(frozen=True, eq=False)
class FacetJoint:
    """One facet joint: the C6 superior facet (disc 2, C6 frame) and the C5 inferior facet
    (disc 1, C5 frame), with the blending constant C.

    ``contact_scale`` (default 1, the published model) multiplies the contact law's force
    (and damping) of this joint: the fraction of the articular area left after a partial
    resection (:func:`segment.core.states.resect_facet`: a thin elastic layer's contact
    stiffness is proportional to its area). It must lie in (0, 1].
    """

    side: str
    disc_c6: FacetFace
    disc_c5: FacetFace
    blend: float
    contact_scale: float = 1.0

    def __post_init__(self):
        if not (np.isfinite(self.blend) and self.blend >= 0):
            raise ValueError(f"facet {self.side!r}: blend_C must be >= 0, got {self.blend}")
        s = self.contact_scale
        if isinstance(s, bool) or not (np.isfinite(s) and 0.0 < s <= 1.0):
            raise ValueError(f"facet {self.side!r}: contact_scale must be in (0, 1], got {s!r}")

    @classmethod
    def at_reference(cls, side: str, *, center_c6, inclination_deg: float, radius_c6: float,
                     radius_c5: float, gap: float, blend: float, reference,
                     contact_scale: float = 1.0,
                     sagittal_deg: float = SAGITTAL_NEUTRAL_DEG) -> FacetJoint:
        """Build a joint whose faces are parallel at the reference pose.

        The C6 facet normal is inclined ``inclination_deg`` to the transverse plane, facing
        posterosuperior, and turned out of the sagittal plane by ``sagittal_deg - 90``
        towards the facet's lateral side (:func:`c6_normals`; the default 90 deg gives
        ``n2 = (-sin a, 0, cos a)``). The C5 facet faces it (``n1 = -n2``) and sits ``gap``
        [mm] away along n2, so the joint is apart by ``gap`` at q = 0.
        """
        sagittal = float(sagittal_deg)
        if not (math.isfinite(sagittal) and 0.0 < sagittal < 180.0):
            raise ValueError(f"facet {side!r}: sagittal_deg must be in (0, 180) deg, got "
                             f"{sagittal_deg!r}")
        lateral = lateral_sign(center_c6, sagittal, side)
        n2 = c6_normals(np.array([inclination_deg], dtype=float),
                        np.array([sagittal]), lateral)[0]
        c2 = np.asarray(center_c6, dtype=float)
        c1_c6 = c2 + gap * n2
        R0, s0 = reference.R0, reference.s0
        disc_c5 = FacetFace(rows_in_frame(R0, (c1_c6 - s0)[None])[0],
                            rows_in_frame(R0, -n2[None])[0], radius_c5)
        return cls(side, FacetFace(c2, n2, radius_c6), disc_c5, blend, contact_scale)

    def geometry(self, reference) -> dict:
        """The parameters of :meth:`at_reference` that rebuild this joint (mm, deg)."""
        n2 = self.disc_c6.normal
        c1_c6 = reference.s0 + reference.R0 @ self.disc_c5.center
        if n2[1] == 0.0:                  # in the sagittal plane: the one-angle normal
            inclination = float(np.degrees(np.arctan2(-n2[0], n2[2])))
            sagittal = SAGITTAL_NEUTRAL_DEG
        else:                             # c6_normals inverted (|d| < 90 deg)
            lateral = -1.0 if self.disc_c6.center[1] < 0.0 else 1.0
            back = math.hypot(n2[0], n2[1])
            inclination = float(np.degrees(np.arctan2(math.copysign(back, -n2[0]), n2[2])))
            sagittal = SAGITTAL_NEUTRAL_DEG + float(np.degrees(
                np.arctan2(lateral * n2[1] * math.copysign(1.0, -n2[0]), abs(n2[0]))))
        return {
            "center_c6": self.disc_c6.center.copy(),
            "inclination_deg": inclination,
            "sagittal_deg": sagittal,
            "radius_c6": self.disc_c6.radius,
            "radius_c5": self.disc_c5.radius,
            "gap": float((c1_c6 - self.disc_c6.center) @ n2),
            "blend": self.blend,
            "contact_scale": self.contact_scale,
        }

    def modified(self, reference, **changes) -> FacetJoint:
        """The same joint with some of :meth:`geometry`'s parameters changed.

        Example: ``joint.modified(ref, inclination_deg=38.0, gap=0.2)``.
        """
        params = self.geometry(reference)
        unknown = set(changes) - set(params)
        if unknown:
            raise TypeError(f"facet {self.side!r}: unknown parameter(s) {sorted(unknown)}; "
                            f"known: {sorted(params)}")
        params.update(changes)
        return FacetJoint.at_reference(self.side, reference=reference, **params)


@njit
def facet_state(i, p, R, c1_c5, n1_c5, r1, c2_c6, n2_c6, r2, blend, law):
    """Contact of facet joint ``i`` with C5 at pose (p, R); everything in C6 coordinates.

    Returns ``(u, point, direction, regime, case, weight, sin_alpha, magnitude, force_on_c5)``.
    """
    c1 = add(p, mat_vec(R, row(c1_c5, i)))
    n1 = mat_vec(R, row(n1_c5, i))
    u, point, direction, regime, case, weight, sin_a = end_face_contact(
        c1, n1, r1[i], row(c2_c6, i), row(n2_c6, i), r2[i], blend[i], law[3] > 0.5)
    magnitude, _ = end_face_force(u, law)
    return u, point, direction, regime, case, weight, sin_a, magnitude, scale(magnitude, direction)
