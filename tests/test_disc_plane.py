"""Quasi-static disc on a plane: settles to flat contact as the load moves to the centre."""

import itertools

import numpy as np
import pytest

from segment.elements.disc_plane import rest_on_plane, tilt_closed_form

# The closed form neglects the tilt of the line of action (alpha/2 from vertical): its error
# grows like alpha^2; below 2 deg of tilt it is under 0.1 % of the tilt.
CLOSED_FORM_RTOL = 1e-3
LOAD_N = 10.0


@pytest.mark.parametrize("offset", [0.05, 0.2, 0.5, 1.0, 2.0])
def test_tilt_matches_the_closed_form_for_small_tilts(offset):
    r = rest_on_plane(offset, load=LOAD_N)
    assert r.converged, r.message
    assert r.tilt == pytest.approx(tilt_closed_form(offset, radius=5.0, blend=16.7),
                                   rel=CLOSED_FORM_RTOL)
    assert r.relative_indentation == pytest.approx(offset / 5.0, rel=CLOSED_FORM_RTOL)
    assert r.contact_force == pytest.approx(LOAD_N, rel=1e-3)


def test_centred_load_gives_flat_contact_with_the_flat_indentation():
    r = rest_on_plane(0.0, load=LOAD_N)
    assert r.converged
    assert abs(r.tilt) < 1e-9 and r.relative_indentation < 1e-9
    assert r.penetration == pytest.approx(np.sqrt(LOAD_N / 2000.0), rel=1e-9)   # F = k2 u^2


def test_settling_is_monotonic_as_the_offset_shrinks():
    offsets = [4.0, 2.0, 1.0, 0.5, 0.1, 0.0]
    tilts = [rest_on_plane(e).tilt for e in offsets]
    assert all(a > b for a, b in itertools.pairwise(tilts))
    assert tilts[-1] == pytest.approx(0.0, abs=1e-9)


def test_bad_input():
    with pytest.raises(ValueError, match="offset must satisfy"):
        rest_on_plane(5.0)
    with pytest.raises(ValueError, match="blend constant C must be a finite number > 0"):
        rest_on_plane(1.0, blend=0.0)
    with pytest.raises(ValueError, match="radius must be a finite number > 0"):
        rest_on_plane(1.0, radius=float("nan"))
    with pytest.raises(ValueError, match="load must be a finite number > 0"):
        rest_on_plane(1.0, load=float("inf"))
    with pytest.raises(ValueError, match="offset must satisfy"):
        tilt_closed_form(6.0, radius=5.0, blend=16.7)     # was NaN
    with pytest.raises(ValueError, match="blend constant C"):
        tilt_closed_form(1.0, radius=5.0, blend=0.0)


def test_relative_indentation_is_the_blend_weight_of_the_tilt():
    """r / r0 = 1 - exp(-C sin alpha) (cylinder paper, 1.3), as the drop reports it."""
    r = rest_on_plane(1.0, load=LOAD_N)
    assert r.relative_indentation == pytest.approx(1.0 - np.exp(-16.7 * np.sin(abs(r.tilt))),
                                                   rel=1e-12)
