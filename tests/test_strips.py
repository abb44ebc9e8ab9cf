"""Ligament strips (Tejszerska and Gzik, eq. 9a) and ruptured strips in the static kernels."""

import numpy as np
import pytest

import segment
from segment.core.residual import residual_jacobian_complex_step
from segment.elements.kinematics import pose
from segment.elements.ligament import Ligament, ligament_state

SUM_RTOL = 1e-12          # n strips of force F/n at one strain sum to F up to rounding
JACOBIAN_RTOL, JACOBIAN_ATOL = 1e-9, 1e-7
POSES = [np.zeros(6), np.array([0.3, -0.2, 0.5, 0.05, 0.12, -0.04]),
         np.array([-0.6, 0.1, 0.4, -0.03, -0.1, 0.06])]


@pytest.fixture(scope="module")
def model():
    return segment.c5c6()


def _plain(lig: Ligament) -> Ligament:
    """The ligament rebuilt from its published fields only (no strip fields)."""
    return Ligament(lig.name, lig.insertion_c5, lig.insertion_c6, lig.l0, lig.curve,
                    lig.damping)


def test_one_strip_rows_are_the_published_numbers_bit_for_bit(model):
    _, _, _, _, a, b, l0, eps, f = model._params[:9]
    for i, lig in enumerate(model.ligaments):
        assert lig.strips == 1
        np.testing.assert_array_equal(a[i], lig.insertion_c5)
        np.testing.assert_array_equal(b[i], lig.insertion_c6)
        assert l0[i] == lig.l0
        np.testing.assert_array_equal(eps[i], lig.curve.strain)
        np.testing.assert_array_equal(f[i], lig.curve.force)


@pytest.mark.parametrize("q", POSES)
def test_one_strip_reproduces_todays_ligament_exactly(model, q):
    """Residual, Jacobian and states equal those of ligaments built without strip fields, and
    each state equals the ligament kernel evaluated on the record's own fields."""
    plain = model.replace(ligaments=tuple(_plain(x) for x in model.ligaments))
    load = segment.LOAD_CASES["FLX"]
    r1, J1 = model.residual_and_jacobian(q, load)
    r0, J0 = plain.residual_and_jacobian(q, load)
    np.testing.assert_array_equal(r1, r0)
    np.testing.assert_array_equal(J1, J0)
    st = model.state(q)
    p, R = pose(q, model.reference)
    for s, lig in zip(st.ligaments, model.ligaments, strict=True):
        _, length, strain, tension, force = ligament_state(
            0, p.astype(complex), R.astype(complex), lig.insertion_c5[None, :],
            lig.insertion_c6[None, :], np.array([lig.l0]), lig.curve.strain[None, :],
            lig.curve.force[None, :])
        assert s.name == lig.name and s.ligament == lig.name and s.strips == 1
        assert s.length == pytest.approx(length.real, rel=1e-12, abs=0)  # other pose path: rounding
        assert s.strain == pytest.approx(strain.real, rel=1e-12, abs=1e-15)
        assert s.tension == pytest.approx(tension.real, rel=1e-12, abs=0)  # other pose path
        np.testing.assert_allclose(s.force_on_c5, np.real(force), rtol=1e-12, atol=1e-12)
        assert not s.ruptured


def test_strip_positions_follow_eq_9a():
    lig = segment.c5c6().ligaments[0].split(4, width=8.0)
    np.testing.assert_allclose(lig.strip_offsets(), [-3.0, -1.0, 1.0, 3.0], rtol=0, atol=1e-15)
    assert lig.strip_names == ("ALL#1", "ALL#2", "ALL#3", "ALL#4")
    np.testing.assert_array_equal(segment.c5c6().ligaments[0].strip_offsets(), [0.0])


@pytest.mark.parametrize("q", POSES)
def test_strips_of_zero_width_carry_the_ligament_force(model, q):
    """The strips share the curve scaled by 1/n: coincident strips sum to the ligament."""
    split = model.replace(ligaments=tuple(x.split(5, width=0.0) for x in model.ligaments))
    load = segment.LOAD_CASES["EXT"]
    np.testing.assert_allclose(split.residual(q, load), model.residual(q, load),
                               rtol=SUM_RTOL, atol=1e-10)


def test_spread_strips_stay_near_the_ligament_at_nominal_load(model):
    r1 = segment.solve(model, segment.LOAD_CASES["FLX"])
    r4 = segment.solve(model.with_strips(4), segment.LOAD_CASES["FLX"])
    assert r1.converged and r4.converged
    assert np.max(np.abs(r4.q - r1.q)) < 0.01  # widths of mm change the pose by < 0.01 mm/rad


def test_ruptured_strip_carries_nothing_and_is_reported(model):
    m4 = model.with_strips({"ISL": 3})
    broken = m4.with_ruptured(["ISL#2"])
    q = POSES[1]
    st = broken.state(q)
    by_name = {s.name: s for s in st.ligaments}
    assert by_name["ISL#2"].ruptured and by_name["ISL#2"].tension == 0.0
    intact = {s.name: s for s in m4.state(q).ligaments}
    assert by_name["ISL#2"].strain == intact["ISL#2"].strain  # geometry unchanged
    assert intact["ISL#2"].tension > 0
    assert not by_name["ISL#1"].ruptured and by_name["ISL#1"].tension > 0
    np.testing.assert_array_equal(by_name["ISL#2"].force_on_c5, 0.0)


@pytest.mark.parametrize("q", POSES)
def test_jacobian_with_strips_and_rupture_matches_complex_step(model, q):
    m = model.with_strips({"ALL": 3, "CL-left": 2}).with_ruptured(["ALL#1", "CL-left#2"])
    load = segment.LOAD_CASES["AR"]
    r, J = m.residual_and_jacobian(q, load)
    rc, Jc = residual_jacobian_complex_step(q, load.as_array(), m._params)
    np.testing.assert_allclose(r, rc, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(J, Jc, rtol=JACOBIAN_RTOL, atol=JACOBIAN_ATOL)


def test_strip_errors_are_clear(model):
    with pytest.raises(ValueError,
                       match=r"strips must be an integer from 1 to 100 \(MAX_STRIPS\), got 0"):
        model.ligaments[0].split(0)
    with pytest.raises(ValueError, match="width must be >= 0"):
        model.ligaments[0].split(2, width=-1.0)
    with pytest.raises(ValueError, match=r"unknown strip\(s\) \['ISL#9'\]"):
        model.with_ruptured(["ISL#9"])
    with pytest.raises(ValueError, match=r"unknown ligament\(s\) \['XYZ'\]"):
        model.with_strips({"XYZ": 2})


def test_study_helpers_keep_strips(model):
    """Uncertainty samples and the unloaded-ligament table work on a split model."""
    from segment.studies import validation as v
    from segment.studies.uncertainty import sample_models

    split = model.with_strips({"ISL": 2})
    table = v.unloaded_ligaments(split)
    assert table["ligament"].tolist()[3:5] == ["ISL#1", "ISL#2"]
    models, _ = sample_models(split, 2, stiffness_spread=0.1, seed=0)
    assert all(m.strip_names == split.strip_names for m in models)
