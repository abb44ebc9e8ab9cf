"""The report's matplotlib figures: displacements, curves, load sharing, sensitivity,
uncertainty; and the reference values they draw (published series, Moroney's stiffness turned
into a displacement)."""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from segment.core.io import LIGAMENT_NAMES
from segment.elements.loads import Load
from segment.report.document import NOT_AVAILABLE
from segment.studies import validation as v
from segment.studies.reference import DISPLACEMENT_COLUMNS, ReferenceData

COMPONENT_LABELS = ("x [mm]", "y [mm]", "z [mm]", "φx [deg]", "φy [deg]", "φz [deg]")
CONFIG_COLORS = {"intact": "#1f77b4", "posterior removed": "#ff7f0e", "disc only": "#7f7f7f"}
DPI = 110


def available_series(ref: ReferenceData) -> tuple[list[str], list[str]]:
    """Published displacement series with at least one value, and those with none."""
    d = ref.displacements
    has = d.groupby("series", sort=False)[list(DISPLACEMENT_COLUMNS)].apply(
        lambda g: bool(np.isfinite(g.to_numpy()).any()))
    series = [s for s in d["series"].unique() if not s.endswith(" SD")]
    return ([s for s in series if has[s]], [s for s in series if not has[s]])


def series_value(ref: ReferenceData, series: str, case: str, col: str) -> tuple[float, float]:
    """Value and SD (NaN when missing) of a published series; SD from '<name> SD' rows."""
    d = ref.displacements
    sel = d[(d.series == series) & (d.case == case)]
    value = float(sel[col].iloc[0]) if len(sel) else np.nan
    sd_name = series.replace(" mean", " SD")
    sd_sel = d[(d.series == sd_name) & (d.case == case)] if sd_name != series else d.iloc[0:0]
    sd = float(sd_sel[col].iloc[0]) if len(sd_sel) else np.nan
    return value, sd


def moroney_derived(ref: ReferenceData, case: str, load: Load, configuration: str) -> float:
    """Load / stiffness for a case (mm or deg), signed like the load, or NaN."""
    table, col = ((ref.rotational_stiffness, "rotation_at_1.8Nm_deg") if load.main_dof >= 3
                  else (ref.translational_stiffness, "translation_at_20N_mm"))
    sel = table[(table.case == case) & (table.configuration == configuration)]
    if not len(sel):
        return np.nan
    sign = np.sign(load.as_array()[load.main_dof])
    return sign * float(sel[col].iloc[0])


def legend_footer(fig: plt.Figure, handles, labels, missing: list[str], *, legend_y: float,
                   ncol: int) -> None:
    """Figure legend at the bottom, with the reference series that are not available below."""
    fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, legend_y), ncol=ncol,
               fontsize=8, frameon=False)
    if missing:
        fig.text(0.5, 0.008, f"{NOT_AVAILABLE}: " + "; ".join(missing), ha="center",
                 fontsize=7.5, color="#aa0000")


