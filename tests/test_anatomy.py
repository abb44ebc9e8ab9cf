"""The anatomical display geometry (segment.views.anatomy): table, bone on the insertions,
facets at the model's positions, closed outward surfaces, symmetry, the simple option kept,
and the mechanics never reading it. numpy only: no pyvista needed.
"""

import hashlib
import shutil

import numpy as np
import pytest
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

import segment
from segment.cli import views as cli_views
from segment.core.io import data_dir
from segment.views import anatomy
from segment.views.anatomy import (
    ANATOMICAL_PARTS,
    ANATOMY_FILE,
    DIMENSIONS,
    GEOMETRIES,
    AnatomicalGeometry,
    load_anatomy,
    resolve_geometry,
)
from segment.views.geometry import (
    VertebraGeometry,
    _Surface,
    _tube_rings,
    _vertebra_surface,
    load_geometry,
    surface_distance,
)
from segment.views.style import FACET_DEPTH_MM, RING

INSERTION_TOL_MM = 0.05
"""ALL, PLL, FL and ISL lie on the surface of their part: the construction passes the
surface through each insertion (a mesh vertex or a straight edge between two rings), so the
distance is rounding only; 0.05 mm is a twentieth of a drawn ligament's radius."""
CL_MAX_DEPTH_MM = 3.5
"""The capsular insertions lie on the facet axes 2.9 mm behind the contact faces (Table 4,
SOURCES.md §3): inside the articular pillar, at most this deep below the facet face."""
PLANE_TOL_MM = 1e-6           # the pillar's end faces lie in the facet planes (rounding: 1 nm)
SYMMETRY_TOL_MM = 1e-6
PART_OF = {"ALL": "body", "PLL": "body", "FL": "lamina", "ISL": "spinous_process"}
SIMPLE_SHA256 = {
    # sha256 of the simple geometry's surfaces (points rounded to 1e-9 mm, triangles, part
    # ids) as main drew them before the anatomical geometry was added: the simple option
    # must stay what it was (scratch script over segment.views.geometry._vertebra_surface)
    "C5": "0d0a72ed16ad9b422ee2c101f9bb139154db33eab0f063bc6ea50464dde94714",
    "C6": "c77fe174ca479f8656ccc26b3f905bdb001046b9bcbe07dc3b57571fba9bd5c3",
}


@pytest.fixture(scope="module")
def geometry():
    return load_anatomy()


@pytest.fixture(scope="module")
def surfaces(geometry, model):
    return {v: geometry.surface(model, v) for v in ("C5", "C6")}


def _welded(s: _Surface) -> _Surface:
    """The same triangles on merged coincident points (the lofts give their caps their own
    copies of the end rings, for flat cap normals)."""
    pts, inverse = np.unique(np.round(s.points, 9), axis=0, return_inverse=True)
    return _Surface(pts, inverse.reshape(-1)[s.tris], s.part)


def _components(s: _Surface) -> list[_Surface]:
    """The closed pieces of a surface (connected through coincident points)."""
    s = _welded(s)
    n = len(s.points)
    rows = np.concatenate([s.tris[:, 0], s.tris[:, 1], s.tris[:, 2]])
    cols = np.concatenate([s.tris[:, 1], s.tris[:, 2], s.tris[:, 0]])
    graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    _, label = connected_components(graph, directed=False)
    out = []
    for k in np.unique(label[s.tris[:, 0]]):
        keep = label[s.tris[:, 0]] == k
        out.append(_Surface(s.points, s.tris[keep], s.part[keep]))
    return out


def _signed_volume(s: _Surface) -> float:
    a, b, c = (s.points[s.tris[:, i]] for i in range(3))
    return float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0)


def _inside(point, s: _Surface) -> bool:
    """Ray parity: is ``point`` inside the closed surface ``s``? (+x ray, Moller-Trumbore)"""
    a, b, c = (s.points[s.tris[:, i]] for i in range(3))
    d = np.array([1.0, 0.3141, 0.2718])       # not parallel to any construction plane
    e1, e2 = b - a, c - a
    h = np.cross(d, e2)
    det = np.einsum("ij,ij->i", e1, h)
    ok = np.abs(det) > 1e-12
    f = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
    sv = point - a
    u = f * np.einsum("ij,ij->i", sv, h)
    q = np.cross(sv, e1)
    v = f * (q @ d)
    t = f * np.einsum("ij,ij->i", e2, q)
    hits = ok & (u >= 0) & (v >= 0) & (u + v <= 1) & (t > 0)
    return bool(hits.sum() % 2)


