"""Batch solving: solve_many == solve one at a time; failures flagged, never NaN."""

import numpy as np
import pytest

import segment
from segment.solvers.batch import random_loads, solve_many

# Both solvers stop at a scaled residual of 1e-10 (2e-9 N, 1.8e-7 N mm); the equilibria they
# reach therefore agree to far better than this.
SAME_Q_TOL = 1e-8


def test_nine_cases_match_one_at_a_time(model):
    cases = list(segment.LOAD_CASES.values())
    r = solve_many(model, cases)
    assert r.q.shape == (9, 6) and r.converged.all()
    for k, load in enumerate(cases):
        s = segment.solve(model, load)
        np.testing.assert_allclose(r.q[k], s.q, atol=SAME_Q_TOL)
    assert r.load_names == tuple(segment.LOAD_CASES)


@pytest.mark.parametrize("q0", ["predict", "reference"])
def test_random_loads_match_one_at_a_time(model, q0):
    F = random_loads(40, seed=7)
    r = solve_many(model, F, q0=q0)
    assert r.converged.all()
    for k in range(0, 40, 4):
        s = segment.solve(model, segment.Load(F[k, :3], F[k, 3:]))
        assert s.converged
        np.testing.assert_allclose(r.q[k], s.q, atol=SAME_Q_TOL)


def test_random_loads_within_twice_nominal():
    F = random_loads(500, seed=1)
    assert np.all(np.linalg.norm(F[:, :3], axis=1) <= 40.0)
    assert np.all(np.linalg.norm(F[:, 3:], axis=1) <= 3600.0)
    np.testing.assert_array_equal(F, random_loads(500, seed=1))


def test_non_converged_entries_are_flagged_not_nan(model):
    F = np.array([segment.LOAD_CASES["EXT"].as_array(), np.zeros(6)])
    r = solve_many(model, F, q0="reference", max_iterations=1)
    assert not r.converged[0]
    assert r.status[0] != 0
    assert np.all(np.isfinite(r.q)) and np.all(np.isfinite(r.residual_norm))
    df = r.frame()
    assert not df.loc[0, "converged"] and df.loc[0, "message"] != "converged"
    assert r.n_failed >= 1


def test_parameter_sets_list_and_function(model):
    cases = [segment.LOAD_CASES["FLX"], segment.LOAD_CASES["AR"]]
    stiff = model.replace(disc=model.disc.scaled(2.0))
    r = solve_many([model, stiff], cases)
    assert r.q.shape == (2, 2, 6) and r.converged.shape == (2, 2)
    np.testing.assert_allclose(r.q[1, 0], segment.solve(stiff, cases[0]).q, atol=SAME_Q_TOL)
    assert abs(r.q[1, 0, 4]) < abs(r.q[0, 0, 4])  # stiffer disc, less flexion
    g = solve_many(lambda i: [model, stiff][i], cases, n_models=2)
    np.testing.assert_array_equal(g.q, r.q)
    assert len(r.frame()) == 4


def test_input_checks(model):
    with pytest.raises(ValueError, match=r"loads must have shape \(N, 6\)"):
        solve_many(model, np.zeros((3, 5)))
    with pytest.raises(ValueError, match="n_models"):
        solve_many(lambda i: model, np.zeros((1, 6)))
    with pytest.raises(ValueError, match="q0 must be"):
        solve_many(model, np.zeros((2, 6)), q0=np.zeros((3, 6)))


def test_callers_array_unchanged(model):
    F = random_loads(5, seed=2)
    before = F.copy()
    solve_many(model, F)
    np.testing.assert_array_equal(F, before)


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"tol": "a"}, TypeError, "tol must be a real number, got str"),
    ({"tol": True}, TypeError, "tol must be a real number, got bool"),
    ({"tol": -1.0}, ValueError, "tol must be > 0"),
    ({"tol": 1e-16}, ValueError, "tol must be >= 1e-12"),
    ({"tol": 1e6}, ValueError, "tol must be <= 0.001"),
    ({"max_iterations": 1.5}, TypeError, "max_iterations must be an integer, got float"),
    ({"max_iterations": True}, TypeError, "max_iterations must be an integer, got bool"),
    ({"max_iterations": 0}, ValueError, "max_iterations must be an integer >= 1"),
    ({"max_iterations": 10**9}, ValueError, "<= 10000"),
    ({"q0": np.zeros(6) + 1e-3j}, TypeError, "q0 must be .*real numbers"),
])
def test_solve_many_checks_tolerances_like_solve(model, kwargs, error, message):
    loads = list(segment.LOAD_CASES.values())[:2]
    with pytest.raises(error, match=message):
        segment.solve_many(model, loads, **kwargs)
    with pytest.raises(error, match=message):
        segment.solve(model, loads[0], **kwargs)


def test_numpy_scalars_are_accepted_as_settings(model):
    load = segment.LOAD_CASES["FLX"]
    r = segment.solve(model, load, tol=np.float64(1e-10), max_iterations=np.int64(60))
    assert r.converged
    assert segment.solve_many(model, [load], max_iterations=np.int32(60)).converged.all()


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda m: solve_many(None, random_loads(2)), TypeError, "model must be a segment.Segment"),
    (lambda m: solve_many(m, None), ValueError, "solve_many needs loads"),
    (lambda m: solve_many(m, "FLX"), TypeError, "loads must be an"),
    (lambda m: solve_many(lambda i: m, random_loads(2), n_models=2.7), TypeError, "n_models"),
    (lambda m: solve_many(lambda i: m, random_loads(2), n_models=True), TypeError, "n_models"),
    (lambda m: solve_many(lambda i: m, random_loads(2), n_models=0), ValueError, "n_models"),
    (lambda m: solve_many(m, random_loads(2) + 0j), TypeError, "loads must be real"),
])
def test_solve_many_argument_errors_name_the_argument(model, call, error, message):
    with pytest.raises(error, match=message):
        call(model)


TEN_X_LOADS = 200
TEN_X_Q_ATOL = 1e-8     # mm / rad: the same kernel from the same start


def test_solve_many_equals_solve_at_ten_times_nominal():
    """Issue 13: at 10x nominal solve_many failed or found other equilibria where solve did
    not. Same start (the linear predictor) and the same fallback (load stepping from the
    reference pose): same statuses, same equilibria, q never NaN, every failure explained."""
    model = segment.c5c6()
    corner = np.array([-20.0, -20.0, -20.0, -1800.0, -1800.0, 1800.0])   # slides the facets off
    F = np.vstack([random_loads(TEN_X_LOADS, scale=10.0, seed=3), 8 * corner, 10 * corner])
    batch = segment.solve_many(model, F)
    assert np.all(np.isfinite(batch.q))
    singles = [segment.solve(model, segment.Load(f[:3], f[3:])) for f in F]
    np.testing.assert_array_equal(batch.status, [r.status for r in singles])
    np.testing.assert_allclose(batch.q, [r.q for r in singles], rtol=0, atol=TEN_X_Q_ATOL)
    np.testing.assert_array_equal(batch.intact, [r.intact for r in singles])
    np.testing.assert_array_equal(batch.facet_dislocated,
                                  [[f.dislocated for f in r.state.facets] for r in singles])
    for r in singles:
        if not r.converged:
            assert "at the last iterate:" in r.message or "no equilibrium found" in r.message
    # the range is really beyond the limits: flagged equilibria of both kinds occur
    assert batch.ligament_beyond_max.any() and batch.facet_dislocated.any()
    assert batch.converged.sum() > 0.9 * TEN_X_LOADS
    frame = batch.frame()
    assert frame["intact"].tolist() == batch.intact.tolist()
