"""The held-out document-completion score of any model, from its fold-in.

One composition of the `kernels.completion` pieces, the same for every
model: split each document's words in two (`completion_split`), fold the
observed half in with the topics fixed (the model's ``topic_proportions``),
and score the held-out half under the folded-in mixture of the topics
``P(w|z)``, each mixed with the uniform distribution over the terms with
weight ``HELD_OUT_SMOOTHING``:

.. math::

    \\sum_{d,w} X^{held}_{dw} \\log \\sum_z \\hat\\theta_{dz}
    \\big((1 - \\epsilon) P(w \\mid z) + \\epsilon / V\\big).
"""

import numpy as np

from ..kernels import (
    HELD_OUT_SMOOTHING,
    completion_log_likelihood,
    completion_split,
    normalize_rows,
)


def held_out_log_likelihood(model, X, H, seed):
    """Summed held-out log-likelihood of CSR ``X`` and the number of held-out words.

    Parameters
    ----------
    model : TopicModel
        Any model of `sklearn_topicfac.models`; only its
        ``topic_proportions(X, H)`` is used.
    X : sparse matrix of shape (n_samples, n_features)
        Non-negative counts, CSR, already validated.
    H : ndarray of shape (n_components, n_features)
        The fitted topics (any positive row scale: rows are normalized).
    seed : int
        The seed of the split (`completion_split`).

    Returns
    -------
    log_likelihood : float
        :math:`\\sum_{d,w} X^{held}_{dw} \\log \\sum_z \\hat\\theta_{dz}
        P_\\epsilon(w \\mid z)`.
    n_words : float
        :math:`\\sum_{d,w} X^{held}_{dw}`.

    Raises
    ------
    ValueError
        If ``X`` has no word, or too few for any to be held out.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from sklearn_topicfac.models import PLSIModel
    >>> from sklearn_topicfac.models._completion import held_out_log_likelihood
    >>> X = sp.csr_matrix(np.array([[8.0, 6.0, 0.0], [0.0, 5.0, 9.0]]))
    >>> H = np.array([[0.6, 0.4, 0.0], [0.0, 0.3, 0.7]])
    >>> ll, n_words = held_out_log_likelihood(PLSIModel(), X, H, seed=0)
    >>> bool(ll < 0 < n_words <= X.sum())
    True
    """
    if np.sum(X.data, dtype=np.float64) == 0:
        raise ValueError(
            "X contains no words (all entries are zero): nothing to score."
        )
    X_observed, X_held_out = completion_split(X, seed)
    if X_held_out.nnz == 0:
        raise ValueError(
            "X has too few words to score: the held-out half of its words "
            "is empty (score a larger sample of documents)."
        )
    theta = model.topic_proportions(X_observed, H)
    phi = normalize_rows(H.astype(X.dtype, copy=False))[0]
    return completion_log_likelihood(
        X_held_out, theta, phi, smoothing=HELD_OUT_SMOOTHING
    )
