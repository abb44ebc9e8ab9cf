"""Sensitivity to our assumptions: tornado (one at a time) and Sobol indices."""

from __future__ import annotations

from segment.report.document import round_columns
from segment.report.figures import fig_sensitivity_overview, fig_tornado
from segment.studies.sobol import dominant_parameters

KEY = "sensitivity"
SOBOL_DECIMALS = {"S1": 4, "S1_conf": 4, "ST": 4, "ST_conf": 4}
"""Sobol indices and their 95 % bootstrap half-widths are written with 4 decimals: the
smallest 95 % half-width of an index above 0.01 is about 0.002 at the report's N = 256, and the
indices of parameters without effect are noise of 1e-12 that differs between CPUs."""
CHANGE_DECIMALS = 4
"""The tornado's changes [%] with 4 decimals: two equilibria converged to 1e-10 make them good
to about 1e-7 %, and a change near zero is noise that differs between CPUs."""
TITLE = "Sensitivity to our assumptions"


def write(rep, s) -> None:
    """Write this section into ``rep`` from the study ``s``."""
    n_assumed = sum("assumed" in x.lower() for x in s.space.sources)
    rep.text(f"The uncertain parameters are `{s.space_file.name}` ({s.space.dim} parameters, "
             f"{n_assumed} of them assumptions rather than published ranges; every row names "
             "its source): the facet gap, inclination (per side), radius and blending "
             "constant C, each ligament's rest length (Table 4 rounds them to whole "
             "millimetres: ±0.5 mm) and stiffness, and the disc stiffness per direction. "
             "The tornado chart moves one parameter at a time to its lower and upper bound; "
             "the Sobol indices vary all of them at once over their priors "
             "(`segment.sobol.sobol_study`: S1 is the share of the variance a parameter "
             "causes alone, ST including its interactions).")
    rep.figure("sensitivity", fig_tornado(s.sens, s.cases),
               "Tornado chart: change of each case's main displacement [%], one parameter "
               "at a time at its bounds")
    rep.figure("sensitivity_overview", fig_sensitivity_overview(s.sens, s.sobol, s.cases),
               "One at a time (left) and all at once (right, Sobol total index ST) for each "
               "case's main displacement")
    rep.text(f"Sobol design: N = {s.sobol.n_base} (Saltelli, {s.sobol.n_evaluations:,} parameter "
             f"sets, each solved unloaded and for the nine cases, seed 0, "
             f"{s.sobol.conf_level:.0%} bootstrap intervals; {s.sobol.n_failed} failed). The "
             "report uses this small N to keep `segment validate` fast; `segment sensitivity` "
             "runs at least 100,000 evaluations by default and narrows the intervals. Which "
             "parameters dominate (ST ≥ 0.1), written from the numbers:")
    rep.bullets([*dominant_parameters(s.sobol),
                 *dominant_parameters(s.sobol, quantity="phi_y")])
    rep.table("sensitivity", round_columns(s.sens, {"change_pct": CHANGE_DECIMALS}),
              s.sens.pivot_table(index=["parameter", "setting"], columns="case",
                               values="change_pct", sort=False)[s.names].reset_index())
    rep.tables["sobol_indices"] = round_columns(s.sobol.indices, SOBOL_DECIMALS)
    rep.tables["parameter_space"] = s.space.table()

