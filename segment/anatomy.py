"""Published spreads of the facet geometry that the model's assumptions are tested against.

The papers give no facet geometry; ``data/facets.csv`` builds it from published anatomy
(validation/reference/SOURCES.md §3). The sensitivity study (:mod:`segment.validation`) and
the uncertainty sampling (:mod:`segment.uncertainty`) both vary it within these published spreads.
"""

from __future__ import annotations

__all__ = ["FACET_INCLINATION_DEG", "FACET_RADIUS_MM"]

FACET_INCLINATION_DEG = {"right": (42.3, 4.4), "left": (43.2, 5.4)}
"""Mean and SD [deg] of the C6 superior facet's angle to the transverse plane, per side
(PMC2219934 Table 2)."""

FACET_RADIUS_MM = (4.9, 5.6)
"""Range [mm] of the equivalent-area circle radius of the C5/C6 facets (computed from the
published areas, SOURCES.md §3)."""
