"""Regularized contact of two cylinder end faces: the kernel of the facet joints.

Sources: Kecskemethy, Lange and Grabner, "Efficient modeling of rigid-body impacts between
cylinder end faces using the regularized approach" (the *cylinder paper*, sections 1.1-1.3:
cases 1-3 of steep contact, almost flat and flat contact, and their blending) and
DETC2000/MECH-6821 ("Impact Analysis", "Facet Joints"). One concept: where two faces
(:class:`~segment.elements.facet_face.FacetFace`) touch, how deep, and along which line the
force acts. The force law that turns the depth into a force and the facet joint are
:mod:`segment.elements.facet`; :mod:`segment.elements.facet_dual` is :func:`end_face_contact`
again in dual numbers (the solver's tangent).

Geometry and names
------------------
Each facet is the end face of a cylinder: a disc with centre ``c``, unit normal ``n`` pointing
*out of* the face (towards the partner) and radius ``r``; the solid lies behind the face.
Disc 2 is the superior facet of C6, disc 1 the inferior facet of C5. With
``c = c2 - c1`` (paper), ``alpha`` the angle between ``n1`` and ``-n2`` (0 when the faces are
parallel and facing), ``sin(alpha) = |n1 x n2|`` and ``dn = n1 + n2`` (the paper's Delta n)::

              n1 |              face 1 (C5 facet), solid above
           ______v______
      ~~~~~~~~~~~~~~~~~~~~~~    overlap = penetration
           -----^-----
              n2 |              face 2 (C6 facet), solid below

What we compute (decisions where the papers leave room)
-------------------------------------------------------
1. *Projection plane.* The cylinder paper projects the discs on the plane normal to the
   (almost parallel) axes and neglects the distortion of the circles into ellipses. We project
   along the bisector ``m = (n2 - n1)/|n2 - n1|`` and *unfold* the projection (stretch it by
   1/cos(alpha/2) along the tilt direction), which makes both rims exact circles of radii r1,
   r2 at any tilt: points of face 1 and face 2 on the same line along ``m`` share unfolded
   coordinates and distances within each face are preserved.
2. *Penetration.* ``u(y)`` at unfolded point ``y`` is the depth of the face-1 point below the
   plane of face 2, measured along n2; it equals the depth of the face-2 point below face 1
   measured along n1, so cases 1 and 2 measure the same thing. It is affine in ``y``:
   ``u(y) = c . n2 + sin(alpha) * (w . y)`` with ``w = -dn/|dn|`` (origin at C1). At the rim
   point of case 1 this is the paper's depth ``c . n2 + r1 sin(alpha)`` (the paper's d with the
   opposite sign: we report penetration >= 0, 0 when apart). The kernel evaluates it as
   ``u(y) = c . n2 - cos(alpha/2) * (dn . y)``, the same for unit normals
   (``|n1 x n2| = sin(alpha)``, ``|dn| = 2 sin(alpha/2)``) but free of the norms, so that its
   derivative is right also at exactly parallel faces, where ``w`` is undefined.
3. *Steep contact point P* = the deepest point of the overlap of the two unfolded circles (the
   "lens"). It is the rim point ``r1 w`` of disc 1 when that lies within disc 2 and the rim
   point of disc 2 does not lie within disc 1 (case 1, edge of disc 1 on the face of disc 2;
   this is the paper's test cos(phi1) >= cos(beta1), with full containment and "virtual contact
   outside" as its limits), the rim point ``e + r2 w`` of disc 2 in the mirror situation
   (case 2), and otherwise a point on both rims (case 3, edge-edge): a crossing of the rims, or
   the point where they touch when both rim points qualify (e.g. equal, aligned discs).
4. *Case 3 deviation.* The cylinder paper measures edge-edge penetration along the line of
   intersection of the face planes (chord overlap) and pushes along that line. For facing
   discs that measure differs from the edge-face depth where case 3 meets cases 1 and 2, so the
   force would jump there. We measure the depth at the rim crossing like cases 1 and 2 (both
   measures are zero at first touch) and keep the force continuous across the cases.
   Where the faces slide apart sideways, the paper's lateral measure comes back as a cap on
   the depth (item 9).
5. *Flat contact point M* lies on the centre line at ``L = (|e| + r1 - r2)/2`` from C1 (``|e|``: the
   distance of the unfolded centres; the paper's c), at C1 when disc 1 lies within disc 2 and at
   C2 when disc 2 lies within disc 1 (paper, section 1.2).
6. *Blending* (section 1.3): the virtual contact point is ``P' = M + (1 - exp(-C sin alpha))
   (P - M)``, i.e. ``r = r0 (1 - exp(-C sin alpha))`` with ``r0 = |MP|``; the penetration is
   ``u(P')``. Parallel discs thus contact at M, steep ones at P; no state is tracked.
7. *Point of application*: the middle of the depth segment at P' (from the face-1 point to
   the face-2 point beside it along m: the paper's d/2 convention). C6 receives the opposite
   force at the same point, so forces and moments are equal and opposite exactly.
8. *Line of action.* The papers push along the normal of the face the edge rests on: n2 in
   case 1 (edge of disc 1 on face 2), -n1 in case 2; a frictionless contact can push in no
   other direction. The two differ by alpha, and for two equal, aligned discs (the facets at
   the reference pose) an arbitrarily small offset switches between the cases, so taken as
   they are the force would jump by about F alpha there. We therefore turn the direction
   continuously where the steep point P nears the rim of the face it rests on:
   ``d = normalize(a n2 - (1 - a) n1)`` with ``a = (1 + t2 - t1)/2`` and
   ``t_k = smoothstep((r_k - |P - C_k|) / l)``, the depth of P inside rim k (in the unfolded
   plane, where in-face distances are true), ``l = 0.1 min(r1, r2)`` (0.5 mm for the facets).
   In case 1, P is on rim 1 (t1 = 0): d = n2 once P lies l inside face 2, the bisector m at
   its rim; case 2 mirrors it; in edge-edge contact P lies on both rims and d = m. P moves
   continuously across the cases, so d does too (smoothstep: also its slope). Towards
   almost-flat and flat contact n2 and -n1 merge and d with them; exactly parallel faces keep
   d = m = n2 = -n1 (the flat limit is unchanged). Swapping the discs swaps t1 and t2 and
   reverses d. Effect on the nine Moroney cases (main displacement from the unloaded
   equilibrium, against the former bisector m everywhere): LB +0.36 %, EXT +0.26 % (its
   coupled x -0.604 -> -0.616 mm), AR +0.06 %, AS +0.01 %, the others below 0.01 % (their
   facets are apart or nearly parallel). The disc-plane drop no longer slides (the bisector
   pushed it sideways with F sin(alpha/2): 8.7 mm in 1 s).
9. *Fading out: sliding off, turning away, dislocation.* The penetration is the depth of
   item 2 capped by the lateral overlap ``r1 + r2 - |e|`` of the projected faces (at most the
   smaller diameter): of the two ways to end the overlap, pushing the faces apart along the
   normal (the depth) or sliding them apart along the centre line (the paper's case-3 chord
   overlap), the contact measures the shorter. The facets (depth below 1 mm, overlap about
   10 mm) never feel the cap in physiological loading; when two faces slide apart while
   interpenetrating, the overlap narrows below the depth and the force fades to 0 exactly
   where the projections stop overlapping, instead of ending there in one step (180 N to 0
   at 0.3 mm depth before). Past that point the joint is ``dislocated`` (C5's facet has left
   C6's) when the rim point of disc 1 nearest disc 2 lies below the plane of face 2, else
   ``apart``; either way without force. The cap only removes force: the sideways push of a
   real rim-on-rim contact is not modelled. *Not facing:* the end-face model needs
   ``cos(alpha) = -n1 . n2 > 0``; the penetration is multiplied by
   ``smoothstep(cos(alpha) / 0.25)``, so the force fades out between alpha = 75.5 and 90 deg
   instead of ending at 90 deg, beyond which the contact reports ``not-facing``.
10. *Where the penetration is measured* once the point is blended: the papers blend the
    point but do not say where the depth is taken. Default: at P' (``penetration_at=
    "virtual"``, the depth where the force acts). Option ``"edge"``: at the edge point P (the
    deepest point, the paper's edge-face d), the force still acting at P'. Effect on the nine
    cases (main displacement from the unloaded equilibrium, "edge" against "virtual"): AS
    +4.4 %, PS -3.6 % (through the unloaded pose), LS -0.02 %, TNS +4.8 %, CMP +0.7 %, LB
    -3.3 %, FLX -0.9 %, EXT -5.0 %, AR -0.9 %: "edge" makes the depth of tilted faces grow like
    ``r |sin(alpha)|`` (a kink at parallel faces, where the blended depth is smooth) and so
    stiffens the almost-flat facets.
"""