def fig_main(disp: pd.DataFrame, ref: ReferenceData, cases: Mapping[str, Load]) -> plt.Figure:
    """Main displacement per case: three configurations, Moroney derived, published series."""
    available, missing = available_series(ref)
    force_cases = [c for c, load in cases.items() if load.main_dof < 3]
    moment_cases = [c for c, load in cases.items() if load.main_dof >= 3]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8),
                             gridspec_kw={"width_ratios": [len(force_cases), len(moment_cases)]})
    n_bars = len(v.CONFIGURATIONS) + len(available)
    width = 0.8 / n_bars
    for ax, group, unit in ((axes[0], force_cases, "mm"), (axes[1], moment_cases, "deg")):
        x = np.arange(len(group))
        for k, config in enumerate(v.CONFIGURATIONS):
            vals = [disp[(disp.configuration == config) & (disp.case == c)]["main"].iloc[0]
                    for c in group]
            ax.bar(x + (k - (n_bars - 1) / 2) * width, vals, width, label=config,
                   color=CONFIG_COLORS[config])
        for k, series in enumerate(available, start=len(v.CONFIGURATIONS)):
            vals, sds = [], []
            for c in group:
                col = DISPLACEMENT_COLUMNS[cases[c].main_dof]
                val, sd = series_value(ref, series, c, col)
                vals.append(val)
                sds.append(sd)
            ax.bar(x + (k - (n_bars - 1) / 2) * width, vals, width, label=series,
                   yerr=np.where(np.isfinite(sds), sds, 0), capsize=3, hatch="//",
                   edgecolor="black", color="white")
        for config, marker, label in (("disc segment", "_", "Moroney disc segment (load / k)"),
                                      ("intact", "x", "Moroney intact (load / k)")):
            vals = [moroney_derived(ref, c, cases[c], config) for c in group]
            if np.isfinite(vals).any():
                ax.scatter(x, vals, marker=marker, s=260 if marker == "_" else 70,
                           color="black", zorder=5, linewidths=2, label=label)
        ax.axhline(0, color="black", lw=0.6)
        ax.set_xticks(x, group)
        ax.set_ylabel(f"main displacement [{unit}]")
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_title("force cases (20 N)")
    axes[1].set_title("moment cases (1.8 N m)")
    handles, labels = axes[1].get_legend_handles_labels()
    h0, l0 = axes[0].get_legend_handles_labels()
    for h, lab in zip(h0, l0, strict=True):
        if lab not in labels:
            handles.append(h)
            labels.append(lab)
    legend_footer(fig, handles, labels, missing, legend_y=0.04, ncol=4)
    fig.suptitle("Main displacement from the unloaded equilibrium")
    fig.tight_layout(rect=(0, 0.16, 1, 1))
    return fig


def fig_coupled(disp: pd.DataFrame, ref: ReferenceData, cases: Mapping[str, Load]) -> plt.Figure:
    """All six components per case (Fig. 10/12 style): main and coupled displacements.

    Each case has two panels with their own axes: translations [mm] and rotations [deg].

    The layout is fixed (no constrained-layout solver): the solver's floating-point result,
    and with it the PNG's bytes, changed with the folder the package ran from (measured: a
    fresh clone elsewhere re-rendered glyphs of one subfigure title a sub-pixel apart), and a
    committed figure must come out the same from every clone.
    """
    available, missing = available_series(ref)
    fig = plt.figure(figsize=(14, 10.5))
    # three pairs of columns with a narrow empty column between pairs
    grid = fig.add_gridspec(3, 8, width_ratios=[1, 1, 0.22, 1, 1, 0.22, 1, 1], left=0.05,
                            right=0.99, top=0.885, bottom=0.115, wspace=0.5, hspace=0.62)
    pairs = [(grid[i, 3 * j], grid[i, 3 * j + 1]) for i in range(3) for j in range(3)]
    n_bars = len(v.CONFIGURATIONS) + len(available)
    width = 0.8 / n_bars
    handles, labels = [], []
    for pair, case in zip(pairs, cases, strict=False):
        axes = [fig.add_subplot(spec) for spec in pair]
        main = cases[case].main_dof
        for ax, comps, unit in ((axes[0], (0, 1, 2), "mm"), (axes[1], (3, 4, 5), "deg")):
            x = np.arange(3)
            cols = [DISPLACEMENT_COLUMNS[i] for i in comps]
            for k, config in enumerate(v.CONFIGURATIONS):
                row = disp[(disp.configuration == config) & (disp.case == case)].iloc[0]
                ax.bar(x + (k - (n_bars - 1) / 2) * width, row[cols].to_numpy(float), width,
                       label=config, color=CONFIG_COLORS[config])
            for k, series in enumerate(available, start=len(v.CONFIGURATIONS)):
                pairs = [series_value(ref, series, case, c) for c in cols]
                ax.bar(x + (k - (n_bars - 1) / 2) * width, [p[0] for p in pairs], width,
                       yerr=[p[1] if np.isfinite(p[1]) else 0 for p in pairs], capsize=2,
                       label=series, hatch="//", edgecolor="black", color="white")
            if main in comps:
                j = comps.index(main)
                ax.axvspan(j - 0.45, j + 0.45, color="#ffe9a8", zorder=0)
            ax.axhline(0, color="black", lw=0.6)
            ax.use_sticky_edges = False          # a margin beyond the bars, also at 0
            ax.margins(x=0.04, y=0.08)
            ax.set_xticks(x, [("x", "y", "z", "φx", "φy", "φz")[i] for i in comps])
            ax.set_ylabel(f"[{unit}]", fontsize=8, labelpad=1)
            ax.tick_params(labelsize=8)
            ax.grid(axis="y", alpha=0.3)
            for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
                if lab not in labels:
                    handles.append(h)
                    labels.append(lab)
        axes[0].set_title("translations", fontsize=8)
        axes[1].set_title("rotations", fontsize=8)
        left, right = axes[0].get_position(), axes[1].get_position()
        fig.text((left.x0 + right.x1) / 2, left.y1 + 0.035,
                 f"{case}  (main: {COMPONENT_LABELS[main]}, shaded)", fontsize=10,
                 ha="center", va="bottom")
    fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 0.0),
               ncol=len(labels), fontsize=9,
               frameon=False,
               title=(f"{NOT_AVAILABLE}: " + "; ".join(missing)) if missing else None,
               title_fontsize=8)
    fig.suptitle("Main (shaded) and coupled displacements from the unloaded equilibrium: "
                 "translations [mm] left, rotations [deg] right")
    return fig


