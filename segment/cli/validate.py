"""``segment validate``: the validation report."""

from __future__ import annotations

import logging

from segment.cli._common import check_output_folder, command, progress_bar


def register(sub) -> None:
    p = command(sub, "validate", run, help="write the validation report (Markdown, HTML, CSV)")
    p.add_argument("--out", metavar="DIR", default="validation/report",
                   help="output folder (default: validation/report)")
    p.add_argument("--reference", metavar="DIR", default=None,
                   help="folder of reference CSVs (default: the packaged validation/reference)")


def run(args, argv) -> int:
    check_output_folder(args.out, "--out")
    from segment._extras import require

    # figures are files, never windows: Agg for this command (no environment variable set)
    require("matplotlib", "report", "segment validate (the report's figures)").use("Agg")
    from segment.report import build_report

    log = logging.getLogger("segment.validate")
    with progress_bar(args, "validate", unit=" stages") as bar:
        def progress(message: str) -> None:
            log.info(message)
            bar.set_postfix_str(message[:50], refresh=False)
            bar.update()

        build_report(args.out, reference_dir=args.reference, data_dir=args.data,
                     progress=progress)
    print(f"validation report: {args.out}/report.md and {args.out}/report.html")
    return 0