from __future__ import annotations

import cmath
import math
import numbers
from dataclasses import dataclass

import numpy as np

from segment.elements.facet_face import FacetFace
from segment.elements.vec import add, clip_real, cross, dot, norm, scale, sub
from segment.jit import njit

__all__ = ["PENETRATION_AT", "REGIMES", "ContactResult", "contact_points", "disc_contact"]

# Regime codes of the kernel and their names.
APART, NOT_FACING, FLAT, ALMOST_FLAT, EDGE_FACE_1, EDGE_FACE_2, EDGE_EDGE, DISLOCATED = range(8)
REGIMES = ("apart", "not-facing", "flat", "almost-flat", "edge-face-1", "edge-face-2",
           "edge-edge", "dislocated")
# Blend weight below which the virtual point is nearer M than P: reported as "almost-flat".
ALMOST_FLAT_WEIGHT = 0.5
# Faces this close to parallel are reported as "flat" (rounding of rotated normals is ~1e-16).
PARALLEL_SIN_ALPHA = 1e-12
_TINY = 1e-300
# Relative slack of the "rim point lies within the other disc" tests (rounding of |w| = 1).
_INSIDE_SLACK = 1e-12
# Width of the turn of the line of action from a face normal to the bisector, as a fraction of
# the smaller radius (item 8): 0.5 mm for the 5 mm facets.
CASE_BLEND_FRACTION = 0.1
# Below this cos(alpha) (alpha > 75.5 deg) the penetration fades to 0 at alpha = 90 deg (item 9).
FACING_FADE_COS = 0.25
# Where the penetration is measured (item 10): at the virtual point P' or at the edge point P.
PENETRATION_AT = ("virtual", "edge")


