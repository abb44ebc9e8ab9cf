"""Registration of the bone meshes to the model's vertebra frames (numpy only).

Problem
-------
The meshes of :mod:`segment.views.meshes` are each in a *mesh frame* of their own; the model
places its ligament insertions (``data/ligaments.csv``, Table 4 of KLG2000) and facet discs
(``data/facets.csv``) in *vertebra frames* (C6 fixed, C5 at its pose). For each vertebra find
the rigid motion ``x_vertebra = R x_mesh + t`` that puts the bone where the model's landmarks
are. The mechanics never use the result: it only places the drawing.

Landmarks
---------
Each vertebra in its own frame [mm]; the C6 facets are its superior ones, the C5 facets its
inferior ones (the two sides of the C5-C6 facet joints)::

    name       model (vertebra frame)                     bone (mesh frame)                kind
    ---------  -----------------------------------------  -------------------------------  -------
    body       the origin: the model's frames sit at the  midpoint of the superior and     point
               body centres (ALL and PLL of Table 4 lie   inferior endplate centroids
               on the body's faces at z = 0)
    facet-L/R  centre of the contact model's facet disc   centroid of the articular facet  point
               (facets.csv; C5's from the reference pose) surface, left / right
    ALL, PLL,  the insertion of Table 4                   the point of the bone surface    surface
    FL, ISL                                               nearest to it

*Endplate centroid*: the area-weighted centroid of the triangles facing up (superior) or down
(inferior) within :data:`ENDPLATE_CONE_DEG` of the vertical, inside the body's footprint
(between its posterior and anterior walls on the mid-sagittal ray from the mesh origin, and
within :data:`ENDPLATE_HALF_WIDTH_MM` of the mid-sagittal plane, inside the uncinate
processes). *Facet surface*: the triangles behind the posterior body wall, more than
:data:`FACET_MIN_LATERAL_MM` from the mid-sagittal plane, whose normal lies within
:data:`FACET_CONE_DEG` of the textbook facet direction (:data:`FACET_NOMINAL_DEG` to the
transverse plane, posterosuperior for a superior facet, anteroinferior for an inferior one);
on each side the largest edge-connected patch. Its centroid and mean normal are
area-weighted. *Surface* landmarks: Table 4 gives one point per ligament where the anatomy has
an attachment area (the whole anterior face of the body for the ALL, a lamina for the FL, the
length of a spinous process for the ISL), so the registration asks that the point lie on the
bone, not where on it. The capsular ligaments are not fitted: their insertions lie 2.9 mm
behind the facet faces, inside the articular processes (SOURCES.md §3), and the facet
centres already carry their position; they are checked (:attr:`Registration.checks`).

Fit
---
With pairs (p_i in the mesh frame, q_i in the vertebra frame), minimise::

    E(R, t) = sum_i | R p_i + t - q_i |^2                                            (1)

over rotations R and translations t. The minimiser is closed-form (Kabsch 1976; Umeyama 1991,
eqs. (40)-(42)): with the centroids p', q' and the SVD U D V^T of the covariance
sum (q_i - q')(p_i - p')^T::

    R = U S V^T,  S = diag(1, 1, det(U) det(V)),  t = q' - R p'                       (2)

(and, for a similarity, the scale ``c = tr(D S) / sum |p_i - p'|^2``, t = q' - c R p'). A surface
landmark's partner p_i is the point of the bone nearest to R^T (q_i - t), so (1) and the
partners are solved in turn from the mesh frame (R = I, t = 0) until R and t stop changing:
an iterative-closest-point registration (Besl and McKay 1992) with fixed pairs. The fit is
rigid by default: the drawing keeps the specimen's size; :func:`register` with
``scale=True`` reports the similarity for comparison (SOURCES.md §14).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from segment.core.io import ModelParameters, load_parameters
from segment.views.meshes import TriangleMesh, load_meshes

__all__ = ["ENDPLATE_CONE_DEG", "ENDPLATE_HALF_WIDTH_MM", "FACET_CONE_DEG",
           "FACET_MIN_LATERAL_MM", "FACET_NOMINAL_DEG", "FITTED", "Landmark", "Registration",
           "fit_transform", "mesh_features", "model_landmarks", "register",
           "registration_table", "summary"]

ENDPLATE_CONE_DEG = 40.0
"""An endplate triangle faces within this angle of +z (superior) or -z (inferior) [deg]: the
specimen's endplates are concave by a few millimetres over 15 mm (slopes up to about 20 deg),
its body walls are near vertical."""
ENDPLATE_HALF_WIDTH_MM = 10.0
"""Endplate triangles lie within this distance of the mid-sagittal plane [mm]: inside the
uncinate processes, which rise from the lateral 3-6 mm of the 24-25 mm wide C5 and C6 bodies
(SOURCES.md §7 (a), (d))."""
FACET_NOMINAL_DEG = 45.0
"""Textbook inclination of the lower cervical facets to the transverse plane [deg]: the
direction a facet surface is searched around (the model's own, 42.75 deg, is not used to
find the bone)."""
FACET_CONE_DEG = 35.0
"""A facet triangle's normal lies within this angle of the nominal facet direction [deg]:
wide enough for the curved articular surface of the decimated mesh, narrow enough to leave
out the lateral and posterior faces of the articular pillar (90 deg away)."""
FACET_MIN_LATERAL_MM = 12.0
"""Facet triangles lie farther than this from the mid-sagittal plane [mm]: lateral of the
vertebral canal (half-width about 11 mm, SOURCES.md §7 (c))."""
FITTED = {"body": "point", "facet-left": "point", "facet-right": "point", "ALL": "surface",
          "PLL": "surface", "FL": "surface", "ISL": "surface"}
"""The landmarks of the fit and their kind (see the module docstring)."""
_CHECKED = ("CL-left", "CL-right")
_MAX_ITERATIONS = 500
_STEP_TOL = 1e-10          # stop when R (entries) and t [mm] change by less than this


# ============================================================== the fit (eq. 2)
def fit_transform(p, q, *, scale: bool = False) -> tuple[np.ndarray, np.ndarray, float]:
    """Least-squares rigid (or similarity) transform ``q ~ c R p + t``, eq. (2).

    Parameters
    ----------
    p, q : array_like, shape (n, 3)
        Paired points, n >= 3 and not all on one line [mm].
    scale : bool
        False (default): rigid, c = 1 (Kabsch). True: similarity, c fitted (Umeyama).

    Returns
    -------
    R : ndarray, shape (3, 3)
        Proper rotation (det +1).
    t : ndarray, shape (3,)
    c : float
        Scale (1.0 when ``scale`` is False).

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([[0.0, 0, 0], [1, 0, 0], [0, 2, 0], [0, 0, 3]])
    >>> R90 = np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]])       # 90 deg about +z
    >>> R, t, c = fit_transform(p, p @ R90.T + [1.0, 2.0, 3.0])
    >>> bool(np.allclose(R, R90)), np.round(t, 12).tolist(), c
    (True, [1.0, 2.0, 3.0], 1.0)
    """
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    if p.shape != q.shape or p.ndim != 2 or p.shape[1] != 3 or len(p) < 3:
        raise ValueError(f"p and q must both have shape (n, 3) with n >= 3, got {p.shape} "
                         f"and {q.shape}")
    pc, qc = p.mean(axis=0), q.mean(axis=0)
    x, y = p - pc, q - qc
    U, D, Vt = np.linalg.svd(y.T @ x)
    if D[1] < 1e-9 * max(D[0], 1e-300):
        raise ValueError("the points must not all lie on one line: the rotation about it "
                         "is undetermined")
    S = np.diag([1.0, 1.0, np.sign(np.linalg.det(U) * np.linalg.det(Vt))])
    R = U @ S @ Vt
    c = float(np.trace(np.diag(D) @ S) / np.einsum("ij,ij->", x, x)) if scale else 1.0
    return R, qc - c * R @ pc, c


# ============================================================== landmarks
@dataclass(frozen=True)
class _Features:
    """What the registration finds on one mesh (mesh frame, mm)."""

    points: dict            # name -> (3,): body, endplate-superior/-inferior, facet-left/-right
    normals: dict           # facet-left/-right -> unit normal (3,)
    facet_triangles: dict   # facet-left/-right -> indices of the facet surface's triangles
    endplate_triangles: dict  # superior/inferior -> indices


def _walls(mesh: TriangleMesh, origin) -> tuple[float, float]:
    """x [mm] of the posterior and anterior body walls on the ray along x through ``origin``
    (the last crossing in front, the first behind)."""
    t = mesh.ray_hits(origin, (1.0, 0.0, 0.0))
    front, back = t[t > 0.0], t[t < 0.0]
    if not len(front) or not len(back):
        raise ValueError(f"{mesh.name}: the mid-sagittal ray from {np.round(origin, 2)} does "
                         f"not cross the body's anterior and posterior walls")
    return float(origin[0] + back.max()), float(origin[0] + front.max())


def _area_mean(values, weights) -> np.ndarray:
    return (values * weights[:, None]).sum(axis=0) / weights.sum()


@functools.lru_cache(maxsize=8)
def _features(mesh: TriangleMesh, vertebra: str) -> _Features:
    post, ant = _walls(mesh, np.zeros(3))
    c, n, a = mesh.centroids, mesh.normals, mesh.areas
    in_body = (c[:, 0] > post) & (c[:, 0] < ant) & (np.abs(c[:, 1]) < ENDPLATE_HALF_WIDTH_MM)
    cos_end = np.cos(np.radians(ENDPLATE_CONE_DEG))
    points, endplates = {}, {}
    for which, sign in (("superior", 1.0), ("inferior", -1.0)):
        sel = np.flatnonzero(in_body & (sign * c[:, 2] > 0.0) & (sign * n[:, 2] > cos_end))
        if not len(sel):
            raise ValueError(f"{mesh.name}: no {which} endplate found")
        endplates[which] = sel
        points[f"endplate-{which}"] = _area_mean(c[sel], a[sel])
    points["body"] = 0.5 * (points["endplate-superior"] + points["endplate-inferior"])
    post, _ = _walls(mesh, points["body"])
    # C6: its superior facets (facing posterosuperior); C5: its inferior ones
    k = np.radians(FACET_NOMINAL_DEG)
    nominal = np.array([-np.sin(k), 0.0, np.cos(k)]) * (1.0 if vertebra == "C6" else -1.0)
    candidate = (c[:, 0] < post) & (n @ nominal > np.cos(np.radians(FACET_CONE_DEG)))
    normals, facets = {}, {}
    for side, sign in (("left", 1.0), ("right", -1.0)):
        label = mesh.components(candidate & (sign * c[:, 1] > FACET_MIN_LATERAL_MM))
        sel = np.flatnonzero(label == 0)
        if not len(sel):
            raise ValueError(f"{mesh.name}: no {side} facet surface found")
        facets[f"facet-{side}"] = sel
        points[f"facet-{side}"] = _area_mean(c[sel], a[sel])
        m = (n[sel] * a[sel, None]).sum(axis=0)
        normals[f"facet-{side}"] = m / np.linalg.norm(m)
    return _Features(points, normals, facets, endplates)


def mesh_features(vertebra: str, mesh: TriangleMesh | None = None) -> dict:
    """The landmark points and facet normals found on a mesh (mesh frame [mm]).

    Returns ``{"points": {name: (3,)}, "normals": {name: (3,)}, "facet_triangles": ...,
    "endplate_triangles": ...}``; points: ``body``, ``endplate-superior``,
    ``endplate-inferior``, ``facet-left``, ``facet-right`` (see the module docstring).
    """
    mesh = load_meshes()[vertebra] if mesh is None else mesh
    f = _features(mesh, vertebra)
    return {"points": dict(f.points), "normals": dict(f.normals),
            "facet_triangles": dict(f.facet_triangles),
            "endplate_triangles": dict(f.endplate_triangles)}


def model_landmarks(vertebra: str, parameters: ModelParameters | None = None) -> dict:
    """The model's landmarks of ``vertebra`` in its frame [mm]: ``{name: (point, normal)}``
    (normal None but for the facets), from ``parameters`` (default: the packaged tables).

    Names: ``body`` (the origin), ``facet-left``/``facet-right`` (the contact model's facet
    disc of this vertebra: C6's superior, C5's inferior), and each ligament's insertion
    (``ALL``, ``PLL``, ``FL``, ``ISL``, ``CL-left``, ``CL-right``).
    """
    if vertebra not in ("C5", "C6"):
        raise ValueError(f"vertebra must be 'C5' or 'C6', got {vertebra!r}")
    p = load_parameters() if parameters is None else parameters
    out = {"body": (np.zeros(3), None)}
    for j in p.facets:
        disc = j.disc_c6 if vertebra == "C6" else j.disc_c5
        out[f"facet-{j.side}"] = (np.asarray(disc.center, float), np.asarray(disc.normal, float))
    for lig in p.ligaments:
        out[lig.name] = (np.asarray(lig.insertion_c6 if vertebra == "C6" else lig.insertion_c5,
                                    dtype=float), None)
    missing = [k for k in (*FITTED, *_CHECKED) if k not in out]
    if missing:
        raise ValueError(f"the registration needs the model's {', '.join(missing)}; these "
                         f"parameters have {', '.join(out)}")
    return out


# ============================================================== the result
@dataclass(frozen=True)
class Landmark:
    """One landmark after the fit (vertebra frame [mm]).

    Attributes
    ----------
    name : str
    kind : str
        ``"point"``, ``"surface"`` (fitted) or ``"check"`` (not fitted: the distance from the
        model's point to the bone, negative inside).
    model : ndarray, shape (3,)
        The model's point.
    bone : ndarray, shape (3,)
        Its partner on the registered bone (for a check: the nearest point of the bone).
    error_mm : float
        ``|bone - model|`` [mm] (a check: the signed distance, negative inside the bone).
    """

    name: str
    kind: str
    model: np.ndarray
    bone: np.ndarray
    error_mm: float


@dataclass(frozen=True, eq=False)
class Registration:
    """The motion from a mesh frame to its vertebra frame and how well it fits.

    Attributes
    ----------
    vertebra : str
    R : ndarray, shape (3, 3)
        ``R_vertebra_mesh``: mesh-frame directions in vertebra coordinates.
    t : ndarray, shape (3,)
        Mesh origin in vertebra coordinates [mm].
    scale : float
        1.0 (rigid) unless registered with ``scale=True``.
    landmarks : tuple of Landmark
        The fitted landmarks, then the checks.
    facet_angle_deg : dict of str to float
        Angle between the registered facet surface's mean normal and the model's facet
        normal, per side [deg].
    iterations : int
    """

    vertebra: str
    R: np.ndarray
    t: np.ndarray
    scale: float
    landmarks: tuple
    facet_angle_deg: dict
    iterations: int

    def apply(self, points) -> np.ndarray:
        """Mesh-frame points (k, 3) in vertebra coordinates [mm]."""
        return self.scale * np.asarray(points, dtype=float) @ self.R.T + self.t

    @property
    def fitted(self) -> tuple:
        return tuple(x for x in self.landmarks if x.kind != "check")

    @property
    def rms_mm(self) -> float:
        """Root mean square error of the fitted landmarks [mm]."""
        return float(np.sqrt(np.mean([x.error_mm ** 2 for x in self.fitted])))

    @property
    def max_mm(self) -> float:
        """Largest error of a fitted landmark [mm]."""
        return float(max(x.error_mm for x in self.fitted))

    @property
    def rotation_deg(self) -> float:
        """Angle of the rotation from the mesh frame [deg]."""
        return float(np.degrees(np.arccos(np.clip((np.trace(self.R) - 1.0) / 2.0, -1, 1))))

    def error(self, name: str) -> float:
        return next(x.error_mm for x in self.landmarks if x.name == name)


def register(vertebra: str, *, mesh: TriangleMesh | None = None,
             parameters: ModelParameters | None = None, scale: bool = False) -> Registration:
    """Register the mesh of ``vertebra`` to its frame in the model (see the module docstring).

    Parameters
    ----------
    vertebra : str
        ``"C5"`` or ``"C6"``.
    mesh : TriangleMesh, optional
        Default: the shipped mesh (:func:`segment.views.meshes.load_meshes`).
    parameters : ModelParameters, optional
        The model tables the landmarks come from (default: the packaged ``data/``).
    scale : bool
        Fit a similarity (uniform scale) instead of a rigid motion: for comparison only.
    """
    if parameters is None and mesh is None:
        return _register_packaged(vertebra, scale)
    return _register(vertebra, load_meshes()[vertebra] if mesh is None else mesh,
                     model_landmarks(vertebra, parameters), scale)


@functools.lru_cache(maxsize=4)
def _register_packaged(vertebra: str, scale: bool) -> Registration:
    return _register(vertebra, load_meshes()[vertebra], model_landmarks(vertebra), scale)


def _register(vertebra, mesh: TriangleMesh, model: dict, scale: bool) -> Registration:
    feats = _features(mesh, vertebra)
    names = list(FITTED)
    fixed = [k for k in names if FITTED[k] == "point"]
    surface = [k for k in names if FITTED[k] == "surface"]
    p_fixed = np.array([feats.points[k] for k in fixed])
    q_fixed = np.array([model[k][0] for k in fixed])
    q_surf = np.array([model[k][0] for k in surface])
    R, t, c = np.eye(3), np.zeros(3), 1.0
    iterations, step = 0, np.inf
    while step >= _STEP_TOL:
        if iterations == _MAX_ITERATIONS:
            raise RuntimeError(f"{vertebra}: the registration did not settle in "
                               f"{_MAX_ITERATIONS} iterations (last step {step:.2e})")
        iterations += 1
        partners = np.array([mesh.closest_point(R.T @ (q - t) / c) for q in q_surf])
        R_new, t_new, c_new = fit_transform(np.vstack([p_fixed, partners]),
                                            np.vstack([q_fixed, q_surf]), scale=scale)
        step = max(np.abs(R_new - R).max(), np.abs(t_new - t).max(), abs(c_new - c))
        R, t, c = R_new, t_new, c_new
    partners = np.array([mesh.closest_point(R.T @ (q - t) / c) for q in q_surf])

    def to_vertebra(x):
        return c * np.asarray(x) @ R.T + t

    landmarks = []
    for k, p in zip(fixed, p_fixed, strict=True):
        landmarks.append(_landmark(k, "point", model[k][0], to_vertebra(p)))
    for k, p in zip(surface, partners, strict=True):
        landmarks.append(_landmark(k, "surface", model[k][0], to_vertebra(p)))
    for k in _CHECKED:
        q = model[k][0]
        local = R.T @ (q - t) / c
        near = to_vertebra(mesh.closest_point(local))
        d = float(np.linalg.norm(near - q))
        landmarks.append(Landmark(k, "check", q, near, -d if mesh.contains(local) else d))
    angles = {}
    for side in ("left", "right"):
        n_model = model[f"facet-{side}"][1]
        n_bone = R @ feats.normals[f"facet-{side}"]
        angles[side] = float(np.degrees(np.arccos(np.clip(n_bone @ n_model, -1.0, 1.0))))
    for a in (R, t):
        a.setflags(write=False)
    return Registration(vertebra, R, t, c, tuple(landmarks), angles, iterations)


def _landmark(name, kind, model_point, bone_point) -> Landmark:
    q = np.asarray(model_point, dtype=float)
    b = np.asarray(bone_point, dtype=float)
    return Landmark(name, kind, q, b, float(np.linalg.norm(b - q)))


# ============================================================== report
def registration_table(*, parameters: ModelParameters | None = None,
                       scale: bool = False) -> pd.DataFrame:
    """Every landmark of both vertebrae after the fit: ``vertebra, landmark, kind,
    model_x_mm, ..., bone_z_mm, error_mm`` (a check's error is its signed distance to the bone)."""
    rows = []
    for v in ("C5", "C6"):
        reg = register(v, parameters=parameters, scale=scale)
        for x in reg.landmarks:
            rows.append({"vertebra": v, "landmark": x.name, "kind": x.kind,
                         **{f"model_{a}_mm": float(x.model[i]) for i, a in enumerate("xyz")},
                         **{f"bone_{a}_mm": float(x.bone[i]) for i, a in enumerate("xyz")},
                         "error_mm": x.error_mm})
    return pd.DataFrame(rows)


def summary(reg: Registration) -> str:
    """One line: RMS and largest error, the worst landmark, the rotation and facet angles."""
    worst = max(reg.fitted, key=lambda x: x.error_mm)
    angles = ", ".join(f"{s} {a:.1f}" for s, a in reg.facet_angle_deg.items())
    scale = f", scale {reg.scale:.3f}" if reg.scale != 1.0 else ""
    return (f"{reg.vertebra}: RMS {reg.rms_mm:.2f} mm, max {reg.max_mm:.2f} mm ({worst.name})"
            f" over {len(reg.fitted)} landmarks; rotation {reg.rotation_deg:.1f} deg from the "
            f"mesh frame{scale}; facet normals off by {angles} deg; {reg.iterations} "
            f"iterations")
