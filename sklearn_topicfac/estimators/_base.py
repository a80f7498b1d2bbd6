"""The scikit-learn face every estimator shares.

An estimator is parameters and their constraints, the model it builds from
them (`sklearn_topicfac.models`), and its fitted attributes.  Everything
else is written once, here and in the engine: validation, the choice of the
runner (in memory, `Blocks`, Dask), the plan of a fit and ``fit`` through
`engine.fit`, ``partial_fit`` through `engine.partial_fit`, the
convergence warning, the deterministic fold-in ``transform``,
``topic_proportions``, ``inverse_transform``, ``score`` and the tags.

A count-data estimator derives from `TopicFactorization` and defines
``_build_model()``; see ``docs/guide/adding_an_estimator.md``.
"""

import functools
import math
from dataclasses import replace
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import validate_data

from .. import engine
from .._docstrings import fill_doc
from .._validation import (
    check_counts,
    data_fingerprint,
    is_dask_array,
    reconstruct,
    warn,
)
from ..engine.starts import resolve_init
from ..kernels import keep_freed_memory, normalize_rows
from ..models._completion import held_out_log_likelihood
from . import _state


def tiny_data_exponent(X):
    """The power of two that brings tiny data ``X`` to a safe scale, or 0.

    Data whose largest entry is below the square root of the dtype's
    smallest normal number (float64: 1.5e-154; float32: 1.1e-19) reaches
    subnormal numbers in the products of a fit, where precision is lost
    (topics of subnormal data were up to 0.4 off those of the same data
    rescaled).  The exponent ``e`` returned is even and brings the largest
    entry of ``X * 2**e`` into ``[1, 4)``; scaling by a power of two is
    exact.  0 for other data.
    """
    values = X.data if sp.issparse(X) else X
    largest = float(values.max()) if values.size else 0.0
    if not 0 < largest < math.sqrt(np.finfo(X.dtype).tiny):
        return 0
    exponent = 1 - math.frexp(largest)[1]
    return exponent + exponent % 2


def resolve_solver(solver, *, tempered=False):
    """``solver`` with ``"auto"`` resolved: diagonal Newton (``"dn"``), a
    map-reduce (`models.solvers.DN`) that runs the same way in memory, block
    by block and on Dask, and the fastest way to a converged fit on the
    NumPy kernels on eight of the nine corpora measured (EM was faster on
    Classic3; ``docs/real_text.md``, "Does a default fit end converged?");
    with ``tempered`` (PLSI's ``beta < 1``), tempered EM."""
    if solver != "auto":
        return solver
    return "em" if tempered else "dn"


def resolve_max_iter(max_iter, solvers):
    """``max_iter`` with ``"auto"`` resolved for a fit running ``solvers``
    (their declarations, `models.solvers.Solver`): the largest of their
    ``auto_max_iter``; 200 for a fit without solvers (the fold-in)."""
    if max_iter != "auto":
        return max_iter
    return max([solver.auto_max_iter for solver in solvers] or [200])


def scaled(X, exponent):
    """``X * 2**exponent``, a new array (sparse stays sparse), exactly."""
    if sp.issparse(X):
        X = X.copy()
        X.data = np.ldexp(X.data, exponent)
        return X
    return np.ldexp(X, exponent)


# Fitted state that does not end with an underscore: stepwise EM's running
# averages, which the next ``partial_fit`` continues from.
_PRIVATE_FIT_STATE = ("_online_stats",)


def _is_fit_state(name):
    return (
        name.endswith("_") and not name.startswith("__")
    ) or name in _PRIVATE_FIT_STATE


