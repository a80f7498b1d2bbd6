"""Latent Dirichlet allocation and Gamma-Poisson factorization by mean-field
variational inference, in NMF form (paper 002, Alg. 5 and Alg. 7)."""

import weakref

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln, psi

from .._validation import length_order, unsort_rows
from ..kernels import (
    cvb0_sweep,
    dirichlet_kl,
    dirichlet_kl_rows,
    em_fold_in,
    exp_dirichlet_expectation,
    gamma_kl_rows,
    lda_e_step,
    lda_expected_counts,
    lda_log_likelihood_rows,
    map_sweep,
    normalize_rows,
    positive_or_one,
    product_at_nonzeros,
    ratio_log_sums,
)
from ._base import TopicModel
from ._moves import cheapest_merge

# Shape and scale of the Gamma draws that start LDA's topics (lambda) and
# documents (gamma): those of Hoffman's onlineldavb and of scikit-learn, so
# that the same seed gives the same start.
GAMMA_SHAPE = 100.0
GAMMA_SCALE = 1.0 / GAMMA_SHAPE


class LDAModel(TopicModel):
    """LDA's evidence lower bound, maximized by variational EM in NMF form.

    With :math:`\\Theta = \\exp \\mathbb{E}[\\log \\theta]`,
    :math:`B = \\exp \\mathbb{E}[\\log \\beta]` and :math:`R = X / (\\Theta
    B)` at the non-zeros, one epoch is

    .. math::

        \\text{E-step: repeat } \\gamma \\leftarrow \\alpha + \\Theta \\odot
        (R B^T), \\qquad
        \\text{M-step: } \\lambda \\leftarrow \\eta + B \\odot (\\Theta^T R).

    The document factor ``W`` is :math:`\\gamma`, the topics ``H`` are
    :math:`\\lambda` (or, with ``topic_word_prior=None``, the point estimates'
    expected counts).  See `LDAVI` for the E-step's starts.

    Parameters
    ----------
    doc_topic_prior : ndarray of shape (n_components,)
        :math:`\\alpha`.
    topic_word_prior : float or None
        :math:`\\eta`; ``None`` for point-estimate topics.
    mean_change_tol : float
        A document's E-step stops when the mean absolute change of its
        :math:`\\gamma_d` falls below this.
    max_doc_update_iter : int
        Maximum number of E-step sweeps per document.
    """

    moves = True
    # A custom start gives the topics only; the documents' start is drawn,
    # after the topics (as scikit-learn's LDA draws them).
    custom_documents = False
    draws_topics_first = True

    def __init__(
        self, doc_topic_prior, topic_word_prior, mean_change_tol, max_doc_update_iter
    ):
        super().__init__()
        self.doc_topic_prior = doc_topic_prior
        self.topic_word_prior = topic_word_prior
        self.mean_change_tol = mean_change_tol
        self.max_doc_update_iter = max_doc_update_iter

    @property
    def n_components(self):
        return self.doc_topic_prior.shape[0]

    # ------------------------------------------------------------ bounds
    def topic_expectation(self, H, columns):
        """``B`` at ``columns``: ``exp(E[log beta])``, or the point estimates."""
        if self.topic_word_prior is None:
            return H[:, columns] / positive_or_one(H.sum(axis=1))[:, None]
        return np.exp(psi(H[:, columns]) - psi(H.sum(axis=1))[:, None])

    def document_bounds(self, X, gamma, y):
        """Each document's term of the bound, at ``gamma`` (``y = Theta B``)."""
        alpha = self.doc_topic_prior.astype(gamma.dtype, copy=False)
        return lda_log_likelihood_rows(X, y) - dirichlet_kl_rows(gamma, alpha)

    def topic_bound(self, H):
        """The topics' part of the bound, ``-KL(q(beta) || p(beta))``."""
        if self.topic_word_prior is None:
            return 0.0
        return -dirichlet_kl(H, self.topic_word_prior)

    # ------------------------------------------------------------ E-step
    def e_step(self, X, H, gamma=None, warm=None):
        """E-step of the documents ``X`` for the topics ``H``.

        From ``gamma``, by default the all-ones start of scikit-learn's
        ``transform``.  With ``warm`` (the documents' previous ``gamma``, in
        training), a document whose bound at ``warm`` is higher than where
        the E-step from the start ended continues from ``warm`` instead (see
        `keep_the_better_start`).  Returns ``gamma``, the per-document part
        of the bound at ``gamma`` and the expected topic-word counts (the
        M-step's statistics).  Only the topics' columns of the terms present
        in ``X`` are evaluated, so a mini-batch or a few documents cost
        O(their terms * k), not O(n_features * k).
        """
        n, m = X.shape
        k = self.n_components
        H = H.astype(X.dtype, copy=False)
        used = np.flatnonzero(np.bincount(X.indices, minlength=m))
        if used.size < m:
            position = np.zeros(m, dtype=X.indices.dtype)
            position[used] = np.arange(used.size, dtype=X.indices.dtype)
            X = sp.csr_matrix(
                (X.data, position[X.indices], X.indptr), shape=(n, used.size)
            )
        B = self.topic_expectation(H, used)
        if gamma is None:
            gamma = np.ones((n, k), dtype=X.dtype)
        gamma, y = self.sweeps(X, gamma, B)
        if warm is None:
            bound = float(self.document_bounds(X, gamma, y).sum())
        else:
            gamma, y, bounds = self.keep_the_better_start(X, gamma, y, warm, B)
            bound = float(bounds.sum())
        counts = np.zeros((k, m), dtype=X.dtype)
        counts[:, used] = lda_expected_counts(X, gamma, B, y, overwrite_y=True)
        return gamma, bound, counts

    def sweeps(self, X, gamma, B):
        """`lda_e_step` with this model's per-document stopping rule."""
        alpha = self.doc_topic_prior.astype(X.dtype, copy=False)
        return lda_e_step(
            X,
            gamma,
            B,
            alpha,
            max_iter=self.max_doc_update_iter,
            tol=self.mean_change_tol,
        )

    def keep_the_better_start(self, X, gamma, y, warm, B):
        """Per document, the E-step from ``warm`` where that start is better.

        The training E-step restarts every document from all ones (which
        escapes the modes the first, random topics put documents in; see
        `LDAVI`) -- but a restart is not an ascent step: for ``alpha < 1`` a
        document's bound is multimodal, and the restart can end in a lower
        mode than the document's previous ``gamma`` reaches under the new
        topics.  (In the extreme, when the topics are alike on a document's
        terms -- one-term vocabularies, a single document -- the all-ones
        start is a saddle point that the sweeps never leave.)  The fit's
        bound could then go down.  So the previous ``gamma``, ``warm``, is
        evaluated under the new topics, and every document whose bound is
        higher there than where its restart ended is swept on from ``warm``;
        sweeps only raise a document's bound, so each document ends at least
        as high as at ``warm``.  With the M-step, which maximizes the bound
        at the previous ``gamma``, every epoch of the fit then raises the
        bound of its state.  Cost: one evaluation of the bound (about one
        sweep), plus sweeps for the documents switched.  Returns ``gamma``,
        ``y`` and the documents' bounds.
        """
        bounds = self.document_bounds(X, gamma, y)
        warm = warm.astype(gamma.dtype, copy=False)
        y_warm = product_at_nonzeros(X, exp_dirichlet_expectation(warm), B)
        np.maximum(y_warm, np.finfo(y_warm.dtype).tiny, out=y_warm)
        better = np.flatnonzero(self.document_bounds(X, warm, y_warm) > bounds)
        if better.size == 0:
            return gamma, y, bounds
        X_better = X[better]
        gamma_b, y_b = self.sweeps(X_better, warm[better], B)
        gamma[better] = gamma_b
        starts = X.indptr[better]
        lengths = X.indptr[better + 1] - starts
        offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
        y[offsets + np.arange(lengths.sum())] = y_b
        bounds[better] = self.document_bounds(X_better, gamma_b, y_b)
        return gamma, y, bounds

    # ------------------------------------------------------- the protocol
    def random_scale(self, n, m, k, total):
        """None: the Gamma draws have a fixed scale (no pass over X)."""
        return None

    def draw_documents(self, rng, n_rows, k, scale):
        """Gamma(100, 1/100) draws of ``gamma``: scikit-learn's LDA start."""
        return rng.gamma(GAMMA_SHAPE, GAMMA_SCALE, (n_rows, k))

    def draw_topics(self, rng, k, m, scale, dtype):
        """Gamma(100, 1/100) draws of ``lambda``: scikit-learn's LDA start."""
        return rng.gamma(GAMMA_SHAPE, GAMMA_SCALE, (k, m)).astype(dtype, copy=False)

    def custom_topics(self, H):
        """The custom ``lambda`` (validated, or None): needed, and positive."""
        if H is None:
            raise ValueError(
                "init='custom' needs the topics' start: pass it as "
                "fit(X, H=lambda0), or choose init='random'."
            )
        if H.size and H.min() <= 0:
            raise ValueError(
                "The custom start H must be strictly positive: it holds "
                "the Dirichlet parameters lambda of the topics."
            )
        return H

    def start_from_factors(self, W, H, total):
        """``lambda`` from a count-scale start: ``eta + N pi_k beta_k``.

        ``beta_k`` is the normalized k-th row of ``H`` and ``pi_k`` the share
        of ``W @ H``'s total that topic ``k`` carries; the documents' start
        is drawn (``None``).
        """
        dtype = H.dtype
        W = W.astype(np.float64)
        H = H.astype(np.float64)
        mass = W.sum(axis=0) * H.sum(axis=1)
        share = mass / positive_or_one(mass.sum())
        beta = H / positive_or_one(H.sum(axis=1))[:, None]
        lam = beta * (total * share)[:, None]
        if self.topic_word_prior is not None:
            lam += self.topic_word_prior
        # Positive whatever the data (NNDSVDa fills zeros; a topic that
        # carries no mass must still be a valid Dirichlet parameter).
        lam = np.maximum(lam, np.finfo(dtype).tiny)
        return None, lam.astype(dtype, copy=False)

    def doc_step(self, X, W, H, warm):
        # The first E-step starts from the random draw W, every later one
        # from all ones, kept per document only where it beats W, the
        # documents' previous gamma.
        if warm:
            gamma, bound, counts = self.e_step(X, H, warm=W)
        else:
            gamma, bound, counts = self.e_step(X, H, W)
        return gamma, {"loss": -bound, "counts": counts}

    def topic_step(self, H, stats):
        eta = self.topic_word_prior
        counts = stats["counts"]
        return (counts if eta is None else eta + counts).astype(H.dtype), None

    def online_documents(self, X, H, rng, fresh):
        """New documents' E-step start: drawn before the first online step
        (scikit-learn's ``partial_fit``), all ones after it."""
        if fresh:
            W = self.draw_documents(rng, X.shape[0], H.shape[0], None)
            return W.astype(X.dtype, copy=False), False
        return np.ones((X.shape[0], H.shape[0]), dtype=X.dtype), False

    def online_update(self, H, W, stats, state, rho, n_rows, n_total):
        """Hoffman, Blei & Bach's stochastic natural-gradient step on ``lambda``.

        ``lambda <- (1 - rho) lambda + rho (eta + n_total / n_rows * counts)``:
        the step towards the topics of a corpus of ``n_total`` documents
        made of such mini-batches.  No running state.
        """
        eta = self.topic_word_prior or 0.0
        doc_ratio = n_total / n_rows
        H = ((1 - rho) * H + rho * (eta + doc_ratio * stats["counts"])).astype(H.dtype)
        return H, None, None

    def doc_loss(self, X, W, H):
        # The bound of the state: the topics H and the E-step's gamma for
        # them, from all ones and, in training, from the documents' last
        # gamma W where that is better (W=None: from all ones only).
        return -self.e_step(X, H, warm=W)[1]

    def topic_loss(self, H):
        return -self.topic_bound(H)

    def fold_in(self, X, H):
        """``gamma`` of ``X`` with the topics fixed, from the all-ones start.

        The deterministic start of scikit-learn's ``transform``; each
        document stops on its own, so its result does not depend on the
        other documents of ``X``.
        """
        return self.e_step(X, H)[0]

    def doc_output(self, W, p_z=None):
        return normalize_rows(W)[0]

    def topic_proportions(self, X, H):
        # P(z|d) under the posterior: E[theta_d] is gamma_d normalized (the
        # prior alpha included).
        return normalize_rows(self.fold_in(X, H))[0]

    # ----------------------------------------------------- split-merge moves
    # The documents' gamma is left as it is by a move (as for every model):
    # the next E-step keeps the better of its restart and its sweeps from
    # there.

    def merge_pair(self, H):
        """The two topics that cost least to merge: ``(kept, merged)``.

        `cheapest_merge` of the topics' expected counts ``lambda - eta``,
        which LDA's topics hold (the M-step's counts plus the prior).
        """
        return cheapest_merge(self.topic_counts(H))

    def topic_counts(self, H):
        """The topics' expected counts: ``lambda - eta`` (float64, >= 0)."""
        return np.maximum(H.astype(np.float64) - (self.topic_word_prior or 0.0), 0.0)

    def responsibilities(self, X, gamma, H):
        """What `topic_entries` reads for the rows ``X``: ``(Theta, B, y, rows)``.

        ``Theta`` from the rows' last E-step ``gamma``, ``B`` from ``H``, ``y =
        Theta B`` at the stored entries and their row indices: computed once
        for all the topics of a split-merge move.  The responsibilities do not
        change if a document's row of ``Theta`` is rescaled, so
        GammaPoissonVI's ``exp(psi(a)) / (b + 1)`` gives the same ones.
        """
        H = H.astype(X.dtype, copy=False)
        Theta = exp_dirichlet_expectation(gamma.astype(X.dtype, copy=False))
        B = self.topic_expectation(H, slice(None))
        y = product_at_nonzeros(X, Theta, B)
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        return Theta, B, y, rows

    def moved_topics(self, H, kept, merged, split, halves, columns, term_counts):
        """``lambda`` after a move: ``merged`` added to ``kept``, ``split``
        replaced by the two ``halves`` (on ``columns``), one in each slot.

        ``term_counts`` (the topics' term counts from their entries) is not
        needed: LDA's topics hold their own counts.
        """
        counts = self.topic_counts(H)
        new = counts.copy()
        new[kept] += counts[merged]
        new[[merged, split]] = 0.0
        new[np.ix_([merged, split], columns)] = halves
        new += self.topic_word_prior or 0.0
        return np.maximum(new, np.finfo(H.dtype).tiny).astype(H.dtype, copy=False)


