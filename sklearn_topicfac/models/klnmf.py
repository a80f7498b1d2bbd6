"""KL-NMF by Lee-Seung multiplicative updates, plain and L1-normalized."""

from ..kernels import (
    cd_pass,
    dn_pass,
    mu_doc_pass,
    mu_topic_update,
    normalize_rows,
    positive_or_one,
    transposed_product,
)
from ._base import ProbabilisticFactors, TopicModel

# The solvers whose iteration updates both factors from every document at
# once: their passes, ``(W_new, H_new, sums of the incoming state)``.
PASSES = {"cd": cd_pass, "dn": dn_pass}


class KLNMFModel(TopicModel):
    """``min D(X || W H)``, ``W`` first, then ``H``.

    With ``solver="mu"``, Lee & Seung's multiplicative updates:

    .. math::

        W \\leftarrow W \\odot \\frac{(X / WH) H^T}{\\mathbf{1} H^T}, \\qquad
        H \\leftarrow H \\odot \\frac{W^T (X / WH)}{W^T \\mathbf{1}}

    With ``solver="cd"``, one iteration is a sweep of cyclic coordinate
    descent with safeguarded scalar Newton steps (`kernels.cd_sweep`): the
    columns of ``W``, then the rows of ``H``.  Its topic update needs every
    document at once, so block-wise fits and online updates run the
    multiplicative updates instead (`for_blocks`).

    With ``solver="dn"``, one iteration is a diagonal Newton step on every
    row of ``W``, then on every column of ``H``, each kept where it lowers
    that row's (column's) objective and replaced by the multiplicative step
    elsewhere (`kernels.dn_sweep`); like ``"cd"`` it needs every document
    at once.

    Parameters
    ----------
    solver : {"mu", "cd", "dn"}, default="mu"
    fold_in_iter, fold_in_tol
        As for `TopicModel`.
    """

    def __init__(self, solver="mu", **fold_in):
        super().__init__(**fold_in)
        self.solver = solver

    def for_blocks(self):
        if self.solver == "mu":
            return self
        return type(self)(fold_in_iter=self.fold_in_iter, fold_in_tol=self.fold_in_tol)

    def doc_step(self, X, W, H, warm):
        if self.solver in PASSES:
            # The whole sweep, topics included: X holds every document.
            W_new, H_new, sums = PASSES[self.solver](X, W, H)
            return W_new, {"loss": self.objective(X, sums, W, H), "H": H_new}
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
        if "H" in stats:
            return stats["H"], None
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
        if "H" in stats:
            # A coordinate-descent sweep updated W and H = G themselves.
            return normalize_rows(stats["H"])
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
