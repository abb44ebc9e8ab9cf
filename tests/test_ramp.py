"""Quasi-static load ramp with ligament rupture (segment.ramp)."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import segment
from segment.core.status import Status
from segment.solvers.ramp import MAX_TO_SCALE, STEP_INDEPENDENCE_RTOL
from segment.solvers.ramp_kernel import MIN_INCREMENT, RUPTURE_TOL

FMAX_RTOL = 1e-6        # strain located to |g - 1| <= 1e-9; the force slope B-C turns it into
                        # a relative force error well below this
SCALE_RTOL = 1e-7       # rupture scale from two different step counts
Q_ATOL = 1e-8           # equilibria from ramp and solve [mm, rad]
LIMIT_RTOL = 1e-8       # the bound is located to |h - 1| <= 1e-9 on the path (or by the width
                        # of the bracket, 1e-14 of the scale, on a steep path): 1e-8 margin


@pytest.fixture(scope="module")
def model():
    return segment.c5c6()


@pytest.fixture(scope="module")
def flx(model):
    """Flexion to 6x with the validity limit off: the rupture mechanics past 15.4 deg."""
    return segment.ramp(model, segment.LOAD_CASES["FLX"], to_scale=6.0, steps=60, limits=None)


_STRIPPED = {n: segment.c5c6().with_strips(n) for n in (1, 2, 3)}


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
    again = segment.ramp(model, segment.LOAD_CASES["FLX"], to_scale=6.0, steps=60, limits=None)
    pd.testing.assert_frame_equal(again.frame, flx.frame)
    finer = segment.ramp(model, segment.LOAD_CASES["FLX"], to_scale=6.0, steps=170,
                         limits=None)
    assert finer.failure_loads()["sequence"] == flx.failure_loads()["sequence"]
    a = [e[0] for e in flx.events if e[1] == "ruptured"]
    b = [e[0] for e in finer.events if e[1] == "ruptured"]
    np.testing.assert_allclose(b, a, rtol=SCALE_RTOL)


def test_below_first_rupture_the_ramp_ends_at_the_static_solution(model):
    r = segment.ramp(model, segment.LOAD_CASES["EXT"], to_scale=3.0, steps=12)
    assert r.status == Status.REACHED_TO_SCALE and r.ok and not r.events
    assert np.isnan(r.first_rupture_scale) and np.isnan(r.ultimate_scale)
    assert len(r.frame) == 13 and (r.frame["event"] == "").all()
    ref = segment.solve(model, segment.LOAD_CASES["EXT"].scaled(3.0))
    np.testing.assert_allclose(r.q, ref.q, atol=Q_ATOL)
    np.testing.assert_allclose(r.frame["My_Nm"].iloc[-1], -5.4)
    main = ref.displacement_from_unloaded[4]
    assert r.frame["main_from_unloaded_deg"].iloc[-1] == pytest.approx(np.degrees(main),
                                                                       abs=1e-6)
    assert r.frame["within_limit"].all() and r.limit is None


def test_a_strip_breaks_at_its_share_of_f_max(model):
    """CL-left as three strips under axial rotation: the outermost strip reaches F_max / 3
    first, earlier than the single-strip ligament reaches F_max."""
    m = model.with_strips({"CL-left": 3})
    r = segment.ramp(m, segment.LOAD_CASES["AR"], to_scale=8.0, steps=60, limits=None)
    whole = segment.ramp(model, segment.LOAD_CASES["AR"], to_scale=8.0, steps=60, limits=None)
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
    r = segment.ramp(model, segment.LOAD_CASES["FLX"], to_scale=50.0, steps=100, limits=None)
    assert r.status == Status.NO_EQUILIBRIUM and not r.ok
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
    ({"to_scale": 1e300}, "to_scale must be at most 1e\\+06 .x nominal load., got 1e\\+300"),
    ({"to_scale": 2.0, "limits": "none"}, "limits must be a ValidityLimits, None or 'default'"),
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
    segment.elements.facet item 9). In axial rotation past the capsular ruptures both facets
    slide off; the bisection between rupture events finds the same first rows as checking every
    row."""
    load = segment.LOAD_CASES["AR"]
    fast = segment.ramp(model, load, to_scale=30.0, steps=60, limits=None)
    every = segment.ramp(model, load, to_scale=30.0, steps=60, track_facets="every",
                         limits=None)
    disl = [e for e in every.events if e[1] == "dislocated"]
    assert len(disl) == 2 and 2.0 < disl[0][0] <= 30.0
    assert {e[2] for e in disl} == {"left", "right"}
    assert [e for e in fast.events if e[1] == "dislocated"] == disl
    pd.testing.assert_frame_equal(fast.frame, every.frame)
    off = segment.ramp(model, load, to_scale=30.0, steps=60, track_facets=False, limits=None)
    assert not [e for e in off.events if e[1] == "dislocated"]


