"""The references (from REFERENCES.bib) and the appendix: checksums of every input file."""

from __future__ import annotations

import pandas as pd

from segment.core.io import sha256_of
from segment.report.document import RUN_FILE
from segment.studies.reference import format_reference, read_bibliography

KEY = "references"
TITLE = "References"


def write(rep, s) -> None:
    """Write this section and the appendix into ``rep``."""
    rep.text("Where each number comes from, with the arithmetic of the computed ones: "
             "`validation/reference/SOURCES.md`; the same list in BibTeX: "
             "`validation/reference/REFERENCES.bib`.")
    rep.bullets([f"[{key}] {format_reference(entry)}"
                 for key, entry in read_bibliography().items()])
    rep.heading("Appendix A. Inputs and run details")
    rep.text("SHA-256 of every input file the report read. Run details (date, machine, Python, "
             f"run time, solver timings) change from run to run and are written to `{RUN_FILE}` "
             "next to this report, which git does not track.")
    files = [*s.params.files, *s.ref.files]
    checksums = pd.DataFrame({"file": [f"{p.parent.name}/{p.name}" for p in files],
                              "sha256": [sha256_of(p) for p in files]})
    rep.table("checksums", checksums)

