"""The validation report: ``segment validate`` writes Markdown, HTML, figures and CSV.

:func:`build_report` runs the study of :mod:`segment.studies.validation` once
(:mod:`segment.report.study`), lets each section of :mod:`segment.report.sections` write
itself in order, draws the figures with matplotlib (Agg, no display needed) and writes into
``out_dir``:

* ``report.md`` (figures linked from ``figures/``) and ``report.html`` (self-contained, figures
  embedded);
* ``figures/*.png``;
* ``tables/*.csv``: every number shown.

Modules: ``document`` (the block model, Markdown/HTML, how numbers are printed), ``figures``
(matplotlib), ``renders`` (the 3-D panels), ``verdicts`` and ``findings`` (written from the
numbers), ``study`` (what is computed once), ``sections`` (one module per section),
``drawing`` (the figures drawn in a worker process), ``picture_cache`` (pictures drawn before
from the same content, read back), ``build``.

Reference series with no values are listed as "not available"; nothing is guessed.
"""

from segment.report.build import build_report
from segment.report.document import NOT_AVAILABLE, Report, md_table
from segment.report.figures import (
    fig_coupled,
    fig_curves,
    fig_main,
    fig_sensitivity_overview,
    fig_sharing,
    fig_tornado,
    fig_uncertainty,
)
from segment.report.findings import findings, pct
from segment.report.picture_cache import PictureCache
from segment.report.sections.failure import (
    RAMP_STEPS,
    RAMP_TO_SCALE,
    VOO_1998_FLEXION_PEAK_NM,
    VOO_1998_FLEXION_ROTATION_DEG,
    fig_failure,
)
from segment.report.study import REPORT_SOBOL_EVALUATIONS
from segment.report.verdicts import VERDICT_SD_FRACTION, verdict_table

__all__ = ["NOT_AVAILABLE", "RAMP_STEPS", "RAMP_TO_SCALE", "REPORT_SOBOL_EVALUATIONS",
           "VERDICT_SD_FRACTION", "VOO_1998_FLEXION_PEAK_NM", "VOO_1998_FLEXION_ROTATION_DEG",
           "PictureCache", "Report", "build_report", "fig_coupled", "fig_curves", "fig_failure",
           "fig_main", "fig_sensitivity_overview", "fig_sharing", "fig_tornado", "fig_uncertainty",
           "findings", "md_table", "pct", "verdict_table"]
