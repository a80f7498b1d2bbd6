"""Tests for sklearn_topicfac.model_selection: choosing the number of topics.

The average Jaccard agreement against its definition and hand-computed
cases, the matching's invariance to the order of the topics, stability
analysis finding planted topics (and rating wrong k clearly lower), the
held-out method against a hand-written loop over the folds, the shuffled
folds, the input checks, sparse input, parallel fits and the plot.
"""

import functools
import itertools
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from _corpora import lda_counts, planted_counts
from numpy.testing import assert_allclose, assert_array_equal
from scipy.optimize import linear_sum_assignment
from sklearn.base import clone
from sklearn.cluster import KMeans
from sklearn.decomposition import NMF
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import KFold

import sklearn_topicfac
from sklearn_topicfac import KLNMF, PLSI, metrics
from sklearn_topicfac.model_selection import (
    NComponentsSelection,
    select_n_components,
    shuffled_folds,
    topic_agreement,
)

SEED_MAX = np.iinfo(np.int32).max


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        yield


def _ranked(*rankings, n_features=10):
    """Topic-term weights whose rows rank the terms as given, best first."""
    H = np.zeros((len(rankings), n_features))
    for z, ranking in enumerate(rankings):
        H[z, list(ranking)] = np.arange(len(ranking), 0, -1)
    return H


def _average_jaccard(a, b):
    """The definition: (1/t) sum_d |a[:d] & b[:d]| / |a[:d] | b[:d]|."""
    t = len(a)
    return np.mean(
        [
            len(set(a[:d]) & set(b[:d])) / len(set(a[:d]) | set(b[:d]))
            for d in range(1, t + 1)
        ]
    )


# -------------------------------------------------------- topic agreement
def test_identical_rankings_agree_fully_and_disjoint_ones_not_at_all():
    H = _ranked([0, 1, 2, 3], [4, 5, 6, 7])
    assert topic_agreement(H, H, n_top=4) == 1.0
    assert topic_agreement(_ranked([0, 1, 2]), _ranked([3, 4, 5]), n_top=3) == 0.0


def test_average_jaccard_of_hand_computed_rankings():
    # d=1: {0} vs {0} -> 1; d=2: {0,1} vs {0,2} -> 1/3; d=3: equal -> 1.
    assert_allclose(
        topic_agreement(_ranked([0, 1, 2]), _ranked([0, 2, 1]), n_top=3), 7 / 9
    )
    # d=1: {0} vs {3} -> 0; d=2: {0,1} vs {3,0} -> 1/3; d=3: {0,1,2} vs
    # {3,0,1} -> 2/4.  Mean (0 + 1/3 + 1/2) / 3 = 5/18.
    assert_allclose(
        topic_agreement(_ranked([0, 1, 2]), _ranked([3, 0, 1]), n_top=3), 5 / 18
    )
    # Only the top n_top terms count: the rankings differ from the third on.
    assert topic_agreement(_ranked([0, 1, 2]), _ranked([0, 1, 5]), n_top=2) == 1.0


def test_agreement_equals_the_definition_with_hungarian_matching():
    rng = np.random.default_rng(0)
    k, m, t = 5, 30, 8
    A, B = rng.random((k, m)) ** 4, rng.random((k, m)) ** 4
    top_a = np.argsort(-A, axis=1)[:, :t]
    top_b = np.argsort(-B, axis=1)[:, :t]
    S = np.array([[_average_jaccard(a, b) for b in top_b] for a in top_a])
    rows, cols = linear_sum_assignment(S, maximize=True)
    assert_allclose(topic_agreement(A, B, n_top=t), S[rows, cols].mean())
    # Brute force over all matchings agrees with the Hungarian method.
    best = max(
        np.mean([S[i, p[i]] for i in range(k)])
        for p in itertools.permutations(range(k))
    )
    assert_allclose(topic_agreement(A, B, n_top=t), best)


