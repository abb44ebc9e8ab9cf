"""Load–displacement curves from −2 to +2 times the nominal load."""

from __future__ import annotations

from segment.report.document import denoise
from segment.report.figures import fig_curves

KEY = "curves"
TITLE = "Load–displacement curves"


def write(rep, s) -> None:
    """Write this section into ``rep`` from the study ``s``."""
    rep.text("Main displacement from −2 to +2 times the nominal load. The kinks come from the "
             "piecewise-linear disc (stiffness changes sign-wise), ligament slack and support "
             "points, and the onset of facet contact.")
    rep.figure("load_displacement", fig_curves(s.curves, s.ref, s.cases),
               "Load–displacement curves of the three configurations, one panel per loaded "
               "coordinate: cases that load it with opposite signs are the two halves of one "
               "curve and share the panel")
    rep.tables["load_displacement"] = denoise(s.curves)

