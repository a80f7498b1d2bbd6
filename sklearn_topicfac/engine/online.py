"""Online learning: one engine for ``fit``'s online epochs and ``partial_fit``.

Each mini-batch of documents takes the model's document step with the
current topics, then the model's online topic step
(`TopicModel.online_update`) with the step size

.. math::

    \\rho_t = (\\tau_0 + t)^{-\\kappa}

of a `Schedule`.  What the step is belongs to the model: stepwise EM for the
NMF and PLSI family (running averages of the mini-batches' expected counts,
then the M-step; Cappe & Moulines, 2009), the stochastic natural-gradient
step of online variational Bayes for LDA (Hoffman, Blei & Bach, 2010).

- `online_batches` runs the mini-batches of one row block, in input order:
  the documents' factor is either kept (``fit``'s epochs, where every
  document has one) or started afresh by the model
  (`TopicModel.online_documents`: ``partial_fit``'s new documents);
- `run_epochs` runs epochs over every block of a runner (in memory,
  out-of-core, on Dask), through the fit loop;
- `partial_fit` runs the mini-batches of new documents.
"""

import numpy as np
from sklearn.utils import gen_batches

from ..kernels import keep_freed_memory
from .iterations import Run


def online_batches(model, X, W, H, state, schedule, t, n_total, *, rng, fresh, loss):
    """The online steps of the mini-batches of the rows ``X``, in order.

    ``W`` is the rows' document factor, updated in place (``None``: new
    documents, each mini-batch started by ``model.online_documents``);
    ``t`` the number of the first mini-batch's step; ``fresh`` whether no
    online step has been taken yet; ``loss`` the running objective the
    mini-batches' objectives are added to.  Returns ``(H, state, t, loss,
    topic_mass)`` after the last mini-batch.
    """
    n = X.shape[0]
    mass = None
    for batch in gen_batches(n, schedule.batch_size or max(n, 1)):
        Xb = X[batch]
        if W is None:
            Wb, warm = model.online_documents(Xb, H, rng, fresh)
        else:
            Wb, warm = W[batch], not fresh
        Wb_new, stats = model.doc_step(Xb, Wb, H, warm)
        loss += stats["loss"]
        H, state, mass = model.online_update(
            H, Wb, stats, state, schedule.step_size(t), Xb.shape[0], n_total
        )
        if W is not None:
            W[batch] = Wb_new
        t += 1
        fresh = False
    return H, state, t, loss, mass


def run_epochs(model, runner, H, settings, schedule, *, label="fit"):
    """Online epochs over the mini-batches of every block of ``runner``.

    The runner's states are the documents' factor (from the start); the
    documents are visited block by block, in input order within a block.
    The objective reported for an epoch sums each mini-batch's objective
    with the topics it met, a free running estimate; the last one is exact
    (a pass with the final topics).  Returns a `Run` whose ``n_steps`` is
    the number of online steps taken.
    """
    n_total = (
        runner.shape[0] if schedule.total_samples is None else (schedule.total_samples)
    )
    carry = {"H": H, "state": None, "t": 1}

    def iterate():
        H, state, t = carry["H"], carry["state"], carry["t"]
        # The first mini-batch of the fit meets the documents' start.
        H, state, t, loss, _ = runner.online_epoch(
            model, (H, state, t, model.topic_loss(H), t == 1), schedule, n_total
        )
        carry.update(H=H, state=state, t=t)
        return loss

    def final_loss():
        return runner.finish(model, carry["H"], None)["loss"] + model.topic_loss(
            carry["H"]
        )

    history, n_iter, converged = settings.loop(
        iterate,
        final_loss,
        run=label,
        describe=runner.describe,
        min_iter=model.min_iter,
    )
    return Run(carry["H"], history, n_iter, converged, carry["t"] - 1)


def partial_fit(model, X, H, state, schedule, t, *, rng, fresh):
    """The online steps of the new documents ``X`` (``partial_fit``).

    ``H`` and ``state`` are the topics and the model's running state so far,
    ``t`` the number of the first mini-batch's step, ``fresh`` whether no
    step has been taken yet, ``rng`` the generator of documents' starts
    that are drawn.  Returns ``(H, state, t, topic_mass)``.
    """
    keep_freed_memory()
    model = model.for_online()
    X = X.astype(H.dtype, copy=False)
    n_total = X.shape[0] if schedule.total_samples is None else schedule.total_samples
    H, state, t, _, mass = online_batches(
        model, X, None, H, state, schedule, t, n_total, rng=rng, fresh=fresh, loss=0.0
    )
    return H, state, t, mass


def online_task(model, block, W, carry, schedule, n_total):
    """A block's mini-batches in an online epoch, in input order.

    ``W`` is the block's document factor (sorted order); ``carry`` the
    ``(H, state, t, loss, fresh)`` the previous block left.  Returns the
    block's new factor (sorted order) and the carry for the next block.
    """
    H, state, t, loss, fresh = carry
    X = block.X
    if block.order is not None:
        inverse = np.empty_like(block.order)
        inverse[block.order] = np.arange(block.order.size)
        X = X[inverse]
    W = np.array(block.unsort(W))
    H, state, t, loss, _ = online_batches(
        model, X, W, H, state, schedule, t, n_total, rng=None, fresh=fresh, loss=loss
    )
    return block.sort(W), (H, state, t, loss, False)
