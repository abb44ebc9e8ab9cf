"""Global sensitivity: Sobol indices of the nine cases over the whole parameter space.

First-order (S1) and total (ST) Sobol indices with bootstrap confidence intervals, by SALib
(Herman and Usher 2017, J Open Source Softw 2(9):97): a scrambled Sobol sequence in the
Saltelli design (N (D + 2) model evaluations for D parameters, no second-order terms; Saltelli
et al. 2010, Comput Phys Commun 181:259-270) on the unit cube, mapped through each parameter's
truncated prior (:meth:`segment.studies.space.ParameterSpace.ppf`), and the estimators of
``SALib.analyze.sobol`` (Saltelli 2010 for S1, Jansen 1999 for ST). Every evaluation solves
the unloaded equilibrium and the nine cases (:func:`segment.studies.sets.solve_sets`, one compiled
launch per chunk, or on Dask with ``client=``).

Outputs (one column of indices each):

* ``<case> main``: each case's main displacement from the unloaded equilibrium [mm or deg];
* ``<case> facet force``: the sum of both facet contact forces in that case [N];
* ``unloaded x``, ``unloaded z``, ``unloaded phi_y``: the unloaded pose from the reference pose.

An output that does not vary over the samples (e.g. a facet force that is zero everywhere)
has no Sobol indices: they are reported as NaN with ``constant`` True.

Degenerate studies (issue 21) are refused or marked, never reported as results:

* a design smaller than :data:`MIN_BASE_SAMPLES` (N) is an error: below, the bootstrap
  intervals are too wide for the indices to mean anything (measured by
  ``scripts/sobol_min_n.py``, ``benchmarks/results/sobol_min_n.json``);
* an index estimate outside its possible range [0, 1] by more than :data:`INDEX_RANGE_TOL`
  is not printed as a result (:func:`dominant_parameters`, :func:`fig_sobol`): the CSV keeps
  the estimate and :meth:`SobolResult.out_of_range` names it;
* evaluations that do not converge are counted with their reasons
  (:mod:`segment.studies.failures`). Few random failures are replaced by the mean of the
  converged outputs (the Saltelli design needs every row; a warning says how many and why);
  when every set failed, more than :data:`~segment.studies.failures.MAX_FAILED_FRACTION`
  failed, or the failures concentrate in one region of the space, the study returns
  ``status`` ``Status.REFUSED`` with the reason and no indices (all NaN).

Needs the ``study`` extra (SALib): ``pip install "c5c6-segment[study]"``.
"""

from __future__ import annotations

import logging
import math
import time
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

import segment._checks as _checks
from segment._checks import check_count, check_memory, check_seed
from segment.core.model import Segment
from segment.core.published import LOAD_CASES
from segment.core.status import Status
from segment.elements.disc import DOF_NAMES
from segment.studies.failures import MAX_FAILED_FRACTION, FailureSummary, summarise_failures
from segment.studies.sets import bytes_per_set, solve_sets
from segment.studies.space import load_space

__all__ = ["INDEX_RANGE_TOL", "MAX_EVALUATIONS", "MIN_BASE_SAMPLES", "SobolResult",
           "analyze_sobol", "check_design", "dominant_parameters", "fig_sobol",
           "min_evaluations", "sobol_study"]

log = logging.getLogger(__name__)

DEFAULT_EVALUATIONS = 100_000
"""Default minimum number of model evaluations (each: unloaded + nine cases)."""
UNLOADED_OUTPUTS = ("x", "z", "phi_y")
DOMINANT_ST = 0.1
"""A parameter 'dominates' an output when its total index is at least this."""
MIN_BASE_SAMPLES = 128
"""Smallest N of the Saltelli design (N (D + 2) evaluations: 2,944 for the 21 packaged
parameters). Measured over the main displacements of the nine cases, packaged model and space,
seeds 0-2 (``scripts/sobol_min_n.py``, ``benchmarks/results/sobol_min_n.json``): the largest
95 % bootstrap half-width of ST is 0.57 at N = 32, 0.30 at N = 64 and 0.18 at N = 128, and
estimates leave [0, 1] by up to 0.10, 0.14 and 0.015. Below N = 128 an index of 0.3 cannot be
told from 0, and out-of-range estimates beyond :data:`INDEX_RANGE_TOL` occur."""
MAX_EVALUATIONS = _checks.MAX_EVALUATIONS
"""Largest number of model evaluations of one study (N (D + 2) <= 2**27 for the packaged
space; about 150 GB of results): a bound on typing slips, besides the check of the memory
available."""
INDEX_RANGE_TOL = 0.1
"""A Sobol index estimate more than this outside [0, 1] is not printed as a result."""


