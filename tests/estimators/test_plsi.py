"""PLSI: EM against a textbook reference, tempered EM, fold-in, paper 001's example."""

import numpy as np
import pytest
from _corpora import planted_counts as _planted
from _references import plsa_em, tempered_posterior
from _worked_examples import (
    PAPER_NMF_C,
    PAPER_NMF_H,
    PAPER_NMF_S,
    fit_worked_example,
)
from numpy.testing import assert_allclose

from sklearn_topicfac import KLNMF, PLSI, NormalizedNMF
from sklearn_topicfac.kernels import normalize_columns, normalize_rows


@pytest.mark.parametrize("beta", [1.0, 0.8])
def test_plsi_iterates_equal_hofmanns_em(backend, beta):
    rng = np.random.default_rng(0)
    X = rng.poisson(2.0, size=(9, 7)).astype(float)
    k = 3
    p_z = rng.dirichlet(np.ones(k))
    p_d_z = rng.dirichlet(np.ones(9), size=k).T
    p_w_z = rng.dirichlet(np.ones(7), size=k)
    W0 = X.sum() * p_d_z * p_z
    model = PLSI(
        k, beta=beta, solver="em", init="custom", max_iter=6, tol=0, split_merge=0
    ).fit(X, W=W0, H=p_w_z)
    ref_z, ref_dz, ref_wz = plsa_em(X, p_z, p_d_z, p_w_z, beta, 6)
    assert_allclose(model.p_z_, ref_z, rtol=1e-10)
    assert_allclose(model.p_d_given_z_, ref_dz, rtol=1e-10)
    assert_allclose(model.components_, ref_wz, rtol=1e-10)


@pytest.mark.parametrize("solver", ["em", "squarem", "cd", "dn"])
@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_em_objective_never_increases(sparse, dtype, solver):
    X = _planted(sparse=sparse, dtype=dtype)
    model = PLSI(
        5,
        solver=solver,
        init="random",
        random_state=0,
        max_iter=100,
        tol=0,
        split_merge=0,
    ).fit(X)
    history = model.loss_history_
    # Rounding of a float64 sum of terms of total size ~ sum(X).
    slack = 20 * np.finfo(dtype).eps * float(X.sum())
    assert np.all(np.diff(history) <= slack)
    assert history[-1] < 0.5 * history[0]


def test_cd_runs_normalized_nmfs_sweeps_in_plsis_parametrization():
    # PLSI's factors are KL-NMF's rescaled (P(w|z) the normalized rows of
    # H, P(d|z) P(z) N the columns of W times their sums): the same model
    # W H and objective after every sweep, whichever parametrization.
    X = _planted()
    params = dict(init="random", random_state=0, max_iter=15, tol=0, split_merge=0)
    plsi = PLSI(4, solver="cd", **params).fit(X)
    nmf = NormalizedNMF(4, solver="cd", **params).fit(X)
    assert_allclose(plsi.loss_history_, nmf.loss_history_, rtol=1e-10)
    assert_allclose(plsi.components_, nmf.components_, rtol=1e-8, atol=1e-12)
    assert_allclose(plsi.components_.sum(axis=1), 1.0)
    assert_allclose(plsi.p_d_given_z_.sum(axis=0), 1.0)
    assert_allclose(plsi.p_z_.sum(), 1.0)
    # Sweeps, not EM steps: 15 of them go below where 15 EM steps stop.
    em = PLSI(4, solver="em", **params).fit(X)
    assert plsi.loss_ < em.loss_


def test_probabilities_are_normalized():
    X = _planted()
    model = PLSI(4, random_state=0).fit(X)
    assert_allclose(model.components_.sum(axis=1), 1.0)
    assert_allclose(model.p_d_given_z_.sum(axis=0), 1.0)
    assert_allclose(model.p_z_.sum(), 1.0)
    assert_allclose(model.embedding_.sum(axis=1), 1.0)
    theta = model.transform(X)
    assert_allclose(theta.sum(axis=1), 1.0)
    assert_allclose(model.inverse_transform(theta).sum(axis=1), 1.0)


def test_fold_in_is_em_on_topic_proportions(backend):
    # theta <- theta * (R @ C.T) / N_d with C fixed, from the uniform start;
    # with transform_tol=0 every document runs exactly max_iter sweeps.
    X = _planted(n=20)
    model = PLSI(4, random_state=0, max_iter=50).fit(X)
    model.set_params(max_iter=7, transform_tol=0)
    C = model.components_
    Xd = X.toarray()
    n_d = Xd.sum(axis=1, keepdims=True)
    theta = np.full((X.shape[0], 4), 0.25)
    for _ in range(7):
        R = np.divide(Xd, theta @ C, out=np.zeros_like(Xd), where=Xd > 0)
        theta = theta * (R @ C.T) / n_d
    assert_allclose(model.transform(X), theta, rtol=1e-10)


