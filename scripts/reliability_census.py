"""Count the reliability defects of issues 14 and 21 on whichever ``segment`` is importable.

Issue 14, four classes:

A. *data accepted wrong*: a malformed table of ``tests/data_mutations.py`` that should be
   rejected loads (or a harmless reformatting loads a different model);
B. *confusing or deep errors*: a data error that escapes as anything but ValueError/OSError, a
   message that does not name the file, the field and (for a cell) the file line, a valid
   reformatting refused, or ``segment --data DIR solve FLX`` ending in a traceback or not in
   one line with exit code 2;
C. *solver settings* accepted wrongly or failing with an unrelated error;
D. *contact geometry at extreme magnitudes*: NaN or an unrelated error from finite discs.

Issue 21 (``--issue 21``), one class per kind of input the studies take:

E. *study input files* (``tests/study_mutations.py``), counted per file (the parameter space,
   the ligament strips, the calibration targets): accepted wrongly, or rejected without
   naming the file, the field and the line;
F. *files read back* (``SetsResult.read_parquet``): a tampered file accepted, or refused
   without naming the file;
G. *command-line sizes and counts*: not refused in one line naming the option with exit code
   2 (or a memory blow-up, a hang, a scheduler failure that leaves the output folder changed);
H. *API argument types*: not refused with an error naming the argument (or a raw
   ``LinAlgError`` instead of a status);
I. *one model, degenerate studies*: a study that computes something else than the model it
   was given, writes other inputs than it used, or reports a degenerate study as a result.

Issue 31 (``--issue 31``), one class:

J. *the web explorer's inputs*: a control value or an HTTP request (foreign Host, another
   site's POST, no token, a malformed Content-Length, a body over the cap, deep JSON, a
   control of the wrong type) that changes the session, is not answered with a 4xx JSON
   error, leaves a stalled connection open, or prints a traceback; the clinical states
   missing from the explorer.

Issue 31, the inputs (``--issue 31-inputs``), one class per kind of input, each probe one of
the reviewer's examples, counted as *accepted wrongly* (the input used, a wrong result, a run
that does not stop) or *unclear error* (a traceback, the message of a library underneath, or
one that does not name the file, row, column or argument and the value):

K. *specimen curves* (``segment curves``, ``compare``, ``calibrate --curves``, the optimiser);
L. *populations* (``population.csv``, member folders and what they record);
M. *dynamics* (pulse tables and samples, payloads, run settings, API and command line);
N. *clinical states and compare* (operation arguments, ``--scale``, ``--steps``);
O. *results* (pickling, no NaN as an answer, parquet read-back naming the file);
P. *what a newcomer sees* (set-up warnings, examples that leave files, printouts, figures).

    PYTHONPATH=<old checkout> python scripts/reliability_census.py     # "before"
    python scripts/reliability_census.py [--json FILE]                  # "after"
    python scripts/reliability_census.py --issue 21 --json FILE         # classes E-I only
    python scripts/reliability_census.py --issue 31 --json FILE         # class J only
    python scripts/reliability_census.py --issue 31-inputs --json FILE  # classes K-P
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import re
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import data_mutations as dm

import segment
from segment import cli
from segment.core.io import data_dir, load_parameters


def _names_everything(message: str, m: dm.Mutation) -> bool:
    if m.file not in message:
        return False
    if not all(f in message for f in m.fields):
        return False
    return m.line is None or f"line {m.line}" in message


def classify_mutation(m: dm.Mutation, reference: np.ndarray, workdir: Path) -> tuple[str, str]:
    """('ok' | 'A' | 'B', detail) for one data mutation."""
    folder = dm.copy_tables(data_dir(), workdir / m.id.replace(" ", "_"))
    m.apply(folder)
    verdict, detail = "ok", ""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            params = load_parameters(folder)
    except (ValueError, OSError) as exc:
        msg = str(exc)
        if m.expect == "accept":
            verdict, detail = "B", f"valid table refused: {msg}"
        elif not _names_everything(msg, m):
            verdict, detail = "B", f"message lacks file/field/line: {msg}"
    except Exception as exc:
        verdict, detail = "B", f"deep error {type(exc).__name__}: {exc}"
    else:
        if m.expect == "reject":
            verdict, detail = "A", "accepted"
        else:
            fp = dm.fingerprint(params)
            if fp.shape != reference.shape or not np.allclose(fp, reference, rtol=1e-12,
                                                              atol=0):
                verdict, detail = "A", "accepted with a different model"
    # the command line on the same folder
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            code = cli.main(["--data", str(folder), "solve", "FLX"])
    except SystemExit as exc:
        code = exc.code
    except Exception as exc:
        return "B", f"CLI traceback {type(exc).__name__}: {exc}"
    lines = [ln for ln in err.getvalue().splitlines() if ln.strip()]
    if m.expect == "reject" and verdict == "ok" and (code != 2 or len(lines) != 1):
        verdict, detail = "B", f"CLI exit {code} with {len(lines)} stderr lines"
    return verdict, detail


def _raises(fn, types, words=()) -> tuple[bool, str]:
    try:
        out = fn()
    except types as exc:
        ok = all(w in str(exc) for w in words)
        return ok, f"{type(exc).__name__}: {exc}"
    except Exception as exc:
        return False, f"unrelated {type(exc).__name__}: {exc}"
    return False, f"accepted ({out!r})"[:200]


def solver_probes() -> dict[str, tuple[bool, str]]:
    model = segment.c5c6()
    flx = segment.LOAD_CASES["FLX"]
    q_ref = segment.solve(model, flx).q
    loads = np.array([flx.as_array()])
    te = (TypeError, ValueError)

    def tight(tol):
        def probe():
            try:
                r = segment.solve(model, flx, tol=tol)
            except ValueError as exc:
                return "tol" in str(exc), f"ValueError: {exc}"
            full = np.allclose(r.q, q_ref, atol=1e-8)
            return full, f"converged={r.converged}, phi_y={r.q[4]:.4f} (full load {q_ref[4]:.4f})"
        return probe

    def huge_iterations(fn):
        def probe():
            try:
                r = fn()
            except (TypeError, ValueError) as exc:
                return "max_iterations" in str(exc), f"{type(exc).__name__}: {exc}"
            except MemoryError:
                return False, "MemoryError"
            return True, f"accepted, converged={np.all(r.converged)}"
        return probe

    def loose():
        try:
            r = segment.solve(model, flx, tol=1e6)
        except ValueError as exc:
            return "tol" in str(exc), f"ValueError: {exc}"
        return (not r.converged), r.message

    probes = {
        "tol=1e-15": tight(1e-15),
        "tol=1e-16": tight(1e-16),
        "max_iterations=10**9 (solve)": huge_iterations(
            lambda: segment.solve(model, flx, max_iterations=10**9)),
        "max_iterations=10**9 (solve_many)": huge_iterations(
            lambda: segment.solve_many(model, loads, max_iterations=10**9)),
        "tol='1e-8'": lambda: _raises(lambda: segment.solve(model, flx, tol="1e-8"), te,
                                      ["tol"]),
        "tol=True": lambda: _raises(lambda: segment.solve(model, flx, tol=True), te, ["tol"]),
        "tol=1e6": loose,
        "max_iterations=True": lambda: _raises(
            lambda: segment.solve(model, flx, max_iterations=True), te, ["max_iterations"]),
        "max_iterations=60.5": lambda: _raises(
            lambda: segment.solve(model, flx, max_iterations=60.5), te, ["max_iterations"]),
        "solve_many tol='1e-8'": lambda: _raises(
            lambda: segment.solve_many(model, loads, tol="1e-8"), te, ["tol"]),
        "n_models=2.7": lambda: _raises(
            lambda: segment.solve_many(lambda i: model, loads, n_models=2.7), te,
            ["n_models"]),
        "n_models=True": lambda: _raises(
            lambda: segment.solve_many(lambda i: model, loads, n_models=True), te,
            ["n_models"]),
        "complex q0 (solve)": lambda: _raises(
            lambda: segment.solve(model, flx, q0=np.zeros(6) + 1e-3j), te, ["q0"]),
        "complex q0 (solve_many)": lambda: _raises(
            lambda: segment.solve_many(model, loads, q0=np.zeros(6) + 1e-3j), te, ["q0"]),
        "solve_many(None, ...)": lambda: _raises(
            lambda: segment.solve_many(None, loads), te, ["model"]),
        "solve_many(model, None)": lambda: _raises(
            lambda: segment.solve_many(model, None), te, ["loads"]),
        "c5c6(ligaments=0)": lambda: _raises(lambda: segment.c5c6(ligaments=0), te,
                                             ["ligaments"]),
        "c5c6(data_dir=123)": lambda: _raises(lambda: segment.c5c6(data_dir=123), te,
                                              ["data_dir"]),
        "c5c6(facets=1)": lambda: _raises(lambda: segment.c5c6(facets=1), te, ["facets"]),
    }
    out = {}
    for name, probe in probes.items():
        try:
            out[name] = probe()
        except Exception as exc:
            out[name] = (False, f"probe raised {type(exc).__name__}: {exc}")
    return out


def contact_probes() -> dict[str, tuple[bool, str]]:
    from segment.elements.contact import disc_contact
    from segment.elements.facet_face import FacetFace

    def finite_or_range_error(d1, d2, check=None):
        def probe():
            try:
                r = disc_contact(d1(), d2(), blend=16.7)
            except ValueError as exc:
                return True, f"ValueError: {exc}"
            except Exception as exc:
                return False, f"{type(exc).__name__}: {exc}"
            vals = [r.penetration, *r.point, *r.direction, r.blend_weight, r.sin_alpha]
            if not all(map(math.isfinite, vals)):
                return False, f"non-finite: u={r.penetration}, point={r.point}"
            if check is not None:
                return check(r)
            return True, f"u={r.penetration:g}, regime {r.regime}"
        return probe

    def normal_is(n, expected):
        def probe():
            try:
                d = FacetFace([0, 0, 0], n, 5.0)
            except Exception as exc:
                return False, f"{type(exc).__name__}: {exc}"
            return bool(np.allclose(d.normal, expected, atol=1e-15)), f"normal {d.normal}"
        return probe

    def flat_scaled(s):
        def check(r):
            ok = math.isclose(r.penetration, 0.1 * s, rel_tol=1e-9) and r.regime == "flat"
            return ok, f"u={r.penetration:g} (expected {0.1 * s:g}), {r.regime}"
        return finite_or_range_error(lambda: FacetFace(np.array([0, 0, -0.1]) * s, [0, 0, -1],
                                                  5.0 * s),
                                     lambda: FacetFace([0, 0, 0], [0, 0, 1], 5.0 * s), check)

    te = (TypeError, ValueError)
    probes = {
        "centres near +1e308": finite_or_range_error(
            lambda: FacetFace([1e308, 1e308, 1e308 - 1e292], [0, 0, -1], 5.0),
            lambda: FacetFace([1e308, 1e308, 1e308], [0, 0, 1], 5.0)),
        "centres at -1e308 and +1e308": finite_or_range_error(
            lambda: FacetFace([-1e308, 0, 1e308], [0.1, 0, -1], 1e308),
            lambda: FacetFace([1e308, 0, -1e308], [0, 0, 1], 1e308)),
        "radii 1e154": finite_or_range_error(
            lambda: FacetFace([0, 0, -0.1], [0.01, 0, -1], 1e154),
            lambda: FacetFace([0, 0, 0], [0, 0, 1], 1e154)),
        "radii 3e154, rims crossing": finite_or_range_error(
            lambda: FacetFace([3e154, 0, -1e150], [0.05, 0, -1], 3e154),
            lambda: FacetFace([0, 0, 0], [0, 0, 1], 3e154)),
        "radii 1e200": finite_or_range_error(
            lambda: FacetFace([0, 0, -1e199], [0.01, 0, -1], 1e200),
            lambda: FacetFace([0, 0, 0], [0, 0, 1], 1e200)),
        "radii 1e300, tilted": finite_or_range_error(
            lambda: FacetFace([1e299, 0, -1e299], [0.2, 0, -1], 1e300),
            lambda: FacetFace([0, 0, 0], [0, 0, 1], 1.5e300)),
        "flat contact scaled by 1e250": flat_scaled(1e250),
        "flat contact scaled by 1e-250": flat_scaled(1e-250),
        "normal (1e200, 0, 0)": normal_is([1e200, 0, 0], [1, 0, 0]),
        "normal of length 1e-13": normal_is([0, 1e-13, 0], [0, 1, 0]),
        "normal of length 1e-310": normal_is([0, 0, 1e-310], [0, 0, 1]),
        "radius=True": lambda: _raises(lambda: FacetFace([0, 0, 0], [0, 0, 1], True), te,
                                       ["radius"]),
        "radius='5'": lambda: _raises(lambda: FacetFace([0, 0, 0], [0, 0, 1], "5"), te,
                                      ["radius"]),
        "center of strings": lambda: _raises(lambda: FacetFace(["0", "0", "0"], [0, 0, 1], 5.0), te,
                                             ["center"]),
        "blend=True": lambda: _raises(
            lambda: disc_contact(FacetFace([0, 0, 0], [0, 0, -1], 5.0),
                                 FacetFace([0, 0, 0], [0, 0, 1], 5.0), blend=True), te, ["blend"]),
    }
    out = {}
    for name, probe in probes.items():
        try:
            out[name] = probe()
        except Exception as exc:
            out[name] = (False, f"probe raised {type(exc).__name__}: {exc}")
    return out


# ============================================================== issue 21: study inputs
def classify_study_mutation(m, reference, workdir: Path) -> tuple[str, str]:
    """('ok' | 'A' | 'B', detail) for one study-input mutation (``tests/study_mutations``)."""
    import study_mutations as sm

    folder = sm.copy_inputs(data_dir(), workdir / m.id.replace(" ", "_").replace(":", ""))
    m.apply(folder)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            obj = sm.load_input(m, folder)
    except (ValueError, OSError) as exc:
        msg = str(exc)
        if m.expect == "accept":
            return "B", f"valid file refused: {msg}"
        if not _names_everything(msg, m):
            return "B", f"message lacks file/field/line: {msg}"
        return "ok", ""
    except Exception as exc:
        return "B", f"deep error {type(exc).__name__}: {exc}"
    if m.expect == "reject":
        return "A", "accepted"
    fp = sm.input_fingerprint(obj)
    ref = reference[m.file]
    if fp.shape != ref.shape or not np.allclose(fp, ref, rtol=1e-12, atol=0):
        return "A", "accepted with different values"
    return "ok", ""


def study_input_census(workdir: Path) -> dict[str, dict[str, tuple[str, str]]]:
    import study_mutations as sm

    ref_folder = sm.copy_inputs(data_dir(), workdir / "reference")
    reference = {}
    for f in sm.STUDY_FILES:
        m = next(x for x in sm.STUDY_MUTATIONS if x.file == f)
        reference[f] = sm.input_fingerprint(sm.load_input(m, ref_folder))
    out = {f: {} for f in sm.STUDY_FILES}
    for m in sm.STUDY_MUTATIONS:
        out[m.file][m.id] = classify_study_mutation(m, reference, workdir)
    return out


def parquet_probes(workdir: Path) -> dict[str, tuple[bool, str]]:
    from segment.studies.sets import SetsResult, solve_sets
    from segment.studies.space import load_space

    space = load_space()
    cases = [segment.LOAD_CASES[c] for c in ("FLX", "AR")]
    res = solve_sets(segment.c5c6(), space.sample(4, seed=3), cases, space=space)
    good = workdir / "sets.parquet"
    res.to_parquet(good)

    import study_mutations as sm

    tampered = sm.PARQUET_TAMPERING
    out = {}
    try:
        back = SetsResult.read_parquet(good)
        same = all(np.array_equal(getattr(back, k), getattr(res, k))
                   for k in ("P", "q", "status", "q_unloaded", "facet_force"))
        out["untampered file reads back equal"] = (same, "equal" if same else "differs")
    except Exception as exc:
        out["untampered file reads back equal"] = (False, f"{type(exc).__name__}: {exc}")
    for k, (name, kw) in enumerate(tampered.items()):
        path = sm.tamper_parquet(good, workdir / f"tampered_{k}.parquet", **kw)
        try:
            SetsResult.read_parquet(path)
        except ValueError as exc:
            out[name] = (path.name in str(exc), f"ValueError: {exc}"[:300])
        except Exception as exc:
            out[name] = (False, f"unrelated {type(exc).__name__}: {exc}"[:300])
        else:
            out[name] = (False, "accepted")
    return out


def _run_cli(args, cwd: Path, *, timeout: float = 120.0, rss_limit_gb: float = 3.0):
    """``python -m segment ARGS`` in a subprocess: (exit code or 'timeout'/'memory', stdout,
    stderr). The child is killed when its resident memory passes ``rss_limit_gb`` or it runs
    longer than ``timeout`` seconds."""
    import os
    import subprocess
    import time

    proc = subprocess.Popen([sys.executable, "-m", "segment", *args], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=os.environ.copy())
    t0 = time.monotonic()
    verdict = None
    while proc.poll() is None:
        try:
            with open(f"/proc/{proc.pid}/status") as fh:
                rss = next((int(ln.split()[1]) for ln in fh if ln.startswith("VmRSS")), 0)
        except OSError:
            rss = 0
        if rss > rss_limit_gb * 1024 ** 2:
            verdict = "memory"
        elif time.monotonic() - t0 > timeout:
            verdict = "timeout"
        if verdict:
            proc.kill()
            break
        time.sleep(0.2)
    out, err = proc.communicate()
    return (verdict or proc.returncode), out, err


def cli_probes(workdir: Path) -> dict[str, tuple[bool, str]]:
    """Each probe: the command must exit with code 2 and one stderr line naming the option,
    without a memory blow-up or a hang."""
    probes = {
        "render --size 20000 100": (["render", "FLX", "--size", "20000", "100", "-o",
                                     "wide.png"], "--size"),
        "render --size 1000000 1000000": (["render", "FLX", "--size", "1000000", "1000000",
                                           "-o", "huge.png"], "--size"),
        "ramp --steps 1000000000": (["ramp", "FLX", "--to-scale", "2", "--steps",
                                     "1000000000"], "--steps"),
        "ramp --strips 100000": (["ramp", "FLX", "--to-scale", "2", "--strips", "100000"],
                                 "--strips"),
        "sensitivity --n 100000000000": (["sensitivity", "--n", "100000000000", "--out",
                                          "s_big"], "--n"),
        "sensitivity --n 99999999999999999999999": (
            ["sensitivity", "--n", "99999999999999999999999", "--out", "s_huge"], "--n"),
        "sensitivity --seed -1": (["sensitivity", "--n", "3000", "--seed", "-1", "--out",
                                   "s_seed"], "--seed"),
        "sensitivity --n 1": (["sensitivity", "--n", "1", "--out", "s_one"], "--n"),
        "solve --scale 1e306": (["solve", "FLX", "--scale", "1e306"], "--scale"),
        "simulate --t-end 1e9 --ramp 1e9": (["simulate", "FLX", "--t-end", "1e9", "--ramp",
                                             "1e9"], "--t-end"),
        "calibrate --samples 10000000000": (["calibrate", "--samples", "10000000000", "--out",
                                             "c_big"], "--samples"),
    }
    out = {}
    for name, (args, option) in probes.items():
        code, _, err = _run_cli(args, workdir)
        lines = [ln for ln in err.splitlines() if ln.strip()]
        ok = code == 2 and len(lines) == 1 and option in lines[0]
        out[name] = (ok, f"exit {code}: {' | '.join(lines)[-240:]}")
    # a scheduler that does not answer must leave the output folder as it was
    for name, args, folder in (
            ("sensitivity --scheduler (closed port) creates no folder",
             ["sensitivity", "--n", "3000", "--scheduler", "tcp://127.0.0.1:9", "--out",
              "s_sched"], "s_sched"),
            ("calibrate --scheduler (closed port) leaves the folder",
             ["calibrate", "--samples", "200", "--scheduler", "tcp://127.0.0.1:9", "--out",
              "c_sched"], "c_sched")):
        target = workdir / folder
        before = None
        if name.startswith("calibrate"):
            target.mkdir()
            (target / "keep.txt").write_text("old\n")
            before = sorted(p.name for p in target.iterdir())
        code, _, err = _run_cli(args, workdir)
        after = sorted(p.name for p in target.iterdir()) if target.exists() else None
        lines = [ln for ln in err.splitlines() if ln.strip()]
        ok = code == 2 and after == before and len(lines) == 1
        out[name] = (ok, f"exit {code}, folder {before} -> {after}: {' | '.join(lines)[-200:]}")
    return out


def api_probes() -> dict[str, tuple[bool, str]]:
    from segment.studies.sets import solve_sets
    from segment.studies.space import load_space

    model = segment.c5c6()
    space = load_space()
    flx = segment.LOAD_CASES["FLX"]
    P = space.sample(2, seed=0)
    te = (TypeError, ValueError)

    def inclination(value):
        Q = P.copy()
        Q[:, space.names.index("facet_inclination_left")] = value
        return Q

    def relax_status():
        try:
            r = segment.relax(model, flx.scaled(1000))
        except Exception as exc:
            return False, f"{type(exc).__name__}: {exc}"[:200]
        ok = getattr(r, "converged", None) is False and bool(getattr(r, "message", ""))
        return ok, f"returned converged={getattr(r, 'converged', None)}: " \
                   f"{getattr(r, 'message', '')}"[:200]

    probes = {
        "solve_sets(None, ...)": lambda: _raises(lambda: solve_sets(None, P, [flx]), te,
                                                 ["model"]),
        "solve_sets(model, P, None)": lambda: _raises(lambda: solve_sets(model, P, None), te,
                                                      ["loads"]),
        "solve_sets inclination 1e6 deg": lambda: _raises(
            lambda: solve_sets(model, inclination(1e6), [flx]), te, ["inclination"]),
        "solve_sets inclination 0.75 (radians)": lambda: _raises(
            lambda: solve_sets(model, inclination(0.75), [flx]), te, ["inclination"]),
        "solve_sets P of strings": lambda: _raises(
            lambda: solve_sets(model, P.astype(str), [flx]), te, ["P"]),
        "Load.from_si(force_N=['a', 0, 0])": lambda: _raises(
            lambda: segment.Load.from_si(force_N=["a", 0, 0]), te, ["force_N"]),
        "Load.from_si(moment_Nm=[0, nan, 0])": lambda: _raises(
            lambda: segment.Load.from_si(moment_Nm=[0, math.nan, 0]), te, ["moment_Nm"]),
        "sobol_study(n=True)": lambda: _raises(
            lambda: segment.sobol_study(model, n=True), te, ["n must"]),
        "sobol_study(seed=-1)": lambda: _raises(
            lambda: segment.sobol_study(model, n=3000, seed=-1), te, ["seed"]),
        "uncertainty_bands(n_samples=10**11)": lambda: _raises(
            lambda: segment.uncertainty_bands(model, n_samples=10**11), te, ["n_samples"]),
        "space.sample(10**12)": lambda: _raises(lambda: space.sample(10**12), te, ["n"]),
        "space.sample('5')": lambda: _raises(lambda: space.sample("5"), te, ["n"]),
        "with_strips(100000)": lambda: _raises(lambda: model.with_strips(100000), te,
                                               ["strips"]),
        "simulate(t_end='1')": lambda: _raises(
            lambda: segment.simulate(model, flx, t_end="1"), te, ["t_end"]),
        "relax(FLX x 1000) returns a status": relax_status,
    }
    out = {}
    for name, probe in probes.items():
        try:
            out[name] = probe()
        except Exception as exc:
            out[name] = (False, f"probe raised {type(exc).__name__}: {exc}"[:200])
    return out


def _cli_in_process(args) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            code = cli.main(args)
    except SystemExit as exc:
        code = exc.code
    except Exception as exc:
        return -1, out.getvalue(), f"traceback {type(exc).__name__}: {exc}"
    return code, out.getvalue(), err.getvalue()


def _main_deg(model, load) -> float:
    r = segment.solve(model, load)
    return float(np.degrees(r.displacement_from_unloaded[load.main_dof]))


def _tornado_baseline(folder: Path, out: Path) -> tuple[int, str, float | None]:
    import pandas as pd

    code, _, err = _cli_in_process(["--data", str(folder), "sensitivity", "--method", "tornado",
                                    "--out", str(out)])
    if code != 0 or not (out / "tornado.csv").exists():
        return code, err.strip(), None
    t = pd.read_csv(out / "tornado.csv")
    return code, err.strip(), float(t[t.case == "FLX"].baseline.iloc[0])


def study_probes(workdir: Path) -> dict[str, tuple[bool, str]]:
    import pandas as pd
    import study_mutations as sm
    from data_mutations import set_cell, set_cells

    out = {}

    def folder_with(name, *edits):
        f = sm.copy_inputs(data_dir(), workdir / name)
        for e in edits:
            e(f)
        return f

    def tornado_is_solve(name, folder, *, refusal_ok=None):
        def probe():
            code, err, base = _tornado_baseline(folder, workdir / f"{name}_out")
            if base is None:
                ok = refusal_ok is not None and code == 2 and refusal_ok in err
                return ok, f"exit {code}: {err[-200:]}"
            solved = _main_deg(segment.c5c6(data_dir=folder), segment.LOAD_CASES["FLX"])
            # tornado.csv holds 6 significant digits
            ok = abs(base - solved) <= 1e-5 * max(1.0, abs(solved))
            return ok, f"tornado baseline {base:.4f} deg, solve {solved:.4f}"
        return probe

    fl153 = folder_with("fl153", set_cell("ligaments.csv", 3, "l0_mm", "15.3"))
    fl165 = folder_with("fl165", set_cell("ligaments.csv", 3, "l0_mm", "16.5"))
    from segment.studies.calibration import shipped_calibrated_dir

    probes = {
        "tornado on --data with l0_FL 15.3 has solve's baseline":
            tornado_is_solve("fl153", fl153),
        "tornado on --data with l0_FL 16.5: solve's baseline or a refusal naming l0_FL":
            tornado_is_solve("fl165", fl165, refusal_ok="l0_FL"),
        "tornado on data/calibrated has solve's baseline":
            tornado_is_solve("calibrated", shipped_calibrated_dir()),
    }

    def calibrate_reads_load_cases():
        folder = folder_with("flx25", set_cell("load_cases.csv", 7, "My_Nm", "2.5"))
        cal = workdir / "cal_flx25"
        code, _, err = _cli_in_process(["--data", str(folder), "calibrate", "--out", str(cal)])
        if code != 0:
            return False, f"exit {code}: {err.strip()[-200:]}"
        a = pd.read_csv(cal / "calibration_agreement.csv")
        got = float(a[(a.case == "FLX") & (a.configuration == "intact")].published_model.iloc[0])
        params = segment.load_parameters(folder)
        want = _main_deg(segment.c5c6(data_dir=folder), params.load_cases["FLX"])
        return abs(got - want) < 1e-4, f"published model FLX {got:.4f} deg, solve {want:.4f}"

    def calibrate_writes_its_targets():
        folder = folder_with("one_target")
        rows = (folder / sm.TARGETS).read_text(encoding="utf-8").splitlines()
        one = workdir / "one_target.csv"
        one.write_text("\n".join([rows[0], rows[2]]) + "\n", encoding="utf-8")
        cal = workdir / "cal_one"
        code, _, err = _cli_in_process(["calibrate", "--targets", str(one), "--out", str(cal)])
        if code != 0:
            return False, f"exit {code}: {err.strip()[-200:]}"
        n = len(pd.read_csv(cal / "calibration_targets.csv"))
        return n == 1, f"{n} targets written (1 used)"

    def calibrate_writes_its_space():
        folder = folder_with("narrow", set_cells(sm.SPACE, [(8, "lower", "14.8"),
                                                            (8, "upper", "15.2")]))
        cal = workdir / "cal_narrow"
        code, _, err = _cli_in_process(["calibrate", "--space", str(folder / sm.SPACE),
                                        "--out", str(cal)])
        if code != 0:
            return False, f"exit {code}: {err.strip()[-200:]}"
        found = []
        for p in sorted(cal.glob("*space*.csv")):
            t = pd.read_csv(p).set_index("name")
            found.append((p.name, float(t.loc["l0_FL", "lower"])))
        ok = any(v == 14.8 for _, v in found)
        return ok, f"space files written: {found}"

    def sobol_n1():
        code, text, err = _cli_in_process(["sensitivity", "--n", "1", "--out",
                                           str(workdir / "sobol_n1")])
        sts = [float(x) for x in __import__("re").findall(r"ST (-?[0-9.]+)", text)]
        bad = [v for v in sts if not -0.1 <= v <= 1.1]
        ok = code == 2 and "--n" in err and not bad
        return ok, f"exit {code}, ST printed outside [0, 1]: {bad[:3]}; {err.strip()[-150:]}"

    def sobol_all_fail():
        # every stiffness of the model x 0.001: no set has an equilibrium
        folder = sm.soften(folder_with("allfail"))
        code, text, err = _cli_in_process(["--data", str(folder), "--allow-implausible",
                                           "sensitivity", "--n", "1500", "--out",
                                           str(workdir / "sobol_allfail")])
        ok = code not in (0, -1) and "dominated" not in text and "no indices" not in text
        return ok, f"exit {code}: {(text + err).strip()[-200:]}"

    probes.update({
        "calibrate --data DIR uses DIR's load cases": calibrate_reads_load_cases,
        "calibrate --targets ONE writes the targets used": calibrate_writes_its_targets,
        "calibrate --space FILE writes the space used": calibrate_writes_its_space,
        "sensitivity --n 1 is refused, no index outside [0, 1]": sobol_n1,
        "sensitivity where every set fails is not reported as indices": sobol_all_fail,
    })
    for name, probe in probes.items():
        try:
            out[name] = probe()
        except Exception as exc:
            out[name] = (False, f"probe raised {type(exc).__name__}: {exc}"[:200])
    return out


_ABS_PATH = re.compile(r"/(?:[\w.\-]+/)+")


def sanitize(obj):
    """``obj`` with the folders of every absolute path dropped (temporary folders, the
    checkout, site-packages): committed results name no machine paths."""
    if isinstance(obj, str):
        return _ABS_PATH.sub("", obj)
    if isinstance(obj, dict):
        return {k: sanitize(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return type(obj)(sanitize(v) for v in obj)
    return obj


def run_issue21() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        files = study_input_census(tmp / "inputs")
        (tmp / "parquet").mkdir()
        parquet = parquet_probes(tmp / "parquet")
        (tmp / "cli").mkdir()
        cli_ = cli_probes(tmp / "cli")
        api = api_probes()
        (tmp / "study").mkdir()
        study = study_probes(tmp / "study")
    counts = {}
    for f, res in files.items():
        key = "E_" + f.removesuffix(".csv")
        counts[key] = {"probes": len(res),
                       "accepted_wrong": sum(v == "A" for v, _ in res.values()),
                       "unclear_error": sum(v == "B" for v, _ in res.values())}
    for key, res in (("F_parquet_read_back", parquet), ("G_cli_sizes_and_counts", cli_),
                     ("H_api_argument_types", api), ("I_one_model_degenerate_studies", study)):
        counts[key] = {"probes": len(res), "failed": sum(not ok for ok, _ in res.values())}
    return sanitize({
        "counts": counts,
        "files": {f: {k: {"verdict": v, "detail": d} for k, (v, d) in res.items()}
                  for f, res in files.items()},
        "parquet": {k: {"ok": ok, "detail": d} for k, (ok, d) in parquet.items()},
        "cli": {k: {"ok": ok, "detail": d} for k, (ok, d) in cli_.items()},
        "api": {k: {"ok": ok, "detail": d} for k, (ok, d) in api.items()},
        "study": {k: {"ok": ok, "detail": d} for k, (ok, d) in study.items()},
    })


# ---------------------------------------------------------------- issue 31: the web explorer
CLIENT_TIMEOUT_S = 15.0     # a probe's socket gives up after this (the server's: 10 s)
SETTLE_S = 0.5              # pause between two HTTP probes
BODY_CAP = 1 << 16          # request body limit [bytes], before and after issue 31


def _http(port: int, request: bytes, *, timeout: float = CLIENT_TIMEOUT_S):
    """(status or None, JSON body or None, seconds) of one raw request on a new connection;
    None when the server closed without an answer or the client timed out."""
    import socket
    import time

    t0 = time.monotonic()
    data = b""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(request)
            while chunk := sock.recv(1 << 16):
                data += chunk
    except (TimeoutError, ConnectionError):
        pass
    seconds = time.monotonic() - t0
    head, _, body = data.partition(b"\r\n\r\n")
    try:
        status = int(head.split(b" ", 2)[1])
        return status, json.loads(body), seconds
    except (IndexError, ValueError):
        return None, None, seconds


def explorer_probes() -> dict[str, tuple[bool, str]]:
    """Class J: the explorer's inputs (issue 31), each the reviewer's example. A probe passes
    when the input is refused with a 4xx JSON answer (a ValueError naming the control in the
    session) and the session is unchanged; the whole class also fails a probe of its own when
    any traceback reached stderr."""
    import time
    import urllib.request

    from segment.views import web
    from segment.views.session import ExplorerSession

    model = segment.c5c6()
    out: dict[str, tuple[bool, str]] = {}

    def session_refuses(changes, word):
        def probe():
            s = ExplorerSession(model)
            before = (dict(s.values), s.case, s.model_name)
            try:
                s.update(**changes)
            except ValueError as exc:
                kept = (dict(s.values), s.case, s.model_name) == before
                try:
                    s.update(Fx_N=1.0)
                    later = "a later change works"
                except Exception as exc2:
                    kept, later = False, f"a later change fails: {exc2}"
                return (word in str(exc) and kept,
                        f"ValueError: {exc}"[:120] + f"; unchanged: {kept}; {later}")
            except Exception as exc:
                return False, f"{type(exc).__name__}: {exc}"[:200]
            return False, "accepted"
        return probe

    session = {
        "session: My_Nm 1e308": session_refuses({"My_Nm": 1e308}, "My_Nm"),
        "session: disc_scale 1e-300": session_refuses({"disc_scale": 1e-300}, "disc_scale"),
        "session: a valid and an unknown control": session_refuses(
            {"My_Nm": 1.0, "Mw": 2.0}, "Mw"),
        "session: case as a list": session_refuses({"case": ["FLX"]}, "case"),
        "session: model as an object": session_refuses({"model": {"a": 1}}, "model"),
    }
    for name, probe in session.items():
        try:
            out[name] = probe()
        except Exception as exc:
            out[name] = (False, f"probe raised {type(exc).__name__}: {exc}"[:200])

    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        server = web.start({"intact": model}, port=0)
        try:
            port = server.server_address[1]
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30) as r:
                m = re.search(r'name="segment-token" content="([^"]+)"', r.read().decode())
            token = m.group(1) if m else None

            def request(body=b'{"changes": {"My_Nm": 1.8}}', *, host=None, extra=None,
                        ctype="application/json", length=None, with_token=True):
                h = {"Host": host or f"127.0.0.1:{port}", "Content-Type": ctype,
                     "Content-Length": str(len(body)) if length is None else length}
                if token and with_token:
                    h["X-Segment-Token"] = token
                h.update(extra or {})
                head = "".join(f"{k}: {v}\r\n" for k, v in h.items() if v is not None)
                return f"POST /api/update HTTP/1.1\r\n{head}\r\n".encode() + body

            def seen():
                s = server.session
                return dict(s.values), s.case, s.model_name, s.seq

            def refused(req, statuses=range(400, 500)):
                def probe():
                    before = seen()
                    status, body, _ = _http(port, req)
                    ok = status in statuses and isinstance(body, dict) and "error" in body \
                        and seen() == before
                    return ok, f"status {status}, {body}"[:160] + \
                        f"; session unchanged: {seen() == before}"
                return probe

            def stalled():
                status, _, seconds = _http(
                    port, b"POST /api/update HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                ok = seconds < CLIENT_TIMEOUT_S - 1
                return ok, f"closed after {seconds:.1f} s (client gives up at " \
                           f"{CLIENT_TIMEOUT_S:g} s), status {status}"

            http_probes = {
                "http: foreign Host (DNS rebinding)": refused(request(host=f"evil.example:{port}")),
                "http: cross-origin text/plain POST (CSRF)": refused(request(
                    ctype="text/plain;charset=UTF-8", with_token=False,
                    extra={"Origin": "http://127.0.0.1:1", "Sec-Fetch-Site": "same-site"})),
                "http: cross-origin JSON POST": refused(request(
                    extra={"Origin": "http://evil.example"})),
                "http: update without the token": refused(request(with_token=False)),
                "http: Content-Length abc": refused(request(length="abc")),
                "http: Content-Length -1": refused(request(length="-1")),
                "http: body over the cap": refused(request(b" " * (BODY_CAP + 1))),
                "http: JSON nested 60,000 deep": refused(request(b"[" * 60_000)),
                "http: case as a list": refused(request(b'{"changes": {"case": ["FLX"]}}')),
                "http: model as an object": refused(request(
                    b'{"changes": {"model": {"a": 1}}}')),
                "http: a valid and an unknown control": refused(request(
                    b'{"changes": {"My_Nm": 1.0, "Mw": 2}}')),
                "http: My_Nm 1e308 then a valid change": refused(request(
                    b'{"changes": {"My_Nm": 1e308}}')),
                "http: a stalled client is closed": stalled,
            }
            for name, probe in http_probes.items():
                try:
                    out[name] = probe()
                except Exception as exc:
                    out[name] = (False, f"probe raised {type(exc).__name__}: {exc}"[:200])
                # a server that reads a body until the client hangs up (Content-Length -1)
                # applies it then: let that land before the next probe compares the session
                time.sleep(SETTLE_S)
            status, _, _ = _http(port, request(b'{"changes": {"Fx_N": 1.0}}'))
            out["http: a valid change after all of these"] = (
                status == 200, f"status {status}")
        finally:
            server.shutdown()
            server.server_close()
    tracebacks = stderr.getvalue().count("Traceback")
    out["no traceback on the console"] = (tracebacks == 0, f"{tracebacks} tracebacks")

    def beyond_loopback():
        try:
            from segment.views.guard import Gate
        except ImportError as exc:
            return False, f"no gate: {exc}"
        g = Gate.for_address("0.0.0.0", 8765)
        return (not g.loopback and len(g.token) >= 32,
                f"loopback={g.loopback}, token of {len(g.token)} characters")

    def cli_state():
        code, text, err = _cli_in_process(["explore", "--web", "--port", "0", "--timeout",
                                           "0.3", "--state", "laminectomy"])
        return code == 0, f"exit {code}: {(text + err).strip()[-150:]}"

    def state_menu():
        s = ExplorerSession(model)
        states = s.controls().get("states", [])
        return "laminectomy" in states, f"states menu: {states[:4]}"

    for name, probe in {"0.0.0.0 is not loopback and gets a token": beyond_loopback,
                        "explore --web --state laminectomy": cli_state,
                        "the state menu lists states.csv": state_menu}.items():
        try:
            out[name] = probe()
        except Exception as exc:
            out[name] = (False, f"probe raised {type(exc).__name__}: {exc}"[:200])
    return out


def run_issue31() -> dict:
    probes = explorer_probes()
    return sanitize({
        "counts": {"J_explorer_inputs": {"probes": len(probes),
                                         "failed": sum(not ok for ok, _ in probes.values())}},
        "explorer": {k: {"ok": ok, "detail": d} for k, (ok, d) in probes.items()},
    })


# ---------------------------------------------------------------- issue 31: the inputs
# Verdicts per probe: "ok", "A" (accepted wrongly: a faulty input used, a wrong result
# returned, a run that does not stop) or "B" (an unclear error: a traceback, an error of the
# library underneath, or a message that does not name the file, row, column or argument and
# the value).
CALIBRATE_TIMEOUT_S = 150.0   # a calibration still running then has accepted its input
CHILD_TIMEOUT_S = 60.0        # an API call in a child process (a run of hours, a spin on NaN)


def _api_verdict(fn, words=(), types=(TypeError, ValueError)) -> tuple[str, str]:
    """ok when ``fn()`` raises one of ``types`` whose message holds every word; B for another
    exception or a message without them; A when it returns."""
    try:
        out = fn()
    except types as exc:
        msg = str(exc)
        missing = [w for w in words if w not in msg]
        return ("ok" if not missing else "B",
                f"{type(exc).__name__}: {msg}"[:300] + (f" [lacks {missing}]" if missing
                                                        else ""))
    except Exception as exc:
        return "B", f"{type(exc).__name__}: {exc}"[:300]
    return "A", f"accepted ({type(out).__name__})"


def _cli_verdict(args, cwd: Path, words=(), *, timeout: float = 600.0,
                 folder: str | None = None) -> tuple[str, str]:
    """A command (subprocess): ok when it exits with code 2 and one stderr line holding every
    word (and leaves no ``folder``); A when it exits 0 or 1, runs past ``timeout`` or writes
    ``folder``; B otherwise (a traceback, a message without the words)."""
    code, _, err = _run_cli(args, cwd, timeout=timeout)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    text = " | ".join(lines)[-300:]
    wrote = folder is not None and (cwd / folder).exists()
    if code in ("timeout", 0, 1) or wrote:
        return "A", f"exit {code}{', wrote ' + folder if wrote else ''}: {text}"
    if code == 2 and len(lines) == 1 and all(w in lines[0] for w in words):
        return "ok", f"exit 2: {text}"
    return "B", f"exit {code}: {text}"


def _child_verdict(code: str, words=(), *, timeout: float = CHILD_TIMEOUT_S) -> tuple[str, str]:
    """``code`` in a child Python that prints ``REFUSED <message>`` for a TypeError or
    ValueError and ``RETURNED <text>`` otherwise: ok when refused with the words; A when it
    returns or runs past ``timeout`` (or past 3 GB); B for anything else."""
    import os
    import subprocess
    import textwrap
    import time

    script = ("import sys\ntry:\n" + textwrap.indent(code, "    ")
              + "\nexcept (TypeError, ValueError) as exc:\n"
                "    print('REFUSED', type(exc).__name__, exc)\n    sys.exit(0)\n")
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=os.environ.copy())
    t0, verdict = time.monotonic(), None
    while proc.poll() is None:
        try:
            with open(f"/proc/{proc.pid}/status") as fh:
                rss = next((int(ln.split()[1]) for ln in fh if ln.startswith("VmRSS")), 0)
        except OSError:
            rss = 0
        if rss > 3 * 1024 ** 2:
            verdict = "more than 3 GB of memory"
        elif time.monotonic() - t0 > timeout:
            verdict = f"still running after {timeout:g} s"
        if verdict:
            proc.kill()
            break
        time.sleep(0.2)
    out, err = proc.communicate()
    if verdict:
        return "A", verdict
    if out.startswith("REFUSED"):
        missing = [w for w in words if w not in out]
        return ("ok" if not missing else "B", out.strip()[:300]
                + (f" [lacks {missing}]" if missing else ""))
    if "RETURNED" in out:
        return "A", out.strip()[-300:]
    return "B", (err.strip().splitlines() or ["no output"])[-1][:300]


def curve_probes(workdir: Path) -> dict[str, tuple[str, str]]:
    """Class K: specimen curve files and what is computed from them."""
    import input_mutations as im

    from segment.studies.curves import compare

    model = segment.c5c6()
    out = {}
    for name, (_, line, column) in im.CURVE_FAULTS.items():
        path = im.curve_file(workdir, name)
        words = [path.name, column] + ([f"line {line}"] if line else [])
        out[f"compare: {name}"] = _api_verdict(lambda p=path: compare(model, p), words)
        out[f"segment curves: {name}"] = _cli_verdict(
            ["curves", str(path), "--no-metrics", "--out", f"out_{path.stem}"], workdir,
            [path.name])
    for name in im.CORRIDOR_FAULTS:
        path = im.curve_file(workdir, name)
        out[f"compare: {name}"] = _api_verdict(lambda p=path: compare(model, p),
                                               [path.name, "flexion"])
        out[f"segment curves: {name}"] = _cli_verdict(
            ["curves", str(path), "--no-metrics", "--out", f"out_{path.stem}"], workdir,
            [path.name])
    out["compare(None)"] = _api_verdict(lambda: compare(None), ["model"])
    for name in ("every rotation negated", "rotations in radians under rotation_deg",
                 "origin points marked as measured"):
        path = im.curve_file(workdir, name)
        folder = f"cal_{path.stem}"
        out[f"segment calibrate --curves: {name}"] = _cli_verdict(
            ["calibrate", "--curves", str(path), "--specimen", "B03", "--form",
             "reference-strain", "--out", folder], workdir, [path.name],
            timeout=CALIBRATE_TIMEOUT_S, folder=folder)

    def lm_nan():
        verdict, detail = _child_verdict(
            "import numpy as np\n"
            "from segment.studies.calibration.lm import least_squares_bounded\n"
            "r = least_squares_bounded(lambda p: np.full(3, np.nan), lambda p: np.ones((3, 2)),"
            " [0.5, 0.5], [0.0, 0.0], [1.0, 1.0])\n"
            "print('RETURNED', r.status, r.message)", timeout=30.0)
        if verdict == "A" and detail.startswith("RETURNED") and "not finite" in detail \
                and not detail.startswith("RETURNED 1") and " 0 " not in detail[:12]:
            return "ok", detail
        return ("A" if verdict == "A" else "B"), detail
    out["least squares on NaN residuals stops and says why"] = lm_nan()
    return out


def population_probes(workdir: Path) -> dict[str, tuple[str, str]]:
    """Class L: population.csv files and population folders (recorded facts)."""
    import shutil

    import input_mutations as im

    from segment.studies.population import Population

    model = segment.c5c6()
    out = {}
    for k, (name, (edit, line, column)) in enumerate(im.POPULATION_CSV_FAULTS.items()):
        path = im.curve_population(workdir / f"csv_{k}", edit)
        if name == "converged = no counts":
            def probe(p=path):
                try:
                    pop = Population.from_csv(p, model)
                except Exception as exc:
                    return "B", f"{type(exc).__name__}: {exc}"[:300]
                return (("ok", f"members {pop.names}") if "B04" not in pop.names else
                        ("A", f"B04 (converged = no) is a member: {pop.names}"))
            out[f"from_csv: {name}"] = probe()
            continue
        words = [path.name] + ([f"line {line}"] if line else []) + ([column] if column else [])
        out[f"from_csv: {name}"] = _api_verdict(lambda p=path: Population.from_csv(p, model), words)
    reference = im.virtual_population(workdir / "members")
    for k, (name, (edit, words)) in enumerate(im.POPULATION_FOLDER_FAULTS.items()):
        folder = workdir / f"folder_{k}"
        shutil.copytree(reference, folder)
        edit(folder)
        out[f"from_folders: {name}"] = _api_verdict(
            lambda f=folder: Population.from_folders(f, model), words)
    return out


def dynamics_probes(workdir: Path) -> dict[str, tuple[str, str]]:
    """Class M: pulses, payloads and run settings of the dynamics (API and command line)."""
    import input_mutations as im

    from segment.solvers.dynamics import BaseExcitation, Payload

    model = segment.c5c6()
    flx = segment.LOAD_CASES["FLX"]
    ms = im.pulse_in_ms(workdir)
    head = (0.02, 0.0, 0.0)
    out = {
        "from_csv: a pulse table in ms read as seconds": _api_verdict(
            lambda: BaseExcitation.from_csv(ms), [ms.name, "line 3", "t_s"]),
        "segment simulate --base-csv (ms as s)": _cli_verdict(
            ["simulate", "--base-csv", str(ms), "--t-end", "0.01", "--out", "ms.csv"],
            workdir, [ms.name]),
        "from_samples: a 20 s pulse": _api_verdict(
            lambda: BaseExcitation.from_samples([0.0, 10.0, 20.0], acceleration_g=[
                [0, 0, 0], [1, 0, 0], [0, 0, 0]]), ["t_s", "20"]),
        "triangular: a 20 s pulse": _api_verdict(
            lambda: BaseExcitation.triangular(duration_s=20.0), ["duration_s"]),
        "Payload(mass_kg=4500)": _api_verdict(
            lambda: Payload(mass_kg=4500.0, inertia_kg_cm2=(200, 200, 200), cog_mm=head),
            ["mass_kg", "4500"]),
        "Payload inertia 1e7 kg cm^2": _api_verdict(
            lambda: Payload(mass_kg=4.5, inertia_kg_cm2=(1e7, 1e7, 1e7), cog_mm=head),
            ["inertia_kg_cm2"]),
        "Payload centre of gravity 5 m away": _api_verdict(
            lambda: Payload(mass_kg=4.5, inertia_kg_cm2=(200, 200, 200),
                            cog_mm=(5000.0, 0, 0)), ["cog_mm"]),
        "simulate(t_end=1e7)": _child_verdict(
            "import segment\n"
            "r = segment.simulate(segment.c5c6(), segment.LOAD_CASES['FLX'], t_end=1e7)\n"
            "print('RETURNED', r.message)", ["t_end"]),
        "simulate(ramp=1e7)": _api_verdict(
            lambda: segment.simulate(model, flx, t_end=0.001, ramp=1e7), ["ramp"]),
        "simulate(method='lsv', dt=0.01)": _api_verdict(
            lambda: segment.simulate(model, flx, t_end=0.02, method="lsv", dt=0.01), ["dt"]),
    }
    return out


def states_compare_probes(workdir: Path) -> dict[str, tuple[str, str]]:
    """Class N: the clinical operations' arguments and ``compare`` (API and command line)."""
    from segment.core import states as st
    from segment.studies.compare import compare_states

    model = segment.c5c6()
    flx = {"FLX": segment.LOAD_CASES["FLX"]}
    out = {
        "resect_facet(model, 'right', 'half')": _api_verdict(
            lambda: st.resect_facet(model, "right", "half"), ["fraction", "half"]),
        "cut(model, ['FL'], fraction='half')": _api_verdict(
            lambda: st.cut(model, ["FL"], fraction="half"), ["fraction", "half"]),
        "replace_disc with a 2-component centre": _api_verdict(
            lambda: st.replace_disc(model, cor_c6_mm=(0.0, 1.0), k_rotation_Nm_per_deg=0.5,
                                    k_translation_N_per_mm=1e4), ["cor_c6_mm"]),
        "fuse at 1e9 N m/deg (states.csv refuses it)": _api_verdict(
            lambda: st.fuse(model, k_rotation_Nm_per_deg=1e9, k_translation_N_per_mm=1e4),
            ["k_rotation_Nm_per_deg"]),
        "degenerate(compression='x')": _api_verdict(
            lambda: st.degenerate(model, compression="x", shear=1.3), ["compression"]),
        "compare_states(None, ...)": _api_verdict(
            lambda: compare_states(None, ["laminectomy"], flx), ["model"]),
        "compare_states(scale=-1e5)": _api_verdict(
            lambda: compare_states(model, ["laminectomy"], flx, scale=-1e5), ["scale"]),
        "compare_states(steps=10**9)": _child_verdict(
            "import segment\nfrom segment.studies.compare import compare_states\n"
            "c = compare_states(segment.c5c6(), ['laminectomy'], "
            "{'FLX': segment.LOAD_CASES['FLX']}, ramp_to_scale=2, steps=10**9)\n"
            "print('RETURNED', len(c.frame))", ["steps"]),
        "segment compare --scale -1e5": _cli_verdict(
            ["compare", "FLX", "--states", "laminectomy", "--scale", "-1e5"], workdir,
            ["--scale"]),
        "segment compare --scale 1e306": _cli_verdict(
            ["compare", "FLX", "--states", "laminectomy", "--scale", "1e306"], workdir,
            ["--scale"]),
        "segment compare --steps 1000000000": _cli_verdict(
            ["compare", "FLX", "--states", "laminectomy", "--to-scale", "2", "--steps",
             "1000000000"], workdir, ["--steps"]),
    }
    return out


