"""The declared model protocol, with the defaults of the NMF family.

A *model* is the mathematics of one family of topic factorizations, as a
plain class: it knows nothing of scikit-learn, Dask or files.  Its
constructor takes the family's hyperparameters; every method is a function
of the arrays it is given (the model keeps no fitted state).  The engine
(`sklearn_topicfac.engine`) runs any model that derives from `TopicModel`
and asks it, through the methods and attributes documented on that class,
everything that differs between models: how it starts (`draw_topics`,
`draw_documents`, `start_from_factors`, `custom_topics`), one iteration as a
map-reduce over document blocks (`doc_step`, `topic_step`), the objective
(`doc_loss`, `topic_loss`), an online step (`online_documents`,
`online_update`), fold-in and outputs, and split-merge moves.  It never
probes a model for optional members: every member has a default here.
``tests/models/test_protocol.py`` checks every model of `models.__all__`
against this protocol, the map-reduce invariant included (the statistics of
``doc_step`` over row blocks sum to those of all rows).
"""

from dataclasses import dataclass

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
    squarem_point,
)
from ._moves import SHARE_FLOOR
from .solvers import WHOLE_DATA, blockwise_error


@dataclass
class Check:
    """What `TopicModel.topic_step` returns when its update needs one more
    pass over the documents: a ``proposal`` for the topics to check.

    The engine sums `TopicModel.check_step` over the blocks (a read-only
    pass: the documents' factors stay as they are) and then takes the
    topics from `TopicModel.settle`.
    """

    proposal: object


