"""Clinical states compared: how surgery or disease changes motion and load sharing.

:func:`compare_states` solves the same loads for a model in several clinical states
(:mod:`segment.core.states`) and reports, per state and load, the main and coupled motion, the
facet forces and the ligament tensions, each as a change from the intact model (the model as
given, before any state). Motion is measured from two baselines, both labelled:

* ``own``: from the state's own unloaded equilibrium. This is what an in-vitro experiment
  measures: the specimen is prepared (cut, resected, implanted), mounted, and the instruments
  are zeroed on it before the load is applied (Zdeblick et al. 1992 and Moroney et al. 1988
  test each prepared configuration from its own unloaded position; SOURCES.md §9). Use it to
  compare with such experiments.
* ``intact``: from the intact model's unloaded equilibrium. This says where C5 ends up
  relative to the intact posture, including the change of the unloaded pose itself that the
  state causes (cutting FL moves the unloaded flexion angle from -0.24 deg to +0.06 deg in
  the published model): what an in-vivo image before and after surgery would compare.

The change of each quantity is ``state - intact``, for motion within the same baseline; the
percent change of the main motion is that of its magnitude (+: the state moves more, -: less),
relative to the intact main motion. Ligament tensions
are summed over a ligament's strips; a ligament cut through carries 0 N, a removed facet 0 N
(the ``state`` column says which elements are gone). With ``ramp_to_scale`` the loads are also
ramped to failure (:func:`segment.ramp`) and the first rupture, the ultimate load and the
failure sequence are compared.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from segment._checks import check_count
from segment._extras import require
from segment.core.checks import RAMP_STEPS, check_load
from segment.core.model import Segment
from segment.core.states import apply_states, split_names
from segment.core.states_table import INTACT, load_states, states_file
from segment.elements.disc import DOF_NAMES
from segment.elements.loads import Load
from segment.solvers.equilibrium import solve
from segment.solvers.ramp import ramp

__all__ = ["BASELINES", "Comparison", "compare_states"]

BASELINES = {
    "own": "from the state's own unloaded equilibrium (as an in-vitro test measures: "
           "instruments zeroed on the prepared specimen)",
    "intact": "from the intact model's unloaded equilibrium (includes the state's change of "
              "the unloaded pose)",
}
UNITS = ("mm", "mm", "mm", "deg", "deg", "deg")


def _display(v) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    return np.concatenate([v[:3], np.degrees(v[3:])])


@dataclass(frozen=True, eq=False)
class Comparison:
    """Outcome of :func:`compare_states`.

    Attributes
    ----------
    frame : DataFrame
        One row per (state, load): status, intact (no failure limit), the main coordinate and
        its unit, the six displacements from both baselines (``{dof}_own``,
        ``{dof}_from_intact``), the main motion and its change and percent change from intact
        in both baselines, the facet forces (``facet_{side}_N``) and the ligament tensions
        (``{ligament}_N``) with their changes (``d_...``).
    unloaded : DataFrame
        Per state: the unloaded pose from the reference pose and its change from intact
        (mm, deg).
    failure : DataFrame or None
        Per (state, load) with ``ramp_to_scale``: first rupture and ultimate load (scale and
        N or N m) and the rupture sequence.
    states : tuple of str
        The state labels, intact first.
    models : dict
        The model of each state.
    states_file : str
        The ``states.csv`` the states were read from.
    """

    frame: pd.DataFrame
    unloaded: pd.DataFrame
    failure: pd.DataFrame | None
    states: tuple[str, ...]
    loads: tuple[str, ...]
    models: dict = field(repr=False)
    states_file: str = ""

    def summary(self) -> pd.DataFrame:
        """The main motion per state and load in both baselines with its change from intact,
        and the facet forces: what :func:`segment.cli` prints."""
        cols = ["state", "load", "status", "unit", "main_own", "change_own",
                "change_own_pct", "main_from_intact", "change_from_intact",
                "change_from_intact_pct"]
        cols += [c for c in self.frame.columns if c.startswith("facet_")]
        return self.frame[cols]

    def to_dict(self) -> dict:
        """JSON-friendly: baselines explained, every row, the unloaded poses, failure."""
        def clean(records):
            return [{k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                     for k, v in r.items()} for r in records]

        return {
            "states": list(self.states),
            "loads": list(self.loads),
            "states_file": self.states_file,
            "baselines": BASELINES,
            "units": {"translation": "mm", "rotation": "deg", "force": "N"},
            "rows": clean(self.frame.to_dict(orient="records")),
            "unloaded": clean(self.unloaded.to_dict(orient="records")),
            "failure": (None if self.failure is None
                        else clean(self.failure.to_dict(orient="records"))),
        }

    def figure(self, path=None):
        """Grouped bars per load: main motion per state from its own unloaded pose (bars)
        and from the intact unloaded pose (black ticks), and the facet forces. Needs
        matplotlib (the ``report`` extra); returns the figure, written to ``path`` if given."""
        require("matplotlib", "report", "the comparison figure")
        import matplotlib.pyplot as plt

        f = self.frame
        loads = list(self.loads)
        states = list(self.states)
        n_s = len(states)
        width = 0.8 / n_s
        x = np.arange(len(loads))
        colors = plt.get_cmap("tab10")
        # two x axes of their own: the top one's ticks carry the unit of the main motion,
        # the facet forces below are in N whatever the load
        fig, axes = plt.subplots(2, 1, figsize=(max(6.0, 1.6 * len(loads) + 2.5) + 2.5, 6.6))
        facet_cols = [c for c in f.columns if c.startswith("facet_") and c.endswith("_N")
                      and not c.startswith("d_")]
        for k, st in enumerate(states):
            rows = f[f["state"] == st].set_index("load").reindex(loads)
            off = x - 0.4 + width * (k + 0.5)
            axes[0].bar(off, rows["main_own"], width, color=colors(k % 10), label=st)
            axes[0].scatter(off, rows["main_from_intact"], marker="_", s=120, color="black",
                            zorder=3, label="from the intact unloaded pose" if k == 0 else None)
            total = rows[facet_cols].sum(axis=1) if facet_cols else np.zeros(len(loads))
            axes[1].bar(off, total, width, color=colors(k % 10))
        units = [f.loc[f["load"] == ld, "unit"].iloc[0] for ld in loads]
        axes[0].axhline(0.0, color="0.5", lw=0.6)
        axes[0].set_ylabel("main motion [mm or deg]")
        axes[0].set_title("main motion from each state's own unloaded pose (bars) and from the "
                          "intact unloaded pose (ticks)", fontsize=9)
        axes[0].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        axes[1].set_ylabel("facet forces, sum [N]")
        axes[0].set_xticks(x, [f"{ld} [{u}]" for ld, u in zip(loads, units, strict=True)])
        axes[1].set_xticks(x, loads)
        for ax in axes:
            ax.set_xlim(-0.5, len(loads) - 0.5)
            ax.tick_params(labelsize=8)
            ax.grid(axis="y", lw=0.3, color="0.85")
        fig.tight_layout()
        if path is not None:
            fig.savefig(path, dpi=120, metadata={"Software": None})
            plt.close(fig)
        return fig


def _row(state, result, intact_u, own_u):
    load = result.load
    main = load.main_dof
    d_own = _display(result.q - own_u)
    d_int = _display(result.q - intact_u)
    st = result.state
    row = {"state": state, "load": load.name, "status": int(result.status),
           "converged": bool(result.converged), "intact": bool(result.intact),
           "limit_flags": "; ".join(result.limit_flags),
           "main_dof": "" if main is None else DOF_NAMES[main],
           "unit": "" if main is None else UNITS[main]}
    for name, a, b in zip(DOF_NAMES, d_own, d_int, strict=True):
        unit = "mm" if name in ("x", "y", "z") else "deg"
        row[f"{name}_{unit}_own"] = float(a)
        row[f"{name}_{unit}_from_intact"] = float(b)
    row["main_own"] = float(d_own[main]) if main is not None else math.nan
    row["main_from_intact"] = float(d_int[main]) if main is not None else math.nan
    for side in ("left", "right"):
        row[f"facet_{side}_N"] = float(sum(f.force for f in st.facets if f.side == side))
    tension: dict[str, float] = {}
    for s in st.ligaments:
        tension[s.ligament or s.name] = tension.get(s.ligament or s.name, 0.0) + float(s.tension)
    for name, t in tension.items():
        row[f"{name}_N"] = t
    return row


def compare_states(model, states, loads, *, scale: float = 1.0, data_dir=None,
                   strict: bool = True, ramp_to_scale: float | None = None,
                   steps: int = 200, progress=None) -> Comparison:
    """Solve ``loads`` for ``model`` in each of ``states`` and compare with ``model`` itself.

    Parameters
    ----------
    model : Segment
        The intact model (the user's: any data folder, calibrated or not). It must not be in a
        clinical state already.
    states : str or sequence of str
        State names (``"laminectomy"``), combinations (``"laminectomy+facetectomy-right-50"``)
        or a comma-separated string; ``"intact"`` may be listed and is always included (first).
    loads : dict or sequence of Load
        ``{name: Load}`` or Loads (their ``name`` labels the rows).
    scale : float
        Every load times ``scale``; each scaled load must be finite and (unless
        ``strict=False``) within the plausible loads of ``load_cases.csv``
        (:func:`segment.core.checks.check_load`, as ``segment solve --scale``).
    data_dir : path, optional
        Where ``states.csv`` is read (:func:`segment.core.states_table.states_file`: that folder's
        file when it exists, else the packaged one).
    ramp_to_scale, steps
        Also ramp each load to ``ramp_to_scale`` (> 0) times its magnitude in ``steps`` steps
        (1 to :data:`segment.core.checks.RAMP_STEPS`; :func:`segment.ramp`) and compare the
        failure loads.
    progress : callable, optional
        Called with (done, total) after each state.
    """
    if not isinstance(model, Segment):
        raise TypeError(f"model must be a segment.Segment, got {type(model).__name__}")
    if model.clinical:
        raise ValueError(f"compare_states needs the intact model, got one in state "
                         f"{model.clinical_label!r}")
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real) \
            or not math.isfinite(scale):
        raise TypeError(f"scale must be a finite number, got {scale!r}")
    if ramp_to_scale is not None:
        if isinstance(ramp_to_scale, bool) or not isinstance(ramp_to_scale, numbers.Real) \
                or not (math.isfinite(ramp_to_scale) and ramp_to_scale > 0):
            raise ValueError(f"ramp_to_scale must be a finite number > 0, got "
                             f"{ramp_to_scale!r}")
        steps = check_count(steps, "steps", maximum=RAMP_STEPS, why="RAMP_STEPS")
    if isinstance(states, str):
        states = states.split(",")
    labels = []
    for s in states:
        s = s.strip()
        if not s:
            raise ValueError("empty state name in the list of states")
        label = "+".join(split_names(s))
        if label not in labels:
            labels.append(label)
    if INTACT in labels:
        labels.remove(INTACT)
    labels.insert(0, INTACT)
    if isinstance(loads, Mapping):
        loads = list(loads.values())
    if isinstance(loads, Load | str) or not isinstance(loads, Iterable):
        raise TypeError(f"loads must be a dict of Loads or a sequence of Loads, got "
                        f"{type(loads).__name__}")
    loads = list(loads)
    if not all(isinstance(ld, Load) for ld in loads):
        raise TypeError("loads must be a dict of Loads or a sequence of Loads")
    for ld in loads:
        with np.errstate(over="ignore", invalid="ignore"):
            force, moment = ld.force * scale, ld.moment * scale
        check_load(force, moment, f"scale {scale:g}: {ld.name}", strict=strict)
    loads = [ld.scaled(scale, name=ld.name) if scale != 1.0 else ld for ld in loads]
    if not loads:
        raise ValueError("compare_states: no loads given")
    path = states_file(data_dir)
    table = load_states(path, strict=strict)
    models = {INTACT: model}
    for label in labels[1:]:
        models[label] = apply_states(model, label, states=table)
    intact_u = models[INTACT].unloaded
    if not intact_u.converged:
        raise ValueError(f"the intact model's unloaded equilibrium did not converge: "
                         f"{intact_u.message}")
    rows, unloaded, failure = [], [], []
    base = None
    for k, label in enumerate(labels):
        m = models[label]
        u = m.unloaded
        uq = u.q if u.converged else np.full(6, np.nan)
        unloaded.append({"state": label, "converged": bool(u.converged),
                         **{f"{n}_{unit}": float(v) for n, unit, v
                            in zip(DOF_NAMES, UNITS, _display(uq), strict=True)},
                         **{f"d_{n}_{unit}": float(v) for n, unit, v
                            in zip(DOF_NAMES, UNITS, _display(uq - intact_u.q), strict=True)}})
        for ld in loads:
            r = solve(m, ld)
            rows.append(_row(label, r, intact_u.q, uq))
            if ramp_to_scale is not None:
                rr = ramp(m, ld, to_scale=ramp_to_scale, steps=steps)
                fl = rr.failure_loads()
                unit = "N" if "first_rupture_N" in fl else "Nm"
                failure.append({"state": label, "load": ld.name, "status": int(rr.status),
                                "first_rupture_scale": fl["first_rupture_scale"],
                                "first_rupture": fl[f"first_rupture_{unit}"],
                                "ultimate_scale": fl["ultimate_scale"],
                                "ultimate": fl[f"ultimate_{unit}"],
                                "unit": unit.replace("Nm", "N m"),
                                "sequence": " > ".join(fl["sequence"])})
        if progress is not None:
            progress(k + 1, len(labels))
    frame = pd.DataFrame(rows)
    base = frame[frame["state"] == INTACT].set_index("load")
    for col in ("own", "from_intact"):
        ref = frame["load"].map(base[f"main_{col}"])
        frame[f"change_{col}"] = frame[f"main_{col}"] - ref
        with np.errstate(divide="ignore", invalid="ignore"):   # of the magnitude: + is more
            frame[f"change_{col}_pct"] = 100.0 * (frame[f"main_{col}"].abs() - ref.abs()) \
                / ref.abs()
    force_cols = [c for c in frame.columns if c.endswith("_N")]
    for c in force_cols:
        frame[f"d_{c}"] = frame[c] - frame["load"].map(base[c]).fillna(0.0)
    frame[force_cols] = frame[force_cols].fillna(0.0)   # an element not in a model carries 0
    front = ["state", "load", "status", "converged", "intact", "limit_flags", "main_dof",
             "unit", "main_own", "change_own", "change_own_pct", "main_from_intact",
             "change_from_intact", "change_from_intact_pct"]
    frame = frame[front + [c for c in frame.columns if c not in front]]
    return Comparison(frame=frame, unloaded=pd.DataFrame(unloaded),
                      failure=pd.DataFrame(failure) if ramp_to_scale is not None else None,
                      states=tuple(labels), loads=tuple(ld.name for ld in loads),
                      models=models, states_file=str(path))
