"""A disc resting on a plane: the steep-to-flat example of the cylinder paper, quasi-statically.

The cylinder paper (section 1.3, Fig. 6 and 7) shows a disc dropped tilted onto a plane that
settles into flat contact, because the blended virtual contact point
``r = r0 (1 - exp(-C sin alpha))`` produces a moment that levels the disc. Here the same
mechanism is shown with statics: a disc of radius ``r0`` held laterally (it may only move up and
down and tilt about y) rests on a large plane under a vertical load ``F`` applied at an offset
``e`` from its centre::

                 F (down), at offset e
                 |
        ____o____v______           disc face (normal n1 = Ry(alpha) (0, 0, -1))
            C     \\
    ===============P'=========     plane (disc 2: normal +z, large radius)

Equilibrium (two equations, unknowns centre height ``h`` and tilt ``alpha``): the contact force
balances the load vertically, and its moment about C balances the load's. The moment balance
puts the virtual contact point under the load, ``r ~ e``, hence

    sin(alpha) ~ -ln(1 - e / r0) / C                                             (*)

As the offset goes to 0 the disc settles to flat contact (alpha -> 0, r / r0 -> 0): the static
counterpart of the paper's Fig. 7. The force is vertical (the plane's normal: the disc's edge
rests on the plane's face); (*) neglects the small offset of its point of application (the middle
of the penetration segment) and is a cross-check, not the solution.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import root

from segment.elements.contact import disc_contact
from segment.elements.facet import ContactLaw
from segment.elements.facet_face import FacetFace
from segment.elements.kinematics import rotation_y

__all__ = ["RestingDisc", "rest_on_plane", "tilt_closed_form"]

PLANE_RADIUS_MM = 1e3     # "a plane": large enough that the disc never reaches its rim
SOLVER_TOL = 1e-12


@dataclass(frozen=True)
class RestingDisc:
    """Equilibrium of the disc on the plane.

    Attributes
    ----------
    offset : float
        Load offset e from the disc centre [mm].
    height : float
        Height of the disc centre above the plane [mm] (negative: below, i.e. indented).
    tilt : float
        Tilt alpha of the disc about y [rad].
    penetration : float
        Penetration at the virtual contact point [mm].
    contact_force : float
        Contact force magnitude [N].
    relative_indentation : float
        r / r0 = 1 - exp(-C sin alpha): distance of the virtual contact point from the flat
        contact point M (here the disc centre) over the radius (cylinder paper, section 1.3;
        the quantity :func:`segment.solvers.dynamics.disc_plane_drop` reports).
    converged : bool
    message : str
    """

    offset: float
    height: float
    tilt: float
    penetration: float
    contact_force: float
    relative_indentation: float
    converged: bool
    message: str

    @property
    def sin_alpha(self) -> float:
        return float(np.sin(self.tilt))


def _disc(height, tilt, radius):
    n1 = rotation_y(tilt) @ np.array([0.0, 0.0, -1.0])
    return FacetFace([0.0, 0.0, height], n1, radius)


def _balance(x, *, offset, load, radius, blend, law, plane):
    height, tilt = x
    disc = _disc(height, tilt, radius)
    c = disc_contact(disc, plane, blend=blend)
    f = law(c.penetration)[0] * c.direction
    # load point: on the disc face at offset e along the disc's own x direction
    arm = rotation_y(tilt) @ np.array([offset, 0.0, 0.0])
    weight = np.array([0.0, 0.0, -load])
    moment = np.cross(c.point - disc.center, f) + np.cross(arm, weight)
    return np.array([(f[2] - load) / load, moment[1] / (load * radius)]), c


def rest_on_plane(offset: float, *, load: float = 10.0, radius: float = 5.0,
                  blend: float = 16.7, law: ContactLaw | None = None,
                  start: tuple[float, float] | None = None) -> RestingDisc:
    """Equilibrium of a laterally held disc on a plane under an off-centre vertical load.

    Parameters
    ----------
    offset : float
        Load offset e [mm], 0 <= e < radius.
    load : float
        Vertical load F [N], > 0.
    radius : float
        Disc radius r0 [mm].
    blend : float
        Blending constant C (> 0; with C = 0 the disc can carry no moment).
    law : ContactLaw, optional
        Default: the facet law of DETC2000/MECH-6821.
    start : (height, tilt), optional
        Starting point for the solver (default: from the closed form (*)).
    """
    _check_disc(offset, radius, blend)
    if not (np.isfinite(load) and load > 0):
        raise ValueError(f"load must be a finite number > 0 [N], got {load!r}")
    law = law or ContactLaw(2000.0, 0.3, 1200.0)
    plane = FacetFace([0.0, 0.0, 0.0], [0.0, 0.0, 1.0], PLANE_RADIUS_MM)
    u_flat = np.sqrt(load / law.k_quadratic) if load <= law.force_at_transition else (
        law.u_transition + (load - law.force_at_transition) / law.k_linear)
    if start is None:
        tilt0 = tilt_closed_form(offset, radius=radius, blend=blend)
        start = (-u_flat + offset * np.sin(tilt0), tilt0)
    kw = dict(offset=offset, load=load, radius=radius, blend=blend, law=law, plane=plane)
    sol = root(lambda x: _balance(x, **kw)[0], np.array(start, dtype=float), method="hybr",
               tol=SOLVER_TOL)
    residual, c = _balance(sol.x, **kw)
    height, tilt = sol.x
    converged = bool(sol.success and np.max(np.abs(residual)) < 1e-9)
    return RestingDisc(offset=offset, height=float(height), tilt=float(tilt),
                       penetration=c.penetration, contact_force=law(c.penetration)[0],
                       relative_indentation=c.blend_weight,
                       converged=converged,
                       message="converged" if converged else f"not converged: {sol.message}")


def _check_disc(offset, radius, blend) -> None:
    """Plain errors for the disc's radius [mm], load offset [mm] and blending constant C."""
    if not (np.isfinite(radius) and radius > 0):
        raise ValueError(f"radius must be a finite number > 0 [mm], got {radius!r}")
    if not (np.isfinite(offset) and 0.0 <= offset < radius):
        raise ValueError(f"offset must satisfy 0 <= e < radius = {radius} [mm], got {offset!r}")
    if not (np.isfinite(blend) and blend > 0):
        raise ValueError(f"blend constant C must be a finite number > 0, got {blend!r}")


def tilt_closed_form(offset: float, *, radius: float, blend: float) -> float:
    """Tilt [rad] from (*): sin(alpha) = -ln(1 - e / r0) / C (clipped to 1)."""
    _check_disc(offset, radius, blend)
    s = -np.log1p(-offset / radius) / blend
    return float(np.arcsin(min(s, 1.0)))
