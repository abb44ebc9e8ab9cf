"""What the population form's posterior elements can carry in axial rotation: the ceiling
behind the population's intact / posterior-removed ratio (issue 32).

Moroney et al. 1988 measured an intact / posterior-removed rotation of 0.36 in axial rotation
(AR) and 0.49 in lateral bending (LB) at 1.8 N m (``data/calibration_targets.csv``); a new
laboratory's population predicts about 0.9 and 0.7. This module measures why, on the median
member of each laboratory (every parameter at its laboratory's median,
``data/population/hyperparameters.csv`` column ``median_<laboratory>``: not one of the drawn
members), as calibrated and with the parameters of the posterior elements moved to the stiff
ends of their ranges (:data:`POSTERIOR_STIFF`: no facet gap, the least slack capsules and
FL/ISL, the largest force factor of the posterior ligaments). The disc keeps its calibrated
factors, so the posterior-removed rotation, which Moroney measured and the calibration fits,
stays what it is; only what the posterior elements add changes.

For each member and setting (:func:`ceiling_table`, columns :data:`CEILING_COLUMNS`): the
parameters moved, the LB and AR ratios (intact / posterior-removed at 1.8 N m), the AR change
after bilateral 100 % facetectomy, the AR with both capsules cut (state ``capsulotomy``: the
facets, FL and ISL kept) as a fraction of the posterior-removed AR, and at 1.8 N m in AR
intact the coupled lateral bending (phi_x, signed) and the force of the more loaded facet.

Why the facets carry little (the model's geometry, ``data/facets.csv``): both facet faces
have the same inclination and lie in one plane (:func:`facets_coplanar`), so a rotation about
their common normal (axial rotation with coupled lateral bending) slides both faces within
it. Nothing here is fitted: these are predictions of the calibrated form.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from segment.studies.calibration.hierarchical_settings import (
    MORONEY,
    NEW_LAB,
    NIGHTINGALE,
    default_form_path,
)
from segment.studies.curves import MODES, mode_load
from segment.studies.forms import load_form
from segment.studies.paths import solve_packed
from segment.studies.population_tables import _rotation_at, member_table

__all__ = ["CEILING_COLUMNS", "COPLANAR_TOL", "LAB_MEMBERS", "POSTERIOR_STIFF",
           "ceiling_table", "facets_coplanar", "settings"]

LAB_MEMBERS = ((NEW_LAB, "new laboratory"), (MORONEY, "Moroney 1988"),
               (NIGHTINGALE, "Nightingale 2002"))
"""The members of the table: the median parameter set of each laboratory (column
``median_<name>`` of ``hyperparameters.csv``; ``new``: ``median_new_lab``)."""
POSTERIOR_STIFF = (("facet_gap", "lower"), ("ref_strain_CL", "upper"),
                   ("ref_strain_FL_ISL", "upper"), ("stiffness_posterior", "upper"))
"""The population form's parameters of the posterior elements and the end of each one's range
(``data/forms/population/space.csv``) where those elements are stiffest: no facet gap; the
capsules and FL/ISL at their largest reference strain (the least slack); the largest force
factor of FL, ISL and both CL."""
CEILING_COLUMNS = ("member", "setting", "facet_gap_mm", "ref_strain_CL", "ref_strain_FL_ISL",
                   "stiffness_posterior", "ratio_LB", "ratio_AR", "facetectomy_100_AR_pct",
                   "capsules_cut_AR_fraction", "coupled_LB_deg", "facet_force_N")
MOMENT_NM = 1.8
"""Moroney's moment (the ratios' and the coupled motion's)."""
COPLANAR_TOL = 1e-9
"""The sine of the angle between the C6 facet normals, and the distance [mm] of one face's
centre from the other's plane, below which the faces lie in one plane."""


def facets_coplanar(model) -> bool:
    """Whether the C6 faces of the model's facets lie in one plane (parallel normals, each
    centre in the other's plane); False with fewer than two facets."""
    faces = [f.disc_c6 for f in model.facets]
    if len(faces) < 2:
        return False
    n0, c0 = np.asarray(faces[0].normal, float), np.asarray(faces[0].center, float)
    for f in faces[1:]:
        n, c = np.asarray(f.normal, float), np.asarray(f.center, float)
        if np.linalg.norm(np.cross(n0, n)) > COPLANAR_TOL or abs(n0 @ (c - c0)) > COPLANAR_TOL:
            return False
    return True


