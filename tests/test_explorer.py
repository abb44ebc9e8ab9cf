"""The notebook and browser explorer: session, web server, headless Chromium, notebook cell.

The browser tests drive Debian's chromium (installed by scripts/setup.sh with the test tools)
through Playwright; they skip with the reason when it is absent (a core-only install).
"""

import json
import logging
import os
import re
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
TOKEN_HEADER = "X-Segment-Token"    # the page's header (segment.views.guard.TOKEN_HEADER)
BODY_CAP = 1 << 16                  # request body limit [bytes] (guard.MAX_BODY_BYTES)


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


# ---------------------------------------------------------------- session: all or nothing
def _snapshot(s):
    """What a session shows: controls, model, state, case, result."""
    return (dict(s.values), s.case, s.model_name, getattr(s, "state", None), s.geometry_name,
            s.model, s.result, s.seq)


@pytest.mark.parametrize("changes, message", [
    ({"My_Nm": 1e308}, "My_Nm must be between -3 and 3"),          # inf N mm inside
    ({"disc_scale": 1e-300}, "disc_scale must be between 0.25 and 4"),   # a zero disc
    ({"magnify": 1e9}, "magnify must be between 1 and 50"),
])
def test_a_refused_value_never_enters_the_session(model, changes, message):
    """The reviewer's case: a value refused used to stay in the session, so that every later
    change failed too. Now it is refused before anything changes."""
    s = ExplorerSession(model)
    s.update(case="FLX")
    before = _snapshot(s)
    with pytest.raises(ValueError, match=message):
        s.update(**changes)
    assert _snapshot(s) == before
    r = s.update(Fx_N=1.0)                        # a later change works
    assert r.converged and s.values["Fx_N"] == 1.0 and s.values["My_Nm"] == pytest.approx(1.8)


@pytest.mark.parametrize("changes, message", [
    ({"My_Nm": 1.0, "Mw": 2.0}, "unknown control 'Mw'"),             # valid, then unknown
    ({"case": "FLX", "model": "nope"}, "unknown model 'nope'"),
    ({"state": "laminectomy", "disc_scale": 0.0}, "disc_scale must be > 0"),
    ({"geometry": "simple", "My_Nm": "1"}, "My_Nm must be a number, got '1'"),
])
def test_an_update_is_applied_whole_or_not_at_all(model, changes, message):
    s = ExplorerSession(model)
    before = _snapshot(s)
    with pytest.raises(ValueError, match=message):
        s.update(**changes)
    assert _snapshot(s) == before


@pytest.mark.parametrize("changes, message", [
    ({"case": ["FLX"]}, r"case must be a load case name \(a string\), got \['FLX'\]"),
    ({"model": {"a": 1}}, r"model must be a model name \(a string\), got \{'a': 1\}"),
    ({"state": 3}, r"state must be a clinical state name \(a string\), got 3"),
    ({"geometry": None}, r"geometry must be a geometry name \(a string\), got None"),
    ({"My_Nm": True}, "My_Nm must be a number, got True"),
    ({"Fx_N": [1.0]}, r"Fx_N must be a number, got \[1.0\]"),
    ({"self": 1.0}, "unknown control 'self'"),
])
def test_wrong_types_are_refused_by_name(model, changes, message):
    """Not a TypeError from deep inside (``case`` as a list used to be 'unhashable type')."""
    s = ExplorerSession(model)
    with pytest.raises(ValueError, match=message):
        s.update(**changes)