def test_agreement_ignores_the_order_and_the_scale_of_the_topics():
    rng = np.random.default_rng(1)
    A, B = rng.random((6, 40)), rng.random((6, 40))
    value = topic_agreement(A, B, n_top=10)
    for perm in (rng.permutation(6), rng.permutation(6)):
        assert_allclose(topic_agreement(A[perm], B, n_top=10), value)
        assert_allclose(topic_agreement(A, B[perm], n_top=10), value)
    assert_allclose(topic_agreement(B, A, n_top=10), value)  # symmetric
    scaled = A * rng.random((6, 1)) * 100  # P(w|z) or counts: same ranking
    assert_allclose(topic_agreement(scaled, B, n_top=10), value)
    assert 0.0 < value < 1.0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_top": 0}, "n_top must be an integer between 1 and"),
        ({"n_top": 11}, "n_top must be an integer between 1 and"),
        ({"n_top": 2.5}, "n_top must be an integer"),
    ],
)
def test_agreement_rejects_bad_n_top(kwargs, match):
    H = _ranked([0, 1, 2])
    with pytest.raises(ValueError, match=match):
        topic_agreement(H, H, **kwargs)


def test_agreement_rejects_topics_of_different_shapes():
    with pytest.raises(ValueError, match="same shape"):
        topic_agreement(np.ones((2, 5)), np.ones((3, 5)))


# --------------------------------------------------------------- stability
@pytest.mark.parametrize(
    "seed", [0, *(pytest.param(s, marks=pytest.mark.slow) for s in (1, 2))]
)
def test_stability_finds_the_planted_number_of_topics(seed):
    X = planted_counts(n=200, m=60, k=4, seed=seed)

    def select(**params):
        return select_n_components(
            KLNMF(init="random", max_iter=100, **params),
            X,
            [2, 3, 4, 5, 6],
            n_subsamples=5,
            n_top=10,
            random_state=0,
        )

    # Coordinate descent (a default before diagonal Newton) finds it too; the margins
    # below were measured with the multiplicative updates (with "cd" the
    # narrowest is 0.11, seed 2, k = 3).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        assert select(solver="cd").best_n_components == 4
        result = select(solver="mu")
    assert result.best_n_components == 4
    scores = dict(zip(result.candidates, result.scores, strict=True))
    # Clearly, not by a hair: the planted topics come back every time, a
    # split or a merge of them does not.
    assert scores[4] > 0.9
    for k in (2, 3, 5, 6):
        assert scores[4] - scores[k] > 0.15


def test_stability_result_attributes():
    X = lda_counts(n=80, m=40, k=3, seed=2)
    result = select_n_components(
        PLSI(max_iter=30), X, [4, 2, 3, 2], n_subsamples=3, n_top=5, random_state=0
    )
    assert isinstance(result, NComponentsSelection)
    assert result.method == "stability"
    assert_array_equal(result.candidates, [2, 3, 4])  # sorted, deduplicated
    assert result.split_scores.shape == (3, 3)  # candidates x subsamples
    assert_allclose(result.scores, result.split_scores.mean(axis=1))
    assert_allclose(result.scores_std, result.split_scores.std(axis=1))
    assert ((result.split_scores >= 0) & (result.split_scores <= 1)).all()
    assert result.best_n_components == result.candidates[np.argmax(result.scores)]
    text = repr(result)
    assert text.startswith("NComponentsSelection(method='stability'")
    assert len(text.splitlines()) == 2 + 3
    best_line = [line for line in text.splitlines() if "*" in line]
    assert best_line[0].split()[1] == str(result.best_n_components)


def test_stability_compares_each_subsample_model_with_the_reference():
    # The documented seeds and subsamples, rebuilt by hand.
    X = planted_counts(n=60, m=40, k=3, seed=4)
    n_subsamples, subsample, n_top = 3, 0.7, 8
    result = select_n_components(
        KLNMF(max_iter=50),
        X,
        [2, 3],
        n_subsamples=n_subsamples,
        subsample=subsample,
        n_top=n_top,
        random_state=7,
    )
    rng = np.random.RandomState(7)
    seeds = rng.randint(SEED_MAX, size=n_subsamples + 1)
    size = round(subsample * X.shape[0])
    subsets = [
        np.sort(rng.choice(X.shape[0], size=size, replace=False))
        for _ in range(n_subsamples)
    ]
    for i, k in enumerate([2, 3]):
        reference = KLNMF(n_components=k, max_iter=50, random_state=seeds[0]).fit(X)
        for j, rows in enumerate(subsets):
            model = KLNMF(n_components=k, max_iter=50, random_state=seeds[j + 1])
            model.fit(X[rows])
            expected = topic_agreement(
                reference.components_, model.components_, n_top=n_top
            )
            assert_allclose(result.split_scores[i, j], expected)


