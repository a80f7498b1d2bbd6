"""Tests for sklearn_topicfac.inspection: top terms, pyLDAvis export, plots."""

import sys
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from _estimators import ALL_ESTIMATORS, estimators_with
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.pipeline import make_pipeline

from sklearn_topicfac import KLNMF, LDAVI, PLSI, HybridNMFPLSI, SimplexPLSA, inspection
from sklearn_topicfac.inspection import (
    TopTerms,
    plot_document_map,
    plot_loss_history,
    plot_top_terms,
    to_pyldavis,
    top_terms,
)

DOCS = [
    "cats chase mice",
    "mice fear cats and dogs",
    "dogs chase cats",
    "stocks fell sharply",
    "bond markets fell",
    "stocks and bonds rallied",
]
X = np.array([[5, 3, 0, 0], [4, 6, 1, 0], [0, 1, 6, 4], [0, 0, 3, 5]], dtype=float)
NAMES = ["cat", "dog", "stock", "bond"]

ESTIMATORS = ALL_ESTIMATORS


def _fit(Estimator, data=X, k=2):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return Estimator(n_components=k, random_state=0).fit(data)


# ---------------------------------------------------------------- top terms
@pytest.mark.parametrize("Estimator", ESTIMATORS, ids=lambda cls: cls.__name__)
def test_top_terms_of_every_estimator(Estimator):
    model = _fit(Estimator)
    table = top_terms(model, NAMES, n_top=3)
    assert table.terms.shape == table.weights.shape == (2, 3)
    C = model.components_
    for z in range(2):
        order = np.argsort(-C[z], kind="stable")[:3]
        assert table.terms[z].tolist() == [NAMES[j] for j in order]
        if C.min() >= 0:  # P(w|z): the normalized row
            assert_allclose(table.weights[z], C[z, order] / C[z].sum())
        else:  # SimplexPLSA's real-valued bases, as they are
            assert_allclose(table.weights[z], C[z, order])
    # The topics of these documents: {cat, dog} and {stock, bond}.
    firsts = {frozenset(row[:2]) for row in table.terms.tolist()}
    if Estimator is not SimplexPLSA:
        assert firsts == {frozenset({"cat", "dog"}), frozenset({"stock", "bond"})}


def test_vocabulary_sources():
    pipe = make_pipeline(CountVectorizer(), PLSI(n_components=2, random_state=0))
    pipe.fit(DOCS)
    vocab = pipe[0].get_feature_names_out()
    from_pipeline = top_terms(pipe, n_top=4)
    from_vectorizer = top_terms(pipe[-1], pipe[0], n_top=4)
    from_array = top_terms(pipe[-1], list(vocab), n_top=4)
    assert_array_equal(from_pipeline.terms, from_vectorizer.terms)
    assert_array_equal(from_pipeline.terms, from_array.terms)
    assert set(from_pipeline.terms.ravel()) <= set(vocab)
    # A DataFrame's columns are the vocabulary; without any, indices.
    df = pd.DataFrame(X, columns=NAMES)
    assert set(top_terms(_fit(KLNMF, df)).terms.ravel()) == set(NAMES)
    assert set(top_terms(_fit(KLNMF)).terms[0]) <= {f"term{j}" for j in range(4)}


def test_ties_keep_vocabulary_order_and_n_top_is_capped():
    model = _fit(PLSI)
    model.components_ = np.array([[0.25, 0.25, 0.25, 0.25], [0.1, 0.2, 0.3, 0.4]])
    table = top_terms(model, NAMES, n_top=10)
    assert table.terms[0].tolist() == NAMES
    assert table.terms[1].tolist() == NAMES[::-1]


def test_top_terms_errors():
    model = _fit(PLSI)
    with pytest.raises(ValueError, match="feature_names has 3 entries"):
        top_terms(model, NAMES[:3])
    with pytest.raises(ValueError, match="n_top"):
        top_terms(model, NAMES, n_top=0)
    with pytest.raises(Exception, match="not fitted"):
        top_terms(PLSI(), NAMES)


