"""The iterations of a model on a runner, and the moves between parametrizations.

`run` iterates a model's map-reduce (each block's ``doc_step``, then one
``topic_step``) through the fit loop on any runner; `run_online` runs online
epochs over mini-batches; `start` puts a planned start on a runner.
"""

from dataclasses import dataclass, replace

import numpy as np
from sklearn.utils import check_random_state, gen_batches

from ..kernels import flush_subnormal
from .loop import iteration_loop
from .starts import plan_start


@dataclass
class Settings:
    """How to run the iterations of a fit (from the estimator's parameters)."""

    max_iter: int
    tol: float
    verbose: int = 0
    name: str = ""
    n_init: int = 1
    moves: int = 0

    def loop(self, iterate, final_loss, run="fit", describe=None, history=()):
        """`iteration_loop` with these settings: ``(history, n_iter, converged)``."""
        return iteration_loop(
            iterate,
            final_loss,
            max_iter=self.max_iter,
            tol=self.tol,
            verbose=self.verbose,
            name=self.name,
            run=run,
            describe=describe,
            history=history,
        )


@dataclass
class Run:
    """One run of the loop: its final topics, objective history and counts."""

    H: np.ndarray
    history: list
    n_iter: int
    converged: bool
    n_steps: int

    @property
    def loss(self):
        return self.history[-1]


def run(model, runner, H, settings, *, warm, label="fit", history=()):
    """Iterate ``model`` on ``runner`` from its states and the topics ``H``.

    ``warm`` is False when the runner's states are a fresh start (the first
    document step is then told so; see `TopicModel.doc_step`); ``history``
    is that of the run this one continues (see `iteration_loop`).
    """
    scale = None
    iteration = 0
    final = {}

    def iterate():
        # The per-topic rescaling of W, if any, is applied by the next step.
        nonlocal H, scale, iteration
        stats = runner.step(model, H, scale, warm or iteration > 0)
        iteration += 1
        loss = stats["loss"] + model.topic_loss(H)
        H, scale = model.topic_step(H, stats)
        # Subnormal entries would slow every pass over X (`flush_subnormal`);
        # they change no value of the model.
        H = flush_subnormal(H)
        return loss

    def final_loss():
        final.update(runner.finish(model, H, scale))
        return final["loss"] + model.topic_loss(H)

    history, n_iter, converged = settings.loop(
        iterate, final_loss, run=label, describe=runner.describe, history=history
    )
    return Run(H, history, n_iter, converged, n_iter)


def run_on(model, runner, previous, settings, label="fit"):
    """Continue the run ``previous`` up to ``settings.max_iter`` iterations in all.

    Returns one `Run` for both: the histories joined, the iterations and
    topic steps added up.  ``previous`` is returned as it is when it used
    up ``settings.max_iter`` already.
    """
    if previous.n_iter >= settings.max_iter:
        return previous
    rest = run(
        model,
        runner,
        previous.H,
        replace(settings, max_iter=settings.max_iter - previous.n_iter),
        warm=True,
        label=label,
        history=previous.history[:-1],
    )
    return Run(
        rest.H,
        rest.history,
        previous.n_iter + rest.n_iter,
        rest.converged,
        previous.n_steps + rest.n_steps,
    )


def start(model, runner, init, k, random_state, rng, W=None, H=None):
    """Plan the start and put it on the runner; returns the model's topics."""
    H_raw, specs = plan_start(model, runner, init, k, random_state, rng, W, H)
    runner.start(model, specs, H_raw)
    return topics_of(model, H_raw)


def start_topics(model, runner, init, k, random_state):
    """The topics of ``init``'s start on the runner's data (no documents)."""
    rng = check_random_state(random_state)
    return topics_of(model, plan_start(model, runner, init, k, random_state, rng)[0])


def topics_of(model, H_raw):
    """The model's topics for the count-scale (or the model's own) ``H_raw``."""
    empty = np.zeros((0, H_raw.shape[0]), dtype=H_raw.dtype)
    return model.prepare_start(empty, H_raw)[1]


def objective(model, runner, H):
    """The objective of the runner's states with the topics ``H`` (a pass)."""
    return runner.finish(model, H, None)["loss"] + model.topic_loss(H)


def to_phase(model, runner, H):
    """Map the runner's states and ``H`` into ``model``'s parametrization."""
    runner.map_states(model, H)
    return topics_of(model, H)


# ------------------------------------------------------------------- online
@dataclass
class Online:
    """Online learning in ``fit``: mini-batches and the step-size schedule.

    Each mini-batch's topic step uses :math:`\\rho_t = (\\tau_0 +
    t)^{-\\kappa}` with ``tau_0 = offset``, ``kappa = decay`` and ``t``
    counting the topic steps from 1 at the start.
    """

    batch_size: int
    offset: float
    decay: float


def run_online(model, runner, H, settings, online, *, label="fit"):
    """Online variational Bayes epochs over the mini-batches (in memory).

    The documents are visited in input order.  The objective reported for
    an epoch sums each mini-batch's bound with the topics it met, a free
    running estimate; the last one is exact.
    """
    X = runner.X
    n = X.shape[0]
    W = runner.rows()
    state = {"H": H, "step": 1}

    def iterate():
        H, step = state["H"], state["step"]
        loss = model.topic_loss(H)
        for batch in gen_batches(n, online.batch_size):
            W[batch], stats = model.doc_step(X[batch], W[batch], H, step > 1)
            loss += stats["loss"]
            rho = (online.offset + step) ** -online.decay
            H = model.online_step(
                H, stats["counts"], n / (batch.stop - batch.start), rho
            )
            step += 1
        state.update(H=H, step=step)
        return loss

    def final_loss():
        return model.doc_loss(X, W, state["H"]) + model.topic_loss(state["H"])

    history, n_iter, converged = settings.loop(iterate, final_loss, run=label)
    runner.restore([runner.source.block.sort(W)])
    return Run(state["H"], history, n_iter, converged, state["step"] - 1)