# ---------------------------------------------------------------- clinical states, population
def test_state_menu_offers_the_clinical_states_of_states_csv(model):
    from segment.core.states_table import state_names

    s = ExplorerSession({"intact": model})
    assert s.controls()["states"] == ["intact", *state_names()]
    assert s.controls()["state"] == "intact" and s.frame()["state"] == "intact"
    s.update(case="FLX")
    r = s.update(state="laminectomy")
    expected = segment.solve(model.with_state("laminectomy"), segment.LOAD_CASES["FLX"])
    np.testing.assert_allclose(r.q, expected.q, atol=1e-9)
    assert s.model.clinical_label == "laminectomy"
    assert s.scene_key == "intact+laminectomy/anatomical"
    assert s.frame()["title"].startswith("laminectomy: FLX")
    cut = {x["name"]: x["cut"] for x in s.frame()["ligaments"]}
    assert cut == {"ALL": 0.0, "PLL": 0.0, "FL": 1.0, "ISL": 1.0, "CL-left": 0.0,
                   "CL-right": 0.0}                      # the page hides FL and ISL
    assert "<td>cut</td>" in s.table_html()
    s.update(state="facetectomy-left-25")
    assert "<td>25 % cut</td>" in s.table_html()
    # a removed facet is not drawn, a state combines with the scales
    s.update(state="facetectomy-right-100", disc_scale=2.0)
    assert s.scene()["facets"] == ["left"] and [a["side"] for a in s.frame()["arrows"]] == [
        "left"]
    twice = segment.solve(model.with_state("facetectomy-right-100").replace(
        disc=model.disc.scaled(2.0)), segment.LOAD_CASES["FLX"])
    np.testing.assert_allclose(s.result.q, twice.q, atol=1e-9)
    s.update(state="intact", disc_scale=1.0)
    np.testing.assert_allclose(s.result.q, segment.solve(model, segment.LOAD_CASES["FLX"]).q,
                               atol=1e-9)
    assert s.scene()["facets"] == ["left", "right"]
    with pytest.raises(ValueError, match="unknown clinical state 'laminectomy-c4'; known: "
                                         "intact, laminectomy"):
        s.update(state="laminectomy-c4")


def test_initial_state_may_combine_states(model):
    both = "laminectomy+facetectomy-right-100"
    s = ExplorerSession(model, state=both)
    assert s.controls()["states"][-1] == both and s.state == both
    expected = segment.solve(model.with_state(both), s.load)
    np.testing.assert_allclose(s.result.q, expected.q, atol=1e-12)
    with pytest.raises(ValueError, match="unknown clinical state 'ghost'"):
        ExplorerSession(model, state="ghost")


