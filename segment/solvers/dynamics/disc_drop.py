"""A disc dropped tilted onto a plane with the regularized contact (cylinder paper, Fig. 7).

The companion paper's demonstration of the steep-to-flat transition of the regularized
cylinder end-face contact (:mod:`segment.elements.facet`), simulated in the x-z plane.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.integrate import solve_ivp

from segment._extras import require
from segment.core.io import load_parameters
from segment.elements.contact import end_face_contact
from segment.elements.facet import ContactLaw, end_face_force
from segment.elements.vec import cross, sub
from segment.jit import njit
from segment.solvers.dynamics.bodies import KG_TO_T
from segment.solvers.dynamics.equations import GRAVITY_MM_S2
from segment.solvers.dynamics.forces import RATE_STEP, _re

__all__ = ["DiscPlaneResult", "disc_plane_drop", "plot_disc_plane"]


@dataclass(frozen=True, eq=False)
class DiscPlaneResult:
    """Time history of :func:`disc_plane_drop` (the cylinder paper's Fig. 7).

    Attributes
    ----------
    frame : pandas.DataFrame
        ``t_s``, ``x_mm``, ``z_mm`` (disc centre), ``tilt_rad``, ``sin_alpha``, ``r_over_r0``
        (distance of the virtual contact point from the disc centre over the radius,
        = 1 - exp(-C sin alpha) while the disc lies within the plane patch), ``penetration_mm``,
        ``force_N``.
    success : bool
    message : str
    """

    frame: pd.DataFrame
    success: bool
    message: str


@njit
def _disc_plane_rhs(y, m, inertia, radius, blend, law, damping, grav, plane_radius):
    """Planar (x, z, tilt) motion of a disc dropped on the plane z = 0.

    Returns dy/dt and (u, sin_alpha, r/r0, force)."""
    x, z, th = y[0], y[1], y[2]
    vx, vz, w = y[3], y[4], y[5]
    h = RATE_STEP
    thc = th + 1j * h * w
    c1 = (x + 1j * h * vx, 0j, z + 1j * h * vz)
    n1 = (-np.sin(thc) + 0j, 0j, -np.cos(thc) + 0j)  # face points down (tilt about y)
    c2 = (x + 0j, 0j, 0j)  # plane patch centred below the disc: the disc stays inside it
    n2 = (0j, 0j, 1.0 + 0j)
    u, point, direction, _, _, weight, sin_a = end_face_contact(c1, n1, radius, c2, n2,
                                                         plane_radius, blend, law[3] > 0.5)
    f_el, _ = end_face_force(u, law)
    rate = u.imag / h
    total = 0.0
    if u.real > 0.0:
        total = max(f_el.real + damping * rate, 0.0)
    fx = total * direction[0].real
    fz = total * direction[2].real
    arm = sub(_re(point), (x + 0j, 0j, z + 0j))
    moment_y = cross(arm, (fx + 0j, 0j, fz + 0j))[1].real
    dy = np.empty(6)
    dy[0] = vx
    dy[1] = vz
    dy[2] = w
    dy[3] = fx / m
    dy[4] = fz / m - grav
    dy[5] = moment_y / inertia
    # r / r0 = |M P'| / |M P| = 1 - exp(-C sin alpha): here M = C1 (the disc lies within the
    # plane patch) and |MP| = r0, the disc radius (cylinder paper, section 1.3)
    rr = weight.real
    return dy, max(u.real, 0.0), sin_a.real, rr, total


def disc_plane_drop(*, radius: float = 5.0, thickness: float = 2.0,
                    mass_kg: float | None = None, tilt_deg: float = 30.0, height: float = 0.5,
                    blend: float = 16.7, law: ContactLaw | None = None, damping: float = 0.3,
                    t_end: float = 1.0, n_output: int = 401,
                    rtol: float = 1e-6) -> DiscPlaneResult:
    """A disc dropped tilted onto a plane with the regularized contact (cylinder paper, Fig. 7).

    A uniform disc (radius, thickness [mm], mass [kg]; default the C5 mass of Table 1, the
    paper gives no values for this example) is released at rest with its face tilted by
    ``tilt_deg`` and its lowest rim point ``height`` [mm] above the plane z = 0, under gravity.
    Motion in the x-z plane (x, z of the centre, tilt about y). The contact is
    :func:`segment.elements.contact.end_face_contact` between the disc's end face and a plane patch
    (a disc of radius 100 r0 centred below the disc, so the disc always lies within it: the flat
    contact point M is the disc centre and r = r0 (1 - exp(-C sin alpha))), with the facet contact
    law and damping ``damping`` [N s/mm] on du/dt; frictionless, so the disc may slide, but nothing
    pushes it sideways: the force is along the plane's normal (the edge rests on the plane's face,
    :mod:`segment.elements.facet` item 8), and x stays 0 (with the former bisector line of action it
    drifted to 8.7 mm by t = 1 s). The paper's claim: "the motion asymptotically approaches fully
    flat contact with the virtual contact point at the circle center", i.e. r/r0 -> 0 and sin alpha
    -> 0. Near flat the rocking is only lightly damped (the virtual point, where du/dt is taken,
    approaches the centre), so the approach is slow: r/r0 < 0.1 after 0.3 s, about 0.01 after 1 s.

    ``mass_kg`` defaults to C5's mass and ``law`` to the facet contact law, both from the
    packaged data (Table 1 and the paper's law).

    Returns
    -------
    DiscPlaneResult
    """
    params = load_parameters()
    mass_kg = params.inertia["C5"].mass if mass_kg is None else mass_kg
    law = params.contact_law if law is None else law
    for name, value in (("radius", radius), ("thickness", thickness), ("mass_kg", mass_kg),
                        ("t_end", t_end)):
        if not (np.isfinite(value) and value > 0):
            raise ValueError(f"disc_plane_drop: {name} must be > 0, got {value!r}")
    if not (np.isfinite(height) and height >= 0 and np.isfinite(blend) and blend >= 0
            and np.isfinite(damping) and damping >= 0):
        raise ValueError(f"disc_plane_drop: height, blend and damping must be >= 0, got "
                         f"{height!r}, {blend!r}, {damping!r}")
    if not 0.0 < tilt_deg < 90.0:
        raise ValueError(f"disc_plane_drop: tilt_deg must lie in (0, 90), got {tilt_deg!r}")
    if not isinstance(law, ContactLaw):
        raise TypeError(f"disc_plane_drop: law must be a segment.ContactLaw, got "
                        f"{type(law).__name__}")
    mass = mass_kg * KG_TO_T  # N s^2/mm
    inertia = mass * (3 * radius**2 + thickness**2) / 12.0  # about a diameter [N mm s^2]
    law_a = law.as_array()
    th0 = math.radians(tilt_deg)
    z0 = height + radius * math.sin(th0)
    y0 = np.array([0.0, z0, th0, 0.0, 0.0, 0.0])
    args = (mass, inertia, float(radius), float(blend), law_a, float(damping), GRAVITY_MM_S2,
            100.0 * radius)
    def fun(t, y):
        return _disc_plane_rhs(y, *args)[0]

    def jac(t, y):  # central differences with fixed steps (scipy's adaptive num_jac grows
        J = np.empty((6, 6))  # its step without bound during free fall, where J is constant)
        for j in range(6):
            h = 1e-7 * max(1.0, abs(y[j]))
            e = np.zeros(6)
            e[j] = h
            J[:, j] = (fun(t, y + e) - fun(t, y - e)) / (2.0 * h)
        return J

    sol = solve_ivp(fun, (0.0, t_end), y0, method="Radau", jac=jac, rtol=rtol, atol=1e-3 * rtol,
                    t_eval=np.linspace(0.0, t_end, n_output))
    rows = []
    for k in range(len(sol.t)):
        _, u, sin_a, rr, force = _disc_plane_rhs(sol.y[:, k], *args)
        rows.append({"t_s": sol.t[k], "x_mm": sol.y[0, k], "z_mm": sol.y[1, k],
                     "tilt_rad": sol.y[2, k], "sin_alpha": sin_a, "r_over_r0": rr,
                     "penetration_mm": u, "force_N": force})
    return DiscPlaneResult(frame=pd.DataFrame(rows), success=bool(sol.success),
                           message=str(sol.message))


def plot_disc_plane(result: DiscPlaneResult, path=None, *, ax=None):
    """r/r0 and sin(alpha) over time (the cylinder paper's Fig. 7) as a matplotlib figure.

    Drawn into ``ax`` when given (a matplotlib Axes of your figure), else into a new figure.
    Saved as an image at ``path`` when given (and then closed). Returns the figure.
    """
    plt = require("matplotlib.pyplot", "report", "plot_disc_plane")

    df = result.frame
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(6.0, 3.6), dpi=120)
    else:
        fig = ax.figure
    ax.plot(df["t_s"] * 1e3, df["r_over_r0"], label="r / r0 (virtual contact point)")
    ax.plot(df["t_s"] * 1e3, df["sin_alpha"], "--", label="sin alpha (tilt)")
    ax.set_xlabel("time [ms]")
    ax.set_ylabel("[-]")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("Disc dropped tilted on a plane: steep-to-flat transition")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right")
    if own:
        fig.tight_layout()
    if path is not None:
        fig.savefig(path)
        plt.close(fig)
    return fig
