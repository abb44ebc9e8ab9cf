"""Dynamics: equations of motion, relaxation == statics, energy-work balance, free body,
disc-plane steep-to-flat transition."""

import numpy as np
import pytest

import segment
from segment.elements.loads import Load
from segment.solvers import dynamics as dyn

# Relaxation stops when the scaled residual is <= RELAX_TOL = 1e-6 (2e-5 N, 1.8e-3 N mm);
# with the segment's smallest stiffnesses (~50 N/mm, ~5e3 N mm/rad) that bounds the distance
# to the Newton equilibrium by ~4e-7 mm and ~4e-7 rad. We allow 10x more.
RELAX_Q_TOL_MM = 1e-5
RELAX_Q_TOL_RAD = 1e-5
# Kinetic energy-work relation, Fritzkowski and Walczak eq. (55): e_R = |T - T0 - W| / T_max.
# They report 1e-2 for their MEBDF solver; with rtol 1e-8 we see ~1e-6.
ENERGY_TOL = 1e-4
# Free rigid body (Lie-Stormer-Verlet paper): energy and angular momentum constant; with
# rtol 1e-10 Radau keeps both to ~1e-12.
FREE_BODY_RTOL = 1e-8
# Static kernels and the dynamic kernel at rest: same arithmetic, so rounding only.
KERNEL_ATOL = 1e-9


def test_dynamic_forces_at_rest_equal_static_residual(model):
    rng = np.random.default_rng(3)
    db, lb, fb = dyn._damping_arrays(model, True)
    for _ in range(5):
        q = rng.normal(scale=[0.2, 0.2, 0.1, 0.03, 0.03, 0.03])
        load = Load(rng.normal(size=3) * 10, rng.normal(size=3) * 500)
        Q = np.empty((5, 6))
        dyn._element_forces(q, np.zeros(6), load.as_array(), model._params, db, lb, fb, True,
                            True, Q, np.empty((6, 4)), np.empty((2, 4)))
        np.testing.assert_allclose(Q.sum(axis=0), model.residual(q, load), atol=KERNEL_ATOL)
        assert np.all(Q[3] == 0.0)  # no damping force at rest


def test_mass_matrix_symmetric_positive_definite():
    for q in (np.zeros(6), np.array([0.5, -0.2, 0.1, 0.3, -0.4, 1.0])):
        M = dyn.mass_matrix(q)
        np.testing.assert_allclose(M, M.T, atol=1e-15)
        assert np.all(np.linalg.eigvalsh(M) > 0)
    # pure translation: M = m * I (Table 1: 0.23 kg = 2.3e-4 N s^2/mm)
    np.testing.assert_allclose(np.diag(dyn.mass_matrix(np.zeros(6)))[:3], 2.3e-4)


@pytest.mark.parametrize("name", list(segment.LOAD_CASES))
def test_relaxation_settles_at_the_static_equilibrium(model, name):
    load = segment.LOAD_CASES[name]
    r = dyn.relax(model, load)
    assert r.converged, r.message
    assert r.residual_norm <= dyn.RELAX_TOL
    s = segment.solve(model, load)
    assert np.max(np.abs(r.q[:3] - s.q[:3])) < RELAX_Q_TOL_MM
    assert np.max(np.abs(r.q[3:] - s.q[3:])) < RELAX_Q_TOL_RAD


def test_relaxation_that_cannot_settle_reports_it(model):
    r = dyn.relax(model, segment.LOAD_CASES["FLX"], t_max=0.01)
    assert not r.converged
    assert "not settled" in r.message
    assert np.all(np.isfinite(r.q))


def test_kinetic_energy_work_balance(model):
    r = dyn.simulate(model, segment.LOAD_CASES["EXT"], t_end=0.08, gravity=True, rtol=1e-8,
                     atol=1e-10, n_output=81)
    assert r.success, r.message
    f = r.frame
    assert f["kinetic_Nmm"].max() > 0
    assert f["dissipated_Nmm"].iloc[-1] > 0
    assert f["work_load_Nmm"].iloc[-1] > 0  # extension moment does positive work
    assert r.energy_error < ENERGY_TOL
    # element forces are in the history
    assert {"ALL_tension_N", "facet_left_force_N", "disc_phi_y_Nmm"} <= set(f.columns)


