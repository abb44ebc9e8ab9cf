"""``segment simulate``: the motion of C5 under a load case and/or a moving C6 (dynamics)."""

from __future__ import annotations

import logging
import math
import sys

from segment.cli._common import (
    UsageError,
    cases,
    check_output_file,
    command,
    convention_option,
    model_for,
    number_option,
    progress_bar,
    state_option,
)
from segment.core.checks import (
    LSV_DT,
    PAYLOAD_COG,
    PAYLOAD_INERTIA,
    PAYLOAD_MASS,
    PULSE_DURATION,
    PULSE_PEAK,
    RAMP_TIME,
    T_END,
)
from segment.solvers.equilibrium import solve

# the ranges are the rows of segment.core.checks, the same for the API (simulate, Payload,
# BaseExcitation): an option here is checked by the row its value goes to
MAX_T_END_S = T_END.hard.upper
MAX_N_OUTPUT = 100_000
MIN_DT_S, MAX_DT_S = LSV_DT.hard.lower, LSV_DT.hard.upper
MAX_PAYLOAD_KG = PAYLOAD_MASS.hard.upper
MAX_PAYLOAD_INERTIA_KG_CM2 = PAYLOAD_INERTIA.hard.upper
MAX_PAYLOAD_COG_MM = PAYLOAD_COG.hard.upper
DEFAULT_BASE_OUT = "simulate_history.csv"
"""Where a base-excitation run writes its history when ``--out`` is not given."""
BASE_OUTPUT_INTERVAL_S = 1e-3
"""Output spacing of a base-excitation run [s] (1 ms: 301 rows for 0.3 s)."""
METHODS = {"radau": "Radau", "bdf": "BDF", "lsv": "lsv", "lsv-explicit": "lsv-explicit"}


def register(sub) -> None:
    p = command(sub, "simulate", run,
                help="simulate the motion of C5 under a load case and/or a moving C6 "
                     "(dynamics, all damping of the paper)",
                description="Simulate the motion of C5 on C6: a load case applied to C5 "
                            "(CASE), a prescribed acceleration of C6 (--base-pulse or "
                            "--base-csv: a whiplash-type base excitation), or both.")
    p.add_argument("case", metavar="CASE", nargs="?", default=None,
                   help="load case name (optional with a base excitation)")
    number_option(p, "--t-end", default=None, metavar="S",
                  help=f"simulated time [s], at most {MAX_T_END_S:g} (default 1; with a base "
                       "excitation 0.3)")
    number_option(p, "--ramp", default=0.0, metavar="S",
                  help=f"ramp the load over S seconds, at most {MAX_T_END_S:g} (default 0: a "
                       "step)")
    p.add_argument("--gravity", action="store_true", help="add gravity (-z of C6)")
    state_option(p)
    convention_option(p)
    p.add_argument("--out", metavar="FILE.csv", default=None,
                   help="write the time history (C5 relative to C6 and, with a base "
                        "excitation, in space; mm and degrees; element forces; energies) as "
                        f"CSV (a base-excitation run writes {DEFAULT_BASE_OUT} by default)")
    base = p.add_argument_group("base excitation (C6 moves; Fritzkowski and Walczak 2014)")
    base.add_argument("--base-pulse", choices=("triangular",), default=None,
                      help="a triangular acceleration pulse of C6 (their Fig. 5a)")
    number_option(base, "--peak-g", default=8.5, metavar="G",
                  help="peak acceleration of the pulse [g], in (0, 100] (default 8.5)")
    number_option(base, "--duration", default=0.105, metavar="S",
                  help="duration of the pulse [s], in (0, 10] (default 0.105)")
    number_option(base, "--peak-at", default=0.5, metavar="F",
                  help="time of the peak as a fraction of the duration, in (0, 1) "
                       "(default 0.5)")
    base.add_argument("--direction", default="+x",
                      choices=("+x", "-x", "+y", "-y", "+z", "-z"),
                      help="direction of the pulse along the C6 axes (default +x, anterior: a "
                           "rear-end impact)")
    base.add_argument("--base-csv", metavar="FILE.csv", default=None,
                      help="C6's acceleration from a table: t_s and ax_g, ay_g, az_g (or "
                           "ax_m_s2, ...), linear between rows, zero outside them")
    pay = p.add_argument_group("payload fixed to C5 (your numbers; none is shipped)")
    number_option(pay, "--payload-mass", default=None, metavar="KG",
                  help=f"mass [kg], in (0, {MAX_PAYLOAD_KG:g}]")
    pay.add_argument("--payload-inertia", type=str, nargs="+", default=None,
                     metavar="I",
                     help="inertia about its centre of gravity along the C5 axes [kg cm^2]: "
                          "Ixx Iyy Izz, or Ixx Iyy Izz Ixy Ixz Iyz")
    pay.add_argument("--payload-cog", type=str, nargs=3, default=None, metavar=("X", "Y", "Z"),
                     help="its centre of gravity in the C5 frame [mm]")
    num = p.add_argument_group("integration")
    num.add_argument("--method", choices=tuple(METHODS), default="radau",
                     help="radau (default), bdf, lsv (Lie-Stormer-Verlet, implicit rotation) "
                          "or lsv-explicit")
    number_option(num, "--dt", default=None, metavar="S",
                  help=f"LSV step [s], in [{MIN_DT_S:g}, {MAX_DT_S:g}] (default 1e-05)")
    num.add_argument("--n-output", type=int, default=None, metavar="N",
                     help=f"output times, in [2, {MAX_N_OUTPUT:,}] (default 201; with a base "
                          "excitation one per ms)")


