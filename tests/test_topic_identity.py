"""Topic identity across fits: align_topics, topic_stability, topic_lineage."""

import itertools
import warnings

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.pipeline import make_pipeline

from sklearn_topicfac import KLNMF, LDAVI, PLSI
from sklearn_topicfac.datasets import load_classic3
from sklearn_topicfac.inspection import (
    align_topics,
    topic_distances,
    topic_lineage,
    topic_stability,
)

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _block_corpus(n_topics, words=20, n=300, seed=0):
    """Documents of ``n_topics`` planted topics on disjoint blocks of words."""
    rng = np.random.default_rng(seed)
    blocks = np.kron(np.eye(n_topics), np.ones((1, words))) / words
    theta = rng.dirichlet(np.full(n_topics, 0.3), size=n)
    return rng.poisson(40 * theta @ blocks).astype(float), blocks


def _exhaustive(distances):
    """The permutation of least total distance, by trying every one."""
    k = distances.shape[0]
    best = min(
        itertools.permutations(range(k)),
        key=lambda p: distances[np.arange(k), list(p)].sum(),
    )
    return np.asarray(best)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_align_topics_is_the_optimal_matching_on_small_k(seed):
    X, _ = _block_corpus(5, seed=seed)
    a = KLNMF(5, init="random", random_state=seed, max_iter=30).fit(X)
    b = KLNMF(5, init="random", random_state=seed + 10, max_iter=30).fit(X)
    order = align_topics(a, b)
    distances = topic_distances(a, b)
    best = _exhaustive(distances)
    k = np.arange(5)
    assert sorted(order) == list(range(5))
    assert distances[k, order].sum() == pytest.approx(distances[k, best].sum())


def test_align_topics_on_a_real_corpus_matches_the_exhaustive_search():
    # Classic3 abstracts (the bundled corpus), 6 topics, two seeds.
    X, _ = load_classic3(return_X_y=True)
    X = X[::4]
    a = PLSI(6, init="random", random_state=0, max_iter=60).fit(X)
    b = PLSI(6, init="random", random_state=1, max_iter=60).fit(X)
    order = align_topics(a, b)
    distances = topic_distances(a, b)
    k = np.arange(6)
    assert distances[k, order].sum() == pytest.approx(
        distances[k, _exhaustive(distances)].sum(), rel=1e-12
    )
    # Renumbering the other fit's topics renumbers the matching with them.
    shuffled = np.random.default_rng(0).permutation(6)
    b.components_ = b.components_[shuffled]
    assert_array_equal(shuffled[align_topics(a, b)], order)


def test_align_topics_takes_pipelines_and_refuses_other_shapes():
    docs = ["cats chase mice", "mice fear cats", "stocks fell", "bonds fell"] * 5
    pipe = make_pipeline(CountVectorizer(), PLSI(2, random_state=0)).fit(docs)
    assert_array_equal(align_topics(pipe, pipe), [0, 1])
    three = make_pipeline(CountVectorizer(), PLSI(3, random_state=0)).fit(docs)
    with pytest.raises(ValueError, match="topic_lineage"):
        align_topics(pipe, three)


def test_topic_stability_separates_a_split_topic_from_stable_ones():
    # Three planted topics fitted with four: one planted topic is split in
    # two, differently from seed to seed; the topics of the other two are
    # found again by every refit.
    X, blocks = _block_corpus(3)
    model = PLSI(4, init="random", random_state=0).fit(X)
    scores = topic_stability(model, X, n_runs=5, random_state=0)
    assert scores.shape == (4,) and np.all((scores >= 0) & (scores <= 1))
    owner = np.argmax(model.components_ @ blocks.T, axis=1)
    shared = [z for z in range(4) if np.sum(owner == owner[z]) > 1]
    alone = [z for z in range(4) if z not in shared]
    assert len(shared) == 2 and len(alone) == 2
    assert scores[alone].min() > 0.75
    assert scores[shared].min() < 0.5


def test_topic_stability_of_a_pipeline_and_its_reproducibility():
    docs = ["cats chase mice", "mice fear cats", "stocks fell", "bonds fell"] * 5
    pipe = make_pipeline(CountVectorizer(), LDAVI(2, random_state=0)).fit(docs)
    a = topic_stability(pipe, docs, n_runs=2, random_state=3)
    b = topic_stability(pipe, docs, n_runs=2, random_state=3)
    assert_array_equal(a, b)
    with pytest.raises(ValueError, match="n_runs"):
        topic_stability(pipe, docs, n_runs=0)


def test_topic_lineage_recovers_a_planted_split_and_its_merge():
    X, blocks = _block_corpus(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        two = PLSI(2, random_state=0).fit(X)
        three = PLSI(3, random_state=0).fit(X)
    covers = (two.components_ @ blocks.T) > 0.2 / blocks.shape[1]
    (merged_topic,) = np.flatnonzero(covers.sum(axis=1) == 2)
    lineage = topic_lineage(two, three)
    assert list(lineage.split) == [merged_topic]
    children = lineage.split[merged_topic]
    planted = np.argmax(three.components_ @ blocks.T, axis=1)
    assert sorted(planted[children]) == sorted(np.flatnonzero(covers[merged_topic]))
    assert len(lineage.continued) == 1 and not lineage.appeared
    assert not lineage.vanished and not lineage.merged
    reverse = topic_lineage(three, two)
    assert reverse.merged == {merged_topic: children}
    assert "split into" in str(lineage)
