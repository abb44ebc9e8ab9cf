"""``segment validate``: the validation report."""

from __future__ import annotations

import logging
from pathlib import Path

from segment.cli._common import UsageError, check_output_folder, command, progress_bar

DEFAULT_OUT = "validation/report"


def register(sub) -> None:
    p = command(sub, "validate", run, help="write the validation report (Markdown, HTML, CSV)")
    p.add_argument("--out", metavar="DIR", default=None,
                   help=f"output folder; its parent must exist (default: {DEFAULT_OUT}, "
                        "created with its parents)")
    p.add_argument("--reference", metavar="DIR", default=None,
                   help="folder of reference CSVs (default: the packaged validation/reference)")
    p.add_argument("--no-cache", action="store_true",
                   help="draw every figure and 3-D panel again instead of reading the ones "
                        "drawn before from the same content (the cache: $SEGMENT_CACHE_DIR, "
                        "else ~/.cache/segment/report-pictures; SEGMENT_CACHE_DIR=off also "
                        "turns it off)")


def run(args, argv) -> int:
    if getattr(args, "allow_implausible", False):
        raise UsageError("--allow-implausible: the validation report checks its data strictly "
                         "(every value within its plausible range); correct the value, or "
                         "compare implausible data with `segment solve --allow-implausible`")
    if args.out is None:
        args.out = DEFAULT_OUT
        check_output_folder(Path(DEFAULT_OUT).parts[0], "--out")
    else:
        check_output_folder(args.out, "--out")
    from segment._extras import require

    # every extra the report needs, before any work: figures (matplotlib), the 3-D panels
    # (pyvista) and the Sobol indices (SALib). Figures are files, never windows: Agg for this
    # command (no environment variable set)
    require("matplotlib", "report", "segment validate (the report's figures)").use("Agg")
    require("pyvista", "viz", "segment validate (the report's 3-D panels)")
    require("SALib", "study", "segment validate (the report's Sobol indices)")
    from segment.report import PictureCache, build_report

    log = logging.getLogger("segment.validate")
    with progress_bar(args, "validate", unit=" stages") as bar:
        def progress(message: str) -> None:
            log.info(message)
            bar.set_postfix_str(message[:50], refresh=False)
            bar.update()

        build_report(args.out, reference_dir=args.reference, data_dir=args.data,
                     progress=progress,
                     pictures=PictureCache(None) if args.no_cache else None)
    print(f"validation report: {args.out}/report.md and {args.out}/report.html")
    return 0
