"""The notebook and browser explorer: session, web server, headless Chromium, notebook cell.

The browser tests drive Debian's chromium (installed by scripts/setup.sh with the test tools)
through Playwright; they skip with the reason when it is absent (a core-only install).
"""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import numpy as np
import pytest

import segment
from segment.views import session as session_mod
from segment.views import web
from segment.views._chromium import chromium_path
from segment.views.parts import SceneParts
from segment.views.session import CONTROLS, ExplorerSession, tension_color

POSE_ATOL = 1e-7          # the page's pose is the solved one, sent with 9 decimals
TABLE_DIGITS = 3          # the table prints q with 3 decimals
SERVER_TIMEOUT_S = 90     # the CLI server stops by itself after this
MIN_CHANGED_PIXELS = 0.002


@pytest.fixture(scope="module")
def flx(model):
    return segment.solve(model, segment.LOAD_CASES["FLX"])


# ---------------------------------------------------------------- session
def test_slider_gives_the_equilibrium_solve_gives(model, flx):
    s = ExplorerSession({"intact": model})
    r = s.update(My_Nm=1.8)
    assert r.converged and s.case == "custom"
    np.testing.assert_allclose(r.q, flx.q, atol=1e-9)
    assert s.displacement_si()["phi_y_deg"] == pytest.approx(
        np.degrees(flx.displacement_from_unloaded[4]), abs=1e-6)
    frame = s.frame()
    p, R = flx.pose_c6
    np.testing.assert_allclose(frame["c5"]["p"], p, atol=POSE_ATOL)
    np.testing.assert_allclose(frame["c5"]["R"], R, atol=POSE_ATOL)
    assert "phi_y = +2.57 deg from unloaded" in frame["title"]
    assert 'data-q="phi_y">+2.566<' in frame["table_html"]
    json.dumps(frame, allow_nan=False)        # JSON-ready, no NaN


def test_cases_scales_models_and_magnification(model):
    posterior = segment.c5c6(ligaments=("ALL", "PLL"), facets=False)
    s = ExplorerSession({"intact": model, "posterior removed": posterior})
    s.update(case="EXT")
    assert s.values["My_Nm"] == pytest.approx(-1.8) and s.case == "EXT"
    ext = s.result.q[4]
    s.update(disc_scale=2.0)
    assert ext < s.result.q[4] < 0            # a stiffer disc turns less
    s.update(disc_scale=1.0, ligament_scale=3.0, case="FLX")
    stiff_flx = s.result.q[4]
    s.update(ligament_scale=1.0)
    assert 0 < stiff_flx < s.result.q[4]      # stiffer ligaments: less flexion
    expected = segment.solve(model.replace(ligaments=tuple(
        type(x)(**{**x.__dict__, "curve": segment.TrilinearCurve(x.curve.strain,
                                                                 3.0 * x.curve.force)})
        for x in model.ligaments)), segment.LOAD_CASES["FLX"])
    np.testing.assert_allclose(stiff_flx, expected.q[4], atol=1e-9)
    s.update(model="posterior removed")
    assert s.result.converged and s.result.q[4] > 2 * s.update(model="intact").q[4]
    s.update(model="posterior removed")
    assert s.scene()["facets"] == [] and s.frame()["arrows"] == []
    # magnification: display only, the pose and the numbers are unchanged
    q = s.result.q.copy()
    s.update(magnify=10)
    np.testing.assert_array_equal(s.result.q, q)
    f = s.frame()
    q_u = s.result.q_unloaded
    mag_p, _ = segment.elements.kinematics.pose(q_u + 10 * (q - q_u), s.model.reference)
    np.testing.assert_allclose(f["c5_magnified"]["p"], mag_p, atol=POSE_ATOL)
    assert "x10" in f["magnify_text"]


@pytest.mark.parametrize("changes, message", [
    ({"Mw": 1.0}, "unknown control 'Mw'"),
    ({"My_Nm": "a lot"}, "My_Nm must be a number"),
    ({"My_Nm": float("nan")}, "My_Nm must be finite"),
    ({"disc_scale": 0.0}, "disc_scale must be > 0"),
    ({"magnify": 0.5}, "magnify must be a number >= 1"),
    ({"case": "FLY"}, "unknown load case 'FLY'"),
    ({"model": "broken"}, "unknown model 'broken'"),
    ({"geometry": "bones"}, "unknown geometry 'bones'; known: anatomical, simple"),
])
def test_bad_controls_are_named(model, changes, message):
    s = ExplorerSession(model)
    with pytest.raises(ValueError, match=message):
        s.update(**changes)


