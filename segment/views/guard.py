"""What the web explorer's server hears: Host, Origin, token, content type, body size, JSON.

The explorer's API changes a session that one person drives; nothing on the network should
drive it for them. :mod:`segment.views.web` applies these checks to every request, in this
order, and answers a refusal with its status and one line (:class:`Refusal`):

1. **Host** (every request): the bound address or ``localhost``, with the server's port
   (:meth:`Gate.host_ok`). A page that a DNS name rebound to 127.0.0.1 sends its own name
   as Host and is refused (DNS rebinding). Bound to every interface (``0.0.0.0``), any IP
   literal and the machine's own name pass as well: a rebinding attack needs a name of its
   own.
2. **Origin** (the API): absent, or this server's own origin (:meth:`Gate.origin_ok`).
   Browsers send Origin with every POST (same-origin included) and with every cross-origin
   ``fetch``; a request without it comes from a program (curl, Python), which a web page
   cannot make act for it and which still needs the token. ``Sec-Fetch-Site``, where a
   browser sends it, must say ``same-origin`` or ``none``.
3. **Token** (the API; the page too when bound to anything but loopback): a random
   ``secrets.token_urlsafe`` per server start, in the ``X-Segment-Token`` header
   (:data:`TOKEN_HEADER`; the page receives it when served) or, for the page, the URL's
   ``?token=``. A custom header also makes a cross-origin ``fetch`` preflight, which this
   server never grants; a form or ``no-cors`` request cannot carry it (CSRF).
4. **Body** (``POST /api/update``): ``Content-Type: application/json``; a
   ``Content-Length`` of digits only (400 otherwise; no chunked bodies: 411) and at most
   :data:`MAX_BODY_BYTES` (413); UTF-8 JSON nested at most :data:`MAX_JSON_DEPTH` deep, no
   NaN or Infinity, an object with ``changes`` (an object) and optionally ``scene_key`` (a
   string) and nothing else (:func:`parse_update`).

Pure functions and a frozen record: no sockets here.
"""

from __future__ import annotations

import ipaddress
import json
import re
import secrets
import socket
from dataclasses import dataclass, field
from http import HTTPStatus
from itertools import accumulate
from urllib.parse import urlsplit

__all__ = ["MAX_BODY_BYTES", "MAX_JSON_DEPTH", "TOKEN_HEADER", "Gate", "Refusal",
           "content_length", "is_loopback", "json_depth", "parse_update"]

MAX_BODY_BYTES = 1 << 16
"""Largest request body [bytes] (an update is about a hundred)."""
MAX_JSON_DEPTH = 8
"""Deepest JSON nesting of a request body (an update is two deep: ``{"changes": {...}}``)."""
TOKEN_HEADER = "X-Segment-Token"
"""The request header that carries the server's token."""
UPDATE_FIELDS = ("changes", "scene_key")
"""The fields of an update's JSON object."""

_WILDCARDS = ("0.0.0.0", "::", "")
_HOST = re.compile(r"(\[[0-9a-f:.]+\]|[a-z0-9.\-]+)(?::([0-9]{1,5}))?")
_DIGITS = re.compile(r"[0-9]{1,19}")
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)


class Refusal(Exception):
    """A request refused: its HTTP status and one line saying why (sent as ``{"error"}``)."""

    def __init__(self, status: HTTPStatus, message: str):
        super().__init__(message)
        self.status = HTTPStatus(status)
        self.message = message


def is_loopback(host: str) -> bool:
    """True when ``host`` (an address or name as given to bind) reaches this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class Gate:
    """Who may talk to one server: its bound address and port, and its token.

    Build it with :meth:`for_address` (a fresh token); ``loopback`` says whether the page
    itself needs the token too (anything but loopback).
    """

    host: str
    port: int
    token: str = field(repr=False)
    loopback: bool

    @classmethod
    def for_address(cls, host: str, port: int) -> Gate:
        """The gate of a server bound to ``host``:``port``, with a new random token."""
        return cls(host=host.lower(), port=int(port), token=secrets.token_urlsafe(32),
                   loopback=is_loopback(host))

    def _names(self) -> set[str]:
        names = {self.host.strip("[]"), "localhost"}
        if self.host in _WILDCARDS:
            names.add(socket.gethostname().lower())
        return names

    def host_ok(self, value: str | None) -> bool:
        """Is ``value`` (a Host header) this server: its address or ``localhost``, with its
        port (port 80 may be left out)?"""
        if not value:
            return False
        m = _HOST.fullmatch(value.strip().lower())
        if m is None:
            return False
        name, port = m.group(1).strip("[]"), int(m.group(2) or 80)
        if port != self.port:
            return False
        return name in self._names() or (self.host in _WILDCARDS and _is_ip(name))

    def origin_ok(self, origin: str | None, fetch_site: str | None = None) -> bool:
        """Is a request with this ``Origin`` (None: absent) and ``Sec-Fetch-Site`` header
        from this server's own page, or from a program rather than a browser?"""
        if fetch_site is not None and fetch_site.strip().lower() not in ("same-origin", "none"):
            return False
        if origin is None:
            return True
        try:
            parts = urlsplit(origin.strip())
            netloc_ok = parts.scheme == "http" and self.host_ok(parts.netloc)
        except ValueError:
            return False
        return netloc_ok and parts.path in ("", "/") and not parts.query

    def token_ok(self, value: str | None) -> bool:
        """Is ``value`` this server's token (compared in constant time)?"""
        return value is not None and secrets.compare_digest(value.encode(),
                                                            self.token.encode())