def result_probes(workdir: Path) -> dict[str, tuple[str, str]]:
    """Class O: results: pickled and read back, never NaN as an answer, files named."""
    import pickle

    from segment.studies.sets import SetsResult
    from segment.studies.space import load_space

    model = segment.c5c6()
    flx = segment.LOAD_CASES["FLX"]
    out = {}

    def round_trip(make):
        def probe():
            try:
                obj = make()
            except Exception as exc:
                return "B", f"making it: {type(exc).__name__}: {exc}"[:200]
            try:
                back = pickle.loads(pickle.dumps(obj))
            except Exception as exc:
                return "B", f"{type(exc).__name__}: {exc}"[:200]
            return "ok", f"{type(back).__name__} pickled and read back"
        return probe

    probes = {
        "pickle the model": round_trip(lambda: model),
        "pickle a solve of a clinical state": round_trip(
            lambda: segment.solve(model.with_state("laminectomy"), flx)),
        "pickle a ramp": round_trip(lambda: segment.ramp(model, flx, to_scale=2, steps=4)),
    }

    def absurd_start(call):
        def probe():
            try:
                r = call()
            except (TypeError, ValueError) as exc:
                ok = "q0" in str(exc)
                return ("ok" if ok else "B"), f"{type(exc).__name__}: {exc}"[:200]
            except Exception as exc:
                return "B", f"{type(exc).__name__}: {exc}"[:200]
            norms = np.atleast_1d(getattr(r, "residual_norm", np.nan))
            if np.isnan(norms).any():
                return "A", f"returned residual_norm = {norms[:3]}"
            return "ok", f"returned, residual_norm {norms[:3]}, not converged"
        return probe

    probes["solve from q0 = 1e200"] = absurd_start(
        lambda: segment.solve(model, flx, q0=np.full(6, 1e200)))
    probes["solve_many from q0 = 1e200"] = absurd_start(
        lambda: segment.solve_many(model, np.array([flx.as_array()]), q0=np.full(6, 1e200)))

    def parquet(path, banned=("Parquet", "parquet input source", "magic bytes")):
        def probe():
            try:
                SetsResult.read_parquet(path)
            except ValueError as exc:
                msg = str(exc)
                leaked = [b for b in banned if b in msg]
                named = not msg.startswith(".:") and (str(path) in msg or repr(str(path)) in msg)
                ok = named and not leaked
                return ("ok" if ok else "B"), msg[:240]
            except Exception as exc:
                return "B", f"{type(exc).__name__}: {exc}"[:200]
            return "A", "accepted"
        return probe

    space = load_space()
    from segment.studies.sets import solve_sets

    folder = workdir / "results"
    folder.mkdir()
    solve_sets(model, space.sample(2, seed=1), [flx], space=space).to_parquet(
        folder / "sets.parquet")
    (workdir / "notes.parquet").write_text("not parquet\n", encoding="utf-8")
    probes["read_parquet('')"] = parquet("")
    probes["read_parquet(a folder holding a result)"] = parquet(str(folder))
    probes["read_parquet(a text file)"] = parquet(str(workdir / "notes.parquet"))
    for name, probe in probes.items():
        try:
            out[name] = probe()
        except Exception as exc:
            out[name] = ("B", f"probe raised {type(exc).__name__}: {exc}"[:200])
    return out


