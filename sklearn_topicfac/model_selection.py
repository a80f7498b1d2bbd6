"""Choosing the number of topics: stability, held-out likelihood, AIC and BIC.

Two questions, and the information criteria:

- **Which k finds the document groups?** -- :func:`select_n_components` with
  ``method="stability"`` (Greene, O'Callaghan & Cunningham 2014): a k is good
  when the topics come back the same from random subsamples of the
  documents.  The agreement of two topic models is :func:`topic_agreement`,
  the average Jaccard similarity of their topics' top terms after matching
  the topics one-to-one.
- **Which k predicts unseen words best?** -- ``method="held_out"``: the mean
  over cross-validation folds of the estimator's ``score``, the held-out
  document-completion log-likelihood per word.  It is what
  :class:`~sklearn.model_selection.GridSearchCV` computes with its default
  scoring; cross-validate topic models with :func:`shuffled_folds`, since
  corpora are often stored sorted by class.
- **Which k does an information criterion prefer?** -- ``method="aic"`` or
  ``"bic"``: one fit per k on all the documents, scored by
  :func:`~sklearn_topicfac.metrics.aic` or :func:`~sklearn_topicfac.metrics.bic`
  (the in-sample likelihood minus a penalty on the parameters), the
  cheapest of the criteria.

The result is an :class:`NComponentsSelection`: the chosen k, the curve of
scores over the candidates, and its ``plot``.  No criterion recovers the
number of labeled classes reliably on real corpora (stability finds the
coarsest grouping that reproduces, the held-out likelihood the finest
structure the data supports, AIC and BIC lie on either side); the user
guide has the measurements.
matplotlib is imported only by :meth:`NComponentsSelection.plot`.
"""

import numbers
import time
import warnings

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from scipy.optimize import linear_sum_assignment
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import KFold, check_cv
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array

from . import metrics
from ._config import with_config
from ._optional import pyplot
from ._validation import warn

__all__ = [
    "NComponentsSelection",
    "select_n_components",
    "shuffled_folds",
    "topic_agreement",
]

METHODS = ("stability", "held_out", "aic", "bic")
_CRITERIA = ("aic", "bic")
_SEED_MAX = np.iinfo(np.int32).max


# ----------------------------------------------------------------- folds
def shuffled_folds(n_splits=3, *, random_state=None):
    """K-fold cross-validation over shuffled documents, for topic models.

    Corpora are often stored sorted by class (all of one newsgroup, then the
    next).  ``cv=3`` in scikit-learn then means unshuffled
    :class:`~sklearn.model_selection.KFold`: each fold's model is trained on
    some classes and tested on others, and the held-out score measures how
    well topics of one subject predict another.  Shuffling the documents
    before splitting gives every fold a sample of the whole corpus.

    Parameters
    ----------
    n_splits : int, default=3
        Number of folds, at least 2.
    random_state : int, RandomState instance or None, default=None
        Seed of the shuffle; an int makes the folds reproducible.

    Returns
    -------
    cv : sklearn.model_selection.KFold
        ``KFold(n_splits, shuffle=True, random_state=random_state)``.

    See Also
    --------
    select_n_components : Chooses ``n_components`` with these folds by default.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.model_selection import GridSearchCV
    >>> from sklearn_topicfac import PLSI
    >>> from sklearn_topicfac.model_selection import shuffled_folds
    >>> rng = np.random.default_rng(0)
    >>> topics = rng.dirichlet(np.full(30, 0.1), size=3)
    >>> X = rng.poisson(40 * rng.dirichlet(np.full(3, 0.2), size=60) @ topics)
    >>> search = GridSearchCV(
    ...     PLSI(random_state=0),
    ...     {"n_components": [2, 3, 4]},
    ...     cv=shuffled_folds(3, random_state=0),
    ... ).fit(X)
    >>> search.best_params_["n_components"] in (2, 3, 4)
    True

    With documents sorted by class, every fold of ``shuffled_folds`` holds
    documents of every class:

    >>> y = np.repeat([0, 1, 2], 20)
    >>> folds = shuffled_folds(3, random_state=0).split(X)
    >>> [len(np.unique(y[test])) for _, test in folds]
    [3, 3, 3]
    """
    return KFold(n_splits=n_splits, shuffle=True, random_state=random_state)


