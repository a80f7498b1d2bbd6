"""Hybrid NMF/PLSI: alternate two algorithms for one objective (Ding, Li & Peng)."""

import time
import warnings
from numbers import Integral

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval

from ._base import _BaseTopicModel, _ProbabilisticFactorsMixin
from ._klnmf import KLNMF
from ._plsi import PLSI


class HybridNMFPLSI(_ProbabilisticFactorsMixin, _BaseTopicModel):
    """Alternate KL-NMF and PLSI to convergence, each escaping the other's minimum.

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
       a whole round lowers the objective by no more than ``tol`` times the
       objective at the start (or ``n_rounds`` rounds have run).

    Each phase reuses :class:`KLNMF`'s or :class:`PLSI`'s own update steps;
    switching phase only rescales the factors (``W H`` unchanged), so the
    objective is continuous across phase boundaries and never rises from
    phase to phase.  ``phase_losses_`` records it after every phase: each
    drop after the first phase is a jump out of the previous algorithm's
    local minimum.

    ``transform`` folds new documents in with ``P(w|z)`` fixed and returns
    ``P(z|d)``, exactly as :class:`PLSI` does.

    Parameters
    ----------
    n_components : int, default=10
        Number of topics (clusters).
    init : {"kmeans", "random", "nndsvda", "custom"} or None, default=None
        Start.  ``None`` uses ``"kmeans"`` (the paper's smoothed K-means
        start; ``random_state`` seeds K-means) when
        ``n_components <= n_samples``, else ``"random"``.  ``"custom"`` takes
        ``W`` and ``H`` passed to ``fit`` (count scale, ``W @ H`` estimating
        ``X``).
    n_rounds : int, default=10
        Maximum number of NMF-then-PLSI rounds.
    max_iter : int, default=200
        Maximum number of iterations of each phase, and of the fold-in sweeps
        of ``transform``.
    tol : float, default=1e-4
        A phase stops when an iteration lowers the objective by less than
        ``tol`` times the objective at the start of the phase; the rounds stop
        when a whole round lowers it by no more than ``tol`` times the
        objective at the start of the fit.  ``tol=0`` runs ``max_iter``
        iterations per phase and ``n_rounds`` rounds.
    random_state : int, RandomState instance or None, default=None
        Seed of K-means (or of the ``"random"``/``"nndsvda"`` start).
    verbose : int, default=0
        Print one line per phase; ``verbose > 1`` also prints the phases'
        iterations.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        ``P(w|z)``; each row sums to one.
    p_z_ : ndarray of shape (n_components,)
        ``P(z)``.
    p_d_given_z_ : ndarray of shape (n_samples, n_components)
        ``P(d|z)`` of the training documents; each column sums to one.
    embedding_ : ndarray of shape (n_samples, n_components)
        ``P(z|d)`` of the training documents reached by the fit; its row-wise
        argmax is the paper's hardened clustering.
    loss_ : float
        Final objective.
    loss_history_ : ndarray of shape (n_iter_ + 1,)
        Objective at the start and after every iteration of every phase.
    phase_losses_ : ndarray of shape (2 * n_rounds_ + 1,)
        Objective at the start and after each phase: entry ``2 r + 1`` after
        the NMF phase of round ``r`` (counting from 0), entry ``2 r + 2`` after
        its PLSI phase.  Non-increasing.
    phase_n_iter_ : ndarray of shape (2 * n_rounds_,)
        Iterations run by each phase.
    n_rounds_ : int
        Number of rounds run.
    n_iter_ : int
        Total number of iterations over all phases.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when available.

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
    >>> import numpy as np
    >>> from sklearn_topicfac import HybridNMFPLSI
    >>> X = np.array([[5, 3, 0, 0], [4, 6, 1, 0], [0, 1, 6, 4], [0, 0, 3, 5]])
    >>> model = HybridNMFPLSI(n_components=2, random_state=0).fit(X)
    >>> theta = model.transform(X)              # P(z|d), rows sum to one
    >>> bool(theta.argmax(axis=1)[0] != theta.argmax(axis=1)[3])
    True
    >>> bool(np.all(np.diff(model.phase_losses_) <= 1e-9))
    True
    """

    _parameter_constraints: dict = {
        **_BaseTopicModel._parameter_constraints,
        "n_rounds": [Interval(Integral, 1, None, closed="left")],
    }

    _default_init = "kmeans"

    def __init__(
        self,
        n_components=10,
        *,
        init=None,
        n_rounds=10,
        max_iter=200,
        tol=1e-4,
        random_state=None,
        verbose=0,
    ):
        self.n_components = n_components
        self.init = init
        self.n_rounds = n_rounds
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose

    # Two algorithms in turn, each to convergence: not one map-reduce loop.
    _blockwise = False

    # The fitted parametrization is PLSI's, so is the reading of the document
    # factor as P(z|d) (with the prior P(z) for a document without words).
    _doc_output = PLSI._doc_output

    def _phases(self):
        """The two algorithms of a round, configured with this estimator's
        iteration limits; their hooks do the updates."""
        common = dict(
            n_components=self.n_components,
            max_iter=self.max_iter,
            tol=self.tol,
            verbose=max(self.verbose - 1, 0),
        )
        return (("NMF", KLNMF(**common)), ("PLSI", PLSI(**common)))

    def _fit(self, X, W=None, H=None):
        X = self._validate_X(X, reset=True)
        W, H = self._initialize(X, W, H)
        start = time.perf_counter()
        history = [self._loss(X, W, H)]
        phase_losses = [history[0]]
        phase_n_iter = []
        converged = False
        n_rounds = 0
        for n_rounds in range(1, self.n_rounds + 1):
            round_start = phase_losses[-1]
            for name, phase in self._phases():
                # Only a rescaling between parametrizations: W @ H is kept.
                W, H = phase._prepare_start(W, H)
                W, H, phase_history, n_iter, _ = phase._run_iterations(X, W, H)
                history.extend(phase_history[1:])
                phase_losses.append(phase_history[-1])
                phase_n_iter.append(n_iter)
                if self.verbose:
                    print(
                        f"[{type(self).__name__}] round {n_rounds} {name:4s} "
                        f"{n_iter:4d} iterations  objective {phase_losses[-1]:.6e}"
                        f"  ({time.perf_counter() - start:.2f} s)"
                    )
            # The fit loop's rule, on whole rounds (a rise is no convergence).
            if self._stopped([phase_losses[0], round_start, phase_losses[-1]]):
                converged = True
                break
        if not converged and self.tol > 0:
            warnings.warn(
                f"{type(self).__name__} did not converge in n_rounds={self.n_rounds} "
                f"rounds (tol={self.tol}); increase n_rounds or tol.",
                ConvergenceWarning,
                stacklevel=4,
            )
        W, H = self._prepare_start(W, H)
        self.n_iter_ = int(sum(phase_n_iter))
        self.n_rounds_ = n_rounds
        self.loss_history_ = np.asarray(history)
        self.phase_losses_ = np.asarray(phase_losses)
        self.phase_n_iter_ = np.asarray(phase_n_iter)
        self.loss_ = float(phase_losses[-1])
        self._set_fit_attributes(W, H)
        return X