def fig_curves(curves: pd.DataFrame, ref: ReferenceData, cases: Mapping[str, Load]) -> plt.Figure:
    """Load-displacement curves, one panel per loaded coordinate.

    Cases that load the same coordinate with opposite signs (AS/PS, TNS/CMP, FLX/EXT) are the
    two halves of one curve: they share a panel, each half labelled with its case and each
    case's Moroney value drawn at its own load.
    """
    by_dof: dict[int, list[str]] = {}
    for case, load in cases.items():
        by_dof.setdefault(load.main_dof, []).append(case)
    fig, axes = plt.subplots(2, 3, figsize=(13, 8))
    for ax, (dof, group) in zip(axes.flat, sorted(by_dof.items()), strict=False):
        first = cases[group[0]]
        nominal = abs(first.as_array()[dof]) / (1000.0 if dof >= 3 else 1.0)
        sign = np.sign(first.as_array()[dof])
        for config in v.CONFIGURATIONS:
            sel = curves[(curves.configuration == config) & (curves.case == group[0])]
            ax.plot(sel["factor"] * nominal * sign, sel["main"], color=CONFIG_COLORS[config],
                    label=config, marker=".", ms=3)
        for case in group:
            load = cases[case]
            load_pt = nominal * np.sign(load.as_array()[dof])
            for config, marker in (("disc segment", "_"), ("intact", "x")):
                val = moroney_derived(ref, case, load, config)
                if np.isfinite(val):
                    ax.scatter([load_pt], [val], marker=marker, color="black", s=120, zorder=5,
                               linewidths=2, label=f"Moroney {config} (load / k)")
            ax.annotate(case, xy=(load_pt, 0), xytext=(0, -14 if load_pt > 0 else 8),
                        textcoords="offset points", ha="center", fontsize=9,
                        fontweight="bold", color="#444")
        ax.axhline(0, color="black", lw=0.5)
        ax.axvline(0, color="black", lw=0.5)
        unit_load = "N m" if dof >= 3 else "N"
        ax.set_xlabel(f"{'M' if dof >= 3 else 'F'}{'xyz'[dof % 3]} [{unit_load}]")
        ax.set_ylabel(COMPONENT_LABELS[dof])
        ax.set_title(" / ".join(group), fontsize=10)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(by_dof):]:
        ax.set_visible(False)
    handles, labels = [], []
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False)
    fig.suptitle("Load-displacement: main displacement from −2 to +2 times the nominal load "
                 "(opposite cases share a panel)")
    fig.tight_layout(rect=(0, 0.05, 1, 0.98))
    return fig