def test_ramp_without_ligaments_and_with_a_combined_load(model):
    bare = segment.ramp(segment.c5c6(ligaments=False), segment.LOAD_CASES["FLX"], to_scale=1.5,
                        steps=10)
    assert bare.ok and not bare.events and len(bare.frame) == 11
    mixed = segment.Load.from_si(force_N=[10, 0, -20], moment_Nm=[0, 1.0, 0.5], name="mixed")
    r = segment.ramp(model, mixed, to_scale=8.0, steps=40, limits=None)
    assert r.frame["main_from_unloaded"].isna().all()      # no single main coordinate
    assert r.failure_loads()["sequence"][0] == "FL"
    assert np.isnan(r.failure_loads()["first_rupture_Nm"])  # no single load magnitude
    assert np.isfinite(r.first_rupture_scale)


# ------------------------------------------------------------ issue 20: ramp truth
def _check_row_truth(model, r):
    """Ruptured sets, events, n_ruptured, the sequence and the row models agree row by row."""
    frame = r.frame
    assert len(r.ruptured_at) == len(frame)
    assert r.ruptured_at[0] == model.ruptured
    sequence, previous = [], model.ruptured
    for k, (event, now) in enumerate(zip(frame["event"], r.ruptured_at, strict=True)):
        assert previous <= now                                  # strips stay broken
        new = now - previous
        broke = [e.split(": ", 1)[1] for e in event.split("; ") if e.startswith("ruptured: ")]
        assert set(broke) == set(new) and len(broke) == len(new), (k, event)
        sequence += broke
        assert frame["n_ruptured"].iloc[k] == len(now)
        assert r.model_at(k).ruptured == now
        previous = now
    assert sequence == r.failure_loads()["sequence"]
    assert [e[2] for e in r.events if e[1] == "ruptured"] == sequence
    scales = {e[2]: e[0] for e in r.events if e[1] == "ruptured"}
    for name in sequence:
        row = next(k for k, x in enumerate(r.ruptured_at) if name in x)
        assert frame["scale"].iloc[row] == scales[name]
    assert r.model.ruptured == r.ruptured_at[-1]
    assert (np.diff(frame["scale"]) >= 0).all()
    if sequence:
        assert r.first_rupture_scale == scales[sequence[0]]


@pytest.mark.parametrize("limits", ["default", None])
def test_each_row_holds_what_had_broken_by_then(model, limits):
    """Issue 20 item 2: LB to 50x. The row models, events, n_ruptured and the sequence agree:
    row 0 has nothing broken (on main it had ALL, which broke in the failed last row)."""
    kwargs = {} if limits == "default" else {"limits": limits}
    r = segment.ramp(model, segment.LOAD_CASES["LB"], to_scale=50, **kwargs)
    assert r.result_at(0).model.ruptured == frozenset()
    _check_row_truth(model, r)
    if limits is None:
        # ALL reaches F_max, breaks, and no equilibrium is found after it: it did break
        assert r.status == Status.NO_EQUILIBRIUM
        assert r.frame["event"].iloc[-1] == "ruptured: ALL; no equilibrium"
        assert r.failure_loads()["sequence"][-1] == "ALL"


@pytest.mark.parametrize(("case", "to_scale"), [("FLX", 50.0), ("LB", 50.0), ("EXT", 50.0),
                                                 ("LS", 50.0), ("FLX", 10000.0)])
