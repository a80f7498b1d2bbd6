"""KL-NMF by diagonal Newton, coordinate descent or multiplicative updates,
plain and L1-normalized."""

from numbers import Integral

from sklearn.utils._param_validation import Interval, StrOptions

from .._docstrings import fill_doc
from ..models import KLNMFModel, NormalizedNMFModel
from . import _state
from ._base import StepwiseEM, TopicFactorization, resolve_solver


@fill_doc
class KLNMF(StepwiseEM, TopicFactorization):
    """Non-negative matrix factorization under the generalized KL divergence.

    Finds non-negative ``W`` (n_samples, n_components) and ``H``
    (n_components, n_features) minimizing

    .. math::

        D(X \\| WH) = \\sum_{ij} X_{ij} \\log \\frac{X_{ij}}{(WH)_{ij}}
                     - X_{ij} + (WH)_{ij}

    by one of three solvers (by default diagonal Newton, ``solver="dn"``,
    with numba or without and wherever the data are).  ``solver="cd"`` is cyclic
    coordinate descent with scalar Newton steps (Hsieh & Dhillon, 2011): one
    iteration updates the columns of ``W`` one after the other, then the
    rows of ``H``, each entry by the projected Newton step of its convex
    one-variable problem

    .. math::

        w \\leftarrow \\max\\Bigl(0,\\; w - \\frac{c - \\sum_t x_t h_t / y_t}
        {\\sum_t x_t h_t^2 / y_t^2}\\Bigr)

    over the row's stored entries ``t`` (``y = W H`` there, ``h`` the
    component's topic entries, ``c`` their sum), a second step following
    where the first moved the entry by more than a small fraction of it
    (``kernels.coordinate.AGAIN``); a step that would
    raise the objective is replaced by the multiplicative one, and each iteration ends
    with the best common scale (``sum(W H) = sum(X)``), so the objective
    never increases.  ``solver="dn"`` is diagonal Newton (Van hamme, 2013):
    one iteration moves every row of ``W`` at once by the same projected
    Newton step with each entry's own derivatives, then every column of
    ``H``; a row (column) whose objective that would raise takes the
    multiplicative step instead, so the objective never increases either.
    Its work is whole-matrix products, which suits the NumPy kernels;
    coordinate descent's sweep goes entry by entry, which suits numba's
    compiled loops.  ``solver="mu"`` is Lee & Seung's
    multiplicative updates (Zhang, Ding & Tang, Alg. 1), ``W`` first, then
    ``H`` -- the order of scikit-learn's ``NMF(beta_loss="kullback-leibler",
    solver="mu")``, whose iterates it reproduces from the same custom start
    ``(W, H)`` with ``split_merge=0`` (the default; split-merge moves leave
    that path, and the stopping rules differ, so compare with ``tol=0``):

    .. math::

        W \\leftarrow W \\odot \\frac{(X / WH) H^T}{\\mathbf{1} H^T}, \\qquad
        H \\leftarrow H \\odot \\frac{W^T (X / WH)}{W^T \\mathbf{1}}

    All three evaluate ``W H`` only at the stored non-zeros of ``X``: an
    iteration costs O(nnz * n_components).  With ``"mu"`` the row (resp.
    column) sums of ``W H`` equal those of ``X`` after each half-step.
    Coordinate descent needs every document at once for its topic updates,
    so block-wise fits (out-of-core, Dask) refuse it; diagonal Newton and
    the multiplicative updates run block by block to the in-memory result
    (up to the order of sums).  ``partial_fit`` runs stepwise EM of the
    multiplicative updates whatever ``solver`` is.

    Parameters
    ----------
    n_components : int or "auto", default=10
        Number of topics (the rank of the factorization).
        ``"auto"``: as scikit-learn's ``NMF``, the number of rows of the
        ``H`` passed to ``fit`` with ``init="custom"``, else ``n_features``.
    solver : {"auto", "cd", "dn", "mu"}, default="auto"
        ``"cd"``: coordinate descent with Newton steps; ``"dn"``: diagonal
        Newton; ``"mu"``: multiplicative updates (scikit-learn's iterates;
        the former default); ``"auto"``: ``"dn"``, with numba or without
        and wherever the data are.  ``"dn"`` and ``"mu"`` run in memory,
        block by block (`Blocks`) and on Dask with the same result;
        ``"cd"`` needs every document at once and is refused there (the
        declarations are in ``sklearn_topicfac.models.solvers``).  The
        fitted ``solver_`` says which ran.  On the nine real corpora
        measured, ``"dn"`` on the NumPy kernels and ``"cd"`` with numba
        came close to the objective they converge to sooner than
        ``"mu"`` on the same backend, and ended no higher, where a ``"mu"``
        fit usually stops at ``max_iter`` with a ``ConvergenceWarning``
        (``docs/real_text.md``, "Does a default fit end converged?", and its
        History for numba).
    init : {"random", "nndsvda", "kmeans", "custom"} or None, default=None
        Start of the iterations.  ``None`` uses ``"nndsvda"`` (a non-negative
        SVD start, deterministic up to ``random_state``) when
        ``n_components <= min(n_samples, n_features)``, else ``"random"``.
        ``"kmeans"`` is :class:`HybridNMFPLSI`'s smoothed K-means start (in
        memory only).  ``"custom"`` takes ``W`` and ``H`` passed to ``fit``.
    {{auto_max_iter}}
    tol : float, default=1e-4
        {{stopping}}
    {{transform_tol}}
    {{restarts}}
    {{stepwise_em}}
    random_state : int, RandomState instance or None, default=None
        Seed of the ``"random"``, ``"nndsvda"`` and ``"kmeans"`` starts.
    {{verbose}}

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The topic factor ``H``.
    embedding_ : ndarray of shape (n_samples, n_components)
        The document factor ``W`` of the training data reached by the fit.
    loss_ : float
        Final objective ``D(X || W H)``.
    solver_ : str
        The solver the fit ran (``solver`` with ``"auto"`` resolved), in
        memory as block by block; ``partial_fit`` runs stepwise EM of the
        multiplicative updates whatever it is.
    {{kl_history}}
    {{moves_made}}
    {{features_seen}}

    See Also
    --------
    NormalizedNMF : the same iterates, with factors rescaled to probabilities.
    PLSI : the same objective in probabilities ``P(z)``, ``P(d|z)``, ``P(w|z)``.

    Examples
    --------
    {{toy_counts}}
    >>> from sklearn_topicfac import KLNMF
    >>> model = KLNMF(n_components=2, random_state=0)
    >>> W = model.fit_transform(X)
    >>> bool(W.argmax(axis=1)[0] != W.argmax(axis=1)[3])
    True
    >>> bool(np.all(np.diff(model.loss_history_) <= 1e-9))
    True
    """

    _parameter_constraints: dict = {
        **StepwiseEM._parameter_constraints,
        "solver": [StrOptions({"auto", "cd", "dn", "mu"})],
        "max_iter": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
    }

    def __init__(
        self,
        n_components=10,
        *,
        solver="auto",
        init=None,
        max_iter="auto",
        tol=1e-4,
        transform_tol=3e-3,
        n_init=1,
        split_merge=0,
        learning_decay=0.7,
        learning_offset=10.0,
        random_state=None,
        verbose=0,
    ):
        self.n_components = n_components
        self.solver = solver
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.transform_tol = transform_tol
        self.n_init = n_init
        self.split_merge = split_merge
        self.learning_decay = learning_decay
        self.learning_offset = learning_offset
        self.random_state = random_state
        self.verbose = verbose

    _scale_equivariant = True

    _solver_models = {"solver": KLNMFModel}

    def _solvers(self):
        return {"solver": resolve_solver(self.solver)}

    _fold_in_parameters = ("transform_tol",)

    def _build_model(self):
        return KLNMFModel(
            self._solver(),
            fold_in_iter=self._fold_in_iter(),
            fold_in_tol=self.tol,
        )


