"""The sections of the validation report, one module each, in the order they appear.

A section module has ``KEY`` (how other sections refer to it), ``TITLE`` and
``write(rep, study)``; :func:`segment.report.build.build_report` numbers them in this order, so
a new section is a new module and one entry in :data:`SECTIONS`. Text refers to another
section by ``study.section(KEY)``, never by a typed number.
"""

from segment.report.sections import (
    agreement,
    calibration,
    clinical,
    curves,
    displacements,
    failure,
    forces,
    overview,
    population,
    references,
    sensitivity,
    solver,
    uncertainty,
    unloaded,
)

SECTIONS = (overview, displacements, agreement, curves, forces, unloaded, sensitivity, solver,
            uncertainty, failure, clinical, calibration, population, references)