# Magnitudes whose squares and products neither overflow nor lose precision to underflow
# (2^-500 ~ 3e-151, 2^500 ~ 3e150); outside them disc_contact scales lengths (see there).
_SAFE_MIN = 2.0**-500
_SAFE_MAX = 2.0**500


@dataclass(frozen=True, eq=False)
class ContactResult:
    """Outcome of :func:`disc_contact`.

    Attributes
    ----------
    penetration : float
        Depth [mm] at the virtual contact point, >= 0; 0 when apart.
    point : ndarray, shape (3,)
        Virtual contact point [mm]: middle of the penetration segment (the would-be contact
        point when apart and overlapping in projection).
    direction : ndarray, shape (3,)
        Unit vector along which the contact force pushes disc 1: the bisector
        ``(n2 - n1)/|n2 - n1|`` of the face normals (decision 7 of the module docstring); n2 when
        the faces do not face each other or their projections do not overlap (no force then).
        The line of action of item 8: n2 when the edge of disc 1 rests on face 2, -n1 in the
        mirror case, the bisector ``(n2 - n1)/|n2 - n1|`` in edge-edge contact and turning
        continuously between them.
    regime : str
        One of ``apart``, ``not-facing``, ``flat``, ``almost-flat``, ``edge-face-1`` (edge of
        disc 1 on the face of disc 2, case 1), ``edge-face-2`` (case 2), ``edge-edge`` (case 3),
        ``dislocated`` (item 9).
    case : str
        The steep contact case behind P (``edge-face-1``, ``edge-face-2``, ``edge-edge``);
        ``flat`` for parallel faces (no steep point), the regime when apart or not facing.
    blend_weight : float
        1 - exp(-C sin alpha): 0 at M (flat), 1 at P (steep).
    sin_alpha : float
        Sine of the angle between the face normals.
    dislocated : bool
        The projected faces no longer overlap while disc 1 lies below the plane of face 2
        beside it (regime ``dislocated``, item 9): disc 1 has left disc 2.
    """

    penetration: float
    point: np.ndarray
    direction: np.ndarray
    regime: str
    case: str
    blend_weight: float
    sin_alpha: float
    dislocated: bool = False