@pytest.mark.parametrize("steps", [5, 50, 200])
def test_failure_loads_do_not_depend_on_steps(model, case, to_scale, steps):
    """Issue 20 item 3: first rupture, ultimate load (validity limit off) and validity limit
    of steps N and 4N agree within STEP_INDEPENDENCE_RTOL (1 %)."""
    load = segment.LOAD_CASES[case]
    for limits in ("default", None):
        a = segment.ramp(model, load, to_scale=to_scale, steps=steps, limits=limits)
        b = segment.ramp(model, load, to_scale=to_scale, steps=4 * steps, limits=limits)
        fa, fb = a.failure_loads(), b.failure_loads()
        assert fa["sequence"] == fb["sequence"]
        for key in ("first_rupture_scale", "ultimate_scale", "limit_scale"):
            np.testing.assert_allclose(fb[key], fa[key], rtol=STEP_INDEPENDENCE_RTOL,
                                       err_msg=f"{case} {key} limits={limits}")
        if limits is None and case != "EXT":
            # every one of these fails (no equilibrium) before to_scale without the limit;
            # the ultimate load is located to within MIN_INCREMENT
            assert a.status == Status.NO_EQUILIBRIUM
            assert abs(fa["ultimate_scale"] - fb["ultimate_scale"]) <= 4 * MIN_INCREMENT


def test_a_huge_step_is_refined_not_reported_as_failure(model):
    """Issue 20 item 3: FLX to 10000x in 200 steps of 50x carries what the same ramp carries
    in steps of 0.04x (on main: "no equilibrium above 3.726" against 56.5 N m)."""
    load = segment.LOAD_CASES["FLX"]
    plain = segment.ramp(model, load, to_scale=10000.0)     # `segment ramp FLX --to-scale 1e4`
    assert plain.status != Status.NO_EQUILIBRIUM, plain.message
    # both capsules reach F_max together (issue 32: a tie breaks together, not in list order)
    assert plain.failure_loads()["sequence"] == ["FL", "ISL", "CL-left", "CL-right"]
    coarse = segment.ramp(model, load, to_scale=10000.0, limits=None)
    fine = segment.ramp(model, load, to_scale=1000.0, steps=25000, limits=None)
    assert coarse.failure_loads()["ultimate_Nm"] > 50.0
    np.testing.assert_allclose(coarse.failure_loads()["ultimate_Nm"],
                               fine.failure_loads()["ultimate_Nm"], rtol=1e-6)
    with pytest.raises(ValueError, match="at most"):
        segment.ramp(model, load, to_scale=10 * MAX_TO_SCALE)


# ------------------------------------------------------------ issue 20: validity limit
def _bound_deg_or_mm(case):
    from segment.core.validity import load_validity_limits

    load = segment.LOAD_CASES[case]
    (b,) = load_validity_limits().active(load.as_array())
    return b


@pytest.mark.parametrize("case", ["AS", "PS", "LS", "TNS", "CMP", "LB", "FLX", "EXT", "AR"])
def test_curves_stop_at_the_validity_limit(model, case):
    """Issue 20 item 4: no row within the limit is past the bound; the ramp stops at the
    first row past it; the limit, its rule and its source are reported."""
    from segment.core.validity import BEYOND_LIMIT

    r = segment.ramp(model, segment.LOAD_CASES[case], to_scale=50.0)
    b = _bound_deg_or_mm(case)
    main = r.frame[r.main_column].to_numpy() * b.direction
    within = r.frame["within_limit"].to_numpy()
    assert (main[within] <= b.value * (1 + LIMIT_RTOL)).all()
    # only the last row may be past, with the rows of strips that broke with it (a tie)
    past = np.flatnonzero(~within)
    assert (past == np.arange(len(within) - past.size, len(within))).all()
    assert (r.frame["scale"].to_numpy()[past] == r.frame["scale"].iloc[-1]).all()
    _check_row_truth(model, r)
    if case == "CMP":                                         # 1000 N compress 2 mm
        assert r.status == Status.REACHED_TO_SCALE and r.limit is None
        return
    assert r.status == Status.VALIDITY_LIMIT and np.isnan(r.ultimate_scale)
    assert BEYOND_LIMIT in r.message and r.limit.source in r.message
    assert r.limit.scale == r.frame["scale"].iloc[-1] and r.limit.row == len(r.frame) - 1
    assert r.limit.bound == b and r.limit.description == b.describe()
    if r.limit.reached_by == "load increment":
        assert main[-1] == pytest.approx(b.value, rel=1e-6)    # located on the path
        assert within[-1]
    else:
        assert r.limit.reached_by.startswith("rupture of ") and not within[-1]
        before = len(within) - (~within).sum() - 1             # the last row within
        assert main[-1] > b.value > main[before]               # the jump crossed the bound
    assert r.failure_loads()["limit_scale"] == r.limit.scale
    # flexion and extension: the training specimens; the others assumed (SOURCES.md §8)
    assert ("Nightingale" in r.limit.source) == (case in ("FLX", "EXT"))
    assert ("assumed" in r.limit.source) == (case not in ("FLX", "EXT"))


