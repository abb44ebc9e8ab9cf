#!/usr/bin/env bash
# Install everything segment needs on a fresh Debian/Ubuntu machine: the system packages
# (Python venv support, Mesa off-screen OpenGL for pyvista), a virtual environment in .venv and
# the package with its test tools. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(python3-venv libosmesa6 libgl1 libxrender1 libxext6)
if command -v apt-get >/dev/null 2>&1; then
    missing=()
    for pkg in "${APT_PACKAGES[@]}"; do
        dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
    done
    if [ "${#missing[@]}" -gt 0 ]; then
        sudo=""
        [ "$(id -u)" -eq 0 ] || sudo="sudo"
        echo "setup: installing system packages: ${missing[*]}"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
else
    echo "setup: no apt-get here; install Mesa off-screen OpenGL (libosmesa) yourself" >&2
fi

python=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$python" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[dev]"
echo "setup: done ($(.venv/bin/python --version), segment installed in .venv)"
