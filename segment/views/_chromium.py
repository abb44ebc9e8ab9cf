"""Headless Chromium for the browser tests and the web benchmark (Debian's ``chromium``).

Playwright drives the system's Chromium (``executable_path``); nothing here downloads a
browser build. The flags keep Chromium off the network (background networking, component
updates, sync, QUIC) and on software rendering, each run with a fresh profile folder.
"""

from __future__ import annotations

import shutil
import tempfile
from contextlib import contextmanager

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
CHROMIUM_ARGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync")


def chromium_path() -> str | None:
    """The system Chromium's executable, or None when it is not installed."""
    for path in CHROMIUM_CANDIDATES:
        if shutil.which(path):
            return path
    return None


@contextmanager
def headless_page(*, width: int = 1400, height: int = 900, extra_args: tuple[str, ...] = ()):
    """A Playwright page in the system's headless Chromium (closed on exit); ``extra_args``
    are added to :data:`CHROMIUM_ARGS` (e.g. ``--host-resolver-rules=...``)."""
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    if path is None:
        raise RuntimeError("Chromium is not installed (Debian: apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="segment-chromium-") as profile, \
            sync_playwright() as pw:
        # a fresh profile folder: Playwright passes it as --user-data-dir
        context = pw.chromium.launch_persistent_context(
            profile, executable_path=path, headless=True, args=[*CHROMIUM_ARGS, *extra_args],
            viewport={"width": width, "height": height})
        try:
            yield context.pages[0] if context.pages else context.new_page()
        finally:
            context.close()
