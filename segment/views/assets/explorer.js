// segment explorer view: three.js scene of C5-C6 fed by segment.views.session (an anywidget
// module; the browser page drives it through the same model interface).
//
// The model supplies "scene" (static meshes in each vertebra's frame, once per model variant)
// and "frame" (poses, ligaments, facet forces, disc, title, table: after every change). This
// file only draws them; every number it shows comes from Python.
// three.js comes from the "three_url" trait (the page serves the vendored file) or, in a
// notebook, from the "_three_js" trait (its source, imported through a blob URL).

const COLORS = {
  c6: 0xc8b68e, c5: 0xf2e8cf, ghost: 0x5d8aa8, magnified: 0xff7f0e, facet: 0x2e86c1,
  disc: 0x6fa8dc, arrow: 0xd62728,
};
const VIEWS = {  // camera direction from the focal point, C6 axes (as segment.views.style)
  lateral: [0.25, 1, 0.15], posterior: [-1, 0.25, 0.35], oblique: [-0.75, 0.85, 0.4],
  anterior: [1, 0, 0.15], superior: [0.001, 0, 1],
};
const TAUT_MM = 1.0, SLACK_MM = 0.35, SHAFT_MM = 0.7, HEAD_MM = 1.8;

async function loadThree(model) {
  const url = model.get("three_url");
  if (url) return await import(url);
  const blob = new Blob([model.get("_three_js")], { type: "text/javascript" });
  const blobUrl = URL.createObjectURL(blob);
  try { return await import(blobUrl); } finally { URL.revokeObjectURL(blobUrl); }
}

function style(el) {
  const s = document.createElement("style");
  s.textContent = `
  .segx { font: 13px/1.35 system-ui, sans-serif; color: #111; }
  .segx .stage { position: relative; width: 100%; height: 520px; background: #fff;
    border: 1px solid #ccc; }
  .segx canvas { display: block; }
  .segx .title { position: absolute; top: 6px; left: 0; right: 0; text-align: center;
    font-size: 15px; pointer-events: none; }
  .segx .legend { position: absolute; bottom: 6px; right: 8px; text-align: right;
    font-size: 11px; pointer-events: none; color: #333; }
  .segx .label { position: absolute; font-size: 11px; background: rgba(255,255,255,.7);
    padding: 0 3px; pointer-events: none; white-space: nowrap; transform: translate(-50%,-50%); }
  .segx .label.mag { color: #d35400; font-weight: 600; }
  .segx .views { position: absolute; top: 30px; left: 6px; }
  .segx .views button { font-size: 11px; margin-right: 2px; }
  .segx .status.ok { color: #1a7f37; } .segx .status.bad { color: #b00020; font-weight: 700; }
  .segx .tables { display: flex; gap: 18px; flex-wrap: wrap; align-items: flex-start; }
  .segx table { border-collapse: collapse; } .segx caption { text-align: left; font-weight: 600; }
  .segx td, .segx th { padding: 1px 6px; border-bottom: 1px solid #eee; }
  .segx td.num { text-align: right; font-variant-numeric: tabular-nums; }`;
  el.appendChild(s);
}

function surfaceGeometry(THREE, s) {
  const g = new THREE.BufferGeometry();
  g.setAttribute("position", new THREE.Float32BufferAttribute(s.points, 3));
  g.setIndex(s.tris);
  g.computeVertexNormals();
  return g;
}

function poseMatrix(THREE, pose) {
  const R = pose.R, p = pose.p, m = new THREE.Matrix4();
  m.set(R[0][0], R[0][1], R[0][2], p[0], R[1][0], R[1][1], R[1][2], p[1],
        R[2][0], R[2][1], R[2][2], p[2], 0, 0, 0, 1);
  return m;
}

function placeBetween(THREE, mesh, a, b, radius) {
  const va = new THREE.Vector3(...a), vb = new THREE.Vector3(...b);
  const d = vb.clone().sub(va), len = Math.max(d.length(), 1e-6);
  mesh.position.copy(va).addScaledVector(d, 0.5);
  mesh.quaternion.setFromUnitVectors(new THREE.Vector3(0, 1, 0), d.divideScalar(len));
  mesh.scale.set(radius, len, radius);
}

