"""Other tools' formats: the model written for OpenSim (``.osim``) and MuJoCo (MJCF), each
cross-checked in that tool.

* :mod:`segment.export.common`: what both writers share: SI units, the disc and ligament laws
  as piecewise-linear functions, the facet approximation, the export record, and a Newton
  solver with a finite-difference Jacobian that finds a static equilibrium from any tool's
  residual.
* :mod:`segment.export.document`: what both XML writers share in writing the file: what goes
  in (strips, facets, approximations, what is left out), the header comments, the element
  helpers and the write with its record.
* :mod:`segment.export.osim`: the OpenSim 4.6 model (``write_osim``) and its equilibrium found
  by OpenSim (``osim_equilibrium``).
* :mod:`segment.export.mjcf`: the MuJoCo model (``write_mjcf``) and its equilibrium found by
  MuJoCo (``mjcf_equilibrium``).

The writers need neither tool (they write XML); the cross-checks import OpenSim or MuJoCo,
installed by the extras ``opensim`` and ``mujoco``. ``docs/export.md`` says what is exact,
what is approximated (the facet contact) and by how much.
"""
