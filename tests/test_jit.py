"""The kernels' two routes (segment.jit): precompiled for a generic x86-64 CPU, or numba's JIT.

What must hold: a precompiled entry point runs only for exactly the argument types it was
compiled for (the type key follows numba's typeof), it computes the very bits numba's kernel
computes, an edited kernel is never served from a stale module, a solve and the main job need
no compile (numba is not even imported), and a user's own numba functions are untouched.
"""

import ast
import builtins
import importlib.util
import os
import pickle
import shutil
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import segment
from segment import jit
from segment.jit import aot, build, cache, sources
from segment.jit.kernel import KERNELS, Kernel
from segment.jit.types import from_json, numba_type, to_json, type_key

ROOT = Path(__file__).resolve().parents[1]
PRECOMPILED = jit.status()["precompiled"]
needs_precompiled = pytest.mark.skipif(
    not PRECOMPILED, reason=f"precompiled kernels not in use: {jit.status()['reason']}")


def _arrays():
    a = np.arange(12.0).reshape(3, 4)
    ro = np.zeros(5)
    ro.setflags(write=False)
    return {"C 2-D": a, "F 2-D": np.asfortranarray(a), "strided": a[:, ::2],
            "1-D": np.zeros(6), "0-D": np.array(1.5), "empty (0, 9)": np.zeros((0, 9)),
            "bool": np.zeros(3, bool), "int64": np.arange(4), "complex": np.zeros(2, complex),
            "read-only": ro, "float32": np.zeros(3, np.float32)}


VALUES = {**_arrays(), "float": 1.5, "int": 7, "bool": True, "complex": 1j, "None": None,
          "np.float64": np.float64(2.0), "np.int64": np.int64(3), "np.bool_": np.bool_(False),
          "tuple of arrays": (np.zeros(3), np.zeros((2, 2))),
          "uniform tuple": (1.0, 2.0, 3.0), "nested tuple": (True, np.zeros(6), (1, 2.0))}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_the_type_key_is_numbas_typeof(name):
    numba = pytest.importorskip("numba")
    value = VALUES[name]
    key = type_key((value,))
    assert key is not None, name
    expected = numba.typeof(value)
    got = numba_type(key[0])
    assert got == expected and str(got) == str(expected), (name, got, expected)
    if isinstance(value, np.ndarray):
        assert (got.mutable, got.aligned, got.layout) == (
            expected.mutable, expected.aligned, expected.layout), name
    assert from_json(to_json(key)) == key


UNALIGNED = np.zeros(8 * 6 + 1, dtype=np.uint8)[1:].view(np.float64)


@pytest.mark.parametrize("value", [[1.0, 2.0], np.float32(1.0), 2 ** 70, "text", object(),
                                   (np.zeros(2), [1]), UNALIGNED],
                         ids=lambda v: type(v).__name__ if type(v) is object else repr(v))
def test_types_without_a_key_go_to_numba(value):
    assert type_key((1.0, value)) is None


def test_a_float32_array_never_reaches_float64_code():
    """The precompiled wrapper does not check types: the key must (float32 memory read as
    float64 would be garbage, or a crash)."""
    from segment.core.residual import residual_real

    model = segment.c5c6()
    load = segment.LOAD_CASES["FLX"]
    right = (np.zeros(6), load._vector, model._packed)
    wrong = (np.zeros(6, np.float32), load._vector, model._packed)
    if PRECOMPILED:
        assert residual_real.precompiled_for(right) is not None
    assert residual_real.precompiled_for(wrong) is None


def test_kernels_pickle_by_name():
    from segment.core.newton import _solve_predicted

    assert pickle.loads(pickle.dumps(_solve_predicted)) is _solve_predicted
    assert all(isinstance(k, Kernel) for k in KERNELS.values())


def test_the_digest_follows_kernel_sources_only(tmp_path):
    src = tmp_path / "segment"
    shutil.copytree(sources.PACKAGE_DIR, src, ignore=shutil.ignore_patterns("__pycache__",
                                                                            "*.so"))
    before = sources.digest(src)
    assert before == sources.digest(src)          # deterministic
    for name in ("report/build.py", "__init__.py", "jit/aot.py"):   # no kernels
        path = src / name
        path.write_text(path.read_text() + "\n# an edit outside the kernels\n")
        assert sources.digest(src) == before, name
    for name in ("elements/facet.py", "jit/exports.json", "jit/types.py", "jit/build.py"):
        path = src / name
        text = path.read_text()
        path.write_text(text + ("\n" if name.endswith(".json") else "\n# an edit\n"))
        assert sources.digest(src) != before, name
        assert cache.cache_folder(src, base=tmp_path) != cache.cache_folder(
            sources.PACKAGE_DIR, base=tmp_path)
        path.write_text(text)