# ------------------------------------------------------ topic agreement
def _top_terms(components, n_top):
    """Indices of the ``n_top`` heaviest terms of each topic, heaviest first.

    Normalizing the rows to ``P(w|z)`` would not change their order, so the
    weights are ranked as given; ties keep the order of the terms (a stable
    sort).
    """
    components = np.asarray(components, dtype=np.float64)
    return np.argsort(-components, axis=1, kind="stable")[:, :n_top]


def _average_jaccard(top_a, top_b):
    """Average Jaccard agreement of every pair of rankings.

    ``top_a`` (k_a, t) and ``top_b`` (k_b, t) hold term indices, best first.
    Entry ``(i, j)`` is
    ``(1/t) sum_{d=1..t} Jaccard(top_a[i, :d], top_b[j, :d])``.  With
    ``same[p, q]`` true when position ``p`` of one ranking and ``q`` of the
    other hold the same term, the size of the intersection of the top-d sets
    is the sum of ``same`` over ``p, q < d``: a cumulative sum along both
    axes, read on its diagonal.
    """
    t = top_a.shape[1]
    depth = np.arange(t)
    size = depth + 1.0
    out = np.empty((top_a.shape[0], top_b.shape[0]))
    for i, ranking in enumerate(top_a):  # one (k_b, t, t) block at a time
        same = ranking[None, :, None] == top_b[:, None, :]
        shared = same.cumsum(axis=1, dtype=np.int32).cumsum(axis=2)
        intersection = shared[:, depth, depth]
        out[i] = (intersection / (2 * size - intersection)).mean(axis=1)
    return out


def _matched_agreement(top_a, top_b):
    """Mean average-Jaccard agreement of the best one-to-one matching."""
    similarity = _average_jaccard(top_a, top_b)
    rows, cols = linear_sum_assignment(similarity, maximize=True)
    return float(similarity[rows, cols].mean())


def topic_agreement(components_a, components_b, *, n_top=20):
    """Agreement of two sets of topics: matched average Jaccard of their top terms.

    Each topic is read as the ranking of its ``n_top`` heaviest terms.  Two
    rankings :math:`R_1, R_2` agree by their *average Jaccard* (Greene,
    O'Callaghan & Cunningham 2014),

    .. math::

        AJ(R_1, R_2) = \\frac{1}{t} \\sum_{d=1}^{t}
        \\frac{|R_{1,d} \\cap R_{2,d}|}{|R_{1,d} \\cup R_{2,d}|},

    with :math:`R_{i,d}` the top :math:`d` terms of :math:`R_i` and
    :math:`t` = ``n_top``: terms near the top weigh more than terms near the
    bottom.  The topics of the two sets are matched one-to-one by the
    Hungarian method to maximise the total :math:`AJ`, and the agreement is
    the mean :math:`AJ` of the matched pairs.  It does not depend on the
    order of the topics in either set.

    Parameters
    ----------
    components_a : array-like of shape (n_topics, n_features)
        Topic-term weights of the first model (``components_``), any
        non-negative scale; only each row's order of the terms matters.
    components_b : array-like of shape (n_topics, n_features)
        The second model's, over the same terms.
    n_top : int, default=20
        Length of the compared rankings.

    Returns
    -------
    agreement : float
        Between 0 (no top term in common) and 1 (the same top terms in the
        same order, up to the order of the topics).

    Raises
    ------
    ValueError
        If the two sets differ in shape, or ``n_top`` is not an integer
        between 1 and ``n_features``.

    See Also
    --------
    select_n_components : Stability analysis built on this agreement.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_topicfac.model_selection import topic_agreement
    >>> H = np.array([[5.0, 4.0, 3.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 5.0, 4.0, 3.0]])
    >>> topic_agreement(H, H[::-1], n_top=3)  # same topics, other order
    1.0

    Swapping a topic's second and third terms: the top-1 and top-3 sets are
    equal, the top-2 sets share one term of three, so
    :math:`AJ = (1 + 1/3 + 1) / 3 = 7/9` for that topic.

    >>> H2 = H.copy()
    >>> H2[0, [1, 2]] = [3.0, 4.0]
    >>> round(topic_agreement(H, H2, n_top=3), 4)  # (7/9 + 1) / 2
    0.8889
    """
    A = check_array(components_a, ensure_all_finite=True, input_name="components_a")
    B = check_array(components_b, ensure_all_finite=True, input_name="components_b")
    if A.shape != B.shape:
        raise ValueError(
            f"components_a and components_b must have the same shape (topics "
            f"x terms over one vocabulary), got {A.shape} and {B.shape}."
        )
    n_top = _check_n_top(n_top, A.shape[1])
    return _matched_agreement(_top_terms(A, n_top), _top_terms(B, n_top))


