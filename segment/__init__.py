"""segment: mechanics of the cervical motion segment C5-C6.

The model of Kecskemethy, Lange and Grabner (DETC2000/MECH-6821 and the companion cylinder
end-face paper): C6 is fixed, C5 moves on a 6-DOF joint, joined by the intervertebral disc
(eq. 1, Table 2), six tension-only ligaments (Tables 3 and 4) and two facet joints modelled as
regularized cylinder end-face contacts. A Newton-Raphson finder computes static equilibria.

Conventions
-----------
* Frames: C6 fixed, +x anterior, +z superior, +y = z x x (left). Ligament insertions are given
  in each vertebra's own frame.
* Units inside: mm, N, N mm, rad, s. Degrees and N m appear only at the edges (CSV headers,
  ``*_deg`` / ``*_Nm`` keyword arguments, tables and reports).
* Reference pose of C5 in C6 (Table 1): origin s0 = (-2.8, 0, 17.4) mm, R0 = Ry(-5.2 deg).
* Generalized coordinates q = (x, y, z, phi_x, phi_y, phi_z):
  p_C5 = s0 + R0 (x, y, z), R_C5 = R0 Rx(phi_x) Ry(phi_y) Rz(phi_z); q = 0 is the reference
  pose. phi_y >= 0 is flexion.
* Loads: a force through the C5 origin and a pure moment, joint-frame components, fixed in
  space. The nine cases: AS +Fx, PS -Fx, LS +Fy, TNS +Fz, CMP -Fz (20 N); LB +Mx, FLX +My,
  EXT -My, AR +Mz (1.8 N m).

Example
-------
>>> import segment
>>> model = segment.c5c6()
>>> result = segment.solve(model, segment.LOAD_CASES["FLX"])
>>> result.converged
True
"""

from __future__ import annotations

import importlib

from segment._version import __version__ as __version__
from segment.core.equilibrium_result import EquilibriumResult
from segment.core.io import LIGAMENT_NAMES, load_parameters
from segment.core.model import Segment
from segment.core.published import LOAD_CASES, c5c6
from segment.elements.contact import disc_contact
from segment.elements.disc import DOF_NAMES, DiscStiffness
from segment.elements.facet import ContactLaw, FacetJoint
from segment.elements.facet_face import FacetFace
from segment.elements.kinematics import ReferencePose
from segment.elements.ligament import Ligament, TrilinearCurve
from segment.elements.loads import Load
from segment.elements.restraint import PointRestraint
from segment.solvers.batch import BatchResult, solve_many
from segment.solvers.equilibrium import solve
from segment.solvers.ramp import ramp
from segment.solvers.ramp_result import RampResult

__all__ = [
    "DOF_NAMES",
    "LIGAMENT_NAMES",
    "LOAD_CASES",
    "BatchResult",
    "ContactLaw",
    "DiscStiffness",
    "EquilibriumResult",
    "FacetFace",
    "FacetJoint",
    "Ligament",
    "Load",
    "ParameterSpace",
    "PointRestraint",
    "RampResult",
    "ReferencePose",
    "Segment",
    "SetsResult",
    "TrilinearCurve",
    "c5c6",
    "compare_states",
    "disc_contact",
    "disc_plane_drop",
    "equilibrium_sensitivity",
    "explore",
    "load_parameters",
    "load_space",
    "ramp",
    "relax",
    "simulate",
    "sobol_study",
    "solve",
    "solve_many",
    "solve_sets",
    "uncertainty_bands",
]
# relax, simulate, disc_plane_drop (segment.solvers.dynamics) and uncertainty_bands
# (segment.studies.uncertainty) are imported on first use: they pull in scipy.integrate.

_LAZY = {"relax": "solvers.dynamics", "simulate": "solvers.dynamics",
         "disc_plane_drop": "solvers.dynamics", "uncertainty_bands": "studies.uncertainty",
         # the studies (issue 11): parameter space, parameter sets x loads, dq*/dp, Sobol
         "ParameterSpace": "studies.space", "load_space": "studies.space",
         "SetsResult": "studies.sets_result", "solve_sets": "studies.sets",
         "equilibrium_sensitivity": "studies.sensitivity", "sobol_study": "studies.sobol",
         # the explorer: a notebook widget in Jupyter, else a desktop window
         "explore": "views.launch",
         # clinical states compared (issue 23)
         "compare_states": "studies.compare"}


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(f"segment.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'segment' has no attribute {name!r}")
