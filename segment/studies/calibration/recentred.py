"""The parameter space of a calibrated data folder: the calibration's ranges and priors centred
on the folder's model (its ``parameter_space.csv``), and the notes that name, in each changed
row of its tables, the calibrated parameters that set it."""

from __future__ import annotations

import math

from segment.core.save import format_value

__all__ = ["recentred_space", "row_settings"]

_ROW_KEY = {"ligaments.csv": "name", "facets.csv": "side", "disc_translational.csv": "dof",
            "disc_rotational.csv": "dof"}
"""The column of each element table that names what a parameter targets (its key)."""
_KINDS = {"ligaments.csv": "ligament", "facets.csv": "facet",
          "disc_translational.csv": "disc", "disc_rotational.csv": "disc"}
"""The kind of element each table holds (the first part of a space's target)."""


def recentred_space(space, result, note: str, header, rows):
    """Header and rows of the space file for the calibrated folder: the same ranges and priors
    as the calibration's space (``header``, ``rows``: its file as used), with the folder's
    model as the nominal point.

    An absolute field (rest length, gap, inclination, radius, C) gets the MAP as its nominal
    value; a stiffness factor stays a factor on the folder's own (calibrated) stiffness, so its
    nominal value stays 1 and its bounds and prior are divided by the MAP factor: the same
    absolute range as the calibration's. ``note`` (how the folder was calibrated) goes into
    each changed row's source, the original after "was:".
    """
    rows = [list(r) for r in rows]
    col = {h: k for k, h in enumerate(header)}
    for r in rows:
        name = r[col["name"]]
        if name not in space.names:
            continue
        j = space.names.index(name)
        x = float(result.x[j])
        was, map_text = r[col["source"]], format_value(x)
        if space.fields[j] != "stiffness_scale":
            if map_text == r[col["nominal"]].strip():
                continue
            r[col["nominal"]] = map_text
            r[col["source"]] = f"nominal: {note} ({name} = {map_text}); was: {was}"
            continue
        if x == 1.0:
            continue
        lower, upper = float(space.lower[j]) / x, float(space.upper[j]) / x
        r[col["nominal"]] = "1"
        r[col["lower"]] = format_value(min(lower, 1.0))
        r[col["upper"]] = format_value(max(upper, 1.0))
        dist = space.distributions[j]
        if dist == "normal":
            r[col["dist_mu"]] = format_value(space.mu[j] / x)
            r[col["dist_sigma"]] = format_value(space.sigma[j] / x)
        elif dist == "lognormal":
            r[col["dist_mu"]] = format_value(space.mu[j] - math.log(x))
        r[col["source"]] = (f"a factor on this folder's stiffness, which is {map_text} times the "
                            f"input model's ({note}): bounds and prior divided by {map_text}, the "
                            f"same absolute range as the calibration; was: {was}")
    return header, rows


def row_settings(space, result):
    """``row_note`` of :func:`~segment.core.save.save_parameters`: the calibrated parameters
    that set a row, ``"l0_ALL = 18.475; stiffness_ALL = 1.19991"``, in the space's order."""
    by_key: dict[str, list[str]] = {}
    for j, name in enumerate(space.names):
        if result.x[j] == result.nominal[j]:
            continue
        for kind, key in space.targets[j]:
            by_key.setdefault(f"{kind}:{key}", []).append(
                f"{name} = {format_value(result.x[j])}")

    def row_note(table: str, row) -> str:
        column = _ROW_KEY.get(table)
        if column is None or column not in row:
            return ""
        return "; ".join(by_key.get(f"{_KINDS[table]}:{row[column]}", []))

    return row_note