def test_ramped_and_user_function_loads_agree(model):
    load = segment.LOAD_CASES["AR"]
    a = dyn.simulate(model, load, t_end=0.05, ramp=0.02, n_output=11)
    b = dyn.simulate(model, lambda t: load.as_array() * min(t / 0.02, 1.0), t_end=0.05,
                     n_output=11)
    np.testing.assert_allclose(a.q, b.q, atol=1e-6)
    assert a.frame["load_Mz_Nmm"].iloc[2] == pytest.approx(0.5 * 1800.0)


@pytest.mark.slow
def test_free_spinning_body_conserves_energy_and_angular_momentum(model):
    free = model.replace(ligaments=(), facets=())
    qd0 = np.array([10.0, -5.0, 3.0, 20.0, -10.0, 300.0])  # mm/s and rad/s
    r = dyn.simulate(free, None, t_end=0.03, qd0=qd0, elements=False, rtol=1e-10, atol=1e-12,
                     n_output=31)
    assert r.success
    T = np.array([dyn.kinetic_energy(q, qd) for q, qd in zip(r.q, r.qd, strict=True)])
    L = np.array([dyn.angular_momentum(q, qd) for q, qd in zip(r.q, r.qd, strict=True)])
    assert abs(r.q[-1, 5]) > 5.0  # it really spun (300 rad/s for 0.03 s: about 9 rad)
    assert np.ptp(T) / T[0] < FREE_BODY_RTOL
    assert np.max(np.abs(L - L[0])) / np.linalg.norm(L[0]) < FREE_BODY_RTOL


@pytest.mark.slow
def test_disc_plane_approaches_flat_contact():
    r = dyn.disc_plane_drop(t_end=1.0, n_output=201)
    assert r.success, r.message
    f = r.frame
    assert f["sin_alpha"].iloc[0] == pytest.approx(0.5)  # released at 30 deg
    assert f["r_over_r0"].iloc[0] > 0.99                 # steep: virtual point at the rim
    late = f[f["t_s"] > 0.8]
    assert late["sin_alpha"].max() < 0.005
    assert late["r_over_r0"].max() < 0.1
    early = f[(f["t_s"] > 0.1) & (f["t_s"] < 0.3)]
    assert late["r_over_r0"].max() < early["r_over_r0"].max()  # still decaying
    assert (late["force_N"] > 0).all()                          # resting on the plane


DROP_DRIFT_MM = 0.01     # the bound on the lateral drift over 1 s


@pytest.mark.slow
def test_disc_plane_drop_does_not_slide():
    """Frictionless contact on a plane: nothing pushes the disc sideways (the force is along
    the plane's normal), so its centre stays at x = 0 (it drifted 8.7 mm with the bisector)."""
    r = dyn.disc_plane_drop(t_end=1.0, n_output=201)
    assert r.success, r.message
    assert np.abs(r.frame["x_mm"]).max() < DROP_DRIFT_MM


def test_plot_disc_plane_writes_png(tmp_path):
    r = dyn.disc_plane_drop(t_end=0.1, n_output=21)
    out = tmp_path / "fig7.png"
    dyn.plot_disc_plane(r, out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_inputs_are_rejected(model):
    with pytest.raises(ValueError, match=r"t_end must lie in \(0, 1000\], got 0 s"):
        dyn.simulate(model, None, t_end=0.0)
    with pytest.raises(ValueError, match=r"ramp must lie in \[0, 1000\], got -1 s"):
        dyn.simulate(model, segment.LOAD_CASES["AS"], t_end=0.1, ramp=-1.0)
    with pytest.raises(ValueError, match="q0 must be 6 finite numbers"):
        dyn.simulate(model, None, t_end=0.1, q0=[0, 0])
    with pytest.raises(TypeError, match="load must be"):
        dyn.relax(model, [1, 2, 3])


def test_cli_simulate(tmp_path, capsys):
    from segment.cli import main

    out = tmp_path / "ar.csv"
    assert main(["simulate", "AR", "--t-end", "0.02", "--ramp", "0.01", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "static" in text and "e_R" in text
    assert out.read_text().startswith("t_s,x_mm")
    assert main(["simulate", "NOPE"]) == 2


def test_dynamics_use_the_inertia_of_the_models_data_folder(data_copy):
    """``segment --data DIR simulate`` must use DIR's Table 1, not the packaged one."""
    import pandas as pd

    from segment.solvers.dynamics import mass_matrix

    table = pd.read_csv(data_copy / "inertia.csv")
    table.loc[table.body == "C5", "mass_kg"] *= 2.0
    table.to_csv(data_copy / "inertia.csv", index=False)
    heavy = segment.c5c6(data_dir=data_copy)
    assert heavy.inertia.mass == pytest.approx(2 * segment.c5c6().inertia.mass)
    q = np.zeros(6)
    m_heavy = mass_matrix(q, model=heavy)[0, 0]
    m_default = mass_matrix(q, model=segment.c5c6())[0, 0]
    assert m_heavy == pytest.approx(2 * m_default)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"radius": -1.0}, "radius must be > 0"),
    ({"t_end": -1.0}, "t_end must be > 0"),
    ({"mass_kg": 0.0}, "mass_kg must be > 0"),
    ({"tilt_deg": 95.0}, r"tilt_deg must lie in \(0, 90\)"),
])
def test_disc_plane_drop_rejects_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        dyn.disc_plane_drop(**kwargs)


