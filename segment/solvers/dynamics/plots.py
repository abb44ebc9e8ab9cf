"""Figures of a simulation: the base's acceleration, the intervertebral rotation, the ligament
forces and the kinetic energy-work check (matplotlib, the ``report`` extra)."""

from __future__ import annotations

import numpy as np

from segment._extras import require

__all__ = ["ligament_tensions", "plot_simulation"]

PANELS = ("base", "rotation", "ligaments", "energy")
"""The panels :func:`plot_simulation` can draw, top to bottom."""


def ligament_tensions(frame) -> dict[str, np.ndarray]:
    """Tension per ligament [N], the strips of one ligament summed."""
    out: dict[str, np.ndarray] = {}
    for col in frame.columns:
        if col.endswith("_tension_N"):
            name = col[: -len("_tension_N")].split("#")[0]
            out[name] = out.get(name, 0.0) + frame[col].to_numpy()
    return out


def _rupture_groups(events, resolution_ms: float = 0.1) -> list[tuple[float, list[str]]]:
    """Rupture events at the same instant (to ``resolution_ms``) as (t [ms], sorted names)."""
    groups: dict[float, list[str]] = {}
    for t_e, _, name in events:
        groups.setdefault(round(1e3 * t_e / resolution_ms) * resolution_ms, []).append(name)
    return [(t, sorted(names)) for t, names in sorted(groups.items())]


def plot_simulation(result, path=None, *, panels=None, axes=None, title: str | None = None):
    """The history of a :class:`~segment.solvers.dynamics.result.SimulationResult` as stacked
    panels over time [ms]:

    * ``base``: C6's acceleration [g] (with a base excitation);
    * ``rotation``: the intervertebral rotation of C5 relative to C6 from the pose at t = 0
      [deg]: sagittal (``ivr_phi_y_deg``, + flexion) and its total angle;
    * ``ligaments``: each ligament's tension [N] (strips summed), ruptures marked;
    * ``energy``: Fritzkowski and Walczak's e_R(t) of eq. (55) (log scale) and the error
      relative to the largest energy term.

    Parameters
    ----------
    result : SimulationResult
    path : str or path-like, optional
        Save the figure there (and close it).
    panels : sequence of str, optional
        Which of :data:`PANELS` (default: all that apply).
    axes : sequence of matplotlib Axes, optional
        Draw into these (one per panel) instead of a new figure.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    plt = require("matplotlib.pyplot", "report", "plot_simulation")
    frame = result.frame
    if frame.empty:
        raise ValueError(f"plot_simulation: the result has no history ({result.message})")
    if panels is None:
        panels = [p for p in PANELS if p != "base" or "c6_ax_g" in frame.columns]
    panels = list(panels)
    unknown = [p for p in panels if p not in PANELS]
    if unknown or not panels:
        raise ValueError(f"plot_simulation: panels must be among {', '.join(PANELS)}, got "
                         f"{panels!r}")
    if "base" in panels and "c6_ax_g" not in frame.columns:
        raise ValueError("plot_simulation: panel 'base' needs a run with a base excitation")
    t_ms = frame["t_s"].to_numpy() * 1e3
    own = axes is None
    if own:
        fig, axes = plt.subplots(len(panels), 1, figsize=(7.0, 2.1 * len(panels) + 0.6),
                                 dpi=110, sharex=True, squeeze=False)
        axes = axes[:, 0]
    elif len(axes) != len(panels):
        raise ValueError(f"plot_simulation: {len(panels)} panels need {len(panels)} axes, got "
                         f"{len(axes)}")
    fig = axes[0].figure
    for ax, panel in zip(axes, panels, strict=True):
        if panel == "base":
            for c, style in zip("xyz", ("-", "--", ":"), strict=True):
                a = frame[f"c6_a{c}_g"].to_numpy()
                if np.any(a):
                    ax.plot(t_ms, a, style, label=f"C6 a{c}")
            ax.set_ylabel("C6 acceleration [g]")
        elif panel == "rotation":
            ax.plot(t_ms, frame["ivr_phi_y_deg"], label="sagittal (phi_y), + flexion")
            ax.plot(t_ms, frame["ivr_angle_deg"], "--", label="total angle")
            ax.axhline(0.0, color="0.6", lw=0.6)
            ax.set_ylabel("C5 vs C6 rotation\nfrom t = 0 [deg]")
        elif panel == "ligaments":
            for name, tension in ligament_tensions(frame).items():
                ax.plot(t_ms, tension, label=name)
            ax.set_ylabel("ligament tension [N]")
        elif panel == "energy":
            e55 = frame["e_R_eq55"].to_numpy()
            eref = frame["energy_error"].to_numpy()
            floor = 1e-16
            ax.semilogy(t_ms, np.maximum(e55, floor), label="e_R, eq. (55): / T2,max")
            ax.semilogy(t_ms, np.maximum(eref, floor), "--",
                        label="/ largest energy term")
            ax.set_ylabel("|T2 - W| relative")
        for t_event, names in _rupture_groups(result.events):
            ax.axvline(t_event, color="0.4", lw=0.7, ls=":")
            if panel == "ligaments":
                ax.annotate(f"{', '.join(names)} rupture{'s' if len(names) == 1 else ''}",
                            (t_event, 1.0), xycoords=("data", "axes fraction"), rotation=90,
                            va="top", ha="right", fontsize=7, color="0.3",
                            bbox={"fc": "white", "ec": "none", "alpha": 0.8, "pad": 1.0})
        ax.grid(alpha=0.3)
        ax.legend(loc="best", fontsize=7, frameon=False)
    axes[-1].set_xlabel("time [ms]")
    if title is not None:
        axes[0].set_title(title, fontsize=10)
    if own:
        fig.tight_layout()
    if path is not None:
        fig.savefig(path)
        plt.close(fig)
    return fig