@fill_doc
class NormalizedNMF(KLNMF):
    """KL-NMF with L1-normalized factors (Zhang, Ding & Tang, Alg. 3).

    The factorization is kept in the probabilistic form

    .. math::

        W H = D \\, \\mathrm{diag}(s) \\, C, \\qquad
        C = P(w \\mid z), \\quad s / N = P(z), \\quad D = P(d \\mid z),

    with the rows of ``C`` and the columns of ``D`` summing to one.  With
    ``solver="mu"`` (Alg. 3) the factors are renormalized after every
    half-step: after the ``W`` half-step the document factor is split into
    ``D`` and ``s``, and the topic half-step acts on ``diag(s) C`` before
    splitting it into ``s`` and ``C`` again; with the default diagonal
    Newton (and with coordinate descent) they are renormalized after every
    whole iteration.

    Multiplicative KL updates are scale-equivariant, so from the same start
    the product ``D diag(s) C`` equals :class:`KLNMF`'s ``W H`` after every
    iteration, up to rounding (tested); so are the coordinate and diagonal
    Newton steps (the default solver).
    That answers the open problem (10) of Zhang, Ding & Tang: normalizing
    the factors never changes the solution *value* ``W H``, only how it is
    split into factors.  PLSI by EM (``solver="em"``) can
    still reach a different ``W H``, because its EM updates both factors from
    one posterior while NMF updates them one after the other (PLSI's
    default, diagonal Newton, runs KL-NMF's iterations).

    Parameters
    ----------
    n_components : int or "auto", default=10
        Number of topics.
        ``"auto"``: as scikit-learn's ``NMF``, the number of rows of the
        ``H`` passed to ``fit`` with ``init="custom"``, else ``n_features``.
    solver : {"auto", "cd", "dn", "mu"}, default="auto"
        As for :class:`KLNMF`; the factors are normalized after each whole
        coordinate-descent or diagonal Newton iteration (after each
        half-step with ``"mu"``).
    init : {"random", "nndsvda", "kmeans", "custom"} or None, default=None
        Start, as for :class:`KLNMF`; a custom ``(W, H)`` is rescaled into the
        normalized form without changing ``W H``.
    {{auto_max_iter}}
    tol : float, default=1e-4
        {{stopping}}
    {{transform_tol}}
    {{restarts}}
    learning_decay : float in (0.5, 1], default=0.7
        :meth:`partial_fit` only: see :class:`KLNMF`.
    learning_offset : float >= 1, default=10.0
        :meth:`partial_fit` only: see :class:`KLNMF`.
    {{random_state}}
    {{verbose}}

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        ``C = P(w|z)``; each row sums to one.
    p_z_ : ndarray of shape (n_components,)
        ``P(z)``, the share of the training words explained by each topic.
    p_d_given_z_ : ndarray of shape (n_samples, n_components)
        ``D = P(d|z)`` for the training documents; each column sums to one.
    embedding_ : ndarray of shape (n_samples, n_components)
        ``D diag(s)``: the training documents' loadings, in the scale of
        ``transform``'s output (``embedding_ @ components_`` estimates ``X``).
    loss_ : float
        Final objective ``D(X || W H)``.
    solver_ : str
        What ``solver`` resolved to, as for :class:`KLNMF`.
    {{kl_history}}
    {{moves_made}}
    {{features_seen}}

    Examples
    --------
    {{toy_counts}}
    >>> from sklearn_topicfac import NormalizedNMF
    >>> model = NormalizedNMF(n_components=2, random_state=0).fit(X)
    >>> np.allclose(model.components_.sum(axis=1), 1.0)
    True
    >>> round(float(model.p_z_.sum()), 6)
    1.0
    """

    _fitted_state = {**_state.FACTORIZATION_STATE, **_state.PROBABILISTIC_STATE}

    def _build_model(self):
        return NormalizedNMFModel(
            self._solver(),
            fold_in_iter=self._fold_in_iter(),
            fold_in_tol=self.tol,
        )