def _entropy(p):
    return -np.sum(p * np.log(np.maximum(p, 1e-300)), axis=-1).mean()


@pytest.mark.parametrize("beta", [0.5, 0.8])
def test_tempered_em_smooths_the_topic_proportions(backend, beta):
    # Hofmann's tempered E-step: P(z|d,w) proportional to
    # [P(z) P(d|z) P(w|z)] ** beta, computed densely from the same state
    # (tests/_references.tempered_posterior).  One step of PLSI(beta) gives
    # the topic proportions P(z|d) = sum_w n(d,w) P_beta(z|d,w) / N_d and the
    # topics of that posterior; it is flatter than plain EM's.
    rng = np.random.default_rng(1)
    X = rng.poisson(2.0, size=(9, 7)).astype(float)
    p_z = rng.dirichlet(np.ones(3))
    p_d_z = rng.dirichlet(np.ones(9), size=3).T
    p_w_z = rng.dirichlet(np.ones(7), size=3)
    W0 = X.sum() * p_d_z * p_z
    posterior = {b: tempered_posterior(p_z, p_d_z, p_w_z, b) for b in (1.0, beta)}
    expected = X[:, :, None] * posterior[beta]
    model = PLSI(3, beta=beta, init="custom", max_iter=1, tol=0, split_merge=0)
    model.fit(X, W=W0, H=p_w_z)
    theta = expected.sum(axis=1) / X.sum(axis=1, keepdims=True)
    assert_allclose(model.embedding_, theta, rtol=1e-10)
    topics = expected.sum(axis=0).T
    assert_allclose(
        model.components_, topics / topics.sum(1, keepdims=True), rtol=1e-10
    )
    seen = X > 0
    assert _entropy(posterior[beta][seen]) > _entropy(posterior[1.0][seen]) + 0.01


def test_tempered_em_fits_spread_documents_over_more_topics():
    X = _planted()
    plain = PLSI(
        4, solver="em", random_state=0, max_iter=100, tol=0, split_merge=0
    ).fit(X)
    tempered = PLSI(
        4, beta=0.7, random_state=0, max_iter=100, tol=0, split_merge=0
    ).fit(X)
    # The tempered posterior is flatter, so training documents are spread
    # over more topics; its fit (in the KL sense) is worse.
    assert _entropy(tempered.embedding_) > _entropy(plain.embedding_)
    assert tempered.loss_ > plain.loss_
    assert np.all(np.isfinite(tempered.components_))


def test_worked_example_nmf_and_plsi_reach_different_factors_same_value():
    nmf = fit_worked_example(KLNMF)
    plsi = fit_worked_example(PLSI)
    # Same objective value.
    assert abs(nmf.loss_ - plsi.loss_) <= 1e-6 * nmf.loss_
    # Different factors: compared in the same normalized form, they stay
    # apart (by ~4.5e-3, far above the 1e-12 scale of further iteration).
    nmf_C, nmf_s = normalize_rows(nmf.components_)
    nmf_D, _ = normalize_columns(nmf.embedding_ * nmf_s)
    assert np.abs(nmf_C - plsi.components_).max() > 1e-3
    assert np.abs(nmf_D - plsi.p_d_given_z_).max() > 1e-3
    # ...yet the same model W H: the value is unique, the split is not.
    plsi_WH = (plsi.p_d_given_z_ * plsi.p_z_) @ plsi.components_
    assert_allclose(nmf.embedding_ @ nmf.components_, plsi_WH, atol=1e-12)
    # Same clustering of the six documents: {1, 2, 3} versus {4, 5, 6}.
    for labels in (nmf.embedding_.argmax(axis=1), plsi.embedding_.argmax(axis=1)):
        assert len(set(labels[:3])) == 1 and len(set(labels[3:])) == 1
        assert labels[0] != labels[3]


def test_worked_example_nmf_matches_the_printed_solution():
    # The paper prints two decimals of factors computed from an X printed
    # with three, so agreement is expected to about 0.005 plus the effect of
    # X's rounding; we see at most 0.0055.
    nmf = fit_worked_example(KLNMF)
    C, s = normalize_rows(nmf.components_)
    D, s_col = normalize_columns(nmf.embedding_ * s)
    assert_allclose(C.T, PAPER_NMF_C, atol=0.006)
    assert_allclose(s_col / s_col.sum(), PAPER_NMF_S, atol=0.006)
    assert_allclose(D, PAPER_NMF_H, atol=0.006)