def _would_be_ignored(root: Path) -> list[str]:
    """Folders whose files pyproject ships through a parent package's patterns although the
    folder is a package name of its own: setuptools' "Package would be ignored" warnings."""
    import tomllib

    cfg = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    packages, dirs = set(cfg["packages"]), cfg.get("package-dir", {})

    def folder(pkg):
        for prefix in sorted(dirs, key=len, reverse=True):
            if pkg == prefix or pkg.startswith(prefix + "."):
                rest = pkg[len(prefix):].lstrip(".")
                return root / dirs[prefix] / Path(*rest.split(".")) if rest else \
                    root / dirs[prefix]
        return root / Path(*pkg.split("."))

    found = set()
    for pkg, patterns in cfg.get("package-data", {}).items():
        base = folder(pkg)
        for pattern in patterns:
            for f in base.glob(pattern):
                parts = f.parent.relative_to(base).parts
                for k in range(1, len(parts) + 1):
                    if not all(p.isidentifier() for p in parts[:k]):
                        break
                    name = ".".join((pkg, *parts[:k]))
                    if name not in packages:
                        found.add(name)
    return sorted(found)


_WRITERS = re.compile(r">>>.*\b(?:to_parquet|to_csv|savefig|render|render_grid|export|"
                      r"write_text|write_bytes|figure)\(\s*(?:[^,()]*,\s*)?"
                      r"[\"']([^\"'/]+\.[A-Za-z0-9]+)[\"']")