def settings(space) -> tuple[tuple[str, Mapping[str, float]], ...]:
    """The settings of each member: as calibrated; no facet gap; the capsules' reference
    strain at the upper end of its range; every parameter of :data:`POSTERIOR_STIFF` at its
    stiff end."""
    def end(name, side):
        j = space.names.index(name)
        return float(space.lower[j] if side == "lower" else space.upper[j])

    stiff = {name: end(name, side) for name, side in POSTERIOR_STIFF}
    cl = stiff["ref_strain_CL"]
    return (("as calibrated", {}), ("facet gap 0", {"facet_gap": stiff["facet_gap"]}),
            (f"capsules at reference strain {cl:+g}", {"ref_strain_CL": cl}),
            ("every posterior parameter at its stiff end", stiff))


def _median_column(lab: str) -> str:
    return "median_new_lab" if lab == NEW_LAB else f"median_{lab}"


def _coupling(m) -> tuple[float, float]:
    """Coupled lateral bending phi_x [deg] (from the unloaded pose) and the force of the
    more loaded facet [N] at the equilibrium of 1.8 N m in AR."""
    F = mode_load("axial-rotation", [MOMENT_NM / 3, 2 * MOMENT_NM / 3, MOMENT_NM])
    sol = solve_packed(tuple(x[None] for x in m._packed[:3]), F, pts=m._packed[3])
    if not sol.converged[0, -1]:
        return np.nan, np.nan
    lb_dof, _ = MODES["lateral-bending"]
    coupled = float(np.degrees(sol.displacement[0, -1, lb_dof]))   # from the unloaded pose
    force = m.state(sol.q[0, -1]).facet_table()["force_N"].to_numpy(float)   # at the pose
    return coupled, float(force.max()) if force.size else 0.0


def ceiling_table(model, hyper: pd.DataFrame, *, form=None) -> pd.DataFrame:
    """One row per laboratory median member (:data:`LAB_MEMBERS`) and setting
    (:func:`settings`), columns :data:`CEILING_COLUMNS`. ``hyper``: the population's
    ``hyperparameters.csv``; ``form``: the population form (default
    ``data/forms/population/``)."""
    form = load_form(default_form_path() if form is None else form)
    names = list(form.space.names)
    h = hyper.set_index("name")
    missing = [n for n in names if n not in h.index]
    if missing:
        raise ValueError(f"hyperparameters.csv: no row for {', '.join(missing)} of the "
                         f"population form's space")
    rows, P = [], []
    for lab, label in LAB_MEMBERS:
        base = h.loc[names, _median_column(lab)].to_numpy(float)
        for setting, change in settings(form.space):
            p = base.copy()
            for k, v in change.items():
                p[names.index(k)] = v
            P.append(p)
            rows.append({"member": label, "setting": setting})
    P = np.array(P)
    t = member_table(None, model, P, lab="ceiling", form=form, ramps=False)
    fm = form.model(model)
    for i, row in enumerate(rows):
        m = form.space.apply(fm, P[i])
        alone = _rotation_at(m.with_state("capsulotomy"), "axial-rotation")
        removed = t.loc[i, "posterior-removed_axial-rotation_deg"]
        lb, force = _coupling(m)
        row.update(facet_gap_mm=P[i, names.index("facet_gap")],
                   ref_strain_CL=P[i, names.index("ref_strain_CL")],
                   ref_strain_FL_ISL=P[i, names.index("ref_strain_FL_ISL")],
                   stiffness_posterior=P[i, names.index("stiffness_posterior")],
                   ratio_LB=t.loc[i, "ratio_lateral-bending"],
                   ratio_AR=t.loc[i, "ratio_axial-rotation"],
                   facetectomy_100_AR_pct=t.loc[i, "facetectomy_100_AR_pct"],
                   capsules_cut_AR_fraction=alone / removed, coupled_LB_deg=lb,
                   facet_force_N=force)
    return pd.DataFrame(rows, columns=CEILING_COLUMNS)