def _module_globals(path: Path) -> tuple[set, dict]:
    """Names assigned at module level in ``path``, and names imported: name -> module."""
    tree = ast.parse(path.read_text())
    assigned, imported = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        assigned.add(n.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            assigned.add(node.name)
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                imported[a.asname or a.name] = node.module
    return assigned, imported


def _names(code: types.CodeType) -> set:
    found = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found |= _names(const)
    return found


def test_every_global_a_kernel_reads_is_hashed():
    """A constant a kernel reads is compiled into it: its module must be in the digest, or an
    edit of the constant would leave stale compiled code."""
    hashed = {p.resolve() for p in sources.kernel_files()}
    for path in hashed:                 # every kernel module, so every kernel is registered
        if path.suffix == ".py" and path.parent.name != "jit":
            rel = path.relative_to(sources.PACKAGE_DIR).with_suffix("")
            importlib.import_module(".".join(("segment", *rel.parts)).removesuffix(".__init__"))
    bad = []
    for name, kernel in sorted(KERNELS.items()):
        g = kernel.py_func.__globals__
        path = Path(g["__file__"]).resolve()
        assert path in hashed, f"{name}: its module {path} is not hashed"
        assigned, imported = _module_globals(path)
        for ref in sorted(_names(kernel.py_func.__code__)):
            if ref not in g:
                continue            # an attribute name (np.zeros), a builtin
            value = g[ref]
            if isinstance(value, (Kernel, types.ModuleType)) or value is range:
                continue
            if ref in assigned:
                continue
            module = imported.get(ref)
            if module is None or not module.startswith("segment"):
                continue            # math.sqrt, numpy names: not ours
            spec = importlib.util.find_spec(module)
            if Path(spec.origin).resolve() not in hashed:
                bad.append(f"{name} reads {ref} from {module}, which is not hashed")
    assert not bad, bad


def test_the_manifest_decides_and_says_why(monkeypatch):
    state = aot._load()
    if not state["precompiled"]:
        assert "not built" in state["reason"] or "changed" in state["reason"], state["reason"]
        return
    monkeypatch.setattr(sources, "digest", lambda *a, **k: "0" * 64)
    stale = aot._load()
    assert not stale["precompiled"] and stale["tables"] == {}
    assert "changed since" in stale["reason"] and "reinstall" in stale["reason"]


def _python(code: str, *, pythonpath: Path | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, cwd=pythonpath or ROOT, timeout=300)
    assert run.returncode == 0, run.stderr
    return run.stdout


@needs_precompiled
def test_an_edited_kernel_is_never_served_stale(tmp_path):
    """A copy of the package with its built module: valid as copied, stale once a kernel
    module changes (one line appended)."""
    shutil.copytree(sources.PACKAGE_DIR, tmp_path / "segment",
                    ignore=shutil.ignore_patterns("__pycache__"))
    code = ("import segment.jit as j, sys; s = j.status(); "
            "print(s['precompiled'], s['reason'], sep='|')")
    fresh = _python(code, pythonpath=tmp_path)
    assert fresh.startswith("True|"), fresh
    facet = tmp_path / "segment" / "elements" / "facet.py"
    facet.write_text(facet.read_text() + "\nEDITED = 1\n")
    stale = _python(code, pythonpath=tmp_path)
    assert stale.startswith("False|") and "changed since" in stale, stale


def test_the_precompiled_module_is_built_here():
    """CI installs with the README's set-up, which builds it: a missing module is a failed
    build (it would silently cost every first run a compile)."""
    assert PRECOMPILED, jit.status()["reason"]
    assert jit.status()["entry_points"] == len(build.load_exports())


@needs_precompiled
def test_a_solve_from_the_command_line_imports_no_numba():
    out = _python("import sys; from segment.cli import main; main(['-q', 'solve', 'FLX']); "
                  "print('numba' in sys.modules)")
    assert out.strip().endswith("False"), out


@needs_precompiled
def test_the_precompiled_code_has_no_instructions_beyond_the_baseline_cpu():
    """SSE2 only: no AVX (ymm/zmm registers) and no FMA, so it runs on every x86-64 CPU."""
    objdump = shutil.which("objdump")
    if objdump is None:
        pytest.skip("objdump (binutils) not installed")
    module = importlib.util.find_spec(aot.MODULE).origin
    text = subprocess.run([objdump, "-d", "--no-show-raw-insn", module], capture_output=True,
                          text=True, check=True).stdout
    assert text.count("\n") > 10_000               # it did disassemble the kernels
    for mark in ("%ymm", "%zmm", "vfmadd", "vfmsub"):
        assert mark not in text, mark


def _equal(a, b) -> bool:
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(
            np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8))
    return type(a) is type(b) and (a == b or (a != a and b != b))