@njit
def _smoothstep(x):
    """``3 x^2 - 2 x^3`` on [0, 1], 0 below, 1 above (C1; analytic inside, real-part tests)."""
    if x.real <= 0.0:
        return 0j
    if x.real >= 1.0:
        return 1.0 + 0j
    return x * x * (3.0 - 2.0 * x)


@njit
def _rim_weight(pp, r, ell):
    """``smoothstep((r - |y|) / ell)`` from ``pp = |y|^2``: 0 on the rim, 1 at ``ell`` inside.

    The root is only taken inside the ramp (never at |y| = 0, where it has no derivative).
    """
    if pp.real >= r * r:
        return 0j
    if pp.real <= (r - ell) * (r - ell) and r > ell:
        return 1.0 + 0j
    return _smoothstep((r - cmath.sqrt(pp)) / ell)


@njit
def end_face_contact(c1, n1, r1, c2, n2, r2, blend, at_edge):
    """Regularized cylinder end-face contact (see the module docstring, items 1-11).

    All vector arguments are complex 3-tuples; radii and blend are reals; ``at_edge`` True
    measures the penetration at the steep point P instead of the virtual point P' (item 10).
    Returns ``(u, point, direction, regime, case, weight, sin_alpha)`` where ``u`` is the
    penetration the contact law sees (negative: a gap) and ``regime``/``case`` are integer
    codes.

    :func:`segment.elements.facet_dual.contact_dual` is this function line for line in dual
    numbers (the solver's tangent): a change here must be made there too;
    ``tests/test_facet_dual.py``
    fails until both agree.
    """
    z3 = (0j, 0j, 0j)
    c = sub(c2, c1)
    cos_a = -dot(n1, n2)
    if cos_a.real <= 0.0:
        mid = scale(0.5, add(c1, c2))
        return -1.0 + 0j, mid, n2, NOT_FACING, NOT_FACING, 0.0 + 0j, 0j
    # bisector normal m (|n2 - n1| >= sqrt(2) when facing) and cos(alpha/2) = m . n2
    sm = sub(n2, n1)
    m = scale(1.0 / norm(sm), sm)
    cos_h = dot(m, n2)
    x12 = cross(n1, n2)
    sin_a = cmath.sqrt(dot(x12, x12))
    # tilt direction w = -dn/|dn| (undefined when parallel: then the blend weight is 0)
    dn = add(n1, n2)
    dnn = dot(dn, dn)
    parallel = not abs(dnn) > _TINY
    if parallel:
        w = z3
    else:
        w = scale(-1.0 / cmath.sqrt(dnn), dn)
    stretch = 1.0 / cos_h - 1.0
    # unfolded in-plane vector from C1 to C2
    cp = sub(c, scale(dot(c, m), m))
    e = add(cp, scale(stretch * dot(cp, w), w))
    ee = dot(e, e)
    ce = cmath.sqrt(ee) if abs(ee) > 0.0 else 0j
    u0 = dot(c, n2)  # depth below face 2 of the face-1 point at C1
    # lateral overlap of the projected faces along the centre line (item 9)
    lap = r1 + r2 - ce
    if lap.real <= 0.0:  # projections do not overlap: apart, or dislocated (item 9)
        mid = scale(0.5, add(c1, c2))
        y = scale(r1 / ce, e) if ce.real > 0.0 else z3
        u_rim = u0 - cos_h * dot(dn, y)
        regime = DISLOCATED if u_rim.real > 0.0 else APART
        return lap, mid, n2, regime, regime, 0.0 + 0j, sin_a
    if lap.real > 2.0 * r1:
        lap = 2.0 * r1 + 0j
    if lap.real > 2.0 * r2:
        lap = 2.0 * r2 + 0j
    # flat contact point M = t e (item 5)
    if ce.real > 0.0:
        t = clip_real(0.5 * (1.0 + (r1 - r2) / ce), 0j, 1.0 + 0j)
    elif r1 == r2:
        t = 0.5 + 0j
    elif r1 < r2:
        t = 0j
    else:
        t = 1.0 + 0j
    M = scale(t, e)
    # steep contact point P: deepest point of the lens (item 3)
    y1 = scale(r1, w)
    y2 = add(e, scale(r2, w))
    d1 = sub(y1, e)
    inside1 = dot(d1, d1).real <= r2 * r2 * (1.0 + _INSIDE_SLACK)
    inside2 = dot(y2, y2).real <= r1 * r1 * (1.0 + _INSIDE_SLACK)
    if parallel:  # no tilt direction, no steep point: the blend weight is 0 and P' = M
        P = M
        case = FLAT
    elif inside1 and not inside2:
        P = y1
        case = EDGE_FACE_1
    elif inside2 and not inside1:
        P = y2
        case = EDGE_FACE_2
    elif inside1:  # both rims pass through the deepest point (e.g. equal, aligned discs)
        P = y1
        case = EDGE_EDGE
    elif ce.real > 0.0:  # rims cross; here |r1 - r2| < ce < r1 + r2
        eh = scale(1.0 / ce, e)
        a = (ee + r1 * r1 - r2 * r2) / (2.0 * ce)
        hh = r1 * r1 - a * a
        h = cmath.sqrt(hh) if hh.real > 0.0 else 0j
        ep = cross(m, eh)
        yp = add(scale(a, eh), scale(h, ep))
        ym = sub(scale(a, eh), scale(h, ep))
        P = yp if dot(w, yp).real >= dot(w, ym).real else ym
        case = EDGE_EDGE
    else:  # centres coincide to rounding (radii near the underflow limit): the rim point
        P = y1
        case = EDGE_EDGE
    # blending between M and P (item 6)
    weight = 1.0 - cmath.exp(-blend * sin_a)
    V = add(M, scale(weight, sub(P, M)))
    # penetration (item 2) at P' (default) or at P (item 10); the reported point stays in the
    # middle of the depth segment at P' (item 7)
    depth = u0 - cos_h * dot(dn, V)   # = u0 + sin_a (w . V) for unit normals (item 2)
    u = u0 - cos_h * dot(dn, P) if at_edge else depth
    # fading out (item 9): no deeper than the lateral overlap, nor than the facing allows
    if u.real > lap.real:
        u = lap
    if cos_a.real < FACING_FADE_COS:
        u = u * _smoothstep(cos_a / FACING_FADE_COS)
    # fold V back onto face 1, then go half the penetration along m (item 7)
    vw = dot(V, w)
    v_mid = sub(V, scale((1.0 - cos_h) * vw, w))
    q1 = add(c1, add(v_mid, scale(dot(v_mid, n1) / cos_h, m)))
    point = add(q1, scale(0.5 * depth / cos_h, m))
    # line of action (item 8): n2 where the edge rests on face 2, -n1 where it rests on
    # face 1, turning through the bisector m where P nears the rim of the supporting face
    if parallel:
        direction = m
    else:
        ell = CASE_BLEND_FRACTION * min(r1, r2)
        t1 = _rim_weight(dot(P, P), r1, ell)        # P inside face 1 (case 2 side)
        dp2 = sub(P, e)
        t2 = _rim_weight(dot(dp2, dp2), r2, ell)    # P inside face 2 (case 1 side)
        a2 = 0.5 * (1.0 + t2 - t1)
        v = sub(scale(a2, n2), scale(1.0 - a2, n1))
        direction = scale(1.0 / norm(v), v)
    if u.real <= 0.0:
        regime = APART
    elif abs(sin_a.real) < PARALLEL_SIN_ALPHA:
        regime = FLAT
    elif weight.real < ALMOST_FLAT_WEIGHT:
        regime = ALMOST_FLAT
    else:
        regime = case
    return u, point, direction, regime, case, weight, sin_a