@pytest.mark.parametrize("name", ["tol", "t_max", "rtol", "atol", "first_step"])
@pytest.mark.parametrize("value", [0.0, -1.0, float("nan"), "1"])
def test_relax_rejects_bad_settings(model, name, value):
    with pytest.raises(ValueError, match=f"{name} must be a finite number > 0"):
        dyn.relax(model, segment.LOAD_CASES["FLX"], **{name: value})


# ---------------------------------------------------------------- rupture
RUPTURE_ENERGY_TOL = 1e-4     # e_R with ruptures, same order as without (rtol 1e-6 integration)


@pytest.fixture(scope="module")
def ruptured_run():
    """Flexion ramped to 6x nominal in 0.1 s: FL and then ISL reach eps_max."""
    model = segment.c5c6()
    return model, segment.simulate(model, segment.LOAD_CASES["FLX"].scaled(6.0), t_end=0.13,
                                   ramp=0.1, n_output=131)


def test_simulate_detects_rupture_events_without_hidden_state(ruptured_run):
    from segment.solvers.ramp_kernel import _max_ratio

    model, r = ruptured_run
    names = [n for _, kind, n in r.events if kind == "ruptured"]
    assert names[:2] == ["FL", "ISL"]
    assert r.model.ruptured == frozenset(names) and model.ruptured == frozenset()
    assert r.success and "rupture" in r.message
    # the model at the end reproduces the last rates: no state outside model and y
    last = r.frame.iloc[-1]
    for name in names:
        assert last[f"{name}_tension_N"] == 0.0
    # the elastic criterion: FL's strain is below eps_max before its event (its total
    # tension, with the damping term, may already exceed F_max) and it carries nothing after
    t_fl = r.events[0][0]
    fl = model.ligaments[2]
    before = r.frame[r.frame["t_s"] < t_fl]
    strain = (before["FL_length_mm"] - fl.l0) / fl.l0
    assert strain.max() < fl.curve.strain[2] < strain.max() + 0.01
    after = r.frame[r.frame["t_s"] > t_fl]
    assert (after["FL_tension_N"] == 0.0).all()
    g, _ = _max_ratio(r.q[-1], *r.model._packed[:2], r.model.alive)
    assert g < 1.0      # every intact strip below eps_max at the end


def test_energy_work_balance_holds_with_rupture(ruptured_run):
    """Fritzkowski and Walczak eq. (55) with the broken strips' stored energy booked as
    released: e_R stays small; leaving that term out breaks the balance."""
    _, r = ruptured_run
    f = r.frame
    assert f["rupture_energy_Nmm"].iloc[-1] > 0
    assert r.energy_error < RUPTURE_ENERGY_TOL
    work_without = f["work_total_Nmm"] + f["rupture_energy_Nmm"]
    d_t = f["kinetic_Nmm"] - f["kinetic_Nmm"].iloc[0]
    err_without = float(((d_t - work_without).abs() / f["kinetic_Nmm"].max()).max())
    assert err_without > 100 * RUPTURE_ENERGY_TOL


def test_rupture_off_keeps_the_published_curve(ruptured_run):
    model, _ = ruptured_run
    off = segment.simulate(model, segment.LOAD_CASES["FLX"].scaled(6.0), t_end=0.13,
                           ramp=0.1, n_output=131, rupture=False)
    assert off.events == () and off.model is model
    assert off.frame["FL_tension_N"].iloc[-1] > model.ligaments[2].curve.force[2]