def fig_sharing(share: pd.DataFrame, cases: Mapping[str, Load]) -> plt.Figure:
    table = share.pivot(index="case", columns="element", values="share_pct").loc[list(cases)]
    order = ["disc", *LIGAMENT_NAMES, "facet left", "facet right"]
    table = table[[c for c in order if c in table.columns]]
    fig, ax = plt.subplots(figsize=(10, 5))
    lim = max(100.0, float(np.nanmax(np.abs(table.to_numpy()))))
    im = ax.imshow(table.to_numpy(), cmap="RdBu_r", vmin=-lim, vmax=lim, aspect="auto")
    ax.set_xticks(range(len(table.columns)), table.columns, rotation=30, ha="right")
    ax.set_yticks(range(len(table.index)), table.index)
    for i in range(table.shape[0]):
        for j in range(table.shape[1]):
            val = table.iloc[i, j]
            label = f"{val:.0f}"
            ax.text(j, i, "0" if label == "-0" else label, ha="center", va="center", fontsize=8,
                    color="white" if abs(val) > 0.6 * lim else "black")
    fig.colorbar(im, ax=ax, label="share of the applied load along its direction [%]")
    ax.set_title("Which structures carry each load (intact model)")
    fig.tight_layout()
    return fig


def sharing_note(share: pd.DataFrame, unloaded_ligs: pd.DataFrame) -> str:
    """Why shares leave 0-100 %, with the numbers of the most extreme case."""
    extreme = share.loc[share["share_pct"].idxmax()]
    case = extreme["case"]
    neg = share[(share.case == case) & (share.share_pct < -0.5)].sort_values("share_pct")
    rest = unloaded_ligs.set_index("ligament")["tension_unloaded_N"]
    pre = [f"{e} ({rest[e]:.1f} N at rest, {p:+.0f} %)" for e, p in
           zip(neg.element, neg.share_pct, strict=True) if e in rest.index and rest[e] > 0]
    return (
        "How the shares are measured: each element's generalized force along the case's main "
        "coordinate at the loaded equilibrium, as a signed percentage of the applied load, so "
        "the shares of a case add up to 100 %. The forces are totals, not changes from the "
        f"unloaded pose, and {' and '.join(rest.index[rest > 0]) or 'no ligament'} "
        "carry tension already at rest (section 6). An "
        "element that pulls with the load has a negative share, and the others then carry "
        f"more than 100 % between them. The extreme case here is {case}: "
        + (", ".join(pre) + " pull C5 towards C6 together with the load, so "
           if pre else "")
        + f"the {extreme['element']} carries {extreme['share_pct']:.0f} %. A ligament cannot "
        "push: its negative share is a pull in the direction of the load.")


def fig_tornado(sens: pd.DataFrame, cases: Mapping[str, Load]) -> plt.Figure:
    """One panel per case: each parameter's change of the main displacement at its lower and
    upper bound [%], sorted by the larger of the two (largest effect on top)."""
    fig, axes = plt.subplots(3, 3, figsize=(14, 14))
    for ax, case in zip(axes.flat, cases, strict=False):
        sel = sens[sens.case == case]
        change = sel.pivot_table(index="parameter", columns="setting", values="change_pct",
                                 sort=False).reindex(columns=["low", "high"]).fillna(0.0)
        effect = change.abs().max(axis=1)
        # largest effect on top; ties (e.g. no effect at all) keep the space's order
        order = sorted(range(len(change)), key=lambda k: (-effect.iloc[k], k))
        change = change.iloc[order[::-1]]
        y = np.arange(len(change))
        for setting, color in (("low", "#4a7bd0"), ("high", "#d0504a")):
            ax.barh(y, change[setting].to_numpy(), color=color, alpha=0.85, label=setting)
        ax.axvline(0, color="black", lw=0.6)
        ax.set_yticks(y, change.index, fontsize=7.5)
        ax.set_title(case, fontsize=10)
        ax.set_xlabel("change of main displacement [%]")
        ax.grid(axis="x", alpha=0.3)
    axes.flat[0].legend(fontsize=8)
    fig.suptitle("Sensitivity of each case's main displacement to the assumptions we made "
                 "(each panel sorted by effect)")
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    return fig


