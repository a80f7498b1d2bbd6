"""Phase alternation: two algorithms for one objective, each to convergence.

The hybrid of Ding, Li & Peng runs rounds of *one model's iterations to
convergence, then the other's*, until the rounds have converged by the fit
loop's rule (`loop.stopped` on the objectives after whole rounds).  Switching phase
only maps the state into the next model's parametrization (``W @ H`` is
kept), so the objective is continuous across phases.  The phases run on any
runner, with the fit loop of `engine.iterations`.
"""

from dataclasses import dataclass
from time import perf_counter

from .iterations import objective, run, to_phase
from .loop import stopped
from .plan import Settings


@dataclass
class Alternation:
    """The record of an alternation: objectives, iterations, rounds."""

    H: object
    history: list
    phase_losses: list
    phase_n_iter: list
    n_rounds: int
    converged: bool


def alternate(phases, model, runner, H, settings, n_rounds, label="fit"):
    """Alternate ``phases`` (``(name, model)`` pairs) from the runner's states.

    ``model`` is the parametrization of the start and of the result (the
    state is mapped into it at the end).  Each phase runs with
    ``settings.max_iter`` and ``settings.tol`` and prints its iterations
    when ``settings.verbose > 1``; one line per phase when
    ``settings.verbose``.  The runs are labelled ``"round 1 NMF"``... (after
    ``label``, e.g. ``"start 2 round 1 NMF"``, when it is not ``"fit"``).
    Returns an `Alternation`.
    """
    started = perf_counter()
    history = [objective(model, runner, H)]
    phase_losses = [history[0]]
    phase_n_iter = []
    converged = False
    rounds = 0
    for rounds in range(1, n_rounds + 1):
        for name, phase in phases:
            phase_settings = Settings(
                max_iter=settings.max_iter,
                tol=settings.tol,
                verbose=max(settings.verbose - 1, 0),
                name=type(phase).__name__.removesuffix("Model"),
            )
            H = to_phase(phase, runner, H)
            result = run(
                phase,
                runner,
                H,
                phase_settings,
                warm=True,
                label=("" if label == "fit" else f"{label} ")
                + f"round {rounds} {name}",
            )
            H = result.H
            history.extend(result.history[1:])
            phase_losses.append(result.loss)
            phase_n_iter.append(result.n_iter)
            if settings.verbose:
                print(
                    f"[{settings.name}] round {rounds} {name:4s} "
                    f"{result.n_iter:4d} iterations  objective {phase_losses[-1]:.6e}"
                    f"  ({perf_counter() - started:.2f} s)"
                )
        # The fit loop's rule on the objectives after whole rounds (a rise is
        # no convergence).
        if stopped(phase_losses[:: len(phases)], settings.tol):
            converged = True
            break
    H = to_phase(model, runner, H)
    return Alternation(H, history, phase_losses, phase_n_iter, rounds, converged)