def _tuple(a) -> tuple[complex, complex, complex]:
    return (complex(a[0]), complex(a[1]), complex(a[2]))


def contact_points(disc1: FacetFace, disc2: FacetFace) -> tuple[np.ndarray, np.ndarray]:
    """The contact points of flat and of steep contact, as :func:`disc_contact` reports points.

    They are the virtual contact point for C = 0 (blend weight 0, at M) and for C -> infinity
    (weight 1, at P), each taken, like every reported point, in the middle of its penetration
    segment [mm]. :func:`disc_contact` places its point on the segment between them at the
    blend weight. For exactly parallel faces the weight is 0 for every C, so both are at M.
    """
    flat = disc_contact(disc1, disc2, blend=0.0)
    steep = disc_contact(disc1, disc2, blend=1e300)
    return flat.point, steep.point


def disc_contact(disc1: FacetFace, disc2: FacetFace, *, blend: float,
                 penetration_at: str = "virtual") -> ContactResult:
    """Contact of two cylinder end faces given in one frame.

    Parameters
    ----------
    disc1, disc2 : FacetFace
        The two end faces, normals pointing out of their faces.
    blend : float
        Blending constant C >= 0 of r = r0 (1 - exp(-C sin alpha)).
    penetration_at : {"virtual", "edge"}
        Measure the penetration at the virtual point P' (default) or at the edge point P
        (item 10 of the module docstring).

    Returns
    -------
    ContactResult
        Penetration [mm] (>= 0), virtual contact point, direction of the force on disc 1 and
        the regime. Finite for finite discs at any magnitude: beyond ~1e150 mm or below
        ~1e-150 mm the lengths are translated to C2 and scaled by a power of two before the
        kernel (exact); a penetration or point beyond the floating-point range, or radii too
        small against the centre distance to resolve a contact, raise ``ValueError`` saying
        the magnitudes are out of range.

    Raises
    ------
    TypeError
        ``blend`` not a real number (a bool or a string).

    Examples
    --------
    Two parallel facing discs of radius 5 mm, overlapping by 0.1 mm:

    >>> top = FacetFace([0, 0, -0.1], [0, 0, -1], 5.0)
    >>> bottom = FacetFace([0, 0, 0], [0, 0, 1], 5.0)
    >>> r = disc_contact(top, bottom, blend=16.7)
    >>> round(r.penetration, 12), r.regime, r.direction.tolist()
    (0.1, 'flat', [0.0, 0.0, 1.0])
    """
    if isinstance(blend, (bool, np.bool_)) or not isinstance(blend, numbers.Real):
        raise TypeError(f"blend constant C must be a real number, got {blend!r}")
    if not (np.isfinite(blend) and blend >= 0):
        raise ValueError(f"blend constant C must be >= 0, got {blend!r}")
    at_edge = _check_penetration_at(penetration_at, "disc_contact")
    c1, c2, r1, r2 = disc1.center, disc2.center, disc1.radius, disc2.radius
    size = max(float(np.max(np.abs(c1))), float(np.max(np.abs(c2))), r1, r2)
    if size <= _SAFE_MAX and min(r1, r2) >= _SAFE_MIN:
        u, point, direction, regime, case, weight, sin_a = end_face_contact(
            _tuple(c1), _tuple(disc1.normal), r1, _tuple(c2), _tuple(disc2.normal), r2,
            float(blend), at_edge)
        point = np.array([x.real for x in point])
        u = u.real
    else:
        u, point, direction, regime, case, weight, sin_a = _contact_scaled(disc1, disc2,
                                                                           float(blend), at_edge)
    return ContactResult(
        penetration=max(u, 0.0),
        point=point,
        direction=np.array([x.real for x in direction]),
        regime=REGIMES[regime],
        case=REGIMES[case],
        blend_weight=weight.real,
        sin_alpha=sin_a.real,
        dislocated=regime == DISLOCATED,
    )


