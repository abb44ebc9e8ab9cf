"""Benchmark: cost of one residual / residual-and-Jacobian evaluation inside compiled code.

Times, at each of the nine Moroney equilibria, in a numba loop (no Python call overhead):

* ``residual``: the real-arithmetic residual of :mod:`segment.elements.tangent` (line-search
  trials);
* ``tangent``: residual and exact Jacobian of :mod:`segment.elements.tangent` (the solver's);
* ``complex_step``: residual and Jacobian by six complex-step evaluations of the whole segment
  (:func:`segment.core.residual.residual_jacobian_complex_step`, the solver's Jacobian before);

and the ratio complex_step / tangent; and, for each facet joint, the contact with its five
directional derivatives (the tangent's largest part) by one dual-number evaluation
(:mod:`segment.elements.facet_dual`) against five complex-step evaluations of
``facet.end_face_contact`` (how :mod:`segment.elements.tangent` did it before), all in the same run.

    python benchmarks/bench_kernels.py [--n 100000] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import numpy as np
from _common import emit, progress
from numba import njit

import segment
from segment.core.residual import residual_jacobian, residual_jacobian_complex_step, residual_real
from segment.elements.contact import end_face_contact
from segment.elements.dual import const
from segment.elements.facet_dual import contact_dual
from segment.elements.kinematics import pose


@njit(cache=False)
def _residual_only(x, f, params):
    return residual_real(x, f, params)[0]


@njit(cache=False)
def _tangent(x, f, params):
    r, J = residual_jacobian(x, f, params)
    return r[0] + J[0, 0]


@njit(cache=False)
def _complex_step(x, f, params):
    r, J = residual_jacobian_complex_step(x, f, params)
    return r[0] + J[0, 0]


@njit(cache=False)
def _loop(kernel, q, f, params, n):
    s = 0.0
    x = q.copy()
    for k in range(n):
        x[5] = q[5] + 1e-15 * (k % 2)      # keep the call from being hoisted out of the loop
        s += kernel(x, f, params)
    return s


KERNELS = {"residual": _residual_only, "tangent": _tangent, "complex_step": _complex_step}


@njit(cache=False)
def _facet_complex5(c, nrm, r1, c2, n2, r2, blend, seeds, n):
    """``n`` times: five complex-step contact evaluations (centre along seeds 0-2, normal along
    seeds 3-4), as tangent._facet_jacobian_terms did them."""
    s = 0.0
    z = 0j
    c2c = (c2[0] + z, c2[1] + z, c2[2] + z)
    n2c = (n2[0] + z, n2[1] + z, n2[2] + z)
    for k in range(n):
        x0 = c[0] + 1e-15 * (k % 2)
        for b in range(5):
            h = 1e-20j
            dc = h if b < 3 else z
            dn = h if b >= 3 else z
            cb = (x0 + dc * seeds[b, 0], c[1] + dc * seeds[b, 1], c[2] + dc * seeds[b, 2])
            nb = (nrm[0] + dn * seeds[b, 0], nrm[1] + dn * seeds[b, 1], nrm[2] + dn * seeds[b, 2])
            u, point, direction, _, _, _, _ = end_face_contact(cb, nb, r1, c2c, n2c, r2, blend,
                                                               False)
            s += u.real + u.imag     # use every output, so that none is optimised away
            for k in range(3):
                s += point[k].real + point[k].imag + direction[k].real + direction[k].imag
    return s


@njit(cache=False)
def _facet_dual(c, nrm, r1, c2, n2, r2, blend, seeds, n):
    """``n`` times: one dual-number contact evaluation carrying the same five directions."""
    s = 0.0
    c2d = (const(c2[0]), const(c2[1]), const(c2[2]))
    n2d = (const(n2[0]), const(n2[1]), const(n2[2]))
    for k in range(n):
        x0 = c[0] + 1e-15 * (k % 2)
        cd = ((x0, seeds[0, 0], seeds[1, 0], seeds[2, 0], 0.0, 0.0),
              (c[1], seeds[0, 1], seeds[1, 1], seeds[2, 1], 0.0, 0.0),
              (c[2], seeds[0, 2], seeds[1, 2], seeds[2, 2], 0.0, 0.0))
        nd = ((nrm[0], 0.0, 0.0, 0.0, seeds[3, 0], seeds[4, 0]),
              (nrm[1], 0.0, 0.0, 0.0, seeds[3, 1], seeds[4, 1]),
              (nrm[2], 0.0, 0.0, 0.0, seeds[3, 2], seeds[4, 2]))
        u, point, direction = contact_dual(cd, nd, r1, c2d, n2d, r2, const(blend), False)
        for b in range(6):       # use every value and derivative slot
            s += u[b]
            for k in range(3):
                s += point[k][b] + direction[k][b]
    return s


def _facet_timings(model, q, n) -> list[dict]:
    """Per facet joint at pose q: dual vs five complex evaluations [us per evaluation]."""
    params = model._params
    p, R = pose(q, model.reference)
    g = model.reference.R0.T          # rows: the columns of R0 (the translation directions)
    out = []
    for i, state in enumerate(model.state(q).facets):
        c = p + R @ params[9][i]
        nrm = R @ params[10][i]
        t1 = np.cross(nrm, g[0])
        t1 /= np.linalg.norm(t1)
        seeds = np.array([g[0], g[1], g[2], t1, np.cross(nrm, t1)])
        args = (c, nrm, params[11][i], params[12][i], params[13][i], params[14][i],
                params[15][i], seeds)
        row = {"regime": state.regime}
        for key, kernel in (("complex5_us", _facet_complex5), ("dual_us", _facet_dual)):
            kernel(*args, 10)                             # compile
            t0 = time.perf_counter()
            kernel(*args, n)
            row[key] = 1e6 * (time.perf_counter() - t0) / n
        row["ratio_complex5_over_dual"] = row["complex5_us"] / row["dual_us"]
        out.append(row)
    return out


def run(n: int) -> dict:
    model = segment.c5c6()
    cases = {}
    for name, load in progress(segment.LOAD_CASES.items(), "bench_kernels"):
        q = np.array(segment.solve(model, load).q)
        f = load.as_array()
        row = {}
        for key, kernel in KERNELS.items():
            # the tangent kernels take the packed layout, the complex reference the 17 arrays
            args = model._params if key == "complex_step" else model._packed
            _loop(kernel, q, f, args, 10)               # compile
            t0 = time.perf_counter()
            _loop(kernel, q, f, args, n)
            row[f"{key}_us"] = 1e6 * (time.perf_counter() - t0) / n
        row["ratio_complex_step_over_tangent"] = row["complex_step_us"] / row["tangent_us"]
        row["facets"] = _facet_timings(model, q, n)
        cases[name] = row
    ratios = [c["ratio_complex_step_over_tangent"] for c in cases.values()]
    facet_ratios = [f["ratio_complex5_over_dual"] for c in cases.values() for f in c["facets"]]
    return {
        "benchmark": "residual and Jacobian kernels at the nine equilibria (numba loop)",
        "machine": {"python": platform.python_version(), "processor": platform.machine(),
                    "cpu_count": os.cpu_count()},
        "settings": {"evaluations_per_timing": n},
        "cases": cases,
        "summary": {"ratio_min": min(ratios), "ratio_median": statistics.median(ratios),
                    "tangent_us_max": max(c["tangent_us"] for c in cases.values()),
                    "facet_ratio_complex5_over_dual_min": min(facet_ratios),
                    "facet_ratio_complex5_over_dual_median": statistics.median(facet_ratios)},
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--out", default=None, help="also write the JSON to this file")
    args = parser.parse_args(argv)
    emit(run(args.n), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
