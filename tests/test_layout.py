"""The package layout (issue 15): layers, no import cycles, the flat 0.2 paths still work."""

import ast
import importlib
import sys
from pathlib import Path

import pytest

import segment
from segment import _aliases

PKG = Path(segment.__file__).resolve().parent
# a module may import from its own layer and the layers before it, never from a later one
LAYERS = ("elements", "core", "solvers", "views", "studies", "report", "export")
TOP = ("__init__", "__main__", "cli")           # the API and the command line: may use all
# helpers every layer may use
SHARED = ("jit", "_progress", "_extras", "_aliases", "_checks")


def _modules():
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).with_suffix("")
        if rel.name == "__init__" and rel.parent != Path("."):
            continue
        yield ".".join(("segment", *rel.parts)).removesuffix(".__init__"), path


def _imports(path):
    """Modules of this package that ``path`` imports, at any depth, except under
    ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text())
    skip = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
            and getattr(node.test, "id", "") == "TYPE_CHECKING" for n in ast.walk(node)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("segment.")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "segment":
                found |= {f"segment.{a.name}" for a in node.names
                          if (PKG / a.name).is_dir() or (PKG / f"{a.name}.py").is_file()}
            elif node.module.startswith("segment."):
                found.add(node.module)
    return found


def _rank(name):
    parts = name.split(".")
    if len(parts) == 1:                         # segment/__init__.py
        return len(LAYERS)
    if parts[1] in TOP:                         # the command line is a package
        return len(LAYERS)
    if parts[1] in SHARED:                      # the kernels' machinery is a package
        return -1
    if len(parts) == 2:
        if parts[1] in SHARED:
            return -1
        assert parts[1] in TOP or parts[1] in LAYERS, f"flat module {name} outside the layers"
        return len(LAYERS) if parts[1] in TOP else LAYERS.index(parts[1])
    return LAYERS.index(parts[1])


def test_every_module_sits_in_a_layer():
    flat = sorted(p.stem for p in PKG.glob("*.py"))
    assert set(flat) <= set(TOP) | set(SHARED), flat
    for layer in LAYERS:
        assert (PKG / layer / "__init__.py").read_text().startswith('"""'), layer


def test_no_module_imports_from_a_later_layer():
    bad = []
    for name, path in _modules():
        for target in _imports(path):
            if target.split(".")[1] in _aliases.MOVED:
                bad.append(f"{name} uses the old path {target}")
            elif _rank(target) > _rank(name):
                bad.append(f"{name} -> {target}")
    assert not bad, bad


def test_no_import_cycles():
    graph = {name: {t for t in _imports(path) if t != name} for name, path in _modules()}
    state = {}

    def visit(node, stack):
        state[node] = "open"
        for nxt in graph.get(node, ()):
            if state.get(nxt) == "open":
                raise AssertionError(" -> ".join([*stack[stack.index(nxt):], nxt]))
            if nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = "done"

    for node in graph:
        if node not in state and not node.endswith(("__init__", "segment")):
            visit(node, [node])


def test_model_and_equilibrium_import_circle_is_broken():
    model = _imports(PKG / "core" / "model.py")
    assert not any("equilibrium" in m for m in model), model


@pytest.mark.parametrize("old", sorted(_aliases.MOVED))
def test_flat_paths_of_0_2_still_import_the_same_module(old):
    new = importlib.import_module(f"segment.{_aliases.MOVED[old]}")
    assert importlib.import_module(f"segment.{old}") is new
    parent, _, attr = f"segment.{old}".rpartition(".")
    if old not in segment.__all__:          # segment.ramp is the function, as in 0.2
        assert getattr(importlib.import_module(parent), attr) is new
    assert new.__spec__.name == new.__name__ == f"segment.{_aliases.MOVED[old]}"
    assert sys.modules[f"segment.{old}"] is new


def test_old_from_imports_and_monkeypatching_reach_the_new_module(monkeypatch):
    from segment.equilibrium import solve as old_solve
    from segment.facet import _contact
    from segment.solvers.equilibrium import solve
    assert old_solve is solve
    assert _contact is importlib.import_module("segment.elements.facet")._contact
    import segment.model
    monkeypatch.setattr(segment.model, "PUBLISHED_FACET_DAMPING", 0.5)
    assert importlib.import_module("segment.core.model").PUBLISHED_FACET_DAMPING == 0.5


def test_ramp_stays_the_function_after_its_module_is_imported_by_the_old_path():
    import segment.ramp
    from segment.ramp import RampResult

    assert callable(segment.ramp) and segment.ramp.__name__ == "ramp"
    assert RampResult is segment.RampResult


def test_unknown_names_still_fail():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("segment.no_such_module")
    with pytest.raises(AttributeError):
        _ = segment.no_such_module


def test_import_segment_stays_light():
    """``import segment`` loads neither numba (the kernels are imported lazily,
    :mod:`segment.jit`), nor pandas, scipy.stats or the extras (the cold start of
    ``segment solve``; the CHANGELOG promises no pandas)."""
    import subprocess

    code = ("import sys, segment; heavy = [m for m in ('numba', 'pandas', 'scipy.stats', "
            "'matplotlib', "
            "'pyvista', 'SALib', 'dask', 'emcee') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=PKG.parent.parent)
    assert out.stdout.strip() == "[]", out.stdout