def _examples_writing_here(root: Path) -> list[str]:
    """Example lines of the README and the docs that write a file by a bare name (into the
    working directory, left behind as untracked files)."""
    hits = []
    for page in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        for k, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
            m = _WRITERS.search(line)
            if m:
                hits.append(f"{page.relative_to(root)}:{k}: {m.group(1)}")
    return hits


def newcomer_probes(workdir: Path) -> dict[str, tuple[str, str]]:
    """Class P: what a newcomer sees (set-up warnings, examples that leave files, the
    compare and ramp printouts, two figures)."""
    import matplotlib

    matplotlib.use("Agg")
    import pandas as pd

    root = Path(__file__).resolve().parent.parent
    out = {}
    ignored = _would_be_ignored(root)
    out["set-up: no 'Package would be ignored' warning"] = (
        "ok" if not ignored else "A", f"{len(ignored)} folders: {ignored}")
    hits = _examples_writing_here(root)
    out["examples write no file into the working directory"] = (
        "ok" if not hits else "A", f"{len(hits)}: {hits[:4]}")

    long_state = "laminectomy+facetectomy-right-50"
    code, text, _err = _cli_in_process(["compare", "FLX", "EXT", "--states",
                                       f"laminectomy,{long_state}"])
    rows = [ln for ln in text.splitlines() if ln.startswith(("intact ", "laminectomy"))
            and ("FLX" in ln or "EXT" in ln)]
    # where the case starts on each row (a long name pushes it right, without a space)
    case_col = {ln.find("FLX") if "FLX" in ln else ln.find("EXT") for ln in rows}
    aligned = len(case_col) == 1 and len(rows) >= 6
    out["compare: long state names aligned"] = (
        "ok" if aligned and code == 0 else "A", f"exit {code}, case column at {sorted(case_col)}")
    out["compare: no -0.000"] = ("ok" if "-0.000" not in text and code == 0 else "A",
                                 f"{text.count('-0.000')} times")
    code, text, _err = _cli_in_process(["ramp", "FLX", "--to-scale", "2", "--steps", "4"])
    out["ramp without --out names no CSV"] = (
        "ok" if code == 0 and "CSV" not in text else "A",
        next((ln for ln in text.splitlines() if "CSV" in ln), f"exit {code}")[:160])

    from segment.report.curve_figures import population_bands_figure

    members = [0.20, 0.20, 0.21, 0.30, 0.35]
    bands = pd.DataFrame([{"case": "FLX", "unit": "deg", "q5": 0.20, "q95": 0.34,
                           "median": 0.21, "members": members, "published": 0.25},
                          {"case": "AS", "unit": "mm", "q5": -0.40, "q95": -0.39,
                           "median": -0.40, "members": [-0.40] * 5, "published": -0.3}])
    fig = population_bands_figure(bands)
    clipped = []
    for ax in fig.axes:
        lo, hi = ax.get_ylim()
        pad = 0.01 * (hi - lo)
        for line in ax.get_lines():
            y = np.asarray(line.get_ydata(), dtype=float)
            if y.size and (y.min() < lo + pad or y.max() > hi - pad):
                clipped.append(f"{ax.get_ylabel()}: {y.min():g}..{y.max():g} in {lo:g}..{hi:g}")
    import matplotlib.pyplot as plt

    plt.close(fig)
    out["population bands: no member on the axis' edge"] = (
        "ok" if not clipped else "A", "; ".join(clipped)[:200] or "all inside")

    from segment.studies.compare import compare_states

    c = compare_states(segment.c5c6(), ["laminectomy"], {k: segment.LOAD_CASES[k]
                                                         for k in ("FLX", "AS")})
    fig = c.figure()
    facet_ax = next(ax for ax in fig.axes if "facet" in ax.get_ylabel())
    labels = [t.get_text() for t in facet_ax.get_xticklabels()]
    plt.close(fig)
    out["clinical figure: the facet-force panel is not labelled [deg]"] = (
        "ok" if not any("[deg]" in t or "[mm]" in t for t in labels) else "A",
        f"facet panel ticks {labels}")

    readme = (root / "README.md").read_text(encoding="utf-8")
    m = re.search(r'failure_loads\(\)\["sequence"\].*\n(\[.*\])', readme)
    got = segment.ramp(segment.c5c6(), segment.LOAD_CASES["FLX"],
                       to_scale=10).failure_loads()["sequence"]
    out["README example prints what it shows"] = (
        "ok" if m and m.group(1) == repr(got) else "A",
        f"README {m.group(1) if m else None}, computed {got}")
    return out


