#!/usr/bin/env bash
# Set up segment on Debian/Ubuntu: a virtual environment in .venv with the package and the
# extras you ask for, plus the system packages that off-screen rendering and the browser tests
# need. Safe to rerun.
#
#   bash scripts/setup.sh              # everything: tests, report, 3-D views, studies,
#                                      # notebooks (JupyterLab) and browser tests ([dev])
#   EXTRAS=report bash scripts/setup.sh  # e.g. the report only; EXTRAS= for the core alone
#
# Every step says what it installs; pip and apt show their own progress. System packages are
# installed only when the chosen extras include 3-D rendering (pyvista), and Debian's chromium
# only with the test tools ([dev]: the browser tests of the web explorer drive it headless;
# nothing downloads a browser build), with apt-get as root or through sudo when sudo works
# without a password prompt. When neither is possible the script prints the exact command to
# run and continues: everything except rendering (and the browser tests) works.
set -euo pipefail
cd "$(dirname "$0")/.."

EXTRAS=${EXTRAS-dev}
python=${PYTHON:-python3}
say() { echo "setup: $*"; }

# --- system packages: only for rendering (Mesa off-screen OpenGL and the X libraries vtk links)
RENDER_PACKAGES=(libosmesa6 libgl1 libxrender1 libxext6)
BROWSER_PACKAGES=(chromium)   # headless browser tests of `segment explore --web` ([dev])
case ",$EXTRAS," in
    *,dev,* | *,all,* | *,viz,*) needs_render=1 ;;
    *) needs_render=0 ;;
esac
case ",$EXTRAS," in
    *,dev,*) RENDER_PACKAGES+=("${BROWSER_PACKAGES[@]}") ;;
esac
if [ "$needs_render" = 1 ]; then
    if command -v dpkg >/dev/null 2>&1; then
        missing=()
        for pkg in "${RENDER_PACKAGES[@]}"; do
            dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
        done
        if [ "${#missing[@]}" -eq 0 ]; then
            say "system packages for rendering (and browser tests) are present (${RENDER_PACKAGES[*]})"
        else
            if [ "$(id -u)" -eq 0 ]; then
                run_root=()
            elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
                run_root=(sudo)
            else
                run_root=(none)
            fi
            if [ "${run_root[*]-}" = none ]; then
                say "cannot install system packages here (not root, no password-less sudo)."
                say "3-D rendering (and, for [dev], the browser tests) need them; as root run:"
                say "    apt-get install -y ${missing[*]}"
                say "continuing: everything except rendering will work."
            else
                say "installing system packages for off-screen rendering and browser tests: ${missing[*]}"
                "${run_root[@]}" apt-get update
                DEBIAN_FRONTEND=noninteractive "${run_root[@]}" apt-get install -y "${missing[@]}"
            fi
        fi
    else
        say "no dpkg/apt here: for 3-D rendering install Mesa's off-screen OpenGL (OSMesa)"
        say "with your system's package manager; continuing without it."
    fi
fi

# --- the virtual environment
if [ ! -x .venv/bin/python ]; then
    say "creating the virtual environment .venv with $("$python" --version 2>&1)"
    if ! "$python" -m venv .venv; then
        rm -rf .venv
        say "error: '$python -m venv' failed; install Python's venv module (Debian/Ubuntu:"
        say "    apt-get install -y python3-venv) and run this script again."
        exit 1
    fi
fi

target="."
[ -n "$EXTRAS" ] && target=".[$EXTRAS]"
say "installing c5c6-segment (import name: segment) with extras [${EXTRAS:-none}] into .venv"
say "core: numpy scipy pandas numba tqdm; viz: pyvista; report: matplotlib;"
say "study: SALib dask[distributed] pyarrow emcee; notebook: anywidget ipywidgets jupyterlab;"
say "opensim: opensim (CPython 3.11-3.13, Linux x86-64); mujoco: mujoco (segment export --check);"
say "docs: sphinx pydata-sphinx-theme myst-nb numpydoc sphinxcontrib-bibtex (the documentation site);"
say "dev: all of these and the test tools (pytest, playwright driving the system chromium)"
.venv/bin/python -m pip install --upgrade --progress-bar on pip
# setuptools frames an informational note about editable installs ("be careful with folders
# ... with the same name as your package") as a warning between "!!" lines; it is expected
# here (the package is imported from this checkout on purpose), so it is filtered out.
PYTHONWARNINGS="ignore:Editable installation:UserWarning" \
    .venv/bin/python -m pip install --progress-bar on -e "$target"
say "done: $(.venv/bin/segment --version) in .venv ($(.venv/bin/python --version))"
