"""Probabilistic latent semantic indexing by diagonal Newton, coordinate descent
or (tempered) EM."""

from numbers import Integral, Real

from sklearn.utils._param_validation import Interval, StrOptions

from .._docstrings import fill_doc
from ..models import PLSIModel
from . import _state
from ._base import StepwiseEM, TopicFactorization, resolve_solver


@fill_doc
class PLSI(StepwiseEM, TopicFactorization):
    """Probabilistic latent semantic indexing (Hofmann).

    The aspect model

    .. math::

        P(d, w) = \\sum_z P(z) \\, P(d \\mid z) \\, P(w \\mid z)

    maximizes the likelihood :math:`\\sum_{d,w} X_{dw} \\log P(d, w)`, which
    is the same as minimizing the generalized KL divergence between ``X`` and
    ``N * P(d, w)`` (Gaussier & Goutte; Ding, Li & Peng).  One EM step
    updates ``P(z)``, ``P(d|z)`` and ``P(w|z)`` jointly from one posterior
    :math:`P(z \\mid d, w) \\propto P(z) P(d \\mid z) P(w \\mid z)`
    (Zhang, Ding & Tang, Alg. 2), costing one sampled product and two
    sparse-dense products.  That is ``solver="em"``; the default,
    ``solver="auto"``, runs diagonal Newton (``"dn"``, below) for
    ``beta=1`` and tempered EM for ``beta < 1``.

    ``solver="squarem"`` accelerates EM by SQUAREM (Varadhan &
    Roland, 2008): with :math:`\\theta_1 = F(\\theta_0)` and
    :math:`\\theta_2 = F(\\theta_1)` two EM steps, :math:`r = \\theta_1 -
    \\theta_0`, :math:`v = \\theta_2 - 2\\theta_1 + \\theta_0` and
    :math:`\\alpha = \\min(-\\|r\\| / \\|v\\|, -1)`, one iteration moves to
    :math:`F(\\theta')`, :math:`\\theta' = \\theta_0 - 2\\alpha r + \\alpha^2 v`
    projected on the non-negative parameters (topics renormalized), when the
    objective at :math:`\\theta'` is no higher than at :math:`\\theta_1`, and
    to :math:`\\theta_2` otherwise: the objective never increases.  One
    such iteration costs three EM steps (two when :math:`\\alpha = -1`).

    ``solver="cd"`` (in memory only) runs KL-NMF's
    coordinate descent (:class:`KLNMF`, ``solver="cd"``) on
    :math:`W = N \\, P(d \\mid z) P(z)` and :math:`H = P(w \\mid z)`,
    renormalizing the topics after every sweep:
    once :math:`\\sum W H = N`, the divergence is the negative
    log-likelihood up to a constant, so each sweep lowers PLSI's objective
    exactly as it lowers KL-NMF's, and the fit ends at the same point as
    :class:`NormalizedNMF` with ``solver="cd"``, in PLSI's parameters.
    ``solver="dn"`` (the default) does the same with KL-NMF's
    diagonal Newton iterations (:class:`KLNMF`, ``solver="dn"``).
    Block-wise fits (out-of-core, Dask) run ``"dn"`` and ``"em"`` to the
    in-memory result and refuse ``"cd"`` and ``"squarem"``;
    ``partial_fit`` runs stepwise EM whatever ``solver`` is; tempered EM
    (``beta < 1``) runs with ``"em"`` (or ``"auto"``) only.

    Tempered EM (Hofmann) raises the joint :math:`P(z) P(d|z) P(w|z)` to the
    power ``beta`` inside the posterior; ``beta=1`` is plain EM, whose
    objective never increases.  With ``beta < 1`` the updates no longer
    minimize the KL objective exactly: they trade fit for smoother topics.

    ``transform`` folds new documents in by EM on
    :math:`\\theta_d = P(z \\mid d)` with ``P(w|z)`` fixed, from the uniform
    start.

    Parameters
    ----------
    n_components : int or "auto", default=10
        Number of topics (aspects).
        ``"auto"``: as scikit-learn's ``NMF``, the number of rows of the
        ``H`` passed to ``fit`` with ``init="custom"``, else ``n_features``.
    beta : float in (0, 1], default=1.0
        Tempering exponent of the posterior; 1 gives plain EM.
    solver : {"auto", "cd", "dn", "em", "squarem"}, default="auto"
        ``"cd"``: one sweep of KL-NMF's coordinate descent per iteration;
        ``"dn"``: one iteration of KL-NMF's diagonal Newton; ``"em"``: one
        EM step per iteration (Hofmann's iterates; the former default);
        ``"squarem"``: EM accelerated by squared extrapolation, one
        iteration being one SQUAREM cycle; ``"auto"``: ``"dn"``, or
        ``"em"`` with ``beta < 1`` (the other solvers need ``beta=1``) --
        the fitted ``solver_`` says which ran.  ``"dn"`` and ``"em"`` run
        block by block and on Dask too; ``"cd"`` and ``"squarem"`` need
        every document at once and are refused there.
        An EM step costs less than a ``"cd"`` or ``"dn"`` iteration, but
        on eight of the nine real corpora measured ``"dn"`` on the NumPy
        kernels and ``"cd"`` with numba came close to the objective they
        converge to sooner than ``"em"`` on the same backend (not on
        Classic3 and tr11 respectively), and ended no higher, where an
        ``"em"`` fit usually stops at ``max_iter`` with a
        ``ConvergenceWarning``; SQUAREM did not end converged by ``tol`` on
        every corpus measured (``docs/real_text.md``, "Does a default fit
        end converged?", and its History).  With ``beta < 1`` only ``"auto"`` and
        ``"em"`` are accepted (tempered EM); the others raise a
        ``ValueError``.
    init : {"random", "nndsvda", "kmeans", "custom"} or None, default=None
        Start, as for :class:`KLNMF`; any non-negative ``(W, H)`` start
        (``W @ H`` estimating ``X``) is rescaled into ``P(z)``, ``P(d|z)``,
        ``P(w|z)``.  ``None`` uses ``"nndsvda"`` when ``n_components <=
        min(n_samples, n_features)``, else ``"random"``.
    {{auto_max_iter}}
    tol : float, default=1e-4
        {{stopping}}
    {{transform_tol}}
    {{restarts}}
    {{stepwise_em}}
    {{random_state}}
    {{verbose}}

    Attributes
    ----------
    {{probabilities}}
    embedding_ : ndarray of shape (n_samples, n_components)
        ``P(z|d)`` of the training documents reached by the fit.
    loss_ : float
        Final objective ``D(X || N P(d, w))``.
    solver_ : str
        The solver the fit ran (``solver`` with ``"auto"`` resolved), in
        memory as block by block; ``partial_fit`` runs stepwise EM whatever
        it is.
    loss_history_ : ndarray of shape (n_iter_ + 1,)
        Objective at the start and after every iteration (one diagonal
        Newton iteration, coordinate-descent sweep, EM step or SQUAREM
        cycle, as ``solver_`` says); a split-merge move kept counts as one
        iteration (its trial's iterations are in ``split_merge_moves_``).
    n_iter_ : int
        Number of iterations of the fit kept (a kept move counting as one).
    {{moves_made}}
    {{features_seen}}

    See Also
    --------
    KLNMF : the same objective on unnormalized factors.

    Examples
    --------
    {{toy_counts}}
    >>> from sklearn_topicfac import PLSI
    >>> model = PLSI(n_components=2, random_state=0)
    >>> theta = model.fit_transform(X)          # P(z|d), rows sum to one
    >>> np.allclose(theta.sum(axis=1), 1.0)
    True
    >>> bool(theta.argmax(axis=1)[0] != theta.argmax(axis=1)[3])
    True
    """

    _parameter_constraints: dict = {
        **StepwiseEM._parameter_constraints,
        "beta": [Interval(Real, 0, 1, closed="right")],
        "solver": [StrOptions({"auto", "cd", "dn", "em", "squarem"})],
        "max_iter": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
    }

    def __init__(
        self,
        n_components=10,
        *,
        beta=1.0,
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
        self.beta = beta
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
    _fitted_state = {**_state.FACTORIZATION_STATE, **_state.PROBABILISTIC_STATE}

    _solver_models = {"solver": PLSIModel}

    def _solvers(self):
        return {"solver": resolve_solver(self.solver, tempered=self.beta != 1)}

    _fold_in_parameters = ("transform_tol",)

    def _build_model(self):
        return PLSIModel(
            self.beta,
            self._solver(),
            fold_in_iter=self._fold_in_iter(),
            fold_in_tol=self.tol,
        )
