"""NMF under normalization constraints with joint multiplicative updates."""

from numbers import Integral, Real

from sklearn.utils._param_validation import Interval, StrOptions

from .._docstrings import fill_doc
from ..models import JointNMFModel
from ._base import StepwiseEM, TopicFactorization


@fill_doc
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
    of :class:`PLSI` with ``solver="em"`` (not its default, diagonal Newton).

    Parameters
    ----------
    n_components : int or "auto", default=10
        Number of topics.
        ``"auto"``: as scikit-learn's ``NMF``, the number of rows of the
        ``H`` passed to ``fit`` with ``init="custom"``, else ``n_features``.
    normalize : {"components", "both"}, default="components"
        Which factors carry the sum-to-one constraint (see above).
    alpha : float >= 0, default=0.0
        L1 penalty on the document factor (``normalize="components"`` only:
        with both factors normalized, ``sum(W)`` is constant).  It rescales
        ``W`` and induces no sparsity.
    solver : {"joint", "squarem", "cd", "dn"}, default="joint"
        ``"joint"``: the joint update above (paper 002's iterates);
        ``"squarem"``: the joint update accelerated by SQUAREM (Varadhan &
        Roland, 2008), one iteration being one cycle of three joint updates
        (two when the extrapolation is not taken), the objective never
        rising (as :class:`PLSI`'s ``"squarem"``); ``"cd"`` / ``"dn"``: one
        pass of KL-NMF's coordinate descent or diagonal Newton
        (:class:`KLNMF`) on the count-scale factors, ``(1 + alpha) W`` or
        ``diag(N_d) W``, the topics renormalized after it and ``W`` mapped
        back (for ``"both"`` its rows renormalized, the scale that
        minimizes each document's divergence): neither raises the
        objective.  With ``normalize="components"`` and ``alpha=0``,
        ``"cd"`` and ``"dn"`` run the iterations of :class:`PLSI` with
        the same solver.  The joint update stays the default: it is the
        algorithm of paper 002; on real text it crawls as PLSI's EM does
        (``max_iter`` reached on eight of nine corpora), and ``"dn"``
        (PLSI's default) ended every such fit by ``tol``
        (``docs/real_text.md``, "JointNMF").  Only ``"joint"`` runs block
        by block (out-of-core, Dask); the others need every document at
        once and are refused there.  ``partial_fit`` runs stepwise EM of
        the joint update whatever ``solver`` is.
    init : {"random", "nndsvda", "kmeans", "custom"} or None, default=None
        Start, as for :class:`KLNMF`; a custom ``(W, H)`` is rescaled so
        that the rows of ``H`` (and, for ``"both"``, of ``W``) sum to one.
    max_iter : int or "auto", default="auto"
        Maximum number of iterations (and fold-in sweeps in ``transform``).
        ``"auto"``: 1000 for ``"cd"`` and ``"dn"``, else 200 (and 200
        fold-in sweeps), as for :class:`PLSI`.
    tol : float, default=1e-4
        {{stopping}}
    {{transform_tol}}
    {{restarts}}
    {{stepwise_em}}
    {{random_state}}
    {{verbose}}

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The topics; each row sums to one.
    embedding_ : ndarray of shape (n_samples, n_components)
        Training document factor: topic weights (``"components"``) or topic
        proportions ``P(z|d)`` (``"both"``), as ``transform`` returns them.
    loss_ : float
        Final objective (KL divergence plus the penalty).
    solver_ : str
        The solver the fit ran (``solver``): ``"joint"`` runs block by
        block and on Dask too, the others need every document at once and
        are refused there; ``partial_fit`` runs stepwise EM of the joint
        update whatever it is.
    {{kl_history}}
    {{moves_made}}
    {{features_seen}}

    See Also
    --------
    KLNMF : alternating updates, two ratios per iteration.
    PLSI : its ``solver="em"`` iterates are ``JointNMF(normalize="components")``'s.

    Examples
    --------
    {{toy_counts}}
    >>> from sklearn_topicfac import JointNMF
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
        "solver": [StrOptions({"joint", "squarem", "cd", "dn"})],
        "max_iter": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
    }

    def __init__(
        self,
        n_components=10,
        *,
        normalize="components",
        alpha=0.0,
        solver="joint",
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
        self.normalize = normalize
        self.alpha = alpha
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

    def _check_params(self):
        if self.normalize == "both" and self.alpha > 0:
            raise ValueError(
                "alpha > 0 has no effect with normalize='both' (the rows of W sum "
                "to one, so the L1 penalty is constant); use normalize='components'."
            )

    _scale_equivariant = True

    _solver_models = {"solver": JointNMFModel}

    def _solvers(self):
        return {"solver": self.solver}

    _fold_in_parameters = ("transform_tol",)

    def _build_model(self):
        return JointNMFModel(
            self.normalize,
            self.alpha,
            self._solver(),
            fold_in_iter=self._fold_in_iter(),
            fold_in_tol=self.tol,
        )
