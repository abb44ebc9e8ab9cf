"""Trilinear tension-only ligament law (Table 3, Fig. 2)."""

import numpy as np
import pytest

import segment
from segment import TrilinearCurve

ALL = TrilinearCurve.from_table3(eps_max=0.58, f_max_N=111.0, a_rel=(0.24, 0.11),
                                 b_rel=(0.80, 0.88))
EXACT = 1e-12


def test_curve_passes_through_support_points():
    for eps, f in [(0.0, 0.0), (0.24 * 0.58, 0.11 * 111), (0.80 * 0.58, 0.88 * 111),
                   (0.58, 111.0)]:
        assert ALL(eps)[0] == pytest.approx(f, abs=EXACT)


def test_curve_is_zero_in_compression():
    for eps in (-1e-12, -0.01, -0.5):
        assert ALL(eps) == (0.0, 0.0)


def test_slopes_are_the_segment_slopes_and_continue_past_c():
    e, f = ALL.strain, ALL.force
    assert ALL(0.5 * e[0])[1] == pytest.approx(f[0] / e[0])
    assert ALL(0.5 * (e[0] + e[1]))[1] == pytest.approx((f[1] - f[0]) / (e[1] - e[0]))
    s_bc = (f[2] - f[1]) / (e[2] - e[1])
    assert ALL(0.5 * (e[1] + e[2]))[1] == pytest.approx(s_bc)
    assert ALL(1.5 * e[2]) == pytest.approx((f[2] + s_bc * 0.5 * e[2], s_bc))


def test_law_is_continuous_at_support_points():
    for x in ALL.strain:
        lo, hi = ALL(x * (1 - 1e-12))[0], ALL(x * (1 + 1e-12))[0]
        assert hi - lo == pytest.approx(0.0, abs=1e-8)


def test_unsorted_points_are_rejected():
    with pytest.raises(ValueError, match="0 < A < B < C"):
        TrilinearCurve(np.array([0.2, 0.1, 0.5]), np.array([1.0, 2.0, 3.0]))


def test_ligament_tension_in_state_follows_the_curve(model):
    st = model.state(np.zeros(6))
    by_name = {s.name: s for s in st.ligaments}
    # SOURCES.md §4 (computed from Tables 1 and 4): lengths at the reference pose
    for name, length in [("ALL", 18.367), ("PLL", 16.862), ("FL", 15.393), ("ISL", 15.542),
                         ("CL-left", 5.848), ("CL-right", 5.848)]:
        assert by_name[name].length == pytest.approx(length, abs=5e-4)
    lig = {x.name: x for x in model.ligaments}
    for name, s in by_name.items():
        assert s.strain == pytest.approx((s.length - lig[name].l0) / lig[name].l0)
        assert s.tension == pytest.approx(lig[name].curve(s.strain)[0])
        # the force on C5 points from the C5 insertion to the C6 insertion, magnitude = tension
        d = s.insertion_c6 - s.insertion_c5_in_c6
        np.testing.assert_allclose(s.force_on_c5, s.tension * d / np.linalg.norm(d), atol=1e-12)
    assert by_name["ALL"].tension > 0 and by_name["FL"].tension > 0   # stretched at q = 0
    assert by_name["PLL"].tension == 0 and by_name["ISL"].tension == 0


def test_beyond_max_flag(model):
    q = np.array([0, 0, 0, 0, np.radians(25.0), 0])   # strong flexion stretches FL past eps_max
    fl = {s.name: s for s in model.state(q).ligaments}["FL"]
    assert fl.strain > 0.21 and fl.beyond_max


def test_ligament_record_validates():
    with pytest.raises(ValueError, match="'CL-left': l0 must be > 0"):
        segment.Ligament("CL-left", np.zeros(3), np.ones(3), -6.0, ALL)
