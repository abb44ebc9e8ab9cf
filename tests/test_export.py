"""Export to OpenSim and MuJoCo (issue 30): the files' structure and units, the error messages,
and each file loaded in its own tool, whose static equilibria (found there, by Newton on the
tool's own residual) must be ``segment.solve``'s.

The cross-checks are skipped only where the extra (``opensim``, ``mujoco``) is absent.
"""

import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import segment
from segment.cli import main
from segment.core.io import load_parameters
from segment.export.common import (
    FACET_APPROXIMATION,
    PiecewiseLinear,
    approximated_residual,
    disc_functions,
    facet_contacts,
    internal_generalized,
    si_q,
)
from segment.export.mjcf import mjcf_xml, write_mjcf
from segment.export.osim import osim_xml, write_osim

EQUILIBRIUM_TOL = 1e-8
"""|q_tool - q_segment| [mm, rad] at the nine equilibria without facets (the issue's bound;
measured 4e-12, the finite-difference Newton's rounding floor)."""
RESIDUAL_RTOL = 1e-12
"""|Q_tool - Q_segment| over max |Q_segment| at sample poses: the same force field to
rounding (measured 3e-15 in OpenSim, 3e-15 in MuJoCo)."""
MJCF_FACET_ATOL = 2.0
"""|Q_MuJoCo - Q_approximation| [N, N mm] with facets at the sample poses: MuJoCo's facet law
is the quadratic part interpolated at 20 steps (<= 0.11 N) along a tendon 100 m long (its
direction off the normal by lateral / 100 m); measured 1.8 N mm at the deepest sample pose
(7 mm into the facet, 35000 N mm of residual)."""

SAMPLE_POSES = [np.zeros(6),
                np.array([0.1, -0.2, 0.05, 0.02, 0.04, -0.03]),
                np.array([-0.4, 0.3, -0.1, -0.05, -0.06, 0.04]),
                np.array([0.5, 0.0, 0.2, 0.0, 0.08, 0.0])]


def _parse_with_comments(path):
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    return ET.parse(path, parser=parser).getroot()


def _comments(root):
    return [e.text for e in root.iter() if e.tag is ET.Comment]


@pytest.fixture(scope="module")
def intact():
    return segment.c5c6()


@pytest.fixture(scope="module")
def no_facets():
    return segment.c5c6(facets=False)


# ---------------------------------------------------------------- laws as functions
def test_ramps_sum_to_the_function_with_falling_slopes():
    f = PiecewiseLinear([-2.0, -0.5, 0.0, 0.3, 1.0, 1.5], [3.0, 0.5, 0.0, 0.9, 1.0, 0.2])
    t = np.linspace(-4.0, 4.0, 401)
    total = np.zeros_like(t)
    for side, knot, c in f.ramps():
        total += c * (np.maximum(t - knot, 0.0) if side == "right" else np.minimum(t - knot, 0.0))
    np.testing.assert_allclose(total, f(t), atol=1e-12)
    assert any(c < 0 for _, _, c in f.ramps())


def test_ramps_need_a_zero_at_zero():
    with pytest.raises(ValueError, match="knot at 0 where it is 0"):
        PiecewiseLinear([-1.0, 1.0], [0.0, 1.0]).ramps()


def test_piecewise_linear_refuses_unsorted_points():
    with pytest.raises(ValueError, match="increase strictly"):
        PiecewiseLinear([0.0, 0.0, 1.0], [0.0, 1.0, 2.0])


def test_disc_functions_are_eq1_in_si_units(no_facets):
    k_pos, k_neg = no_facets.disc.k_positive, no_facets.disc.k_negative
    for i, f in enumerate(disc_functions(no_facets)):
        to_si = 1e3 if i < 3 else 1e-3       # N/mm -> N/m; N mm/rad -> N m/rad
        step = 1e-3 if i < 3 else 0.01       # 1 mm or 0.01 rad
        assert f(step) == pytest.approx(k_pos[i] * to_si * step, rel=1e-14)
        assert f(-step) == pytest.approx(-k_neg[i] * to_si * step, rel=1e-14)


