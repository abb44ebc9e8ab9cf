"""A virtual population drawn from the hierarchical calibration's predictive distribution: data
folders, their table, what they predict, and the committed result (issue 32).

``segment calibrate --population [--lab NAME] [--out DIR]`` calibrates the hierarchy
(:mod:`segment.studies.calibration.hierarchical`) and writes:

* ``DIR/member_NNN/``: one complete data folder per member (every table of the source data
  folder with the member's values, ``disc_law.csv`` and the validity limits of
  :func:`validity_limits`), loadable by ``segment.c5c6(data_dir=...)``;
* ``DIR/population.csv``: one row per member: its parameters, laboratory, form, and what it
  predicts (rotations at 1.8 N m intact and posterior-removed in four modes, axial rotation
  after bilateral facetectomy, first rupture and ultimate moment in flexion and extension);
* the calibration's tables (:func:`write_result`): ``hyperparameters.csv``,
  ``specimens.csv``, ``steps.csv``, ``moroney.csv``, ``validity_limits.csv`` and
  ``manifest.csv`` (sha256 of every input, the command, the software's numbers).

``data/population/`` holds the committed result of the default command (the tables, not the
200 folders: they follow from ``population.csv``); the report reads it and checks it cheaply
(:func:`check_result`: the inputs unchanged, a few members re-solved to the stored numbers).

Validity limits (:func:`validity_limits`): per direction of phi_y, the largest rotation at which
a training specimen is recorded carrying load, never inside a training specimen's measured
range: flexion, the larger of the static steps and the failure-test peaks of the records not
flagged doubtful (rotation from the start of the test); extension, the static steps (no
extension failure record is undoubted: B04 broke at its casting, B12 and B13 dropped load
before their peaks). The other directions keep the packaged (assumed) limits.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import math
import platform
import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from segment._version import __version__
from segment.core.io import data_dir, load_parameters
from segment.core.validity import load_validity_limits
from segment.solvers.ramp import ramp
from segment.studies.calibration.hierarchical_forward import Experiment, Forward
from segment.studies.calibration.hierarchical_settings import CONFIGS, NEW_LAB
from segment.studies.curves import MODES

__all__ = [
    "MEMBERS",
    "SEED",
    "check_result",
    "clinical_table",
    "draw_members",
    "member_models",
    "member_table",
    "ramp_table",
    "read_result",
    "rupture_ties",
    "section_tables",
    "validity_limits",
    "write_members",
    "write_result",
]

MEMBERS = 200
"""Members of the virtual population (issue 32: at least 200)."""
SEED = 32
"""Seed of the members' draw (the same members on any CPU)."""
DIGITS = 6
"""Significant digits of every written number (``%.6g``)."""
FACETECTOMY = (25, 50, 75, 100)
"""Bilateral facetectomy fractions [%] (Zdeblick et al. 1992 resected 25, 50, 75, 100 %)."""
TIE_RTOL = 1e-6
"""Two strips whose strain ratios g = strain / eps_max agree within this fraction at a
rupture are reported as a tie (a symmetric pair under a symmetric load): which of the two the
ramp breaks first is an index-order choice, not a prediction."""
RAMP_TO_NM = 40.0
"""Largest moment of the failure ramps [N m] (the failure tests peaked at 12-34 N m)."""
RAMP_STEPS = 80
def _g(v: float) -> str:
    return f"{float(v):.{DIGITS}g}"


# ---------------------------------------------------------------------------- limits
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


# ---------------------------------------------------------------------------- members
def member_models(fit, model, P, *, form=None) -> list:
    """The Segments of parameter sets ``P`` (M, D) in the fit's form on ``model``."""
    from segment.studies.forms import load_form

    form = load_form(fit.form_path if form is None else form)
    fm = form.model(model)
    return [form.space.apply(fm, p) for p in np.atleast_2d(P)]


STATIC_PROTOCOL_NM = 3.5
"""Moment [N m] every training specimen of Nightingale et al. carried intact in both
directions (their last static steps: 3.6-4.8 N m)."""