class GammaPoissonModel(LDAModel):
    """Gamma-Poisson factorization (paper 002, Appendix E, Alg. 7).

    :math:`\\theta_{dk} \\sim \\mathrm{Gamma}(\\alpha_k, b)`, normalized
    point-estimate topics, Poisson counts.  Its iterates are LDA's with
    point-estimate topics (Lemma E.3); it differs in the bound, which also
    models the document lengths, and in what it reports.

    Parameters
    ----------
    doc_topic_prior, mean_change_tol, max_doc_update_iter
        As for `LDAModel`.
    doc_topic_rate : float > 0
        The Gamma rate :math:`b`.
    """

    def __init__(
        self, doc_topic_prior, doc_topic_rate, mean_change_tol, max_doc_update_iter
    ):
        super().__init__(doc_topic_prior, None, mean_change_tol, max_doc_update_iter)
        self.doc_topic_rate = doc_topic_rate

    def document_bounds(self, X, gamma, y):
        # E log p(X | theta, beta) with the responsibilities at their
        # optimum, log(Theta' B) = log(Theta B) + psi(sum_k a_dk) - log(b + 1);
        # minus sum_k E[theta_dk] (the topics sum to one) and the KL terms.
        alpha = self.doc_topic_prior.astype(gamma.dtype, copy=False)
        b = float(self.doc_topic_rate)
        n_d = np.asarray(X.sum(axis=1), dtype=np.float64).ravel()
        a_sum = gamma.sum(axis=1, dtype=np.float64)
        data = lda_log_likelihood_rows(X, y) + n_d * (psi(a_sum) - np.log(b + 1))
        log_factorials = sp.csr_matrix(
            (gammaln(X.data.astype(np.float64) + 1), X.indices, X.indptr),
            shape=X.shape,
        ).sum(axis=1)
        data -= np.asarray(log_factorials).ravel()
        return data - a_sum / (b + 1) - gamma_kl_rows(gamma, b + 1, alpha, b)

    def doc_output(self, W, p_z=None):
        return W / W.dtype.type(self.doc_topic_rate + 1)


