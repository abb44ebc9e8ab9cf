"""Quasi-static load ramp with ligament rupture (segment.ramp)."""

import numpy as np
import pandas as pd
import pytest

import segment
from segment.ramp import RAMP_COMPLETE, RAMP_NO_EQUILIBRIUM, RUPTURE_TOL

FMAX_RTOL = 1e-6        # strain located to |g - 1| <= 1e-9; the force slope B-C turns it into
                        # a relative force error well below this
SCALE_RTOL = 1e-7       # rupture scale from two different step counts
Q_ATOL = 1e-8           # equilibria from ramp and solve [mm, rad]


@pytest.fixture(scope="module")
def model():
    return segment.c5c6()


@pytest.fixture(scope="module")
def flx(model):
    return segment.ramp(model, segment.LOAD_CASES["FLX"], to_scale=6.0, steps=60)


def _row_model(model, result, k):
    """The model with the strips ruptured before row k of the ramp frame."""
    names = [e.split(": ")[1] for e in result.frame["event"].iloc[:k]
             if e.startswith("ruptured: ")]
    return model.with_ruptured(names)


def test_strip_breaks_at_f_max_and_stays_broken(model, flx):
    frame = flx.frame
    fmax_rows = np.flatnonzero(frame["event"].str.startswith("F_max: "))
    assert len(fmax_rows) >= 2
    curves = {x.name: x.curve for x in model.ligaments}
    for k in fmax_rows:
        name = frame["event"].iloc[k].split(": ")[1]
        m = _row_model(model, flx, k)
        q = frame.iloc[k][["x_mm", "y_mm", "z_mm", "phi_x_deg", "phi_y_deg",
                           "phi_z_deg"]].to_numpy(float)
        q[3:] = np.radians(q[3:])
        st = {s.name: s for s in m.state(q).ligaments}[name]
        assert st.tension == pytest.approx(curves[name].force[2], rel=FMAX_RTOL)
        assert st.strain == pytest.approx(curves[name].strain[2], rel=10 * RUPTURE_TOL)
        # the next row is the rupture of that strip at the same load
        assert frame["event"].iloc[k + 1] == f"ruptured: {name}"
        assert frame["scale"].iloc[k + 1] == frame["scale"].iloc[k]
    # stays broken: zero tension at every later equilibrium, and in the final state
    final = {s.name: s for s in flx.state.ligaments}
    for name in flx.failure_loads()["sequence"]:
        assert final[name].ruptured and final[name].tension == 0.0
    assert flx.model.ruptured == frozenset(flx.failure_loads()["sequence"])


def test_rupture_scale_brackets_the_history_free_solve(model, flx):
    """Just below the first rupture scale the strip is below eps_max in a plain solve, just
    above it is past eps_max (the ramp located the crossing, not a step boundary)."""
    s = flx.first_rupture_scale
    name = flx.failure_loads()["sequence"][0]
    eps_max = {x.name: x.curve.strain[2] for x in model.ligaments}[name]
    below = segment.solve(model, segment.LOAD_CASES["FLX"].scaled(s * (1 - 1e-5)))
    above = segment.solve(model, segment.LOAD_CASES["FLX"].scaled(s * (1 + 1e-5)))
    strain = {x.name: x.strain for x in below.state.ligaments}[name]
    assert strain < eps_max
    assert {x.name: x.strain for x in above.state.ligaments}[name] > eps_max


def test_failure_sequence_is_reproducible(model, flx):
    again = segment.ramp(model, segment.LOAD_CASES["FLX"], to_scale=6.0, steps=60)
    pd.testing.assert_frame_equal(again.frame, flx.frame)
    finer = segment.ramp(model, segment.LOAD_CASES["FLX"], to_scale=6.0, steps=170)
    assert finer.failure_loads()["sequence"] == flx.failure_loads()["sequence"]
    a = [e[0] for e in flx.events if e[1] == "ruptured"]
    b = [e[0] for e in finer.events if e[1] == "ruptured"]
    np.testing.assert_allclose(b, a, rtol=SCALE_RTOL)


def test_below_first_rupture_the_ramp_ends_at_the_static_solution(model):
    r = segment.ramp(model, segment.LOAD_CASES["EXT"], to_scale=3.0, steps=12)
    assert r.status == RAMP_COMPLETE and r.ok and not r.events
    assert np.isnan(r.first_rupture_scale) and np.isnan(r.ultimate_scale)
    assert len(r.frame) == 13 and (r.frame["event"] == "").all()
    ref = segment.solve(model, segment.LOAD_CASES["EXT"].scaled(3.0))
    np.testing.assert_allclose(r.q, ref.q, atol=Q_ATOL)
    np.testing.assert_allclose(r.frame["My_Nm"].iloc[-1], -5.4)
    main = ref.displacement_from_unloaded[4]
    assert r.frame["main_displacement"].iloc[-1] == pytest.approx(np.degrees(main), abs=1e-6)


