"""Execute the notebooks in place so their committed outputs are current.

    .venv/bin/python scripts/execute_notebooks.py [notebooks/01_tour.ipynb ...]

Runs each notebook top to bottom with nbclient (kernel: this Python) from the notebooks/
folder and writes the outputs back into the file, with the state of its widgets (nbclient's
``store_widget_state``) so that a notebook viewer shows them. Widget model ids are random per
run; they are renumbered in order of creation, and no execution times are recorded, so that
the file is the same on every run. CI
does not write: it runs the notebooks with ``pytest --nbmake`` as part of the README's test
command.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent


WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def renumber_widgets(nb):
    """The notebook with its widget model ids replaced by 0000...0001, ... (creation order)."""
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    if not state:
        return nb
    text = json.dumps(nb)
    for k, old in enumerate(list(state)):
        text = text.replace(old, f"{k + 1:032x}")
    return nbformat.from_dict(json.loads(text))


def main(argv: list[str]) -> int:
    paths = [Path(p) for p in argv] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    for path in paths:
        t0 = time.perf_counter()
        nb = nbformat.read(path, as_version=4)
        NotebookClient(nb, timeout=600, kernel_name="python3", store_widget_state=True,
                       record_timing=False,
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        nbformat.write(renumber_widgets(nb), path)
        print(f"{path.name}: executed in {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
