"""The disc's alternative restoring laws (model forms, issue 22): neutral zone (Panjabi) and
Fritzkowski-Walczak eq. (35); slope, continuity, energy, the whole segment's Jacobian, the
disc_law.csv table, and the published law unchanged."""

import math

import numpy as np
import pytest
from conftest import central_jacobian

import segment
from segment.core.residual import residual_jacobian_complex_step
from segment.elements.disc import FW35_X_CAP, disc_energy, disc_restoring

K_POS, K_NEG = 12000.0, 18000.0          # N mm/rad, as phi_y of Table 2 (0.21, 0.32 N m/deg)
NZ = np.array([1.0, 0.08, 0.04, 0.1])   # code, zone +, zone - [rad], ratio
FW = np.array([2.0, 0.09, 0.05, 0.0])   # code, angle scale +, - [rad]
LAWS = {"neutral-zone": NZ, "fw35": FW}
# Central differences of smooth closed forms (step 1e-7 rad): truncation ~h^2 M''', rounding
# ~eps |M| / h; both below 1e-6 relative for these magnitudes.
FD_STEP = 1e-7
FD_RTOL = 1e-6
# Energy: U' = M by central differences, and the trapezoid integral of M on a fine grid.
ENERGY_RTOL = 1e-6
# Segment Jacobian vs the complex-step reference (same formulas in other arithmetic).
CS_RTOL = 1e-12
JAC_RTOL = 1e-5          # vs central differences (as tests/test_model.py)
# The packaged model's equilibria, computed before the laws existed (float.hex of q, FLX and
# EXT). Compiled for another CPU numba may differ in the last bits, hence not ==.
PUBLISHED_Q = {
    "FLX": ['0x1.07dd38b718a5ap-3', '0x1.009352c155768p-62', '-0x1.b656ef07bd3ebp-4',
            '-0x1.83282c7a55d2cp-65', '0x1.4d16972af8eecp-5', '0x1.71a8caf85b8c8p-64'],
    "EXT": ['-0x1.3b56cef15e9e4p-1', '-0x1.9d191fc880093p-64', '0x1.db01898f308c1p-2',
            '0x1.b69583cc82881p-64', '-0x1.93a8f0b3eac38p-5', '0x1.374f9e8b63780p-63'],
}
PUBLISHED_RTOL = 1e-12
PUBLISHED_ATOL = 1e-15      # the out-of-plane components are zero to rounding (~1e-19)


def _kinks(row):
    if row[0] == 1.0:
        return [0.0, row[1], -row[2]]
    return [0.0, 2 * row[1] * FW35_X_CAP, -2 * row[2] * FW35_X_CAP]


def _samples(row):
    """Points on every branch, away from the kinks."""
    pts = []
    for k in _kinks(row):
        pts += [k - 3e-3, k + 3e-3]
    pts += [0.2, -0.2, 0.5 * row[1], -0.5 * row[2]]
    return [x for x in pts if all(abs(x - k) > 1e-3 for k in _kinks(row))]


@pytest.mark.parametrize("name", list(LAWS))
def test_slope_is_the_derivative_of_the_moment(name):
    row = LAWS[name]
    for x in _samples(row):
        _m, slope = disc_restoring(row, x, K_POS, K_NEG)
        fd = (disc_restoring(row, x + FD_STEP, K_POS, K_NEG)[0]
              - disc_restoring(row, x - FD_STEP, K_POS, K_NEG)[0]) / (2 * FD_STEP)
        assert slope == pytest.approx(fd, rel=FD_RTOL), x
        cs = disc_restoring(row.astype(complex), complex(x, 1e-30), K_POS, K_NEG)[0].imag / 1e-30
        assert slope == pytest.approx(cs, rel=1e-13), x


@pytest.mark.parametrize("name", list(LAWS))
def test_continuous_across_every_kink_restoring_and_hardening(name):
    row = LAWS[name]
    for k in _kinks(row):
        lo = disc_restoring(row, k - 1e-12, K_POS, K_NEG)[0]
        hi = disc_restoring(row, k + 1e-12, K_POS, K_NEG)[0]
        assert abs(hi - lo) < 1e-6 * max(1.0, abs(hi)), (k, lo, hi)
    xs = np.linspace(-0.6, 0.6, 2001)
    m = np.array([disc_restoring(row, x, K_POS, K_NEG)[0] for x in xs])
    s = np.array([disc_restoring(row, x, K_POS, K_NEG)[1] for x in xs])
    assert np.all(np.sign(m) == np.sign(xs))        # restoring: -M pushes back to 0
    assert np.all(np.diff(m) > 0) and np.all(s > 0)   # stable: stiffness > 0 everywhere


