"""The largest images the off-screen renderer produces: the reason of ``segment render --size``'s
limits (``segment/cli/views.py``).

Renders FLX at sizes on both sides of each limit and records whether the image is drawn: a
render is white-backed, so an image with more than 1 % pure-black pixels (a black frame or a
black band) counts as not drawn. Needs pyvista and Mesa's off-screen OpenGL; the limits are
those of the OpenGL implementation of this machine (llvmpipe here). Takes a few minutes and
about 2 GB of memory::

    python scripts/render_limits.py [--json benchmarks/results/render_limits.json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np

SIZES = ((16384, 100), (16385, 100), (100, 16384), (100, 16385), (20000, 100),
         (16384, 8192), (16384, 8193), (11584, 11584), (11585, 11585))
BLACK_FRACTION = 0.01


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default=str(Path(__file__).resolve().parent.parent
                                              / "benchmarks" / "results" / "render_limits.json"))
    args = parser.parse_args(argv)
    from PIL import Image

    import segment
    from segment.views import viz

    Image.MAX_IMAGE_PIXELS = None
    result = segment.solve(segment.c5c6(), segment.LOAD_CASES["FLX"])
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for w, h in SIZES:
            path = viz.render(result, Path(tmp) / f"r_{w}x{h}.png", size=(w, h))
            img = np.asarray(Image.open(path).convert("RGB"))
            black = float((img.max(axis=2) == 0).mean())
            rows.append({"width": w, "height": h, "image_shape": list(img.shape[:2]),
                         "black_fraction": round(black, 3),
                         "drawn": bool(black <= BLACK_FRACTION)})
            print(rows[-1], flush=True)
            path.unlink()
    import vtk

    out = {"renderer": f"VTK {vtk.vtkVersion.GetVTKVersion()} off-screen",
           "criterion": f"drawn: at most {BLACK_FRACTION:.0%} pure-black pixels",
           "sizes": rows}
    Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
