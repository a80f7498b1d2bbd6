"""NMF under normalization constraints with joint multiplicative updates."""

from numbers import Real

from sklearn.utils._param_validation import Interval, StrOptions

from ..models import JointNMFModel
from ._base import StepwiseEM, TopicFactorization


class JointNMF(StepwiseEM, TopicFactorization):
    """KL-NMF with normalized topics, both factors updated from one ratio.

    With the rows of ``H`` constrained to sum to one, the multiplicative
    updates of ``W`` and ``H`` can be derived jointly from one auxiliary
    function (paper 002, Alg. 4 and Alg. 6), so one ratio
    ``R = X / (W H)`` per iteration serves both factors: one sampled product
    and two sparse-dense products instead of KLNMF's two and two.

    ``normalize="components"`` (Alg. 4, with the L1 penalty of eq. (25))
    minimizes

    .. math::

        D(X \\| WH) + \\alpha \\sum_{dz} W_{dz}
        \\quad \\text{s.t.} \\quad \\sum_w H_{zw} = 1,

    by

    .. math::

        H \\leftarrow \\mathrm{normalize\\_rows}\\big(H \\odot W^T R\\big), \\qquad
        W \\leftarrow \\frac{W \\odot R H_{\\mathrm{old}}^T}{1 + \\alpha}.

    ``normalize="both"`` (Alg. 6) also constrains the rows of ``W`` to sum to
    one, fitting ``X ~ diag(N_d) W H`` with ``N_d`` the document lengths:
    this is PLSA in its ``P(z|d)``, ``P(w|z)`` form, and the update of ``W``
    divides by ``N_d`` instead of ``1 + alpha``.

    Two facts from paper 002 are tested: the penalty never sparsifies -- with
    ``alpha > 0`` every iterate equals the ``alpha = 0`` iterate with ``W``
    scaled by ``1 / (1 + alpha)`` (Lemma 6.1) -- and from normalized starts
    the two modes give the same topics at every iteration, their document
    factors differing by the document lengths (Lemma B.1).  With
    ``normalize="components"`` and ``alpha=0`` the iterates are exactly those
    of :class:`PLSI`.

    Parameters
    ----------
    n_components : int, default=10
        Number of topics.
    normalize : {"components", "both"}, default="components"
        Which factors carry the sum-to-one constraint (see above).
    alpha : float >= 0, default=0.0
        L1 penalty on the document factor (``normalize="components"`` only:
        with both factors normalized, ``sum(W)`` is constant).  It rescales
        ``W`` and induces no sparsity.
    init : {"random", "nndsvda", "custom"} or None, default=None
        Start; a custom ``(W, H)`` is rescaled so that the rows of ``H`` (and,
        for ``"both"``, of ``W``) sum to one.
    max_iter : int, default=200
        Maximum number of iterations (and fold-in sweeps in ``transform``).
    tol : float, default=1e-4
        Relative objective decrease below which the fit stops.
    learning_decay : float in (0.5, 1], default=0.7
        :meth:`partial_fit` only: exponent kappa of the step size
        ``rho_t = (learning_offset + t) ** -learning_decay`` with which the
        t-th mini-batch's statistics enter the running average.
    learning_offset : float >= 1, default=10.0
        :meth:`partial_fit` only: tau_0 of the step size; larger values
        weigh the first mini-batches less.
    random_state : int, RandomState instance or None, default=None
        Seed of the start.
    verbose : int, default=0
        Progress output level.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The topics; each row sums to one.
    embedding_ : ndarray of shape (n_samples, n_components)
        Training document factor: topic weights (``"components"``) or topic
        proportions ``P(z|d)`` (``"both"``), as ``transform`` returns them.
    loss_ : float
        Final objective (KL divergence plus the penalty).
    loss_history_ : ndarray of shape (n_iter_ + 1,)
        Objective at the start and after every iteration.
    n_iter_ : int
        Number of iterations run.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when available.

    See Also
    --------
    KLNMF : alternating updates, two ratios per iteration.
    PLSI : Hofmann's EM, equal to ``JointNMF(normalize="components")``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_topicfac import JointNMF
    >>> X = np.array([[5, 3, 0, 0], [4, 6, 1, 0], [0, 1, 6, 4], [0, 0, 3, 5]])
    >>> model = JointNMF(n_components=2, normalize="both", random_state=0)
    >>> theta = model.fit_transform(X)
    >>> np.allclose(theta.sum(axis=1), 1.0)
    True
    >>> bool(theta[0].argmax() != theta[3].argmax())
    True
    """

    _parameter_constraints: dict = {
        **StepwiseEM._parameter_constraints,
        "normalize": [StrOptions({"components", "both"})],
        "alpha": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        n_components=10,
        *,
        normalize="components",
        alpha=0.0,
        init=None,
        max_iter=200,
        tol=1e-4,
        learning_decay=0.7,
        learning_offset=10.0,
        random_state=None,
        verbose=0,
    ):
        self.n_components = n_components
        self.normalize = normalize
        self.alpha = alpha
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.learning_decay = learning_decay
        self.learning_offset = learning_offset
        self.random_state = random_state
        self.verbose = verbose

    def _check_params(self):
        if self.normalize == "both" and self.alpha > 0:
            raise ValueError(
                "alpha > 0 has no effect with normalize='both' (the rows of W sum "
                "to one, so the L1 penalty is constant); use normalize='components'."
            )

    def _build_model(self):
        return JointNMFModel(
            self.normalize,
            self.alpha,
            fold_in_iter=self.max_iter,
            fold_in_tol=self.tol,
        )
