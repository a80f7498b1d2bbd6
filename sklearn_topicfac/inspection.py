"""Reading fitted topic models: top terms, pyLDAvis export, plots.

Every function takes a fitted estimator of the package, or a
:class:`~sklearn.pipeline.Pipeline` whose last step is one (e.g.
``make_pipeline(CountVectorizer(), PLSI())``).  From a pipeline the
vocabulary is read off the steps before the estimator, and documents are
passed through them, so raw text can be given where documents are expected.

- :func:`top_terms` -- the heaviest terms of each topic with their
  probabilities, as a :class:`TopTerms` table (``print`` it, or
  ``.to_frame()`` for a pandas DataFrame);
- :func:`document_topics` -- the documents' topic proportions
  :math:`P(z \\mid d)`, from raw text through a pipeline;
- :func:`to_pyldavis` -- the keyword arguments of ``pyLDAvis.prepare``;
- :func:`write_report` -- a self-contained HTML report (top terms,
  coherence, inter-topic distance map, document map), no extra needed;
- :func:`align_topics`, :func:`topic_stability`, :func:`topic_lineage`,
  :func:`topic_distances` -- topic identity across fits: the same topics
  under the same numbers, how reliably a topic is found, which topics
  split or merged between two numbers of topics;
- :func:`plot_top_terms`, :func:`plot_loss_history`,
  :func:`plot_document_map` -- matplotlib figures (``pip install
  "sklearn-topicfac[plot]"``).

pandas and matplotlib are imported only by the functions that need them.
"""

from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment
from sklearn.base import clone
from sklearn.pipeline import Pipeline
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array, check_is_fitted

from . import _report
from ._docstrings import fill_doc
from ._optional import pyplot
from ._validation import data_fingerprint, to_csr
from .kernels import normalize_rows
from .metrics import clustering_scores, npmi_coherence, topic_diversity
from .persistence import stamp

__all__ = [
    "TopTerms",
    "TopicLineage",
    "align_topics",
    "document_topics",
    "plot_document_map",
    "plot_loss_history",
    "plot_top_terms",
    "to_pyldavis",
    "top_terms",
    "topic_distances",
    "topic_lineage",
    "topic_stability",
    "write_report",
]


# ---------------------------------------------------------------- helpers
def _split_model(model):
    """``(preprocessing or None, estimator)`` of an estimator or a pipeline."""
    if isinstance(model, Pipeline):
        head = model[:-1] if len(model.steps) > 1 else None
        return head, model[-1]
    return None, model


def _fitted_estimator(model):
    head, estimator = _split_model(model)
    if not hasattr(estimator, "components_") and not hasattr(estimator, "fit"):
        raise TypeError(
            f"Expected a fitted topic model or a Pipeline ending in one, got "
            f"{type(estimator).__name__}."
        )
    check_is_fitted(estimator, "components_")
    return head, estimator


def _vocabulary(model, feature_names, n_features):
    """Term names, from the argument, the pipeline, the input columns or indices."""
    if feature_names is None:
        head, estimator = _split_model(model)
        if head is not None and hasattr(head, "get_feature_names_out"):
            feature_names = head.get_feature_names_out()
        elif hasattr(estimator, "feature_names_in_"):
            feature_names = estimator.feature_names_in_
        else:
            feature_names = [f"term{j}" for j in range(n_features)]
    elif hasattr(feature_names, "get_feature_names_out"):
        feature_names = feature_names.get_feature_names_out()
    names = np.asarray(feature_names, dtype=object)
    if names.shape != (n_features,):
        raise ValueError(
            f"feature_names has {names.size} entries but the model has "
            f"{n_features} features."
        )
    return names


def _topic_term_distributions(components):
    """Rows of non-negative ``components`` normalized to ``P(w|z)``.

    Real-valued components (SimplexPLSA's bases) are returned as they are.
    """
    C = np.asarray(components, dtype=np.float64)
    return C if C.min() < 0 else normalize_rows(C)[0]


# Weight of the uniform distribution mixed into exported distributions: every
# probability becomes positive (pyLDAvis takes logs of them) while the others
# move by a relative 1e-9 at most.
_EXPORT_SMOOTHING = 1e-9


def _smoothed(P):
    """Rows of ``P`` (each summing to one, or all zero) mixed with the uniform
    distribution: ``(1 - eps) P + eps / n_columns``, every entry positive.

    A row of zeros (a topic without any weight, a document without words)
    becomes uniform.
    """
    P = np.asarray(P, dtype=np.float64)
    totals = P.sum(axis=1, keepdims=True)
    P = np.divide(P, totals, out=np.zeros_like(P), where=totals > 0)
    uniform = 1.0 / P.shape[1]
    P = (1.0 - _EXPORT_SMOOTHING) * P + _EXPORT_SMOOTHING * uniform
    P[(totals <= 0).ravel()] = uniform
    return P


def _as_counts(head, X):
    """Documents through the pipeline's preprocessing, when there is one."""
    return X if head is None else head.transform(X)


