"""The parameter-space file: every bad-input path is one clear error; packing equals the
readable model; the priors respect their bounds."""

import csv

import numpy as np
import pytest

import segment
from segment.core.tables import ImplausibleDataWarning
from segment.elements.tangent import pack
from segment.studies.packing import complex_step_reference
from segment.studies.space import ParameterSpace, default_space_path, load_space

PACK_ATOL = 1e-12


@pytest.fixture(scope="module")
def space():
    return load_space()


def _rows():
    with open(default_space_path(), newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _write(tmp_path, rows, header=None):
    path = tmp_path / "space.csv"
    header = header or list(rows[0])
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=header, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    return path


def test_packaged_space_reads_and_names_every_assumption(space):
    assert space.dim == 21
    for src in space.sources:
        assert src
        assert "FACTS" not in src and "/work" not in src
    # every parameter without a published range says "assumed"
    for name in ("facet_gap", "facet_blend_C", "stiffness_ALL", "disc_phi_y"):
        assert "assumed" in space.sources[space.names.index(name)]
    assert np.all(space.lower <= space.nominal) and np.all(space.nominal <= space.upper)


@pytest.mark.parametrize("row, column, value, message", [
    (0, "lower", "0.6", "lower must be < upper"),
    (1, "nominal", "60", "must lie within"),
    (2, "element", "facet:middle", "unknown facet 'middle'"),
    (3, "element", "vertebra:C5", "unknown element"),
    (4, "field", "thickness_mm", "unknown field 'thickness_mm'"),
    (1, "dist_sigma", "", "needs dist_mu and dist_sigma"),
    (0, "distribution", "beta", "unknown distribution 'beta'"),
    (5, "lower", "abc", "expected a plain number (the unit is in the column header), got "
                        "'abc'"),
    (6, "name", "l0_ALL", "duplicate parameter 'l0_ALL'"),
    (6, "element", "ligament:ALL", "ligament:ALL l0_mm is already set by row 6"),
    (7, "source", "", "empty"),
    (0, "dist_mu", "3", "a uniform prior takes no parameters"),
    (9, "element", "ligament:CL-left;disc:x", "one kind of element"),
])
def test_bad_rows_are_one_clear_error(tmp_path, row, column, value, message):
    rows = _rows()
    rows[row][column] = value
    path = _write(tmp_path, rows)
    with pytest.raises(ValueError) as exc:
        ParameterSpace.from_csv(path)
    text = str(exc.value)
    # the reader of segment.core.io: the file line (header = line 1) and the data row
    assert text.startswith(f"space.csv, line {row + 2} (row {row + 1}), column {column!r}")
    assert message in text


def test_missing_column_and_missing_file(tmp_path):
    rows = _rows()
    header = [h for h in rows[0] if h != "dist_sigma"]
    with pytest.raises(ValueError, match=r"space.csv: missing column\(s\) \['dist_sigma'\]"):
        ParameterSpace.from_csv(_write(tmp_path, rows, header))
    with pytest.raises(ValueError, match="parameter-space file not found"):
        ParameterSpace.from_csv(tmp_path / "nope.csv")


def test_byte_order_mark_is_read(tmp_path, space):
    path = _write(tmp_path, _rows())
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    back = ParameterSpace.from_csv(path)
    assert back.names == space.names
    np.testing.assert_array_equal(back.lower, space.lower)


def test_semicolon_separated_file_gets_a_hint(tmp_path):
    path = _write(tmp_path, _rows())
    path.write_text(path.read_text(encoding="utf-8").replace(",", ";"), encoding="utf-8")
    with pytest.raises(ValueError, match="separated by ';' \\(semicolons\\), not commas"):
        ParameterSpace.from_csv(path)


def test_all_errors_of_the_file_in_one_message(tmp_path):
    rows = _rows()
    rows[0]["lower"] = "abc"
    rows[2]["distribution"] = "beta"
    rows[4]["source"] = ""
    with pytest.raises(ValueError) as exc:
        ParameterSpace.from_csv(_write(tmp_path, rows))
    text = str(exc.value)
    assert text.startswith("space.csv: 3 errors: ")
    for part in ("line 2 (row 1), column 'lower': expected a plain number", "got 'abc'",
                 "line 4 (row 3), column 'distribution': unknown distribution 'beta'",
                 "line 6 (row 5), column 'source': empty"):
        assert part in text


def test_nominal_set_packs_to_the_model(model, space):
    for a, b in zip(space.pack(model, space.nominal[None]), model._packed[:3], strict=True):
        np.testing.assert_array_equal(a[0], b)


def test_pack_equals_the_readable_model(model, space):
    P = space.sample(6, seed=3)
    packed = space.pack(model, P)
    for k in range(P.shape[0]):
        ref = pack(space.apply(model, P[k])._params)
        for a, b in zip(packed, ref[:3], strict=True):    # ref[3]: point restraints
            np.testing.assert_allclose(a[k], b, rtol=0, atol=PACK_ATOL)


def test_pack_follows_ligaments_to_their_rows(space):
    """A model without some ligaments (posterior removed): their parameters do nothing."""
    m = segment.c5c6(ligaments=("ALL", "PLL"), facets=False)
    P = space.sample(3, seed=4)
    packed = space.pack(m, P)
    for k in range(3):
        ref = pack(space.apply(m, P[k])._params)
        for a, b in zip(packed, ref[:3], strict=True):    # ref[3]: point restraints
            np.testing.assert_allclose(a[k], b, rtol=0, atol=PACK_ATOL)


def test_pack_derivative_matches_central_differences(model, space):
    P = space.sample(2, seed=5)
    exact = space.pack_derivative(model, P)
    for j in range(space.dim):
        h = 1e-6 * (space.upper[j] - space.lower[j])
        Pp, Pm = P.copy(), P.copy()
        Pp[:, j] += h
        Pm[:, j] -= h
        for a, b, d in zip(space.pack(model, Pp), space.pack(model, Pm), exact, strict=True):
            fd = (a - b) / (2 * h)
            np.testing.assert_allclose(d[:, j], fd, rtol=1e-6, atol=1e-6 * np.abs(a).max())


DERIVATIVE_RTOL = 1e-12
"""Compiled derivative vs the complex step through ``pack``: both exact, so equal to rounding
of the largest entry (the worst seen is 1.4e-14 of it)."""


def _assert_derivatives_equal(space, model, P):
    compiled = space.pack_derivative(model, P)
    reference = complex_step_reference(space, model, P)
    for a, b in zip(compiled, reference, strict=True):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=0,
                                   atol=DERIVATIVE_RTOL * max(np.abs(b).max(initial=0.0), 1.0))
    return compiled