def _copy(args):
    """A deep copy of an argument tuple that keeps each array's type (read-only stays so)."""
    out = []
    for a in args:
        if isinstance(a, tuple):
            a = _copy(a)
        elif isinstance(a, np.ndarray):
            c = a.copy(order="K")
            if not a.flags.c_contiguous and not a.flags.f_contiguous:
                c = np.lib.stride_tricks.as_strided(np.empty(a.size * 2, a.dtype), a.shape,
                                                    tuple(2 * s for s in c.strides))
                c[...] = a
            c.setflags(write=a.flags.writeable)
            a = c
        out.append(a)
    return tuple(out)


@pytest.mark.slow
@needs_precompiled
def test_precompiled_and_numba_kernels_give_the_same_bits():
    """Each kernel a solve, a batch, a state and a ramp call from Python, on the arguments
    they were called with: return values and arrays written in place, bit for bit."""
    calls = {}
    original = Kernel.precompiled_for

    def capture(self, args):
        key = type_key(args)
        if key is not None and (self.name, key) not in calls:
            calls[(self.name, key)] = (self, _copy(args))
        return original(self, args)

    Kernel.precompiled_for = capture
    try:
        model = segment.c5c6()
        for case in ("FLX", "EXT", "AR", "CMP"):
            r = segment.solve(model, segment.LOAD_CASES[case])
            r.state.facet_table()
        segment.solve_many(model, [segment.LOAD_CASES[c] for c in segment.LOAD_CASES])
        segment.ramp(model, segment.LOAD_CASES["FLX"], to_scale=20.0, steps=20)
    finally:
        Kernel.precompiled_for = original
    assert len(calls) >= 4
    for (name, _), (kernel, args) in sorted(calls.items(), key=lambda kv: kv[0][0]):
        fn = kernel.precompiled_for(args)
        assert fn is not None, f"{name}: no precompiled entry point for {type_key(args)}"
        a_args, b_args = _copy(args), _copy(args)
        a = fn(*a_args)
        b = kernel.dispatcher(*b_args)
        assert _equal(a, b), name
        assert _equal(a_args, b_args), f"{name}: arrays written in place differ"


def test_a_parallel_kernel_gives_the_same_bits_on_threads():
    """solve_many on numba's parallel kernel (2 threads) and on the default route."""
    model = segment.c5c6()
    loads = [segment.LOAD_CASES[c] for c in segment.LOAD_CASES]
    one = segment.solve_many(model, loads)
    two = segment.solve_many(model, loads, n_threads=2)
    assert np.array_equal(one.q, two.q) and np.array_equal(one.status, two.status)


def test_a_users_own_kernels_are_not_cached_in_our_folder(tmp_path):
    """Our cache locator is scoped to our sources: numba's settings and the environment stay."""
    numba = jit.load_numba()
    if cache.FOLDER is None:
        pytest.skip("the user chose NUMBA_CACHE_DIR, or there is no writable home")
    assert "NUMBA_CACHE_DIR" not in os.environ
    assert numba.config.CACHE_DIR == ""
    module = tmp_path / "users_kernel.py"
    module.write_text("from numba import njit\n\n@njit(cache=True)\n"
                      "def twice(x):\n    return 2 * x\n")
    spec = importlib.util.spec_from_file_location("users_kernel", module)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    before = set(cache.FOLDER.rglob("*"))
    assert mod.twice(3) == 6
    assert any((tmp_path / "__pycache__").glob("users_kernel.twice*.nbi"))   # numba's default
    assert set(cache.FOLDER.rglob("*")) == before


def test_importing_the_package_changes_no_environment():
    before = dict(os.environ)
    out = _python("import os, json; before = dict(os.environ); import segment; "
                  "segment.solve(segment.c5c6(), segment.LOAD_CASES['FLX']); "
                  "print(json.dumps(before == dict(os.environ)))")
    assert out.strip() == "true"
    assert dict(os.environ) == before
    assert builtins.range is range
