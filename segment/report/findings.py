"""The report's opening findings, written from the computed tables (no number typed by
hand)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from segment.report.verdicts import DISC_TABLE2, VERDICT_SD_FRACTION


def pct(x: float) -> str:
    """A deviation with two significant digits: +0.36 %, -39 %."""
    # below 9.95 two significant digits (+0.36 %, -4.9 %), from there whole percent (+39 %,
    # +100 %: ".2g" would print 99.6 as "+1e+02")
    return f"{x:+.2g} %" if abs(x) < 9.95 else f"{x:+.0f} %"


def findings(*, agree: pd.DataFrame, verdicts: pd.DataFrame, bands: pd.DataFrame,
             sens: pd.DataFrame, sobol, reach: pd.DataFrame, disp: pd.DataFrame,
             units: Mapping[str, str] | None = None,
             calibration_section: str = "section 11") -> list[str]:
    """The report's opening findings, one sentence group per point, written from the numbers.

    Parameters are the tables the report shows (agreement, verdicts, uncertainty bands of the
    main displacements, one-at-a-time sensitivity, Sobol result, calibration reach, the
    displacement table); ``units`` maps a parameter to its unit; ``calibration_section`` names
    the section with the calibration reach. No number in the findings is
    typed by hand.
    """
    units = {k: u for k, u in (units or {}).items() if u and u != "-"}
    intact = agree[(agree.comparison == "intact vs Moroney intact")
                   & np.isfinite(agree["reference"])].set_index("case")
    verdict = verdicts.set_index(["comparison", "case"])["verdict"]
    band = bands.set_index("case")
    st = sobol.indices[sobol.indices.quantity == "main"]
    out = []

    def sobol_top(case: str, k: int = 2) -> str:
        sel = st[st.case == case].sort_values("ST", ascending=False).head(k)
        return ", ".join(f"{r.parameter} (ST {r.ST:.2f})" for r in sel.itertuples())

    def spread(case: str) -> tuple[float, str, float, str]:
        sel = sens[sens.case == case]
        lo, hi = sel.loc[sel.change_pct.idxmin()], sel.loc[sel.change_pct.idxmax()]
        return (lo.change_pct, f"{lo.parameter} {lo.setting}", hi.change_pct,
                f"{hi.parameter} {hi.setting}")

    # what agrees
    ok = intact[[verdict.get(("intact vs Moroney intact", c)) == "within" for c in intact.index]]
    bad = intact[[verdict.get(("intact vs Moroney intact", c)) == "outside"
                  for c in intact.index]]
    disc = agree[agree.comparison == DISC_TABLE2]
    post = agree[(agree.comparison == "posterior removed vs Moroney disc segment")
                 & np.isfinite(agree["reference"])]
    worst_post = post.loc[post.deviation_pct.abs().idxmax()]
    why_post = (": the pre-stretched ALL resists the tension" if worst_post.case == "TNS"
                else "")
    n_post_ok = int((verdicts[verdicts.comparison == "posterior removed vs Moroney disc "
                              "segment"].verdict == "within").sum())
    out.append(
        "What agrees: the disc alone reproduces Table 2 in all "
        f"{len(disc)} cases (largest deviation {disc.deviation_pct.abs().max():.1g} %; a check "
        "of eq. (1), not a validation). With ALL and PLL added (Moroney's posterior-removed "
        f"specimens) the model stays within {100 * VERDICT_SD_FRACTION:g} % in "
        f"{n_post_ok} of {len(post)} cases (largest deviation {worst_post.case} "
        f"{worst_post.deviation_pct:+.1f} %{why_post}); a consistency check too, since Table "
        "2 was measured on those specimens. Against independent data, intact "
        + ", ".join(f"{c} ({intact.loc[c, 'model']:.2f} vs {intact.loc[c, 'reference']:.2f} "
                    f"deg, {pct(intact.loc[c, 'deviation_pct'])})" for c in ok.index)
        + " lie within Moroney's corridor.")
    # what does not
    parts = []
    for c in bad.index:
        r = intact.loc[c]
        word = "stiffer" if r.model < r.reference else "softer"
        b = band.loc[c]
        lo_b, hi_b = sorted((abs(b["low"]), abs(b["high"])))
        inside = lo_b <= r.reference <= hi_b
        parts.append(f"{c} is {word} than Moroney (model {r.model:.2f} deg vs "
                     f"{r.reference:.2f} deg at 1.8 N m, {pct(r.deviation_pct)}); the "
                     f"reference lies {'inside' if inside else 'outside'} the model's 5–95 % "
                     f"parameter band ({lo_b:.2f}–{hi_b:.2f} deg), and {c} is dominated by "
                     f"{sobol_top(c)}")
    if parts:
        unreached = [t.target.split()[0] for t in reach.itertuples() if not t.reachable]
        out.append("What does not: " + "; ".join(parts) + "."
                   + (f" No parameter set within the ranges meets {' or '.join(unreached)} "
                      f"({calibration_section})." if unreached else ""))
    # the LB coincidence
    if "LB" in ok.index:
        r = intact.loc["LB"]
        lo, lo_p, hi, hi_p = spread("LB")
        b = band.loc["LB"]
        width = 100 * (b["high"] - b["low"]) / abs(b["nominal"])
        post_lb = post.set_index("case").loc["LB", "deviation_pct"] if "LB" in set(
            post.case) else np.nan
        out.append(
            f"The intact LB match ({r.model:.3f} vs {r.reference:.3f} deg, "
            f"{r.deviation_pct:+.2f} %) is a coincidence of the nominal parameters: one "
            f"parameter at a bound moves LB by {lo:+.0f} % ({lo_p}) to {hi:+.0f} % ({hi_p}), "
            f"the 5–95 % band spans {width:.0f} % of the value ({b['low']:.2f}–"
            f"{b['high']:.2f} deg), and the Sobol indices spread it over "
            f"{sobol_top('LB', 3)}; the match is "
            f"{min(abs(lo), abs(hi)) / max(abs(r.deviation_pct), 1e-9):.0f} times smaller than "
            "the smallest of those moves. The near-exact posterior-removed LB and AR values "
            f"(LB {post_lb:+.1g} %) are structural: ALL and PLL lie in the mid-sagittal plane, "
            "whose length changes only to second order in LB and AR, so the disc alone carries "
            "the moment and eq. (1) returns Table 2.")
    # calibration reach
    for t in reach.itertuples():
        if t.reachable:
            out.append(f"Calibration: {t.target} = {t.value:.2f} is reachable within the "
                       "ranges.")
            continue
        side = "below" if t.outside_by < 0 else "above"
        bound = t.lower if t.outside_by < 0 else t.upper
        unit = f" {units[t.parameter]}" if t.parameter in units else ""
        out.append(
            f"What calibration can and cannot fix: for {t.target} (target {t.value:.2f}) the "
            f"best set within the ranges reaches {t.best_within_ranges:.2f} (from "
            f"{t.start_prediction:.2f}); meeting it needs {t.parameter} = {t.needed:.2f}{unit}, "
            f"{abs(t.outside_by):.2f}{unit} {side} its bound {bound:g}{unit} "
            f"({t.outside_by_range_widths:.2f} range widths outside), and that change makes "
            f"{t.other_targets_missed or 'no other target'} miss.")
    # the sensitivity as a whole
    rest = [c for c in sens.case.unique() if c not in ("LB",)]
    big = max(rest, key=lambda c: max(abs(spread(c)[0]), abs(spread(c)[2])))
    lo, lo_p, hi, hi_p = spread(big)
    top = {c: st[st.case == c].sort_values("ST").iloc[-1].parameter for c in st.case.unique()}
    l0_led = [c for c, p in top.items() if p.startswith("l0_")]
    others = [f"{c}: {p}" for c, p in top.items() if not p.startswith("l0_")]
    out.append(
        "Why the deviations are hard to read: the largest one-at-a-time change is in "
        f"{big} ({lo:+.0f} % at {lo_p}, {hi:+.0f} % at {hi_p}); a ligament rest length "
        "(Table 4 gives whole millimetres: ±0.5 mm) has the largest Sobol index in "
        f"{len(l0_led)} of {len(top)} cases ({', '.join(l0_led)})"
        + (f", another parameter in the rest ({', '.join(others)})" if others else "")
        + ". Until the rest lengths, the facet gap and Moroney's SDs are known, a deviation "
        "smaller than these spreads says little either way.")
    return out