def _floats(values, option: str, count: tuple[int, ...]) -> list[float]:
    if len(values) not in count:
        raise UsageError(f"{option} takes {' or '.join(map(str, count))} numbers, got "
                         f"{len(values)}")
    out = []
    for v in values:
        try:
            x = float(v)
        except ValueError:
            raise UsageError(f"{option}: expected a number, got {v!r}") from None
        if not math.isfinite(x):
            raise UsageError(f"{option}: expected a finite number, got {v!r}")
        out.append(x)
    return out


def _in_range(value, option: str, low: float, high: float, *, low_open=True) -> None:
    ok = (low < value if low_open else low <= value) and value <= high
    if not ok:
        bracket = "(" if low_open else "["
        raise UsageError(f"{option} must lie in {bracket}{low:g}, {high:g}], got {value:g}")


def _option(row, value, option: str) -> float:
    """``value`` of ``option`` checked by its row of :mod:`segment.core.checks`."""
    try:
        return row.check(value, option)
    except (TypeError, ValueError) as exc:
        raise UsageError(str(exc)) from None


def _payload(args):
    from segment.solvers.dynamics import Payload

    given = [args.payload_mass is not None, args.payload_inertia is not None,
             args.payload_cog is not None]
    if not any(given):
        return None
    if not all(given):
        raise UsageError("a payload needs --payload-mass, --payload-inertia and --payload-cog")
    _option(PAYLOAD_MASS, args.payload_mass, "--payload-mass")
    inertia = _floats(args.payload_inertia, "--payload-inertia", (3, 6))
    if max(abs(v) for v in inertia) > MAX_PAYLOAD_INERTIA_KG_CM2:
        raise UsageError(f"--payload-inertia: entries must be at most "
                         f"{MAX_PAYLOAD_INERTIA_KG_CM2:g} kg cm^2 in size, got {inertia}")
    cog = _floats(args.payload_cog, "--payload-cog", (3,))
    if math.hypot(*cog) > MAX_PAYLOAD_COG_MM:
        raise UsageError(f"--payload-cog must lie within {MAX_PAYLOAD_COG_MM:g} mm of the C5 "
                         f"origin, got {cog}")
    try:
        return Payload(mass_kg=args.payload_mass, inertia_kg_cm2=inertia, cog_mm=cog)
    except ValueError as exc:      # the tensor's checks, named by the option
        raise UsageError(str(exc).replace("payload 'payload': inertia_kg_cm2",
                                          "--payload-inertia")) from None


def _base(args):
    from segment.solvers.dynamics import BaseExcitation

    if args.base_pulse and args.base_csv:
        raise UsageError("give --base-pulse or --base-csv, not both")
    if args.base_csv:
        return BaseExcitation.from_csv(args.base_csv)     # a bad table: ValueError, one line
    if args.base_pulse:
        _option(PULSE_PEAK, args.peak_g, "--peak-g")
        _option(PULSE_DURATION, args.duration, "--duration")
        if not 0.0 < args.peak_at < 1.0:
            raise UsageError(f"--peak-at must lie in (0, 1), got {args.peak_at:g}")
        return BaseExcitation.triangular(peak_g=args.peak_g, duration_s=args.duration,
                                         peak_at=args.peak_at, direction=args.direction)
    return None


