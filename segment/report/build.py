"""``segment validate``: run the study and write the report (Markdown, HTML, figures, CSV)."""

from __future__ import annotations

import datetime as _dt
import json
import logging
import platform
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from segment._version import __version__
from segment.report.document import CSV_FLOAT_FORMAT, RUN_FILE, Report
from segment.report.drawing import FigureDrawer, deferred_layout
from segment.report.figures import DPI
from segment.report.picture_cache import PictureCache
from segment.report.sections import SECTIONS, overview
from segment.report.study import REPORT_SOBOL_EVALUATIONS, compute_study

log = logging.getLogger("segment.report")


def build_report(out_dir: str | Path = "validation/report", *, reference_dir=None,
                 data_dir=None, progress: Callable[[str], None] | None = None,
                 solver_repeat: int = 30, uncertainty_samples: int = 200,
                 sobol_evaluations: int = REPORT_SOBOL_EVALUATIONS,
                 pictures: PictureCache | None = None) -> Report:
    """Run the validation study and write the report into ``out_dir``.

    Parameters
    ----------
    out_dir : path
        Output folder (created); ``report.md``, ``report.html``, ``figures/``, ``tables/``.
    reference_dir : path, optional
        Folder of reference CSVs (default: the packaged ``validation/reference``).
    data_dir : path, optional
        Folder of model parameter CSVs (default: the packaged ``data/``).
    progress : callable, optional
        Called with a short message at each stage (default: ``logging.info``).
    solver_repeat : int
        Solves per case for the timing table.
    uncertainty_samples : int
        Sampled models for the uncertainty bands (seed 0: reproducible).
    sobol_evaluations : int
        Minimum model evaluations of the report's Sobol study (seed 0); small by default to
        keep ``segment validate`` fast (``segment sensitivity`` runs >= 1e5).
    pictures : PictureCache, optional
        Where pictures drawn before from the same content are read and new ones kept
        (:mod:`segment.report.picture_cache`; default :meth:`PictureCache.default`, the user's
        cache folder). ``PictureCache(None)`` draws everything.

    The uncertain parameters are ``parameter_space.csv`` of ``data_dir`` when it has one,
    else the packaged file.
    """
    say = progress or log.info
    t_start = time.perf_counter()
    out = Path(out_dir)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    (out / "tables").mkdir(parents=True, exist_ok=True)

    # The 3-D renders (OSMesa, one core, a few seconds each) run on a second thread while
    # this one computes the study and builds the figures: VTK releases the GIL while it
    # renders. The figures are drawn by a worker process as each section hands them over
    # (segment.report.drawing). Each render and drawing is a pure function of its inputs, so
    # the bytes do not depend on where they were made, and a picture drawn before from the
    # same inputs is read from the picture cache instead.
    pictures = PictureCache.default() if pictures is None else pictures
    with (ThreadPoolExecutor(max_workers=1, thread_name_prefix="segment-render") as renders,
          FigureDrawer(DPI, pictures) as draw, deferred_layout()):
        study = compute_study(reference_dir=reference_dir, data_dir=data_dir, say=say,
                              solver_repeat=solver_repeat,
                              uncertainty_samples=uncertainty_samples,
                              sobol_evaluations=sobol_evaluations, background=renders,
                              pictures=pictures)
        study.numbers = {section.KEY: n for n, section in enumerate(SECTIONS, start=1)}
        rep = Report("C5–C6 validation report", draw=draw)
        say("writing the report")
        for n, section in enumerate(SECTIONS, start=1):
            rep.heading(f"{n}. {section.TITLE}")
            section.write(rep, study)
        overview.finish(rep, study)

        images = {name: png.result() if isinstance(png, Future) else png
                  for name, png in rep.images.items()}
    for name in rep.images:
        (out / "figures" / f"{name}.png").write_bytes(images[name])
    for name, df in rep.tables.items():
        df.to_csv(out / "tables" / f"{name}.csv", index=False, float_format=CSV_FLOAT_FORMAT)
    (out / "report.md").write_text(rep.markdown())
    (out / "report.html").write_text(rep.html(images))
    runtime = time.perf_counter() - t_start
    run = {"generated_utc": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S"),
           "segment": __version__, "machine": platform.machine(),
           "python": platform.python_version(), "runtime_s": round(runtime, 2),
           "solver_time_ms": {row.case: row.time_ms for row in study.solver.itertuples()},
           "solver_residual_norm": {row.case: row.residual_norm
                                    for row in study.solver.itertuples()}}
    run["pictures"] = {"cache": None if pictures.root is None else str(pictures.root),
                       "read": pictures.hits, "drawn": pictures.misses}
    (out / RUN_FILE).write_text(json.dumps(run, indent=2) + "\n")
    pictures.prune()
    reused = (f"; {pictures.hits} of {pictures.hits + pictures.misses} pictures read from "
              f"{pictures.root}" if pictures.root is not None else "")
    say(f"report written to {out} ({runtime:.1f} s{reused})")
    return rep
