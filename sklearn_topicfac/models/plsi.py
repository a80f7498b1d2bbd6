"""Probabilistic latent semantic indexing by (tempered) EM."""

from ..kernels import (
    em_doc_pass,
    em_topic_update,
    normalize_rows,
    ratio_log_sums_at_nonzeros,
    transposed_product,
)
from ._base import ProbabilisticFactors, TopicModel


class PLSIModel(ProbabilisticFactors, TopicModel):
    """Hofmann's aspect model ``P(d, w) = sum_z P(z) P(d|z) P(w|z)`` by EM.

    One EM step updates both factors from the posterior of the incoming
    state; with ``beta < 1`` the posterior is tempered (the joint raised to
    the power ``beta``).

    Parameters
    ----------
    beta : float in (0, 1], default=1.0
        Tempering exponent; 1 is plain EM.
    fold_in_iter, fold_in_tol
        As for `TopicModel`.
    """

    def __init__(self, beta=1.0, **fold_in):
        super().__init__(**fold_in)
        self.beta = beta

    def doc_step(self, X, W, H, warm):
        if self.beta == 1:
            W_new, R, sums = em_doc_pass(X, W, H)
            loss = self.objective(X, sums, W, H)
        else:
            loss = self.objective(X, ratio_log_sums_at_nonzeros(X, W, H), W, H)
            # The tempered posterior is proportional to (W_dz H_zw) ** beta;
            # the EM formulas keep their form on the powered factors.
            W, H = W**self.beta, H**self.beta
            W_new, R, _ = em_doc_pass(X, W, H)
        # Joint update: both factors use the posterior of the incoming state.
        return W_new, {"loss": loss, "WtR": transposed_product(W, R)}

    def topic_step(self, H, stats):
        if self.beta != 1:
            H = H**self.beta
        return em_topic_update(H, stats["WtR"]), None

    def online_counts(self, H, stats):
        return super().online_counts(H**self.beta if self.beta != 1 else H, stats)

    def doc_output(self, W, p_z=None):
        theta, n_d = normalize_rows(W)
        # A document without words carries no evidence: its P(z|d) is the
        # prior P(z) of the training corpus.
        if p_z is not None:
            theta[n_d == 0] = p_z.astype(theta.dtype, copy=False)
        return theta
