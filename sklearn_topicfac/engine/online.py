"""Online updates for ``partial_fit``: stepwise EM and online variational Bayes.

**Stepwise EM** (the NMF and PLSI family).  Each mini-batch is folded in
with the current topics, which gives its expected topic-word counts
``E_b = H * (W_b^T R_b)`` (and, for KL-NMF, the column sums of ``W_b``).
Their per-document averages enter running averages with the step size

.. math::

    \\rho_t = (\\tau_0 + t)^{-\\kappa}, \\qquad
    \\bar E \\leftarrow (1 - \\rho_t) \\bar E + \\rho_t E_b / n_b,

and the topics are the model's M-step applied to the averaged statistics
(Cappe & Moulines, 2009; Liang & Klein, 2009), which for ``kappa`` in
(0.5, 1] converges to a stationary point of the expected objective.

**Online variational Bayes** (LDA; Hoffman, Blei & Bach, 2010): each
mini-batch's E-step gives its expected counts, and the topics take a
natural-gradient step towards what the whole corpus would give if it were
made of such mini-batches.
"""

import numpy as np
from sklearn.utils import gen_batches

from .starts import gamma_draw


def step_size(offset, decay, t):
    """``rho_t = (offset + t) ** -decay``."""
    return (offset + t) ** -decay


def stepwise_em(model, X, H, averages, t, offset, decay):
    """One stepwise-EM update from the mini-batch ``X``.

    ``averages`` are the running ``(counts, w_sum)`` (``None`` for the first
    mini-batch, which sets them); ``t`` the number of mini-batches seen
    before.  Returns the new topics, the new averages and the averaged
    column sums of ``W`` (for the model's topic attributes).
    """
    X = X.astype(H.dtype, copy=False)
    model = model.for_blocks()
    n_b = max(X.shape[0], 1)
    W = model.prepare_start(model.fold_in(X, H), H)[0]
    stats = model.doc_step(X, W, H, True)[1]
    counts = model.online_counts(H, stats) / n_b
    w_sum = W.sum(axis=0) / n_b
    if averages is not None:
        rho = step_size(offset, decay, t)
        old_counts, old_w = averages
        counts = (1 - rho) * old_counts + rho * counts
        w_sum = (1 - rho) * old_w + rho * w_sum
    averages = (counts, w_sum)
    # A term not yet seen has no counts; an exact zero in the topics would
    # stay zero under the multiplicative updates however often the term
    # occurs later, so zeros are lifted to eps times the row's largest.
    lifted = np.maximum(
        counts, np.finfo(H.dtype).eps * counts.max(axis=1, keepdims=True)
    )
    H = model.online_topics(lifted, w_sum).astype(H.dtype, copy=False)
    return H, averages, lifted.sum(axis=1)


def online_vb(model, X, H, rng, t, offset, decay, batch_size, total_samples):
    """Online variational Bayes over the mini-batches of ``X``.

    ``t`` is the number of topic steps so far plus one (scikit-learn's
    ``n_batch_iter_``); the very first mini-batch's E-step starts from a
    Gamma(100, 1/100) draw of ``rng``, the others from all ones.  Each step
    weighs its mini-batch by ``total_samples / batch size``.  Returns the
    topics and the new ``t``.
    """
    for batch in gen_batches(X.shape[0], batch_size):
        Xb = X[batch]
        start = None
        if t == 1:
            start = gamma_draw(rng, (Xb.shape[0], H.shape[0]), X.dtype)
        counts = model.e_step(Xb, H, start)[2]
        rho = step_size(offset, decay, t)
        H = model.online_step(H, counts, total_samples / Xb.shape[0], rho)
        t += 1
    return H, t
