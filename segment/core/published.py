"""The published model and load cases: :func:`c5c6` and :data:`LOAD_CASES`.

The C5-C6 segment of Kecskemethy, Lange and Grabner (DETC2000/MECH-6821, Tables 1-4) built
from the packaged CSV tables (or a folder of the same tables), and the nine Moroney load cases
of ``data/load_cases.csv``. The package root offers both as ``segment.c5c6`` and
``segment.LOAD_CASES``; inside the package, the command line and the report import them from
here (nothing inside the package imports the root).
"""

from __future__ import annotations

from types import MappingProxyType

from segment.core.io import load_parameters
from segment.core.model import Segment

__all__ = ["LOAD_CASES", "c5c6"]

LOAD_CASES = MappingProxyType(load_parameters().load_cases)
"""The nine Moroney load cases by name (read from ``data/load_cases.csv``)."""


def c5c6(*, ligaments=True, facets=True, data_dir=None, strict=True, state=None) -> Segment:
    """The published C5-C6 model.

    Parameters
    ----------
    ligaments : bool or sequence of str
        True for all six, False for none, or the names to keep, e.g. ``("ALL", "PLL")``
        for the segment with the posterior elements removed.
    facets : bool
        Include the two facet joints.
    data_dir : str or path-like, optional
        A folder with the same CSV tables as ``data/`` (default: the packaged tables).
    strict : bool
        False turns values outside their plausible range into warnings (see
        :func:`segment.core.io.load_parameters`).
    state : str or sequence of str, optional
        Clinical state(s) to apply (``"laminectomy"``, ``"laminectomy+facetectomy-right-100"``,
        ...; :meth:`Segment.with_state`), read from ``data_dir/states.csv`` when that file
        exists, else from the packaged ``data/states.csv``.
    """
    if not isinstance(facets, bool):
        raise TypeError(f"facets must be True or False, got {facets!r}")
    if not (isinstance(ligaments, bool) or ligaments is None):
        names = (ligaments,) if isinstance(ligaments, str) else ligaments
        if not (isinstance(names, (tuple, list)) and all(isinstance(n, str) for n in names)):
            raise TypeError(f"ligaments must be True, False or a sequence of ligament names "
                            f"(str), got {ligaments!r}")
    p = load_parameters(data_dir, strict=strict)
    model = Segment(reference=p.reference, disc=p.disc, ligaments=p.ligaments,
                    facets=p.facets if facets else (), contact_law=p.contact_law,
                    inertia=p.inertia["C5"])
    if ligaments is False or ligaments is None:
        model = model.replace(ligaments=())
    elif ligaments is not True:
        model = model.with_ligaments(names)
    if state is not None:
        model = model.with_state(state, data_dir=data_dir, strict=strict)
    return model
