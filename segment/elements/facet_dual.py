"""The facet contact in forward-mode dual arithmetic: value and five directional derivatives.

Pairs (each function here mirrors one of the complex kernels, line for line, and says which):

* :func:`contact_dual` is :func:`segment.elements.contact.end_face_contact`, the regularized contact
  of two facet faces (same items 1-10 of the :mod:`segment.elements.contact` docstring, same
  branches, taken on the values), with its helpers :func:`_smoothstep_dual` and
  :func:`_rim_weight_dual` (``_smoothstep``, ``_rim_weight`` of the same module);
* :func:`contact_force_dual` is :func:`segment.elements.facet.end_face_force`, the contact
  force law of the facet joint (DETC2000/MECH-6821, "Facet Joints").

All are evaluated on the dual numbers of :mod:`segment.elements.dual`. One call gives the
penetration, the contact point and the force direction together with their derivatives along
five directions (motions of the C5 facet face for the tangent; geometry or blending-constant
changes for the sensitivities), where the complex-step route needs five complex evaluations of
``end_face_contact``: about three times less work for the tangent stiffness
(:func:`segment.elements.tangent._facet_jacobian_terms`), the solver's largest cost.

``end_face_contact`` stays the reference: ``tests/test_facet_dual.py`` holds the two to each other
(values and all five derivatives) over random discs in every regime, and
``tests/test_tangent.py`` holds the segment's tangent to the complex-step Jacobian.

*Exactly parallel faces* (``n1 = -n2`` to the last bit) are the one place where the two
differ. The complex kernel tests ``|n1 + n2|`` by its modulus, so a complex perturbation of a
normal takes it into the tilted branch, while the dual numbers take the parallel branch (the
value decides). The penetration has the same derivatives either way for turning (not
stretching) normals (it is written without norms, item 2 of :mod:`segment.elements.contact`;
its cap by the lateral overlap, item 9, goes through the unfolding, whose tilt direction is
undefined there). The contact point and the force direction do not: the blend weight
``1 - exp(-C sin(alpha))`` with ``sin(alpha) = |n1 x n2|`` and the turn of the line of action
(item 8, which depends on the steep point P, on the rim of the disc that tilts away) have a
kink at parallel faces; the dual numbers give the derivative of the parallel branch (point
at M, direction m), the complex step the one-sided derivative along its perturbation. With
``at_edge`` (item 10) the penetration is kinked there too. Where a root of a squared length
is taken at exactly zero, the derivative is set to 0.
"""

from __future__ import annotations

from segment.elements.contact import _INSIDE_SLACK, _TINY, CASE_BLEND_FRACTION, FACING_FADE_COS
from segment.elements.dual import (
    const,
    dexp,
    dinv,
    dmul,
    dscale,
    dshift,
    dsqrt,
    dsub,
    vadd,
    vcross,
    vdot,
    vrscale,
    vscale,
    vsub,
)
from segment.jit import njit

__all__ = ["contact_dual", "contact_force_dual"]


@njit
def _smoothstep_dual(x):
    """:func:`segment.elements.contact._smoothstep` on a dual scalar."""
    if x[0] <= 0.0:
        return const(0.0)
    if x[0] >= 1.0:
        return const(1.0)
    return dmul(dmul(x, x), dshift(dscale(-2.0, x), 3.0))


@njit
def _rim_weight_dual(pp, r, ell):
    """:func:`segment.elements.contact._rim_weight` on a dual squared length ``pp``."""
    if pp[0] >= r * r:
        return const(0.0)
    if pp[0] <= (r - ell) * (r - ell) and r > ell:
        return const(1.0)
    return _smoothstep_dual(dscale(1.0 / ell, dshift(dscale(-1.0, dsqrt(pp)), r)))


