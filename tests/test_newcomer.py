"""What a newcomer sees (issue 31): a set-up without "Package would be ignored", examples that
leave no file in the checkout, aligned ``compare`` tables without ``-0.000``, a ``ramp``
printout that names no CSV it did not write, and figures that show what they label."""

import re
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import tomllib

import segment
from segment.cli import main

matplotlib.use("Agg")
import matplotlib.pyplot as plt

ROOT = Path(__file__).resolve().parents[1]


def _packages_shipped_by_a_parent() -> list[str]:
    """Folders that ship files through a parent package's patterns although they are a package
    name of their own: what setuptools warns about ("Package would be ignored"). The census's
    probe (``scripts/reliability_census.py``), read from the checkout."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("census",
                                                  ROOT / "scripts" / "reliability_census.py")
    census = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(census)
    return census._would_be_ignored(ROOT)


def test_no_folder_is_shipped_through_its_parent():
    assert _packages_shipped_by_a_parent() == []
    # and every listed package has its files: the data folders ship their CSVs
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "segment.data.curves" in cfg["packages"]
    assert cfg["package-data"]["segment.data.curves"] == ["*.csv"]


_WRITES_A_BARE_NAME = re.compile(
    r">>>.*\b(?:to_parquet|to_csv|savefig|render|render_grid|export|write_text|write_bytes)"
    r"\(\s*(?:[^,()]*,\s*)?[\"']([^\"'/]+\.[A-Za-z0-9]+)[\"']")


def test_examples_write_no_file_into_the_working_directory():
    """``python -m doctest README.md`` (and the docs' doctests) left untracked files."""
    hits = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for k, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
            if _WRITES_A_BARE_NAME.search(line):
                hits.append(f"{page.name}:{k}")
    assert hits == []
    assert _WRITES_A_BARE_NAME.search('>>> sets.to_parquet("study.parquet")')   # it bites


def test_compare_aligns_long_state_names_and_prints_no_negative_zero(capsys):
    long_state = "laminectomy+facetectomy-right-50"
    assert main(["compare", "FLX", "EXT", "--states", f"laminectomy,{long_state}"]) == 0
    text = capsys.readouterr().out
    rows = [ln for ln in text.splitlines()
            if ln.startswith(("intact ", "laminectomy")) and (" FLX " in ln or " EXT " in ln)]
    assert len(rows) == 6, text
    assert len({ln.find("FLX") if "FLX" in ln else ln.find("EXT") for ln in rows}) == 1, text
    assert "-0.000" not in text and "-0.0 " not in text


def test_ramp_names_the_csv_only_when_it_writes_one(capsys, tmp_path):
    assert main(["ramp", "FLX", "--to-scale", "2", "--steps", "4"]) == 0
    assert "CSV" not in capsys.readouterr().out
    out = tmp_path / "r.csv"
    assert main(["ramp", "FLX", "--to-scale", "2", "--steps", "4", "--out", str(out)]) == 0
    assert f"q in {out}" in capsys.readouterr().out


def test_population_bands_keep_their_members_inside_the_axes():
    from segment.report.curve_figures import population_bands_figure

    bands = pd.DataFrame([{"case": "FLX", "unit": "deg", "q5": 0.20, "q95": 0.34,
                           "median": 0.21, "members": [0.20, 0.20, 0.21, 0.30, 0.35],
                           "published": 0.25},
                          {"case": "AS", "unit": "mm", "q5": -0.40, "q95": -0.39,
                           "median": -0.40, "members": [-0.40] * 5, "published": -0.3}])
    fig = population_bands_figure(bands)
    try:
        seen = 0
        for ax in fig.axes:
            lo, hi = ax.get_ylim()
            pad = 0.01 * (hi - lo)
            for line in ax.get_lines():
                y = np.asarray(line.get_ydata(), dtype=float)
                if y.size:
                    seen += 1
                    assert lo + pad <= y.min() and y.max() <= hi - pad, (ax.get_ylabel(), y)
        assert seen > 0
    finally:
        plt.close(fig)


def test_clinical_figure_labels_the_facet_panel_in_newtons():
    c = segment.compare_states(segment.c5c6(), ["laminectomy"],
                               {k: segment.LOAD_CASES[k] for k in ("FLX", "AS")})
    fig = c.figure()
    try:
        facet = next(ax for ax in fig.axes if "facet" in ax.get_ylabel())
        motion = next(ax for ax in fig.axes if ax is not facet and ax.get_xticklabels())
        facet_ticks = [t.get_text() for t in facet.get_xticklabels()]
        assert facet_ticks == ["FLX", "AS"] and "[N]" in facet.get_ylabel()
        assert [t.get_text() for t in motion.get_xticklabels()] == ["FLX [deg]", "AS [mm]"]
    finally:
        plt.close(fig)
