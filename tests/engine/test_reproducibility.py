"""The same ``random_state`` gives the same bits: whatever the threads, the
processes or the partition of the rows into blocks.

Every estimator of the registry is fitted at its defaults (only
``n_components`` and ``random_state`` set) and its ``components_`` compared
with ``np.array_equal`` -- no tolerance:

- threads: the kernels configured for one thread and for two, every call
  large enough for threads (`_parallel.MIN_PARALLEL_WORK` = 0), on the
  NumPy kernels and on their numba twins;
- processes: fits run by joblib with ``n_jobs=1`` and ``n_jobs=2`` (as in a
  grid search), against the fit in this process;
- partitions: two partitions of the rows into `Blocks` that cut across the
  canonical chunks (made small here so that the corpus has several), and a
  dask array with a third chunking.  HybridNMFPLSI and SimplexPLSA fit every
  document at once and refuse blocks (`tests/engine/test_out_of_core.py`).
"""

import warnings

import dask.array as da
import numpy as np
import pytest
import scipy.sparse as sp
from _corpora import lda_counts
from _estimators import REGISTRY
from joblib import Parallel, delayed
from sklearn.base import clone
from threadpoolctl import threadpool_limits

from sklearn_topicfac import config_context
from sklearn_topicfac.engine import sources
from sklearn_topicfac.engine.runners import TreeSum, tree_sum
from sklearn_topicfac.kernels import _parallel
from sklearn_topicfac.out_of_core import Blocks

pytestmark = pytest.mark.filterwarnings(
    "ignore::sklearn.exceptions.ConvergenceWarning",
    "ignore:SimplexPLSA. X looks like counts:UserWarning",
)

K = 4


@pytest.fixture(scope="module")
def corpus():
    return sp.csr_matrix(lda_counts(n=300, m=70, k=K, seed=5))


def _default(spec):
    return spec.cls(n_components=K, random_state=0)


def _components(estimator, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return clone(estimator).fit(X).components_


# ------------------------------------------------------------- the tree
def _pairwise_levels(parts):
    """Pairs (0, 1), (2, 3)... level by level, the odd one carried up."""
    while len(parts) > 1:
        carried = [parts[-1]] if len(parts) % 2 else []
        parts = [
            f"({a}+{b})" for a, b in zip(parts[::2], parts[1::2], strict=False)
        ] + carried
    return parts[0]


@pytest.mark.parametrize("n", range(1, 41))
def test_tree_sum_adds_in_one_fixed_tree(n):
    parts = [str(i) for i in range(n)]
    assert tree_sum(parts, lambda a, b: f"({a}+{b})") == _pairwise_levels(parts)


def test_tree_sum_of_nothing_is_an_error():
    with pytest.raises(ValueError, match="no parts"):
        TreeSum(np.add).result()


def test_the_tree_changes_the_rounding():
    # The order matters for floats: the tree is not the running sum.
    parts = [1.0, 1e16, -1e16, 1.0, 3.0]
    assert tree_sum(parts) != sum(parts)


# ------------------------------------------------------ canonical chunks
def test_chunk_sizes_depend_on_the_number_of_rows_alone():
    assert sources.chunk_sizes(10) == [10]
    rows = sources.MIN_CHUNK_ROWS
    assert sources.chunk_sizes(2 * rows + 1) == [rows, rows, 1]
    big = sources.chunk_sizes(10**7)
    assert len(big) <= sources.MAX_CHUNKS
    assert sum(big) == 10**7


@pytest.mark.parametrize("partition", [[300], [1, 299], [64, 64, 64, 108], [97] * 3])
def test_every_partition_gives_the_same_chunks(monkeypatch, partition):
    monkeypatch.setattr(sources, "MIN_CHUNK_ROWS", 64)
    X = sp.random(sum(partition), 30, density=0.2, format="csr", random_state=0)
    X.data = np.ceil(X.data * 5)
    bounds = np.cumsum([0, *partition])
    source = Blocks([X[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)])
    reference = Blocks(X, block_size=10_000)
    assert source.sizes == reference.sizes == sources.chunk_sizes(X.shape[0])
    pairs = zip(source.prepared_blocks(), reference.prepared_blocks(), strict=True)
    for a, b in pairs:
        assert (a.start, a.stop) == (b.start, b.stop)
        for name in ("data", "indices", "indptr"):
            assert np.array_equal(getattr(a.X, name), getattr(b.X, name))
        assert np.array_equal(a.unsort(a.X.toarray()), X[a.start : a.stop].toarray())


# ------------------------------------------------------ every estimator
@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("spec", REGISTRY, ids=repr)
def test_one_thread_or_two_give_the_same_bits(monkeypatch, corpus, spec, backend):
    if backend == "numba":
        pytest.importorskip("numba")
    # Threads for every call: the split of each call into row ranges is
    # the same on one thread and on two.
    monkeypatch.setattr(_parallel, "MIN_PARALLEL_WORK", 0)
    fits = []
    for threads in (1, 2):
        monkeypatch.setattr(_parallel, "N_THREADS", threads)
        with config_context(backend=backend):
            fits.append(_components(_default(spec), corpus))
    assert np.array_equal(fits[0], fits[1])


def _fit_in_worker(estimator, X):
    return _components(estimator, X)


@pytest.mark.parametrize("spec", REGISTRY, ids=repr)
def test_n_jobs_one_or_two_give_the_same_bits(corpus, spec):
    here = _components(_default(spec), corpus)
    for n_jobs in (1, 2):
        fits = Parallel(n_jobs=n_jobs)(
            delayed(_fit_in_worker)(_default(spec), corpus) for _ in range(2)
        )
        for components in fits:
            assert np.array_equal(components, here)


@pytest.mark.parametrize(
    "spec", [spec for spec in REGISTRY if spec.blockwise], ids=repr
)
def test_block_partitions_give_the_same_bits(monkeypatch, corpus, spec):
    # Chunks of 64 rows: 300 rows make five, and neither partition below
    # (nor the dask array's chunks) falls on their boundaries.
    monkeypatch.setattr(sources, "MIN_CHUNK_ROWS", 64)
    uneven = [corpus[a:b] for a, b in [(0, 10), (10, 150), (150, 151), (151, 300)]]
    fits = [
        _components(_default(spec), Blocks(corpus, block_size=100)),
        _components(_default(spec), Blocks(uneven)),
        # No distributed client: the dask array's blocks are read here.
        _components(
            _default(spec), da.from_array(corpus, chunks=(77, -1), asarray=False)
        ),
    ]
    assert np.array_equal(fits[0], fits[1])
    assert np.array_equal(fits[0], fits[2])


@pytest.mark.slow
@pytest.mark.parametrize("spec", REGISTRY, ids=repr)
def test_one_blas_thread_or_two_give_the_same_bits(spec):
    # A corpus large enough for OpenBLAS to split its factorizations: the
    # start's randomized SVD (and SimplexPLSA's SVD and rotation) run on one
    # BLAS thread whatever the machine's setting, so the fit does not
    # depend on it (nor on joblib's one-thread limit in its workers).
    X = sp.csr_matrix(lda_counts(n=3000, m=800, k=10, seed=5))
    estimator = spec.cls(n_components=10, random_state=0)
    fits = []
    for threads in (1, 2):
        with threadpool_limits(limits=threads, user_api="blas"):
            fits.append(_components(estimator, X))
    assert np.array_equal(fits[0], fits[1])