# ---------------------------------------------------------------- the table
def test_every_dimension_of_both_vertebrae_has_a_sourced_row(geometry):
    for v in ("C5", "C6"):
        assert set(geometry.values[v]) == set(DIMENSIONS)
    text = (data_dir() / ANATOMY_FILE).read_text(encoding="utf-8")
    for line in text.splitlines()[1:]:
        assert "SOURCES.md §7" in line, line         # a published source or 'assumed' there
    # the numbers the model's insertions place (Table 4) are the ligament table's
    lig = {x.name: x for x in segment.c5c6().ligaments}
    x5 = geometry.values["C5"]
    assert x5["body_anterior_x_mm"] == lig["ALL"].insertion_c5[0]
    assert (x5["spinous_tip_x_mm"], x5["spinous_tip_z_mm"]) == tuple(
        lig["ISL"].insertion_c5[[0, 2]])


def _write_variant(tmp_path, edit):
    rows = (data_dir() / ANATOMY_FILE).read_text(encoding="utf-8").splitlines()
    rows = edit(rows)
    path = tmp_path / ANATOMY_FILE
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _set(rows, vertebra, dimension, value):
    out = []
    for r in rows:
        if r.startswith(f"{vertebra},{dimension},"):
            head, rest = r.split(",", 2)[:2], r.split(",", 3)[3]
            r = ",".join([*head, value, rest])
        out.append(r)
    return out


@pytest.mark.parametrize("edit, message", [
    (lambda r: _set(r, "C5", "body_width_mm", "wide"),
     r"vertebra_anatomy\.csv, line 4 \(row 3\), column 'value': .*'wide'"),
    (lambda r: _set(r, "C6", "pedicle_width_mm", "0.525"),
     r"line 44 \(row 43\), column 'value': C6 pedicle_width_mm must lie in \[2, 10\], "
     r"got 0\.525"),
    (lambda r: [x.replace("C5,uncinate_height_mm,", "C5,uncinate_hight_mm,") for x in r],
     r"line 9 \(row 8\), column 'dimension': unknown value 'uncinate_hight_mm'"),
    (lambda r: [x.replace("C6,lamina_height_mm,", "C7,lamina_height_mm,") for x in r],
     r"line 49 \(row 48\), column 'vertebra': unknown value 'C7'"),
    (lambda r: [*r, r[1]],
     r"line 62 \(row 61\), column 'dimension': duplicate row for C5 'body_anterior_x_mm' "
     r"\(already in row 1, line 2\)"),
    (lambda r: [x for x in r if not x.startswith("C6,canal_depth_mm,")],
     r"column 'dimension': missing row\(s\) for C6: canal_depth_mm"),
    (lambda r: _set(r, "C5", "canal_depth_mm", "19.5"),
     r"line 13 \(row 12\), column 'value': C5 canal_depth_mm 19\.5 puts the canal behind "
     r"the lamina junction"),
])
def test_bad_rows_are_one_line_errors_naming_file_row_column_value(tmp_path, edit, message):
    path = _write_variant(tmp_path, edit)
    with pytest.raises(ValueError, match=message) as err:
        load_anatomy(path)
    assert "\n" not in str(err.value)


def test_resolve_geometry_names_the_choices(geometry):
    assert isinstance(resolve_geometry(None), AnatomicalGeometry)
    assert isinstance(resolve_geometry("simple"), VertebraGeometry)
    assert resolve_geometry(geometry) is geometry
    with pytest.raises(ValueError, match="geometry must be one of anatomical, simple"):
        resolve_geometry("realistic")
    assert GEOMETRIES == cli_views.GEOMETRIES == ("anatomical", "simple")


