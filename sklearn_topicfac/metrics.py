"""Metrics for judging document clusterings and topic models.

A clustering can be read off a topic model by assigning each document to its
dominant topic (``argmax`` over a row of the document-topic matrix). The
functions here compare such cluster assignments with known class labels
(accuracy, purity, entropy, and scikit-learn's ARI and NMI gathered by
:func:`clustering_scores`), or two clusterings with each other
(:func:`clustering_disagreement`), with the definitions used by Ding, Li &
Peng (AAAI 2006) and Zhao & Karypis (2004).

The topics themselves are judged by their coherence -- do a topic's top
terms occur in the same documents? (:func:`umass_coherence`,
:func:`npmi_coherence`) -- and their diversity (:func:`topic_diversity`).
:func:`aic` and :func:`bic` are in-sample information criteria for choosing
the number of topics, to compare with the held-out ``score`` every
estimator has.  :func:`chi_square_statistic` and
:func:`chi_square_confidence` judge a factorization ``X ~ W H`` of counts by
Pearson's statistic, which the KL objective approximates (Ding, Li & Peng).
"""

import copy

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment
from scipy.stats import chi2 as chi2_distribution
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_array, check_is_fitted

from ._docstrings import fill_doc
from ._validation import to_csr
from .kernels import completion_log_likelihood, product_at_nonzeros

__all__ = [
    "aic",
    "bic",
    "chi_square_confidence",
    "chi_square_statistic",
    "clustering_accuracy",
    "clustering_disagreement",
    "clustering_entropy",
    "clustering_purity",
    "clustering_scores",
    "npmi_coherence",
    "topic_diversity",
    "umass_coherence",
]


def _check_labelings(labels_true, labels_pred):
    """Validate a pair of labelings and return them as 1-D arrays.

    Parameters
    ----------
    labels_true : array-like of shape (n_samples,)
        Reference labels.
    labels_pred : array-like of shape (n_samples,)
        Labels to evaluate.

    Returns
    -------
    labels_true, labels_pred : ndarray of shape (n_samples,)

    Raises
    ------
    ValueError
        If either labeling is not 1-D, is empty, or the lengths differ.
    """
    labels_true = np.asarray(labels_true)
    labels_pred = np.asarray(labels_pred)
    for name, labels in (("labels_true", labels_true), ("labels_pred", labels_pred)):
        if labels.ndim != 1:
            raise ValueError(
                f"{name} must be 1-D, got an array of shape {labels.shape}."
            )
        if labels.shape[0] == 0:
            raise ValueError(f"{name} is empty; at least one sample is required.")
    if labels_true.shape[0] != labels_pred.shape[0]:
        raise ValueError(
            "labels_true and labels_pred must have the same length, got "
            f"{labels_true.shape[0]} and {labels_pred.shape[0]}."
        )
    return labels_true, labels_pred


def _contingency(labels_true, labels_pred):
    """Dense class-by-cluster count matrix of two validated labelings."""
    classes, class_idx = np.unique(labels_true, return_inverse=True)
    clusters, cluster_idx = np.unique(labels_pred, return_inverse=True)
    table = np.zeros((classes.shape[0], clusters.shape[0]), dtype=np.int64)
    np.add.at(table, (class_idx, cluster_idx), 1)
    return table


