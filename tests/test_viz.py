"""3-D views (segment.views.viz): off-screen renders, scene content, explorer callback,
exports, CLI.

Rendering runs off-screen with Mesa (conftest selects the OSMesa window before vtk loads).
"""

import os
import subprocess
import sys

import numpy as np
import pytest

pv = pytest.importorskip("pyvista")

import segment  # noqa: E402
from segment import cli  # noqa: E402
from segment.core.io import data_dir  # noqa: E402
from segment.views import viz  # noqa: E402
from segment.views.parts import _title  # noqa: E402

SIZE = (320, 240)
MIN_PIXEL_STD = 5.0            # a blank (one-colour) image has std 0
MIN_DIFF_FRACTION = 0.01       # FLX and EXT must differ in at least 1 % of the pixels
COLOR_ATOL = 1e-6              # tension scalars are copied, not computed
POSE_CHANGE_DEG = 0.5          # a 1.8 N m moment turns C5 by about 2-3 deg
SUBPROCESS_TIMEOUT_S = 120


@pytest.fixture(scope="module")
def results(model):
    return {c: segment.solve(model, segment.LOAD_CASES[c]) for c in ("FLX", "EXT", "AR")}


def _png(path):
    import matplotlib.image

    return matplotlib.image.imread(str(path))[..., :3]


# ---------------------------------------------------------------- renders
@pytest.mark.slow
def test_render_is_not_blank_and_flexion_differs_from_extension(results, tmp_path):
    flx = viz.render(results["FLX"], tmp_path / "flx.png", size=SIZE)
    ext = viz.render(results["EXT"], tmp_path / "ext.png", size=SIZE)
    a, b = _png(flx), _png(ext)
    assert a.shape == (SIZE[1], SIZE[0], 3)
    assert a.std() * 255 > MIN_PIXEL_STD
    differ = np.any(np.abs(a - b) > 1 / 255, axis=-1).mean()
    assert differ > MIN_DIFF_FRACTION


@pytest.mark.slow
def test_render_grid_of_nine(model, tmp_path):
    rs = [segment.solve(model, load) for load in segment.LOAD_CASES.values()]
    img = _png(viz.render_grid(rs, tmp_path / "grid.png", size=(450, 360)))
    assert img.shape == (360, 450, 3)
    assert img.std() * 255 > MIN_PIXEL_STD
    with pytest.raises(ValueError, match="1 to 9 results"):
        viz.render_grid(rs + rs[:1], tmp_path / "ten.png")


# ---------------------------------------------------------------- scene content
def test_ligament_colours_follow_the_tensions(results):
    for r in results.values():
        scene = viz.build_scene(r)
        lig = scene.meshes["ligaments"]
        per_cell = lig.point_data_to_cell_data()["tension_N"]
        for k, s in enumerate(r.state.ligaments):
            t = per_cell[lig.cell_data["ligament"] == k]
            if s.tension > 0:
                np.testing.assert_allclose(t, s.tension, atol=COLOR_ATOL)
            else:  # slack: NaN -> the grey nan colour, and a thin tube
                assert np.all(np.isnan(t))
        # the colour map orders the taut ligaments as their tensions
        lut = pv.LookupTable(cmap=viz.TENSION_CMAP)
        lut.scalar_range = (0.0, max(s.tension for s in r.state.ligaments))
        taut = [s.tension for s in r.state.ligaments if s.tension > 0]
        colours = [lut.map_value(t) for t in sorted(taut)]
        assert len(set(colours)) == len(set(np.round(sorted(taut), 6)))


