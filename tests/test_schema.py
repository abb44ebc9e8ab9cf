"""Every parameter written down once (segment.core.schema): a new one is a row plus its law.

The done-when of issue 29: a made-up ligament parameter added to the schema in a test is
loaded, written back, packed, differentiated and range-checked with no other code change.
And the one writer of data folders, save_parameters, is the inverse of load_parameters.
"""

import filecmp
import shutil

import numpy as np
import pytest

import segment
from segment.core.io import data_dir, load_parameters, save_parameters
from segment.core.laws import RestLength
from segment.core.schema import COLUMNS, FIELDS, Column, Field, register
from segment.core.tables import POSITIVE, PlausibleRange
from segment.elements.tangent import L_L0
from segment.studies.packing import complex_step_reference
from segment.studies.space import ParameterSpace

DERIVATIVE_RTOL = 1e-9      # the compiled derivative against the complex step: rounding only
ROUND_TRIP_RTOL = 5e-6      # values written with 6 significant digits

# a made-up parameter: the rest length in centimetres (a second spelling of l0, for the test)
L0_CM = Column("ligaments.csv", "l0_cm", "cm", to_internal=10.0, hard=POSITIVE,
               plausible=PlausibleRange(0.1, 6.0, "cm", "made up for the test"),
               get=lambda x, model: x.l0, set=lambda x, value: x.with_rest_length(value))
L0_CM_FIELD = Field("ligament", "l0_cm", "cm", RestLength(scale=10.0), ("ligaments.csv",
                                                                       "l0_cm"))


def _with_column(folder, values_cm: dict[str, str]):
    """Append an ``l0_cm`` column to the folder's ligaments.csv."""
    path = folder / "ligaments.csv"
    lines = path.read_text().splitlines()
    header = lines[0].split(",")
    out = [lines[0] + ",l0_cm"]
    for line in lines[1:]:
        name = line.split(",")[header.index("name")]
        out.append(f"{line},{values_cm.get(name, '')}")
    path.write_text("\n".join(out) + "\n")


def _space_file(tmp_path, row: str):
    path = tmp_path / "space.csv"
    path.write_text("name,element,field,unit,nominal,lower,upper,distribution,dist_mu,"
                    f"dist_sigma,source\n{row}\n")
    return path


def test_a_made_up_parameter_is_loaded_written_packed_differentiated_and_checked(
        data_copy, tmp_path):
    with register(L0_CM, L0_CM_FIELD):
        # loaded: the column sets FL's rest length (1.62 cm = 16.2 mm)
        _with_column(data_copy, {"FL": "1.62"})
        model = segment.c5c6(data_dir=data_copy)
        fl = next(x for x in model.ligaments if x.name == "FL")
        assert fl.l0 == pytest.approx(16.2, rel=1e-15)
        # written back: the model's value in the column's unit, read back the same
        changed = model.replace(ligaments=tuple(
            x.with_rest_length(15.7) if x.name == "FL" else x for x in model.ligaments))
        out = tmp_path / "out"
        save_parameters(changed, out, sources=data_copy, note="test")
        text = (out / "ligaments.csv").read_text()
        assert "1.57" in text and "15.7" in text
        again = next(x for x in load_parameters(out).ligaments if x.name == "FL")
        assert again.l0 == pytest.approx(15.7, rel=ROUND_TRIP_RTOL)
        # packed: the parameter sets the rest length of every FL strip
        row = "fl,ligament:FL,l0_cm,cm,1.62,1.2,1.9,uniform,,,made up"
        space = ParameterSpace.from_csv(_space_file(tmp_path, row))
        base = segment.c5c6(data_dir=data_copy).with_strips({"FL": 3})
        P = np.array([[1.5], [1.8]])
        _, lig, _ = space.pack(base, P)
        for k, p in enumerate(P[:, 0]):
            expected = space.apply(base, [p])._packed
            np.testing.assert_allclose(lig[k], expected[1], rtol=1e-14)
            rows = [i for i, n in enumerate(base.strip_names) if n.startswith("FL")]
            assert np.all(lig[k, rows, L_L0] > 0)
        # differentiated: the compiled derivative against the complex step through pack
        d = space.pack_derivative(base, P)
        ref = complex_step_reference(space, base, P)
        for a, b in zip(d, ref, strict=True):
            np.testing.assert_allclose(a, b, rtol=DERIVATIVE_RTOL, atol=1e-12)
        assert np.abs(d[1]).max() > 0
        # range-checked: the hard limit and the plausible range of the column
        with pytest.raises(ValueError, match=r"l0_cm must be > 0, got -1"):
            space.check([[-1.0]])
        with pytest.raises(ValueError, match=r"plausible range 0.1 to 6 cm"):
            space.check([[60.0]])
        bad = tmp_path / "bad"
        shutil.copytree(data_copy, bad)
        text = (bad / "ligaments.csv").read_text().replace(",1.62\n", ",0\n")
        (bad / "ligaments.csv").write_text(text)
        with pytest.raises(ValueError, match=r"column 'l0_cm': must be > 0, got 0"):
            load_parameters(bad)
    assert ("ligaments.csv", "l0_cm") not in COLUMNS and ("ligament", "l0_cm") not in FIELDS