def all_or_nothing(fresh):
    """Make a fitting method leave the estimator as it was if it fails.

    The decorated method (``fit``, ``fit_transform``, ``partial_fit``) may
    set attributes as it goes (scikit-learn's ``validate_data`` records
    ``n_features_in_`` and ``feature_names_in_`` before the first
    iteration); if it raises -- a bad input, an error mid-fit, a
    ``KeyboardInterrupt`` -- every attribute is put back as it was, the
    generators of the fitted state (``random_state_``) included, so the
    previous model is left exactly as it was, never half replaced.  With
    ``fresh`` (a full fit) the previous fitted state is set aside first: a
    fit that succeeds keeps nothing of an earlier one (such as the running
    averages of ``partial_fit``, or a width it no longer has).
    """

    def decorate(method):
        @functools.wraps(method)
        def wrapper(self, *args, **kwargs):
            saved = dict(vars(self))
            generators = {
                name: value.get_state()
                for name, value in saved.items()
                if _is_fit_state(name) and isinstance(value, np.random.RandomState)
            }
            if fresh:
                for name in [name for name in saved if _is_fit_state(name)]:
                    delattr(self, name)
            try:
                return method(self, *args, **kwargs)
            except BaseException:
                # One assignment, so that a second interrupt during the
                # restore finds either state, never an emptied estimator.
                self.__dict__ = saved
                for name, state in generators.items():
                    saved[name].set_state(state)
                raise

        return wrapper

    return decorate