# ------------------------------------------------------------ the result
class NComponentsSelection:
    """The scores of candidate numbers of topics and the chosen one.

    Returned by :func:`select_n_components`; ``print`` it for the curve as a
    table, :meth:`plot` it to see it.

    Parameters
    ----------
    candidates : array-like of shape (n_candidates,)
        The numbers of topics tried, increasing.
    split_scores : array-like of shape (n_candidates, n_splits)
        The score of each candidate on each subsample or fold.
    method : str
        The criterion: ``"stability"``, ``"held_out"``, ``"aic"`` or ``"bic"``.

    Attributes
    ----------
    candidates : ndarray of shape (n_candidates,)
    split_scores : ndarray of shape (n_candidates, n_splits)
        For ``"stability"``, the agreement of each subsample's model with the
        reference model; for ``"held_out"``, each fold's held-out score;
        for ``"aic"`` and ``"bic"``, one column: minus the criterion divided
        by twice the number of words (a penalized log-likelihood per word,
        in nats).
    scores : ndarray of shape (n_candidates,)
        Mean of ``split_scores`` over the splits (higher is better).
    scores_std : ndarray of shape (n_candidates,)
        Their standard deviation.
    method : str
    best_n_components : int
        The candidate with the highest mean score (the smallest one among
        equals).
    edge : {"upper", "lower"} or None
        ``"upper"`` when ``best_n_components`` is the largest candidate,
        ``"lower"`` when it is the smallest and a smaller k could be tried
        (below 2 for ``"stability"``, below 1 otherwise): the curve may keep
        rising beyond the grid, and the best k is then a bound, not an
        answer.  ``at_edge`` is ``edge is not None``.

    Examples
    --------
    >>> from sklearn_topicfac.model_selection import NComponentsSelection
    >>> result = NComponentsSelection(
    ...     [2, 3, 4], [[0.8, 0.9], [0.95, 0.97], [0.6, 0.7]], "stability"
    ... )
    >>> result.best_n_components
    3
    >>> print(result)
    NComponentsSelection(method='stability', best_n_components=3)
     n_components   score     std
                2  0.8500  0.0500
    *           3  0.9600  0.0100
                4  0.6500  0.0500
    """

    def __init__(self, candidates, split_scores, method):
        self.candidates = np.asarray(candidates, dtype=np.int64)
        self.split_scores = np.asarray(split_scores, dtype=np.float64)
        if self.split_scores.ndim != 2 or (
            self.split_scores.shape[0] != self.candidates.shape[0]
        ):
            raise ValueError(
                "split_scores must have one row per candidate, got shape "
                f"{self.split_scores.shape} for {self.candidates.shape[0]} "
                "candidates."
            )
        self.method = method
        self.scores = self.split_scores.mean(axis=1)
        self.scores_std = self.split_scores.std(axis=1)
        best = int(np.argmax(self.scores))
        self.best_n_components = int(self.candidates[best])
        # A smaller k can be tried below the grid unless it starts at the
        # least k the method takes (2 topics to compare for stability).
        least = 2 if method == "stability" else 1
        self.edge = None
        if best == len(self.candidates) - 1 and len(self.candidates) > 1:
            self.edge = "upper"
        elif best == 0 and len(self.candidates) > 1 and self.candidates[0] > least:
            self.edge = "lower"

    @property
    def at_edge(self):
        """Whether the best k is the largest candidate, or the smallest when
        smaller ones could be tried: the score may keep improving beyond the
        grid, so the best k is a bound, not an answer."""
        return self.edge is not None

    def edge_message(self):
        """One line saying where the best k sits on the grid, or None."""
        if self.edge is None:
            return None
        k = self.best_n_components
        if self.edge == "upper":
            return (
                f"the best n_components={k} is the largest candidate: the score "
                f"may still improve above {k}; extend the candidates beyond {k} "
                "before taking it as the answer."
            )
        return (
            f"the best n_components={k} is the smallest candidate: the score "
            f"may still improve below {k}; extend the candidates below {k} "
            "before taking it as the answer."
        )

    def __repr__(self):
        lines = [
            f"NComponentsSelection(method={self.method!r}, "
            f"best_n_components={self.best_n_components})",
            f"{'n_components':>13s} {'score':>7s} {'std':>7s}",
        ]
        for k, score, std in zip(
            self.candidates, self.scores, self.scores_std, strict=True
        ):
            mark = "*" if k == self.best_n_components else " "
            lines.append(f"{mark} {k:>11d} {score:7.4f} {std:7.4f}")
        if self.at_edge:
            lines.append(f"at the {self.edge} edge of the grid: {self.edge_message()}")
        return "\n".join(lines)

    def plot(self, ax=None):
        """Plot the mean score by number of topics, with one standard deviation.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, default=None
            Where to draw; a new figure's axes if None.

        Returns
        -------
        ax : matplotlib.axes.Axes

        Raises
        ------
        ImportError
            If matplotlib is not installed.

        Examples
        --------
        >>> from sklearn_topicfac.model_selection import NComponentsSelection
        >>> result = NComponentsSelection([2, 3, 4], [[0.8], [0.9], [0.7]], "stability")
        >>> ax = result.plot()
        >>> ax.get_xlabel()
        'n_components'
        """
        plt = pyplot()
        if ax is None:
            _, ax = plt.subplots()
        ax.errorbar(
            self.candidates,
            self.scores,
            yerr=self.scores_std,
            marker="o",
            capsize=3,
            label=self.method,
        )
        ax.axvline(self.best_n_components, color="grey", linestyle=":")
        ax.set_xlabel("n_components")
        ax.set_ylabel(_YLABELS.get(self.method, "score"))
        ax.set_title(f"{self.method}: best n_components = {self.best_n_components}")
        return ax


