"""Section 1: findings first. The model and its conventions are written in order; the
findings and the verdict per comparison are written last, from the numbers of every section,
and put at the top (:func:`finish`)."""

from __future__ import annotations

import numpy as np

from segment._version import __version__
from segment.report.document import NOT_AVAILABLE, RUN_FILE, Report
from segment.report.figures import available_series
from segment.report.findings import findings
from segment.report.verdicts import VERDICT_SD_FRACTION, verdict_count, verdict_table

KEY = "findings"
TITLE = "Findings"


def write(rep, s) -> None:
    """The model and its conventions; marks where :func:`finish` puts the findings."""
    available, missing = available_series(s.ref)
    s.extra["findings_at"] = len(rep.blocks)
    rep.subheading("Model and conventions")
    rep.bullets([
        f"Model: `segment` {__version__}, the C5–C6 model of Kecskeméthy, Lange and "
        "Grabner (DETC2000/MECH-6821) with disc (eq. 1, Table 2), six ligaments (Tables 3, 4) "
        "and two facet joints as regularized cylinder end-face contacts.",
        "Conventions: C6 fixed, +x anterior, +z superior, +y left; q = (x, y, z, φx, φy, φz) "
        "with p = s0 + R0 (x, y, z), R = R0 Rx Ry Rz, "
        f"s0 = ({', '.join(f'{v:g}' for v in s.params.reference.s0)}) mm, "
        f"R0 = Ry({np.degrees(s.params.reference.phi_y):g}°). "
        "φy > 0 is flexion. Loads: force through the C5 origin and pure moment, fixed in the "
        "joint frame; 20 N and 1.8 N m.",
        "Displacements in this report are measured from the unloaded equilibrium of each "
        "configuration (what an experiment measures) unless a table says otherwise; "
        f"{s.section('unloaded')} gives the offset to the reference pose.",
        "Configurations: intact = disc + 6 ligaments + 2 facets; posterior removed = disc + "
        "ALL + PLL (Moroney's second test); disc only = eq. (1) alone.",
        f"Published displacement series with values: {', '.join(available) or 'none'}; "
        f"{NOT_AVAILABLE}: {', '.join(missing) or 'none'} (fill them into "
        "`validation/reference/published_displacements.csv` and rerun).",
        "Everything in this report is deterministic, so a fresh run reproduces it file for "
        "file; the input checksums are in the appendix, and when and where it ran, with the "
        f"solver timings, in `{RUN_FILE}` (not tracked by git).",
    ])


def finish(rep, s) -> None:
    """The findings and the verdict table, from every section's numbers, shown first."""
    cal, forces = s.section("calibration"), s.section("forces")
    verdicts = verdict_table(s.agree, flexion_stiffness=s.extra.get(
        "validation_flexion_stiffness"), failure=s.extra.get("failure_loads"))
    opening = Report(rep.title)
    opening.bullets(findings(agree=s.agree, verdicts=verdicts, bands=s.unc_bands, sens=s.sens,
                             sobol=s.sobol, reach=s.extra["calibration_reach"], disp=s.disp,
                             units=dict(zip(s.space.names, s.space.units, strict=True)),
                             calibration_section=s.section("calibration"))
                     + list(s.extra.get("findings_more", [])))
    opening.subheading("Verdict per comparison")
    opening.text(
        "Each comparison with published data is judged against the reference's corridor: "
        "Moroney's mean ± SD where the SD is available. Moroney's SDs are not available to "
        f"us, so the corridor used throughout is the reference ± {100 * VERDICT_SD_FRACTION:g} % "
        f"(the SD assumed for calibration, {cal}); published ranges (Voo et al. 1998) are "
        "used as they are. Disc only against Table 2 (rounding tolerance) and posterior "
        "removed against Moroney's disc segment are consistency checks, counted apart: Table "
        "2's disc stiffness was measured on those very specimens, so they test the "
        "implementation, not the model. Comparisons without a reference value (intact force "
        "cases, the published displacement series) are not available and get no verdict; "
        f"facet forces ({forces}) are compared qualitatively. The centre of rotation ({cal}) "
        "is left out of this table and its count: Anderst et al. 2013 measure it from a "
        f"reference point on C6 that is not available to us, so {cal} judges it against "
        "their 95 % confidence intervals from three assumed reference points, each verdict "
        "conditional on its point.")
    shown = verdicts.copy()
    shown.attrs["same_precision"] = ["model", "reference", "corridor_low", "corridor_high"]
    opening.table("verdicts", verdicts, shown)
    opening.text(verdict_count(verdicts))
    at = s.extra["findings_at"]
    rep.blocks[at:at] = opening.blocks
    rep.tables = {"verdicts": opening.tables["verdicts"], **rep.tables}

