"""What a fit is asked to do: the `Plan` that `engine.fit` carries out.

A plan says where the fit starts (`Start`), how its iterations stop
(`Settings`) and what shape its run has: batch iterations with restarts
and split-merge moves (the default), online epochs over mini-batches
(``online``, a `Schedule`), or an alternation of models for one objective
(``phases``).  It is plain data, built by an estimator from its parameters;
the engine reads it and nothing else.
"""

from dataclasses import dataclass

from .loop import iteration_loop


@dataclass
class Settings:
    """How to run the iterations of a fit (from the estimator's parameters).

    ``n_init`` starts are run and the best kept; then up to ``moves``
    split-merge moves are tried.
    """

    max_iter: int
    tol: float
    verbose: int = 0
    name: str = ""
    n_init: int = 1
    moves: int = 0

    def loop(
        self, iterate, final_loss, run="fit", describe=None, history=(), min_iter=1
    ):
        """`iteration_loop` with these settings: ``(history, n_iter, converged)``.

        ``min_iter`` is the model's (`TopicModel.min_iter`).
        """
        return iteration_loop(
            iterate,
            final_loss,
            max_iter=self.max_iter,
            tol=self.tol,
            min_iter=min_iter,
            verbose=self.verbose,
            name=self.name,
            run=run,
            describe=describe,
            history=history,
        )


@dataclass
class Start:
    """Where a fit starts.

    ``init`` is resolved (`starts.resolve_init`); ``random_state`` the
    estimator's parameter (it seeds the SVD and K-means as scikit-learn
    seeds them); ``rng`` the generator that random draws continue (the
    restarts' draws too); ``W`` and ``H`` the custom start.
    """

    init: str
    k: int
    random_state: object
    rng: object
    W: object = None
    H: object = None


@dataclass
class Schedule:
    """Online learning: mini-batches and the step sizes.

    The topic step of the ``t``-th mini-batch uses :math:`\\rho_t = (\\tau_0
    + t)^{-\\kappa}` with ``tau_0 = offset`` and ``kappa = decay``; each
    mini-batch of ``n_b`` documents stands for ``total_samples / n_b`` of
    them (``None``: the number of documents of the fit).  ``batch_size``
    ``None`` makes the data given one mini-batch.
    """

    batch_size: int | None
    offset: float
    decay: float
    total_samples: float | None = None

    def step_size(self, t):
        """``rho_t = (offset + t) ** -decay``."""
        return (self.offset + t) ** -self.decay


@dataclass
class Plan:
    """A fit: its `Start`, its `Settings`, and the shape of its run.

    ``online``: a `Schedule` for online epochs over mini-batches instead of
    batch iterations (no moves).  ``phases``: ``(name, model)`` pairs run in
    turn, each to convergence, for up to ``n_rounds`` rounds
    (`engine.phases`), instead of the model's own iterations; the model
    given to `engine.fit` is then the parametrization of the start and of
    the result.  ``run_on``: when the start kept has not converged, it runs
    on up to this many iterations in all (CVB0's "starts, then the best runs
    on").
    """

    start: Start
    settings: Settings
    online: Schedule | None = None
    phases: tuple = ()
    n_rounds: int = 1
    run_on: int | None = None