def run(args, argv) -> int:
    from segment.solvers import dynamics
    from segment.solvers.dynamics.lsv import MAX_STEPS, lsv_steps

    base = _base(args)
    if args.case is None and base is None:
        raise UsageError("simulate needs a load case (CASE), a base excitation (--base-pulse "
                         "or --base-csv), or both")
    chosen = cases(args, [args.case]) if args.case is not None else {}
    load = chosen[args.case] if args.case is not None else None
    t_end = args.t_end if args.t_end is not None else (0.3 if base is not None else 1.0)
    _option(T_END, t_end, "--t-end")
    _option(RAMP_TIME, args.ramp, "--ramp")
    payload = _payload(args)
    method = METHODS[args.method]
    lsv = method.startswith("lsv")
    if args.dt is not None and not lsv:
        raise UsageError("--dt is the step of --method lsv or lsv-explicit; radau and bdf "
                         "choose their own steps")
    n_output = args.n_output
    if n_output is None:
        n_output = (201 if base is None else
                    int(min(MAX_N_OUTPUT, max(201, round(t_end / BASE_OUTPUT_INTERVAL_S) + 1))))
    _in_range(n_output, "--n-output", 2, MAX_N_OUTPUT, low_open=False)
    dt = None
    if lsv:
        dt = args.dt if args.dt is not None else dynamics.DEFAULT_DT
        _option(LSV_DT, dt, "--dt")
        steps = lsv_steps(t_end, n_output, dt)[0]
        if steps > MAX_STEPS:
            raise UsageError(f"--t-end {t_end:g} with --dt {dt:g} takes {steps:,} steps; at "
                             f"most {MAX_STEPS:,}: shorten --t-end or take a larger --dt")
    out = args.out if args.out is not None else (DEFAULT_BASE_OUT if base is not None else None)
    if out:
        check_output_file(out, "--out")
    model = model_for(args)
    _SHOWN.update(convention=args.convention, model=model)
    what = " and ".join(x for x in (args.case, str(base) if base is not None else None) if x)
    logging.getLogger("segment.simulate").info(
        "simulating %s for %g s (%s)", what, t_end,
        "step" if args.ramp == 0 else f"ramp {args.ramp:g} s")
    with progress_bar(args, f"simulate {args.case or 'base'}", total=t_end, unit=" s") as bar:
        def progress(t: float) -> None:
            bar.update(t - bar.n)

        r = dynamics.simulate(model, load, t_end=t_end, ramp=args.ramp, gravity=args.gravity,
                              base_acceleration=base, payload=payload, method=method, dt=dt,
                              n_output=n_output, progress=progress)
    if base is None:
        _print_load_run(args, model, load, r)
    else:
        _print_base_run(args, model, base, payload, r, t_end)
    _print_energy(r)
    if out and len(r.frame):
        frame = r.frame
        if args.convention == "isb":
            import pandas as pd

            from segment.core.conventions import isb_frame

            isb = isb_frame(r.q, model.reference, q_unloaded=r.q[0])
            isb.columns = [c.replace("_from_unloaded_", "_from_start_") for c in isb.columns]
            isb.index = frame.index
            frame = pd.concat([frame, isb], axis=1)
        frame.to_csv(out, index=False)
        print(f"wrote {out} ({len(r.frame)} rows; C5 relative to C6 from the reference pose in "
              f"mm and degrees{', and in space' if base is not None else ''})")
    return 0 if r.success else 1


_SHOWN = {"convention": "klg", "model": None}
"""What :func:`_header` and :func:`_row` show: the model's joint coordinates or, with
``--convention isb``, the ISB JCS coordinates (set by :func:`run`)."""


def _header(unit_line: str) -> None:
    if _SHOWN["convention"] == "isb":
        unit_line = (unit_line.split(":")[0] + ", ISB joint coordinate system (Wu et al. 2002): "
                     "q1 (+ right) q2 (+ anterior) q3 (+ superior) [mm], alpha (+ extension) "
                     "beta (+ right lateral bending) gamma (+ left axial rotation) [deg]")
        names = ("q1", "q2", "q3", "alpha", "beta", "gamma")
    else:
        names = ("x", "y", "z", "phi_x", "phi_y", "phi_z")
    print(unit_line)
    print(f"{'':14}" + "".join(f"{n:>8}" for n in names))


def _row(label: str, q, q_from=None) -> None:
    """One row: ``q - q_from`` (klg) or the change of the ISB coordinates from ``q_from`` to
    ``q`` (isb); ``q_from`` None is the reference pose."""
    import numpy as np

    from segment.cli._common import display

    q_from = np.zeros(6) if q_from is None else np.broadcast_to(q_from, (6,))
    if _SHOWN["convention"] == "isb":
        from segment.core.conventions import IsbFrames, isb_coordinates

        model = _SHOWN["model"]
        frames = IsbFrames.from_ligaments()
        d = (isb_coordinates(q, model.reference, frames)
             - isb_coordinates(q_from, model.reference, frames))
        shown = np.round(np.concatenate([d[:3], np.degrees(d[3:])]), 3) + 0.0
    else:
        shown = display(q - q_from)
    print(f"{label:<14}" + "".join(f"{v:8.3f}" for v in shown))