def _contact_scaled(disc1: FacetFace, disc2: FacetFace, blend: float, at_edge: bool):
    """The kernel on a local origin (C2) with lengths scaled by a power of two.

    For discs whose lengths would overflow when squared (centres or radii beyond ~1e150) or
    lose precision to underflow (radii below ~1e-150): translate to C2 and divide every length
    by 2^e ~ the local size max(|C1 - C2|, r1, r2), exactly (a power of two), so the kernel
    sees in-plane magnitudes <= 1; scale the penetration and point back. Finite inputs give finite
    outputs or a ValueError saying which magnitudes are out of floating-point range.
    """
    c1, c2, r1, r2 = disc1.center, disc2.center, disc1.radius, disc2.radius
    with np.errstate(over="ignore", invalid="ignore"):
        d = c1 - c2
        finite_d = bool(np.all(np.isfinite(d)))
    if finite_d:
        # first scale by the in-plane size (radii, offset across n2): the penetration is
        # linear in the offset along n2; the sliding-off cap (item 9) also squares the
        # unfolded centre distance, so when that overflows, retry with the full offset
        d_perp = d - (d @ disc2.normal) * disc2.normal
        sizes = (float(np.max(np.abs(d_perp))), float(np.max(np.abs(d))))
        last = None
        for size in sizes:
            e = math.frexp(max(size, r1, r2))[1]
            out = _contact_scaled_by(disc1, disc2, np.ldexp(d, -e), e, blend, at_edge)
            if out is not None:
                return out
            last = e
        e = last
    else:  # |C1 - C2| beyond the float range: subtract after scaling
        e = math.frexp(max(float(np.max(np.abs(c1))), float(np.max(np.abs(c2))), r1, r2))[1]
        with np.errstate(over="ignore", invalid="ignore"):
            d_s = np.ldexp(c1, -e) - np.ldexp(c2, -e)
        if not np.all(np.isfinite(d_s)):
            raise ValueError(f"disc_contact: magnitudes out of range: the centre distance of "
                             f"discs at {c1.tolist()} and {c2.tolist()} mm exceeds the "
                             f"floating-point range relative to the radii {r1:g} and {r2:g} mm")
        out = _contact_scaled_by(disc1, disc2, d_s, e, blend, at_edge)
        if out is not None:
            return out
    raise ValueError(f"disc_contact: magnitudes out of range: the penetration or contact "
                     f"point of discs at {c1.tolist()} and {c2.tolist()} mm (radii {r1:g}, "
                     f"{r2:g} mm) exceeds the floating-point range")


