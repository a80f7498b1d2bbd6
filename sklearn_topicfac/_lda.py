"""Latent Dirichlet allocation by mean-field variational inference, in NMF form."""

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln, psi
from sklearn.base import _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state, gen_batches
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.extmath import randomized_svd
from sklearn.utils.validation import check_is_fitted

from ._base import _BaseTopicModel, _check_factor, _reconstruct
from ._kernels import (
    _nonzero,
    dirichlet_kl,
    dirichlet_kl_rows,
    exp_dirichlet_expectation,
    gamma_kl_rows,
    lda_e_step,
    lda_expected_counts,
    lda_log_likelihood_rows,
    normalize_rows,
    product_at_nonzeros,
)
from ._klnmf import KLNMF

# Shape and scale of the Gamma draws that start the topics (lambda) and the
# documents' variational parameters (gamma): those of Hoffman's onlineldavb
# and of scikit-learn, so that the same seed gives the same start.
_START_SHAPE = 100.0
_START_SCALE = 1.0 / _START_SHAPE


# Split-merge moves: a word's share of a topic below this is left out of the
# topic's own counts when looking for a split (noise there, and most entries).
_SHARE_FLOOR = 1e-2


def _topic_counts(X, rows, y, Theta, B, t):
    """Topic ``t``'s expected counts ``X_dw Theta_dt B_tw / (Theta B)_dw``.

    ``y`` is ``Theta B`` at the stored entries of ``X`` and ``rows`` their
    row indices.  Entries where the topic holds less than ``_SHARE_FLOOR`` of
    the word are left out and empty rows and columns dropped: returns the
    compact CSR matrix and the columns of ``X`` its columns are.
    """
    share = Theta[rows, t] * B[t, X.indices] / y
    keep = np.flatnonzero(share >= _SHARE_FLOOR)
    used_rows, r = np.unique(rows[keep], return_inverse=True)
    used_cols, c = np.unique(X.indices[keep], return_inverse=True)
    counts = sp.csr_matrix(
        (X.data[keep] * share[keep], (r, c)), shape=(used_rows.size, used_cols.size)
    )
    return counts, used_cols


def _split_gain(counts, random_state):
    """How far a topic's counts are from one topic: ``N s_2^2``.

    ``s_2`` is the second singular value of
    :math:`D_r^{-1/2} C D_c^{-1/2}` (the first is 1), with :math:`D_r, D_c`
    the row and column sums of the counts :math:`C`: ``N s_2^2`` is the part
    of the chi-square statistic of :math:`C` against independent documents
    and terms (one topic) along the first axis of correspondence analysis.
    A topic that merges two topics used by different documents has a large
    one; a topic that is one topic has only its noise.
    """
    if min(counts.shape) < 3:
        return 0.0
    r = np.asarray(counts.sum(axis=1)).ravel()
    c = np.asarray(counts.sum(axis=0)).ravel()
    scaled = sp.diags(1 / np.sqrt(r)) @ counts @ sp.diags(1 / np.sqrt(c))
    s = randomized_svd(scaled, 2, n_iter=4, random_state=random_state)[1]
    return float(r.sum() * s[1] ** 2)


