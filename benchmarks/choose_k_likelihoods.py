"""Choosing k by likelihood criteria that `select_n_components` does not offer.

The exploratory criteria of the guide's table "Criteria that score a model's
likelihood directly" (``docs/guide/choosing_k_methods.md``), on the labeled
corpora of ``../shared/data`` and the grid of ``benchmarks/choose_k.py``:

- ``mixture held-out``: a mixture of unigrams (each document drawn from one
  topic) fitted by EM from K-means on sublinear tf-idf, scored by its
  log-likelihood per word on held-out documents over 3 shuffled folds
  (Smyth 2000); the topics are smoothed by ``beta`` added to every count;
- ``mixture ICL``: the exact integrated completed likelihood of that
  mixture's hard clustering of all the documents, with Dirichlet(beta)
  priors on the topics and Dirichlet(1) on the cluster sizes integrated in
  closed form (Biernacki, Celeux & Govaert 2000);
- ``LDAVI bound``: LDAVI's evidence lower bound per word, one fit per k
  with ``inference="vb"`` (the mean-field VB, whose bound this is; the
  other parameters at the estimator's defaults);
- ``gap``: Tibshirani, Walther & Hastie's (2001) gap statistic, with KLNMF's
  in-sample log-likelihood per word as the fit and two null corpora with no
  topic structure (the documents' lengths kept, their words drawn from the
  corpus's word frequencies); the chosen k is the smallest with
  ``gap(k) >= gap(k') - s(k')`` for the next candidate ``k'``.

Every criterion is higher-is-better, and the chosen k is its argmax (the
gap's rule above).  A hit is within +/-30 % of the number of classes.

    python benchmarks/choose_k_likelihoods.py --corpora cstr classic3
    python benchmarks/choose_k_likelihoods.py --criteria "mixture ICL" --beta 0.1
"""

import argparse
import time
import warnings

import numpy as np
import scipy.sparse as sp
from choose_k import GRID, hit
from real_text import CORPORA
from scipy.special import gammaln, logsumexp
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_extraction.text import TfidfTransformer

import sklearn_topicfac as tf
from sklearn_topicfac.engine.starts import kmeans_labels
from sklearn_topicfac.metrics import _in_sample_fit
from sklearn_topicfac.model_selection import shuffled_folds

CRITERIA = ("mixture held-out", "mixture ICL", "LDAVI bound", "gap")
N_NULL = 2  # null corpora per k for the gap statistic


# ----------------------------------------------------------- mixture of unigrams
def fit_mixture(X, k, beta, seed, max_iter=60, rtol=1e-7):
    """EM for a mixture of unigrams; returns ``(log topics, log weights, R)``.

    Starts from the package's K-means clustering (`init="kmeans"`'s) of the
    sublinear tf-idf of ``X``.
    """
    n = X.shape[0]
    labels = kmeans_labels(
        TfidfTransformer(sublinear_tf=True).fit_transform(X), k, seed
    )
    R = np.zeros((n, k))
    R[np.arange(n), labels] = 1
    previous = -np.inf
    for _ in range(max_iter):
        counts = np.asarray((X.T @ R).T) + beta
        log_topics = np.log(counts) - np.log(counts.sum(axis=1, keepdims=True))
        weights = R.sum(axis=0) + 1.0
        log_weights = np.log(weights / weights.sum())
        joint = np.asarray(X @ log_topics.T) + log_weights
        per_document = logsumexp(joint, axis=1)
        R = np.exp(joint - per_document[:, None])
        total = per_document.sum()
        if total - previous <= rtol * abs(total):
            break
        previous = total
    return log_topics, log_weights, R


def mixture_held_out(X, k, beta, seed):
    """Held-out log-likelihood per word of the mixture, 3 shuffled folds."""
    folds = shuffled_folds(3, random_state=seed).split(X)
    scores = []
    for train, test in folds:
        log_topics, log_weights, _ = fit_mixture(X[train], k, beta, seed)
        joint = np.asarray(X[test] @ log_topics.T) + log_weights
        scores.append(logsumexp(joint, axis=1).sum() / X[test].sum())
    return float(np.mean(scores))


