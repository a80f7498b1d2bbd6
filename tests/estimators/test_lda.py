"""LDAVI and GammaPoissonVI: scikit-learn oracles, monotone bound, priors, float32."""

import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _corpora import lda_counts
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import gammaln, psi
from sklearn.decomposition import LatentDirichletAllocation
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import gen_batches

from sklearn_topicfac import LDAVI as _LDAVI
from sklearn_topicfac import GammaPoissonVI
from sklearn_topicfac.engine import InMemoryRunner, Start, start_topics
from sklearn_topicfac.engine.fitting import COARSE
from sklearn_topicfac.engine.loop import stopped
from sklearn_topicfac.engine.moves import split_in_two
from sklearn_topicfac.engine.starts import nndsvda_start
from sklearn_topicfac.kernels import (
    dirichlet_kl,
    exp_dirichlet_expectation,
    lda_e_step,
    lda_expected_counts,
    normalize_rows,
)
from sklearn_topicfac.models import LDAModel
from sklearn_topicfac.models._moves import split_gain


def LDAVI(*args, **params):
    """LDAVI by the mean-field VB, scikit-learn's, which this file tests.

    The default, ``inference="auto"``, fits MAP by EM in batch learning
    (tests/estimators/test_map_lda.py; CVB0 in tests/estimators/
    test_cvb0.py); a test here that means another inference says so.
    """
    params.setdefault("inference", "vb")
    return _LDAVI(*args, **params)


K = 4


X = lda_counts(k=K)
N_DOCS = X.shape[0]


def _model(est):
    """The model a fitted LDAVI runs (its priors and E-step settings)."""
    return LDAModel(
        est.doc_topic_prior_,
        est.topic_word_prior_,
        est.mean_change_tol,
        est.max_doc_update_iter,
    )


def _with_topics(lam, **params):
    """A fitted LDAVI whose topics are then set to ``lam`` (an oracle's state)."""
    est = LDAVI(lam.shape[0], max_iter=1, tol=0, random_state=0, **params).fit(X)
    est.components_ = lam.copy()
    return est


def _sklearn_epochs(n_epochs, learning_method="batch", batch_size=40, seed=3):
    """The body of scikit-learn's fit loop, with LDAVI's E-step starts.

    scikit-learn starts every training E-step from a random draw; LDAVI
    only the first (on the random start topics), and the others from all
    ones -- scikit-learn's own start when its ``random_state_`` is None.
    """
    sk = LatentDirichletAllocation(
        K, learning_method=learning_method, batch_size=batch_size, random_state=seed
    )
    sk._init_latent_vars(X.shape[1])
    for _ in range(n_epochs):
        if learning_method == "online":
            for batch in gen_batches(N_DOCS, batch_size):
                sk._em_step(X[batch], total_samples=N_DOCS, batch_update=False)
                sk.random_state_ = None
        else:
            sk._em_step(X, total_samples=N_DOCS, batch_update=True)
            sk.random_state_ = None
    return sk


# ------------------------------------------------- oracle: scikit-learn's LDA
# scikit-learn evaluates the digamma function with a fast asymptotic series
# (AS 103) that differs from scipy.special.psi by up to ~2e-9 (observed
# 1.7e-9 near x = 6).  The E-step iterates a contraction whose rate can be
# close to one for slowly converging documents, which amplifies that by
# ~1 / (1 - rate): the E-step results agree to ~2e-6 relative (observed),
# inside the rtol=1e-5 asked for.  The bound is a sum of terms evaluated at
# those iterates, and agrees to ~1e-10 relative (observed); rtol=1e-7 leaves
# a wide margin while any formula error would show at 1e-3 or more.
@pytest.mark.parametrize(
    "doc_topic_prior, topic_word_prior", [(None, "auto"), (2.5, 3.0)]
)
def test_e_step_statistics_bound_and_m_step_match_sklearn(
    backend, doc_topic_prior, topic_word_prior
):
    sk = LatentDirichletAllocation(K, max_iter=3, random_state=0).fit(X)
    if doc_topic_prior is not None:
        # scikit-learn's parameter validation caps its priors at 1; its
        # E-step, bound and M-step take any positive value.
        sk.doc_topic_prior_ = doc_topic_prior
        sk.topic_word_prior_ = topic_word_prior
    lam = sk.components_
    ours = _with_topics(
        lam, doc_topic_prior=doc_topic_prior, topic_word_prior=topic_word_prior
    )
    # E-step from the deterministic start of scikit-learn's transform.
    gamma_sk, counts_sk = sk._e_step(X, cal_sstats=True, random_init=False)
    gamma, stats = _model(ours).doc_step(X, np.ones((N_DOCS, K)), lam, warm=False)
    assert_allclose(gamma, gamma_sk, rtol=1e-5)
    assert_allclose(stats["counts"], counts_sk, rtol=1e-5)
    assert_allclose(ours.transform(X), sk.transform(X), rtol=1e-5)
    # The evidence lower bound equals scikit-learn's score.
    assert_allclose(ours.bound(X), sk.score(X), rtol=1e-7)
    # One batch M-step from these statistics: scikit-learn's update.
    H, doc_scale = _model(ours).topic_step(lam, stats)
    assert doc_scale is None
    assert_allclose(H, sk.topic_word_prior_ + counts_sk, rtol=1e-5)


def test_batch_epoch_from_the_same_state_matches_sklearn(backend):
    # A whole epoch (E-step, then M-step) from a state that is not the start.
    sk = LatentDirichletAllocation(K, max_iter=2, random_state=0).fit(X)
    lam = sk.components_.copy()
    ours = _with_topics(lam)
    sk.random_state_ = None  # E-step from all ones, as LDAVI's
    sk._em_step(X, total_samples=N_DOCS, batch_update=True)
    model = _model(ours)
    _, stats = model.doc_step(X, np.ones((N_DOCS, K)), lam, warm=True)
    H, _ = model.topic_step(lam, stats)
    assert_allclose(H, sk.components_, rtol=1e-5)


@pytest.mark.parametrize("learning_method", ["batch", "online"])
def test_first_epoch_matches_sklearn_fit_loop(learning_method):
    # Same random_state and init="random": LDAVI draws the topics' start as
    # scikit-learn does, and its first epoch is scikit-learn's.  (Later
    # epochs differ where a document's previous gamma beats the all-ones
    # restart: see test_training_e_step_keeps_the_better_start.)
    sk = _sklearn_epochs(1, learning_method)
    ours = LDAVI(
        K,
        init="random",
        learning_method=learning_method,
        batch_size=40,
        max_iter=1,
        tol=0,
        split_merge=0,  # scikit-learn makes no split-merge moves
        random_state=3,
    ).fit(X)
    assert_allclose(ours.components_, sk.components_, rtol=1e-5)
    assert ours.n_batch_iter_ == sk.n_batch_iter_
    # After a single epoch the topics are barely apart, the fold-in
    # contracts slowly and amplifies the digamma difference the most
    # (observed 1.2e-5 relative on one entry): rtol=1e-4 here, 1e-5 in the
    # E-step test above with fitted topics.
    assert_allclose(ours.transform(X), sk.transform(X), rtol=1e-4)
    assert_allclose(ours.bound(X), sk.score(X), rtol=1e-7)
    # The fit's state is at least as good as the fold-in that bound() does.
    assert -ours.loss_ >= ours.bound(X) - 1e-10 * abs(ours.loss_)


