"""Block-wise fitting in one process (``Blocks``) and ``partial_fit``."""

import re
import tracemalloc
import warnings

import dask
import dask.array as da
import numpy as np
import pytest
import scipy.sparse as sp
from _corpora import BLOCK_READERS, block_files, planted_counts
from _estimators import (
    BY_NAME,
    classes_with,
    estimator_variants,
    estimators_with,
    runs_block_by_block,
    slow_except,
)
from numpy.testing import assert_allclose
from sklearn.base import clone

from sklearn_topicfac import (
    KLNMF,
    LDAVI,
    PLSI,
    HybridNMFPLSI,
)
from sklearn_topicfac.engine import InMemoryRunner, Start, start_topics
from sklearn_topicfac.kernels import kl_divergence
from sklearn_topicfac.models import PLSIModel
from sklearn_topicfac.out_of_core import Blocks

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

KW = dict(n_components=4, init="random", max_iter=10, tol=0, random_state=2)


def _same_fit(a, b, rtol=1e-6):
    assert_allclose(a.components_, b.components_, rtol=rtol, atol=1e-12)
    assert_allclose(a.loss_history_, b.loss_history_, rtol=rtol)
    assert_allclose(a.embedding_, b.embedding_, rtol=rtol, atol=1e-10)


@pytest.mark.parametrize(("Estimator", "params"), estimator_variants("blockwise"))
def test_blocks_fit_equals_in_memory_fit(backend, Estimator, params):
    # A block-wise fit runs the solver an in-memory fit runs (diagonal
    # Newton as a map-reduce of two passes); a solver that needs every
    # document at once is refused, never replaced by another.
    X = planted_counts(n=250, m=50, seed=1)
    if not runs_block_by_block(Estimator, params):
        with pytest.raises(ValueError, match="needs every document at once"):
            Estimator(**KW, **params).fit(Blocks(X, block_size=60))
        return
    blocks = Estimator(**KW, **params).fit(Blocks(X, block_size=60))
    _same_fit(Estimator(**KW, **params).fit(X), blocks)


def _same_moves(a, b):
    """The same split-merge moves, decided the same way (bounds to rounding)."""
    moves_a = getattr(a, "split_merge_moves_", [])
    moves_b = getattr(b, "split_merge_moves_", [])
    assert [(m["merged"], m["split"], m["accepted"]) for m in moves_a] == [
        (m["merged"], m["split"], m["accepted"]) for m in moves_b
    ]
    for m_a, m_b in zip(moves_a, moves_b, strict=True):
        assert_allclose(m_a["objective_after"], m_b["objective_after"], rtol=1e-9)


# Every block-wise estimator at its defaults, and LDAVI's mean-field VB too
# (its default, CVB0, makes no split-merge moves).
DEFAULT_FITS = [
    *(pytest.param(p.values[0], {}, id=p.id) for p in estimators_with("blockwise")),
    pytest.param(BY_NAME["LDAVI"], {"inference": "vb"}, id="LDAVI-vb"),
]


@pytest.mark.parametrize(("spec", "params"), DEFAULT_FITS)
def test_blocks_fit_at_default_parameters_equals_in_memory_fit(spec, params):
    # The start included: NNDSVDa from products of the blocks with thin
    # matrices, and the split-merge moves (off by default, turned on here)
    # made on the blocks (on this corpus, 4 planted topics fitted with 5, a
    # move is proposed, tried on the blocks and undone, as in memory).
    X = planted_counts(n=120, m=70, k=4, seed=0)
    kw = dict(n_components=5, random_state=0, **params)
    # (An estimator may offer no moves: the guide's.)
    moving = "split_merge" in spec.cls().get_params()
    if moving:
        kw["split_merge"] = 3
    memory = spec.cls(**kw).fit(X)
    blocks = spec.cls(**kw).fit(Blocks(X, block_size=50))
    _same_fit(memory, blocks)
    assert blocks.n_iter_ == memory.n_iter_
    assert_allclose(blocks.loss_, memory.loss_, rtol=1e-9)
    assert getattr(blocks, "solver_", None) == getattr(memory, "solver_", None)
    _same_moves(memory, blocks)
    collapsed = spec.cls is LDAVI and not params
    assert bool(memory.split_merge_moves_) is (moving and not collapsed)
    # A dask array without a distributed client: its blocks computed here,
    # the same algorithm again (with a client: tests/engine/test_distributed).
    on_dask = spec.cls(**kw).fit(da.from_array(X, chunks=(50, -1), asarray=False))
    assert on_dask.n_iter_ == memory.n_iter_
    assert_allclose(on_dask.loss_, memory.loss_, rtol=1e-9)
    assert getattr(on_dask, "solver_", None) == getattr(memory, "solver_", None)
    if hasattr(memory, "n_batch_iter_"):
        assert blocks.n_batch_iter_ == memory.n_batch_iter_


