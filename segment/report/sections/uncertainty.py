"""Parameter uncertainty: bands over models sampled from the priors."""

from __future__ import annotations

from segment.report.figures import fig_uncertainty

KEY = "uncertainty"
TITLE = "Parameter uncertainty"


def write(rep, s) -> None:
    """Write this section into ``rep`` from the study ``s``."""
    rep.text(f"{s.uncertainty_samples} parameter sets drawn from the priors of "
             f"`{s.space_file.name}` (seed 0), every case solved for each "
             "(`segment.uncertainty.uncertainty_bands`). What is sampled:")
    rep.bullets(list(s.unc.assumptions))
    rep.text("The ranges marked assumed are not published (no spread exists for Tables 2 and "
             "3, the facet gap and C). The bands show how much the predictions depend on "
             "parameters we do not know better; they are not a confidence interval of the "
             "model.")
    rep.figure("uncertainty", fig_uncertainty(s.unc_bands, s.ref, s.cases, s.uncertainty_samples),
               "5-95 % bands of each case's main displacement over the sampled models")
    rep.table("uncertainty", s.unc_bands)

