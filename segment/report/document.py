"""The report as a document: an ordered list of blocks (headings, text, bullets, tables,
figures) rendered to Markdown and to self-contained HTML, and how its numbers are printed.

Tables are shown rounded to their meaning (:data:`SIGNIFICANT_DIGITS` per quantity) and saved
as CSV (:data:`CSV_FLOAT_FORMAT`); values below :data:`NOISE_FLOOR` are written as 0.
"""

from __future__ import annotations

import base64
import html
import math
from dataclasses import dataclass, field

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

NOT_AVAILABLE = "not available"
NOISE_FLOOR = 1e-12
"""Values below this magnitude [mm, deg, N, %] are rounding noise and are written as 0.

Out-of-plane displacements of the sagittal cases come out of Newton as +-1e-20 mm or deg, with
digits that depend on the compiled machine code; the solver's own tolerance (1e-10 on the
scaled residual) is eight orders above this floor, so no computed value is affected. Written as
0 they read as what they are and keep the committed report identical between machines."""
RUN_FILE = "run.json"
"""Run details (date, machine, run time, solver timings): untracked, see .gitignore."""
CSV_FLOAT_FORMAT = "%.6g"
"""How tables/*.csv write floats: six significant digits.

What the computation justifies: equilibria are converged to a scaled residual of 1e-10, and
what the report derives from them agrees to far better than 1e-6 relative between CPUs whose
BLAS and numpy pick different instructions (OpenBLAS's SkylakeX, Haswell and Nehalem kernels,
numpy with and without AVX-512: the last digits of every solve move with them); the parameters
themselves are known to ±20 % at best. Six digits keep every digit the report shows and stay
clear of that noise, so a fresh run writes the same bytes on any x86-64 CPU
(``tests/test_cross_cpu.py`` regenerates the report with other kernels and compares).
Quantities whose noise is absolute (Sobol indices, % changes near zero) are rounded to fixed
decimals where they are made (:func:`round_columns`)."""


def round_columns(df: pd.DataFrame, decimals: dict[str, int]) -> pd.DataFrame:
    """A copy with each named float column rounded to its number of decimals (no ``-0``)."""
    out = df.copy()
    for col, d in decimals.items():
        out[col] = np.round(out[col].to_numpy(float), d) + 0.0
    return out


@dataclass
class Report:
    """An ordered list of blocks rendered to Markdown and HTML, plus its tables and figures."""

    title: str
    blocks: list[tuple[str, object]] = field(default_factory=list)
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    figures: dict[str, plt.Figure] = field(default_factory=dict)
    images: dict[str, bytes] = field(default_factory=dict)
    draw: object = None
    """Where figures are drawn as they come (:class:`segment.report.drawing.FigureDrawer`:
    ``draw(fig)`` gives a Future of the PNG, kept in :attr:`images`); None: kept in
    :attr:`figures` for the caller to draw."""

    def heading(self, text: str) -> None:
        self.blocks.append(("h2", text))

    def subheading(self, text: str) -> None:
        self.blocks.append(("h3", text))

    def text(self, text: str) -> None:
        self.blocks.append(("p", text))

    def bullets(self, items: list[str]) -> None:
        self.blocks.append(("ul", items))

    def table(self, name: str, df: pd.DataFrame, shown: pd.DataFrame | None = None) -> None:
        """Show ``shown`` (formatted) and save ``df`` (full precision) as tables/NAME.csv.

        Both have their rounding noise (|value| < :data:`NOISE_FLOOR`) set to 0.
        """
        self.tables[name] = denoise(df)
        self.blocks.append(("table", (name, self.tables[name] if shown is None
                                      else denoise(shown))))

    def figure(self, name: str, fig: plt.Figure, caption: str) -> None:
        if self.draw is None:
            self.figures[name] = fig
        else:
            self.images[name] = self.draw(fig)
        self.blocks.append(("figure", (name, caption)))

    def image(self, name: str, png, caption: str) -> None:
        """A picture made elsewhere (e.g. a 3-D render), as PNG bytes or a
        :class:`concurrent.futures.Future` of them (a render running beside the rest of the
        report; :func:`segment.report.build.build_report` waits for it before writing)."""
        self.images[name] = png
        self.blocks.append(("figure", (name, caption)))

    # -- rendering
    def markdown(self) -> str:
        out = [f"# {self.title}", ""]
        for kind, content in self.blocks:
            if kind == "h2":
                out += [f"## {content}", ""]
            elif kind == "h3":
                out += [f"### {content}", ""]
            elif kind == "p":
                out += [content, ""]
            elif kind == "ul":
                out += [f"- {item}" for item in content] + [""]
            elif kind == "table":
                name, df = content
                out += [md_table(df), "", f"*Table data: `tables/{name}.csv`*", ""]
            elif kind == "figure":
                name, caption = content
                out += [f"![{caption}](figures/{name}.png)", "", f"*{caption}*", ""]
        return "\n".join(out)

    def html(self, images: dict[str, bytes]) -> str:
        body = [f"<h1>{html.escape(self.title)}</h1>"]
        for kind, content in self.blocks:
            if kind == "h2":
                body.append(f"<h2>{html.escape(content)}</h2>")
            elif kind == "h3":
                body.append(f"<h3>{html.escape(content)}</h3>")
            elif kind == "p":
                body.append(f"<p>{_inline_html(content)}</p>")
            elif kind == "ul":
                body.append("<ul>" + "".join(f"<li>{_inline_html(i)}</li>" for i in content)
                            + "</ul>")
            elif kind == "table":
                name, df = content
                body.append(html_table(df) + f'<p class="src">Table data: tables/{name}.csv</p>')
            elif kind == "figure":
                name, caption = content
                data = base64.b64encode(images[name]).decode()
                body.append(f'<figure><img alt="{html.escape(caption)}" '
                            f'src="data:image/png;base64,{data}"/>'
                            f"<figcaption>{html.escape(caption)}</figcaption></figure>")
        style = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;"
                 "line-height:1.45;color:#222}table{border-collapse:collapse;margin:1em 0;"
                 "font-size:0.88em}td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}"
                 "th{background:#f0f0f0}td:first-child,th:first-child{text-align:left}"
                 "img{max-width:100%}figcaption{font-style:italic;color:#555}"
                 ".src{color:#777;font-size:0.8em}code{background:#f4f4f4;padding:0 3px}")
        return ("<!DOCTYPE html><html><head><meta charset='utf-8'>"
                f"<title>{html.escape(self.title)}</title><style>{style}</style></head><body>"
                + "\n".join(body) + "</body></html>\n")


