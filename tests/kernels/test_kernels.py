"""Tests of the shared update kernels against dense references and the papers."""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose

from sklearn_topicfac import kernels as K
from sklearn_topicfac.kernels import products
from sklearn_topicfac.kernels.divergence import model_and_ratio_log_sums

# Every contract here holds for both backends of the kernels.
pytestmark = pytest.mark.usefixtures("backend")


def _problem(n=30, m=25, k=4, density=0.3, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(
        n, m, density=density, random_state=seed, format="csr", dtype=np.float64
    )
    X.data = np.ceil(10 * X.data)
    W = rng.random((n, k)) + 0.05
    H = rng.random((k, m)) + 0.05
    return X.astype(dtype), W.astype(dtype), H.astype(dtype)


def _dense_kl(X, Y):
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    mask = X > 0
    return float(np.sum(X[mask] * np.log(X[mask] / Y[mask])) - X.sum() + Y.sum())


@pytest.mark.parametrize("chunk", [products._CHUNK_ELEMENTS, 7, 64])
def test_product_at_nonzeros_matches_dense(monkeypatch, chunk):
    monkeypatch.setattr(products, "_CHUNK_ELEMENTS", chunk)
    X, W, H = _problem()
    X = sp.diags((np.arange(X.shape[0]) != 3).astype(float)) @ X  # empty row 3
    X = X.tocsr()
    X.eliminate_zeros()
    rows, cols = X.nonzero()
    assert_allclose(K.product_at_nonzeros(X, W, H), (W @ H)[rows, cols], rtol=1e-13)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kernels_keep_dtype(dtype):
    X, W, H = _problem(dtype=dtype)
    R = K.ratio_at_nonzeros(X, W, H)
    assert K.product_at_nonzeros(X, W, H).dtype == dtype
    assert R.dtype == dtype
    assert K.transposed_product(W, R).dtype == dtype
    assert K.mu_update_w(R, W, H).dtype == dtype
    assert K.mu_update_h(R, W, H).dtype == dtype
    W2, H2 = K.em_step(R, W, H)
    assert W2.dtype == dtype and H2.dtype == dtype
    assert K.normalize_rows(W)[0].dtype == dtype
    assert K.normalize_columns(W)[0].dtype == dtype


def test_ratio_shares_pattern_and_leaves_inputs_alone():
    X, W, H = _problem()
    X = X.copy()
    X.data[::5] = 0.0  # explicitly stored zeros must give ratio 0, not NaN
    before = (X.data.copy(), X.indices.copy(), X.indptr.copy(), W.copy(), H.copy())
    R = K.ratio_at_nonzeros(X, W, H)
    assert R.nnz == X.nnz
    assert np.array_equal(R.indices, X.indices) and np.array_equal(R.indptr, X.indptr)
    rows, cols = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr)), X.indices
    assert_allclose(R.data, X.data / (W @ H)[rows, cols], rtol=1e-13)
    assert np.all(R.data[::5] == 0)
    for a, b in zip(before, (X.data, X.indices, X.indptr, W, H), strict=True):
        assert np.array_equal(a, b)
    assert np.isfinite(K.kl_divergence(X, W, H))


def test_ratio_is_finite_when_the_model_underflows():
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0]], dtype=np.float32))
    W = np.array([[0.0], [1.0]], dtype=np.float32)
    H = np.array([[1.0, 1.0]], dtype=np.float32)
    R = K.ratio_at_nonzeros(X, W, H)
    assert np.all(np.isfinite(R.data))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kl_divergence_sparse_dense_and_reference_agree(dtype):
    X, W, H = _problem(dtype=dtype)
    expected = _dense_kl(X.toarray(), W.astype(np.float64) @ H.astype(np.float64))
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    assert_allclose(K.kl_divergence(X, W, H), expected, rtol=rtol)
    assert_allclose(K.kl_divergence(X.toarray(), W, H), expected, rtol=rtol)
    assert_allclose(K.kl_divergence(X.tocsc(), W, H), expected, rtol=rtol)


