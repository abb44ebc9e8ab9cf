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
        Joint coordinates [mm, rad] and their rates [mm/s, rad/s].
    frame : pandas.DataFrame
        One row per output time: ``t_s``, q (``x_mm`` ... ``phi_z_rad``), rates (``dx_mm_s``
        ... ``dphi_z_rad_s``), the load, element forces (disc generalized forces, ligament
        tensions and lengths per strip, facet forces and penetrations) and the energy terms of
        eq. (D2) [N mm], ``rupture_energy_Nmm`` the elastic energy released by the strips
        ruptured so far.
    energy_error : float
        max_t e_R(t) of eq. (D2), relative to the largest energy term of the run (NaN
        when the energy terms were not integrated).
    success : bool
    message : str
    nfev, njev, nlu : int
        Integrator statistics.
    model : Segment or None
        The model at the end: the input model with the strips that ruptured in ``ruptured``.
    events : tuple of (float, str, str)
        (t [s], ``"ruptured"``, strip name) in order.
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

    def __repr__(self) -> str:
        return (f"SimulationResult({len(self.t)} output times to t = {self.t[-1]:.4g} s, "
                f"success={self.success}, energy_error={self.energy_error:.2e})"
                if len(self.t) else f"SimulationResult(no output: {self.message})")

    def to_frame(self) -> pd.DataFrame:
        """The time history (``frame``): one row per output time."""
        return self.frame