@functools.lru_cache(maxsize=1)
def _cases():
    """The packaged load cases (FLX, EXT: pure moments of 1.8 N m, ``load_cases.csv``)."""
    return load_parameters().load_cases


def survives(model, moment_Nm: float = STATIC_PROTOCOL_NM, *, limits="default") -> bool:
    """True when ``model`` carries ``moment_Nm`` in flexion and in extension with no strip
    ruptured and within its validity limit (:func:`segment.solvers.ramp.ramp`)."""
    for case in ("FLX", "EXT"):
        r = ramp(model, _cases()[case], to_scale=moment_Nm / 1.8, steps=20, limits=limits)
        if not r.ok or any(e[1] == "ruptured" for e in r.events):
            return False
    return True


def draw_members(fit, model, n: int = MEMBERS, *, lab=None, seed: int = SEED, form=None,
                 survive_nm: float | None = None, limits=None) -> tuple[np.ndarray, int]:
    """``(P (n, D), rejected)``: the first ``n`` draws of the fit's predictive distribution
    (:meth:`~segment.studies.calibration.hierarchical.PopulationFit.draw`) that have an
    equilibrium at 1.8 N m in every mode, intact and posterior-removed, and how many draws
    before them were skipped (the population is the predictive distribution restricted to
    models that can carry Moroney's loads: a stated truncation).

    With ``survive_nm`` also only draws that carry that moment in flexion and extension
    intact and within ``limits`` (the phi_y rows of :func:`validity_limits`;
    :func:`survives`): the specimens of a study whose static protocol went to that moment
    are those that survived it (every training specimen did), so a prediction for "a
    further specimen of the same study" is conditioned on it. A selection, stated in the
    manifest with the number rejected; the unconditioned share is reported by
    ``scripts/population_loo.py``."""
    from segment.studies.forms import load_form

    form = load_form(fit.form_path if form is None else form)
    fwd = Forward(form.model(model), form.space)
    P = fit.draw(2 * n + 16, lab=lab, seed=seed)
    _, ok, _ = fwd(P, MORONEY_EXPERIMENTS)
    keep = []
    lim = _limits_object(limits) if survive_nm is not None else None
    for k in np.flatnonzero(ok):
        if survive_nm is not None and not survives(
                member_models(fit, model, P[k:k + 1], form=form)[0], survive_nm, limits=lim):
            continue
        keep.append(k)
        if len(keep) == n:
            break
    if len(keep) < n:
        raise ValueError(f"only {len(keep)} of {P.shape[0]} draws have equilibria at 1.8 N m"
                         + ("" if survive_nm is None else
                            f" and survive {survive_nm:g} N m"))
    keep = np.array(keep)
    return P[keep], int(keep[-1] + 1 - n)


