"""The protocol every model follows, with the defaults of the NMF family.

A *model* is the mathematics of one family of topic factorizations, as a
plain class: it knows nothing of scikit-learn, Dask or files.  Its
constructor takes the family's hyperparameters; every method is a function
of the arrays it is given (the model keeps no fitted state).  The engine
(`sklearn_topicfac.engine`) runs any model that implements:

``prepare_start(W, H)``
    map a count-scale start (``W @ H ~ X``) to the model's parametrization;
    row-wise in ``W`` (a block of rows is mapped with the whole ``H``);
``start_from_factors(W, H, total)``
    the start from a count-scale factorization of X (NNDSVDa, K-means):
    ``(W, H)``, or ``(None, H)`` when the documents' start is drawn
    (see ``random_start``);
``doc_step(X, W, H, warm)``
    the per-document part of one iteration on the rows ``X``: the new
    document factor and a dict of statistics that are *sums over
    documents*, always including ``"loss"``, the objective of the incoming
    state on these rows; ``warm`` is False on the first iteration from a
    start (``W`` is then a start, not a previous iteration's result);
``topic_step(H, stats)``
    the topic update from the statistics summed over all documents: the new
    ``H`` and a per-topic rescaling of the document factor (or ``None``);
``doc_loss(X, W, H)`` and ``topic_loss(H)``
    the objective of a state: the sum of ``doc_loss`` over row blocks plus
    ``topic_loss``;
``fold_in(X, H)``
    the document factor of new documents with the topics fixed;
``doc_output(W, p_z)``
    what ``transform`` returns, from a document factor;
``topic_proportions(X, H)``
    ``P(z|d)`` of the documents folded in, rows summing to one;
``topic_attributes(H, w_sum)`` and ``doc_attributes(w_sum)``
    the fitted attributes: those of the topics, and a row-wise function of
    ``W`` per per-document attribute.

for online learning by stepwise EM, ``online_counts(H, stats)`` and
``online_topics(counts, w_sum)``; and for split-merge moves
(`engine.moves`), ``merge_pair``, ``responsibilities``, ``topic_entries``
and ``moved_topics``.  Because ``doc_step`` only sees a block of rows and
its statistics add up, one iteration is a map-reduce over document blocks:
in-memory, out-of-core and Dask fits run the same calls.
"""

import numpy as np

from .._validation import length_order, unsort_rows
from ..kernels import (
    kl_divergence_from_sums,
    mu_fold_in,
    multiply_keeping_zeros,
    normalize_rows,
    positive_or_one,
    product_at_nonzeros,
    ratio_log_sums_at_nonzeros,
)
from ._moves import SHARE_FLOOR


