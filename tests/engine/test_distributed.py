"""Fitting on a real dask.distributed LocalCluster of worker processes.

The cluster (2 worker processes on loopback) is started once for the module.
Dask is in the test extra, so these tests run wherever the tests do.
"""

import math
import os
import signal
import time
import warnings

import dask
import dask.array as da
import numpy as np
import pytest
import scipy.sparse as sp
from _corpora import BLOCK_READERS, block_files, planted_counts
from _estimators import (
    BY_NAME,
    REGISTRY,
    estimator_variants,
    estimators_with,
    runs_block_by_block,
    slow_except,
)
from distributed import Client, LocalCluster
from joblib import parallel_config
from numpy.testing import assert_allclose
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV

from sklearn_topicfac import (
    KLNMF,
    LDAVI,
    PLSI,
    NormalizedNMF,
    config_context,
    get_config,
)
from sklearn_topicfac._config import with_config
from sklearn_topicfac.distributed import fit_dask
from sklearn_topicfac.engine import Start, sources
from sklearn_topicfac.engine.dask import DaskData, runner_for
from sklearn_topicfac.engine.iterations import start
from sklearn_topicfac.models import LDAModel, NormalizedNMFModel
from sklearn_topicfac.out_of_core import Blocks

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@pytest.fixture(scope="module")
def client():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=40,
        )
        client = Client(cluster)
    yield client
    client.close()
    cluster.close()


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    # The corpora here have a few hundred documents: canonical chunks of 64
    # rows spread each over both workers, as a large corpus would be.
    monkeypatch.setattr(sources, "MIN_CHUNK_ROWS", 64)


def _corpus(n=400, m=60, seed=0):
    return planted_counts(n=n, m=m, seed=seed)


def _dask(X, rows=90):
    return da.from_array(X, chunks=(rows, -1), asarray=False)


def _close(a, b, rtol=1e-6):
    assert_allclose(a.components_, b.components_, rtol=rtol, atol=1e-12)
    assert_allclose(a.loss_history_, b.loss_history_, rtol=rtol)
    assert_allclose(a.embedding_, b.embedding_, rtol=rtol, atol=1e-10)


def test_the_engine_setting_reaches_the_workers(client):
    # What the runner's tasks and a lazy transform carry to the workers.
    for backend in ("numpy", "auto"):
        with config_context(backend=backend):
            task = with_config(get_config)
        assert client.submit(task, pure=False).result()["backend"] == backend
    assert client.submit(get_config, pure=False).result()["backend"] == "auto"


# On the numba backend too; slow (each worker process loads the twins).
@pytest.mark.parametrize(
    "backend", ["numpy", pytest.param("numba", marks=pytest.mark.slow)], indirect=True
)
# Every parameter variant of every block-wise estimator: the solver the
# in-memory fit runs, or a clear refusal for one that needs every document
# at once.
@pytest.mark.parametrize(("Estimator", "params"), estimator_variants("blockwise"))
def test_distributed_fit_equals_in_memory_fit(backend, client, Estimator, params):
    X = _corpus()
    kw = dict(n_components=4, init="random", max_iter=12, tol=0, random_state=3)
    if not runs_block_by_block(Estimator, params):
        with pytest.raises(ValueError, match="needs every document at once"):
            Estimator(**kw, **params).fit(_dask(X))
        return
    local = Estimator(**kw, **params).fit(X)
    on_cluster = Estimator(**kw, **params).fit(_dask(X))
    _close(local, on_cluster)
    # Communication per iteration: the topics to each worker and one sum of
    # statistics back per worker -- O(k x n_features), not O(n_samples).
    # Diagonal Newton's two passes: the topics, their gain and curvature
    # back, the proposal out and one number per term back.
    k, m = local.components_.shape
    # (A worker killed by an earlier test may still be coming back.)
    client.wait_for_workers(2, timeout=60)
    per_worker = on_cluster.n_bytes_per_iteration_ / len(
        client.scheduler_info()["workers"]
    )
    passes = 2 if getattr(local, "solver_", None) == "dn" else 1
    assert np.all(per_worker < 8 * ((1 + 2 * passes) * k * m + m + 64))
    if hasattr(local, "p_d_given_z_"):
        assert_allclose(local.p_d_given_z_, on_cluster.p_d_given_z_, rtol=1e-6)
        assert_allclose(local.p_z_, on_cluster.p_z_, rtol=1e-6)