def test_same_seed_same_result_and_the_estimator_is_untouched():
    X = planted_counts(n=50, m=30, k=3, seed=5)
    estimator = KLNMF(max_iter=40, random_state=123)
    params = estimator.get_params()
    runs = [
        select_n_components(
            estimator, X, [2, 3], n_subsamples=2, n_top=5, random_state=3
        )
        for _ in range(2)
    ]
    assert_array_equal(runs[0].split_scores, runs[1].split_scores)
    assert estimator.get_params() == params
    assert not hasattr(estimator, "components_")


def test_parallel_fits_give_the_same_result():
    X = planted_counts(n=50, m=30, k=3, seed=6)
    kwargs = dict(n_subsamples=2, n_top=5, random_state=0)
    one = select_n_components(KLNMF(max_iter=40), X, [2, 3], n_jobs=1, **kwargs)
    two = select_n_components(KLNMF(max_iter=40), X, [2, 3], n_jobs=2, **kwargs)
    assert_array_equal(one.split_scores, two.split_scores)


def test_any_estimator_with_n_components_and_components():
    # scikit-learn's own NMF (Frobenius, as Greene et al. use it) works too.
    X = planted_counts(n=60, m=30, k=3, seed=8)
    result = select_n_components(
        NMF(init="nndsvda", max_iter=200),
        X,
        [2, 3, 4],
        n_subsamples=2,
        n_top=5,
        random_state=0,
    )
    assert result.scores.shape == (3,)


# ---------------------------------------------------------------- held out
def test_held_out_equals_a_loop_over_the_folds():
    X = planted_counts(n=60, m=40, k=3, seed=9)
    cv = shuffled_folds(3, random_state=1)
    result = select_n_components(
        KLNMF(max_iter=50), X, [2, 4], method="held_out", cv=cv, random_state=0
    )
    seeds = np.random.RandomState(0).randint(SEED_MAX, size=3)
    expected = [
        [
            KLNMF(n_components=k, max_iter=50, random_state=seed)
            .fit(X[train])
            .score(X[test])
            for seed, (train, test) in zip(seeds, cv.split(X), strict=True)
        ]
        for k in (2, 4)
    ]
    assert result.method == "held_out"
    assert_allclose(result.split_scores, expected)
    assert_allclose(result.scores, np.mean(expected, axis=1))
    assert result.best_n_components == (2, 4)[int(np.argmax(result.scores))]


def test_held_out_default_folds_are_shuffled_folds_seeded_after_the_fits():
    X = planted_counts(n=60, m=40, k=3, seed=10)
    result = select_n_components(
        KLNMF(max_iter=50), X, [3], method="held_out", cv=4, random_state=2
    )
    rng = np.random.RandomState(2)
    seeds = rng.randint(SEED_MAX, size=4)
    cv = shuffled_folds(4, random_state=rng.randint(SEED_MAX))
    expected = [
        KLNMF(n_components=3, max_iter=50, random_state=seed)
        .fit(X[train])
        .score(X[test])
        for seed, (train, test) in zip(seeds, cv.split(X), strict=True)
    ]
    assert_allclose(result.split_scores[0], expected)