def test_kl_divergence_is_zero_at_an_exact_fit():
    _, W, H = _problem()
    X = sp.csr_matrix(W @ H)
    assert abs(K.kl_divergence(X, W, H)) < 1e-10 * X.sum()


def test_multiplicative_half_steps_fix_row_and_column_sums_at_every_step():
    # Ding, Li & Peng (paper 001) Prop. 3, which holds after every half-step,
    # not only at convergence: the W step matches row sums, the H step
    # matches column sums.
    X, W, H = _problem(n=40, m=30, k=5)
    for _ in range(5):
        W = K.mu_update_w(K.ratio_at_nonzeros(X, W, H), W, H)
        assert_allclose(
            (W @ H).sum(axis=1), np.asarray(X.sum(axis=1)).ravel(), rtol=1e-12
        )
        H = K.mu_update_h(K.ratio_at_nonzeros(X, W, H), W, H)
        assert_allclose(
            (W @ H).sum(axis=0), np.asarray(X.sum(axis=0)).ravel(), rtol=1e-12
        )


def test_each_half_step_lowers_the_objective():
    X, W, H = _problem()
    loss = K.kl_divergence(X, W, H)
    for _ in range(10):
        W = K.mu_update_w(K.ratio_at_nonzeros(X, W, H), W, H)
        new = K.kl_divergence(X, W, H)
        assert new <= loss * (1 + 1e-13)
        H = K.mu_update_h(K.ratio_at_nonzeros(X, W, H), W, H)
        loss, new = new, K.kl_divergence(X, W, H)
        assert new <= loss * (1 + 1e-13)
        loss = new


def _hofmann_em(X, p_z, p_d_z, p_w_z):
    """Textbook EM for PLSI with the full posterior (tiny sizes only)."""
    joint = p_z[None, None, :] * p_d_z[:, None, :] * p_w_z.T[None, :, :]
    post = joint / joint.sum(axis=2, keepdims=True)
    weighted = X[:, :, None] * post
    T = weighted.sum(axis=(0, 1))
    return T / X.sum(), weighted.sum(axis=1) / T, (weighted.sum(axis=0) / T).T


def test_em_step_is_hofmanns_em():
    rng = np.random.default_rng(1)
    X = rng.poisson(2.0, size=(7, 6)).astype(float)
    k = 3
    p_z = rng.dirichlet(np.ones(k))
    p_d_z = rng.dirichlet(np.ones(7), size=k).T
    p_w_z = rng.dirichlet(np.ones(6), size=k)
    N = X.sum()
    # Count scale used by the kernels: W = N * P(d|z) P(z), H = P(w|z).
    W, H = N * p_d_z * p_z, p_w_z
    W1, H1 = K.em_step(K.ratio_at_nonzeros(sp.csr_matrix(X), W, H), W, H)
    ref_z, ref_dz, ref_wz = _hofmann_em(X, p_z, p_d_z, p_w_z)
    assert_allclose(H1, ref_wz, rtol=1e-12)
    assert_allclose(W1.sum(axis=0) / N, ref_z, rtol=1e-12)
    assert_allclose(K.normalize_columns(W1)[0], ref_dz, rtol=1e-12)


@pytest.mark.parametrize("pairing", ["F=CS,G=H", "F=C,G=HS"])
def test_theorem5_one_step_equivalence(pairing):
    # Zhang, Ding & Tang (paper 000) Thm 5 and Cor. 6, in our orientation:
    # the topic factor plays the paper's F, the document factor its G.  From
    # matching starts (C S = F, D = G, or C = F, D S = G) PLSI's P(w|z)
    # update is NMF's topic update normalized, and its document update is
    # NMF's document update normalized.
    rng = np.random.default_rng(2)
    X = sp.csr_matrix(rng.poisson(1.5, size=(12, 9)).astype(float))
    k = 3
    s = rng.dirichlet(np.ones(k)) * X.sum()
    C = rng.dirichlet(np.ones(9), size=k)  # P(w|z), rows sum to 1
    D = rng.dirichlet(np.ones(12), size=k).T  # P(d|z), columns sum to 1
    plsi_W, plsi_H = D * s, C
    if pairing == "F=CS,G=H":
        nmf_W, nmf_H = D, s[:, None] * C
    else:
        nmf_W, nmf_H = D * s, C
    R = K.ratio_at_nonzeros(X, plsi_W, plsi_H)
    assert_allclose(R.data, K.ratio_at_nonzeros(X, nmf_W, nmf_H).data, rtol=1e-13)
    new_W, new_C = K.em_step(R, plsi_W, plsi_H)
    assert_allclose(
        K.normalize_rows(K.mu_update_h(R, nmf_W, nmf_H))[0], new_C, rtol=1e-12
    )
    assert_allclose(
        K.normalize_columns(K.mu_update_w(R, nmf_W, nmf_H))[0],
        K.normalize_columns(new_W)[0],
        rtol=1e-12,
    )


