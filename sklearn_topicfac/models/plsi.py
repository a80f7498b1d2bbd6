"""Probabilistic latent semantic indexing by (tempered) EM."""

from ..kernels import (
    dn_topic_check,
    dn_topic_proposal,
    em_doc_pass,
    em_topic_update,
    normalize_rows,
    ratio_log_sums_at_nonzeros,
    transposed_product,
)
from ._base import Check, ProbabilisticFactors, TopicModel, squarem_cycle
from .klnmf import PASSES, dn_blockwise_doc_step, dn_blockwise_settle, whole_pass
from .solvers import CD, DN, EM, SQUAREM


class PLSIModel(ProbabilisticFactors, TopicModel):
    """Hofmann's aspect model ``P(d, w) = sum_z P(z) P(d|z) P(w|z)`` by EM.

    One EM step updates both factors from the posterior of the incoming
    state; with ``beta < 1`` the posterior is tempered (the joint raised to
    the power ``beta``).

    With ``solver="squarem"`` (and ``beta=1``) one iteration is a cycle of
    SQUAREM (Varadhan & Roland, 2008): two EM steps ``theta_1 = F(theta_0)``,
    ``theta_2 = F(theta_1)``, their squared extrapolation ``theta'``
    (`kernels.squarem_point`, topics renormalized) and one EM step from it,
    ``F(theta')``, which is kept when the objective at ``theta'`` is no
    higher than at ``theta_1``; otherwise the cycle ends at ``theta_2``.
    Either way the objective is no higher than at ``theta_1``, hence than at
    the start of the cycle: it never rises.  The cycle needs every document
    at once (its topics): in memory only.

    With ``solver="cd"`` (and ``beta=1``) one iteration is a sweep of
    KL-NMF's coordinate descent (`kernels.cd_sweep`) on the unnormalized
    factors ``W = N P(d|z) P(z)``, ``H = P(w|z)``, after which the topics
    are renormalized and their sums moved into ``W``: the model ``W H``,
    hence the objective (the same generalized KL divergence, which is the
    negative log-likelihood up to a constant once ``sum(W H) = N``), is
    that of the sweep, which never raises it.  It needs every document at
    once: in memory only.  With ``solver="dn"`` the same with KL-NMF's
    diagonal Newton iteration (`kernels.dn_sweep`), which block by block
    runs as a map-reduce (`KLNMFModel`).  Online steps run plain EM
    (`for_online`).  The solvers other than EM need ``beta=1``.

    Parameters
    ----------
    beta : float in (0, 1], default=1.0
        Tempering exponent; 1 is plain EM.
    solver : {"em", "squarem", "cd", "dn"}, default="em"
    fold_in_iter, fold_in_tol
        As for `TopicModel`.
    """

    solvers = {"em": EM, "squarem": SQUAREM, "cd": CD, "dn": DN}

    def __init__(self, beta=1.0, solver="em", *, blockwise=False, **fold_in):
        super().__init__(**fold_in)
        if beta != 1 and solver != "em":
            raise ValueError(
                f"solver={solver!r} needs beta=1; tempered EM (beta < 1) runs "
                "with solver='em'."
            )
        self.beta = beta
        self.solver = solver
        self.blockwise = blockwise

    def for_blocks(self):
        super().for_blocks()
        if self.solver != "dn":
            return self
        return type(self)(
            self.beta,
            self.solver,
            blockwise=True,
            fold_in_iter=self.fold_in_iter,
            fold_in_tol=self.fold_in_tol,
        )

    def for_online(self):
        if self.solver == "em":
            return self
        return type(self)(
            self.beta, fold_in_iter=self.fold_in_iter, fold_in_tol=self.fold_in_tol
        )

    def _em(self, X, W, H):
        """One plain EM step: ``(W_new, H_new, objective of (W, H))``."""
        W_new, R, sums = em_doc_pass(X, W, H)
        H_new = em_topic_update(H, transposed_product(W, R))
        return W_new, H_new, self.objective(X, sums, W, H)

    def _squarem(self, X, W, H):
        return squarem_cycle(
            self._em, lambda Wp, Hp: (Wp, normalize_rows(Hp)[0]), X, W, H
        )

    def doc_step(self, X, W, H, warm):
        if self.blockwise:
            return dn_blockwise_doc_step(self, X, W, H)
        if self.solver in PASSES and self.beta == 1:
            # The whole sweep, topics included (X holds every document), the
            # topics normalized to P(w|z) and W scaled by their sums.
            W_new, H_new, sums = whole_pass(self, X, W, H, normalize=True)
            return W_new, {"loss": self.objective(X, sums, W, H), "H": H_new}
        if self.solver == "squarem" and self.beta == 1:
            # The whole cycle, topics included: X holds every document.
            return self._squarem(X, W, H)
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
        if "H" in stats:
            return stats["H"], None
        if self.blockwise:
            return Check(dn_topic_proposal(H, stats))
        if self.beta != 1:
            H = H**self.beta
        return em_topic_update(H, stats["WtR"]), None

    def check_step(self, X, W, H, check):
        return {"dn_log_change": dn_topic_check(X, W, H, check.proposal)}

    def settle(self, H, stats, check, sums):
        return dn_blockwise_settle(H, stats, check, sums, normalized=True)

    def online_counts(self, H, stats):
        return super().online_counts(H**self.beta if self.beta != 1 else H, stats)

    def doc_output(self, W, p_z=None):
        theta, n_d = normalize_rows(W)
        # A document without words carries no evidence: its P(z|d) is the
        # prior P(z) of the training corpus.
        if p_z is not None:
            theta[n_d == 0] = p_z.astype(theta.dtype, copy=False)
        return theta
