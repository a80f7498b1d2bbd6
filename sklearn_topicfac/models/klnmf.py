"""KL-NMF, plain and L1-normalized: Lee-Seung multiplicative updates, or a
whole pass of coordinate descent or diagonal Newton (`PASSES`)."""

import numpy as np

from ..kernels import (
    cd_pass,
    dn_doc_half,
    dn_pass,
    dn_topic_check,
    dn_topic_proposal,
    dn_topic_settle,
    mu_doc_pass,
    mu_topic_update,
    normalize_rows,
    positive_or_one,
    transposed_product,
)
from ._base import Check, ProbabilisticFactors, TopicModel
from .solvers import CD, DN, MU

# The solvers whose iteration updates both factors from every document at
# once: their passes, ``(W_new, H_new, sums of the incoming state, y_new)``.
PASSES = {"cd": cd_pass, "dn": dn_pass}


class _LastModel:
    """The model ``y = W H`` at X's stored entries that the last pass left.

    A pass ends by forming it; the next one starts from it instead of
    forming it again (one sampled product of the three a diagonal Newton
    pass makes) when it receives the very factors that pass returned on the
    same ``X``.  They are compared by value, at O((n + m) k) against the
    product's O(nnz k), so a factor changed in between (rescaled, flushed,
    a new start) only costs the product.  Pickles empty: a model sent
    elsewhere carries no data.
    """

    def __init__(self, X=None, W=None, H=None, y=None):
        # In float32 the factors the pass returns are rounded from those it
        # formed ``y`` with: ``y`` is not their model to the last bit, and
        # the next pass's per-row decisions (`kernels.dn_sweep`) would
        # compare objectives that differ by more than their change.
        keep = y is not None and W.dtype == H.dtype == y.dtype == np.float64
        self.state = (X, W.copy(), H.copy(), y) if keep else None

    def __reduce__(self):
        return (type(self), ())

    def at(self, X, W, H):
        """The stored model if ``(X, W, H)`` are those it belongs to, else None."""
        if self.state is None:
            return None
        X0, W0, H0, y = self.state
        if X0 is X and np.array_equal(W0, W) and np.array_equal(H0, H):
            return y
        return None


def whole_pass(model, X, W, H, normalize=False):
    """One pass of ``model.solver`` (a key of `PASSES`) over every document:
    ``(W_new, H_new, sums of the incoming state)``.

    With ``normalize``, the rows of ``H_new`` are scaled to sum to one and
    the columns of ``W_new`` by their sums (the model is unchanged), so that
    the factors the next pass receives are those this one returned.
    """
    last = model.__dict__.get("_last_model") or _LastModel()
    W_new, H_new, sums, y_new = PASSES[model.solver](X, W, H, last.at(X, W, H))
    if normalize:
        H_new, s = normalize_rows(H_new)
        W_new = W_new * s[None, :].astype(W_new.dtype, copy=False)
    model._last_model = _LastModel(X, W_new, H_new, y_new)
    return W_new, H_new, sums


def dn_blockwise_doc_step(model, X, W, H):
    """A block's `doc_step` of diagonal Newton as a map-reduce
    (`kernels.dn_doc_half`): its new rows of ``W`` and the sums the topic
    half needs, with the objective of the incoming state."""
    W_new, sums, stats = dn_doc_half(X, W, H)
    stats["loss"] = model.objective(X, sums, W, H)
    return W_new.astype(np.result_type(W.dtype, H.dtype), copy=False), stats


def dn_blockwise_settle(H, stats, check, sums, normalized):
    """The topics of a map-reduce diagonal Newton iteration after its check
    pass, and the scale of ``W`` (`kernels.dn_topic_settle`); with
    ``normalized``, the topics' rows scaled to sum to one and ``W`` by
    their sums, as `whole_pass` does."""
    H_new, alpha = dn_topic_settle(H, stats, check.proposal, sums["dn_log_change"])
    scale = np.full(H.shape[0], alpha)
    if normalized:
        H_new, s = normalize_rows(H_new)
        scale = scale * s
    return H_new, scale


