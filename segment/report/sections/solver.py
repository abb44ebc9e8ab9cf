"""The solver: tolerance, iterations (timings go to run.json, not here)."""

from __future__ import annotations

from segment.core.newton import DEFAULT_TOL, FORCE_SCALE_N, MOMENT_SCALE_NMM
from segment.report.document import RUN_FILE

KEY = "solver"
TITLE = "Solver"


def write(rep, s) -> None:
    """Write this section into ``rep`` from the study ``s``."""
    rep.text("Newton–Raphson with the exact Jacobian, as `segment.solve` runs it: from the "
             "linear predictor of the unloaded equilibrium (q_u − K_u⁻¹ f, K_u the tangent "
             "stiffness there) and, where that Newton fails, stepping the load up from the "
             "reference pose (`load_steps` > 1 below). Tolerance "
             f"{DEFAULT_TOL:.0e} on the residual scaled by {FORCE_SCALE_N:g} N and "
             f"{MOMENT_SCALE_NMM / 1000:g} N m (`residual_below_tol`; the residuals themselves "
             "are rounding noise that differs between CPUs). Wall-clock times (median of "
             f"{s.solver_repeat} solves) and the final residuals depend on the machine and are "
             f"written to `{RUN_FILE}`, not here; `benchmarks/bench_solve.py` measures the "
             "times properly.")
    shown = s.solver.drop(columns=["time_ms", "residual_norm"]).assign(
        residual_below_tol=s.solver["residual_norm"] <= DEFAULT_TOL)
    rep.table("solver", shown)