def test_facet_contact_law_is_the_published_one_in_si_units(intact):
    fc = facet_contacts(intact)[0]
    law = intact.contact_law
    for u_mm in (0.0, 0.1, 0.3, 0.7):
        assert fc.force(u_mm * 1e-3) == pytest.approx(law(u_mm)[0], rel=1e-12, abs=1e-12)
    assert fc.force(-1e-3) == 0.0


# ---------------------------------------------------------------- OpenSim file structure
def test_osim_structure_names_and_units(tmp_path, intact):
    path = tmp_path / "c5c6.osim"
    c6 = load_parameters().inertia["C6"]
    result = write_osim(intact, path, c6_inertia=c6)
    root = _parse_with_comments(path)
    assert root.tag == "OpenSimDocument" and root.get("Version") == "40600"
    model = root.find("Model")
    assert model.findtext("length_units") == "meters"
    assert model.findtext("force_units") == "N"
    assert model.findtext("gravity") == "0 0 0"
    c5 = model.find("BodySet/objects/Body[@name='C5']")
    assert float(c5.findtext("mass")) == 0.23
    np.testing.assert_allclose([float(v) for v in c5.findtext("mass_center").split()],
                               [-0.0081, 0, 0], rtol=1e-15)
    np.testing.assert_allclose([float(v) for v in c5.findtext("inertia").split()],
                               [2.3e-4, 2.3e-4, 4.5e-4, 0, 0, 0], rtol=1e-15)
    joint = model.find("JointSet/objects/CustomJoint[@name='C6_C5']")
    assert [c.get("name") for c in joint.find("coordinates")] == list(segment.DOF_NAMES)
    offset = joint.find("frames/PhysicalOffsetFrame[@name='C6_offset']")
    np.testing.assert_allclose([float(v) for v in offset.findtext("translation").split()],
                               [-0.0028, 0.0, 0.0174], rtol=1e-15)
    np.testing.assert_allclose([float(v) for v in offset.findtext("orientation").split()],
                               [0.0, np.radians(-5.2), 0.0], atol=1e-15)
    ligs = model.findall("ForceSet/objects/Ligament")
    assert [x.get("name") for x in ligs] == list(segment.LIGAMENT_NAMES)
    all_ = ligs[0]
    assert float(all_.findtext("resting_length")) == pytest.approx(0.018, rel=1e-15)
    x = [float(v) for v in all_.findtext("PiecewiseLinearFunction/x").split()]
    y = [float(v) for v in all_.findtext("PiecewiseLinearFunction/y").split()]
    curve = intact.ligaments[0].curve
    np.testing.assert_allclose(x[2:], 1.0 + curve.strain, rtol=1e-15)
    np.testing.assert_allclose(y, [0.0, 0.0, *curve.force], rtol=1e-15)
    assert model.find("ForceSet/objects/FunctionBasedBushingForce[@name='disc']") is not None
    facets = model.findall("ForceSet/objects/ExpressionBasedBushingForce")
    assert [f.get("name") for f in facets] == ["facet_left", "facet_right"]
    assert any("APPROXIMATED" in c for c in _comments(root))
    assert result.approximations == (FACET_APPROXIMATION,)
    assert result.path == str(path)


def test_osim_without_facets_flags_nothing(tmp_path, no_facets):
    tree, result = osim_xml(no_facets)
    root = tree.getroot()
    assert root.find("Model/ForceSet/objects/ExpressionBasedBushingForce") is None
    assert not any("APPROXIMATED" in (c or "") for c in _comments(root))
    assert result.approximations == ()


