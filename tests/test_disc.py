"""Disc alone, eq. (1) and Table 2: closed-form equilibria."""

import numpy as np
import pytest

import segment

# Newton on a piecewise-linear law lands on the exact solution up to rounding.
CLOSED_FORM_RTOL = 1e-12
OFF_AXIS_ATOL = 1e-12

TABLE2 = {  # case -> (coordinate index, published stiffness, unit)
    "AS": (0, 62.0, "N/mm"), "PS": (0, 50.0, "N/mm"), "LS": (1, 73.0, "N/mm"),
    "TNS": (2, 68.0, "N/mm"), "CMP": (2, 492.0, "N/mm"), "LB": (3, 0.33, "Nm/deg"),
    "FLX": (4, 0.21, "Nm/deg"), "EXT": (4, 0.32, "Nm/deg"), "AR": (5, 0.42, "Nm/deg"),
}


@pytest.mark.parametrize("case", list(TABLE2))
def test_disc_alone_reproduces_table2(disc_only, case):
    dof, k, unit = TABLE2[case]
    load = segment.LOAD_CASES[case]
    result = segment.solve(disc_only, load)
    assert result.converged, result.message
    if unit == "N/mm":
        expected = load.force[dof] / k                       # 20 N / k [mm]
        got = result.q[dof]
    else:
        expected = load.moment[dof - 3] / 1000.0 / k         # 1.8 N m / k [deg]
        got = np.degrees(result.q[dof])
    assert got == pytest.approx(expected, rel=CLOSED_FORM_RTOL)
    others = np.delete(result.q, dof)
    np.testing.assert_allclose(others, 0.0, atol=OFF_AXIS_ATOL)


def test_disc_force_is_sign_dependent():
    disc = segment.c5c6().disc
    q = np.array([1.0, -1.0, -1.0, 0.1, -0.1, 0.2])
    k = disc.stiffness(q)
    assert k[0] == 62.0          # x >= 0: AS
    assert k[2] == 492.0         # z < 0: CMP
    assert k[4] == pytest.approx(0.32e3 * 180 / np.pi)   # phi_y < 0: EXT
    # restoring: x = +1 mm pulls back with 62 N, z = -1 mm pushes up with 492 N (Table 2)
    assert disc.force(q)[0] == -62.0
    assert disc.force(q)[2] == 492.0


def test_disc_rejects_bad_stiffness():
    with pytest.raises(ValueError, match=r"k_negative\[phi_y\] must be >= 0, got -1"):
        segment.DiscStiffness(np.ones(6), np.array([1, 1, 1, 1, -1.0, 1]))
    # zero is allowed: a device takes the coordinate over (the disc prosthesis of
    # segment.core.states); the data tables still require > 0
    assert segment.DiscStiffness(np.ones(6), np.zeros(6)).k_negative.sum() == 0.0
    with pytest.raises(ValueError, match=r"shape \(6,\)"):
        segment.DiscStiffness(np.ones(5), np.ones(6))