def _split_in_two(counts, random_state):
    """Two topics' expected counts that add up to (about) ``counts``.

    A rank-2 KL-NMF of the counts from its NNDSVDa start: the halves are
    :math:`(\\sum_d W_{da}) H_a` for the two factors ``a``.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        nmf = KLNMF(2, max_iter=20, tol=1e-4, random_state=random_state).fit(counts)
    return nmf.embedding_.sum(axis=0)[:, None] * nmf.components_


class LDAVI(_BaseTopicModel):
    """Latent Dirichlet allocation by mean-field variational inference, NMF form.

    The model (Blei, Ng & Jordan, 2003): each document draws topic
    proportions :math:`\\theta_d \\sim \\mathrm{Dir}(\\alpha)`, each topic is
    a distribution over terms :math:`\\beta_k \\sim \\mathrm{Dir}(\\eta)`, and
    each word picks a topic from :math:`\\theta_d` and a term from that
    topic.  With :math:`q(\\theta_d) = \\mathrm{Dir}(\\gamma_d)` and
    :math:`q(\\beta_k) = \\mathrm{Dir}(\\lambda_k)`, the fit maximizes the
    evidence lower bound

    .. math::

        \\mathcal{L} = \\sum_{X_{dw} > 0} X_{dw} \\log (\\Theta B)_{dw}
        - \\sum_d \\mathrm{KL}\\big(\\mathrm{Dir}(\\gamma_d) \\,\\|\\,
        \\mathrm{Dir}(\\alpha)\\big)
        - \\sum_k \\mathrm{KL}\\big(\\mathrm{Dir}(\\lambda_k) \\,\\|\\,
        \\mathrm{Dir}(\\eta)\\big),

    where :math:`\\Theta = \\exp \\mathbb{E}[\\log \\theta]` and
    :math:`B = \\exp \\mathbb{E}[\\log \\beta]` (the word-topic
    responsibilities are at their optimum, so they never need storing).
    Written as in NMF (Paper 002, Alg. 5), with :math:`R = X / (\\Theta B)`
    evaluated only at the non-zeros of ``X``, one epoch is

    .. math::

        \\text{E-step: repeat } \\gamma \\leftarrow \\alpha + \\Theta \\odot
        (R B^T), \\qquad
        \\text{M-step: } \\lambda \\leftarrow \\eta + B \\odot (\\Theta^T R).

    The E-step runs on all documents at once: each sweep is one sampled
    product and one sparse-dense product over the still-active documents; a
    document leaves the active set when the mean absolute change of its
    :math:`\\gamma_d` falls below ``mean_change_tol``.  With
    ``topic_word_prior=None`` the topics are point estimates :math:`\\beta`
    (Alg. 5 exactly): :math:`B = \\beta` and
    :math:`\\beta \\leftarrow \\mathrm{normalize\\_rows}(B \\odot \\Theta^T R)`.

    Every E-step -- in ``fit``, ``partial_fit``, ``transform``, ``bound``,
    ``score`` -- starts from the same deterministic point, :math:`\\gamma = 1`, the
    start of scikit-learn's ``transform``, except the very first one, on the
    random start topics: those are all nearly uniform, the symmetric start
    would keep every document almost evenly spread over them, so it starts
    from scikit-learn's random draw instead (as all of scikit-learn's
    training E-steps do).  In training, a document whose previous
    :math:`\\gamma_d` already has a higher bound under the new topics than
    where its restart ended is swept on from its previous :math:`\\gamma_d`
    instead.  ``loss_history_[t]`` is minus the bound of the fit's state
    after ``t`` epochs, :math:`-\\mathcal{L}(\\gamma_t, \\lambda_t)`.  Two
    consequences:

    - **The bound of batch learning never goes down** (unlike
      scikit-learn's, its issue #6777), whatever the E-step's stopping rule:
      the M-step maximizes :math:`\\mathcal{L}(\\gamma_t, \\cdot)`, so
      :math:`\\mathcal{L}(\\gamma_t, \\lambda_{t+1}) \\ge
      \\mathcal{L}(\\gamma_t, \\lambda_t)`, and every document ends the
      next E-step at least as high as at :math:`\\gamma_t` (sweeps only
      ascend).  The restart alone does not give that: for
      :math:`\\alpha < 1` a document's bound is multimodal, the restart can
      end in a lower mode, and where the topics are alike on a document's
      terms (one-term vocabularies, a single document) the all-ones start is
      a saddle point the sweeps never leave.  scikit-learn restarts each
      training E-step from a fresh random draw but reports the perplexity of
      a different, deterministic E-step, so its M-step does not improve the
      quantity it reports.
    - **Restarting beats warm starts.**  Starting each E-step from the
      previous epoch's :math:`\\gamma` alone makes every step exact
      coordinate ascent, but warm starts keep each document in the mode it
      fell into under the first, random topics: on a generated corpus that
      costs 40 % in held-out perplexity (420 against 301 for restarts).  The
      better of the two per document keeps the restarts' escapes and the
      warm starts' ascent, for one more evaluation of the bound per epoch
      (about one sweep) and the sweeps of the documents switched: 13 to
      21 % more fit time on Classic3 and WebACE (``docs/lda.md``).

    :meth:`bound` folds every document in from all ones (as ``transform``):
    on the training data it is at most ``-loss_``, and equal where no
    document kept its previous :math:`\\gamma`.

    :meth:`score` and :meth:`perplexity` are the held-out
    document-completion log-likelihood per word that every estimator of the
    package shares (see ``_BaseTopicModel.score``): each document's tokens
    are split by binomial thinning, the E-step runs on one half, and the
    other half is scored under the posterior mean mixture
    :math:`P(w \\mid d) = \\mathbb{E}[\\theta_d] \\, \\mathbb{E}[\\beta]`.
    It chooses ``n_components`` with ``GridSearchCV``, and, being a per-word
    average of per-document terms, does not explode on small held-out sets
    as scikit-learn's bound-based perplexity does (its issue #20032: the
    topics' term of the bound, of size O(n_components * n_features), is
    divided by the evaluated words).  :meth:`bound` returns the evidence
    lower bound, scikit-learn's ``score``.  From the same topics this
    estimator's E-step, sufficient statistics, bound and M-step are
    scikit-learn's (tested).

    Parameters
    ----------
    n_components : int, default=10
        Number of topics.
    doc_topic_prior : float > 0, array-like of shape (n_components,) or None, \