def test_register_refuses_a_second_row_of_the_same_name():
    with pytest.raises(ValueError, match="already has"), register(
            Column("ligaments.csv", "l0_mm", "mm")):
        pass
    assert COLUMNS[("ligaments.csv", "l0_mm")].unit == "mm"


def test_saving_the_packaged_model_writes_the_packaged_tables(tmp_path):
    """save_parameters is the inverse of load_parameters: an unchanged model writes the same
    bytes (every cell keeps its text and source)."""
    out = tmp_path / "out"
    save_parameters(segment.c5c6(), out)
    for path in sorted(out.glob("*.csv")):
        assert filecmp.cmp(path, data_dir() / path.name, shallow=False), path.name
    assert not (out / "states.csv").exists()         # not a parameter table


def test_a_changed_model_is_written_with_its_values_and_says_so(tmp_path):
    from segment.studies.space import load_space

    space = load_space()
    model = segment.c5c6()
    p = space.sample(1, seed=3)[0]
    changed = space.apply(model, p)
    out = tmp_path / "out"
    save_parameters(changed, out, note="changed by the test")
    again = segment.c5c6(data_dir=out)
    np.testing.assert_allclose(again._packed[0], changed._packed[0], rtol=ROUND_TRIP_RTOL)
    np.testing.assert_allclose(again._packed[1], changed._packed[1], rtol=ROUND_TRIP_RTOL)
    np.testing.assert_allclose(again._packed[2], changed._packed[2], rtol=ROUND_TRIP_RTOL,
                               atol=1e-9)
    assert "changed by the test; was:" in (out / "ligaments.csv").read_text()


def test_a_disc_law_is_written_for_every_rotation(tmp_path):
    model = segment.c5c6()
    model = model.replace(disc=model.disc.with_law("phi_y", "neutral-zone", zone_pos=0.035,
                                                   zone_neg=0.0175, ratio=0.2))
    out = tmp_path / "out"
    save_parameters(model, out, note="test law")
    rows = (out / "disc_law.csv").read_text().splitlines()
    assert [r.split(",")[:2] for r in rows[1:]] == [["phi_x", "linear"],
                                                    ["phi_y", "neutral-zone"],
                                                    ["phi_z", "linear"]]
    again = segment.c5c6(data_dir=out)
    np.testing.assert_allclose(again.disc.law_parameters, model.disc.law_parameters,
                               rtol=ROUND_TRIP_RTOL)


def test_every_field_has_a_plausible_range_and_a_hard_limit():
    for f in FIELDS.values():
        assert f.range.lower < f.range.upper and len(f.range.reason) > 20, f.name
        assert f.limit is not None, f.name
        if f.column is not None:
            assert f.column in COLUMNS, f.name


def test_save_refuses_to_overwrite_its_sources(data_copy):
    with pytest.raises(ValueError, match="sources' folder"):
        save_parameters(segment.c5c6(), data_copy, sources=data_copy)