def test_training_e_step_keeps_the_better_start():
    # After the first epoch, the training E-step restarts every document
    # from all ones (scikit-learn's transform start) and keeps, per
    # document, the E-step from its previous gamma instead where that start
    # already has a higher bound.  Pinned: every document is either exactly
    # the restart's, or was switched and ends above both its restart and its
    # previous gamma.
    params = dict(init="random", tol=0, split_merge=0, random_state=0)
    before = LDAVI(K, max_iter=2, **params).fit(X)
    est = LDAVI(K, max_iter=3, **params).fit(X)
    H = est.components_
    model = _model(est)
    warm = model.e_step(X, before.components_)[0]  # gamma of the last epoch
    restart, _, _ = model.e_step(X, H)
    kept, bound, counts = model.e_step(X, H, warm=warm)
    B = model.topic_expectation(H, np.arange(H.shape[1]))

    def doc_bounds(gamma):
        y = (exp_dirichlet_expectation(gamma) @ B)[X.nonzero()]
        return model.document_bounds(X, gamma, y)

    b_restart, b_warm, b_kept = doc_bounds(restart), doc_bounds(warm), doc_bounds(kept)
    switched = b_warm > b_restart
    assert 0 < switched.sum() < N_DOCS  # both cases occur here
    assert_array_equal(kept[~switched], restart[~switched])
    assert np.all(b_kept[switched] >= b_warm[switched] - 1e-9)
    assert np.all(b_kept >= np.maximum(b_restart, b_warm) - 1e-9)
    assert_allclose(bound, b_kept.sum(), rtol=1e-12)
    # The statistics are those of the kept gamma.
    y = (exp_dirichlet_expectation(kept) @ B)[X.nonzero()]
    assert_allclose(counts, lda_expected_counts(X, kept, B, y), rtol=1e-10)


def test_partial_fit_matches_sklearn_online_update():
    params = dict(
        batch_size=50, total_samples=5000, learning_decay=0.6, learning_offset=4.0
    )
    sk = LatentDirichletAllocation(K, random_state=0, **params)
    ours = LDAVI(K, random_state=0, **params)
    sk.partial_fit(X[:100])
    ours.partial_fit(X[:100])
    assert ours.n_batch_iter_ == sk.n_batch_iter_ == 3
    # From exactly the same state (topics, step counter; scikit-learn's
    # E-step from all ones), one more call.
    ours.components_ = sk.components_.copy()
    sk.random_state_ = None
    sk.n_batch_iter_ = ours.n_batch_iter_ = 9
    sk.partial_fit(X[100:])
    ours.partial_fit(X[100:])
    assert_allclose(ours.components_, sk.components_, rtol=1e-5)
    assert ours.n_batch_iter_ == sk.n_batch_iter_ == 10


def test_online_with_full_batches_and_no_decay_is_batch_learning():
    # rho = (offset + t) ** 0 = 1 and D / |b| = 1: each online step is the
    # batch M-step, from the same warm-started E-steps.
    batch = LDAVI(K, max_iter=5, tol=0, random_state=0).fit(X)
    online = LDAVI(
        K,
        learning_method="online",
        batch_size=N_DOCS,
        learning_decay=0.0,
        max_iter=5,
        tol=0,
        random_state=0,
    ).fit(X)
    assert_allclose(online.components_, batch.components_, rtol=1e-12)
    assert_allclose(online.loss_history_, batch.loss_history_, rtol=1e-12)


# ----------------------------------------------- the bound never decreases
def _epochs(est, n_epochs, start):
    """Bounds f(lambda_t) of epochs whose training E-steps start from ``start``.

    ``start(epoch)`` gives the training E-step's start (None: all ones);
    ``f`` is evaluated as ``bound`` (and scikit-learn's ``score``) does:
    E-step from all ones.
    """
    model = _model(est)
    planned = Start(est.init, K, est.random_state, est.random_state)
    H = start_topics(model, InMemoryRunner(X), planned)
    bounds = []
    for epoch in range(n_epochs + 1):
        bounds.append(model.e_step(X, H)[1] + model.topic_bound(H))
        if epoch == n_epochs:
            break
        counts = model.e_step(X, H, start(epoch))[2]
        H = model.topic_step(H, {"counts": counts})[0]
    return np.array(bounds)


# loss_history_[t] is minus the bound of the fit's state after t epochs:
# the topics lambda_t and the documents' gamma_t of the E-step for them.  The
# M-step maximizes L(gamma_t, .), so L(gamma_t, lambda_{t+1}) >= L(gamma_t,
# lambda_t); the next E-step keeps, per document, the better of its restart
# and its sweeps from gamma_t, which only ascend: L(gamma_{t+1}, lambda_{t+1})
# >= L(gamma_t, lambda_{t+1}).  So the bound never goes down, whatever the
# E-step's stopping rule, up to float64 rounding: each value is a sum of
# ~1e4 terms (nnz + (n_samples + n_features) * k) whose magnitudes add up to
# less than ~50 |f| (the log-gamma terms of the KL parts cancel), so its
# rounding error is below 1e4 * 2.2e-16 * 50 |f| ~ 1e-10 |f|.
@pytest.mark.parametrize(
    "e_step, topic_word_prior",
    [
        ({}, "auto"),
        ({"max_doc_update_iter": 1}, None),
        ({"mean_change_tol": 0.5}, 2.0),
    ],
    ids=["default", "one-sweep-point-topics", "loose-tol-eta-2"],
)
def test_batch_bound_never_decreases(e_step, topic_word_prior):
    params = dict(topic_word_prior=topic_word_prior, tol=0, random_state=0, **e_step)
    est = LDAVI(K, max_iter=15, **params).fit(X)
    h = est.loss_history_
    assert len(h) == 16 and est.loss_ == h[-1]
    rounding = 1e-10 * abs(h[0])
    assert np.all(np.diff(h) <= rounding)
    assert h[-1] < h[0]
    # bound() folds every document in from all ones: a bound of the same
    # topics that the fit's state can only beat.
    assert est.bound(X) <= -est.loss_ + rounding


