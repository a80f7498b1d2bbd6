"""Tests for the metrics: clustering scores, topic coherence and diversity, AIC/BIC."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

from sklearn_topicfac.metrics import (
    aic,
    bic,
    clustering_accuracy,
    clustering_disagreement,
    clustering_entropy,
    clustering_purity,
    clustering_scores,
    npmi_coherence,
    topic_diversity,
    umass_coherence,
)


def _brute_force_accuracy(labels_true, labels_pred):
    """Best accuracy over every one-to-one cluster-to-class matching.

    Independent of the implementation under test: it enumerates the
    injective maps explicitly instead of solving an assignment problem.
    """
    labels_true = list(labels_true)
    labels_pred = list(labels_pred)
    classes = sorted(set(labels_true))
    clusters = sorted(set(labels_pred))
    # Pad with None so every cluster can also stay unmatched.
    padded = classes + [None] * len(clusters)
    best = 0
    for image in itertools.permutations(padded, len(clusters)):
        mapping = dict(zip(clusters, image, strict=True))
        correct = sum(
            mapping[p] == t for t, p in zip(labels_true, labels_pred, strict=True)
        )
        best = max(best, correct)
    return best / len(labels_true)


def test_perfect_clustering_relabeled():
    y_true = [0, 0, 1, 1, 1, 2, 2]
    y_pred = [5, 5, 3, 3, 3, 9, 9]
    assert clustering_accuracy(y_true, y_pred) == 1.0


def test_two_clusters_three_classes():
    # Contingency (classes x clusters): [[2, 1], [0, 3], [2, 1]].
    # Best matching: cluster 1 -> class 1 (3), cluster 0 -> class 0 or 2 (2).
    y_true = [0, 0, 0, 1, 1, 1, 2, 2, 2]
    y_pred = [0, 0, 1, 1, 1, 1, 0, 0, 1]
    assert clustering_accuracy(y_true, y_pred) == pytest.approx(5 / 9)


def test_optimal_matching_beats_greedy():
    # Contingency [[3, 2], [2, 0]]: greedily taking the largest cell (3) then
    # the remaining 0 gives 3/7, but 2 + 2 = 4/7 is optimal.
    y_true = [0, 0, 0, 0, 0, 1, 1]
    y_pred = [0, 0, 0, 1, 1, 0, 0]
    assert clustering_accuracy(y_true, y_pred) == pytest.approx(4 / 7)


def test_more_clusters_than_classes_counts_unmatched_as_errors():
    # Each class is split in two; only one cluster per class can be matched.
    y_true = [0, 0, 1, 1]
    y_pred = [0, 1, 2, 3]
    assert clustering_accuracy(y_true, y_pred) == 0.5


def test_single_cluster():
    y_true = ["a", "a", "b", "c", "c", "c"]
    assert clustering_accuracy(y_true, [0] * 6) == pytest.approx(3 / 6)


def test_string_labels():
    y_true = np.array(["MED", "MED", "CISI", "CRAN"])
    y_pred = np.array([2, 2, 0, 0])
    assert clustering_accuracy(y_true, y_pred) == pytest.approx(3 / 4)


def test_single_sample():
    assert clustering_accuracy([7], [3]) == 1.0


def test_returns_python_float():
    assert type(clustering_accuracy([0, 1], [1, 0])) is float


@pytest.mark.parametrize(
    ("labels_true", "labels_pred", "match"),
    [
        ([0, 1, 2], [0, 1], "same length"),
        ([], [], "empty"),
        ([[0, 1], [1, 0]], [0, 1], "1-D"),
        ([0, 1], [[0], [1]], "1-D"),
        (0, 0, "1-D"),
    ],
)
def test_invalid_input_raises(labels_true, labels_pred, match):
    with pytest.raises(ValueError, match=match):
        clustering_accuracy(labels_true, labels_pred)


_labelings = st.integers(min_value=1, max_value=12).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 3), min_size=n, max_size=n),
        st.lists(st.integers(0, 4), min_size=n, max_size=n),
    )
)


@settings(max_examples=200, deadline=None)
@given(_labelings)
def test_matches_brute_force(pair):
    labels_true, labels_pred = pair
    expected = _brute_force_accuracy(labels_true, labels_pred)
    assert clustering_accuracy(labels_true, labels_pred) == pytest.approx(expected)


@settings(max_examples=100, deadline=None)
@given(_labelings, st.randoms(use_true_random=False))
def test_invariant_to_renaming_and_symmetric(pair, rng):
    labels_true, labels_pred = pair
    score = clustering_accuracy(labels_true, labels_pred)
    assert 0.0 < score <= 1.0

    names = list(range(10, 15))
    rng.shuffle(names)
    renamed = [names[p] for p in labels_pred]
    assert clustering_accuracy(labels_true, renamed) == pytest.approx(score)
    assert clustering_accuracy(labels_pred, labels_true) == pytest.approx(score)


# ------------------------------------------------------ purity and entropy
# A hand-computed case.  Classes x clusters:
#              cluster a  cluster b  cluster c
#   class 0        3          1          0
#   class 1        1          0          2
#   class 2        0          3          0
Y_TRUE = [0, 0, 0, 0, 1, 1, 1, 2, 2, 2]
Y_PRED = ["a", "a", "a", "b", "a", "c", "c", "b", "b", "b"]


def test_purity_hand_computed():
    # Majorities: a -> 3 (class 0), b -> 3 (class 2), c -> 2 (class 1).
    assert clustering_purity(Y_TRUE, Y_PRED) == pytest.approx(8 / 10)


def test_entropy_hand_computed():
    # Cluster a = (3, 1, 0)/4, b = (1, 0, 3)/4, c = (0, 2, 0)/2; q = 3 classes.
    h = -(0.75 * np.log(0.75) + 0.25 * np.log(0.25)) / np.log(3)
    expected = 4 / 10 * h + 4 / 10 * h + 2 / 10 * 0.0
    assert clustering_entropy(Y_TRUE, Y_PRED) == pytest.approx(expected)


def test_accuracy_hand_computed_case():
    # Best matching a -> 0 (3), b -> 2 (3), c -> 1 (2).
    assert clustering_accuracy(Y_TRUE, Y_PRED) == pytest.approx(8 / 10)


def test_purity_and_entropy_of_extreme_clusterings():
    y = [0, 0, 1, 1, 2, 2]
    relabeled = [7, 7, 3, 3, 5, 5]
    assert clustering_purity(y, relabeled) == 1.0
    assert clustering_entropy(y, relabeled) == 0.0
    # Each document alone: pure, but accuracy penalizes the split.
    singletons = list(range(6))
    assert clustering_purity(y, singletons) == 1.0
    assert clustering_entropy(y, singletons) == 0.0
    assert clustering_accuracy(y, singletons) == pytest.approx(3 / 6)
    # One cluster holding equal shares of every class: entropy 1.
    assert clustering_entropy(y, [0] * 6) == pytest.approx(1.0)
    assert clustering_purity(y, [0] * 6) == pytest.approx(2 / 6)
    # A single class: no uncertainty to measure.
    assert clustering_entropy([4, 4, 4], [0, 1, 1]) == 0.0


def test_purity_and_entropy_are_not_symmetric():
    # Merging two classes into one cluster is pure one way round only.
    a, b = [0, 0, 1, 1, 2, 2], [0, 0, 0, 0, 1, 1]
    assert clustering_purity(b, a) == 1.0 and clustering_entropy(b, a) == 0.0
    assert clustering_purity(a, b) != clustering_purity(b, a)
    assert clustering_entropy(a, b) != clustering_entropy(b, a)


# ------------------------------------------------------------ disagreement
def _co_membership(labels):
    labels = np.asarray(labels)
    return (labels[:, None] == labels[None, :]).astype(float)


def _delta_by_definition(a, b):
    """Paper 001's delta, from the explicit n x n co-membership matrices."""
    Ra, Rb = _co_membership(a), _co_membership(b)
    num = np.linalg.norm(Ra - Rb)
    den = np.sqrt(np.linalg.norm(Ra) ** 2 / 2 + np.linalg.norm(Rb) ** 2 / 2)
    return num / den


