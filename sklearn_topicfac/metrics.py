"""Metrics for judging document clusterings and topic models.

A clustering can be read off a topic model by assigning each document to its
dominant topic (``argmax`` over a row of the document-topic matrix). The
functions here compare such cluster assignments with known class labels.
"""

import numpy as np
from scipy.optimize import linear_sum_assignment

__all__ = ["clustering_accuracy"]


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

    Raises
    ------
    ValueError
        If the inputs are not 1-D, are empty, or differ in length.

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