def test_sklearn_scheme_lowers_the_bound():
    # Why scikit-learn's batch perplexity is not monotone (its issue #6777):
    # each of its epochs starts the training E-step from a fresh random
    # draw, but its score and perplexity evaluate the bound with another
    # E-step, from all ones.  The M-step raises the bound at the random
    # start's gamma, not at the evaluated one, so once an epoch's gain is
    # below the difference between the two truncated E-steps, the reported
    # bound goes down.  A short E-step (two sweeps) shows it within 60
    # epochs here; with the defaults it shows after ~100 epochs on 20
    # Newsgroups.  LDAVI's epochs from the same (scikit-learn's) start, with
    # the same stopping rule, do not: its training E-step never ends a
    # document below its previous gamma (the test above).
    params = dict(max_doc_update_iter=2, tol=0, random_state=0, init="random")
    rng = np.random.RandomState(0)
    sklearn_scheme = _epochs(
        LDAVI(K, **params).fit(X[:5]),
        60,
        start=lambda epoch: rng.gamma(100.0, 0.01, (N_DOCS, K)),
    )
    ours = -LDAVI(K, max_iter=60, **params).fit(X).loss_history_
    rounding = 1e-10 * abs(ours[0])
    assert np.diff(sklearn_scheme).min() < -1e3 * rounding
    assert np.diff(ours).min() >= -rounding


def test_convergence_on_the_relative_bound_change():
    est = LDAVI(K, max_iter=500, tol=1e-4, random_state=0).fit(X)
    h = est.loss_history_
    assert est.n_iter_ < 500
    assert h[-3] - h[-2] <= 1e-4 * abs(h[0])
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        LDAVI(K, max_iter=2, tol=1e-4, random_state=0).fit(X)


# ------------------------------------------------------------------- priors
def _reference_e_step(Xd, B, alpha, n_sweeps):
    """Blei et al.'s per-document updates with explicit phi (dense, tiny only)."""
    gamma = np.ones((Xd.shape[0], B.shape[0]))
    for _ in range(n_sweeps):
        e_log_theta = psi(gamma) - psi(gamma.sum(axis=1, keepdims=True))
        # phi[d, w, k] proportional to exp(E log theta_dk) * B_kw
        phi = np.exp(e_log_theta)[:, None, :] * B.T[None, :, :]
        phi /= phi.sum(axis=2, keepdims=True)
        gamma = alpha + np.einsum("dw,dwk->dk", Xd, phi)
    return gamma


def _reference_bound(Xd, gamma, lam, alpha, eta):
    """The evidence lower bound written term by term (Blei et al., A.3)."""
    e_log_theta = psi(gamma) - psi(gamma.sum(axis=1, keepdims=True))
    e_log_beta = psi(lam) - psi(lam.sum(axis=1, keepdims=True))
    logits = e_log_theta[:, None, :] + e_log_beta.T[None, :, :]
    data = np.sum(Xd * np.log(np.exp(logits).sum(axis=2)))
    k, m = lam.shape
    doc = np.sum(
        gammaln(alpha.sum())
        - gammaln(alpha).sum()
        + ((alpha - gamma) * e_log_theta).sum(axis=1)
        - gammaln(gamma.sum(axis=1))
        + gammaln(gamma).sum(axis=1)
    )
    topic = np.sum(
        gammaln(m * eta)
        - m * gammaln(eta)
        + ((eta - lam) * e_log_beta).sum(axis=1)
        - gammaln(lam.sum(axis=1))
        + gammaln(lam).sum(axis=1)
    )
    return data + doc + topic


def test_vector_doc_topic_prior_and_priors_above_one(backend):
    alpha = np.array([3.0, 0.5, 2.0, 1.5])
    est = LDAVI(
        K, doc_topic_prior=alpha, topic_word_prior=2.5, max_iter=20, random_state=0
    )
    est.set_params(tol=0).fit(X)
    assert_array_equal(est.doc_topic_prior_, alpha)
    assert est.topic_word_prior_ == 2.5
    lam = est.components_
    B = np.exp(psi(lam) - psi(lam.sum(axis=1, keepdims=True)))
    Xd = X.toarray()
    # The vectorized E-step equals the textbook per-document updates.
    gamma_ref = _reference_e_step(Xd, B, alpha, n_sweeps=7)
    gamma, _ = lda_e_step(X, np.ones((N_DOCS, K)), B, alpha, max_iter=7, tol=0)
    assert_allclose(gamma, gamma_ref, rtol=1e-10)
    # The bound equals the term-by-term formula, at the fold-in gamma.
    gamma_fold = _model(est).fold_in(X, est.components_)
    assert_allclose(
        est.bound(X), _reference_bound(Xd, gamma_fold, lam, alpha, 2.5), rtol=1e-10
    )
    # The prior shows in the fold-in: a larger alpha_k pulls the proportions
    # of short documents towards topic k, compared with a symmetric prior.
    symmetric = _with_topics(lam, doc_topic_prior=alpha.mean(), topic_word_prior=2.5)
    short = np.asarray(X.sum(axis=1)).ravel() < 40
    shift = est.transform(X)[short].mean(axis=0) - symmetric.transform(X)[short].mean(
        axis=0
    )
    assert shift[0] > 0 > shift[1]
    h = est.loss_history_
    assert np.all(np.diff(h) <= 1e-10 * abs(h[0]))


@pytest.mark.parametrize("doc_topic_prior", [[1.0, 2.0], [1.0, -1.0, 1.0, 1.0]])
def test_bad_doc_topic_prior_is_a_clear_error(doc_topic_prior):
    with pytest.raises(ValueError, match="doc_topic_prior"):
        LDAVI(K, doc_topic_prior=doc_topic_prior).fit(X)


def test_custom_start():
    H = np.ones((K, X.shape[1]))
    first = LDAVI(
        K, init="custom", max_iter=1, tol=0, split_merge=0, random_state=5
    ).fit(X, H=H)
    # One epoch from the topics H: its E-step starts from the random draw
    # (no topics drawn before it), then the M-step.
    gamma0 = np.random.RandomState(5).gamma(100.0, 0.01, (N_DOCS, K))
    one = _with_topics(H)
    expected = one.topic_word_prior_ + _model(one).e_step(X, H, gamma0)[2]
    assert_allclose(first.components_, expected, rtol=1e-12)
    H[0, 0] = 0.0
    with pytest.raises(ValueError, match="strictly positive"):
        LDAVI(K, init="custom").fit(X, H=H)
    with pytest.raises(ValueError, match="no start for the documents"):
        LDAVI(K, init="custom").fit(X, W=np.ones((N_DOCS, K)), H=H + 1)
    with pytest.raises(ValueError, match="init='custom'"):
        LDAVI(K).fit(X, H=H + 1)
    with pytest.raises(ValueError, match="needs the topics' start"):
        LDAVI(K, init="custom").fit(X)


