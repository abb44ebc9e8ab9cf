"""The record :func:`segment.simulate` returns: the time history and the run's statistics."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from segment.core.model import Segment

__all__ = ["SimulationResult"]


@dataclass(frozen=True, eq=False)
class SimulationResult:
    """Outcome of :func:`simulate`.

    Attributes
    ----------
    t : ndarray, shape (n,)
        Output times [s].
    q, qd : ndarray, shape (n, 6)
        Joint coordinates of C5 relative to C6, from the reference pose [mm, rad], and their
        rates [mm/s, rad/s] (internal units; the frame has them in mm and degrees).
    frame : pandas.DataFrame
        One row per output time (units in the column names):

        * ``t_s``; C5 relative to C6, from the reference pose of Table 1: ``x_mm``, ``y_mm``,
          ``z_mm``, ``phi_x_deg``, ``phi_y_deg``, ``phi_z_deg`` and their rates
          ``dx_mm_per_s`` ... ``dphi_z_deg_per_s``;
        * with a base excitation, the motion in space (C6 translates, its axes do not turn):
          C6's acceleration ``c6_ax_g`` ... [g], velocity ``c6_space_vx_mm_per_s`` ... and
          displacement from t = 0 ``c6_space_dx_mm`` ...; the C5 origin's velocity
          ``c5_space_vx_mm_per_s`` ... and displacement from t = 0 ``c5_space_dx_mm`` ...;
        * the load (``load_Fx_N`` ... ``load_Mz_Nmm``), the disc's generalized forces
          (``disc_x_N`` ... ``disc_phi_z_Nmm``), each ligament strip's tension and length
          (``ALL_tension_N``, ``ALL_length_mm``, ...), each facet's force and penetration;
        * the energy terms of eq. (D2) [N mm] (:mod:`segment.solvers.dynamics.energy`):
          ``kinetic_Nmm`` (T2, relative to C6), ``elastic_Nmm``, ``facet_law_energy_Nmm``,
          ``gravity_potential_Nmm``, ``work_load_Nmm``, ``work_facets_Nmm``,
          ``dissipated_Nmm``, ``work_transport_Nmm``, ``rupture_energy_Nmm`` (released by the
          strips ruptured so far), ``work_total_Nmm``; the errors ``energy_error`` (over
          E_ref) and ``e_R_eq55`` (eq. (55), over T2,max);
        * the intervertebral rotation from the pose at t = 0: ``ivr_phi_y_deg`` (sagittal,
          + flexion) and ``ivr_angle_deg`` (angle of the relative rotation).
    energy_error : float
        Largest mismatch of the kinetic energy-work balance (D2) over the run, relative to the
        largest energy term E_ref (NaN without output).
    success : bool
    message : str
    nfev, njev, nlu : int
        Integrator statistics (LSV: evaluations of the element forces; no Jacobians, no LU).
    model : Segment or None
        The model at the end: the input model with the strips that ruptured in ``ruptured``.
    events : tuple of (float, str, str)
        (t [s], ``"ruptured"``, strip name) in order.
    e_R : float
        Fritzkowski and Walczak's eq. (55) as published: ``max |T2 - T2(0) - W| / T2,max`` over
        every accepted step (NaN without motion).
    method : str
        The integrator.
    steps : int
        Accepted integrator steps.
    base : BaseExcitation or None
        The base excitation (None: C6 fixed).
    payload : Payload or None
    q_start : ndarray, shape (6,)
        The pose at t = 0 [mm, rad] (what ``q0`` resolved to).
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    frame: pd.DataFrame
    energy_error: float
    success: bool
    message: str
    nfev: int
    njev: int
    nlu: int
    model: Segment | None = None
    events: tuple = ()
    e_R: float = float("nan")
    method: str = "Radau"
    steps: int = 0
    base: object = None
    payload: object = None
    q_start: np.ndarray | None = None

    def __repr__(self) -> str:
        return (f"SimulationResult({len(self.t)} output times to t = {self.t[-1]:.4g} s, "
                f"success={self.success}, energy_error={self.energy_error:.2e}, "
                f"e_R={self.e_R:.2e})"
                if len(self.t) else f"SimulationResult(no output: {self.message})")

    def to_frame(self) -> pd.DataFrame:
        """The time history (``frame``): one row per output time."""
        return self.frame


class Piece:
    """One stretch of a simulation with one set of intact strips (between rupture events).

    ``t``, ``Y``: output times and states (q, dq/dt, energy integrals); ``t_steps``,
    ``Y_steps``: the states at every accepted integrator step (for the energy check);
    ``steps`` the (T2, mismatch) computed there already (the LSV kernel does), or None.
    """

    __slots__ = ("Y", "Y_steps", "disc_b", "fac_b", "lig_b", "model", "params", "released",
                 "steps", "t", "t_steps")

    def __init__(self, model, t, Y, params, disc_b, lig_b, fac_b, released, t_steps=None,
                 Y_steps=None, steps=None):
        self.model, self.t, self.Y, self.params = model, t, Y, params
        self.disc_b, self.lig_b, self.fac_b, self.released = disc_b, lig_b, fac_b, released
        self.t_steps, self.Y_steps, self.steps = t_steps, Y_steps, steps