def _doc_topic(head, estimator, X):
    """``P(z|d)`` of the documents ``X`` (rows sum to one) and their counts."""
    counts = _as_counts(head, X)
    if hasattr(estimator, "topic_proportions"):
        theta = estimator.topic_proportions(counts)
        Xv = to_csr(
            check_array(counts, accept_sparse=("csr", "csc"), dtype=theta.dtype)
        )
        return np.asarray(theta, dtype=np.float64), Xv
    # SimplexPLSA: its weights are on the simplex already.
    theta = np.asarray(estimator.transform(counts), dtype=np.float64)
    return theta, counts


# -------------------------------------------------------------- top terms
class TopTerms:
    """The top terms of each topic and their weights, as returned by :func:`top_terms`.

    ``str()`` gives one line per topic, ``topic <z>: <term> <term> ...``;
    :meth:`to_string` can add the weights; :meth:`to_frame` gives a pandas
    DataFrame with one row per (topic, rank).

    Parameters
    ----------
    terms : array-like of shape (n_topics, n_top)
        The terms of each topic, heaviest first.
    weights : array-like of shape (n_topics, n_top)
        Their weights, :math:`P(w \\mid z)` for topic models of counts.

    Attributes
    ----------
    terms : ndarray of shape (n_topics, n_top), dtype object
    weights : ndarray of shape (n_topics, n_top)

    Examples
    --------
    >>> from sklearn_topicfac.inspection import TopTerms
    >>> table = TopTerms([["cat", "dog"], ["stock", "bond"]], [[0.5, 0.3], [0.6, 0.2]])
    >>> print(table)
    topic 0: cat dog
    topic 1: stock bond
    >>> print(table.to_string(weights=True))
    topic 0: cat (0.500) dog (0.300)
    topic 1: stock (0.600) bond (0.200)
    >>> table.to_frame().head(2)
       topic  rank term  weight
    0      0     1  cat     0.5
    1      0     2  dog     0.3
    """

    def __init__(self, terms, weights):
        self.terms = np.asarray(terms, dtype=object)
        self.weights = np.asarray(weights, dtype=np.float64)
        if self.terms.ndim != 2 or self.terms.shape != self.weights.shape:
            raise ValueError(
                f"terms and weights must be 2-D of one shape, got "
                f"{self.terms.shape} and {self.weights.shape}."
            )

    def __len__(self):
        return self.terms.shape[0]

    def __repr__(self):
        return f"TopTerms(n_topics={self.terms.shape[0]}, n_top={self.terms.shape[1]})"

    def __str__(self):
        return self.to_string()

    def to_string(self, weights=False, decimals=3):
        """One line per topic: ``topic <z>: <term> ...`` (optionally with weights).

        Parameters
        ----------
        weights : bool, default=False
            Follow each term by its weight in parentheses.
        decimals : int, default=3
            Decimals of the printed weights.

        Returns
        -------
        table : str
        """
        lines = []
        for z, (terms, values) in enumerate(zip(self.terms, self.weights, strict=True)):
            if weights:
                cells = [
                    f"{t} ({v:.{decimals}f})"
                    for t, v in zip(terms, values, strict=True)
                ]
            else:
                cells = [str(t) for t in terms]
            lines.append(f"topic {z}: {' '.join(cells)}")
        return "\n".join(lines)

    def to_frame(self):
        """The table as a long DataFrame: ``topic``, ``rank``, ``term``, ``weight``.

        ``rank`` counts from 1 (the heaviest term).  For the wide layout use
        ``.pivot(index="rank", columns="topic", values="term")``.

        Returns
        -------
        frame : pandas.DataFrame of n_topics * n_top rows
        """
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("to_frame needs pandas: pip install pandas.") from exc
        k, n = self.terms.shape
        return pd.DataFrame(
            {
                "topic": np.repeat(np.arange(k), n),
                "rank": np.tile(np.arange(1, n + 1), k),
                "term": self.terms.ravel(),
                "weight": self.weights.ravel(),
            }
        )


def top_terms(model, feature_names=None, *, n_top=10):
    """The ``n_top`` heaviest terms of each topic, with their weights.

    Terms are ranked by ``components_``; the weights are the rows of
    ``components_`` normalized to sum to one, i.e. :math:`P(w \\mid z)` for
    every estimator of counts (for :class:`~sklearn_topicfac.LDAVI`, its
    default MAP estimate of the topic, or its posterior mean with
    ``inference="vb"``).  :class:`~sklearn_topicfac.SimplexPLSA`'s
    real-valued bases are ranked and reported as they are.  Ties keep the
    vocabulary order.

    Parameters
    ----------
    model : fitted estimator, or Pipeline ending in one
        The topic model.
    feature_names : array-like of str, fitted vectorizer, or None, default=None
        The vocabulary, in column order, or a fitted vectorizer (its
        ``get_feature_names_out()``).  ``None``: the steps before the
        estimator in a pipeline, else the estimator's ``feature_names_in_``
        (a DataFrame's columns), else ``term0``, ``term1``, ...
    n_top : int, default=10
        Terms per topic (at most ``n_features``).

    Returns
    -------
    table : TopTerms
        ``print(table)`` for a text table, ``table.to_frame()`` for a
        DataFrame, ``table.terms`` and ``table.weights`` for the arrays.

    Examples
    --------
    >>> from sklearn.feature_extraction.text import CountVectorizer
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn_topicfac import PLSI
    >>> from sklearn_topicfac.inspection import top_terms
    >>> docs = ["cats chase mice", "mice fear cats", "cats and mice",
    ...         "stocks fell sharply", "bond markets fell", "stocks and bonds"]
    >>> pipe = make_pipeline(CountVectorizer(), PLSI(n_components=2, random_state=0))
    >>> pipe = pipe.fit(docs)
    >>> table = top_terms(pipe, n_top=2)
    >>> sorted(sorted(row) for row in table.terms.tolist())
    [['cats', 'mice'], ['fell', 'stocks']]
    """
    _, estimator = _fitted_estimator(model)
    C = np.asarray(estimator.components_, dtype=np.float64)
    names = _vocabulary(model, feature_names, C.shape[1])
    if not (isinstance(n_top, (int, np.integer)) and n_top >= 1):
        raise ValueError(f"n_top must be a positive integer, got {n_top!r}.")
    order = np.argsort(-C, axis=1, kind="stable")[:, : min(int(n_top), C.shape[1])]
    weights = np.take_along_axis(_topic_term_distributions(C), order, axis=1)
    return TopTerms(names[order], weights)


