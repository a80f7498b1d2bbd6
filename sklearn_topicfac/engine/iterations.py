"""The iterations of a model on a runner, and the moves between parametrizations.

`run` iterates a model's map-reduce (each block's ``doc_step``, then one
``topic_step``) through the fit loop on any runner; `start` puts a planned
start on a runner (online epochs: `engine.online`).
"""

from dataclasses import dataclass, replace

import numpy as np
from sklearn.utils import check_random_state

from ..kernels import flush_subnormal
from ..models._base import Check
from .starts import plan_start, random_start


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
        update = model.topic_step(H, stats)
        if isinstance(update, Check):
            # The topics' update needs one more (read-only) pass.
            update = model.settle(H, stats, update, runner.check(model, H, update))
        H, scale = update
        # Subnormal entries would slow every pass over X (`flush_subnormal`);
        # they change no value of the model.
        H = flush_subnormal(H)
        return loss

    def final_loss():
        final.update(runner.finish(model, H, scale))
        return final["loss"] + model.topic_loss(H)

    history, n_iter, converged = settings.loop(
        iterate,
        final_loss,
        run=label,
        describe=runner.describe,
        history=history,
        min_iter=model.min_iter,
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


def start(model, runner, start):
    """Plan the `plan.Start` and put it on the runner; returns the model's topics."""
    H_raw, specs = plan_start(
        model,
        runner,
        start.init,
        start.k,
        start.random_state,
        start.rng,
        start.W,
        start.H,
    )
    runner.start(model, specs, H_raw)
    return topics_of(model, H_raw)


def restart(model, runner, k, rng):
    """A random start continuing ``rng`` on the runner (a restart of ``n_init``)."""
    H_raw, specs = random_start(model, runner, k, rng)
    runner.start(model, specs, H_raw)
    return topics_of(model, H_raw)


def start_topics(model, runner, start):
    """The topics of a `plan.Start` on the runner's data, for online learning.

    No document factor is kept.  A random start draws the topics only where
    the model draws them first (the documents' draws that would follow are
    left to the generator, as the online documents' starts); a model whose
    documents are drawn first has them drawn (and dropped) before its topics.
    """
    rng = check_random_state(start.rng)
    if start.init == "random":
        H_raw = random_start(model, runner, start.k, rng, documents=False)[0]
    else:
        H_raw = plan_start(model, runner, start.init, start.k, start.random_state, rng)[
            0
        ]
    return topics_of(model, H_raw)


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