# ---------------------------------------------------------------- bone where the model is
def test_ligament_insertions_sit_on_their_bone(model, surfaces):
    """ALL and PLL on the body, FL on the laminae, ISL on the spinous process tip: on the
    surface of that part; CL inside the articular pillar under its facet face."""
    for v, key in (("C5", "insertion_c5"), ("C6", "insertion_c6")):
        s = surfaces[v]
        for lig in model.ligaments:
            point = np.asarray(getattr(lig, key), dtype=float)
            part = PART_OF.get(lig.name, "articular_pillar")
            own = s.of_part(ANATOMICAL_PARTS.index(part))
            if lig.name in PART_OF:
                d = surface_distance(point, own)[0]
                assert d <= INSERTION_TOL_MM, f"{v} {lig.name}: {d:.3f} mm from the {part}"
                continue
            # CL: inside its own pillar, just under the facet face it spans
            joint = next(j for j in model.facets if np.sign(j.disc_c6.center[1])
                         == np.sign(point[1]))
            disc = joint.disc_c5 if v == "C5" else joint.disc_c6
            depth = float((disc.center - point) @ disc.normal)
            lateral = np.linalg.norm((point - disc.center) + depth * disc.normal)
            assert 0.0 < depth <= CL_MAX_DEPTH_MM and lateral < disc.radius, (v, lig.name)
            pillar = next(c for c in _components(own)
                          if np.linalg.norm(c.points[c.tris].reshape(-1, 3).mean(axis=0)[1]
                                            - point[1]) < 10.0)
            assert _inside(point, pillar), f"{v} {lig.name} is not inside its pillar"


def test_the_check_fails_when_a_part_is_moved(model, geometry, tmp_path):
    """The insertion check bites: a body 1 mm shallower leaves the ALL in the air."""
    path = _write_variant(tmp_path, lambda r: _set(r, "C5", "body_anterior_x_mm", "6.7"))
    s = load_anatomy(path).surface(model, "C5").of_part(ANATOMICAL_PARTS.index("body"))
    all_ = next(x for x in model.ligaments if x.name == "ALL").insertion_c5
    assert surface_distance(all_, s)[0] == pytest.approx(1.0, abs=0.01)


def test_pillars_carry_the_models_facets_at_their_positions(model, surfaces):
    """Each articular pillar's end faces lie in the planes of the contact model's facet discs
    (set back by the drawn cylinder depth), and the disc lies within the face."""
    for v, s in surfaces.items():
        pillars = _components(s.of_part(ANATOMICAL_PARTS.index("articular_pillar")))
        assert len(pillars) == len(model.facets) == 2
        for joint in model.facets:
            for disc in (joint.disc_c5, joint.disc_c6):
                base = disc.center - FACET_DEPTH_MM * disc.normal
                pillar = min(pillars, key=lambda c: abs(c.points[c.tris].reshape(-1, 3)
                                                        .mean(axis=0)[1] - disc.center[1]))
                pts = np.unique(pillar.points[pillar.tris].reshape(-1, 3), axis=0)
                on_plane = np.abs((pts - base) @ disc.normal) < PLANE_TOL_MM
                face = pts[on_plane]
                assert len(face) >= 16, f"{v}: no end face in the plane of {joint.side}"
                # the face surrounds the disc: every rim direction reaches beyond the radius
                u = np.cross(disc.normal, [0.0, 1.0, 0.0])
                u /= np.linalg.norm(u)
                w = np.cross(disc.normal, u)
                rel = face - base
                ang = np.arctan2(rel @ w, rel @ u)
                reach = np.hypot(rel @ u, rel @ w)
                for a in np.linspace(-np.pi, np.pi, 12, endpoint=False):
                    near = np.abs(np.angle(np.exp(1j * (ang - a)))) < 0.3
                    assert reach[near].max() > disc.radius, (v, joint.side)


def test_a_model_without_facets_still_gets_pillars(geometry):
    bare = segment.c5c6(ligaments=("ALL", "PLL"), facets=False)
    s = geometry.surface(bare, "C6")
    full = geometry.surface(segment.c5c6(), "C6")
    np.testing.assert_array_equal(s.points, full.points)     # at the packaged facets


