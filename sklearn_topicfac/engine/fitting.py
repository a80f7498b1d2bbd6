"""Fitting a model: `fit` carries out a `plan.Plan` on a runner.

`fit` is what every estimator's ``fit`` calls, whatever the data source:
it puts the plan's start on the runner (`engine.starts`), runs the
iterations the plan asks for (the model's batch iterations,
`engine.iterations`; online epochs, `engine.online`; or an alternation of
models, `engine.phases`), keeps the best of ``n_init`` starts, makes the
split-merge moves (`engine.moves`) of models that offer them, and returns a
`FitResult` with every record of the run.
"""

from dataclasses import dataclass, field, replace

from .._config import config_context, get_config
from ..kernels import keep_freed_memory, preload, thread_budget
from .iterations import Run, restart, run, run_on, start
from .moves import split_merge
from .online import run_epochs
from .phases import alternate
from .runners import InMemoryRunner

# With split-merge moves, the starts and the moves run to this many times
# ``tol`` before the fit kept runs on to ``tol`` (see `fit`).
COARSE = 30


@dataclass
class FitResult:
    """What a fit gives the estimator.

    ``W`` is the final document factor in input order; ``n_steps`` the
    number of topic steps of the runs that led to the result (the start's
    and the kept moves'); ``moves`` the split-merge moves tried; ``start``
    the index of the start kept (of ``n_init``); ``alternation`` the
    `phases.Alternation` of the start kept (a plan with phases), else
    ``None``; ``model`` the model fitted.
    """

    W: object
    H: object
    history: list
    n_iter: int
    converged: bool
    n_steps: int
    moves: list = field(default_factory=list)
    start: int = 0
    alternation: object = None
    model: object = None


def fit(model, runner, plan):
    """Carry out the `plan.Plan` ``plan`` for ``model`` on ``runner``.

    The first start is the plan's, the others (``n_init > 1``) random draws
    continuing its generator; the run with the lowest final objective is
    kept, then the moves are made.  Returns a `FitResult`.

    With moves, the starts run to a coarse convergence (``COARSE`` times
    ``tol``), the moves are made from there, and the fit kept is then run on
    to convergence at ``tol`` (within ``max_iter`` iterations in all).  A
    move pays off quickly from a roughly converged state; from a tightly
    converged one the same move often needs as many iterations again as the
    fit took (measured in ``docs/real_text.md``).
    """
    fitted = model
    if plan.online is not None:
        model = model.for_online()
    elif not isinstance(runner, InMemoryRunner):
        # A block's document step sees some of the documents only: the
        # solver's map-reduce form, or an error for one that has none.
        model = model.for_blocks()
    settings = final = plan.settings
    moving = bool(settings.moves and model.moves and plan.online is None)
    if moving:
        settings = replace(settings, tol=settings.tol * COARSE)
    keep_freed_memory()
    # The configuration (the backend) is read once, now: every kernel call
    # of the fit runs with it, here and on the Dask workers (the runner's
    # tasks carry it, `with_config`).
    with config_context(**get_config()), thread_budget():
        if plan.online is None and isinstance(runner, InMemoryRunner):
            # The fit's kernel calls run over all of X: if they run the
            # compiled twins, load them while the start is computed.
            preload(runner.X.nnz * plan.start.k)
        best = best_states = best_record = None
        for index in range(settings.n_init):
            if index == 0:
                H0 = start(model, runner, plan.start)
            else:
                H0 = restart(model, runner, plan.start.k, plan.start.rng)
            label = "fit" if settings.n_init == 1 else f"start {index + 1}"
            result, record = _run(model, runner, H0, settings, plan, label)
            if settings.verbose and settings.n_init > 1:
                print(
                    f"{settings.name} start {index + 1}/{settings.n_init}: "
                    f"objective {result.loss:.6e}"
                )
            if best is None or result.loss < best.loss:
                best, best_states, kept = result, runner.snapshot(), index
                best_record = record
        runner.restore(best_states)
        if plan.run_on and not best.converged:
            best = run_on(model, runner, best, replace(settings, max_iter=plan.run_on))
        n_steps = best.n_steps
        moves = []
        if moving:
            started = best
            best, n_moved, moves = split_merge(
                model, runner, best, settings, plan.start.rng
            )
            polished = run_on(model, runner, best, final, label="fit")
            n_steps += n_moved + polished.n_steps - best.n_steps
            if best is not started:
                n_trial = len(best.history)
                polished = through_the_moves(started, moves, polished, n_trial)
            best = polished
        W = runner.rows()
    return FitResult(
        W,
        best.H,
        best.history,
        best.n_iter,
        best.converged,
        n_steps,
        moves,
        kept,
        best_record,
        fitted,
    )


def _run(model, runner, H0, settings, plan, label):
    """One start's run as the plan shapes it: ``(Run, its record or None)``."""
    if plan.phases:
        record = alternate(
            plan.phases, model, runner, H0, settings, plan.n_rounds, label
        )
        n_iter = sum(record.phase_n_iter)
        return Run(record.H, record.history, n_iter, record.converged, n_iter), record
    if plan.online is not None:
        return run_epochs(model, runner, H0, settings, plan.online, label=label), None
    return run(model, runner, H0, settings, warm=False, label=label), None


def through_the_moves(started, moves, polished, n_trial):
    """One history of a fit whose moves changed its topics: a `Run`.

    The fit's path is the run of its start (from the objective at the
    start), then each kept move as one step (to the objective its trial
    reached), then the iterations the fit kept ran on with after the last
    kept move: ``polished`` continues that move's trial, whose history has
    ``n_trial`` entries.  The trials' own iterations are not the fit's path:
    each move records its trial's history itself.  The objective never rises
    along this path (a move is kept only if its trial ends lower), and
    ``n_iter`` counts its steps.
    """
    kept = [move["objective_after"] for move in moves if move["accepted"]]
    history = [*started.history, *kept[:-1], *polished.history[n_trial - 1 :]]
    return Run(
        polished.H, history, len(history) - 1, polished.converged, polished.n_steps
    )