def min_evaluations(dim: int, min_base_samples: int = MIN_BASE_SAMPLES) -> int:
    """Smallest ``n`` of :func:`sobol_study` whose design reaches N = ``min_base_samples``."""
    return (min_base_samples // 2) * (dim + 2) + 1


def check_design(n, dim: int, n_cases: int, n_facets: int, *, name: str = "n",
                 min_base_samples: int = MIN_BASE_SAMPLES) -> int:
    """``n`` (minimum evaluations) as an int, or an error naming ``name``: not an integer, a
    design below N = ``min_base_samples``, more than :data:`MAX_EVALUATIONS`, or more memory
    than is available for its parameter sets, results and outputs."""
    n = check_count(n, name, maximum=MAX_EVALUATIONS, why="MAX_EVALUATIONS")
    n_base = base_samples(n, dim)
    if n_base < min_base_samples:
        low = min_evaluations(dim, min_base_samples)
        raise ValueError(f"{name} must be at least {low:,} for {dim} parameters, got {n:,}: it "
                         f"gives a Saltelli design of N = {n_base}, and stable Sobol indices "
                         f"need N >= {min_base_samples} (at N = 64 the 95 % bootstrap "
                         f"intervals of ST reach +-0.30 and estimates leave [0, 1] by 0.14; "
                         f"MIN_BASE_SAMPLES, scripts/sobol_min_n.py)")
    m_sets = n_base * (dim + 2)
    per_set = bytes_per_set(n_cases, n_facets, dim, False) \
        + 8 * (2 * dim + 2 * n_cases + len(UNLOADED_OUTPUTS))      # U, P and the outputs
    check_memory(m_sets * per_set, f"{name} = {n:,}: a Sobol design of {m_sets:,} evaluations",
                 hint=f"lower {name}")
    return n


def _salib():
    try:
        from SALib.analyze import sobol as analyze
        from SALib.sample import sobol as sample
    except ImportError:
        raise ImportError('the Sobol study needs SALib; install the study extra: '
                          'pip install "c5c6-segment[study]"') from None
    return sample, analyze


def analyze_sobol(y, dim: int, *, num_resamples: int = 100, conf_level: float = 0.95,
                  seed: int | None = 0) -> dict:
    """S1, ST and their bootstrap confidence half-widths from the outputs ``y`` of a Saltelli
    design without second-order terms (N (D + 2) values in SALib's row order).

    This is ``SALib.analyze.sobol.analyze(..., calc_second_order=False)``: the same output
    normalisation, SALib's own estimators (``first_order``: Saltelli et al. 2010;
    ``total_order``: Jansen 1999) and, for ``seed`` > 0, the same bootstrap resamples, so the
    numbers agree to rounding (``tests/test_sobol.py``); unlike SALib, ``seed=0`` seeds them
    too. Only the bootstrap is vectorised:
    the resampled A and B are drawn once instead of once per parameter, which takes SALib's
    4 s per output at N = 8192, D = 21 to about 0.1 s.
    """
    from scipy.stats import norm

    _, analyze = _salib()
    y = np.asarray(y, dtype=float)
    if y.ndim != 1 or y.size % (dim + 2):
        raise ValueError(f"y must hold N (D + 2) = N x {dim + 2} values, got shape {y.shape}")
    n = y.size // (dim + 2)
    if not np.all(np.isfinite(y)):
        raise ValueError("y must be finite (replace failed evaluations first)")
    if not y.std() > 0:
        raise ValueError("y does not vary: its Sobol indices are undefined")
    y = (y - y.mean()) / y.std()
    A, B, AB, _ = analyze.separate_output_values(y, dim, n, False)
    # SALib draws unseeded resamples for seed 0 (``if seed:``); here every integer seeds them,
    # so a study with seed 0 (the report's) is reproducible; None leaves them unseeded
    draw = (np.random.default_rng(seed).integers if seed is not None
            else np.random.default_rng().integers)
    r = draw(n, size=(n, int(num_resamples)))
    z = norm.ppf(0.5 + conf_level / 2)
    Ar, Br = A[r], B[r]
    var_r = np.var(np.r_[Ar, Br], axis=0)
    spread = np.ptp(np.r_[Ar, Br]) != 0.0
    out = {k: np.empty(dim) for k in ("S1", "S1_conf", "ST", "ST_conf")}
    for j in range(dim):
        out["S1"][j] = analyze.first_order(A, AB[:, j], B)
        out["ST"][j] = analyze.total_order(A, AB[:, j], B)
        ABr = AB[r, j]
        s1 = np.mean(Br * (ABr - Ar), axis=0) / var_r
        st = 0.5 * np.mean((Ar - ABr) ** 2, axis=0) / var_r
        out["S1_conf"][j] = z * s1.std(ddof=1) if spread else 0.0
        out["ST_conf"][j] = z * st.std(ddof=1) if spread else 0.0
    return out


def base_samples(n_evaluations: int, dim: int) -> int:
    """Smallest power of two N with N (D + 2) >= ``n_evaluations``."""
    n = max(1, math.ceil(int(n_evaluations) / (dim + 2)))
    return 1 << (n - 1).bit_length()


@dataclass(frozen=True, eq=False)
class SobolResult:
    """Outcome of :func:`sobol_study`.

    Attributes
    ----------
    indices : DataFrame
        Tidy: one row per (output, parameter) with ``output``, ``case``, ``quantity``,
        ``unit``, ``parameter``, ``S1``, ``S1_conf``, ``ST``, ``ST_conf`` (half-widths of the
        bootstrap confidence intervals), ``constant``.
    n_base : int
        N of the Saltelli design.
    n_evaluations : int
        N (D + 2) parameter sets, each solved unloaded and for every case.
    n_failed : int
        Evaluations with a failed solve (replaced, see the module doc).
    elapsed : float
        Wall time of the study [s] (sampling, solving, analysis).
    conf_level : float
    samples : SetsResult or None
        The solved sets (``keep_samples=True``).
    status : Status
        ``COMPLETED``, or ``REFUSED`` when the failed evaluations make indices meaningless
        (then every index is NaN and ``message`` says why);
        :class:`~segment.core.status.Status`.
    message : str
        How many evaluations failed and why (empty when none did).
    failures : FailureSummary or None
    """

    indices: pd.DataFrame
    n_base: int
    n_evaluations: int
    n_failed: int
    elapsed: float
    conf_level: float
    samples: object = None
    status: Status = Status.COMPLETED
    message: str = ""
    failures: FailureSummary | None = None

    @property
    def refused(self) -> bool:
        """True when the failed evaluations make the indices meaningless (module doc)."""
        return self.status == Status.REFUSED

    def out_of_range(self, tol: float = INDEX_RANGE_TOL) -> pd.DataFrame:
        """Rows of :attr:`indices` whose S1 or ST lies more than ``tol`` outside [0, 1]."""
        df = self.indices
        bad = np.zeros(len(df), dtype=bool)
        for k in ("S1", "ST"):
            v = df[k].to_numpy(dtype=float)
            with np.errstate(invalid="ignore"):
                bad |= (v < -tol) | (v > 1.0 + tol)
        return df[bad]

    def matrix(self, index: str = "ST", *, quantity: str | None = "main") -> pd.DataFrame:
        """Parameters x outputs table of one index (``"S1"`` or ``"ST"``)."""
        df = self.indices if quantity is None else self.indices[
            self.indices.quantity == quantity]
        out = df.pivot(index="parameter", columns="output", values=index)
        params = list(dict.fromkeys(self.indices.parameter))
        outputs = list(dict.fromkeys(df.output))
        return out.loc[params, outputs]

    def to_csv(self, path) -> None:
        self.indices.to_csv(path, index=False, float_format="%.6g")


def _outputs(res, cases) -> tuple[list[tuple[str, str, str, str]], np.ndarray]:
    """(output, case, quantity, unit) and values (M, n_outputs) from a SetsResult."""
    meta, cols = [], []
    disp = res.displacement
    for j, (name, load) in enumerate(cases.items()):
        dof = load.main_dof
        if dof is None:
            raise ValueError(f"case {name!r} has no single main load component; the Sobol "
                             "study needs one main displacement per case")
        v = disp[:, j, dof] if dof < 3 else np.degrees(disp[:, j, dof])
        meta.append((f"{name} main", name, "main", "mm" if dof < 3 else "deg"))
        cols.append(v)
    for j, name in enumerate(cases):
        meta.append((f"{name} facet force", name, "facet force", "N"))
        cols.append(res.facet_force[:, j, :].sum(axis=1))
    for dof in UNLOADED_OUTPUTS:
        c = DOF_NAMES.index(dof)
        v = res.q_unloaded[:, c] if c < 3 else np.degrees(res.q_unloaded[:, c])
        meta.append((f"unloaded {dof}", "unloaded", dof, "mm" if c < 3 else "deg"))
        cols.append(v)
    return meta, np.column_stack(cols)


def sobol_study(model: Segment, *, space=None, cases=None, n: int = DEFAULT_EVALUATIONS,
                seed: int = 0, num_resamples: int = 100, conf_level: float = 0.95,
                client=None, n_threads: int | None = None, progress: bool = False,
                keep_samples: bool = False, strict: bool = True,
                min_base_samples: int = MIN_BASE_SAMPLES) -> SobolResult:
    """First-order and total Sobol indices of every case over the parameter space.

    Parameters
    ----------
    model : Segment
        Base model: the parameters of ``space`` are applied to it.
    space : ParameterSpace, path or None
        Default: the packaged ``data/parameter_space.csv``.
    cases : mapping name -> Load, optional
        Default: the nine Moroney cases (each must have one main load component).
    n : int
        Minimum number of model evaluations; the design uses the smallest power of two
        N with N (D + 2) >= n (default 100,000: N = 8192 and 188,416 evaluations for the
        21 parameters of the packaged space). At least :func:`min_evaluations` (N >=
        :data:`MIN_BASE_SAMPLES`), at most :data:`MAX_EVALUATIONS` and what fits in memory.
    seed : int
        Seed of the scrambled Sobol sequence and of the bootstrap, in [0, 2**32 - 1].
    num_resamples, conf_level
        Bootstrap of the confidence intervals.
    client : dask.distributed.Client, optional
        Solve on this Dask cluster.
    n_threads, progress
        As :func:`segment.studies.sets.solve_sets`.
    keep_samples : bool
        Keep the solved :class:`~segment.studies.sets.SetsResult` (memory: ~1 kB per evaluation).
    strict : bool
        Passed to :func:`~segment.studies.sets.solve_sets`: parameter values outside their plausible
        ranges are an error (True) or accepted with a warning.
    min_base_samples : int
        The smallest N accepted (default :data:`MIN_BASE_SAMPLES`; ``scripts/sobol_min_n.py``
        lowers it to measure why it is there).

    Returns
    -------
    SobolResult
        With ``status`` ``Status.REFUSED`` (and NaN indices) when the failed evaluations make the
        indices meaningless (module doc).

    Raises
    ------
    TypeError, ValueError
        Naming ``n`` (not an integer, a design smaller than N = :data:`MIN_BASE_SAMPLES`,
        more evaluations than the limit or the memory allows) or ``seed``.
    """
    sample, _ = _salib()
    t0 = time.perf_counter()
    space = load_space(space)
    seed = check_seed(seed)
    min_base_samples = check_count(min_base_samples, "min_base_samples")
    space = space.for_model(model)
    cases = dict(LOAD_CASES) if cases is None else dict(cases)
    n = check_design(n, space.dim, len(cases), len(model.facets),
                     min_base_samples=min_base_samples)
    n_base = base_samples(n, space.dim)
    problem = {"num_vars": space.dim, "names": list(space.names),
               "bounds": [[0.0, 1.0]] * space.dim}
    U = sample.sample(problem, n_base, calc_second_order=False, scramble=True, seed=seed)
    # Sobol points can hit 0 or 1 exactly; keep the truncated inverse CDFs finite
    U = np.clip(U, 0.5 / (n_base * 64), 1.0 - 0.5 / (n_base * 64))
    P = space.ppf(U)
    log.info("Sobol: N = %d, %d evaluations x (unloaded + %d cases)", n_base, P.shape[0],
             len(cases))
    res = solve_sets(model, P, list(cases.values()), space=space, client=client,
                     n_threads=n_threads, progress=progress, strict=strict)
    meta, Y = _outputs(res, cases)
    ok = res.converged.all(axis=1)
    n_failed = int(ok.size - ok.sum())
    failures = summarise_failures(U, ok, names=space.names, status=res.status,
                                  status_unloaded=res.status_unloaded,
                                  case_names=list(cases))
    status, message = Status.COMPLETED, failures.describe()
    if n_failed and failures.acceptable:
        warnings.warn(f"Sobol study: {message}; their outputs are replaced by the mean of the "
                      "converged ones", RuntimeWarning, stacklevel=2)
        Y[~ok] = Y[ok].mean(axis=0)
    elif n_failed:
        status = Status.REFUSED
        if failures.n_failed == failures.n_sets:
            message += ": no indices can be computed"
        elif failures.concentrated:
            message += (": the converged sets would describe another part of the space, so "
                        "no indices are computed")
        else:
            message += (f"; more than {MAX_FAILED_FRACTION:.0%} failed, and replacing them "
                        "by the mean would bias every index, so none are computed")
    rows = []
    for k, (out_name, case, quantity, unit) in enumerate(meta):
        y = Y[:, k]
        constant = (status == Status.COMPLETED
                    and not np.ptp(y) > 1e-12 * max(1.0, float(np.abs(y).max())))
        if status != Status.COMPLETED or constant:
            s = {key: np.full(space.dim, np.nan) for key in ("S1", "S1_conf", "ST", "ST_conf")}
        else:
            s = analyze_sobol(y, space.dim, num_resamples=num_resamples,
                              conf_level=conf_level, seed=seed)
        for j, name in enumerate(space.names):
            rows.append({"output": out_name, "case": case, "quantity": quantity, "unit": unit,
                         "parameter": name, "S1": float(s["S1"][j]),
                         "S1_conf": float(s["S1_conf"][j]), "ST": float(s["ST"][j]),
                         "ST_conf": float(s["ST_conf"][j]), "constant": constant})
    return SobolResult(indices=pd.DataFrame(rows), n_base=n_base, n_evaluations=P.shape[0],
                       n_failed=n_failed, elapsed=time.perf_counter() - t0,
                       conf_level=conf_level, samples=res if keep_samples else None,
                       status=status, message=message, failures=failures)


def dominant_parameters(result: SobolResult, *, quantity: str = "main",
                        threshold: float = DOMINANT_ST) -> list[str]:
    """One sentence per output, written from the numbers: the parameters whose total index
    reaches ``threshold``, largest first, with ST and its confidence half-width."""
    lines = []
    if result.refused:
        return [f"no Sobol indices: {result.message}."]
    df = result.indices[result.indices.quantity == quantity]
    bad = set(result.out_of_range().index)
    for out_name in dict.fromkeys(df.output):
        sel = df[df.output == out_name]
        if sel.constant.iloc[0]:
            lines.append(f"{out_name}: does not vary over the space (no indices).")
            continue
        wrong = sel[sel.index.isin(bad)]
        if len(wrong):
            lines.append(f"{out_name}: not resolved ({len(wrong)} index estimates outside "
                         f"[0, 1], e.g. {wrong.parameter.iloc[0]}); a larger design is "
                         "needed.")
            continue
        sel = sel.sort_values("ST", ascending=False)
        big = sel[sel.ST >= threshold]
        if big.empty:
            top = sel.iloc[0]
            lines.append(f"{out_name}: no single parameter reaches ST {threshold:g}; the "
                         f"largest is {top.parameter} (ST {top.ST:.2f}).")
            continue
        parts = [f"{r.parameter} (ST {r.ST:.2f} ± {r.ST_conf:.2f})" for r in big.itertuples()]
        share = float(sel.S1.clip(lower=0).sum())
        lines.append(f"{out_name}: dominated by {', '.join(parts)}; first-order indices sum "
                     f"to {share:.2f}" + (" (interactions matter)" if share < 0.9 else "") + ".")
    return lines


def fig_sobol(result: SobolResult, *, index: str = "ST", quantity: str = "main",
              ax=None):
    """Heat map parameters x outputs of one Sobol index (matplotlib figure)."""
    import matplotlib.pyplot as plt

    mat = result.matrix(index, quantity=quantity)
    if ax is None:
        fig, ax = plt.subplots(figsize=(1.0 + 0.75 * mat.shape[1], 0.9 + 0.32 * mat.shape[0]))
    else:
        fig = ax.figure
    vals = mat.to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        vals = np.where((vals < -INDEX_RANGE_TOL) | (vals > 1.0 + INDEX_RANGE_TOL), np.nan,
                        vals)     # never shown as a result (module doc)
    im = ax.imshow(np.nan_to_num(vals, nan=0.0), cmap="viridis", vmin=0.0, vmax=1.0,
                   aspect="auto")
    ax.set_xticks(range(mat.shape[1]), [c.replace(f" {quantity}", "") for c in mat.columns],
                  rotation=0)
    ax.set_yticks(range(mat.shape[0]), mat.index)
    for i in range(vals.shape[0]):
        for j in range(vals.shape[1]):
            v = vals[i, j]
            if np.isfinite(v) and v >= 0.005:
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=7,
                        color="black" if v > 0.6 else "white")
    fig.colorbar(im, ax=ax, label=f"Sobol {'total' if index == 'ST' else 'first-order'} "
                                  f"index {index}")
    ax.set_title(f"Sobol {index} of each case's {quantity} ({result.n_evaluations:,} "
                 "evaluations)")
    return fig
