"""The browser explorer: ``segment explore --web`` serves a page on 127.0.0.1 (stdlib only).

The page (``assets/index.html``) builds its menus and sliders from the session's description
and draws with the same three.js view as the notebook widget (``assets/explorer.js``). Every
change is one POST to ``api/update``; the server re-solves (warm-started,
:class:`ExplorerSession`) and answers with the new frame. Everything is served from the
package: three.js r170 is vendored (``assets/three.module.min.js``, MIT,
``assets/three.LICENSE``), nothing comes from a CDN, so the page works offline.

Routes: ``GET /`` (the page, with the server's token), ``GET /explorer.js``,
``GET /three.module.min.js``, ``GET /api/init`` (controls, scene, frame),
``POST /api/update`` (``{"changes": {...}, "scene_key": ...}`` -> ``{"frame": ...,
"scene": ...}``, the scene only when the drawn model changed).

Who may talk to it (:mod:`segment.views.guard`): requests naming this server as Host, the API
only from the page's own origin (or a program) with the server's token, updates as JSON of
bounded size and depth. Bound to anything but loopback, the page needs the token too: the
printed URL carries it, and a warning says who can reach it. Each connection has a read
timeout (:data:`READ_TIMEOUT_S`) and at most :data:`MAX_CONNECTIONS` are served at once.
Every request that fails is answered with a 4xx or 5xx status and ``{"error": message}``, and
logged once (logger ``segment.views.web``: client errors at INFO without a traceback, server
errors at ERROR with one).
"""

from __future__ import annotations

import json
import logging
import socket
import sys
import threading
import time
from collections.abc import Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from segment.core.model import Segment
from segment.views.guard import (
    TOKEN_HEADER,
    Gate,
    Refusal,
    content_length,
    parse_update,
)
from segment.views.session import ExplorerSession

__all__ = ["ASSETS", "DEFAULT_HOST", "DEFAULT_PORT", "MAX_CONNECTIONS", "READ_TIMEOUT_S",
           "WebExplorer", "serve", "start"]

log = logging.getLogger(__name__)

ASSETS = Path(__file__).with_name("assets")
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
READ_TIMEOUT_S = 10.0
"""A connection that sends nothing for this long [s] is closed (408 within a body)."""
MAX_CONNECTIONS = 32
"""Connections served at once; one more is answered 503 and closed."""
LINGER_S = 1.0
"""After refusing a request whose body was not read: how long [s] to read and discard what
the client still sends, so that it receives the answer rather than a reset connection."""
LINGER_BYTES = 1 << 20
TOKEN_PLACEHOLDER = b"{{SEGMENT_TOKEN}}"
_PAGE = ("index.html", "text/html; charset=utf-8")
_FILES = {"/explorer.js": ("explorer.js", "text/javascript; charset=utf-8"),
          "/three.module.min.js": ("three.module.min.js", "text/javascript; charset=utf-8")}
_SECURITY_HEADERS = (("X-Content-Type-Options", "nosniff"), ("X-Frame-Options", "DENY"),
                     ("Referrer-Policy", "no-referrer"),
                     ("Content-Security-Policy", "frame-ancestors 'none'"))
_BUSY_BODY = b'{"error": "too many connections to the explorer; try again"}'
_BUSY = (b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: application/json\r\n"
         b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(_BUSY_BODY)) + _BUSY_BODY