INPUT_CLASSES = {
    "K_curves": curve_probes,
    "L_populations": population_probes,
    "M_dynamics": dynamics_probes,
    "N_states_and_compare": states_compare_probes,
    "O_results": result_probes,
    "P_newcomer": newcomer_probes,
}


def run_issue31_inputs(classes=None) -> dict:
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for key, fn in INPUT_CLASSES.items():
            if classes and key not in classes:
                continue
            folder = Path(tmp) / key
            folder.mkdir()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    results[key] = fn(folder)
                except Exception as exc:       # a class that cannot run: one unclear error
                    results[key] = {"class could not run": (
                        "B", f"{type(exc).__name__}: {exc}"[:300])}
    counts = {key: {"probes": len(res),
                    "accepted_wrong": sum(v == "A" for v, _ in res.values()),
                    "unclear_error": sum(v == "B" for v, _ in res.values())}
              for key, res in results.items()}
    return sanitize({"counts": counts,
                     "probes": {key: {k: {"verdict": v, "detail": d} for k, (v, d) in
                                      res.items()} for key, res in results.items()}})


def _which() -> dict:
    """Which package was measured, without machine paths: its version and whether it is this
    checkout's (else an older copy put first on PYTHONPATH)."""
    return {"version": segment.__version__,
            "this_checkout": Path(segment.__file__).resolve().parent
            == Path(__file__).resolve().parent.parent / "segment"}


