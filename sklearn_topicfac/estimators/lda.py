"""Latent Dirichlet allocation (MAP by EM, CVB0 or mean-field variational
inference) and Gamma-Poisson factorization (mean-field variational
inference), in NMF form."""

import copy
import warnings
from dataclasses import replace
from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .. import engine
from .._docstrings import fill_doc
from .._validation import reconstruct
from ..engine.loop import ROUNDING
from ..kernels import normalize_rows
from ..models import CVB0Model, GammaPoissonModel, LDAModel, MAPModel
from . import _state
from ._base import TopicFactorization, all_or_nothing

# GammaPoissonVI's partial_fit runs on LDAVI's default online schedule
# (documented in its docstring, tested in tests/test_lda.py).
_DEFAULT_SCHEDULE = engine.Schedule(
    batch_size=128, offset=10.0, decay=0.7, total_samples=1e6
)
# inference="map" (the default) and "cvb0": starts per n_init (init's, then
# random draws), and the kept start's sweeps per max_iter (see LDAVI's
# ``inference``; chosen on the tuning corpora, docs/lda_defaults.md).
CVB0_STARTS = 3
CVB0_SWEEPS = 3
# The models of the collapsed inferences, which share those starts and sweeps.
COLLAPSED = {"map": MAPModel, "cvb0": CVB0Model}