def test_slack_ligaments_are_thin(results):
    r = results["EXT"]  # in extension only the ALL is taut
    scene = viz.build_scene(r)
    lig = scene.meshes["ligaments"]
    ids = lig.cell_data["ligament"]
    for k, s in enumerate(r.state.ligaments):
        pts = lig.extract_cells(np.flatnonzero(ids == k)).points
        axis = s.insertion_c5_in_c6 - s.insertion_c6
        axis = axis / np.linalg.norm(axis)
        rel = pts - s.insertion_c6
        radius = np.max(np.linalg.norm(rel - np.outer(rel @ axis, axis), axis=1))
        expected = viz.LIGAMENT_TAUT_MM if s.tension > 0 else viz.LIGAMENT_SLACK_MM
        np.testing.assert_allclose(radius, expected, rtol=1e-6)


def test_c5_mesh_is_at_the_solved_pose(results, model):
    r = results["FLX"]
    scene = viz.build_scene(r)
    tpl = viz.SceneTemplate(model)
    p, R = r.pose_c6
    np.testing.assert_allclose(scene.meshes["c5"].points, tpl._c5.points @ R.T + p, atol=1e-9)
    np.testing.assert_allclose(scene.meshes["c6"].points, tpl._c6.points, atol=1e-12)
    # facet cylinders: the C5 contact face is the model's disc, moved by the pose
    disc = model.facets[0].disc_c5
    face_centre = scene.meshes["facets_c5"].points[2 * viz.RING * 2 + 1]  # cap centre
    np.testing.assert_allclose(face_centre, p + R @ disc.center, atol=1e-9)


def test_contact_arrows_scale_with_force(results):
    r = results["EXT"]
    arrows = viz.build_scene(r).meshes["arrows"]
    for k, f in enumerate(r.state.facets):
        n = len(arrows.points) // len(r.state.facets)
        pts = arrows.points[k * n:(k + 1) * n]
        length = np.max(np.linalg.norm(pts - f.point, axis=1))
        assert length == pytest.approx(min(viz.ARROW_MM_PER_N * f.force, viz.ARROW_MAX_MM),
                                       rel=0.05)


def test_geometry_table_errors_name_file_row_column_and_value(tmp_path):
    src = (data_dir() / viz.GEOMETRY_FILE).read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "vertebra_geometry.csv"
    header = src[0].split(",")
    col = header.index("a0_mm")
    row = src[1].split(",")
    row[col] = "-2"
    bad.write_text("\n".join([src[0], ",".join(row), *src[2:]]), encoding="utf-8")
    with pytest.raises(ValueError, match=r"vertebra_geometry.csv, line 2 \(row 1\), "
                                         r"column 'a0_mm': must be > 0, got -2"):
        viz.load_geometry(bad)
    bad.write_text("\n".join([src[0], *[ln for ln in src[1:] if ",body," not in ln]]),
                   encoding="utf-8")
    with pytest.raises(ValueError, match="exactly one 'body'"):
        viz.load_geometry(bad)
    assert all(p.vertebra in ("C5", "C6") for p in viz.load_geometry().parts)


# ---------------------------------------------------------------- explorer
def test_explorer_slider_callback_updates_the_pose_without_a_window(model):
    ex = viz.Explorer(model, off_screen=True, size=SIZE, render=False)
    try:
        c5_before = ex.scene.meshes["c5"].points.copy()
        r = ex.on_slider("My", 1.8)  # what the slider widget calls
        assert r.converged
        flx = segment.solve(model, segment.LOAD_CASES["FLX"])
        np.testing.assert_allclose(ex.result.q, flx.q, atol=1e-8)
        assert np.degrees(ex.result.q[4] - ex.result.q_unloaded[4]) > POSE_CHANGE_DEG
        assert not np.allclose(ex.scene.meshes["c5"].points, c5_before)
        p, R = flx.pose_c6
        np.testing.assert_allclose(ex.scene.meshes["c5"].points,
                                   ex.template._c5.points @ R.T + p, atol=1e-7)
        # a stiffer disc turns less
        stiff = ex.on_slider("disc", 2.0)
        assert 0 < stiff.q[4] < r.q[4]
        # keys: jump to a case, reset
        ext = ex.jump_to_case("EXT")
        assert ext.q[4] < 0 and ex.values["My"] == pytest.approx(-1.8)
        assert ex.widgets["My"].GetRepresentation().GetValue() == pytest.approx(-1.8)
        ex.reset()
        np.testing.assert_allclose(ex.result.q, model.unloaded.q, atol=1e-8)
        with pytest.raises(ValueError, match="unknown slider"):
            ex.on_slider("Fw", 1.0)
    finally:
        ex.close()