def test_table_string_and_frame():
    table = top_terms(_fit(PLSI), NAMES, n_top=2)
    lines = str(table).splitlines()
    assert [line.split(":")[0] for line in lines] == ["topic 0", "topic 1"]
    assert lines[0] == "topic 0: " + " ".join(table.terms[0])
    weighted = table.to_string(weights=True, decimals=2)
    assert f"{table.terms[1][0]} ({table.weights[1][0]:.2f})" in weighted
    frame = table.to_frame()
    assert list(frame.columns) == ["topic", "rank", "term", "weight"]
    assert len(frame) == 4
    wide = frame.pivot(index="rank", columns="topic", values="term")
    assert wide[1].tolist() == table.terms[1].tolist()
    assert len(table) == 2 and "n_top=2" in repr(table)
    with pytest.raises(ValueError, match="one shape"):
        TopTerms([["a"]], [[0.1, 0.2]])


# ------------------------------------------------------------------ pyLDAvis
def _check_pyldavis_contract(data, n_docs, n_terms, k):
    """What pyLDAvis.prepare needs, restated: its _input_validate (shapes, rows
    summing to one within 1e-3) and the logarithms it takes of every
    topic-term probability, of P(z|w) over the topics' sizes, and of the
    lift P(w|z) / P(w) (all finite only when every entry is positive)."""
    phi, theta = data["topic_term_dists"], data["doc_topic_dists"]
    assert phi.shape == (k, n_terms) and theta.shape == (n_docs, k)
    assert data["doc_lengths"].shape == (n_docs,)
    assert data["vocab"].shape == data["term_frequency"].shape == (n_terms,)
    for P in (phi, theta):
        assert np.all(np.isfinite(P))
        assert_allclose(P.sum(axis=1), 1, atol=1e-12)
    assert np.all(phi > 0) and np.all(theta > 0)
    # pyLDAvis's own quantities: topic sizes, term frequencies recomputed from
    # them, saliency and relevance.
    topic_freq = data["doc_lengths"] @ theta
    assert np.all(topic_freq > 0)
    term_topic_freq = phi * topic_freq[:, None]
    term_proportion = term_topic_freq.sum(axis=0) / term_topic_freq.sum()
    topic_given_term = phi / phi.sum()
    proportion = topic_freq / topic_freq.sum()
    with np.errstate(all="raise"):
        saliency = (topic_given_term * np.log(topic_given_term.T / proportion).T).sum(0)
        relevance = 0.6 * np.log(phi) + 0.4 * np.log(phi / term_proportion)
    assert np.all(np.isfinite(saliency)) and np.all(np.isfinite(relevance))


@pytest.mark.parametrize("spec", estimators_with(), ids=str)
def test_pyldavis_export_of_every_estimator(spec):
    # The maximum-likelihood fits set topic-term probabilities to exactly
    # zero (a third of them for PLSI and KLNMF on real text): pyLDAvis took
    # the log of those and failed.
    model = _fit(spec.cls)
    data = to_pyldavis(model, X, NAMES)
    _check_pyldavis_contract(data, 4, 4, 2)
    assert_array_equal(data["doc_lengths"], X.sum(axis=1))
    assert_array_equal(data["term_frequency"], X.sum(axis=0))
    assert data["vocab"].tolist() == NAMES
    if hasattr(model, "topic_proportions"):
        # The distributions score() uses, up to the export's smoothing.
        theta = model.topic_proportions(sp.csr_matrix(X))
        phi = model.topic_word_distributions()
        assert_allclose(data["doc_topic_dists"], theta, rtol=0, atol=2e-9)
        assert_allclose(data["topic_term_dists"], phi, rtol=0, atol=2e-9)


def test_pyldavis_export_floors_exact_zeros():
    # A PLSI fit of two disjoint themes: half its topic-term probabilities
    # are exactly zero, and a topic without weight is a row of zeros.
    model = _fit(PLSI)
    phi = model.topic_word_distributions()
    assert (phi == 0).any()
    data = to_pyldavis(model, X, NAMES)
    _check_pyldavis_contract(data, 4, 4, 2)
    exported = data["topic_term_dists"]
    zero = phi == 0
    assert_allclose(exported[zero], exported[zero].min())
    assert exported[zero].min() < 1e-9 < exported[~zero].min()
    # The order of the terms within each topic is kept.
    assert_array_equal(
        np.argsort(-phi, axis=1, kind="stable")[:, :2],
        np.argsort(-exported, axis=1, kind="stable")[:, :2],
    )


def test_pyldavis_export_of_a_dead_topic_and_an_empty_document():
    model = _fit(KLNMF, k=3)
    model.components_[2] = 0  # a topic that lost all its weight
    counts = np.vstack([X, np.zeros(4)])
    data = to_pyldavis(model, counts, NAMES)
    _check_pyldavis_contract(data, 5, 4, 3)
    assert_allclose(data["topic_term_dists"][2], 0.25)


