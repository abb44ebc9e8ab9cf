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


def test_stiffer_posterior_elements_never_loosen_axial_rotation(table):
    """No gap and the least slack capsules can only carry more: the ratio does not rise."""
    for _, g in table.groupby("member"):
        calibrated, stiffest = g.iloc[0], g.iloc[-1]
        assert stiffest["facet_gap_mm"] == 0.0
        assert stiffest["ratio_AR"] <= calibrated["ratio_AR"] + 1e-9
        assert stiffest["ratio_LB"] <= calibrated["ratio_LB"] + 1e-9


def test_facets_alone_carry_a_share_between_nothing_and_everything(table):
    frac = table["facets_alone_AR_fraction"]
    assert ((frac > 0.0) & (frac <= 1.0 + 1e-9)).all()
    assert (table["facet_force_N"] >= 0.0).all()
    # the ratios are intact / posterior-removed: positive, and at most 1 + rounding
    assert ((table["ratio_AR"] > 0) & (table["ratio_AR"] <= 1.0 + 1e-9)).all()


def test_a_hyperparameter_file_without_a_parameter_is_refused(model, hyper):
    with pytest.raises(ValueError, match="facet_gap"):
        ceiling_table(model, hyper[hyper["name"] != "facet_gap"])
