"""Optional dependencies: import them lazily, or say in one line which extra installs them.

The core install (``pip install c5c6-segment``) solves; the extras add views (``viz``:
pyvista), the report's figures (``report``: matplotlib) and the studies (``study``: SALib,
dask, pyarrow, emcee). A module that needs an extra calls :func:`require` where it first needs
it; without the extra the user sees::

    segment render needs pyvista, which is not installed: pip install "c5c6-segment[viz]"
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["DIST_NAME", "MissingExtraError", "install_hint", "require"]

DIST_NAME = "c5c6-segment"
"""The distribution name on the package index (the import package is ``segment``)."""


class MissingExtraError(ImportError):
    """An optional dependency is missing; the message names the extra that installs it."""


def install_hint(extra: str) -> str:
    """The pip command that installs ``extra``, e.g. ``pip install "c5c6-segment[viz]"``."""
    return f'pip install "{DIST_NAME}[{extra}]"'


def require(module: str, extra: str, purpose: str) -> ModuleType:
    """Import ``module``, or raise :class:`MissingExtraError` naming ``extra``.

    Parameters
    ----------
    module : str
        The module to import, e.g. ``"pyvista"``.
    extra : str
        The extra of this package that installs it, e.g. ``"viz"``.
    purpose : str
        What needs it, for the message, e.g. ``"segment render"``.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if exc.name is not None and exc.name.split(".")[0] != module.split(".")[0]:
            raise  # the module is installed but one of its own imports failed: not our hint
        raise MissingExtraError(f"{purpose} needs {module}, which is not installed: "
                                f"{install_hint(extra)}") from None