def test_geometry_menu_switches_the_bones_without_solving(model):
    """The display geometry is a menu: a new scene, the same equilibrium (not re-solved)."""
    from segment.views.anatomy import load_anatomy
    from segment.views.geometry import load_geometry

    s = ExplorerSession({"intact": model})
    r = s.update(case="FLX")
    first, pose = s.scene(), s.frame()["c5"]
    assert s.controls()["geometries"] == ["anatomical", "simple"]
    assert first["key"] == "intact/anatomical" and first["geometry"] == "anatomical"
    assert len(first["c6"]["points"]) == 3 * len(load_anatomy().surface(model, "C6").points)
    assert s.update(geometry="simple") is r                     # nothing solved
    second = s.scene()
    assert second["key"] == "intact/simple" and s.frame()["geometry"] == "simple"
    assert len(second["c6"]["points"]) == 3 * len(load_geometry().surface(model, "C6").points)
    assert s.frame()["c5"] == pose                               # the same pose drawn
    json.dumps(second, allow_nan=False)
    assert ExplorerSession(model, geometry="simple").scene()["key"] == "model/simple"


def test_warm_start_falls_back_to_a_fresh_solve(model, monkeypatch, flx):
    """A warm start that fails is solved again from scratch, as segment.solve does."""
    real = session_mod.solve
    calls = []

    def flaky(m, load, *, q0=None):
        calls.append(q0 is not None)
        r = real(m, load, q0=q0)
        return r.__class__(**{**r.__dict__, "converged": False}) if q0 is not None else r

    s = ExplorerSession(model)
    monkeypatch.setattr(session_mod, "solve", flaky)
    r = s.update(My_Nm=1.8)
    assert calls == [True, False] and s.warm_failures == 1
    np.testing.assert_allclose(r.q, flx.q, atol=1e-9)


def test_not_converged_and_beyond_limits_are_said_plainly(model, monkeypatch):
    s = ExplorerSession(model)
    s.update(case="FLX")
    s.update(My_Nm=3.0, ligament_scale=0.25)
    beyond = segment.solve(s.model, s.load)
    assert not beyond.intact
    assert s.status_text().startswith("BEYOND LIMITS")
    assert "BEYOND LIMITS" in s.table_html() and "[BEYOND LIMITS]" in s.frame()["title"]
    real = session_mod.solve

    def failing(m, load, *, q0=None):
        r = real(m, load, q0=q0)
        return r.__class__(**{**r.__dict__, "converged": False})

    monkeypatch.setattr(session_mod, "solve", failing)
    s.update(My_Nm=1.0)
    assert s.status_text().startswith("NOT CONVERGED")
    assert "NOT CONVERGED" in s.table_html() and "[NOT CONVERGED]" in s.frame()["title"]


def test_tension_colours_follow_matplotlibs_plasma():
    cm = pytest.importorskip("matplotlib").colormaps["plasma"]
    for t in np.linspace(0.01, 1.0, 23):
        got = tension_color(60 * t, (0, 60))
        rgb = np.array([int(got[i:i + 2], 16) for i in (1, 3, 5)]) / 255
        np.testing.assert_allclose(rgb, cm(t)[:3], atol=0.04)
    assert tension_color(0.0, (0, 60)) == segment.views.style.SLACK_COLOR


def test_controls_cover_the_six_loads_scales_and_magnification():
    names = [c.name for c in CONTROLS]
    assert names[:6] == ["Fx_N", "Fy_N", "Fz_N", "Mx_Nm", "My_Nm", "Mz_Nm"]
    assert {"disc_scale", "ligament_scale", "magnify"} <= set(names)
    my = next(c for c in CONTROLS if c.name == "My_Nm")
    assert my.low <= 0 < 1.8 <= my.high
    assert abs(1.8 / my.step - round(1.8 / my.step)) < 1e-9     # 1.8 N m is a slider stop


# ---------------------------------------------------------------- web server (HTTP)
@pytest.fixture
def server(model):
    srv = web.start({"intact": model}, port=0)
    yield srv
    srv.shutdown()
    srv.server_close()


