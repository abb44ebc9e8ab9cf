"""Dynamics of C5 on C6: equations of motion, simulation, dynamic relaxation, energy checks.

The paper's MADYMO model reached each equilibrium by simulating the motion of C5 until it
settled (DETC2000/MECH-6821, "Madymo Model"); the MOBILE model solved the static equilibrium
by Newton-Raphson, 350 times faster. This subpackage is that dynamic side, built on the same
force elements as :mod:`segment.model`, one concept per module:

* :mod:`~segment.solvers.dynamics.forces`: generalized forces at a pose and a velocity (the
  elements of the static residual plus the paper's damping);
* :mod:`~segment.solvers.dynamics.equations`: the equations of motion of C5, eq. (D1), the
  mass matrix, kinetic energy and angular momentum;
* :mod:`~segment.solvers.dynamics.radau`: their integration with scipy's ``solve_ivp``
  (Radau by default), with ligament rupture as events;
* :mod:`~segment.solvers.dynamics.energy`: the kinetic energy-work bookkeeping, eq. (D2);
* :mod:`~segment.solvers.dynamics.result`: :class:`SimulationResult`;
* :mod:`~segment.solvers.dynamics.simulate`: :func:`simulate`, the entry point;
* :mod:`~segment.solvers.dynamics.relax`: :func:`relax`, dynamic relaxation;
* :mod:`~segment.solvers.dynamics.disc_drop`: the cylinder paper's disc-on-plane example.

Every name of the former single module ``segment.solvers.dynamics`` (and of its 0.2 path
``segment.dynamics``) is importable from here.
"""

from __future__ import annotations

from segment.solvers.dynamics.disc_drop import (
    DiscPlaneResult,
    _disc_plane_rhs,
    disc_plane_drop,
    plot_disc_plane,
)
from segment.solvers.dynamics.energy import _energy_columns, _history_frame, _history_rows
from segment.solvers.dynamics.equations import (
    _N_ENERGY,
    GRAVITY_MM_S2,
    KG_TO_T,
    _cross3,
    _inertia_array,
    _initial,
    _jac,
    _rhs,
    _rigid_body,
    angular_momentum,
    kinetic_energy,
    mass_matrix,
)
from segment.solvers.dynamics.forces import (
    RATE_STEP,
    _contact_energy,
    _damping_arrays,
    _element_forces,
    _load_function,
    _re,
    _trilinear_energy,
)
from segment.solvers.dynamics.radau import (
    _report_time,
    _simulate_with_rupture,
    _simulate_without_rupture,
)
from segment.solvers.dynamics.relax import _SCALE, RELAX_TOL, RelaxationResult, relax
from segment.solvers.dynamics.result import SimulationResult
from segment.solvers.dynamics.simulate import simulate

__all__ = [
    "GRAVITY_MM_S2",
    "RELAX_TOL",
    "DiscPlaneResult",
    "RelaxationResult",
    "SimulationResult",
    "angular_momentum",
    "disc_plane_drop",
    "kinetic_energy",
    "mass_matrix",
    "plot_disc_plane",
    "relax",
    "simulate",
]

# the former module's private names, for code (and tests) that reached into it
_PRIVATE = (_N_ENERGY, _SCALE, KG_TO_T, RATE_STEP, _contact_energy, _cross3, _damping_arrays,
            _disc_plane_rhs, _element_forces, _energy_columns, _history_frame, _history_rows,
            _inertia_array, _initial, _jac, _load_function, _re, _report_time, _rhs,
            _rigid_body, _simulate_with_rupture, _simulate_without_rupture, _trilinear_energy)
