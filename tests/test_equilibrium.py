"""Newton-Raphson equilibrium finder: convergence, equilibrium, status, result views."""

import json

import numpy as np
import pytest

import segment
from segment.core.newton import FORCE_SCALE_N, MOMENT_SCALE_NMM
from segment.core.status import Status

MAX_NEWTON_ITERATIONS = 15      # issue target from q = 0
# Equilibrium to the solver tolerance (scaled 1e-10): 2e-9 N and 1.8e-7 N mm; allow 10x.
FORCE_TOL_N = 10 * 1e-10 * FORCE_SCALE_N
MOMENT_TOL_NMM = 10 * 1e-10 * MOMENT_SCALE_NMM


@pytest.mark.parametrize("case", list(segment.LOAD_CASES))
def test_nine_cases_converge_from_reference(model, case):
    load = segment.LOAD_CASES[case]
    r = segment.solve(model, load)
    assert r.converged, r.message
    assert r.status == 0
    assert r.iterations <= MAX_NEWTON_ITERATIONS
    res = model.residual(r.q, load)
    assert np.all(np.abs(res[:3]) < FORCE_TOL_N)
    assert np.all(np.abs(res[3:]) < MOMENT_TOL_NMM)
    assert np.all(np.isfinite(r.q))


@pytest.mark.parametrize("case", ["FLX", "EXT", "AR", "CMP"])
def test_main_displacement_has_the_sign_of_the_load(model, case):
    load = segment.LOAD_CASES[case]
    dof = load.main_dof
    r = segment.solve(model, load)
    assert np.sign(r.displacement_from_unloaded[dof]) == np.sign(load.as_array()[dof])


def test_unloaded_equilibrium_is_not_the_reference_pose(model):
    """ALL and FL are stretched at q = 0 (SOURCES.md §4), so the segment extends a little."""
    u = model.unloaded
    assert u.converged
    assert np.degrees(u.q[4]) < -0.1          # extension
    np.testing.assert_allclose(model.residual(u.q, segment.Load.zero()), 0, atol=1e-7)


def test_absolute_pose_at_reference():
    m = segment.c5c6(ligaments=False, facets=False)
    r = segment.solve(m, segment.Load.zero())
    np.testing.assert_allclose(r.absolute[:3], [-2.8, 0, 17.4], atol=1e-12)
    assert np.degrees(r.absolute[4]) == pytest.approx(-5.2)


def test_non_convergence_is_a_status_not_nan(model):
    load = segment.LOAD_CASES["EXT"]
    r = segment.solve(model, load, max_iterations=1)
    assert not r.converged
    assert r.status != 0
    assert "did not converge" in r.message
    assert np.all(np.isfinite(r.q))
    assert r.residual_norm > 1e-10


def test_large_load_converges_with_load_stepping(model):
    load = segment.LOAD_CASES["EXT"].scaled(6.0)
    r = segment.solve(model, load)
    assert r.converged, r.message
    np.testing.assert_allclose(model.residual(r.q, load)[3:], 0, atol=1e-6)


def test_warm_start_needs_fewer_iterations(model):
    load = segment.LOAD_CASES["AR"]
    cold = segment.solve(model, load)
    warm = segment.solve(model, load.scaled(1.05), q0=cold.q)
    assert warm.converged and warm.iterations < cold.iterations


def test_bad_inputs_raise_clear_errors(model):
    with pytest.raises(ValueError, match="q0 must be 6 finite numbers"):
        segment.solve(model, segment.LOAD_CASES["AS"], q0=[0, 0, 0])
    with pytest.raises(ValueError, match="q0 must be 6 finite numbers"):
        segment.solve(model, segment.LOAD_CASES["AS"], q0=[np.nan] * 6)
    with pytest.raises(TypeError, match=r"load must be a segment\.Load"):
        segment.solve(model, "AS")
    with pytest.raises(TypeError, match=r"model must be a segment\.Segment, got NoneType"):
        segment.solve(None, segment.LOAD_CASES["AS"])
    with pytest.raises(TypeError, match="tol must be a real number, got str"):
        segment.solve(model, segment.LOAD_CASES["AS"], tol="tight")
    with pytest.raises(TypeError, match="facets must be True or False"):
        segment.c5c6(facets="no")
    with pytest.raises(ValueError, match=r"load 'x': force must be finite"):
        segment.Load(np.array([np.inf, 0, 0]), np.zeros(3), "x")


def test_result_views(model):
    r = segment.solve(model, segment.LOAD_CASES["FLX"])
    t = r.table()
    assert list(t["coordinate"]) == list(segment.DOF_NAMES)
    assert t.loc[4, "from_reference"] == pytest.approx(np.degrees(r.q[4]))
    d = r.to_dict()
    json.dumps(d)                                   # serialisable
    assert d["from_reference"]["phi_y"] == pytest.approx(np.degrees(r.q[4]))
    assert {x["ligament"] for x in d["ligaments"]} == set(segment.LIGAMENT_NAMES)
    assert [f["facet"] for f in d["facets"]] == ["left", "right"]
    assert len(r.history) == r.iterations


