"""Population variants behind the axial-rotation paragraph of docs/population.md (issue 32):
what ``segment calibrate --population`` would predict for a new laboratory if a posterior
parameter had no laboratory effect, and how much of the members' median is draw noise.

The report's section 13 shows the form's ceiling on the committed population in every run
(:mod:`segment.studies.population_ceiling`); this script refits the hierarchy with the
hyperpriors changed in memory (nothing is written to ``data/``) and prints, per variant: the
members' median intact / posterior-removed ratio in lateral bending and axial rotation, the
median axial-rotation change after bilateral facetectomy 50 % and 100 %, Moroney's z's and
the facet gap and capsule slack of each laboratory's median. Fits are kept in a scratch
folder (:data:`CACHE`, in the system's temporary folder) so that the subcommands can share
them.

Variants: ``baseline`` (``data/forms/population/hyperpriors.csv``) and ``shared_<p>`` or
``shared_<p>+<q>`` (parameters without a laboratory effect, ``lab_sd`` 0). Run from the
repository root (2-4 min per fit on 2 cores; ``loo`` about 10 min per variant)::

    python scripts/axial_rotation_variants.py fit baseline shared_facet_gap shared_ref_strain_CL
    python scripts/axial_rotation_variants.py loo baseline shared_facet_gap [--seed 101]
    python scripts/axial_rotation_variants.py seeds          # other draws of the same fit
    python scripts/axial_rotation_variants.py spread         # draws with and without the lab term
"""

from __future__ import annotations

import argparse
import dataclasses
import pickle
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

import segment
from segment.studies import population_tables, virtual_population
from segment.studies.calibration.hierarchical import fit_population
from segment.studies.calibration.hierarchical_priors import load_hyperpriors
from segment.studies.calibration.hierarchical_settings import default_form_path
from segment.studies.forms import load_form
from segment.studies.specimens import load_specimens

CACHE = Path(tempfile.gettempdir()) / "segment_axial_rotation_variants"
ANATOMICAL = ("facet_gap", "ref_strain_CL", "ref_strain_FL_ISL", "ref_strain_ALL",
              "stiffness_posterior")


def hyper_variant(name):
    """Hyperpriors of a named variant: ``baseline`` (the committed file), ``shared_<p>``
    (parameter p without a laboratory effect, lab_sd 0), ``shared_<p>+<q>`` several."""
    form = load_form(default_form_path())
    hp = load_hyperpriors(form.space)
    if name == "baseline":
        return hp
    if name.startswith("shared_"):
        tl = hp.tau_lab.copy()
        for p in name.removeprefix("shared_").split("+"):
            tl[hp.names.index(p)] = 0.0
        return dataclasses.replace(hp, tau_lab=tl)
    raise SystemExit(f"unknown variant {name}")


def get_fit(name, model, data):
    CACHE.mkdir(exist_ok=True)
    f = CACHE / f"fit_{name}.pkl"
    if f.is_file():
        return pickle.loads(f.read_bytes())
    t0 = time.perf_counter()
    fit = fit_population(model, data, hyper=hyper_variant(name))
    print(f"[{name}] fit: {fit.message} in {time.perf_counter() - t0:.0f} s", flush=True)
    f.write_bytes(pickle.dumps(fit))
    return fit


def summarize(table):
    q = {}
    for c in ("ratio_lateral-bending", "ratio_axial-rotation", "facetectomy_50_AR_pct",
              "facetectomy_100_AR_pct"):
        q[c] = float(np.nanmedian(table[c]))
    return q


def cmd_fit(args):
    model = segment.c5c6()
    data = load_specimens()
    rows = []
    for name in args.variants:
        fit = get_fit(name, model, data)
        hyp = fit.hyper_table().set_index("name")
        mor = fit.moroney
        row = {"variant": name, "converged": fit.converged, "sigma_e": fit.sigma_e}
        for _, r in mor.iterrows():
            row[f"z_{r['config'][:3]}_{r['mode'][:4]}"] = round(float(r["z"]), 2)
        for p in ("facet_gap", "ref_strain_CL", "disc_phi_z"):
            for lab in ("nightingale2002", "moroney1988", "new_lab"):
                row[f"{p}@{lab[:4]}"] = float(hyp.loc[p, f"median_{lab}"])
        # the new-laboratory population as `segment calibrate --population` draws it
        t0 = time.perf_counter()
        P, rejected = virtual_population.draw_members(fit, model, args.members,
                                                      seed=virtual_population.SEED)
        table = population_tables.member_table(fit, model, P, lab="new", ramps=False)
        row.update(summarize(table))
        row["rejected"] = rejected
        # the new-laboratory median member (mu) itself
        pm = fit.hyper.to_p(fit.mu)
        t1 = population_tables.member_table(fit, model, pm, lab="new", ramps=False)
        row.update({f"mu:{k}": v for k, v in summarize(t1).items()})
        print(f"[{name}] members in {time.perf_counter() - t0:.0f} s", flush=True)
        table.to_csv(CACHE / f"members_{name}.csv", index=False)
        rows.append(row)
        print(pd.Series(row).to_string(), flush=True)
    out = pd.DataFrame(rows)
    out.to_csv(CACHE / ("fit_" + "_".join(args.variants) + ".csv"), index=False)
    print(out.T.to_string())