def fig_sensitivity_overview(sens: pd.DataFrame, sobol, cases: Mapping[str, Load]
                             ) -> plt.Figure:
    """One-at-a-time (largest ``|change|`` of the tornado, %) next to the Sobol total indices,
    parameters x cases, same rows."""
    from segment.studies.sobol import fig_sobol

    params = list(dict.fromkeys(sobol.indices.parameter))
    oat = (sens.assign(abs_change=sens.change_pct.abs())
           .pivot_table(index="parameter", columns="case", values="abs_change", aggfunc="max")
           .reindex(index=params, columns=list(cases)))
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(15, 7.5), sharey=True)
    vals = oat.to_numpy(dtype=float)
    im = ax1.imshow(np.nan_to_num(vals), cmap="magma_r", vmin=0,
                    vmax=max(1.0, float(np.nanmax(vals))), aspect="auto")
    ax1.set_xticks(range(len(cases)), list(cases))
    ax1.set_yticks(range(len(params)), params)
    for i in range(vals.shape[0]):
        for j in range(vals.shape[1]):
            if np.isfinite(vals[i, j]) and vals[i, j] >= 0.5:
                ax1.text(j, i, f"{vals[i, j]:.0f}", ha="center", va="center", fontsize=7,
                         color="white" if vals[i, j] > 0.6 * np.nanmax(vals) else "black")
    fig.colorbar(im, ax=ax1, label="one at a time: largest |change| of the main displacement [%]")
    ax1.set_title("Tornado (each parameter at its bounds)")
    fig_sobol(sobol, ax=ax2)
    ax2.set_title(f"Sobol total index ST ({sobol.n_evaluations:,} evaluations)")
    fig.tight_layout()
    return fig


def fig_uncertainty(bands: pd.DataFrame, ref: ReferenceData, cases: Mapping[str, Load],
                    n_samples: int) -> plt.Figure:
    """5-95 % bands of the main displacements, force cases (mm) and moment cases (deg) apart."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5),
                             gridspec_kw={"width_ratios": [5, 4]})
    for ax, unit in zip(axes, ("mm", "deg"), strict=True):
        sel = bands[bands.unit == unit].reset_index(drop=True)
        x = np.arange(len(sel))
        ax.bar(x, sel["high"] - sel["low"], bottom=sel["low"], width=0.5, color="#9ecae1",
               label="5-95 % of the samples")
        ax.hlines(sel["median"], x - 0.25, x + 0.25, color="black", label="median")
        ax.scatter(x, sel["nominal"], color="#1f77b4", zorder=5, label="published parameters")
        intact = [moroney_derived(ref, c, cases[c], "intact") for c in sel["case"]]
        if np.isfinite(intact).any():
            ax.scatter(x, intact, marker="x", color="black", s=70, linewidths=2, zorder=6,
                       label="Moroney intact (load / k)")
        ax.axhline(0, color="black", lw=0.5)
        # bars stick to their ends (no autoscale margin there): make room for every band
        shown = np.concatenate([sel[["low", "high", "nominal"]].to_numpy(float).ravel(),
                                np.asarray(intact, float), [0.0]])
        lo, hi = np.nanmin(shown), np.nanmax(shown)
        pad = 0.08 * (hi - lo)
        ax.set_ylim(lo - pad, hi + pad)
        ax.set_xlim(-0.6, len(sel) - 0.4)
        ax.set_xticks(x, sel["case"])
        ax.set_ylabel(f"main displacement [{unit}]")
        ax.grid(axis="y", alpha=0.3)
    axes[1].legend(fontsize=8, loc="lower left")
    fig.suptitle(f"Parameter uncertainty: {n_samples} sampled models (intact), main displacement "
                 "from the unloaded equilibrium")
    fig.tight_layout()
    return fig