def test_compiled_pack_derivative_equals_the_complex_step(model, space):
    P = np.vstack([space.sample(40, seed=6), space.lower, space.upper])
    d = _assert_derivatives_equal(space, model, P)
    # it moves what the space says: the facet rows depend on the set (inclination, gap),
    # the scales and rest lengths do not
    assert np.abs(d[2] - d[2][:1]).max() > 0.1
    assert np.abs(d[0] - d[0][:1]).max() == 0.0


def test_plan_says_which_entries_each_parameter_moves(model, space):
    """``PackPlan.moved`` (read instead of scanning every chunk) covers every nonzero
    derivative of any set, and for the packaged space gives the same element flags as the
    scan."""
    from segment.studies.packing import pack_plan
    from segment.studies.sensitivity import touch_flags

    P = np.vstack([space.sample(200, seed=9), space.lower, space.upper])
    dense = space.pack_derivative(model, P)
    moved = pack_plan(space, model).moved
    for d, m in zip(dense, moved, strict=True):
        assert m.shape == d.shape[1:]
        assert not ((d != 0) & ~m).any()             # nothing moves outside the plan
    scanned = touch_flags(*((d != 0).any(axis=0) for d in dense))
    np.testing.assert_array_equal(touch_flags(*moved), scanned)


def test_compiled_pack_derivative_with_several_parameters_on_one_entry(model, space):
    """Spaces built in code may let two parameters act on one entry (a file may not): the
    product rule for the multiplied entries, the last writer for the facet geometry, as
    ``pack`` does them."""
    import dataclasses

    extra = {  # name: (targets, field, nominal, lower, upper)
        "disc_z_again": ((("disc", "z"),), "stiffness_scale", 1.0, 0.5, 1.5),
        "stiffness_FL_again": ((("ligament", "FL"),), "stiffness_scale", 1.0, 0.5, 1.5),
        "l0_FL_again": ((("ligament", "FL"),), "l0_mm", 15.0, 14.0, 16.0),
        "incl_left_last": ((("facet", "left"),), "inclination_deg", 40.0, 30.0, 50.0),
        "gap_right_last": ((("facet", "right"),), "gap_mm", 0.2, 0.0, 0.5),
        "radius_left_last": ((("facet", "left"),), "radius_mm", 5.2, 4.5, 6.0),
        "blend_right_last": ((("facet", "right"),), "blend_C", 10.0, 0.0, 40.0),
    }
    names = space.names + tuple(extra)
    k = len(extra)

    def col(attr, i):
        return np.concatenate([getattr(space, attr), [v[i] for v in extra.values()]])

    wide = dataclasses.replace(
        space, names=names, targets=space.targets + tuple(v[0] for v in extra.values()),
        fields=space.fields + tuple(v[1] for v in extra.values()),
        units=space.units + ("-",) * k, nominal=col("nominal", 2), lower=col("lower", 3),
        upper=col("upper", 4), distributions=space.distributions + ("uniform",) * k,
        mu=np.concatenate([space.mu, np.full(k, np.nan)]),
        sigma=np.concatenate([space.sigma, np.full(k, np.nan)]),
        sources=space.sources + ("assumed (test)",) * k)
    P = wide.sample(25, seed=7)
    d = _assert_derivatives_equal(wide, model, P)
    # the earlier parameters that set a value are overwritten: no derivative left
    for early, late in (("facet_inclination_left", "incl_left_last"),
                        ("facet_radius", "radius_left_last"), ("l0_FL", "l0_FL_again")):
        i, j = wide.names.index(early), wide.names.index(late)
        part = 1 if early.startswith("l0") else 2
        row = 2 if early.startswith("l0") else 0     # FL's row / the left facet
        assert np.abs(d[part][:, i, row]).max() == 0.0, early
        assert np.abs(d[part][:, j, row]).max() > 0.0, late
    # and pack does what the readable model does with such a space
    packed = wide.pack(model, P)
    for k in range(3):
        ref = pack(wide.apply(model, P[k])._params)
        for a, b in zip(packed, ref[:3], strict=True):    # ref[3]: point restraints
            np.testing.assert_allclose(a[k], b, rtol=0, atol=PACK_ATOL)


