"""Exact sensitivities dq*/dp against finite differences of re-solved equilibria, and dR/dp
against central differences of the residual, at several load cases away from kinks."""

import numpy as np
import pytest

import segment
from segment.core.residual import residual_real
from segment.elements.loads import Load
from segment.studies.sensitivity import (
    _residual_parameter_derivative,
    equilibrium_sensitivity,
    touch_flags,
)
from segment.studies.space import load_space

# central differences of re-solved equilibria: truncation ~h^2 plus the solver tolerance
# (1e-10 scaled residual) over h; relative to the largest derivative of the column
RESOLVE_RTOL = 2e-4
RESIDUAL_RTOL = 1e-6
CASES = ("FLX", "EXT", "AR", "LB", "CMP", "AS")


@pytest.fixture(scope="module")
def space():
    return load_space()


def _fd_step(space, j):
    return 1e-4 * (space.upper[j] - space.lower[j])


@pytest.mark.parametrize("case", CASES)
def test_dq_dp_matches_resolved_equilibria(model, space, case):
    load = segment.LOAD_CASES[case]
    # an interior point of the space: gap 0.2 mm keeps the nominal (gap 0) bound away
    p = space.nominal.copy()
    p[space.names.index("facet_gap")] = 0.2
    s = equilibrium_sensitivity(model, load, space=space, p=p)
    for j, name in enumerate(space.names):
        h = _fd_step(space, j)
        pp, pm = p.copy(), p.copy()
        pp[j] += h
        pm[j] -= h
        rp = segment.solve(space.apply(model, pp), load)
        rm = segment.solve(space.apply(model, pm), load)
        assert rp.converged and rm.converged
        fd = (rp.q - rm.q) / (2 * h)
        scale = max(np.abs(fd).max(), 1e-6)   # absolute floor where dq/dp = 0 (slack)
        err = np.abs(fd - s.dq_dp[:, j]).max() / scale
        assert err < RESOLVE_RTOL, (case, name, fd, s.dq_dp[:, j])


def test_unloaded_sensitivity_matches_resolved(model, space):
    p = space.nominal.copy()
    s = equilibrium_sensitivity(model, segment.LOAD_CASES["FLX"], space=space, p=p)
    for name in ("l0_FL", "l0_ALL", "disc_phi_y", "stiffness_FL"):
        j = space.names.index(name)
        h = _fd_step(space, j)
        pp, pm = p.copy(), p.copy()
        pp[j] += h
        pm[j] -= h
        fd = (space.apply(model, pp).unloaded.q - space.apply(model, pm).unloaded.q) / (2 * h)
        np.testing.assert_allclose(s.dq_unloaded_dp[:, j], fd, rtol=RESOLVE_RTOL,
                                   atol=RESOLVE_RTOL * np.abs(fd).max())


@pytest.mark.parametrize("q", [np.array([0.3, -0.2, 0.1, 0.02, -0.06, 0.03]),
                               np.array([-0.4, 0.3, -0.2, -0.03, 0.05, -0.04])])
def test_residual_parameter_derivative_matches_central_differences(model, space, q):
    """dR/dp at fixed q, including poses where the facets touch (negative phi_y)."""
    p = space.sample(1, seed=7)[0]
    packed = (*(np.ascontiguousarray(x[0]) for x in space.pack(model, p[None])),
              model._packed[3])
    dg, dl, df = (x[0] for x in space.pack_derivative(model, p[None]))
    out = np.empty((6, space.dim))
    _residual_parameter_derivative(q, packed, dg, dl, df, touch_flags(dg, dl, df), out)
    zero = np.zeros(6)
    for j in range(space.dim):
        h = 1e-6 * (space.upper[j] - space.lower[j])
        pp, pm = p.copy(), p.copy()
        pp[j] += h
        pm[j] -= h
        rp = residual_real(q, zero,
                           (*(x[0] for x in space.pack(model, pp[None])), model._packed[3]))
        rm = residual_real(q, zero,
                           (*(x[0] for x in space.pack(model, pm[None])), model._packed[3]))
        fd = (rp - rm) / (2 * h)
        np.testing.assert_allclose(out[:, j], fd, rtol=RESIDUAL_RTOL,
                                   atol=RESIDUAL_RTOL * max(np.abs(fd).max(), 1e-6),
                                   err_msg=space.names[j])


def test_failed_solve_is_an_error_not_a_number(model, space):
    huge = Load.from_si(force_N=[0, 0, -1e9], moment_Nm=[0, 0, 0], name="crush")
    with pytest.raises(ValueError, match="did not converge"):
        equilibrium_sensitivity(model, huge, space=space)


def test_frame_is_in_display_units(model, space):
    s = equilibrium_sensitivity(model, segment.LOAD_CASES["FLX"], space=space)
    df = s.frame(from_unloaded=True)
    assert len(df) == 6 * space.dim
    row = df[(df.coordinate == "phi_y") & (df.parameter == "disc_phi_y")].iloc[0]
    assert row.unit == "deg"
    j = space.names.index("disc_phi_y")
    assert row.derivative == pytest.approx(np.degrees(s.displacement_dp[4, j]))
    # a stiffer disc in flexion means less flexion
    assert row.derivative < 0
