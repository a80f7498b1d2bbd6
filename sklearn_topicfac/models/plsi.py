"""Probabilistic latent semantic indexing by (tempered) EM."""

from ..kernels import (
    em_topic_update,
    em_update_w,
    normalize_rows,
    ratio_at_nonzeros,
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
        R = ratio_at_nonzeros(X, W, H)
        loss = self.objective(X, R, W, H)
        if self.beta != 1:
            # The tempered posterior is proportional to (W_dz H_zw) ** beta;
            # the EM formulas keep their form on the powered factors.
            W, H = W**self.beta, H**self.beta
            R = ratio_at_nonzeros(X, W, H)
        # Joint update: both factors use the posterior of the incoming state.
        return em_update_w(R, W, H), {"loss": loss, "WtR": transposed_product(W, R)}

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