def _limits_object(limits):
    """A :class:`~segment.core.validity.ValidityLimits` with the phi_y rows ``limits`` over
    the packaged ones ("default" when None)."""
    if limits is None:
        return "default"
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        header, rows = _limits_rows(data_dir(), limits)
        with open(Path(tmp) / "validity_limits.csv", "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(header)
            w.writerows(rows)
        return load_validity_limits(tmp)


MORONEY_EXPERIMENTS = tuple(Experiment(c, m, (1.8,)) for c in CONFIGS for m in MODES)
"""Rotation at 1.8 N m in every mode, intact and posterior-removed (Moroney's tests)."""


def member_table(fit, model, P, *, lab, form=None, n_threads: int | None = 1,
                 ramps: bool = True, limits: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per member: member, lab, form, its parameters, the rotations at 1.8 N m
    intact and posterior-removed and their ratio per mode, axial rotation and flexion after
    bilateral facetectomy (% change), and with ``ramps`` the flexion and extension ramps
    (:func:`ramp_table`)."""
    from segment.studies.forms import load_form

    form = load_form(fit.form_path if form is None else form)
    fwd = Forward(form.model(model), form.space, n_threads=n_threads)
    y, ok, _ = fwd(P, MORONEY_EXPERIMENTS)
    rows = []
    models = member_models(fit, model, P, form=form)
    facets = _facetectomy(models)
    for i, p in enumerate(np.atleast_2d(P)):
        row = {"member": f"member_{i + 1:03d}", "lab": lab, "form": "population",
               "converged": bool(ok[i])}
        row.update({n: float(v) for n, v in zip(form.space.names, p, strict=True)})
        for k, e in enumerate(MORONEY_EXPERIMENTS):
            row[f"{e.config}_{e.mode}_deg"] = float(y[i, k])
        for mode in MODES:
            row[f"ratio_{mode}"] = row[f"intact_{mode}_deg"] / row[
                f"posterior-removed_{mode}_deg"]
        row.update(facets[i])
        rows.append(row)
    out = pd.DataFrame(rows)
    if ramps:
        rt = ramp_table(models, limits=limits)
        out = out.merge(rt, on="member", how="left")
    return out


def _rotation_at(m, mode) -> float:
    """|rotation| [deg] of model ``m`` at 1.8 N m in ``mode`` from its unloaded pose, by
    continuation (as :class:`Forward`); NaN where an equilibrium failed."""
    return float(_rotations([m], mode)[0])


def _rotations(models, mode) -> np.ndarray:
    """:func:`_rotation_at` of many models (M,), solved together where their packed arrays
    have the same shapes (one compiled launch per shape)."""
    from segment.studies.curves import mode_load
    from segment.studies.paths import solve_packed

    F = mode_load(mode, [0.6, 1.2, 1.8])
    dof, sign = MODES[mode]
    packs = [m._packed for m in models]
    groups: dict = {}
    for i, (_, lg, fc, pts) in enumerate(packs):
        groups.setdefault((lg.shape, fc.shape, pts.tobytes()), []).append(i)
    out = np.full(len(models), np.nan)
    for idx in groups.values():
        stack = tuple(np.stack([packs[i][k] for i in idx]) for k in range(3))
        r = solve_packed(stack, F, pts=packs[idx[0]][3])
        v = sign * np.degrees(r.displacement[:, -1, dof])
        out[idx] = np.where(r.converged[:, -1], v, np.nan)
    return out


CLINICAL_STATES = (("laminectomy", "laminectomy"),
                   *((f"facetectomy-bilateral-{f}", f"facetectomy_{f}") for f in FACETECTOMY))
"""The clinical states (``data/states.csv``) every member is put in, with their column
prefix: the procedures of Zdeblick et al. 1992 (laminectomy of C5, then bilateral
facetectomy of 25-100 %)."""


def _facetectomy(models) -> list[dict]:
    """% change of the rotation at 1.8 N m in axial rotation and flexion in each state of
    :data:`CLINICAL_STATES` (laminectomy, bilateral facetectomy of each fraction of
    :data:`FACETECTOMY`; ``data/states.csv``), for every model."""
    out = [{} for _ in models]
    modes = (("AR", "axial-rotation"), ("FLX", "flexion"))
    base = {c: _rotations(models, mode) for c, mode in modes}
    for state, prefix in CLINICAL_STATES:
        states = [m.with_state(state) for m in models]
        for c, mode in modes:
            v = _rotations(states, mode)
            for i in range(len(models)):
                out[i][f"{prefix}_{c}_pct"] = 100.0 * (v[i] - base[c][i]) / base[c][i]
    return out


def rupture_ties(result) -> list[list[str]]:
    """The strips that reached F_max together at each rupture of a ramp (groups of more than
    one strip are ties, :data:`TIE_RTOL`): evaluated at the row where each rupture was
    located, from the strains of every intact strip."""
    groups = []
    frame = result.frame
    for idx in np.flatnonzero(frame["event"].astype(str).str.startswith("F_max: ").to_numpy()):
        model = result.model_at(int(idx))
        r = frame.iloc[int(idx)]
        q = np.concatenate([r[["x_mm", "y_mm", "z_mm"]].to_numpy(float),
                            np.radians(r[["phi_x_deg", "phi_y_deg", "phi_z_deg"]]
                                       .to_numpy(float))])
        t = model.state(q).ligament_table()
        eps = {x.name: x.curve.strain[2] for x in model.ligaments}
        strips = t[~t["ruptured"] & (t["cut"] < 1.0)]
        g = {row.ligament: row.strain / eps.get(row.ligament.split("#")[0], math.inf)
             for row in strips.itertuples()}
        if not g:
            continue
        top = max(g.values())
        groups.append(sorted(n for n, v in g.items() if abs(v - top) <= TIE_RTOL * abs(top)))
    return groups


def ramp_table(models, *, names=None, limits: pd.DataFrame | None = None,
               to_nm: float = RAMP_TO_NM, steps: int = RAMP_STEPS) -> pd.DataFrame:
    """Each member ramped in flexion and extension to ``to_nm`` with ligament rupture
    (:func:`segment.solvers.ramp.ramp`) under the validity limits ``limits`` (the phi_y rows of
    :func:`validity_limits` over the packaged ones; None: the packaged ones): first
    rupture and its strips (ties joined by ``=``), ultimate moment (NaN where not reached
    before the limit), the moment where the validity limit was reached."""
    lim = _limits_object(limits)
    names = [f"member_{i + 1:03d}" for i in range(len(models))] if names is None else names
    out = []
    for name, m in zip(names, models, strict=True):
        row = {"member": name}
        for case, label in (("FLX", "flexion"), ("EXT", "extension")):
            load = _cases()[case]
            scale = to_nm / 1.8
            r = ramp(m, load, to_scale=scale, steps=steps, limits=lim)
            fl = r.failure_loads()
            ties = rupture_ties(r)
            row[f"{label}_first_rupture_Nm"] = fl["first_rupture_Nm"]
            row[f"{label}_first_strips"] = "=".join(ties[0]) if ties else ""
            row[f"{label}_ultimate_Nm"] = fl["ultimate_Nm"]
            row[f"{label}_limit_Nm"] = fl["limit_Nm"]
        out.append(row)
    return pd.DataFrame(out)


def write_members(models, base, out, *, note: str, limits: pd.DataFrame,
                  source_dir=None) -> list[Path]:
    """One data folder per model at ``out/member_NNN/``
    (:func:`segment.core.save.save_parameters`: the tables of ``source_dir``, the packaged
    ``data/`` by default, with each model's values; each changed row's source says so,
    ``note``, and keeps the original after "was:"), with the validity limits ``limits``."""
    from segment.core.save import save_parameters

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


# ---------------------------------------------------------------------------- result
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
    from segment.studies.calibration.hierarchical_settings import default_form_path
    from segment.studies.forms import load_form

    res = read_result(folder)
    man = res["manifest"]
    rows = []
    for name, path in _input_paths().items():
        want = man.get(f"sha256 {name}", "")
        got = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
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


# ---------------------------------------------------------------------------- report
QUANTITIES = (
    ("intact_flexion_deg", "rotation at 1.8 N m, flexion, intact [deg]"),
    ("intact_extension_deg", "rotation at 1.8 N m, extension, intact [deg]"),
    ("intact_lateral-bending_deg", "rotation at 1.8 N m, lateral bending, intact [deg]"),
    ("intact_axial-rotation_deg", "rotation at 1.8 N m, axial rotation, intact [deg]"),
    ("ratio_flexion", "intact / posterior-removed, flexion"),
    ("ratio_extension", "intact / posterior-removed, extension"),
    ("ratio_lateral-bending", "intact / posterior-removed, lateral bending"),
    ("ratio_axial-rotation", "intact / posterior-removed, axial rotation"),
    *(q for c, w in (("AR", "axial rotation"), ("FLX", "flexion"))
      for q in ((f"laminectomy_{c}_pct", f"laminectomy of C5, {w} [% change]"),
                *((f"facetectomy_{f}_{c}_pct", f"bilateral facetectomy {f} %, {w} [% change]")
                  for f in FACETECTOMY))),
    ("flexion_first_rupture_Nm", "first rupture in flexion [N m]"),
    ("flexion_limit_Nm", "validity limit reached in flexion [N m]"),
    ("extension_limit_Nm", "validity limit reached in extension [N m]"),
)
"""The population's predictions shown by the report, with their labels."""
SUBSTANTIAL_PCT = 20.0
"""A change of at least this much [%] counts as the large change Zdeblick et al. describe
("decreased dramatically"; their values are not available to us): the threshold of issue 32
for the axial rotation after a bilateral 100 % facetectomy."""
MORONEY_RATIO = {"lateral-bending": 2.6471 / 5.4545, "axial-rotation": 1.5517 / 4.2857}
"""Moroney's intact / posterior-removed rotation (computed from calibration_targets.csv)."""


ZDEBLICK_TRENDS = {
    "AR": ("equivalent to intact (torsional stiffness: intact, laminectomy, 25 and 50 % one "
           "statistically equivalent subset)",
           "the least stiff subset (75 and 100 %): torsional stiffness 'decreased "
           "dramatically' past 50 %"),
    "FLX": ("posterior strain in flexion unchanged (laminectomy, 25 %) or +2.5 % (50 %); a "
            "strain, not a rotation: the pattern only",
            "posterior strain in flexion +25 % (75 and 100 %); a strain, not a rotation: the "
            "pattern only"),
}
"""What Zdeblick et al. 1992 report (abstract; SOURCES.md §9) for the states up to 50 % and
for 75-100 %, per mode; their values are not available to us."""


def clinical_table(pop: pd.DataFrame) -> pd.DataFrame:
    """Each clinical state of :data:`CLINICAL_STATES` in axial rotation and flexion over the
    members of ``pop`` (``population.csv``): median and 5-95 % of the % change of the rotation
    at 1.8 N m, Zdeblick et al.'s trend for that state, and whether the members agree with
    the pattern (little change up to 50 %, the largest at 75-100 %: the state's median within
    half of the 75-100 % medians' smaller one for the first group, at least twice the first
    group's largest ``|median|`` for the second)."""
    rows = []
    for c in ("AR", "FLX"):
        med = {}
        for state, prefix in CLINICAL_STATES:
            col = f"{prefix}_{c}_pct"
            if col in pop:
                med[state] = float(np.nanmedian(pop[col]))
        small = [v for k, v in med.items() if not k.endswith(("-75", "-100"))]
        large = [v for k, v in med.items() if k.endswith(("-75", "-100"))]
        lim_small = max((abs(v) for v in small), default=math.nan)
        lim_large = min(large, default=math.nan)
        for state, prefix in CLINICAL_STATES:
            col = f"{prefix}_{c}_pct"
            if col not in pop:
                continue
            v = pop[col].to_numpy(float)
            v = v[np.isfinite(v)]
            big = state.endswith(("-75", "-100"))
            agrees = (med[state] >= 2.0 * lim_small if big
                      else abs(med[state]) <= 0.5 * lim_large)
            rows.append({"state": state, "mode": c, "members": int(v.size),
                         "median_pct": med[state], "q5_pct": float(np.percentile(v, 5)),
                         "q95_pct": float(np.percentile(v, 95)),
                         "zdeblick_1992": ZDEBLICK_TRENDS[c][int(big)],
                         "agrees_with_pattern": bool(agrees), "kind": "predicted (not fitted)"})
    return pd.DataFrame(rows)


def section_tables(model, folder=None, *, check: bool = True) -> dict[str, pd.DataFrame]:
    """The tables of the report's population section from a committed result (default
    ``data/population/``), nothing recomputed but the cheap :func:`check_result`:

    * ``fitted``: what the calibration was fitted to and how well (Nightingale's steps: RMS
      per specimen and direction [deg]; Moroney's means: value, fitted, z);
    * ``hyper``: the hyper-parameters (laboratory medians, specimen SD, laboratory SD);
    * ``predicted``: each quantity of :data:`QUANTITIES` over the members: median and
      5-95 % band (never fitted: predictions), with Moroney's value where one exists;
    * ``zdeblick``: the graded facetectomy against Zdeblick et al.'s trend (little change up
      to 50 %, the largest at 75-100 %), the verdict in words;
    * ``clinical``: every state of :data:`CLINICAL_STATES` over the members
      (:func:`clinical_table`);
    * ``loo``, ``loo_failure``, ``lab_out``, ``forms``: the held-out checks where
      ``scripts/population_loo.py`` wrote them;
    * ``validity``: the members' phi_y validity limits and their sources;
    * ``checks``: :func:`check_result` on ``model`` (the published model the population
      was calibrated on; with ``check``).
    """
    folder = data_dir() / "population" if folder is None else Path(folder)
    res = read_result(folder)
    out: dict[str, pd.DataFrame] = {}
    steps = res["steps.csv"]
    rms = (steps.assign(sq=steps["residual_deg"] ** 2)
           .groupby(["specimen", "direction"], sort=False)["sq"]
           .apply(lambda v: math.sqrt(math.fsum(v) / len(v))).reset_index(name="rms_deg"))
    rms.insert(0, "data", "Nightingale 2002 steps (fitted)")
    mor = res["moroney.csv"].copy()
    mor.insert(0, "data", "Moroney 1988 means (fitted)")
    out["fitted"] = pd.concat([rms, mor], ignore_index=True)
    out["hyper"] = res["hyperparameters.csv"]
    pop = res["population.csv"]
    rows = []
    for col, label in QUANTITIES:
        if col not in pop:          # a result written before the column existed
            continue
        v = pop[col].to_numpy(float)
        fin = v[np.isfinite(v)]
        mode = col.removeprefix("ratio_")
        rows.append({"quantity": label, "column": col, "members": int(fin.size),
                     "median": float(np.median(fin)) if fin.size else math.nan,
                     "q5": float(np.percentile(fin, 5)) if fin.size else math.nan,
                     "q95": float(np.percentile(fin, 95)) if fin.size else math.nan,
                     "moroney": MORONEY_RATIO.get(mode, math.nan) if col.startswith("ratio_")
                     else math.nan, "kind": "predicted (not fitted)"})
    out["predicted"] = pd.DataFrame(rows)
    z = []
    for c in ("AR", "FLX"):
        med = {f: float(np.nanmedian(pop[f"facetectomy_{f}_{c}_pct"])) for f in FACETECTOMY}
        small = max(abs(med[25]), abs(med[50]))
        large = max(med[75], med[100])
        q = {f: np.nanpercentile(pop[f"facetectomy_{f}_{c}_pct"], [5, 95]) for f in (50, 100)}
        z.append({"mode": c, **{f"median_{f}_pct": med[f] for f in FACETECTOMY},
                  "q5_100_pct": q[100][0], "q95_100_pct": q[100][1],
                  "zdeblick_trend": "little change up to 50 %, the largest at 75-100 % "
                                    "(torsional stiffness 'decreased dramatically' past 50 %)",
                  "pattern_agrees": bool(large > 2.0 * small and med[100] >= med[50]),
                  "change_100_at_least_20_pct": bool(med[100] >= SUBSTANTIAL_PCT)})
    out["zdeblick"] = pd.DataFrame(z)
    out["clinical"] = clinical_table(pop)
    for name, key in (("loo_summary.csv", "loo"), ("loo_failure.csv", "loo_failure"),
                      ("lab_out.csv", "lab_out"), ("loo_forms.csv", "forms")):
        if (folder / name).is_file():
            out[key] = pd.read_csv(folder / name)
    out["validity"] = res["validity_limits.csv"]
    if check:
        out["checks"] = check_result(model, folder)
    return out