# ------------------------------------------------------ information criteria
@pytest.mark.parametrize("method", ["aic", "bic"])
def test_criteria_equal_the_metrics_of_one_fit_per_k(method):
    X = planted_counts(n=60, m=40, k=3, seed=13)
    result = select_n_components(
        PLSI(max_iter=50), X, [2, 3, 5], method=method, random_state=4
    )
    seed = np.random.RandomState(4).randint(SEED_MAX)
    n_words = X.sum()
    expected = [
        -getattr(metrics, method)(
            PLSI(n_components=k, max_iter=50, random_state=seed).fit(X), X
        )
        / (2 * n_words)
        for k in (2, 3, 5)
    ]
    assert result.method == method
    assert result.split_scores.shape == (3, 1)
    assert_allclose(result.scores, expected, rtol=1e-12)
    assert result.best_n_components == (2, 3, 5)[int(np.argmax(expected))]


@pytest.mark.parametrize("seed", [0, 1])
def test_criteria_find_the_planted_number_of_topics(seed):
    def chosen(method, length):
        X = planted_counts(n=200, m=60, k=4, seed=seed, length=length)
        return select_n_components(
            KLNMF(), X, [2, 3, 4, 5, 6], method=method, random_state=0
        ).best_n_components

    # AIC finds the 4 planted topics in documents of 40 words; BIC, whose
    # penalty per parameter is log N, underestimates there (it chose 3 or 2
    # on four of the seeds 0-4) and needs longer documents.
    assert chosen("aic", 40) == 4
    assert chosen("bic", 40) < 4
    assert chosen("bic", 400) == 4


def test_bic_never_chooses_more_topics_than_aic_from_the_same_fits():
    # BIC - AIC = p (log N - 2), increasing in k when log N > 2: with the
    # same fits (same seed), BIC's argmin cannot lie above AIC's.
    X = lda_counts(n=120, m=50, k=4, seed=3)
    args = (PLSI(max_iter=60), X, [1, 2, 3, 4, 6, 8, 12])
    aic = select_n_components(*args, method="aic", random_state=5)
    bic = select_n_components(*args, method="bic", random_state=5)
    assert np.log(X.sum()) > 2
    assert bic.best_n_components <= aic.best_n_components
    # Per word, BIC's penalty exceeds AIC's by p (log N - 2) / (2 N).
    assert np.all(bic.scores < aic.scores)


def test_criteria_need_a_topic_model_of_the_package():
    X = planted_counts(n=40, m=20, k=2, seed=14)
    with pytest.raises(TypeError, match="topic_proportions"):
        select_n_components(NMF(max_iter=50), X, [2, 3], method="aic")


# ---------------------------------------------------------- shuffled folds
def test_shuffled_folds_mix_a_class_sorted_corpus():
    y = np.repeat([0, 1, 2], 30)  # sorted by class, as corpora often are
    X = np.zeros((90, 2))
    cv = shuffled_folds(3, random_state=0)
    assert isinstance(cv, KFold) and cv.shuffle and cv.get_n_splits() == 3
    for train, test in cv.split(X):
        assert set(y[test]) == {0, 1, 2}
        assert set(y[train]) == {0, 1, 2}
    # What cv=3 would do: each fold tests on a class never seen in training.
    for train, test in KFold(3).split(X):
        assert len(set(y[test])) == 1 and set(y[test]).isdisjoint(y[train])


def test_shuffled_folds_are_reproducible_with_a_seed():
    X = np.zeros((40, 2))

    def tests(cv):
        return [test.tolist() for _, test in cv.split(X)]

    assert tests(shuffled_folds(4, random_state=3)) == tests(
        shuffled_folds(4, random_state=3)
    )
    assert tests(shuffled_folds(4, random_state=3)) != tests(
        shuffled_folds(4, random_state=4)
    )


# ------------------------------------------------------------------- input
class _SparseOnlyKLNMF(KLNMF):
    """KLNMF that fails if given anything but a sparse matrix."""

    def fit(self, X, y=None, **kwargs):
        assert sp.issparse(X), type(X)
        return super().fit(X, y, **kwargs)

    def score(self, X, y=None):
        assert sp.issparse(X), type(X)
        return super().score(X, y)