def test_flexion_limit_numbers(model):
    """FLX stops where the rupture of both capsules (a tie: they reach F_max together and break
    together, issue 32) carries flexion past 21.6 deg (Nightingale et al. 2002), at 6.41 N m; FL and
    ISL broke before."""
    r = segment.ramp(model, segment.LOAD_CASES["FLX"], to_scale=50.0)
    loads = r.failure_loads()
    assert loads["sequence"] == ["FL", "ISL", "CL-left", "CL-right"]
    assert loads["limit_Nm"] == pytest.approx(6.412, abs=1e-3)
    assert loads["first_rupture_Nm"] == pytest.approx(6.260, abs=1e-3)
    assert np.isnan(loads["ultimate_Nm"])
    assert r.limit.reached_by == "rupture of CL-left and CL-right"


def test_no_taut_ligament_rule_and_a_data_folder_bound(model, tmp_path):
    """Rule 2 fires when a rupture leaves no ligament taut (here with the displacement bounds
    moved out of the way in a copy of data/); a bound read from a copy is the one applied."""
    import shutil

    from segment.core.io import data_dir
    from segment.core.validity import NO_TAUT_LIGAMENT, load_validity_limits

    folder = tmp_path / "data"
    shutil.copytree(data_dir(), folder)
    table = pd.read_csv(folder / "validity_limits.csv", keep_default_na=False)
    table.loc[table["coordinate"] == "phi_y", "limit_deg"] = "10.0"
    table.to_csv(folder / "validity_limits.csv", index=False)
    r = segment.ramp(model, segment.LOAD_CASES["FLX"], to_scale=50.0,
                     limits=load_validity_limits(folder))
    assert r.limit.description == "flexion beyond 10 deg from the unloaded equilibrium"
    assert r.limit.reached_by == "rupture of FL"              # FL's rupture jumps 7.3 -> 11.5
    # only one ligament: its rupture leaves none taut
    one = segment.c5c6(ligaments=("FL",))
    table.loc[table["coordinate"] == "phi_y", "limit_deg"] = "89.0"
    table.to_csv(folder / "validity_limits.csv", index=False, encoding="utf-8")
    r = segment.ramp(one, segment.LOAD_CASES["FLX"], to_scale=50.0,
                     limits=load_validity_limits(folder))
    assert r.status == Status.VALIDITY_LIMIT and r.limit.rule == "no ligament left taut"
    assert r.limit.description == NO_TAUT_LIGAMENT and r.limit.reached_by == "rupture of FL"
    assert not r.frame["within_limit"].iloc[-1]


def test_combined_load_bounds_every_loaded_coordinate(model):
    mixed = segment.Load.from_si(force_N=[10, 0, -20], moment_Nm=[0, 1.0, 0.5], name="mixed")
    r = segment.ramp(model, mixed, to_scale=50.0, steps=50)
    assert r.status == Status.VALIDITY_LIMIT
    assert r.limit.bound.coordinate in ("x", "z", "phi_y", "phi_z")