@fill_doc
def clustering_accuracy(labels_true, labels_pred):
    """Accuracy of a clustering under the best matching of clusters to classes.

    Cluster identifiers are arbitrary, so they are first matched one-to-one to
    classes so as to maximise the number of documents whose cluster is matched
    to their class; the accuracy is the fraction of such documents. The optimal
    matching is found with the Hungarian algorithm on the contingency table.

    The numbers of clusters and classes may differ. Only
    ``min(n_classes, n_clusters)`` pairs can be matched, and documents in an
    unmatched cluster (or of an unmatched class) count as errors. Hence a
    clustering with fewer clusters than classes cannot reach 1.0, and splitting
    a class into several clusters is penalised.

    Parameters
    ----------
    labels_true : array-like of shape (n_samples,)
        Ground-truth class labels. Any hashable, sortable values (integers,
        strings, ...) are accepted.
    labels_pred : array-like of shape (n_samples,)
        Cluster labels to evaluate, for example
        ``W.argmax(axis=1)`` for a document-topic matrix ``W``.

    Returns
    -------
    accuracy : float
        Fraction of samples correctly clustered, between 0 and 1 (1 for a
        perfect clustering up to renaming of the clusters). The result is
        symmetric in its two arguments.

    {{labelings_errors}}

    See Also
    --------
    sklearn.metrics.adjusted_rand_score : Chance-adjusted pair-counting index.
    sklearn.metrics.normalized_mutual_info_score : Information-theoretic index.

    Examples
    --------
    >>> from sklearn_topicfac.metrics import clustering_accuracy
    >>> clustering_accuracy([0, 0, 1, 1, 2, 2], [2, 2, 0, 0, 1, 1])
    1.0

    Three classes, two clusters: cluster 1 is matched to class 1 (3 documents)
    and cluster 0 to class 0 (2 documents), so 5 out of 9 are correct.

    >>> y_true = [0, 0, 0, 1, 1, 1, 2, 2, 2]
    >>> y_pred = [0, 0, 1, 1, 1, 1, 0, 0, 1]
    >>> round(clustering_accuracy(y_true, y_pred), 4)
    0.5556
    """
    labels_true, labels_pred = _check_labelings(labels_true, labels_pred)
    table = _contingency(labels_true, labels_pred)
    rows, cols = linear_sum_assignment(table, maximize=True)
    return float(table[rows, cols].sum() / labels_true.shape[0])


@fill_doc
def clustering_purity(labels_true, labels_pred):
    """Purity of a clustering: the share of each cluster's majority class.

    With :math:`n_r^i` the number of documents of class :math:`i` in cluster
    :math:`r` (Zhao & Karypis, 2004):

    .. math::

        \\mathrm{purity} = \\frac{1}{n} \\sum_r \\max_i n_r^i .

    Unlike :func:`clustering_accuracy`, several clusters may share a majority
    class, so splitting every document into its own cluster gives purity 1.
    Not symmetric in its arguments.

    Parameters
    ----------
    {{labelings}}

    Returns
    -------
    purity : float
        Between ``1 / n_samples`` and 1; higher is better.

    {{labelings_errors}}

    Examples
    --------
    >>> from sklearn_topicfac.metrics import clustering_purity
    >>> y_true = [0, 0, 0, 1, 1, 1, 2, 2, 2]
    >>> y_pred = [0, 0, 1, 1, 1, 1, 0, 0, 1]
    >>> round(clustering_purity(y_true, y_pred), 4)   # (2 + 3) / 9
    0.5556
    """
    labels_true, labels_pred = _check_labelings(labels_true, labels_pred)
    table = _contingency(labels_true, labels_pred)
    return float(table.max(axis=0).sum() / labels_true.shape[0])