def _population(folder, factors):
    """A population folder as ``segment calibrate --curves --each`` writes it: one data
    folder per member; member k has the disc's rotational stiffnesses x factors[k]."""
    import csv
    import shutil

    from segment.core.io import data_dir

    for name, factor in factors.items():
        member = folder / name
        member.mkdir(parents=True)
        for path in data_dir().glob("*.csv"):
            shutil.copy(path, member / path.name)
        table = member / "disc_rotational.csv"
        with open(table, newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        for row in rows:
            row["k_Nm_per_deg"] = f"{float(row['k_Nm_per_deg']) * factor:.6g}"
        with open(table, "w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
    return folder


def test_cli_model_menu_lists_the_population_members(tmp_path, model):
    import argparse

    from segment.cli._common import UsageError
    from segment.cli.views import explorer_models

    folder = _population(tmp_path / "pop", {"S1": 1.0, "S2": 1.5})
    args = argparse.Namespace(data=None, allow_implausible=False, population=str(folder))
    models = explorer_models(args)
    assert list(models) == ["published", "S1", "S2"]
    s = ExplorerSession(models)
    flx = {name: s.update(model=name, case="FLX").q[4] for name in models}
    assert flx["S1"] == pytest.approx(flx["published"], abs=1e-12)
    assert 0 < flx["S2"] < flx["published"]           # a stiffer disc flexes less
    s.update(state="laminectomy")
    assert s.model.clinical_label == "laminectomy" and s.scene_key.startswith("S2+laminectomy")
    with pytest.raises(UsageError, match="no such folder"):
        explorer_models(argparse.Namespace(data=None, allow_implausible=False,
                                           population=str(tmp_path / "none")))


@pytest.mark.slow
def test_cli_explore_refuses_an_unknown_state_in_one_line():
    proc = subprocess.run([sys.executable, "-m", "segment.cli", "explore", "--web", "--port",
                           "0", "--timeout", "5", "--state", "laminectomy-c4"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "unknown clinical state 'laminectomy-c4'" in lines[0]


# ---------------------------------------------------------------- web server (HTTP)
@pytest.fixture
def server(model):
    srv = web.start({"intact": model}, port=0)
    yield srv
    srv.shutdown()
    srv.server_close()


def _post(url, body, token=None):
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers[TOKEN_HEADER] = token
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def _get_json(url, token=None):
    req = urllib.request.Request(url, headers={} if token is None else {TOKEN_HEADER: token})
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
    token = server.gate.token
    assert f'content="{token}"' in page                  # the page carries this start's token
    status, init = _get_json(server.url + "api/init", token)
    assert status == 200
    assert init["frame"]["case"] == "unloaded" and init["scene"]["key"] == "intact/anatomical"
    assert init["controls"]["geometries"] == ["anatomical", "simple"]
    status, out = _post(server.url + "api/update", {"changes": {"My_Nm": 1.8},
                                                    "scene_key": "intact/anatomical"}, token)
    assert status == 200 and "scene" not in out
    assert out["frame"]["q_from_unloaded"]["phi_y_deg"] == pytest.approx(
        np.degrees(flx.displacement_from_unloaded[4]), abs=1e-6)
    status, out = _post(server.url + "api/update", {"changes": {"geometry": "simple"},
                                                    "scene_key": "intact/anatomical"}, token)
    assert status == 200 and out["scene"]["key"] == "intact/simple"     # a new scene
    status, out = _post(server.url + "api/update", {"changes": {"Mw": 1}}, token)
    assert status == 400 and "unknown control 'Mw'" in out["error"]
    status, out = _post(server.url + "api/nothing", {}, token)
    assert status == 404


# ---------------------------------------------------------------- web server: who is heard
RAW_TIMEOUT_S = 20       # a raw-socket test gives up after this (the server answers in < 2 s)
SHORT_READ_TIMEOUT_S = 0.5


def _raw(server, request: bytes, *, timeout=RAW_TIMEOUT_S):
    """Send ``request`` as is on a new connection; return (status, JSON body) of the answer,
    (None, None) when the server closed the connection without one."""
    port = server.server_address[1]
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(request)
        data = b""
        while True:
            try:
                chunk = sock.recv(1 << 16)
            except ConnectionResetError:
                break
            if not chunk:
                break
            data += chunk
    if not data:
        return None, None
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, json.loads(body)


def _token(server):
    """The server's token (None from a server without one: these helpers also measure the
    explorer before issue 31, see scripts/reliability_census.py)."""
    return getattr(getattr(server, "gate", None), "token", None)


def _request(server, method="POST", path="/api/update", *, body=b"", headers=None,
             host=None, token=True, content_length=True):
    port = server.server_address[1]
    h = {"Host": host or f"127.0.0.1:{port}"}
    if method == "POST":
        h["Content-Type"] = "application/json"
    if token and _token(server):
        h[TOKEN_HEADER] = _token(server)
    if content_length and method == "POST":
        h["Content-Length"] = str(len(body))
    h.update(headers or {})
    lines = [f"{method} {path} HTTP/1.1", *(f"{k}: {v}" for k, v in h.items() if v is not None)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def _state(server):
    s = server.session
    return dict(s.values), s.case, s.model_name, getattr(s, "state", None), s.seq


UPDATE = json.dumps({"changes": {"My_Nm": 1.8}}).encode()


@pytest.fixture
def quiet_server(model, caplog):
    """A server on 127.0.0.1 whose log is captured (INFO and above)."""
    caplog.set_level(logging.INFO, logger="segment.views.web")
    srv = web.start({"intact": model}, port=0)
    yield srv
    srv.shutdown()
    srv.server_close()


@pytest.mark.parametrize("name, request_of, status, words", [
    ("Content-Length not a number",
     lambda s: _request(s, body=UPDATE, headers={"Content-Length": "abc"}), 400,
     "Content-Length must be a number of bytes"),
    ("negative Content-Length",
     lambda s: _request(s, body=UPDATE, headers={"Content-Length": "-5"}), 400,
     "Content-Length must be a number of bytes"),
    ("Content-Length -1 (read until the client closes)",
     lambda s: _request(s, body=UPDATE, headers={"Content-Length": "-1"}), 400,
     "Content-Length must be a number of bytes"),
    ("Content-Length with a sign",
     lambda s: _request(s, body=UPDATE, headers={"Content-Length": f"+{len(UPDATE)}"}), 400,
     "Content-Length must be a number of bytes"),
    ("two different Content-Lengths",
     lambda s: _request(s, body=UPDATE, headers={"Content-Length": None}).replace(
         b"\r\n\r\n", f"\r\nContent-Length: {len(UPDATE)}\r\nContent-Length: 3\r\n\r\n"
         .encode(), 1), 400, "conflicting Content-Length headers"),
    ("no Content-Length",
     lambda s: _request(s, body=b"", content_length=False), 411, "Content-Length is required"),
    ("chunked body",
     lambda s: _request(s, body=b"5\r\n{}\r\n0\r\n\r\n", content_length=False,
                        headers={"Transfer-Encoding": "chunked"}), 411, "Transfer-Encoding"),
    ("body over the cap",
     lambda s: _request(s, headers={"Content-Length": str(BODY_CAP + 1)}), 413,
     "over the limit"),
    ("JSON nested 60,000 deep", lambda s: _request(s, body=b"[" * 60_000), 400,
     "JSON nested 60000 deep, over the limit of 8"),
    ("JSON objects nested 9 deep",
     lambda s: _request(s, body=b'{"changes": ' + b'{"a": ' * 8 + b"1" + b"}" * 9), 400,
     "JSON nested 9 deep"),
    ("body over the cap, sent", lambda s: _request(s, body=b" " * (BODY_CAP + 1)),
     413, "over the limit"),
    ("case as a list",
     lambda s: _request(s, body=b'{"changes": {"case": ["FLX"]}}'), 400,
     "case must be a load case name (a string)"),
    ("model as an object",
     lambda s: _request(s, body=b'{"changes": {"model": {"a": 1}}}'), 400,
     "model must be a model name (a string)"),
    ("not JSON", lambda s: _request(s, body=b"{changes"), 400, "not JSON"),
    ("NaN", lambda s: _request(s, body=b'{"changes": {"My_Nm": NaN}}'), 400,
     "NaN is not a JSON number"),
    ("not UTF-8", lambda s: _request(s, body=b'{"changes": {"case": "\xff"}}'), 400,
     "not UTF-8"),
    ("an array", lambda s: _request(s, body=b"[1, 2]"), 400, "must be a JSON object"),
    ("an unknown field", lambda s: _request(s, body=b'{"changes": {}, "then": 1}'), 400,
     "unknown field(s) 'then'"),
    ("changes not an object", lambda s: _request(s, body=b'{"changes": [1]}'), 400,
     "'changes' must be an object"),
    ("empty body", lambda s: _request(s, body=b""), 400, "empty request body"),
    ("GET of the update", lambda s: _request(s, "GET"), 405, "api/update takes POST"),
    ("unknown method", lambda s: _request(s, "PUT"), 501, "Unsupported method"),
    ("request line too long", lambda s: b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n", 414,
     "URI Too Long"),
    ("a bad request line", lambda s: b"HELLO\r\n\r\n", 400, "Bad request"),
])
def test_malformed_requests_are_answered_in_json_and_logged_once(
        quiet_server, caplog, capfd, name, request_of, status, words):
    """Each malformed request gets its 4xx and one line of JSON; the session is unchanged;
    the server logs it once, without a traceback (``case`` as a list, ``model`` as an
    object, deep JSON and ``Content-Length: abc`` used to drop the connection and print a
    traceback)."""
    before = _state(quiet_server)
    got, body = _raw(quiet_server, request_of(quiet_server))
    assert (got, words in (body or {}).get("error", "")) == (status, True), (name, body)
    assert _state(quiet_server) == before
    records = [r for r in caplog.records if r.name == "segment.views.web"
               and r.levelno >= logging.INFO]
    assert len(records) == 1 and records[0].levelno == logging.INFO and not records[0].exc_info
    assert "Traceback" not in capfd.readouterr().err


def test_an_update_with_one_bad_control_changes_nothing(quiet_server):
    token = _token(quiet_server)
    status, out = _post(quiet_server.url + "api/update", {"changes": {"My_Nm": 1.0,
                                                                      "Mw": 2}}, token)
    assert status == 400 and "unknown control 'Mw'" in out["error"]
    assert quiet_server.session.values["My_Nm"] == 0.0 and quiet_server.session.case == \
        "unloaded"
    for bad in ({"My_Nm": 1e308}, {"disc_scale": 1e-300}):
        status, out = _post(quiet_server.url + "api/update", {"changes": bad}, token)
        assert status == 400, out
    status, out = _post(quiet_server.url + "api/update", {"changes": {"Fx_N": 1.0}}, token)
    assert status == 200 and out["frame"]["values"]["Fx_N"] == 1.0     # later changes work


@pytest.mark.parametrize("host", ["evil.example:{port}", "127.0.0.1.nip.io:{port}",
                                  "127.0.0.1:{other}", "localhost", "[::1]:{port}", None])
def test_a_foreign_host_header_is_refused(quiet_server, host):
    """DNS rebinding: a page whose name now points to 127.0.0.1 sends its own name as Host."""
    port = quiet_server.server_address[1]
    before = _state(quiet_server)
    request = _request(quiet_server, body=UPDATE,
                       host=None if host is None else host.format(port=port, other=port + 1))
    if host is None:        # no Host header at all
        request = request.replace(f"Host: 127.0.0.1:{port}\r\n".encode(), b"")
    status, body = _raw(quiet_server, request)
    assert status == 403 and "is not this server" in body["error"]
    page = _request(quiet_server, "GET", "/", host=(host or "x").format(port=port,
                                                                       other=port + 1))
    assert _raw(quiet_server, page)[0] == 403                 # nor the page (with its token)
    assert _state(quiet_server) == before


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST:{port}"])
def test_the_bound_address_and_localhost_are_heard(quiet_server, host):
    port = quiet_server.server_address[1]
    status, body = _raw(quiet_server, _request(quiet_server, body=UPDATE,
                                               host=host.format(port=port)))
    assert status == 200 and body["frame"]["values"]["My_Nm"] == 1.8


@pytest.mark.parametrize("headers, status, words", [
    ({"Origin": "http://127.0.0.1:1"}, 403, "cross-origin request refused"),
    ({"Origin": "http://evil.example"}, 403, "cross-origin request refused"),
    ({"Origin": "null"}, 403, "cross-origin request refused"),
    ({"Origin": "https://127.0.0.1:{port}"}, 403, "cross-origin request refused"),
    ({"Sec-Fetch-Site": "cross-site"}, 403, "cross-origin request refused"),
    ({"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:{port}"}, 403,
     "cross-origin request refused"),
    ({TOKEN_HEADER: None}, 403, "missing or wrong X-Segment-Token"),
    ({TOKEN_HEADER: "guess"}, 403, "missing or wrong X-Segment-Token"),
    # the CSRF form: a page may POST text/plain without asking (no preflight)
    ({"Content-Type": "text/plain", TOKEN_HEADER: None}, 403, "X-Segment-Token"),
    ({"Content-Type": "text/plain"}, 415, "Content-Type must be application/json"),
    ({"Content-Type": "application/x-www-form-urlencoded"}, 415, "application/json"),
])
def test_updates_only_from_the_page_with_the_token_as_json(quiet_server, headers, status,
                                                           words):
    port = quiet_server.server_address[1]
    before = _state(quiet_server)
    headers = {k: v if v is None else v.format(port=port) for k, v in headers.items()}
    got, body = _raw(quiet_server, _request(quiet_server, body=UPDATE, headers=headers))
    assert got == status and words in body["error"]
    assert _state(quiet_server) == before
    # the same from the page itself: heard
    ok = _request(quiet_server, body=UPDATE, headers={"Origin": f"http://127.0.0.1:{port}",
                                                      "Sec-Fetch-Site": "same-origin"})
    assert _raw(quiet_server, ok)[0] == 200


def test_init_needs_the_token_and_the_page_gives_it(quiet_server, model):
    assert _get_json(quiet_server.url + "api/init")[0] == 403
    with urllib.request.urlopen(quiet_server.url, timeout=30) as r:
        page = r.read().decode()
        assert r.headers["X-Frame-Options"] == "DENY"
    token = re.search(r'name="segment-token" content="([^"]+)"', page).group(1)
    assert token == _token(quiet_server) and len(token) >= 40
    assert _get_json(quiet_server.url + "api/init", token)[0] == 200
    other = web.start({"intact": model}, port=0)          # a new start, a new token
    try:
        assert other.gate.token != token
    finally:
        other.shutdown()
        other.server_close()


@pytest.mark.slow
def test_a_stalled_client_is_timed_out(model, monkeypatch):
    """A client that stops sending (in the headers or in the body) no longer holds its
    thread forever: the server gives up after READ_TIMEOUT_S (408 within a body)."""
    monkeypatch.setattr(web, "READ_TIMEOUT_S", SHORT_READ_TIMEOUT_S, raising=False)
    srv = web.start({"intact": model}, port=0)
    try:
        port = srv.server_address[1]
        t0 = time.monotonic()
        with socket.create_connection(("127.0.0.1", port), timeout=RAW_TIMEOUT_S) as sock:
            sock.sendall(b"POST /api/update HTTP/1.1\r\nHost: 127.0.0.1\r\n")   # no end
            assert sock.recv(1024) == b""                  # closed by the server
        assert time.monotonic() - t0 < RAW_TIMEOUT_S / 2
        t0 = time.monotonic()
        half = _request(srv, body=UPDATE)[:-len(UPDATE) // 2]     # the body cut short
        status, body = _raw(srv, half)
        assert status == 408 and "not received within" in body["error"]
        assert time.monotonic() - t0 < RAW_TIMEOUT_S / 2
        assert srv.session.seq == 0
    finally:
        srv.shutdown()
        t0 = time.monotonic()
        srv.server_close()             # joins the handler threads: none is left hanging
        assert time.monotonic() - t0 < 5


@pytest.mark.slow
def test_connections_beyond_the_limit_are_answered_503(model, monkeypatch):
    monkeypatch.setattr(web, "MAX_CONNECTIONS", 2, raising=False)
    monkeypatch.setattr(web, "READ_TIMEOUT_S", 5.0, raising=False)
    srv = web.start({"intact": model}, port=0)
    idle = []
    try:
        port = srv.server_address[1]
        idle = [socket.create_connection(("127.0.0.1", port), timeout=RAW_TIMEOUT_S)
                for _ in range(2)]
        time.sleep(0.3)                                    # both accepted and waiting
        with socket.create_connection(("127.0.0.1", port), timeout=RAW_TIMEOUT_S) as sock:
            answer = sock.recv(4096)
        assert answer.startswith(b"HTTP/1.0 503") and b"too many connections" in answer
        for sock in idle:
            sock.close()
        time.sleep(0.3)
        assert _get_json(srv.url + "api/init", _token(srv))[0] == 200   # slots freed
    finally:
        for sock in idle:
            sock.close()
        srv.shutdown()
        srv.server_close()


@pytest.mark.parametrize("bug", [RuntimeError, ValueError])
def test_an_internal_error_is_a_500_in_json_logged_once_with_its_traceback(quiet_server,
                                                                           caplog,
                                                                           monkeypatch, bug):
    """Ours, not the client's: a ValueError outside the checks of a control (e.g. a NaN that
    JSON refuses) is a 500 too, not a 400."""
    def broken():
        raise bug("a bug")

    monkeypatch.setattr(quiet_server.session, "frame", broken)
    status, body = _post(quiet_server.url + "api/update", {"changes": {}},
                         _token(quiet_server))
    assert status == 500 and f"internal error ({bug.__name__})" in body["error"]
    assert "a bug" not in body["error"]                   # no internals to the client
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and errors[0].exc_info is not None


def test_gate_of_loopback_and_of_every_interface():
    from segment.views import guard
    from segment.views.guard import Gate, is_loopback

    assert (guard.TOKEN_HEADER, guard.MAX_BODY_BYTES) == (TOKEN_HEADER, BODY_CAP)
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5")
    loop = Gate.for_address("127.0.0.1", 8765)
    assert loop.loopback and loop.host_ok("localhost:8765") and not loop.host_ok("10.0.0.2:8765")
    assert loop.origin_ok("http://localhost:8765") and not loop.origin_ok("http://a.b:8765")
    every = Gate.for_address("0.0.0.0", 8765)
    assert not every.loopback and every.token != loop.token
    assert every.host_ok("192.168.1.5:8765") and every.host_ok("[fe80::1]:8765")
    assert not every.host_ok("rebind.example:8765") and not every.host_ok("192.168.1.5:80")
    assert every.host_ok(f"{socket.gethostname()}:8765")
    assert every.token not in repr(every)
    assert Gate.for_address("127.0.0.1", 80).host_ok("localhost")     # port 80 left out


@pytest.mark.slow
def test_bound_beyond_loopback_warns_and_the_page_needs_the_token(model, monkeypatch, caplog):
    """Tests listen on 127.0.0.1 only: the address is declared non-loopback to the gate."""
    from segment.views import guard

    monkeypatch.setattr(guard, "is_loopback", lambda host: False)
    caplog.set_level(logging.WARNING, logger="segment.views.web")
    lines = []
    srv = web.start({"intact": model}, port=0)
    try:
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1 and "not only on this machine" in warnings[0]
        assert "token" in warnings[0] and "not encrypted" in warnings[0]
        token = _token(srv)
        assert srv.page_url.endswith(f"/?token={token}")
        assert _get_json(srv.url)[0] == 403                        # the page without it
        assert _get_json(srv.url + "?token=guess")[0] == 403
        with urllib.request.urlopen(srv.page_url, timeout=30) as r:
            assert token in r.read().decode()
    finally:
        srv.shutdown()
        srv.server_close()
    web.serve({"intact": model}, port=0, timeout_s=0.2, announce=lines.append)
    assert len(lines) == 1 and "?token=" in lines[0]


def test_the_reliability_census_counts_the_explorer_inputs():
    """scripts/reliability_census.py --issue 31 (class J, made by hand: 12 s): every probe
    failed before issue 31 but the body cap, which the server had; none fails after."""
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("census", root / "scripts"
                                                  / "reliability_census.py")
    census = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(census)
    assert callable(census.run_issue31)
    results = root / "benchmarks" / "results"
    before, after = (json.loads((results / f"reliability_census_issue31_{w}.json").read_text())
                     for w in ("before", "after"))
    assert after["segment"]["this_checkout"] and not before["segment"]["this_checkout"]
    assert after["issue31"]["counts"] == {"J_explorer_inputs": {"probes": 23, "failed": 0}}
    assert before["issue31"]["counts"] == {"J_explorer_inputs": {"probes": 23, "failed": 22}}
    assert set(after["issue31"]["explorer"]) == set(before["issue31"]["explorer"])


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


@pytest.mark.slow
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
            assert info["key"] == "published/anatomical"
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
            assert info["key"] == "published/simple"
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



ATTACK_PAGE = """<!doctype html><meta charset="utf-8"><title>another site</title><script>
const target = "%s";
const body = JSON.stringify({changes: {My_Nm: 3, case: "custom"}});
globalThis.attempts = Promise.allSettled([
  // the CSRF of the reviewer: a simple request, sent without asking (text/plain, no-cors)
  fetch(target + "api/update", {method: "POST", mode: "no-cors", body}),
  fetch(target + "api/update", {method: "POST", mode: "no-cors", body,
                                headers: {"Content-Type": "application/json"}}),
  // with a guessed token: the custom header needs a preflight, which is never granted
  fetch(target + "api/update", {method: "POST", body,
                                headers: {"Content-Type": "application/json",
                                          "X-Segment-Token": "guess"}}),
  fetch(target + "api/init"),
]).then((rs) => rs.map((r) => r.status === "fulfilled" ? r.value.type + " " + r.value.status
                                                     : "rejected"));
</script>"""


def _serve_page(html_text):
    """Another site: ``html_text`` at / of a server on 127.0.0.1 (another port)."""
    import http.server
    import threading

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            data = html_text.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def _session_now(url, token):
    status, init = _get_json(url + "api/init", token)
    assert status == 200
    return init["frame"]["seq"], init["frame"]["values"], init["frame"]["case"]


@pytest.mark.slow
@needs_chromium
def test_browser_other_sites_and_foreign_hosts_change_nothing_and_the_page_works(tmp_path,
                                                                                 model):
    """`segment explore --web --population DIR` in headless Chromium.

    1. A page of another site (127.0.0.1, another port) POSTs to the explorer with
       ``mode: 'no-cors'`` (text/plain, the reviewer's CSRF), with a JSON content type, and
       with a guessed token; 2. a page whose name resolves to 127.0.0.1 (DNS rebinding:
       ``--host-resolver-rules``) asks for the page and POSTs from its own origin. The server
       logs each refusal and the session is unchanged. 3. The page itself: choose a clinical
       state, a population member, move the flexion slider: the table shows segment.solve's
       equilibrium of that model in that state.
    """
    pytest.importorskip("playwright")
    from segment.views._chromium import headless_page

    folder = _population(tmp_path / "pop", {"S1": 1.0, "S2": 1.5})
    port = _free_port()
    url = f"http://127.0.0.1:{port}/"
    proc = subprocess.Popen([sys.executable, "-m", "segment.cli", "-v", "explore", "--web",
                             "--port", str(port), "--timeout", str(2 * SERVER_TIMEOUT_S),
                             "--population", str(folder)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    attacker = _serve_page(ATTACK_PAGE % url)
    try:
        _wait_for(url)
        with urllib.request.urlopen(url, timeout=30) as r:
            token = re.search(r'name="segment-token" content="([^"]+)"', r.read().decode())[1]
        before = _session_now(url, token)
        assert before[0] == 0
        rebound = f"http://rebind.test:{port}/"
        with headless_page(width=1400, height=900, extra_args=(
                "--host-resolver-rules=MAP rebind.test 127.0.0.1",)) as page:
            # 1. another site
            other = f"http://127.0.0.1:{attacker.server_address[1]}/"
            page.goto(other)
            outcome = page.evaluate("globalThis.attempts")
            assert outcome[:2] == ["opaque 0", "opaque 0"]     # sent; the answer unreadable
            assert outcome[2:] == ["rejected", "rejected"]     # preflight / CORS refused
            assert _session_now(url, token) == before
            # 2. DNS rebinding: the explorer's address under another name
            answer = page.goto(rebound)
            assert answer.status == 403 and "is not this server" in page.content()
            status = page.evaluate("""async () => (await fetch('/api/update', {method: 'POST',
                headers: {'Content-Type': 'application/json'},
                body: JSON.stringify({changes: {My_Nm: 3}})})).status""")
            assert status == 403
            assert _session_now(url, token) == before
            # 3. the page, used as intended
            errors = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(url)
            page.wait_for_function("globalThis.__segmentExplorer?.ready === true",
                                   timeout=30000)
            states = page.locator("select[data-control=state] option").all_inner_texts()
            from segment.core.states_table import state_names
            assert states == ["intact", *state_names()]
            models = page.locator("select[data-control=model] option").all_inner_texts()
            assert models == ["published", "S1", "S2"]

            def wait_seq(n):
                page.wait_for_function(
                    f"document.querySelector('.title').dataset.seq >= {n}", timeout=30000)

            page.locator("select[data-control=state]").select_option("laminectomy")
            wait_seq(1)
            page.locator("input[data-control=My_Nm]").fill("1.8")
            wait_seq(2)
            lam = segment.solve(model.with_state("laminectomy"), segment.LOAD_CASES["FLX"])
            phi = np.degrees(lam.displacement_from_unloaded[4])
            assert page.inner_text("td[data-q=phi_y]") == f"{phi:+.{TABLE_DIGITS}f}"
            assert page.inner_text(".title").startswith("published, laminectomy: custom")
            assert page.input_value("select[data-control=case]") == "custom"
            fl_row = page.locator("td[data-ligament=FL]").locator("xpath=..").inner_text()
            assert fl_row.split()[-1] == "cut"
            page.locator("select[data-control=model]").select_option("S2")
            wait_seq(3)
            page.wait_for_timeout(300)
            assert page.inner_text(".title").startswith("S2, laminectomy: custom")
            stiff = segment.c5c6(data_dir=folder / "S2", state="laminectomy")
            s2 = segment.solve(stiff, segment.LOAD_CASES["FLX"])
            phi2 = np.degrees(s2.displacement_from_unloaded[4])
            assert 0 < phi2 < phi
            assert page.inner_text("td[data-q=phi_y]") == f"{phi2:+.{TABLE_DIGITS}f}"
            assert page.inner_text("#controls .error") == ""
            png = page.screenshot()
            (tmp_path / "explorer_final.png").write_bytes(png)
            assert not errors, errors
        assert _png(png).std() * 255 > 5
        assert _session_now(url, token)[0] == 3
    finally:
        attacker.shutdown()
        attacker.server_close()
        proc.terminate()
        _, log = proc.communicate(timeout=30)
    attacker_origin = f"Origin 'http://127.0.0.1:{attacker.server_address[1]}'"
    refused = [ln for ln in log.splitlines() if attacker_origin in ln]
    assert len(refused) == 3, log    # two POSTs and the init; the third POST's preflight
    #                                  (OPTIONS) was refused, so it never came
    assert sum(f"Host 'rebind.test:{port}' is not this server" in ln       # page and POST
               for ln in log.splitlines()) >= 2, log
    assert "Traceback" not in log


# ---------------------------------------------------------------- notebook cell
@pytest.mark.slow
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
