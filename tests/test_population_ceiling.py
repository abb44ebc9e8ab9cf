"""What the population form's posterior elements can carry in axial rotation
(segment/studies/population_ceiling.py): the coplanarity of the facets, and the ceiling table
on the committed population."""

import numpy as np
import pandas as pd
import pytest

import segment
from segment.core.io import data_dir
from segment.studies.population_ceiling import (
    CEILING_COLUMNS,
    LAB_MEMBERS,
    ceiling_table,
    facets_coplanar,
)


@pytest.fixture(scope="module")
def hyper():
    return pd.read_csv(data_dir() / "population" / "hyperparameters.csv")


@pytest.fixture(scope="module")
def table(model, hyper):
    return ceiling_table(model, hyper)


def test_the_published_facets_lie_in_one_plane_and_a_tilted_one_does_not(model, data_copy):
    assert facets_coplanar(model)
    facets = pd.read_csv(data_copy / "facets.csv")
    facets.loc[facets["side"] == "right", "inclination_deg"] += 5.0
    facets.to_csv(data_copy / "facets.csv", index=False)
    assert not facets_coplanar(segment.c5c6(data_dir=data_copy))
    assert not facets_coplanar(segment.c5c6(facets=False))


def test_the_table_has_every_member_and_setting_and_finite_values(table):
    assert tuple(table.columns) == CEILING_COLUMNS
    assert list(table["member"].unique()) == [label for _, label in LAB_MEMBERS]
    assert (table.groupby("member").size() == 4).all()
    assert np.isfinite(table.drop(columns=["member", "setting"]).to_numpy(float)).all()


def test_stiffer_posterior_elements_never_loosen_a_segment(table, model):
    """Each setting only stiffens the posterior elements: no ratio rises above the calibrated
    one, and the last setting puts every posterior parameter at its stiff end."""
    from segment.studies.calibration.hierarchical_settings import default_form_path
    from segment.studies.forms import load_form
    from segment.studies.population_ceiling import POSTERIOR_STIFF

    space = load_form(default_form_path()).space
    for _, g in table.groupby("member"):
        calibrated = g.iloc[0]
        for _, row in g.iloc[1:].iterrows():
            assert row["ratio_AR"] <= calibrated["ratio_AR"] + 1e-9
            assert row["ratio_LB"] <= calibrated["ratio_LB"] + 1e-9
        stiffest = g.iloc[-1]
        column = {"facet_gap": "facet_gap_mm"}
        for name, side in POSTERIOR_STIFF:
            j = space.names.index(name)
            end = space.lower[j] if side == "lower" else space.upper[j]
            assert stiffest[column.get(name, name)] == end


def test_cutting_the_capsules_loosens_a_segment_up_to_its_posterior_removed_rotation(table):
    frac = table["capsules_cut_AR_fraction"]
    assert ((frac > 0.0) & (frac <= 1.0 + 1e-9)).all()
    assert (table["facet_force_N"] >= 0.0).all()
    # the ratios are intact / posterior-removed: positive, and at most 1 + rounding
    assert ((table["ratio_AR"] > 0) & (table["ratio_AR"] <= 1.0 + 1e-9)).all()


def test_a_hyperparameter_file_without_a_parameter_is_refused(model, hyper):
    with pytest.raises(ValueError, match="facet_gap"):
        ceiling_table(model, hyper[hyper["name"] != "facet_gap"])


def test_the_facet_force_is_the_one_at_the_equilibrium(table, model, hyper):
    """The force column is the facet force of the solved pose (the absolute pose, not its
    displacement from the unloaded one): compared with segment.solve on the same member."""
    from segment.studies.calibration.hierarchical_settings import default_form_path
    from segment.studies.forms import load_form
    from segment.studies.population_ceiling import settings

    form = load_form(default_form_path())
    names = list(form.space.names)
    h = hyper.set_index("name")
    row = table.iloc[-1]                      # Nightingale, every posterior parameter stiff
    p = h.loc[names, "median_nightingale2002"].to_numpy(float).copy()
    for k, v in settings(form.space)[-1][1].items():
        p[names.index(k)] = v
    m = form.space.apply(form.model(model), p)
    result = segment.solve(m, segment.LOAD_CASES["AR"])
    assert result.converged
    force = m.state(result.q).facet_table()["force_N"].max()
    assert force == pytest.approx(row["facet_force_N"], rel=1e-6)
    assert row["facet_force_N"] > 10.0        # the stiff posterior elements load the facets
