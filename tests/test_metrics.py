"""Tests for clustering_accuracy."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_topicfac.metrics import clustering_accuracy


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