def test_nndsvda_start_gives_each_svd_topic_its_share_of_the_tokens():
    for eta, dtype in [("auto", np.float64), (None, np.float32), (0.5, np.float64)]:
        Xd = X.astype(dtype)
        est = LDAVI(K, topic_word_prior=eta, max_iter=1, tol=0, random_state=2)
        est.fit(Xd)
        runner = InMemoryRunner(Xd)
        lam0 = start_topics(_model(est), runner, Start("nndsvda", K, 2, 2))
        assert lam0.dtype == dtype
        # The NMF family's NNDSVDa start of the same data and random_state.
        W, H = nndsvda_start(runner, K, random_state=2)
        share = W.sum(axis=0) * H.sum(axis=1)
        share = share / share.sum()
        counts = lam0 - (est.topic_word_prior_ or 0.0)
        # Each topic: the SVD topic's direction, with share_k of the tokens.
        assert_allclose(counts.sum(axis=1), share * X.sum(), rtol=1e-5)
        assert_allclose(
            normalize_rows(counts)[0], normalize_rows(H)[0], rtol=1e-5, atol=1e-9
        )
        assert (lam0 > 0).all()


def test_default_init_is_nndsvda_and_falls_back_to_random():
    params = dict(max_iter=3, tol=0, random_state=0)
    default = LDAVI(K, **params).fit(X)
    assert_array_equal(
        default.components_, LDAVI(K, init="nndsvda", **params).fit(X).components_
    )
    assert not np.allclose(
        default.components_, LDAVI(K, init="random", **params).fit(X).components_
    )
    # More topics than min(n_samples, n_features) = 5: the random start.
    small = X[:5]
    assert_array_equal(
        LDAVI(7, **params).fit(small).components_,
        LDAVI(7, init="random", **params).fit(small).components_,
    )
    with pytest.raises(ValueError, match="init='nndsvda' needs n_components <= "):
        LDAVI(7, init="nndsvda").fit(small)
    with pytest.raises(ValueError, match="init='custom'"):
        LDAVI(K, init="nndsvda").fit(X, H=np.ones((K, X.shape[1])))


def _distances_to_fit(model, phi):
    """L1 distance from each true topic to its nearest fitted topic."""
    beta = normalize_rows(model.components_)[0]
    return np.abs(phi[:, None, :] - beta[None]).sum(axis=-1).min(axis=1)


def _topic_recovery(model, phi):
    """The largest L1 distance from a true topic to its nearest fitted topic."""
    return _distances_to_fit(model, phi).max()


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow)])
def test_nndsvda_start_and_split_merge_moves_recover_the_topics(seed):
    # Why the default start is NNDSVDa and why fit makes split-merge moves:
    # from scikit-learn's nearly uniform random start, batch VB on these
    # 10-topic corpora (50,000 tokens per topic) ends with two true topics
    # merged into one fitted topic and another split in two -- a local
    # optimum a larger k repairs, which is what made GridSearchCV choose
    # k = 17 for 10 true topics.  From NNDSVDa every true topic is found.
    # The moves (merge the split pair, split the merged topic) repair the
    # random starts' fits too, and only ever raise the bound.
    from _corpora import load_example

    corpus, _, phi = load_example("choosing_k").make_lda_corpus(10, random_state=seed)
    train, test = corpus[::3], corpus[1::3]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        nndsvda = LDAVI(10, split_merge=0, random_state=0).fit(train)
        randoms = [
            LDAVI(10, init="random", split_merge=0, random_state=r).fit(train)
            for r in range(3)
        ]
        repaired = [
            LDAVI(10, init="random", split_merge=3, random_state=r).fit(train)
            for r in range(3)
        ]
    # The L1 distance between a true topic and a fitted one is ~0.1 when
    # found (estimation noise), ~1 when merged with another.
    assert _topic_recovery(nndsvda, phi) < 0.25
    worst_random = [_topic_recovery(m, phi) for m in randoms]
    assert max(worst_random) > 0.5, worst_random
    assert nndsvda.score(test) > max(m.score(test) for m in randoms)
    for before, after in zip(randoms, repaired, strict=True):
        assert after.loss_ <= before.loss_
        if _topic_recovery(before, phi) > 0.5:  # merged topics: a move kept
            assert after.split_merge_moves_[0]["accepted"]
            assert _topic_recovery(after, phi) < 0.5 * _topic_recovery(before, phi)


def test_split_gain_is_zero_for_one_topic_and_n_for_two_disjoint_ones():
    rng = np.random.default_rng(0)
    # Counts of one topic in expectation: documents x terms independent.
    one = sp.csr_matrix(np.outer(rng.uniform(1, 3, 40), rng.uniform(1, 2, 30)))
    assert split_gain(one, 0) < 1e-8 * one.sum()
    # Two topics with disjoint documents and terms: the second singular
    # value is 1 too, the whole chi-square is along it: N s_2^2 = N.
    two = sp.block_diag([one, 2 * one]).tocsr()
    assert_allclose(split_gain(two, 0), two.sum(), rtol=1e-8)
    # The rank-2 split finds the two blocks, with their counts.
    halves = split_in_two(two, 0)
    assert_allclose(halves.sum(axis=0), np.asarray(two.sum(axis=0)).ravel(), rtol=1e-3)
    terms = [np.flatnonzero(h > 1e-3 * h.max()) for h in halves]
    assert sorted(map(tuple, terms)) == [tuple(range(30)), tuple(range(30, 60))]


@pytest.mark.parametrize("Estimator", [LDAVI, GammaPoissonVI])
def test_split_merge_move_repairs_a_planted_local_optimum(Estimator):
    # A start at batch VB's typical local optimum: true topics 0 and 1 share
    # slot 0, true topic 2 is split over slots 1 and 2.  Epochs alone stay
    # there; one move (merge slots 1 and 2, split slot 0) leaves it.
    from _corpora import planted_local_optimum

    corpus, phi, lam0 = planted_local_optimum()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        stuck = Estimator(5, init="custom", split_merge=0, random_state=0)
        stuck.fit(corpus, H=lam0)
        moved = Estimator(5, init="custom", split_merge=3, random_state=0)
        moved.fit(corpus, H=lam0)
    assert stuck.split_merge_moves_ == []
    assert (_distances_to_fit(stuck, phi)[:2] > 0.5).all()  # topics 0 and 1 merged
    assert (_distances_to_fit(moved, phi) < 0.25).all()
    first = moved.split_merge_moves_[0]
    assert set(first["merged"]) == {1, 2} and first["split"] == 0
    assert first["accepted"]
    # The moves start from the fit without them run to the coarse tolerance
    # (30 tol), each kept move raises the bound, and the fit kept then runs
    # on to tol: its bound is at least the last kept move's.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        coarse = Estimator(5, init="custom", split_merge=0, random_state=0)
        coarse.set_params(tol=30 * coarse.tol).fit(corpus, H=lam0)
    assert_allclose(first["bound_before"], -coarse.loss_, rtol=1e-12)
    kept = [move for move in moved.split_merge_moves_ if move["accepted"]]
    assert all(move["bound_after"] > move["bound_before"] for move in kept)
    assert -moved.loss_ >= kept[-1]["bound_after"]
    assert moved.bound(corpus) <= -moved.loss_ + 1e-10 * abs(moved.loss_)
    assert len(moved.loss_history_) == moved.n_iter_ + 1
    assert np.all(np.diff(moved.loss_history_) <= 1e-9 * moved.loss_history_[0])
    # loss_history_[0] is minus the bound at the start (the custom topics and
    # the first E-step's draw), as without moves; each move keeps its trial.
    assert moved.loss_history_[0] == stuck.loss_history_[0]
    for move in moved.split_merge_moves_:
        assert move["history"][-1] == move["objective_after"]
    # Only the last move may be undone, and it ends the moves.
    assert all(move["accepted"] for move in moved.split_merge_moves_[:-1])


