"""The explorer's state machine, shared by the notebook widget and the browser page (no GUI).

An :class:`ExplorerSession` holds the control values (load components in N and N m, named
load case, disc and ligament stiffness scales, model, clinical state, magnification),
re-solves the equilibrium on every change (warm-started from the previous equilibrium; when
that fails, solved again as :func:`segment.solve` solves it from scratch) and describes what
to draw as plain JSON-ready dictionaries. An update is checked, built and solved before the
session changes: it is applied whole or not at all, and a refused value never enters the
session.

* :meth:`ExplorerSession.scene` once per model variant and display geometry: the bone and
  facet surfaces in each vertebra's frame (points [mm], triangles) and the disc's triangles;
* :meth:`ExplorerSession.frame` after every change: C5's pose, the ghost's (the unloaded
  equilibrium) and the magnified pose, the
  ligament end points and tensions, the facet forces, the disc's points, the title and the
  table (q as the displacement from the unloaded equilibrium, facet regimes and forces,
  ligament tensions, status).

The front end (``segment/views/assets/explorer.js``) only moves meshes; every number it shows
comes from here.
"""

from __future__ import annotations

import dataclasses
import html
import numbers
import time
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from segment.core.equilibrium_result import EquilibriumResult
from segment.core.model import Segment
from segment.core.published import LOAD_CASES
from segment.core.states import apply_states
from segment.core.states_table import INTACT, ClinicalState, load_states
from segment.elements.disc import DOF_NAMES
from segment.elements.kinematics import pose
from segment.elements.ligament import TrilinearCurve
from segment.elements.loads import Load
from segment.solvers.equilibrium import solve
from segment.views.anatomy import GEOMETRIES, resolve_geometry
from segment.views.geometry import _loft_faces
from segment.views.parts import SceneParts, _title, check_magnify, displacement, magnify_text
from segment.views.style import ARROW_MAX_MM, ARROW_MM_PER_N, RING, SLACK_COLOR, TENSION_STOPS

__all__ = ["CONTROLS", "Control", "ExplorerSession", "tension_color"]


@dataclass(frozen=True)
class Control:
    """One slider: name, label, range and step in the unit of the label.

    ``load_index`` is the component of the load vector (Fx, Fy, Fz [N], Mx, My, Mz [N m]) it
    sets, None for the scales and the magnification; ``to_internal`` converts the slider's
    unit to the package's internal one (N, N mm).
    """

    name: str
    label: str
    low: float
    high: float
    step: float
    default: float
    load_index: int | None = None
    to_internal: float = 1.0


CONTROLS = (
    Control("Fx_N", "Fx [N] (+ anterior)", -40.0, 40.0, 0.5, 0.0, 0),
    Control("Fy_N", "Fy [N] (+ left)", -40.0, 40.0, 0.5, 0.0, 1),
    Control("Fz_N", "Fz [N] (+ superior)", -40.0, 40.0, 0.5, 0.0, 2),
    Control("Mx_Nm", "Mx [N m] (+ left lateral bending)", -3.0, 3.0, 0.05, 0.0, 3, 1000.0),
    Control("My_Nm", "My [N m] (+ flexion)", -3.0, 3.0, 0.05, 0.0, 4, 1000.0),
    Control("Mz_Nm", "Mz [N m] (+ axial rotation)", -3.0, 3.0, 0.05, 0.0, 5, 1000.0),
    Control("disc_scale", "disc stiffness x", 0.25, 4.0, 0.05, 1.0),
    Control("ligament_scale", "ligament stiffness x", 0.25, 4.0, 0.05, 1.0),
    Control("magnify", "magnification of the drawn motion x", 1.0, 50.0, 1.0, 1.0),
)
"""The sliders of the notebook and browser explorers (SI at the edge)."""

_BY_NAME = {c.name: c for c in CONTROLS}
_DIGITS = 4      # decimals of the mesh coordinates sent to the front end [mm]: below a pixel
_POSE_DIGITS = 9  # decimals of the poses (p [mm], R): the displayed pose is the solved one


def tension_color(tension_N: float, clim: tuple[float, float]) -> str:
    """Hex colour of a ligament tension on the explorer's scale (grey when slack)."""
    if not tension_N > 0.0:
        return SLACK_COLOR
    lo, hi = clim
    t = float(np.clip((tension_N - lo) / max(hi - lo, 1e-12), 0.0, 1.0))
    stops = np.array([[int(c[i:i + 2], 16) for i in (1, 3, 5)] for c in TENSION_STOPS], float)
    x = t * (len(stops) - 1)
    k = min(int(x), len(stops) - 2)
    rgb = (1 - (x - k)) * stops[k] + (x - k) * stops[k + 1]
    return "#" + "".join(f"{round(float(v)):02x}" for v in rgb)


