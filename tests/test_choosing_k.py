"""The held-out ``score`` every estimator shares, and choosing k with it.

``score(X)`` is a document-completion log-likelihood per word: binomial
thinning splits each document, the topic proportions are folded in on the
observed half, and the held-out half is scored.  Tested here: the split
(its distribution, determinism, independence of the batch), the score against
a from-scratch computation, its meaning for SimplexPLSA, and the property it
exists for -- ``GridSearchCV`` with the default scoring picks the true number
of topics on generated LDA corpora with 5, 10 and 20 topics (k = 2..8 on the
5-topic one, a coarse grid on the others; ``examples/choosing_k.py`` runs
k = 2..30 on all three).
"""

import copy
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _corpora import load_example, planted_counts
from _estimators import ALL_ESTIMATORS
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats
from sklearn.exceptions import ConvergenceWarning

from sklearn_topicfac import (
    KLNMF,
    LDAVI,
    PLSI,
    JointNMF,
    NormalizedNMF,
    SimplexPLSA,
)
from sklearn_topicfac.kernels import completion_split

choosing_k = load_example("choosing_k")

COUNT_ESTIMATORS = [E for E in ALL_ESTIMATORS if E is not SimplexPLSA]


# ------------------------------------------------------------------ the split
def test_split_adds_up_and_keeps_the_pattern():
    X = planted_counts(n=60, m=50, seed=3)
    observed, held = completion_split(X, seed=0)
    assert_allclose((observed + held).toarray(), X.toarray())
    for part in (observed, held):
        assert part.dtype == X.dtype
        assert (part.data > 0).all()  # no stored zeros
        assert np.array_equal(part.data, np.round(part.data))
    # Roughly half the tokens each way.
    assert abs(held.sum() / X.sum() - 0.5) < 0.02


@pytest.mark.parametrize("count", [1, 3, 64, 65, 300, 5000, 10**7])
def test_each_count_is_thinned_binomially(count):
    # 4000 distinct documents (the split depends on a document's content):
    # the held-out tokens of an entry of `count` tokens are Binomial(count, 1/2).
    n = 4000
    rows = np.repeat(np.arange(n), 2)
    cols = np.tile([0, 1], n)
    data = np.column_stack([np.full(n, count), np.arange(1, n + 1)]).ravel()
    X = sp.csr_matrix((data.astype(float), (rows, cols)), shape=(n, 2))
    held = completion_split(X, seed=1)[1].toarray()[:, 0]
    mean, var = count / 2, count / 4
    assert abs(held.mean() - mean) < 4 * np.sqrt(var / n)
    assert abs(held.var() / var - 1) < 4 * np.sqrt(2 / n)
    if count <= 64:
        # Exact: the distribution itself (chi-square goodness of fit).
        observed = np.bincount(held.astype(int), minlength=count + 1)
        expected = n * stats.binom.pmf(np.arange(count + 1), count, 0.5)
        keep = expected > 5
        chi2 = ((observed[keep] - expected[keep]) ** 2 / expected[keep]).sum()
        assert stats.chi2.sf(chi2, keep.sum() - 1) > 1e-4


def test_fractional_entries_go_whole_to_one_side():
    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.random((200, 30)) + 2.0)
    observed, held = completion_split(X, seed=0)
    fractions = np.modf(held.toarray())[0] + np.modf(observed.toarray())[0]
    assert_allclose(fractions, np.modf(X.toarray())[0], atol=1e-12)
    went = np.modf(held.toarray())[0] > 0
    assert 0.45 < went.mean() < 0.55


def test_split_is_a_function_of_each_document_and_the_seed():
    X = planted_counts(n=50, m=40, seed=1)
    obs, held = completion_split(X, seed=5)
    # The same documents in another order, among other documents: same split.
    order = np.random.default_rng(0).permutation(50)
    other = planted_counts(n=20, m=40, seed=2)
    stacked = sp.vstack([X[order], other]).tocsr()
    obs2, held2 = completion_split(stacked, seed=5)
    assert_array_equal(held2[:50].toarray(), held[order].toarray())
    # float32 input of the same counts: same split.
    held32 = completion_split(X.astype(np.float32), seed=5)[1]
    assert held32.dtype == np.float32
    assert_array_equal(held32.toarray(), held.toarray())
    # Another seed, another split.
    assert (completion_split(X, seed=6)[1] != held).nnz > 0


# ------------------------------------------------------------------ the score
def _reference_score(est, X):
    """Split, fold in on the observed half with `transform`, score the rest."""
    seed = est.random_state if isinstance(est.random_state, int) else 0
    est = _scoring(est)
    observed, held = completion_split(sp.csr_matrix(X), seed)
    theta, phi = est.topic_proportions(observed), est.topic_word_distributions()
    P = _smoothed(theta @ phi)
    rows, cols = held.nonzero()
    return np.sum(held.data * np.log(P[rows, cols])) / held.sum()