_YLABELS = {
    "stability": "agreement with the reference topics",
    "held_out": "held-out log-likelihood per word",
    "aic": "-AIC / (2 x words)",
    "bic": "-BIC / (2 x words)",
}


# ------------------------------------------------------------ validation
def _check_n_top(n_top, n_features):
    if (
        not isinstance(n_top, numbers.Integral)
        or isinstance(n_top, bool)
        or not 1 <= n_top <= n_features
    ):
        raise ValueError(
            f"n_top must be an integer between 1 and the number of features "
            f"({n_features}), got {n_top!r}; lower it to compare shorter "
            "top-term rankings."
        )
    return int(n_top)


def _check_candidates(candidates, n_samples, method):
    try:
        items = list(candidates)
    except TypeError:
        items = None
    values = np.asarray(items if items is not None else [])
    if items is None or values.ndim != 1 or values.size == 0:
        raise ValueError(
            "candidates must be a non-empty 1-D sequence of numbers of topics, "
            f"e.g. range(2, 21); got {candidates!r}."
        )
    if any(isinstance(v, bool | np.bool_) for v in items) or not (
        np.issubdtype(values.dtype, np.integer)
        or (
            np.issubdtype(values.dtype, np.floating)
            and np.all(np.isfinite(values))
            and np.all(values == np.round(values))
        )
    ):
        raise ValueError(
            f"candidates must be integers, got {candidates!r}; pass whole "
            "numbers of topics such as [2, 4, 8]."
        )
    values = np.unique(values.astype(np.int64))
    lowest = 2 if method == "stability" else 1
    if values[0] < lowest:
        why = (
            " (a single topic is the same in every model, so it is trivially stable)"
            if method == "stability"
            else ""
        )
        raise ValueError(
            f"candidates must be at least {lowest} for method={method!r}{why}; "
            f"got {values[0]}. Start the candidates at {lowest}."
        )
    if values[-1] > n_samples:
        raise ValueError(
            f"candidates must be at most the number of documents "
            f"({n_samples}), got {values[-1]}; drop the larger candidates."
        )
    return values


