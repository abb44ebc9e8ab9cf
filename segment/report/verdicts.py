"""One verdict per comparison with published data: within or outside the reference's
corridor, with the corridor stated."""

from __future__ import annotations

import numpy as np
import pandas as pd

from segment.report.sections.failure import VOO_1998_FLEXION_PEAK_NM
from segment.studies import validation as v

VERDICT_SD_FRACTION = 0.30
"""Corridor half-width where the reference's SD is not available, as a fraction of the value.

Moroney et al. (1988) report means ± SD, but their SDs are not available to us; the stiffnesses
we have come without them. The corridor is then reference ± 30 %: the same assumed SD as the
calibration targets (``calibration_targets.csv``, SD_basis "assumed"), so a verdict and a
calibration z-score of 1 mean the same thing."""
DISC_TABLE2 = "disc only vs Moroney disc segment"
POSTERIOR_REMOVED = "posterior removed vs Moroney disc segment"
CONSISTENCY_CHECKS = (DISC_TABLE2, POSTERIOR_REMOVED)
"""Comparisons with the data the model was built from, not independent validations: Table 2's
disc stiffness is Moroney's posterior-removed measurement, so the disc alone and the disc with
ALL and PLL against those same tests check the implementation, not the model."""
KINDS = ("validation", "consistency check")


def _corridor_verdict(model_value: float, low: float, high: float) -> str:
    return "within" if low <= model_value <= high else "outside"


def verdict_table(agree: pd.DataFrame, *, flexion_stiffness: pd.DataFrame | None = None,
                  failure: pd.DataFrame | None = None) -> pd.DataFrame:
    """One verdict per comparison with published data: within or outside the corridor.

    Parameters
    ----------
    agree : DataFrame
        :func:`segment.studies.validation.agreement_table` (model and reference as magnitudes).
    flexion_stiffness : DataFrame, optional
        ``validation_flexion_stiffness`` of the calibration section (rows of model "published"
        are judged).
    failure : DataFrame, optional
        ``failure_loads`` of section 10 (FLX first rupture against Voo et al. 1998).

    Returns
    -------
    DataFrame
        kind ("validation": data independent of the model's parameters; "consistency
        check": the tests the disc stiffness came from, :data:`CONSISTENCY_CHECKS`),
        comparison, case, unit, model, reference, corridor_low, corridor_high, corridor (how
        the corridor was made), verdict ("within" / "outside"); validations first. Rows
        without a reference value are left out (the agreement section lists them as not
        available).
    """
    rows = []
    for r in agree[np.isfinite(agree["reference"])].itertuples():
        if r.comparison == DISC_TABLE2:
            half = v.TABLE2_REL_TOL * r.reference
            basis = f"± {v.TABLE2_REL_TOL:.0e} relative (rounding; consistency check)"
        else:
            half = VERDICT_SD_FRACTION * r.reference
            basis = f"± {100 * VERDICT_SD_FRACTION:g} % (SD not available: assumed)"
        rows.append({"comparison": r.comparison, "case": r.case, "unit": r.unit,
                     "model": r.model, "reference": r.reference,
                     "corridor_low": r.reference - half, "corridor_high": r.reference + half,
                     "corridor": basis,
                     "verdict": _corridor_verdict(r.model, r.reference - half,
                                                  r.reference + half)})
    if flexion_stiffness is not None:
        pub = flexion_stiffness[flexion_stiffness["model"] == "published"]
        for r in pub.itertuples():
            if not r.converged:
                continue
            rows.append({"comparison": "flexion secant stiffness vs Voo et al. 1998",
                         "case": f"FLX {r.moment_Nm:g} N m", "unit": "N m/deg",
                         "model": r.secant_stiffness_Nm_per_deg, "reference": np.nan,
                         "corridor_low": r.Voo_1998_low, "corridor_high": r.Voo_1998_high,
                         "corridor": "published range (n = 5, levels pooled)",
                         "verdict": _corridor_verdict(r.secant_stiffness_Nm_per_deg,
                                                      r.Voo_1998_low, r.Voo_1998_high)})
    if failure is not None and "FLX" in failure["case"].values:
        flx = failure.set_index("case").loc["FLX"]
        low, high = VOO_1998_FLEXION_PEAK_NM
        if np.isfinite(flx["first_rupture_load"]):
            rows.append({"comparison": "flexion moment at first rupture vs Voo et al. 1998 "
                                       "peak moment", "case": "FLX", "unit": "N m",
                         "model": flx["first_rupture_load"], "reference": np.nan,
                         "corridor_low": low, "corridor_high": high,
                         "corridor": "published range (n = 5, levels pooled)",
                         "verdict": _corridor_verdict(flx["first_rupture_load"], low, high)})
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    kind = np.where(table["comparison"].isin(CONSISTENCY_CHECKS), KINDS[1], KINDS[0])
    table.insert(0, "kind", kind)
    order = np.argsort(table["kind"].map(KINDS.index).to_numpy(), kind="stable")
    return table.iloc[order].reset_index(drop=True)


def verdict_count(verdicts: pd.DataFrame) -> str:
    """The count sentence under the verdict table: validations and consistency checks apart."""
    parts = []
    for kind, label in ((KINDS[0], "Validation against independent data"),
                        (KINDS[1], "Consistency checks (the tests the disc stiffness came "
                                   "from)")):
        sel = verdicts[verdicts["kind"] == kind] if len(verdicts) else verdicts
        out = sel[sel["verdict"] == "outside"]
        parts.append(f"{label}: {len(sel) - len(out)} of {len(sel)} within, {len(out)} "
                     "outside" + (": " + ", ".join(f"{r.comparison.split(' vs ')[0]} {r.case}"
                                                   for r in out.itertuples()) if len(out)
                                  else ""))
    return "; ".join(parts) + "."