@pytest.mark.parametrize("name", list(LAWS))
def test_the_law_derives_from_its_potential(name):
    row = LAWS[name]
    assert disc_energy(row, 0.0, K_POS, K_NEG) == 0.0
    for x in _samples(row):
        du = (disc_energy(row, x + 1e-6, K_POS, K_NEG)
              - disc_energy(row, x - 1e-6, K_POS, K_NEG)) / 2e-6
        assert du == pytest.approx(disc_restoring(row, x, K_POS, K_NEG)[0], rel=ENERGY_RTOL), x
    for end in (0.4, -0.4):          # across every branch: U(end) = int_0^end M
        xs = np.linspace(0.0, end, 400001)
        m = np.array([disc_restoring(row, x, K_POS, K_NEG)[0] for x in xs])
        integral = float(np.sum(0.5 * (m[1:] + m[:-1]) * np.diff(xs)))
        assert disc_energy(row, end, K_POS, K_NEG) == pytest.approx(integral,
                                                                        rel=ENERGY_RTOL)


def test_fw35_with_one_radian_is_the_published_eq35():
    # eq. (35): M = k_O tan(theta / 2) / cos(theta / 2); here k_O = 2 k
    row = np.array([2.0, 1.0, 1.0, 0.0])
    for theta in (0.05, 0.3, -0.2, 1.0):
        k = K_POS if theta >= 0 else K_NEG
        expected = 2 * k * math.tan(theta / 2) / math.cos(theta / 2)
        assert disc_restoring(row, theta, K_POS, K_NEG)[0] == pytest.approx(expected, rel=1e-14)
    assert disc_restoring(row, 0.0, K_POS, K_NEG)[1] == K_POS          # small-angle slope = k


def test_neutral_zone_without_a_zone_is_eq1():
    for row in (np.array([1.0, 0.0, 0.0, 0.3]), np.array([1.0, 0.1, 0.1, 1.0])):
        for x in (0.05, -0.07, 0.3, -0.3):
            k = K_POS if x >= 0 else K_NEG
            m, s = disc_restoring(row, x, K_POS, K_NEG)
            assert m == pytest.approx(k * x, rel=1e-15) and s == k


def test_disc_stiffness_api_and_checks():
    disc = segment.c5c6().disc
    assert disc.is_linear and disc.law == ("linear",) * 6
    nz = disc.with_law("phi_y", "neutral-zone", zone_pos=0.1, zone_neg=0.05, ratio=0.2)
    assert nz.law[4] == "neutral-zone" and not nz.is_linear
    q = np.array([0.0, 0, 0, 0, 0.05, 0])
    assert nz.force(q)[4] == pytest.approx(-0.2 * disc.k_positive[4] * 0.05)
    assert nz.scaled(2.0).law == nz.law          # scaling keeps the law
    assert nz.energy(q)[4] == pytest.approx(0.5 * 0.2 * disc.k_positive[4] * 0.05 ** 2)
    with pytest.raises(ValueError, match="stiffness ratio must lie in"):
        disc.with_law("phi_y", "neutral-zone", zone_pos=0.1, zone_neg=0.05, ratio=1.5)
    with pytest.raises(ValueError, match="half-widths must be >= 0"):
        disc.with_law("phi_y", "neutral-zone", zone_pos=-0.1, zone_neg=0.05, ratio=0.5)
    with pytest.raises(ValueError, match="angle scales must be > 0"):
        disc.with_law("phi_x", "fw35", scale_pos=0.0, scale_neg=0.5)
    with pytest.raises(ValueError, match="unknown disc law 'cubic'"):
        disc.with_law("phi_x", "cubic")
    with pytest.raises(ValueError, match=r"takes parameters \['scale_pos', 'scale_neg'\]"):
        disc.with_law("phi_x", "fw35", scale_pos=0.5)


@pytest.fixture(scope="module")
def form_model(model):
    disc = (model.disc.with_law("phi_y", "neutral-zone", zone_pos=0.07, zone_neg=0.04,
                                ratio=0.1)
            .with_law("phi_x", "fw35", scale_pos=0.3, scale_neg=0.4)
            .with_law("phi_z", "fw35", scale_pos=1.0, scale_neg=1.0))
    return model.replace(disc=disc)


@pytest.mark.parametrize("case", ["FLX", "EXT", "LB", "AR"])
def test_segment_jacobian_with_the_laws(form_model, case):
    load = segment.LOAD_CASES[case]
    r = segment.solve(form_model, load)
    assert r.converged, r.message
    for dq in (np.zeros(6), np.array([0.01, 0, -0.02, 0.03, 0.05, -0.01]),
               np.array([0.0, 0.02, 0.0, -0.04, -0.06, 0.02])):
        q = r.q + dq
        R, J = form_model.residual_and_jacobian(q, load)
        R2, J2 = residual_jacobian_complex_step(q, load.as_array(), form_model._params)
        np.testing.assert_allclose(J, J2, rtol=CS_RTOL, atol=CS_RTOL * np.abs(J).max())
        np.testing.assert_allclose(R, R2, rtol=CS_RTOL, atol=1e-9)
        Jfd = central_jacobian(form_model, q, load, np.full(6, 1e-6))
        np.testing.assert_allclose(J, Jfd, rtol=JAC_RTOL, atol=1e-6 * np.abs(J).max())


