"""Agreement of the three configurations with the references."""

from __future__ import annotations

from segment.studies import validation as v

KEY = "agreement"
TITLE = "Agreement with the references"


def write(rep, s) -> None:
    """Write this section into ``rep`` from the study ``s``."""
    rep.text("Disc only against Table 2 must be exact (the tolerance is rounding of the CSV's "
             f"derived values, {v.TABLE2_REL_TOL:.0e} relative). Intact rotations are compared "
             "with Moroney's intact stiffness (disc + posterior contribution; Moroney et al. "
             "1988 as transcribed in AnyBody AMMR, SOURCES.md §2), turned into a rotation at "
             "1.8 N m. Force cases have no published intact stiffness.")
    rep.table("agreement", s.agree,
              s.agree[["comparison", "case", "unit", "model", "reference", "deviation_pct",
                     "reference_kind", "why"]].rename(columns={"deviation_pct": "deviation [%]",
                                                               "reference_kind": "reference is"}))