def test_no_split_merge_moves_online_or_under_three_topics():
    from sklearn_topicfac.out_of_core import Blocks

    params = dict(max_iter=3, tol=0, random_state=0)
    online = LDAVI(
        K, learning_method="online", batch_size=40, split_merge=3, **params
    ).fit(X)
    plain = LDAVI(
        K, learning_method="online", batch_size=40, split_merge=0, **params
    ).fit(X)
    assert online.split_merge_moves_ == []
    assert_array_equal(online.components_, plain.components_)
    # Block-wise fits make the moves of the in-memory fit (since the engine
    # runs the moves on any runner; tests/engine/test_out_of_core.py checks them on
    # a corpus where a move is kept).
    blocks = LDAVI(K, split_merge=3, **params).fit(Blocks(X, block_size=40))
    memory = LDAVI(K, split_merge=3, **params).fit(X)
    assert [m["accepted"] for m in blocks.split_merge_moves_] == [
        m["accepted"] for m in memory.split_merge_moves_
    ]
    assert LDAVI(2, split_merge=3, **params).fit(X).split_merge_moves_ == []
    # None by default.
    assert LDAVI(K, **params).fit(X).split_merge_moves_ == []
    with pytest.raises(ValueError, match="split_merge"):
        LDAVI(K, split_merge=-1).fit(X)


def test_n_init_keeps_the_start_with_the_highest_bound():
    params = dict(max_iter=8, tol=0)
    best = LDAVI(K, n_init=3, random_state=4, **params).fit(X)
    # The starts one by one: the default (NNDSVDa) start, which draws only
    # the first E-step's start from the generator, then two random starts
    # continuing it, each drawn as init="random" draws (topics, then the
    # E-step's start: a custom start handed the generator in that state).
    candidates = [LDAVI(K, random_state=4, **params).fit(X)]
    g = np.random.RandomState(4)
    g.gamma(100.0, 0.01, (N_DOCS, K))
    for _ in range(2):
        lam0 = g.gamma(100.0, 0.01, (K, X.shape[1]))
        at_gamma0 = np.random.RandomState()
        at_gamma0.set_state(g.get_state())
        est = LDAVI(K, init="custom", random_state=at_gamma0, **params)
        candidates.append(est.fit(X, H=lam0))
        g.gamma(100.0, 0.01, (N_DOCS, K))
    losses = [c.loss_ for c in candidates]
    winner = candidates[int(np.argmin(losses))]
    assert len(set(np.round(losses, 3))) == 3  # three different end points
    assert_allclose(best.loss_, min(losses), rtol=1e-12)
    assert_allclose(best.components_, winner.components_, rtol=1e-10)
    assert_allclose(best.loss_history_, winner.loss_history_, rtol=1e-12)
    assert best.n_batch_iter_ == winner.n_batch_iter_ == 9
    # A block-wise fit makes the same restarts.
    from sklearn_topicfac.out_of_core import Blocks

    blocks = LDAVI(K, n_init=3, random_state=4, **params).fit(Blocks(X))
    assert_allclose(blocks.components_, best.components_, rtol=1e-9)