class TopicModel:
    """The model protocol the engine runs, with the NMF family's defaults.

    A model derives from this class and overrides what differs: at least
    `doc_step` and `topic_step`.  Everything the engine asks of a model is
    a method or an attribute documented here.

    Parameters
    ----------
    fold_in_iter : int, default=200
        Maximum number of sweeps of the fold-in (``transform``).
    fold_in_tol : float, default=1e-4
        A document's fold-in stops when the mean absolute change of its topic
        proportions falls below this.

    Attributes
    ----------
    moves : bool
        Whether the model offers split-merge moves (`engine.moves`): then
        `merge_pair`, `responsibilities`, `topic_entries` and
        `moved_topics` apply.
    custom_documents : bool
        Whether ``init="custom"`` takes a start for the documents (``W``)
        besides the topics; if not, the documents' start is drawn
        (`draw_documents`) and `custom_topics` checks the topics.
    draws_topics_first : bool
        Whether a random start draws the topics before the documents (the
        order the generator's draws are taken in, so that a seed gives the
        start of the library a model reproduces: scikit-learn's NMF draws
        the documents first, its LDA the topics).
    min_iter : int
        Iterations a run makes before the stopping rule is consulted
        (`engine.loop.stopped`; ``max_iter`` still bounds the run).  The
        default, 1, consults it from the first iteration on.  A model whose
        first iterations from a random start can lower the objective by
        less than ``tol`` while its topics are still alike (a plateau, not
        convergence) declares more.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from sklearn_topicfac.models import PLSIModel
    >>> X = sp.csr_matrix(np.array([[3.0, 1, 0], [0, 2, 4]]))
    >>> model = PLSIModel()
    >>> rng = np.random.RandomState(0)
    >>> W = model.draw_documents(rng, 2, 2, 1.0)
    >>> H = model.draw_topics(rng, 2, 3, 1.0, np.float64)
    >>> W, H = model.prepare_start(W, H)
    >>> W_new, stats = model.doc_step(X, W, H, warm=False)
    >>> H_new, scale = model.topic_step(H, stats)
    >>> bool(np.allclose(H_new.sum(axis=1), 1))
    True
    """

    moves = True
    custom_documents = True
    draws_topics_first = False
    min_iter = 1
    # The solvers the model offers (name -> `solvers.Solver`) and the one it
    # runs; a model with one way of iterating declares none.
    solvers = {}
    solver = None

    def __init__(self, *, fold_in_iter=200, fold_in_tol=1e-4):
        self.fold_in_iter = fold_in_iter
        self.fold_in_tol = fold_in_tol

    # ------------------------------------------------------------- starts
    def random_scale(self, n, m, k, total):
        """The scale of a random start's draws.

        Parameters
        ----------
        n, m, k : int
            Documents, terms and topics.
        total : callable
            Returns the sum of X (a pass over the data: call it only if the
            scale needs it).

        Returns
        -------
        scale : object
            Passed to `draw_documents` and `draw_topics`.  By default the
            entry scale at which ``W @ H`` has the mean of X (scikit-learn's
            NMF).
        """
        return np.sqrt(max(total(), 0.0) / (n * m * k)) or 1.0

    def draw_documents(self, rng, n_rows, k, scale):
        """``n_rows`` rows of a random start of the documents (count scale).

        Parameters
        ----------
        rng : numpy.random.RandomState
            The generator, at the state of the first of these rows: the
            engine draws a start block by block from saved states, so the
            draws of the rows must follow each other in ``rng``.
        n_rows, k : int
        scale : object
            From `random_scale`.

        Returns
        -------
        W : ndarray of shape (n_rows, k), float64
            By default absolute standard normal draws times ``scale``.
        """
        return scale * np.abs(rng.standard_normal((n_rows, k)))

    def draw_topics(self, rng, k, m, scale, dtype):
        """A random start of the topics (count scale, or the model's own).

        Parameters
        ----------
        rng : numpy.random.RandomState
        k, m : int
            Topics and terms.
        scale : object
            From `random_scale`.
        dtype : numpy dtype
            The dtype of the data.

        Returns
        -------
        H : ndarray of shape (k, m)
            Mapped by `prepare_start` with the documents' start.
        """
        return (scale * np.abs(rng.standard_normal((k, m)))).astype(dtype, copy=False)

    def prepare_start(self, W, H):
        """Map a count-scale start (``W @ H ~ X``) to the model's parametrization.

        Row-wise in ``W``: a block of rows is mapped with the whole ``H``
        (an empty ``W`` gives the topics alone).  Also maps the state of
        another model for the same objective into this one (phase
        alternation).

        Returns
        -------
        W, H : ndarray
        """
        return W, H

    def start_from_factors(self, W, H, total):
        """The start from a count-scale factorization of X (NNDSVDa, K-means).

        Parameters
        ----------
        W, H : ndarray
            ``W @ H`` estimates X.
        total : float
            The sum of X.

        Returns
        -------
        W, H : ndarray, or None and ndarray
            ``(None, H)`` when the documents' start is drawn
            (`draw_documents`) instead.
        """
        return W, H

    def custom_topics(self, H):
        """Check the topics of ``init="custom"`` when they start alone.

        Called only for a model whose documents' start is drawn
        (``custom_documents = False``), with ``H`` already of the right
        shape and dtype; raise ``ValueError`` naming the problem.

        Returns
        -------
        H : ndarray
        """
        return H

    def for_blocks(self):
        """The model to run where `doc_step` sees only some of the documents.

        A block-wise fit (`Blocks`, a dask array) runs this model: the same
        solver, in its map-reduce form (`solvers.MAP_REDUCE`).  A solver
        that needs every document at once (`solvers.WHOLE_DATA`) cannot, and
        is refused with a ``ValueError`` naming those that can.
        """
        declared = self.solvers.get(self.solver)
        if declared is not None and declared.needs == WHOLE_DATA:
            raise blockwise_error(self)
        return self

    def for_online(self):
        """The model online steps run (`online_documents`, `online_update`):
        stepwise EM is its own algorithm, made of the family's one-pass
        updates whatever the batch solver.  By default this model."""
        return self

    # -------------------------------------------------------- iterations
    def doc_step(self, X, W, H, warm):  # pragma: no cover - abstract
        """The per-document part of one iteration on the rows ``X``.

        Parameters
        ----------
        X : scipy.sparse.csr_matrix of shape (n_rows, m)
        W : ndarray of shape (n_rows, k)
            The rows' document factor.
        H : ndarray of shape (k, m)
            The topics.
        warm : bool
            False on the first iteration from a start (``W`` is then a
            start, not a previous iteration's result).

        Returns
        -------
        W_new : ndarray of shape (n_rows, k)
        stats : dict
            Statistics that are *sums over documents* (arrays or floats),
            always including ``"loss"``, the objective of the incoming
            state on these rows: the statistics of row blocks add up to
            those of all rows, so an iteration is a map-reduce.
        """
        raise NotImplementedError

    def topic_step(self, H, stats):  # pragma: no cover - abstract
        """The topic update from the statistics summed over all documents.

        Returns
        -------
        H_new : ndarray of shape (k, m)
        scale : ndarray of shape (k,) or None
            A per-topic rescaling of the document factor, applied by the
            next `doc_step` (or ``None``).

        Or a `Check`, when the update needs another pass over the
        documents first (`check_step`, then `settle`).
        """
        raise NotImplementedError

    def check_step(self, X, W, H, check):  # pragma: no cover - abstract
        """One block's sums for a `Check` that `topic_step` returned.

        ``W`` is the block's document factor as its `doc_step` left it.
        Returns a dict of sums over the block's documents.
        """
        raise NotImplementedError

    def settle(self, H, stats, check, sums):  # pragma: no cover - abstract
        """The topic update after a `Check`: ``(H_new, scale)`` as
        `topic_step` returns them, from the `doc_step` statistics
        ``stats`` and the summed `check_step` results ``sums``."""
        raise NotImplementedError

    def objective(self, X, sums, W, H):
        """Objective of ``(W, H)`` on the rows ``X``, given the sums over X's
        stored entries ``sums = (sum x log r, sum x)`` of the ratio ``r = X /
        (W H)`` there (`kernels.ratio_log_sums`).

        Additive over row blocks.  The generalized KL divergence by default.
        """
        return kl_divergence_from_sums(sums, W, H)

    def doc_loss(self, X, W, H):
        """The documents' part of the objective of ``(W, H)`` on the rows ``X``.

        The objective of a state is the sum of ``doc_loss`` over row blocks
        plus `topic_loss`.
        """
        return self.objective(X, ratio_log_sums_at_nonzeros(X, W, H), W, H)

    def topic_loss(self, H):
        """The part of the objective that depends on the topics only."""
        return 0.0

    # ------------------------------------------------------------ online
    def online_documents(self, X, H, rng, fresh):
        """The start of a mini-batch of new documents in an online step.

        Parameters
        ----------
        X : scipy.sparse.csr_matrix
            The mini-batch.
        H : ndarray
            The current topics.
        rng : numpy.random.RandomState
            The generator of the fit (for a model whose start is drawn).
        fresh : bool
            True when no online step has been taken yet (the topics are
            still the start).

        Returns
        -------
        W : ndarray of shape (n_rows, k)
        warm : bool
            What `doc_step` is told.  By default the documents folded in
            with the topics fixed (`fold_in`), warm: stepwise EM's E-step.
        """
        return self.prepare_start(self.fold_in(X, H), H)[0], True

    def online_update(self, H, W, stats, state, rho, n_rows, n_total):
        """The topics after one mini-batch: stepwise EM by default.

        The mini-batch's expected topic-word counts per document
        (`online_counts`) and ``W``'s column sums per document enter
        running averages, ``(1 - rho) * old + rho * new`` (the first
        mini-batch sets them), and the topics are the M-step of the
        averages (`online_topics`) (Cappe & Moulines, 2009).

        Parameters
        ----------
        H : ndarray
            The topics the mini-batch's `doc_step` met.
        W : ndarray
            The mini-batch's document factor that `doc_step` was given.
        stats : dict
            What `doc_step` returned for the mini-batch.
        state : object or None
            The running state this method returned last (``None`` at
            first).
        rho : float
            The step size.
        n_rows, n_total : int or float
            The mini-batch's documents, and the number of documents the
            online fit stands for.

        Returns
        -------
        H : ndarray
            The new topics.
        state : object
            The running state.
        topic_mass : ndarray of shape (k,) or None
            The topics' share of the documents' mass (what
            `topic_attributes` reads as the column sums of ``W``).
        """
        n_b = max(n_rows, 1)
        counts = self.online_counts(H, stats) / n_b
        w_sum = W.sum(axis=0) / n_b
        if state is not None:
            old_counts, old_w = state
            counts = (1 - rho) * old_counts + rho * counts
            w_sum = (1 - rho) * old_w + rho * w_sum
        # A term not yet seen has no counts; an exact zero in the topics would
        # stay zero under the multiplicative updates however often the term
        # occurs later, so zeros are lifted to eps times the row's largest.
        lifted = np.maximum(
            counts, np.finfo(H.dtype).eps * counts.max(axis=1, keepdims=True)
        )
        H = self.online_topics(lifted, w_sum).astype(H.dtype, copy=False)
        return H, (counts, w_sum), lifted.sum(axis=1)

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


