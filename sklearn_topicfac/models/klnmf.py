"""KL-NMF by Lee-Seung multiplicative updates, plain and L1-normalized."""

from ..kernels import (
    mu_doc_pass,
    mu_topic_update,
    normalize_rows,
    positive_or_one,
    transposed_product,
)
from ._base import ProbabilisticFactors, TopicModel


class KLNMFModel(TopicModel):
    """``min D(X || W H)`` by multiplicative updates, ``W`` first, then ``H``.

    .. math::

        W \\leftarrow W \\odot \\frac{(X / WH) H^T}{\\mathbf{1} H^T}, \\qquad
        H \\leftarrow H \\odot \\frac{W^T (X / WH)}{W^T \\mathbf{1}}
    """

    def doc_step(self, X, W, H, warm):
        # The objective of the incoming state (from its ratio's sums), the W
        # half-step, and the ratio of the *updated* W that the topic
        # half-step uses (alternating updates; this is what makes NMF differ
        # from PLSI's joint EM), all from one pass over X.
        W_new, R_new, sums = mu_doc_pass(X, W, H)
        loss = self.objective(X, sums, W, H)
        return W_new, {
            "loss": loss,
            "WtR": transposed_product(W_new, R_new),
            "w_sum": W_new.sum(axis=0),
        }

    def topic_step(self, H, stats):
        return mu_topic_update(H, stats["WtR"], stats["w_sum"]), None

    def online_topics(self, counts, w_sum):
        # The multiplicative H update from averaged statistics.
        return counts / positive_or_one(w_sum)[:, None]


class NormalizedNMFModel(ProbabilisticFactors, KLNMFModel):
    """KL-NMF with the factors L1-normalized after every half-step.

    ``W H = D diag(s) C`` with the rows of ``C`` and the columns of ``D``
    summing to one (Zhang, Ding & Tang, Alg. 3).
    """

    def topic_step(self, H, stats):
        # H is C (rows sum to one).  After the W half-step the document factor
        # W splits as D diag(s) with s = its column sums; the topic half-step
        # updates G = diag(s) C using D, then splits G into s' and C'.  The new
        # document factor D diag(s') is W rescaled by s' / s.
        s = stats["w_sum"]
        s_safe = s + (s == 0)
        G = mu_topic_update(
            s_safe[:, None] * H, stats["WtR"] / s_safe[:, None], s / s_safe
        )
        C, s_new = normalize_rows(G)
        return C, s_new / s_safe

    def online_topics(self, counts, w_sum):
        # G = diag(s) C updated multiplicatively is C * (W^T R): normalized
        # counts, as for PLSI.
        return normalize_rows(counts)[0]
