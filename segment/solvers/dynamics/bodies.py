"""The moving body: C5 (Table 1) and an optional payload rigidly attached to it.

C5's mass, principal inertia and centre of gravity come from Table 1 (DETC2000/MECH-6821, after
de Jager 1996): ``m = 0.23 kg``, ``I = (2.3, 2.3, 4.5) kg cm^2`` along the C5 axes about the
centre of gravity at ``g = (-8.1, 0, 0) mm`` in the C5 frame. A :class:`Payload` is a rigid
body fixed to C5 (for instance a surrogate of the head and the upper cervical spine): mass,
inertia tensor about its own centre of gravity along the C5 axes, and that centre of gravity
in the C5 frame. The package ships **no** payload numbers: a head-and-upper-neck surrogate for
a single C5-C6 segment is the user's choice, with its own source.

C5 and the payload move as one rigid body. Its mass, centre of gravity and inertia tensor about
that centre follow from the parallel-axis theorem::

    M = m + m_p,    g_c = (m g + m_p c_p) / M
    I_c = I + m S(g - g_c) + I_p + m_p S(c_p - g_c),    S(d) = |d|^2 1 - d d^T

The kernels take the body as one array (:func:`_body_array`) in internal units: ``M``
[N s^2/mm], ``g_c`` [mm] (C5 frame), ``I_c`` [N mm s^2] (row-major 3 x 3, C5 axes).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from segment.core.checks import PAYLOAD_COG, PAYLOAD_INERTIA, PAYLOAD_MASS
from segment.core.io import BodyInertia, load_parameters
from segment.core.model import Segment

__all__ = ["KG_TO_T", "Payload"]

KG_TO_T = 1e-3
"""kg -> N s^2/mm (tonne); also kg mm^2 -> N mm s^2."""
KG_CM2_TO_KG_MM2 = 100.0
"""kg cm^2 -> kg mm^2."""
SYMMETRY_RTOL = 1e-9
"""Largest asymmetry |I - I^T| of a payload inertia tensor, relative to its largest entry."""
TRIANGLE_RTOL = 1e-9
"""Slack of the triangle inequality I1 + I2 >= I3 of principal moments (rounding of sums)."""
B_M, B_G, B_I, B_WIDTH = 0, 1, 4, 13
"""Layout of the body array: mass, centre of gravity (3), inertia tensor (9, row-major)."""


def _inertia_tensor(value, name: str) -> np.ndarray:
    """3 principal moments (along the C5 axes), 6 entries (xx, yy, zz, xy, xz, yz) or 3 x 3."""
    try:
        a = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be 3, 6 or 3 x 3 numbers [kg cm^2], got {value!r}") \
            from None
    if a.shape == (3,):
        tensor = np.diag(a)
    elif a.shape == (6,):
        xx, yy, zz, xy, xz, yz = a
        tensor = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    elif a.shape == (3, 3):
        tensor = a
    else:
        raise ValueError(f"{name} must be 3 principal moments, 6 entries (Ixx, Iyy, Izz, Ixy, "
                         f"Ixz, Iyz) or a 3 x 3 tensor [kg cm^2], got shape {a.shape}")
    if not np.all(np.isfinite(tensor)):
        raise ValueError(f"{name} must be finite, got {a.tolist()}")
    return tensor


def check_inertia_tensor(tensor: np.ndarray, name: str) -> np.ndarray:
    """``tensor`` if it can be the inertia of a rigid body, else ValueError naming ``name``.

    Symmetric (to :data:`SYMMETRY_RTOL`), positive definite, and its principal moments obey
    the triangle inequality I1 + I2 >= I3 (each is a sum of two second moments of the mass
    distribution, I1 + I2 - I3 = 2 int z^2 dm >= 0 along the principal axes).
    """
    scale = float(np.max(np.abs(tensor))) if tensor.size else 0.0
    if not scale > 0:
        raise ValueError(f"{name} must be positive definite, got all zeros")
    if np.max(np.abs(tensor - tensor.T)) > SYMMETRY_RTOL * scale:
        raise ValueError(f"{name} must be symmetric, got {np.round(tensor, 6).tolist()}")
    principal = np.linalg.eigvalsh(0.5 * (tensor + tensor.T))
    if not principal[0] > 0:
        raise ValueError(f"{name} must be positive definite; its principal moments are "
                         f"{np.round(principal, 6).tolist()}")
    if principal[0] + principal[1] < principal[2] * (1.0 - TRIANGLE_RTOL):
        raise ValueError(f"{name}: principal moments {np.round(principal, 6).tolist()} violate "
                         f"the triangle inequality I1 + I2 >= I3 (no mass distribution has "
                         f"them)")
    return 0.5 * (tensor + tensor.T)


@dataclass(frozen=True, eq=False)
class Payload:
    """A rigid body fixed to C5 (e.g. a head-and-upper-neck surrogate): the user's numbers.

    Parameters
    ----------
    mass_kg : float
        Mass [kg], in (0, 100] (:data:`segment.core.checks.PAYLOAD_MASS`, as the command
        line's ``--payload-mass``).
    inertia_kg_cm2 : array_like
        Inertia about the payload's own centre of gravity, along the C5 axes [kg cm^2]: three
        principal moments along the C5 axes, six entries ``(Ixx, Iyy, Izz, Ixy, Ixz, Iyz)`` of
        the tensor (``Ixy = -int x y dm``), or the 3 x 3 tensor. It must be symmetric,
        positive definite and obey the triangle inequality of principal moments; every entry
        at most 1e5 kg cm^2 in size (:data:`segment.core.checks.PAYLOAD_INERTIA`).
    cog_mm : array_like, shape (3,)
        Its centre of gravity in the C5 frame [mm] (+x anterior, +z superior), within 1000 mm
        of the C5 origin (:data:`segment.core.checks.PAYLOAD_COG`).
    name : str
        Label shown in results.

    Examples
    --------
    >>> p = Payload(mass_kg=1.0, inertia_kg_cm2=(20.0, 20.0, 10.0), cog_mm=(0.0, 0.0, 40.0))
    >>> p.inertia_kg_cm2.shape
    (3, 3)
    """

    mass_kg: float
    inertia_kg_cm2: np.ndarray
    cog_mm: np.ndarray
    name: str = "payload"

    def __post_init__(self):
        m = PAYLOAD_MASS.check(self.mass_kg, f"payload {self.name!r}: mass_kg")
        raw = _inertia_tensor(self.inertia_kg_cm2, f"payload {self.name!r}: inertia_kg_cm2")
        big = float(np.max(np.abs(raw)))
        if not PAYLOAD_INERTIA.hard.holds(big):
            raise ValueError(f"payload {self.name!r}: inertia_kg_cm2 entries must be at most "
                             f"{PAYLOAD_INERTIA.hard.upper:g} kg cm^2 in size "
                             f"({PAYLOAD_INERTIA.why}), got {big:g}")
        tensor = check_inertia_tensor(raw, f"payload {self.name!r}: inertia_kg_cm2")
        try:
            cog = np.array(self.cog_mm, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"payload {self.name!r}: cog_mm must be 3 finite numbers [mm], "
                             f"got {self.cog_mm!r}") from None
        if cog.shape != (3,) or not np.all(np.isfinite(cog)):
            raise ValueError(f"payload {self.name!r}: cog_mm must be 3 finite numbers [mm], "
                             f"got {self.cog_mm!r}")
        if not PAYLOAD_COG.hard.holds(float(np.linalg.norm(cog))):
            raise ValueError(f"payload {self.name!r}: cog_mm must lie within "
                             f"{PAYLOAD_COG.hard.upper:g} mm of the C5 origin "
                             f"({PAYLOAD_COG.why}), got {cog.tolist()}")
        tensor.setflags(write=False)
        cog.setflags(write=False)
        object.__setattr__(self, "mass_kg", float(m))
        object.__setattr__(self, "inertia_kg_cm2", tensor)
        object.__setattr__(self, "cog_mm", cog)

    def __str__(self) -> str:
        i = self.inertia_kg_cm2
        diag = ", ".join(f"{v:g}" for v in np.diag(i))
        off = i[np.triu_indices(3, 1)]
        products = "" if not np.any(off) else (
            "; products " + ", ".join(f"{v:g}" for v in off))
        c = ", ".join(f"{v:g}" for v in self.cog_mm)
        return (f"{self.name} ({self.mass_kg:g} kg, inertia ({diag}{products}) kg cm^2, "
                f"centre of gravity ({c}) mm in C5)")


def _c5_inertia(inertia: BodyInertia | None, model: Segment | None) -> BodyInertia:
    """C5's inertia as given, else the model's (its data folder), else the packaged Table 1."""
    if inertia is None and model is not None:
        inertia = model.inertia
    if inertia is None:
        inertia = load_parameters().inertia["C5"]
    if not isinstance(inertia, BodyInertia):
        raise TypeError(f"inertia must be a segment.core.io.BodyInertia, got "
                        f"{type(inertia).__name__}")
    return inertia


def _body_array(inertia: BodyInertia | None = None, model: Segment | None = None,
                payload: Payload | None = None) -> np.ndarray:
    """The moving body (C5 and the payload) as the kernels' array (13,), internal units."""
    c5 = _c5_inertia(inertia, model)
    m = c5.mass * KG_TO_T
    g = np.array([c5.cog_x, 0.0, 0.0])
    I_c5 = np.diag(np.asarray(c5.inertia, dtype=float) * KG_TO_T)
    if payload is None:
        mass, cog, tensor = m, g, I_c5
    else:
        if not isinstance(payload, Payload):
            raise TypeError(f"payload must be a segment.solvers.dynamics.Payload or None, got "
                            f"{type(payload).__name__}")
        mp = payload.mass_kg * KG_TO_T
        cp = np.asarray(payload.cog_mm, dtype=float)
        Ip = np.asarray(payload.inertia_kg_cm2) * KG_CM2_TO_KG_MM2 * KG_TO_T
        mass = m + mp
        cog = (m * g + mp * cp) / mass

        def shift(d):
            return float(d @ d) * np.eye(3) - np.outer(d, d)

        tensor = I_c5 + m * shift(g - cog) + Ip + mp * shift(cp - cog)
    body = np.empty(B_WIDTH)
    body[B_M] = mass
    body[B_G:B_G + 3] = cog
    body[B_I:] = tensor.ravel()
    return body