def mixture_icl(X, k, beta, seed, alpha=1.0):
    """Exact integrated completed log-likelihood of the mixture's hard clustering.

    The multinomial coefficients of the documents do not depend on the
    clustering and are left out.
    """
    labels = fit_mixture(X, k, beta, seed)[2].argmax(axis=1)
    n, m = X.shape
    indicator = sp.csr_matrix((np.ones(n), (np.arange(n), labels)), shape=(n, k))
    counts = (indicator.T @ X).toarray()
    sizes = np.bincount(labels, minlength=k)
    words = (
        gammaln(m * beta)
        - gammaln(m * beta + counts.sum(axis=1))
        + (gammaln(counts + beta) - gammaln(beta)).sum(axis=1)
    ).sum()
    clusters = (
        gammaln(k * alpha)
        - gammaln(k * alpha + n)
        + (gammaln(sizes + alpha) - gammaln(alpha)).sum()
    )
    return float(words + clusters)


# ------------------------------------------------------------ LDA and the gap
def lda_bound(X, k, seed):
    """LDAVI's evidence lower bound per word (minus its final objective)."""
    # The mean-field VB (the default when these figures were recorded): CVB0,
    # LDAVI's default since issue 26, ascends no bound.
    lda = tf.LDAVI(n_components=k, inference="vb", random_state=seed)
    return float(-lda.fit(X).loss_ / X.sum())


def null_corpus(X, rng):
    """X's document lengths, words drawn from X's word frequencies."""
    lengths = np.rint(np.asarray(X.sum(axis=1)).ravel()).astype(np.int64)
    frequencies = np.asarray(X.sum(axis=0)).ravel()
    words = rng.choice(
        X.shape[1], size=lengths.sum(), p=frequencies / frequencies.sum()
    )
    documents = np.repeat(np.arange(X.shape[0]), lengths)
    null = sp.csr_matrix(
        (np.ones(len(words)), (documents, words)), shape=X.shape, dtype=np.float64
    )
    null.sum_duplicates()
    return null


def klnmf_log_likelihood(X, k, seed):
    model = tf.KLNMF(n_components=k, random_state=seed, max_iter=100).fit(X)
    return _in_sample_fit(model, X)[0] / X.sum()


def gap_curve(X, seed):
    """``(gap, s)`` per candidate: data minus mean null log-likelihood per word."""
    rng = np.random.default_rng(seed)
    nulls = [null_corpus(X, rng) for _ in range(N_NULL)]
    gap, spread = [], []
    for k in GRID:
        null = np.array([klnmf_log_likelihood(Y, k, seed) for Y in nulls])
        gap.append(klnmf_log_likelihood(X, k, seed) - null.mean())
        spread.append(null.std() * np.sqrt(1 + 1 / N_NULL))
    return np.array(gap), np.array(spread)


def gap_choice(gap, spread):
    for i in range(len(GRID) - 1):
        if gap[i] >= gap[i + 1] - spread[i + 1]:
            return GRID[i]
    return GRID[-1]


# ---------------------------------------------------------------------- main
def curve(criterion, X, beta, seed):
    """The criterion's scores over GRID and its chosen k."""
    if criterion == "gap":
        gap, spread = gap_curve(X, seed)
        return gap, gap_choice(gap, spread)
    score = {
        "mixture held-out": lambda k: mixture_held_out(X, k, beta, seed),
        "mixture ICL": lambda k: mixture_icl(X, k, beta, seed),
        "LDAVI bound": lambda k: lda_bound(X, k, seed),
    }[criterion]
    scores = np.array([score(k) for k in GRID])
    return scores, GRID[int(np.argmax(scores))]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", nargs="+", default=list(CORPORA), choices=CORPORA)
    parser.add_argument(
        "--criteria", nargs="+", default=list(CRITERIA), choices=CRITERIA
    )
    parser.add_argument("--beta", type=float, default=0.01, help="mixture smoothing")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    hits = dict.fromkeys(args.criteria, 0)
    for corpus in args.corpora:
        X, y = CORPORA[corpus]()
        X = sp.csr_matrix(X, dtype=np.float64)
        n_classes = len(np.unique(y))
        print(f"\n{corpus}: {X.shape[0]} documents, {n_classes} classes", flush=True)
        for criterion in args.criteria:
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                scores, chosen = curve(criterion, X, args.beta, args.seed)
            hits[criterion] += hit(chosen, n_classes)
            verdict = "hit" if hit(chosen, n_classes) else "MISS"
            values = "  ".join(
                f"{k}:{s:.4g}" for k, s in zip(GRID, scores, strict=True)
            )
            print(
                f"  {criterion:16s} k = {chosen:2d} ({verdict}, "
                f"{time.perf_counter() - start:5.0f} s)  {values}",
                flush=True,
            )
    print(
        "\nhits: " + ", ".join(f"{c} {h}/{len(args.corpora)}" for c, h in hits.items())
    )


if __name__ == "__main__":
    main()
