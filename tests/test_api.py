"""Python API conveniences of issue 15: short reprs, to_frame, solve_many units, plotting into
the caller's axes / plotter, progress bars; one spelling per result field (issue 29)."""

import numpy as np
import pandas as pd
import pytest

import segment
from segment.solvers import dynamics

REPR_MAX_CHARS = 200          # "short": one line, not the 3,000 characters of a dataclass dump


@pytest.fixture(scope="module")
def flx(model):
    return segment.solve(model, segment.LOAD_CASES["FLX"])


def test_equilibrium_result_repr_is_one_short_line(flx):
    text = repr(flx)
    assert len(text) < REPR_MAX_CHARS and "\n" not in text
    assert text.startswith(f"EquilibriumResult(FLX: converged in {flx.iterations} iterations")
    assert "2.33" in text                     # phi_y [deg] from the reference pose


def test_failed_result_repr_says_so(model):
    r = segment.solve(model, segment.LOAD_CASES["EXT"], max_iterations=1)
    assert not r.converged
    assert repr(r) == f"EquilibriumResult(EXT: {r.message})"


def test_result_past_its_limits_repr_says_so(model):
    r = segment.solve(model, segment.LOAD_CASES["FLX"].scaled(15, name="FLX x15"))
    assert r.converged and not r.intact
    text = repr(r)
    assert len(text) < REPR_MAX_CHARS and "\n" not in text
    assert text.startswith("EquilibriumResult(FLX x15: converged BEYOND LIMITS")
    assert "FL" in text


SECOND_SPELLINGS = ("x", "success", "nit")   # of q, converged, iterations: removed in 0.2


def test_results_spell_each_field_once(model, flx):
    batch = segment.solve_many(model, [segment.LOAD_CASES["FLX"]], progress=False)
    relaxed = dynamics.relax(model, segment.LOAD_CASES["FLX"])
    for result in (flx, batch, relaxed):
        assert all(hasattr(result, name) for name in ("q", "converged")), result
        assert not [n for n in SECOND_SPELLINGS if hasattr(result, n)], type(result).__name__


def test_to_frame_is_the_table(flx):
    pd.testing.assert_frame_equal(flx.to_frame(), flx.table())


def test_batch_result_repr_and_frame(model):
    r = segment.solve_many(model, list(segment.LOAD_CASES.values()), progress=False)
    assert repr(r).startswith("BatchResult(9 equilibria (9), 9 converged, 0 failed, ")
    assert len(repr(r)) < REPR_MAX_CHARS
    pd.testing.assert_frame_equal(r.to_frame(), r.frame())


def test_solve_many_takes_si_arrays_explicitly(model):
    cases = list(segment.LOAD_CASES.values())
    by_record = segment.solve_many(model, cases, progress=False)
    force = np.array([c.force for c in cases])                       # [N]
    moment_Nm = np.array([c.moment for c in cases]) / 1000.0          # N mm -> N m
    si = segment.solve_many(model, force_N=force, moment_Nm=moment_Nm, progress=False)
    np.testing.assert_allclose(si.q, by_record.q, rtol=0, atol=1e-12)
    internal = segment.solve_many(model, np.hstack([force, moment_Nm * 1000.0]),
                                  progress=False)                    # N and N mm
    np.testing.assert_allclose(internal.q, by_record.q, rtol=0, atol=1e-12)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({}, "needs loads"),
    ({"loads": np.zeros((1, 6)), "force_N": np.zeros((1, 3)), "moment_Nm": np.zeros((1, 3))},
     "not both"),
    ({"force_N": np.zeros((1, 3))}, "go together"),
    ({"force_N": np.zeros((2, 3)), "moment_Nm": np.zeros((1, 3))}, r"\(2, 3\) and \(1, 3\)"),
])
def test_solve_many_unit_errors_are_plain(model, kwargs, message):
    with pytest.raises(ValueError, match=message):
        segment.solve_many(model, **kwargs)


def test_progress_bar_only_when_asked(model, capsys):
    loads = segment.solvers.batch.random_loads(50)
    segment.solve_many(model, loads, progress=True)
    assert "solve_many" in capsys.readouterr().err
    segment.solve_many(model, loads, progress=False)
    assert capsys.readouterr().err == ""
    segment.solve_many(model, loads)             # default: stderr is not a terminal here
    assert capsys.readouterr().err == ""


def test_simulation_and_relaxation_reprs(model):
    sim = dynamics.simulate(model, segment.LOAD_CASES["FLX"], t_end=0.01, n_output=5)
    assert repr(sim).startswith("SimulationResult(5 output times to t = 0.01 s, success=True")
    assert sim.to_frame() is sim.frame
    rel = dynamics.relax(model, segment.LOAD_CASES["FLX"])
    assert repr(rel) == f"RelaxationResult({rel.message})"


def test_uncertainty_repr_and_frame(model):
    from segment.studies.uncertainty import uncertainty_bands

    u = uncertainty_bands(model, n_samples=4, stiffness_spread=0.2, seed=1, progress=False)
    assert repr(u).startswith("UncertaintyResult(4 sampled models x ")
    assert len(repr(u)) < REPR_MAX_CHARS
    pd.testing.assert_frame_equal(u.to_frame(), u.bands())


def test_plot_disc_plane_draws_into_the_callers_axes():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2)
    result = dynamics.disc_plane_drop(t_end=0.01)
    out = dynamics.plot_disc_plane(result, ax=right)
    assert out is fig and len(right.lines) == 2 and len(left.lines) == 0
    plt.close(fig)


@pytest.mark.slow
def test_viz_plot_draws_into_the_callers_plotter(flx):
    from segment.views import viz
    from segment.views.render import _new_plotter

    pl = _new_plotter(off_screen=True, window_size=(64, 48), shape=(1, 2))
    try:
        pl.subplot(0, 1)
        assert viz.plot(flx, plotter=pl) is pl
        assert "c6" in pl.renderers[1].actors and "c6" not in pl.renderers[0].actors
    finally:
        pl.close()