class _Variational(TopicFactorization):
    """What LDAVI and GammaPoissonVI share: priors, restarts, moves, bound."""

    _fitted_state = {
        **_state.FACTORIZATION_STATE,
        "doc_topic_prior_": _state.Array(("k",), values="positive", kernel=True),
    }

    _parameter_constraints: dict = {
        **TopicFactorization._parameter_constraints,
        "doc_topic_prior": [
            None,
            Interval(Real, 0, None, closed="neither"),
            "array-like",
        ],
        "mean_change_tol": [Interval(Real, 0, None, closed="left")],
        "max_doc_update_iter": [Interval(Integral, 1, None, closed="left")],
        "init": [StrOptions({"nndsvda", "random", "custom"}), None],
    }

    def _check_fitted_state(self):
        """Also: the fitted priors are those the prior parameters give (the
        fold-in reads them, so another positive value would change it)."""
        super()._check_fitted_state()
        if "doc_topic_prior_" not in vars(self):
            return
        resolved = copy.copy(self)
        resolved._resolve_priors()
        for name in ("doc_topic_prior_", "topic_word_prior_"):
            if name in vars(self) and not np.array_equal(
                getattr(resolved, name), getattr(self, name)
            ):
                _state.fail(self, name, f"is not what {name[:-1]} gives")

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

    def _reset_state(self):
        """Priors, generator and step counter at the start of learning."""
        self._resolve_priors()
        self.random_state_ = check_random_state(self.random_state)
        self.n_batch_iter_ = 1
        self.split_merge_moves_ = []

    def _start_rng(self):
        return self.random_state_

    def _fit_engine(self, runner, W, H):
        self._reset_state()
        result = super()._fit_engine(runner, W, H)
        self.n_batch_iter_ = 1 + result.n_steps
        # The objective is minus the bound: the moves also say it as a bound.
        for move in self.split_merge_moves_:
            move["bound_before"] = -move["objective_before"]
            move["bound_after"] = -move["objective_after"]
        return result

    def _schedule(self):
        return _DEFAULT_SCHEDULE

    def _vb_model(self):
        """The mean-field model, which online learning runs."""
        return self._build_model()

    def _resolve_online(self):
        """What ``partial_fit`` settles before it learns: nothing here
        (LDAVI records the inference it runs)."""

    @fill_doc
    @_fit_context(prefer_skip_nested_validation=True)
    @all_or_nothing(fresh=False)
    def partial_fit(self, X, y=None):
        """One online variational Bayes pass over ``X`` in mini-batches.

        The first call draws the topics from ``random_state`` as
        ``init="random"`` does, whatever ``init`` is (a mini-batch is no
        basis for an SVD start of the whole corpus), and so the first
        mini-batch's E-step starts from a random draw, the others from all
        ones; the topic update weighs each
        mini-batch by ``total_samples / batch size`` (scikit-learn's
        ``partial_fit``).  For LDAVI, ``inference_`` becomes ``"vb"`` (so
        ``transform`` folds in by VB as well, also after a batch ``fit`` by
        MAP or CVB0), and ``inference="map"`` or ``"cvb0"`` are refused:
        they are batch methods.

        Parameters
        ----------
        {{counts}}
        {{ignored_y}}

        Returns
        -------
        self : object
            The updated estimator.

        Raises
        ------
        ValueError
            LDAVI with ``inference="map"`` or ``"cvb0"``.
        """
        first = not hasattr(self, "components_")
        if not first:
            self._check_fitted()
        X = self._validate_X(X, reset=first)
        self._resolve_online()
        model = self._vb_model() if not first else None
        if first:
            self._reset_state()
            self.n_iter_ = 0
            model = self._vb_model()
            runner = engine.InMemoryRunner(X)
            start = engine.Start("random", self.n_components, None, self.random_state_)
            self.components_ = engine.start_topics(model, runner, start)
        self.components_, _, self.n_batch_iter_, _ = engine.partial_fit(
            model,
            X,
            self.components_,
            None,
            self._schedule(),
            self.n_batch_iter_,
            rng=self.random_state_,
            fresh=self.n_batch_iter_ == 1,
        )
        return self

    @fill_doc
    def bound(self, X):
        """Evidence lower bound of ``X`` under the fitted model.

        Each document is folded in as by :meth:`transform`; the bound is the
        sum of the per-document terms plus the topics' term
        :math:`-\\sum_k \\mathrm{KL}(\\mathrm{Dir}(\\lambda_k) \\|
        \\mathrm{Dir}(\\eta))` (zero for point-estimate topics): the value of
        scikit-learn's ``LatentDirichletAllocation.score``, and on the
        training data at most ``-loss_``.  For LDAVI's MAP and CVB0 fits
        (its default is MAP) it is no bound but minus their objective
        (the log posterior, the log-likelihood) at the folded-in
        documents; see LDAVI's ``inference``.  Higher is better.  It is a
        sum, not a per-word average, and charges the topics' term to
        whatever is evaluated: use :meth:`score` to compare models on
        held-out data.

        Parameters
        ----------
        {{counts}}

        Returns
        -------
        bound : float
        """
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        model = self._build_model()
        H = self.components_
        return -(model.doc_loss(X, None, H) + model.topic_loss(H))

    def inverse_transform(self, X):
        """Map a document representation to the topics' word distributions.

        ``X @ E[beta]``, with ``E[beta]`` the normalized rows of
        ``components_``.  For LDAVI's topic proportions (``transform``'s
        output) this is ``P(w|d)``: multiply each row by a document length to
        get expected counts.  For GammaPoissonVI's topic weights
        ``E[theta]`` it is the expected counts ``E[theta] @ beta`` directly.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components)
            Topic proportions (LDAVI) or weights (GammaPoissonVI), e.g. the
            output of ``transform``.

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        return reconstruct(X, normalize_rows(self.components_)[0])


def _warn_if_cvb0_rose(history, inference="cvb0"):
    """Warn when a collapsed fit's objective rose by more than rounding.

    CVB0 ascends no bound: its objective (minus the training log-likelihood
    under its point estimates) may rise between sweeps.  MAP's EM ascends
    the posterior, so its objective rises only by rounding, which float32
    data of large magnitude can make larger than the engine's allowance.  A
    rise is never taken for convergence (`engine.loop.stopped`); this says
    it happened.
    """
    h = np.asarray(history, dtype=np.float64)
    if h.size < 2:
        return
    rises = np.diff(h)
    risen = rises > ROUNDING * abs(h[0])
    if risen.any():
        why = (
            "CVB0 ascends no bound, and the fit ends where its sweeps ended. "
            "inference='vb' ascends a bound."
            if inference == "cvb0"
            else "EM ascends the posterior in exact arithmetic, so this is "
            "rounding (float32 data of large magnitude); float64 data avoid it."
        )
        warnings.warn(
            f"LDAVI ({inference.upper()}): the objective rose at "
            f"{int(risen.sum())} of {rises.size} sweeps, by up to "
            f"{rises.max() / abs(h[0]):.2g} of its start; {why}",
            RuntimeWarning,
            stacklevel=3,
        )


@fill_doc
class LDAVI(_Variational):
    """Latent Dirichlet allocation in NMF form: MAP by EM, CVB0 or mean-field VB.

    The model (Blei, Ng & Jordan, 2003): each document draws topic
    proportions :math:`\\theta_d \\sim \\mathrm{Dir}(\\alpha)`, each topic is
    a distribution over terms :math:`\\beta_k \\sim \\mathrm{Dir}(\\eta)`, and
    each word picks a topic from :math:`\\theta_d` and a term from that
    topic.  By default (``inference="auto"``) batch learning with a prior
    on the topics fits the maximum a posteriori topics and proportions by
    EM on the expected counts (``inference="map"``; see ``inference``):
    its topics :math:`N_{kw} + \\eta` carry no :math:`\\exp\\psi`
    shrinkage of rare terms.  ``inference="cvb0"`` is zero-order collapsed
    variational inference, the former default.  ``inference="vb"`` is the
    mean-field variational Bayes of scikit-learn's
    ``LatentDirichletAllocation`` (online learning, :meth:`partial_fit`
    and point-estimate topics always run it), described in the rest of
    this section.  With
    :math:`q(\\theta_d) = \\mathrm{Dir}(\\gamma_d)` and
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

    VB's E-step runs on all documents at once: each sweep is one sampled
    product and one sparse-dense product over the still-active documents; a
    document leaves the active set when the mean absolute change of its
    :math:`\\gamma_d` falls below ``mean_change_tol``.  With
    ``topic_word_prior=None`` the topics are point estimates :math:`\\beta`
    (Alg. 5 exactly): :math:`B = \\beta` and
    :math:`\\beta \\leftarrow \\mathrm{normalize\\_rows}(B \\odot \\Theta^T R)`.

    With ``inference="vb"``, every E-step -- in ``fit``, ``partial_fit``,
    ``transform``, ``bound``, ``score`` -- starts from the same
    deterministic point, :math:`\\gamma = 1`, the start of scikit-learn's
    ``transform``, except the very first one, on the random start topics:
    those are all nearly uniform, the symmetric start
    would keep every document almost evenly spread over them, so it starts
    from scikit-learn's random draw instead (as all of scikit-learn's
    training E-steps do).  In training, a document whose previous
    :math:`\\gamma_d` already has a higher bound under the new topics than
    where its restart ended is swept on from its previous :math:`\\gamma_d`
    instead.  ``loss_history_[t]`` is minus the bound of the fit's state
    after ``t`` epochs, :math:`-\\mathcal{L}(\\gamma_t, \\lambda_t)`.  Two
    consequences:

    - **The bound of batch VB never goes down** (unlike
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
      fell into under the first, random topics, which costs held-out
      perplexity.  The better of the two per document keeps the restarts'
      escapes and the warm starts' ascent, for one more evaluation of the
      bound per epoch (about one sweep) and the sweeps of the documents
      switched (both measured in ``docs/lda.md``).

    With VB, :meth:`bound` folds every document in from all ones (as
    ``transform``): on the training data it is at most ``-loss_``, and
    equal where no document kept its previous :math:`\\gamma`.

    :meth:`score` and :meth:`perplexity` are the held-out
    document-completion log-likelihood per word that every estimator of the
    package shares (see ``TopicFactorization.score``): each document's tokens
    are split by binomial thinning, ``transform``'s fold-in runs on one
    half, and the other half is scored under the mixture
    :math:`P(w \\mid d) = \\hat\\theta_d \\, \\mathbb{E}[\\beta]`.
    It chooses ``n_components`` with ``GridSearchCV``, and, being a per-word
    average of per-document terms, does not explode on small held-out sets
    as scikit-learn's bound-based perplexity does (its issue #20032: the
    topics' term of the bound, of size O(n_components * n_features), is
    divided by the evaluated words).  With VB, :meth:`bound` returns the
    evidence lower bound, scikit-learn's ``score``, and from the same topics
    this estimator's E-step, sufficient statistics, bound and M-step are
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
    max_iter : int, default=100
        Maximum number of epochs (passes over the training data) of ``fit``
        (for MAP and CVB0, the sweeps of each start and in all: see
        ``inference``).
    batch_size : int, default=128
        Documents per mini-batch in online learning.
    total_samples : float, default=1e6
        :math:`D`, the total number of documents, used by :meth:`partial_fit`
        (``fit`` uses the number of training documents).
    mean_change_tol : float, default=1e-3
        A document's E-step stops when the mean absolute change of its
        :math:`\\gamma_d` falls below this (MAP and CVB0: its fold-in, on
        its expected counts).
    max_doc_update_iter : int, default=100
        Maximum number of E-step sweeps per document and E-step (MAP and
        CVB0: of the fold-in).
    init : {"nndsvda", "random", "custom"} or None, default=None
        Start of the topics' :math:`\\lambda`.  ``None`` means
        ``"nndsvda"`` (``"random"`` when ``n_components > min(n_samples,
        n_features)``), in memory and block-wise alike.
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
        positive.  With VB, in every case the first E-step starts from a
        Gamma(100, 1/100) draw of ``random_state`` and the later ones from
        all ones; :meth:`partial_fit` always starts from the random draw.
    n_init : int >= 1, default=1
        Number of starts of ``fit`` (MAP and CVB0 make three times as many,
        see ``inference``); the fit with the highest evidence lower bound
        (the lowest objective) is kept.  The first start is ``init``'s, the
        others are Gamma(100, 1/100) draws, continuing the generator of
        ``random_state``.  Batch VB has local optima (two true topics merged
        into one, another split in two) that no number of epochs leaves;
        restarts may avoid them, at ``n_init`` times the cost, and the
        split-merge moves (``split_merge``) repair them directly.  The moves
        are made once, after the best start.
    split_merge : int >= 0, default=0
        Maximum number of split-merge moves after the fit (batch
        mean-field VB, in memory and block-wise alike; online, MAP and CVB0
        fits make none); ``0``, the default, makes none.
        A move merges the two topics that cost least to merge (near
        duplicates, or an empty topic) and splits in two the topic whose
        share of the data is furthest from one topic (a rank-2 KL-NMF of it),
        then runs the epochs again from there; it is kept if the bound ends
        higher by more than ``30 * tol`` times its size (the moves start
        from the fit run to ``30 * tol``, which resolves no finer; ``1e-6``
        times at least), else undone, and the first move undone ends the
        moves.  This
        repairs batch VB's typical local optimum -- two true topics merged
        into one, another split in two -- which more epochs, and often more
        restarts, do not leave, and which biases choosing ``n_components``
        by held-out score upwards (``docs/lda.md``).  Each move tried costs
        up to as many epochs again as the fit took (at least 20), and on
        most labeled corpora none was kept (measured when VB was the
        default, ``docs/performance.md``, History), so they are off by
        default.  With
        ``split_merge=0``, ``init="random"`` and the same ``random_state``
        the first epoch is scikit-learn's (the later ones differ by their
        E-step's start, see above).  The moves made are in
        ``split_merge_moves_``.
    tol : float, default=1e-4
        {{stopping}}
        (An iteration is an epoch; the objective is minus the bound for VB,
        see ``inference`` for MAP and CVB0.)
    random_state : int, RandomState instance or None, default=None
        Seed of the start: the topics' lambda and the first E-step's gamma.
    verbose : int, default=0
        Print the objective (VB: minus the bound) and elapsed time every 10
        epochs (every epoch if ``verbose > 1``).
    inference : {"auto", "map", "cvb0", "vb"}, default="auto"
        ``"auto"``: ``"map"`` where it runs -- batch learning with a
        topic-word prior -- else ``"vb"`` (online learning, point-estimate
        topics).
        ``"map"``: the maximum a posteriori topics and proportions by EM on
        the expected counts, :math:`g_{dwk} \\propto (N_{dk} + \\alpha_k /
        10) (N_{kw} + \\eta) / (N_k + V\\eta)` (Dirichlet priors
        :math:`1 + \\alpha / 10` and :math:`1 + \\eta`): CVB0's update
        without the token's own exclusion (Asuncion et al., 2009), the
        documents' pseudo-counts cut to a tenth of :math:`\\alpha` in its
        place (``MAPModel.DOC_PSEUDO_COUNT``, chosen on the tuning corpora).
        A sweep is two sparse products, like PLSI's EM step; the objective
        is minus the log posterior, which EM does not raise in exact
        arithmetic (a rise beyond rounding, which float32 data of large
        magnitude can cause, warns, ``RuntimeWarning``), and :meth:`bound`
        is minus that objective.  The starts (of ``max_iter // 3`` sweeps
        each) and ``components_`` are as for ``"cvb0"`` below;
        ``transform`` folds documents in by EM with the topics fixed,
        accelerated per document, from the even split.
        ``"cvb0"``: zero-order collapsed variational inference (Asuncion et
        al., 2009): every epoch is one sweep over the stored entries,
        :math:`g_{dwk} \\propto (N_{dk}^{\\neg dw} + \\alpha_k)
        (N_{kw}^{\\neg dw} + \\eta) / (N_k^{\\neg dw} + V\\eta)` with each
        token's own counts left out, and ``components_`` are
        :math:`N_{kw} + \\eta` (no :math:`\\exp\\psi` shrinkage of rare
        terms).  CVB0's local optima depend on its start, so a fit makes
        ``3 * n_init`` starts (``init``'s -- NNDSVDa when ``init`` is None,
        as for VB -- then random draws), each of at most ``max_iter`` sweeps
        (``max_iter // 3`` for ``"map"``); the start with the lowest
        objective runs on, to at most ``3 * max_iter`` sweeps in all.  No
        bound is ascended (a fit whose objective rose by more than rounding
        warns, ``RuntimeWarning``): the objective is minus the
        training log-likelihood under the point estimates
        :math:`\\theta_d \\propto N_{dk} + \\alpha`,
        :math:`\\beta_k \\propto N_{kw} + \\eta`; no split-merge moves are
        made; ``transform`` folds in by CVB0 sweeps with the topics fixed
        (``max_doc_update_iter``, ``mean_change_tol`` on :math:`N_{dk}`);
        :meth:`bound` is that log-likelihood; batch only, with a topic-word
        prior; :meth:`partial_fit` refuses it (online learning is VB's:
        use ``inference="auto"`` or ``"vb"`` there).
        On a large corpus a start's first sweeps can change the objective by
        less than ``tol`` while its topics are still alike, so each start
        makes at least 10 sweeps before the stopping rule is consulted
        (``CVB0Model.min_iter``).
        ``"vb"``: the mean-field variational Bayes above, scikit-learn's
        (with ``init="random"`` and ``split_merge=0`` the first epoch is
        scikit-learn's ``LatentDirichletAllocation``'s; the later E-steps
        start differently, see above).
        Measurements, and why the default is MAP (held-out perplexity
        against collapsed Gibbs sampling's on labeled corpora, and speed
        without numba), in ``docs/lda_defaults.md``.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The topics' pseudo-counts (normalize the rows for topic-word
        distributions): :math:`N_{kw} + \\eta` for MAP (the default) and
        CVB0; for VB :math:`\\lambda`, the variational Dirichlet parameters
        of the topics, and for point-estimate topics the expected
        topic-word counts :math:`\\sum_d X_{dw} \\phi_{dwk}`, whose
        normalized rows are :math:`\\beta`.
    embedding_ : ndarray of shape (n_samples, n_components)
        The training documents' topic proportions from the last epoch's
        document step (VB: its normalized :math:`\\gamma`), i.e. for the
        topics before the last topic update (``transform`` folds in with
        the final topics).
    loss_ : float
        Final objective of the fitted state (the topics and the training
        documents' last document step): minus the evidence lower bound for
        VB, at most ``-bound(X)`` (see above); minus the log posterior for
        MAP, minus the training log-likelihood for CVB0 (see ``inference``).
    loss_history_ : ndarray of shape (n_iter_ + 1,)
        The objective (VB: minus the bound) at the start (with the first
        E-step's gamma) and after every epoch of the kept start's run; then
        one entry per split-merge move kept (minus the bound its trial
        reached: the trials' own epochs are in ``split_merge_moves_``) and
        the epochs run on after the moves.  In batch VB and MAP learning it does not
        rise in exact arithmetic (a MAP fit whose objective rose by more
        than rounding warns); CVB0's may rise (see ``inference``).  In
        online learning the entries before the last sum each mini-batch's
        bound with the topics it met (a free running estimate); the last is
        exact.
    n_iter_ : int
        Number of epochs of the fit kept (a kept move counting as one):
        ``len(loss_history_) - 1``.
    split_merge_moves_ : list of dict
        The split-merge moves ``fit`` tried, in order: ``"merged"`` (the
        kept topic and the one merged into it, whose slot took one half of
        the split), ``"split"`` (the topic split), ``"bound_before"``,
        ``"bound_after"`` (and the same as objectives, minus the bounds:
        ``"objective_before"``, ``"objective_after"``), ``"accepted"`` and
        ``"history"`` (minus the bound at the moved topics and after every
        epoch of the move's trial).
    n_batch_iter_ : int
        One plus the number of M-steps so far (the :math:`t` of the next
        online step), as in scikit-learn.
    doc_topic_prior_ : ndarray of shape (n_components,)
        The :math:`\\alpha` in use.
    inference_ : {"map", "cvb0", "vb"}
        The inference the fit ran (``inference`` with ``"auto"`` resolved),
        in memory as block by block; ``partial_fit`` runs online VB.
    topic_word_prior_ : float or None
        The :math:`\\eta` in use; ``None`` for point-estimate topics.
    random_state_ : RandomState instance
        Generator of the start, kept for the first :meth:`partial_fit`.
    {{features_seen}}

    See Also
    --------
    PLSI : the same model without the Dirichlet priors (maximum likelihood).
    JointNMF : joint multiplicative updates; ``normalize="both"`` is PLSA.

    References
    ----------
    D. Blei, A. Ng, M. Jordan (2003). Latent Dirichlet allocation. JMLR 3.
    A. Asuncion, M. Welling, P. Smyth, Y. W. Teh (2009). On smoothing and
    inference for topic models. UAI.
    M. Hoffman, D. Blei, F. Bach (2010). Online learning for latent Dirichlet
    allocation. NIPS.

    Examples
    --------
    {{toy_counts}}
    >>> from sklearn_topicfac import LDAVI
    >>> lda = LDAVI(n_components=2, max_iter=50, random_state=0)
    >>> theta = lda.fit_transform(X)            # P(z|d), rows sum to one
    >>> np.allclose(theta.sum(axis=1), 1.0)
    True
    >>> bool(theta.argmax(axis=1)[0] != theta.argmax(axis=1)[3])
    True
    >>> vb = LDAVI(n_components=2, inference="vb", max_iter=50, random_state=0)
    >>> bool(np.all(np.diff(vb.fit(X).loss_history_) <= 1e-9))  # VB's bound rises
    True
    >>> lda.perplexity(X[:1]) < 4.0       # per-word, fine on a single document
    True
    """

    _fitted_state = {
        **_Variational._fitted_state,
        "topic_word_prior_": _state.Scalar(
            low=0, low_open=True, optional=True, kernel=True
        ),
    }

    _parameter_constraints: dict = {
        **_Variational._parameter_constraints,
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
        "inference": [StrOptions({"auto", "map", "cvb0", "vb"})],
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
        max_iter=100,
        batch_size=128,
        total_samples=1e6,
        mean_change_tol=1e-3,
        max_doc_update_iter=100,
        init=None,
        n_init=1,
        split_merge=0,
        tol=1e-4,
        random_state=None,
        verbose=0,
        inference="auto",
    ):
        self.n_components = n_components
        self.doc_topic_prior = doc_topic_prior
        self.topic_word_prior = topic_word_prior
        self.inference = inference
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

    def __setstate__(self, state):
        # Models saved before ``inference`` existed ran mean-field VB.
        state.setdefault("inference", "vb")
        super().__setstate__(state)

    def _resolve_priors(self):
        super()._resolve_priors()
        eta = self.topic_word_prior
        self.topic_word_prior_ = 1.0 / self.n_components if eta == "auto" else eta

    def _resolve(self):
        super()._resolve()
        self.inference_ = self._resolved_inference()

    def _resolve_online(self):
        # partial_fit runs online VB whatever learning_method says; the
        # fold-in of transform must be VB's too, not what "auto" means for
        # a batch fit (MAP).
        if self.inference in COLLAPSED:
            raise ValueError(
                f"partial_fit runs online variational Bayes, and "
                f"inference={self.inference!r} runs batch sweeps over all the "
                "documents; use inference='auto' or 'vb' with partial_fit, or "
                "fit for this inference."
            )
        self.inference_ = "vb"

    def _inference(self):
        """The inference the fit resolved (`_resolve`): the fitted
        ``inference_`` (the parameter, resolved, for a model saved before it
        had one)."""
        return vars(self).get("inference_") or self._resolved_inference()

    def _settings(self):
        settings = super()._settings()
        if self._collapsed():
            # The collapsed inferences' local optima depend on their start
            # (docs/lda_defaults.md): CVB0_STARTS * n_init starts (init's,
            # then random draws) of `_start_sweeps` sweeps at most, and the
            # one with the lowest objective runs on, up to CVB0_SWEEPS *
            # max_iter sweeps in all (`_run_shape`).
            settings = replace(
                settings,
                n_init=CVB0_STARTS * self.n_init,
                max_iter=self._start_sweeps(),
                moves=0,
            )
        return settings

    def _fit_engine(self, runner, W, H):
        result = super()._fit_engine(runner, W, H)
        if self._collapsed():
            _warn_if_cvb0_rose(result.history, self._inference())
        return result

    def _start_sweeps(self):
        """Sweeps of each start of the collapsed inferences: ``max_iter``
        for CVB0; for MAP, whose starts were measured to need fewer
        (docs/lda_defaults.md), ``max_iter // 3``, so that its three starts
        together cost one ``max_iter``."""
        if self._inference() == "map":
            return max(self.max_iter // CVB0_STARTS, 1)
        return self.max_iter

    def _max_runs(self):
        if not self._collapsed():
            return super()._max_runs()
        # The starts, then the kept start's run on (up to CVB0_SWEEPS *
        # max_iter sweeps in all), in multiples of max_iter.
        each = self._start_sweeps()
        sweeps = CVB0_STARTS * self.n_init * each + CVB0_SWEEPS * self.max_iter - each
        return -(-sweeps // self.max_iter)

    def _resolved_inference(self):
        """``inference`` with ``"auto"`` resolved: ``"map"`` for batch
        learning with a topic-word prior, else ``"vb"``."""
        if self.inference == "auto":
            batch = self.learning_method == "batch"
            return "map" if batch and self.topic_word_prior is not None else "vb"
        return self.inference

    def _collapsed(self):
        """Whether the fit runs on the collapsed counts (MAP or CVB0)."""
        return self._inference() in COLLAPSED

    def _build_model(self):
        inference = self._inference()
        if inference in COLLAPSED:
            if self.topic_word_prior_ is None:
                raise ValueError(
                    f"inference={inference!r} needs a topic-word prior (it "
                    "smooths the collapsed counts); set topic_word_prior='auto' "
                    "or a positive value, or use inference='vb' for "
                    "point-estimate topics."
                )
            if self.learning_method != "batch":
                raise ValueError(
                    f"inference={inference!r} runs batch sweeps; set "
                    "learning_method='batch', or use inference='vb' for online "
                    "learning."
                )
            return COLLAPSED[inference](
                self.doc_topic_prior_,
                self.topic_word_prior_,
                self.max_doc_update_iter,
                self.mean_change_tol,
            )
        return self._vb_model()

    def _vb_model(self):
        return LDAModel(
            self.doc_topic_prior_,
            self.topic_word_prior_,
            self.mean_change_tol,
            self.max_doc_update_iter,
        )

    def _run_shape(self):
        if self.learning_method == "batch":
            if self._collapsed():
                return {"run_on": CVB0_SWEEPS * self.max_iter}
            return {}
        return {
            "online": engine.Schedule(
                self.batch_size, self.learning_offset, self.learning_decay
            )
        }

    def _schedule(self):
        return engine.Schedule(
            self.batch_size,
            self.learning_offset,
            self.learning_decay,
            self.total_samples,
        )


@fill_doc
class GammaPoissonVI(_Variational):
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

    ``partial_fit`` learns online as :class:`LDAVI`'s ``partial_fit`` does
    at LDAVI's default schedule, which this estimator has no parameters
    for: mini-batches of 128 documents, step sizes
    :math:`\\rho_t = (10 + t)^{-0.7}`, each mini-batch standing for
    :math:`10^6 / 128` of its size (``learning_offset=10.0,
    learning_decay=0.7, batch_size=128, total_samples=1e6``).  By Lemma E.3
    its topics are then LDAVI's with ``topic_word_prior=None`` (tested).

    Parameters
    ----------
    n_components : int, default=10
        Number of topics.
    doc_topic_prior : float > 0, array-like of shape (n_components,) or None, \
default=None
        Gamma shapes :math:`\\alpha`; ``None`` means ``1 / n_components``.
    doc_topic_rate : float > 0, default=1.0
        Gamma rate :math:`b` shared by the topics.
    max_iter : int, default=100
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
    split_merge : int >= 0, default=0
        Maximum number of split-merge moves after the fit, each kept if the
        Gamma-Poisson bound rises (as :class:`LDAVI`); none by default.
    tol : float, default=1e-4
        {{stopping}}
    {{random_state}}
    {{verbose}}

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
        Minus the bound at the start and after every epoch, a kept
        split-merge move counting as one epoch (as :class:`LDAVI`).
    n_iter_ : int
        Number of epochs of the fit kept (as :class:`LDAVI`).
    split_merge_moves_ : list of dict
        The split-merge moves tried (as :class:`LDAVI`).
    n_batch_iter_ : int
        One plus the number of M-steps so far.
    doc_topic_prior_ : ndarray of shape (n_components,)
        The shapes :math:`\\alpha` in use.
    random_state_ : RandomState instance
        Generator of the start.
    {{features_seen}}

    See Also
    --------
    LDAVI : the same iterates, reported as Dirichlet-multinomial LDA.
    KLNMF : the maximum-likelihood (prior-free) version of this model.

    Examples
    --------
    {{toy_counts}}
    >>> from sklearn_topicfac import GammaPoissonVI, LDAVI
    >>> gap = GammaPoissonVI(n_components=2, max_iter=30, tol=0,
    ...                      random_state=0).fit(X)
    >>> weights = gap.transform(X)     # E[theta]: posterior mean topic weights
    >>> # sum_k E[theta_dk] = (N_d + sum(alpha)) / (b + 1), here b = 1
    >>> np.allclose(weights.sum(axis=1), (X.sum(axis=1) + 1.0) / 2)
    True
    >>> lda = LDAVI(2, inference="vb", topic_word_prior=None, max_iter=30, tol=0,
    ...             random_state=0).fit(X)
    >>> np.allclose(gap.components_, lda.components_)   # Lemma E.3
    True
    """

    _parameter_constraints: dict = {
        **_Variational._parameter_constraints,
        "doc_topic_rate": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(
        self,
        n_components=10,
        *,
        doc_topic_prior=None,
        doc_topic_rate=1.0,
        max_iter=100,
        mean_change_tol=1e-3,
        max_doc_update_iter=100,
        init=None,
        n_init=1,
        split_merge=0,
        tol=1e-4,
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

    def _build_model(self):
        return GammaPoissonModel(
            self.doc_topic_prior_,
            self.doc_topic_rate,
            self.mean_change_tol,
            self.max_doc_update_iter,
        )
