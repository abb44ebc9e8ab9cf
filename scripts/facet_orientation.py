"""Does the facets' second angle let them resist axial rotation? (issue 32, item 1)

The packaged facets are oriented by one angle, their inclination to the transverse plane; the
published C6 superior facet also has an angle to the sagittal plane, 92.3 +- 11.5 deg (right)
and 93.5 +- 9.4 deg (left) (PMC2219934 Table 2, SOURCES.md §3): on average turned 2-4 deg
posterolaterally, with a between-specimen SD of about 10 deg. The field ``sagittal_deg`` of
the facets (:func:`segment.elements.facet.c6_normals`) turns the face's normal by that much.

This script measures what it does, on the committed population (``data/population/``):

1. at the median parameters of each laboratory and of a new one, with the face turned from
   -20 to +20 deg about the sagittal plane (both sides alike): the rotation at 1.8 N m in
   lateral bending and axial rotation intact and posterior-removed, their ratio, and the
   change of axial rotation after bilateral 50 % and 100 % facetectomy;
2. over the committed members (a new laboratory): the same quantities with each member's
   faces at 90 deg (as committed) and with both angles drawn from the published means and
   SDs (normal, independent sides, seeded): what the published spread does to the median
   and the 5-95 % band;
3. the facet gap at the same medians, from 0 to 2 mm: the lever that does act.

Run from the repository root::

    python scripts/facet_orientation.py [--members 200] [--out DIR]

Writes ``facet_orientation_medians.csv`` and ``facet_orientation_members.csv`` to DIR when
given. About 2 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

import segment
from segment.core.io import data_dir
from segment.studies.calibration.hierarchical_settings import default_form_path
from segment.studies.forms import load_form
from segment.studies.population_tables import _rotations

PUBLISHED = {"right": (92.3, 11.5), "left": (93.5, 9.4)}
"""C6 superior facet, angle to the sagittal plane, mean and SD [deg] (PMC2219934 Table 2)."""
SEED = 32
MODES = ("lateral-bending", "axial-rotation")


def turned(model, angles: dict):
    """``model`` with each facet's face at ``angles[side]`` [deg] to the sagittal plane."""
    ref = model.reference
    return model.replace(facets=tuple(f.modified(ref, sagittal_deg=float(angles[f.side]))
                                      for f in model.facets))


def measure(models) -> pd.DataFrame:
    """Rotations at 1.8 N m intact and posterior-removed, their ratio, and the % change of
    axial rotation after bilateral 50 and 100 % facetectomy, for each model."""
    out = {}
    for mode in MODES:
        a = _rotations(models, mode)
        b = _rotations([m.with_state("posterior-removed") for m in models], mode)
        out[f"intact_{mode}_deg"], out[f"removed_{mode}_deg"] = a, b
        out[f"ratio_{mode}"] = a / b
    base = out["intact_axial-rotation_deg"]
    for f in (50, 100):
        v = _rotations([m.with_state(f"facetectomy-bilateral-{f}") for m in models],
                       "axial-rotation")
        out[f"facetectomy_{f}_AR_pct"] = 100.0 * (v - base) / base
    return pd.DataFrame(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--members", type=int, default=200)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    t0 = time.perf_counter()
    pd.set_option("display.width", 200)
    folder = data_dir() / "population"
    hyper = pd.read_csv(folder / "hyperparameters.csv")
    form = load_form(default_form_path())
    fm = form.model(segment.c5c6())
    names = list(form.space.names)
    rows = []
    for lab in ("nightingale2002", "moroney1988", "new_lab"):
        p = hyper[f"median_{lab}"].to_numpy(float).copy()
        m = form.space.apply(fm, p)
        for sag in (70.0, 80.0, 90.0, 92.9, 100.0, 110.0):
            r = measure([turned(m, {"left": sag, "right": sag})]).iloc[0]
            rows.append({"lab": lab, "sagittal_deg": sag, "gap_mm": p[names.index("facet_gap")],
                         **r.to_dict()})
        for gap in (0.0, 0.25, 0.5, 1.0, 2.0):
            q = p.copy()
            q[names.index("facet_gap")] = gap
            r = measure([form.space.apply(fm, q)]).iloc[0]
            rows.append({"lab": lab, "sagittal_deg": 90.0, "gap_mm": gap, **r.to_dict()})
    medians = pd.DataFrame(rows)
    print(medians.round(3).to_string(index=False))
    pop = pd.read_csv(folder / "population.csv").head(args.members)
    P = pop[names].to_numpy(float)
    members = [form.space.apply(fm, p) for p in P]
    rng = np.random.default_rng(SEED)
    draws = {side: rng.normal(mu, sd, size=len(members)) for side, (mu, sd) in
             sorted(PUBLISHED.items())}
    as_committed = measure(members)
    spread = measure([turned(m, {s: draws[s][i] for s in draws})
                      for i, m in enumerate(members)])
    summary = []
    for label, t in (("faces at 90 deg (committed)", as_committed),
                     ("faces drawn from the published means and SDs", spread)):
        for col in t.columns:
            v = t[col].to_numpy(float)
            v = v[np.isfinite(v)]
            summary.append({"members": label, "quantity": col, "median": np.median(v),
                            "q5": np.percentile(v, 5), "q95": np.percentile(v, 95)})
    summary = pd.DataFrame(summary)
    print(summary.round(3).to_string(index=False))
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        medians.to_csv(out / "facet_orientation_medians.csv", index=False, float_format="%.6g",
                       lineterminator="\n")
        summary.to_csv(out / "facet_orientation_members.csv", index=False,
                       float_format="%.6g", lineterminator="\n")
    print(f"done in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
