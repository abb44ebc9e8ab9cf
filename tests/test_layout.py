"""The package layout (issues 15 and 29): layers, arrows that point down, one name per thing.

The import graph is read from the source (``ast``), not from ``sys.modules``: every
``import`` and ``from ... import`` of every module of the package, at module level and inside
functions (an import inside a function is an arrow all the same, only a later one), the package
root ``segment/__init__.py`` and the subpackages' ``__init__`` included, the lazy names of a
package (``_LAZY``, imported by its ``__getattr__``: the root and ``studies.calibration``) as
arrows of that package. Imports under
``if TYPE_CHECKING:`` are left out: they never run.

An arrow goes to the module a statement names: ``import segment.core.io`` and
``from segment.core.io import x`` to ``segment.core.io``; ``from segment.studies import
validation`` to the submodule ``segment.studies.validation``; ``from segment.solvers.dynamics
import simulate`` (a name of the package) to the package ``segment.solvers.dynamics``;
``import segment`` and ``from segment import c5c6`` to the root. The parent packages that Python
executes on the way are not arrows of their own (every module would otherwise depend on the root,
which imports half the package).
"""

import ast
import sys
from collections import defaultdict
from pathlib import Path

import segment

PKG = Path(segment.__file__).resolve().parent
ROOT = "segment"
# a module may import from its own layer and the layers before it, never from a later one
LAYERS = ("elements", "core", "solvers", "views", "studies", "report", "export")
TOP = ("__init__", "__main__", "cli")           # the API and the command line: may use all
# helpers every layer may use: the kernels' machinery and the root's private helper modules
SHARED = ("jit", "_progress", "_extras", "_checks", "_version")

KNOWN_CYCLES: set[frozenset[str]] = set()
"""Cycles tolerated for now, each a set of modules (the test fails on an entry no longer
found). Empty: core/newton takes core/model's classes only under ``TYPE_CHECKING``, so the
model <-> newton loop that the newton split (branch refactor-splits) removes is no arrow here."""

ROOT_IMPORTS_ALLOWED: set[tuple[str, int]] = set()
"""Modules allowed to import the package root, each ``(module, count)``: none."""

PRIVATE_ACROSS_FOLDERS_ALLOWED: set[tuple[str, str]] = set()
"""``(user module, private name used)`` pairs allowed across folders: none (the kernels other
layers call are public where they are defined)."""

MAX_FUNCTION_IMPORTS = 116
"""Most import statements of the package's own modules inside functions: 191 at 315bf1e (the
issue counted about 130), 129 after issue 29 (the command line's deferred commands, the heavy
optional modules of the views and the report, the calibration package and the modules in flight
on other branches), 122 when the calibrated-folder writers merged (their imports at the top),
116 when the virtual population split into four modules (their imports at the top; the
report's population section takes its names from three modules).
Lower it when an import moves to the top of its module."""


