"""The solver: tolerance, iterations (timings go to run.json, not here)."""

from __future__ import annotations

from segment.core.newton import DEFAULT_TOL, FORCE_SCALE_N, MOMENT_SCALE_NMM
from segment.report.document import RUN_FILE

KEY = "solver"
TITLE = "Solver"


def write(rep, s) -> None:
    """Write this section into ``rep`` from the study ``s``."""
    rep.text(f"Newton–Raphson from q = 0 with the exact Jacobian; tolerance "
             f"{DEFAULT_TOL:.0e} on the residual scaled by {FORCE_SCALE_N:g} N and "
             f"{MOMENT_SCALE_NMM / 1000:g} N m. Wall-clock times (median of {s.solver_repeat} "
             f"solves) depend on the machine and are written to `{RUN_FILE}`, not here; "
             "`benchmarks/bench_solve.py` measures them properly.")
    rep.table("solver", s.solver.drop(columns=["time_ms"]))

