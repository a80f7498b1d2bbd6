"""Docstring sections that several public objects share, written once.

A docstring line that holds only ``{{name}}`` is replaced, when the object is
defined (`fill_doc`), by the snippet ``name`` indented as that line: so
``help()``, Sphinx and the doctests read the whole text, and a parameter or
attribute that means the same everywhere is described the same everywhere.
"""

import re

SNIPPETS = {
    "random_state": """\
random_state : int, RandomState instance or None, default=None
    Seed of the start.""",
    "verbose": """\
verbose : int, default=0
    Print the objective and elapsed time every 10 iterations (every
    iteration if ``verbose > 1``).""",
    "stopping": """\
The fit stops once it has converged: when, at the rate of its last
tenth of iterations, as many iterations again as it has run would
change the objective by less than ``tol`` times its value (see
``sklearn_topicfac.engine.loop.stopped``); ``tol=0`` runs ``max_iter``
iterations.  How close a default fit that stops this way ends to the
objective that 10 times more iterations reach is measured in
``docs/real_text.md``.""",
    "transform_tol": """\
transform_tol : float >= 0, default=3e-3
    When the fold-in of new documents with the topics fixed (``transform``,
    ``fit_transform``'s output, ``topic_proportions``) stops refining a
    document: once the mean absolute change of its topic proportions in a
    sweep falls below ``transform_tol`` (or after the fold-in's cap of
    sweeps).  The fit, ``partial_fit``'s fold-in of a mini-batch and
    ``score``'s fold-in stop by ``tol`` and never read ``transform_tol``
    (the score chooses ``n_components``, and a looser fold-in smooths a
    model with more topics more).  The default was chosen on the corpora of
    ``docs/performance.md`` ("The fold-in's tolerance"), where it predicted
    held-out words at least as well as ``tol``'s ``1e-4`` and folded
    documents in several times faster.  A model file saved before this
    parameter existed folds in to its ``tol``, as it did.""",
    "auto_max_iter": """\
max_iter : int or "auto", default="auto"
    Maximum number of iterations of the fit.  ``"auto"``: 1000 where the
    fit runs coordinate descent or diagonal Newton (``solver_`` ``"cd"``
    or ``"dn"``, the default; in memory and block by block alike), whose
    fits on real corpora end by ``tol`` within that; else 200
    (scikit-learn's ``NMF``'s), where more multiplicative or EM iterations
    would cost time without ending the fit by ``tol`` on real text
    (``docs/real_text.md``, "Does a default fit end converged?").
    ``transform``'s fold-in runs at most ``max_iter`` sweeps (``"auto"``:
    200).""",
    "restarts": """\
n_init : int >= 1, default=1
    Number of starts of ``fit``; the fit with the lowest final objective
    is kept.  The first start is ``init``'s, the others are random draws
    (``init="random"``) continuing the generator of ``random_state``, so
    ``random_state`` changes the result whenever ``n_init > 1``.
split_merge : int >= 0, default=0
    Maximum number of split-merge moves after the fit (batch fits, in
    memory and, for an estimator that fits block by block, block-wise; an
    online ``partial_fit`` makes none); ``0``, the
    default, makes none (the iterates of the algorithm as published).  A
    move merges the two topics that cost least to merge (near duplicates,
    or an empty topic) and splits in two the topic whose documents are
    furthest from one topic (a rank-2 KL-NMF of its expected counts), then
    iterates again from there; the moves are made once the fit has roughly
    converged (at 30 times ``tol``), and a move is kept if the objective
    ends lower by more than ``30 * tol`` times its size, what that rough
    convergence resolves (``1e-6`` times at least), else undone, and the
    first move undone ends the moves.  The fit kept then runs on to
    convergence at ``tol``.  This repairs EM's
    typical local optimum --
    two classes merged into one topic, another class split in two --
    which more iterations do not leave.  Each move tried costs up to as
    many iterations again as the fit took (at least 20), and on most
    labeled corpora none was kept (measured with the former multiplicative
    and EM updates, ``docs/performance.md``, History), so they are off by
    default.  The moves made are in
    ``split_merge_moves_``.""",
    "moves_made": """\
split_merge_moves_ : list of dict
    The split-merge moves ``fit`` tried, in order: ``"merged"`` (the kept
    topic and the one merged into it, whose slot took one half of the
    split), ``"split"`` (the topic split), ``"objective_before"``,
    ``"objective_after"``, ``"accepted"`` and ``"history"`` (the
    objective at the moved topics and after every iteration of the move's
    trial, which is kept only if it ends below ``"objective_before"``).""",
    "stepwise_em": """\
learning_decay : float in (0.5, 1], default=0.7
    :meth:`partial_fit` only: exponent kappa of the step size
    ``rho_t = (learning_offset + t) ** -learning_decay`` with which the
    t-th mini-batch's statistics enter the running average.
learning_offset : float >= 1, default=10.0
    :meth:`partial_fit` only: tau_0 of the step size; larger values
    weigh the first mini-batches less.""",
    "features_seen": """\
n_features_in_ : int
    Number of features seen during fit.
feature_names_in_ : ndarray of shape (n_features_in_,)
    Names of features seen during fit, when ``X`` has string column names.""",
    "kl_history": """\
loss_history_ : ndarray of shape (n_iter_ + 1,)
    Objective at the start and after every iteration; it does not rise
    (beyond rounding).  A
    split-merge move kept counts as one iteration, to the objective its
    trial reached (the trials' own iterations are in
    ``split_merge_moves_``).
n_iter_ : int
    Number of iterations of the fit kept (a kept move counting as one).""",
    "probabilities": """\
components_ : ndarray of shape (n_components, n_features)
    ``P(w|z)``; each row sums to one.
p_z_ : ndarray of shape (n_components,)
    ``P(z)``.
p_d_given_z_ : ndarray of shape (n_samples, n_components)
    ``P(d|z)`` of the training documents; each column sums to one.""",
    "ignored_y": """\
y : Ignored
    Not used, present for API consistency.""",
    "toy_counts": """\
>>> import numpy as np
>>> X = np.array([[5, 3, 0, 0], [4, 6, 1, 0], [0, 1, 6, 4], [0, 0, 3, 5]])""",
    "criterion_arguments": """\
estimator : fitted topic model of count data, or Pipeline ending in one
    Any estimator of the package except :class:`SimplexPLSA`.
X : {array-like, sparse matrix} of shape (n_documents, n_features)
    The corpus the model was fitted on (raw documents for a pipeline that
    starts with a vectorizer).""",
    "labelings": """\
labels_true : array-like of shape (n_samples,)
    Ground-truth class labels.
labels_pred : array-like of shape (n_samples,)
    Cluster labels to evaluate.""",
    "labelings_errors": """\
Raises
------
ValueError
    If the inputs are not 1-D, are empty, or differ in length.""",
    "counts": """\
X : {array-like, sparse matrix} of shape (n_samples, n_features)
    Non-negative counts.""",
    "new_counts": """\
X : {array-like, sparse matrix} of shape (n_samples, n_features)
    Non-negative data with the features seen in ``fit``.""",
    "plot_axes": """\
ax : matplotlib Axes or None, default=None
    Where to draw; ``None`` makes a new figure.

Returns
-------
ax : matplotlib.axes.Axes""",
    "sampled_operands": """\
X : scipy.sparse CSR matrix or array of shape (n_samples, n_features)
W : ndarray of shape (n_samples, k)
H : ndarray of shape (k, n_features)""",
}

_PLACEHOLDER = re.compile(r"^(?P<indent>[ ]*)\{\{(?P<name>\w+)\}\}[ ]*$", re.MULTILINE)


def fill_doc(obj):
    """Replace the ``{{name}}`` lines of ``obj.__doc__`` by their snippets.

    Examples
    --------
    >>> from sklearn_topicfac._docstrings import fill_doc
    >>> @fill_doc
    ... def f():
    ...     '''Parameters
    ...     ----------
    ...     {{random_state}}
    ...     '''
    >>> print(f.__doc__.splitlines()[2].strip())
    random_state : int, RandomState instance or None, default=None
    """

    def expand(match):
        indent = match["indent"]
        lines = SNIPPETS[match["name"]].splitlines()
        return "\n".join(indent + line if line else line for line in lines)

    obj.__doc__ = _PLACEHOLDER.sub(expand, obj.__doc__)
    return obj