@pytest.mark.parametrize("method", ["stability", "held_out", "aic"])
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_sparse_input_is_neither_densified_nor_modified(method, fmt):
    X = planted_counts(n=45, m=30, k=3, seed=11).asformat(fmt)
    before = X.copy()
    kwargs = {"n_subsamples": 2, "n_top": 5} if method == "stability" else {}
    select_n_components(
        _SparseOnlyKLNMF(max_iter=30),
        X,
        [2, 3],
        method=method,
        random_state=0,
        **kwargs,
    )
    assert X.format == fmt
    assert (X != before).nnz == 0
    for attribute in ("data", "indices", "indptr", "row", "col"):
        if hasattr(before, attribute):
            assert_array_equal(getattr(X, attribute), getattr(before, attribute))


def test_dense_input_is_not_modified():
    X = planted_counts(n=45, m=30, k=3, seed=12, sparse=False)
    before = X.copy()
    select_n_components(
        KLNMF(max_iter=30), X, [2, 3], n_subsamples=2, n_top=5, random_state=0
    )
    assert_array_equal(X, before)


X_SMALL = planted_counts(n=20, m=15, k=2, seed=13)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"method": "perplexity"}, "method must be one of 'stability', 'held_out'"),
        ({"candidates": []}, "candidates must be a non-empty"),
        ({"candidates": [[2, 3]]}, "candidates must be a non-empty 1-D"),
        ({"candidates": [2, 2.5]}, "candidates must be integers"),
        ({"candidates": [True, 2]}, "candidates must be integers"),
        ({"candidates": [0, 2]}, "at least 2 for method='stability'"),
        ({"candidates": [1, 2]}, "single topic .* trivially stable"),
        (
            {"candidates": [0, 2], "method": "held_out"},
            "at least 1 for method='held_out'",
        ),
        ({"candidates": [2, 21]}, r"at most the number of documents \(20\)"),
        ({"n_subsamples": 0}, "n_subsamples must be a positive integer"),
        ({"subsample": 0.0}, r"subsample .* must be in \(0, 1\]"),
        ({"subsample": 1.5}, r"subsample .* must be in \(0, 1\]"),
        ({"n_top": 0}, "n_top must be an integer between 1 and"),
        ({"n_top": 16}, r"number of features \(15\)"),
        ({"cv": 3}, "cv is used only by method='held_out'"),
    ],
)
def test_bad_arguments_are_refused_with_the_fix(kwargs, match):
    arguments = {"candidates": [2, 3], **kwargs}
    candidates = arguments.pop("candidates")
    with pytest.raises(ValueError, match=match):
        select_n_components(KLNMF(), X_SMALL, candidates, **arguments)


def test_an_estimator_without_n_components_is_refused():
    with pytest.raises(ValueError, match="has no n_components parameter"):
        select_n_components(KMeans(), X_SMALL, [2, 3])
    with pytest.raises(TypeError, match="must be an unfitted scikit-learn"):
        select_n_components("PLSI", X_SMALL, [2, 3])


def test_negative_input_is_refused_by_the_estimator():
    X = X_SMALL.toarray()
    X[0, 0] = -1
    with pytest.raises(ValueError, match="[Nn]egative"):
        select_n_components(clone(KLNMF()), X, [2], method="held_out")


# -------------------------------------------------------------------- plot
def test_plot_returns_the_axes():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    result = NComponentsSelection([2, 3, 5], [[0.5, 0.6], [0.9, 0.8], [0.4, 0.5]], "x")
    ax = result.plot()
    assert ax.get_xlabel() == "n_components"
    line = ax.lines[0]
    assert_array_equal(line.get_xdata(), [2, 3, 5])
    assert_allclose(line.get_ydata(), [0.55, 0.85, 0.45])
    _, given = plt.subplots()
    assert result.plot(ax=given) is given
    plt.close("all")


def test_result_checks_its_shapes():
    with pytest.raises(ValueError, match="one row per candidate"):
        NComponentsSelection([2, 3], [[0.5], [0.6], [0.7]], "stability")


# ------------------------------------------------ the README's recipe
REPO_ROOT = Path(__file__).resolve().parents[1]


def _recipe(path):
    """The python block of ``path`` that calls select_n_components."""
    blocks = re.findall(r"```python\n(.*?)```", path.read_text(), re.S)
    (recipe,) = [b for b in blocks if "select_n_components(" in b]
    return recipe