def test_normalize_helpers_keep_zero_rows_and_columns_finite():
    A = np.array([[0.0, 0.0], [1.0, 3.0]])
    rows, s = K.normalize_rows(A)
    assert_allclose(rows, [[0, 0], [0.25, 0.75]])
    assert_allclose(s, [0, 4])
    cols, s = K.normalize_columns(A.T)
    assert_allclose(cols, [[0, 0.25], [0, 0.75]])
    assert np.all(np.isfinite(cols))


def test_ratio_at_nonzeros_memory_is_o_nnz():
    # The dense model of this 20000 x 20000 problem would take 3.2 GB.  The
    # ratio may use two gather blocks capped at _CHUNK_ELEMENTS elements each
    # plus a few arrays of nnz entries (the result, row indices).
    n = m = 20000
    k = 10
    rng = np.random.default_rng(0)
    per_row = 10
    X = sp.csr_matrix(
        (
            rng.random(n * per_row) + 0.5,
            rng.integers(0, m, n * per_row),
            np.arange(0, n * per_row + 1, per_row),
        ),
        shape=(n, m),
    )
    W, H = rng.random((n, k)), rng.random((k, m))
    tracemalloc.start()
    K.ratio_at_nonzeros(X, W, H)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    bound = 2 * 8 * products._CHUNK_ELEMENTS + 4 * 8 * X.nnz + 8 * m * k
    assert X.nnz * k > 2 * products._CHUNK_ELEMENTS  # the cap is really exercised
    assert peak < bound, f"peak {peak / 2**20:.1f} MiB > bound {bound / 2**20:.1f} MiB"