def _check_params(method, n_subsamples, subsample, cv):
    if method not in METHODS:
        raise ValueError(
            f"method must be one of {', '.join(map(repr, METHODS))}, got {method!r}."
        )
    if (
        not isinstance(n_subsamples, numbers.Integral)
        or isinstance(n_subsamples, bool)
        or n_subsamples < 1
    ):
        raise ValueError(
            f"n_subsamples must be a positive integer, got {n_subsamples!r}."
        )
    if (
        not isinstance(subsample, numbers.Real)
        or isinstance(subsample, bool)
        or not 0 < subsample <= 1
    ):
        raise ValueError(
            "subsample is the fraction of the documents in each subsample and "
            f"must be in (0, 1], got {subsample!r}; Greene et al. use 0.8."
        )
    if cv is not None and method != "held_out":
        raise ValueError(
            f"cv is used only by method='held_out', not by method={method!r}; "
            "leave cv=None."
        )


def _check_estimator(estimator):
    if not hasattr(estimator, "get_params") or not hasattr(estimator, "fit"):
        raise TypeError(
            "estimator must be an unfitted scikit-learn estimator such as "
            f"PLSI(), got {type(estimator).__name__}."
        )
    if "n_components" not in estimator.get_params(deep=False):
        raise ValueError(
            f"{type(estimator).__name__} has no n_components parameter, so the "
            "number of topics cannot be chosen for it; pass a topic model "
            "such as PLSI() or KLNMF()."
        )


def _check_X(X):
    """Validated ``X``, row-indexable; never densified nor copied when not needed."""
    X = check_array(
        X,
        accept_sparse=("csr", "csc", "coo"),
        dtype=None,
        ensure_all_finite=True,
        input_name="X",
    )
    if sp.issparse(X) and X.format != "csr":
        X = X.tocsr()
    return X


# ----------------------------------------------------------------- fits
def _configured(estimator, k, seed):
    model = clone(estimator).set_params(n_components=int(k))
    if "random_state" in model.get_params(deep=False):
        model.set_params(random_state=int(seed))
    return model