export async function render({ model, el }) {
  const THREE = await loadThree(model);
  el.classList.add("segx");
  style(el);
  const stage = document.createElement("div");
  stage.className = "stage";
  const title = document.createElement("div");
  title.className = "title";
  const legend = document.createElement("div");
  legend.className = "legend";
  const views = document.createElement("div");
  views.className = "views";
  const table = document.createElement("div");
  table.className = "table";
  stage.append(title, legend, views);
  el.append(stage, table);

  const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
  renderer.setPixelRatio(1);
  renderer.setClearColor(0xffffff, 1);
  stage.prepend(renderer.domElement);
  const scene3 = new THREE.Scene();
  const camera = new THREE.PerspectiveCamera(30, 1, 1, 2000);
  camera.up.set(0, 0, 1);
  scene3.add(new THREE.AmbientLight(0xffffff, 0.55));
  const light = new THREE.DirectionalLight(0xffffff, 2.0);
  camera.add(light);
  light.position.set(0.3, 0.5, 1);
  scene3.add(camera);

  const mat = (color, opacity = 1) => new THREE.MeshPhongMaterial({
    color, shininess: 20, side: THREE.DoubleSide, transparent: opacity < 1, opacity,
    depthWrite: opacity >= 1 });
  const state = { built: null, c6: null, c5: null, ghost: null, mag: null, fac6: null,
    fac5: null, fac5mag: null, disc: null, ligs: [], arrows: [], labels: [], magLabel: null,
    focal: new THREE.Vector3(-12, 0, 10), dist: 170, az: 0, el: 0, frame: null };
  const unitCyl = new THREE.CylinderGeometry(1, 1, 1, 14, 1, false);
  const unitCone = new THREE.CylinderGeometry(0, 1, 1, 14, 1, false);

  function setView(name) {
    const d = new THREE.Vector3(...VIEWS[name]).normalize();
    state.az = Math.atan2(d.y, d.x);
    state.el = Math.asin(Math.max(-0.999, Math.min(0.999, d.z)));
    draw();
  }
  for (const name of ["lateral", "posterior", "oblique", "anterior", "superior"]) {
    const b = document.createElement("button");
    b.textContent = name;
    b.dataset.view = name;
    b.onclick = () => setView(name);
    views.append(b);
  }

  function build(sc) {
    for (const key of ["c6", "c5", "ghost", "mag", "fac6", "fac5", "fac5mag", "disc"]) {
      if (state[key]) { scene3.remove(state[key]); state[key].geometry.dispose(); }
    }
    for (const o of [...state.ligs, ...state.arrows.flat()]) scene3.remove(o);
    for (const l of state.labels) l.remove();
    const gc6 = surfaceGeometry(THREE, sc.c6), gc5 = surfaceGeometry(THREE, sc.c5);
    const gf6 = surfaceGeometry(THREE, sc.facets_c6), gf5 = surfaceGeometry(THREE, sc.facets_c5);
    state.c6 = new THREE.Mesh(gc6, mat(COLORS.c6));
    state.c5 = new THREE.Mesh(gc5, mat(COLORS.c5));
    state.ghost = new THREE.Mesh(gc5.clone(), mat(COLORS.ghost, 0.18));
    state.mag = new THREE.Mesh(gc5.clone(), mat(COLORS.magnified, 0.55));
    state.fac6 = new THREE.Mesh(gf6, mat(COLORS.facet));
    state.fac5 = new THREE.Mesh(gf5, mat(COLORS.facet));
    state.fac5mag = new THREE.Mesh(gf5.clone(), mat(COLORS.magnified, 0.55));
    for (const m of [state.c5, state.ghost, state.mag, state.fac5, state.fac5mag]) {
      m.matrixAutoUpdate = false;
    }
    const dg = new THREE.BufferGeometry();
    dg.setAttribute("position", new THREE.Float32BufferAttribute(
      new Float32Array(3 * (Math.max(...sc.disc_tris) + 1)), 3));
    dg.setIndex(sc.disc_tris);
    state.disc = new THREE.Mesh(dg, mat(COLORS.disc, 0.45));
    scene3.add(state.c6, state.c5, state.fac6, state.fac5, state.ghost, state.mag,
               state.fac5mag, state.disc);
    state.ligs = sc.ligaments.map(() => {
      const m = new THREE.Mesh(unitCyl, new THREE.MeshPhongMaterial({ color: 0x999999 }));
      scene3.add(m);
      return m;
    });
    state.arrows = sc.facets.map(() => {
      const shaft = new THREE.Mesh(unitCyl, mat(COLORS.arrow));
      const head = new THREE.Mesh(unitCone, mat(COLORS.arrow));
      for (const m of [shaft, head]) { m.renderOrder = 10; m.material.depthTest = false; }
      scene3.add(shaft, head);
      return [shaft, head];
    });
    state.labels = sc.facets.map(() => {
      const d = document.createElement("div");
      d.className = "label";
      stage.append(d);
      return d;
    });
    if (!state.magLabel) {
      state.magLabel = document.createElement("div");
      state.magLabel.className = "label mag";
      stage.append(state.magLabel);
    }
    // frame the bones: focal point at the centre of C6 and C5 together
    gc6.computeBoundingBox();
    const box = gc6.boundingBox.clone();
    box.max.z += 25;
    box.getCenter(state.focal);
    state.dist = 1.4 * box.getSize(new THREE.Vector3()).length();
    state.built = sc.key;
  }

  function apply(fr) {
    state.frame = fr;
    const M = poseMatrix(THREE, fr.c5), Mm = poseMatrix(THREE, fr.c5_magnified);
    state.c5.matrix.copy(M); state.fac5.matrix.copy(M);
    state.ghost.matrix.copy(poseMatrix(THREE, fr.ghost));
    state.mag.matrix.copy(Mm); state.fac5mag.matrix.copy(Mm);
    state.mag.visible = state.fac5mag.visible = fr.magnify > 1;
    for (const m of [state.c5, state.fac5, state.ghost, state.mag, state.fac5mag]) {
      m.matrixWorldNeedsUpdate = true;
    }
    const pos = state.disc.geometry.attributes.position;
    pos.array.set(fr.disc);
    pos.needsUpdate = true;
    state.disc.geometry.computeVertexNormals();
    fr.ligaments.forEach((l, k) => {
      const m = state.ligs[k];
      if (!m) return;
      m.visible = !l.ruptured && !(l.cut >= 1);     // a ligament cut through is gone
      placeBetween(THREE, m, l.a, l.b, l.taut ? TAUT_MM : SLACK_MM);
      m.material.color.set(l.color);
    });
    fr.arrows.forEach((a, k) => {
      const [shaft, head] = state.arrows[k] || [];
      if (!shaft) return;
      const L = a.length_mm, h = Math.min(4, 0.4 * L), s = Math.min(1, L);
      const p = new THREE.Vector3(...a.point), d = new THREE.Vector3(...a.direction);
      const neck = p.clone().addScaledVector(d, L - h), tip = p.clone().addScaledVector(d, L);
      shaft.visible = head.visible = L > 1e-3;
      placeBetween(THREE, shaft, p.toArray(), neck.toArray(), SHAFT_MM * s);
      placeBetween(THREE, head, neck.toArray(), tip.toArray(), HEAD_MM * s);
      state.labels[k].textContent = a.label;
      state.labels[k].dataset.anchor = JSON.stringify(a.point);
    });
    title.textContent = fr.title;
    title.dataset.seq = fr.seq;
    legend.innerText = "red arrows: facet force on C5; blue ghost: C5 unloaded" +
      (fr.magnify_text ? "\n" + fr.magnify_text : "");
    state.magLabel.textContent = fr.magnify > 1 ? `C5 x${fr.magnify}` : "";
    table.innerHTML = fr.table_html;
    draw();
  }

  function project(v) {
    const w = renderer.domElement.clientWidth, h = renderer.domElement.clientHeight;
    const p = v.clone().project(camera);
    return [(p.x + 1) / 2 * w, (1 - p.y) / 2 * h];
  }

  function draw() {
    const w = stage.clientWidth || 800, h = stage.clientHeight || 520;
    if (renderer.domElement.width !== w || renderer.domElement.height !== h) {
      renderer.setSize(w, h, false);
      renderer.domElement.style.width = w + "px";
      renderer.domElement.style.height = h + "px";
      camera.aspect = w / h;
      camera.updateProjectionMatrix();
    }
    const d = new THREE.Vector3(Math.cos(state.el) * Math.cos(state.az),
                                Math.cos(state.el) * Math.sin(state.az), Math.sin(state.el));
    camera.position.copy(state.focal).addScaledVector(d, state.dist);
    camera.lookAt(state.focal);
    camera.updateMatrixWorld();
    renderer.render(scene3, camera);
    state.labels.forEach((l, k) => {
      if (!l.dataset.anchor) return;
      const a = JSON.parse(l.dataset.anchor);
      const side = k === 0 ? 1 : -1;
      const [x, y] = project(new THREE.Vector3(a[0] - 6, a[1] + 8 * side, a[2] + 12 * side));
      l.style.left = x + "px"; l.style.top = y + "px";
    });
    if (state.mag && state.mag.visible) {
      state.mag.geometry.computeBoundingBox();
      const b = state.mag.geometry.boundingBox.clone().applyMatrix4(state.mag.matrix);
      const c = b.getCenter(new THREE.Vector3());     // over the magnified body's middle
      const [x, y] = project(new THREE.Vector3(c.x, c.y, 0.5 * (c.z + b.max.z)));
      state.magLabel.style.left = x + "px"; state.magLabel.style.top = y + "px";
    }
    const done = performance.now();
    // the frame is on the canvas at the next animation frame: record both moments
    const seq = state.frame ? state.frame.seq : -1;
    requestAnimationFrame(() => {
      const reg = (globalThis.__segmentExplorer ||= { frames: {} });
      reg.frames[seq] = { drawn: done, presented: performance.now() };
      reg.last = seq;
    });
  }

  // orbit: drag to turn, wheel to zoom
  let drag = null;
  renderer.domElement.addEventListener("pointerdown", (e) => { drag = [e.clientX, e.clientY]; });
  window.addEventListener("pointerup", () => { drag = null; });
  renderer.domElement.addEventListener("pointermove", (e) => {
    if (!drag) return;
    state.az -= 0.01 * (e.clientX - drag[0]);
    state.el = Math.max(-1.5, Math.min(1.5, state.el + 0.01 * (e.clientY - drag[1])));
    drag = [e.clientX, e.clientY];
    draw();
  });
  renderer.domElement.addEventListener("wheel", (e) => {
    e.preventDefault();
    state.dist *= Math.exp(0.001 * e.deltaY);
    draw();
  }, { passive: false });

  const view = {
    c5Pose: () => state.frame && state.frame.c5,
    c5Matrix: () => state.c5.matrix.toArray(),
    // what is drawn: vertex and triangle counts of the bones, and the scene's key
    meshInfo: () => ({ key: state.built,
      c6: [state.c6.geometry.attributes.position.count, state.c6.geometry.index.count / 3],
      c5: [state.c5.geometry.attributes.position.count, state.c5.geometry.index.count / 3] }),
    setView,
  };
  (globalThis.__segmentExplorer ||= { frames: {} }).view = view;

  function onScene() { build(model.get("scene")); if (model.get("frame")) apply(model.get("frame")); }
  function onFrame() {
    const fr = model.get("frame");
    if (!fr || !fr.seq && fr.seq !== 0) return;
    if (state.built !== fr.scene_key) build(model.get("scene"));
    apply(fr);
  }
  model.on("change:scene", onScene);
  model.on("change:frame", onFrame);
  build(model.get("scene"));
  setView(model.get("view") || "lateral");
  if (model.get("frame")) apply(model.get("frame"));
  const ro = new ResizeObserver(() => draw());
  ro.observe(stage);
  return () => {
    ro.disconnect();
    model.off("change:scene", onScene);
    model.off("change:frame", onFrame);
    renderer.dispose();
  };
}

export default { render };
