"""Element forces per case and the share of the load each structure carries."""

from __future__ import annotations

from segment.report.document import denoise
from segment.report.figures import fig_sharing, sharing_note

KEY = "forces"
TITLE = "Element forces per case (intact)"


def write(rep, s) -> None:
    """Write this section into ``rep`` from the study ``s``."""
    rep.figure("load_sharing", fig_sharing(s.share, s.cases),
               "Share of the applied load carried by each structure along the load direction: "
               "signed total element forces, so shares can exceed 100 % or be negative (see "
               "text)")
    rep.tables["load_sharing"] = denoise(s.share)
    rep.text(sharing_note(s.share, s.unloaded_ligs))
    rep.text("Ligament tension [N] per case (strain in `tables/ligaments.csv`):")
    rep.table("ligaments", s.ligs,
              s.ligs.pivot(index="case", columns="ligament", values="tension_N")
              .loc[s.names].reset_index())
    past = s.ligs[s.ligs["beyond_eps_max"]]
    rep.text("Ligaments past ε_max (point C of Table 3) in these cases: "
             + (", ".join(f"{r.ligament} in {r.case} (strain {r.strain:.2f})"
                          for r in past.itertuples()) or "none") + ".")
    rep.text("Facet joints per case: regime, dislocated (C5's facet has left C6's), "
             "penetration [mm] and contact force [N]:")
    rep.table("facets", s.facets, s.facets[["case", "facet", "regime", "dislocated",
                                        "penetration_mm", "force_N"]])
    rep.text("Facet-force order of magnitude: a C5–C6 finite element study (cited by Jaumard "
             "et al. 2011, J Biomech Eng; SOURCES.md §3) under 73.6 N compression alone and "
             "with 1.8 N m. The source does not say whether its number is one facet or both: "
             "both are shown.")
    rep.table("facet_force_check", s.facet_check,
              s.facet_check[["case", "left_N", "right_N", "sum_N", "reference_N"]])