def _fitted(estimator, k, seed, X):
    """``(model, warned)``: the model with ``k`` topics fitted on ``X``, and
    whether its fit raised a `ConvergenceWarning` (held back: the caller
    sums them up in one line)."""
    model = _configured(estimator, k, seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        model.fit(X)
    warned = False
    for w in caught:
        if issubclass(w.category, ConvergenceWarning):
            warned = True
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return model, warned


def _warn_unconverged(results):
    """The values of ``(value, warned)`` pairs, after one summary warning
    for the fits that did not converge."""
    n_warned = sum(warned for _, warned in results)
    if n_warned:
        warnings.warn(
            f"{n_warned} of {len(results)} fits did not converge (stopped by "
            "their iteration limit); raise the estimator's max_iter or tol.",
            ConvergenceWarning,
            stacklevel=3,
        )
    return [value for value, _ in results]


def _fit_top_terms(estimator, k, seed, X, rows, n_top):
    """Top-term rankings of a model with ``k`` topics fitted on ``X[rows]``."""
    model, warned = _fitted(estimator, k, seed, X if rows is None else X[rows])
    return _top_terms(model.components_, n_top), warned


def _fit_and_criterion(estimator, k, seed, X, criterion):
    """Minus ``criterion`` (AIC or BIC) of a model with ``k`` topics fitted
    on ``X``, per word and halved: a penalized log-likelihood per word."""
    model, warned = _fitted(estimator, k, seed, X)
    n_words = float(X.sum(dtype=np.float64))
    return -getattr(metrics, criterion)(model, X) / (2 * n_words), warned


def _fit_and_score(estimator, k, seed, X, train, test):
    """Score on ``X[test]`` of a model with ``k`` topics fitted on ``X[train]``."""
    model, warned = _fitted(estimator, k, seed, X[train])
    return float(model.score(X[test])), warned


def select_n_components(
    estimator,
    X,
    candidates,
    *,
    method="stability",
    n_subsamples=10,
    subsample=0.8,
    n_top=20,
    cv=None,
    random_state=None,
    n_jobs=None,
    verbose=0,
):
    """Choose the number of topics: by stability, held-out likelihood, AIC or BIC.

    For every candidate k, ``estimator`` is cloned with ``n_components=k``
    and fitted several times (once for ``"aic"`` and ``"bic"``); each
    candidate gets a mean score and the best
    candidate is the one with the highest mean.  All candidates see the same
    subsamples (or folds) and the same seeds, so their scores differ by k
    only.

    ``method="stability"`` (Greene, O'Callaghan & Cunningham 2014)
        A reference model is fitted on all of ``X``, and ``n_subsamples``
        models on random subsamples of ``subsample`` of the documents
        (rows, without replacement).  Each subsample model's topics are
        matched to the reference topics and scored by
        :func:`topic_agreement`: the average Jaccard agreement of their
        ``n_top`` top terms, averaged over the matched pairs.  The score of
        k is the mean agreement over the subsamples (between 0 and 1).  A k
        whose topics come back the same from different samples of the
        documents describes groups that are in the data; with too many
        topics, the extra ones split groups differently each time.  Use it
        to choose k for clustering documents or reading topics -- and read
        the curve, not only its argmax: the maximum is the *coarsest*
        grouping that reproduces, often fewer topics than labeled classes
        (measured in ``docs/guide/choosing_k_methods.md``); finer groupings
        show as secondary peaks.  With the default NNDSVDa start of this
        package's estimators, a k below the truth can merge the same groups
        on every subsample; random starts (``init="random"``) expose that,
        at the price of noisier curves.
    ``method="held_out"``
        The mean over the folds of ``cv`` of ``estimator.score(X_test)``
        after fitting on ``X_train``: for the estimators of this package,
        the held-out document-completion log-likelihood per word.  It is
        what :class:`~sklearn.model_selection.GridSearchCV` computes with
        the default scoring.  Use it to choose k for predicting words; on
        large corpora it chooses more topics than there are classes.
    ``method="aic"``, ``method="bic"``
        One model per k, fitted on all of ``X`` and scored by
        :func:`~sklearn_topicfac.metrics.aic` or
        :func:`~sklearn_topicfac.metrics.bic`: the in-sample
        log-likelihood of the documents folded in, penalized by the
        number of free parameters (the topics' and the documents'
        proportions); the score is minus the criterion over twice the
        number of words, so that higher is better.  The cheapest criterion
        (one fit per k).  BIC's penalty per parameter, ``log N``, grows
        with the corpus, and BIC chooses few topics; AIC's, 2, does not,
        and AIC chooses more (measured in
        ``docs/guide/choosing_k_methods.md``).  Needs a topic model of this package
        (``topic_proportions``).

    Parameters
    ----------
    estimator : estimator object
        An unfitted topic model of this package (or any scikit-learn
        estimator with an ``n_components`` parameter and, once fitted,
        ``components_`` of shape (n_components, n_features) for
        ``"stability"``, or a ``score`` method for ``"held_out"``; a topic
        model of this package for ``"aic"`` and ``"bic"``).  It is not
        modified.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Document-term counts.  Sparse input stays sparse (subsets of its
        rows are passed to the fits) and ``X`` is never modified.
    candidates : iterable of int
        The numbers of topics to try; sorted, duplicates dropped.  Each at
        most ``n_samples``, and at least 2 for ``"stability"``.
    method : {"stability", "held_out", "aic", "bic"}, default="stability"
        The criterion; see above.
    n_subsamples : int, default=10
        ``"stability"``: the number of subsamples (Greene et al. use 100;
        5 to 20 already give a usable curve).
    subsample : float in (0, 1], default=0.8
        ``"stability"``: the fraction of the documents in each subsample.
    n_top : int, default=20
        ``"stability"``: the number of top terms compared per topic.
    cv : int, cross-validation generator or iterable, default=None
        ``"held_out"``: the folds.  None means
        ``shuffled_folds(3, random_state=...)``, and an int ``n`` means
        ``shuffled_folds(n, random_state=...)``, with a seed drawn from
        ``random_state``.  Other values are passed to
        :func:`~sklearn.model_selection.check_cv`.
    random_state : int, RandomState instance or None, default=None
        Seeds the subsamples, the folds and the fits: with ``rng =
        check_random_state(random_state)``, ``seeds =
        rng.randint(np.iinfo(np.int32).max, size=n_fits)`` gives the
        ``random_state`` of each fit (for ``"stability"``: the reference
        model, then each subsample's model; for ``"held_out"``: each fold's
        model; for ``"aic"`` and ``"bic"``: the one model), the same for
        every k; then the subsamples, or the seed of the default folds, are
        drawn from ``rng``.  An int makes the result
        reproducible.
    n_jobs : int, default=None
        Number of fits run in parallel (joblib); None means 1.
    verbose : int, default=0
        ``1`` or more: one line on stdout after every fit (its k, the fits
        done out of all, the time so far and the time left at that pace),
        and the choice at the end.

    Returns
    -------
    result : NComponentsSelection
        ``result.best_n_components`` is the chosen k; ``result.scores`` the
        curve over ``result.candidates``; ``result.plot()`` draws it.
        ``result.at_edge`` is true when the best k is the largest candidate
        (or the smallest, when a smaller one could be tried): a
        ``UserWarning`` then says so, and the candidates should be extended
        beyond it before the choice is trusted.

    Raises
    ------
    ValueError
        If ``method``, ``candidates``, ``n_subsamples``, ``subsample`` or
        ``n_top`` is invalid, or ``cv`` is given for a method other than
        ``"held_out"``.
    TypeError
        If ``estimator`` is not an estimator, or (``"aic"``, ``"bic"``) not
        a topic model of this package.

    See Also
    --------
    topic_agreement : The agreement of two topic models used by ``"stability"``.
    shuffled_folds : The default folds of ``"held_out"``.

    References
    ----------
    D. Greene, D. O'Callaghan and P. Cunningham, "How many topics? Stability
    analysis for topic models", ECML PKDD 2014, LNCS 8724, pp. 498-513.

    Examples
    --------
    A corpus of three planted topics: the models with 3 topics agree best.

    >>> import numpy as np
    >>> from sklearn_topicfac import KLNMF
    >>> from sklearn_topicfac.model_selection import select_n_components
    >>> rng = np.random.default_rng(0)
    >>> topics = rng.dirichlet(np.full(40, 0.1), size=3)
    >>> X = rng.poisson(50 * rng.dirichlet(np.full(3, 0.2), size=100) @ topics)
    >>> result = select_n_components(
    ...     KLNMF(), X, [2, 3, 4, 5], n_subsamples=5, n_top=10, random_state=0
    ... )
    >>> result.best_n_components
    3
    >>> result.split_scores.shape  # 4 candidates x 5 subsamples
    (4, 5)
    >>> bool(result.scores[1] > 0.95)  # k = 3: the same topics every time
    True

    The held-out likelihood over shuffled folds:

    >>> held_out = select_n_components(
    ...     KLNMF(), X, [2, 3, 4], method="held_out", random_state=0
    ... )
    >>> held_out.split_scores.shape  # 3 candidates x 3 folds
    (3, 3)

    Akaike's criterion, one fit per candidate:

    >>> select_n_components(
    ...     KLNMF(), X, [2, 3, 4], method="aic", random_state=0
    ... ).best_n_components
    3
    """
    _check_estimator(estimator)
    _check_params(method, n_subsamples, subsample, cv)
    X = _check_X(X)
    n_samples, n_features = X.shape
    candidates = _check_candidates(candidates, n_samples, method)
    rng = check_random_state(random_state)
    parallel = _FitsWithProgress(n_jobs, verbose, method, candidates)

    if method == "stability":
        n_top = _check_n_top(n_top, n_features)
        seeds = rng.randint(_SEED_MAX, size=n_subsamples + 1)
        size = max(1, int(round(subsample * n_samples)))
        subsets = [None] + [
            np.sort(rng.choice(n_samples, size=size, replace=False))
            for _ in range(n_subsamples)
        ]
        tops = _warn_unconverged(
            parallel(
                delayed(with_config(_fit_top_terms))(estimator, k, seed, X, rows, n_top)
                for k in candidates
                for seed, rows in zip(seeds, subsets, strict=True)
            )
        )
        per_k = n_subsamples + 1
        split_scores = [
            [
                _matched_agreement(tops[i * per_k], tops[i * per_k + j])
                for j in range(1, per_k)
            ]
            for i in range(len(candidates))
        ]
    elif method in _CRITERIA:
        if not hasattr(estimator, "topic_proportions"):
            raise TypeError(
                f"method={method!r} needs a topic model of sklearn_topicfac "
                f"(with topic_proportions), got {type(estimator).__name__}; "
                "use method='stability' or 'held_out' for other estimators."
            )
        seed = rng.randint(_SEED_MAX)
        scores = _warn_unconverged(
            parallel(
                delayed(with_config(_fit_and_criterion))(estimator, k, seed, X, method)
                for k in candidates
            )
        )
        split_scores = np.reshape(scores, (len(candidates), 1))
    else:
        n_splits = _n_splits(cv, X)
        seeds = rng.randint(_SEED_MAX, size=n_splits)
        splits = _folds(cv, rng, X)
        scores = _warn_unconverged(
            parallel(
                delayed(with_config(_fit_and_score))(estimator, k, seed, X, train, test)
                for k in candidates
                for seed, (train, test) in zip(seeds, splits, strict=True)
            )
        )
        split_scores = np.reshape(scores, (len(candidates), len(splits)))
    result = NComponentsSelection(candidates, split_scores, method)
    if verbose:
        print(f"[select_n_components] best n_components={result.best_n_components}")
    if result.at_edge:
        warn(f"select_n_components: {result.edge_message()}", UserWarning)
    return result


class _FitsWithProgress:
    """``Parallel(n_jobs)`` over the fits of all candidates (candidate after
    candidate, the same number each), with a progress line after each fit
    when ``verbose``."""

    def __init__(self, n_jobs, verbose, method, candidates):
        self.parallel = Parallel(n_jobs=n_jobs, return_as="generator")
        self.verbose, self.method, self.candidates = verbose, method, candidates

    def __call__(self, tasks):
        tasks = list(tasks)
        if not self.verbose:
            return list(self.parallel(tasks))
        total, per_k = len(tasks), max(1, len(tasks) // len(self.candidates))
        print(
            f"[select_n_components] {self.method}: {total} fits, "
            f"{per_k} for each of the {len(self.candidates)} candidates",
            flush=True,
        )
        start, results = time.perf_counter(), []
        for done, result in enumerate(self.parallel(tasks), start=1):
            results.append(result)
            elapsed = time.perf_counter() - start
            k = self.candidates[min((done - 1) // per_k, len(self.candidates) - 1)]
            print(
                f"[select_n_components] fit {done}/{total} (n_components={k}) "
                f"done, {elapsed:.1f} s, about {elapsed / done * (total - done):.0f} "
                "s left",
                flush=True,
            )
        return results


def _n_splits(cv, X):
    if cv is None:
        return 3
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        return int(cv)
    return check_cv(cv).get_n_splits(X)


def _folds(cv, rng, X):
    """The (train, test) index pairs; an int or None means shuffled folds."""
    if cv is None or (isinstance(cv, numbers.Integral) and not isinstance(cv, bool)):
        seed = int(rng.randint(_SEED_MAX))
        cv = shuffled_folds(_n_splits(cv, X), random_state=seed)
    return list(check_cv(cv).split(X))