class WebExplorer(ThreadingHTTPServer):
    """An HTTP server around one :class:`ExplorerSession` (one user; updates serialised).

    ``gate`` (:class:`~segment.views.guard.Gate`) holds the bound address, the port and this
    start's token; ``page_url`` is the address to open (with the token when the page needs
    it).
    """

    daemon_threads = True

    def __init__(self, session: ExplorerSession, host: str = DEFAULT_HOST,
                 port: int = DEFAULT_PORT):
        self.session = session
        self.lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        super().__init__((host, port), _Handler)
        self.gate = Gate.for_address(self.server_address[0], self.server_address[1])
        if not self.gate.loopback:
            log.warning("the explorer listens on %s, not only on this machine: whoever can "
                        "reach port %d and has the token of the printed URL can drive it, "
                        "over plain HTTP (not encrypted). Leave --host at 127.0.0.1 unless "
                        "you need this.", self.gate.host, self.gate.port)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/"

    @property
    def page_url(self) -> str:
        """The page's address; it carries the token when the server is not on loopback (an
        address of every interface is given as 127.0.0.1: use this machine's address or
        name from elsewhere)."""
        host, port = self.server_address[:2]
        host = "127.0.0.1" if host in ("0.0.0.0", "") else host
        return f"http://{host}:{port}/" + ("" if self.gate.loopback
                                           else f"?token={self.gate.token}")

    # -- the session, under the lock
    def init(self) -> dict:
        with self.lock:
            return {"controls": self.session.controls(), "scene": self.session.scene(),
                    "frame": self.session.frame()}

    def update(self, changes: dict, scene_key: str | None = None) -> dict:
        """Apply ``changes`` (all, or none: a 400 :class:`~segment.views.guard.Refusal` saying
        which is refused) and return the new frame, and the scene when it is not
        ``scene_key``."""
        with self.lock:
            try:
                self.session.update(**changes)
            except ValueError as exc:              # a control refused: nothing changed
                raise Refusal(HTTPStatus.BAD_REQUEST, str(exc)) from None
            out = {"frame": self.session.frame()}
            if scene_key != self.session.scene_key:
                out["scene"] = self.session.scene()
        return out

    # -- connections: a bounded number, each in its thread
    def process_request(self, request, client_address):
        if not self._slots.acquire(blocking=False):
            log.info("%s: refused with 503, %d connections open", client_address[0],
                     MAX_CONNECTIONS)
            try:
                request.sendall(_BUSY)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request, client_address):
        """An exception that escaped a handler: logged once (a dropped connection at DEBUG,
        anything else at ERROR with its traceback), never printed by socketserver."""
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError | TimeoutError):
            log.debug("%s: connection ended: %r", client_address[0], exc)
        else:
            log.error("%s: unexpected error", client_address[0], exc_info=True)