def at_least(x):
    """``x`` rounded down for "at least" sentences; NaN and inf as they are."""
    return math.floor(x) if np.isfinite(x) else x


def _inline_html(text: str) -> str:
    parts = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def denoise(df: pd.DataFrame) -> pd.DataFrame:
    """A copy with |value| < NOISE_FLOOR set to 0 in float columns (see NOISE_FLOOR)."""
    out = df.copy()
    for j in range(out.shape[1]):
        column = out.iloc[:, j]
        if pd.api.types.is_float_dtype(column):
            values = column.to_numpy(copy=True)
            values[np.abs(values) < NOISE_FLOOR] = 0.0        # NaN compares False: kept
            out.isetitem(j, values)
    return out


def _fmt(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (float, np.floating)):
        if not np.isfinite(value):
            return NOT_AVAILABLE
        if value == 0:
            return "0"
        if abs(value) >= 1e4 or abs(value) < 1e-3:
            return f"{value:.2e}"
        return f"{value:.4g}" if abs(value) >= 1 else f"{value:.3g}"
    return str(value)


SIGNIFICANT_DIGITS = 3
"""Significant digits of the largest value of a quantity in a shown table.

Every value of the same quantity (a column, split by the row's unit, quantity or parameter
where a table mixes them) is printed with the same number of decimals, so that the largest has
this many significant digits: 0.001 mm and 0.01 deg for displacements, 0.1 % for deviations.
A value that rounds to zero at that precision prints as 0 (no 1e-20). The CSVs keep full
precision."""
SMALL_QUANTITY = 1e-6
"""A quantity whose largest value is below this (e.g. solver residuals) is printed in
scientific notation: it is small by nature, not by rounding."""
_GROUP_COLUMNS = ("unit", "quantity", "parameter")


def _fixed(value, decimals: int | None) -> str:
    """``value`` with ``decimals`` decimals (None: scientific), "0" when it rounds to zero."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (float, np.floating)):
        return _fmt(value)
    if not np.isfinite(value):
        return NOT_AVAILABLE
    if value == 0:
        return "0"
    text = f"{value:.2e}" if decimals is None else f"{value:.{decimals}f}"
    return "0" if float(text) == 0 else text


def _decimals(values: np.ndarray) -> int | None:
    """Decimals giving the largest finite |value| SIGNIFICANT_DIGITS digits (0 to 6)."""
    vals = np.abs(values[np.isfinite(values)])
    top = float(vals.max()) if vals.size else 0.0
    if top == 0:
        return 0
    if top < SMALL_QUANTITY:
        return None
    return int(np.clip(SIGNIFICANT_DIGITS - 1 - np.floor(np.log10(top)), 0, 6))


def _formatted(df: pd.DataFrame) -> list[tuple[str, ...]]:
    """The rows of ``df`` as strings rounded to their meaning (see :data:`SIGNIFICANT_DIGITS`).

    Columns named in ``df.attrs["same_precision"]`` are one quantity (e.g. a value and its
    corridor) and are printed with the precision of the first of them. Built column by column
    in plain lists (writing cells into a DataFrame cost the report 3 s)."""
    keys = [c for c in df.columns if (c in _GROUP_COLUMNS or str(c).endswith("_unit"))
            and not pd.api.types.is_numeric_dtype(df[c])]
    groups = ([np.asarray(idx) for idx in df.groupby(keys, sort=False, dropna=False)
               .indices.values()] if keys else [np.arange(len(df))])
    linked = [c for c in df.attrs.get("same_precision", ()) if c in df.columns]
    first = df[linked[0]].to_numpy(float) if linked else None
    columns = []
    for j, col in enumerate(df.columns):
        column = df.iloc[:, j]
        if pd.api.types.is_float_dtype(column):
            values = column.to_numpy(float)
            cells = [""] * len(df)
            for rows in groups:
                d = _decimals(first[rows] if col in linked else values[rows])
                for r in rows:
                    cells[r] = _fixed(values[r], d)
        else:
            cells = [_fmt(x) for x in column]
        columns.append(cells)
    return list(zip(*columns, strict=True)) if columns else [() for _ in range(len(df))]


def md_table(df: pd.DataFrame) -> str:
    head = "| " + " | ".join(str(c) for c in df.columns) + " |"
    rule = "|" + "|".join("---" for _ in df.columns) + "|"
    rows = ["| " + " | ".join(str(x).replace("|", "/") for x in row) + " |"
            for row in _formatted(df)]
    return "\n".join([head, rule, *rows])


def html_table(df: pd.DataFrame) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(str(x))}</td>" for x in row) + "</tr>"
                   for row in _formatted(df))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"