# ---------------------------------------------------------------- reading the source
def _module_name(path: Path) -> str:
    parts = path.relative_to(PKG.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def _is_package(name: str) -> bool:
    return (PKG.parent / name.replace(".", "/") / "__init__.py").is_file()


def _folder(name: str) -> str:
    """The package a module sits in (a package is its own folder)."""
    return name if _is_package(name) else name.rpartition(".")[0]


def _private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


class Import:
    """One imported name: the module that imports it, the line, whether inside a function,
    the module the arrow points to, and the name taken from it (None for ``import m``)."""

    def __init__(self, user, line, in_function, target, name, statement):
        self.user, self.line, self.in_function = user, line, in_function
        self.target, self.name, self.statement = target, name, statement

    def __repr__(self):
        return f"{MODULES[self.user].relative_to(PKG.parent)}:{self.line}: {self.statement}"


FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _marked(tree) -> tuple[set[int], set[int]]:
    """``(skip, inside)``: the ids of the nodes in an ``if TYPE_CHECKING:`` block (the block
    included) and of the nodes inside a function, in one pass over the tree (a walk of every
    function's subtree cost 2 s of each test collection)."""
    skip, inside = set(), set()

    def visit(node, in_function: bool, in_check: bool) -> None:
        for child in ast.iter_child_nodes(node):
            check = in_check or (isinstance(child, ast.If) and getattr(
                child.test, "id", getattr(child.test, "attr", "")) == "TYPE_CHECKING")
            if check:
                skip.add(id(child))
            if in_function:
                inside.add(id(child))
            visit(child, in_function or isinstance(child, FUNCTIONS), check)

    visit(tree, False, False)
    return skip, inside


def _read(name: str, source: str | None = None) -> list[Import]:
    """The imports of module ``name`` (its file, or ``source`` for a test of the reader)."""
    text_of = MODULES[name].read_text(encoding="utf-8") if source is None else source
    tree = ast.parse(text_of)
    lines = text_of.splitlines()
    skip, inside = _marked(tree)
    found = []
    for node in ast.walk(tree):
        if id(node) in skip or not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        text = lines[node.lineno - 1].strip()      # the statement's first line
        in_function = id(node) in inside
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == ROOT or a.name.startswith(ROOT + "."):
                    found.append(Import(name, node.lineno, in_function, a.name, None, text))
            continue
        module = node.module or ""
        if node.level:                           # relative: resolve against this module
            base = name if _is_package(name) else name.rpartition(".")[0]
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            module = f"{base}.{module}" if module else base
        if module != ROOT and not module.startswith(ROOT + "."):
            continue
        for a in node.names:
            sub = f"{module}.{a.name}"
            target = sub if sub in MODULES else module
            found.append(Import(name, node.lineno, in_function, target,
                                None if target == sub else a.name, text))
    for lazy in (n.value for n in tree.body if isinstance(n, ast.Assign)
                 and getattr(n.targets[0], "id", "") == "_LAZY"):   # names of __getattr__
        for key, value in zip(lazy.keys, lazy.values, strict=True):
            found.append(Import(name, key.lineno, True, f"{ROOT}.{value.value}", key.value,
                                f"_LAZY[{key.value!r}] = {value.value!r}"))
    return found


IMPORTS = {name: _read(name) for name in MODULES}
GRAPH = {name: {i.target for i in imports if i.target != name}
         for name, imports in IMPORTS.items()}


def _cycles(graph) -> list[list[str]]:
    """Every strongly connected component with more than one module (Tarjan), each as one
    cycle through it (for the message)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def strong(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def _path(graph, component) -> str:
    """A cycle through the component's first module, for the message."""
    start, members = component[0], set(component)
    prev, queue = {start: None}, [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v] & members):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return " -> ".join([*reversed(path), start])
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return " <-> ".join(component)


def _rank(name):
    parts = name.split(".")
    if len(parts) == 1 or parts[1] in TOP:       # the root and the command line
        return len(LAYERS)
    if parts[1] in SHARED:
        return -1
    assert parts[1] in LAYERS, f"module {name} outside the layers"
    return LAYERS.index(parts[1])


def _private_uses():
    """(user, private dotted name, the import) for every private module or name a module takes
    from outside its folder (its own folder and the folders below it may)."""
    out = []
    for name, imports in IMPORTS.items():
        here = _folder(name)
        for i in imports:
            dotted = i.target if i.name is None else f"{i.target}.{i.name}"
            parts = dotted.split(".")
            for k, part in enumerate(parts):
                if _private(part):
                    owner = ".".join(parts[:k])
                    owner = owner if _is_package(owner) else owner.rpartition(".")[0]
                    if not (here == owner or here.startswith(owner + ".")):
                        out.append((name, ".".join(parts[:k + 1]), i))
                    break
    # private attributes of an imported module: ``viz._title``
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        bound = {}
        for i in IMPORTS[name]:
            if i.name is None and i.target in MODULES:
                stmt = i.statement
                alias = stmt.rsplit(" as ", 1)[1].strip() if " as " in stmt else None
                bound[alias or i.target.rpartition(".")[2]] = i
        here = _folder(name)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in bound and _private(node.attr)):
                i = bound[node.value.id]
                owner = _folder(i.target) if not _is_package(i.target) else i.target
                if not (here == owner or here.startswith(owner + ".")):
                    out.append((name, f"{i.target}.{node.attr}", i))
    return out


# ---------------------------------------------------------------- the tests
def test_every_module_sits_in_a_layer():
    flat = sorted(p.stem for p in PKG.glob("*.py"))
    assert set(flat) <= set(TOP) | set(SHARED), flat
    for layer in LAYERS:
        assert (PKG / layer / "__init__.py").read_text().startswith('"""'), layer


