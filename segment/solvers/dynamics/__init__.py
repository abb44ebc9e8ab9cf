"""Dynamics of C5 on C6: equations of motion, simulation, dynamic relaxation, energy checks.

The paper's MADYMO model reached each equilibrium by simulating the motion of C5 until it
settled (DETC2000/MECH-6821, "Madymo Model"); the MOBILE model solved the static equilibrium
by Newton-Raphson, 350 times faster. This subpackage is that dynamic side, built on the same
force elements as :mod:`segment.core.model`, with the base excitation and the energy check of
Fritzkowski and Walczak (2014) and the Lie-Stormer-Verlet integrator; one concept per module:

* :mod:`~segment.solvers.dynamics.forces`: generalized forces at a pose and a velocity (the
  elements of the static residual plus the paper's damping);
* :mod:`~segment.solvers.dynamics.bodies`: the moving body, C5 and an optional
  :class:`Payload`;
* :mod:`~segment.solvers.dynamics.base`: :class:`BaseExcitation`, a prescribed acceleration of
  C6 (the triangular rear-end pulse, tables);
* :mod:`~segment.solvers.dynamics.equations`: the equations of motion of C5, eq. (D1), the
  mass matrix, kinetic energy and angular momentum;
* :mod:`~segment.solvers.dynamics.radau`: their integration with scipy's ``solve_ivp``
  (Radau by default), with ligament rupture as events;
* :mod:`~segment.solvers.dynamics.lsv`: the Lie-Stormer-Verlet integrator (rotation on SO(3),
  exact momentum), explicit and implicit: one step and the run; its free rotation and
  :func:`free_rigid_body` in :mod:`~segment.solvers.dynamics.lsv_rotation`, the rotation-group
  maths in :mod:`~segment.solvers.dynamics.so3`, its state and the coupling to the joint
  coordinates in :mod:`~segment.solvers.dynamics.lsv_state`;
* :mod:`~segment.solvers.dynamics.energy`: the kinetic energy-work bookkeeping, eq. (D2), and
  e_R of eq. (55);
* :mod:`~segment.solvers.dynamics.result`: :class:`SimulationResult`;
* :mod:`~segment.solvers.dynamics.simulate`: :func:`simulate`, the entry point;
* :mod:`~segment.solvers.dynamics.relax`: :func:`relax`, dynamic relaxation;
* :mod:`~segment.solvers.dynamics.disc_drop`: the cylinder paper's disc-on-plane example;
* :mod:`~segment.solvers.dynamics.plots`: figures of a simulation (matplotlib).

Every name of the former single module ``segment.solvers.dynamics`` (and of its 0.2 path
``segment.solvers.dynamics``) is importable from here.
"""

from __future__ import annotations

from segment.solvers.dynamics.base import G_MM_S2, MAX_BASE_G, MAX_PULSE_S, BaseExcitation
from segment.solvers.dynamics.bodies import KG_TO_T, Payload
from segment.solvers.dynamics.disc_drop import (
    DiscPlaneResult,
    _disc_plane_rhs,
    disc_plane_drop,
    plot_disc_plane,
)
from segment.solvers.dynamics.energy import _energy_columns, _history_rows
from segment.solvers.dynamics.equations import (
    _N_ENERGY,
    GRAVITY_MM_S2,
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
from segment.solvers.dynamics.lsv import DEFAULT_DT, LSV_VARIANTS, MAX_STEPS
from segment.solvers.dynamics.lsv_rotation import free_rigid_body
from segment.solvers.dynamics.plots import plot_simulation
from segment.solvers.dynamics.radau import _report_time
from segment.solvers.dynamics.relax import _SCALE, RELAX_TOL, RelaxationResult, relax
from segment.solvers.dynamics.result import SimulationResult
from segment.solvers.dynamics.simulate import simulate

__all__ = [
    "DEFAULT_DT",
    "GRAVITY_MM_S2",
    "G_MM_S2",
    "LSV_VARIANTS",
    "MAX_BASE_G",
    "MAX_PULSE_S",
    "MAX_STEPS",
    "RELAX_TOL",
    "BaseExcitation",
    "DiscPlaneResult",
    "Payload",
    "RelaxationResult",
    "SimulationResult",
    "angular_momentum",
    "disc_plane_drop",
    "free_rigid_body",
    "kinetic_energy",
    "mass_matrix",
    "plot_disc_plane",
    "plot_simulation",
    "relax",
    "simulate",
]

# the former module's private names, for code (and tests) that reached into it
_PRIVATE = (_N_ENERGY, _SCALE, KG_TO_T, RATE_STEP, _contact_energy, _cross3, _damping_arrays,
            _disc_plane_rhs, _element_forces, _energy_columns, _history_rows, _inertia_array,
            _initial, _jac, _load_function, _re, _report_time, _rhs, _rigid_body,
            _trilinear_energy)