def test_a_strip_breaks_at_its_share_of_f_max(model):
    """CL-left as three strips under axial rotation: the outermost strip reaches F_max / 3
    first, earlier than the single-strip ligament reaches F_max."""
    m = model.with_strips({"CL-left": 3})
    r = segment.ramp(m, segment.LOAD_CASES["AR"], to_scale=8.0, steps=60)
    whole = segment.ramp(model, segment.LOAD_CASES["AR"], to_scale=8.0, steps=60)
    k = int(np.flatnonzero(r.frame["event"].str.startswith("F_max: "))[0])
    name = r.frame["event"].iloc[k].split(": ")[1]
    assert name.startswith("CL-left#")
    q = r.frame.iloc[k][["x_mm", "y_mm", "z_mm", "phi_x_deg", "phi_y_deg",
                         "phi_z_deg"]].to_numpy(float)
    q[3:] = np.radians(q[3:])
    st = {s.name: s for s in _row_model(m, r, k).state(q).ligaments}[name]
    assert st.tension == pytest.approx(108.0 / 3, rel=FMAX_RTOL)   # Table 3: CL F_max 108 N
    assert r.first_rupture_scale < whole.first_rupture_scale
    assert {"CL-left#1", "CL-left#2", "CL-left#3"} <= set(r.model.ruptured)


def test_ruptured_strips_of_the_model_stay_broken(model):
    broken = model.with_ruptured(["ISL"])
    r = segment.ramp(broken, segment.LOAD_CASES["FLX"], to_scale=5.0, steps=20)
    assert "ISL" not in r.failure_loads()["sequence"]
    assert "ISL" in r.model.ruptured


def test_no_equilibrium_is_a_status_with_the_last_load_carried(model):
    r = segment.ramp(model, segment.LOAD_CASES["FLX"], to_scale=50.0, steps=100)
    assert r.status == RAMP_NO_EQUILIBRIUM and not r.ok
    assert "can no longer carry the load" in r.message
    assert r.ultimate_scale >= r.first_rupture_scale
    assert r.frame["event"].iloc[-1].startswith("no equilibrium")
    assert np.all(np.isfinite(r.q))
    carried = r.frame[~r.frame["event"].str.startswith("no equilibrium")]
    assert carried["scale"].max() == r.ultimate_scale


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"to_scale": 0.0}, "to_scale must be a finite number > 0, got 0.0"),
    ({"to_scale": float("nan")}, "to_scale must be a finite number > 0"),
    ({"to_scale": 2.0, "steps": 0}, "steps must be an integer >= 1, got 0"),
    ({"to_scale": 2.0, "steps": 2.5}, "steps must be an integer >= 1, got 2.5"),
])
def test_ramp_input_errors(model, kwargs, match):
    with pytest.raises(ValueError, match=match):
        segment.ramp(model, segment.LOAD_CASES["FLX"], **kwargs)


def test_ramp_does_not_change_the_callers_model(model):
    before = model._packed[1].copy()
    segment.ramp(model, segment.LOAD_CASES["FLX"], to_scale=6.0, steps=30)
    np.testing.assert_array_equal(model._packed[1], before)
    assert model.ruptured == frozenset()


def test_dislocation_events_by_bisection_match_every_row(model):
    """Dislocation is read from the facet states (regime ``dislocated`` of the contact model,
    segment.facet item 9). In axial rotation past the capsular ruptures both facets slide off;
    the bisection between rupture events finds the same first rows as checking every row."""
    load = segment.LOAD_CASES["AR"]
    fast = segment.ramp(model, load, to_scale=30.0, steps=60)
    every = segment.ramp(model, load, to_scale=30.0, steps=60, track_facets="every")
    disl = [e for e in every.events if e[1] == "dislocated"]
    assert len(disl) == 2 and 2.0 < disl[0][0] <= 30.0
    assert {e[2] for e in disl} == {"left", "right"}
    assert [e for e in fast.events if e[1] == "dislocated"] == disl
    pd.testing.assert_frame_equal(fast.frame, every.frame)
    off = segment.ramp(model, load, to_scale=30.0, steps=60, track_facets=False)
    assert not [e for e in off.events if e[1] == "dislocated"]


def test_ramp_without_ligaments_and_with_a_combined_load(model):
    bare = segment.ramp(segment.c5c6(ligaments=False), segment.LOAD_CASES["FLX"], to_scale=3.0,
                        steps=10)
    assert bare.ok and not bare.events and len(bare.frame) == 11
    mixed = segment.Load.from_si(force_N=[10, 0, -20], moment_Nm=[0, 1.0, 0.5], name="mixed")
    r = segment.ramp(model, mixed, to_scale=8.0, steps=40)
    assert r.frame["main_displacement"].isna().all()       # no single main coordinate
    assert r.failure_loads()["sequence"][0] == "FL"
    assert np.isnan(r.failure_loads()["first_rupture_Nm"])  # no single load magnitude
    assert np.isfinite(r.first_rupture_scale)
