"""Count the reliability defects of issue 14 on whichever ``segment`` is importable.

Four classes, as the issue lists them:

A. *data accepted wrong*: a malformed table of ``tests/data_mutations.py`` that should be
   rejected loads (or a harmless reformatting loads a different model);
B. *confusing or deep errors*: a data error that escapes as anything but ValueError/OSError, a
   message that does not name the file, the field and (for a cell) the file line, a valid
   reformatting refused, or ``segment --data DIR solve FLX`` ending in a traceback or not in
   one line with exit code 2;
C. *solver settings* accepted wrongly or failing with an unrelated error;
D. *contact geometry at extreme magnitudes*: NaN or an unrelated error from finite discs.

    PYTHONPATH=<old checkout> python scripts/reliability_census.py     # "before"
    python scripts/reliability_census.py [--json FILE]                  # "after"
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import data_mutations as dm

import segment
from segment import cli
from segment.io import data_dir, load_parameters


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
    from segment.facet import Disc, disc_contact

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
                d = Disc([0, 0, 0], n, 5.0)
            except Exception as exc:
                return False, f"{type(exc).__name__}: {exc}"
            return bool(np.allclose(d.normal, expected, atol=1e-15)), f"normal {d.normal}"
        return probe

    def flat_scaled(s):
        def check(r):
            ok = math.isclose(r.penetration, 0.1 * s, rel_tol=1e-9) and r.regime == "flat"
            return ok, f"u={r.penetration:g} (expected {0.1 * s:g}), {r.regime}"
        return finite_or_range_error(lambda: Disc(np.array([0, 0, -0.1]) * s, [0, 0, -1],
                                                  5.0 * s),
                                     lambda: Disc([0, 0, 0], [0, 0, 1], 5.0 * s), check)

    te = (TypeError, ValueError)
    probes = {
        "centres near +1e308": finite_or_range_error(
            lambda: Disc([1e308, 1e308, 1e308 - 1e292], [0, 0, -1], 5.0),
            lambda: Disc([1e308, 1e308, 1e308], [0, 0, 1], 5.0)),
        "centres at -1e308 and +1e308": finite_or_range_error(
            lambda: Disc([-1e308, 0, 1e308], [0.1, 0, -1], 1e308),
            lambda: Disc([1e308, 0, -1e308], [0, 0, 1], 1e308)),
        "radii 1e154": finite_or_range_error(
            lambda: Disc([0, 0, -0.1], [0.01, 0, -1], 1e154),
            lambda: Disc([0, 0, 0], [0, 0, 1], 1e154)),
        "radii 3e154, rims crossing": finite_or_range_error(
            lambda: Disc([3e154, 0, -1e150], [0.05, 0, -1], 3e154),
            lambda: Disc([0, 0, 0], [0, 0, 1], 3e154)),
        "radii 1e200": finite_or_range_error(
            lambda: Disc([0, 0, -1e199], [0.01, 0, -1], 1e200),
            lambda: Disc([0, 0, 0], [0, 0, 1], 1e200)),
        "radii 1e300, tilted": finite_or_range_error(
            lambda: Disc([1e299, 0, -1e299], [0.2, 0, -1], 1e300),
            lambda: Disc([0, 0, 0], [0, 0, 1], 1.5e300)),
        "flat contact scaled by 1e250": flat_scaled(1e250),
        "flat contact scaled by 1e-250": flat_scaled(1e-250),
        "normal (1e200, 0, 0)": normal_is([1e200, 0, 0], [1, 0, 0]),
        "normal of length 1e-13": normal_is([0, 1e-13, 0], [0, 1, 0]),
        "normal of length 1e-310": normal_is([0, 0, 1e-310], [0, 0, 1]),
        "radius=True": lambda: _raises(lambda: Disc([0, 0, 0], [0, 0, 1], True), te,
                                       ["radius"]),
        "radius='5'": lambda: _raises(lambda: Disc([0, 0, 0], [0, 0, 1], "5"), te,
                                      ["radius"]),
        "center of strings": lambda: _raises(lambda: Disc(["0", "0", "0"], [0, 0, 1], 5.0), te,
                                             ["center"]),
        "blend=True": lambda: _raises(
            lambda: disc_contact(Disc([0, 0, 0], [0, 0, -1], 5.0),
                                 Disc([0, 0, 0], [0, 0, 1], 5.0), blend=True), te, ["blend"]),
    }
    out = {}
    for name, probe in probes.items():
        try:
            out[name] = probe()
        except Exception as exc:
            out[name] = (False, f"probe raised {type(exc).__name__}: {exc}")
    return out


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
        # which package was measured, without machine paths: its version and whether it is
        # this checkout's (else an older copy put first on PYTHONPATH)
        "segment": {"version": segment.__version__,
                    "this_checkout": Path(segment.__file__).resolve().parent
                    == Path(__file__).resolve().parent.parent / "segment"},
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
    args = parser.parse_args(argv)
    report = run()
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    print(f"segment from {report['segment']}")
    print(json.dumps({"totals": report["totals"], "counts": report["counts"]}, indent=2))
    for section in ("data", "solver", "contact"):
        for k, v in report[section].items():
            bad = v.get("verdict", "ok") != "ok" if section == "data" else not v["ok"]
            if bad:
                print(f"  [{section}] {k}: {v.get('verdict', 'FAIL')} {v['detail']}"[:220])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