def test_mjcf_structure_names_and_units(tmp_path, intact):
    path = tmp_path / "c5c6.xml"
    result = write_mjcf(intact, path, c6_inertia=load_parameters().inertia["C6"])
    root = _parse_with_comments(path)
    assert root.tag == "mujoco"
    assert root.find("option").get("gravity") == "0 0 0"
    assert root.find("compiler").get("angle") == "radian"
    c5 = root.find("worldbody/body[@name='C6']/body[@name='C5']")
    np.testing.assert_allclose([float(v) for v in c5.get("pos").split()],
                               [-0.0028, 0.0, 0.0174], rtol=1e-15)
    inertial = c5.find("inertial")
    assert float(inertial.get("mass")) == 0.23
    joints = c5.findall("joint")
    assert [j.get("name") for j in joints] == list(segment.DOF_NAMES)
    assert [j.get("type") for j in joints] == ["slide"] * 3 + ["hinge"] * 3
    tendons = root.find("tendon")
    disc_x = [t for t in tendons.findall("fixed") if t.get("name").startswith("disc_x_")]
    assert sorted(float(t.get("stiffness")) for t in disc_x) == [50e3, 62e3]   # N/m
    all_ = [t for t in tendons.findall("spatial") if t.get("name").startswith("ALL_")]
    assert len(all_) == 3                  # the three slopes of the trilinear curve
    texts = {t.get("name"): t.get("data") for t in root.find("custom")}
    assert texts["segment_approximations"] == FACET_APPROXIMATION
    assert any("APPROXIMATED" in c for c in _comments(root))
    assert result.facets == ("left", "right")


def test_mjcf_without_facets_flags_nothing(no_facets):
    tree, result = mjcf_xml(no_facets)
    texts = [t.get("name") for t in tree.getroot().find("custom")]
    assert "segment_approximations" not in texts
    assert result.approximations == ()


def test_a_ruptured_strip_is_left_out_and_said(no_facets):
    _, result = osim_xml(no_facets.with_ruptured(["ALL"]))
    assert "ALL" not in result.ligaments
    assert any("strip ALL" in text for text in result.omitted)


# ---------------------------------------------------------------- errors
@pytest.mark.parametrize("to_xml", [osim_xml, mjcf_xml])
def test_a_fw35_disc_law_is_refused(to_xml, no_facets):
    model = no_facets.replace(disc=no_facets.disc.with_law("phi_y", "fw35", scale_pos=1.0,
                                                          scale_neg=1.0))
    with pytest.raises(ValueError, match="'fw35' \\(phi_y\\) is not piecewise linear"):
        to_xml(model)


@pytest.mark.parametrize("to_xml", [osim_xml, mjcf_xml])
def test_a_prosthesis_is_refused_by_name(to_xml):
    model = segment.c5c6(state="arthroplasty")
    with pytest.raises(ValueError, match="point restraint"):
        to_xml(model)


def test_a_model_of_another_type_is_refused():
    with pytest.raises(TypeError, match=r"segment\.Segment"):
        osim_xml("c5c6")