class TopicModel:
    """Base of the models: the protocol, with the NMF family's defaults.

    Parameters
    ----------
    fold_in_iter : int, default=200
        Maximum number of sweeps of the fold-in (``transform``).
    fold_in_tol : float, default=1e-4
        A document's fold-in stops when the mean absolute change of its topic
        proportions falls below this.

    Attributes
    ----------
    random_start : {"normal", "gamma"}
        How ``init="random"`` draws the start: ``"normal"``, absolute
        normal draws for the documents, then the topics, scaled so that
        ``W @ H`` has the mean of X (scikit-learn's NMF); ``"gamma"``,
        Gamma(100, 1/100) draws for the topics, then the documents
        (scikit-learn's LDA).
    moves : bool
        Whether the model offers split-merge moves (`engine.moves`).
    """

    random_start = "normal"
    moves = True

    def __init__(self, *, fold_in_iter=200, fold_in_tol=1e-4):
        self.fold_in_iter = fold_in_iter
        self.fold_in_tol = fold_in_tol

    # ------------------------------------------------------------- starts
    def prepare_start(self, W, H):
        return W, H

    def for_blocks(self):
        """The model to run where ``doc_step`` sees only some of the documents
        (block-wise fits, online updates): the same objective and
        parametrization, with iterations that are one map-reduce."""
        return self

    def start_from_factors(self, W, H, total):
        return W, H

    # -------------------------------------------------------- iterations
    def doc_step(self, X, W, H, warm):  # pragma: no cover - abstract
        raise NotImplementedError

    def topic_step(self, H, stats):  # pragma: no cover - abstract
        raise NotImplementedError

    def objective(self, X, sums, W, H):
        """Objective of ``(W, H)`` on the rows ``X``, given the sums over X's
        stored entries ``sums = (sum x log r, sum x)`` of the ratio ``r = X /
        (W H)`` there (`kernels.ratio_log_sums`).

        Additive over row blocks.  The generalized KL divergence by default.
        """
        return kl_divergence_from_sums(sums, W, H)

    def doc_loss(self, X, W, H):
        return self.objective(X, ratio_log_sums_at_nonzeros(X, W, H), W, H)

    def topic_loss(self, H):
        return 0.0

    # ---------------------------------------------------------- fold-in
    def fold_in(self, X, H):
        """Count-scale document factor for ``X`` with the topics fixed.

        Multiplicative KL updates of ``W`` alone, from the deterministic start
        that spreads each document's length evenly over the topics.  This
        subproblem is convex.  Each document stops on its own once the mean
        absolute change of its topic proportions falls below ``fold_in_tol``
        (or after ``fold_in_iter`` sweeps), so a document's result does not
        depend on the other documents in the batch.
        """
        H = H.astype(X.dtype, copy=False)
        # Documents are independent here: sorted by length (and kept sorted
        # as finished ones drop out), the sampled products are batched.
        order = length_order(X)
        if order is not None:
            X = X[order]
        n_d = np.asarray(X.sum(axis=1)).ravel()
        total = H.sum(axis=1).sum()
        W = np.repeat((n_d / (total if total > 0 else 1))[:, None], H.shape[0], axis=1)
        W = W.astype(X.dtype, copy=False)
        W = mu_fold_in(X, H, W, self.fold_in_iter, self.fold_in_tol)
        return unsort_rows(W, order)

    def doc_output(self, W, p_z=None):
        """What ``transform`` returns, from a count-scale document factor."""
        return W

    def topic_proportions(self, X, H):
        """``P(z|d)`` of the documents ``X`` folded in (rows sum to one).

        Reads the count-scale fold-in ``W`` and topics ``H`` as ``W @ H =
        diag(N_d) P(z|d) P(w|z)``; a document without words gets the uniform
        mixture.
        """
        H = H.astype(X.dtype, copy=False)
        h = H.sum(axis=1)
        theta, n_d = normalize_rows(self.fold_in(X, H) * h)
        theta[n_d == 0] = 1 / H.shape[0]
        return theta

    # ------------------------------------------------------- attributes
    def topic_attributes(self, H, w_sum):
        """The fitted attributes of the topics, from ``H`` and ``W``'s column sums."""
        return {"components_": H}

    def doc_attributes(self, w_sum):
        """Per-document fitted attributes, each a row-wise function of ``W``."""
        return {"embedding_": self.doc_output}

    # ------------------------------------------------- split-merge moves
    def merge_pair(self, H):
        """The pair of topics to merge, ``(kept, merged)``, from ``H`` alone.

        ``None``: the NMF family's topics do not hold their counts (``H`` is
        normalized, or in any scale), so the pair is chosen by
        `cheapest_merge` of the counts gathered from the documents
        (`topic_entries`).
        """
        return None

    def responsibilities(self, X, W, H):
        """What `topic_entries` reads for the rows ``X``: ``(Theta, B, y, rows)``.

        The topics' shares of each stored entry are ``Theta_dt B_tw / y_dw``
        with ``y = Theta B`` at the entries; for the NMF family ``Theta, B =
        W, H`` (the shares do not depend on how the scale is split between
        the factors).  Computed once for all the topics of a move.
        """
        H = H.astype(X.dtype, copy=False)
        W = W.astype(X.dtype, copy=False)
        y = product_at_nonzeros(X, W, H)
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        return W, H, y, rows

    def topic_entries(self, X, responsibilities, t):
        """Topic ``t``'s expected counts ``X_dw Theta_dt B_tw / (Theta B)_dw``.

        At the stored entries of the rows ``X`` where the topic holds at
        least ``SHARE_FLOOR`` of the word: ``(rows, columns, counts)``;
        ``responsibilities`` is `responsibilities` of these rows.
        """
        Theta, B, y, rows = responsibilities
        with np.errstate(divide="ignore", invalid="ignore"):
            share = Theta[rows, t] * B[t, X.indices] / y
        keep = np.flatnonzero(share >= SHARE_FLOOR)
        return rows[keep], X.indices[keep], X.data[keep] * share[keep]

    def moved_topics(self, H, kept, merged, split, halves, columns, term_counts):
        """The topics after a move, normalized: ``kept`` takes ``merged``'s
        counts, ``split`` and ``merged`` the two ``halves`` (on ``columns``).

        ``term_counts`` are the topics' expected term counts gathered from the
        documents; the other topics keep their distributions.  The document
        factor is left as it is: the first document step of the iterations
        that follow refits its scale and its split between the halves.  The
        halves are zero
        off ``columns``, and multiplicative updates keep zeros: the two new
        topics stay apart where the split put them.
        """
        new = normalize_rows(H.astype(np.float64))[0]
        new[kept] = normalize_rows(term_counts[[kept]] + term_counts[[merged]])[0]
        for slot, half in zip((split, merged), halves, strict=True):
            new[slot] = 0.0
            new[slot, columns] = half / max(float(half.sum()), np.finfo(float).tiny)
        return new.astype(H.dtype, copy=False)

    # ------------------------------------------------------------ online
    def online_counts(self, H, stats):
        """Expected topic-word counts of a mini-batch from its statistics."""
        return multiply_keeping_zeros(H, stats["WtR"])

    def online_topics(self, counts, w_sum):
        """Topics from averaged statistics: the M-step (row-normalized counts)."""
        return normalize_rows(counts)[0]


class ProbabilisticFactors:
    """Parametrization ``W @ H = D diag(s) C`` shared by NormalizedNMF and PLSI.

    Internally ``H = C = P(w|z)`` has rows summing to one and ``W = D diag(s)``
    is in count scale, so ``W @ H`` estimates ``X``.  After fitting,
    ``components_ = P(w|z)``, ``p_z_ = s / N`` and ``p_d_given_z_ = D``.
    """

    def prepare_start(self, W, H):
        C, h = normalize_rows(H)
        return W * h[None, :], C

    def topic_attributes(self, H, w_sum):
        total = w_sum.sum()
        return {"components_": H, "p_z_": w_sum / (total if total > 0 else 1)}

    def doc_attributes(self, w_sum):
        # D = W / s with s the column sums of the whole W (a zero column stays 0);
        # the output of a document without words may be the prior P(z).
        s = positive_or_one(w_sum)
        p_z = self.topic_attributes(None, w_sum)["p_z_"]
        return {
            "p_d_given_z_": lambda W: W / s[None, :].astype(W.dtype, copy=False),
            "embedding_": lambda W: self.doc_output(W, p_z),
        }
