"""The one fit loop: iterate until convergence or ``max_iter``, report progress.

Every fit of the package -- in memory, out-of-core, on Dask, each start of
``n_init``, each split-merge trial, each phase of the hybrid -- runs its
iterations through `iteration_loop`.  Progress reaches the outside through
one channel: the functions installed with `fit_callback`, called after every
iteration with an `IterationInfo` (the ``verbose`` lines are printed by the
loop itself).
"""

import contextvars
import time
from contextlib import contextmanager
from typing import NamedTuple

import numpy as np

# How far an objective may rise, relative to the start's, from rounding
# alone: 50 float32 machine epsilons (an objective evaluated from float32
# factors carries a few eps of relative error per term; see the property
# test in tests/test_robustness.py).
ROUNDING = 50 * float(np.finfo(np.float32).eps)


class IterationInfo(NamedTuple):
    """What a fit callback is told after every iteration.

    Attributes
    ----------
    estimator : str
        The estimator's class name (or the phase's, for the hybrid).
    run : str
        Which run of the fit: ``"fit"``, ``"start 2"``, ``"move 1"``,
        ``"round 1 NMF"``...
    iteration : int
        Iterations completed in this run (from 1).
    max_iter : int
        The run's iteration limit.
    objective : float
        Objective of the state the iteration started from.
    seconds : float
        Time since the run started.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_topicfac import PLSI, fit_callback
    >>> X = np.array([[5, 3, 0, 0], [4, 6, 1, 0], [0, 1, 6, 4], [0, 0, 3, 5]])
    >>> runs = set()
    >>> with fit_callback(lambda info: runs.add(info.run)):
    ...     model = PLSI(n_components=2, n_init=2, max_iter=3, random_state=0).fit(X)
    >>> sorted(runs)
    ['start 1', 'start 2']
    """

    estimator: str
    run: str
    iteration: int
    max_iter: int
    objective: float
    seconds: float


_CALLBACKS = contextvars.ContextVar("sklearn_topicfac_fit_callbacks", default=())


@contextmanager
def fit_callback(function):
    """Call ``function(info)`` after every iteration of the fits in this context.

    ``info`` is an `IterationInfo`.  Works through pipelines, grid searches
    and block-wise fits, since it needs no access to the estimator.

    Parameters
    ----------
    function : callable
        Called with one `IterationInfo` per iteration.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_topicfac import PLSI, fit_callback
    >>> X = np.array([[5, 3, 0, 0], [4, 6, 1, 0], [0, 1, 6, 4], [0, 0, 3, 5]])
    >>> seen = []
    >>> with fit_callback(seen.append):
    ...     model = PLSI(n_components=2, max_iter=5, tol=0).fit(X)
    >>> [info.iteration for info in seen]
    [1, 2, 3, 4, 5]
    """
    token = _CALLBACKS.set((*_CALLBACKS.get(), function))
    try:
        yield
    finally:
        _CALLBACKS.reset(token)


@contextmanager
def silent():
    """No fit callback in this context (for fits that are a step of another)."""
    token = _CALLBACKS.set(())
    try:
        yield
    finally:
        _CALLBACKS.reset(token)


def stopped(history, tol):
    """Whether the fit has converged: more iterations would gain less than ``tol``.

    ``history`` holds the objective of the start and after every completed
    iteration.  The fit has converged when, at the rate of its recent
    iterations (the last tenth of them, at least one), running as many
    iterations again as it has run would lower the objective by at most
    ``tol`` times its current value:

    .. math::

        \\frac{L_{t-w} - L_t}{w} \\, t \\le \\mathrm{tol} \\, |L_t|,
        \\qquad w = \\max(1, \\lfloor t / 10 \\rfloor).

    A rule on the last decrease alone (``L_{t-1} - L_t <= tol |L_0|``) stops
    the slow tails of multiplicative and EM updates far from where they
    are heading, well above the objective that more iterations reach
    (measured in ``docs/real_text.md``).  Extrapolating over the
    iterations run so far asks for more the longer a fit has crawled.

    The objective never rises in exact arithmetic; a rise larger than
    rounding (`ROUNDING` times the start's objective) is never taken for
    convergence: the fit goes on, and warns if it reaches ``max_iter``.
    """
    t = len(history) - 1
    if t < 1 or tol <= 0:
        return False
    noise = ROUNDING * abs(history[0])
    if history[-2] - history[-1] < -noise:
        return False
    window = max(1, t // 10)
    gain = history[-1 - window] - history[-1]
    return -noise <= gain and gain / window * t <= tol * abs(history[-1])


def iteration_loop(
    iterate,
    final_loss,
    *,
    max_iter,
    tol,
    min_iter=1,
    verbose=0,
    name="",
    run="fit",
    describe=None,
    history=(),
):
    """``iterate()`` until convergence or ``max_iter``.

    ``iterate()`` runs one iteration and returns the objective of the state
    it started from; ``final_loss()`` gives the objective of the last state.
    Prints the ``verbose`` progress lines (``describe()`` adds to them),
    calls the `fit_callback` functions, and returns ``(history, n_iter,
    converged)``; ``history`` holds the objective of the start and after
    every iteration.  The stopping rule is consulted from iteration
    ``min_iter`` of the whole fit on.  A run that continues another passes the other's
    ``history`` (without its last entry, the objective this run starts
    from): the stopping rule then judges the whole fit, and the history
    returned is the whole fit's.
    """
    start = time.perf_counter()
    callbacks = _CALLBACKS.get()
    extra = (lambda: f", {describe()}") if describe else (lambda: "")
    history = list(history)
    converged = False
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        loss = iterate()
        history.append(loss)
        seconds = time.perf_counter() - start
        if verbose and (verbose > 1 or n_iter % 10 == 1):
            print(
                f"[{name}] iteration {n_iter - 1:4d}  objective {loss:.6e}  "
                f"({seconds:.2f} s{extra()})"
            )
        if callbacks:
            info = IterationInfo(name, run, n_iter, max_iter, float(loss), seconds)
            for function in callbacks:
                function(info)
        if not np.isfinite(loss):
            # Only a trial state (a split-merge move) can get here: the run
            # ends, unconverged, and the move is undone.
            break
        if len(history) >= min_iter and stopped(history, tol):
            converged = True
            break
    history.append(final_loss())
    if verbose:
        print(
            f"[{name}] {'converged' if converged else 'stopped'} "
            f"after {n_iter} iterations, objective {history[-1]:.6e} "
            f"({time.perf_counter() - start:.2f} s)"
        )
    return history, n_iter, converged