def test_cli_unknown_state_is_one_line(tmp_path, capsys):
    out = tmp_path / "x.osim"
    assert main(["export", "-o", str(out), "--state", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("segment: error: unknown clinical state 'nosuch'")
    assert err.count("\n") == 1
    assert not out.exists()


def test_cli_bad_path_is_one_line(tmp_path, capsys):
    assert main(["export", "-o", str(tmp_path / "missing" / "x.osim")]) == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and err.count("\n") == 1


def test_cli_unknown_suffix_asks_for_the_format(tmp_path, capsys):
    assert main(["export", "-o", str(tmp_path / "x.txt")]) == 2
    assert "give --format osim or --format mjcf" in capsys.readouterr().err


@pytest.mark.parametrize("fmt,module,extra", [("osim", "opensim", "opensim"),
                                              ("mjcf", "mujoco", "mujoco")])
def test_cli_check_without_the_extra_names_it(tmp_path, capsys, monkeypatch, fmt, module,
                                              extra):
    monkeypatch.setitem(sys.modules, module, None)    # import fails as if not installed
    out = tmp_path / "x.model"
    assert main(["export", "--format", fmt, "-o", str(out), "--check"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f'pip install "c5c6-segment[{extra}]"' in err
    assert not out.exists()


def test_cli_writes_and_flags_the_approximation(tmp_path, capsys):
    out = tmp_path / "c5c6.xml"
    assert main(["export", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"approximation: {FACET_APPROXIMATION}" in text
    assert out.exists()
    assert main(["export", "-o", str(out), "--no-facets", "--state",
                 "facetectomy-right-50"]) == 0
    assert "approximation" not in capsys.readouterr().out


# ---------------------------------------------------------------- cross-checked in the tools
TOOLS = [("osim", "opensim"), ("mjcf", "mujoco")]


def _tool(fmt):
    if fmt == "osim":
        from segment.export.osim import OpenSimResidual, osim_equilibrium, write_osim
        return write_osim, OpenSimResidual, osim_equilibrium
    from segment.export.mjcf import MuJoCoResidual, mjcf_equilibrium, write_mjcf
    return write_mjcf, MuJoCoResidual, mjcf_equilibrium


@pytest.fixture(scope="module")
def exported(tmp_path_factory, no_facets, intact):
    folder = tmp_path_factory.mktemp("export")
    files = {}
    for fmt, _ in TOOLS:
        write, _, _ = _tool(fmt)
        for label, model in (("no_facets", no_facets), ("intact", intact)):
            files[fmt, label] = folder / f"{label}.{fmt}"
            write(model, files[fmt, label])
    return files


@pytest.mark.parametrize("fmt,module", TOOLS)
@pytest.mark.parametrize("case", ["FLX", "AS", "LB"])
def test_the_tool_has_the_same_force_field(fmt, module, case, exported, no_facets):
    pytest.importorskip(module)
    _, Residual, _ = _tool(fmt)
    load = segment.LOAD_CASES[case]
    tool = Residual(exported[fmt, "no_facets"], load)
    for q in SAMPLE_POSES:
        ours = no_facets.residual(q, load)
        theirs = internal_generalized(tool(si_q(q)))
        assert np.max(np.abs(theirs - ours)) <= RESIDUAL_RTOL * np.max(np.abs(ours)), q


@pytest.mark.parametrize("fmt,module", TOOLS)
def test_the_tool_has_the_facet_approximation(fmt, module, exported, intact):
    pytest.importorskip(module)
    _, Residual, _ = _tool(fmt)
    load = segment.LOAD_CASES["EXT"]
    tool = Residual(exported[fmt, "intact"], load)
    for q in SAMPLE_POSES:
        ours = approximated_residual(intact, q, load)
        theirs = internal_generalized(tool(si_q(q)))
        tol = RESIDUAL_RTOL * np.max(np.abs(ours)) if fmt == "osim" else MJCF_FACET_ATOL
        assert np.max(np.abs(theirs - ours)) <= tol, q


@pytest.mark.parametrize("fmt,module", TOOLS)
def test_a_state_with_strips_and_cuts_has_the_same_force_field(tmp_path, fmt, module):
    pytest.importorskip(module)
    write, Residual, _ = _tool(fmt)
    model = segment.c5c6(state="laminectomy+facetectomy-right-50").with_strips(3) \
        .replace(facets=())
    path = tmp_path / f"state.{fmt}"
    result = write(model, path)
    assert "FL#1" not in result.ligaments and "CL-right#2" in result.ligaments
    load = segment.LOAD_CASES["AR"]
    tool = Residual(path, load)
    for q in SAMPLE_POSES:
        ours = model.residual(q, load)
        theirs = internal_generalized(tool(si_q(q)))
        assert np.max(np.abs(theirs - ours)) <= RESIDUAL_RTOL * np.max(np.abs(ours))


@pytest.mark.parametrize("fmt,module", TOOLS)
def test_a_neutral_zone_disc_has_the_same_force_field(tmp_path, fmt, module, no_facets):
    pytest.importorskip(module)
    write, Residual, _ = _tool(fmt)
    disc = no_facets.disc.with_law("phi_y", "neutral-zone", zone_pos=0.03, zone_neg=0.02,
                                   ratio=0.2).with_law("x", "neutral-zone", zone_pos=0.1,
                                                       zone_neg=0.3, ratio=0.5)
    model = no_facets.replace(disc=disc)
    path = tmp_path / f"nz.{fmt}"
    write(model, path)
    tool = Residual(path, segment.LOAD_CASES["EXT"])
    for q in [*SAMPLE_POSES, np.array([-0.2, 0.0, 0.0, 0.0, -0.01, 0.0])]:
        ours = model.residual(q, segment.LOAD_CASES["EXT"])
        theirs = internal_generalized(tool(si_q(q)))
        assert np.max(np.abs(theirs - ours)) <= RESIDUAL_RTOL * np.max(np.abs(ours)), q


def test_opensim_places_c5_as_the_model_does(exported):
    osim = pytest.importorskip("opensim")
    from segment.elements.kinematics import pose
    from segment.export.osim import OpenSimResidual

    tool = OpenSimResidual(exported["osim", "no_facets"])
    q = SAMPLE_POSES[1]
    tool(si_q(q))
    tool.model.realizePosition(tool.state)
    X = tool.model.getBodySet().get("C5").getTransformInGround(tool.state)
    R = np.array([[X.R().get(i, j) for j in range(3)] for i in range(3)])
    p = np.array([X.p().get(i) for i in range(3)])
    p_ref, R_ref = pose(q, segment.c5c6().reference)
    np.testing.assert_allclose(p, p_ref * 1e-3, atol=1e-17)
    np.testing.assert_allclose(R, R_ref, atol=1e-15)
    del osim


def test_mujoco_reads_the_approximation_flag(exported):
    mujoco = pytest.importorskip("mujoco")
    m = mujoco.MjModel.from_xml_path(str(exported["mjcf", "intact"]))
    i = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_TEXT, "segment_approximations")
    text = bytes(m.text_data[m.text_adr[i]:m.text_adr[i] + m.text_size[i] - 1]).decode()
    assert text == FACET_APPROXIMATION


def test_the_docs_table_is_the_scripts(tmp_path):
    """docs/export.md holds the table scripts/export_facet_difference.py measures now (its
    rows, at the precision printed)."""
    pytest.importorskip("opensim")
    pytest.importorskip("mujoco")
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "scripts" / "export_facet_difference.py"
    spec = importlib.util.spec_from_file_location("export_facet_difference", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    rows = [line for line in script.table(script.measure(tmp_path)).splitlines()
            if line.startswith("| ")]
    doc = script.DOC.read_text()
    assert len(rows) == 21
    missing = [row for row in rows if row not in doc]
    assert not missing, f"docs/export.md is stale; run {path.name} --write: {missing[:2]}"


def test_mujoco_places_c5_as_the_model_does(exported):
    mujoco = pytest.importorskip("mujoco")
    from segment.elements.kinematics import pose
    from segment.export.mjcf import MuJoCoResidual

    tool = MuJoCoResidual(exported["mjcf", "no_facets"])
    q = SAMPLE_POSES[1]
    tool(si_q(q))
    c5 = tool.model.body("C5").id
    p_ref, R_ref = pose(q, segment.c5c6().reference)
    np.testing.assert_allclose(tool.data.xpos[c5], p_ref * 1e-3, atol=1e-17)
    np.testing.assert_allclose(tool.data.xmat[c5].reshape(3, 3), R_ref, atol=1e-15)
    del mujoco


@pytest.mark.parametrize("fmt,module", TOOLS)
@pytest.mark.parametrize("case", list(segment.LOAD_CASES))
def test_the_equilibrium_found_in_the_tool_is_segments(fmt, module, case, exported, no_facets):
    pytest.importorskip(module)
    _, _, equilibrium = _tool(fmt)
    load = segment.LOAD_CASES[case]
    theirs = equilibrium(exported[fmt, "no_facets"], load)
    ours = segment.solve(no_facets, load)
    assert theirs.converged, theirs.message
    assert ours.converged
    assert np.max(np.abs(theirs.q - ours.q)) <= EQUILIBRIUM_TOL
