"""Paper 001 (Ding, Li & Peng), eq. 7-8: the KL objective and the chi-square
statistic, and the confidence of a factorization."""

import numpy as np
import pytest
import scipy.sparse as sp
from _worked_examples import PAPER_X, fit_worked_example
from numpy.testing import assert_allclose

from sklearn_topicfac import KLNMF
from sklearn_topicfac.kernels import kl_divergence
from sklearn_topicfac.metrics import chi_square_confidence, chi_square_statistic


def _dense_chi2(X, M):
    return float(np.sum((X - M) ** 2 / M))


def _random_factorization(seed=0, n=12, m=9, k=3, density=0.4):
    rng = np.random.default_rng(seed)
    W, H = rng.gamma(1.0, size=(n, k)), rng.gamma(1.0, size=(k, m))
    X = rng.poisson(3 * W @ H) * (rng.random((n, m)) < density)
    return X.astype(float), W, H


@pytest.mark.parametrize("container", [np.asarray, sp.csr_matrix, sp.csc_matrix])
def test_statistic_is_pearsons_over_every_cell(container):
    X, W, H = _random_factorization()
    assert (X == 0).mean() > 0.5  # the zero cells matter
    Xc = container(X)
    before = Xc.copy()
    assert_allclose(chi_square_statistic(Xc, W, H), _dense_chi2(X, W @ H), rtol=1e-12)
    if sp.issparse(Xc):
        assert_allclose(Xc.toarray(), before.toarray())
    else:
        assert_allclose(Xc, before)
    # float32 input gives the same value to float32 precision.
    value32 = chi_square_statistic(
        container(X.astype(np.float32)), W.astype(np.float32), H.astype(np.float32)
    )
    assert_allclose(value32, _dense_chi2(X, W @ H), rtol=1e-5)


def test_statistic_never_densifies_sparse_input():
    # 10^6 x 10^6 cells (8 TB dense); a handful of stored entries.
    n = m = 10**6
    rng = np.random.default_rng(0)
    rows, cols = rng.integers(0, n, 50), rng.integers(0, m, 50)
    X = sp.csr_matrix((np.ones(50), (rows, cols)), shape=(n, m))
    W, H = np.full((n, 1), 1e-3), np.full((1, m), 1e-3)
    X.sum_duplicates()
    nnz = X.nnz
    stored = float(np.sum((X.data - 1e-6) ** 2 / 1e-6))
    expected = stored + (n * m - nnz) * 1e-6
    assert_allclose(chi_square_statistic(X, W, H), expected, rtol=1e-9)


def test_infinite_where_the_model_is_zero_and_the_data_not():
    X = np.array([[1.0, 0.0], [0.0, 2.0]])
    W, H = np.array([[1.0], [0.0]]), np.array([[1.0, 1.0]])
    assert chi_square_statistic(X, W, H) == np.inf


def test_papers_worked_example_J_is_half_the_chi_square():
    # Paper 001 prints J ~ chi^2 "at first order"; the expansion (7) gives
    # J = chi^2 / 2 + O(delta^3): the factor one half is the paper's omission.
    nmf = fit_worked_example(KLNMF)
    M = nmf.embedding_ @ nmf.components_  # the fitted model
    data = PAPER_X.T
    J = nmf.loss_
    pearson = chi_square_statistic(data, nmf.embedding_, nmf.components_)
    neyman = float(np.sum((M - data) ** 2 / data))  # eq. (8): divided by F
    assert_allclose(J, 4.745e-3, rtol=1e-3)
    assert_allclose(pearson, 9.459e-3, rtol=1e-3)
    assert_allclose(neyman, 9.727e-3, rtol=1e-3)
    for chi2 in (pearson, neyman):
        assert abs(J / chi2 - 0.5) < 0.02  # one half, not one
        assert abs(J / chi2 - 1.0) > 0.4