def test_disagreement_hand_computed():
    # Moving document 1 from {0, 1} to {1, 2, 3}: R changes in 6 entries,
    # ||R_a||^2 = 4 + 4, ||R_b||^2 = 1 + 9.
    assert clustering_disagreement([0, 0, 1, 1], [0, 1, 1, 1]) == pytest.approx(
        np.sqrt(6 / 9)
    )
    assert clustering_disagreement([0, 0, 1, 1], ["x", "x", "y", "y"]) == 0.0
    # All together vs all apart: n^2 - n entries differ.
    n = 5
    expected = np.sqrt((n * n - n) / ((n * n + n) / 2))
    assert clustering_disagreement([0] * n, range(n)) == pytest.approx(expected)


@settings(max_examples=150, deadline=None)
@given(_labelings)
def test_disagreement_matches_definition(pair):
    a, b = pair
    delta = clustering_disagreement(a, b)
    assert delta == pytest.approx(_delta_by_definition(a, b), abs=1e-12)
    assert delta == pytest.approx(clustering_disagreement(b, a))
    assert 0 <= delta <= np.sqrt(2)


def test_disagreement_zero_iff_same_partition():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 4, size=50)
    perm = np.array([2, 3, 0, 1])
    assert clustering_disagreement(a, perm[a]) == 0.0
    b = a.copy()
    b[0] = (b[0] + 1) % 4
    assert clustering_disagreement(a, b) > 0


