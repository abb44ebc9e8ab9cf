"""Install and import hygiene: extras, a core install without them, and no environment changes."""

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

import segment
from segment._extras import DIST_NAME, MissingExtraError, install_hint, require

pytestmark = pytest.mark.slow  # fresh virtual environments and wheels (minutes)

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT_S = 900


def _python(code: str, *, env=None, cwd=None, python=sys.executable):
    return subprocess.run([str(python), "-c", code], capture_output=True, text=True,
                          timeout=TIMEOUT_S, env=env, cwd=cwd, check=False)


def _clean_env():
    """The environment without the variables our imports used to set."""
    return {k: v for k, v in os.environ.items()
            if k not in ("NUMBA_CACHE_DIR", "VTK_DEFAULT_OPENGL_WINDOW", "MPLBACKEND")}


@pytest.mark.parametrize("modules", [["segment"], ["segment", "segment.views.viz"],
                                     ["segment.cli", "segment.report"]])
def test_importing_changes_nothing_in_the_process_environment(modules, tmp_path):
    code = ("import json, os, importlib\n"
            "before = dict(os.environ)\n"
            f"for m in {modules!r}:\n"
            "    importlib.import_module(m)\n"
            "import numba\n"
            "after = dict(os.environ)\n"
            "print(json.dumps({'added': sorted(set(after) - set(before)),\n"
            "                  'changed': sorted(k for k in before if after.get(k) != before[k]),\n"
            "                  'numba_cache_dir': numba.config.CACHE_DIR}))\n")
    proc = _python(code, env=_clean_env(), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out == {"added": [], "changed": [], "numba_cache_dir": ""}


def test_rendering_without_a_display_leaves_the_environment_as_it_was(tmp_path):
    code = ("import os, segment\nfrom segment.views import viz\nbefore = dict(os.environ)\n"
            "r = segment.solve(segment.c5c6(), segment.LOAD_CASES['FLX'])\n"
            f"p = viz.render(r, {str(tmp_path / 'x.png')!r}, size=(64, 48))\n"
            "assert dict(os.environ) == before, 'environment changed'\nprint(p)\n")
    env = {k: v for k, v in _clean_env().items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    proc = _python(code, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "x.png").stat().st_size > 100


def test_require_names_the_extra():
    assert install_hint("viz") == f'pip install "{DIST_NAME}[viz]"'
    assert require("json", "viz", "x") is json
    with pytest.raises(MissingExtraError, match=r'^segment render needs no_such_module_xyz, '
                                                r'which is not installed: pip install '
                                                r'"c5c6-segment\[viz\]"$'):
        require("no_such_module_xyz", "viz", "segment render")


HIDE = ("import sys\n"
        "for name in {names!r}:\n"
        "    sys.modules[name] = None   # as if the extra were not installed\n"
        "from segment.cli import main\n"
        "sys.exit(main({argv!r}))\n")


@pytest.mark.parametrize(("hidden", "argv", "extra"), [
    (["pyvista", "vtk"], ["render", "FLX", "-o", "x.png"], "viz"),
    (["pyvista", "vtk"], ["explore"], "viz"),
    (["matplotlib", "matplotlib.pyplot"], ["validate", "--out", "rep"], "report"),
    (["pyvista", "vtk"], ["validate", "--out", "rep"], "viz"),
    (["SALib"], ["validate", "--out", "rep"], "study"),
    # issue 20: one line before any work, not a traceback after the folder was made
    (["matplotlib", "matplotlib.pyplot"], ["sensitivity", "--n", "100", "--out", "rep"],
     "report"),
    (["SALib"], ["sensitivity", "--n", "100", "--out", "rep"], "study"),
    (["emcee"], ["calibrate", "--samples", "1000", "--out", "rep"], "study"),
])
def test_a_command_without_its_extra_says_which_to_install(tmp_path, hidden, argv, extra):
    proc = _python(HIDE.format(names=hidden, argv=argv), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith("segment: error: ")
    assert proc.stderr.rstrip().endswith(install_hint(extra)), proc.stderr
    assert proc.stdout == "", proc.stdout          # no work done before the error
    assert not (tmp_path / "x.png").exists() and not (tmp_path / "rep").exists()


def test_segment_viz_without_pyvista_is_an_import_error_naming_the_extra(tmp_path):
    proc = _python("import sys\nsys.modules['pyvista'] = None\n"
                   "try:\n    import segment.views.viz\nexcept ImportError as e:\n    print(e)\n",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith(install_hint("viz"))


def test_one_version():
    from importlib.metadata import version

    assert version(DIST_NAME) == segment.__version__
    cff = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert f"\nversion: {segment.__version__}\n" in cff
    assert f"## {segment.__version__}" in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "MIT License" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert (Path(segment.__file__).parent / "py.typed").is_file()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git to list the sources")
def test_core_install_without_extras_solves_and_hints(wheel, tmp_path):
    """The wheel (``pip install``, no extras) into a fresh venv: segment imports and solves FLX
    from the precompiled kernels (numba is not imported); pyvista and matplotlib are absent;
    `segment render` names the extra in one line."""
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    pip = subprocess.run([str(py), "-m", "pip", "install", "--quiet", str(wheel)],
                         capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    assert pip.returncode == 0, pip.stderr[-3000:]
    proc = _python("import importlib.util as u, segment\n"
                   "assert u.find_spec('pyvista') is None and u.find_spec('matplotlib') is None\n"
                   "r = segment.solve(segment.c5c6(), segment.LOAD_CASES['FLX'])\n"
                   "assert r.converged, r.message\n"
                   "import sys, segment.jit\n"
                   "assert segment.jit.status()['precompiled'], segment.jit.status()\n"
                   "assert 'numba' not in sys.modules\n"
                   "print(round(float(r.displacement_from_unloaded[4] * 57.29577951308232), 3))\n",
                   python=py, cwd=tmp_path, env=_clean_env())
    assert proc.returncode == 0, proc.stderr
    here = segment.solve(segment.c5c6(), segment.LOAD_CASES["FLX"])
    assert float(proc.stdout.split()[-1]) == pytest.approx(
        float(here.displacement_from_unloaded[4]) * 57.29577951308232, abs=1e-3)
    render = subprocess.run([str(env_dir / "bin" / "segment"), "render", "FLX"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    assert render.returncode == 2
    assert render.stderr == f"segment: error: segment render needs pyvista, which is not " \
                            f"installed: {install_hint('viz')}\n"