def test_compiled_pack_derivative_on_other_models(space):
    """Ligaments in strips (several packed rows each: found by probing), no facets, or some
    ligaments removed (their parameters move nothing)."""
    strips = segment.c5c6().with_strips(3)
    assert strips._packed[1].shape[0] > len(strips.ligaments)
    for m in (strips, segment.c5c6(facets=False), segment.c5c6(ligaments=("ALL", "PLL"))):
        _assert_derivatives_equal(space, m, space.sample(5, seed=8))


def test_priors_stay_in_bounds_and_follow_their_shape(space):
    P = space.sample(20000, seed=0)
    assert np.all(P >= space.lower) and np.all(P <= space.upper)
    j = space.names.index("facet_inclination_left")   # normal(43.2, 5.4) truncated at +-2 SD
    assert abs(np.median(P[:, j]) - 43.2) < 0.2
    j = space.names.index("facet_blend_C")             # lognormal, median 16.7
    assert abs(np.median(P[:, j]) - 16.7) < 0.5
    j = space.names.index("l0_ALL")                    # uniform 17.5 .. 18.5
    assert abs(P[:, j].mean() - 18.0) < 0.02


def test_bad_parameter_sets_are_named(space):
    P = space.nominal.copy()
    with pytest.raises(ValueError, match=r"shape \(M, 21\)"):
        space.check(P[:5])
    P[space.names.index("l0_FL")] = -1.0
    with pytest.raises(ValueError, match="parameter set 0, 'l0_FL': l0_mm must be > 0"):
        space.check(P)
    P = space.nominal.copy()
    P[0] = np.nan
    with pytest.raises(ValueError, match="'facet_gap': expected a finite number"):
        space.check(P)


def test_subset_keeps_the_named_parameters(space, model):
    sub = space.subset(["disc_phi_y", "l0_FL"])
    assert sub.names == ("disc_phi_y", "l0_FL")
    with pytest.raises(ValueError, match="unknown parameter"):
        space.subset(["nope"])
    m = sub.apply(model, [1.1, 15.2])
    assert m.disc.k_positive[4] == pytest.approx(1.1 * model.disc.k_positive[4])
    assert [x.l0 for x in m.ligaments if x.name == "FL"] == [15.2]


# ------------------------------------------------- the model forms' fields (issue 22 x 21)
def test_model_values_of_the_forms_fields():
    """The forms' fields read from the model: a factor is 1, a law parameter is the model's
    (NaN where its coordinate is not on that law), a reference strain is l_ref / l0 - 1
    (NaN where one strain sets ligaments whose model strains differ)."""
    import math

    import segment
    from segment.studies.forms import load_form

    form = load_form("neutral-zone")
    names = list(form.space.names)
    published = segment.c5c6()
    v = form.space.model_values(published)
    assert v[names.index("disc_phi_y_flexion")] == 1.0
    assert math.isnan(v[names.index("zone_flexion")])       # phi_y is on eq. (1) here
    assert math.isnan(v[names.index("ref_strain_posterior")])   # FL +0.026, ISL -0.029
    all_ = {x.name: x for x in published.ligaments}["ALL"]
    assert v[names.index("ref_strain_ALL")] == pytest.approx(
        all_.reference_length(published.reference) / all_.l0 - 1.0, rel=1e-12)
    nz = form.model(published)
    p = form.space.nominal.copy()
    p[names.index("zone_flexion")] = 6.5
    applied = form.space.apply(nz, p)
    w = form.space.model_values(applied)
    assert w[names.index("zone_flexion")] == pytest.approx(6.5, rel=1e-12)
    assert w[names.index("zone_extension")] == pytest.approx(
        form.space.nominal[names.index("zone_extension")], rel=1e-12)


def test_forms_fields_plausibility_and_hard_limits():
    from segment.studies.forms import load_form

    space = load_form("neutral-zone").space
    names = list(space.names)
    p = space.nominal.copy()
    p[names.index("ref_strain_ALL")] = 10.0        # 10 % typed as 10
    with pytest.raises(ValueError, match=r"ref_strain_ALL.*plausible range"):
        space.check(p)
    with pytest.warns(ImplausibleDataWarning, match="ref_strain"):
        space.check(p, strict=False)
    p = space.nominal.copy()
    p[names.index("zone_flexion")] = -1.0           # a zone below 0: an error either way
    with pytest.raises(ValueError, match=r"zone_flexion.*must be >= 0"):
        space.check(p, strict=False)
