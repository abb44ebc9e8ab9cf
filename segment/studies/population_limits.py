"""The validity limits of a virtual population's members (issue 32): the phi_y rows of their
``validity_limits.csv``, derived from the training records.

Per direction of phi_y (:func:`validity_limits`), the largest rotation at which a training
specimen is recorded carrying load, never inside a training specimen's measured range:
flexion, the larger of the static steps and the failure-test peaks of the records not flagged
doubtful (rotation from the start of the test); extension, the static steps (no extension
failure record is undoubted: B04 broke at its casting, B12 and B13 dropped load before their
peaks). The other directions keep the packaged (assumed) limits.

The members (:mod:`segment.studies.virtual_population`) are drawn and ramped under these
limits, and each member's data folder (:mod:`segment.studies.population_result`) carries them.
"""

from __future__ import annotations

import csv
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from segment.core.io import data_dir
from segment.core.validity import load_validity_limits

__all__ = ["validity_limits"]


def validity_limits(data) -> pd.DataFrame:
    """The phi_y rows of ``validity_limits.csv`` from the training records (module docstring):
    coordinate, direction, case, limit_mm, limit_deg, source."""
    fl_static, fl_spec = data.largest_rotation("flexion")
    ex_static, ex_spec = data.largest_rotation("extension")
    f = data.failure
    ok = f[(f["direction"] == "flexion") & ~f["doubtful"].astype(bool)]
    peaks = ok["failure_rotation_from_start_deg"].to_numpy(float)
    k = int(np.argmax(peaks)) if peaks.size else -1
    if k >= 0 and peaks[k] > fl_static:
        flex, why = float(peaks[k]), (
            f"the flexion failure test of specimen {ok['specimen'].iloc[k]} peaked at "
            f"{peaks[k]:.2f} deg from the start of the test (the largest of the records not "
            f"flagged doubtful); the largest static step is {fl_static:.2f} deg ({fl_spec})")
    else:
        flex, why = fl_static, f"the largest static flexion step ({fl_spec})"
    src = "Nightingale et al. 2002, raw NHTSA records (data/specimens/, SOURCES.md §8, §15)"
    return pd.DataFrame([
        {"coordinate": "phi_y", "direction": "+", "case": "FLX", "limit_mm": "",
         "limit_deg": round(flex, 2),
         "source": f"{src}: {why}; the model is not compared beyond the largest rotation at "
                   "which a training specimen is recorded carrying load"},
        {"coordinate": "phi_y", "direction": "-", "case": "EXT", "limit_mm": "",
         "limit_deg": round(ex_static, 2),
         "source": f"{src}: the largest static extension step, {ex_static:.2f} deg "
                   f"({ex_spec}); no extension failure record is undoubted (B04 broke at its "
                   "casting, B12 and B13 dropped load before their peaks), so no larger "
                   "rotation is known to be carried intact"}])


def _limits_rows(base_dir: Path, limits: pd.DataFrame):
    """The rows of ``validity_limits.csv`` of ``base_dir`` with the phi_y rows replaced."""
    with open(base_dir / "validity_limits.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    header, body = rows[0], rows[1:]
    ci, di = header.index("coordinate"), header.index("direction")
    new = {(r["coordinate"], r["direction"]): r for _, r in limits.iterrows()}
    out = []
    for row in body:
        key = (row[ci], row[di])
        if key in new:
            r = new[key]
            row = [str(r[h]) if h in r else c for h, c in zip(header, row, strict=True)]
        out.append(row)
    return header, out



def _limits_object(limits):
    """A :class:`~segment.core.validity.ValidityLimits` with the phi_y rows ``limits`` over
    the packaged ones ("default" when None)."""
    if limits is None:
        return "default"
    with tempfile.TemporaryDirectory() as tmp:
        header, rows = _limits_rows(data_dir(), limits)
        with open(Path(tmp) / "validity_limits.csv", "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(header)
            w.writerows(rows)
        return load_validity_limits(tmp)