class KLNMFModel(TopicModel):
    """``min D(X || W H)``, ``W`` first, then ``H``.

    With ``solver="mu"``, Lee & Seung's multiplicative updates:

    .. math::

        W \\leftarrow W \\odot \\frac{(X / WH) H^T}{\\mathbf{1} H^T}, \\qquad
        H \\leftarrow H \\odot \\frac{W^T (X / WH)}{W^T \\mathbf{1}}

    With ``solver="cd"``, one iteration is a sweep of cyclic coordinate
    descent with safeguarded scalar Newton steps (`kernels.cd_sweep`): the
    columns of ``W``, then the rows of ``H``.  Its topic update needs every
    document at once (`solvers.WHOLE_DATA`): in memory only.

    With ``solver="dn"``, one iteration is a diagonal Newton step on every
    row of ``W``, then on every column of ``H``, each kept where it lowers
    that row's (column's) objective and replaced by the multiplicative step
    elsewhere (`kernels.dn_sweep`).  In memory it is one pass over X; block
    by block the same iteration is a map-reduce of two passes
    (`for_blocks`: `kernels.dn_doc_half`, then a `Check` of the topics'
    proposal).  Online steps run the multiplicative updates
    (`for_online`).

    Parameters
    ----------
    solver : {"mu", "cd", "dn"}, default="mu"
    fold_in_iter, fold_in_tol
        As for `TopicModel`.
    """

    # Whether the topics' rows sum to one (then a whole pass normalizes them).
    normalized_topics = False
    solvers = {"mu": MU, "cd": CD, "dn": DN}

    def __init__(self, solver="mu", *, blockwise=False, **fold_in):
        super().__init__(**fold_in)
        self.solver = solver
        self.blockwise = blockwise

    def for_blocks(self):
        super().for_blocks()
        if self.solver != "dn":
            return self
        return type(self)(
            self.solver,
            blockwise=True,
            fold_in_iter=self.fold_in_iter,
            fold_in_tol=self.fold_in_tol,
        )

    def for_online(self):
        if self.solver == "mu":
            return self
        return type(self)(fold_in_iter=self.fold_in_iter, fold_in_tol=self.fold_in_tol)

    def doc_step(self, X, W, H, warm):
        if self.blockwise:
            return dn_blockwise_doc_step(self, X, W, H)
        if self.solver in PASSES:
            # The whole sweep, topics included: X holds every document.
            # The whole sweep, topics included (X holds every document), its
            # topics in final form: the topic step keeps them as they are.
            W_new, H_new, sums = whole_pass(self, X, W, H, self.normalized_topics)
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
        if self.blockwise:
            return Check(dn_topic_proposal(H, stats))
        return mu_topic_update(H, stats["WtR"], stats["w_sum"]), None

    def check_step(self, X, W, H, check):
        return {"dn_log_change": dn_topic_check(X, W, H, check.proposal)}

    def settle(self, H, stats, check, sums):
        return dn_blockwise_settle(H, stats, check, sums, self.normalized_topics)

    def online_topics(self, counts, w_sum):
        # The multiplicative H update from averaged statistics.
        return counts / positive_or_one(w_sum)[:, None]


class NormalizedNMFModel(ProbabilisticFactors, KLNMFModel):
    """KL-NMF with the factors L1-normalized after every half-step.

    ``W H = D diag(s) C`` with the rows of ``C`` and the columns of ``D``
    summing to one (Zhang, Ding & Tang, Alg. 3).
    """

    normalized_topics = True

    def topic_step(self, H, stats):
        # H is C (rows sum to one).  After the W half-step the document factor
        # W splits as D diag(s) with s = its column sums; the topic half-step
        # updates G = diag(s) C using D, then splits G into s' and C'.  The new
        # document factor D diag(s') is W rescaled by s' / s.
        if "H" in stats:
            # A whole pass updated W and H = C themselves (`whole_pass`).
            return stats["H"], None
        if self.blockwise:
            return Check(dn_topic_proposal(H, stats))
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
