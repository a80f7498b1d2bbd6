"""NMF under normalization constraints with joint multiplicative updates."""

import numpy as np
from scipy.special import xlogy

from ..kernels import (
    em_doc_pass,
    em_topic_update,
    kl_divergence_from_sums,
    normalize_rows,
    transposed_product,
)
from ._base import TopicModel


class JointNMFModel(TopicModel):
    """KL-NMF with normalized topics, both factors updated from one ratio.

    Paper 002, Alg. 4 (``normalize="components"``, with the L1 penalty
    ``alpha`` on ``W``) and Alg. 6 (``normalize="both"``: the rows of ``W``
    sum to one too and the model is ``diag(N_d) W H``).

    Parameters
    ----------
    normalize : {"components", "both"}
        Which factors carry the sum-to-one constraint.
    alpha : float >= 0
        L1 penalty on ``W`` (``normalize="components"`` only).
    fold_in_iter, fold_in_tol
        As for `TopicModel`.
    """

    def __init__(self, normalize="components", alpha=0.0, **fold_in):
        super().__init__(**fold_in)
        self.normalize = normalize
        self.alpha = alpha

    def prepare_start(self, W, H):
        H, h = normalize_rows(H)
        W = W * h[None, :]
        if self.normalize == "both":
            W = normalize_rows(W)[0]
        return W, H

    def objective(self, X, sums, W, H):
        if self.normalize == "both":
            # The model is diag(N_d) W H, and X / (diag(N_d) W H) = R / N_d:
            # D(X || diag(N_d) W H) = D computed from R with W scaled by N_d,
            # minus sum_d N_d log N_d.
            n_d = np.asarray(X.sum(axis=1)).ravel()
            shift = float(np.sum(xlogy(n_d, n_d), dtype=np.float64))
            return kl_divergence_from_sums(sums, W * n_d[:, None], H) - shift
        penalty = self.alpha * float(W.sum(dtype=np.float64))
        return kl_divergence_from_sums(sums, W, H) + penalty

    def doc_step(self, X, W, H, warm):
        W_new, R, sums = em_doc_pass(X, W, H)
        if self.normalize == "both":
            n_d = np.asarray(X.sum(axis=1)).ravel()
            scale = np.where(n_d > 0, n_d, 1)[:, None]
        else:
            scale = 1 + self.alpha
        stats = {"loss": self.objective(X, sums, W, H), "WtR": transposed_product(W, R)}
        return W_new / scale, stats

    def topic_step(self, H, stats):
        return em_topic_update(H, stats["WtR"]), None

    def fold_in(self, X, H):
        # The unpenalized count-scale minimizer for fixed topics, divided by
        # 1 + alpha: the penalized one (Lemma 6.1 on the document subproblem).
        return super().fold_in(X, H) / (1 + self.alpha)

    def doc_output(self, W, p_z=None):
        return normalize_rows(W)[0] if self.normalize == "both" else W
