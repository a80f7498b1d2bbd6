"""The one base class every estimator of the package derives from.

It owns everything the estimators share: parameter and data validation,
initialization, the fit loop (convergence, ``ConvergenceWarning``, verbose
progress, objective history), the deterministic fold-in ``transform``,
``inverse_transform``, ``score`` and the scikit-learn tags.

An estimator supplies its mathematics through four hooks:

``_prepare_start(W, H)``
    map a count-scale start (``W @ H ~ X``) to the estimator's parametrization;
``_doc_step(X, W, H)``
    the per-document part of one iteration: returns the updated document
    factor for these rows and a dict of statistics that are *sums over
    documents* (always including ``"loss"``, the objective of the incoming
    state restricted to these rows, as computed by ``_objective``);
``_topic_step(H, stats)``
    the topic update from the summed statistics: returns the new ``H`` and an
    optional per-topic rescaling of the document factor (or ``None``);
``_set_fit_attributes(W, H)``
    the public fitted attributes.

Because ``_doc_step`` only sees a block of rows and its statistics add up,
one iteration is a map-reduce over document blocks: out-of-core, online and
distributed fitting reuse the same hooks.
"""

import time
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning, DataConversionWarning
from sklearn.preprocessing import normalize
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.extmath import randomized_svd
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from ._completion import completion_log_likelihood, completion_split
from ._kernels import (
    _multiply_keeping_zeros,
    _nonzero,
    kl_divergence_from_ratio,
    mu_update_w,
    normalize_rows,
    ratio_at_nonzeros,
)


def _to_csr(X):
    """CSR view of validated input, canonical and without stored zeros.

    Dense input becomes CSR (only its non-zeros are stored).  Sparse input is
    copied only when it must be changed (stored zeros or duplicate entries),
    so the caller's arrays are never written to.
    """
    if not sp.issparse(X):
        return sp.csr_matrix(X)
    X = sp.csr_matrix(X)
    if not X.has_canonical_format or (X.data == 0).any():
        X = X.copy()
        X.sum_duplicates()
        X.eliminate_zeros()
    return X


def _length_order(X):
    """Permutation sorting the rows of CSR ``X`` by number of entries, or None.

    ``None`` when the rows are sorted already.  The sort is stable, so
    documents of equal length keep their relative order.
    """
    lengths = np.diff(X.indptr)
    if np.all(lengths[1:] >= lengths[:-1]):
        return None
    return np.argsort(lengths, kind="stable")


def _is_dask_array(X):
    """Whether ``X`` is a dask array (without importing dask)."""
    return type(X).__module__.startswith("dask.array") and hasattr(X, "to_delayed")


def _is_blocks(X):
    from .out_of_core import Blocks

    return isinstance(X, Blocks)


def _unsort_rows(A, order):
    """Rows of ``A``, taken in the order ``order``, put back (``None``: as is)."""
    if order is None:
        return A
    out = np.empty_like(A)
    out[order] = A
    return out


# The largest total of X, as a fraction of the dtype's largest number: the
# objective and the bound add up terms of the size of the total times log
# factors (at most ~709 < 2**10 in float64), in sums of a few such parts,
# and the start multiplies entries of that size; a margin of 2**16 keeps
# every one of them finite.
_TOTAL_MARGIN = 2.0**-16


def _check_data_values(data, where):
    """Refuse negative values in ``data`` (the stored values of X or a block),
    and data whose total is too large to fit without overflow.

    The KL factorizations are scale-equivariant (``X * c`` is fitted by ``W
    * c``), so data that sums to more than ``finfo(dtype).max * 2**-16``
    (about 2.7e303 in float64, 5.2e33 in float32) can be divided by a
    constant first; fitting it as it is would overflow the objective's sums.
    """
    if data.size and data.min() < 0:
        raise ValueError(
            f"Negative values in {where}: the model is a KL factorization of "
            "non-negative data (e.g. word counts). Shift or clip the data, or "
            "use SimplexPLSA for real-valued input."
        )
    with np.errstate(over="ignore"):
        total = float(np.sum(data, dtype=np.float64))
    limit = float(np.finfo(data.dtype).max) * _TOTAL_MARGIN
    if total > limit:
        hint = " or pass float64 data" if data.dtype == np.float32 else ""
        size = f"{total:.3g}" if np.isfinite(total) else "more than float64 holds"
        raise ValueError(
            f"The values in {where} add up to {size}, above {limit:.3g}, "
            f"the largest total that can be fitted in {data.dtype} without "
            "overflow. Divide X by a constant (the KL factorizations are "
            f"scale-equivariant: X * c is fitted by W * c){hint}."
        )