@pytest.mark.parametrize(("edit", "match"), [
    (lambda t: t.iloc[:-1], r"missing row\(s\) for \['phi_z -'\]"),
    (lambda t: t.assign(limit_mm=t["limit_mm"].where(t["coordinate"] != "phi_y", "3")),
     r"row 9\), column 'limit_mm': must be empty for phi_y"),
    (lambda t: t.assign(limit_deg=t["limit_deg"].replace("15.4", "0.27")),
     r"limit_deg.*0.27 deg is outside the plausible range 1 to 90 deg"),
    (lambda t: t.assign(direction=t["direction"].replace("-", "minus")),
     r"column 'direction': unknown value 'minus'"),
])
def test_validity_table_errors_name_row_and_column(tmp_path, edit, match):
    from segment.core.io import data_dir
    from segment.core.validity import load_validity_limits

    table = pd.read_csv(data_dir() / "validity_limits.csv", keep_default_na=False, dtype=str)
    edit(table).to_csv(tmp_path / "validity_limits.csv", index=False)
    with pytest.raises(ValueError, match=match):
        load_validity_limits(tmp_path)


# ------------------------------------------------------------ property test
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(["AS", "PS", "LS", "TNS", "CMP", "LB", "FLX", "EXT", "AR"]),
       to_scale=st.floats(0.5, 60.0), steps=st.integers(1, 300), strips=st.integers(1, 3),
       limited=st.booleans())
def test_random_ramps_keep_their_rows_events_and_labels_consistent(case, to_scale, steps,
                                                                   strips, limited):
    """Over random ramps: monotone rupture sets, events, n_ruptured, the sequence, the row
    models and the report figure's labels (section 10) agree with each other."""
    from segment.report.sections.failure import curve_points, panel_title

    model = _STRIPPED[strips]
    r = segment.ramp(model, segment.LOAD_CASES[case], to_scale=to_scale, steps=steps,
                     limits="default" if limited else None)
    _check_row_truth(model, r)
    seq = r.failure_loads()["sequence"]
    title = panel_title(case, r)
    for name in seq[:4]:
        assert name in title
    assert ("no rupture" in title) == (not seq)
    x, y, ruptured = curve_points(r, segment.LOAD_CASES[case])
    assert len(x) == len(y) and (np.diff(y) >= 0).all()       # load control: never falls
    if r.limit is not None:
        assert y[-1] == pytest.approx(abs(r.load.as_array()[r.load.main_dof])
                                      / (1 if r.load.main_dof < 3 else 1000) * r.limit.scale)
    drawn = r.frame["within_limit"] & r.frame["event"].str.contains("ruptured: ") \
        & ~r.frame["event"].str.contains("no equilibrium")
    assert len(ruptured) == int(drawn.sum())
    if r.limit is not None and r.limit.bound is not None:
        b = r.limit.bound
        assert (np.asarray(x) * b.direction <= b.value * (1 + LIMIT_RTOL)).all()
    within = r.frame["within_limit"].to_numpy()
    past = np.flatnonzero(~within)          # the last row, with the strips tied with it
    assert (past == np.arange(len(within) - past.size, len(within))).all()
    assert (r.frame["scale"].to_numpy()[past] == r.frame["scale"].iloc[-1]).all()


def test_validity_table_is_packaged_ranged_and_sourced():
    import warnings

    from segment.core.schema import COLUMNS
    from segment.core.tables import ImplausibleDataWarning
    from segment.core.validity import load_validity_limits

    for col in ("limit_mm", "limit_deg"):
        r = COLUMNS[("validity_limits.csv", col)].plausible
        assert r.lower < r.upper and len(r.reason) > 20
    with warnings.catch_warnings():
        warnings.simplefilter("error", ImplausibleDataWarning)
        limits = load_validity_limits()
    assert len(limits.bounds) == 12
    assert all("SOURCES.md §" in b.source and "§8" in b.source for b in limits.bounds)
    flexion, extension = limits.bound("phi_y", 1), limits.bound("phi_y", -1)
    for b, value in ((flexion, 21.6), (extension, 17.68)):
        assert b.value == value and not b.assumed
        assert b.source.startswith("Nightingale et al. 2002")
    assert all(b.assumed for b in limits.bounds if b.coordinate != "phi_y")