def run() -> dict:
    reference = dm.fingerprint(load_parameters())
    data = {}
    with tempfile.TemporaryDirectory() as tmp:
        for m in dm.MUTATIONS:
            data[m.id] = classify_mutation(m, reference, Path(tmp))
    solver = solver_probes()
    contact = contact_probes()
    counts = {
        "A_data_accepted_wrong": sum(v == "A" for v, _ in data.values()),
        "B_confusing_or_deep_errors": sum(v == "B" for v, _ in data.values()),
        "C_solver_settings": sum(not ok for ok, _ in solver.values()),
        "D_contact_extreme_magnitudes": sum(not ok for ok, _ in contact.values()),
    }
    return {
        "segment": _which(),
        "totals": {"data_mutations": len(data), "solver_probes": len(solver),
                   "contact_probes": len(contact)},
        "counts": counts,
        "data": {k: {"verdict": v, "detail": d} for k, (v, d) in data.items()},
        "solver": {k: {"ok": ok, "detail": d} for k, (ok, d) in solver.items()},
        "contact": {k: {"ok": ok, "detail": d} for k, (ok, d) in contact.items()},
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default=None, help="also write the full census here")
    parser.add_argument("--issue", choices=("14", "21", "31", "31-inputs", "all"),
                        default="all",
                        help="which census: the model tables, solver and contact (14), the "
                             "study inputs (21), the web explorer's inputs (31), the inputs, "
                             "recorded facts, results and newcomer faults of issue 31 "
                             "(31-inputs: classes K-P), or all (default)")
    parser.add_argument("--classes", nargs="+", default=None, metavar="KEY",
                        help="with --issue 31-inputs: only these classes (e.g. K_curves)")
    args = parser.parse_args(argv)
    report = run() if args.issue in ("14", "all") else {"segment": _which()}
    if args.issue in ("21", "all"):
        report["issue21"] = run_issue21()
    if args.issue in ("31", "all"):
        report["issue31"] = run_issue31()
    if args.issue in ("31-inputs", "all"):
        report["issue31_inputs"] = run_issue31_inputs(args.classes)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    print(f"segment from {report['segment']}")
    if "counts" in report:
        print(json.dumps({"totals": report["totals"], "counts": report["counts"]}, indent=2))
    if "issue21" in report:
        r21 = report["issue21"]
        print(json.dumps({"issue21_counts": r21["counts"]}, indent=2))
        for f, res in r21["files"].items():
            for k, v in res.items():
                if v["verdict"] != "ok":
                    print(f"  [{f}] {k}: {v['verdict']} {v['detail']}"[:220])
        for section in ("parquet", "cli", "api", "study"):
            for k, v in r21[section].items():
                if not v["ok"]:
                    print(f"  [{section}] {k}: FAIL {v['detail']}"[:220])
    if "issue31" in report:
        r31 = report["issue31"]
        print(json.dumps({"issue31_counts": r31["counts"]}, indent=2))
        for k, v in r31["explorer"].items():
            if not v["ok"]:
                print(f"  [explorer] {k}: FAIL {v['detail']}"[:220])
    if "issue31_inputs" in report:
        r = report["issue31_inputs"]
        print(json.dumps({"issue31_inputs_counts": r["counts"]}, indent=2))
        for key, res in r["probes"].items():
            for k, v in res.items():
                if v["verdict"] != "ok":
                    print(f"  [{key}] {k}: {v['verdict']} {v['detail']}"[:220])
    for section in ("data", "solver", "contact") if "data" in report else ():
        for k, v in report[section].items():
            bad = v.get("verdict", "ok") != "ok" if section == "data" else not v["ok"]
            if bad:
                print(f"  [{section}] {k}: {v.get('verdict', 'FAIL')} {v['detail']}"[:220])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
