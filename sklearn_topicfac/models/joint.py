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
from ._base import TopicModel, squarem_cycle
from .klnmf import PASSES, whole_pass
from .solvers import CD, DN, JOINT, SQUAREM, WHOLE_DATA, Solver

# JointNMF's diagonal Newton passes renormalize both factors after a whole
# pass; their map-reduce form is not built, so they run in memory only.
_JOINT_DN = Solver(
    "dn", WHOLE_DATA, DN.auto_max_iter, "diagonal Newton passes under the constraints"
)


class JointNMFModel(TopicModel):
    """KL-NMF with normalized topics, both factors updated from one ratio.

    Paper 002, Alg. 4 (``normalize="components"``, with the L1 penalty
    ``alpha`` on ``W``) and Alg. 6 (``normalize="both"``: the rows of ``W``
    sum to one too and the model is ``diag(N_d) W H``).

    With ``solver="squarem"`` one iteration is a SQUAREM cycle of the joint
    update (`squarem_cycle`; the extrapolated point's rows renormalized),
    whose objective never rises, as PLSI's.

    With ``solver="cd"`` or ``"dn"`` one iteration is a pass of KL-NMF's
    coordinate descent or diagonal Newton on the model's count-scale
    factors ``(s W, H)``, ``s = 1 + alpha`` (``"components"``; the
    objective is then ``D(X || s W H)`` plus a constant, the rows of ``H``
    summing to one) or ``s = N_d`` per document (``"both"``); the topics
    are renormalized after the pass and ``W`` mapped back: divided by
    ``1 + alpha``, or its rows scaled to sum to one, which moves each
    document's model to the scale ``N_d`` that minimizes its divergence.
    Neither raises the objective.  These and SQUAREM need every document at
    once (`solvers.WHOLE_DATA`): in memory only; online steps run the joint
    update (`for_online`).

    Parameters
    ----------
    normalize : {"components", "both"}
        Which factors carry the sum-to-one constraint.
    alpha : float >= 0
        L1 penalty on ``W`` (``normalize="components"`` only).
    solver : {"joint", "squarem", "cd", "dn"}, default="joint"
    fold_in_iter, fold_in_tol
        As for `TopicModel`.
    """

    def __init__(self, normalize="components", alpha=0.0, solver="joint", **fold_in):
        super().__init__(**fold_in)
        self.normalize = normalize
        self.alpha = alpha
        self.solver = solver

    solvers = {"joint": JOINT, "squarem": SQUAREM, "cd": CD, "dn": _JOINT_DN}

    def for_online(self):
        if self.solver == "joint":
            return self
        return type(self)(
            self.normalize,
            self.alpha,
            fold_in_iter=self.fold_in_iter,
            fold_in_tol=self.fold_in_tol,
        )

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

    def _scale(self, X):
        """What the joint update divides ``W R H^T`` by."""
        if self.normalize == "both":
            n_d = np.asarray(X.sum(axis=1)).ravel()
            return np.where(n_d > 0, n_d, 1)[:, None]
        return 1 + self.alpha

    def _joint(self, X, W, H):
        """One joint update: ``(W_new, H_new, objective of (W, H))``."""
        W_new, R, sums = em_doc_pass(X, W, H)
        H_new = em_topic_update(H, transposed_product(W, R))
        return W_new / self._scale(X), H_new, self.objective(X, sums, W, H)

    def _project(self, W, H):
        """The rows that must sum to one, renormalized."""
        H = normalize_rows(H)[0]
        return (normalize_rows(W)[0] if self.normalize == "both" else W), H

    def _pass(self, X, W, H):
        """A whole pass of KL-NMF's ``solver`` on the count-scale factors."""
        both = self.normalize == "both"
        if both:
            n_d = np.asarray(X.sum(axis=1)).ravel()
            W_count = W * n_d.astype(W.dtype, copy=False)[:, None]
        else:
            s = W.dtype.type(1 + self.alpha)
            W_count = W * s if s != 1 else W
        W_new, H_new, (x_log_r, sum_x) = whole_pass(self, X, W_count, H, normalize=True)
        # The pass's sums are of the ratio X / (count-scale model); the
        # objective takes those of X / (W H): sum x log(scale) more.
        if both:
            x_log_r += float(np.sum(xlogy(n_d, n_d), dtype=np.float64))
            W_new = normalize_rows(W_new)[0]
        elif s != 1:
            x_log_r += float(np.log(np.float64(s))) * sum_x
            W_new = W_new / s
        loss = self.objective(X, (x_log_r, sum_x), W, H)
        return W_new, {"loss": loss, "H": H_new}

    def doc_step(self, X, W, H, warm):
        if self.solver in PASSES:
            # The whole pass, topics included: X holds every document.
            return self._pass(X, W, H)
        if self.solver == "squarem":
            # The whole cycle, topics included: X holds every document.
            return squarem_cycle(self._joint, self._project, X, W, H)
        W_new, R, sums = em_doc_pass(X, W, H)
        stats = {"loss": self.objective(X, sums, W, H), "WtR": transposed_product(W, R)}
        return W_new / self._scale(X), stats

    def topic_step(self, H, stats):
        if "H" in stats:
            return stats["H"], None
        return em_topic_update(H, stats["WtR"]), None

    def fold_in(self, X, H):
        # The unpenalized count-scale minimizer for fixed topics, divided by
        # 1 + alpha: the penalized one (Lemma 6.1 on the document subproblem).
        return super().fold_in(X, H) / (1 + self.alpha)

    def doc_output(self, W, p_z=None):
        return normalize_rows(W)[0] if self.normalize == "both" else W