default=None
        Dirichlet prior :math:`\\alpha` of the topic proportions; any positive
        value (also above 1), or one value per topic.  ``None`` means
        ``1 / n_components``.
    topic_word_prior : float > 0, "auto" or None, default="auto"
        Dirichlet prior :math:`\\eta` of the topics.  ``"auto"`` means
        ``1 / n_components`` (scikit-learn's default).  ``None`` makes the
        topics point estimates (Paper 002, Alg. 5): no prior, no posterior
        over the topics.  Note that this differs from scikit-learn, where
        ``None`` means ``1 / n_components``.
    learning_method : {"batch", "online"}, default="batch"
        ``"batch"``: every epoch runs the E-step on all documents, then one
        M-step.  ``"online"``: online variational Bayes (Hoffman, Blei & Bach,
        2010); the documents are visited in mini-batches of ``batch_size``,
        each followed by :math:`\\lambda \\leftarrow (1 - \\rho_t) \\lambda
        + \\rho_t (\\eta + \\tfrac{D}{|b|} B \\odot \\Theta_b^T R_b)` with
        :math:`\\rho_t = (\\tau_0 + t)^{-\\kappa}`.
    learning_decay : float in [0, 1], default=0.7
        :math:`\\kappa`; values in (0.5, 1] guarantee convergence.
    learning_offset : float >= 1, default=10.0
        :math:`\\tau_0`; down-weights the early mini-batches.
    max_iter : int, default=10
        Maximum number of epochs (passes over the training data) of ``fit``.
    batch_size : int, default=128
        Documents per mini-batch in online learning.
    total_samples : float, default=1e6
        :math:`D`, the total number of documents, used by :meth:`partial_fit`
        (``fit`` uses the number of training documents).
    mean_change_tol : float, default=1e-3
        A document's E-step stops when the mean absolute change of its
        :math:`\\gamma_d` falls below this.
    max_doc_update_iter : int, default=100
        Maximum number of E-step sweeps per document and E-step.
    init : {"nndsvda", "random", "custom"} or None, default=None
        Start of the topics' :math:`\\lambda`.  ``None`` means
        ``"nndsvda"`` (``"random"`` when ``n_components > min(n_samples,
        n_features)``, and in block-wise fits, which never hold all of X).
        ``"nndsvda"``: the non-negative double SVD of ``X`` (as the NMF
        family's default start), each topic's row normalized and given
        pseudo-counts in proportion to its share of ``X``,
        :math:`\\lambda_k = \\eta + N \\pi_k \\hat\\beta_k` with
        :math:`N` the number of tokens.  It is distinct topics from the
        start; from the nearly uniform random start, batch VB often merges
        two true topics into one and splits another, a local optimum that
        more topics then repair -- which biases choosing ``n_components``
        by held-out score upwards (see ``docs/guide/choosing_k.md``).
        ``"random"``: :math:`\\lambda` is drawn from Gamma(100, 1/100) as
        scikit-learn draws it, so that the same ``random_state`` gives
        scikit-learn's start.  ``"custom"``: pass ``fit(X, H=lambda0)``,
        positive.  In every case the first E-step starts from a Gamma(100,
        1/100) draw of ``random_state`` and the later ones from all ones;
        :meth:`partial_fit` always starts from the random draw.
    n_init : int >= 1, default=1
        Number of starts of ``fit``; the fit with the highest evidence lower
        bound is kept.  The first start is ``init``'s, the others are
        Gamma(100, 1/100) draws, continuing the generator of
        ``random_state``.  Batch VB has local optima (two true topics merged
        into one, another split in two) that no number of epochs leaves;
        restarts may avoid them, at ``n_init`` times the cost, and the
        split-merge moves (``split_merge``) repair them directly.  The moves
        are made once, after the best start.
    split_merge : int >= 0, default=3
        Maximum number of split-merge moves after the fit (batch learning
        with all of ``X`` in memory; online and block-wise fits make none).
        A move merges the two topics that cost least to merge (near
        duplicates, or an empty topic) and splits in two the topic whose
        share of the data is furthest from one topic (a rank-2 KL-NMF of it),
        then runs the epochs again from there; it is kept if the bound ends
        higher by more than ``tol`` times its size (what the fit's own
        stopping rule resolves; ``1e-6`` for ``tol=0``), else undone, and the
        first move undone ends the moves.  This
        repairs batch VB's typical local optimum -- two true topics merged
        into one, another split in two -- which more epochs, and often more
        restarts, do not leave (on the 20-topic corpus of
        ``examples/choosing_k.py`` it made the held-out score choose k = 28
        instead of 20).  Each move costs about one more fit of a few epochs;
        ``0`` disables the moves (and, with ``init="random"``, reproduces
        scikit-learn's fit).  The moves made are in
        ``split_merge_moves_``.
    tol : float, default=1e-3
        ``fit`` stops when an epoch raises the bound by less than ``tol``
        times the absolute value of the bound at the start; ``tol=0`` runs
        ``max_iter`` epochs.
    random_state : int, RandomState instance or None, default=None
        Seed of the start: the topics' lambda and the first E-step's gamma.
    verbose : int, default=0
        Print the negative bound and elapsed time every 10 epochs (every
        epoch if ``verbose > 1``).

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        :math:`\\lambda`, the variational Dirichlet parameters of the topics
        (pseudo-counts; normalize the rows for topic-word distributions).
        For point-estimate topics, the expected topic-word counts
        :math:`\\sum_d X_{dw} \\phi_{dwk}`, whose normalized rows are
        :math:`\\beta`.
    embedding_ : ndarray of shape (n_samples, n_components)
        Normalized :math:`\\gamma` of the training documents from the last
        epoch's E-step, i.e. for the topics before the last M-step
        (``transform`` folds in with the final topics).
    loss_ : float
        Final objective: minus the evidence lower bound of the fitted state
        (the topics and the training documents' last E-step), at most
        ``-bound(X)`` (see above).
    loss_history_ : ndarray of shape (n_iter_ + 1,)
        Minus the bound at the start (with the first E-step's gamma) and
        after every epoch.  In online
        learning the entries before the last sum each mini-batch's bound
        with the topics it met (a free running estimate); the last is exact.
    n_iter_ : int
        Number of epochs run by ``fit`` (of the last kept run: the start's, or
        that of the last split-merge move kept; ``loss_history_`` is that
        run's too).
    split_merge_moves_ : list of dict
        The split-merge moves ``fit`` tried, in order: ``"merged"`` (the
        kept topic and the one merged into it, whose slot took one half of
        the split), ``"split"`` (the topic split), ``"bound_before"``,
        ``"bound_after"`` and ``"accepted"``.
    n_batch_iter_ : int
        One plus the number of M-steps so far (the :math:`t` of the next
        online step), as in scikit-learn.
    doc_topic_prior_ : ndarray of shape (n_components,)
        The :math:`\\alpha` in use.
    topic_word_prior_ : float or None
        The :math:`\\eta` in use; ``None`` for point-estimate topics.
    random_state_ : RandomState instance
        Generator of the start, kept for the first :meth:`partial_fit`.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when ``X`` has string column names.

    See Also
    --------
    PLSI : the same model without the Dirichlet priors (maximum likelihood).
    JointNMF : joint multiplicative updates; ``normalize="both"`` is PLSA.

    References
    ----------
    D. Blei, A. Ng, M. Jordan (2003). Latent Dirichlet allocation. JMLR 3.
    M. Hoffman, D. Blei, F. Bach (2010). Online learning for latent Dirichlet
    allocation. NIPS.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_topicfac import LDAVI
    >>> X = np.array([[5, 3, 0, 0], [4, 6, 1, 0], [0, 1, 6, 4], [0, 0, 3, 5]])
    >>> lda = LDAVI(n_components=2, max_iter=50, random_state=0)
    >>> theta = lda.fit_transform(X)            # P(z|d), rows sum to one
    >>> np.allclose(theta.sum(axis=1), 1.0)
    True
    >>> bool(theta.argmax(axis=1)[0] != theta.argmax(axis=1)[3])
    True
    >>> bool(np.all(np.diff(lda.loss_history_) <= 1e-9))   # the bound only rises
    True
    >>> lda.perplexity(X[:1]) < 4.0       # per-word, fine on a single document
    True
    """

    _parameter_constraints: dict = {
        **_BaseTopicModel._parameter_constraints,
        "doc_topic_prior": [
            None,
            Interval(Real, 0, None, closed="neither"),
            "array-like",
        ],
        "topic_word_prior": [
            None,
            Interval(Real, 0, None, closed="neither"),
            StrOptions({"auto"}),
        ],
        "learning_method": [StrOptions({"batch", "online"})],
        "learning_decay": [Interval(Real, 0, 1, closed="both")],
        "learning_offset": [Interval(Real, 1.0, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "total_samples": [Interval(Real, 0, None, closed="neither")],
        "mean_change_tol": [Interval(Real, 0, None, closed="left")],
        "max_doc_update_iter": [Interval(Integral, 1, None, closed="left")],
        "init": [StrOptions({"nndsvda", "random", "custom"}), None],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "split_merge": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(
        self,
        n_components=10,
        *,
        doc_topic_prior=None,
        topic_word_prior="auto",
        learning_method="batch",
        learning_decay=0.7,
        learning_offset=10.0,
        max_iter=10,
        batch_size=128,
        total_samples=1e6,
        mean_change_tol=1e-3,
        max_doc_update_iter=100,
        init=None,
        n_init=1,
        split_merge=3,
        tol=1e-3,
        random_state=None,
        verbose=0,
    ):
        self.n_components = n_components
        self.doc_topic_prior = doc_topic_prior
        self.topic_word_prior = topic_word_prior
        self.learning_method = learning_method
        self.learning_decay = learning_decay
        self.learning_offset = learning_offset
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.total_samples = total_samples
        self.mean_change_tol = mean_change_tol
        self.max_doc_update_iter = max_doc_update_iter
        self.init = init
        self.n_init = n_init
        self.split_merge = split_merge
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------- the model
    def _topic_expectation(self, H, columns):
        """``B`` at ``columns``: ``exp(E[log beta])``, or the point estimates."""
        if self.topic_word_prior_ is None:
            return H[:, columns] / _nonzero(H.sum(axis=1))[:, None]
        return np.exp(psi(H[:, columns]) - psi(H.sum(axis=1))[:, None])

    def _document_bound(self, X, gamma, y, alpha):
        """The documents' part of the bound, at ``gamma`` (``y = Theta B``)."""
        return float(self._document_bounds(X, gamma, y, alpha).sum())

    def _document_bounds(self, X, gamma, y, alpha):
        """Each document's term of the bound, at ``gamma`` (``y = Theta B``)."""
        return lda_log_likelihood_rows(X, y) - dirichlet_kl_rows(gamma, alpha)

    def _topic_bound(self, H):
        """The topics' part of the bound, ``-KL(q(beta) || p(beta))``."""
        if self.topic_word_prior_ is None:
            return 0.0
        return -dirichlet_kl(H, self.topic_word_prior_)

    def _e_step(self, X, H, gamma=None, warm=None):
        """E-step of the documents ``X`` for the topics ``H``.

        From ``gamma``, by default the all-ones start of scikit-learn's
        ``transform`` (see the class docstring for the one exception).
        With ``warm`` (the documents' previous ``gamma``, in training), a
        document whose bound at ``warm`` is higher than where the E-step
        from the start ended continues from ``warm`` instead (see
        `_keep_the_better_start`).  Returns ``gamma``, the per-document part
        of the bound at ``gamma`` and the expected topic-word counts (the
        M-step's statistics).  Only the topics' columns of the terms present
        in ``X`` are evaluated, so a mini-batch or a few documents cost
        O(their terms * k), not O(n_features * k).
        """
        n, m = X.shape
        H = H.astype(X.dtype, copy=False)
        alpha = self.doc_topic_prior_.astype(X.dtype, copy=False)
        used = np.flatnonzero(np.bincount(X.indices, minlength=m))
        if used.size < m:
            position = np.zeros(m, dtype=X.indices.dtype)
            position[used] = np.arange(used.size, dtype=X.indices.dtype)
            X = sp.csr_matrix(
                (X.data, position[X.indices], X.indptr), shape=(n, used.size)
            )
        B = self._topic_expectation(H, used)
        if gamma is None:
            gamma = np.ones((n, self.n_components), dtype=X.dtype)
        gamma, y = self._sweeps(X, gamma, B, alpha)
        if warm is None:
            bound = self._document_bound(X, gamma, y, alpha)
        else:
            gamma, y, bounds = self._keep_the_better_start(X, gamma, y, warm, B, alpha)
            bound = float(bounds.sum())
        counts = np.zeros((self.n_components, m), dtype=X.dtype)
        counts[:, used] = lda_expected_counts(X, gamma, B, y, overwrite_y=True)
        return gamma, bound, counts

    def _sweeps(self, X, gamma, B, alpha):
        """`lda_e_step` with this estimator's per-document stopping rule."""
        return lda_e_step(
            X,
            gamma,
            B,
            alpha,
            max_iter=self.max_doc_update_iter,
            tol=self.mean_change_tol,
        )

    def _keep_the_better_start(self, X, gamma, y, warm, B, alpha):
        """Per document, the E-step from ``warm`` where that start is better.

        The training E-step restarts every document from all ones (which
        escapes the modes the first, random topics put documents in; see the
        class docstring) -- but a restart is not an ascent step: for
        ``alpha < 1`` a document's bound is multimodal, and the restart can
        end in a lower mode than the document's previous ``gamma`` reaches
        under the new topics.  (In the extreme, when the topics are alike on
        a document's terms -- one-term vocabularies, a single document --
        the all-ones start is a saddle point that the sweeps never leave.)
        The fit's bound could then go down.  So the previous ``gamma``,
        ``warm``, is evaluated under the new topics, and every document
        whose bound is higher there than where its restart ended is swept on
        from ``warm``; sweeps only raise a document's bound, so each
        document ends at least as high as at ``warm``.  With the M-step,
        which maximizes the bound at the previous ``gamma``, every epoch of
        the fit then raises the bound of its state.  Cost: one evaluation of
        the bound (about one sweep), plus sweeps for the documents switched.
        Returns ``gamma``, ``y`` and the documents' bounds.
        """
        bounds = self._document_bounds(X, gamma, y, alpha)
        warm = warm.astype(gamma.dtype, copy=False)
        y_warm = product_at_nonzeros(X, exp_dirichlet_expectation(warm), B)
        np.maximum(y_warm, np.finfo(y_warm.dtype).tiny, out=y_warm)
        better = np.flatnonzero(self._document_bounds(X, warm, y_warm, alpha) > bounds)
        if better.size == 0:
            return gamma, y, bounds
        X_better = X[better]
        gamma_b, y_b = self._sweeps(X_better, warm[better], B, alpha)
        gamma[better] = gamma_b
        starts = X.indptr[better]
        lengths = X.indptr[better + 1] - starts
        offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
        y[offsets + np.arange(lengths.sum())] = y_b
        bounds[better] = self._document_bounds(X_better, gamma_b, y_b, alpha)
        return gamma, y, bounds

    # ----------------------------------------------------------------- hooks
    def _fit_from_start(self, X, W, H):
        # n_init starts: the first is init's, the others fresh random draws
        # from the same generator, drawn as init="random" draws them (topics,
        # then the first E-step's start); the highest bound is kept.
        n, m = X.shape
        k = self.n_components
        best = None
        for start in range(self.n_init):
            if start == 0:
                W0, H0 = self._initialize(X, W, H)
            else:
                self.n_batch_iter_ = 1
                H0 = self._draw((k, m), X.dtype)
                W0 = self._draw((n, k), X.dtype)
            result = self._run_iterations(X, W0, H0)
            if self.verbose and self.n_init > 1:
                print(
                    f"{type(self).__name__} start {start + 1}/{self.n_init}: "
                    f"bound {-result[2][-1]:.6e}"
                )
            if best is None or result[2][-1] < best[0][2][-1]:
                best = result, self.n_batch_iter_
        result, self.n_batch_iter_ = best
        return self._split_merge_moves(X, result)

    def _split_merge_moves(self, X, result):
        """Up to ``split_merge`` moves, each kept if the bound rises.

        ``result`` is ``_run_iterations``' ``(W, H, history, n_iter,
        converged)`` of a fit; each move restarts the iterations from
        :meth:`_split_merge_start` of its topics and is kept if the fit from
        there ends with a higher bound.  The first move that does not raise
        the bound ends the moves.
        """
        if self.learning_method != "batch":
            return result
        for _ in range(self.split_merge):
            proposal = self._split_merge_start(X, result[0], result[1])
            if proposal is None:
                break
            H0, (kept, merged, split) = proposal
            steps = self.n_batch_iter_
            trial = self._run_iterations(X, result[0], H0)
            accepted = result[2][-1] - trial[2][-1] > self._resolution(result[2])
            self.split_merge_moves_.append(
                {
                    "merged": (kept, merged),
                    "split": split,
                    "bound_before": -float(result[2][-1]),
                    "bound_after": -float(trial[2][-1]),
                    "accepted": bool(accepted),
                }
            )
            if self.verbose:
                print(
                    f"[{type(self).__name__}] split-merge: merge topics {kept} and "
                    f"{merged}, split topic {split} into {split} and {merged}: "
                    f"bound {-result[2][-1]:.6e} -> {-trial[2][-1]:.6e} "
                    f"({'kept' if accepted else 'undone'})"
                )
            if not accepted:
                self.n_batch_iter_ = steps
                break
            result = trial
        return result

    def _resolution(self, history):
        """The smallest gain of the bound a move must make to be kept.

        The fit stops once an epoch changes the bound by less than ``tol``
        times its size (``_stopped``), so where it ends is only known to
        about that much: float32 and float64 fits of the same data, or the
        same fit with a few more epochs, end that far apart.  A move that
        gains less is kept or undone by that noise -- and the same data in
        two dtypes ended with permuted topics.  So the gain must exceed
        ``tol`` times the bound before the move (``history[-1]``); with
        ``tol=0``, ``1e-6`` times it (the float32 resolution of the bound).
        """
        return max(self.tol, 1e-6) * abs(history[-1])

    def _split_merge_start(self, X, gamma, H):
        """The topics of one split-merge move from the topics ``H``.

        ``gamma`` is the documents' last E-step (for the topics before the
        last M-step: close enough to tell the topics' counts apart, and free).

        **Merge** the pair of topics that costs least to merge,
        :math:`\\min(n_i, n_j) (1 - \\mathrm{BC}(\\beta_i, \\beta_j))` with
        :math:`n` the topics' expected counts (``lambda - eta``) and BC the
        Bhattacharyya coefficient of their normalized rows: near-duplicate
        topics, or an empty topic with any other.  The lighter one's counts
        are added to the heavier one's, freeing its slot.  **Split** the
        other topic whose own counts (the E-step's responsibilities times
        ``X``) are furthest from one topic (``_split_gain``) into two
        by a rank-2 KL-NMF: one half replaces it, the other takes the freed
        slot.  Returns ``(lambda0, (kept, merged, split))``, or ``None`` with
        fewer than three topics.
        """
        k = self.n_components
        if k < 3 or X.nnz == 0:
            return None
        eta = self.topic_word_prior_ or 0.0
        counts = np.maximum(H.astype(np.float64) - eta, 0.0)
        mass = counts.sum(axis=1)
        root = np.sqrt(counts / _nonzero(mass)[:, None])
        cost = np.minimum.outer(mass, mass) * np.maximum(1.0 - root @ root.T, 0.0)
        np.fill_diagonal(cost, np.inf)
        kept, merged = np.unravel_index(np.argmin(cost), cost.shape)
        if mass[kept] < mass[merged]:
            kept, merged = merged, kept
        H = H.astype(X.dtype, copy=False)
        # The responsibilities Theta_dt B_tw / (Theta B)_dw do not change if a
        # document's row of Theta is rescaled: GammaPoissonVI's exp(psi(a))
        # / (b + 1) gives the same ones as this Dirichlet expectation.
        Theta = exp_dirichlet_expectation(gamma.astype(X.dtype, copy=False))
        B = self._topic_expectation(H, slice(None))
        y = product_at_nonzeros(X, Theta, B)
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        seed = self.random_state_.randint(np.iinfo(np.int32).max)
        best_gain, split, part = 0.0, None, None
        for t in range(k):
            if t in (kept, merged):
                continue
            topic_counts, columns = _topic_counts(X, rows, y, Theta, B, t)
            gain = _split_gain(topic_counts, seed)
            if gain > best_gain:
                best_gain, split, part = gain, t, (topic_counts, columns)
        if split is None:
            return None
        halves = _split_in_two(part[0], seed)
        new = counts.copy()
        new[kept] += counts[merged]
        new[[merged, split]] = 0.0
        new[np.ix_([merged, split], part[1])] = halves
        new += eta
        lam = np.maximum(new, np.finfo(X.dtype).tiny).astype(X.dtype, copy=False)
        return lam, (int(kept), int(merged), int(split))

    def _fit_blockwise(self, X, W, H):
        if self.n_init != 1:
            raise ValueError(
                f"n_init={self.n_init} is not supported by a block-wise fit "
                "(out-of-core or on Dask); use n_init=1."
            )
        return super()._fit_blockwise(X, W, H)

    def _initialize(self, X, W, H):
        self._reset_state()
        n, m = X.shape
        k = self.n_components
        self._refuse_document_start(W)
        init = self.init
        if init is None:
            init = "nndsvda" if k <= min(n, m) else "random"
        if init == "custom":
            H = self._check_custom_topics(H, (k, m), X.dtype)
        elif H is not None:
            raise ValueError(
                f"H was passed to fit, but init is {init!r}; set "
                "init='custom' to start from it."
            )
        elif init == "nndsvda":
            if k > min(n, m):
                raise ValueError(
                    f"init='nndsvda' needs n_components <= min(n_samples, "
                    f"n_features) = {min(n, m)}, got {k}; use init='random'."
                )
            H = self._nndsvda_topics(X)
        else:
            H = self._draw((k, m), X.dtype)
        # The first E-step's start, drawn after the topics as scikit-learn does.
        return self._draw((n, k), X.dtype), H

    def _nndsvda_topics(self, X):
        """``lambda`` from the NNDSVDa start: ``eta + N pi_k beta_k``.

        ``beta_k`` is the normalized k-th row of the start's ``H`` and
        ``pi_k`` the share of ``W @ H``'s total that topic ``k`` carries.
        """
        W, H = self._nndsvda_start(X)
        W = W.astype(np.float64)
        H = H.astype(np.float64)
        mass = W.sum(axis=0) * H.sum(axis=1)
        share = mass / _nonzero(mass.sum())
        beta = H / _nonzero(H.sum(axis=1))[:, None]
        lam = beta * (float(X.sum(dtype=np.float64)) * share)[:, None]
        eta = self.topic_word_prior_
        if eta is not None:
            lam += eta
        # Positive whatever the data (NNDSVDa fills zeros; a topic that
        # carries no mass must still be a valid Dirichlet parameter).
        lam = np.maximum(lam, np.finfo(X.dtype).tiny)
        return lam.astype(X.dtype, copy=False)

    @staticmethod
    def _refuse_document_start(W):
        if W is not None:
            raise ValueError(
                "LDAVI takes no start for the documents (see the E-step's "
                "start in its docstring). Pass only H, the topics' lambda, "
                "with init='custom'."
            )

    def _check_custom_topics(self, H, shape, dtype):
        """Validate ``init='custom'``'s topics: the right shape, positive."""
        if H is None:
            raise ValueError(
                "init='custom' needs the topics' start: pass it as "
                "fit(X, H=lambda0), or choose init='random'."
            )
        H = _check_factor(H, shape, "H", dtype)
        if H.size and H.min() <= 0:
            raise ValueError(
                "The custom start H must be strictly positive: it holds "
                "the Dirichlet parameters lambda of the topics."
            )
        return H

    def _draw(self, shape, dtype):
        """Gamma(100, 1/100) draws: scikit-learn's start for lambda and gamma."""
        draw = self.random_state_.gamma(_START_SHAPE, _START_SCALE, shape)
        return draw.astype(dtype, copy=False)

    def _reset_state(self):
        """Priors, generator and step counter at the start of learning."""
        self._resolve_priors()
        self.random_state_ = check_random_state(self.random_state)
        self.n_batch_iter_ = 1
        self.split_merge_moves_ = []

    def _doc_step(self, X, W, H):
        # The first E-step starts from the random draw W, every later one
        # from all ones, kept per document only where it beats W, the
        # documents' previous gamma.
        if self.n_batch_iter_ == 1:
            gamma, bound, counts = self._e_step(X, H, W)
        else:
            gamma, bound, counts = self._e_step(X, H, warm=W)
        return gamma, {"loss": -bound, "counts": counts}

    def _topic_step(self, H, stats):
        eta = self.topic_word_prior_
        counts = stats["counts"]
        return (counts if eta is None else eta + counts).astype(H.dtype), None

    def _topic_loss(self, H):
        return -self._topic_bound(H)

    def _after_iteration(self):
        # Batch learning: one M-step per epoch.
        self.n_batch_iter_ += 1

    def _iterate(self, X, W, H):
        if self.learning_method == "batch":
            return super()._iterate(X, W, H)
        # Online: the documents' bounds are those of each mini-batch with the
        # topics it met -- a running estimate that costs nothing extra.
        loss = self._topic_loss(H)
        n = X.shape[0]
        for batch in gen_batches(n, self.batch_size):
            W[batch], stats = self._doc_step(X[batch], W[batch], H)
            loss += stats["loss"]
            H = self._online_step(H, stats["counts"], n / (batch.stop - batch.start))
        return W, H, loss

    def _online_step(self, H, counts, doc_ratio):
        """Hoffman et al.'s stochastic natural-gradient step on the topics."""
        rho = (self.learning_offset + self.n_batch_iter_) ** -self.learning_decay
        self.n_batch_iter_ += 1
        eta = self.topic_word_prior_ or 0.0
        return ((1 - rho) * H + rho * (eta + doc_ratio * counts)).astype(H.dtype)

    def _doc_loss(self, X, W, H):
        # The bound of the state: the topics H and the E-step's gamma for
        # them, from all ones and, in training, from the documents' last
        # gamma W where that is better; ``bound`` passes no W.
        return -self._e_step(X, H, warm=W)[1]

    def _doc_output(self, W):
        return normalize_rows(W)[0]

    def _fold_in(self, X):
        """``gamma`` of ``X`` with the topics fixed, from the all-ones start.

        The deterministic start of scikit-learn's ``transform``; each
        document stops on its own, so its result does not depend on the
        other documents of ``X``.
        """
        return self._e_step(X, self.components_)[0]

    def _resolve_priors(self):
        k = self.n_components
        alpha = 1.0 / k if self.doc_topic_prior is None else self.doc_topic_prior
        alpha = np.asarray(alpha, dtype=np.float64)
        if alpha.ndim == 0:
            alpha = np.full(k, float(alpha))
        if alpha.shape != (k,):
            raise ValueError(
                f"doc_topic_prior must be a scalar or have one value per topic "
                f"(shape ({k},)), got shape {alpha.shape}."
            )
        if not np.all(np.isfinite(alpha)) or np.any(alpha <= 0):
            raise ValueError(
                f"doc_topic_prior must be positive and finite, got {alpha}."
            )
        self.doc_topic_prior_ = alpha
        eta = self.topic_word_prior
        self.topic_word_prior_ = 1.0 / k if eta == "auto" else eta

    # ---------------------------------------------------------- public API
    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None):
        """One online variational Bayes pass over ``X`` in mini-batches.

        The first call draws the topics from ``random_state`` as
        ``init="random"`` does, whatever ``init`` is (a mini-batch is no
        basis for an SVD start of the whole corpus), and so the first
        mini-batch's E-step starts from a random draw, the others from all
        ones; the topic update weighs each
        mini-batch by ``total_samples / batch size`` (scikit-learn's
        ``partial_fit``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Non-negative counts.
        y : Ignored
            Not used, present for API consistency.

        Returns
        -------
        self : object
            The updated estimator.
        """
        first = not hasattr(self, "components_")
        X = self._validate_X(X, reset=first)
        if first:
            self._reset_state()
            self.n_iter_ = 0
            self.components_ = self._draw((self.n_components, X.shape[1]), X.dtype)
        X = X.astype(self.components_.dtype, copy=False)
        H = self.components_
        for batch in gen_batches(X.shape[0], self.batch_size):
            Xb = X[batch]
            start = None
            if self.n_batch_iter_ == 1:
                start = self._draw((Xb.shape[0], self.n_components), X.dtype)
            counts = self._e_step(Xb, H, start)[2]
            H = self._online_step(H, counts, self.total_samples / Xb.shape[0])
        self.components_ = H
        return self

    def bound(self, X):
        """Evidence lower bound of ``X`` under the fitted model.

        Each document is folded in as by :meth:`transform`; the bound is the
        sum of the per-document terms plus the topics' term
        :math:`-\\sum_k \\mathrm{KL}(\\mathrm{Dir}(\\lambda_k) \\|
        \\mathrm{Dir}(\\eta))` (zero for point-estimate topics): the value of
        scikit-learn's ``LatentDirichletAllocation.score``, and of
        ``-loss_`` on the training data.  Higher is better.  It is a sum,
        not a per-word average, and charges the topics' term to whatever is
        evaluated: use :meth:`score` to compare models on held-out data.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Non-negative counts.

        Returns
        -------
        bound : float
        """
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        return -self._loss(X, None, self.components_)

    def _topic_mixture(self, X):
        # P(w|d) under the posterior means: E[theta_d] is gamma_d normalized
        # (the prior alpha included), E[beta_k] the normalized lambda_k.
        theta = normalize_rows(self._fold_in(X))[0]
        return theta, normalize_rows(self.components_.astype(X.dtype))[0]

    def inverse_transform(self, X):
        """Map topic proportions to word distributions ``P(w|d)``.

        ``P(w|d) = P(z|d) @ E[beta]``, with ``E[beta]`` the normalized rows of
        ``components_``.  Multiply each row by a document length to get
        expected counts.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components)
            Topic proportions, e.g. the output of ``transform``.

        Returns
        -------
        P_w_given_d : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        return _reconstruct(X, normalize_rows(self.components_)[0])


class GammaPoissonVI(LDAVI):
    """Gamma-Poisson factorization by mean-field variational inference.

    The model of paper 002, Appendix E (Alg. 7): topic weights
    :math:`\\theta_{dk} \\sim \\mathrm{Gamma}(\\alpha_k, b)` (shape, rate),
    normalized topics :math:`\\beta` (point estimates) and counts
    :math:`X_{dw} \\sim \\mathrm{Poisson}(\\sum_k \\theta_{dk} \\beta_{kw})`.
    With :math:`q(\\theta_{dk}) = \\mathrm{Gamma}(a_{dk}, b + 1)` and
    :math:`\\Theta' = \\exp \\mathbb{E}[\\log \\theta] = e^{\\psi(a)} / (b + 1)`,
    the variational updates are the NMF-form updates

    .. math::

        a \\leftarrow \\alpha + \\Theta' \\odot (R B^T), \\qquad
        \\beta \\leftarrow \\mathrm{normalize\\_rows}\\big(B \\odot
        (\\Theta'^T R)\\big), \\qquad R = X / (\\Theta' B).

    **Lemma E.3**: :math:`\\Theta'` differs from LDA's
    :math:`\\exp \\mathbb{E}[\\log \\theta]` only by a factor per document,
    which cancels in :math:`\\Theta \\odot (R B^T)`; so from the same start
    the iterates :math:`a` are LDA's :math:`\\gamma` and the topics are the
    same, for every iteration (tested against a direct implementation of
    Alg. 7).  This estimator therefore runs :class:`LDAVI`'s steps with
    ``topic_word_prior=None``; it differs in what it reports:

    - ``transform`` returns :math:`\\mathbb{E}[\\theta_d] = a_d / (b + 1)`,
      the posterior mean topic weights, not proportions: their row sums
      are :math:`(N_d + \\sum_k \\alpha_k) / (b + 1)`, so for a small rate
      :math:`b` ``transform(X) @ beta`` approaches ``X`` (the NMF view);
    - ``bound`` is the Gamma-Poisson bound, which also models the document
      lengths: it equals LDAVI's bound plus, per document, the log
      negative-binomial probability of its length
      :math:`N_d \\sim \\mathrm{NB}(\\sum_k \\alpha_k, b / (b + 1))` and the
      log multinomial coefficient of its counts (Lemma E.1; tested).

    ``score`` and ``perplexity`` are the held-out completion score of every
    estimator; the predictive word distribution
    :math:`\\mathbb{E}[\\theta_d] \\beta`, normalized, is LDAVI's.

    Parameters
    ----------
    n_components : int, default=10
        Number of topics.
    doc_topic_prior : float > 0, array-like of shape (n_components,) or None, \
default=None
        Gamma shapes :math:`\\alpha`; ``None`` means ``1 / n_components``.
    doc_topic_rate : float > 0, default=1.0
        Gamma rate :math:`b` shared by the topics.
    max_iter : int, default=10
        Maximum number of epochs.
    mean_change_tol : float, default=1e-3
        Per-document E-step stopping threshold (as :class:`LDAVI`).
    max_doc_update_iter : int, default=100
        Maximum number of E-step sweeps per document.
    init : {"nndsvda", "random", "custom"} or None, default=None
        Start of the topics, as :class:`LDAVI` (``None``: ``"nndsvda"``).
    n_init : int >= 1, default=1
        Number of starts; the fit with the highest bound is kept (as
        :class:`LDAVI`).
    split_merge : int >= 0, default=3
        Maximum number of split-merge moves after the fit, each kept if the
        Gamma-Poisson bound rises (as :class:`LDAVI`).
    tol : float, default=1e-3
        Relative bound increase below which the fit stops.
    random_state : int, RandomState instance or None, default=None
        Seed of the start.
    verbose : int, default=0
        Progress output level.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Expected topic-word counts; their normalized rows are :math:`\\beta`.
    embedding_ : ndarray of shape (n_samples, n_components)
        :math:`\\mathbb{E}[\\theta]` of the training documents from the last
        epoch's E-step.
    loss_ : float
        Minus the Gamma-Poisson evidence lower bound of the fitted state, at
        most ``-bound(X)`` (as :class:`LDAVI`).
    loss_history_ : ndarray of shape (n_iter_ + 1,)
        Minus the bound at the start and after every epoch.
    n_iter_ : int
        Number of epochs run (of the last kept run, as :class:`LDAVI`).
    split_merge_moves_ : list of dict
        The split-merge moves tried (as :class:`LDAVI`).
    n_batch_iter_ : int
        One plus the number of M-steps so far.
    doc_topic_prior_ : ndarray of shape (n_components,)
        The shapes :math:`\\alpha` in use.
    random_state_ : RandomState instance
        Generator of the start.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when available.

    See Also
    --------
    LDAVI : the same iterates, reported as Dirichlet-multinomial LDA.
    KLNMF : the maximum-likelihood (prior-free) version of this model.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_topicfac import GammaPoissonVI, LDAVI
    >>> X = np.array([[5, 3, 0, 0], [4, 6, 1, 0], [0, 1, 6, 4], [0, 0, 3, 5]])
    >>> gap = GammaPoissonVI(n_components=2, max_iter=30, random_state=0).fit(X)
    >>> weights = gap.transform(X)     # E[theta]: posterior mean topic weights
    >>> # sum_k E[theta_dk] = (N_d + sum(alpha)) / (b + 1), here b = 1
    >>> np.allclose(weights.sum(axis=1), (X.sum(axis=1) + 1.0) / 2)
    True
    >>> lda = LDAVI(2, topic_word_prior=None, max_iter=30, random_state=0).fit(X)
    >>> np.allclose(gap.components_, lda.components_)   # Lemma E.3
    True
    """

    # The parts of LDAVI this model fixes: point-estimate topics, batch
    # learning (partial_fit keeps LDAVI's default online schedule).
    topic_word_prior = None
    learning_method = "batch"
    learning_decay = 0.7
    learning_offset = 10.0
    batch_size = 128
    total_samples = 1e6

    _parameter_constraints: dict = {
        **{
            key: value
            for key, value in LDAVI._parameter_constraints.items()
            if key
            in {
                "n_components",
                "doc_topic_prior",
                "max_iter",
                "mean_change_tol",
                "max_doc_update_iter",
                "init",
                "n_init",
                "split_merge",
                "tol",
                "random_state",
                "verbose",
            }
        },
        "doc_topic_rate": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(
        self,
        n_components=10,
        *,
        doc_topic_prior=None,
        doc_topic_rate=1.0,
        max_iter=10,
        mean_change_tol=1e-3,
        max_doc_update_iter=100,
        init=None,
        n_init=1,
        split_merge=3,
        tol=1e-3,
        random_state=None,
        verbose=0,
    ):
        self.n_components = n_components
        self.doc_topic_prior = doc_topic_prior
        self.doc_topic_rate = doc_topic_rate
        self.max_iter = max_iter
        self.mean_change_tol = mean_change_tol
        self.max_doc_update_iter = max_doc_update_iter
        self.init = init
        self.n_init = n_init
        self.split_merge = split_merge
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose

    def _document_bounds(self, X, gamma, y, alpha):
        # E log p(X | theta, beta) with the responsibilities at their
        # optimum, log(Theta' B) = log(Theta B) + psi(sum_k a_dk) - log(b + 1);
        # minus sum_k E[theta_dk] (the topics sum to one) and the KL terms.
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

    def _doc_output(self, W):
        return W / W.dtype.type(self.doc_topic_rate + 1)

    def inverse_transform(self, X):
        """Expected counts ``E[theta] @ beta`` from topic weights.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components)
            Topic weights, e.g. the output of ``transform``.

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
        """
        return super().inverse_transform(X)
