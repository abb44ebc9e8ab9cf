"""What the OpenSim and MuJoCo writers share in writing their XML document: what goes in (the
strips that carry load, the facets, the approximations and what is left out), the header
comments, the element and number helpers, and writing the file with its record."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace
from pathlib import Path

from segment._version import __version__
from segment.core.model import Segment
from segment.export.common import (
    FACET_APPROXIMATION,
    M_PER_MM,
    NM_PER_NMM,
    ExportResult,
    FacetPlaneContact,
    LigamentRow,
    check_exportable,
    facet_contacts,
    fmt,
    ligament_rows,
)

__all__ = ["DAMPING_SI", "ExportContent", "export_content", "sub", "vec", "write_document"]

DAMPING_SI = (1.0 / M_PER_MM, NM_PER_NMM)
"""Disc damping to SI: N s/mm -> N s/m, N mm s/rad -> N m s/rad."""


@dataclass(frozen=True)
class ExportContent:
    """What a writer puts in its file: the strips that carry load, the facets (their
    approximation), the approximations flagged in the file and what is left out."""

    ligaments: tuple[LigamentRow, ...]
    facets: tuple[FacetPlaneContact, ...]
    approximations: tuple[str, ...]
    omitted: tuple[str, ...]

    def result(self, tool: str, coordinates: tuple[str, ...]) -> ExportResult:
        """The record of the file (``path`` left empty: :func:`write_document` fills it)."""
        return ExportResult(
            path="", tool=tool, coordinates=coordinates,
            ligaments=tuple(r.name for r in self.ligaments),
            facets=tuple(fc.side for fc in self.facets),
            approximations=self.approximations, omitted=self.omitted)

    def header(self, root: ET.Element, model: Segment, *, coordinates: str) -> None:
        """The comments that open the document: source, units, coordinates (``coordinates``:
        the tool's word for them), then each approximation."""
        root.append(ET.Comment(
            f" C5-C6 motion segment exported by segment {__version__} (Kecskemethy, Lange, "
            f"Grabner DETC2000/MECH-6821), clinical state {model.clinical_label}. Units: m, kg, "
            f"N, rad (converted from the model's mm, N, N mm). {coordinates} x, y, z, phi_x, "
            f"phi_y, phi_z are the model's q. "))
        for text in self.approximations:
            root.append(ET.Comment(f" {text} "))


def export_content(model: Segment, *, tool: str, no_damping: str) -> ExportContent:
    """What ``model`` exports to ``tool``, checked by
    :func:`~segment.export.common.check_exportable`; ``no_damping`` says why the tool gets no
    ligament and facet damping."""
    check_exportable(model, tool=tool)
    ligs, dropped = ligament_rows(model)
    facets = facet_contacts(model)
    return ExportContent(
        ligaments=ligs, facets=facets,
        approximations=(FACET_APPROXIMATION,) if facets else (),
        omitted=(f"ligament and facet damping ({no_damping})",
                 *(f"strip {n} (carries nothing: ruptured or cut through)" for n in dropped)))


def sub(parent, tag, text=None, **attrib) -> ET.Element:
    """A child element ``tag`` of ``parent`` with ``attrib`` (values as strings) and
    optionally ``text``."""
    e = ET.SubElement(parent, tag, {k: str(v) for k, v in attrib.items()})
    if text is not None:
        e.text = str(text)
    return e


def vec(values) -> str:
    """Numbers as one attribute or text: each read back bit for bit, space-separated."""
    return " ".join(fmt(v) for v in values)


def write_document(tree: ET.ElementTree, result: ExportResult, path, *,
                   xml_declaration: bool) -> ExportResult:
    """Write ``tree`` to ``path`` (UTF-8) and return ``result`` with the path."""
    path = Path(path)
    tree.write(path, encoding="UTF-8", xml_declaration=xml_declaration)
    return replace(result, path=str(path))