@fill_doc
def clustering_entropy(labels_true, labels_pred):
    """Entropy of a clustering: how mixed the classes are within each cluster.

    With :math:`n_r` documents in cluster :math:`r`, :math:`n_r^i` of them of
    class :math:`i`, and :math:`q` classes (Zhao & Karypis, 2004):

    .. math::

        E(S_r) = -\\frac{1}{\\log q} \\sum_i \\frac{n_r^i}{n_r}
                 \\log \\frac{n_r^i}{n_r}, \\qquad
        \\mathrm{entropy} = \\sum_r \\frac{n_r}{n} E(S_r).

    The :math:`1 / \\log q` factor puts it between 0 and 1 (it is 0 when
    there is a single class).  Not symmetric in its arguments.

    Parameters
    ----------
    {{labelings}}

    Returns
    -------
    entropy : float
        Between 0 (every cluster holds a single class) and 1; lower is
        better.

    {{labelings_errors}}

    Examples
    --------
    >>> from sklearn_topicfac.metrics import clustering_entropy
    >>> clustering_entropy([0, 0, 1, 1], [5, 5, 7, 7])
    0.0
    >>> clustering_entropy([0, 1, 0, 1], [5, 5, 7, 7])   # each cluster 50/50
    1.0
    """
    labels_true, labels_pred = _check_labelings(labels_true, labels_pred)
    table = _contingency(labels_true, labels_pred)
    n_classes = table.shape[0]
    if n_classes == 1:
        return 0.0
    sizes = table.sum(axis=0)
    p = table / sizes[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.where(table > 0, p * np.log(p), 0.0)
    cluster_entropy = -plogp.sum(axis=0) / np.log(n_classes)
    return float(np.clip(cluster_entropy @ sizes / sizes.sum(), 0.0, 1.0))


@fill_doc
def clustering_disagreement(labels_a, labels_b):
    """Relative disagreement between two clusterings (Ding, Li & Peng, 2006).

    With the co-membership matrix :math:`R_{ij} = 1` if documents :math:`i`
    and :math:`j` share a cluster (:math:`R_{ii} = 1`), else 0:

    .. math::

        \\delta = \\frac{\\| R_a - R_b \\|_F}
                     {\\sqrt{\\| R_a \\|_F^2 / 2 + \\| R_b \\|_F^2 / 2}} .

    Computed from the contingency table in O(n_samples) memory:
    :math:`\\|R\\|_F^2 = \\sum_r n_r^2` and
    :math:`\\langle R_a, R_b \\rangle = \\sum_{rs} n_{rs}^2`.  It counts
    the pairs of documents the two clusterings treat differently, is 0 for
    the same partition (whatever the cluster names) and symmetric.

    Parameters
    ----------
    labels_a : array-like of shape (n_samples,)
        First clustering.
    labels_b : array-like of shape (n_samples,)
        Second clustering.

    Returns
    -------
    delta : float
        Between 0 and :math:`\\sqrt{2}`; 0 means the same partition.

    {{labelings_errors}}

    Examples
    --------
    The same partition under other cluster names does not disagree:

    >>> from sklearn_topicfac.metrics import clustering_disagreement
    >>> clustering_disagreement([0, 0, 1, 1], [1, 1, 0, 0])
    0.0

    Moving one of four documents: the six ordered pairs it forms with its
    old and new cluster-mates change, out of :math:`\\|R\\|_F^2 = 8` and 10.

    >>> round(clustering_disagreement([0, 0, 1, 1], [0, 1, 1, 1]), 4)
    0.8165
    """
    labels_a, labels_b = _check_labelings(labels_a, labels_b)
    table = _contingency(labels_a, labels_b).astype(np.float64)
    norm_a = np.sum(table.sum(axis=1) ** 2)
    norm_b = np.sum(table.sum(axis=0) ** 2)
    inner = np.sum(table**2)
    diff = max(norm_a + norm_b - 2 * inner, 0.0)
    return float(np.sqrt(diff / ((norm_a + norm_b) / 2)))


@fill_doc
def clustering_scores(labels_true, labels_pred):
    """Every clustering score of this module and scikit-learn's, in one dict.

    ``accuracy`` (:func:`clustering_accuracy`), ``purity``
    (:func:`clustering_purity`), ``entropy`` (:func:`clustering_entropy`),
    ``ari`` (:func:`sklearn.metrics.adjusted_rand_score`) and ``nmi``
    (:func:`sklearn.metrics.normalized_mutual_info_score`): the measures of
    Ding, Li & Peng's tables plus NMI.

    Parameters
    ----------
    {{labelings}}

    Returns
    -------
    scores : dict of str to float
        Keys ``"accuracy"``, ``"purity"``, ``"entropy"``, ``"ari"``, ``"nmi"``.

    {{labelings_errors}}

    Examples
    --------
    >>> from sklearn_topicfac.metrics import clustering_scores
    >>> scores = clustering_scores([0, 0, 1, 1, 2, 2], [1, 1, 0, 0, 2, 2])
    >>> {name: round(value, 3) for name, value in scores.items()}
    {'accuracy': 1.0, 'purity': 1.0, 'entropy': 0.0, 'ari': 1.0, 'nmi': 1.0}
    """
    labels_true, labels_pred = _check_labelings(labels_true, labels_pred)
    return {
        "accuracy": clustering_accuracy(labels_true, labels_pred),
        "purity": clustering_purity(labels_true, labels_pred),
        "entropy": clustering_entropy(labels_true, labels_pred),
        "ari": float(adjusted_rand_score(labels_true, labels_pred)),
        "nmi": float(normalized_mutual_info_score(labels_true, labels_pred)),
    }


# ------------------------------------------------------------ topic quality
def _unpipe(model, X=None):
    """A Pipeline's last step, and ``X`` through the steps before it.

    Anything else is returned as it is: the metrics take a fitted estimator,
    a Pipeline ending in one (with raw documents for a vectorizer), or arrays.
    """
    if not isinstance(model, Pipeline):
        return model, X
    if X is not None and len(model.steps) > 1:
        X = model[:-1].transform(X)
    return model[-1], X


def _topic_weights(components):
    """Validated ``(n_topics, n_features)`` topic-term weights.

    Accepts the weights themselves, a fitted estimator with ``components_``,
    or a Pipeline ending in one.
    """
    weights = getattr(_unpipe(components)[0], "components_", components)
    weights = np.asarray(weights, dtype=np.float64)
    if weights.ndim != 2 or 0 in weights.shape:
        raise ValueError(
            "components must be a non-empty 2-D array of shape (n_topics, "
            f"n_features) or a fitted topic model, got shape {weights.shape}."
        )
    if not np.all(np.isfinite(weights)):
        raise ValueError("components contains NaN or infinity.")
    return weights


def _top_term_indices(weights, n_top):
    """Column indices of each topic's ``n_top`` heaviest terms, heaviest first.

    Ties keep the vocabulary order (stable sort), so the result is reproducible.
    """
    if not (isinstance(n_top, (int, np.integer)) and n_top >= 1):
        raise ValueError(f"n_top must be a positive integer, got {n_top!r}.")
    n_top = min(int(n_top), weights.shape[1])
    return np.argsort(-weights, axis=1, kind="stable")[:, :n_top]


def _document_occurrence(X, n_features):
    """Binary CSC document-term occurrence matrix of non-negative ``X``."""
    X = sp.csc_matrix(X, dtype=np.float64)
    if X.shape[1] != n_features:
        raise ValueError(
            f"X has {X.shape[1]} features but the topics have {n_features}."
        )
    if X.shape[0] == 0:
        raise ValueError("X has no documents: co-occurrence is undefined.")
    if X.nnz and (not np.all(np.isfinite(X.data)) or X.data.min() < 0):
        raise ValueError("X must be non-negative and finite (document-term counts).")
    X.eliminate_zeros()
    return sp.csc_matrix((np.ones_like(X.data), X.indices, X.indptr), shape=X.shape)


def _co_document_frequencies(B, top):
    """Document frequencies ``D(v)`` and co-document frequencies ``D(v, u)``.

    For one topic's top terms ``top``: ``(M,)`` and ``(M, M)`` integer-valued.
    """
    sub = B[:, top]
    co = (sub.T @ sub).toarray()
    return np.diag(co).copy(), co


def _top_terms_and_occurrences(components, X, n_top):
    """Each topic's top terms and the documents' term occurrence matrix."""
    components, X = _unpipe(components, X)
    weights = _topic_weights(components)
    top = _top_term_indices(weights, n_top)
    return top, _document_occurrence(X, weights.shape[1])


def umass_coherence(components, X, *, n_top=10, eps=1.0):
    """UMass coherence of each topic (Mimno et al., 2011).

    For a topic's ``n_top`` heaviest terms :math:`v_1, \\dots, v_M` (heaviest
    first), with :math:`D(v)` the number of documents of ``X`` containing
    :math:`v` and :math:`D(v, u)` the number containing both:

    .. math::

        C_{\\mathrm{UMass}} = \\frac{2}{M (M - 1)} \\sum_{i=2}^{M}
        \\sum_{j=1}^{i-1} \\log \\frac{D(v_i, v_j) + \\epsilon}{D(v_j)}.

    Mimno et al. sum the pairs with :math:`\\epsilon = 1`; the mean over the
    :math:`M (M - 1) / 2` pairs (as gensim reports it) makes topics with
    different ``n_top`` comparable.  It is at most :math:`\\log(1 + \\epsilon
    / D)`, close to 0 when a topic's terms always occur together, and more
    negative the less they do.  Gensim's ``"u_mass"`` uses document
    proportions and :math:`10^{-12}` instead of 1, i.e. this function with
    ``eps = 1e-12 * n_documents``.

    Parameters
    ----------
    components : array-like of shape (n_topics, n_features), estimator or Pipeline
        Topic-term weights (e.g. ``components_``), or a fitted model or a
        Pipeline ending in one (then ``X`` may be raw documents: it is
        passed through the steps before the model); only the order matters.
    X : {array-like, sparse matrix} of shape (n_documents, n_features)
        Reference documents (counts or any non-negative weights; only
        whether a term occurs in a document is used), usually the training
        corpus.
    n_top : int, default=10
        Number of top terms per topic.
    eps : float, default=1.0
        Smoothing added to the co-document counts.

    Returns
    -------
    coherence : ndarray of shape (n_topics,)
        Higher is more coherent.  A topic with a single term scores 0.

    Raises
    ------
    ValueError
        If a top term never occurs in ``X`` (its conditional probability is
        undefined), or the shapes disagree.

    See Also
    --------
    npmi_coherence : a symmetric, normalized alternative in [-1, 1].

    References
    ----------
    D. Mimno, H. Wallach, E. Talley, M. Leenders, A. McCallum (2011).
    Optimizing semantic coherence in topic models. EMNLP.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_topicfac.metrics import umass_coherence
    >>> X = np.array([[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 0, 1]])
    >>> topics = np.array([[0.5, 0.4, 0.1, 0.0],     # terms 0 and 1: together
    ...                    [0.5, 0.0, 0.4, 0.1]])    # terms 0 and 2: never
    >>> np.round(umass_coherence(topics, X, n_top=2), 3)
    array([ 0.   , -1.099])
    """
    top, B = _top_terms_and_occurrences(components, X, n_top)
    M = top.shape[1]
    lower = np.tril_indices(M, k=-1)  # pairs (i, j) with j < i
    out = np.zeros(top.shape[0])
    for t, terms in enumerate(top):
        df, co = _co_document_frequencies(B, terms)
        if np.any(df[: M - 1] == 0):
            missing = terms[: M - 1][df[: M - 1] == 0]
            raise ValueError(
                f"Topic {t}: top term(s) at column(s) {missing.tolist()} never "
                "occur in X, so UMass coherence is undefined; pass the corpus "
                "the model was fitted on."
            )
        if M > 1:
            out[t] = np.mean(np.log((co[lower] + eps) / df[lower[1]]))
    return out


def npmi_coherence(components, X, *, n_top=10):
    """NPMI coherence of each topic, from document co-occurrence in ``X``.

    With :math:`P(v)` the fraction of documents containing :math:`v` and
    :math:`P(v, u)` the fraction containing both, the normalized pointwise
    mutual information (Bouma, 2009) of two terms is

    .. math::

        \\mathrm{NPMI}(v, u) = \\frac{\\log \\frac{P(v, u)}{P(v) P(u)}}
        {-\\log P(v, u)} \\in [-1, 1],

    -1 for terms that never occur together, 0 for independent terms, 1 for
    terms that always do (the limits are used when :math:`P(v, u)` is 0 or
    1).  A topic's coherence is the mean over the pairs of its ``n_top``
    heaviest terms (Aletras & Stevenson, 2013; Lau, Newman & Baldwin, 2014).
    Co-occurrence is counted per document, not in sliding windows of a
    reference text as in gensim's ``"c_npmi"``.

    Parameters
    ----------
    components : array-like of shape (n_topics, n_features), estimator or Pipeline
        Topic-term weights, or a fitted model or a Pipeline ending in one
        (then ``X`` may be raw documents); only their order matters.
    X : {array-like, sparse matrix} of shape (n_documents, n_features)
        Reference documents (only occurrence is used).
    n_top : int, default=10
        Number of top terms per topic.

    Returns
    -------
    coherence : ndarray of shape (n_topics,)
        In [-1, 1]; higher is more coherent.  A topic with a single term
        scores 0.

    See Also
    --------
    umass_coherence : Mimno et al.'s asymmetric, conditional measure.

    References
    ----------
    G. Bouma (2009). Normalized (pointwise) mutual information in collocation
    extraction. GSCL.  N. Aletras, M. Stevenson (2013). Evaluating topic
    coherence using distributional semantics. IWCS.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_topicfac.metrics import npmi_coherence
    >>> # Terms 0 and 1 always occur together, terms 0 and 2 never.
    >>> X = np.array([[1, 1, 0], [1, 1, 0], [0, 0, 1], [0, 0, 1]])
    >>> npmi_coherence(np.array([[0.6, 0.4, 0.0], [0.6, 0.0, 0.4]]), X, n_top=2)
    array([ 1., -1.])
    """
    top, B = _top_terms_and_occurrences(components, X, n_top)
    n_docs = B.shape[0]
    M = top.shape[1]
    upper = np.triu_indices(M, k=1)
    out = np.zeros(top.shape[0])
    if M < 2:
        return out
    for t, terms in enumerate(top):
        df, co = _co_document_frequencies(B, terms)
        p_joint = co[upper] / n_docs
        p_a, p_b = df[upper[0]] / n_docs, df[upper[1]] / n_docs
        npmi = np.where(p_joint > 0, 0.0, -1.0)
        npmi[p_joint >= 1] = 1.0
        inner = (p_joint > 0) & (p_joint < 1)
        pj = p_joint[inner]
        npmi[inner] = np.log(pj / (p_a[inner] * p_b[inner])) / -np.log(pj)
        out[t] = npmi.mean()
    return out


def topic_diversity(components, *, n_top=25):
    """Share of distinct terms among the top terms of all topics (Dieng et al.).

    .. math::

        \\mathrm{TD} = \\frac{\\big|\\bigcup_k \\mathrm{top}_{n}(k)\\big|}{K n}

    1 when no two topics share a top term; ``1 / K`` when all topics have the
    same top terms (redundant topics).

    Parameters
    ----------
    components : array-like of shape (n_topics, n_features), estimator or Pipeline
        Topic-term weights, or a fitted model or a Pipeline ending in one;
        only their order matters.
    n_top : int, default=25
        Number of top terms per topic (Dieng, Ruiz & Blei use 25); at most
        ``n_features`` are used.

    Returns
    -------
    diversity : float
        In ``[1 / n_topics, 1]``.

    References
    ----------
    A. Dieng, F. Ruiz, D. Blei (2020). Topic modeling in embedding spaces.
    TACL 8.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_topicfac.metrics import topic_diversity
    >>> topics = np.array([[0.6, 0.3, 0.1, 0.0],
    ...                    [0.0, 0.1, 0.3, 0.6],
    ...                    [0.5, 0.4, 0.0, 0.1]])
    >>> topic_diversity(topics, n_top=2)     # {0, 1}, {3, 2}, {0, 1}
    0.6666666666666666
    """
    top = _top_term_indices(_topic_weights(components), n_top)
    return float(np.unique(top).size / top.size)


# ------------------------------------------------- information criteria
def _in_sample_fit(estimator, X):
    """Log-likelihood of ``X`` under ``estimator``'s fold-in, parameters, tokens."""
    estimator, X = _unpipe(estimator, X)
    if not hasattr(estimator, "topic_proportions"):
        raise TypeError(
            f"{type(estimator).__name__} is not a topic model of count data "
            "from sklearn_topicfac; information criteria need one."
        )
    check_is_fitted(estimator)
    if "transform_tol" in estimator.get_params(deep=False):
        # As for the score: model selection folds in to the fit's tol, not
        # to the looser transform_tol (which favours more topics).
        estimator = copy.copy(estimator)
        estimator.transform_tol = estimator.tol
    theta = estimator.topic_proportions(X)
    X = to_csr(check_array(X, accept_sparse=("csr", "csc"), dtype=theta.dtype))
    n_words = float(np.sum(X.data, dtype=np.float64))
    if n_words == 0:
        raise ValueError("X contains no words (all entries are zero).")
    phi = estimator.topic_word_distributions().astype(X.dtype, copy=False)
    k, m = phi.shape
    n_parameters = k * (m - 1) + X.shape[0] * (k - 1)
    log_likelihood, _ = completion_log_likelihood(X, theta, phi)
    return log_likelihood, n_parameters, n_words


@fill_doc
def aic(estimator, X):
    """Akaike's information criterion of a fitted topic model on its corpus.

    Each document of ``X`` is folded in (as by ``transform``; to ``tol``
    for an estimator with ``transform_tol``, as its ``score`` does) and

    .. math::

        \\mathrm{AIC} = -2 \\sum_{d,w} X_{dw} \\log \\sum_z \\hat\\theta_{dz}
        P(w \\mid z) + 2 p, \\qquad p = K (V - 1) + D (K - 1),

    with :math:`p` the free parameters of the mixture: :math:`K` topics over
    :math:`V` terms and :math:`D` documents' topic proportions.  Lower is
    better.  Pass the training corpus: the criterion penalizes an in-sample
    fit.  Unlike the held-out ``score``, it charges every document's
    proportions as parameters, which makes it favour few topics on large
    corpora; ``examples/choosing_k.py`` compares the two.

    Parameters
    ----------
    {{criterion_arguments}}

    Returns
    -------
    aic : float

    See Also
    --------
    bic : a heavier, sample-size dependent penalty.

    Examples
    --------
    {{toy_counts}}
    >>> from sklearn_topicfac import PLSI
    >>> from sklearn_topicfac.metrics import aic
    >>> models = {k: PLSI(n_components=k, random_state=0).fit(X) for k in (1, 2)}
    >>> bool(aic(models[2], X) < aic(models[1], X))      # two topics pay off
    True
    """
    log_likelihood, n_parameters, _ = _in_sample_fit(estimator, X)
    return float(-2 * log_likelihood + 2 * n_parameters)


@fill_doc
def bic(estimator, X):
    """Bayesian (Schwarz) information criterion of a fitted topic model.

    As :func:`aic`, with the penalty :math:`p \\log N`, :math:`N` the number
    of words of ``X``:

    .. math::

        \\mathrm{BIC} = -2 \\sum_{d,w} X_{dw} \\log \\sum_z \\hat\\theta_{dz}
        P(w \\mid z) + p \\log N.

    Lower is better.

    Parameters
    ----------
    {{criterion_arguments}}

    Returns
    -------
    bic : float

    Examples
    --------
    {{toy_counts}}
    >>> from sklearn_topicfac import PLSI, metrics
    >>> model = PLSI(n_components=2, random_state=0).fit(X)
    >>> # 38 words: the penalty per parameter is log(38) = 3.6, above AIC's 2.
    >>> bool(metrics.bic(model, X) > metrics.aic(model, X))
    True
    """
    log_likelihood, n_parameters, n_words = _in_sample_fit(estimator, X)
    return float(-2 * log_likelihood + n_parameters * np.log(n_words))


def _check_factorization(X, W, H):
    """``X`` as canonical CSR (float64) and ``W``, ``H`` as float64 arrays."""
    X = check_array(X, accept_sparse=("csr", "csc"), dtype=np.float64)
    W = check_array(W, dtype=np.float64)
    H = check_array(H, dtype=np.float64)
    n, m = X.shape
    if W.shape[0] != n or H.shape[1] != m or W.shape[1] != H.shape[0]:
        raise ValueError(
            f"W {W.shape} @ H {H.shape} does not match X {X.shape}: pass W of "
            "shape (n_samples, k) and H of shape (k, n_features), e.g. an "
            "estimator's fit_transform(X) output and its components_."
        )
    for name, A in (("X", X.data if sp.issparse(X) else X), ("W", W), ("H", H)):
        if A.size and A.min() < 0:
            raise ValueError(
                f"{name} has negative entries: the chi-square statistic "
                "compares non-negative counts with a non-negative model."
            )
    return to_csr(X), W, H


def chi_square_statistic(X, W, H):
    """Pearson's chi-square statistic of the factorization ``X ~ W H``.

    .. math::

        \\chi^2 = \\sum_{i,j} \\frac{(X_{ij} - (WH)_{ij})^2}{(WH)_{ij}}.

    Ding, Li & Peng (2006, eq. 7-8) expand the KL objective
    :math:`J = \\sum_{ij} X_{ij} \\log \\frac{X_{ij}}{(WH)_{ij}} - X_{ij} +
    (WH)_{ij}` in the residual: :math:`J = \\chi^2 / 2 + O(\\delta^3)`.
    The paper's text calls the first term "the chi-square statistic"; it is
    *half* of it, so ``2 * J`` is what approaches this function's value for
    a close fit.  The paper divides by the data :math:`X_{ij}` (Neyman's
    statistic), which is undefined on the zero cells of text; dividing by
    the model (Pearson's) agrees with it to the same order and is defined
    wherever the model is positive.

    Sparse ``X`` is never densified: over the zero cells the terms are
    :math:`(WH)_{ij}`, whose sum is :math:`\\sum_{ij} (WH)_{ij}` (a product of
    the column sums of ``W`` and the row sums of ``H``) minus the model at
    the stored entries, evaluated there only.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Non-negative data (counts, for the statistic to have its
        distribution; see :func:`chi_square_confidence`).
    W : array-like of shape (n_samples, k)
        Non-negative document factor, e.g. ``fit_transform``'s output of
        :class:`KLNMF`.
    H : array-like of shape (k, n_features)
        Non-negative topic factor, e.g. ``components_``.

    Returns
    -------
    chi2 : float
        Non-negative; ``inf`` if the model is zero where ``X`` is not.

    Raises
    ------
    ValueError
        If the shapes do not match or an input has negative entries.

    See Also
    --------
    chi_square_confidence : the p-value of the statistic and its degrees of
        freedom.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_topicfac import KLNMF
    >>> from sklearn_topicfac.metrics import chi_square_statistic
    >>> rng = np.random.default_rng(0)
    >>> X = rng.poisson(np.outer([20, 30, 40, 50], [1, 2, 3, 2, 1]))
    >>> model = KLNMF(n_components=1, max_iter=500, random_state=0)
    >>> W = model.fit_transform(X)
    >>> chi2 = chi_square_statistic(X, W, model.components_)
    >>> print(f"{chi2:.1f} against 2 J = {2 * model.loss_:.1f}")
    13.3 against 2 J = 14.0
    """
    X, W, H = _check_factorization(X, W, H)
    # products at the stored entries, float64 (the kernels keep the dtype)
    Y = product_at_nonzeros(X, W, H)
    total = float(W.sum(axis=0) @ H.sum(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        stored = np.where(Y > 0, (X.data - Y) ** 2 / Y, np.inf)
    zeros = max(total - float(Y.sum()), 0.0)
    return float(stored.sum() + zeros)


def chi_square_confidence(X, W, H):
    """How likely a fit at least this poor is if ``X`` were drawn from ``W H``.

    Ding, Li & Peng (2006, after eq. 8): since the KL objective is, to first
    order, half the chi-square statistic, "we can associate a confidence to
    NMF factorization".  That confidence is the p-value

    .. math::

        p = P\\big(\\chi^2_{\\nu} \\ge \\chi^2(X, WH)\\big), \\qquad
        \\nu = (n - k)(m - k),

    with :math:`\\nu` the ``n m`` cells minus the :math:`k (n + m - k)`
    free parameters of a rank-``k`` matrix; for ``k = 1`` it is the
    classical :math:`(n - 1)(m - 1)` of the test of independence in a
    contingency table (rank one is independence).  A small ``p`` says the
    factorization does not explain the counts; a large one that it is
    consistent with them.

    The chi-square distribution is an asymptotic one; it holds only when:

    * ``X`` holds counts drawn independently (Poisson, or multinomial given
      the total) from the model, and ``W H`` is their maximum-likelihood
      (minimum KL) fit -- not, e.g., normalized frequencies, whose scale
      changes the statistic;
    * every expected count ``(WH)_ij`` is large (the rule of thumb is 5):
      sparse text, with most expected counts far below one, is outside it
      and gets a meaningless ``p``;
    * the fit is interior: factors with zero entries (active non-negativity
      constraints) have fewer free parameters than counted, and KL-NMF's
      local optima make the fitted statistic larger than the global one.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Non-negative counts.
    W : array-like of shape (n_samples, k)
        Non-negative document factor.
    H : array-like of shape (k, n_features)
        Non-negative topic factor.

    Returns
    -------
    p_value : float
        In ``[0, 1]``.
    dof : int
        The degrees of freedom ``(n_samples - k) * (n_features - k)``.

    Raises
    ------
    ValueError
        If the shapes do not match, an input has negative entries, or ``k``
        leaves no degree of freedom (``k >= min(n_samples, n_features)``).

    Examples
    --------
    Counts drawn from a rank-one (independence) model: a rank-one fit is
    consistent with them.

    >>> import numpy as np
    >>> from sklearn_topicfac import KLNMF
    >>> from sklearn_topicfac.metrics import chi_square_confidence
    >>> rng = np.random.default_rng(0)
    >>> X = rng.poisson(np.outer([20, 30, 40, 50], [1, 2, 3, 2, 1]))
    >>> model = KLNMF(n_components=1, max_iter=500, random_state=0)
    >>> W = model.fit_transform(X)
    >>> p_value, dof = chi_square_confidence(X, W, model.components_)
    >>> dof
    12
    >>> bool(p_value > 0.05)
    True
    """
    X, W, H = _check_factorization(X, W, H)
    (n, m), k = X.shape, W.shape[1]
    dof = (n - k) * (m - k)
    if dof <= 0:
        raise ValueError(
            f"k={k} components leave no degree of freedom for a {n} x {m} X "
            "(a rank-k fit of it can be exact): use k < min(n_samples, "
            "n_features)."
        )
    return float(chi2_distribution.sf(chi_square_statistic(X, W, H), dof)), dof