def content_length(values: list[str] | None, transfer_encoding: str | None = None) -> int:
    """The body size of a POST from its ``Content-Length`` header(s) [bytes], or a
    :class:`Refusal`: 411 when absent or chunked, 400 when not digits or conflicting, 413
    over :data:`MAX_BODY_BYTES`."""
    if transfer_encoding is not None:
        raise Refusal(HTTPStatus.LENGTH_REQUIRED, "Transfer-Encoding is not accepted: send "
                      "the body with a Content-Length")
    if not values:
        raise Refusal(HTTPStatus.LENGTH_REQUIRED, "Content-Length is required")
    texts = {v.strip() for v in values}
    if len(texts) != 1:
        raise Refusal(HTTPStatus.BAD_REQUEST, f"conflicting Content-Length headers: "
                      f"{', '.join(sorted(texts))}")
    text = texts.pop()
    if not _DIGITS.fullmatch(text):
        raise Refusal(HTTPStatus.BAD_REQUEST, f"Content-Length must be a number of bytes "
                      f"(digits only), got {text[:40]!r}")
    n = int(text)
    if n > MAX_BODY_BYTES:
        raise Refusal(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"request body of {n} bytes is "
                      f"over the limit of {MAX_BODY_BYTES} bytes")
    return n


def json_depth(text: str) -> int:
    """How deep the arrays and objects of the JSON ``text`` nest (0 for a scalar), counted
    without parsing (brackets inside strings do not count)."""
    brackets = re.findall(r"[\[\]{}]", _JSON_STRING.sub("", text))
    return max(accumulate(1 if b in "[{" else -1 for b in brackets), default=0)


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def parse_update(raw: bytes) -> tuple[dict, str | None]:
    """The ``changes`` and ``scene_key`` of an update's body, or a 400 :class:`Refusal`
    saying what is wrong with it (encoding, nesting, JSON, fields)."""
    if not raw:
        raise Refusal(HTTPStatus.BAD_REQUEST, 'empty request body: expected a JSON object '
                      '{"changes": {...}}')
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise Refusal(HTTPStatus.BAD_REQUEST, "the request body is not UTF-8") from None
    depth = json_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise Refusal(HTTPStatus.BAD_REQUEST, f"JSON nested {depth} deep, over the limit "
                      f"of {MAX_JSON_DEPTH}")
    try:
        body = json.loads(text, parse_constant=_no_constant)
    except ValueError as exc:        # json.JSONDecodeError and NaN/Infinity
        raise Refusal(HTTPStatus.BAD_REQUEST, f"the request body is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise Refusal(HTTPStatus.BAD_REQUEST, f"the request body must be a JSON object, got "
                      f"{type(body).__name__}")
    unknown = [k for k in body if k not in UPDATE_FIELDS]
    if unknown:
        raise Refusal(HTTPStatus.BAD_REQUEST, f"unknown field(s) {', '.join(map(repr, unknown))}"
                      f" in the request; expected {', '.join(UPDATE_FIELDS)}")
    changes, scene_key = body.get("changes", {}), body.get("scene_key")
    if not isinstance(changes, dict):
        raise Refusal(HTTPStatus.BAD_REQUEST, f"'changes' must be an object, got {changes!r}"[
            :200])
    if scene_key is not None and not isinstance(scene_key, str):
        raise Refusal(HTTPStatus.BAD_REQUEST, f"'scene_key' must be a string, got "
                      f"{scene_key!r}"[:200])
    return changes, scene_key
