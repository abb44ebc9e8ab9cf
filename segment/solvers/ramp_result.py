"""The record of a load ramp: :class:`RampResult` and where it met the validity limit.

One concept: what :func:`segment.ramp` returns (the path as a table, the final model with its
ruptured strips, the failure loads, the events) and what is derived from it on demand (the
model and the equilibrium of any row). ``status`` is a :class:`~segment.core.status.Status`
(``REACHED_TO_SCALE``, ``NO_EQUILIBRIUM``, ``UNLOADED_NOT_FOUND``, ``VALIDITY_LIMIT``);
``message`` says how the ramp ended in a sentence. The validity limit is that of
:mod:`segment.core.validity` (``data/validity_limits.csv``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from segment.core.model import Segment, SegmentState
from segment.core.status import Status
from segment.core.validity import BEYOND_LIMIT, DisplacementBound
from segment.elements.loads import Load

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["RampLimit", "RampResult"]


@dataclass(frozen=True)
class RampLimit:
    """Where a ramp reached the validity limit of the model (:mod:`segment.core.validity`).

    Attributes
    ----------
    rule : str
        ``"displacement bound"`` or ``"no ligament left taut"``.
    description : str
        What was reached, e.g. ``"flexion beyond 15.4 deg from the unloaded equilibrium"``.
    source : str
        Where the bound comes from, e.g. ``"Voo, Pintar, Yoganandan and Liu 1998 (SOURCES.md
        §5, §8)"`` or ``"assumed (SOURCES.md §8)"``.
    scale : float
        Load scale at the limit (x nominal).
    row : int
        Row of :attr:`RampResult.frame` where it fired.
    reached_by : str
        ``"load increment"`` (the displacement reached the bound on the equilibrium path,
        located to ``|h - 1| <= 1e-9``) or ``"rupture of X"`` (the jump at constant load after X
        broke carried it past the bound, or left no ligament taut).
    bound : DisplacementBound or None
        The bound of rule 1 (None for rule 2).
    beyond : str
        What lies beyond, in words.
    """

    rule: str
    description: str
    source: str
    scale: float
    row: int
    reached_by: str
    bound: DisplacementBound | None = None
    beyond: str = BEYOND_LIMIT

    def text(self) -> str:
        """One line: rule, load scale, source and what lies beyond."""
        return (f"validity limit at {self.scale:.6g} x nominal ({self.description}, reached by "
                f"{self.reached_by}; {self.source}): {self.beyond}")


@dataclass(frozen=True, eq=False)
class RampResult:
    """Outcome of :func:`segment.ramp`.

    Attributes
    ----------
    frame : pandas.DataFrame
        One row per equilibrium on the path (ramp steps, and at each rupture the equilibrium
        where the strip reached F_max and the one after it broke): ``scale``, the applied load
        (``Fx_N`` ... ``Mz_Nm``), q from the reference pose of Table 1 (``x_mm`` ...
        ``phi_z_deg``), the loaded coordinate's displacement from the unloaded equilibrium
        (column :attr:`main_column`: ``main_from_unloaded_mm`` or ``main_from_unloaded_deg``;
        ``main_from_unloaded``, all NaN, for a combined load), ``within_limit`` (False for a
        row past the validity limit: the jump after the rupture that crossed it),
        ``event`` (``""``, ``"F_max: ISL"``, ``"ruptured: ISL"``, ``"dislocated: left"``,
        ``"no equilibrium"``, ``"ruptured: ALL; no equilibrium"``, ``"validity limit: ..."``)
        and ``n_ruptured`` (strips broken by that row, those of the input model included).
    model : Segment
        The final model: the input model with every strip that broke in ``ruptured``.
    q : ndarray, shape (6,)
        The last equilibrium [mm, rad].
    status : Status
        ``REACHED_TO_SCALE`` (10), ``NO_EQUILIBRIUM`` (11), ``UNLOADED_NOT_FOUND`` (12),
        ``VALIDITY_LIMIT`` (13: reached, see :attr:`limit`);
        :class:`~segment.core.status.Status`.
    message : str
    load : Load
        The nominal load (scale 1).
    first_rupture_scale, ultimate_scale : float
        Load scale at which the first strip broke, and the last scale carried when the
        segment could no longer carry the load (NaN when not reached or past the validity
        limit: not predicted).
    events : tuple of (float, str, str)
        (scale, ``"ruptured"`` or ``"dislocated"``, strip or facet name), in order.
    limit : RampLimit or None
        Where the validity limit was reached (None: not reached, or ``limits=None``).
    ruptured_at : tuple of frozenset
        Per row of :attr:`frame`, the strips broken by that row (:meth:`model_at`).
    """

    frame: pd.DataFrame
    model: Segment
    q: np.ndarray
    status: Status
    message: str
    load: Load
    first_rupture_scale: float
    ultimate_scale: float
    events: tuple[tuple[float, str, str], ...]
    limit: RampLimit | None = None
    ruptured_at: tuple[frozenset, ...] = ()

    @property
    def ok(self) -> bool:
        """True when the ramp reached ``to_scale``."""
        return self.status == Status.REACHED_TO_SCALE

    @property
    def main_column(self) -> str:
        """Name of the frame's main-displacement column."""
        return _main_column(self.load)

    @functools.cached_property
    def state(self) -> SegmentState:
        """Element forces at the last equilibrium, with the ruptured strips marked."""
        return self.model.state(self.q)

    def model_at(self, row: int) -> Segment:
        """The model of row ``row`` of :attr:`frame`: the strips broken by that row."""
        ruptured = self.ruptured_at[row]
        return self.model if ruptured == self.model.ruptured else self.model.replace(
            ruptured=ruptured)

    def result_at(self, row: int):
        """Row ``row`` of :attr:`frame` as an :class:`~segment.EquilibriumResult` (re-solved
        from its q with the strips ruptured so far; for tables and 3-D views)."""
        from segment.solvers.equilibrium import solve

        r = self.frame.iloc[row]
        q = np.concatenate([r[["x_mm", "y_mm", "z_mm"]].to_numpy(float),
                            np.radians(r[["phi_x_deg", "phi_y_deg", "phi_z_deg"]]
                                       .to_numpy(float))])
        load = self.load.scaled(float(r["scale"]), name=f"{self.load.name} x {r['scale']:.3g}")
        return solve(self.model_at(row), load, q0=q)

    def failure_loads(self) -> dict:
        """First rupture, ultimate load and validity limit as scales and as load magnitudes
        (N or N m of the main component; NaN for a combined load or when not reached), the
        rupture sequence, and the limit's rule and source (None when not reached)."""
        main = self.load.main_dof
        nominal = float("nan") if main is None else float(self.load.as_array()[main])
        unit = "N" if main is not None and main < 3 else "Nm"
        if main is not None and main >= 3:
            nominal /= 1000.0
        lim = float("nan") if self.limit is None else self.limit.scale
        return {"first_rupture_scale": self.first_rupture_scale,
                "ultimate_scale": self.ultimate_scale,
                f"first_rupture_{unit}": abs(nominal) * self.first_rupture_scale,
                f"ultimate_{unit}": abs(nominal) * self.ultimate_scale,
                "limit_scale": lim,
                f"limit_{unit}": abs(nominal) * lim,
                "limit_rule": None if self.limit is None else self.limit.description,
                "limit_source": None if self.limit is None else self.limit.source,
                "sequence": [name for _, kind, name in self.events if kind == "ruptured"]}


def _main_column(load: Load) -> str:
    main = load.main_dof
    return ("main_from_unloaded" if main is None else
            "main_from_unloaded_mm" if main < 3 else "main_from_unloaded_deg")