def _contact_scaled_by(disc1: FacetFace, disc2: FacetFace, d_s, e: int, blend: float,
                       at_edge: bool):
    """:func:`_contact_scaled` for one scale 2^e (``d_s`` = (C1 - C2) / 2^e); None when the
    penetration or point is not finite, a ValueError when the radii are unresolvably small."""
    c1, c2, r1, r2 = disc1.center, disc2.center, disc1.radius, disc2.radius
    r1_s, r2_s = float(np.ldexp(r1, -e)), float(np.ldexp(r2, -e))
    u, point, direction, regime, case, weight, sin_a = end_face_contact(
        _tuple(d_s), _tuple(disc1.normal), r1_s, (0j, 0j, 0j), _tuple(disc2.normal), r2_s,
        blend, at_edge)
    clearly_apart = regime in (APART, NOT_FACING, DISLOCATED)
    if not (r1_s >= _SAFE_MIN and r2_s >= _SAFE_MIN) and not clearly_apart:
        # radii this small against the distance are only resolved when clearly apart
        raise ValueError(f"disc_contact: magnitudes out of range: radii {r1:g} and {r2:g} mm "
                         f"against centres {c1.tolist()} and {c2.tolist()} mm span more orders "
                         "of magnitude than floating point resolves")
    with np.errstate(over="ignore", invalid="ignore"):
        u = float(np.ldexp(u.real, e))          # math.ldexp would raise OverflowError
        point = c2 + np.ldexp(np.array([x.real for x in point]), e)
    if not (math.isfinite(u) and np.all(np.isfinite(point))):
        return None
    return u, point, direction, regime, case, weight, sin_a


def _check_penetration_at(value, where: str) -> bool:
    """True for ``"edge"``, False for ``"virtual"``; ValueError naming ``where`` otherwise."""
    if value not in PENETRATION_AT:
        raise ValueError(f"{where}: penetration_at must be one of {PENETRATION_AT}, got "
                         f"{value!r}")
    return value == "edge"