# ---------------------------------------------------------- topic identity
def _topic_distributions(model, name):
    """``P(w|z)`` of a fitted model (estimator or pipeline), float64."""
    _, estimator = _fitted_estimator(model)
    C = np.asarray(estimator.components_, dtype=np.float64)
    if C.min() < 0:
        raise ValueError(
            f"{name} has real-valued bases (SimplexPLSA), not topic-word "
            "distributions: topics are compared as distributions."
        )
    return normalize_rows(C)[0]


def topic_distances(reference, other):
    """Jensen-Shannon distances between the topics of two fitted models.

    Parameters
    ----------
    reference, other : fitted estimator, or Pipeline ending in one
        Topic models on the same vocabulary (the same ``n_features``).

    Returns
    -------
    distances : ndarray of shape (k_reference, k_other)
        ``distances[i, j]``: the Jensen-Shannon distance (base 2, in
        [0, 1]; the square root of the divergence) between topic ``i`` of
        ``reference`` and topic ``j`` of ``other``.  One pair at a time:
        never a ``k x k x n_features`` array.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_topicfac import PLSI
    >>> from sklearn_topicfac.inspection import topic_distances
    >>> X = np.array([[5, 3, 0, 0], [4, 6, 1, 0], [0, 1, 6, 4], [0, 0, 3, 5]])
    >>> model = PLSI(n_components=2, random_state=0).fit(X)
    >>> np.allclose(np.diag(topic_distances(model, model)), 0)
    True
    """
    P = _topic_distributions(reference, "reference")
    Q = _topic_distributions(other, "other")
    if P.shape[1] != Q.shape[1]:
        raise ValueError(
            f"The models have {P.shape[1]} and {Q.shape[1]} features: topics "
            "are compared on one vocabulary (fit both on the same columns)."
        )
    return _report.jensen_shannon_distances(P, Q)


def align_topics(reference, other):
    """Match the topics of ``other`` to those of ``reference``, one to one.

    The matching minimizes the total Jensen-Shannon distance between the
    matched topic-word distributions (the assignment problem, solved
    exactly by :func:`scipy.optimize.linear_sum_assignment`), so topic
    numbers of two fits -- two seeds, two corpora, a refit -- can be read
    side by side.

    Parameters
    ----------
    reference, other : fitted estimator, or Pipeline ending in one
        Topic models with the same number of topics on the same vocabulary
        (for different numbers of topics, see :func:`topic_lineage`).

    Returns
    -------
    order : ndarray of shape (n_components,), int
        Topic ``order[i]`` of ``other`` is matched to topic ``i`` of
        ``reference``: ``other.components_[order]`` is in the reference's
        topic order.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_topicfac import PLSI
    >>> from sklearn_topicfac.inspection import align_topics
    >>> X = np.array([[5, 3, 0, 0], [4, 6, 1, 0], [0, 1, 6, 4], [0, 0, 3, 5]])
    >>> a = PLSI(n_components=2, random_state=0).fit(X)
    >>> b = PLSI(n_components=2, random_state=0).fit(X)
    >>> b.components_ = b.components_[::-1]  # the same topics, renumbered
    >>> align_topics(a, b)
    array([1, 0])
    """
    distances = topic_distances(reference, other)
    if distances.shape[0] != distances.shape[1]:
        raise ValueError(
            f"align_topics matches topics one to one, but the models have "
            f"{distances.shape[0]} and {distances.shape[1]} topics; "
            "topic_lineage relates fits with different numbers of topics."
        )
    rows, columns = linear_sum_assignment(distances)
    return columns[np.argsort(rows)].astype(np.intp)