@pytest.mark.parametrize("sweep", ["cd_sweep", "dn_sweep"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sweeps_lower_the_objective_and_keep_the_model_current(dtype, sweep):
    # Coordinate descent and diagonal Newton: one iteration each.
    rng = np.random.default_rng(0)
    X = sp.random(40, 30, density=0.2, random_state=0, format="csr", dtype=dtype)
    X.data = np.ceil(10 * X.data)
    # A start far too large: the first Newton steps lower W and overshoot.
    W = (rng.random((40, 4)) * 50).astype(dtype)
    H = rng.random((4, 30)).astype(dtype)
    before = [A.copy() for A in (X.data, W, H)]
    losses = [K.kl_divergence(X, W, H)]
    Wi, Hi, y = W, H, None
    for _ in range(8):
        Wi, Hi, y = getattr(K, sweep)(X, Wi, Hi, y)
        assert Wi.dtype == Hi.dtype == y.dtype == dtype
        assert (Wi >= 0).all() and (Hi >= 0).all()
        if dtype == np.float64:
            # (In float32, y is that of the float64 factors before the cast.)
            assert_allclose(y, K.product_at_nonzeros(X, Wi, Hi), rtol=1e-9)
        losses.append(K.kl_divergence(X, Wi, Hi))
    assert np.all(np.diff(losses) <= 1e-5 * losses[0])
    assert losses[-1] < 0.5 * losses[0]
    # The common scale is the best one: sum(W H) = sum(X).
    assert_allclose(Wi.sum(axis=0) @ Hi.sum(axis=1), X.sum(), rtol=1e-4)
    for a, b in zip(before, (X.data, W, H), strict=True):
        assert np.array_equal(a, b)


def test_dn_sweep_falls_back_where_the_diagonal_newton_step_would_raise():
    # Topics that overlap and a start five times too large: the diagonal of
    # the Hessian misses how a row's components interact, and the plain
    # diagonal Newton step lowers both of them far below zero's projection,
    # raising the objective; the sweep's checked step lowers it.
    rng = np.random.default_rng(1)
    H = np.vstack([np.r_[np.ones(10), np.zeros(10)], np.r_[np.ones(15), np.zeros(5)]])
    H += 0.01
    X = sp.csr_matrix(rng.poisson(3.0 * (rng.random((30, 2)) + 0.1) @ H).astype(float))
    W = (rng.random((30, 2)) + 0.1) * 5
    y = K.product_at_nonzeros(X, W, H)
    R = sp.csr_matrix((X.data / y, X.indices, X.indptr), shape=X.shape)
    gain = R @ H.T
    R.data /= y
    curvature = R @ np.square(H.T)
    plain = np.maximum(W - (H.sum(axis=1) - gain) / curvature, 0)
    start = K.kl_divergence(X, W, H)
    assert K.kl_divergence(X, plain, H) > start
    W_new, H_new, _ = K.dn_sweep(X, W, H)
    assert K.kl_divergence(X, W_new, H_new) < start


def test_dn_pass_returns_the_model_the_next_pass_would_compute():
    # The y a pass returns is the new factors' model as computed, zeros
    # included (a floor there would change the next objective: an entry with
    # x > 0 where the model vanished counts x log(x / tiny)).  Column 0 of X
    # is explained by a document the first pass zeroes.
    X = sp.csr_matrix(np.array([[1.0, 0], [0, 0], [0, 1.3e5], [0, 0], [0, 1.0]]))
    W, H = np.array([[9e3], [9e3], [3e2], [9e3], [3e-3]]), np.array([[9e3, 3e2]])
    y = None
    for _ in range(3):
        W_old, H_old = W, H
        W, H, sums, y_given = K.dn_pass(X, W, H, y)
        _, sums_fresh = model_and_ratio_log_sums(X, W_old, H_old)
        assert_allclose(sums, sums_fresh, rtol=1e-12)
        y = y_given
        assert_allclose(y, K.product_at_nonzeros(X, W, H), rtol=1e-12, atol=0)
    assert (y == 0).any()


@pytest.mark.parametrize("share", [0.02, 0.5, 1.0])
def test_dn_model_recomputed_where_rows_fell_back_is_the_model(share):
    # Below newton._FULL_PRODUCT_SHARE the entries are recomputed one by one,
    # from it on by one sampled product over all entries: either way the
    # model of the new factors there, and the other entries untouched.
    from sklearn_topicfac.kernels import newton

    X, W, H = _problem(n=60, m=40, k=5, density=0.4)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    at = np.random.default_rng(1).random(X.nnz) < share
    y = np.full(X.nnz, -1.0)
    newton._model_at(y, at, X, rows, W, np.ascontiguousarray(H.T))
    dense = (W @ H)[rows, X.indices]
    assert_allclose(y[at], dense[at], rtol=1e-13)
    assert (y[~at] == -1.0).all()
    assert (share >= newton._FULL_PRODUCT_SHARE) == (
        np.count_nonzero(at) >= newton._FULL_PRODUCT_SHARE * X.nnz
    )


def test_squarem_point_is_twice_for_a_unit_step_and_stays_non_negative():
    start = (np.array([[1.0, 2.0]]),)
    once = (np.array([[0.5, 2.5]]),)
    twice = (np.array([[0.25, 2.75]]),)
    point, alpha = K.squarem_point(start, once, twice)
    # r = (-0.5, 0.5), v = (0.25, -0.25): alpha = -2, the point
    # start + 4 r + 4 v = (0, 3) -- the entry at 0 is lifted to 1e-3 * twice.
    assert alpha == -2.0
    assert_allclose(point[0], [[0.25e-3, 3.0]])
    line = (np.array([[1.0]]),), (np.array([[2.0]]),), (np.array([[3.0]]),)
    point, alpha = K.squarem_point(*line)
    assert alpha == -1.0 and point[0][0, 0] == 3.0