def _checked_number(c: Control, value) -> float:
    """``value`` of the slider ``c`` as a float, or a ``ValueError`` naming the slider: a
    finite number (not a bool, not a string) within the slider's range."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{c.name} must be a number, got {value!r}")
    v = float(value)
    if not np.isfinite(v):
        raise ValueError(f"{c.name} must be finite, got {value!r}")
    if c.name == "magnify":
        v = check_magnify(v)
    elif c.load_index is None and not v > 0:
        raise ValueError(f"{c.name} must be > 0, got {value!r}")
    if not c.low <= v <= c.high:
        raise ValueError(f"{c.name} must be between {c.low:g} and {c.high:g} (the slider's "
                         f"range, {c.label}), got {value!r}")
    return v


def _ligament_note(s) -> str:
    """The table's note on a ligament strip: ruptured, cut (a clinical state), past eps_max."""
    if s.ruptured:
        return "ruptured"
    if s.cut >= 1.0:
        return "cut"
    note = f"{100 * s.cut:.0f} % cut" if s.cut > 0 else ""
    return ", ".join(t for t in (note, "beyond eps_max" if s.beyond_max else "") if t)


def _load(values: Mapping[str, float], case: str) -> Load:
    """The load of the slider ``values`` (joint frame; N and N mm inside), named ``case``."""
    f = np.zeros(6)
    for c in CONTROLS:
        if c.load_index is not None:
            f[c.load_index] = values[c.name] * c.to_internal
    return Load(f[:3], f[3:], case)


def _round(a) -> list:
    return np.round(np.asarray(a, dtype=float), _DIGITS).tolist()


def _pose_json(q, model: Segment) -> dict:
    p, R = pose(np.asarray(q, dtype=float), model.reference)
    return {"p": np.round(p, _POSE_DIGITS).tolist(), "R": np.round(R, _POSE_DIGITS).tolist()}