class CVB0Model(LDAModel):
    """LDA by zero-order collapsed variational inference (CVB0), in NMF form.

    Asuncion, Welling, Smyth & Teh (2009): the topic shares of a token of
    term ``w`` in document ``d`` are

    .. math::

        g_{dwk} \\propto (N_{dk}^{\\neg dw} + \\alpha_k)
        \\frac{N_{kw}^{\\neg dw} + \\eta}{N_k^{\\neg dw} + V \\eta},

    the expected counts without the token itself (`kernels.cvb0_sweep`, with
    ``n_inner`` substitutions of each entry's own fixed point per sweep).
    The document factor ``W`` is :math:`N_{dk} + \\alpha` and the topics
    ``H`` are :math:`N_{kw} + \\eta`, so their normalized rows are CVB0's
    estimates of :math:`\\theta_d` and :math:`\\beta_k` (and ``H`` has the
    meaning of VB's :math:`\\lambda`).  One epoch is one sweep over the
    stored entries, O(nnz k), and its statistics are sums over documents
    (block-wise and Dask fits run it as they run VB).  The objective is
    minus the log-likelihood of the data under those estimates; CVB0 does
    not ascend a bound, so it may rise slightly.  No split-merge moves.

    Parameters
    ----------
    doc_topic_prior : ndarray of shape (n_components,)
        :math:`\\alpha`.
    topic_word_prior : float > 0
        :math:`\\eta`.
    fold_in_iter : int
        Maximum sweeps of the fold-in of new documents.
    fold_in_tol : float
        A document's fold-in stops when the mean absolute change of its
        ``N_dk`` falls below this (as VB's ``mean_change_tol`` on its
        :math:`\\gamma_d = N_{dk} + \\alpha`).
    """

    moves = False
    # From a random start on a large corpus the first sweeps can lower the
    # objective by less than ``tol`` while the topics are still alike (the
    # whole 20 Newsgroups: 4.5e-5 of it at the second sweep), and the
    # stopping rule read that plateau as convergence (docs/lda_defaults.md).
    min_iter = 10
    # Substitutions of each entry's own fixed point per sweep (`cvb0_sweep`):
    # one costs 30 % less than two per sweep and fitted CSTR and Reuters-10
    # as well (docs/lda_defaults.md).
    n_inner = 1

    def __init__(self, doc_topic_prior, topic_word_prior, fold_in_iter, fold_in_tol):
        super().__init__(doc_topic_prior, topic_word_prior, fold_in_tol, fold_in_iter)
        self.fold_in_iter = fold_in_iter
        self.fold_in_tol = fold_in_tol

    def _sweep(self, X, D, H, exclude_words):
        alpha = self.doc_topic_prior.astype(D.dtype, copy=False)
        eta = self.topic_word_prior
        T = np.subtract(H, H.dtype.type(eta), dtype=D.dtype)
        np.maximum(T, 0, out=T)
        return cvb0_sweep(
            X, D, T, alpha, eta, exclude_words=exclude_words, n_inner=self.n_inner
        )

    def doc_step(self, X, W, H, warm):
        alpha = self.doc_topic_prior.astype(X.dtype, copy=False)
        n_d = np.asarray(X.sum(axis=1), dtype=X.dtype).ravel()
        if warm:
            D = np.maximum(W.astype(X.dtype, copy=False) - alpha, 0)
        else:
            # From a start, the topics do not hold these documents' tokens:
            # the first sweep assigns them under the start's topics from
            # the drawn proportions.
            D = normalize_rows(W.astype(X.dtype, copy=False))[0] * n_d[:, None]
        new, counts, log_likelihood = self._sweep(X, D, H, exclude_words=warm)
        loss = -log_likelihood - self._doc_log_prior(D + alpha)
        return new + alpha, {"loss": loss, "counts": counts}

    def _doc_log_prior(self, W):
        """The documents' prior term of the objective at ``W``: none for
        CVB0, whose objective is the log-likelihood alone."""
        return 0.0

    def doc_loss(self, X, W, H):
        if W is None:
            W = self.fold_in(X, H)
        W = normalize_rows(W.astype(X.dtype, copy=False))[0]
        B = normalize_rows(H.astype(X.dtype, copy=False))[0]
        y = product_at_nonzeros(X, W, B)
        np.maximum(y, np.finfo(y.dtype).tiny, out=y)
        return -float(lda_log_likelihood_rows(X, y).sum())

    def topic_loss(self, H):
        return 0.0

    def fold_in(self, X, H):
        """``N_dk + alpha`` of new documents by CVB0 sweeps with the topics fixed.

        From the even split of each document over the topics; each document
        stops on its own when the mean absolute change of its ``N_dk`` falls
        below ``fold_in_tol`` (or after ``fold_in_iter``
        sweeps), so its result does not depend on the other documents.
        """
        alpha = self.doc_topic_prior.astype(X.dtype, copy=False)
        k = self.n_components
        n_d = np.asarray(X.sum(axis=1), dtype=X.dtype).ravel()
        D = np.repeat(n_d[:, None] / k, k, axis=1)
        active = np.flatnonzero(n_d > 0)
        for _ in range(self.fold_in_iter):
            if active.size == 0:
                break
            Xa = X if active.size == X.shape[0] else X[active]
            new = self._sweep(Xa, D[active], H, exclude_words=False)[0]
            change = np.abs(new - D[active]).mean(axis=1)
            D[active] = new
            active = active[change >= self.fold_in_tol]
        return D + alpha


