"""The result folder of a virtual population (issue 32): what ``segment calibrate --population``
writes (:mod:`segment.studies.virtual_population`), reading it back and checking it.

* ``DIR/member_NNN/`` (:func:`write_members`): one complete data folder per member (every
  table of the source data folder with the member's values, ``disc_law.csv`` and the validity
  limits of :func:`segment.studies.population_limits.validity_limits`), loadable by
  ``segment.c5c6(data_dir=...)``;
* the tables (:func:`write_result`, :data:`RESULT_FILES`): ``hyperparameters.csv``,
  ``specimens.csv``, ``steps.csv``, ``moroney.csv``, ``validity_limits.csv``,
  ``population.csv`` (:func:`segment.studies.population_tables.member_table`) and
  ``manifest.csv`` (sha256 of every input, the command, the software's numbers).

``data/population/`` holds the committed result of the default command (the tables, not the
200 folders: they follow from ``population.csv``); the report reads it (:func:`read_result`)
and checks it cheaply (:func:`check_result`: the inputs unchanged, a few members re-solved to
the stored numbers).
"""

from __future__ import annotations

import csv
import io
import platform
import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from segment._version import __version__
from segment.core.io import data_dir, sha256_of
from segment.core.save import save_parameters
from segment.studies.calibration.hierarchical_forward import Forward
from segment.studies.calibration.hierarchical_settings import NEW_LAB, default_form_path
from segment.studies.forms import load_form
from segment.studies.population_limits import _limits_rows
from segment.studies.virtual_population import MORONEY_EXPERIMENTS, SEED

__all__ = [
    "DIGITS",
    "RESULT_FILES",
    "check_result",
    "read_result",
    "remove_stale",
    "write_members",
    "write_result",
]

DIGITS = 6
"""Significant digits of every written number (``%.6g``)."""


def _g(v: float) -> str:
    return f"{float(v):.{DIGITS}g}"


def write_members(models, base, out, *, note: str, limits: pd.DataFrame,
                  source_dir=None) -> list[Path]:
    """One data folder per model at ``out/member_NNN/``
    (:func:`segment.core.save.save_parameters`: the tables of ``source_dir``, the packaged
    ``data/`` by default, with each model's values; each changed row's source says so,
    ``note``, and keeps the original after "was:"), with the validity limits ``limits``."""
    src = data_dir() if source_dir is None else Path(source_dir)
    header, rows = _limits_rows(src, limits)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    written = []
    for i, cal in enumerate(models):
        written += save_parameters(cal, Path(out) / f"member_{i + 1:03d}", sources=src,
                                   note=note, tables={"validity_limits.csv": buf.getvalue()})
    return written


RESULT_FILES = ("hyperparameters.csv", "specimens.csv", "steps.csv", "moroney.csv",
                "validity_limits.csv", "population.csv", "manifest.csv")


def write_result(fit, members: pd.DataFrame, limits: pd.DataFrame, out, *, command: str,
                 lab: str | None, rejected: int = 0, condition: str = "") -> list[Path]:
    """The calibration's tables (module docstring) at ``out``, every number at
    :data:`DIGITS` significant digits."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    fmt = f"%.{DIGITS}g"
    written = []
    frames = {"hyperparameters.csv": fit.hyper_table(), "specimens.csv": fit.specimen_table(),
              "steps.csv": fit.steps, "moroney.csv": fit.moroney,
              "validity_limits.csv": limits, "population.csv": members}
    for name, frame in frames.items():
        frame.to_csv(out / name, index=False, float_format=fmt, lineterminator="\n")
        written.append(out / name)
    rows = [("command", command), ("lab", lab or NEW_LAB), ("members", str(len(members))),
            ("draws_skipped", str(rejected)),
            ("conditioned_on", "" if not condition else condition),
            ("seed", str(SEED)), ("form", "population"),
            ("fit", fit.message), ("sweeps", str(fit.sweeps)),
            ("sigma_e_deg", _g(fit.sigma_e)), ("sigma_o_deg", _g(fit.sigma_o)),
            ("segment_version", __version__),
            ("numpy_version", np.__version__), ("python", platform.python_version())]
    rows += [(f"sha256 {k}", v) for k, v in sorted(fit.inputs.items())]
    with open(out / "manifest.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["key", "value"])
        w.writerows(rows)
    written.append(out / "manifest.csv")
    return written


def read_result(folder=None) -> dict[str, pd.DataFrame]:
    """The committed result's tables (default ``data/population/``) by file name, and the
    manifest as a dict under ``"manifest"``."""
    folder = data_dir() / "population" if folder is None else Path(folder)
    out = {}
    for name in RESULT_FILES:
        path = folder / name
        if not path.is_file():
            raise ValueError(f"{folder}: no {name}; expected the output of segment calibrate "
                             "--population")
        if name == "manifest.csv":
            t = pd.read_csv(path, dtype=str, keep_default_na=False)
            out["manifest"] = dict(zip(t["key"], t["value"], strict=True))
        else:
            out[name] = pd.read_csv(path)
    return out


def _input_paths() -> dict[str, Path]:
    d = data_dir()
    return {"nightingale2002_c5c6_raw.csv": d / "specimens" / "nightingale2002_c5c6_raw.csv",
            "nightingale2002_c5c6_failure.csv":
                d / "specimens" / "nightingale2002_c5c6_failure.csv",
            "population/space.csv": d / "forms" / "population" / "space.csv",
            "disc_law.csv": d / "forms" / "population" / "disc_law.csv",
            "hyperpriors.csv": d / "forms" / "population" / "hyperpriors.csv",
            "calibration_targets.csv": d / "calibration_targets.csv"}


def check_result(model, folder=None, *, members: int = 3) -> pd.DataFrame:
    """Cheap checks of the committed result: every input's sha256 against the manifest, and
    the first ``members`` members re-solved (rotations at 1.8 N m in every mode, intact and
    posterior-removed) against ``population.csv``. One row per check: check, expected, got,
    ok."""
    res = read_result(folder)
    man = res["manifest"]
    rows = []
    for name, path in _input_paths().items():
        want = man.get(f"sha256 {name}", "")
        got = sha256_of(path) if path.is_file() else ""
        rows.append({"check": f"input {name} unchanged", "expected": want[:12],
                     "got": got[:12], "ok": bool(want) and want == got})
    pop = res["population.csv"]
    form = load_form(default_form_path())
    P = pop[list(form.space.names)].to_numpy(float)[:members]
    fwd = Forward(form.model(model), form.space)
    y, ok, _ = fwd(P, MORONEY_EXPERIMENTS)
    for i in range(P.shape[0]):
        for k, e in enumerate(MORONEY_EXPERIMENTS):
            col = f"{e.config}_{e.mode}_deg"
            want = float(pop[col].iloc[i])
            got = float(y[i, k])
            rows.append({"check": f"{pop['member'].iloc[i]} {col}", "expected": _g(want),
                         "got": _g(got),
                         "ok": bool(ok[i]) and abs(got - want) <= 1e-5 * max(1.0, abs(want))})
    return pd.DataFrame(rows)


def remove_stale(out: Path, n: int) -> None:
    """Member folders of an earlier, larger run beyond ``n`` (stale now)."""
    for p in sorted(Path(out).glob("member_*")):
        try:
            k = int(p.name.split("_")[1])
        except (IndexError, ValueError):
            continue
        if k > n and p.is_dir():
            shutil.rmtree(p)
