"""Execute the notebooks in place so their committed outputs are current.

    .venv/bin/python scripts/execute_notebooks.py [notebooks/01_tour.ipynb ...]

Runs each notebook top to bottom with nbclient (kernel: this Python) from the notebooks/
folder and writes the outputs back into the file. CI does not write: it runs the notebooks
with ``pytest --nbmake`` as part of the README's test command.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    paths = [Path(p) for p in argv] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    for path in paths:
        t0 = time.perf_counter()
        nb = nbformat.read(path, as_version=4)
        NotebookClient(nb, timeout=600, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        nbformat.write(nb, path)
        print(f"{path.name}: executed in {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
