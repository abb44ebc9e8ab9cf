"""The record of one static solve: :class:`EquilibriumResult` and its iteration log.

One concept: what :func:`segment.solve` returns (scipy.optimize-style: ``x``/``q``,
``success``/``converged``, ``status``, ``message``, iteration log) and what is derived from it
on demand (element forces, failure limits, tables). ``status`` is a
:class:`~segment.core.status.Status`, ``message`` starts from its text. The result holds the
model it was solved on and asks it for element states; it names the model's class in type
annotations only (the :class:`~segment.core.model.Segment` imports the solve that builds it,
:mod:`segment.core.solve`: no import circle).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from segment.core.status import Status
from segment.elements.disc import DOF_NAMES
from segment.elements.kinematics import cardan_xyz, pose
from segment.elements.loads import Load

if TYPE_CHECKING:
    import pandas as pd

    from segment.core.model import Segment, SegmentState

__all__ = ["EquilibriumResult", "IterationRecord"]


@dataclass(frozen=True)
class IterationRecord:
    """One Newton step: load fraction, scaled residual norm before the step, step length."""

    iteration: int
    load_fraction: float
    residual_norm: float
    step_length: float


@dataclass(frozen=True, eq=False)
class EquilibriumResult:
    """Outcome of :func:`segment.solve`.

    Attributes
    ----------
    q : ndarray, shape (6,)
        Joint coordinates (x, y, z [mm], phi_x, phi_y, phi_z [rad]); this is the displacement
        from the reference pose in the joint frame. When not converged: the iterate with the
        smaller full-load residual of the direct Newton's last iterate and the last load step's
        equilibrium (a partial-load q only when it is the better full-load answer).
    converged : bool
        Numerically converged: True for status 0 and 6.
    status : Status
        0 converged, 1 iteration limit, 2 line search failed, 3 load stepping failed,
        4 non-finite residual, 5 singular Jacobian, 6 converged beyond the failure limits
        (an equilibrium with a dislocated facet, a ligament past eps_max or a model with
        ruptured strips: see :attr:`limit_flags`); :class:`~segment.core.status.Status`.
        Ligaments cut and facets removed in a clinical state are no failure
        (:attr:`clinical_state`).
    message : str
    iterations : int
        Newton steps taken, over all load steps.
    residual_norm : float
        ``max(|F_i| / 20 N, |M_i| / 1800 N mm)`` at ``q``.
    load : Load
    load_steps : int
        Number of load increments used (1 when the full load converged directly).
    history : tuple of IterationRecord
        Built on first access from ``log``.
    q_unloaded : ndarray or None
        The unloaded equilibrium of the same model (None if it did not converge).
    model : Segment
    log : ndarray, shape (n, 3)
        Per Newton step: load fraction, scaled residual norm before the step, step length
        (0 when the line search failed).
    """

    q: np.ndarray
    converged: bool
    """Numerically converged (status 0 or 6): the residual is below ``tol``. Whether the
    equilibrium is physiological is :attr:`intact`."""
    status: Status
    iterations: int
    residual_norm: float
    load: Load
    load_steps: int
    q_unloaded: np.ndarray | None
    model: Segment
    log: np.ndarray = field(repr=False)
    """Raw iteration log, shape (n, 3): load fraction, residual norm, step length per step."""

    def __repr__(self) -> str:
        name = self.load.name
        if self.model.clinical:          # a clinical state: say which
            name = f"{name} [{self.model.clinical_label}]"
        if not self.converged:
            return f"EquilibriumResult({name}: {self.message})"
        d = np.concatenate([self.q[:3], np.degrees(self.q[3:])])
        shown = ", ".join(f"{v + 0.0:.4g}" for v in np.round(d, 6))
        if not self.intact:     # past a failure limit: say which first, short
            flags = "; ".join(self.limit_flags)
            flags = flags if len(flags) <= 80 else flags[:77] + "..."
            return f"EquilibriumResult({name}: converged BEYOND LIMITS ({flags}))"
        return (f"EquilibriumResult({name}: converged in {self.iterations} "
                f"iterations; q = [{shown}] mm, deg from the reference pose)")

    @property
    def clinical_state(self) -> str:
        """The model's clinical state (``Segment.clinical_label``): ``"intact"`` or the
        states applied, e.g. ``"laminectomy"`` (:mod:`segment.core.states`)."""
        return self.model.clinical_label

    @functools.cached_property
    def message(self) -> str:
        """One line: how the solve ended, and which failure limits ``q`` is past."""
        flags = "; ".join(self.limit_flags)
        if self.converged:
            text = (f"converged in {self.iterations} iterations"
                    + (f" over {self.load_steps} load steps" if self.load_steps > 1 else "")
                    + f" (scaled residual {self.residual_norm:.1e})")
            return text + (f", beyond the failure limits: {flags}" if flags else "")
        text = (f"did not converge: {self.status.text} after {self.iterations} "
                f"iterations (scaled residual {self.residual_norm:.1e})")
        if flags:
            return text + f"; at the last iterate: {flags}"
        return text + "; no equilibrium found (the segment is intact at the last iterate)"

    @functools.cached_property
    def limit_flags(self) -> tuple[str, ...]:
        """The failure limits the segment is past at ``q`` (empty when intact).

        Entries like ``"facet left dislocated"`` (:mod:`segment.elements.contact`, item 9) and
        ``"ligament FL beyond eps_max (strain 0.71 > 0.58)"`` (point C of Table 3). Static
        solves are history-free: a ligament past eps_max is flagged, not ruptured.
        """
        st = self.state
        flags = [f"facet {f.side} dislocated" for f in st.facets if f.dislocated]
        # one state per strip (segment.ligament strips); a strip shares its ligament's eps_max
        eps_max = {lig.name: float(lig.curve.strain[2]) for lig in self.model.ligaments}
        for s in st.ligaments:
            if s.cut == 1.0:   # removed surgically (a clinical state): no failure
                continue
            if s.ruptured:     # broken on a ramp (segment.ramp): carries nothing
                flags.append(f"ligament {s.name} ruptured")
            elif s.beyond_max:
                flags.append(f"ligament {s.name} beyond eps_max (strain {s.strain:.2f} > "
                             f"{eps_max[s.ligament or s.name]:.2f})")
        return tuple(flags)

    @property
    def intact(self) -> bool:
        """No facet dislocated, no ligament past eps_max and none ruptured at ``q`` (a
        ligament cut in a clinical state is no failure: see :attr:`clinical_state`)."""
        return not self.limit_flags

    @functools.cached_property
    def history(self) -> tuple[IterationRecord, ...]:
        """One :class:`IterationRecord` per Newton step (built on first access)."""
        return tuple(IterationRecord(k + 1, float(row[0]), float(row[1]), float(row[2]))
                     for k, row in enumerate(self.log))

    @functools.cached_property
    def state(self) -> SegmentState:
        """Element forces at ``q`` (disc, ligaments, facets)."""
        return self.model.state(self.q)

    @property
    def displacement_from_reference(self) -> np.ndarray:
        """``q``: displacement from the reference pose in the joint frame [mm, rad]."""
        return self.q.copy()

    @property
    def displacement_from_unloaded(self) -> np.ndarray | None:
        """``q - q_unloaded`` [mm, rad], or None when the unloaded solve failed."""
        return None if self.q_unloaded is None else self.q - self.q_unloaded

    @property
    def pose_c6(self) -> tuple[np.ndarray, np.ndarray]:
        """Absolute pose of C5 in C6: origin [mm] and rotation matrix C5 -> C6."""
        return pose(self.q, self.model.reference)

    @property
    def absolute(self) -> np.ndarray:
        """Absolute C5 pose in C6: origin (x, y, z) [mm] and Cardan x-y-z angles [rad]."""
        p, R = self.pose_c6
        return np.concatenate([p, cardan_xyz(R)])

    def table(self, *, convention: str = "klg") -> pd.DataFrame:
        """Displacements in mm and degrees: one row per coordinate, three views as columns.

        ``convention="isb"``: the joint coordinate system of the ISB for the spine (Wu et al.
        2002) instead of the model's coordinates (:func:`segment.core.conventions.result_table`).
        """
        import pandas as pd  # lazy: `import segment` stays light

        if convention != "klg":
            from segment.core.conventions import result_table

            return result_table(self, convention=convention)

        def conv(v):
            return None if v is None else np.concatenate([v[:3], np.degrees(v[3:])])

        units = ["mm"] * 3 + ["deg"] * 3
        from_unloaded = conv(self.displacement_from_unloaded)
        return pd.DataFrame({
            "coordinate": DOF_NAMES,
            "unit": units,
            "from_reference": conv(self.q),
            "from_unloaded": (from_unloaded if from_unloaded is not None
                              else [float("nan")] * 6),
            "absolute_in_c6": conv(self.absolute),
        })

    def to_frame(self) -> pd.DataFrame:
        """The displacement table of :meth:`table` (``to_frame`` is every result's name)."""
        return self.table()

    def to_dict(self) -> dict:
        """JSON-friendly summary (mm, degrees, N)."""
        def conv(v):
            if v is None:
                return None
            return dict(zip(DOF_NAMES, [*v[:3].tolist(), *np.degrees(v[3:]).tolist()],
                            strict=True))

        st = self.state
        return {
            "load": self.load.name,
            "clinical_state": self.clinical_state,
            "converged": self.converged,
            "status": int(self.status),
            "message": self.message,
            "intact": self.intact,
            "limit_flags": list(self.limit_flags),
            "iterations": self.iterations,
            "load_steps": self.load_steps,
            "residual_norm": self.residual_norm,
            "units": {"translation": "mm", "rotation": "deg", "force": "N",
                      "disc_force": "N for x, y, z; N mm for phi_x, phi_y, phi_z"},
            "from_reference": conv(self.q),
            "from_unloaded": conv(self.displacement_from_unloaded),
            "absolute_in_c6": conv(self.absolute),
            "ligaments": st.ligament_table().to_dict(orient="records"),
            "facets": st.facet_table().to_dict(orient="records"),
            "disc_force": dict(zip(DOF_NAMES, st.disc_force.tolist(), strict=True)),
        }