def topic_stability(estimator, X, n_runs=5, random_state=None):
    """How closely each topic is found again by fits from other seeds.

    ``estimator`` (fitted on ``X``) is cloned and fitted on ``X`` again
    ``n_runs`` times with other values of ``random_state``; each refit's
    topics are aligned to the estimator's (:func:`align_topics`), and a
    topic's stability is the mean over the refits of one minus the
    Jensen-Shannon distance to its match: 1 when every refit finds the very
    topic, near 0 when the refits put unrelated topics in its place.

    Cost: ``n_runs`` fits of the estimator on ``X`` (run one after the
    other), plus ``n_runs * k**2`` distance computations over the
    vocabulary.

    Parameters
    ----------
    estimator : fitted estimator, or Pipeline ending in one
        The model whose topics are scored, fitted on ``X``.
    X : array-like, sparse matrix or documents
        The data it was fitted on (raw text for a pipeline that counts
        words).
    n_runs : int, default=5
        Refits.
    random_state : int, RandomState instance or None, default=None
        Draws the refits' seeds.

    Returns
    -------
    stability : ndarray of shape (n_components,)
        One score in [0, 1] per topic, in the estimator's topic order.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_topicfac import PLSI
    >>> from sklearn_topicfac.inspection import topic_stability
    >>> X = np.array([[5, 3, 0, 0], [4, 6, 1, 0], [0, 1, 6, 4], [0, 0, 3, 5]] * 5)
    >>> model = PLSI(n_components=2, init="random", random_state=0).fit(X)
    >>> scores = topic_stability(model, X, n_runs=3, random_state=0)
    >>> scores.shape, bool(np.all((scores >= 0) & (scores <= 1)))
    ((2,), True)
    """
    _fitted_estimator(estimator)
    if not (isinstance(n_runs, (int, np.integer)) and n_runs >= 1):
        raise ValueError(f"n_runs must be a positive integer, got {n_runs!r}.")
    rng = check_random_state(random_state)
    parameter = "random_state"
    if isinstance(estimator, Pipeline):
        parameter = f"{estimator.steps[-1][0]}__random_state"
    scores = []
    for seed in rng.randint(np.iinfo(np.int32).max, size=n_runs):
        refit = clone(estimator).set_params(**{parameter: int(seed)}).fit(X)
        order = align_topics(estimator, refit)
        matched = topic_distances(estimator, refit)[np.arange(order.size), order]
        scores.append(1.0 - matched)
    return np.clip(np.mean(scores, axis=0), 0.0, 1.0)


class TopicLineage:
    """How the topics of one fit relate to those of another.

    Made by :func:`topic_lineage`; ``print`` it for one line per relation.

    Attributes
    ----------
    similarity : ndarray of shape (k_a, k_b)
        One minus the Jensen-Shannon distance between each topic of the
        first model and each of the second.
    continued : list of (int, int)
        ``(a, b)``: topic ``a`` goes on as ``b`` (each is the other's
        closest, and no other topic shares either).
    split : dict of int to list of int
        ``a -> [b, ...]``: topic ``a`` of the first model is the closest
        earlier topic of each of these topics of the second.
    merged : dict of int to list of int
        ``b -> [a, ...]``: topic ``b`` of the second model is the closest
        later topic of each of these topics of the first.
    appeared : list of int
        Topics of the second model related to no topic of the first.
    vanished : list of int
        Topics of the first model related to no topic of the second.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_topicfac import PLSI
    >>> from sklearn_topicfac.inspection import topic_lineage
    >>> X = np.array([[5, 3, 0, 0], [4, 6, 1, 0], [0, 1, 6, 4], [0, 0, 3, 5]])
    >>> a = PLSI(n_components=2, random_state=0).fit(X)
    >>> topic_lineage(a, a).continued
    [(0, 0), (1, 1)]
    """

    def __init__(self, similarity, threshold):
        self.similarity = similarity
        related = similarity >= threshold
        parent = np.where(related.any(axis=0), similarity.argmax(axis=0), -1)
        child = np.where(related.any(axis=1), similarity.argmax(axis=1), -1)
        children = {
            a: [int(b) for b in np.flatnonzero(parent == a)]
            for a in range(similarity.shape[0])
        }
        parents = {
            b: [int(a) for a in np.flatnonzero(child == b)]
            for b in range(similarity.shape[1])
        }
        self.split = {a: bs for a, bs in children.items() if len(bs) > 1}
        self.merged = {b: as_ for b, as_ in parents.items() if len(as_) > 1}
        self.continued = [
            (a, bs[0])
            for a, bs in children.items()
            if len(bs) == 1 and parents[bs[0]] == [a]
        ]
        self.appeared = [int(b) for b in np.flatnonzero(parent < 0)]
        self.vanished = [int(a) for a in np.flatnonzero(child < 0)]

    def __str__(self):
        lines = [f"topic {a} -> {b}" for a, b in self.continued]
        lines += [f"topic {a} split into {bs}" for a, bs in self.split.items()]
        lines += [f"topics {as_} merged into {b}" for b, as_ in self.merged.items()]
        lines += [f"topic {b} appeared" for b in self.appeared]
        lines += [f"topic {a} vanished" for a in self.vanished]
        return "\n".join(lines)

    def __repr__(self):
        return f"TopicLineage({self.similarity.shape[0]} -> {self.similarity.shape[1]})"