class TopicEstimator(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """What every estimator of the package is: a transformer with topics.

    ``components_`` holds one row per topic; ``transform`` gives one column
    per topic.  ``_fitted_state`` declares what its fitted attributes must be
    (`estimators._state`): the shapes of those the kernels read are checked
    before every use, everything at load.
    """

    _fitted_state: dict = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "fit_transform" in vars(cls):
            # scikit-learn wraps fit_transform (just now, in the call above)
            # to convert its output to the set_output container; a failed
            # conversion (polars not installed...) must leave the estimator
            # as it was too, so the rollback (`all_or_nothing`, which the
            # method itself does not carry) goes around that as well.
            cls.fit_transform = all_or_nothing(fresh=True)(cls.fit_transform)

    def _check_fitted(self):
        """``check_is_fitted``, then the shapes and dtypes of the fitted arrays
        the kernels read, so that no state set by hand reaches them
        inconsistent."""
        _state.check_shapes(self, self._fitted_state)

    def _check_fitted_state(self):
        """Every fitted attribute against ``_fitted_state``: shapes, dtypes,
        values; a fitted solver names one the estimator has."""
        if _state.check_state(self, self._fitted_state) is not None:
            _state.check_solvers(self)

    def inverse_transform(self, X):
        """Map a document representation back to feature space: ``X @ components_``.

        For the estimators whose ``transform`` gives ``P(z|d)`` and whose
        ``components_`` are ``P(w|z)`` (PLSI, HybridNMFPLSI, JointNMF with
        ``normalize="both"``) this is ``P(w|d)``: multiply each row by its
        document length to get expected counts.  For KLNMF, ``transform(X)
        @ components_`` estimates ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components)
            Output of ``transform``.

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
        """
        self._check_fitted()
        return reconstruct(X, self.components_)

    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    def _max_runs(self):
        """The bound on the runs of the fit loop a fit makes (see the CLI's
        progress bar): one by default."""
        return 1

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


class TopicFactorization(TopicEstimator):
    """Base of the topic factorizations of count data: derive a new estimator
    from it (``docs/guide/adding_an_estimator.md``).

    It provides ``fit``, ``fit_transform``, ``transform``,
    ``topic_proportions``, ``score``, ``perplexity``, ``inverse_transform``,
    the fit on any data source (in memory, `Blocks`, a dask array), restarts,
    moves, ``ConvergenceWarning`` and progress, by running the model a
    subclass builds through the engine.  The hooks a subclass may define
    (only the first is required):

    ``_build_model()``
        The model (`sklearn_topicfac.models.TopicModel`) of the parameters.
        Required.  It may read the fitted solvers through ``_solver(name)``.
    ``_parameter_constraints``
        scikit-learn's declaration of the parameters, extended from this
        class's (``n_components``, ``init``, ``max_iter``, ``tol``,
        ``n_init``, ``split_merge``, ``random_state``, ``verbose``).
    ``_check_params()``
        Checks across parameters that the constraints cannot express
        (raise ``ValueError``).
    ``_solvers()`` and ``_solver_models``
        The solver parameters with ``"auto"`` resolved, by parameter name,
        and the model class whose ``solvers`` each names: the fit resolves
        them once, stores them as ``<parameter>_`` and caps
        ``max_iter="auto"`` by their declarations.  None by default.
    ``_default_init``
        What ``init=None`` means where feasible (``"nndsvda"``).
    ``_blockwise``
        False when the fit cannot run block by block (then `Blocks` and
        dask arrays are refused with an error saying so).
    ``_check_blockwise()``
        Refuse settings a block-wise fit does not support.
    ``_run_shape()``
        The `engine.Plan` fields of the run: batch by default; ``online``,
        ``phases`` or ``run_on`` for other shapes.
    ``_settings()``
        The `engine.Settings` of the iterations (extend to change
        ``n_init`` or ``moves``).
    ``_start_rng()``
        The generator random draws continue.
    ``_fit_engine(runner, W, H)``
        Carry out the plan (extend to read more of the `engine.FitResult`).
    ``_scale_equivariant``
        True when the model of ``c X`` is that of ``X`` with the document
        factor times ``c`` (tiny data is then fitted rescaled).
    ``_objective_attributes``
        Fitted attributes holding objectives besides ``loss_`` (rescaled
        with it).
    ``_iteration_limit``
        The parameter a fit that did not converge reached (``"max_iter"``).
    ``_fold_in_parameters``
        The parameters only the fold-in of new documents reads, never a
        fit: ``("transform_tol",)`` makes ``transform`` and
        ``topic_proportions`` stop by ``transform_tol``.  None by default.
    ``_fitted_state``
        What the fitted attributes must be (`estimators._state`): checked
        before the kernels read them and when a model file is loaded.
    """

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "init": [StrOptions({"random", "nndsvda", "kmeans", "custom"}), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "split_merge": [Interval(Integral, 0, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    _fitted_state = _state.FACTORIZATION_STATE
    _default_init = "nndsvda"
    _blockwise = True
    # The model of c X is that of X with the document factor and the
    # objective times c (a KL factorization without priors): tiny data is
    # then fitted rescaled (see `_fit`).
    _scale_equivariant = False
    # Fitted attributes holding objectives besides loss_ and loss_history_.
    _objective_attributes = ()
    # The parameter whose limit a fit that did not converge reached.
    _iteration_limit = "max_iter"
    # Per solver parameter, the model class whose solvers it names.
    _solver_models: dict = {}

    def _build_model(self):  # pragma: no cover - abstract
        """The model (`sklearn_topicfac.models`) of this estimator's parameters."""
        raise NotImplementedError

    def _check_params(self):
        """Checks across parameters that the constraints cannot express."""

    def _n_topics(self, n_features, H=None):
        """The number of topics of a fit on ``n_features`` features.

        ``n_components="auto"`` (where the constraints allow it) reads it as
        scikit-learn's ``NMF`` does: the rows of the custom start ``H`` with
        ``init="custom"``, else ``n_features``.
        """
        if self.n_components != "auto":
            return self.n_components
        if self.init == "custom" and H is not None:
            return np.shape(H)[0]
        return n_features

    # ------------------------------------------------------------ validation
    def _validate_X(self, X, reset):
        X = validate_data(
            self,
            X,
            accept_sparse=("csr", "csc"),
            dtype=[np.float64, np.float32],
            reset=reset,
        )
        return check_counts(X, f"data passed to {type(self).__name__}")

    def _runner(self, X):
        """The engine's runner for ``X``: in memory, or block by block."""
        if not engine.is_blockwise(X):
            return engine.InMemoryRunner(self._validate_X(X, reset=True))
        if not self._blockwise:
            raise ValueError(
                f"{type(self).__name__} cannot be fitted block by block: its fit "
                "is not one map-reduce over the documents. Fit it on an "
                "in-memory matrix."
            )
        self._check_blockwise()
        runner = engine.runner_for(X)
        self.n_features_in_ = runner.shape[1]
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        return runner

    def _check_blockwise(self):
        """Refuse settings a block-wise fit does not support."""

    # ------------------------------------------------------------------ fit
    def _iteration_cap(self):
        """``max_iter`` as a number: ``"auto"`` (where the constraints allow
        it) resolved by the solvers the fit runs (`resolve_max_iter`), the
        same wherever the data are."""
        solvers = [
            model.solvers[self._solver(parameter)]
            for parameter, model in self._solver_models.items()
        ]
        return resolve_max_iter(self.max_iter, solvers)

    def _solver(self, parameter="solver"):
        """The solver the fit resolved (`_resolve`): the fitted
        ``<parameter>_`` (the parameter, resolved, for a model saved before
        it had one)."""
        return vars(self).get(f"{parameter}_") or self._solvers()[parameter]

    def _fold_in_iter(self):
        """The fold-in sweeps of ``transform``: ``max_iter``, ``"auto"``
        read as the multiplicative updates' cap (the fold-in runs them)."""
        return resolve_max_iter(self.max_iter, ())

    def _settings(self):
        """How the iterations run: an `engine.Settings` of the parameters."""
        return engine.Settings(
            max_iter=self._iteration_cap(),
            tol=self.tol,
            verbose=self.verbose,
            name=type(self).__name__,
            # An estimator without these parameters makes one start, no moves.
            n_init=getattr(self, "n_init", 1),
            moves=getattr(self, "split_merge", 0),
        )

    def _start_rng(self):
        """The generator random draws continue (restarts included)."""
        return check_random_state(self.random_state)

    def _run_shape(self):
        """The shape of the run, as `engine.Plan` fields: batch by default."""
        return {}

    def _plan(self, runner, W=None, H=None):
        """The `engine.Plan` of a fit on ``runner`` from the parameters."""
        n, m = runner.shape
        k = self._n_topics(m, H)
        start = engine.Start(
            init=resolve_init(self.init, self._default_init, n, m, k),
            k=k,
            random_state=self.random_state,
            rng=self._start_rng(),
            W=W,
            H=H,
        )
        return engine.Plan(start, self._settings(), **self._run_shape())

    def _max_runs(self):
        """The bound on the runs of the fit loop the plan makes, each up to
        ``max_iter`` iterations: a phase of each round of an alternation;
        else a start of ``n_init`` or a split-merge trial (the fit kept then
        continues within its own ``max_iter``)."""
        shape = self._run_shape()
        if shape.get("phases"):
            return len(shape["phases"]) * shape["n_rounds"]
        settings = self._settings()
        return settings.n_init + settings.moves

    def _fit_engine(self, runner, W, H):
        """Carry out the plan of the parameters on ``runner``: an `engine.FitResult`.

        The moves tried are stored in ``split_merge_moves_``.
        """
        result = engine.fit(self._build_model(), runner, self._plan(runner, W, H))
        self.split_merge_moves_ = result.moves
        return result

    def _resolve(self):
        """Turn the parameters' ``"auto"`` into what this fit runs, once, at
        its entry: the fitted ``<solver parameter>_`` attributes, which
        everything below reads (`_build_model`) and which name what ran."""
        for name, solver in self._solvers().items():
            setattr(self, f"{name}_", solver)

    def _fit(self, X, W=None, H=None):
        """Fit on ``X`` (any source); returns the runner (closed)."""
        self._check_params()
        self._resolve()
        runner = fitted_on = self._runner(X)
        # The stamp of the data (a fingerprint of the matrix in memory; a
        # block-wise source is read block by block, never hashed whole).
        fingerprint = (
            data_fingerprint(runner.X)
            if isinstance(runner, engine.InMemoryRunner)
            else None
        )
        exponent = 0
        if self._scale_equivariant and isinstance(runner, engine.InMemoryRunner):
            # Tiny data is fitted at a safe scale: for these models the fit
            # of c X from (c W, H) is (c W_t, H_t) with the objective times
            # c, so the result of X is read off exactly (c a power of two).
            exponent = tiny_data_exponent(runner.X)
            if exponent:
                fitted_on = engine.InMemoryRunner(scaled(runner.X, exponent))
                if W is not None:
                    W = np.asarray(W)
                    W = np.ldexp(W.astype(np.result_type(W, np.float32)), exponent)
        try:
            result = self._fit_engine(fitted_on, W, H)
            if hasattr(runner, "n_bytes"):
                self.n_bytes_per_iteration_ = np.asarray(runner.n_bytes)
        finally:
            fitted_on.close()
            runner.close()
        if exponent:
            result = self._unscaled(result, exponent)
        self._store_fit_result(result.history, result.n_iter, result.converged)
        self._set_fit_attributes(result.W, result.H)
        self.data_fingerprint_ = fingerprint
        return runner

    def _unscaled(self, result, exponent):
        """The `engine.FitResult` of data ``X`` from that of ``X * 2**exponent``."""

        def objective(value):
            return math.ldexp(value, -exponent)

        moves = []
        for move in result.moves:
            move = dict(move)
            for key in ("objective_before", "objective_after"):
                move[key] = objective(move[key])
            move["history"] = np.ldexp(move["history"], -exponent)
            moves.append(move)
        self.split_merge_moves_ = moves
        for name in self._objective_attributes:
            setattr(self, name, np.ldexp(getattr(self, name), -exponent))
        return replace(
            result,
            W=np.ldexp(result.W, -exponent),
            history=[objective(value) for value in result.history],
            moves=moves,
        )

    def _store_fit_result(self, history, n_iter, converged):
        """Warn if the fit did not converge; set the objective attributes."""
        limit = self._iteration_limit
        if not converged and self.tol > 0:
            value = getattr(self, limit)
            if limit == "max_iter" and value == "auto":
                value = f"'auto' ({self._iteration_cap()})"
            warn(
                f"{type(self).__name__} did not converge in {limit}="
                f"{value} "
                f"{'iterations' if limit == 'max_iter' else 'rounds'} "
                f"(tol={self.tol}); increase {limit} or tol.",
                ConvergenceWarning,
            )
        self.n_iter_ = n_iter
        self.loss_history_ = np.asarray(history)
        self.loss_ = float(history[-1])

    def _set_fit_attributes(self, W, H):
        """Public fitted attributes from the final document and topic factors."""
        model = self._build_model()
        w_sum = W.sum(axis=0)
        for name, value in model.topic_attributes(H, w_sum).items():
            setattr(self, name, value)
        for name, of_rows in model.doc_attributes(w_sum).items():
            setattr(self, name, of_rows(W))

    def _solvers(self):
        """The solver parameters, ``"auto"`` resolved (`resolve_solver`),
        by name; `_resolve` stores each as the fitted ``<name>_``."""
        return {}

    @fill_doc
    @_fit_context(prefer_skip_nested_validation=True)
    @all_or_nothing(fresh=True)
    def fit(self, X, y=None, W=None, H=None):
        """Fit the model to the non-negative data ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix}, `Blocks` or dask array of shape \
(n_samples, n_features)
            Non-negative data, e.g. document-term counts.  Sparse CSR/CSC is
            used as is, never densified.  A `Blocks` source or a dask array
            is fitted block by block (out-of-core, or on the active Dask
            cluster), from the same start, with the same solver and to the
            same model as in memory (up to the order in which sums over
            the documents are added); a solver that needs every document
            at once (``"cd"``, ``"squarem"``, JointNMF's ``"dn"``) is
            refused there with an error naming those that can run.
        {{ignored_y}}
        W : array-like of shape (n_samples, n_components), default=None
            Start for the document factor, used only with ``init='custom'``.
        H : array-like of shape (n_components, n_features), default=None
            Start for the topic factor, used only with ``init='custom'``.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._fit(X, W=W, H=H)
        return self

    @fill_doc
    @_fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y=None, W=None, H=None, *, normalize=True):
        """Fit the model, then return ``transform(X, normalize=normalize)``.

        The result is exactly ``fit(X).transform(X)``: the training documents
        are folded in like any new document, so the two always agree.  The
        document factor reached during fitting is kept in ``embedding_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Non-negative data.
        {{ignored_y}}
        W, H : array-like, default=None
            Custom start, used only with ``init='custom'``.
        normalize : bool, default=True
            As for ``transform``.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
            Document representation, as returned by ``transform``.
        """
        if isinstance(X, engine.Blocks):
            raise ValueError(
                "fit_transform needs the documents in memory; with Blocks, call "
                "fit(blocks) and then transform each block."
            )
        runner = self._fit(X, W=W, H=H)
        if is_dask_array(X):
            return self.transform(X, normalize=normalize)
        return self._transform_valid(runner.X, normalize)

    # ---------------------------------------------------------- transform
    # The parameters only the fold-in of new documents reads (`_fold_in_model`):
    # no fit reads them, so a change of one never changes a fit (tested).
    _fold_in_parameters = ()

    def _fold_in_model(self):
        """The model that folds new documents in with the topics fixed for
        ``transform`` and ``topic_proportions``: the fit's model, stopping by
        ``transform_tol`` for an estimator that has it."""
        model = self._build_model()
        if "transform_tol" in self._fold_in_parameters:
            model.fold_in_tol = self.transform_tol
        return model

    def _transform_valid(self, X, normalize=True):
        keep_freed_memory()
        model = self._fold_in_model()
        exponent = tiny_data_exponent(X) if self._scale_equivariant else 0
        if exponent:
            # The fold-in of c X is c times that of X (see `_fit`).
            W = model.fold_in(scaled(X, exponent), self.components_)
            W = np.ldexp(W, -exponent)
        else:
            W = model.fold_in(X, self.components_)
        if not normalize:
            return W
        return model.doc_output(W, getattr(self, "p_z_", None))

    def transform(self, X, *, normalize=True):
        """Represent documents in the fitted topic space (fold-in).

        Each row is the document folded in with the topics fixed; with the
        default ``normalize=True``, what its entries are, and so what a row
        sums to, is each estimator's own parametrization of
        ``X \\approx W H``:

        - :class:`PLSI`, :class:`LDAVI`, :class:`HybridNMFPLSI` (and
          :class:`JointNMF` with ``normalize="both"``): the topic proportions
          :math:`P(z \\mid d)`, rows summing to one (LDAVI: the normalized
          expected topic counts plus pseudo-counts of its default MAP (or
          CVB0) fold-in, the mean of the variational Dirichlet with
          ``inference="vb"``);
        - :class:`KLNMF`: the weights :math:`W` of :math:`X \\approx W H`
          with :math:`H` (``components_``) as fitted, unnormalized: a row
          weighted by the topics' totals sums to the document's number of
          words, :math:`\\sum_z W_{dz} \\sum_w H_{zw} = N_d`;
        - :class:`NormalizedNMF` and :class:`JointNMF`: topic weights with
          the topics normalized to sum to one, so a row sums to the
          document's number of words (divided by ``1 + alpha`` for
          JointNMF's penalty ``alpha``);
        - :class:`GammaPoissonVI`: the posterior mean of the Gamma weights,
          rows summing to :math:`(N_d + \\sum_z \\alpha_z) / (b + 1)` for a
          document of :math:`N_d` words (``b`` the ``doc_topic_rate``).

        :meth:`topic_proportions` gives :math:`P(z \\mid d)`, rows summing to
        one, for every estimator.

        Parameters
        ----------
        X : {array-like, sparse matrix} or dask array of shape \
(n_samples, n_features)
            Non-negative data with the features seen in ``fit``.  A dask
            array gives a lazy dask array, block by block.
        normalize : bool, default=True
            ``True`` gives the estimator's document representation (see
            its class: KLNMF's document factor, PLSI's ``P(z|d)``, LDAVI's
            topic proportions...).  ``False`` gives the fold-in before it
            is normalized or rescaled, as scikit-learn's
            ``LatentDirichletAllocation.transform(normalize=False)`` does:
            for LDAVI and GammaPoissonVI the documents' unnormalized topic
            weights (LDAVI's expected topic counts plus pseudo-counts for MAP
            and CVB0, its Dirichlet :math:`\\gamma` for VB, scikit-learn's
            unnormalized output; GammaPoissonVI's Gamma
            shapes :math:`a`, whose normalized rows are LDAVI's
            proportions), for the others the count-scale document factor
            ``W`` with ``W @ components_`` estimating ``X``: the expected
            number of each document's words in each topic where the
            topics sum to one (PLSI, HybridNMFPLSI, JointNMF; a
            document without words gets zeros).  Where
            ``transform`` already returns that factor (KLNMF,
            NormalizedNMF, JointNMF with ``normalize="components"``) both
            values give the same result.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
            Deterministic: the same input always gives the same output.
        """
        self._check_fitted()
        if is_dask_array(X):
            return engine.map_row_blocks(
                functools.partial(self.transform, normalize=normalize),
                X,
                self.components_.shape[0],
            )
        return self._transform_valid(self._validate_X(X, reset=False), normalize)

    @fill_doc
    def topic_proportions(self, X):
        """Topic proportions ``P(z|d)`` of the documents ``X`` (rows sum to one).

        Each document is folded in as by ``transform``, and its result read
        as a distribution over the topics: the same quantity for every
        estimator, whatever the scale of its ``transform`` (KLNMF's counts,
        GammaPoissonVI's weights).  A document without words gets the
        uniform mixture.  With ``topic_word_distributions()`` it gives the
        model's word distribution of each document, ``P(w|d) = P(z|d)
        P(w|z)``, which ``score`` evaluates.

        Parameters
        ----------
        {{new_counts}}

        Returns
        -------
        P_z_given_d : ndarray of shape (n_samples, n_components)

        Examples
        --------
        {{toy_counts}}
        >>> from sklearn_topicfac import KLNMF
        >>> model = KLNMF(n_components=2, random_state=0).fit(X)
        >>> np.allclose(model.topic_proportions(X).sum(axis=1), 1.0)
        True
        """
        self._check_fitted()
        X = self._validate_X(X, reset=False)
        exponent = tiny_data_exponent(X) if self._scale_equivariant else 0
        if exponent:
            X = scaled(X, exponent)  # proportions do not depend on the scale
        return self._fold_in_model().topic_proportions(X, self.components_)

    def topic_word_distributions(self):
        """The topics' word distributions ``P(w|z)``: ``components_`` normalized.

        Returns
        -------
        P_w_given_z : ndarray of shape (n_components, n_features)
            Each row sums to one.
        """
        self._check_fitted()
        return normalize_rows(self.components_)[0]

    # -------------------------------------------------------------- score
    @fill_doc
    def score(self, X, y=None):
        """Held-out document-completion log-likelihood per word (higher is better).

        The score of a fitted topic model on documents it has not seen, the
        same definition for every estimator of the package:

        1. **Split.**  Each document's words are split in two by binomial
           thinning: each of the :math:`X_{dw}` tokens is held out with
           probability 1/2, so :math:`X = X^{obs} + X^{held}`.  The coin flips
           are a hash of the seed, the document's content and the term: the
           split is deterministic and a document is split the same way
           whatever other documents come with it.  The seed is
           ``random_state`` when it is an int, else 0.  (A non-integer entry
           has no tokens: its fractional part goes, whole, to one side.)
        2. **Fold in** on the observed part, with ``components_`` fixed,
           exactly as ``transform`` does: topic proportions
           :math:`\\hat\\theta_d = P(z \\mid X^{obs}_d)` (a document with no
           observed word gets the uniform mixture; see
           :meth:`topic_proportions`).  An estimator with ``transform_tol``
           (the NMF family) folds in here to ``tol`` instead, as
           ``transform`` with ``transform_tol=tol`` would: the score chooses
           ``n_components``, and a looser fold-in favours more topics.
        3. **Score** the held-out part under the folded-in mixture, each
           topic mixed, for scoring only, with a small uniform distribution
           over the ``V = n_features_in_`` terms,
           :math:`P_\\epsilon(w \\mid z) = (1 - \\epsilon) P(w \\mid z) +
           \\epsilon / V` with :math:`\\epsilon` = 1e-3
           (``sklearn_topicfac.kernels.HELD_OUT_SMOOTHING``):

        .. math::

            \\mathrm{score}(X) = \\frac{\\sum_{d,w} X^{held}_{dw} \\log
            \\sum_z \\hat\\theta_{dz} \\, P_\\epsilon(w \\mid z)}
            {\\sum_{d,w} X^{held}_{dw}}

        Under a Poisson (or multinomial) model, thinning gives two parts that
        are independent given the document's word distribution, so the
        held-out words test what the observed words taught the model -- a
        model with too many topics fits the observed half too closely and
        predicts the other half worse.  That is what makes the score usable
        to choose ``n_components`` (``GridSearchCV``'s default scoring, with
        shuffled folds: `sklearn_topicfac.model_selection.shuffled_folds`),
        unlike the in-sample likelihood, which keeps improving with k.

        **Words unseen in training.**  A term absent from the training data
        has probability 0 under the maximum-likelihood estimators (PLSI, the
        NMF family); unsmoothed, each of its held-out tokens would cost
        :math:`-\\log` of the smallest positive float, and a handful of rare
        words would decide a fold.  With the smoothing it costs
        :math:`\\log(V/\\epsilon)`, and a word the topics do emit loses at
        most :math:`-\\log(1 - \\epsilon)` (the figures for real
        vocabularies are in ``docs/guide/choosing_k.md``); the same for every
        estimator (LDA's topics, smoothed by their prior, already give
        every term some probability).
        ``perplexity(X)`` is ``exp(-score(X))``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Non-negative counts, typically documents not used in ``fit``.
        {{ignored_y}}

        Returns
        -------
        score : float
            Average log-probability of a held-out word, at most 0.

        Raises
        ------
        ValueError
            If ``X`` has no word, or too few for any to be held out.
        """
        log_likelihood, n_words = self._completion_log_likelihood(X)
        return log_likelihood / n_words

    @fill_doc
    def perplexity(self, X):
        """Held-out document-completion perplexity: ``exp(-score(X))``.

        .. math::

            \\exp\\Big(-\\frac{\\sum_{d,w} X^{held}_{dw} \\log
            \\sum_z \\hat\\theta_{dz} P_\\epsilon(w \\mid z)}
            {\\sum_{d,w} X^{held}_{dw}}\\Big)

        with the split, the fold-in and the smoothing of :meth:`score`.  Lower
        is better; it is the size of a vocabulary from which a uniform choice
        would predict the held-out words as well as the model does.

        Parameters
        ----------
        {{counts}}

        Returns
        -------
        perplexity : float
        """
        return float(np.exp(-self.score(X)))

    def _completion_log_likelihood(self, X):
        """Summed held-out log-likelihood of ``X`` and the number of held-out words."""
        self._check_fitted()
        X = self._validate_X(X, reset=False)
        seed = self.random_state if isinstance(self.random_state, Integral) else 0
        # The fold-in of the score runs to tol, not transform_tol: a looser
        # fold-in smooths a model with more topics more, and would move the
        # choice of n_components by the score (docs/performance.md).
        return held_out_log_likelihood(self._build_model(), X, self.components_, seed)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        return tags


class StepwiseEM:
    """``partial_fit`` for the NMF and PLSI family: stepwise (online) EM.

    Each mini-batch is folded in with the current topics; its expected
    topic-word counts enter running averages with the step size
    ``(learning_offset + t) ** -learning_decay`` and the topics are the
    M-step of the averages (see `sklearn_topicfac.engine.online`).
    """

    _parameter_constraints: dict = {
        **TopicFactorization._parameter_constraints,
        "n_components": [
            Interval(Integral, 1, None, closed="left"),
            StrOptions({"auto"}),
        ],
        "transform_tol": [Interval(Real, 0, None, closed="left")],
        "learning_decay": [Interval(Real, 0.5, 1, closed="right")],
        "learning_offset": [Interval(Real, 1, None, closed="left")],
    }

    @fill_doc
    @_fit_context(prefer_skip_nested_validation=True)
    @all_or_nothing(fresh=False)
    def partial_fit(self, X, y=None):
        """Update the model with one mini-batch of documents (online learning).

        The first call starts the topics from this batch (with ``init``, as
        ``fit`` would); every call then folds the batch in and moves the
        running statistics towards it (step size ``(learning_offset + t) **
        -learning_decay`` for the t-th mini-batch).  Works with plain
        streaming loops and with ``dask_ml.wrappers.Incremental``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            One mini-batch of non-negative counts.
        {{ignored_y}}

        Returns
        -------
        self : object
            The updated estimator, with ``components_`` and ``n_batch_iter_``
            (the number of mini-batches seen).
        """
        first = not hasattr(self, "n_batch_iter_")
        if not first:
            self._check_fitted()
        X = self._validate_X(X, reset=first)
        model = self._build_model()
        averages = None
        if first:
            if self.init == "custom":
                raise ValueError(
                    "partial_fit starts from the first mini-batch; init='custom' "
                    "is not available there (use fit, or init='random')."
                )
            plan = self._plan(engine.InMemoryRunner(X))
            H = engine.start_topics(model, engine.InMemoryRunner(X), plan.start)
            self.n_batch_iter_ = 0
        else:
            H = self.components_
            averages = self._online_stats
        # The whole mini-batch is one online step.
        schedule = engine.Schedule(None, self.learning_offset, self.learning_decay)
        H, self._online_stats, self.n_batch_iter_, w_sum = engine.partial_fit(
            model, X, H, averages, schedule, self.n_batch_iter_, rng=None, fresh=first
        )
        for name, value in model.topic_attributes(H, w_sum).items():
            setattr(self, name, value)
        return self
