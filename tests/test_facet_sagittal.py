"""The facet face's second angle, to the sagittal plane (``sagittal_deg``; PMC2219934 Table 2,
SOURCES.md §3): geometry, the default is today's normal to the last bit, left/right symmetry,
the tangent and the exact parameter derivatives against differences, continuity across 90 deg,
the data-folder round trip, and the energy balance of a motion with turned faces."""

import dataclasses
import math

import numpy as np
import pytest
from conftest import central_jacobian

import segment
from segment.core.io import load_parameters
from segment.core.save import save_parameters
from segment.elements.facet import SAGITTAL_NEUTRAL_DEG, FacetJoint, c6_normals
from segment.elements.loads import Load
from segment.studies.packing import complex_step_reference
from segment.studies.population_tables import _rotations

ANGLE_ATOL_DEG = 1e-10
"""Angles read back from a built normal: rounding of sin, cos and atan2 only."""
TANGENT_RTOL = 1e-5
"""Analytic tangent vs central differences of step 1e-6 (the contact law is C1 and the
differences' truncation error is ~1e-7 of an entry): the tolerance of tests/test_tangent.py."""
DERIVATIVE_ATOL = 1e-12
"""Compiled derivative vs the complex step (both exact; rounding of the largest entry)."""
CONTINUITY_DEG = 1e-5
"""Rotation at 1.8 N m may move by at most this [deg] when the angle moves 1e-6 deg across 90:
the normal is smooth in the angle (|dn/d angle| < 0.02 /deg), the equilibrium Lipschitz."""
ENERGY_TOL = 1e-4
"""Kinetic energy-work balance, Fritzkowski and Walczak eq. (55): tests/test_dynamics.py."""
POSTEROLATERAL_DEG = 105.0
"""A face turned 15 deg towards the side: within 1.3 SD of the published C6 mean (92-94 deg,
SD 9-12 deg), so a realistic specimen, and far enough from 90 that a wrong sign shows."""


def _turned(model, left: float, right: float | None = None):
    right = left if right is None else right
    ref = model.reference
    angles = {"left": left, "right": right}
    return model.replace(facets=tuple(f.modified(ref, sagittal_deg=angles[f.side])
                                      for f in model.facets))


def test_default_is_the_one_angle_normal_to_the_last_bit(model):
    a = np.array([42.75, 10.0, -30.0])
    n = c6_normals(a)
    np.testing.assert_array_equal(n[:, 0], -np.sin(np.radians(a)))
    np.testing.assert_array_equal(n[:, 1], 0.0)
    assert not np.signbit(n[:, 1]).any()                  # +0.0, as before: no -0.0
    np.testing.assert_array_equal(n[:, 2], np.cos(np.radians(a)))
    for f in model.facets:
        g = f.geometry(model.reference)
        assert g["sagittal_deg"] == SAGITTAL_NEUTRAL_DEG
        again = f.modified(model.reference, sagittal_deg=90.0)
        np.testing.assert_array_equal(again.disc_c6.normal, f.disc_c6.normal)
        np.testing.assert_array_equal(again.disc_c5.normal, f.disc_c5.normal)
        np.testing.assert_array_equal(again.disc_c5.center, f.disc_c5.center)


@pytest.mark.parametrize("incl", [42.75, 10.0, -30.0])
@pytest.mark.parametrize("sag", [70.0, 92.3, 105.0, 130.0])
def test_the_face_keeps_both_published_angles(model, incl, sag):
    """The angle to the transverse plane is the inclination; the trace of the face in a
    transverse section makes ``sag`` with the sagittal plane, measured on the lateral side;
    above 90 the face turns to its own side (posterolateral), and geometry() reads both back."""
    ref = model.reference
    for f in model.facets:
        j = f.modified(ref, inclination_deg=incl, sagittal_deg=sag, gap=0.4)
        n = j.disc_c6.normal
        lateral = math.copysign(1.0, j.disc_c6.center[1])
        assert math.degrees(math.acos(n[2])) == pytest.approx(abs(incl), abs=ANGLE_ATOL_DEG)
        s = math.copysign(1.0, incl)
        turn = math.degrees(math.atan2(s * lateral * n[1], -s * n[0]))
        assert 90.0 + turn == pytest.approx(sag, abs=ANGLE_ATOL_DEG)
        assert (lateral * n[1] > 0) == (sag > 90.0) or incl < 0
        g = j.geometry(ref)
        assert g["inclination_deg"] == pytest.approx(incl, abs=ANGLE_ATOL_DEG)
        assert g["sagittal_deg"] == pytest.approx(sag, abs=ANGLE_ATOL_DEG)
        assert g["gap"] == pytest.approx(0.4, abs=1e-12)