@pytest.mark.parametrize(
    ("spec", "params"),
    [
        *slow_except(
            [
                pytest.param(p.values[0], {}, id=p.id)
                for p in estimators_with("blockwise")
            ],
            "PLSI",
        ),
        # LDAVI's mean-field VB, whose moves its default (CVB0) does not make.
        pytest.param(
            BY_NAME["LDAVI"], {"inference": "vb"}, id="LDAVI-vb", marks=pytest.mark.slow
        ),
    ],
)
def test_distributed_fit_at_default_parameters_equals_in_memory_fit(
    client, spec, params
):
    # The start included (NNDSVDa from products of the blocks on the
    # workers), and the split-merge moves (off by default, turned on here),
    # proposed, tried on the workers and undone on this corpus (4 planted
    # topics, 5 fitted), as in memory.
    X = planted_counts(n=120, m=70, k=4, seed=0)
    kw = dict(n_components=5, random_state=0, **params)
    moving = "split_merge" in spec.cls().get_params()
    if moving:
        kw["split_merge"] = 3
    local = spec.cls(**kw).fit(X)
    on_cluster = spec.cls(**kw).fit(_dask(X, rows=45))
    _close(local, on_cluster)
    assert on_cluster.n_iter_ == local.n_iter_
    np.testing.assert_allclose(on_cluster.loss_, local.loss_, rtol=1e-9)
    assert getattr(on_cluster, "solver_", None) == getattr(local, "solver_", None)
    moves = getattr(local, "split_merge_moves_", [])
    assert [m["accepted"] for m in moves] == [
        m["accepted"] for m in getattr(on_cluster, "split_merge_moves_", [])
    ]
    # A move was proposed and tried on the cluster (CVB0 makes none).
    assert bool(moves) is (moving and not (spec.cls is LDAVI and not params))


def test_distributed_fit_from_a_custom_start_and_float32(client):
    X = _corpus().astype(np.float32)
    rng = np.random.default_rng(0)
    W0 = rng.random((X.shape[0], 3)).astype(np.float32) + 0.1
    H0 = rng.random((3, X.shape[1])).astype(np.float32) + 0.1
    kw = dict(n_components=3, init="custom", max_iter=8, tol=0)
    local = KLNMF(**kw).fit(X, W=W0, H=H0)
    on_cluster = fit_dask(KLNMF(**kw), _dask(X, rows=150), W=W0, H=H0)
    assert on_cluster.components_.dtype == np.float32
    assert on_cluster.embedding_.dtype == np.float32
    _close(local, on_cluster, rtol=1e-4)