def test_blocks_fit_with_restarts_equals_in_memory_fit():
    X = planted_counts(n=120, m=70, k=4, seed=1)
    kw = dict(n_components=5, n_init=3, random_state=0)
    memory = LDAVI(**kw).fit(X)
    blocks = LDAVI(**kw).fit(Blocks(X, block_size=50))
    _same_fit(memory, blocks)
    _same_moves(memory, blocks)


def test_every_kind_of_source_gives_the_same_fit(tmp_path):
    X = planted_counts(n=200, m=40, seed=2)
    reference = PLSI(**KW).fit(X)
    parts = [X[a : a + 50] for a in range(0, 200, 50)]
    memmap = np.lib.format.open_memmap(
        tmp_path / "X.npy", mode="w+", dtype=np.float64, shape=X.shape
    )
    memmap[:] = X.toarray()
    memmap.flush()
    paths = []
    for i, part in enumerate(parts):
        paths.append(tmp_path / f"block{i}.npz")
        sp.save_npz(paths[-1], part)
    sources = [
        Blocks(X.toarray(), block_size=70),
        Blocks(parts),
        Blocks(lambda: (sp.load_npz(p) for p in paths)),
        Blocks(np.load(tmp_path / "X.npy", mmap_mode="r"), block_size=33),
        # A dask array with no distributed client: its blocks are computed
        # one at a time in this process.
        da.from_array(X, chunks=(80, -1), asarray=False),
    ]
    for source in sources:
        _same_fit(reference, PLSI(**KW).fit(source))


def test_float32_blocks_stay_float32():
    X = planted_counts(n=120, m=30, seed=3, dtype=np.float32)
    model = KLNMF(**KW).fit(Blocks(X, block_size=50))
    assert model.components_.dtype == np.float32
    assert model.embedding_.dtype == np.float32
    _same_fit(KLNMF(**KW).fit(X), model, rtol=1e-4)


def _peak_memory_of_a_blockwise_fit(n_blocks, rows=500, m=2000):
    """Peak traced memory of a block-wise fit of ``n_blocks`` generated
    blocks, the corpus's bytes and those of its W."""

    def read():
        for i in range(n_blocks):
            rng = np.random.default_rng(i)
            per_row = 100  # (a term may repeat: the fit sums duplicates)
            yield sp.csr_matrix(
                (
                    rng.integers(1, 5, rows * per_row).astype(np.float64),
                    rng.integers(0, m, rows * per_row),
                    np.arange(0, rows * per_row + 1, per_row),
                ),
                shape=(rows, m),
            )

    corpus_bytes = sum(b.data.nbytes + b.indices.nbytes for b in read())
    source = Blocks(read)
    tracemalloc.start()
    PLSI(n_components=2, init="random", max_iter=3, tol=0).fit(source)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak, corpus_bytes, n_blocks * rows * 2 * 8


