"""solve_sets: the parameter-set kernel equals the per-model solver, is safe from several
threads, and gives identical numbers on a real Dask LocalCluster; results save and reload."""

import threading

import numpy as np
import pytest

import segment
from segment.solvers.batch import launch, solve_many
from segment.studies.sensitivity import equilibrium_sensitivity
from segment.studies.sets import SetsResult, solve_sets
from segment.studies.space import load_space

SAME_Q = 1e-8   # [mm, rad]: both solvers stop at the 1e-10 scaled residual


@pytest.fixture(scope="module")
def space():
    return load_space()


@pytest.fixture(scope="module")
def loads():
    return list(segment.LOAD_CASES.values())


@pytest.fixture(scope="module")
def P(space):
    return space.sample(24, seed=11)


@pytest.fixture(scope="module")
def in_process(model, space, P, loads):
    return solve_sets(model, P, loads, space=space)


def test_sets_equal_solve_many_of_each_model(model, space, P, loads, in_process):
    assert in_process.converged.all()
    for k in (0, 7, 23):
        m = space.apply(model, P[k])
        ref = solve_many(m, loads)
        np.testing.assert_allclose(in_process.q[k], ref.q, atol=SAME_Q, rtol=0)
        np.testing.assert_allclose(in_process.q_unloaded[k], m.unloaded.q, atol=SAME_Q, rtol=0)
        state = segment.solve(m, loads[7]).state        # EXT: the facets carry load
        np.testing.assert_allclose(in_process.facet_force[k, 7],
                                   [f.force for f in state.facets], rtol=1e-6, atol=1e-6)


# a set of the report's Sobol design (N = 256, seed 0, row 3149: large facet gap, steep left
# facet, soft disc in phi_x) whose LB case the kernel once failed (load stepping restarted from
# the predicted pose); solve() converges over three load steps from the reference pose
SOBOL_ROW_3149 = [0.4423573878593743, 49.92933690805191, 44.2799144162266, 4.941124129574746,
                  15.128969695910667, 17.57236400526017, 17.00437995325774, 15.109895094297826,
                  16.44889631215483, 5.778944239020348, 1.173543092235923, 0.9358626220375299,
                  1.1923793241381646, 1.118099132925272, 0.9376874465495348,
                  1.1767064034938812, 0.999809542298317, 1.1475451342761516,
                  0.8126580204814673, 0.8962646283209325, 0.9523912858217954]


def test_fast_path_equals_solve_of_each_set(model, space, loads):
    """The kernel starts Newton from the nominal equilibrium moved by its sensitivities and
    falls back to solve()'s path: per set it must find solve()'s equilibrium, status (6 for
    beyond the failure limits included) and facet forces, on random sets over the whole
    space and on the Sobol set that once failed."""
    P = np.vstack([space.sample(40, seed=5), space.lower, space.upper, SOBOL_ROW_3149])
    r = solve_sets(model, P, loads, space=space, chunk=16)
    for k in range(P.shape[0]):
        m = space.apply(model, P[k])
        u = m.unloaded
        assert r.status_unloaded[k] == u.status, k
        np.testing.assert_allclose(r.q_unloaded[k], u.q, atol=SAME_Q, rtol=0)
        for j, load in enumerate(loads):
            ref = segment.solve(m, load)
            assert r.status[k, j] == ref.status, (k, load.name, ref.message)
            np.testing.assert_allclose(r.q[k, j], ref.q, atol=SAME_Q, rtol=0,
                                       err_msg=f"set {k}, {load.name}")
            np.testing.assert_allclose(r.facet_force[k, j],
                                       [f.force for f in ref.state.facets], rtol=1e-6,
                                       atol=1e-6)
    assert r.converged[-1].all()


