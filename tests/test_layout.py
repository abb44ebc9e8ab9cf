"""The package layout (issue 15): layers, no import cycles."""

import ast
import sys
from pathlib import Path

import segment

PKG = Path(segment.__file__).resolve().parent
# a module may import from its own layer and the layers before it, never from a later one
LAYERS = ("elements", "core", "solvers", "views", "studies", "report", "export")
TOP = ("__init__", "__main__", "cli")           # the API and the command line: may use all
# helpers every layer may use
SHARED = ("jit", "_progress", "_extras", "_checks", "_version")


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
            if _rank(target) > _rank(name):
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