# ---------------------------------------------------------------- exports
@pytest.mark.parametrize("suffix", [".vtm", ".gltf"])
def test_exports_are_readable(results, tmp_path, suffix):
    path = viz.export(results["EXT"], tmp_path / f"ext{suffix}")
    assert path.stat().st_size > 0  # .vtm is an index; its .vtp files sit in a folder
    back = pv.read(str(path))
    blocks = back.recursive_iterator() if hasattr(back, "recursive_iterator") else back
    n_points = sum(b.n_points for b in blocks if b is not None)
    assert n_points > 1000
    if suffix == ".gltf":
        import json

        assert json.loads(path.read_text())["asset"]["version"] == "2.0"
    if suffix == ".vtm":
        assert "ligaments" in back.keys()
        lig = back["ligaments"]
        assert np.nanmax(lig.point_data["tension_N"]) == pytest.approx(
            max(s.tension for s in results["EXT"].state.ligaments))


def test_export_rejects_unknown_suffix(results, tmp_path):
    with pytest.raises(ValueError, match=r"\.gltf or \.vtm"):
        viz.export(results["EXT"], tmp_path / "x.obj")


# ---------------------------------------------------------------- command line
def test_cli_render_writes_a_png(tmp_path, capsys):
    out = tmp_path / "ar.png"
    assert cli.main(["render", "AR", "-o", str(out), "--size", "200", "150"]) == 0
    assert _png(out).shape == (150, 200, 3)
    assert "AR" in capsys.readouterr().out


