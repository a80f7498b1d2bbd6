"""Fitting a model: starts, the iterations on a runner, restarts and moves.

`fit` is what every estimator's ``fit`` calls, whatever the data source:
it plans the start (`engine.starts`), runs the iterations
(`engine.iterations`) on the runner, keeps the best of ``n_init`` starts,
makes the split-merge moves (`engine.moves`) of models that offer them, and
returns a `FitResult`.
"""

from dataclasses import dataclass, field

import numpy as np

from ..kernels import thread_budget
from .iterations import run, run_online, start, topics_of
from .moves import split_merge
from .starts import random_start


@dataclass
class FitResult:
    """What a fit gives the estimator.

    ``W`` is the final document factor in input order; ``n_steps`` the
    number of topic steps of the runs that led to the result (the start's
    and the kept moves'); ``moves`` the split-merge moves tried.
    """

    W: np.ndarray
    H: np.ndarray
    history: list
    n_iter: int
    converged: bool
    n_steps: int
    moves: list = field(default_factory=list)


def fit(
    model, runner, settings, *, init, k, random_state, rng, W=None, H=None, online=None
):
    """Fit ``model`` on the data of ``runner``; returns a `FitResult`.

    The first start is ``init``'s (with the custom ``W``, ``H``), the
    others (``settings.n_init > 1``) random draws continuing ``rng``; the
    run with the lowest final objective is kept, then the moves are made.
    With ``online`` (an `Online`), the iterations are online epochs over
    mini-batches (in memory; no moves).
    """
    with thread_budget():
        best = best_states = None
        for index in range(settings.n_init):
            if index == 0:
                H0 = start(model, runner, init, k, random_state, rng, W, H)
            else:
                H_raw, specs = random_start(model, runner, k, rng)
                runner.start(model, specs, H_raw)
                H0 = topics_of(model, H_raw)
            label = "fit" if settings.n_init == 1 else f"start {index + 1}"
            if online is None:
                result = run(model, runner, H0, settings, warm=False, label=label)
            else:
                result = run_online(model, runner, H0, settings, online, label=label)
            if settings.verbose and settings.n_init > 1:
                print(
                    f"{settings.name} start {index + 1}/{settings.n_init}: "
                    f"objective {result.loss:.6e}"
                )
            if best is None or result.loss < best.loss:
                best, best_states = result, runner.snapshot()
        runner.restore(best_states)
        n_steps = best.n_steps
        moves = []
        if settings.moves and model.moves and online is None:
            best, n_moved, moves = split_merge(model, runner, best, settings, rng)
            n_steps += n_moved
        W = runner.rows()
    return FitResult(
        W, best.H, best.history, best.n_iter, best.converged, n_steps, moves
    )
