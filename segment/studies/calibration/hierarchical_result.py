"""The outcome of the hierarchical population fit
(:mod:`segment.studies.calibration.hierarchical`) and its predictive draws."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from segment.studies.calibration.hierarchical_priors import Hyperpriors, _inv
from segment.studies.calibration.hierarchical_settings import NEW_LAB, SPECIMEN_SD_DOF

__all__ = ["PopulationFit"]


@dataclass(frozen=True, eq=False)
class PopulationFit:
    """The calibrated hierarchy (module docstring). Arrays (D,) on the transform scales
    unless said otherwise.

    Attributes
    ----------
    names, transform : tuple of str
    a : dict
        Laboratory mean ``a_lab`` per training laboratory (those with data).
    var_a : dict
        Its posterior variance (Laplace).
    mu, var_mu : ndarray
        Posterior mean and variance of the population mean over laboratories.
    tau, tau_lab : ndarray
        Specimen SD (estimated) and laboratory SD (fixed).
    sigma_e, sigma_o : float
        Step SD (estimated) and origin SD (assumed) [deg].
    specimens : tuple of str
    z, z_sd : ndarray (n, D)
        Each specimen's MAP and Laplace SD.
    steps : DataFrame
        Every fitted step: specimen, direction, point, moment_Nm, observed_deg, fitted_deg,
        residual_deg.
    moroney : DataFrame
        Moroney's targets with the fitted laboratory mean's response and z.
    sweeps : int
    converged : bool
    message : str
    hyper : Hyperpriors
    form_path : str
    inputs : dict
        File name -> sha256 of every input.
    elapsed : float [s]
    """

    names: tuple[str, ...]
    transform: tuple[str, ...]
    a: dict
    var_a: dict
    mu: np.ndarray
    var_mu: np.ndarray
    tau: np.ndarray
    tau_lab: np.ndarray
    sigma_e: float
    sigma_o: float
    specimens: tuple[str, ...]
    z: np.ndarray
    z_sd: np.ndarray
    steps: pd.DataFrame
    moroney: pd.DataFrame
    sweeps: int
    converged: bool
    message: str
    hyper: Hyperpriors
    form_path: str
    inputs: dict = field(default_factory=dict)
    elapsed: float = 0.0

    @property
    def labs(self) -> tuple[str, ...]:
        return tuple(self.a)

    def lab_distribution(self, lab: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Mean and variance (D,) of ``z`` of a new specimen of ``lab`` (a training
        laboratory) or of a new laboratory (None or :data:`NEW_LAB`), all uncertainty
        included (laboratory mean, laboratory effect, specimen)."""
        if lab is None or lab == NEW_LAB:     # tau_lab = 0 where the parameter is shared
            return self.mu.copy(), self.var_mu + self.tau_lab ** 2 + self.tau ** 2
        if lab not in self.a:
            raise ValueError(f"unknown laboratory {lab!r}; expected one of "
                             f"{', '.join([*self.a, NEW_LAB])}")
        return self.a[lab].copy(), self.var_a[lab] + self.tau ** 2

    def draw(self, n: int, *, lab: str | None = None, seed: int = 0) -> np.ndarray:
        """``n`` parameter sets (n, D) in the space's units from the predictive distribution
        of a new specimen (:meth:`lab_distribution`), each coordinate truncated to the
        space's range by redrawing it (the same numbers on any CPU: numpy's PCG64 draws and
        scalar exp/log).

        The specimen SD is uncertain (estimated from a few specimens): each member draws its
        own ``tau_j^2 = nu tau_j^2 / chi2_nu`` with ``nu`` = specimens + the prior's degrees
        of freedom (the scaled inverse chi-square of the estimate), so the predictive has
        the heavier tails of a Student t, not a normal's."""
        mean, _ = self.lab_distribution(lab)
        new = lab is None or lab == NEW_LAB
        base = (self.var_mu + self.tau_lab ** 2) if new else self.var_a[lab]
        nu = len(self.specimens) + SPECIMEN_SD_DOF
        rng = np.random.default_rng(seed)
        lo, hi = self.hyper.z_lower, self.hyper.z_upper
        Z = np.empty((int(n), len(mean)))
        for i in range(int(n)):
            chi = rng.chisquare(nu, size=len(mean))
            for j in range(len(mean)):
                sd = math.sqrt(float(base[j]) + nu * float(self.tau[j]) ** 2 / float(chi[j]))
                for _ in range(1000):
                    v = float(mean[j]) + sd * float(rng.standard_normal())
                    if lo[j] <= v <= hi[j]:
                        break
                else:
                    v = min(max(v, lo[j]), hi[j])
                Z[i, j] = v
        return self.hyper.to_p(Z)

    def hyper_table(self) -> pd.DataFrame:
        """One row per parameter: transform, prior of the population mean (m0, s0), the
        laboratory means and their SDs, mu and its SD, tau (and its prior), tau_lab, each
        on the transform scale, and the medians in the parameter's unit."""
        rows = []
        for j, name in enumerate(self.names):
            row = {"name": name, "transform": self.transform[j],
                   "prior_mean": self.hyper.m0[j], "prior_sd": self.hyper.s0[j]}
            for lab in self.a:
                row[f"a_{lab}"] = self.a[lab][j]
                row[f"a_{lab}_sd"] = math.sqrt(self.var_a[lab][j])
            row.update(mu=self.mu[j], mu_sd=math.sqrt(self.var_mu[j]), tau=self.tau[j],
                       tau_se=self.tau[j] / math.sqrt(2.0 * max(1.0, self._n_eff(j))),
                       tau_prior=self.hyper.tau0[j], tau_lab=self.tau_lab[j])
            for lab in self.a:
                row[f"median_{lab}"] = _inv(self.transform[j], float(self.a[lab][j]),
                                            self.hyper.lower[j], self.hyper.upper[j])
            row["median_new_lab"] = _inv(self.transform[j], float(self.mu[j]),
                                         self.hyper.lower[j], self.hyper.upper[j])
            rows.append(row)
        return pd.DataFrame(rows)

    def _n_eff(self, j) -> float:
        """Specimens that inform parameter j: sum of tau^2 / (tau^2 + V_ij)... the share of
        each specimen's variance the population prior does not explain."""
        t2 = float(self.tau[j]) ** 2
        return math.fsum(max(0.0, 1.0 - float(s) ** 2 / t2) for s in self.z_sd[:, j])

    def specimen_table(self) -> pd.DataFrame:
        """Each specimen's MAP (parameter units) and Laplace SD (transform scale)."""
        P = self.hyper.to_p(self.z)
        rows = []
        for i, s in enumerate(self.specimens):
            row = {"specimen": s}
            for j, name in enumerate(self.names):
                row[name] = P[i, j]
                row[f"{name}_sd_z"] = self.z_sd[i, j]
            rows.append(row)
        return pd.DataFrame(rows)