def test_cli_render_bad_case_exits_2(capsys):
    assert cli.main(["render", "NOPE"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown load case(s) NOPE" in err


@pytest.mark.slow
def test_cli_explore_without_display_exits_2():
    env = {k: v for k, v in __import__("os").environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    proc = subprocess.run([sys.executable, "-m", "segment.cli", "explore"], env=env,
                          capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "display" in proc.stderr


def test_dislocated_facets_are_labelled(model):
    """Corner load at 8x nominal: both facets slide off; the view says so."""
    corner = np.array([-20.0, -20.0, -20.0, -1800.0, -1800.0, 1800.0])
    r = segment.solve(model, segment.Load(8 * corner[:3], 8 * corner[3:], "corner x8"))
    scene = viz.build_scene(r)
    assert scene.labels == ["left: DISLOCATED", "right: DISLOCATED"]
    assert "facet left: DISLOCATED, 0.0 N" in scene.facet_text
    assert "[BEYOND LIMITS]" in scene.title
    ok = viz.build_scene(segment.solve(model, segment.LOAD_CASES["FLX"]))
    assert not any("DISLOCATED" in label for label in ok.labels)


# ---------------------------------------------------------------- rupture and dislocation
@pytest.fixture(scope="module")
def ruptured_result(model):
    """Flexion past the first ruptures (FL, ISL, CL-left, CL-right broken)."""
    r = segment.ramp(model, segment.LOAD_CASES["FLX"], to_scale=6.0, steps=60, limits=None)
    k = int(r.frame.index[r.frame["event"].str.startswith("ruptured")][-1])
    res = r.result_at(k)
    assert res.converged and res.iterations == 0
    return res


def test_ruptured_strips_are_torn_stubs_not_tubes(ruptured_result):
    scene = viz.build_scene(ruptured_result)
    broken = sorted(ruptured_result.model.ruptured)
    assert broken == ["CL-left", "CL-right", "FL", "ISL"]
    stubs = scene.meshes["ruptured"]
    assert stubs.n_points == 2 * len(broken) * (4 * viz.TUBE_RING + 2)
    # each stub starts at an insertion and covers RUPTURED_STUB of the strip
    st = {s.name: s for s in ruptured_result.state.ligaments}
    lig = scene.meshes["ligaments"]
    for k, name in enumerate(scene.ligament_names):
        cells = lig.extract_cells(np.flatnonzero(lig.cell_data["ligament"] == k))
        if name in broken:
            assert np.all(np.isnan(cells.point_data["tension_N"]))
            np.testing.assert_allclose(cells.points, np.tile(st[name].insertion_c6,
                                                             (cells.n_points, 1)), atol=1e-9)


def test_dislocated_facets_get_a_halo(model, ruptured_result, tmp_path):
    """Seated facets: the halo collapses to the facet centre. Axial rotation at 14x nominal
    (after the capsular ruptures): the right facet has slid off (regime "dislocated") and gets
    a visible red disc; the left one, still seated, does not."""
    def red_fraction(result, path):
        img = _png(viz.render(result, path, size=SIZE, view="posterior"))
        return ((img[..., 0] > 0.7) & (img[..., 1] < 0.35) & (img[..., 2] < 0.35)).mean()

    scene = viz.build_scene(ruptured_result)
    halo = scene.meshes["dislocated"]
    centres = [j.disc_c6.center for j in ruptured_result.model.facets]
    n = halo.n_points // 2
    for i, c in enumerate(centres):   # seated: collapsed to the facet centre
        np.testing.assert_allclose(halo.points[i * n:(i + 1) * n], np.tile(c, (n, 1)))
    ar = segment.ramp(model, segment.LOAD_CASES["AR"], to_scale=14.0, steps=28,
                     limits=None)                     # past the validity limit
    disl = ar.result_at(len(ar.frame) - 1)
    sides = {f.side: f.dislocated for f in disl.state.facets}
    assert sides == {"left": False, "right": True}
    scene = viz.build_scene(disl)
    pts = scene.meshes["dislocated"].points
    spread = {f.side: np.ptp(pts[i * n:(i + 1) * n], axis=0).max()
              for i, f in enumerate(disl.model.facets)}
    assert spread["right"] > 5.0 and spread["left"] < 1e-9
    assert "right: DISLOCATED" in scene.labels and "left: DISLOCATED" not in scene.labels
    assert red_fraction(disl, tmp_path / "disl.png") > 0.001   # the halo is visible


def test_screen_axes_of_the_lateral_and_posterior_views():
    """Lateral view from the left (a little in front and above, so that the transverse
    processes do not hide the bodies): anterior points to screen left, superior up, left at
    the viewer; posterior view: left points to screen left (the camera is behind)."""
    lat = viz.screen_axes("lateral")
    assert lat["anterior"][0] < -0.95 and lat["superior"][1] > 0.98 and lat["left"][2] > 0.95
    post = viz.screen_axes("posterior")
    assert post["left"][0] < -0.9 and post["superior"][1] > 0.9
    assert post["anterior"][2] < -0.8           # away from the viewer
    for view in viz.VIEWS:                      # each axis a unit vector in screen coordinates
        for comps in viz.screen_axes(view).values():
            assert np.linalg.norm(comps) == pytest.approx(1.0)


def test_axis_labels_never_run_into_each_other():
    """An axis along the line of sight is drawn without a label (its tip sits on the
    origin, where "left" ran into "anterior": "anterioleft") and named in words instead;
    the labelled tips stay 0.4 axis lengths apart (two lines of text in the axes box)."""
    from segment.views.render import _axes_labels

    labels, note = _axes_labels("lateral")
    assert labels == {"xlabel": "anterior", "ylabel": "", "zlabel": "superior"}
    assert note == "left towards the viewer"
    labels, note = _axes_labels("superior")
    assert labels["zlabel"] == "" and note == "superior towards the viewer"
    for view in viz.VIEWS:                      # the labelled axes' tips are apart on screen
        labels, _ = _axes_labels(view)
        tips = [np.array(v[:2]) for (name, v), key in zip(viz.screen_axes(view).items(),
                                                          labels, strict=True) if labels[key]]
        assert all(np.linalg.norm(a - b) > 0.4 for i, a in enumerate(tips) for b in tips[i + 1:])


def test_the_browser_uses_the_cameras_of_the_renders():
    """assets/explorer.js repeats the camera directions of segment.views.style.VIEWS."""
    import re

    from segment.views.web import ASSETS

    js = (ASSETS / "explorer.js").read_text(encoding="utf-8")
    block = re.search(r"const VIEWS = \{(.*?)\};", js, re.S)[1]
    for name, (direction, _) in viz.VIEWS.items():
        found = re.search(rf"{name}: \[([^\]]*)\]", block)
        js_dir = np.array([float(x) for x in found[1].split(",")])
        np.testing.assert_allclose(js_dir / np.linalg.norm(js_dir),
                                   np.array(direction) / np.linalg.norm(direction),
                                   atol=2e-3, err_msg=name)


# ---------------------------------------------------------------- magnification, titles
@pytest.mark.slow
def test_magnified_c5_is_drawn_next_to_the_true_pose(results, model, tmp_path):
    r = results["FLX"]
    scene = viz.build_scene(r, magnify=10)
    tpl = viz.SceneTemplate(model)
    p, R = r.pose_c6
    np.testing.assert_allclose(scene.meshes["c5"].points, tpl._c5.points @ R.T + p, atol=1e-9)
    q_u = r.q_unloaded
    p_m, R_m = segment.elements.kinematics.pose(q_u + 10 * (r.q - q_u), model.reference)
    np.testing.assert_allclose(scene.meshes["c5_magnified"].points,
                               tpl._c5.points @ R_m.T + p_m, atol=1e-9)
    p_u, R_u = segment.elements.kinematics.pose(q_u, model.reference)   # ghost: unloaded
    np.testing.assert_allclose(scene.meshes["c5_reference"].points,
                               tpl._c5.points @ R_u.T + p_u, atol=1e-9)
    plain = _png(viz.render(r, tmp_path / "x1.png", size=SIZE))
    big = _png(viz.render(r, tmp_path / "x10.png", size=SIZE, magnify=10))
    orange = np.array([1.0, 0.5, 0.05])
    def near(img):
        return (np.abs(img - orange).max(axis=-1) < 0.25).mean()
    assert near(big) > max(0.003, 4 * near(plain))   # an orange C5 appears
    with pytest.raises(ValueError, match="magnify must be a number >= 1"):
        viz.build_scene(r, magnify=0.5)


def test_titles_state_the_displacement_from_the_unloaded_pose(results):
    r = results["FLX"]
    d = np.degrees(r.displacement_from_unloaded[4])
    assert f"phi_y = {d:+.2f} deg from unloaded" in viz.build_scene(r).title
    assert f"{np.degrees(r.q[4]):+.2f}" not in viz.build_scene(r).title   # not from q = 0


def test_cli_render_magnify(tmp_path, capsys):
    out = tmp_path / "flx.png"
    assert cli.main(["render", "FLX", "-o", str(out), "--size", "200", "150",
                     "--magnify", "10"]) == 0
    assert cli.main(["render", "FLX", "-o", str(out), "--magnify", "0.5"]) == 2
    assert "--magnify must be a number >= 1" in capsys.readouterr().err


@pytest.mark.slow  # a subprocess with a render
def test_plot_without_a_display_opens_no_x_window(tmp_path):
    """``viz.plot(...)`` in a notebook on a machine without a display printed VTK's "bad X
    server connection" warning (with colour codes) into the committed notebooks (issue 20)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    code = ("import segment\nfrom segment.views import viz\n"
            "pl = viz.plot(segment.solve(segment.c5c6(), segment.LOAD_CASES['EXT']), "
            "size=(200, 150))\n"
            "pl.screenshot('shot.png')\nprint(pl.off_screen)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "True"
    assert "X server" not in proc.stderr and "\x1b[" not in proc.stderr, proc.stderr
    assert (tmp_path / "shot.png").stat().st_size > 1000


# ---------------------------------------------------------------- display geometry option
@pytest.mark.slow
def test_anatomical_is_the_default_and_simple_stays_an_option(results, model, tmp_path):
    r = results["FLX"]
    default = viz.build_scene(r)
    simple = viz.build_scene(r, geometry="simple")
    anatomical = viz.build_scene(r, geometry=viz.load_anatomy())
    assert default.meshes["c6"].n_points == anatomical.meshes["c6"].n_points
    assert simple.meshes["c6"].n_points == len(viz.load_geometry().surface(model, "C6").points)
    assert default.meshes["c6"].n_points != simple.meshes["c6"].n_points
    names = viz.load_anatomy().part_names
    assert set(np.unique(default.meshes["c5"].cell_data["part"])) == set(range(len(names)))
    # the disc meets the endplates of the geometry drawn
    np.testing.assert_allclose(default.meshes["disc"].points[:viz.RING],
                               viz.load_anatomy().endplate("C6", "superior"), atol=1e-12)
    a = _png(viz.render(r, tmp_path / "a.png", size=SIZE))
    b = _png(viz.render(r, tmp_path / "b.png", size=SIZE, geometry="simple"))
    assert np.any(np.abs(a - b) > 1 / 255, axis=-1).mean() > MIN_DIFF_FRACTION
    with pytest.raises(ValueError, match="geometry must be one of anatomical, simple"):
        viz.build_scene(r, geometry="bones")


def test_cli_render_geometry(tmp_path, capsys):
    out = tmp_path / "flx.png"
    assert cli.main(["render", "FLX", "-o", str(out), "--size", "200", "150",
                     "--geometry", "simple"]) == 0
    assert _png(out).shape == (150, 200, 3)
    capsys.readouterr()
    assert cli.main(["render", "FLX", "--geometry", "skeleton"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "invalid choice: 'skeleton'" in err


@pytest.mark.parametrize("geometry", ["anatomical", "simple"])
def test_export_either_geometry(results, tmp_path, geometry):
    path = viz.export(results["EXT"], tmp_path / "ext.vtm", geometry=geometry)
    back = pv.read(str(path))
    assert back["c6"].n_points == len(viz.resolve_geometry(geometry).surface(
        results["EXT"].model, "C6").points)


def test_grid_titles_put_the_limit_flag_on_its_own_line(model):
    far = segment.solve(model, segment.LOAD_CASES["FLX"].scaled(15))
    assert not far.intact
    short = _title(far, short=True)
    assert short.endswith("\n[BEYOND LIMITS]") and "  [" not in short
    assert _title(far).endswith("  [BEYOND LIMITS]")


def test_cut_ligaments_are_not_drawn_and_the_state_is_named():
    """A ligament cut in a clinical state is gone from the scene (a tube collapsed onto its C6
    insertion), and the legend names the state and the cut ligaments."""
    model = segment.c5c6(state="laminectomy")
    r = segment.solve(model, segment.LOAD_CASES["FLX"])
    scene = viz.build_scene(r)
    lig = scene.meshes["ligaments"]
    ids = lig.cell_data["ligament"]
    for k, s in enumerate(r.state.ligaments):
        pts = lig.extract_cells(np.flatnonzero(ids == k)).points
        extent = np.ptp(pts, axis=0).max()
        assert (extent < 1e-9) == (s.name in ("FL", "ISL")), s.name
    assert "clinical state: laminectomy" in scene.facet_text
    assert "cut (not drawn): FL, ISL" in scene.facet_text