def _check_start_arguments(init, W, H):
    """``W`` and ``H`` may only be passed with ``init='custom'``."""
    if init != "custom" and (W is not None or H is not None):
        raise ValueError(
            "W and H were passed to fit, but init is "
            f"{init!r}; set init='custom' to start from them."
        )


def _random_scale(total, n, m, k):
    """Entry scale of the random start: ``W @ H`` then has the mean of X."""
    return np.sqrt(max(total, 0.0) / (n * m * k)) or 1.0


def _reconstruct(X, components):
    """``X @ components`` for ``inverse_transform``, with ``X`` validated.

    ``X`` (dense or sparse, shape ``(n_samples, n_components)``) must be
    numeric and finite; anything else is a ``ValueError`` that says so.
    """
    k = components.shape[0]
    try:
        X = check_array(X, accept_sparse=("csr", "csc"), dtype=[np.float64, np.float32])
    except ValueError as exc:
        raise ValueError(
            f"inverse_transform expects a finite numeric array of shape "
            f"(n_samples, {k}), such as the output of transform: {exc}"
        ) from exc
    if X.shape[1] != k:
        raise ValueError(
            f"inverse_transform expects shape (n_samples, {k}), got {X.shape}."
        )
    return np.asarray(X @ components.astype(X.dtype, copy=False))


def _check_factor(A, shape, name, dtype):
    """Validate a user-given start factor; returns a private copy.

    A start of another dtype than ``X`` is converted to it with a
    ``DataConversionWarning`` (never silently); it must have the right shape,
    finite non-negative entries, and not be all zeros (a zero factor stays
    zero under multiplicative updates: the model would be zero).
    """
    if A is None:
        raise ValueError(
            f"init='custom' needs both W and H: pass them as fit(X, W=..., H=...) "
            f"(or choose init='random' or 'nndsvda'); {name} is missing."
        )
    given = np.asarray(A).dtype
    A = np.array(A, dtype=dtype, copy=True)
    if given != dtype:
        warnings.warn(
            f"The custom start {name} has dtype {given} and was converted to "
            f"X's dtype {np.dtype(dtype)}; pass {name}.astype(X.dtype) to "
            "silence this.",
            DataConversionWarning,
            stacklevel=5,
        )
    if A.shape != shape:
        raise ValueError(
            f"The custom start {name} has shape {A.shape}, but this X and "
            f"n_components need shape {shape}."
        )
    if not np.all(np.isfinite(A)):
        raise ValueError(f"The custom start {name} contains NaN or infinity.")
    if (A < 0).any():
        raise ValueError(
            f"The custom start {name} has negative entries; it must be non-negative."
        )
    if A.size and not A.any():
        raise ValueError(
            f"The custom start {name} is all zeros: the updates are "
            "multiplicative, so the model would stay zero. Pass a start with "
            "positive entries."
        )
    return A


# How far an objective may rise, relative to the start's, from rounding
# alone: 50 float32 machine epsilons (an objective evaluated from float32
# factors carries a few eps of relative error per term; see the property
# test in tests/test_robustness.py).
_ROUNDING = 50 * float(np.finfo(np.float32).eps)


# Smoothing added to the K-means assignment indicator (Ding, Li & Peng, 2006):
# a 0/1 start would pin most entries at zero under multiplicative updates.
_KMEANS_SMOOTHING = 0.2


def _kmeans_labels(X, n_clusters, random_state):
    """K-means clustering of the documents by their term profiles.

    The rows are scaled to unit Euclidean norm first, so documents are
    compared by the cosine of their count vectors, not by their lengths.
    One k-means++ run (``n_init=1``): the seed is the only source of variation.
    This is the clustering ``init="kmeans"`` starts from.
    """
    model = KMeans(n_clusters=n_clusters, n_init=1, random_state=random_state)
    return model.fit_predict(normalize(X))