def topic_lineage(model_a, model_b, *, threshold=0.3):
    """Which topics of ``model_a`` split, merged, went on, appeared or vanished
    in ``model_b``.

    For two fits with different numbers of topics (or a model before and
    after ``partial_fit``).  Topics are related when one minus their
    Jensen-Shannon distance is at least ``threshold``; each topic of
    ``model_b`` descends from its closest related topic of ``model_a``
    (none: it appeared), and each topic of ``model_a`` lives on in its
    closest related topic of ``model_b`` (none: it vanished).  A topic of
    ``model_a`` that several topics of ``model_b`` descend from split; a
    topic of ``model_b`` that several topics of ``model_a`` live on in is a
    merge.  The default threshold: a topic that is an even mixture of two
    topics with disjoint words is at 0.44 from each, unrelated topics at 0.

    Parameters
    ----------
    model_a, model_b : fitted estimator, or Pipeline ending in one
        Topic models on the same vocabulary.
    threshold : float in [0, 1], default=0.3
        The least similarity of related topics.

    Returns
    -------
    lineage : TopicLineage

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_topicfac import PLSI
    >>> from sklearn_topicfac.inspection import topic_lineage
    >>> rng = np.random.default_rng(0)
    >>> blocks = np.kron(np.eye(3), np.ones((1, 5)))  # 3 topics, 5 words each
    >>> X = rng.poisson(4 * np.repeat(blocks, 10, axis=0))
    >>> two = PLSI(n_components=2, random_state=0).fit(X)
    >>> three = PLSI(n_components=3, random_state=0).fit(X)
    >>> len(topic_lineage(two, three).split)
    1
    """
    if not 0 <= threshold <= 1:
        raise ValueError(f"threshold must be in [0, 1], got {threshold!r}.")
    return TopicLineage(1.0 - topic_distances(model_a, model_b), threshold)


# ---------------------------------------------------------------- pyLDAvis
@fill_doc
def to_pyldavis(model, X, feature_names=None):
    """The inputs of ``pyLDAvis.prepare`` for a fitted model and its documents.

    ``pyLDAvis.prepare(**to_pyldavis(model, X))`` draws the usual
    inter-topic distance map and term-relevance bars; pyLDAvis itself is not
    needed here.  The distributions are those ``score`` uses: the documents'
    topic proportions :math:`P(z \\mid d)` are folded in with the topics
    fixed, the topics are :math:`P(w \\mid z)`.

    pyLDAvis takes the logarithm of every probability, and the maximum
    likelihood fits (PLSI, KLNMF, the NMF family) set many of them to
    exactly zero.  Both distributions are therefore mixed with the uniform
    one before export,

    .. math::

        \\tilde P(w \\mid z) = (1 - \\varepsilon) P(w \\mid z)
        + \\varepsilon / V, \\qquad \\varepsilon = 10^{-9},

    (``V`` the number of terms; likewise :math:`P(z \\mid d)` over the
    topics): every entry is positive, rows still sum to one, and no
    probability moves by more than :math:`10^{-9}`.  A topic (or document)
    without any weight is exported as the uniform distribution.

    Parameters
    ----------
    model : fitted estimator, or Pipeline ending in one
        Any estimator of the package.  For
        :class:`~sklearn_topicfac.SimplexPLSA`, whose vertices live in data
        space, the topics are the positive parts of ``components_``,
        normalized, and :math:`P(z \\mid d)` its ``transform``: a picture
        of non-negative data only.
    X : {array-like, sparse matrix} of shape (n_documents, n_features), or raw documents
        The documents to show, usually the training corpus; raw documents
        when ``model`` is a pipeline starting with a vectorizer.
    feature_names : array-like of str, fitted vectorizer, or None, default=None
        The vocabulary (see :func:`top_terms`).

    Returns
    -------
    data : dict
        ``topic_term_dists`` (n_topics, n_features), rows sum to one;
        ``doc_topic_dists`` (n_documents, n_topics), rows sum to one;
        ``doc_lengths`` (n_documents,), words per document;
        ``vocab`` (n_features,), the terms;
        ``term_frequency`` (n_features,), the terms' counts in ``X``;
        ``sort_topics`` False: pyLDAvis keeps the model's topic order, so
        its topic ``i + 1`` is ``components_[i]``, as everywhere else.

    Examples
    --------
    {{toy_counts}}
    >>> from sklearn_topicfac import KLNMF
    >>> from sklearn_topicfac.inspection import to_pyldavis
    >>> data = to_pyldavis(KLNMF(n_components=2, random_state=0).fit(X), X)
    >>> sorted(data)[:3], data["sort_topics"]
    (['doc_lengths', 'doc_topic_dists', 'sort_topics'], False)
    >>> np.allclose(data["doc_topic_dists"].sum(axis=1), 1)
    True
    >>> bool((data["topic_term_dists"] > 0).all())   # pyLDAvis takes logs
    True
    >>> data["doc_lengths"].tolist(), data["term_frequency"].tolist()
    ([8.0, 11.0, 11.0, 8.0], [9.0, 10.0, 10.0, 9.0])
    """
    head, estimator = _fitted_estimator(model)
    theta, counts = _doc_topic(head, estimator, X)
    components = np.asarray(estimator.components_, dtype=np.float64)
    # SimplexPLSA's vertices may have negative entries: their positive part.
    phi = _topic_term_distributions(np.maximum(components, 0))
    counts = sp.csr_matrix(counts)
    return {
        "topic_term_dists": _smoothed(phi),
        "doc_topic_dists": _smoothed(theta),
        "doc_lengths": np.asarray(counts.sum(axis=1), dtype=np.float64).ravel(),
        "vocab": _vocabulary(model, feature_names, phi.shape[1]),
        "term_frequency": np.asarray(counts.sum(axis=0), dtype=np.float64).ravel(),
        "sort_topics": False,
    }