# ------------------------------------------------------------ all at once
def test_clustering_scores():
    scores = clustering_scores(Y_TRUE, Y_PRED)
    assert list(scores) == ["accuracy", "purity", "entropy", "ari", "nmi"]
    assert scores["accuracy"] == clustering_accuracy(Y_TRUE, Y_PRED)
    assert scores["purity"] == clustering_purity(Y_TRUE, Y_PRED)
    assert scores["entropy"] == clustering_entropy(Y_TRUE, Y_PRED)
    assert scores["ari"] == pytest.approx(adjusted_rand_score(Y_TRUE, Y_PRED))
    assert scores["nmi"] == pytest.approx(normalized_mutual_info_score(Y_TRUE, Y_PRED))
    assert all(type(v) is float for v in scores.values())
    perfect = clustering_scores([0, 0, 1, 1], [1, 1, 0, 0])
    assert perfect == {
        "accuracy": 1.0,
        "purity": 1.0,
        "entropy": 0.0,
        "ari": 1.0,
        "nmi": 1.0,
    }


@pytest.mark.parametrize(
    "metric",
    [clustering_purity, clustering_entropy, clustering_disagreement, clustering_scores],
)
def test_new_metrics_validate_input(metric):
    with pytest.raises(ValueError, match="same length"):
        metric([0, 1, 2], [0, 1])
    with pytest.raises(ValueError, match="empty"):
        metric([], [])
    with pytest.raises(ValueError, match="1-D"):
        metric([[0, 1]], [0, 1])


# ------------------------------------------------ topic coherence, diversity
def _brute_force_coherences(weights, X, n_top, eps):
    """UMass and NPMI from explicit loops over documents and term pairs."""
    X = np.asarray(X)
    n_docs = X.shape[0]
    umass, npmi = [], []
    for row in np.asarray(weights):
        top = sorted(range(len(row)), key=lambda j: (-row[j], j))[:n_top]
        docs = [set(np.flatnonzero(X[:, j])) for j in top]
        u, v = [], []
        for i in range(len(top)):
            for j in range(i):
                both = len(docs[i] & docs[j])
                u.append(np.log((both + eps) / len(docs[j])))
                p_ij = both / n_docs
                p_i, p_j = len(docs[i]) / n_docs, len(docs[j]) / n_docs
                if p_ij == 0:
                    v.append(-1.0)
                elif p_ij == 1:
                    v.append(1.0)
                else:
                    v.append(np.log(p_ij / (p_i * p_j)) / -np.log(p_ij))
        umass.append(np.mean(u) if u else 0.0)
        npmi.append(np.mean(v) if v else 0.0)
    return np.array(umass), np.array(npmi)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("n_top", [1, 2, 5])
def test_coherences_match_their_definitions(seed, n_top):
    rng = np.random.default_rng(seed)
    X = rng.poisson(0.7, size=(25, 12)) * (rng.random((25, 12)) < 0.6)
    X[:, X.sum(axis=0) == 0] = 1  # every term occurs somewhere
    weights = rng.random((4, 12))
    weights[0, :3] = 1.0  # a tie: vocabulary order decides
    eps = [1.0, 0.5, 1e-12][seed % 3]
    umass, npmi = _brute_force_coherences(weights, X, n_top, eps)
    np.testing.assert_allclose(umass_coherence(weights, X, n_top=n_top, eps=eps), umass)
    np.testing.assert_allclose(
        npmi_coherence(weights, sp.csr_matrix(X), n_top=n_top), npmi
    )
    assert np.all(np.abs(npmi_coherence(weights, X, n_top=n_top)) <= 1 + 1e-12)


