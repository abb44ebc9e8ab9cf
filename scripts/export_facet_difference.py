"""Measure how far the exported models' equilibria lie from segment's, with and without facets.

Each model is exported (``segment.export``), loaded in OpenSim and in MuJoCo, and its static
equilibrium is found there (Newton on the tool's own residual) for the unloaded segment and
the nine Moroney load cases; ``segment.solve`` gives the reference. Without facets the export
is exact (the difference is rounding); with facets it carries the facet approximation, and
this table is its measured effect. The table replaces the block between the markers in
``docs/export.md`` (``--write``) or is printed.

Usage::

    python scripts/export_facet_difference.py            # print the table
    python scripts/export_facet_difference.py --write    # and update docs/export.md

Needs the extras ``opensim`` and ``mujoco``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "export.md"
START = "<!-- export-differences:start (scripts/export_facet_difference.py) -->"
END = "<!-- export-differences:end -->"
UNITS = ("mm", "mm", "mm", "deg", "deg", "deg")


def _value(q, i):
    """Coordinate i in display units (mm or deg)."""
    return q[i] if i < 3 else float(np.degrees(q[i]))


def measure(folder: Path):
    """Rows per (tool, facets, case): segment's q, the tool's q and the converged flags."""
    from segment import LOAD_CASES, c5c6, solve
    from segment.elements.loads import Load
    from segment.export.mjcf import mjcf_equilibrium, write_mjcf
    from segment.export.osim import osim_equilibrium, write_osim

    tools = {"OpenSim": (write_osim, osim_equilibrium, "osim"),
             "MuJoCo": (write_mjcf, mjcf_equilibrium, "xml")}
    cases = {"unloaded": Load.zero(), **dict(LOAD_CASES)}
    rows = []
    for facets in (False, True):
        model = c5c6(facets=facets)
        ours = {name: solve(model, load) for name, load in cases.items()}
        for tool, (write, equilibrium, suffix) in tools.items():
            path = folder / f"c5c6_{'facets' if facets else 'no_facets'}.{suffix}"
            write(model, path)
            for name, load in cases.items():
                theirs = equilibrium(path, load)
                rows.append({"tool": tool, "facets": facets, "case": name,
                             "main": load.main_dof, "ours": ours[name], "theirs": theirs,
                             "unloaded": ours["unloaded"]})
    return rows


def table(rows) -> str:
    from segment.elements.disc import DOF_NAMES

    lines = []
    exact = [r for r in rows if not r["facets"]]
    worst = {}
    for r in exact:
        d = np.abs(r["theirs"].q - r["ours"].q)
        worst[r["tool"]] = max(worst.get(r["tool"], 0.0), float(np.max(d)))
    lines.append("Without facets (`segment.c5c6(facets=False)`), the export is exact: the "
                 "largest |q_tool - q_segment| over the unloaded pose and the nine cases is "
                 + ", ".join(f"{v:.1e} (mm or rad) in {k}" for k, v in worst.items()) + ".")
    lines.append("")
    lines.append("With facets (the approximation), the equilibria found in each tool against "
                 "`segment.solve`. *main*: the loaded coordinate; *motion*: segment's change of "
                 "it from the unloaded equilibrium; Δ: tool minus segment, and in % of the "
                 "motion; max |Δ|: over all six coordinates.")
    lines.append("")
    lines.append("| case | main | segment | motion | tool | Δ main | Δ % of motion | "
                 "max \\|Δ\\| translation [mm] | max \\|Δ\\| rotation [deg] | converged |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|")
    for r in (r for r in rows if r["facets"]):
        q_s, q_t = r["ours"].q, r["theirs"].q
        i = r["main"]
        d = q_t - q_s
        dt = float(np.max(np.abs(d[:3])))
        dr = float(np.degrees(np.max(np.abs(d[3:]))))
        if i is None:
            main = seg = motion = dm = pct = "–"
        else:
            u = UNITS[i]
            main = DOF_NAMES[i]
            seg = f"{_value(q_s, i):.4f} {u}"
            mv = _value(q_s, i) - _value(r["unloaded"].q, i)
            motion = f"{mv:+.4f} {u}"
            dmv = _value(q_t, i) - _value(q_s, i)
            dm = f"{dmv:+.4f} {u}"
            pct = f"{100.0 * dmv / mv:+.1f} %" if mv != 0 else "–"
        ok = "yes" if (r["theirs"].converged and r["ours"].converged) else "no"
        lines.append(f"| {r['case']} | {main} | {seg} | {motion} | {r['tool']} | {dm} | "
                     f"{pct} | {dt:.4f} | {dr:.4f} | {ok} |")
    return "\n".join(lines)


def write_doc(text: str) -> None:
    doc = DOC.read_text()
    if START not in doc or END not in doc:
        raise SystemExit(f"{DOC}: the markers {START!r} and {END!r} are missing")
    head, rest = doc.split(START, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(f"{head}{START}\n{text}\n{END}{tail}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update docs/export.md")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        text = table(measure(Path(folder)))
    print(text)
    if args.write:
        write_doc(text)
        print(f"updated {DOC}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