# ---------------------------------------------------------------- the mesh
def test_surfaces_are_closed_outward_finite_and_light(surfaces):
    for v, s in surfaces.items():
        assert np.all(np.isfinite(s.points))
        assert s.tris.min() >= 0 and s.tris.max() < len(s.points)
        a, b, c = (s.points[s.tris[:, i]] for i in range(3))
        assert np.linalg.norm(np.cross(b - a, c - a), axis=1).min() > 1e-6   # no degenerate
        assert set(np.unique(s.part)) == set(range(len(ANATOMICAL_PARTS)))
        for piece in _components(s):
            assert _signed_volume(piece) > 0, f"{v}: a piece is inside out"
            edges = np.sort(np.vstack([piece.tris[:, [0, 1]], piece.tris[:, [1, 2]],
                                       piece.tris[:, [2, 0]]]), axis=1)
            _, count = np.unique(edges, axis=0, return_counts=True)
            assert np.all(count == 2), f"{v}: a piece is not closed"
        assert len(s.tris) < 6000       # four copies of C5 in the browser (see the benchmark)


def test_mirror_symmetry_of_the_symmetric_model(model, surfaces):
    assert all(abs(j.disc_c6.center[1]) == abs(model.facets[0].disc_c6.center[1])
               for j in model.facets)
    for s in surfaces.values():
        pts = np.unique(s.points[s.tris].reshape(-1, 3), axis=0)
        d, _ = cKDTree(pts).query(pts * [1.0, -1.0, 1.0])
        assert d.max() < SYMMETRY_TOL_MM


def test_table_values_drive_the_mesh(model, geometry, surfaces):
    for v, s in surfaces.items():
        x = geometry.values[v]
        body = s.of_part(ANATOMICAL_PARTS.index("body"))
        pts = body.points[np.unique(body.tris)]
        at_mid = pts[np.abs(pts[:, 2]) < 1e-9]
        assert np.ptp(at_mid[:, 1]) == pytest.approx(x["body_width_mm"], abs=1e-6)
        assert at_mid[:, 0].max() == pytest.approx(x["body_anterior_x_mm"], abs=1e-6)
        assert np.ptp(pts[:, 2]) >= x["body_height_mm"]          # plus the anterior lip
        ring = geometry.endplate(v, "superior")
        assert ring.shape == (RING, 3)
        np.testing.assert_allclose(ring[:, 2], 0.5 * x["body_height_mm"])


def test_no_nan_on_an_extreme_but_valid_table(model, tmp_path):
    """Every dimension at a bound of its range still gives a finite, closed mesh."""
    def extreme(rows):
        for name, (lo, hi) in DIMENSIONS.items():
            if name in ("pedicle_transverse_angle_deg", "body_outline_exponent"):
                rows = _set(_set(rows, "C5", name, f"{hi:g}"), "C6", name, f"{lo:g}")
        return rows
    g = load_anatomy(_write_variant(tmp_path, extreme))
    for v in ("C5", "C6"):
        s = g.surface(model, v)
        assert np.all(np.isfinite(s.points))


# ---------------------------------------------------------------- options and physics
def test_the_simple_option_is_unchanged(model):
    simple = load_geometry()
    assert simple.name == "simple"
    for v in ("C5", "C6"):
        s = simple.surface(model, v)
        digest = hashlib.sha256(np.round(s.points, 9).tobytes()
                                + s.tris.astype(np.int64).tobytes()
                                + s.part.astype(np.int64).tobytes()).hexdigest()
        assert digest == SIMPLE_SHA256[v], f"the simple {v} changed"
        assert s.points.shape == _vertebra_surface(simple, model, v).points.shape
    b = simple.body("C6")
    np.testing.assert_array_equal(simple.endplate("C6", "superior"),
                                  _tube_rings(b.start, b.end, *b.semi_axes_start,
                                              *b.semi_axes_end, RING)[-1])


def test_solving_never_reads_the_display_tables(tmp_path):
    """With both display tables replaced by garbage, every case solves to the same bytes."""
    folder = tmp_path / "data"
    shutil.copytree(data_dir(), folder, ignore=shutil.ignore_patterns("__*", "calibrated"))
    for name in (ANATOMY_FILE, "vertebra_geometry.csv"):
        (folder / name).write_text("not,a,table\n\x00garbage\n", encoding="utf-8")
    with pytest.raises(ValueError):
        load_anatomy(folder / ANATOMY_FILE)
    ours = segment.c5c6(data_dir=folder)
    packaged = segment.c5c6()
    for name, load in segment.LOAD_CASES.items():
        a, b = segment.solve(ours, load), segment.solve(packaged, load)
        assert a.q.tobytes() == b.q.tobytes(), name
    assert anatomy.load_anatomy().values["C5"]     # the packaged table still loads