def test_the_graph_sees_every_kind_of_import():
    """The reader is the test's instrument: it must see the arrows the old test missed
    (``import segment`` inside a function, ``from segment import x``, the root's lazy names)."""
    root = {i.target for i in IMPORTS[ROOT]}
    assert {"segment.core.published", "segment.studies.sobol", "segment.views.launch"} <= root
    probe = _read("segment.studies.sobol", "def f(model):\n    import segment\n"
                                           "    from segment import c5c6\n")
    assert [i.target for i in probe if i.in_function] == [ROOT, ROOT], \
        "import segment inside a function is an arrow to the root"
    cli = [i for i in IMPORTS["segment.cli.views"] if i.in_function]
    assert any(i.target == "segment.views.viz" for i in cli), cli
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_imports_from_a_later_layer():
    # arrows to the root itself: test_nothing_inside_the_package_imports_the_root
    bad = [repr(i) for name, imports in IMPORTS.items() for i in imports
           if _rank(i.target) > _rank(name) and i.target != ROOT]
    assert not bad, "\n".join(["arrows pointing up:", *bad])


def test_no_import_cycles():
    """No cycle anywhere in the graph: function-level imports and the root included."""
    found = _cycles(GRAPH)
    unknown = [c for c in found if frozenset(c) not in KNOWN_CYCLES]
    stale = [sorted(k) for k in KNOWN_CYCLES if list(sorted(k)) not in found]
    assert not unknown, "\n".join(["import cycles:", *(_path(GRAPH, c) for c in unknown)])
    assert not stale, f"known cycles that are gone (delete them from KNOWN_CYCLES): {stale}"


def test_nothing_inside_the_package_imports_the_root():
    """``import segment`` / ``from segment import x`` only in ``segment/__init__.py`` (the
    public API, imported by users, never from inside the package)."""
    counts = defaultdict(list)
    for name, imports in IMPORTS.items():
        for i in imports:
            if i.target == ROOT and name != ROOT:
                counts[name].append(i)
    allowed = dict(ROOT_IMPORTS_ALLOWED)
    bad = [repr(i) for name, uses in counts.items() for i in uses
           if len(uses) != allowed.get(name, 0)]
    stale = sorted(set(allowed) - set(counts))
    assert not bad, "\n".join(["imports of the package root:", *bad])
    assert not stale, f"no longer import the root (delete from ROOT_IMPORTS_ALLOWED): {stale}"


def test_no_private_name_is_used_outside_its_folder():
    """A private module or name (``_x``) is used in its own folder (and the folders below it);
    what another folder needs is public there."""
    uses = _private_uses()
    found = {(user, dotted) for user, dotted, _ in uses}
    bad = sorted({f"{i!r}  ({dotted})" for user, dotted, i in uses
                  if (user, dotted) not in PRIVATE_ACROSS_FOLDERS_ALLOWED})
    stale = sorted(PRIVATE_ACROSS_FOLDERS_ALLOWED - found)
    assert not bad, "\n".join(["private names used outside their folder:", *bad])
    assert not stale, ("no longer used (delete from PRIVATE_ACROSS_FOLDERS_ALLOWED): "
                       f"{stale}")


def test_imports_inside_functions_are_counted():
    """An import inside a function is an arrow that a reader of the module's head does not
    see. The command line defers its imports on purpose (a command loads only what it runs)
    and heavy optional modules are deferred everywhere; the count must not grow."""
    inside = sorted({(i.user, i.line): i for imports in IMPORTS.values() for i in imports
                     if i.in_function and not i.statement.startswith("_LAZY[")}.values(),
                    key=repr)
    listing = "\n".join(map(repr, inside))
    assert len(inside) <= MAX_FUNCTION_IMPORTS, (
        f"{len(inside)} import statements of the package's modules inside functions (at most "
        f"{MAX_FUNCTION_IMPORTS}):\n{listing}")


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


def test_segment_solve_stays_light():
    """``segment solve`` builds the whole command line (every subcommand's options, the
    ``--lab`` names of ``calibrate`` among them) and solves one case without loading numba,
    pandas or scipy: the warm solve of issue 28 (0.40 s idle, 0.78 s when the calibration
    package's ``__init__`` still imported all of its modules and pandas with them)."""
    import subprocess

    code = ("import sys, io, contextlib; from segment.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()): rc = main(['solve', 'FLX'])\n"
            "heavy = [m for m in ('numba', 'pandas', 'scipy', 'matplotlib') if m in sys.modules]\n"
            "print(rc, heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=PKG.parent.parent)
    assert out.stdout.strip() == "0 []", out.stdout + out.stderr