def test_the_readme_recipe_reports_progress_and_flags_the_edge(capsys, monkeypatch):
    recipe = _recipe(REPO_ROOT / "README.md")
    # One recipe: the guide shows the same text.
    assert _recipe(REPO_ROOT / "docs" / "guide" / "choosing_k.md") == recipe
    assert "KFold(3, shuffle=True, random_state=0)" in recipe
    # Six planted topics; the recipe's grid 2, 4, ..., 20 on a small corpus.
    X = planted_counts(n=90, m=40, k=6, seed=1, length=60)
    # The recipe's PLSI, with fewer iterations and no split-merge moves: the
    # thirty fits in well under a second.
    fast = functools.partial(sklearn_topicfac.PLSI, max_iter=30, split_merge=0)
    monkeypatch.setattr(sklearn_topicfac, "PLSI", fast)
    namespace = {"X": X}
    exec(compile(recipe, "README.md", "exec"), namespace)
    selection = namespace["selection"]
    out = capsys.readouterr().out
    fits = re.findall(
        r"^\[select_n_components\] fit (\d+)/30 \(n_components=(\d+)\) done, "
        r"[\d.]+ s, about \d+ s left$",
        out,
        re.M,
    )
    assert [int(i) for i, _ in fits] == list(range(1, 31))
    assert [int(k) for _, k in fits] == [k for k in range(2, 21, 2) for _ in range(3)]
    assert "held_out: 30 fits, 3 for each of the 10 candidates" in out
    assert f"best n_components={selection.best_n_components}" in out
    assert selection.best_n_components in (4, 6, 8) and not selection.at_edge
    assert "extend the candidates" not in out


def test_the_readme_recipe_sums_up_unconverged_fits_in_one_warning(monkeypatch):
    # The same recipe with fits cut short: its 30 fits stop by max_iter, and
    # the recipe shows one ConvergenceWarning for all of them, not 30.
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    recipe = _recipe(REPO_ROOT / "README.md")
    X = planted_counts(n=90, m=40, k=6, seed=1, length=60)
    short = functools.partial(sklearn_topicfac.PLSI, max_iter=2, split_merge=0)
    monkeypatch.setattr(sklearn_topicfac, "PLSI", short)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(compile(recipe, "README.md", "exec"), {"X": X, "print": lambda *a: None})
    convergence = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert [str(w.message).split(" fits")[0] for w in convergence] == ["30 of 30"]


def test_a_choice_at_the_edge_of_the_grid_is_flagged():
    # Six planted topics and a grid that stops at 3: the best k is its last.
    X = planted_counts(n=90, m=40, k=6, seed=1, length=60)
    with pytest.warns(UserWarning, match="n_components=3 is the largest candidate"):
        upper = select_n_components(
            KLNMF(), X, [2, 3], method="held_out", random_state=0
        )
    assert upper.at_edge and upper.edge == "upper"
    assert "at the upper edge of the grid" in repr(upper)
    # A grid above the truth whose first candidate is best: the lower edge.
    lower = NComponentsSelection([8, 10, 12], [[0.9], [0.8], [0.7]], "held_out")
    assert lower.edge == "lower" and "below 8" in lower.edge_message()
    # Stability cannot go below 2: a best k of 2 at the start is an answer.
    assert NComponentsSelection([2, 3], [[0.9], [0.5]], "stability").edge is None
    inside = NComponentsSelection([2, 3, 4], [[0.5], [0.9], [0.7]], "held_out")
    assert not inside.at_edge and inside.edge_message() is None


def test_unconverged_fits_are_summed_up_in_one_warning():
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from sklearn_topicfac import KLNMF
    from sklearn_topicfac.model_selection import select_n_components

    rng = np.random.default_rng(0)
    X = rng.poisson(3.0, size=(30, 12))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        select_n_components(
            KLNMF(max_iter=2, split_merge=0), X, [2, 3], method="aic", random_state=0
        )
    messages = [
        str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)
    ]
    assert messages == [
        "2 of 2 fits did not converge (stopped by their iteration "
        "limit); raise the estimator's max_iter or tol."
    ]