def test_sensitivities_in_the_kernel_equal_the_single_solve(model, space, P, loads):
    r = solve_sets(model, P[:3], loads, space=space, sensitivities=True, chunk=2)
    for k in range(3):
        s = equilibrium_sensitivity(model, loads[6], space=space, p=P[k])
        np.testing.assert_allclose(r.dq_dp[k, 6], s.dq_dp, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(r.dq_unloaded_dp[k], s.dq_unloaded_dp, rtol=1e-9,
                                   atol=1e-12)


@pytest.mark.slow  # numba's parallel kernels from several threads
def test_several_threads_at_once_give_the_same_numbers(model, space, P, loads, in_process):
    """Dask's threaded workers call the kernels from several threads: no abort, same q."""
    out = {}

    def work(i):
        out[("sets", i)] = solve_sets(model, P, loads, space=space, n_threads=1 + i % 2).q
        out[("many", i)] = solve_many(model, loads, n_threads=1).q

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ref_many = solve_many(model, loads).q
    for i in range(4):
        np.testing.assert_array_equal(out[("sets", i)], in_process.q)
        np.testing.assert_array_equal(out[("many", i)], ref_many)


WORKQUEUE_SCRIPT = """
import threading, numpy as np, numba, segment
from segment.studies.sets import solve_sets
from segment.studies.space import load_space
model, space = segment.c5c6(), load_space()
P, loads = space.sample(8, seed=2), list(segment.LOAD_CASES.values())
ref = solve_sets(model, P, loads, sensitivities=True, n_threads=2)   # numba's parallel route
assert numba.threading_layer() == "workqueue", numba.threading_layer()
out = {}
def work(i):
    out[i] = solve_sets(model, P, loads, sensitivities=True, chunk=3, n_threads=2).dq_dp
    space.pack_derivative(model, P, n_threads=2)
threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
for t in threads: t.start()
for t in threads: t.join()
assert len(out) == 4
for i in range(4):
    np.testing.assert_array_equal(out[i], ref.dq_dp)
print("ok")
"""


@pytest.mark.slow  # numba's parallel kernels in a subprocess
def test_sensitivity_kernels_are_safe_on_the_workqueue_layer(tmp_path):
    """numba's workqueue layer (where no OpenMP runtime is installed) aborts the process when
    two threads launch parallel kernels at once: every parallel kernel of the sensitivity
    path, the compiled pack derivative included, goes through ``launch``'s lock."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "NUMBA_THREADING_LAYER": "workqueue"}
    r = subprocess.run([sys.executable, "-c", WORKQUEUE_SCRIPT], env=env, cwd=tmp_path,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


def test_n_threads_is_checked(model, loads):
    with pytest.raises(ValueError, match="n_threads must be an integer"):
        solve_many(model, loads, n_threads=0)
    with pytest.raises(ValueError, match="n_threads must be an integer"):
        launch(print, n_threads=10_000)


@pytest.mark.slow  # starts a dask cluster
def test_dask_local_cluster_gives_identical_results(model, space, P, loads, in_process):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        r = solve_sets(model, P, loads, space=space, client=client, chunk=5)
    np.testing.assert_array_equal(r.q, in_process.q)
    np.testing.assert_array_equal(r.q_unloaded, in_process.q_unloaded)
    np.testing.assert_array_equal(r.status, in_process.status)
    np.testing.assert_array_equal(r.facet_force, in_process.facet_force)


def test_results_save_and_reload(in_process, tmp_path):
    pytest.importorskip("pyarrow")
    path = tmp_path / "study.parquet"
    in_process.to_parquet(path)
    back = SetsResult.read_parquet(path)
    for name in ("P", "q", "status", "iterations", "q_unloaded", "status_unloaded",
                 "facet_force", "loads"):
        np.testing.assert_array_equal(getattr(back, name), getattr(in_process, name))
    assert back.names == in_process.names and back.load_names == in_process.load_names
    frame = back.frame()
    assert len(frame) == in_process.P.shape[0]
    np.testing.assert_allclose(frame["FLX_phi_y_deg"], np.degrees(in_process.displacement[:, 6, 4]))


def test_not_a_result_file_is_named(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "other.parquet"
    pq.write_table(pa.table({"a": [1, 2]}), str(path))
    with pytest.raises(ValueError, match="not a segment parameter-set result"):
        SetsResult.read_parquet(path)


def test_bad_inputs(model, space, loads):
    with pytest.raises(ValueError, match=r"shape \(M, 21\)"):
        solve_sets(model, np.ones((3, 4)), loads, space=space)
    with pytest.raises(ValueError, match="chunk must be >= 1"):
        solve_sets(model, space.nominal[None], loads, space=space, chunk=-1)