def _scoring(est):
    """``est`` folding in as its score does: the NMF family's to ``tol``,
    not to ``transform_tol`` (which only ``transform`` reads)."""
    if "transform_tol" in est.get_params():
        est = copy.deepcopy(est).set_params(transform_tol=est.tol)
    return est


def _smoothed(P):
    """The documented scoring mixture: 1e-3 of the uniform over the terms."""
    return (1 - 1e-3) * P + 1e-3 / P.shape[1]


def test_score_is_the_held_out_completion_log_likelihood():
    X = planted_counts(n=80, m=60, seed=4)
    est = PLSI(n_components=4, random_state=3).fit(X)
    observed, held = completion_split(X, seed=3)
    # For PLSI, transform is P(z|d) and components_ is P(w|z): the whole
    # definition from public pieces.
    P = _smoothed(_scoring(est).transform(observed) @ est.components_)
    rows, cols = held.nonzero()
    expected = np.sum(held.data * np.log(P[rows, cols])) / held.sum()
    assert_allclose(est.score(X), expected, rtol=1e-10)
    assert_allclose(est.perplexity(X), np.exp(-expected), rtol=1e-10)


@pytest.mark.parametrize("Estimator", COUNT_ESTIMATORS, ids=lambda cls: cls.__name__)
def test_every_estimator_scores_by_the_same_definition(Estimator):
    X = planted_counts(n=60, m=40, seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = Estimator(n_components=3, random_state=0).fit(X)
    theta = est.topic_proportions(sp.csr_matrix(X))
    phi = est.topic_word_distributions()
    assert_allclose(theta.sum(axis=1), 1, rtol=1e-10)
    assert_allclose(phi.sum(axis=1), 1, rtol=1e-10)
    assert_allclose(est.score(X), _reference_score(est, X), rtol=1e-10)
    assert_allclose(est.perplexity(X), np.exp(-est.score(X)), rtol=1e-12)


def test_normalized_nmf_scores_like_klnmf():
    # Same iterates, same model W H: the same P(w|d), hence the same score.
    X = planted_counts(n=60, m=40, seed=6)
    params = dict(n_components=3, random_state=0, max_iter=50, tol=0)
    a = KLNMF(**params).fit(X)
    b = NormalizedNMF(**params).fit(X)
    # The fold-ins start from different points (W spread evenly over the
    # topics: in P(z|d) that is uniform for NormalizedNMF's normalized topics,
    # proportional to the topic masses for KLNMF's) and only agree at
    # convergence; 50 sweeps leave a relative difference of a few 1e-6.
    assert_allclose(a.score(X), b.score(X), rtol=1e-4)


def test_score_of_a_corpus_is_the_weighted_mean_of_its_parts():
    X = planted_counts(n=90, m=50, seed=7)
    est = KLNMF(n_components=4, random_state=0).fit(X)
    parts = [X[:30], X[30:45], X[45:]]
    held_words = [completion_split(p, 0)[1].sum() for p in parts]
    scores = [est.score(p) for p in parts]
    assert_allclose(est.score(X), np.dot(held_words, scores) / sum(held_words))
    order = np.random.default_rng(1).permutation(90)
    assert_allclose(est.score(X[order]), est.score(X), rtol=1e-12)


def test_a_word_unseen_in_training_costs_log_v_over_epsilon_not_708_nats():
    # Train on documents that never use the last term; score documents that
    # do.  Unsmoothed, PLSI (maximum likelihood) gives the term probability 0
    # and each held-out token would cost the float floor, about 708 nats.
    X = np.asarray(sp.csr_matrix(planted_counts(n=120, m=40, seed=8)).toarray())
    train, test = X[:80].copy(), X[80:].copy()
    train[:, -1] = 0
    test[:, -1] = np.maximum(test[:, -1], 1)
    plsi = PLSI(n_components=3, random_state=0).fit(train)
    assert np.all(plsi.components_[:, -1] < 1e-300)  # the term is unseen
    observed, held = completion_split(sp.csr_matrix(test), 0)
    theta = _scoring(plsi).topic_proportions(observed)
    P = theta @ plsi.topic_word_distributions()
    rows, cols = held.nonzero()
    unseen = cols == 39
    assert unseen.any()
    p = (1 - 1e-3) * P[rows, cols] + 1e-3 / 40
    # The unseen term's tokens each cost log(V / epsilon), ~10.6 nats here.
    assert_allclose(-np.log(p[unseen]), np.log(40 / 1e-3), rtol=1e-9)
    expected = np.sum(held.data * np.log(p)) / held.sum()
    assert_allclose(plsi.score(test), expected, rtol=1e-10)
    # The unseen word does not dominate: the score stays within half a nat
    # per word of the score of the same documents without it, and of LDA's.
    without = test.copy()
    without[:, -1] = 0
    assert abs(plsi.score(test) - plsi.score(without)) < 0.5
    lda = LDAVI(n_components=3, random_state=0).fit(train)
    assert abs(plsi.score(test) - lda.score(test)) < 0.5


def test_held_out_score_peaks_while_the_training_fit_keeps_improving():
    X, _, _ = choosing_k.make_lda_corpus(
        4, tokens_per_topic=20_000, doc_length=100, n_features=500, random_state=1
    )
    train, test = X[: 2 * X.shape[0] // 3], X[2 * X.shape[0] // 3 :]
    loss, held_out = [], []
    for k in (2, 4, 10):
        est = PLSI(n_components=k, random_state=0).fit(train)
        loss.append(est.loss_)
        held_out.append(est.score(test))
    assert loss[0] > loss[1] > loss[2]  # in-sample: more topics, better fit
    assert held_out[1] > held_out[0] and held_out[1] > held_out[2]


def test_score_errors():
    X = planted_counts(n=30, m=20, seed=0)
    est = PLSI(n_components=2, random_state=0).fit(X)
    with pytest.raises(ValueError, match="no words"):
        est.score(np.zeros((2, 20)))
    # One document with one token: the token is either observed or held out.
    for j in range(20):
        one = np.zeros((1, 20))
        one[0, j] = 1
        if completion_split(sp.csr_matrix(one), 0)[1].nnz == 0:
            with pytest.raises(ValueError, match="held-out half"):
                est.score(one)
            break
    else:  # pragma: no cover - 20 fair coins all held out
        pytest.fail("no single-token document kept its token observed")


def test_simplex_score_is_the_cross_entropy_of_the_mapped_points():
    rng = np.random.default_rng(0)
    corners = np.array([[-2.0, -2.0, -2.0], [2.0, 2.0, 2.0], [1.0, -1.0, 0.0]])
    X = rng.dirichlet(np.ones(3), size=300) @ corners
    est = SimplexPLSA(n_components=3, random_state=0, max_iter=200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X)
    P = np.maximum(est.simplex_map_.to_simplex(X), 0)
    Q = est.transform(X) @ est.plsa_.components_
    expected = np.sum(np.where(P > 0, P * np.log(np.where(P > 0, Q, 1)), 0)) / 300
    assert_allclose(est.score(X), expected, rtol=1e-8)
    # Points inside the learned simplex are reconstructed: the score is close
    # to its maximum, minus the mean entropy of the mapped points.
    entropy = -np.sum(np.where(P > 0, P * np.log(np.where(P > 0, P, 1)), 0)) / 300
    assert -entropy - est.score(X) < 0.05 * entropy


# ------------------------------------------------------- choosing k honestly
@pytest.mark.slow
@pytest.mark.parametrize("name", ["PLSI", "KLNMF", "LDAVI"], ids=lambda name: name)
def test_grid_search_picks_the_true_number_of_topics(name):
    # The small case of examples/choosing_k.py: 5 true topics, 40,000 tokens
    # per topic (the truth is recoverable), the example's settings (default
    # but for split-merge moves, which it turns on).
    X, _, _ = choosing_k.make_lda_corpus(
        5, tokens_per_topic=40_000, doc_length=200, n_features=1_000, random_state=0
    )
    grid = list(range(2, 9))
    chosen, scores = choosing_k.choose_k(choosing_k.ESTIMATORS[name], X, grid)
    assert choosing_k.within(chosen, 5), (chosen, scores)
    # The curve rises to the truth, then falls.
    assert np.all(np.diff(scores[:3]) > 0), scores


@pytest.mark.slow
@pytest.mark.parametrize("truth", [10, 20])
@pytest.mark.parametrize("name", ["PLSI", "KLNMF", "LDAVI"], ids=lambda name: name)
def test_grid_search_picks_the_true_number_of_topics_on_the_larger_corpora(name, truth):
    # The 10- and 20-topic corpora of examples/choosing_k.py itself (50,000
    # tokens per topic), on a coarse grid from half the truth to 1.4 times
    # it (the example runs k = 2..30).  k = 28 on the 20-topic corpus is
    # where LDAVI's held-out score peaked when local optima at the true k
    # went unrepaired.
    X, _, _ = choosing_k.make_lda_corpus(truth, random_state=0)
    grid = [
        truth // 2,
        round(0.8 * truth),
        truth,
        round(1.2 * truth),
        round(1.4 * truth),
    ]
    chosen, scores = choosing_k.choose_k(
        choosing_k.ESTIMATORS[name], X, grid, refit=False
    )
    assert choosing_k.within(chosen, truth), dict(zip(grid, scores, strict=True))
    # Too few topics is clearly worse than the truth.
    assert scores[0] < scores[2], scores


def test_information_criteria_on_the_small_case():
    from sklearn_topicfac.metrics import aic, bic

    X, _, _ = choosing_k.make_lda_corpus(
        3, tokens_per_topic=20_000, doc_length=100, n_features=400, random_state=2
    )
    models = {k: JointNMF(n_components=k, random_state=0).fit(X) for k in (1, 3, 8)}
    assert bic(models[3], X) < bic(models[1], X)
    assert bic(models[3], X) < bic(models[8], X)
    assert aic(models[3], X) < aic(models[1], X)