class _Handler(BaseHTTPRequestHandler):
    server: WebExplorer

    @property
    def timeout(self) -> float:       # StreamRequestHandler.setup: the socket's read timeout
        return READ_TIMEOUT_S

    server_version = "segment-explorer"
    sys_version = ""

    def log_message(self, format, *args):      # the access log: DEBUG
        log.debug("%s - %s", self.address_string(), format % args)

    def log_error(self, format, *args):         # e.g. "Request timed out": the client's doing
        log.info("%s - %s", self.address_string(), format % args)

    # -- answers
    def _send(self, status, body: bytes, content_type: str):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for name, value in _SECURITY_HEADERS:
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status, obj):
        self._send(status, json.dumps(obj, allow_nan=False).encode(), "application/json")

    def send_error(self, code, message=None, explain=None):
        """http.server's own refusals (bad request line, too many headers, unknown method):
        JSON like ours, logged once."""
        self.close_connection = True
        self.request_version = "HTTP/1.0"     # a malformed request line: not HTTP/0.9 either
        status = HTTPStatus(code)
        text = message or status.phrase
        log.info("%s %s: %d %s", self.address_string(), getattr(self, "requestline", "")[:80],
                 status, text)
        try:
            self._json(status, {"error": text})
        except OSError:
            return
        self._linger()              # e.g. the rest of a request line over 64 KiB

    def _refuse(self, refusal: Refusal, *, unread_body: bool = False):
        self.close_connection = True
        log.info("%s %s %s: %d %s", self.address_string(), self.command, self.path[:80],
                 refusal.status, refusal.message)
        self._json(refusal.status, {"error": refusal.message})
        if unread_body:
            self._linger()

    def _linger(self):
        """Read and discard what the client still sends (bounded in time and bytes), so that
        it reads our answer instead of a reset connection."""
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_WR)
            self.connection.settimeout(LINGER_S)
            deadline, seen = time.monotonic() + LINGER_S, 0
            while time.monotonic() < deadline and seen < LINGER_BYTES:
                chunk = self.connection.recv(1 << 16)
                if not chunk:
                    break
                seen += len(chunk)
        except OSError:
            pass

    def _dispatch(self, route):
        """Run ``route``; every exception becomes an answer (4xx for the client's mistakes,
        500 for ours) and one log line."""
        try:
            if not self.server.gate.host_ok(self.headers.get("Host")):
                raise Refusal(HTTPStatus.FORBIDDEN, f"Host {self.headers.get('Host')!r} is not "
                              f"this server (expected {self.server.gate.host}:"
                              f"{self.server.gate.port} or localhost:{self.server.gate.port})")
            route()
        except Refusal as refusal:
            self._refuse(refusal, unread_body=self.command == "POST")
        except (ConnectionError, TimeoutError):
            raise                                       # the connection is gone: handle_error
        except Exception as exc:
            log.error("%s %s %s: internal error", self.address_string(), self.command,
                      self.path[:80], exc_info=True)
            self.close_connection = True
            self._json(HTTPStatus.INTERNAL_SERVER_ERROR,
                       {"error": f"internal error ({type(exc).__name__}); see the server's "
                                 "log"})

    def _api_allowed(self):
        gate = self.server.gate
        if not gate.origin_ok(self.headers.get("Origin"), self.headers.get("Sec-Fetch-Site")):
            raise Refusal(HTTPStatus.FORBIDDEN, f"cross-origin request refused (Origin "
                          f"{self.headers.get('Origin')!r}, Sec-Fetch-Site "
                          f"{self.headers.get('Sec-Fetch-Site')!r})")
        if not gate.token_ok(self.headers.get(TOKEN_HEADER)):
            raise Refusal(HTTPStatus.FORBIDDEN, f"missing or wrong {TOKEN_HEADER} header (the "
                          "page served by this server sends it)")

    # -- routes
    def do_GET(self):
        self._dispatch(self._get)

    def do_HEAD(self):
        self._dispatch(self._get)

    def do_POST(self):
        self._dispatch(self._post)

    def _get(self):
        parts = urlsplit(self.path)
        path = parts.path
        if path == "/api/init":
            self._api_allowed()
            return self._json(HTTPStatus.OK, self.server.init())
        if path == "/api/update":
            raise Refusal(HTTPStatus.METHOD_NOT_ALLOWED, "api/update takes POST")
        if path == "/favicon.ico":
            return self._send(HTTPStatus.NO_CONTENT, b"", "image/x-icon")
        if path in ("/", "/index.html"):
            gate = self.server.gate
            if not gate.loopback and not gate.token_ok(
                    (parse_qs(parts.query).get("token") or [None])[0]):
                raise Refusal(HTTPStatus.FORBIDDEN, "open the address printed by 'segment "
                              "explore', with its ?token=")
            page = (ASSETS / _PAGE[0]).read_bytes().replace(TOKEN_PLACEHOLDER,
                                                           gate.token.encode())
            return self._send(HTTPStatus.OK, page, _PAGE[1])
        if path in _FILES:
            name, ctype = _FILES[path]
            return self._send(HTTPStatus.OK, (ASSETS / name).read_bytes(), ctype)
        raise Refusal(HTTPStatus.NOT_FOUND, f"no such page: {path[:80]}")

    def _post(self):
        path = urlsplit(self.path).path
        if path != "/api/update":
            raise Refusal(HTTPStatus.NOT_FOUND, f"no such route: POST {path[:80]}")
        self._api_allowed()
        media = (self.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
        if media != "application/json":
            raise Refusal(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, f"Content-Type must be "
                          f"application/json, got {self.headers.get('Content-Type')!r}")
        n = content_length(self.headers.get_all("Content-Length"),
                           self.headers.get("Transfer-Encoding"))
        try:
            raw = self.rfile.read(n)
        except TimeoutError:
            raise Refusal(HTTPStatus.REQUEST_TIMEOUT, f"request body not received within "
                          f"{READ_TIMEOUT_S:g} s") from None
        if len(raw) != n:
            raise Refusal(HTTPStatus.BAD_REQUEST, f"request body of {len(raw)} bytes, shorter "
                          f"than its Content-Length {n}")
        changes, scene_key = parse_update(raw)
        self._json(HTTPStatus.OK, self.server.update(changes, scene_key))


def start(models: Segment | Mapping[str, Segment], *, host: str = DEFAULT_HOST,
          port: int = DEFAULT_PORT, **session_options) -> WebExplorer:
    """Start the web explorer in a background thread and return the running server.

    ``port=0`` picks a free port (``server.url`` says which; ``server.page_url`` is the
    address to open). Stop it with ``server.shutdown(); server.server_close()``.
    ``session_options`` go to :class:`ExplorerSession` (``cases``, ``states``, ``state``,
    ``geometry``, ``magnify``, ``tension_range``).
    """
    server = WebExplorer(ExplorerSession(models, **session_options), host, port)
    threading.Thread(target=server.serve_forever, name="segment-web-explorer",
                     daemon=True).start()
    return server


def serve(models: Segment | Mapping[str, Segment], *, host: str = DEFAULT_HOST,
          port: int = DEFAULT_PORT, timeout_s: float | None = None, announce=print,
          **session_options) -> None:
    """Serve the web explorer until interrupted (Ctrl-C) or for ``timeout_s`` seconds.

    ``announce`` receives one line with the address to open (default: print); bound to
    anything but loopback, that address carries the token and a warning is logged.
    """
    server = start(models, host=host, port=port, **session_options)
    announce(f"segment explore: serving {server.page_url} (Ctrl-C to stop"
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