def test_memory_is_bounded_by_a_chunk_not_the_corpus():
    # 20,000 and then 40,000 documents generated block by block, fitted in
    # canonical chunks of the same size (10,000 rows): the corpus (24 MB,
    # then 48 MB of CSR here) is never in memory at once.  Doubling it adds
    # a few copies of W (state, update, attributes), not the corpus's 24 MB.
    small, small_corpus, small_w = _peak_memory_of_a_blockwise_fit(40)
    large, large_corpus, large_w = _peak_memory_of_a_blockwise_fit(80)
    assert large_corpus - small_corpus > 2e7
    growth = large - small
    assert growth < 10 * (large_w - small_w) + (large_corpus - small_corpus) / 8, (
        small,
        large,
        large_corpus,
    )


def test_online_epochs_block_by_block_equal_those_in_memory():
    # The online epochs run on every runner: blocks whose sizes are
    # multiples of the mini-batch visit the same mini-batches in the same
    # order as the matrix in memory, so the fit is the same.
    X = planted_counts(n=120, m=20, seed=4)
    params = dict(n_components=2, learning_method="online", batch_size=20)
    params.update(max_iter=3, random_state=0)
    here = LDAVI(**params).fit(X)
    blocks = LDAVI(**params).fit(Blocks(X, block_size=40))
    assert_allclose(blocks.components_, here.components_, rtol=1e-10)
    assert_allclose(blocks.loss_history_, here.loss_history_, rtol=1e-10)


def test_blocks_errors():
    X = planted_counts(n=100, m=20, seed=4)
    bad = X.toarray()
    bad[73, 2] = -1
    with pytest.raises(
        ValueError, match=r"Negative values in block 1 \(rows 50 to 99\)"
    ):
        PLSI(**KW).fit(Blocks(bad, block_size=50))
    with pytest.raises(ValueError, match="needs the whole matrix"):
        PLSI(n_components=2, init="kmeans").fit(Blocks(X))
    with pytest.raises(ValueError, match="cannot be fitted block by block"):
        HybridNMFPLSI(n_components=2).fit(Blocks(X))
    with pytest.raises(ValueError, match="then transform each block"):
        PLSI(**KW).fit_transform(Blocks(X))
    with pytest.raises(ValueError, match="21 columns, block 0 has 20"):
        Blocks([X, sp.csr_matrix((3, 21))])
    calls = []

    def shrinking():
        calls.append(1)
        return iter([X[:50], X[50:]] if len(calls) == 1 else [X[:50]])

    with pytest.raises(ValueError, match="same blocks on every pass"):
        PLSI(**KW).fit(Blocks(shrinking))
    with pytest.raises(ValueError, match="no blocks"):
        Blocks([])


@pytest.mark.parametrize("damage", ["corrupt", "truncated"])
@pytest.mark.parametrize("kind", ["npz", "npy"])
@pytest.mark.parametrize("source", ["reader", "dask array"])
def test_a_block_file_that_cannot_be_read_is_named(tmp_path, kind, damage, source):
    # The reader's own error (BadZipFile, a NumPy error...) names neither the
    # block nor the file: the fit says which block of which source it was.
    paths = block_files(tmp_path, kind, damage)
    read = BLOCK_READERS[kind]
    if source == "reader":

        def read_blocks():
            return (read(path) for path in paths)

        # (Blocks reads the blocks once to learn their shapes.)
        data, where = (lambda: Blocks(read_blocks)), r"the reader .*read_blocks\(\)"
    else:
        chunks = [
            da.from_delayed(
                dask.delayed(read)(path),
                shape=(10, 6),
                dtype=np.float64,
                meta=np.empty((0, 0)),
            )
            for path in paths
        ]
        X = da.concatenate(chunks)
        data, where = (lambda: X), re.escape(f"the dask array '{X.name}'")
    with pytest.raises(
        ValueError, match=rf"^Block 1 \(from row 10\) of {where} could not be read: "
    ) as info:
        PLSI(**KW).fit(data())
    assert info.value.__cause__ is not None  # the reader's error, chained
    assert type(info.value.__cause__).__name__ in str(info.value)


