"""The flat module paths of segment 0.2 (``segment.model``, ``segment.equilibrium``, ...).

The package is grouped in layers (``segment.elements``, ``segment.core``, ``segment.solvers``,
``segment.studies``, ``segment.views``; see the README's layout section). Code written for the
flat layout keeps working: ``import segment.model`` and ``from segment.facet import _contact``
return the very module object of the new path, through a finder that is consulted only for
the old names listed in :data:`MOVED`. Nothing is imported until an old name is used.

Patching: ``monkeypatch.setattr`` on a module reached by either name changes that one module.
Names that moved to another module when the model <-> equilibrium import circle was broken
(the Newton kernels and ``EquilibriumResult`` now live in :mod:`segment.core.newton`, the
residual kernels in :mod:`segment.core.residual`) are only re-exported by
:mod:`segment.solvers.equilibrium` and :mod:`segment.core.model`: patch them where they are
defined. Names removed during 0.2's development (``space.csv_records``,
``sets._facet_magnitudes``, ``sensitivity._solve6_multi``) are gone.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from types import MappingProxyType

__all__ = ["MOVED", "install"]

MOVED = MappingProxyType({
    # elements: one force element, the kinematics or the loads at a time
    "_vec": "elements._vec", "_dual": "elements._dual", "disc": "elements.disc",
    "disc_plane": "elements.disc_plane", "facet": "elements.facet",
    "facet_dual": "elements.facet_dual", "kinematics": "elements.kinematics",
    "ligament": "elements.ligament", "loads": "elements.loads", "tangent": "elements.tangent",
    # core: data tables, the assembled Segment, its residual kernels and Newton
    "io": "core.io", "model": "core.model", "residual": "core.residual",
    "newton": "core.newton",
    # solvers
    "equilibrium": "solvers.equilibrium", "batch": "solvers.batch", "ramp": "solvers.ramp",
    "dynamics": "solvers.dynamics",
    # studies and reports
    "space": "studies.space", "sets": "studies.sets", "sensitivity": "studies.sensitivity",
    "sobol": "studies.sobol", "uncertainty": "studies.uncertainty",
    "calibration": "studies.calibration", "reference": "studies.reference",
    "validation": "studies.validation",
    # issue 22: specimen curves, model forms, load paths, the virtual population
    "curves": "studies.curves", "forms": "studies.forms", "paths": "studies.paths",
    "population": "studies.population",
    # the report was a module of studies during 0.2's development; now its own layer
    "studies.report": "report",
    # views
    "viz": "views.viz",
})
"""Old module name (under ``segment.``) -> its path under ``segment.`` now."""


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``segment.<old>`` and hands out the module of its new path."""

    def find_spec(self, fullname, path=None, target=None):
        head, _, name = fullname.partition(".")
        if head != "segment" or name not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def __init__(self):
        self._own_specs = {}

    def create_module(self, spec):
        module = importlib.import_module("segment." + MOVED[spec.name.partition(".")[2]])
        self._own_specs[spec.name] = module.__spec__
        return module

    def exec_module(self, module):
        # the import machinery has just set the alias's spec on the shared module: put its
        # own back (nothing to execute: the module is the one of the new path)
        module.__spec__ = self._own_specs.pop(module.__spec__.name, module.__spec__)


def install() -> None:
    """Put the finder on ``sys.meta_path`` (once) and register the modules already imported.

    Registering them in ``sys.modules`` now matters for ``segment.ramp``, which is both a module
    and the package's function: an import through the finder would end by setting the package
    attribute ``ramp`` to the module (as Python does for every submodule it loads), replacing
    the function; a name found in ``sys.modules`` is not set again.
    """
    for old, new in MOVED.items():
        module = sys.modules.get(f"segment.{new}")
        if module is not None:
            sys.modules.setdefault(f"segment.{old}", module)
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.append(_AliasFinder())