def test_pyldavis_export_of_a_text_pipeline():
    pipe = make_pipeline(CountVectorizer(), LDAVI(n_components=2, random_state=0))
    pipe.fit(DOCS)
    data = to_pyldavis(pipe, DOCS)
    counts = pipe[0].transform(DOCS)
    _check_pyldavis_contract(data, len(DOCS), counts.shape[1], 2)
    assert_array_equal(data["doc_lengths"], np.asarray(counts.sum(axis=1)).ravel())
    assert data["vocab"].tolist() == pipe[0].get_feature_names_out().tolist()


# --------------------------------------------------------------------- plots
@pytest.fixture
def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")


def test_plot_top_terms(pyplot):
    model = _fit(PLSI, k=3)
    fig = plot_top_terms(model, NAMES, n_top=2, n_cols=2)
    assert len(fig.axes) == 3  # the fourth panel of the 2 x 2 grid is removed
    ax = fig.axes[1]
    assert ax.get_title() == "topic 1"
    labels = [t.get_text() for t in ax.get_yticklabels()]
    table = top_terms(model, NAMES, n_top=2)
    assert labels == table.terms[1].tolist()  # heaviest at the top
    widths = [bar.get_width() for bar in ax.patches]
    assert_allclose(widths, table.weights[1])
    assert len(plot_top_terms(model, NAMES, topics=[2]).axes) == 1


def test_plot_loss_history(pyplot):
    model = _fit(KLNMF)
    ax = plot_loss_history(model)
    x, y = ax.lines[0].get_data()
    assert_allclose(y, model.loss_history_)
    assert_array_equal(x, np.arange(model.loss_history_.size))
    hybrid = _fit(HybridNMFPLSI)
    ax = plot_loss_history(hybrid)
    # One dotted line at every switch between phases.
    assert len(ax.lines) - 1 == len(hybrid.phase_n_iter_) - 1


def test_plot_document_map(pyplot):
    model = _fit(PLSI, k=3)
    ax = plot_document_map(model, X, labels=["pets", "pets", "money", "money"])
    points = ax.collections[0].get_offsets()
    theta = model.transform(X)  # P(z|d) for PLSI
    angles = 2 * np.pi * np.arange(3) / 3 + np.pi / 2
    assert_allclose(points, theta @ np.column_stack([np.cos(angles), np.sin(angles)]))
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["money", "pets"]
    # Raw text through a pipeline; SimplexPLSA's weights are used as they are.
    pipe = make_pipeline(CountVectorizer(), KLNMF(n_components=2, random_state=0))
    pipe.fit(DOCS)
    assert plot_document_map(pipe, DOCS).collections[0].get_offsets().shape == (6, 2)
    plot_document_map(_fit(SimplexPLSA), X)


def test_plots_without_matplotlib(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match="pip install matplotlib"):
        plot_loss_history(_fit(KLNMF))


def test_metrics_and_inspection_accept_a_fitted_pipeline():
    # Every helper takes the pipeline and raw documents as it takes the
    # estimator and the counts (npmi_coherence(pipe, docs) was a TypeError).
    from sklearn_topicfac import metrics

    docs = [
        "cats chase mice",
        "mice fear cats",
        "cats and mice play",
        "stocks fell sharply",
        "bond markets fell",
        "stocks and bonds fell",
    ]
    pipe = make_pipeline(CountVectorizer(), PLSI(n_components=2, random_state=0))
    pipe.fit(docs)
    counts, model = pipe[0].transform(docs), pipe[-1]
    for name in ("npmi_coherence", "umass_coherence"):
        func = getattr(metrics, name)
        assert_array_equal(func(pipe, docs, n_top=3), func(model, counts, n_top=3))
    assert metrics.topic_diversity(pipe, n_top=3) == metrics.topic_diversity(
        model, n_top=3
    )
    assert metrics.aic(pipe, docs) == metrics.aic(model, counts)
    assert metrics.bic(pipe, docs) == metrics.bic(model, counts)
    assert_array_equal(
        inspection.document_topics(pipe, docs), model.topic_proportions(counts)
    )
    theta = inspection.document_topics(pipe, docs)
    assert theta.dtype == np.float64 and theta.shape == (6, 2)