class _BaseTopicModel(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Shared plumbing of the KL topic factorizations (not for direct use)."""

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "init": [StrOptions({"random", "nndsvda", "kmeans", "custom"}), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    # What ``init=None`` means when that start is feasible (else "random").
    _default_init = "nndsvda"

    # ------------------------------------------------------------------ hooks
    def _prepare_start(self, W, H):
        return W, H

    def _doc_step(self, X, W, H):  # pragma: no cover - abstract
        raise NotImplementedError

    def _topic_step(self, H, stats):  # pragma: no cover - abstract
        raise NotImplementedError

    def _set_fit_attributes(self, W, H):
        """Public fitted attributes from the final document and topic factors."""
        w_sum = W.sum(axis=0)
        self._set_topic_attributes(H, w_sum)
        for name, of_rows in self._doc_attributes(w_sum).items():
            setattr(self, name, of_rows(W))

    def _set_topic_attributes(self, H, w_sum):
        """The attributes of the topics: from ``H`` and the column sums of ``W``."""
        self.components_ = H

    def _doc_attributes(self, w_sum):
        """Per-document attributes, each a row-wise function of ``W``.

        Row-wise (given ``w_sum``, the column sums of the whole ``W``), so
        that a block-wise fit computes them block by block, after
        `_set_topic_attributes`, whose attributes they may use.
        """
        return {"embedding_": self._doc_output}

    def _topic_loss(self, H):
        """The part of the objective that depends on the topics only (default 0).

        The objective of a state is the sum over documents of the ``"loss"``
        that `_doc_step` reports, plus this.
        """
        return 0.0

    def _after_iteration(self):
        """Called once after every full iteration (default: nothing)."""

    def _doc_output(self, W):
        """Map a count-scale fold-in factor to what ``transform`` returns."""
        return W

    def _topic_mixture(self, X):
        """``P(z|d)`` of the documents ``X`` folded in, and the topics ``P(w|z)``.

        Both row-stochastic, so that ``P(w|d) = P(z|d) @ P(w|z)``; this is
        what ``score`` evaluates.  The default reads the count-scale fold-in
        ``W`` and topics ``H`` as ``W @ H = diag(N_d) P(z|d) P(w|z)``; a
        document without words gets the uniform mixture.  Estimators whose
        fold-in has another scale (LDA's ``gamma``) override it.
        """
        H = self.components_.astype(X.dtype, copy=False)
        phi, h = normalize_rows(H)
        theta, n_d = normalize_rows(self._fold_in(X) * h)
        theta[n_d == 0] = 1 / H.shape[0]
        return theta, phi

    # ------------------------------------------------------------ validation
    def _validate_X(self, X, reset):
        X = validate_data(
            self,
            X,
            accept_sparse=("csr", "csc"),
            dtype=[np.float64, np.float32],
            reset=reset,
        )
        _check_data_values(
            X.data if sp.issparse(X) else X, f"data passed to {type(self).__name__}"
        )
        return _to_csr(X)

    # ---------------------------------------------------------------- start
    def _initialize(self, X, W, H):
        n, m = X.shape
        k = self.n_components
        init = self.init
        _check_start_arguments(init, W, H)
        if init is None:
            init = self._default_init
            if k > (n if init == "kmeans" else min(n, m)):
                init = "random"
        if init == "custom":
            W = _check_factor(W, (n, k), "W", X.dtype)
            H = _check_factor(H, (k, m), "H", X.dtype)
        elif init == "random":
            W, H = self._random_start(X)
        elif init == "kmeans":
            if k > n:
                raise ValueError(
                    f"init='kmeans' needs n_components <= n_samples = {n} "
                    f"(one cluster per topic), got {k}; use init='random'."
                )
            W, H = self._kmeans_start(X)
        else:
            if k > min(n, m):
                raise ValueError(
                    f"init='nndsvda' needs n_components <= min(n_samples, "
                    f"n_features) = {min(n, m)}, got {k}; use init='random'."
                )
            W, H = self._nndsvda_start(X)
        return self._prepare_start(W, H)

    def _random_start(self, X):
        n, m = X.shape
        k = self.n_components
        rng = check_random_state(self.random_state)
        # Scale so that W @ H has the mean of X, as scikit-learn's NMF does.
        avg = _random_scale(X.sum(dtype=np.float64), n, m, k)
        W = (avg * np.abs(rng.standard_normal((n, k)))).astype(X.dtype, copy=False)
        H = (avg * np.abs(rng.standard_normal((k, m)))).astype(X.dtype, copy=False)
        return W, H

    def _nndsvda_start(self, X):
        """Non-negative double SVD start (Boutsidis & Gallopoulos, 2008).

        Each singular pair is split into its positive and negative parts and
        the dominant part is kept; zeros are then filled with a small
        positive value so that multiplicative updates can move them (the "a"
        variant).  The fill is ``sqrt(mean(X) / k)``, the scale of one factor
        entry when ``W @ H`` has the mean of X -- filling both factors with
        ``mean(X)`` itself, as scikit-learn does, puts ``W @ H`` at
        ``mean(X) ** 2`` and overflows float32 on large values.
        """
        k = self.n_components
        U, S, Vt = randomized_svd(X, k, random_state=self.random_state)
        W = np.zeros((X.shape[0], k), dtype=X.dtype)
        H = np.zeros((k, X.shape[1]), dtype=X.dtype)
        for j in range(k):
            u, v = U[:, j], Vt[j]
            up, un = np.maximum(u, 0), np.maximum(-u, 0)
            vp, vn = np.maximum(v, 0), np.maximum(-v, 0)
            pos = np.linalg.norm(up) * np.linalg.norm(vp)
            neg = np.linalg.norm(un) * np.linalg.norm(vn)
            u, v, sigma = (up, vp, pos) if pos >= neg else (un, vn, neg)
            nu, nv = np.linalg.norm(u), np.linalg.norm(v)
            if nu > 0 and nv > 0:
                scale = np.sqrt(S[j] * sigma)
                W[:, j] = scale * u / nu
                H[j] = scale * v / nv
        mean = X.sum(dtype=np.float64) / (X.shape[0] * X.shape[1])
        fill = X.dtype.type(np.sqrt(mean / k) if mean > 0 else 1.0)
        W[W == 0] = fill
        H[H == 0] = fill
        return W, H

    def _kmeans_start(self, X):
        """Smoothed K-means start (Ding, Li & Peng, 2006).

        K-means clusters the documents (see ``_kmeans_labels``).  The
        assignment indicator plus 0.2 smoothing, normalized per document,
        gives the topic proportions, and each cluster's summed counts (its
        centroid up to scale), normalized per topic, give the topics:

        .. math::

            P(z \\mid d) \\propto [d \\in z] + 0.2, \\qquad
            P(w \\mid z) \\propto \\sum_{d \\in z} X_{dw} + \\epsilon_w .

        In count scale ``W = N_d P(z|d)`` and ``H = P(w|z)``, so ``W @ H``
        has the row sums of ``X`` and the start means the same for every
        estimator (``_prepare_start`` maps it to the estimator's
        parametrization).  ``epsilon_w`` is ``1e-3`` times the corpus
        frequency of ``w`` spread over the clusters: a term absent from a
        cluster would otherwise stay at exactly zero in that topic forever
        under multiplicative updates.
        """
        n = X.shape[0]
        k = self.n_components
        labels = _kmeans_labels(X, k, self.random_state)
        A = np.full((n, k), _KMEANS_SMOOTHING, dtype=X.dtype)
        A[np.arange(n), labels] += 1
        n_d = np.asarray(X.sum(axis=1), dtype=X.dtype).ravel()
        W = normalize_rows(A)[0] * n_d[:, None]
        indicator = sp.csr_matrix(
            (np.ones(n, dtype=X.dtype), (np.arange(n), labels)), shape=(n, k)
        )
        cluster_counts = np.asarray((indicator.T @ X).todense())
        floor = 1e-3 / k * cluster_counts.sum(axis=0)
        H = normalize_rows(cluster_counts + floor[None, :])[0]
        return W, H.astype(X.dtype, copy=False)

    # ------------------------------------------------------------- fit loop
    def _iterate(self, X, W, H):
        """One full iteration; returns (W, H, objective of the incoming state)."""
        W, stats = self._doc_step(X, W, H)
        H, doc_scale, loss = self._topic_update(H, stats)
        if doc_scale is not None:
            W = W * doc_scale[None, :]
        return W, H, loss

    def _topic_update(self, H, stats):
        """The reduce half of an iteration, from statistics summed over documents.

        Returns the new topics, the per-topic rescaling of the document
        factor (or None) and the objective of the incoming state.
        """
        loss = stats["loss"] + self._topic_loss(H)
        H, doc_scale = self._topic_step(H, stats)
        self._after_iteration()
        return H, doc_scale, loss

    def _objective(self, X, R, W, H):
        """Objective of the state ``(W, H)`` on rows ``X``, given ``R = X / (W H)``.

        Additive over row blocks.  The generalized KL divergence by default;
        estimators with a penalty or a rescaled model override it.
        """
        return kl_divergence_from_ratio(X, R, W, H)

    def _doc_loss(self, X, W, H):
        """The documents' part of the objective of ``(W, H)``: additive over rows."""
        return self._objective(X, ratio_at_nonzeros(X, W, H), W, H)

    def _loss(self, X, W, H):
        return self._doc_loss(X, W, H) + self._topic_loss(H)

    def _stopped(self, history):
        """Whether the last iteration's relative decrease is below ``tol``.

        Each iteration reports the objective of the state it started from, so
        this judges the last two completed states.  The objective never rises
        in exact arithmetic; a rise larger than rounding (``_ROUNDING`` times
        the start's objective) is never taken for convergence: the fit goes
        on, and warns if it reaches ``max_iter``.
        """
        if len(history) < 2 or self.tol <= 0:
            return False
        decrease = history[-2] - history[-1]
        scale = abs(history[0])
        return -_ROUNDING * scale <= decrease <= self.tol * scale

    def _run_iterations(self, X, W, H):
        """Iterate the hooks from ``(W, H)`` until convergence or ``max_iter``.

        Returns ``(W, H, history, n_iter, converged)``; ``history`` holds the
        objective of the start and after every iteration.  Composite
        estimators run one phase with each component's hooks through this.
        """
        # The default iteration is a map-reduce over the documents, so their
        # order is free: iterating on them sorted by length puts documents of
        # equal length next to each other, which is what makes the sampled
        # products batched (see `product_at_nonzeros`).  An estimator with its
        # own `_iterate` (online mini-batches) keeps the given order.
        order = None
        if type(self)._iterate is _BaseTopicModel._iterate:
            order = _length_order(X)
        if order is not None:
            X, W = X[order], W[order]
        state = [W, H]

        def iterate():
            state[0], state[1], loss = self._iterate(X, *state)
            return loss

        history, n_iter, converged = self._iteration_loop(
            iterate, lambda: self._loss(X, *state)
        )
        W, H = state
        return _unsort_rows(W, order), H, history, n_iter, converged

    def _iteration_loop(self, iterate, final_loss, describe=None):
        """The fit loop: ``iterate()`` until convergence or ``max_iter``.

        ``iterate()`` runs one iteration and returns the objective of the
        state it started from; ``final_loss()`` gives the objective of the
        last state.  Prints the ``verbose`` progress lines (``describe()``
        adds to them) and returns ``(history, n_iter, converged)``.
        """
        start = time.perf_counter()
        name = type(self).__name__
        extra = (lambda: f", {describe()}") if describe else (lambda: "")
        history = []
        converged = False
        n_iter = 0
        for n_iter in range(1, self.max_iter + 1):
            loss = iterate()
            history.append(loss)
            if self.verbose and (self.verbose > 1 or n_iter % 10 == 1):
                print(
                    f"[{name}] iteration {n_iter - 1:4d}  objective {loss:.6e}  "
                    f"({time.perf_counter() - start:.2f} s{extra()})"
                )
            if self._stopped(history):
                converged = True
                break
        history.append(final_loss())
        if self.verbose:
            print(
                f"[{name}] {'converged' if converged else 'stopped'} "
                f"after {n_iter} iterations, objective {history[-1]:.6e} "
                f"({time.perf_counter() - start:.2f} s)"
            )
        return history, n_iter, converged

    def _store_fit_result(self, history, n_iter, converged, stacklevel):
        """Warn if the fit did not converge; set the objective attributes."""
        if not converged and self.tol > 0:
            warnings.warn(
                f"{type(self).__name__} did not converge in max_iter={self.max_iter} "
                f"iterations (tol={self.tol}); increase max_iter or tol.",
                ConvergenceWarning,
                stacklevel=stacklevel + 1,
            )
        self.n_iter_ = n_iter
        self.loss_history_ = np.asarray(history)
        self.loss_ = float(history[-1])

    def _fit_from_start(self, X, W, H):
        """Start and iterate; ``(W, H, history, n_iter, converged)`` of the fit."""
        W, H = self._initialize(X, W, H)
        return self._run_iterations(X, W, H)

    def _fit(self, X, W=None, H=None):
        X = self._validate_X(X, reset=True)
        W, H, history, n_iter, converged = self._fit_from_start(X, W, H)
        self._store_fit_result(history, n_iter, converged, stacklevel=4)
        self._set_fit_attributes(W, H)
        return X

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, W=None, H=None):
        """Fit the model to the non-negative data ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Non-negative data, e.g. document-term counts.  Sparse CSR/CSC is
            used as is, never densified.
        y : Ignored
            Not used, present for API consistency.
        W : array-like of shape (n_samples, n_components), default=None
            Start for the document factor, used only with ``init='custom'``.
        H : array-like of shape (n_components, n_features), default=None
            Start for the topic factor, used only with ``init='custom'``.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        if _is_dask_array(X) or _is_blocks(X):
            return self._fit_blockwise(X, W, H)
        self._fit(X, W=W, H=H)
        return self

    def _fit_blockwise(self, X, W, H):
        """``fit`` on a `Blocks` source or a dask array (see `_blockwise`)."""
        from ._blockwise import _LocalRunner, fit_blockwise

        if _is_blocks(X):
            return fit_blockwise(self, _LocalRunner(X), W=W, H=H)
        from .distributed import runner_for

        return fit_blockwise(self, runner_for(X), W=W, H=H)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y=None, W=None, H=None):
        """Fit the model, then return ``transform(X)``.

        The result is exactly ``fit(X).transform(X)``: the training documents
        are folded in like any new document, so the two always agree.  The
        document factor reached during fitting is kept in ``embedding_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Non-negative data.
        y : Ignored
            Not used, present for API consistency.
        W, H : array-like, default=None
            Custom start, used only with ``init='custom'``.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
            Document representation, as returned by ``transform``.
        """
        if _is_blocks(X):
            raise ValueError(
                "fit_transform needs the documents in memory; with Blocks, call "
                "fit(blocks) and then transform each block."
            )
        if _is_dask_array(X):
            return self._fit_blockwise(X, W, H).transform(X)
        X = self._fit(X, W=W, H=H)
        return self._doc_output(self._fold_in(X))

    # ---------------------------------------------------------------- fold-in
    def _fold_in(self, X):
        """Count-scale document factor for ``X`` with the topics fixed.

        Multiplicative KL updates of ``W`` alone, from the deterministic start
        that spreads each document's length evenly over the topics.  This
        subproblem is convex.  Each document stops on its own once the mean
        absolute change of its topic proportions falls below ``tol`` (or after
        ``max_iter`` sweeps), so a document's result does not depend on the
        other documents in the batch.
        """
        H = self.components_.astype(X.dtype, copy=False)
        h = H.sum(axis=1)
        # Documents are independent here: sorted by length (and kept sorted
        # as finished ones drop out), the sampled products are batched.
        order = _length_order(X)
        if order is not None:
            X = X[order]
        n_d = np.asarray(X.sum(axis=1)).ravel()
        total = h.sum()
        W = np.repeat((n_d / (total if total > 0 else 1))[:, None], H.shape[0], axis=1)
        W = W.astype(X.dtype, copy=False)
        active = np.flatnonzero(n_d > 0)
        for _ in range(self.max_iter):
            if active.size == 0:
                break
            Xa = X if active.size == X.shape[0] else X[active]
            Wa = W[active]
            Wn = mu_update_w(ratio_at_nonzeros(Xa, Wa, H), Wa, H)
            change = np.abs(normalize_rows(Wn * h)[0] - normalize_rows(Wa * h)[0]).mean(
                axis=1
            )
            W[active] = Wn
            active = active[change >= self.tol]
        return _unsort_rows(W, order)

    def transform(self, X):
        """Represent documents in the fitted topic space (fold-in).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Non-negative data with the features seen in ``fit``.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
            Deterministic: the same input always gives the same output.
        """
        check_is_fitted(self)
        if _is_dask_array(X):
            from .distributed import transform_dask_array

            return transform_dask_array(self, X)
        X = self._validate_X(X, reset=False)
        return self._doc_output(self._fold_in(X))

    def inverse_transform(self, X):
        """Map a document representation back to feature space: ``X @ components_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components)
            Output of ``transform``.

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        return _reconstruct(X, self.components_)

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
           observed word gets the uniform mixture).
        3. **Score** the held-out part under the folded-in mixture:

        .. math::

            \\mathrm{score}(X) = \\frac{\\sum_{d,w} X^{held}_{dw} \\log
            \\sum_z \\hat\\theta_{dz} \\, P(w \\mid z)}
            {\\sum_{d,w} X^{held}_{dw}}

        Under a Poisson (or multinomial) model, thinning gives two parts that
        are independent given the document's word distribution, so the
        held-out words test what the observed words taught the model -- a
        model with too many topics fits the observed half too closely and
        predicts the other half worse.  That is what makes the score usable
        to choose ``n_components`` (``GridSearchCV``'s default scoring),
        unlike the in-sample likelihood, which keeps improving with k.

        A probability is floored at the smallest normal float64, so a word
        the model cannot emit (e.g. a term absent from the training data, for
        the maximum-likelihood estimators) costs about 708 nats instead of
        an infinite penalty.  ``perplexity(X)`` is ``exp(-score(X))``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Non-negative counts, typically documents not used in ``fit``.
        y : Ignored
            Not used, present for API consistency.

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

    def perplexity(self, X):
        """Held-out document-completion perplexity: ``exp(-score(X))``.

        .. math::

            \\exp\\Big(-\\frac{\\sum_{d,w} X^{held}_{dw} \\log
            \\sum_z \\hat\\theta_{dz} P(w \\mid z)}
            {\\sum_{d,w} X^{held}_{dw}}\\Big)

        with the split and the fold-in of :meth:`score`.  Lower is better; it
        is the size of a vocabulary from which a uniform choice would predict
        the held-out words as well as the model does.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Non-negative counts.

        Returns
        -------
        perplexity : float
        """
        return float(np.exp(-self.score(X)))

    def _completion_log_likelihood(self, X):
        """Summed held-out log-likelihood of ``X`` and the number of held-out words."""
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        if np.sum(X.data, dtype=np.float64) == 0:
            raise ValueError(
                "X contains no words (all entries are zero): nothing to score."
            )
        seed = self.random_state if isinstance(self.random_state, Integral) else 0
        X_observed, X_held_out = completion_split(X, seed)
        if X_held_out.nnz == 0:
            raise ValueError(
                "X has too few words to score: the held-out half of its words "
                "is empty (score a larger sample of documents)."
            )
        theta, phi = self._topic_mixture(X_observed)
        return completion_log_likelihood(X_held_out, theta, phi)

    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


class _ProbabilisticFactorsMixin:
    """Parametrization ``W @ H = D diag(s) C`` shared by NormalizedNMF and PLSI.

    Internally ``H = C = P(w|z)`` has rows summing to one and ``W = D diag(s)``
    is in count scale, so ``W @ H`` estimates ``X``.  After fitting,
    ``components_ = P(w|z)``, ``p_z_ = s / N`` and ``p_d_given_z_ = D``.
    """

    def _prepare_start(self, W, H):
        C, h = normalize_rows(H)
        return W * h[None, :], C

    def _set_topic_attributes(self, H, w_sum):
        total = w_sum.sum()
        self.components_ = H
        self.p_z_ = w_sum / (total if total > 0 else 1)

    def _doc_attributes(self, w_sum):
        # D = W / s with s the column sums of the whole W (a zero column stays 0).
        s = _nonzero(w_sum)
        return {
            "p_d_given_z_": lambda W: W / s[None, :].astype(W.dtype, copy=False),
            "embedding_": self._doc_output,
        }


class _OnlineMixin:
    """``partial_fit`` for the NMF and PLSI family: stepwise (online) updates.

    Each mini-batch is folded in with the current topics (``transform``'s
    per-document iterations), which gives its expected topic-word counts
    ``E_b = H * (W_b^T R_b)`` (and, for KL-NMF, the column sums of ``W_b``).
    Their per-document averages enter running averages with the step size

    .. math::

        \\rho_t = (\\tau_0 + t)^{-\\kappa}, \\qquad
        \\bar E \\leftarrow (1 - \\rho_t) \\bar E + \\rho_t E_b / n_b,

    ``kappa = learning_decay``, ``tau_0 = learning_offset``, ``t`` the
    number of mini-batches seen before (the first one sets the averages).
    The topics are then ``normalize_rows(E)`` (PLSI, NormalizedNMF,
    JointNMF) or ``E / w`` (KL-NMF): the M-step of the batch algorithm
    applied to the averaged statistics -- stepwise EM (Cappe & Moulines,
    2009; Liang & Klein, 2009), which for ``kappa`` in (0.5, 1] converges
    to a stationary point of the expected objective.
    """

    _parameter_constraints: dict = {
        **_BaseTopicModel._parameter_constraints,
        "learning_decay": [Interval(Real, 0.5, 1, closed="right")],
        "learning_offset": [Interval(Real, 1, None, closed="left")],
    }

    def _online_counts(self, H, stats):
        """Expected topic-word counts of a batch from its statistics."""
        return _multiply_keeping_zeros(H, stats["WtR"])

    def _online_topics(self, counts, w_sum):
        """Topics from averaged statistics: the M-step (row-normalized counts)."""
        return normalize_rows(counts)[0]

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None):
        """Update the model with one mini-batch of documents (online learning).

        The first call starts the topics from this batch (with ``init``, as
        ``fit`` would); every call then folds the batch in and moves the
        running statistics towards it (see the class's online-learning
        notes: step size ``(learning_offset + t) ** -learning_decay``).
        Works with plain streaming loops and with
        ``dask_ml.wrappers.Incremental``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            One mini-batch of non-negative counts.
        y : Ignored
            Not used, present for API consistency.

        Returns
        -------
        self : object
            The updated estimator, with ``components_`` and ``n_batch_iter_``
            (the number of mini-batches seen).
        """
        first = not hasattr(self, "n_batch_iter_")
        X = self._validate_X(X, reset=first)
        if first:
            if self.init == "custom":
                raise ValueError(
                    "partial_fit starts from the first mini-batch; init='custom' "
                    "is not available there (use fit, or init='random')."
                )
            _, H = self._initialize(X, None, None)
            self.components_ = H
            self.n_batch_iter_ = 0
        H = self.components_
        X = X.astype(H.dtype, copy=False)
        n_b = max(X.shape[0], 1)
        W = self._prepare_start(self._fold_in(X), H)[0]
        stats = self._doc_step(X, W, H)[1]
        counts = self._online_counts(H, stats) / n_b
        w_sum = W.sum(axis=0) / n_b
        if first:
            self._online_stats = (counts, w_sum)
        else:
            rho = (self.learning_offset + self.n_batch_iter_) ** -self.learning_decay
            old_counts, old_w = self._online_stats
            self._online_stats = (
                (1 - rho) * old_counts + rho * counts,
                (1 - rho) * old_w + rho * w_sum,
            )
        self.n_batch_iter_ += 1
        counts, w_sum = self._online_stats
        # A term not yet seen has no counts; an exact zero in the topics would
        # stay zero under the multiplicative updates however often the term
        # occurs later, so zeros are lifted to eps times the row's largest.
        counts = np.maximum(
            counts, np.finfo(H.dtype).eps * counts.max(axis=1, keepdims=True)
        )
        H = self._online_topics(counts, w_sum).astype(H.dtype, copy=False)
        self._set_topic_attributes(H, counts.sum(axis=1))
        return self