def cmd_seeds(args):
    """Monte Carlo spread of the population medians: the baseline fit's new-laboratory
    population drawn with other seeds, and the share of members whose posterior elements
    carry nothing in axial rotation (ratio >= 0.99)."""
    model = segment.c5c6()
    data = load_specimens()
    fit = get_fit(args.base, model, data)
    rows = []
    for seed in args.seeds:
        P, _ = virtual_population.draw_members(fit, model, args.members, seed=seed)
        t = population_tables.member_table(fit, model, P, lab="new", ramps=False)
        r = {"seed": seed, **summarize(t),
             "share_AR_ratio>=0.99": float(np.mean(t["ratio_axial-rotation"] >= 0.99)),
             "share_gap>1.5mm": float(np.mean(t["facet_gap"] > 1.5)),
             "share_CL<-0.15": float(np.mean(t["ref_strain_CL"] < -0.15))}
        rows.append(r)
    with pd.option_context("display.width", 250, "display.precision", 3):
        print(pd.DataFrame(rows).to_string(index=False))


def cmd_spread(args):
    """How much of the population median comes from the predictive spread: members drawn
    for a new laboratory (as committed), for a new laboratory without the laboratory term
    (tau_lab 0 in the draw only: a specimen of the 'mean laboratory'), and for a new
    specimen of each training laboratory (no survival conditioning)."""
    model = segment.c5c6()
    data = load_specimens()
    fit = get_fit(args.base, model, data)
    no_lab = dataclasses.replace(fit, tau_lab=np.zeros_like(fit.tau_lab))
    rows = []
    for label, f, lab in (("new lab (committed draw)", fit, None),
                          ("new lab, draw without tau_lab", no_lab, None),
                          ("nightingale2002 specimen", fit, "nightingale2002"),
                          ("moroney1988 specimen", fit, "moroney1988")):
        P, rej = virtual_population.draw_members(f, model, args.members, lab=lab,
                                                 seed=virtual_population.SEED)
        t = population_tables.member_table(f, model, P, lab=lab or "new", ramps=False)
        rows.append({"draw": label, **summarize(t), "rejected": rej,
                     "share_AR_ratio>=0.99": float(np.mean(t["ratio_axial-rotation"] >= 0.99)),
                     "gap_median": float(t["facet_gap"].median()),
                     "CL_median": float(t["ref_strain_CL"].median())})
    with pd.option_context("display.width", 250, "display.precision", 3):
        print(pd.DataFrame(rows).to_string(index=False))


def cmd_loo(args):
    """Leave-one-specimen-out CRPS (steps of the left-out Nightingale specimen, as
    scripts/population_loo.py part 1, without the failure ramps) of each variant."""
    from segment.studies.calibration.predictive import leave_one_out
    from segment.studies.calibration.predictive import summarize as loo_summarize
    model = segment.c5c6()
    data = load_specimens()
    for name in args.variants:
        t0 = time.perf_counter()
        kw = {} if args.seed is None else {"seed": args.seed}
        steps, _ = leave_one_out(model, data, hyper=hyper_variant(name),
                                 n_members=args.members, **kw)
        summ = loo_summarize(steps)
        summ.to_csv(CACHE / f"loo_{name}_seed{args.seed}.csv", index=False)
        print(f"[{name}] leave-one-out in {time.perf_counter() - t0:.0f} s")
        with pd.option_context("display.width", 250, "display.precision", 4):
            print(summ.to_string(index=False), flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fit")
    f.add_argument("variants", nargs="+")
    f.add_argument("--members", type=int, default=200)
    e = sub.add_parser("seeds")
    e.add_argument("--base", default="baseline")
    e.add_argument("--members", type=int, default=200)
    e.add_argument("--seeds", type=int, nargs="+", default=[32, 1, 2, 3, 4])
    sp = sub.add_parser("spread")
    sp.add_argument("--base", default="baseline")
    sp.add_argument("--members", type=int, default=200)
    lo = sub.add_parser("loo")
    lo.add_argument("variants", nargs="+")
    lo.add_argument("--members", type=int, default=200)
    lo.add_argument("--seed", type=int, default=None,
                    help="seed of the predictive samples (default: leave_one_out's)")
    args = ap.parse_args(argv)
    commands = {"fit": cmd_fit, "seeds": cmd_seeds, "spread": cmd_spread, "loo": cmd_loo}
    commands[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