def test_a_midline_facet_has_no_side_to_turn_to(model):
    f = model.facets[0]
    g = f.geometry(model.reference)
    g.update(center_c6=np.array([-15.0, 0.0, 9.0]))
    FacetJoint.at_reference("mid", reference=model.reference, **g)     # 90 deg: fine
    g["sagittal_deg"] = 100.0
    with pytest.raises(ValueError, match="midline"):
        FacetJoint.at_reference("mid", reference=model.reference, **g)
    g["sagittal_deg"] = 180.0
    g["center_c6"] = np.array([-15.0, 20.0, 9.0])
    with pytest.raises(ValueError, match=r"sagittal_deg must be in \(0, 180\)"):
        FacetJoint.at_reference("left", reference=model.reference, **g)


MIRROR = np.array([1.0, -1.0, 1.0, -1.0, 1.0, -1.0])
"""The reflection y -> -y on q (x, y, z, phi_x, phi_y, phi_z) and on a moment: y and the
components of the axial vectors about x and z change sign (M Rx(a) Ry(b) Rz(c) M with
M = diag(1, -1, 1) is Rx(-a) Ry(b) Rz(-c); R0 = Ry(-5.2 deg) is unchanged)."""


@pytest.mark.parametrize("case", ["AR", "LB"])
def test_left_and_right_turned_alike_mirror_each_other(model, case):
    """Both faces turned 15 deg to their own side: the model is mirror-symmetric about the
    sagittal plane, so +M and -M in axial rotation (lateral bending) give mirrored poses
    (y, phi_x, phi_z flip) and the two facets swap forces."""
    m = _turned(model, POSTEROLATERAL_DEG)
    load = segment.LOAD_CASES[case]
    plus = segment.solve(m, load)
    mirrored = Load(np.asarray(load.force) * MIRROR[:3],
                    np.asarray(load.moment) * MIRROR[3:])
    minus = segment.solve(m, mirrored)
    assert plus.converged and minus.converged
    np.testing.assert_allclose(minus.q, MIRROR * plus.q, atol=1e-9)
    fp = m.state(plus.q).facet_table().set_index("facet")["force_N"]
    fm = m.state(minus.q).facet_table().set_index("facet")["force_N"]
    assert fp["right"] == pytest.approx(fm["left"], rel=1e-7, abs=1e-9)
    assert fp["left"] == pytest.approx(fm["right"], rel=1e-7, abs=1e-9)
    assert max(fp) > 1.0                              # a facet carries load


@pytest.mark.parametrize("sag", [75.0, 92.3, POSTEROLATERAL_DEG])
def test_tangent_matches_central_differences_in_contact(model, sag):
    m = _turned(model, sag)
    eq = segment.solve(m, segment.LOAD_CASES["AR"])
    assert eq.converged
    assert (m.state(eq.q).facet_table()["force_N"] > 1.0).any()
    q = eq.q
    K = m.jacobian(q, segment.LOAD_CASES["AR"])
    fd = central_jacobian(m, q, segment.LOAD_CASES["AR"], np.full(6, 1e-6))
    np.testing.assert_allclose(K, fd, rtol=TANGENT_RTOL, atol=TANGENT_RTOL * np.abs(fd).max())


def test_rotation_is_continuous_across_ninety_degrees(model):
    values = [_rotations([_turned(model, sag)], "axial-rotation")[0]
              for sag in (90.0 - 1e-6, 90.0, 90.0 + 1e-6)]
    assert values[1] == _rotations([model], "axial-rotation")[0]      # 90: today's model
    assert abs(values[0] - values[1]) < CONTINUITY_DEG
    assert abs(values[2] - values[1]) < CONTINUITY_DEG