def test_umass_matches_gensim():
    # gensim is in the test extra: this comparison runs wherever the tests do.
    from gensim.corpora import Dictionary
    from gensim.models.coherencemodel import CoherenceModel

    rng = np.random.default_rng(0)
    X = rng.poisson(0.6, size=(40, 15))
    X[:, X.sum(axis=0) == 0] = 1
    vocab = [f"w{j}" for j in range(15)]
    texts = [
        [vocab[j] for j in np.flatnonzero(row) for _ in range(row[j])] for row in X
    ]
    dictionary = Dictionary([vocab])  # ids in vocabulary order
    corpus = [dictionary.doc2bow(t) for t in texts]
    weights = rng.random((3, 15))
    top = np.argsort(-weights, axis=1, kind="stable")[:, :6]
    ours = umass_coherence(weights, X, n_top=6, eps=1e-12 * X.shape[0])
    theirs = CoherenceModel(
        topics=[[vocab[j] for j in row] for row in top],
        corpus=corpus,
        dictionary=dictionary,
        coherence="u_mass",
    ).get_coherence_per_topic()
    np.testing.assert_allclose(ours, theirs, rtol=1e-9)


def test_coherence_on_fitted_topics_ranks_real_topics_above_shuffled():
    from sklearn_topicfac import PLSI
    from sklearn_topicfac.datasets import load_classic3

    X, _ = load_classic3(return_X_y=True)
    model = PLSI(n_components=3, random_state=0, max_iter=30).fit(X)
    shuffled = np.random.default_rng(0).permuted(model.components_, axis=1)
    assert umass_coherence(model, X).mean() > umass_coherence(shuffled, X).mean()
    assert npmi_coherence(model, X).mean() > npmi_coherence(shuffled, X).mean()
    assert npmi_coherence(model, X).mean() > 0.1


def test_coherence_errors():
    X = np.array([[1, 1, 0], [0, 1, 0]])
    with pytest.raises(ValueError, match="never occur in X"):
        umass_coherence([[0.1, 0.2, 0.7]], X, n_top=2)
    with pytest.raises(ValueError, match="3 features"):
        npmi_coherence([[0.5, 0.5, 0.0, 0.0]], X)
    with pytest.raises(ValueError, match="n_top"):
        npmi_coherence([[0.5, 0.5, 0.0]], X, n_top=0)
    with pytest.raises(ValueError, match="non-negative"):
        npmi_coherence([[0.5, 0.5, 0.0]], -np.ones((2, 3)))
    with pytest.raises(ValueError, match="2-D"):
        topic_diversity([0.5, 0.5])


def test_topic_diversity():
    distinct = np.eye(4)
    assert topic_diversity(distinct, n_top=1) == 1.0
    same = np.tile([0.4, 0.3, 0.2, 0.1], (5, 1))
    assert topic_diversity(same, n_top=2) == pytest.approx(1 / 5)
    # n_top larger than the vocabulary: every term of every topic.
    assert topic_diversity(same, n_top=10) == pytest.approx(4 / 20)


# ------------------------------------------------------- information criteria
def test_aic_bic_formulas():
    from sklearn_topicfac import KLNMF

    rng = np.random.default_rng(0)
    X = rng.poisson(2.0, size=(30, 12)).astype(float)
    est = KLNMF(n_components=3, random_state=0).fit(X)
    # The criteria fold in to tol, as the score does, not to transform_tol.
    folded = KLNMF(n_components=3, random_state=0, transform_tol=est.tol).fit(X)
    theta = folded.topic_proportions(sp.csr_matrix(X))
    assert not np.allclose(theta, est.topic_proportions(sp.csr_matrix(X)))
    phi = est.topic_word_distributions()
    P = theta @ phi
    log_likelihood = np.sum(np.where(X > 0, X * np.log(np.where(X > 0, P, 1)), 0))
    p = 3 * (12 - 1) + 30 * (3 - 1)
    assert aic(est, X) == pytest.approx(-2 * log_likelihood + 2 * p, rel=1e-10)
    assert bic(est, X) == pytest.approx(
        -2 * log_likelihood + p * np.log(X.sum()), rel=1e-10
    )


def test_information_criteria_errors():
    from sklearn_topicfac import PLSI, SimplexPLSA

    X = np.abs(np.random.default_rng(0).normal(size=(20, 4)))
    with pytest.raises(TypeError, match="not a topic model of count data"):
        aic(SimplexPLSA(n_components=2, max_iter=5).fit(X), X)
    with pytest.raises(ValueError, match="no words"):
        bic(PLSI(n_components=2).fit(X), np.zeros((2, 4)))