# ------------------------------------------------------------- partial_fit
def _fold_in_objective(model, X):
    # The count-scale fold-in, W @ H estimating X (transform for KLNMF;
    # for the probabilistic estimators, P(z|d) times the document lengths).
    W = model.topic_proportions(X) * np.asarray(X.sum(axis=1))
    H = model.topic_word_distributions()
    return kl_divergence(X, W, H)


@pytest.mark.parametrize(
    "Estimator", slow_except(classes_with("multiplicative_family"), "KLNMF")
)
def test_partial_fit_approaches_the_batch_solution(Estimator):
    X = planted_counts(n=600, m=80, seed=0)
    batch = Estimator(n_components=4, random_state=0, max_iter=500, tol=1e-7).fit(X)
    online = Estimator(n_components=4, random_state=0, tol=1e-7, max_iter=500)
    rng = np.random.default_rng(0)
    gaps = []
    for epoch in range(10):
        for rows in np.array_split(rng.permutation(X.shape[0]), 12):
            online.partial_fit(X[rows])
        if epoch in (1, 9):
            gaps.append(
                _fold_in_objective(online, X) / _fold_in_objective(batch, X) - 1
            )
    # Stepwise EM with step (10 + t) ** -0.7: after 120 mini-batches of 50
    # documents the step is still ~0.03, so the topics keep a noise of that
    # order around the optimum; the measured gap is 1.2 % after 10 epochs
    # for each estimator (and shrinks with more epochs).
    assert 0 <= gaps[1] < gaps[0]
    assert gaps[1] < 0.02, gaps
    assert online.n_batch_iter_ == 120


def test_partial_fit_is_stepwise_em():
    # With learning_decay=1 and learning_offset=1 the steps are 1, 1/2, 1/3...:
    # the statistics are the running mean of each call's expected counts
    # E(H) = H * (W^T R), W the fold-in for the topics H of that call.
    X = planted_counts(n=100, m=30, seed=5)

    def expected_counts(H):
        # partial_fit's fold-in runs to tol, not transform_tol.
        ref = PLSI(n_components=3, transform_tol=PLSI().tol)
        ref.components_, ref.p_z_ = H, np.full(3, 1 / 3)
        ref.n_features_in_ = X.shape[1]  # what a fit sets beside them
        # The count-scale fold-in: P(z|d) times the document lengths.
        W = ref.transform(X) * np.asarray(X.sum(axis=1))
        R = X.multiply(1 / (W @ H)).tocsr()
        return H * np.asarray(R.T @ W).T

    def rows_normalized(A):
        return A / A.sum(axis=1, keepdims=True)

    model = PLSI(n_components=3, random_state=0, learning_decay=1.0, learning_offset=1)
    runner = InMemoryRunner(sp.csr_matrix(X))
    H0 = start_topics(PLSIModel(), runner, Start("nndsvda", 3, 0, 0))
    model.partial_fit(X)
    H1 = model.components_.copy()
    assert_allclose(H1, rows_normalized(expected_counts(H0)), rtol=1e-6, atol=1e-15)
    model.partial_fit(X)
    mean = (expected_counts(H0) + expected_counts(H1)) / 2
    assert_allclose(model.components_, rows_normalized(mean), rtol=1e-6, atol=1e-15)


def test_partial_fit_contract():
    X = planted_counts(n=60, m=20, seed=6, dtype=np.float32)
    model = KLNMF(n_components=2, random_state=0)
    model.partial_fit(X[:30]).partial_fit(X[30:])
    assert model.components_.dtype == np.float32
    assert model.transform(X).shape == (60, 2)
    assert clone(model).get_params() == model.get_params()
    with pytest.raises(ValueError, match="features"):
        model.partial_fit(X[:, :10])
    with pytest.raises(ValueError, match="init='custom'"):
        PLSI(n_components=2, init="custom").partial_fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        PLSI(n_components=2, random_state=0).partial_fit(X).partial_fit(X)
