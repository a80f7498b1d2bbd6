"""Hybrid NMF/PLSI: alternate two algorithms for one objective (Ding, Li & Peng)."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._docstrings import fill_doc
from ..models import KLNMFModel, PLSIModel
from . import _state
from ._base import TopicFactorization, resolve_solver


@fill_doc
class HybridNMFPLSI(TopicFactorization):
    """Alternate KL-NMF and PLSI phases, each to convergence (Ding, Li & Peng).

    NMF (Lee & Seung's multiplicative updates) and PLSI (Hofmann's EM)
    minimize the same objective, the generalized KL divergence

    .. math::

        D(X \\| W H) = \\sum_{dw} X_{dw} \\log \\frac{X_{dw}}{(WH)_{dw}}
                      - X_{dw} + (WH)_{dw},

    with ``W H = D diag(s) C`` and ``C = P(w|z)``, ``s / N = P(z)``,
    ``D = P(d|z)`` (Ding, Li & Peng, 2006, Propositions 1-3).  They are
    different algorithms, though, and stop at different local minima from
    the same start.  The hybrid algorithm of that paper exploits this:

    1. start from a smoothed K-means clustering (``init="kmeans"``:
       assignment indicator plus 0.2, cluster centroids, normalized);
    2. repeat rounds of *NMF to convergence, then PLSI to convergence* until
       the rounds have converged by the fit loop's rule applied to the
       objective after each whole round (see ``tol``), or ``n_rounds``
       rounds have run.

    Each phase reuses :class:`KLNMF`'s or :class:`PLSI`'s own update steps;
    switching phase only rescales the factors (``W H`` unchanged), so the
    objective is continuous across phase boundaries and never rises from
    phase to phase.  ``phase_losses_`` records it after every phase: with
    the paper's algorithms (``nmf_solver="mu", plsi_solver="em"``) each
    drop after the first phase is the other algorithm going on from where
    the previous one stopped -- which the paper reads as a jump out of a
    local minimum, and which on real corpora was mostly the slow descent
    the previous phase's stopping rule had paused
    (``docs/paper001_clustering.md``).  The default solvers run diagonal
    Newton in both phases, and PLSI's diagonal Newton iterations give
    KL-NMF's ``W H`` (see :class:`PLSI`): there a later phase continues
    the same iterations past the previous phase's stopping rule, rather
    than switching algorithm.

    ``transform`` folds new documents in with ``P(w|z)`` fixed and returns
    ``P(z|d)``, exactly as :class:`PLSI` does.

    Parameters
    ----------
    n_components : int or "auto", default=10
        Number of topics (clusters).
        ``"auto"``: as scikit-learn's ``NMF``, the number of rows of the
        ``H`` passed to ``fit`` with ``init="custom"``, else ``n_features``.
    init : {"kmeans", "random", "nndsvda", "custom"} or None, default=None
        Start.  ``None`` uses ``"kmeans"`` (the paper's smoothed K-means
        start; ``random_state`` seeds K-means) when
        ``n_components <= n_samples``, else ``"random"``.  ``"custom"`` takes
        ``W`` and ``H`` passed to ``fit`` (count scale, ``W @ H`` estimating
        ``X``).
    n_rounds : int, default=10
        Maximum number of NMF-then-PLSI rounds.
    nmf_solver : {"auto", "cd", "dn", "mu"}, default="auto"
        The NMF phase's solver (see :class:`KLNMF`; ``"auto"``: ``"dn"``).
    plsi_solver : {"auto", "cd", "dn", "em", "squarem"}, default="auto"
        The PLSI phase's solver (see :class:`PLSI`; ``"auto"``: as for
        ``nmf_solver``).  The paper's algorithm is ``nmf_solver="mu",
        plsi_solver="em"`` (the former defaults): its fits ran out of
        ``n_rounds`` with a ``ConvergenceWarning`` on six of the nine real
        corpora measured, where diagonal Newton's ended converged on all
        nine, at a lower objective (``docs/real_text.md``, "Does a default
        fit end converged?" and History).
        The fitted ``nmf_solver_`` and ``plsi_solver_`` say which ran.
    max_iter : int, default=200
        Maximum number of iterations of each phase, and of the fold-in sweeps
        of ``transform``.
    tol : float, default=1e-4
        A phase stops by the fit loop's rule: when, at the rate of its last
        tenth of iterations, as many iterations again would lower the
        objective by less than ``tol`` times its value.  The rounds stop by
        the same rule applied to whole rounds.  ``tol=0`` runs ``max_iter``
        iterations per phase and ``n_rounds`` rounds.
    {{transform_tol}}
    {{restarts}}
    random_state : int, RandomState instance or None, default=None
        Seed of K-means (or of the ``"random"``/``"nndsvda"`` start).
    verbose : int, default=0
        Print one line per phase; ``verbose > 1`` also prints the phases'
        iterations.

    Attributes
    ----------
    {{probabilities}}
    embedding_ : ndarray of shape (n_samples, n_components)
        ``P(z|d)`` of the training documents reached by the fit; its row-wise
        argmax is the paper's hardened clustering.
    loss_ : float
        Final objective.
    loss_history_ : ndarray of shape (n_iter_ + 1,)
        Objective at the start and after every iteration of every phase,
        then after each split-merge move kept (one entry each: the
        objective its trial reached; the trials' iterations are in
        ``split_merge_moves_``) and every iteration run on after them.
    phase_losses_ : ndarray of shape (2 * n_rounds_ + 1,)
        Objective at the start and after each phase: entry ``2 r + 1`` after
        the NMF phase of round ``r`` (counting from 0), entry ``2 r + 2`` after
        its PLSI phase.  Non-increasing.
    phase_n_iter_ : ndarray of shape (2 * n_rounds_,)
        Iterations run by each phase.
    n_rounds_ : int
        Number of rounds run.
    nmf_solver_, plsi_solver_ : str
        The phases' solvers (``"auto"`` resolved).
    n_iter_ : int
        Total number of iterations over all phases (plus one per kept move
        and the iterations after them).
    {{moves_made}}
    {{features_seen}}

    See Also
    --------
    KLNMF : the NMF phase on its own.
    PLSI : the PLSI phase on its own.

    Notes
    -----
    In Ding, Li & Peng's Table 3 the hybrid improves clustering accuracy over
    NMF-only and PLSI-only on all five corpora.  What the algorithm
    guarantees is weaker: its final objective is no higher than that of its
    own first phase (NMF-only from the same start).  A lower objective need
    not mean a better clustering; ``docs/paper001_clustering.md`` reports
    what we measured.

    References
    ----------
    C. Ding, T. Li and W. Peng, "Nonnegative matrix factorization and
    probabilistic latent semantic indexing: equivalence, chi-square statistic,
    and a hybrid method", AAAI 2006.

    Examples
    --------
    {{toy_counts}}
    >>> from sklearn_topicfac import HybridNMFPLSI
    >>> model = HybridNMFPLSI(n_components=2, random_state=0).fit(X)
    >>> theta = model.transform(X)              # P(z|d), rows sum to one
    >>> bool(theta.argmax(axis=1)[0] != theta.argmax(axis=1)[3])
    True
    >>> bool(np.all(np.diff(model.phase_losses_) <= 1e-9))
    True
    """

    _parameter_constraints: dict = {
        **TopicFactorization._parameter_constraints,
        "n_components": [
            Interval(Integral, 1, None, closed="left"),
            StrOptions({"auto"}),
        ],
        "n_rounds": [Interval(Integral, 1, None, closed="left")],
        "transform_tol": [Interval(Real, 0, None, closed="left")],
        "nmf_solver": [StrOptions({"auto", "cd", "dn", "mu"})],
        "plsi_solver": [StrOptions({"auto", "cd", "dn", "em", "squarem"})],
    }

    _default_init = "kmeans"

    def __init__(
        self,
        n_components=10,
        *,
        init=None,
        n_rounds=10,
        nmf_solver="auto",
        plsi_solver="auto",
        max_iter=200,
        tol=1e-4,
        transform_tol=3e-3,
        n_init=1,
        split_merge=0,
        random_state=None,
        verbose=0,
    ):
        self.n_components = n_components
        self.init = init
        self.n_rounds = n_rounds
        self.nmf_solver = nmf_solver
        self.plsi_solver = plsi_solver
        self.max_iter = max_iter
        self.tol = tol
        self.transform_tol = transform_tol
        self.n_init = n_init
        self.split_merge = split_merge
        self.random_state = random_state
        self.verbose = verbose

    # Two algorithms in turn, each to convergence: not one map-reduce loop
    # from one start (the phases would run block-wise, but the default
    # K-means start needs the whole matrix).
    _blockwise = False
    # The rounds are what stops the fit (and what a ConvergenceWarning names).
    _iteration_limit = "n_rounds"
    _scale_equivariant = True
    _objective_attributes = ("phase_losses_",)
    _fitted_state = {
        **_state.FACTORIZATION_STATE,
        **_state.PROBABILISTIC_STATE,
        "n_rounds_": _state.Scalar(integral=True, low=0),
        "phase_losses_": _state.Array((None,), values="finite"),
        "phase_n_iter_": _state.Array((None,), integer=True),
    }

    _fold_in_parameters = ("transform_tol",)

    def _build_model(self):
        # The fitted parametrization is PLSI's, so are the fold-in and the
        # reading of the document factor as P(z|d).
        return PLSIModel(fold_in_iter=self.max_iter, fold_in_tol=self.tol)

    def _phases(self):
        """The two algorithms of a round."""
        fold_in = dict(fold_in_iter=self.max_iter, fold_in_tol=self.tol)
        return (
            ("NMF", KLNMFModel(self._solver("nmf_solver"), **fold_in)),
            ("PLSI", PLSIModel(solver=self._solver("plsi_solver"), **fold_in)),
        )

    _solver_models = {"nmf_solver": KLNMFModel, "plsi_solver": PLSIModel}

    def _solvers(self):
        return {
            "nmf_solver": resolve_solver(self.nmf_solver),
            "plsi_solver": resolve_solver(self.plsi_solver),
        }

    def _run_shape(self):
        return {"phases": self._phases(), "n_rounds": self.n_rounds}

    def _fit_engine(self, runner, W, H):
        result = super()._fit_engine(runner, W, H)
        alternation = result.alternation
        self.n_rounds_ = alternation.n_rounds
        self.phase_losses_ = np.asarray(alternation.phase_losses)
        self.phase_n_iter_ = np.asarray(alternation.phase_n_iter)
        return result
