"""The unloaded equilibrium (ALL and FL are stretched at the reference pose)."""

from __future__ import annotations

KEY = "unloaded"
TITLE = "The unloaded equilibrium"


def write(rep, s) -> None:
    """Write this section into ``rep`` from the study ``s``."""
    rep.text("ALL and FL are longer than their rest length at the reference pose (computed "
             "from Tables 1 and 4, SOURCES.md §4), so without load C5 settles away from the "
             "reference pose. SOURCES.md §4 quotes an "
             "independent estimate of about −0.36° in φy; compare the rows below (the facets "
             "resist part of that extension).")
    rep.table("unloaded", s.unloaded)
    rep.table("unloaded_ligaments", s.unloaded_ligs)

