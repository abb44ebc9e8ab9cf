"""Sobol indices: the estimator on the Ishigami function (known indices), equal to SALib's
own analysis, and a small study of the segment that makes physical sense."""

import math

import numpy as np
import pytest

pytest.importorskip("SALib")

from SALib.analyze import sobol as salib_analyze
from SALib.sample import sobol as salib_sample

from segment.studies.sobol import (
    analyze_sobol,
    base_samples,
    dominant_parameters,
    fig_sobol,
    sobol_study,
)

ISHIGAMI_TOL = 0.02      # N = 2^14: Monte Carlo error of the estimators ~0.01


def _ishigami_exact(a=7.0, b=0.1):
    v1 = 0.5 * (1 + b * math.pi ** 4 / 5) ** 2
    v2 = a * a / 8
    v13 = b * b * math.pi ** 8 * (1 / 18 - 1 / 50)
    v = v1 + v2 + v13
    return np.array([v1, v2, 0.0]) / v, np.array([v1 + v13, v2, v13]) / v


def test_ishigami_indices_are_recovered():
    problem = {"num_vars": 3, "names": ["x1", "x2", "x3"], "bounds": [[-math.pi, math.pi]] * 3}
    X = salib_sample.sample(problem, 1 << 14, calc_second_order=False, seed=2)
    y = np.sin(X[:, 0]) + 7.0 * np.sin(X[:, 1]) ** 2 + 0.1 * X[:, 2] ** 4 * np.sin(X[:, 0])
    s = analyze_sobol(y, 3, seed=1)
    s1, st = _ishigami_exact()
    np.testing.assert_allclose(s["S1"], s1, atol=ISHIGAMI_TOL)
    np.testing.assert_allclose(s["ST"], st, atol=ISHIGAMI_TOL)
    assert np.all(s["S1_conf"] > 0) and np.all(s["ST_conf"] < 0.1)


def test_vectorised_bootstrap_equals_salib():
    problem = {"num_vars": 4, "names": list("abcd"), "bounds": [[0, 1]] * 4}
    X = salib_sample.sample(problem, 256, calc_second_order=False, seed=5)
    y = X[:, 0] * X[:, 1] + np.exp(X[:, 2]) + 0.1 * X[:, 3] ** 2
    ref = salib_analyze.analyze(problem, y, calc_second_order=False, num_resamples=50, seed=9)
    mine = analyze_sobol(y, 4, num_resamples=50, seed=9)
    for key in ("S1", "S1_conf", "ST", "ST_conf"):
        np.testing.assert_allclose(mine[key], ref[key], rtol=1e-12, atol=1e-14)


def test_bad_output_length_is_named():
    with pytest.raises(ValueError, match=r"N \(D \+ 2\)"):
        analyze_sobol(np.arange(11.0), 3)
    with pytest.raises(ValueError, match="does not vary"):
        analyze_sobol(np.ones(10), 3)


def test_base_samples_reach_the_requested_evaluations():
    assert base_samples(100_000, 21) == 8192
    assert base_samples(1, 21) == 1
    assert base_samples(23 * 64, 21) == 64


@pytest.fixture(scope="module")
def study(model):
    return sobol_study(model, n=1500, seed=0)


def test_small_study_is_physical(study):
    df = study.indices
    assert study.n_failed == 0
    assert study.n_evaluations == study.n_base * 23
    st = df.set_index(["output", "parameter"])["ST"]
    # each disc-only direction is governed by its own disc stiffness
    assert st["LS main", "disc_y"] > 0.8
    assert st["CMP main", "disc_z"] > 0.8
    # the unloaded pose comes from the pre-stretched FL (Table 4 rounding), not the disc
    assert st["unloaded phi_y", "l0_FL"] > 0.5
    # flexion opens the facets: no facet force anywhere, so no indices
    flx = df[df.output == "FLX facet force"]
    assert flx.constant.all() and flx.ST.isna().all()
    lines = dominant_parameters(study)
    assert any(line.startswith("LS main: dominated by disc_y") for line in lines)


def test_heat_map_has_every_parameter_and_case(study):
    fig = fig_sobol(study)
    ax = fig.axes[0]
    assert len(ax.get_yticklabels()) == 21
    assert [t.get_text() for t in ax.get_xticklabels()][:2] == ["AS", "PS"]