def test_a_wrong_law_slope_would_be_caught(form_model, monkeypatch):
    # the same check as above fails for a slope off by 1 %: the test can bite
    load = segment.LOAD_CASES["FLX"]
    q = segment.solve(form_model, load).q
    _R, J = form_model.residual_and_jacobian(q, load)
    J_bad = J.copy()
    J_bad[4, 4] *= 1.01
    Jfd = central_jacobian(form_model, q, load, np.full(6, 1e-6))
    assert not np.allclose(J_bad, Jfd, rtol=JAC_RTOL, atol=1e-6 * np.abs(J).max())


def test_the_neutral_zone_makes_flexion_compliant(model, form_model):
    load = segment.LOAD_CASES["FLX"]
    pub = segment.solve(model, load).displacement_from_unloaded[4]
    nz = segment.solve(form_model, load).displacement_from_unloaded[4]
    assert nz > pub          # a compliant zone can only add rotation


def test_energy_work_balance_with_the_laws(form_model):
    r = segment.simulate(form_model, segment.LOAD_CASES["EXT"], t_end=0.08, gravity=True,
                         rtol=1e-8, atol=1e-10, n_output=81)
    assert r.success, r.message
    assert r.energy_error < 1e-4      # the disc's potential enters V_el (tests/test_dynamics)


def test_published_model_is_unchanged_by_the_laws(model):
    assert model.disc.is_linear
    assert np.all(model._packed[0][28:] == 0.0)        # every coordinate on eq. (1)
    for case, hexes in PUBLISHED_Q.items():
        q = segment.solve(model, segment.LOAD_CASES[case]).q
        expected = np.array([float.fromhex(h) for h in hexes])
        np.testing.assert_allclose(q, expected, rtol=PUBLISHED_RTOL, atol=PUBLISHED_ATOL)


# ---------------------------------------------------------------- disc_law.csv
HEADER = ("dof,law,zone_pos_deg,zone_neg_deg,zone_ratio,angle_scale_pos_deg,"
          "angle_scale_neg_deg,source\n")


def _write(folder, rows):
    (folder / "disc_law.csv").write_text(HEADER + "".join(r + "\n" for r in rows),
                                         encoding="utf-8")


def test_disc_law_table_is_read(data_copy):
    _write(data_copy, ["phi_y,neutral-zone,4,2,0.1,,,test", "phi_x,fw35,,,,57.29577951308232,"
                       "60,test", "phi_z,linear,,,,,,test"])
    m = segment.c5c6(data_dir=data_copy)
    assert m.disc.law == ("linear", "linear", "linear", "fw35", "neutral-zone", "linear")
    np.testing.assert_allclose(m.disc.law_parameters[4], [math.radians(4), math.radians(2),
                                                          0.1])
    np.testing.assert_allclose(m.disc.law_parameters[3, :2], [1.0, math.radians(60)])
    assert any(f.name == "disc_law.csv" for f in segment.load_parameters(data_copy).files)


@pytest.mark.parametrize("row, message", [
    ("phi_y,cubic,,,,,,x", "line 2 (row 1), column 'law': unknown value 'cubic'"),
    ("x,neutral-zone,1,1,0.5,,,x", "column 'dof': unknown value 'x'"),
    ("phi_y,neutral-zone,4,,0.1,,,x", "column 'zone_neg_deg': the neutral-zone law needs"),
    ("phi_y,neutral-zone,4,2,0.1,30,,x", "column 'angle_scale_pos_deg': not a parameter of "
                                          "the neutral-zone law"),
    ("phi_y,neutral-zone,4,2,1.5,,,x", "column 'zone_ratio': must lie in (0, 1], got 1.5"),
    ("phi_y,neutral-zone,-1,2,0.5,,,x", "column 'zone_pos_deg': must be >= 0, got -1"),
    ("phi_y,fw35,,,,nan,40,x", "column 'angle_scale_pos_deg': expected a finite number"),
    ("phi_y,fw35,,,,0.1,40,x", "column 'angle_scale_pos_deg': 0.1 deg is outside the "
                               "plausible"),
    ("phi_y,linear,,,,,,", "column 'source': empty"),
])
def test_disc_law_table_errors_name_line_column_value(data_copy, row, message):
    _write(data_copy, [row])
    with pytest.raises(ValueError) as err:
        segment.c5c6(data_dir=data_copy)
    assert str(err.value).startswith("disc_law.csv")
    assert message in str(err.value)


def test_disc_law_table_duplicate_rotation(data_copy):
    _write(data_copy, ["phi_y,linear,,,,,,a", "phi_y,fw35,,,,30,30,b"])
    with pytest.raises(ValueError, match=r"line 3 \(row 2\), column 'dof': duplicate value "
                                         r"'phi_y' \(already in row 1, line 2\)"):
        segment.c5c6(data_dir=data_copy)