def test_point_estimate_topics():
    est = LDAVI(K, topic_word_prior=None, max_iter=30, random_state=0).fit(X)
    assert est.topic_word_prior_ is None
    # components_ are expected counts: they add up to the corpus's words.
    assert_allclose(est.components_.sum(), X.sum(), rtol=1e-10)
    # No topic term in the bound: it is the documents' bound only.
    model = _model(est)
    assert model.topic_bound(est.components_) == 0.0
    assert_allclose(est.bound(X), model.e_step(X, est.components_)[1], rtol=1e-12)
    assert est.bound(X) <= -est.loss_ + 1e-10 * abs(est.loss_)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_word_no_topic_can_produce_contributes_nothing_to_the_e_step(dtype):
    # Point-estimate topics give a term absent from the training data
    # probability exactly 0 in every topic.  A count of 10 of it once made
    # the sweep compute 10 / tiny = inf and then 0 * inf = NaN (float64
    # overflows above a count of 4).  The word must simply not count.
    rng = np.random.default_rng(0)
    B = rng.dirichlet(np.full(6, 0.5), size=3).astype(dtype)
    B[:, 5] = 0.0
    counts = np.array([[3.0, 0.0, 2.0, 1.0, 0.0, 10.0], [0.0, 4.0, 1.0, 0.0, 2.0, 7.0]])
    X = sp.csr_matrix(counts, dtype=dtype)
    without = sp.csr_matrix(counts[:, :5], dtype=dtype)
    start = np.ones((2, 3), dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        gamma, _ = lda_e_step(X, start, B, 0.1, max_iter=100, tol=1e-6)
    expected, _ = lda_e_step(without, start, B[:, :5], 0.1, max_iter=100, tol=1e-6)
    assert gamma.dtype == dtype
    assert np.isfinite(gamma).all()
    assert_allclose(gamma, expected, rtol=1e-4 if dtype == np.float32 else 1e-10)


def test_gamma_poisson_scores_documents_with_terms_unseen_in_training():
    counts = lda_counts(n=200, k=K, seed=1)
    train, test = counts[:150].tolil(), counts[150:].tolil()
    train[:, 0] = 0  # term 0 never seen in training ...
    test[:, 0] = 20  # ... and frequent in the held-out documents
    est = GammaPoissonVI(K, random_state=0).fit(train.tocsr())
    assert (est.components_[:, 0] == 0).all()
    theta = est.transform(test.tocsr())
    assert np.isfinite(theta).all()
    assert np.isfinite(est.score(test.tocsr()))


# ------------------------------------------------------- bound and perplexity
def test_bound_is_the_documents_bounds_plus_the_topics_term():
    est = LDAVI(K, max_iter=20, random_state=0).fit(X)
    topic_bound = -dirichlet_kl(est.components_, est.topic_word_prior_)
    parts = [X[:7], X[7:60], X[60:]]
    doc_bounds = [est.bound(p) - topic_bound for p in parts]
    assert_allclose(est.bound(X), sum(doc_bounds) + topic_bound, rtol=1e-12)
    # score and perplexity: the held-out completion score of every estimator,
    # with LDA's posterior mean mixture.
    assert_allclose(est.perplexity(X), np.exp(-est.score(X)), rtol=1e-12)
    theta, phi = est.topic_proportions(X), est.topic_word_distributions()
    assert_allclose(theta, est.transform(X), rtol=1e-12)
    assert_allclose(phi, est.components_ / est.components_.sum(axis=1)[:, None])


def test_held_out_perplexity_does_not_explode_on_small_sets():
    # scikit-learn's issue #20032: its perplexity is exp(-bound / words), so
    # the topics' term of the bound (KL(q(beta) || p(beta)), of size
    # ~ n_components * n_features whatever the evaluated corpus) is divided
    # by the evaluated words and inflates the perplexity by exp(KL / words).
    # perplexity() is a per-word average of per-document terms instead.
    train, held_out = X[:120], X[120:]
    est = LDAVI(K, max_iter=20, random_state=0).fit(train)
    topic_kl = dirichlet_kl(est.components_, est.topic_word_prior_)
    lengths = np.asarray(held_out.sum(axis=1)).ravel()
    order = np.argsort(lengths)
    full = est.perplexity(held_out)
    for small in (held_out[order[:3]], held_out[order[:10]], held_out):
        words = small.sum()
        sklearn_style = np.exp(-est.bound(small) / words)
        documents_only = np.exp(-(est.bound(small) + topic_kl) / words)
        assert_allclose(
            np.log(sklearn_style / documents_only), topic_kl / words, rtol=1e-9
        )
        # Ours stays of the order of the held-out corpus's perplexity.
        assert full / 3 < est.perplexity(small) < 3 * full
    # On the shortest document the topic term alone multiplies the
    # scikit-learn-style perplexity by more than 10.
    assert topic_kl / lengths.min() > np.log(10)


# ----------------------------------------------------------------- float32
@pytest.mark.parametrize("learning_method", ["batch", "online"])
@pytest.mark.parametrize("sparse", [True, False])
def test_float32_end_to_end(learning_method, sparse):
    X32 = X.astype(np.float32) if sparse else X.toarray().astype(np.float32)
    # mean_change_tol=0: every document makes max_doc_update_iter sweeps in
    # both precisions, so no stopping decision can flip between them.
    params = dict(
        learning_method=learning_method,
        batch_size=50,
        mean_change_tol=0,
        max_doc_update_iter=30,
        max_iter=8,
        tol=0,
        random_state=0,
    )
    e32 = LDAVI(K, **params).fit(X32)
    T = e32.transform(X32)
    for value in (e32.components_, e32.embedding_, T, e32.inverse_transform(T)):
        assert value.dtype == np.float32
    assert e32.fit_transform(X32).dtype == np.float32
    e32.partial_fit(X32[:30])
    assert e32.components_.dtype == np.float32
    assert np.isfinite(e32.score(X32)) and np.isfinite(e32.perplexity(X32))

    e32 = LDAVI(K, **params).fit(X32)
    e64 = LDAVI(K, **params).fit(X32.astype(np.float64))
    # float32 rounds each operation to ~6e-8 relative; 8 epochs of 30
    # contracting sweeps compound that to ~1e-5 (observed); rtol=1e-3 keeps
    # a wide margin and still catches any float32-only bug.
    assert_allclose(e32.components_, e64.components_, rtol=1e-3)
    assert_allclose(e32.transform(X32), e64.transform(X32), rtol=1e-3, atol=1e-6)
    assert_allclose(e32.loss_history_, e64.loss_history_, rtol=1e-5)


def test_float32_bound_never_decreases():
    X32 = X.astype(np.float32)
    est = LDAVI(K, max_iter=40, tol=0, random_state=0).fit(X32)
    h = est.loss_history_
    # The data term uses float32 products exp(E log theta) @ B of k terms:
    # each log carries an absolute error of ~(k + 2) eps32, weighted by the
    # counts; two evaluations differ by at most twice that.
    slack = 2 * (K + 2) * np.finfo(np.float32).eps * X.sum()
    assert np.all(np.diff(h) <= slack), (np.diff(h).max(), slack)
    assert h[-1] < h[0]


# ----------------------------------------------------- transform and data
def test_transform_is_deterministic_and_per_document(backend):
    est = LDAVI(K, max_iter=10, random_state=0).fit(X)
    full = est.transform(X)
    assert_allclose(full.sum(axis=1), 1.0, rtol=1e-12)
    # A document's sweeps never use another document's numbers, but its
    # padded width (and so the BLAS summation order, over zeros) depends on
    # the documents it is chunked with: last-bit differences, which the
    # slowly contracting sweeps can amplify a few hundred times.
    idx = np.array([7, 0, 131, 3, 3, 12])
    assert_allclose(est.transform(X[idx]), full[idx], rtol=1e-10)
    assert_allclose(est.transform(X[5:6]), full[5:6], rtol=1e-10)
    assert_array_equal(est.transform(X), full)
    assert_array_equal(
        est.fit_transform(X), LDAVI(**est.get_params()).fit(X).transform(X)
    )
    # A document without words gets the prior mean.
    empty = est.transform(np.zeros((1, X.shape[1])))
    assert_allclose(empty[0], np.full(K, 1 / K), rtol=1e-12)


def test_sparse_dense_and_explicit_zeros_agree():
    params = dict(max_iter=5, tol=0, random_state=0)
    a = LDAVI(K, **params).fit(X)
    b = LDAVI(K, **params).fit(X.toarray())
    Xz = X.tocoo()
    rows = np.r_[Xz.row, 0, 5]
    cols = np.r_[Xz.col, 1, 2]
    vals = np.r_[Xz.data, 0.0, 0.0]
    mask = X[0, 1] == 0 and X[5, 2] == 0
    assert mask
    Xe = sp.csr_matrix((vals, (rows, cols)), shape=X.shape)
    assert Xe.nnz == X.nnz + 2
    c = LDAVI(K, **params).fit(Xe)
    for other in (b, c):
        assert_allclose(other.components_, a.components_, rtol=1e-12)
        assert_allclose(other.loss_history_, a.loss_history_, rtol=1e-12)


def test_callers_data_is_not_modified(backend):
    Xs = X.copy()
    Xd = X.toarray()
    snap = (Xs.data.copy(), Xs.indices.copy(), Xs.indptr.copy(), Xd.copy())
    H = np.ones((K, X.shape[1]))
    for learning_method in ("batch", "online"):
        est = LDAVI(K, learning_method=learning_method, max_iter=2, tol=0)
        est.fit(Xs)
        est.partial_fit(Xd)
        est.transform(Xs), est.score(Xd), est.perplexity(Xs)
        LDAVI(K, init="custom", max_iter=2, tol=0).fit(Xd, H=H)
    assert_array_equal(Xs.data, snap[0])
    assert_array_equal(Xs.indices, snap[1])
    assert_array_equal(Xs.indptr, snap[2])
    assert_array_equal(Xd, snap[3])
    assert_array_equal(H, 1.0)


def test_inverse_transform_gives_word_distributions():
    est = LDAVI(K, max_iter=5, tol=0, random_state=0).fit(X)
    P = est.inverse_transform(est.transform(X[:10]))
    assert P.shape == (10, X.shape[1])
    assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    with pytest.raises(ValueError, match="inverse_transform expects"):
        est.inverse_transform(np.ones((2, K + 1)))


def test_verbose_lines(capsys):
    LDAVI(K, max_iter=3, tol=0, verbose=2, split_merge=0, random_state=0).fit(X)
    lines = capsys.readouterr().out.splitlines()
    pattern = re.compile(r"^\[LDAVI\] iteration\s+\d+\s+objective\s+\S+")
    assert sum(bool(pattern.search(ln)) for ln in lines) == 3
    assert "stopped after 3 iterations" in lines[-1]
    # Each split-merge move gets a line: what it did and whether it stayed.
    est = LDAVI(K, max_iter=3, tol=0, verbose=1, split_merge=3, random_state=0)
    est.fit(X)
    lines = capsys.readouterr().out.splitlines()
    moves = [ln for ln in lines if ln.startswith("[LDAVI] split-merge: merge topics")]
    assert len(moves) == len(est.split_merge_moves_) >= 1
    for line, move in zip(moves, est.split_merge_moves_, strict=True):
        assert line.endswith("(kept)" if move["accepted"] else "(undone)")


def test_partial_fit_feature_mismatch_and_fresh_start():
    est = LDAVI(K, random_state=0, batch_size=40)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.partial_fit(X)
    assert est.n_iter_ == 0 and est.n_batch_iter_ == 5
    with pytest.raises(ValueError, match="features"):
        est.partial_fit(X[:, :10])


# ------------------------------------------- Gamma-Poisson (paper 002, App. E)
def _reference_iterates(Xd, theta_factor, starts, beta, alpha, n_sweeps):
    """Alg. 5 (LDA) or Alg. 7 (Gamma-Poisson) as written, dense, fixed sweeps.

    ``theta_factor(a)`` is exp(E[log theta]) of the model: Dirichlet
    exp(psi(a) - psi(sum a)) for LDA, Gamma exp(psi(a)) / (b + 1) for GaP.
    Each epoch's E-step starts from ``starts[epoch]``.
    """

    def ratio(T):  # X / (T beta), where X is non-zero only
        return np.divide(Xd, T @ beta, out=np.zeros_like(Xd), where=Xd > 0)

    for a in starts:
        for _ in range(n_sweeps):
            T = theta_factor(a)
            a = alpha + T * (ratio(T) @ beta.T)
        T = theta_factor(a)
        beta = normalize_rows(beta * (T.T @ ratio(T)))[0]
    return a, beta


def test_lemma_e3_gamma_poisson_iterates_equal_lda(backend):
    b, n_epochs, n_sweeps = 0.7, 4, 5
    alpha = np.array([0.3, 1.0, 0.1, 2.0])
    params = dict(
        doc_topic_prior=alpha,
        max_iter=n_epochs,
        mean_change_tol=0,
        max_doc_update_iter=n_sweeps,
        tol=0,
        init="random",
        split_merge=0,
        random_state=0,
    )
    gap = GammaPoissonVI(K, doc_topic_rate=b, **params).fit(X)
    lda = LDAVI(K, topic_word_prior=None, **params).fit(X)
    # The two estimators make the same steps for all epochs ...
    assert_allclose(gap.components_, lda.components_, rtol=1e-10)
    assert_allclose(normalize_rows(gap.embedding_)[0], lda.embedding_, rtol=1e-10)
    # ... and, in the first epoch (no previous gamma to keep), the steps of
    # the algorithms as written in the paper, restarted from all ones.
    params["max_iter"] = n_epochs = 1
    gap = GammaPoissonVI(K, doc_topic_rate=b, **params).fit(X)
    lda = LDAVI(K, topic_word_prior=None, **params).fit(X)
    # The start both estimators use: topics, then the first E-step's gamma.
    rng = np.random.RandomState(0)
    lam0 = rng.gamma(100.0, 0.01, (K, X.shape[1]))
    starts = [rng.gamma(100.0, 0.01, (N_DOCS, K))] + [np.ones((N_DOCS, K))] * (
        n_epochs - 1
    )
    Xd, beta0 = X.toarray(), normalize_rows(lam0)[0]

    def dirichlet(a):
        return np.exp(psi(a) - psi(a.sum(axis=1, keepdims=True)))

    def gamma_poisson(a):
        return np.exp(psi(a)) / (b + 1)

    a_lda, beta_lda = _reference_iterates(Xd, dirichlet, starts, beta0, alpha, 5)
    a_gap, beta_gap = _reference_iterates(
        Xd, gamma_poisson, starts, beta0, alpha, n_sweeps
    )
    # Lemma E.3 itself, on the algorithms as written in the paper ...
    assert_allclose(a_gap, a_lda, rtol=1e-10)
    assert_allclose(beta_gap, beta_lda, rtol=1e-10)
    # ... and both estimators follow them.
    assert_allclose(normalize_rows(lda.components_)[0], beta_lda, rtol=1e-10)
    assert_allclose(normalize_rows(gap.components_)[0], beta_gap, rtol=1e-10)
    assert_allclose(gap.embedding_, a_gap / (b + 1), rtol=1e-10)
    assert_allclose(lda.embedding_, normalize_rows(a_lda)[0], rtol=1e-10)


@pytest.mark.parametrize("b", [0.1, 1.0, 3.0])
def test_gamma_poisson_bound_adds_the_document_lengths(b):
    # Lemma E.1: the Gamma-Poisson model is LDA times a negative-binomial
    # model of each document's length.  At the same gamma the bounds differ
    # by exactly that log-probability, plus the log multinomial coefficient
    # log(N_d! / prod_w X_dw!) that the LDA bound leaves out.
    alpha = np.array([0.5, 2.0, 1.0, 0.1])
    params = dict(doc_topic_prior=alpha, max_iter=8, tol=0, random_state=0)
    gap = GammaPoissonVI(K, doc_topic_rate=b, **params).fit(X)
    lda = LDAVI(K, topic_word_prior=None, **params).fit(X)
    assert_allclose(gap.components_, lda.components_, rtol=1e-12)
    a0, n_d = alpha.sum(), np.asarray(X.sum(axis=1)).ravel()
    log_nb = (
        gammaln(n_d + a0)
        - gammaln(a0)
        - gammaln(n_d + 1)
        + a0 * np.log(b / (b + 1))
        - n_d * np.log(b + 1)
    )
    log_multinomial = gammaln(n_d + 1).sum() - gammaln(X.data + 1).sum()
    assert_allclose(
        gap.bound(X) - lda.bound(X), log_nb.sum() + log_multinomial, rtol=1e-10
    )
    h = gap.loss_history_
    assert np.all(np.diff(h[1:]) <= 1e-10 * abs(h[0]))


def test_gamma_poisson_outputs():
    b = 0.05
    gap = GammaPoissonVI(K, doc_topic_rate=b, max_iter=20, random_state=0).fit(X)
    W = gap.transform(X)
    n_d = np.asarray(X.sum(axis=1)).ravel()
    # E[theta] sums to (N_d + sum(alpha)) / (b + 1) per document ...
    assert_allclose(W.sum(axis=1), (n_d + 1.0) / (b + 1), rtol=1e-10)
    # ... and with a small rate, E[theta] @ beta has the counts' row sums.
    assert_allclose(gap.inverse_transform(W).sum(axis=1), (n_d + 1) / (b + 1))
    X32 = X.astype(np.float32)
    g32 = GammaPoissonVI(K, max_iter=3, tol=0, random_state=0).fit(X32)
    assert g32.transform(X32).dtype == np.float32
    assert np.isfinite(g32.score(X32)) and np.isfinite(g32.perplexity(X32))


# ------------------------------------------- regressions found by fuzzing
def _fuzz_counts(seed):
    """The random float32 counts of the fuzzer that found the NaN models."""
    rng = np.random.RandomState(seed)
    n, m = rng.randint(1, 12), rng.randint(1, 40)
    X = np.floor(rng.rand(n, m) ** 3 * 10 ** rng.uniform(2, 9))
    X[rng.rand(n, m) < rng.rand()] = 0
    return X.astype(np.float32)


@pytest.mark.parametrize("Estimator", [LDAVI, GammaPoissonVI])
def test_float32_large_counts_give_finite_models(backend, Estimator):
    # Counts up to 2e7 in float32, and NNDSVDa start topics with entries
    # ~1e-34: the model of a word underflows, x / (Theta B) overflowed in
    # the E-step's sweep and the whole model became NaN, silently.
    X = _fuzz_counts(1787)
    assert X.shape == (5, 13) and X.max() > 2e7
    est = Estimator(2, random_state=0).fit(X)
    assert est.components_.dtype == np.float32
    assert np.isfinite(est.components_).all()
    assert np.isfinite(est.loss_history_).all()
    assert np.isfinite(est.transform(X)).all()
    slack = 50 * np.finfo(np.float32).eps * (X.sum(dtype=np.float64) + abs(est.loss_))
    assert np.all(np.diff(est.loss_history_) <= slack)


def test_e_step_float32_overflowing_ratio_is_redone_in_float64(backend):
    # A word that every topic gives probability below the smallest normal
    # float32, with a count of 1e6: the ratio overflows float32, the sweep's
    # result is bounded by the document's length all the same.
    B = np.array([[1e-40, 0.5, 0.5], [1e-41, 0.3, 0.7]], dtype=np.float32)
    X = sp.csr_matrix(np.array([[1e6, 3.0, 1.0]], dtype=np.float32))
    gamma, y = lda_e_step(X, np.ones((1, 2), np.float32), B, 0.5, max_iter=50, tol=0)
    assert gamma.dtype == np.float32 and np.isfinite(gamma).all()
    assert gamma.sum() <= X.sum() + 2 * 0.5 + 1
    assert np.isfinite(lda_expected_counts(X, gamma, B, y)).all()


@pytest.mark.parametrize(
    "X",
    [
        [[17.0]],
        np.random.RandomState(0).poisson(3, (36, 1)).astype(float),
        np.random.RandomState(1).poisson(2, (1, 15)).astype(float),
    ],
    ids=["one-count", "one-term", "one-document"],
)
@pytest.mark.parametrize("Estimator", [LDAVI, GammaPoissonVI])
def test_bound_never_rises_when_topics_are_alike(Estimator, X):
    # One term, or one document: every topic gives the documents' terms the
    # same probabilities, the all-ones restart of the E-step is a saddle
    # point the sweeps never leave, below the mode the first (random) E-step
    # found: the bound fell by 10 % ([3.11, 3.42, 3.42]) and the fall was
    # taken for convergence.
    est = Estimator(3, random_state=0, max_iter=50).fit(X)
    h = est.loss_history_
    assert np.all(np.diff(h) <= 1e-10 * abs(h[0])), h
    assert est.bound(X) <= -est.loss_ + 1e-10 * abs(est.loss_)


def test_a_rise_is_never_convergence():
    assert stopped([10.0, 5.0, 5.0 - 1e-4], tol=1e-3)
    assert not stopped([10.0, 5.0, 5.1], tol=1e-3)
    assert not stopped([10.0, 5.0, 4.0], tol=1e-3)


def test_split_merge_moves_need_more_than_the_fits_resolution():
    # float32 and float64 fits of this corpus end at the same bound (5e-6
    # apart); a move raised the float32 bound by 0.14 (1.5e-5 relative, far
    # below what the fit's tol resolves) and was kept, so the two dtypes
    # ended with permuted topics.
    X = lda_counts(n=60, m=40, seed=54, max_length=100).toarray()
    e64 = LDAVI(5, split_merge=3, random_state=0).fit(X)
    e32 = LDAVI(5, split_merge=3, random_state=0).fit(X.astype(np.float32))
    for est in (e64, e32):
        assert est.split_merge_moves_, "the test needs moves to check"
        # Moves start from the fit run to COARSE times tol: that is the
        # resolution a move's gain must exceed.
        threshold = max(COARSE * est.tol, 1e-6)
        for move in est.split_merge_moves_:
            gain = move["bound_after"] - move["bound_before"]
            assert move["accepted"] == (gain > threshold * abs(move["bound_before"]))
    assert [m["accepted"] for m in e32.split_merge_moves_] == [
        m["accepted"] for m in e64.split_merge_moves_
    ]
    # The same topics in the same slots: each float32 topic is nearest to
    # the float64 topic of its own index (the permutation was the defect).
    p32, p64 = normalize_rows(e32.components_)[0], normalize_rows(e64.components_)[0]
    distance = np.abs(p32[:, None, :] - p64[None, :, :]).sum(axis=2)
    assert_array_equal(distance.argmin(axis=1), np.arange(5))
    assert distance.diagonal().max() < 0.1


def test_gamma_poisson_partial_fit_runs_ldavi_default_schedule():
    # GammaPoissonVI has no online parameters: its partial_fit is LDAVI's at
    # LDAVI's default schedule (documented), so by Lemma E.3 its topics are
    # those of LDAVI with point-estimate topics -- and not those of another
    # schedule.
    alpha = np.array([0.3, 1.0, 0.1, 2.0])
    common = dict(doc_topic_prior=alpha, random_state=0)
    gap = GammaPoissonVI(K, **common)
    lda = LDAVI(K, topic_word_prior=None, **common)
    assert (lda.learning_offset, lda.learning_decay) == (10.0, 0.7)
    assert (lda.batch_size, lda.total_samples) == (128, 1e6)
    other = LDAVI(K, topic_word_prior=None, batch_size=64, **common)
    for model in (gap, lda, other):
        model.partial_fit(X).partial_fit(X)
    assert_allclose(gap.components_, lda.components_, rtol=1e-10)
    assert gap.n_batch_iter_ == lda.n_batch_iter_
    assert not np.allclose(other.components_, lda.components_, rtol=1e-3)
