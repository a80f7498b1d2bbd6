"""KLNMF and NormalizedNMF: sklearn oracle, monotone objective, scale-equivariance."""

import numpy as np
import pytest
from _corpora import planted_counts as _planted
from _corpora import random_start as _start
from numpy.testing import assert_allclose
from sklearn.decomposition import NMF

from sklearn_topicfac import KLNMF, NormalizedNMF
from sklearn_topicfac.kernels import kl_divergence


@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("n_iter", [1, 2, 10, 50])
def test_klnmf_reproduces_sklearn_mu_iterates(backend, sparse, n_iter):
    X = _planted(sparse=sparse)
    W0, H0 = _start(X, 4)
    ref = NMF(
        4,
        init="custom",
        solver="mu",
        beta_loss="kullback-leibler",
        max_iter=n_iter,
        tol=0,
    )
    W_ref = ref.fit_transform(X, W=W0.copy(), H=H0.copy())
    ours = KLNMF(
        4, solver="mu", init="custom", max_iter=n_iter, tol=0, split_merge=0
    ).fit(X, W=W0, H=H0)
    assert ours.n_iter_ == n_iter
    # scikit-learn sets entries of H below float64 eps to exactly zero
    # (its stability clamp for beta_loss <= 1); we keep them, so entries
    # smaller than eps may differ by less than eps.
    eps = np.finfo(np.float64).eps
    assert_allclose(ours.components_, ref.components_, rtol=1e-6, atol=eps)
    assert_allclose(ours.embedding_, W_ref, rtol=1e-6, atol=eps)
    # scikit-learn reports sqrt(2 * D(X || WH)).
    assert_allclose(ours.loss_, ref.reconstruction_err_**2 / 2, rtol=1e-6)


@pytest.mark.parametrize("solver", ["mu", "cd", "dn"])
@pytest.mark.parametrize("estimator", [KLNMF, NormalizedNMF])
@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_objective_never_increases(backend, estimator, sparse, dtype, solver):
    X = _planted(sparse=sparse, dtype=dtype)
    model = estimator(
        5, solver=solver, init="random", random_state=0, max_iter=100, tol=0
    ).fit(X)
    history = model.loss_history_
    assert history.shape == (101,)
    # Each entry is a float64 sum of float32/float64 terms of total size
    # ~ sum(X); rounding can show as an increase of a few eps * sum(X).
    slack = 20 * np.finfo(dtype).eps * float(X.sum())
    assert np.all(np.diff(history) <= slack)
    assert history[-1] < 0.5 * history[0]
    assert_allclose(
        history[-1], kl_divergence(X, model.embedding_, model.components_), rtol=1e-4
    )


def test_fitted_model_matches_column_sums_of_x():
    # The last half-step of an iteration updates H, after which the column
    # sums of W H equal those of X (paper 001, Prop. 3).
    X = _planted()
    model = KLNMF(4, solver="mu", random_state=0, max_iter=7, tol=0, split_merge=0)
    model.fit(X)
    assert_allclose(
        (model.embedding_ @ model.components_).sum(axis=0),
        np.asarray(X.sum(axis=0)).ravel(),
        rtol=1e-10,
    )


@pytest.mark.parametrize(
    "dtype, solver",
    [
        (np.float32, "mu"),
        (np.float64, "mu"),
        # Not float32 with "cd": its projections on w >= 0 set entries to
        # exactly 0, and rounding that differs with the scale decides which.
        (np.float64, "cd"),
        (np.float64, "dn"),
    ],
)
def test_normalized_nmf_equals_klnmf_at_every_iteration(backend, dtype, solver):
    # Zhang, Ding & Tang's open problem (10): multiplicative KL updates are
    # scale-equivariant, so renormalizing after every half-step leaves the
    # product D diag(s) C equal to KLNMF's W H at every iteration.  So are
    # the coordinate Newton steps and their multiplicative fallback (a
    # coordinate's scale cancels in w - f'(w) / f''(w)).
    X = _planted(dtype=dtype)
    W0, H0 = _start(X, 4)
    rtol = 1e-4 if dtype == np.float32 else 1e-10
    fixed = dict(solver=solver, init="custom", tol=0, split_merge=0)
    for n_iter in range(1, 31):
        plain = KLNMF(4, max_iter=n_iter, **fixed).fit(X, W=W0, H=H0)
        normed = NormalizedNMF(4, max_iter=n_iter, **fixed).fit(X, W=W0, H=H0)
        D, s = normed.p_d_given_z_, normed.p_z_ * X.sum()
        assert_allclose(
            (D * s) @ normed.components_,
            plain.embedding_ @ plain.components_,
            rtol=rtol,
        )
        assert_allclose(normed.loss_history_, plain.loss_history_, rtol=rtol)


def test_normalized_nmf_factors_are_probabilities():
    X = _planted()
    model = NormalizedNMF(4, random_state=0).fit(X)
    assert_allclose(model.components_.sum(axis=1), 1.0)
    assert_allclose(model.p_d_given_z_.sum(axis=0), 1.0)
    assert_allclose(model.p_z_.sum(), 1.0)
    # After the last half-step, sum(W H) equals sum(X), so s = N P(z).
    assert_allclose(model.embedding_.sum(axis=0), model.p_z_ * X.sum(), rtol=1e-10)
    assert np.all(model.p_z_ > 0)


def test_transform_is_the_convex_fold_in_of_the_fitted_topics(backend):
    # With the topics fixed, the W subproblem is convex: at a converged fit
    # the training factor is its minimizer, and the fold-in reaches it.
    X = _planted(n=60, m=50, k=3, seed=3)
    model = KLNMF(3, random_state=0, max_iter=5000, tol=1e-12, transform_tol=1e-12)
    model.fit(X)
    assert model.n_iter_ < 5000
    W = model.transform(X)
    assert_allclose(W, model.embedding_, rtol=1e-5, atol=1e-8 * X.max())
    assert kl_divergence(X, W, model.components_) <= model.loss_ * (1 + 1e-9)


def test_inverse_transform_reconstructs_the_model():
    X = _planted()
    model = KLNMF(4, random_state=0).fit(X)
    W = model.transform(X)
    assert_allclose(model.inverse_transform(W), W @ model.components_)
    with pytest.raises(ValueError, match="inverse_transform expects shape"):
        model.inverse_transform(W[:, :2])


def test_more_topics_fit_better():
    X = _planted(k=5)
    losses = [
        KLNMF(k, random_state=0, tol=1e-6, max_iter=500).fit(X).loss_ for k in (1, 3, 5)
    ]
    assert losses[0] > losses[1] > losses[2]