# ------------------------------------------------------------------ plots
@fill_doc
def plot_top_terms(model, feature_names=None, *, n_top=10, n_cols=4, topics=None):
    """Bar charts of the top terms of each topic, one panel per topic.

    Parameters
    ----------
    model : fitted estimator, or Pipeline ending in one
        The topic model.
    feature_names : array-like of str, fitted vectorizer, or None, default=None
        The vocabulary (see :func:`top_terms`).
    n_top : int, default=10
        Terms per panel.
    n_cols : int, default=4
        Panels per row.
    topics : sequence of int or None, default=None
        The topics to draw; ``None`` draws all.

    Returns
    -------
    fig : matplotlib.figure.Figure

    Examples
    --------
    {{toy_counts}}
    >>> from sklearn_topicfac import PLSI
    >>> from sklearn_topicfac.inspection import plot_top_terms
    >>> model = PLSI(n_components=2, random_state=0).fit(X)
    >>> fig = plot_top_terms(model, ["cat", "dog", "stock", "bond"], n_top=3)
    >>> len(fig.axes)
    2
    """
    plt = pyplot()
    table = top_terms(model, feature_names, n_top=n_top)
    topics = list(range(len(table))) if topics is None else list(topics)
    n_cols = max(1, min(n_cols, len(topics)))
    n_rows = -(-len(topics) // n_cols)
    fig, axes = plt.subplots(
        n_rows,
        n_cols,
        figsize=(3.2 * n_cols, 0.25 * table.terms.shape[1] * n_rows + 1.2 * n_rows),
        squeeze=False,
        constrained_layout=True,
    )
    for ax in axes.ravel()[len(topics) :]:
        ax.remove()
    for ax, z in zip(axes.ravel(), topics, strict=False):
        terms, weights = table.terms[z], table.weights[z]
        positions = np.arange(len(terms))[::-1]
        ax.barh(positions, weights, color=f"C{z % 10}")
        ax.set_yticks(positions, [str(t) for t in terms])
        ax.set_title(f"topic {z}")
        ax.tick_params(axis="x", labelsize="small")
    return fig


@fill_doc
def plot_loss_history(estimator, ax=None):
    """The training objective after every iteration of a fit.

    ``loss_history_`` against the iteration.  For
    :class:`~sklearn_topicfac.HybridNMFPLSI` the switches between its NMF and
    PLSI phases are marked.

    Parameters
    ----------
    estimator : fitted estimator, or Pipeline ending in one
        Any estimator of the package.
    {{plot_axes}}

    Examples
    --------
    {{toy_counts}}
    >>> from sklearn_topicfac import KLNMF
    >>> from sklearn_topicfac.inspection import plot_loss_history
    >>> ax = plot_loss_history(KLNMF(n_components=2, random_state=0).fit(X))
    >>> ax.get_ylabel()
    'objective (loss_history_)'
    """
    plt = pyplot()
    _, est = _fitted_estimator(estimator)
    history = np.asarray(est.loss_history_)
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 3.5), constrained_layout=True)
    ax.plot(np.arange(history.size), history, marker="." if history.size < 60 else None)
    for boundary in np.cumsum(getattr(est, "phase_n_iter_", []))[:-1]:
        ax.axvline(boundary, color="0.7", linestyle=":", linewidth=1)
    ax.set_xlabel("iteration")
    ax.set_ylabel("objective (loss_history_)")
    ax.set_title(f"{type(est).__name__}, {est.n_iter_} iterations")
    return ax