def _post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_server_serves_the_page_assets_and_api(server, flx):
    assert server.server_address[0] == "127.0.0.1"
    with urllib.request.urlopen(server.url, timeout=30) as r:
        page = r.read().decode()
    assert "explorer.js" in page and "http://" not in page and "https://" not in page
    for asset in ("explorer.js", "three.module.min.js"):
        with urllib.request.urlopen(server.url + asset, timeout=30) as r:
            assert r.headers["Content-Type"].startswith("text/javascript")
            text = r.read().decode()
            assert "https://cdn" not in text and "unpkg" not in text
    with urllib.request.urlopen(server.url + "api/init", timeout=30) as r:
        init = json.loads(r.read())
    assert init["frame"]["case"] == "unloaded" and init["scene"]["key"] == "intact/anatomical"
    assert init["controls"]["geometries"] == ["anatomical", "simple"]
    status, out = _post(server.url + "api/update", {"changes": {"My_Nm": 1.8},
                                                    "scene_key": "intact/anatomical"})
    assert status == 200 and "scene" not in out
    assert out["frame"]["q_from_unloaded"]["phi_y_deg"] == pytest.approx(
        np.degrees(flx.displacement_from_unloaded[4]), abs=1e-6)
    status, out = _post(server.url + "api/update", {"changes": {"geometry": "simple"},
                                                    "scene_key": "intact/anatomical"})
    assert status == 200 and out["scene"]["key"] == "intact/simple"     # a new scene
    status, out = _post(server.url + "api/update", {"changes": {"Mw": 1}})
    assert status == 400 and "unknown control 'Mw'" in out["error"]
    status, out = _post(server.url + "api/nothing", {})
    assert status == 404


# ---------------------------------------------------------------- headless Chromium
needs_chromium = pytest.mark.skipif(
    chromium_path() is None,
    reason="Debian's chromium is not installed (scripts/setup.sh installs it with [dev])")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(url, deadline_s=60.0):
    t0 = time.monotonic()
    while time.monotonic() - t0 < deadline_s:
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"{url} did not answer within {deadline_s} s")


def _png(data):
    import io

    import matplotlib.image

    return matplotlib.image.imread(io.BytesIO(data), format="png")[..., :3]