def _integration_line(r) -> str:
    what = (f"{r.steps} steps, {r.nfev} force evaluations" if r.method.startswith("lsv")
            else f"{r.nfev} evaluations")
    return f"{r.method}: {r.message} ({what})"


def _print_load_run(args, model, load, r) -> None:
    print(f"{args.case} ({model.clinical_label}): {_integration_line(r)}")
    if not len(r.t):
        return
    s = solve(model, load)
    u = model.unloaded
    if not u.converged:
        print(f"unloaded equilibrium: {u.message}; displacements from the reference pose")
        origin, ref = "the reference pose of Table 1", 0.0
    else:
        origin, ref = "the unloaded equilibrium (as segment solve prints)", u.q
    _header(f"displacement of C5 from {origin}: x y z [mm], phi_x phi_y phi_z [deg]")
    _row(f"at t = {r.t[-1]:g} s", r.q[-1], ref)
    if s.converged:
        _row("static", s.q, ref)
    else:
        print(f"{'static':<14}NOT CONVERGED: {s.message}")


def _print_base_run(args, model, base, payload, r, t_end) -> None:
    import numpy as np

    print(f"C6 moves: {base} (delta v {np.linalg.norm(base.delta_v_m_s):.3g} m/s)")
    print(f"segment: {model.clinical_label}; load on C5: {args.case or 'none'}; "
          f"{payload if payload else 'no payload'}; gravity: {'on' if args.gravity else 'off'}")
    print(_integration_line(r))
    if not len(r.t):
        return
    f = r.frame
    under = " and ".join(x for x in (f"the load {args.case}" if args.case else None,
                                      "the weight" if args.gravity else None) if x)
    start = "the pose at t = 0, the static equilibrium" + (f" under {under}" if under else "")
    _header(f"C5 relative to C6, displacement from {start}: x y z [mm], phi_x phi_y phi_z "
            "[deg]")
    rel = r.q - r.q_start
    k_min, k_max = int(np.argmin(rel[:, 4])), int(np.argmax(rel[:, 4]))
    _row(f"at t = {r.t[-1]:g} s", r.q[-1], r.q_start)
    _row("min phi_y", r.q[k_min], r.q_start)
    _row("max phi_y", r.q[k_max], r.q_start)
    print(f"intervertebral rotation (phi_y from t = 0, + flexion): "
          f"{f['ivr_phi_y_deg'].iloc[k_min]:.3f} deg at {1e3 * r.t[k_min]:.1f} ms, "
          f"{f['ivr_phi_y_deg'].iloc[k_max]:.3f} deg at {1e3 * r.t[k_max]:.1f} ms")
    d6 = f[["c6_space_dx_mm", "c6_space_dy_mm", "c6_space_dz_mm"]].iloc[-1].to_numpy()
    d5 = f[["c5_space_dx_mm", "c5_space_dy_mm", "c5_space_dz_mm"]].iloc[-1].to_numpy()
    v5 = f[["c5_space_vx_mm_per_s", "c5_space_vy_mm_per_s",
            "c5_space_vz_mm_per_s"]].iloc[-1].to_numpy()
    print(f"in space at t = {r.t[-1]:g} s: C6 moved ({', '.join(f'{v:.1f}' for v in d6)}) mm, "
          f"the C5 origin ({', '.join(f'{v:.1f}' for v in d5)}) mm, moving at "
          f"({', '.join(f'{v:.0f}' for v in v5)}) mm/s")
    from segment.solvers.dynamics.plots import ligament_tensions

    peaks = []
    for name, tension in ligament_tensions(f).items():
        k = int(np.argmax(tension))
        peaks.append(f"{name} {tension[k]:.1f} N at {1e3 * r.t[k]:.1f} ms")
    print("peak ligament tensions: " + "; ".join(peaks))
    if r.events:
        print("ruptures: " + ", ".join(f"{n} at {1e3 * t:.2f} ms" for t, _, n in r.events))
    else:
        print("ruptures: none")
    print("not validated against whiplash experiments: no C5-C6 response to a base pulse is "
          "in the readable sources (the seed paper compares qualitatively only)")


def _print_energy(r) -> None:
    if not len(r.t):
        print(f"no history: {r.message}", file=sys.stderr)
        return
    print(f"kinetic energy-work check: e_R = {r.e_R:.2e} (Fritzkowski and Walczak eq. (55): "
          f"max |T2 - W| / T2,max); {r.energy_error:.2e} relative to the largest energy term")