@fill_doc
def plot_document_map(model, X, *, labels=None, feature_names=None, ax=None):
    """Documents placed by their topic proportions on a 2-D topic polygon.

    Topic :math:`z` sits at the vertex :math:`v_z = (\\cos 2\\pi z/K,
    \\sin 2\\pi z/K)` of a regular polygon, and document :math:`d` at
    :math:`\\sum_z P(z \\mid d) v_z`: a document about one topic sits at its
    vertex, a mixture between them.  For three topics this is the topic
    simplex itself; for more it is a projection (different mixtures can
    share a point).  Points are coloured by ``labels`` when given, else by
    the dominant topic.

    Parameters
    ----------
    model : fitted estimator, or Pipeline ending in one
        The topic model.
    X : {array-like, sparse matrix} or raw documents
        The documents to place (raw documents for a pipeline).
    labels : array-like of shape (n_documents,) or None, default=None
        Class of each document, for the colours.
    feature_names : array-like of str, fitted vectorizer, or None, default=None
        Vocabulary used to name the vertices by their top three terms; by
        default that of the pipeline or the estimator.
    {{plot_axes}}

    Examples
    --------
    {{toy_counts}}
    >>> from sklearn_topicfac import PLSI, inspection
    >>> model = PLSI(n_components=3, random_state=0).fit(X)
    >>> ax = inspection.plot_document_map(model, X, labels=[0, 0, 1, 1])
    >>> ax.collections[0].get_offsets().shape
    (4, 2)
    """
    plt = pyplot()
    from matplotlib.colors import ListedColormap

    head, estimator = _fitted_estimator(model)
    theta, _ = _doc_topic(head, estimator, X)
    k = theta.shape[1]
    angles = 2 * np.pi * np.arange(k) / k + np.pi / 2
    vertices = np.column_stack([np.cos(angles), np.sin(angles)])
    points = theta @ vertices
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 5.5), constrained_layout=True)
    if labels is None:
        colours, legend_title = theta.argmax(axis=1), "dominant topic"
    else:
        colours, legend_title = np.asarray(labels), "label"
    classes, codes = np.unique(colours, return_inverse=True)
    palette = plt.get_cmap("tab10" if classes.size <= 10 else "tab20").colors
    scatter = ax.scatter(
        points[:, 0],
        points[:, 1],
        c=codes,
        cmap=ListedColormap(palette[: classes.size] if classes.size <= 20 else palette),
        vmin=-0.5,
        vmax=classes.size - 0.5,
        s=8,
        alpha=0.6,
        linewidths=0,
    )
    if classes.size <= 20:
        handles = scatter.legend_elements()[0]
        ax.legend(
            handles, [str(c) for c in classes], title=legend_title, fontsize="small"
        )
    table = top_terms(model, feature_names, n_top=3)
    polygon = np.vstack([vertices, vertices[:1]])
    ax.plot(polygon[:, 0], polygon[:, 1], color="0.6", linewidth=0.8)
    for z, (x, y) in enumerate(vertices):
        ax.annotate(
            f"{z}: {' '.join(map(str, table.terms[z]))}",
            (x, y),
            xytext=(1.08 * x, 1.08 * y),
            ha="center",
            va="center",
            fontsize="small",
        )
    ax.set_aspect("equal")
    ax.set_xlim(-1.45, 1.45)
    ax.set_ylim(-1.3, 1.3)
    ax.set_axis_off()
    return ax


# ------------------------------------------------------- document topics
@fill_doc
def document_topics(model, X):
    """Topic proportions :math:`P(z \\mid d)` of documents, rows summing to one.

    The estimator's public ``topic_proportions`` (``transform`` for
    :class:`~sklearn_topicfac.SimplexPLSA`, whose weights lie on the simplex
    already), after the pipeline's preprocessing: a fitted pipeline and raw
    documents, or an estimator and counts.  The same documents always give
    the same numbers, so a model saved with :func:`~sklearn_topicfac.save`
    and loaded again reproduces them exactly.

    Parameters
    ----------
    model : fitted estimator, or Pipeline ending in one
        The topic model.
    X : {array-like, sparse matrix} of shape (n_documents, n_features), or raw documents
        The documents (raw documents for a pipeline starting with a
        vectorizer).

    Returns
    -------
    theta : ndarray of shape (n_documents, n_topics), dtype float64

    Examples
    --------
    {{toy_counts}}
    >>> from sklearn_topicfac import KLNMF, inspection
    >>> klnmf = KLNMF(n_components=2, random_state=0).fit(X)
    >>> theta = inspection.document_topics(klnmf, X)   # not transform's scale
    >>> theta.shape, bool(np.allclose(theta.sum(axis=1), 1))
    ((4, 2), True)
    >>> bool(np.allclose(klnmf.transform(X).sum(axis=1), 1))
    False
    """
    head, estimator = _fitted_estimator(model)
    return _doc_topic(head, estimator, X)[0]


