"""Published reference data for the validation report (``validation/reference/*.csv``).

The tables are shipped inside the package as ``segment.reference_data``; a user who has Moroney's
tables or de Jager's thesis fills in a copy of the folder and passes it to
``segment validate --reference DIR``. Empty cells mean "not available" and stay empty: the
report shows them as such, it never guesses.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import pandas as pd

from segment.core.tables import Table

__all__ = ["DISPLACEMENT_COLUMNS", "ReferenceData", "format_reference", "load_reference",
           "read_bibliography", "reference_dir"]

CASES = ("AS", "PS", "LS", "TNS", "CMP", "LB", "FLX", "EXT", "AR")
DISPLACEMENT_COLUMNS = ("x_mm", "y_mm", "z_mm", "phi_x_deg", "phi_y_deg", "phi_z_deg")


@dataclass(frozen=True, eq=False)
class ReferenceData:
    """The reference tables, missing values as NaN."""

    rotational_stiffness: pd.DataFrame
    translational_stiffness: pd.DataFrame
    displacements: pd.DataFrame
    facet_forces: pd.DataFrame
    files: tuple[Path, ...]


def reference_dir() -> Path:
    """Folder of the packaged reference tables (``validation/reference`` in a checkout)."""
    try:
        return Path(str(resources.files("segment.reference_data")))
    except ModuleNotFoundError:
        checkout = Path(__file__).resolve().parents[2] / "validation" / "reference"
        if checkout.is_dir():
            return checkout
        raise


def _optional(t: Table, i: int, row: dict, col: str, **checks) -> float:
    return math.nan if row[col] == "" else t.number(i, row, col, **checks)


def _read(path: Path, key_cols: tuple[str, ...], num_cols: tuple[str, ...],
          text_cols: tuple[str, ...] = (), *, positive=False, moroney_cases=True) -> pd.DataFrame:
    t = Table(path, (*key_cols, *num_cols, *text_cols, "note"))
    rows = []
    for i, row in t.rows():
        rec = {}
        for c in key_cols:
            rec[c] = (t.key(i, row, c, CASES) if c == "case" and moroney_cases else row[c])
            if not rec[c]:
                raise ValueError(f"{t.name}, row {i}, column {c!r}: empty")
        for c in num_cols:
            rec[c] = _optional(t, i, row, c, positive=positive)
        for c in (*text_cols, "source", "note"):
            rec[c] = row[c]
        rows.append(rec)
    df = pd.DataFrame(rows)
    dup = df.duplicated(list(key_cols))
    if dup.any():
        i = int(dup.to_numpy().argmax()) + 1
        raise ValueError(f"{t.name}, row {i}: duplicate {dict(df.loc[i - 1, list(key_cols)])}")
    return df


def load_reference(directory: str | Path | None = None) -> ReferenceData:
    """Read and validate the reference tables of ``directory`` (default: the packaged ones)."""
    d = reference_dir() if directory is None else Path(directory)
    if not d.is_dir():
        raise ValueError(f"{d}: not a folder of reference tables")
    files = {name: d / name for name in (
        "moroney_rotational_stiffness.csv", "moroney_translational_stiffness.csv",
        "published_displacements.csv", "facet_forces.csv")}
    rot = _read(files["moroney_rotational_stiffness.csv"], ("case", "configuration"),
                ("stiffness_Nm_per_deg", "rotation_at_1.8Nm_deg"), ("kind",), positive=True)
    trans = _read(files["moroney_translational_stiffness.csv"], ("case", "configuration"),
                  ("stiffness_N_per_mm", "translation_at_20N_mm"), ("kind",), positive=True)
    disp = _read(files["published_displacements.csv"], ("series", "case"), DISPLACEMENT_COLUMNS)
    facet = _read(files["facet_forces.csv"], ("case",),
                  ("Fx_N", "Fy_N", "Fz_N", "Mx_Nm", "My_Nm", "Mz_Nm", "facet_force_N"),
                  moroney_cases=False)
    return ReferenceData(rot, trans, disp, facet, tuple(files.values()))


# ------------------------------------------------------------------ bibliography
_LATEX = (("{\\l}", "ł"), ("---", "—"), ("--", "–"))
_ACCENT = re.compile(r"\{\\([\"'`^~])\{?([A-Za-z])\}?\}")
_COMBINING = {'"': "\u0308", "'": "\u0301", "`": "\u0300", "^": "\u0302", "~": "\u0303"}


def _plain(text: str) -> str:
    """BibTeX text as plain Unicode: accents (``{\\"e}`` -> ë, ``{\\'a}`` -> á, ...), ``{\\l}``,
    dashes; braces dropped."""
    text = _ACCENT.sub(lambda m: unicodedata.normalize("NFC", m.group(2) + _COMBINING[m.group(1)]),
                       text)
    for latex, char in _LATEX:
        text = text.replace(latex, char)
    return " ".join(text.replace("{", "").replace("}", "").split())


def read_bibliography(path: str | Path | None = None) -> dict[str, dict[str, str]]:
    """The entries of ``REFERENCES.bib`` (default: the packaged one) as ``{key: {field: text}}``.

    A small reader for the file we write ourselves: ``@type{key, field = {value}, ...}`` with
    balanced braces; field values are returned as plain text (LaTeX accents resolved), and the
    entry type as field ``"type"``.
    """
    path = Path(path) if path is not None else reference_dir() / "REFERENCES.bib"
    text = "\n".join(line for line in path.read_text(encoding="utf-8").splitlines()
                     if not line.lstrip().startswith("%"))
    entries: dict[str, dict[str, str]] = {}
    for match in re.finditer(r"@(\w+)\s*\{\s*([^,\s]+)\s*,", text):
        fields = {"type": match.group(1).lower()}
        i = match.end()
        while True:
            field = re.match(r"\s*(\w+)\s*=\s*\{", text[i:])
            if not field:
                if not re.match(r"\s*\}", text[i:]):
                    raise ValueError(f"{path}: entry {match.group(2)!r} is not closed by '}}'")
                break
            start = i + field.end()
            j, level = start, 1
            while level:
                if j >= len(text):
                    raise ValueError(f"{path}: field {field.group(1)!r} of entry "
                                     f"{match.group(2)!r} has unbalanced braces")
                level += {"{": 1, "}": -1}.get(text[j], 0)
                j += 1
            fields[field.group(1).lower()] = _plain(text[start:j - 1])
            i = j
            comma = re.match(r"\s*,", text[i:])
            if comma:
                i += comma.end()
        entries[match.group(2)] = fields
    return entries


def format_reference(entry: dict[str, str]) -> str:
    """One entry as a line of text: authors (year). Title. Venue. doi/URL. Note."""
    authors = entry.get("author", "").replace(" and others", " et al.").replace(" and ", "; ")
    year = entry.get("year", "year not recorded")
    parts = [f"{authors} ({year})."] if authors else []
    if "title" in entry:
        parts.append(f"{entry['title']}." if authors else f"{entry['title']} ({year}).")
        entry = {k: v for k, v in entry.items() if k != "title"}
    if entry.get("type") == "phdthesis" and "school" in entry:
        entry = {**entry, "school": f"PhD thesis, {entry['school']}"}
    venue = entry.get("journal") or entry.get("booktitle") or entry.get("school") or ""
    if venue:
        if "volume" in entry:
            venue += f" {entry['volume']}"
            if "number" in entry:
                venue += f"({entry['number']})"
        elif "number" in entry:
            venue += f", {entry['number']}"
        if "pages" in entry:
            venue += f":{entry['pages']}"
        parts.append(f"{venue}.")
    if "doi" in entry:
        parts.append(f"doi:{entry['doi']}.")
    elif "url" in entry:
        parts.append(f"{entry['url']}.")
    if "note" in entry:
        parts.append(entry["note"][0].upper() + entry["note"][1:] + ".")
    return " ".join(parts)
