"""What the fast paths must keep: the same numbers, bounded memory, no side effects.

The kernels batch documents of equal length, split work over threads and
chunk it to a memory budget; the fit loop sorts documents by length.  None
of that may change a result beyond rounding, touch the caller's data, or
make memory grow with ``n_samples * n_features``.  No timing is asserted
here: speed is measured by ``benchmarks/speed/run.py``.
"""

import importlib.machinery
import os
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from _corpora import lda_counts, planted_counts, random_start
from _estimators import BY_NAME, classes_with, slow_except
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import xlogy

from sklearn_topicfac import KLNMF
from sklearn_topicfac import kernels as K
from sklearn_topicfac.kernels import _parallel, products

ESTIMATORS = classes_with("multiplicative_family")


def _lda_like(n=300, m=120, k=5, mean_length=40, seed=0, dtype=np.float64):
    """Counts with many documents of equal length (so slabs occur)."""
    rng = np.random.default_rng(seed)
    theta = rng.dirichlet(np.full(k, 0.2), size=n)
    phi = rng.dirichlet(np.full(m, 0.1), size=k)
    lengths = rng.poisson(mean_length, size=n)
    rates = theta @ phi
    X = np.stack([rng.multinomial(nd, p) for nd, p in zip(lengths, rates, strict=True)])
    X[7] = 0  # an empty document
    X[11, : m // 2] = 3  # a long document
    return sp.csr_matrix(X.astype(dtype))


def _factors(X, k=6, seed=1, dtype=np.float64):
    rng = np.random.default_rng(seed)
    W = rng.random((X.shape[0], k)) + 0.05
    H = rng.random((k, X.shape[1])) + 0.05
    return W.astype(dtype), H.astype(dtype)


@pytest.fixture
def many_small_units(monkeypatch):
    """Tiny work units and thresholds: every code path runs on small inputs."""
    monkeypatch.setattr(products, "_CHUNK_ELEMENTS", 256)
    monkeypatch.setattr(products, "_MIN_SLAB", 100)
    monkeypatch.setattr(_parallel, "MIN_PARALLEL_WORK", 0)
    # Threads even when the machine is busy: these tests are about results.
    monkeypatch.setattr(_parallel.ThreadBudget, "BACKOFF_CALLS", 0)


# ------------------------------------------------------------- the kernels
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sort_rows", [False, True])
@pytest.mark.parametrize("n_threads", [1, 3])
def test_sampled_product_matches_dense(
    many_small_units, monkeypatch, dtype, sort_rows, n_threads
):
    monkeypatch.setattr(_parallel, "N_THREADS", n_threads)
    X = _lda_like(dtype=dtype)
    if sort_rows:
        X = X[np.argsort(np.diff(X.indptr), kind="stable")]
    W, H = _factors(X, dtype=dtype)
    units = products.work_units(X.indptr, W.shape[1], X.dtype.itemsize)
    # The units cover every stored entry once; with sorted rows, both slabs
    # and mixed blocks occur.
    covered = [(X.indptr[s], X.indptr[e]) for s, e, _ in units]
    assert covered[0][0] == 0 and covered[-1][1] == X.nnz
    assert all(b == c for (_, b), (c, _) in zip(covered[:-1], covered[1:], strict=True))
    if sort_rows:
        assert {length > 0 for _, _, length in units} == {True, False}
    rows, cols = X.nonzero()
    expected = (W.astype(np.float64) @ H.astype(np.float64))[rows, cols]
    rtol = 1e-5 if dtype == np.float32 else 1e-13
    Y = K.product_at_nonzeros(X, W, H)
    assert Y.dtype == dtype
    assert_allclose(Y, expected, rtol=rtol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sort_rows", [False, True])
def test_document_passes_match_dense_references(many_small_units, dtype, sort_rows):
    # The document passes (slabs and mixed units, with tiny units) against
    # dense float64 algebra.
    X = _lda_like(dtype=dtype)
    if sort_rows:
        X = X[np.argsort(np.diff(X.indptr), kind="stable")]
    W, H = _factors(X, dtype=dtype)
    rows, cols = X.nonzero()
    W64, H64 = W.astype(np.float64), H.astype(np.float64)
    ratio = X.data / (W64 @ H64)[rows, cols]
    R64 = sp.csr_matrix((ratio, X.indices, X.indptr), shape=X.shape)
    rtol = 1e-5 if dtype == np.float32 else 1e-13
    W_em, R_em, (x_log_r, x_sum) = K.em_doc_pass(X, W, H)
    assert W_em.dtype == dtype and R_em.dtype == dtype
    assert_array_equal(R_em.indices, X.indices)
    assert_allclose(R_em.data, ratio, rtol=rtol)
    assert_allclose(W_em, W64 * (R64 @ H64.T), rtol=rtol)
    assert_allclose(x_log_r, float(xlogy(X.data, ratio).sum()), rtol=rtol)
    assert_allclose(x_sum, X.data.sum(), rtol=rtol)
    R_mu, W_mu, R_new = K.mu_doc_step(X, W, H)
    W_ref = W64 * (R64 @ H64.T) / H64.sum(axis=1)
    assert_allclose(R_mu.data, ratio, rtol=rtol)
    assert_allclose(W_mu, W_ref, rtol=rtol)
    assert_allclose(R_new.data, X.data / (W_ref @ H64)[rows, cols], rtol=10 * rtol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sort_rows", [False, True])
def test_batched_ratio_matches_dense_and_covers_every_entry_once(
    many_small_units, monkeypatch, dtype, sort_rows
):
    # A fit's ratio: slabs of many rows, padded blocks, rows entry by entry.
    monkeypatch.setattr(products, "_PADDED_ELEMENTS", 2048)
    X = _lda_like(dtype=dtype)
    if sort_rows:
        X = X[np.argsort(np.diff(X.indptr), kind="stable")]
    W, H = _factors(X, dtype=dtype)
    units = products.work_units(X.indptr, 6, X.dtype.itemsize, batched=True)
    kinds = {"padded" if len(u) == 4 else "slab" if u[2] else "entries" for u in units}
    assert {"slab", "padded"} <= kinds if sort_rows else "entries" in kinds
    spans = [(X.indptr[u[0]], X.indptr[u[1]]) for u in units]
    assert spans[0][0] == 0 and spans[-1][1] == X.nnz
    assert all(b == c for (_, b), (c, _) in zip(spans[:-1], spans[1:], strict=True))
    for unit in units:
        if len(unit) == 4:
            s, e, length, (take, valid) = unit
            lengths = np.diff(X.indptr[s : e + 1])
            assert length == lengths.max()
            assert length * (e - s) <= products._MAX_PADDING * lengths.sum()
            assert_array_equal(take[valid], np.arange(lengths.sum()))
    rows, cols = X.nonzero()
    W64, H64 = W.astype(np.float64), H.astype(np.float64)
    expected = X.data / (W64 @ H64)[rows, cols]
    R = products.batched_ratio_at_nonzeros(X, W, H)
    assert R.dtype == dtype
    assert_array_equal(R.indices, X.indices)
    assert_allclose(R.data, expected, rtol=1e-5 if dtype == np.float32 else 1e-13)
    # The same bits on one thread or three (padded blocks run on one).
    results = []
    for n_threads in (1, 3):
        monkeypatch.setattr(_parallel, "N_THREADS", n_threads)
        results.append(products.batched_ratio_at_nonzeros(X, W, H).data)
    assert_array_equal(results[0], results[1])
    # Above the work where the kernels use threads: ratio_at_nonzeros itself.
    monkeypatch.setattr(products, "_PADDED_MAX_WORK", 0)
    assert_array_equal(
        products.batched_ratio_at_nonzeros(X, W, H).data,
        K.ratio_at_nonzeros(X, W, H).data,
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batched_product_is_the_model_and_the_plain_one_where_it_does_not_pad(
    many_small_units, monkeypatch, dtype
):
    # Diagonal Newton's model in a fit: the padded layout of the batched
    # ratio, the same values as the dense product, the same bits on any
    # number of threads, and `product_at_nonzeros` itself above the work
    # where the kernels use threads.
    monkeypatch.setattr(products, "_PADDED_ELEMENTS", 2048)
    X = _lda_like(dtype=dtype)
    X = X[np.argsort(np.diff(X.indptr), kind="stable")]
    W, H = _factors(X, dtype=dtype)
    units = products.work_units(X.indptr, 6, X.dtype.itemsize, batched=True)
    assert any(len(u) == 4 for u in units)  # padded blocks are exercised
    rows, cols = X.nonzero()
    expected = (W.astype(np.float64) @ H.astype(np.float64))[rows, cols]
    Y = products.batched_product_at_nonzeros(X, W, H)
    assert Y.dtype == dtype
    assert_allclose(Y, expected, rtol=1e-5 if dtype == np.float32 else 1e-13)
    results = []
    for n_threads in (1, 3):
        monkeypatch.setattr(_parallel, "N_THREADS", n_threads)
        results.append(products.batched_product_at_nonzeros(X, W, H))
    assert_array_equal(results[0], results[1])
    monkeypatch.setattr(products, "_PADDED_MAX_WORK", 0)
    assert_array_equal(
        products.batched_product_at_nonzeros(X, W, H), K.product_at_nonzeros(X, W, H)
    )


def test_sorted_rows_form_slabs(many_small_units):
    X = _lda_like()
    X = X[np.argsort(np.diff(X.indptr), kind="stable")]
    units = products.work_units(X.indptr, 6)
    slab_entries = sum(
        X.indptr[e] - X.indptr[s] for s, e, length in units if length > 0
    )
    assert slab_entries > 0.5 * X.nnz
    for s, e, length in units:
        if length > 0:
            assert np.all(np.diff(X.indptr[s : e + 1]) == length)


def test_results_do_not_depend_on_the_number_of_threads(many_small_units, monkeypatch):
    X = _lda_like()
    W, H = _factors(X)
    R = K.ratio_at_nonzeros(X, W, H)
    results = {}
    for n_threads in (1, 2, 5):
        monkeypatch.setattr(_parallel, "N_THREADS", n_threads)
        results[n_threads] = (
            K.product_at_nonzeros(X, W, H),
            K.mu_update_w(R, W, H),
            K.transposed_product(W, R),
            K.kl_divergence_from_ratio(X, R, W, H),
        )
    for n_threads in (2, 5):
        # Every stored entry and every row is computed by the same code
        # whatever the split; only sums over row ranges are regrouped.
        assert_array_equal(results[n_threads][0], results[1][0])
        assert_array_equal(results[n_threads][1], results[1][1])
        assert_allclose(results[n_threads][2], results[1][2], rtol=1e-13)
        assert_allclose(results[n_threads][3], results[1][3], rtol=1e-13)
    assert_allclose(results[1][2], np.asarray((R.T @ W).T), rtol=1e-13)
    assert_allclose(results[1][1], W * (R @ H.T) / H.sum(axis=1), rtol=1e-13)


def test_busy_machine_fallback_changes_no_result(many_small_units, monkeypatch):
    # With the thread setting fixed, running serially (as after a slow
    # parallel call) gives bit-for-bit the results of running in parallel.
    monkeypatch.setattr(_parallel, "N_THREADS", 3)
    X = _lda_like()
    W0, H0 = random_start(X, 4)
    W, H = _factors(X)
    R = K.ratio_at_nonzeros(X, W, H)
    results = []
    for backoff in (0, 10**9):
        budget = _parallel.ThreadBudget()
        budget.remaining = backoff
        with _parallel.thread_budget(budget):
            fit = KLNMF(4, init="custom", max_iter=5, tol=0, split_merge=0).fit(
                X, W=W0, H=H0
            )
            results.append(
                (
                    K.mu_doc_step(X, W, H)[1],
                    K.transposed_product(W, R),
                    K.em_update_w(R, W, H),
                    K.kl_divergence_from_ratio(X, R, W, H),
                    fit.components_,
                    fit.loss_history_,
                )
            )
    for threaded, serial in zip(*results, strict=True):
        assert_array_equal(threaded, serial)


def test_threads_back_off_when_they_get_no_cpu(monkeypatch):
    import time

    monkeypatch.setattr(_parallel, "N_THREADS", 2)
    monkeypatch.setattr(_parallel, "MIN_PARALLEL_WORK", 0)
    calls = _parallel.ThreadBudget.BACKOFF_CALLS
    budget = _parallel.ThreadBudget()
    with _parallel.thread_budget(budget):
        assert _parallel.n_threads(1) == 2
        # Sleeping threads use no CPU: exactly what a busy machine looks like.
        _parallel.run_parallel([lambda: time.sleep(0.02)] * 2)
        assert budget.remaining == calls
        assert [_parallel.n_threads(1) for _ in range(calls)] == [1] * calls
        assert _parallel.n_threads(1) == 2
    # Without a budget (a kernel called on its own) nothing is remembered:
    # the kernels hold no state.
    _parallel.run_parallel([lambda: time.sleep(0.02)] * 2)
    assert _parallel.n_threads(1) == 2


def test_a_call_too_short_to_judge_does_not_back_off(monkeypatch):
    import time

    # Threads that start late look idle for much of a call of a few
    # milliseconds; such a call is not taken for a busy machine.
    monkeypatch.setattr(_parallel, "N_THREADS", 2)
    monkeypatch.setattr(_parallel, "MIN_PARALLEL_WORK", 0)
    budget = _parallel.ThreadBudget()
    with _parallel.thread_budget(budget):
        _parallel.run_parallel([lambda: time.sleep(0.001)] * 2)
        assert budget.remaining == 0
        assert _parallel.n_threads(1) == 2
        # The same idle threads over a call long enough to judge: back off.
        _parallel.run_parallel([lambda: time.sleep(2 * _parallel.MIN_JUDGED_WALL)] * 2)
        assert budget.remaining == _parallel.ThreadBudget.BACKOFF_CALLS


def test_threaded_kernels_leave_inputs_alone(many_small_units, monkeypatch):
    monkeypatch.setattr(_parallel, "N_THREADS", 3)
    X = _lda_like()
    W, H = _factors(X)
    before = [a.copy() for a in (X.data, X.indices, X.indptr, W, H)]
    R = K.ratio_at_nonzeros(X, W, H)
    K.em_step(R, W, H)
    K.mu_update_w(R, W, H)
    K.kl_divergence_from_ratio(X, R, W, H)
    for a, b in zip(before, (X.data, X.indices, X.indptr, W, H), strict=True):
        assert_array_equal(a, b)


def test_worker_errors_and_errstate_reach_the_caller():
    def overflow():
        return np.multiply(np.float64(1e308), 10.0)

    # The workers run in a copy of the caller's context: NumPy's errstate
    # applies there too, and their exceptions surface in the caller.
    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        _parallel.run_parallel([lambda: 1, overflow])
    with np.errstate(over="ignore"):
        assert _parallel.run_parallel([lambda: 1, overflow]) == [1, np.inf]

    def fail():
        raise KeyError("from a worker")

    with pytest.raises(KeyError, match="from a worker"):
        _parallel.run_parallel([lambda: 1, fail, lambda: 3])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sort_rows", [False, True])
@pytest.mark.parametrize("n_threads", [1, 3])
def test_fused_doc_step_equals_the_separate_kernels(
    many_small_units, monkeypatch, dtype, sort_rows, n_threads
):
    monkeypatch.setattr(_parallel, "N_THREADS", n_threads)
    X = _lda_like(dtype=dtype)
    if sort_rows:
        X = X[np.argsort(np.diff(X.indptr), kind="stable")]
    W, H = _factors(X, dtype=dtype)
    W[3, 2] = 0  # zeros of W stay zero
    R, W_new, R_new = K.mu_doc_step(X, W, H)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    expected_R = K.ratio_at_nonzeros(X, W, H)
    expected_W = K.mu_update_w(expected_R, W, H)
    assert R.dtype == W_new.dtype == R_new.dtype == dtype
    assert_allclose(R.data, expected_R.data, rtol=rtol)
    assert_allclose(W_new, expected_W, rtol=rtol)
    assert W_new[3, 2] == 0
    assert np.all(W_new[np.diff(X.indptr) == 0] == 0)  # empty documents
    assert_allclose(R_new.data, K.ratio_at_nonzeros(X, expected_W, H).data, rtol=rtol)
    assert np.array_equal(R_new.indptr, X.indptr)


def test_objective_equals_the_xlogy_formula():
    X = _lda_like()
    W, H = _factors(X)
    R = K.ratio_at_nonzeros(X, W, H)
    R.data[::7] = 0.0  # an underflowed ratio is read as the smallest normal
    X = X.copy()
    X.data[::11] = 0.0  # a stored zero of X contributes nothing
    tiny = np.finfo(R.dtype).tiny
    expected = (
        np.sum(xlogy(X.data, np.maximum(R.data, tiny)))
        - X.data.sum()
        + W.sum(axis=0) @ H.sum(axis=1)
    )
    assert_allclose(K.kl_divergence_from_ratio(X, R, W, H), expected, rtol=1e-12)


# ---------------------------------------------------------------- the fits
@pytest.mark.parametrize("Estimator", ESTIMATORS, ids=lambda c: c.__name__)
def test_fit_is_row_permutation_equivariant(Estimator):
    # The fit loop iterates on the documents sorted by length: permuting
    # the documents permutes the document factor and nothing else.
    X = _lda_like()
    W0, H0 = random_start(X, 4)
    perm = np.random.default_rng(3).permutation(X.shape[0])
    params = dict(n_components=4, init="custom", max_iter=15, tol=0)
    # The one-pass solvers: rows of equal length may be summed in another
    # order, which SQUAREM's extrapolations amplify beyond 1e-10.
    params.update(_one_pass(Estimator))
    a = Estimator(**params).fit(X, W=W0, H=H0)
    b = Estimator(**params).fit(X[perm], W=W0[perm], H=H0)
    assert_allclose(b.components_, a.components_, rtol=1e-10)
    assert_allclose(b.embedding_, a.embedding_[perm], rtol=1e-10)
    assert_allclose(b.loss_history_, a.loss_history_, rtol=1e-12)


def _one_pass(Estimator):
    return dict(BY_NAME[Estimator.__name__].one_pass_params)


@pytest.mark.parametrize("Estimator", ESTIMATORS, ids=lambda c: c.__name__)
def test_threaded_fit_equals_single_threaded_fit(
    many_small_units, monkeypatch, Estimator
):
    X = _lda_like()
    W0, H0 = random_start(X, 4)
    params = dict(n_components=4, init="custom", max_iter=10, tol=0, split_merge=0)
    # The one-pass solvers: coordinate descent's projections on zero and
    # SQUAREM's extrapolations amplify the rounding of a sum split over
    # threads (PLSI "squarem": 8e-10 relative on entries of 1e-31).
    params.update(_one_pass(Estimator))
    fits = []
    for n_threads in (1, 2):
        monkeypatch.setattr(_parallel, "N_THREADS", n_threads)
        fits.append(Estimator(**params).fit(X, W=W0, H=H0))
    assert_allclose(fits[1].components_, fits[0].components_, rtol=1e-10)
    assert_allclose(fits[1].embedding_, fits[0].embedding_, rtol=1e-10)
    assert_allclose(fits[1].loss_history_, fits[0].loss_history_, rtol=1e-12)


@pytest.mark.parametrize("Estimator", ESTIMATORS, ids=lambda c: c.__name__)
def test_float32_fit_tracks_the_float64_fit(Estimator):
    # float32 end to end (the fast path) stays within float32 rounding of
    # the float64 fit over a run long enough to exercise every kernel path.
    X = _lda_like(n=400, m=150)
    W0, H0 = random_start(X, 5)
    params = dict(n_components=5, init="custom", max_iter=30, tol=0, split_merge=0)
    # The one-pass solvers (see test_threaded_fit_equals_single_threaded_fit).
    params.update(_one_pass(Estimator))
    f64 = Estimator(**params).fit(X, W=W0, H=H0)
    f32 = Estimator(**params).fit(
        X.astype(np.float32), W=W0.astype(np.float32), H=H0.astype(np.float32)
    )
    assert f32.components_.dtype == np.float32
    assert_allclose(f32.loss_history_, f64.loss_history_, rtol=1e-5)
    big = f64.components_ > 1e-3 * f64.components_.max()
    assert_allclose(f32.components_[big], f64.components_[big], rtol=1e-2)


@pytest.mark.parametrize("Estimator", ESTIMATORS, ids=lambda c: c.__name__)
def test_transform_is_row_permutation_equivariant(Estimator):
    # The fold-in also runs on the documents sorted by length; each document
    # is folded in on its own, so the order of the batch never matters.
    X = _lda_like()
    model = Estimator(4, random_state=0, max_iter=30).fit(X)
    perm = np.random.default_rng(4).permutation(X.shape[0])
    assert_allclose(model.transform(X[perm]), model.transform(X)[perm], rtol=1e-12)


def test_fit_does_not_modify_or_keep_a_sorted_view_of_the_input():
    X = planted_counts(n=60, m=40)
    X = X[np.random.default_rng(0).permutation(X.shape[0])]
    snapshot = (X.data.copy(), X.indices.copy(), X.indptr.copy())
    KLNMF(3, random_state=0, max_iter=5, tol=0, split_merge=0).fit(X)
    for a, b in zip(snapshot, (X.data, X.indices, X.indptr), strict=True):
        assert_array_equal(a, b)


@pytest.mark.parametrize(
    "Estimator", slow_except(ESTIMATORS, "JointNMF"), ids=lambda c: c.__name__
)
def test_fit_memory_is_o_nnz_plus_factors(Estimator):
    # A 20,000 x 20,000 corpus with 10 entries per document: its dense model
    # would take 3.2 GB.  Peak memory of a fit must be a small multiple of
    # the sparse data plus the factors, whatever n_samples * n_features.
    n = m = 20_000
    k = 10
    rng = np.random.default_rng(0)
    per_row = rng.integers(5, 16, n)
    indptr = np.concatenate(([0], np.cumsum(per_row)))
    X = sp.csr_matrix(
        (
            rng.integers(1, 4, indptr[-1]).astype(np.float64),
            rng.integers(0, m, indptr[-1]),
            indptr,
        ),
        shape=(n, m),
    )
    X.sum_duplicates()
    W0, H0 = (np.abs(a) + 0.1 for a in random_start(X, k))
    nnz_bytes = X.nnz * (8 + 4)
    factor_bytes = (n + m) * k * 8
    tracemalloc.start()
    Estimator(k, init="custom", max_iter=2, tol=0).fit(X, W=W0, H=H0)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # The sorted copy of X, a ratio and a model value per entry, a few
    # factor-sized temporaries, and the per-thread gather blocks.
    gathers = _parallel.N_THREADS * 8 * products._CHUNK_ELEMENTS
    bound = 4 * nnz_bytes + 8 * factor_bytes + 4 * gathers
    assert peak < bound, f"peak {peak / 2**20:.1f} MiB > bound {bound / 2**20:.1f} MiB"
    assert bound < 0.05 * n * m * 8


def test_row_ranges_share_the_data_and_give_the_same_products():
    # SciPy's constructor copies slices under half of their array; the row
    # ranges the threads work on must not (an O(nnz) copy per call).
    X = _lda_like()
    W, H = _factors(X)
    for r0, r1 in [(0, 10), (100, 180), (0, X.shape[0])]:
        rows = products.row_range(X, r0, r1)
        rows_t = products.row_range(X, r0, r1, transposed=True)
        for part in (rows, rows_t):
            assert np.shares_memory(part.data, X.data)
            assert np.shares_memory(part.indices, X.indices)
        assert_allclose((rows @ H.T), X[r0:r1] @ H.T, rtol=1e-13)
        assert_allclose((rows_t @ W[r0:r1]), X[r0:r1].T @ W[r0:r1], rtol=1e-13)


def test_remembered_work_units_follow_the_array_and_its_contents():
    from sklearn_topicfac.kernels import products

    rng = np.random.default_rng(0)
    lengths = np.sort(rng.integers(1, 30, size=300))
    indptr = np.concatenate(([0], np.cumsum(lengths))).astype(np.int32)
    first = products.work_units(indptr, 5, 8)
    assert first == products._work_units(indptr, 5, 8)
    # The same array again: the very list remembered.
    assert products.work_units(indptr, 5, 8) is first
    # Changed in place (same object, other row offsets): split anew.
    indptr[1:] = np.concatenate(([0], np.cumsum(lengths[::-1])))[1:]
    again = products.work_units(indptr, 5, 8)
    assert again is not first and again == products._work_units(indptr, 5, 8)
    # An equal copy is another array: its own entry, the same units.
    copy = indptr.copy()
    assert products.work_units(copy, 5, 8) == again
    # Other k or itemsize: other units.
    assert products.work_units(indptr, 50, 8) == products._work_units(indptr, 50, 8)
    assert len(products._UNITS) <= products._UNITS_KEPT


def test_one_blas_thread_limits_blas_and_restores_it():
    """`one_blas_thread` sets every BLAS library to one thread for its block
    and back after it, with one threadpoolctl controller per process (making
    one walks every loaded library, milliseconds per call)."""
    import threadpoolctl

    from sklearn_topicfac.kernels import _parallel, one_blas_thread

    def blas_threads():
        return [
            info["num_threads"]
            for info in threadpoolctl.threadpool_info()
            if info["user_api"] == "blas"
        ]

    before = blas_threads()
    assert before  # NumPy's and SciPy's BLAS
    with one_blas_thread():
        assert blas_threads() == [1] * len(before)
    assert blas_threads() == before
    with one_blas_thread():
        pass
    assert _parallel._blas_controller() is _parallel._blas_controller()
    assert _parallel._blas_controller.cache_info().currsize == 1


def test_blas_controller_finds_the_libraries_threadpoolctl_finds():
    """The controller that skips Python's extension modules while it walks
    the mapped files finds every library threadpoolctl's own finds (the
    skipping is a shortcut, never a filter of what gets limited); and no
    file that names a BLAS, OpenMP or threading library is skipped."""
    import threadpoolctl

    def found(controller):
        return sorted(
            (lib.internal_api, os.path.realpath(lib.filepath))
            for lib in controller.lib_controllers
        )

    ours = _parallel._blas_controller()
    assert found(ours) == found(threadpoolctl.ThreadpoolController())
    assert any(
        api in ("openblas", "mkl", "blis", "flexiblas") for api, _ in found(ours)
    )
    for name in (
        "libscipy_openblas64_-32a4b2a6.so",
        "libopenblasp-r0.3.27.so",
        "libmkl_rt.so.2",
        "libgomp-e985bcbb.so.1.0.0",
        "libblas.so.3",
    ):
        assert not _parallel._is_extension_module("/x/" + name)
    assert _parallel._is_extension_module(
        "/x/_sparsetools" + importlib.machinery.EXTENSION_SUFFIXES[0]
    )


@pytest.mark.parametrize("reslice", [0.0, 0.5, 0.99])
def test_fold_ins_keeping_stopped_rows_give_each_row_its_own_result(
    monkeypatch, reslice
):
    """The fold-ins sweep over held rows and slice again only once few still
    move (`fold_in._RESLICE`); a stopped row must keep the result of the
    sweep where it stopped, whatever else is held: the same values (to
    rounding) as slicing to the moving rows at every sweep (``1.0``)."""
    from sklearn_topicfac.kernels import fold_in

    X = lda_counts(n=120, m=50, k=4, seed=3)
    W, H = random_start(X, 4)
    alpha = np.full(4, 0.1)
    B = H / H.sum(axis=1, keepdims=True)
    D = np.asarray(X.sum(axis=1)) / 4 * np.ones((1, 4))
    monkeypatch.setattr(fold_in, "_RESLICE", 1.0)
    mu_every, em_every = (
        K.mu_fold_in(X, H, W, 200, 1e-4),
        K.em_fold_in(X, B, D, alpha, 200, 1e-4),
    )
    monkeypatch.setattr(fold_in, "_RESLICE", reslice)
    assert_allclose(K.mu_fold_in(X, H, W, 200, 1e-4), mu_every, rtol=1e-12)
    assert_allclose(K.em_fold_in(X, B, D, alpha, 200, 1e-4), em_every, rtol=1e-12)


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sampled_product_computes_what_the_one_off_products_compute(
    many_small_units, monkeypatch, n_threads, dtype
):
    """`products.SampledProduct` plans a matrix's sampled product once for
    the fold-ins' sweeps: every call must give `product_at_nonzeros`'s and
    `ratio_at_nonzeros`'s bits (units and threads planned alike), and a
    ratio must overwrite the last one rather than allocate anew."""
    monkeypatch.setattr(_parallel, "N_THREADS", n_threads)
    X = _lda_like(n=400, m=90, k=6, dtype=dtype)
    product = products.SampledProduct(X, 6, dtype)
    assert product.count == n_threads
    rng = np.random.default_rng(1)
    first = None
    for _ in range(3):
        W = rng.random((X.shape[0], 6)).astype(dtype)
        H = rng.random((6, X.shape[1])).astype(dtype)
        Ht = np.ascontiguousarray(H.T)
        assert_array_equal(product.product(W, Ht), K.product_at_nonzeros(X, W, H))
        R = product.ratio(W, Ht)
        expected = K.ratio_at_nonzeros(X, W, H)
        assert R.dtype == expected.dtype == dtype
        assert_array_equal(R.toarray(), expected.toarray())
        first = R.data if first is None else first
        assert R.data is first


@pytest.mark.parametrize("reslice", [0.0, 0.5])
def test_fold_ins_plan_their_products_once_per_slice(monkeypatch, reslice):
    """A fold-in's sweeps reuse one `SampledProduct` per slice of the held
    rows: planning the product and building its sparse matrix at every
    sweep cost more than the arithmetic on small batches (KLNMF's
    ``transform`` of CSTR's 95 held-out documents: 5.5 ms, 3.8 ms planned
    once).  Never sliced again (``_RESLICE = 0``), one plan a fold-in."""
    from sklearn_topicfac.kernels import fold_in

    plans = []

    class Counted(products.SampledProduct):
        def __init__(self, X, k, dtype):
            plans.append(X.shape[0])
            super().__init__(X, k, dtype)

    monkeypatch.setattr(fold_in, "SampledProduct", Counted)
    monkeypatch.setattr(fold_in, "_RESLICE", reslice)
    X = lda_counts(n=120, m=50, k=4, seed=3)
    W, H = random_start(X, 4)
    B = H / H.sum(axis=1, keepdims=True)
    D = np.asarray(X.sum(axis=1)) / 4 * np.ones((1, 4))
    for run in (
        lambda: K.mu_fold_in(X, H, W, 200, 1e-4),
        lambda: K.em_fold_in(X, B, D, np.full(4, 0.1), 200, 1e-4),
    ):
        plans.clear()
        run()
        held = int(np.count_nonzero(np.diff(X.indptr)))
        assert plans[0] == held
        if reslice == 0.0:
            assert plans == [held]
        else:
            # Each plan after the first is of fewer than half the rows before.
            pairs = zip(plans[:-1], plans[1:], strict=True)
            assert all(b < reslice * a for a, b in pairs)
            assert len(plans) > 1
