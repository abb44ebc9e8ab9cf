"""Main and coupled displacements of the nine cases in the three configurations."""

from __future__ import annotations

import numpy as np
import pandas as pd

from segment.report.document import NOT_AVAILABLE
from segment.report.figures import available_series, fig_coupled, fig_main
from segment.report.renders import POSES_MAGNIFY, render_poses
from segment.studies.reference import DISPLACEMENT_COLUMNS

KEY = "displacements"
TITLE = "Main and coupled displacements"


def write(rep, s) -> None:
    """Write this section into ``rep`` from the study ``s``."""
    missing = available_series(s.ref)[1]
    rep.text("Each case's equilibrium, in the three configurations. Translations in mm, "
             "rotations in degrees, from the unloaded equilibrium. Bars with hatching are "
             "published series (Moroney mean with ±SD); black markers are Moroney's stiffness "
             "turned into a displacement (load / k, a derived value).")
    rep.figure("main_displacements", fig_main(s.disp, s.ref, s.cases),
               "Main displacement per case and configuration, with every reference available")
    rep.figure("coupled_displacements", fig_coupled(s.disp, s.ref, s.cases),
               "Main and coupled displacements (paper's Fig. 10/12 layout)")
    if s.poses_render is None:
        s.say("rendering the nine poses in 3-D")
    rep.image("poses_3d", s.poses_render or render_poses(s.model, s.cases, cache=s.pictures),
              "The nine equilibria of the intact model (C6 fixed; ligaments coloured by "
              "tension, slack ones grey; red arrows: facet forces on C5). C5 is drawn at its "
              "true pose; translucent blue: C5 at the unloaded equilibrium; orange: C5 with "
              f"its displacement from the unloaded equilibrium magnified {POSES_MAGNIFY}×, "
              "display only (at the nominal loads the motions are 2–3° and 0.1–0.4 mm, too "
              "small to see), next to the true pose, never instead of it. Panel titles and "
              "the tables give the true main displacement from the unloaded equilibrium. "
              "Sagittal cases seen from the left, LS, LB and AR from behind. The vertebrae "
              "are display geometry, the BodyParts3D meshes of a real C5 and C6 (© The "
              "Database Center for Life Science, CC BY-SA 2.1 JP) registered to the model's "
              "landmarks; the mechanics never use them.")
    shown = s.disp[["configuration", "case", *DISPLACEMENT_COLUMNS, "iterations", "intact"]]
    rep.table("displacements", s.disp, shown)
    beyond = s.disp[~s.disp["intact"]]
    rep.text("Equilibria past a failure limit (a dislocated facet, a ligament past ε_max of "
             "Table 3; `intact` False above): "
             + ("; ".join(f"{r.configuration} {r.case}: {r.limit_flags}"
                          for r in beyond.itertuples()) or "none") + ".")
    ref_rows = []
    for series in s.ref.displacements["series"].unique():
        sel = s.ref.displacements[s.ref.displacements.series == series]
        if np.isfinite(sel[list(DISPLACEMENT_COLUMNS)].to_numpy()).any():
            ref_rows.append(sel[["series", "case", *DISPLACEMENT_COLUMNS]])
    if ref_rows:
        rep.text("Published displacements (as filled in the reference table):")
        filled = pd.concat(ref_rows)
        rep.table("published_displacements", filled)
    rep.text(f"Published displacement tables {NOT_AVAILABLE}: " + (", ".join(missing) or "none")
             + ". Where each is published is recorded in the reference CSV's `note` column.")