# ---------------------------------------------------------------- report
@fill_doc
def write_report(
    estimator,
    X,
    vectorizer,
    path,
    labels=None,
    *,
    selection=None,
    title=None,
    n_top=10,
    max_documents=2000,
    random_state=0,
    stability=None,
):
    """Write a self-contained HTML report of a fitted topic model.

    One file with inline CSS, SVG and JavaScript (no network, nothing to
    install) that shows:

    - per topic, its ``n_top`` terms ranked by their relevance (Sievert &
      Shirley, 2014), :math:`\\lambda \\log P(w \\mid z) + (1 - \\lambda)
      \\log (P(w \\mid z) / P(w))`, with a slider for :math:`\\lambda`
      (1: by :math:`P(w \\mid z)`, as :func:`top_terms`; lower values push
      corpus-wide words down), each term a bar of its estimated count in
      the topic over a bar of its count in the corpus, and the topic's size
      (documents whose dominant topic it is), share of the words, NPMI
      coherence (:func:`~sklearn_topicfac.metrics.npmi_coherence` on
      ``X``) and, when given, stability;
    - the mean coherence and the topic diversity
      (:func:`~sklearn_topicfac.metrics.topic_diversity`), and, with
      ``labels``, the clustering scores of the dominant topics
      (:func:`~sklearn_topicfac.metrics.clustering_scores`);
    - an inter-topic distance map as pyLDAvis draws it: the Jensen-Shannon
      distances between the topics' word distributions, placed in 2-D by
      classical scaling (PCoA), each topic a circle whose area is its share
      of the words, :math:`\\sum_d |d| P(z \\mid d) / \\sum_d |d|`;
    - a document map: the documents' :math:`P(z \\mid d)` projected on their
      two principal axes, coloured by dominant topic (and by label, with a
      switch, when ``labels`` are given); above ``max_documents`` documents,
      a uniform random sample of ``max_documents`` is drawn (the page says
      so);
    - the k-selection curve, when ``selection`` is given.

    A closing section records what produced the model (its
    :func:`~sklearn_topicfac.persistence.stamp`: parameters, the fingerprint
    of the data it was fitted on, versions, backend) and the fingerprint of
    the documents the page shows.  Clicking a topic (its circle or its card)
    highlights its documents and its terms.  Topics are numbered as the
    rows of ``components_`` everywhere (the cards, the maps,
    ``document_topics``, the CLI's CSV, :func:`to_pyldavis`).  The page
    holds, per topic, only the terms some :math:`\\lambda` of the grid 0,
    0.1, ..., 1 ranks in its top ``n_top``, never the ``k x n_features``
    matrix: at 50 topics and a 20,000-term vocabulary it stays well under
    5 MB.

    Parameters
    ----------
    estimator : fitted topic model of counts, or a Pipeline ending in one
        SimplexPLSA's real-valued data have no report.
    X : sparse matrix, array-like or raw documents, (n_documents, n_features)
        Usually the training corpus; raw documents when ``estimator`` is a
        pipeline starting with a vectorizer.
    vectorizer : fitted vectorizer, array-like of str, or None
        The vocabulary (see :func:`top_terms`); ``None`` reads it off the
        pipeline.
    path : str or path-like
        The HTML file to write (UTF-8).
    labels : array-like of shape (n_documents,) or None, default=None
        The documents' classes, for the colours and the clustering scores.
    selection : NComponentsSelection or None, default=None
        The result of
        :func:`~sklearn_topicfac.model_selection.select_n_components` that
        chose k, drawn as a curve.
    title : str or None, default=None
        The page title; by default the estimator's class name.
    n_top : int, default=10
        Terms shown per topic (and used for coherence and diversity).
    max_documents : int, default=2000
        At most this many documents on the document map.
    random_state : int, default=0
        Seed of the document sample.
    stability : array-like of shape (n_components,) or None, default=None
        Per-topic stability (:func:`topic_stability`), shown on the cards.

    Returns
    -------
    path : pathlib.Path
        The file written.

    Examples
    --------
    {{toy_counts}}
    >>> import tempfile, pathlib
    >>> from sklearn_topicfac import PLSI
    >>> from sklearn_topicfac.inspection import write_report
    >>> model = PLSI(n_components=2, random_state=0).fit(X)
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "report.html"
    >>> page = write_report(model, X, ["cat", "dog", "stock", "bond"], out)
    >>> text = page.read_text(encoding="utf-8")
    >>> text.count("class='topic-card'"), "http" in text
    (2, False)
    """
    data = to_pyldavis(estimator, X, vectorizer)
    phi, theta = data["topic_term_dists"], data["doc_topic_dists"]
    lengths = data["doc_lengths"]
    n_docs, k = theta.shape
    table = top_terms(estimator, vectorizer, n_top=n_top)
    counts = _as_counts(_split_model(estimator)[0], X)
    _, model = _fitted_estimator(estimator)
    coherence = npmi_coherence(model, counts, n_top=n_top)
    dominant = theta.argmax(axis=1)
    prevalence = (lengths @ theta) / max(float(lengths.sum()), 1e-300)
    if labels is not None:
        labels = np.asarray(labels)
        if labels.shape != (n_docs,):
            raise ValueError(
                f"labels has shape {labels.shape} but X has {n_docs} documents; "
                "pass one label per document."
            )
    if not (isinstance(max_documents, (int, np.integer)) and max_documents >= 1):
        raise ValueError(
            f"max_documents must be a positive integer, got {max_documents!r}."
        )
    if stability is not None:
        stability = np.asarray(stability, dtype=np.float64)
        if stability.shape != (k,):
            raise ValueError(
                f"stability has shape {stability.shape}; give one score per "
                f"topic ({k}), as topic_stability returns them."
            )
    rows = np.arange(n_docs)
    if n_docs > max_documents:
        rng = np.random.RandomState(random_state)
        rows = np.sort(rng.choice(n_docs, size=max_documents, replace=False))
    page = _report.render(
        title=title or type(model).__name__,
        summary=(
            f"{type(model).__name__}: {k} topics, {n_docs} documents x "
            f"{phi.shape[1]} terms, {int(lengths.sum())} tokens"
        ),
        terms=table.terms,
        weights=table.weights,
        sizes=np.bincount(dominant, minlength=k),
        prevalence=prevalence,
        coherence=coherence,
        diversity=topic_diversity(model, n_top=n_top),
        topic_xy=_report.classical_scaling(_report.jensen_shannon_distances(phi)),
        doc_xy=_report.principal_plane(theta[rows]),
        doc_topics=dominant[rows],
        doc_labels=None if labels is None else labels[rows],
        n_documents=n_docs,
        max_documents=max_documents,
        scores=None if labels is None else clustering_scores(labels, dominant),
        selection=_report.selection_payload(selection),
        relevance=_report.relevance_payload(
            phi,
            data["term_frequency"],
            prevalence * float(lengths.sum()),
            data["vocab"],
            n_top,
        ),
        stability=stability,
        stamp={
            **stamp(model),
            "data_fingerprint_of_this_report": data_fingerprint(to_csr(counts)),
        },
    )
    path = Path(path)
    path.write_text(page, encoding="utf-8")
    return path
