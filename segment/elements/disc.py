"""Intervertebral disc, DETC2000/MECH-6821 eq. (1) and Table 2, and two alternative laws.

The disc acts directly on the generalized coordinates, like MADYMO's point restraint plus
Cardan restraint that the paper used: each coordinate q_i has its own spring whose stiffness
depends on the sign of q_i, and a linear damper. The **published law** (eq. 1, the default)::

    Q_i = -k_i(q_i) * q_i - b_i * dq_i/dt,     k_i = k_i+ if q_i >= 0 else k_i-

Sign-dependent coefficients (Table 2): x (AS +, PS -), z (TNS +, CMP -), phi_y (FLX +, EXT -);
y, phi_x, phi_z use one value for both signs. The law stays piecewise linear as published;
at q_i = 0 the slope is taken from the ``+`` side.

Model forms (issue 22): a coordinate may follow another restoring law ``Q_i = -M(q_i)``, chosen
per coordinate by data (``disc_law.csv``, :mod:`segment.core.io`); k_i+ and k_i- keep their meaning
as the stiffness of the law's outer (or small-angle) branch on each side. Each law is a
function of q_i alone, so it derives from a potential ``U_i(q_i) = int_0^q_i M`` (given in
closed form by :func:`disc_energy`): the disc stays conservative whatever the law.

``linear`` (code 0)
    Eq. (1) above: ``M = k(q) q``. The published model, bit for bit.

``neutral-zone`` (code 1), after Panjabi's neutral zone ("a region of intervertebral motion
around the neutral posture where little resistance is offered by the passive spinal column",
Panjabi 1992, J Spinal Disord 5(4):390-396). Parameters: the zone's half-widths ``z+``
(q >= 0) and ``z-`` (q < 0) [rad or mm] and the stiffness ratio ``rho`` in (0, 1] inside
the zone::

           M                                 ___/  slope k+
           |                             ___/
           |                    ______/      slope rho k+ inside the zone
     ------+---------------+---/----------------> q
           |        -z-    0    z+
      M(q) = rho k+ q                    0 <= q <= z+
           = rho k+ z+ + k+ (q - z+)     q > z+           (mirrored with k-, z- for q < 0)

    Continuous (C0), piecewise linear with kinks at 0 and +-z; U = 1/2 rho k q^2 inside the
    zone, ``1/2 rho k z^2 + rho k z (q - z) + 1/2 k (q - z)^2`` beyond. The zone is centred on
    the disc's own unloaded pose q_i = 0 (the reference pose of Table 1); rho = 1 or z = 0 is
    eq. (1).

``fw35`` (code 2): the intervertebral moment of Fritzkowski and Walczak (their eq. (35),
``M = k_O tan(theta/2) / cos(theta/2)``, built on de Jager's nonlinear joint curves), with an
angle scale ``s`` [rad] per side::

      M(q) = 2 k s tan(x) / cos(x),   x = q / (2 s),     dM/dq = k (1 + sin^2 x) / cos^3 x

    so the small-angle stiffness is Table 2's k (their k_O = 2 k), and ``s = 1 rad`` is their
    law as published. A hardening law: M grows without bound as |q| approaches ``pi s``.
    Potential ``U = 4 k s^2 (1 / cos x - 1)``. Decision (numerical guard, measured effect
    none at any equilibrium of this project): beyond ``|x| = FW35_X_CAP`` the law continues
    linearly with its slope there (C1), so that a Newton iterate past the singularity meets a
    huge restoring force instead of the sign reversal of ``tan`` (a force physics forbids);
    at the cap M is already 13.6 times ``2 k s``.

Internal units: N/mm, N mm/rad, N s/mm, N mm s/rad; zone half-widths and angle scales in mm
(translations) or rad (rotations).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from segment.jit import njit

__all__ = ["DISC_LAWS", "DISC_LAW_PARAMETERS", "DOF_NAMES", "FW35_X_CAP", "DiscStiffness",
           "add_disc_force", "disc_energy", "disc_restoring"]

DOF_NAMES = ("x", "y", "z", "phi_x", "phi_y", "phi_z")
DISC_LAWS = ("linear", "neutral-zone", "fw35")
"""Restoring laws of one disc coordinate, by code (0, 1, 2): see the module docstring."""
LAW_LINEAR, LAW_NEUTRAL_ZONE, LAW_FW35 = 0, 1, 2
DISC_LAW_PARAMETERS = {"linear": (), "neutral-zone": ("zone_pos", "zone_neg", "ratio"),
                       "fw35": ("scale_pos", "scale_neg")}
"""The parameters of each law, in the order of their slots (columns 1-3 of the packed row)."""
DISC_LAW_WIDTH = 4
"""Packed row of one coordinate: law code, then three parameter slots."""
FW35_X_CAP = 1.3
"""``|q / (2 s)|`` beyond which the fw35 law continues linearly (module docstring) [rad]."""


def _law_code(name: str) -> int:
    try:
        return DISC_LAWS.index(name)
    except ValueError:
        raise ValueError(f"unknown disc law {name!r}; expected one of "
                         f"{', '.join(DISC_LAWS)}") from None


@dataclass(frozen=True, eq=False)
class DiscStiffness:
    """Stiffness, damping and restoring law of the disc, one entry per generalized coordinate.

    Parameters
    ----------
    k_positive, k_negative : array_like, shape (6,)
        Stiffness for q_i >= 0 and q_i < 0 [N/mm for x, y, z; N mm/rad for the rotations],
        each >= 0: of eq. (1), or of the outer (neutral-zone) or small-angle (fw35) branch of
        another law. Zero is allowed for a device that takes over a coordinate (the disc
        prosthesis of :mod:`segment.core.states` restrains translation at its centre of
        rotation instead, :mod:`segment.elements.restraint`); the data tables still require
        > 0 (:data:`segment.core.schema.COLUMNS`).
    damping : array_like, shape (6,)
        Damping [N s/mm; N mm s/rad]. Used by dynamics only.
    law : sequence of str, shape (6,)
        Restoring law per coordinate (:data:`DISC_LAWS`); default eq. (1) everywhere.
    law_parameters : array_like, shape (6, 3)
        The law's parameters in its slots (:data:`DISC_LAW_PARAMETERS`) [mm or rad; ratio
        -]; unused slots 0.
    """

    k_positive: np.ndarray
    k_negative: np.ndarray
    damping: np.ndarray = field(default_factory=lambda: np.zeros(6))
    law: tuple[str, ...] = ("linear",) * 6
    law_parameters: np.ndarray = field(default_factory=lambda: np.zeros((6, 3)))

    def __post_init__(self):
        for name in ("k_positive", "k_negative", "damping"):
            a = np.array(getattr(self, name), dtype=float)
            if a.shape != (6,):
                raise ValueError(f"disc: {name} must have shape (6,), got {a.shape}")
            if not np.all(np.isfinite(a)):
                raise ValueError(f"disc: {name} must be finite, got {a.tolist()}")
            bad = a < 0
            if np.any(bad):
                i = int(np.argmax(bad))
                raise ValueError(f"disc: {name}[{DOF_NAMES[i]}] must be >= 0, got {a[i]}")
            a.setflags(write=False)
            object.__setattr__(self, name, a)
        law = (self.law,) * 6 if isinstance(self.law, str) else tuple(self.law)
        if len(law) != 6:
            raise ValueError(f"disc: law must name 6 laws (one per coordinate), got {len(law)}")
        for name in law:
            _law_code(name)
        object.__setattr__(self, "law", law)
        lp = np.array(self.law_parameters, dtype=float)
        if lp.shape != (6, 3):
            raise ValueError(f"disc: law_parameters must have shape (6, 3), got {lp.shape}")
        if not np.all(np.isfinite(lp)):
            raise ValueError(f"disc: law_parameters must be finite, got {lp.tolist()}")
        for i, name in enumerate(law):
            dof = DOF_NAMES[i]
            if name == "neutral-zone":
                if lp[i, 0] < 0 or lp[i, 1] < 0:
                    raise ValueError(f"disc {dof}: neutral-zone half-widths must be >= 0, got "
                                     f"{lp[i, 0]:g} and {lp[i, 1]:g}")
                if not 0 < lp[i, 2] <= 1:
                    raise ValueError(f"disc {dof}: neutral-zone stiffness ratio must lie in "
                                     f"(0, 1], got {lp[i, 2]:g}")
            elif name == "fw35":
                if not (lp[i, 0] > 0 and lp[i, 1] > 0):
                    raise ValueError(f"disc {dof}: fw35 angle scales must be > 0, got "
                                     f"{lp[i, 0]:g} and {lp[i, 1]:g}")
        lp.setflags(write=False)
        object.__setattr__(self, "law_parameters", lp)

    @property
    def is_linear(self) -> bool:
        """Eq. (1) on every coordinate (the published law)."""
        return all(name == "linear" for name in self.law)

    def packed_law(self) -> np.ndarray:
        """(6, 4): law code and the three parameter slots per coordinate (the kernels' rows)."""
        out = np.zeros((6, DISC_LAW_WIDTH))
        out[:, 0] = [_law_code(name) for name in self.law]
        out[:, 1:] = self.law_parameters
        return out

    def stiffness(self, q) -> np.ndarray:
        """Tangent stiffness dM/dq (6,) at ``q`` (the ``+`` side at q_i = 0)."""
        q = np.asarray(q, dtype=float)
        if self.is_linear:
            return np.where(q >= 0.0, self.k_positive, self.k_negative)
        rows = self.packed_law()
        return np.array([disc_restoring(rows[i], q[i], self.k_positive[i], self.k_negative[i])[1]
                         for i in range(6)])

    def force(self, q) -> np.ndarray:
        """Generalized restoring force (6,) [N, N mm] of the law (eq. (1)) without damping."""
        q = np.asarray(q, dtype=float)
        if self.is_linear:
            return -np.where(q >= 0.0, self.k_positive, self.k_negative) * q
        rows = self.packed_law()
        return np.array([-disc_restoring(rows[i], q[i], self.k_positive[i], self.k_negative[i])[0]
                         for i in range(6)])

    def energy(self, q) -> np.ndarray:
        """Elastic energy U_i(q_i) (6,) [N mm] of each coordinate's law (module docstring)."""
        q = np.asarray(q, dtype=float)
        rows = self.packed_law()
        return np.array([disc_energy(rows[i], q[i], self.k_positive[i],
                                          self.k_negative[i]) for i in range(6)])

    def scaled(self, factor: float) -> DiscStiffness:
        """The same disc with every stiffness multiplied by ``factor`` (> 0)."""
        if not factor > 0:
            raise ValueError(f"disc stiffness scale must be > 0, got {factor}")
        return DiscStiffness(self.k_positive * factor, self.k_negative * factor, self.damping,
                             self.law, self.law_parameters)

    def with_law(self, dof: str, law: str, **parameters) -> DiscStiffness:
        """A copy with coordinate ``dof`` on ``law`` and its named parameters (mm or rad), e.g.
        ``with_law("phi_y", "neutral-zone", zone_pos=0.1, zone_neg=0.05, ratio=0.1)``."""
        if dof not in DOF_NAMES:
            raise ValueError(f"unknown disc coordinate {dof!r}; expected one of "
                             f"{', '.join(DOF_NAMES)}")
        _law_code(law)
        names = DISC_LAW_PARAMETERS[law]
        unknown = sorted(set(parameters) - set(names))
        missing = [n for n in names if n not in parameters]
        if unknown or missing:
            raise ValueError(f"disc law {law!r} takes parameters {list(names)}, got "
                             f"{sorted(parameters)}")
        i = DOF_NAMES.index(dof)
        laws = list(self.law)
        laws[i] = law
        lp = np.array(self.law_parameters, dtype=float)
        lp[i] = 0.0
        for k, n in enumerate(names):
            lp[i, k] = float(parameters[n])
        return DiscStiffness(self.k_positive, self.k_negative, self.damping, tuple(laws), lp)


# ---------------------------------------------------------------- compiled laws
@njit
def disc_restoring(row, x, kp, kn):
    """Restoring magnitude ``M`` (``Q = -M``) and its slope ``dM/dx`` of one coordinate.

    ``row`` = (code, slot 1, slot 2, slot 3) as packed (:meth:`DiscStiffness.packed_law`);
    ``x``, ``kp``, ``kn`` and the slots may be complex (complex step): the branch is chosen on
    the real part of ``x``. See the module docstring for the laws.
    """
    code = int(row[0].real)
    pos = x.real >= 0.0
    k = kp if pos else kn
    if code == LAW_NEUTRAL_ZONE:
        z = row[1] if pos else row[2]
        rho = row[3]
        zero = 0.0 * x      # slopes in the type of x (real, or complex in a complex step)
        if pos:
            if x.real <= z.real:
                return rho * k * x, rho * k + zero
            return rho * k * z + k * (x - z), k + zero
        if x.real >= -z.real:
            return rho * k * x, rho * k + zero
        return -rho * k * z + k * (x + z), k + zero
    if code == LAW_FW35:
        s = row[1] if pos else row[2]
        u = x / (2.0 * s)
        cap = FW35_X_CAP if pos else -FW35_X_CAP
        beyond = (u.real > FW35_X_CAP) if pos else (u.real < -FW35_X_CAP)
        ue = cap + 0.0 * u if beyond else u
        c = np.cos(ue)
        sn = np.sin(ue)
        m = 2.0 * k * s * sn / (c * c)
        slope = k * (1.0 + sn * sn) / (c * c * c)
        if beyond:
            return m + slope * (x - 2.0 * s * cap), slope + 0.0 * x
        return m, slope + 0.0 * x
    return k * x, k + 0.0 * x


@njit
def disc_energy(row, x, kp, kn):
    """Elastic energy ``U(x) = int_0^x M`` [N mm] of one coordinate (real), closed form."""
    code = int(row[0])
    pos = x >= 0.0
    k = kp if pos else kn
    if code == LAW_NEUTRAL_ZONE:
        z = row[1] if pos else row[2]
        rho = row[3]
        a = abs(x)
        if a <= z:
            return 0.5 * rho * k * x * x
        return 0.5 * rho * k * z * z + rho * k * z * (a - z) + 0.5 * k * (a - z) ** 2
    if code == LAW_FW35:
        s = row[1] if pos else row[2]
        u = abs(x) / (2.0 * s)
        if u <= FW35_X_CAP:
            return 4.0 * k * s * s * (1.0 / math.cos(u) - 1.0)
        c = math.cos(FW35_X_CAP)
        sn = math.sin(FW35_X_CAP)
        m = 2.0 * k * s * sn / (c * c)
        slope = k * (1.0 + sn * sn) / (c * c * c)
        d = abs(x) - 2.0 * s * FW35_X_CAP
        return 4.0 * k * s * s * (1.0 / c - 1.0) + m * d + 0.5 * slope * d * d
    return 0.5 * k * x * x


@njit
def add_disc_force(Q, q, k_pos, k_neg, law):
    """Q_i -= M_i(q_i) (eq. 1 or the coordinate's law), branch chosen on the real part.

    ``law`` (6, 4) are the packed rows of :meth:`DiscStiffness.packed_law`; the linear law
    is written out as before the laws existed (the same operations, bit for bit).
    """
    for i in range(6):
        k = k_pos[i] if q[i].real >= 0.0 else k_neg[i]
        if law[i, 0] == 0.0:
            Q[i] -= k * q[i]
        else:
            Q[i] -= disc_restoring(law[i], q[i], k_pos[i], k_neg[i])[0]
