"""The browser explorer: ``segment explore --web`` serves a page on 127.0.0.1 (stdlib only).

The page (``assets/index.html``) builds its sliders from the session's description and draws
with the same three.js view as the notebook widget (``assets/explorer.js``). Every change is
one POST to ``api/update``; the server re-solves (warm-started, :class:`ExplorerSession`) and
answers with the new frame. Everything is served from the package: three.js r170 is vendored
(``assets/three.module.min.js``, MIT, ``assets/three.LICENSE``), nothing comes from a CDN, so
the page works offline.

Routes: ``GET /`` (the page), ``GET /explorer.js``, ``GET /three.module.min.js``,
``GET /api/init`` (controls, scene, frame), ``POST /api/update`` (``{"changes": {...},
"scene_key": ...}`` -> ``{"frame": ..., "scene": ...}``, the scene only when the model
variant changed). A bad control answers 400 with ``{"error": message}``.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from segment.core.model import Segment
from segment.views.session import ExplorerSession

__all__ = ["ASSETS", "DEFAULT_HOST", "DEFAULT_PORT", "WebExplorer", "serve", "start"]

log = logging.getLogger(__name__)

ASSETS = Path(__file__).with_name("assets")
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
MAX_BODY_BYTES = 1 << 16
_FILES = {"/": ("index.html", "text/html; charset=utf-8"),
          "/index.html": ("index.html", "text/html; charset=utf-8"),
          "/explorer.js": ("explorer.js", "text/javascript; charset=utf-8"),
          "/three.module.min.js": ("three.module.min.js", "text/javascript; charset=utf-8")}


class WebExplorer(ThreadingHTTPServer):
    """An HTTP server around one :class:`ExplorerSession` (one user; requests serialised)."""

    daemon_threads = True

    def __init__(self, session: ExplorerSession, host: str = DEFAULT_HOST,
                 port: int = DEFAULT_PORT):
        self.session = session
        self.lock = threading.Lock()
        super().__init__((host, port), _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/"

    def init(self) -> dict:
        with self.lock:
            return {"controls": self.session.controls(), "scene": self.session.scene(),
                    "frame": self.session.frame()}

    def update(self, body: dict) -> dict:
        changes = body.get("changes", {})
        if not isinstance(changes, dict):
            raise ValueError(f"'changes' must be an object, got {changes!r}")
        with self.lock:
            self.session.update(**changes)
            out = {"frame": self.session.frame()}
            if body.get("scene_key") != self.session.scene_key:
                out["scene"] = self.session.scene()
        return out


class _Handler(BaseHTTPRequestHandler):
    server: WebExplorer

    def log_message(self, format, *args):
        log.debug("%s - %s", self.address_string(), format % args)

    def _send(self, status, body: bytes, content_type: str):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status, obj):
        self._send(status, json.dumps(obj, allow_nan=False).encode(), "application/json")

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path == "/api/init":
            return self._json(HTTPStatus.OK, self.server.init())
        if path == "/favicon.ico":
            return self._send(HTTPStatus.NO_CONTENT, b"", "image/x-icon")
        if path in _FILES:
            name, ctype = _FILES[path]
            return self._send(HTTPStatus.OK, (ASSETS / name).read_bytes(), ctype)
        return self._json(HTTPStatus.NOT_FOUND, {"error": f"no such page: {path}"})

    def do_POST(self):
        if self.path.split("?", 1)[0] != "/api/update":
            return self._json(HTTPStatus.NOT_FOUND, {"error": f"no such route: {self.path}"})
        n = int(self.headers.get("Content-Length") or 0)
        if n > MAX_BODY_BYTES:
            return self._json(HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                              {"error": f"request body over {MAX_BODY_BYTES} bytes"})
        try:
            body = json.loads(self.rfile.read(n) or b"{}")
            if not isinstance(body, dict):
                raise ValueError("the request body must be a JSON object")
            return self._json(HTTPStatus.OK, self.server.update(body))
        except ValueError as exc:     # also json.JSONDecodeError
            return self._json(HTTPStatus.BAD_REQUEST, {"error": str(exc)})


def start(models: Segment | Mapping[str, Segment] | None = None, *, host: str = DEFAULT_HOST,
          port: int = DEFAULT_PORT, **session_options) -> WebExplorer:
    """Start the web explorer in a background thread and return the running server.

    ``port=0`` picks a free port (``server.url`` says which). Stop it with
    ``server.shutdown(); server.server_close()``. ``session_options`` go to
    :class:`ExplorerSession` (``cases``, ``geometry``, ``magnify``, ``tension_range``).
    """
    server = WebExplorer(ExplorerSession(models, **session_options), host, port)
    threading.Thread(target=server.serve_forever, name="segment-web-explorer",
                     daemon=True).start()
    return server


def serve(models: Segment | Mapping[str, Segment] | None = None, *, host: str = DEFAULT_HOST,
          port: int = DEFAULT_PORT, timeout_s: float | None = None, announce=print,
          **session_options) -> None:
    """Serve the web explorer until interrupted (Ctrl-C) or for ``timeout_s`` seconds.

    ``announce`` receives one line with the address (default: print).
    """
    server = start(models, host=host, port=port, **session_options)
    announce(f"segment explore: serving {server.url} (Ctrl-C to stop"
             + (f"; stops by itself after {timeout_s:g} s)" if timeout_s else ")"))
    try:
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while deadline is None or time.monotonic() < deadline:
            time.sleep(0.2 if deadline is None else min(0.2, max(0.0,
                                                                 deadline - time.monotonic())))
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
        server.server_close()
