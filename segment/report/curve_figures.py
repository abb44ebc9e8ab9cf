"""Figures of specimen curves: the specimens with their corridor against model curves, each
specimen with its fit, and the population's bands next to the published model (``segment
curves``, the report's population section, ``notebooks/06_population.ipynb``)."""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from segment.report.drawing import tight
from segment.studies.curves import CurveSet

__all__ = ["corridor_figure", "fits_figure", "population_bands_figure"]

SPECIMEN_COLOR = "#9a9a9a"
CORRIDOR_COLOR = "#c6dbef"
MODEL_COLORS = ("#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2")


def _specimens(ax, curves: CurveSet, mode: str, label: bool) -> None:
    for c in curves.curves:
        if c.mode != mode:
            continue
        ign = c.ignore
        ax.plot(c.moment_Nm[~ign], c.rotation_deg[~ign], color=SPECIMEN_COLOR, lw=0.9,
                label="specimens (measured)" if label else None)
        if ign.any():           # the processing's initial line: drawn dotted, up to the
            k = int(np.flatnonzero(~ign)[0])   # first measured point
            ax.plot(c.moment_Nm[:k + 1], c.rotation_deg[:k + 1], color=SPECIMEN_COLOR,
                    lw=0.8, ls=":", label="initial line (ignored)" if label else None)
        label = False


def corridor_figure(curves: CurveSet, corridor: pd.DataFrame,
                    models: Mapping[str, pd.DataFrame], *, title: str = "") -> plt.Figure:
    """One panel per mode: each specimen (measured points solid, the ignored initial line
    dotted), the corridor (mean +- SD where every specimen has a point) and model curves
    (``models``: label -> DataFrame with mode, moment_Nm, rotation_deg)."""
    modes = curves.modes
    fig, axes = plt.subplots(1, len(modes), figsize=(5.2 * len(modes), 4.2), squeeze=False)
    for ax, mode in zip(axes[0], modes, strict=True):
        c = corridor[corridor["mode"] == mode]
        ax.fill_between(c["moment_Nm"], c["lower_deg"], c["upper_deg"], color=CORRIDOR_COLOR,
                        label="corridor: mean ± SD", zorder=0)
        ax.plot(c["moment_Nm"], c["mean_deg"], color="#08306b", lw=1.2, ls="--",
                label="corridor mean")
        _specimens(ax, curves, mode, label=True)
        for k, (name, m) in enumerate(models.items()):
            mm = m[m["mode"] == mode]
            ax.plot(mm["moment_Nm"], mm["rotation_deg"], color=MODEL_COLORS[k % 6], lw=1.8,
                    label=name)
        ax.set_title(mode)
        ax.set_xlabel("moment [N m]")
        ax.set_ylabel(f"{mode} rotation [deg]")
        ax.set_xlim(0, None)
        ax.set_ylim(0, None)
        ax.grid(alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 4), fontsize=8,
               frameon=False)
    if title:
        fig.suptitle(title, fontsize=10)
    tight(fig, rect=(0, 0.1, 1, 0.95 if title else 1))
    return fig


def fits_figure(curves: CurveSet, fitted: Mapping[str, Mapping[str, pd.DataFrame]], *,
                ncols: int = 4) -> plt.Figure:
    """One panel per specimen, flexion up and extension down (signed moment and rotation):
    the measured points, the ignored initial line dotted, and each form's fitted curve
    (``fitted``: form -> specimen -> DataFrame with mode, moment_Nm, rotation_deg)."""
    names = curves.specimens
    nrows = -(-len(names) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.1 * ncols, 2.8 * nrows), squeeze=False,
                             sharex=True, sharey=True)
    sign = {"flexion": 1.0, "extension": -1.0, "lateral-bending": 1.0,
            "axial-rotation": 1.0}
    for ax, name in zip(axes.flat, names, strict=False):
        for c in curves.curves:
            if c.specimen != name:
                continue
            s = sign[c.mode]
            k = c.kept
            ax.plot(s * c.moment_Nm[k], s * c.rotation_deg[k], "o", ms=2.2,
                    color="#444444", label="measured")
            if (~k).any():
                j = int(np.flatnonzero(k)[0])
                ax.plot(s * c.moment_Nm[:j + 1], s * c.rotation_deg[:j + 1], ":",
                        color=SPECIMEN_COLOR, lw=0.9, label="initial line (ignored)")
        for n, (form, per) in enumerate(fitted.items()):
            f = per.get(name)
            if f is None:
                continue
            for mode, part in f.groupby("mode", sort=False):
                s = sign[mode]
                ax.plot(s * part["moment_Nm"], s * part["rotation_deg"], lw=1.3,
                        color=MODEL_COLORS[n % 6], label=form)
        ax.axhline(0, color="black", lw=0.5)
        ax.axvline(0, color="black", lw=0.5)
        ax.set_title(name, fontsize=9)
        ax.grid(alpha=0.3)
    for ax in axes.flat[len(names):]:
        ax.axis("off")
    for ax in axes[-1]:
        ax.set_xlabel("moment [N m] (+ flexion)")
    for ax in axes[:, 0]:
        ax.set_ylabel("rotation [deg]")
    handles, labels = [], []
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 6), fontsize=8,
               frameon=False)
    tight(fig, rect=(0, 0.06, 1, 1))
    return fig


def population_bands_figure(bands: pd.DataFrame, *, title: str = "") -> plt.Figure:
    """Per load case, the population's median and 5-95 % band of the main displacement
    with each member as a dot and the published model as a cross (``bands``: rows of
    :meth:`segment.studies.population.Population.case_bands` for the main components)."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.0),
                             gridspec_kw={"width_ratios": [5, 4]})
    for ax, unit in zip(axes, ("mm", "deg"), strict=True):
        b = bands[bands["unit"] == unit].reset_index(drop=True)
        x = np.arange(len(b))
        ax.bar(x, b["q95"] - b["q5"], bottom=b["q5"], width=0.5, color=CORRIDOR_COLOR,
               label="population 5-95 %")
        ax.hlines(b["median"], x - 0.25, x + 0.25, color="#08519c", lw=2, label="median")
        for i, members in enumerate(b["members"]):
            ax.plot(np.full(len(members), x[i]) + np.linspace(-0.15, 0.15, len(members)),
                    members, ".", color="#555555", ms=4,
                    label="members" if i == 0 else None)
        ax.plot(x, b["published"], "x", color="#d62728", ms=8, mew=2, label="published model")
        ax.set_xticks(x)
        ax.set_xticklabels(b["case"])
        ax.set_ylabel(f"main displacement [{unit}]")
        ax.axhline(0, color="black", lw=0.5)
        ax.grid(axis="y", alpha=0.3)
        # a bar's bottom is a sticky edge that autoscaling does not pad: where the members
        # sit at the band's end (a narrow band at q5) they were drawn half outside the axes
        ax.use_sticky_edges = False
        ax.margins(y=0.06)
        ax.autoscale_view()
    handles, labels = axes[1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8, frameon=False)
    if title:
        fig.suptitle(title, fontsize=10)
    tight(fig, rect=(0, 0.08, 1, 0.94 if title else 1))
    return fig