def _space_with_sagittal(space):
    extra = {"sag_left": ((("facet", "left"),), "sagittal_deg", 92.0, 70.0, 115.0),
             "sag_right": ((("facet", "right"),), "sagittal_deg", 93.0, 70.0, 115.0),
             "gap_both": ((("facet", "left"), ("facet", "right")), "gap_mm", 0.3, 0.0, 1.0)}
    k = len(extra)

    def col(attr, i):
        return np.concatenate([getattr(space, attr), [v[i] for v in extra.values()]])

    return dataclasses.replace(
        space, names=space.names + tuple(extra),
        targets=space.targets + tuple(v[0] for v in extra.values()),
        fields=space.fields + tuple(v[1] for v in extra.values()),
        units=(*space.units, "deg", "deg", "mm"), nominal=col("nominal", 2),
        lower=col("lower", 3), upper=col("upper", 4),
        distributions=space.distributions + ("uniform",) * k,
        mu=np.concatenate([space.mu, np.full(k, np.nan)]),
        sigma=np.concatenate([space.sigma, np.full(k, np.nan)]),
        sources=space.sources + ("assumed (test)",) * k)


def test_pack_and_its_exact_derivative_by_the_sagittal_angle(model):
    """``pack`` equals the readable model, and the compiled derivative equals the complex
    step through ``pack`` and central differences, for a space with the angle of each side
    and a gap (which moves C5's face along the turned normal)."""
    space = _space_with_sagittal(segment.load_space())
    P = space.sample(12, seed=3)
    packed = space.pack(model, P)
    from segment.elements.tangent import pack

    for k in range(3):
        ref = pack(space.apply(model, P[k])._params)
        for a, b in zip(packed, ref[:3], strict=True):
            np.testing.assert_allclose(a[k], b, rtol=0, atol=1e-12)
    compiled = space.pack_derivative(model, P)
    reference = complex_step_reference(space, model, P)
    for a, b in zip(compiled, reference, strict=True):
        np.testing.assert_allclose(a, b, rtol=0,
                                   atol=DERIVATIVE_ATOL * max(np.abs(b).max(initial=0.0), 1.0))
    j = space.names.index("sag_left")
    Pp, Pm = P.copy(), P.copy()
    Pp[:, j] += 1e-5
    Pm[:, j] -= 1e-5
    fd = (space.pack(model, Pp)[2] - space.pack(model, Pm)[2]) / 2e-5
    np.testing.assert_allclose(compiled[2][:, j], fd, rtol=1e-6, atol=1e-9)
    assert np.abs(compiled[2][:, j, 0]).max() > 1e-3       # the left facet moves
    assert np.abs(compiled[2][:, j, 1]).max() == 0.0       # the right one does not


def test_data_folder_round_trip(model, data_copy, tmp_path):
    """A model with turned faces writes a ``sagittal_deg`` column (the packaged table has
    none, which means 90 deg) and loads back the same normals; a model at 90 deg leaves the
    table as it was."""
    save_parameters(model, tmp_path / "plain", sources=data_copy)
    assert ((tmp_path / "plain" / "facets.csv").read_text()
            == (data_copy / "facets.csv").read_text())
    turned = _turned(model, 100.0, 85.0)
    save_parameters(turned, tmp_path / "turned", sources=data_copy, note="test")
    text = (tmp_path / "turned" / "facets.csv").read_text()
    assert "sagittal_deg" in text.splitlines()[0]
    back = segment.c5c6(data_dir=tmp_path / "turned")
    for a, b in zip(back.facets, turned.facets, strict=True):
        np.testing.assert_allclose(a.disc_c6.normal, b.disc_c6.normal, atol=1e-9)
        np.testing.assert_allclose(a.disc_c5.center, b.disc_c5.center, atol=1e-6)
    assert load_parameters(tmp_path / "plain").facets[0].geometry(model.reference)[
        "sagittal_deg"] == 90.0


def test_energy_work_balance_with_turned_faces(model):
    """Fritzkowski and Walczak eq. (55) through a motion in which turned faces carry load."""
    from segment.solvers import dynamics as dyn

    m = _turned(model, POSTEROLATERAL_DEG, 80.0)
    r = dyn.simulate(m, segment.LOAD_CASES["AR"], t_end=0.06, gravity=False, rtol=1e-8,
                     atol=1e-10, n_output=61)
    assert r.success, r.message
    f = r.frame
    assert (f[["facet_left_force_N", "facet_right_force_N"]].to_numpy() > 1.0).any()
    assert r.energy_error < ENERGY_TOL