@pytest.mark.parametrize("sparse", [False, True])
def test_first_order_relation(sparse):
    # Models M = X + t D approaching X: 2 J / chi^2 -> 1, the gap linear in t
    # (the third-order term of eq. 7 over the second).
    rng = np.random.default_rng(0)
    W, H = rng.gamma(2.0, size=(30, 2)), rng.gamma(2.0, size=(2, 20))
    X = W @ H
    # One-signed perturbations: with random signs the third-order terms of
    # the expansion cancel on average and the gap would shrink like t^2.
    D = np.abs(rng.standard_normal(X.shape)) * X
    gaps = []
    for t in (1e-1, 1e-2, 1e-3):
        M = X + t * D
        assert (M > 0).all()
        Xin = sp.csr_matrix(X) if sparse else X
        # M as a factorization: W' = M, H' = identity.
        chi2 = chi_square_statistic(Xin, M, np.eye(X.shape[1]))
        J = kl_divergence(sp.csr_matrix(X), M, np.eye(X.shape[1]))
        assert_allclose(chi2, _dense_chi2(X, M), rtol=1e-10)
        gaps.append(abs(2 * J / chi2 - 1))
    assert gaps[0] < 0.05
    # Each tenfold step towards X shrinks the relative gap about tenfold.
    assert 5 < gaps[0] / gaps[1] < 20 and 5 < gaps[1] / gaps[2] < 20


def _rank_one_fit(X):
    """The maximum-likelihood rank-one model: the independence table."""
    W = X.sum(axis=1, keepdims=True) / X.sum()
    return W, X.sum(axis=0, keepdims=True)


def test_klnmf_rank_one_fit_is_the_independence_table():
    rng = np.random.default_rng(1)
    X = rng.poisson(np.outer([20, 30, 40, 50], [1, 2, 3, 2, 1])).astype(float)
    model = KLNMF(n_components=1, max_iter=200, tol=0, random_state=0)
    W = model.fit_transform(X)
    W0, H0 = _rank_one_fit(X)
    assert_allclose(W @ model.components_, W0 @ H0, rtol=1e-8)


def test_confidence_is_uniform_under_the_model_and_small_off_it():
    # Counts drawn from a rank-one (independence) model with large expected
    # counts: the p-values are close to uniform, so about 5 % fall below
    # 0.05; the degrees of freedom are the classical (n - 1)(m - 1).
    rng = np.random.default_rng(0)
    mean = np.outer([20, 30, 40, 50, 60], [1, 2, 3, 2, 1, 2])
    p_values = []
    for _ in range(400):
        X = rng.poisson(mean).astype(float)
        p, dof = chi_square_confidence(X, *_rank_one_fit(X))
        assert dof == 4 * 5
        p_values.append(p)
    p_values = np.array(p_values)
    assert 0.02 < np.mean(p_values < 0.05) < 0.09
    assert 0.4 < np.mean(p_values < 0.5) < 0.6
    # Rank-two counts fitted by rank one: the confidence is tiny.
    X = rng.poisson(
        np.outer([20, 30, 40, 50, 60], [3, 2, 1, 0.5, 0.2, 0.1])
        + np.outer([60, 50, 40, 30, 20], [0.1, 0.2, 0.5, 1, 2, 3])
    ).astype(float)
    p, _ = chi_square_confidence(X, *_rank_one_fit(X))
    assert p < 1e-6


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_confidence_of_rank_two_fits_is_uniform_under_the_model():
    # KLNMF rank-two fits of counts drawn from a rank-two model, 6 x 7 cells:
    # (6 - 2)(7 - 2) = 20 degrees of freedom make the p-values about uniform.
    rng = np.random.default_rng(0)
    mean = np.outer([20, 30, 40, 50, 60, 30], [3, 2, 1, 0.5, 0.2, 0.1, 1]) + np.outer(
        [60, 50, 40, 30, 20, 30], [0.1, 0.2, 0.5, 1, 2, 3, 1]
    )
    p_values = []
    for _ in range(100):
        X = rng.poisson(mean).astype(float)
        model = KLNMF(2, max_iter=1000, tol=1e-10, transform_tol=1e-10, random_state=0)
        W = model.fit_transform(X)
        p, dof = chi_square_confidence(X, W, model.components_)
        assert dof == 20
        p_values.append(p)
    p_values = np.array(p_values)
    assert np.mean(p_values < 0.05) < 0.12
    assert 0.4 < np.mean(p_values < 0.5) < 0.65


@pytest.mark.parametrize(
    "W, H, match",
    [
        (np.ones((3, 2)), np.ones((2, 4)), "does not match"),
        (np.ones((2, 2)), np.ones((2, 3)), "does not match"),
        (-np.ones((2, 1)), np.ones((1, 4)), "negative"),
    ],
)
def test_bad_input_is_refused_by_name(W, H, match):
    X = np.ones((2, 4))
    with pytest.raises(ValueError, match=match):
        chi_square_statistic(X, W, H)


def test_no_degree_of_freedom_is_refused():
    X = np.ones((3, 4))
    with pytest.raises(ValueError, match="no degree of freedom"):
        chi_square_confidence(X, np.ones((3, 3)), np.ones((3, 4)))