@needs_chromium
def test_browser_flexion_slider_shows_the_nominal_flx_equilibrium(flx, tmp_path):
    """`segment explore --web --port P`; move the FLX moment slider from 0 to 1.8 N m in
    headless Chromium: the title, the table and C5's drawn pose are segment.solve's; the bones
    drawn are the anatomical geometry's, and the bones menu swaps in the simple one."""
    pytest.importorskip("playwright")
    from segment.views._chromium import headless_page

    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "segment.cli", "explore", "--web", "--port",
                             str(port), "--timeout", str(SERVER_TIMEOUT_S)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = f"http://127.0.0.1:{port}/"
        _wait_for(url)
        with headless_page(width=1400, height=900) as page:
            errors = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("requestfailed", lambda r: errors.append(f"request failed: {r.url}"))
            page.goto(url)
            page.wait_for_function("globalThis.__segmentExplorer?.ready === true",
                                   timeout=30000)
            assert page.inner_text("td[data-q=phi_y]") == "+0.000"
            before = _png(page.screenshot())
            (tmp_path / "before.png").write_bytes(page.screenshot())
            slider = page.locator("input[data-control=My_Nm]")
            assert slider.input_value() == "0"
            slider.fill("1.8")          # a range input: sets the value, fires input
            page.wait_for_function("document.querySelector('.title').dataset.seq >= 1",
                                   timeout=30000)
            page.wait_for_timeout(200)
            after_png = page.screenshot()
            (tmp_path / "after.png").write_bytes(after_png)
            expected = np.degrees(flx.displacement_from_unloaded[4])
            assert page.inner_text("td[data-q=phi_y]") == f"{expected:+.{TABLE_DIGITS}f}"
            assert "phi_y = +2.57 deg from unloaded" in page.inner_text(".title")
            assert page.inner_text(".status") == f"converged in {flx.iterations} iterations" \
                or page.inner_text(".status").startswith("converged")
            # the pose drawn: C5's matrix in the three.js scene (column-major 4 x 4)
            m = np.array(page.evaluate("globalThis.__segmentExplorer.view.c5Matrix()"))
            M = m.reshape(4, 4).T
            p, R = flx.pose_c6
            np.testing.assert_allclose(M[:3, :3], R, atol=1e-6)      # float32 in the page
            np.testing.assert_allclose(M[:3, 3], p, atol=1e-4)
            tension = float(page.inner_text("td[data-ligament=FL]"))
            fl = next(s for s in flx.state.ligaments if s.name == "FL")
            assert tension == pytest.approx(fl.tension, abs=0.05)
            # the bones drawn are the anatomical geometry's meshes, as the server built them
            anatomical, simple = (SceneParts(flx.model, geometry=g) for g in
                                  ("anatomical", "simple"))
            info = page.evaluate("globalThis.__segmentExplorer.view.meshInfo()")
            assert info["key"] == "intact/anatomical"
            for name, surface in (("c6", anatomical._c6), ("c5", anatomical._c5)):
                assert info[name] == [len(surface.points), len(surface.tris)], name
            # the bones menu: the simple geometry, the same pose
            seq = int(page.get_attribute(".title", "data-seq"))
            page.locator("select[data-control=geometry]").select_option("simple")
            page.wait_for_function(f"document.querySelector('.title').dataset.seq > {seq}",
                                   timeout=30000)
            page.wait_for_timeout(200)
            simple_png = page.screenshot()
            (tmp_path / "simple.png").write_bytes(simple_png)
            info = page.evaluate("globalThis.__segmentExplorer.view.meshInfo()")
            assert info["key"] == "intact/simple"
            assert info["c6"] == [len(simple._c6.points), len(simple._c6.tris)]
            m2 = np.array(page.evaluate("globalThis.__segmentExplorer.view.c5Matrix()"))
            np.testing.assert_allclose(m2, m, atol=1e-7)
            assert page.inner_text("td[data-q=phi_y]") == f"{expected:+.{TABLE_DIGITS}f}"
            assert not errors, errors
        after = _png(after_png)
        assert after.std() * 255 > 5                     # not blank
        changed = np.any(np.abs(after - before) > 2 / 255, axis=-1).mean()
        assert changed > MIN_CHANGED_PIXELS               # the picture moved
        swapped = np.any(np.abs(_png(simple_png) - after) > 2 / 255, axis=-1).mean()
        assert swapped > MIN_CHANGED_PIXELS               # other bones drawn
    finally:
        proc.terminate()
        proc.wait(timeout=30)


# ---------------------------------------------------------------- notebook cell
def test_notebook_cell_builds_the_widget(tmp_path):
    """Run the widget cell of notebooks/09_explorer.ipynb in a kernel: its result is the
    widget, with its state (the three.js view holding the FLX frame) stored."""
    nbformat = pytest.importorskip("nbformat")
    from nbclient import NotebookClient

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    nb = nbformat.read(os.path.join(root, "notebooks", "09_explorer.ipynb"), as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "code" and "segment.explore(" in c.source)
    small = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell.source)])
    client = NotebookClient(small, timeout=300, kernel_name="python3", store_widget_state=True)
    client.execute()
    out = small.cells[0].outputs
    view = next(o for o in out if o.output_type == "execute_result")
    assert "application/vnd.jupyter.widget-view+json" in view.data
    state = small.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    frames = [w["state"]["frame"] for w in state.values() if "frame" in w["state"]]
    assert len(frames) == 1 and frames[0]["case"] == "FLX"
    assert "phi_y = +2.57 deg from unloaded" in frames[0]["title"]
    sliders = {w["state"].get("description"): w["state"].get("value") for w in state.values()}
    assert sliders["My [N m] (+ flexion)"] == pytest.approx(1.8)


def test_notebook_widget_has_the_bones_menu(model):
    pytest.importorskip("anywidget")
    from segment.views.notebook import ExplorerWidget

    w = ExplorerWidget({"intact": model})
    assert w.geometry.value == "anatomical" and w.view.scene["key"] == "intact/anatomical"
    w.set(case="FLX")
    pose = w.view.frame["c5"]
    w.geometry.value = "simple"                   # as a user picks it in the menu
    assert w.session.geometry_name == "simple" and w.view.scene["key"] == "intact/simple"
    assert w.view.frame["c5"] == pose and w.view.frame["geometry"] == "simple"