def test_communication_does_not_grow_with_the_documents(client):
    kw = dict(n_components=3, init="random", max_iter=3, tol=0, random_state=0)
    n_workers = len(client.nthreads())
    for n in (200, 2000):
        model = PLSI(**kw).fit(_dask(_corpus(n=n), rows=n // 4))
        k, m = model.components_.shape
        n_chunks = len(sources.chunk_sizes(n))
        # Per iteration: the topics out to each worker, then the Newton
        # proposal out (diagonal Newton's two passes); back, the partial
        # sums of the chunks' statistics that cross workers in the sums'
        # tree -- consecutive chunks share a worker, so about one per worker
        # and level of the tree, log2(chunks) levels (at most 8) -- and the
        # totals to the client: the gain and curvature (2 k x m), one number
        # per term.  (And the scale of W, k numbers to each chunk.)
        levels = math.ceil(math.log2(n_chunks))
        crossings = 1 + (n_workers - 1) * levels
        bound = (
            n_workers * 8 * (k * m + m + 3)
            + crossings * 8 * (2 * k * m + m + 3 + 3)
            + n_chunks * 8 * k
        )
        assert np.all(model.n_bytes_per_iteration_ <= bound)
        assert np.all(model.n_bytes_per_iteration_ >= 8 * k * m * n_workers)


@pytest.mark.parametrize(
    "Estimator", [PLSI, pytest.param(LDAVI, marks=pytest.mark.slow)]
)
def test_fit_survives_losing_a_worker(client, Estimator):
    X = _corpus(n=600)
    kw = dict(n_components=4, init="random", max_iter=12, tol=0, random_state=1)
    # At the defaults (PLSI: diagonal Newton, whose check pass a lost worker
    # may interrupt too).
    undisturbed = Estimator(**kw).fit(X)
    victim = sorted(client.run(os.getpid).values())[0]
    killed = []

    def kill_at_iteration_5(iteration, objective):
        if iteration == 5:
            os.kill(victim, signal.SIGKILL)
            killed.append(iteration)

    disturbed = fit_dask(
        Estimator(**kw),
        _dask(X, rows=70),
        checkpoint_every=3,
        callback=kill_at_iteration_5,
    )
    assert killed == [5]
    _close(undisturbed, disturbed)
    # The nanny restarts the killed worker; later tests get two again.
    client.wait_for_workers(2, timeout=60)
    assert victim not in client.run(os.getpid).values()


def _block_that_fails(i):
    if i == 2:
        raise RuntimeError("block 2 cannot be read")
    return sp.csr_matrix(np.ones((10, 6)))


def test_an_error_in_one_block_reaches_the_client(client):
    blocks = [
        da.from_delayed(
            dask.delayed(_block_that_fails)(i),
            shape=(10, 6),
            dtype=np.float64,
            meta=sp.csr_matrix((0, 0)),
        )
        for i in range(4)
    ]
    X = da.concatenate(blocks, axis=0)
    start = time.perf_counter()
    message = (
        rf"^Block 2 \(from row 20\) of the dask array '{X.name}' could not be "
        "read: RuntimeError: block 2 cannot be read$"
    )
    with pytest.raises(ValueError, match=message) as info:
        PLSI(n_components=2, init="random").fit(X)
    assert isinstance(info.value.__cause__, RuntimeError)
    assert time.perf_counter() - start < 60


@pytest.mark.parametrize("damage", ["corrupt", "truncated"])
@pytest.mark.parametrize("kind", ["npz", "npy"])
def test_a_block_file_that_cannot_be_read_is_named(client, tmp_path, kind, damage):
    # The workers' reader raises its own error (BadZipFile, a NumPy error...),
    # which names no block: the fit names the block and the dask array.
    read = BLOCK_READERS[kind]
    chunks = [
        da.from_delayed(
            dask.delayed(read)(path),
            shape=(10, 6),
            dtype=np.float64,
            meta=np.empty((0, 0)),
        )
        for path in block_files(tmp_path, kind, damage)
    ]
    X = da.concatenate(chunks)
    message = rf"^Block 1 \(from row 10\) of the dask array '{X.name}' could not"
    with pytest.raises(ValueError, match=message) as info:
        KLNMF(n_components=2, init="random", max_iter=3).fit(X)
    assert type(info.value.__cause__).__name__ in str(info.value)


def test_bad_values_in_a_block_name_the_block(client):
    X = _corpus(n=100).toarray()
    X[57, 3] = -1.0
    with pytest.raises(
        ValueError, match=r"Negative values in block 1 \(rows 50 to 99\)"
    ):
        KLNMF(n_components=2, init="random").fit(da.from_array(X, chunks=(50, -1)))


def test_transform_of_a_dask_array_is_lazy_and_equal(client):
    X = _corpus()
    model = PLSI(n_components=3, max_iter=20, random_state=0).fit(X)
    lazy = model.transform(_dask(X))
    assert isinstance(lazy, da.Array)
    assert_allclose(lazy.compute(), model.transform(X), rtol=1e-12)


def test_grid_search_over_k_on_the_cluster(client):
    X = _corpus(n=300, m=50)
    grid = {"n_components": [2, 3, 4, 5]}
    # A short EM fit, pinned: the workers do not inherit the suite's NumPy
    # backend (they may run numba, whose rounding differs); the test needs
    # only the same choice of k on both sides.
    est = PLSI(solver="em", max_iter=40, random_state=0)
    local = GridSearchCV(est, grid, cv=3).fit(X)
    with parallel_config(backend="dask"):
        remote = GridSearchCV(est, grid, cv=3, n_jobs=-1).fit(X)
    assert remote.best_params_ == local.best_params_
    assert_allclose(
        remote.cv_results_["mean_test_score"],
        local.cv_results_["mean_test_score"],
        rtol=1e-10,
    )
    # The planted corpus has 4 topics (see tests/_corpora.py).
    assert local.best_params_ == {"n_components": 4}


def test_dask_ml_incremental_runs_partial_fit_per_block(client):
    from dask_ml.wrappers import Incremental

    X = _corpus()
    Xd = _dask(X, rows=100)
    wrapped = Incremental(
        PLSI(n_components=4, random_state=0), shuffle_blocks=False
    ).fit(Xd)
    manual = PLSI(n_components=4, random_state=0)
    for block in Xd.blocks:
        manual.partial_fit(block.compute())
    assert wrapped.estimator_.n_batch_iter_ == 4
    assert_allclose(wrapped.estimator_.components_, manual.components_, rtol=1e-10)


def test_online_epochs_on_the_cluster_equal_those_in_memory(client, monkeypatch):
    # One online engine on every runner: the epochs visit the chunks in
    # order, the topics passed from chunk to chunk on the workers.  Chunks
    # whose rows are a multiple of the mini-batch visit the same mini-batches
    # as the matrix in memory.
    monkeypatch.setattr(sources, "MIN_CHUNK_ROWS", 50)
    X = _corpus(n=200)
    params = dict(n_components=3, learning_method="online", batch_size=25)
    params.update(max_iter=4, random_state=0)
    here = LDAVI(**params).fit(X)
    there = LDAVI(**params).fit(_dask(X, rows=50))
    assert_allclose(there.components_, here.components_, rtol=1e-10)
    assert_allclose(there.loss_history_, here.loss_history_, rtol=1e-10)


def test_errors(client):
    X = _corpus()
    with pytest.raises(ValueError, match=r"X.rechunk\(\{1: -1\}\)"):
        PLSI(n_components=2, init="random").fit(da.from_array(X.toarray(), chunks=50))
    with pytest.raises(ValueError, match="needs the whole matrix"):
        PLSI(n_components=2, init="kmeans").fit(_dask(X))
    with pytest.raises(ValueError, match="checkpoint_every"):
        fit_dask(PLSI(n_components=2), _dask(X), checkpoint_every=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        with pytest.raises(ConvergenceWarning):
            PLSI(n_components=2, init="random", max_iter=2).fit(_dask(X))


def _lda_model(k):
    return LDAModel(np.full(k, 1 / k), 1 / k, 1e-3, 100)


@pytest.mark.parametrize("n_steps", [1, 3])
@pytest.mark.parametrize("Estimator", [NormalizedNMF, LDAVI])
def test_checkpoint_and_replay_rebuild_the_document_factors_exactly(
    client, Estimator, n_steps
):
    # The recovery path itself (dask may also recompute lost keys on its own,
    # as in the test above): factors rebuilt from the client's checkpoint by
    # replaying the logged document steps equal the ones computed directly.
    # LDAVI's first E-step starts from a random draw and later ones from all
    # ones, so the replay of step 1 must be told it was the first (``warm``).
    X = _dask(_corpus(n=300), rows=70)
    runner = runner_for(DaskData(X, client, checkpoint_every=100))
    model = {NormalizedNMF: NormalizedNMFModel(), LDAVI: _lda_model(3)}[Estimator]
    H = start(model, runner, Start("random", 3, 0, np.random.RandomState(0)))
    scale = None
    for step in range(n_steps):
        H, scale = model.topic_step(H, runner.step(model, H, scale, step > 0))
    direct = client.gather(runner.states)
    runner._rebuild()
    assert runner.n_recoveries == 1
    for a, b in zip(direct, client.gather(runner.states), strict=True):
        assert_allclose(a, b, rtol=1e-12)
    runner.close()


@pytest.mark.parametrize(
    "spec", [spec for spec in REGISTRY if spec.blockwise], ids=repr
)
def test_cluster_fits_of_two_chunkings_are_the_same_bits(client, spec):
    # The chunks' statistics are added in one fixed tree, wherever the
    # chunks and the sums run: two chunkings of the dask array, and the
    # same rows read block by block in this process, give the same bits.
    X = _corpus()
    kw = dict(n_components=4, random_state=0)
    fits = [
        fit_dask(spec.cls(**kw), _dask(X, rows=rows)).components_ for rows in (90, 137)
    ]
    here = spec.cls(**kw).fit(Blocks(X, block_size=50)).components_
    assert np.array_equal(fits[0], fits[1])
    assert np.array_equal(fits[0], here)