class ExplorerSession:
    """Control values, the equilibrium they give, and what to draw (JSON-ready).

    Parameters
    ----------
    models : Segment or mapping of str to Segment
        The model variants of the model menu, by name (e.g. ``{"intact": m1, "posterior
        removed": m2}``). A single Segment is ``{"model": it}``.
    cases : mapping of str to Load, optional
        Named load cases (default: the nine Moroney cases, ``segment.LOAD_CASES``).
    geometry : str or loaded geometry, optional
        Display geometry shown first: ``"anatomical"`` (default) or ``"simple"``, or a loaded
        one (:func:`segment.views.anatomy.load_anatomy`,
        :func:`segment.views.geometry.load_geometry`), which then replaces the packaged
        geometry of its kind. The ``geometry`` control switches between the two.
    magnify : float
        Initial magnification (>= 1).
    states : mapping of str to ClinicalState, optional
        The clinical states of the state menu (:func:`segment.core.states_table.load_states`);
        default: the packaged ``data/states.csv``. The menu offers ``"intact"`` and these; a
        state is applied to whichever model of the model menu is chosen
        (:func:`segment.core.states.apply_states`).
    state : str
        Clinical state shown first: ``"intact"`` (default), a state of ``states`` or several
        joined by ``+`` (which then joins the menu).
    tension_range : (float, float)
        Colour range of the ligament tension [N].
    """

    def __init__(self, models: Segment | Mapping[str, Segment], *, cases=None,
                 states: Mapping[str, ClinicalState] | None = None, state: str = INTACT,
                 geometry=None, magnify: float = 1.0,
                 tension_range: tuple[float, float] = (0.0, 60.0)):
        if isinstance(models, Segment):
            models = {"model": models}
        self.models = dict(models)
        if not self.models or not all(isinstance(m, Segment) for m in self.models.values()):
            raise ValueError("models must be a Segment or a non-empty mapping of names to "
                             f"Segments, got {models!r}")
        self.cases = dict(LOAD_CASES if cases is None else cases)
        self.states = dict(load_states() if states is None else states)
        if not isinstance(state, str):
            raise ValueError(f"state must be a clinical state's name (str), got {state!r}")
        # the state menu: intact, the states of the table, and the initial one (a state of the
        # table or several joined by "+", e.g. "laminectomy+facetectomy-right-100")
        self.state_names = tuple(dict.fromkeys([INTACT, *self.states, state]))
        chosen = resolve_geometry(geometry)
        self.geometries = {chosen.name: chosen}     # the others are loaded when chosen
        self.geometry_name = chosen.name
        self.tension_range = tuple(float(v) for v in tension_range)
        self.values = {c.name: c.default for c in CONTROLS}
        self.values["magnify"] = check_magnify(magnify)
        self.model_name = next(iter(self.models))
        self.state = state
        self.case = "unloaded"
        self._parts: dict[tuple, SceneParts] = {}
        self._in_states: dict[tuple, Segment] = {}
        self._variants: dict[tuple, Segment] = {}
        self.timings_ms: list[float] = []
        self.warm_failures = 0
        self.seq = 0
        self.model = self._model(self.model_name, self.state, self.values)
        self.result = solve(self.model, self.load)

    # ------------------------------------------------------------------ state
    @property
    def load(self) -> Load:
        """The load of the sliders (joint frame, fixed in space; N and N mm inside)."""
        return _load(self.values, self.case)

    def in_state(self, model_name: str, state: str) -> Segment:
        """The model of the menu named ``model_name`` in the clinical state ``state``
        (unscaled; ``ValueError`` when the state cannot be applied to it)."""
        key = (model_name, state)
        if key not in self._in_states:
            self._in_states[key] = apply_states(self.models[model_name], state,
                                                states=self.states)
        return self._in_states[key]

    def _model(self, model_name: str, state: str, values: Mapping[str, float]) -> Segment:
        key = (model_name, state, round(values["disc_scale"], 6),
               round(values["ligament_scale"], 6))
        if key not in self._variants:
            if len(self._variants) > 128:
                self._variants.clear()
            disc_s, lig_s = key[2], key[3]
            m = self.in_state(model_name, state)
            if disc_s != 1.0:
                m = m.replace(disc=m.disc.scaled(disc_s))
            if lig_s != 1.0:   # the force axis of Table 3 scaled: stiffness x lig_s
                m = m.replace(ligaments=tuple(
                    dataclasses.replace(x, curve=TrilinearCurve(x.curve.strain,
                                                                x.curve.force * lig_s))
                    for x in m.ligaments))
            self._variants[key] = m
        return self._variants[key]

    def controls(self) -> dict:
        """The controls' description for a front end (JSON-ready)."""
        return {"sliders": [dataclasses.asdict(c) for c in CONTROLS],
                "cases": ["unloaded", *self.cases], "models": list(self.models),
                "states": list(self.state_names), "geometries": list(GEOMETRIES),
                "values": dict(self.values), "model": self.model_name, "state": self.state,
                "case": self.case, "geometry": self.geometry_name}

    def update(self, /, **changes) -> EquilibriumResult:
        """Change controls and re-solve: all of the changes, or (on ``ValueError``) none.

        Keywords: any slider name of :data:`CONTROLS` (``Fx_N`` ... ``Mz_Nm`` [N, N m],
        ``disc_scale``, ``ligament_scale``, ``magnify``: a number within the slider's range),
        ``case`` (a load case name or ``"unloaded"``: sets the six load sliders), ``model``
        (a name of ``models``), ``state`` (a clinical state of the menu, or ``"intact"``) and
        ``geometry`` (``"anatomical"`` or ``"simple"``: display only, nothing is solved),
        applied in the order given. Setting a load slider makes the case ``"custom"``.

        Every change is checked, the model built and the equilibrium solved before the
        session changes: a refused update leaves every control, the model and the result as
        they were. Returns the new result; a failed solve is kept and reported (the table says
        NOT CONVERGED).
        """
        t0 = time.perf_counter()
        new = self._checked(changes)
        model = self._model(new["model_name"], new["state"], new["values"])
        load = _load(new["values"], new["case"])
        geometry = self.geometries.get(new["geometry_name"])
        if geometry is None:
            geometry = resolve_geometry(new["geometry_name"])
        result = self.result
        if set(changes) - {"magnify", "geometry"}:      # display only: nothing to solve
            result = self._solved(model, load)
        # every check passed and the solve returned: change the session, all at once
        self.geometries[geometry.name] = geometry
        self.values = new["values"]
        self.case, self.model_name = new["case"], new["model_name"]
        self.state, self.geometry_name = new["state"], new["geometry_name"]
        if result is not self.result:
            self.model, self.result = model, result
        self.seq += 1
        self.timings_ms.append(1000.0 * (time.perf_counter() - t0))
        return self.result

    def _checked(self, changes: Mapping[str, object]) -> dict:
        """The controls after ``changes``, each checked (``ValueError`` naming the first bad
        one); the session is not touched."""
        values = dict(self.values)
        new = {"case": self.case, "model_name": self.model_name, "state": self.state,
               "geometry_name": self.geometry_name}
        menus = {"case": ("load case", ["unloaded", *self.cases]),
                 "model": ("model", list(self.models)),
                 "state": ("clinical state", list(self.state_names)),
                 "geometry": ("geometry", list(GEOMETRIES))}
        for name, value in changes.items():
            if name in menus:
                what, known = menus[name]
                if not isinstance(value, str):
                    raise ValueError(f"{name} must be a {what} name (a string), got "
                                     f"{value!r}")
                if value not in known:
                    raise ValueError(f"unknown {what} {value!r}; known: {', '.join(known)}")
                if name == "case":
                    f = np.zeros(6) if value == "unloaded" else self.cases[value].as_array()
                    for c in CONTROLS:
                        if c.load_index is not None:
                            values[c.name] = float(f[c.load_index] / c.to_internal)
                    new["case"] = value
                else:
                    new[{"model": "model_name", "state": "state",
                         "geometry": "geometry_name"}[name]] = value
            elif name in _BY_NAME:
                c = _BY_NAME[name]
                v = _checked_number(c, value)
                if c.load_index is not None and v != values[name]:
                    new["case"] = "custom"
                values[name] = v
            else:
                known = ", ".join([*_BY_NAME, *menus])
                raise ValueError(f"unknown control {name!r}; known: {known}")
        return {**new, "values": values}

    def _solved(self, model: Segment, load: Load) -> EquilibriumResult:
        """The equilibrium of ``model`` under ``load``: warm-started from the result shown
        when the model is the same, else (or when that fails) as :func:`segment.solve`
        solves it, from scratch."""
        warm = self.result.q if (model is self.model and self.result.converged) else None
        result = solve(model, load, q0=warm) if warm is not None else None
        if result is None or not result.converged:
            if result is not None:
                self.warm_failures += 1
            result = solve(model, load)
        return result

    # ------------------------------------------------------------------ what to draw
    @property
    def geometry(self):
        """The display geometry drawn now."""
        return self.geometries[self.geometry_name]

    def parts(self) -> SceneParts:
        """The numpy scene pieces of the current model in its clinical state (unscaled: the
        scales change no geometry) and the current display geometry."""
        key = (self.model_name, self.state, self.geometry_name)
        if key not in self._parts:
            self._parts[key] = SceneParts(self.in_state(self.model_name, self.state),
                                          geometry=self.geometry)
        return self._parts[key]

    @property
    def scene_key(self) -> str:
        """Names the static meshes: a new key means the front end needs a new scene
        (``model/geometry``, ``model+state/geometry`` in a clinical state: a resected facet
        is drawn smaller, a removed one not at all)."""
        model = self.model_name if self.state == INTACT else f"{self.model_name}+{self.state}"
        return f"{model}/{self.geometry_name}"

    def scene(self) -> dict:
        """Static meshes of the current model variant (JSON-ready, mm, vertebra frames)."""
        parts = self.parts()

        def surface(s):
            return {"points": _round(s.points.ravel()),
                    "tris": s.tris.astype(int).ravel().tolist()}

        return {
            "key": self.scene_key,
            "geometry": self.geometry_name,
            "c6": surface(parts._c6), "c5": surface(parts._c5),
            "facets_c6": surface(parts._fac6), "facets_c5": surface(parts._fac5),
            "disc_tris": _loft_faces(7, RING).astype(int).ravel().tolist(),
            "ligaments": list(parts.ligament_names),
            "facets": [j.side for j in self.in_state(self.model_name, self.state).facets],
        }

    def frame(self) -> dict:
        """What changes with the pose (JSON-ready): poses, ligaments, forces, title, table."""
        r, parts = self.result, self.parts()
        model = self.model
        magnify = self.values["magnify"]
        p, R = pose(r.q, model.reference)
        ligaments = [{"name": s.name, "a": _round(s.insertion_c6),
                      "b": _round(s.insertion_c5_in_c6), "tension_N": round(s.tension, 3),
                      "taut": bool(s.tension > 0), "ruptured": bool(s.ruptured),
                      "cut": float(s.cut),
                      "color": tension_color(s.tension, self.tension_range)}
                     for s in r.state.ligaments]
        arrows = []
        for f in r.state.facets:
            d = f.force_on_c5 / f.force if f.force > 0 else np.array([0.0, 0.0, 1.0])
            arrows.append({"side": f.side, "point": _round(f.point), "direction": _round(d),
                           "length_mm": round(min(ARROW_MM_PER_N * f.force, ARROW_MAX_MM), 3),
                           "force_N": round(f.force, 3),
                           "label": f"{f.side}: "
                                    f"{'DISLOCATED' if f.dislocated else f.regime}"})
        # the ghost and the magnification's origin: this variant's unloaded equilibrium
        q_u = np.zeros(6) if r.q_unloaded is None else np.asarray(r.q_unloaded, dtype=float)
        q_mag = q_u + magnify * (np.asarray(r.q) - q_u)
        return {
            "seq": self.seq,
            "scene_key": self.scene_key,
            "c5": _pose_json(r.q, model),
            "c5_magnified": _pose_json(q_mag, model),
            "ghost": _pose_json(q_u, model),
            "magnify": magnify,
            "magnify_text": magnify_text(magnify),
            "disc": _round(parts._disc_points(p, R).ravel()),
            "ligaments": ligaments,
            "arrows": arrows,
            "title": self.title(),
            "status": self.status_text(),
            "converged": bool(r.converged),
            "intact": bool(r.intact),
            "q_from_unloaded": self.displacement_si(),
            "table_html": self.table_html(),
            "values": dict(self.values),
            "case": self.case,
            "model": self.model_name,
            "state": self.state,
            "geometry": self.geometry_name,
        }

    def title(self) -> str:
        """The figure's title (:func:`segment.views.parts._title`), after the model's name
        when the menu has several and the clinical state when it is not intact."""
        which = [self.model_name] if len(self.models) > 1 else []
        which += [self.state] if self.state != INTACT else []
        return (", ".join(which) + ": " if which else "") + _title(self.result)

    def displacement_si(self) -> dict:
        """The displayed q: displacement from the unloaded equilibrium [mm, deg] by name."""
        d, _ = displacement(self.result)
        return {name + ("_mm" if i < 3 else "_deg"):
                round(float(d[i] if i < 3 else np.degrees(d[i])), 6) + 0.0
                for i, name in enumerate(DOF_NAMES)}

    def status_text(self) -> str:
        r = self.result
        if not r.converged:
            return f"NOT CONVERGED: {r.message}"
        if not r.intact:
            return "BEYOND LIMITS: " + "; ".join(r.limit_flags)
        return f"converged in {r.iterations} iterations"

    def table_html(self) -> str:
        """The explorer's table: q (from the unloaded pose), facets, ligaments, status."""
        r = self.result
        d, origin = displacement(r)
        e = html.escape
        rows = []
        for i, name in enumerate(DOF_NAMES):
            v, unit = (d[i], "mm") if i < 3 else (np.degrees(d[i]), "deg")
            v = round(float(v), 3) + 0.0     # no "-0.000"
            rows.append(f'<tr><td>{e(name)}</td><td class="num" data-q="{e(name)}">'
                        f"{v:+.3f}</td><td>{unit}</td></tr>")
        q_table = ("<table class='q'><caption>q: displacement " + e(origin) +
                   " equilibrium</caption>" + "".join(rows) + "</table>")
        frows = "".join(
            f"<tr><td>{e(f.side)}</td><td data-facet='{e(f.side)}'>"
            f"{'DISLOCATED' if f.dislocated else e(f.regime)}</td>"
            f"<td class='num'>{f.force:.1f}</td></tr>" for f in r.state.facets)
        f_table = ("<table class='facets'><caption>facet joints</caption><tr><th>side</th>"
                   "<th>regime</th><th>force [N]</th></tr>" + (frows or
                   "<tr><td colspan=3>none in this model</td></tr>") + "</table>")
        lrows = "".join(
            f"<tr><td>{e(s.name)}</td><td class='num' data-ligament='{e(s.name)}'>"
            f"{s.tension:.1f}</td><td class='num'>{100 * s.strain:+.1f}</td>"
            f"<td>{_ligament_note(s)}</td></tr>" for s in r.state.ligaments)
        l_table = ("<table class='ligaments'><caption>ligaments</caption><tr><th>name</th>"
                   "<th>tension [N]</th><th>strain [%]</th><th></th></tr>" + (lrows or
                   "<tr><td colspan=4>none in this model</td></tr>") + "</table>")
        status = self.status_text()
        cls = "bad" if not (r.converged and r.intact) else "ok"
        return (f"<div class='status {cls}' data-status='{cls}'>{e(status)}</div>"
                f"<div class='tables'>{q_table}{f_table}{l_table}</div>")