def test_posterior_elements_removed_configuration():
    m = segment.c5c6(ligaments=("ALL", "PLL"), facets=False)
    assert [x.name for x in m.ligaments] == ["ALL", "PLL"]
    with pytest.raises(ValueError, match="unknown ligament"):
        segment.c5c6(ligaments=("ALL", "XYZ"))


def test_singular_jacobian_is_a_status_not_an_exception(disc_only):
    """A model with no stiffness in x (built around the record checks) cannot be solved."""
    from segment.core.newton import CONVERGED, SINGULAR_JACOBIAN, newton_kernel, solve_kernel
    from segment.elements.tangent import G_K_NEG, G_K_POS

    glob, lig, fac, pts = disc_only._packed
    glob = glob.copy()
    glob[G_K_POS] = glob[G_K_NEG] = 0.0        # k_x+ = k_x- = 0: dR/dx = 0
    params = (glob, lig, fac, pts)
    f = segment.LOAD_CASES["AS"].as_array()
    q, status, norm, _ = newton_kernel(params, f, np.zeros(6), 1e-10, 20, np.zeros((20, 2)))
    assert status == SINGULAR_JACOBIAN and Status(status).text == "singular Jacobian"
    q, status, norm, *_ = solve_kernel(params, f, np.zeros(6), 1e-10, 20, np.zeros((100, 3)))
    assert status != CONVERGED                   # load stepping cannot help either
    assert np.all(np.isfinite(q)) and np.isfinite(norm)


def test_records_compare_and_hash_without_raising(model):
    """Records holding arrays use identity equality: no elementwise-comparison errors."""
    flx = segment.LOAD_CASES["FLX"]
    assert flx in list(segment.LOAD_CASES.values())
    assert flx == flx and segment.Load.zero() != segment.Load.zero()
    assert len({model, model, segment.c5c6()}) == 2
    r = segment.solve(model, flx)
    assert r == r and hash(r) == hash(r)


def test_six_by_six_solve_matches_lapack():
    """The written-out elimination (solver hot path) vs numpy's LAPACK on hard matrices."""
    from segment.core.lu6 import solve6

    rng = np.random.default_rng(5)
    for k in range(500):
        J = rng.normal(size=(6, 6)) * np.array([1, 1, 1, 1e3, 1e3, 1e3])[:, None]
        if k % 3 == 0:
            J[[0, 1]] = J[[1, 0]]
            J[0, 0] = 0.0                        # forces a row swap at the first pivot
        b = rng.normal(size=6)
        x, ok = solve6(J, b)
        assert ok
        np.testing.assert_allclose(x, np.linalg.solve(J, b), rtol=1e-9, atol=1e-12)
    J = np.eye(6)
    J[3] = J[2]                                  # two equal rows: exactly singular
    _, ok = solve6(J, np.ones(6))
    assert not ok


# ------------------------------------------------------------------ failure limits (issue 13)
CORNER = np.array([-20.0, -20.0, -20.0, -1800.0, -1800.0, 1800.0])   # N, N mm: nominal


def _scaled(load, factor):
    return segment.Load(load.force * factor, load.moment * factor, f"{load.name} x{factor}")


def test_nominal_case_is_intact():
    r = segment.solve(segment.c5c6(), segment.LOAD_CASES["FLX"])
    assert r.status == 0 and r.converged and r.intact
    assert r.limit_flags == ()
    d = r.to_dict()
    assert d["intact"] is True and d["limit_flags"] == []


def test_ligament_past_eps_max_is_flagged_not_plain_converged():
    """FLX at 15x nominal: FL far past its failure strain (Table 3: eps_max = 0.21)."""
    r = segment.solve(segment.c5c6(), _scaled(segment.LOAD_CASES["FLX"], 15.0))
    assert r.converged                      # numerically converged ...
    assert r.status == Status.CONVERGED_BEYOND_LIMITS and not r.intact   # ... but not physiological
    fl = [f for f in r.limit_flags if f.startswith("ligament FL ")]
    assert len(fl) == 1 and "> 0.21" in fl[0], r.limit_flags
    assert "beyond the failure limits" in r.message and "ligament FL" in r.message
    assert r.to_dict()["intact"] is False


def test_dislocated_facet_is_flagged():
    """The corner load at 8x: both facets have slid off (issue 13: at 10x such results were
    reported 'converged' with the facets mm deep, zero force and regime 'apart')."""
    r = segment.solve(segment.c5c6(), segment.Load(8 * CORNER[:3], 8 * CORNER[3:]))
    assert r.converged and not r.intact
    assert [f.dislocated for f in r.state.facets] == [True, True]
    assert all(f.regime == "dislocated" and f.force == 0.0 for f in r.state.facets)
    assert "facet left dislocated" in r.limit_flags and "facet right dislocated" in r.limit_flags
    table = r.state.facet_table()
    assert table["dislocated"].tolist() == [True, True]


def test_failed_solve_says_why():
    r = segment.solve(segment.c5c6(), segment.Load(4.7 * CORNER[:3], 4.7 * CORNER[3:]))
    assert not r.converged
    assert np.all(np.isfinite(r.q))
    assert "at the last iterate:" in r.message or "no equilibrium found" in r.message