def squarem_cycle(step, project, X, W, H):
    """One SQUAREM cycle (Varadhan & Roland, 2008) of a monotone fixed-point
    map: ``(W_new, stats)`` with ``stats = {"loss", "H"}`` as a ``doc_step``
    returns them.

    ``step(X, W, H)`` is one step of the map, ``(W_1, H_1, objective of (W,
    H))``; ``project(W', H')`` puts the extrapolated point back on the
    model's constraints (rows summing to one).  Two steps ``theta_1``,
    ``theta_2``, their squared extrapolation ``theta'``
    (`kernels.squarem_point`) and one step from it, ``F(theta')``, kept when
    the objective at ``theta'`` is no higher than at ``theta_1``; otherwise
    the cycle ends at ``theta_2``.  Either way the objective is no higher
    than at ``theta_1``, hence than at the start: it never rises.
    """
    W1, H1, loss = step(X, W, H)
    W2, H2, loss_1 = step(X, W1, H1)
    (Wp, Hp), alpha = squarem_point((W, H), (W1, H1), (W2, H2))
    if alpha < -1:
        W3, H3, loss_p = step(X, *project(Wp, Hp))
        if loss_p <= loss_1:
            return W3, {"loss": loss, "H": H3}
    return W2, {"loss": loss, "H": H2}