class MAPModel(CVB0Model):
    """LDA's maximum a posteriori estimate by EM, in NMF form.

    CVB0's update without the token's own exclusion (`kernels.map_sweep`):

    .. math::

        g_{dwk} \\propto (N_{dk} + \\alpha_k)
        \\frac{N_{kw} + \\eta}{N_k + V \\eta},

    EM for the :math:`\\theta, \\beta` that maximize the posterior under
    Dirichlet priors :math:`\\alpha + 1` and :math:`\\eta + 1`, where
    :math:`\\alpha` here is ``DOC_PSEUDO_COUNT`` (0.1) times the estimator's
    ``doc_topic_prior`` (the documents' pseudo-counts that stand in for
    CVB0's exclusion of each token's own share), that is the objective

    .. math::

        -\\sum_{dw} X_{dw} \\log \\sum_k \\theta_{dk} \\beta_{kw}
        - \\sum_{dk} \\alpha_k \\log \\theta_{dk}
        - \\eta \\sum_{kw} \\log \\beta_{kw}

    at :math:`\\theta_d \\propto N_{dk} + \\alpha`,
    :math:`\\beta_k \\propto N_{kw} + \\eta`, which every sweep lowers (EM
    ascends the posterior).  ``W`` and ``H`` are CVB0's (:math:`N_{dk} +
    \\alpha` and :math:`N_{kw} + \\eta`), and so are the starts and the
    statistics (sums over documents: block-wise and Dask fits run it as
    in memory); the fold-in is EM with the topics fixed, accelerated per
    document by SQUAREM (`fold_in`, `kernels.em_fold_in`).  A sweep is
    two sparse products, as PLSI's EM step, where CVB0's makes several
    passes of ``(entries, k)`` temporaries (Asuncion, Welling, Smyth & Teh,
    2009, who call this update MAP and find it close to CVB0).
    """

    n_inner = 0
    # The documents' pseudo-counts, per unit of alpha: CVB0 leaves each
    # token's own share out of its document's counts, which EM cannot do;
    # with the whole alpha added instead, EM smooths the documents more than
    # CVB0 does: its held-out perplexity, relative to the references, was at
    # worst 1.005 on the tuning corpora but 1.011 on WebACE (a validation
    # corpus); with a tenth of alpha the worst tuning figure was 1.002
    # (chosen on the tuning corpora, confirmed on the validation ones:
    # docs/lda_defaults.md).
    DOC_PSEUDO_COUNT = 0.1

    def __init__(self, doc_topic_prior, topic_word_prior, fold_in_iter, fold_in_tol):
        # The model's alpha is the documents' pseudo-count; the estimator's
        # doc_topic_prior_ stays the parameter's.
        super().__init__(
            np.asarray(doc_topic_prior) * self.DOC_PSEUDO_COUNT,
            topic_word_prior,
            fold_in_iter,
            fold_in_tol,
        )

    def _sweep(self, X, D, H, exclude_words):
        alpha = self.doc_topic_prior.astype(D.dtype, copy=False)
        eta = self.topic_word_prior
        T = np.subtract(H, H.dtype.type(eta), dtype=D.dtype)
        np.maximum(T, 0, out=T)
        return map_sweep(X, D, T, alpha, eta, x_log_x=self._x_log_x(X))

    def __getstate__(self):
        # The cache holds weak references (not picklable, nor worth
        # shipping to a Dask worker): a copy starts without it.
        state = dict(vars(self))
        state.pop("_x_log_x_of", None)
        return state

    def _x_log_x(self, X):
        """``sum x log x`` of ``X``'s stored entries, computed once per data
        array: a fit sweeps the same rows hundreds of times (a model lives
        for one fit; another array, a block read again, is computed anew)."""
        known = vars(self).setdefault("_x_log_x_of", {})
        key = id(X.data)
        if key in known and known[key][0]() is X.data:
            return known[key][1]
        value = ratio_log_sums(X, X)[0]
        known.clear()
        known[key] = (weakref.ref(X.data), value)
        return value

    def _doc_log_prior(self, W):
        """:math:`\\sum_{dk} \\alpha_k \\log \\theta_{dk}` at ``W = N_{dk} + alpha``."""
        theta = normalize_rows(W)[0]
        np.maximum(theta, np.finfo(theta.dtype).tiny, out=theta)
        return float(np.log(theta).sum(axis=0, dtype=np.float64) @ self.doc_topic_prior)

    def doc_loss(self, X, W, H):
        if W is None:
            W = self.fold_in(X, H)
        return super().doc_loss(X, W, H) - self._doc_log_prior(
            W.astype(X.dtype, copy=False)
        )

    def topic_loss(self, H):
        """:math:`-\\eta \\sum_{kw} \\log \\beta_{kw}`."""
        beta = normalize_rows(H)[0]
        np.maximum(beta, np.finfo(beta.dtype).tiny, out=beta)
        return -self.topic_word_prior * float(np.log(beta).sum(dtype=np.float64))

    def fold_in(self, X, H):
        """``N_dk + alpha`` of new documents by EM with the topics fixed.

        The documents' half of `map_sweep` only (no topic counts, no
        log-likelihood), accelerated per document (`kernels.em_fold_in`),
        from the even split of each document over the topics; each document
        stops on its own when one EM step changes its ``N_dk`` by less than
        ``fold_in_tol`` (mean absolute change), or after ``fold_in_iter``
        steps.
        """
        alpha = self.doc_topic_prior.astype(X.dtype, copy=False)
        k = self.n_components
        B = normalize_rows(H.astype(X.dtype, copy=False))[0]
        # Sorted by length, the sampled products are batched (as in fits).
        order = length_order(X)
        if order is not None:
            X = X[order]
        n_d = np.asarray(X.sum(axis=1), dtype=X.dtype).ravel()
        D = np.repeat(n_d[:, None] / k, k, axis=1)
        D = em_fold_in(X, B, D, alpha, self.fold_in_iter, self.fold_in_tol)
        return unsort_rows(D + alpha, order)