@njit
def contact_dual(c1, n1, r1, c2, n2, r2, blend, at_edge):
    """``(u, point, direction)`` of :func:`segment.elements.contact.end_face_contact` on dual
    vectors.

    ``c1, n1, c2, n2`` are dual 3-vectors, the radii reals, ``blend`` (the blending constant
    C) a dual scalar: ``const(C)`` for the pose directions of the tangent, a seeded slot for
    the derivative by C (:mod:`segment.studies.sensitivity`). ``u`` <= 0 (a gap) when the
    discs are apart, dislocated or do not face each other; then point and direction are those
    of ``end_face_contact`` (the midpoint of the centres and n2).
    """
    z = const(0.0)
    c = vsub(c2, c1)
    cos_a = dscale(-1.0, vdot(n1, n2))
    if cos_a[0] <= 0.0:  # not facing (item 9)
        return const(-1.0), vrscale(0.5, vadd(c1, c2)), n2
    # bisector normal m and cos(alpha/2) = m . n2 (item 1)
    sm = vsub(n2, n1)
    m = vscale(dinv(dsqrt(vdot(sm, sm))), sm)
    cos_h = vdot(m, n2)
    x12 = vcross(n1, n2)
    sin_a = dsqrt(vdot(x12, x12))
    # tilt direction w = -dn/|dn| (zero when parallel: then the blend weight is 0)
    dn = vadd(n1, n2)
    dnn = vdot(dn, dn)
    parallel = not abs(dnn[0]) > _TINY
    if parallel:
        w = (z, z, z)
    else:
        w = vscale(dscale(-1.0, dinv(dsqrt(dnn))), dn)
    inv_cos_h = dinv(cos_h)
    stretch = dshift(inv_cos_h, -1.0)
    # unfolded in-plane vector from C1 to C2
    cp = vsub(c, vscale(vdot(c, m), m))
    e = vadd(cp, vscale(dmul(stretch, vdot(cp, w)), w))
    ee = vdot(e, e)
    ce = dsqrt(ee) if abs(ee[0]) > 0.0 else z
    u0 = vdot(c, n2)  # depth below face 2 of the face-1 point at C1 (item 2)
    # lateral overlap of the projected faces along the centre line (item 9)
    lap = dshift(dscale(-1.0, ce), r1 + r2)
    if lap[0] <= 0.0:  # projections do not overlap: apart or dislocated, no force
        return lap, vrscale(0.5, vadd(c1, c2)), n2
    if lap[0] > 2.0 * r1:
        lap = const(2.0 * r1)
    if lap[0] > 2.0 * r2:
        lap = const(2.0 * r2)
    # flat contact point M = t e (item 5); the clip keeps t (its derivative) at ties
    if ce[0] > 0.0:
        t = dscale(0.5, dshift(dscale(r1 - r2, dinv(ce)), 1.0))
        if t[0] < 0.0:
            t = z
        elif t[0] > 1.0:
            t = const(1.0)
    elif r1 == r2:
        t = const(0.5)
    elif r1 < r2:
        t = z
    else:
        t = const(1.0)
    M = vscale(t, e)
    # steep contact point P: deepest point of the lens (item 3)
    y1 = vrscale(r1, w)
    y2 = vadd(e, vrscale(r2, w))
    d1 = vsub(y1, e)
    inside1 = vdot(d1, d1)[0] <= r2 * r2 * (1.0 + _INSIDE_SLACK)
    inside2 = vdot(y2, y2)[0] <= r1 * r1 * (1.0 + _INSIDE_SLACK)
    if parallel:
        P = M
    elif inside1 and not inside2:  # case 1
        P = y1
    elif inside2 and not inside1:  # case 2
        P = y2
    elif inside1:  # both rims pass through the deepest point
        P = y1
    elif ce[0] > 0.0:  # rims cross (case 3)
        inv_ce = dinv(ce)
        eh = vscale(inv_ce, e)
        a = dmul(dshift(ee, r1 * r1 - r2 * r2), dscale(0.5, inv_ce))
        hh = dshift(dscale(-1.0, dmul(a, a)), r1 * r1)
        h = dsqrt(hh) if hh[0] > 0.0 else z
        ep = vcross(m, eh)
        ae = vscale(a, eh)
        he = vscale(h, ep)
        yp = vadd(ae, he)
        ym = vsub(ae, he)
        P = yp if vdot(w, yp)[0] >= vdot(w, ym)[0] else ym
    else:  # centres coincide to rounding
        P = y1
    # blending between M and P (item 6): weight = 1 - exp(-C sin alpha)
    weight = dshift(dscale(-1.0, dexp(dscale(-1.0, dmul(blend, sin_a)))), 1.0)
    V = vadd(M, vscale(weight, vsub(P, M)))
    # penetration at P' (default) or at P (item 10): u0 + sin_a (w . Y) (item 2)
    depth = dsub(u0, dmul(cos_h, vdot(dn, V)))
    u = dsub(u0, dmul(cos_h, vdot(dn, P))) if at_edge else depth
    # fading out (item 9)
    if u[0] > lap[0]:
        u = lap
    if cos_a[0] < FACING_FADE_COS:
        u = dmul(u, _smoothstep_dual(dscale(1.0 / FACING_FADE_COS, cos_a)))
    # fold V back onto face 1, then go half the penetration along m (item 7)
    vw = vdot(V, w)
    v_mid = vsub(V, vscale(dmul(dshift(dscale(-1.0, cos_h), 1.0), vw), w))
    q1 = vadd(c1, vadd(v_mid, vscale(dmul(vdot(v_mid, n1), inv_cos_h), m)))
    point = vadd(q1, vscale(dscale(0.5, dmul(depth, inv_cos_h)), m))
    # line of action (item 8)
    if parallel:
        direction = m
    else:
        ell = CASE_BLEND_FRACTION * min(r1, r2)
        t1 = _rim_weight_dual(vdot(P, P), r1, ell)
        dp2 = vsub(P, e)
        t2 = _rim_weight_dual(vdot(dp2, dp2), r2, ell)
        a2 = dscale(0.5, dshift(dsub(t2, t1), 1.0))
        v = vsub(vscale(a2, n2), vscale(dshift(dscale(-1.0, a2), 1.0), n1))
        direction = vscale(dinv(dsqrt(vdot(v, v))), v)
    return u, point, direction


@njit
def contact_force_dual(u, law):
    """The contact law of :func:`segment.elements.facet.end_face_force` on a dual
    penetration ``u``."""
    k2, ut, k1 = law[0], law[1], law[2]
    x = u[0]
    if x <= 0.0:
        return const(0.0)
    if x <= ut:
        return dscale(k2, dmul(u, u))
    return dshift(dscale(k1, u), k2 * ut * ut - k1 * ut)
