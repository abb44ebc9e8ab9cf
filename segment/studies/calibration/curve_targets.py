"""What a curve calibration fits: one specimen's measured points, or the population's corridor.

* **Specimen** (:meth:`CurveTargets.specimen`): every point of the specimen's curves not flagged
  ``ignore`` (:mod:`segment.studies.curves`), each with the SD :data:`POINT_SD_DEG`.
* **Population** (:meth:`CurveTargets.population`): the corridor's mean per mode and moment
  level with the specimens' SD at that level (:meth:`~segment.studies.curves.CurveSet.corridor`:
  only levels where every specimen has a measured point, unless ``min_specimens``): the fit
  asks for the mean curve within its SD.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from segment.studies.curves import MODES, CurveSet, load_curves

__all__ = ["POINT_SD_DEG", "POPULATION", "CurveTargets"]

POINT_SD_DEG = 0.5
"""SD of one measured point of a specimen curve [deg]: **assumed**. The measurement error of
the rotations of Nightingale et al. 2002 is not available to us. 0.5 deg is of the order of the
smallest residuals the model forms reach on these curves (0.1-0.4 deg RMS for the best forms):
smaller would let a form's structural error dominate the priors more than the data justify.
The MAP hardly depends on it where the data dominate the priors; the posterior SDs scale with
it. The points of one curve are not independent (the processing resampled the curves at
0.1 N m), so these posterior SDs are lower bounds."""
POPULATION = "population"
"""The label of the population target (the corridor)."""


@dataclass(frozen=True, eq=False)
class CurveTargets:
    """Rotations to fit [deg], one per point.

    Attributes
    ----------
    label : str
        The specimen, or :data:`POPULATION`.
    modes : tuple of str
        Mode of each point (:data:`segment.studies.curves.MODES`).
    moment_Nm, values, sd : ndarray (n,)
        Moment level [N m], observed rotation [deg] and its SD [deg].
    sd_basis : str
        ``"assumed"`` (a specimen's points, :data:`POINT_SD_DEG`) or ``"specimens"`` (the SD
        over the specimens at the level).
    curves : CurveSet
        The curves the targets come from (whose levels carry the continuation).
    n_specimens : ndarray of int (n,)
        Specimens behind each point (1 for a specimen's own).
    """

    label: str
    modes: tuple[str, ...]
    moment_Nm: np.ndarray
    values: np.ndarray
    sd: np.ndarray
    sd_basis: str
    curves: CurveSet
    n_specimens: np.ndarray

    def __len__(self) -> int:
        return len(self.modes)

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(f"{m} {x:g} N m" for m, x in zip(self.modes, self.moment_Nm, strict=True))

    @property
    def mode_set(self) -> tuple[str, ...]:
        return tuple(m for m in MODES if m in self.modes)

    def only(self, modes) -> CurveTargets:
        """The points of the given modes."""
        modes = tuple(modes)
        keep = np.array([m in modes for m in self.modes])
        if not keep.any():
            raise ValueError(f"no target point in mode(s) {list(modes)}; the targets have "
                             f"{list(self.mode_set)}")
        return CurveTargets(label=self.label, modes=tuple(np.array(self.modes)[keep]),
                            moment_Nm=self.moment_Nm[keep], values=self.values[keep],
                            sd=self.sd[keep], sd_basis=self.sd_basis, curves=self.curves,
                            n_specimens=self.n_specimens[keep])

    def with_values(self, values) -> CurveTargets:
        """The same points with other observed values (synthetic data)."""
        v = np.array(values, dtype=float)
        if v.shape != self.values.shape or not np.all(np.isfinite(v)):
            raise ValueError(f"values must be {len(self)} finite numbers, got shape {v.shape}")
        return CurveTargets(label=self.label, modes=self.modes, moment_Nm=self.moment_Nm,
                            values=v, sd=self.sd, sd_basis=self.sd_basis, curves=self.curves,
                            n_specimens=self.n_specimens)

    @classmethod
    def specimen(cls, curves, specimen: str, *, modes=None,
                 point_sd: float = POINT_SD_DEG) -> CurveTargets:
        """The specimen's points not flagged ``ignore``, each with SD ``point_sd`` [deg]."""
        curves = load_curves(curves)
        if specimen not in curves.specimens:
            raise ValueError(f"unknown specimen {specimen!r}; the curves have "
                             f"{list(curves.specimens)}")
        if not (np.isfinite(point_sd) and point_sd > 0):
            raise ValueError(f"point_sd must be a finite number > 0, got {point_sd!r}")
        sub = curves.subset(specimens=[specimen], modes=modes)
        modes_, m, v = [], [], []
        for c in sub.curves:
            k = c.kept
            modes_ += [c.mode] * int(k.sum())
            m.append(c.moment_Nm[k])
            v.append(c.rotation_deg[k])
        values = np.concatenate(v)
        return cls(label=specimen, modes=tuple(modes_), moment_Nm=np.concatenate(m),
                   values=values, sd=np.full(values.size, float(point_sd)),
                   sd_basis="assumed", curves=sub, n_specimens=np.ones(values.size, int))

    @classmethod
    def population(cls, curves, *, modes=None, specimens=None,
                   min_specimens: int | None = None) -> CurveTargets:
        """The corridor's mean per level with the specimens' SD (module docstring)."""
        curves = load_curves(curves).subset(specimens=specimens, modes=modes)
        cor = curves.corridor(min_specimens=min_specimens)
        cor = cor[cor["n"] >= 2]
        if cor.empty:
            raise ValueError("the corridor has no level with two or more specimens: nothing "
                             "to fit")
        return cls(label=POPULATION, modes=tuple(cor["mode"]),
                   moment_Nm=cor["moment_Nm"].to_numpy(float),
                   values=cor["mean_deg"].to_numpy(float), sd=cor["sd_deg"].to_numpy(float),
                   sd_basis="specimens", curves=curves,
                   n_specimens=cor["n"].to_numpy(int))
