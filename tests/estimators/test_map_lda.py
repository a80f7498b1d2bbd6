"""LDA's MAP estimate by EM (``LDAVI(inference="map")``, the default): the
sweep against the equations, an objective that never rises, its fixed
points, and the collapsed schedule it shares with CVB0."""

import numpy as np
import pytest
import scipy.sparse as sp
from _corpora import collapsed_state, lda_counts
from numpy.testing import assert_allclose

from sklearn_topicfac import LDAVI
from sklearn_topicfac.kernels import cvb0_sweep, map_sweep, normalize_rows
from sklearn_topicfac.out_of_core import Blocks

_state = collapsed_state


def _map_objective(X, W, H, alpha, eta):
    """Minus the log posterior (priors alpha + 1, eta + 1), densely."""
    theta, beta = normalize_rows(W)[0], normalize_rows(H)[0]
    Xd = X.toarray()
    stored = Xd > 0
    log_lik = np.sum(Xd[stored] * np.log((theta @ beta)[stored]))
    return -(log_lik + np.sum(np.log(theta) @ alpha) + eta * np.sum(np.log(beta)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sweep_matches_the_equations(backend, dtype):
    X = lda_counts(n=12, m=15, k=3, max_length=20).astype(dtype)
    # A document without words and a stored zero: both add nothing.
    X = sp.vstack([X, sp.csr_matrix((1, 15))], format="csr")
    X.data[0] = 0.0
    D, T = (a.astype(dtype) for a in _state(X, 3))
    alpha, eta = np.array([0.2, 0.3, 0.5]), 0.1
    new_doc, new_topic, log_lik = map_sweep(X, D, T, alpha, eta)
    assert new_doc.dtype == dtype and new_topic.dtype == dtype
    Xd = X.toarray().astype(np.float64)
    word = (T.T[None, :, :] + eta) / (T.sum(axis=1) + 15 * eta)
    g = (D[:, None, :] + alpha) * word
    g /= g.sum(axis=2, keepdims=True)
    counts = Xd[:, :, None] * g
    rtol = 1e-10 if dtype == np.float64 else 1e-5
    assert_allclose(new_doc, counts.sum(axis=1), rtol=rtol, atol=rtol)
    assert_allclose(new_topic, counts.sum(axis=0).T, rtol=rtol, atol=rtol)
    theta, beta = normalize_rows(D + alpha)[0], normalize_rows(T + eta)[0]
    stored = Xd > 0
    expected = np.sum(Xd[stored] * np.log((theta @ beta)[stored]))
    assert_allclose(log_lik, expected, rtol=rtol)
    # CVB0's sweep without the exclusion is the same update.
    same = cvb0_sweep(X, D, T, alpha, eta, n_inner=0)
    for a, b in zip(same, (new_doc, new_topic, log_lik), strict=True):
        assert_allclose(a, b, rtol=rtol, atol=rtol)


def test_map_is_the_default_and_its_objective_never_rises(backend):
    from sklearn_topicfac import fit_callback

    assert LDAVI().inference == "auto"
    X = lda_counts(k=4)
    runs = {}
    with fit_callback(lambda i: runs.setdefault(i.run, []).append(i.objective)):
        est = LDAVI(4, max_iter=40, tol=0, random_state=0).fit(X)
    assert est.inference_ == "map"
    # Three starts of max_iter // 3 sweeps, then the kept one runs on to
    # 3 * max_iter sweeps in all: each run's objective, minus the log
    # posterior, falls at every sweep (EM ascends the posterior).
    assert sorted(runs) == ["fit", "start 1", "start 2", "start 3"]
    assert [len(runs[f"start {i}"]) for i in (1, 2, 3)] == [13, 13, 13]
    assert len(runs["fit"]) == 120 - 13 and est.n_iter_ == 120
    for run, history in runs.items():
        rises = np.diff(history)
        assert np.all(rises <= 1e-12 * abs(history[0])), (run, rises.max())
    # loss_ is that objective at the fitted state, and bound() its negative
    # at the documents' fold-in.
    # The model's alpha is the documents' pseudo-count, a tenth of the prior.
    model = est._build_model()
    alpha, eta = model.doc_topic_prior, est.topic_word_prior_
    assert_allclose(alpha, est.doc_topic_prior_ / 10)
    assert est.loss_ == pytest.approx(
        _map_objective(X, est.embedding_, est.components_, alpha, eta), rel=1e-10
    )
    folded = model.fold_in(X, est.components_)
    assert est.bound(X) == pytest.approx(
        -_map_objective(X, folded, est.components_, alpha, eta), rel=1e-10
    )


def test_converged_sweeps_are_a_fixed_point_of_map_em():
    # At a fixed point the shares the counts give reproduce the counts, and
    # theta, beta are the posterior's mode: no feasible direction of ascent
    # (the gradient along the simplex is zero at the positive entries).
    X = lda_counts(n=20, m=25, k=3, max_length=30)
    D, T = _state(X, 3)
    alpha, eta = np.array([0.3, 0.3, 0.3]), 0.2
    for _ in range(5000):
        D_new, T_new, _ = map_sweep(X, D, T, alpha, eta)
        change = np.abs(D_new - D).max()
        D, T = D_new, T_new
        if change < 1e-13:
            break
    assert change < 1e-13
    theta, beta = normalize_rows(D + alpha)[0], normalize_rows(T + eta)[0]
    Xd = X.toarray()
    y = theta @ beta
    ratio = np.where(Xd > 0, Xd / y, 0.0)
    # d/d theta_dk of log posterior: (R beta^T)_dk + alpha_k / theta_dk, equal
    # over k to a Lagrange multiplier per document; likewise per topic.
    grad_theta = ratio @ beta.T + alpha / theta
    grad_beta = theta.T @ ratio + eta / beta
    for grad in (grad_theta, grad_beta):
        multiplier = np.broadcast_to(grad.mean(axis=1, keepdims=True), grad.shape)
        assert_allclose(grad, multiplier, rtol=1e-8)


def test_blocks_fit_equals_in_memory_fit():
    X = lda_counts(n=120, m=40, k=3)
    kw = dict(max_iter=10, tol=0, random_state=0)
    memory = LDAVI(3, **kw).fit(X)
    blocks = LDAVI(3, **kw).fit(Blocks(X, block_size=50))
    assert memory.inference_ == blocks.inference_ == "map"
    assert_allclose(blocks.components_, memory.components_, rtol=1e-8)
    assert_allclose(blocks.embedding_, memory.embedding_, rtol=1e-8, atol=1e-12)
    assert blocks.loss_ == pytest.approx(memory.loss_, rel=1e-10)


def test_map_and_cvb0_give_close_topics():
    # Asuncion et al. (2009): without the exclusion the update is close to
    # CVB0's; on a planted corpus the two recover the same topics.
    from sklearn_topicfac.inspection import align_topics

    X = lda_counts(n=300, m=80, k=4, seed=3)
    kw = dict(max_iter=100, random_state=0)
    map_fit = LDAVI(4, inference="map", **kw).fit(X)
    cvb0_fit = LDAVI(4, inference="cvb0", **kw).fit(X)
    order = align_topics(map_fit, cvb0_fit)
    a = normalize_rows(map_fit.components_)[0]
    b = normalize_rows(cvb0_fit.components_[order])[0]
    assert np.abs(a - b).sum(axis=1).max() < 0.1


def test_bad_combinations_are_clear_errors():
    X = lda_counts(k=3)
    with pytest.raises(ValueError, match="inference='map' needs a topic-word prior"):
        LDAVI(3, inference="map", topic_word_prior=None).fit(X)
    with pytest.raises(ValueError, match="inference='map' runs batch sweeps"):
        LDAVI(3, inference="map", learning_method="online").fit(X)


def _plain_em_fold_in(X, B, D, alpha, n_steps):
    for _ in range(n_steps):
        theta = D + alpha
        y = theta @ B
        Xd = X.toarray()
        D = theta * ((np.where(Xd > 0, Xd / y, 0.0)) @ B.T)
    return D


def test_accelerated_fold_in_reaches_em_fixed_point_per_document():
    from sklearn_topicfac.kernels import em_fold_in

    X = lda_counts(n=40, m=30, k=3, seed=5)
    B = normalize_rows(np.random.default_rng(1).gamma(0.3, 1.0, (3, 30)))[0]
    alpha = np.full(3, 0.02)
    n_d = np.asarray(X.sum(axis=1)).ravel()
    start = np.repeat(n_d[:, None] / 3, 3, axis=1)
    fast = em_fold_in(X, B, start, alpha, max_iter=3000, tol=1e-12)
    slow = _plain_em_fold_in(X, B, start, alpha, 20000)
    assert_allclose(fast, slow, rtol=1e-6, atol=1e-8)
    # Rows sum to the documents' lengths, and a document's result does not
    # depend on the others given with it.
    assert_allclose(fast.sum(axis=1), n_d)
    alone = em_fold_in(X[7:8], B, start[7:8], alpha, max_iter=3000, tol=1e-12)
    assert_allclose(alone[0], fast[7], rtol=1e-12)
    # It is faster than plain EM at the fold-in's tolerance: fewer EM steps.
    steps = []
    from sklearn_topicfac.kernels import fold_in as module

    original = module.times_ratio_product

    def counted(R, W, Ht):
        steps.append(W.shape[0])
        return original(R, W, Ht)

    module.times_ratio_product = counted
    try:
        em_fold_in(X, B, start, alpha, max_iter=1000, tol=1e-3)
    finally:
        module.times_ratio_product = original
    plain, n_plain, done = start.copy(), 0, False
    while not done and n_plain < 1000:
        new = _plain_em_fold_in(X, B, plain, alpha, 1)
        done = np.abs(new - plain).mean(axis=1).max() < 1e-3
        plain, n_plain = new, n_plain + 1
    assert len(steps) < n_plain


def test_a_rise_by_float32_rounding_is_said():
    # One entry of 7e13 in float32, one topic: the objective is 0 in exact
    # arithmetic, and the sweep's sums cancel to rounding noise of the
    # terms' size; the fit ends at 0, above that noise, and says so.
    import warnings

    from sklearn_topicfac.engine.loop import ROUNDING

    X = sp.csr_matrix(np.array([[0.0], [7e13], [0.0], [0.0]], dtype=np.float32))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = LDAVI(n_components=1, max_iter=20, random_state=477).fit(X)
    h = est.loss_history_
    assert (np.diff(h) > ROUNDING * abs(h[0])).any()
    messages = [str(w.message) for w in caught if w.category is RuntimeWarning]
    assert any("LDAVI (MAP): the objective rose" in m for m in messages), messages


def test_partial_fit_runs_and_folds_in_by_vb_whatever_auto_means_for_fit():
    # "auto" is MAP for a batch fit; partial_fit learns by online VB, so its
    # transform must fold in by VB too (it used to fold VB's topics in by
    # MAP), and after a batch MAP fit, a partial_fit turns the model to VB.
    X = lda_counts(n=80, m=30, seed=3)
    online = LDAVI(3, random_state=0).partial_fit(X)
    vb = LDAVI(3, inference="vb", random_state=0).partial_fit(X)
    assert online.inference_ == vb.inference_ == "vb"
    assert np.array_equal(online.components_, vb.components_)
    assert np.array_equal(online.transform(X), vb.transform(X))
    fitted = LDAVI(3, random_state=0, max_iter=10).fit(X)
    assert fitted.inference_ == "map"
    assert fitted.partial_fit(X).inference_ == "vb"


@pytest.mark.parametrize("inference", ["map", "cvb0"])
def test_partial_fit_refuses_a_batch_inference(inference):
    X = lda_counts(n=40, m=20, seed=4)
    with pytest.raises(ValueError, match="partial_fit runs online variational"):
        LDAVI(3, inference=inference).partial_fit(X)
