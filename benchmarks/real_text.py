"""Every estimator at its defaults against the peers, on the labeled real corpora.

Groundwork for issue 14 (first version): clustering accuracy (Hungarian
matching), NMI, the mean NPMI coherence of the top-10 terms and the wall
time, with k = the number of classes, for

- the package's count estimators at their defaults (``random_state`` only);
- scikit-learn's ``NMF(beta_loss="kullback-leibler", solver="mu")`` and
  ``LatentDirichletAllocation``, K-means on tf-idf, gensim's ``LdaModel``
  and tomotopy's ``LDAModel`` (when installed: ``pip install
  "sklearn-topicfac[bench]"``),

on the nine corpora of ``../shared/data`` (matrices as given, raw text through
``CountVectorizer``, the CLUTO ``.npz``; ``$SHARED_DATA`` overrides the
folder), split into the TUNING and VALIDATION sets below.  Each document's
cluster is the argmax of its topic proportions.  With ``--held-out``, each
method is also fitted on a shuffled 80 % of the documents and scored on the
other 20 % by the same-protocol perplexity (issue 26): the topic-word rows
floored at 1e-12 and renormalized, theta folded in on one half of each
held-out document's tokens (binomial thinning) by 100 EM steps from the
uniform start with the topics fixed, the other half scored with the 1e-3
uniform smoothing of ``sklearn_topicfac.kernels.HELD_OUT_SMOOTHING``: only
the fitted topics differ between methods.  tomotopy runs at its usual priors
(alpha = 0.1, eta = 0.01) and at alpha = eta = 1/k, 1,000 sweeps each, with
as many threads as the package's kernels may use.

    python benchmarks/real_text.py --quick            # Classic3 and CSTR, 1 seed
    python benchmarks/real_text.py --out docs/real_text.md
    python benchmarks/real_text.py --corpora classic3 cstr webkb4 reuters10 re0 \
        --seeds 0 --held-out --methods LDAVI PLSI "tomotopy LDA 1/k"
"""

import argparse
import functools
import os
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from corpus_registry import DATA, SHARED, TUNING, VALIDATION  # noqa: F401
from sklearn.cluster import KMeans
from sklearn.decomposition import NMF, LatentDirichletAllocation
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_extraction.text import TfidfTransformer
from sklearn.metrics import normalized_mutual_info_score

import sklearn_topicfac as tf
from sklearn_topicfac.kernels import (
    HELD_OUT_SMOOTHING,
    completion_log_likelihood,
    completion_split,
    normalize_rows,
)
from sklearn_topicfac.metrics import clustering_accuracy, npmi_coherence

# The corpora: the one registry (../shared/data, or $SHARED_DATA).
CORPORA = SHARED

# The discipline for defaults (issue 26), declared before any choice was
# made: defaults are chosen on the TUNING corpora only; the VALIDATION
# corpora are run once, after the choice, and a default changes only if it
# does not lose there.  Both sets mix sizes (475 to 8,202 documents for
# tuning, 414 to 18,846 for validation) and class counts (3 to 13; 9 to 20),
# balanced and unbalanced classes, .mat matrices, raw text and CLUTO.
# TUNING and VALIDATION come from the registry.
# The rule for LDAVI's inference default (issue 26), written before the
# validation run: a candidate that, on the tuning corpora, has a
# same-protocol perplexity no higher than the current default's on each
# corpus and a mean accuracy at least the current default's becomes the
# default if, on the validation corpora, its perplexity is at most 1.01
# times the current default's on each corpus and its mean accuracy is at
# least the current default's.


# Each method fits X and returns (theta, phi, fold_in): the documents' topic
# proportions, the topics' word distributions, and the function that folds
# new documents in (None: no generative model to score).
def _ours(Estimator):
    def fit(X, k, seed):
        est = Estimator(n_components=k, random_state=seed).fit(X)
        if fit.label:
            RAN.setdefault(fit.label, est)
        phi = est.topic_word_distributions()
        return est.topic_proportions(X), phi, est.topic_proportions

    # What the method sets on purpose; its other parameters are defaults.
    fit.varied = ["n_components", "random_state", *getattr(Estimator, "keywords", {})]
    fit.label = None  # methods() names it
    return fit


# The package's estimators each method label ran (the first fit of each),
# written with the block: those labels are claimed at their defaults but
# for the parameters their ``fit.varied`` lists.
RAN = {}


def _sklearn_nmf(X, k, seed):
    nmf = NMF(k, beta_loss="kullback-leibler", solver="mu", random_state=seed)
    W = nmf.fit_transform(X)
    h = nmf.components_.sum(axis=1)

    def fold_in(Y):
        return normalize_rows(nmf.transform(Y) * h)[0]

    return normalize_rows(W * h)[0], normalize_rows(nmf.components_)[0], fold_in


def _sklearn_lda(X, k, seed):
    lda = LatentDirichletAllocation(k, random_state=seed)
    theta = lda.fit_transform(X)
    return theta, normalize_rows(lda.components_)[0], lda.transform


def _kmeans_tfidf(X, k, seed):
    tfidf = TfidfTransformer().fit_transform(X)
    km = KMeans(k, n_init=10, random_state=seed).fit(tfidf)
    theta = np.eye(k)[km.labels_]
    # Topics for coherence: each cluster's centroid in tf-idf space.
    return theta, np.maximum(km.cluster_centers_, 0), None


def _gensim_lda(X, k, seed):
    from gensim.models import LdaModel

    X = sp.csr_matrix(X)
    corpus = [
        list(zip(X.indices[a:b].tolist(), X.data[a:b].tolist(), strict=True))
        for a, b in zip(X.indptr[:-1], X.indptr[1:], strict=True)
    ]
    model = LdaModel(corpus, num_topics=k, id2word=None, random_state=seed)

    def fold_in(Y):
        Y = sp.csr_matrix(Y)
        theta = np.zeros((Y.shape[0], k))
        for d, (a, b) in enumerate(zip(Y.indptr[:-1], Y.indptr[1:], strict=True)):
            bow = list(zip(Y.indices[a:b].tolist(), Y.data[a:b].tolist(), strict=True))
            for z, p in model.get_document_topics(bow, minimum_probability=0.0):
                theta[d, z] = p
        return theta

    return fold_in(X), model.get_topics(), fold_in


# Threads given to tomotopy's sampler: the package's kernels use up to
# min(cpu_count, 8) threads, so "the same thread count" is that.
TOMOTOPY_WORKERS = min(os.cpu_count() or 1, 8)


def _tomotopy(alpha=None, eta=None, sweeps=1000):
    """tomotopy's LDA with priors ``alpha``, ``eta`` (None: 1 / k for both)."""

    def fit(X, k, seed):
        a = 1.0 / k if alpha is None else alpha
        e = 1.0 / k if eta is None else eta
        return _tomotopy_lda(X, k, seed, a, e, sweeps)

    return fit


def _tomotopy_lda(X, k, seed, alpha=0.1, eta=0.01, sweeps=1000, seconds=None):
    """tomotopy's LDA of ``X``: ``(theta, phi, fold_in)``.  ``seconds``, a
    list, receives tomotopy's own wall time (adding the documents and the
    sweeps; not their conversion to word lists here)."""
    import tomotopy

    def words(Y):
        Y = sp.csr_matrix(Y)
        for a, b in zip(Y.indptr[:-1], Y.indptr[1:], strict=True):
            terms = np.repeat(Y.indices[a:b], Y.data[a:b].astype(int)).astype(str)
            yield terms.tolist() or ["<empty>"]

    docs = list(words(X))
    start = time.perf_counter()
    model = tomotopy.LDAModel(k=k, alpha=alpha, eta=eta, seed=seed)
    for doc in docs:
        model.add_doc(doc)
    with warnings.catch_warnings():
        # Several workers: the same seed may give another fit (tomotopy says).
        warnings.simplefilter("ignore", RuntimeWarning)
        model.train(sweeps, workers=TOMOTOPY_WORKERS)
    if seconds is not None:
        seconds.append(time.perf_counter() - start)
    theta = np.array([doc.get_topic_dist() for doc in model.docs])
    phi = np.zeros((k, X.shape[1]))
    for z in range(k):
        dist = model.get_topic_word_dist(z)
        for w, p in zip(model.used_vocabs, dist, strict=True):
            if w != "<empty>":
                phi[z, int(w)] = p

    def fold_in(Y):
        docs = [model.make_doc(doc) for doc in words(Y)]
        inferred = model.infer(docs, iterations=100)[0]
        return np.array(
            [getattr(d, "get_topic_dist", lambda d=d: d)() for d in inferred]
        )

    return theta, phi, fold_in


def methods():
    out = {
        name: _ours(getattr(tf, name))
        for name in tf.estimators.__all__
        if name != "SimplexPLSA"
    }
    out["LDAVI vb"] = _ours(functools.partial(tf.LDAVI, inference="vb"))
    out["LDAVI cvb0"] = _ours(functools.partial(tf.LDAVI, inference="cvb0"))
    # CVB0 whose first start is the NNDSVDa one (the other starts random).
    out["LDAVI cvb0 nndsvda"] = _ours(
        functools.partial(tf.LDAVI, inference="cvb0", init="nndsvda")
    )
    # Issue 30: each solver of the KL factorizations, named.
    for name, key, solvers in (
        ("KLNMF", "solver", ("mu", "cd", "dn")),
        ("PLSI", "solver", ("em", "cd", "dn")),
    ):
        for solver in solvers:
            out[f"{name} {solver}"] = _ours(
                functools.partial(getattr(tf, name), **{key: solver})
            )
    for nmf_solver, plsi_solver in (("mu", "em"), ("cd", "cd"), ("dn", "dn")):
        out[f"HybridNMFPLSI {nmf_solver}/{plsi_solver}"] = _ours(
            functools.partial(
                tf.HybridNMFPLSI, nmf_solver=nmf_solver, plsi_solver=plsi_solver
            )
        )
    out["sklearn NMF(KL)"] = _sklearn_nmf
    out["sklearn LDA"] = _sklearn_lda
    out["KMeans tf-idf"] = _kmeans_tfidf
    try:
        import gensim  # noqa: F401

        out["gensim LDA"] = _gensim_lda
    except ImportError:
        pass
    try:
        import tomotopy  # noqa: F401

        out["tomotopy LDA"] = _tomotopy(0.1, 0.01)
        out["tomotopy LDA 1/k"] = _tomotopy()
    except ImportError:
        pass
    for name, fit in out.items():
        if hasattr(fit, "varied"):
            fit.label = name
    return out


def ran_at_defaults():
    """``estimators`` and ``at_defaults`` of a block, from the fits run."""
    varied = {name: getattr(fit, "varied", None) for name, fit in methods().items()}
    return {
        "estimators": dict(RAN),
        "at_defaults": {label: varied[label] for label in RAN},
    }


# The same-protocol held-out perplexity (issue 26): only the fitted topics
# differ between methods.  The topics' rows are floored at PHI_FLOOR and
# renormalized, theta is folded in on the observed half of each held-out
# document by FOLD_IN_STEPS EM steps from the uniform start with the topics
# fixed, and the other half is scored with the HELD_OUT_SMOOTHING of every
# estimator's score.
PHI_FLOOR = 1e-12
FOLD_IN_STEPS = 100


def em_fold_in(X, phi, n_steps=FOLD_IN_STEPS):
    """Topic proportions of the rows of ``X`` by EM with the topics ``phi`` fixed."""
    X = sp.csr_matrix(X, dtype=np.float64)
    k = phi.shape[0]
    theta = np.full((X.shape[0], k), 1.0 / k)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    for _ in range(n_steps):
        y = np.einsum("ek,ke->e", theta[rows], phi[:, X.indices])
        R = sp.csr_matrix((X.data / y, X.indices, X.indptr), shape=X.shape)
        theta = normalize_rows(theta * (R @ phi.T))[0]
    theta[np.diff(X.indptr) == 0] = 1.0 / k
    return theta


def held_out_split(X, seed):
    """``(train, test)``: the seed's shuffled 80 % and 20 % of the rows."""
    order = np.random.default_rng(seed).permutation(X.shape[0])
    cut = X.shape[0] * 4 // 5
    return X[order[:cut]], X[order[cut:]]


def held_out_perplexity(fit, X, k, seed):
    """Same-protocol perplexity of a shuffled 20 % of the documents, fitted on
    the rest (`held_out_split`)."""
    train, test = held_out_split(X, seed)
    _, phi, fold_in = fit(train, k, seed)
    if fold_in is None:
        return float("nan")
    return perplexity_of(phi, test, seed)


def perplexity_of(phi, test, seed):
    """The protocol's perplexity of topics ``phi`` on the held-out ``test``:
    each document's fold-in on half of its words (`completion_split`), the
    other half scored."""
    phi = np.maximum(np.asarray(phi, dtype=np.float64), PHI_FLOOR)
    phi = normalize_rows(phi)[0]
    observed, held = completion_split(test, seed)
    theta = em_fold_in(observed, phi)
    log_likelihood, n_words = completion_log_likelihood(
        held, theta, phi, smoothing=HELD_OUT_SMOOTHING
    )
    return float(np.exp(-log_likelihood / n_words))


def run(corpora, seeds, held_out=False, only=None, max_docs=None, repeats=1):
    rows = []
    for corpus in corpora:
        X, y = CORPORA[corpus]()
        X = sp.csr_matrix(X, dtype=np.float64)
        y = np.asarray(y)
        if max_docs and X.shape[0] > max_docs:
            keep = np.random.default_rng(0).choice(X.shape[0], max_docs, replace=False)
            X, y = X[keep], y[keep]
        k = len(np.unique(y))
        print(f"{corpus}: {X.shape[0]} documents, {X.shape[1]} terms, k = {k}")
        for name, fit in methods().items():
            if only and name not in only:
                continue
            scores = []
            for seed in seeds:
                times = []
                for _ in range(repeats):
                    start = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", ConvergenceWarning)
                        theta, phi, _ = fit(X, k, seed)
                    times.append(time.perf_counter() - start)
                # On a shared machine: the median of the repeated fits.
                seconds = float(np.median(times))
                perplexity = float("nan")
                if held_out:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", ConvergenceWarning)
                        perplexity = held_out_perplexity(fit, X, k, seed)
                labels = np.asarray(theta).argmax(axis=1)
                scores.append(
                    (
                        clustering_accuracy(y, labels),
                        normalized_mutual_info_score(y, labels),
                        float(np.mean(npmi_coherence(phi, X, n_top=10))),
                        perplexity,
                        seconds,
                    )
                )
            acc, nmi, npmi, perplexity, seconds = np.mean(scores, axis=0)
            rows.append((corpus, name, acc, nmi, npmi, perplexity, seconds))
            print(
                f"  {name:18s} acc {acc:.3f}  nmi {nmi:.3f}  npmi {npmi:+.3f}  "
                f"perplexity {perplexity:8.1f}  {seconds:7.2f} s",
                flush=True,
            )
    return rows


def table(rows, seeds):
    lines = [
        f"Means over seeds {list(seeds)}; k = number of classes; defaults.",
        "",
        "| corpus | method | accuracy | NMI | NPMI (top 10) | held-out "
        "perplexity | seconds |",
        "|---|---|---|---|---|---|---|",
    ]
    for corpus, name, acc, nmi, npmi, perplexity, seconds in rows:
        lines.append(
            f"| {corpus} | {name} | {acc:.3f} | {nmi:.3f} | {npmi:+.3f} | "
            f"{perplexity:.0f} | {seconds:.2f} |"
        )
    lines += ["", "Means over the corpora:", ""]
    lines += ["| method | accuracy | NMI | NPMI (top 10) |", "|---|---|---|---|"]
    names = list(dict.fromkeys(row[1] for row in rows))
    for name in names:
        acc, nmi, npmi = np.mean([row[2:5] for row in rows if row[1] == name], axis=0)
        lines.append(f"| {name} | {acc:.3f} | {nmi:.3f} | {npmi:+.3f} |")
    return "\n".join(lines) + "\n"


TOMOTOPY_ROW = "tomotopy LDA 1/k"
# Issue 26's PLSI reference was PLSI's default then, EM: the row "PLSI em"
# (the default is coordinate descent where numba is installed since issue
# 30); a table without that row falls back to "PLSI".
PLSI_ROWS = ("PLSI em", "PLSI")


def targets(rows, candidates=("LDAVI", "LDAVI vb", "LDAVI cvb0", "LDAVI cvb0 nndsvda")):
    """Issue 26's targets per corpus, as Markdown: each candidate's perplexity
    over the better of tomotopy (1/k priors) and PLSI's, its accuracy minus
    the lower of their two (the target is >= -0.02), its seconds over
    tomotopy's; then the worst case and the mean accuracies."""
    value = {(row[0], row[1]): row for row in rows}
    corpora = list(dict.fromkeys(row[0] for row in rows))
    names = [n for n in candidates if any(row[1] == n for row in rows)]
    plsi_row = next(n for n in PLSI_ROWS if any(row[1] == n for row in rows))
    lines = [
        "| corpus | "
        + " | ".join(
            f"{n}: perplexity / best, accuracy - lower, time / tomotopy" for n in names
        )
        + " |",
        "|---|" + "---|" * len(names),
    ]
    worst = {n: [0.0, np.inf, 0.0] for n in names}
    for corpus in corpora:
        tomo, plsi = value[corpus, TOMOTOPY_ROW], value[corpus, plsi_row]
        best = min(tomo[5], plsi[5])
        lower = min(tomo[2], plsi[2])
        cells = []
        for n in names:
            row = value[corpus, n]
            ratio, margin, time_ratio = row[5] / best, row[2] - lower, row[6] / tomo[6]
            w = worst[n]
            w[:] = [max(w[0], ratio), min(w[1], margin), max(w[2], time_ratio)]
            cells.append(f"{ratio:.3f}, {margin:+.3f}, {time_ratio:.2f}")
        lines.append(f"| {corpus} | " + " | ".join(cells) + " |")
    lines.append(
        "| worst (target: <= 1.010, >= -0.020, <= 1.00) | "
        + " | ".join(f"{w[0]:.3f}, {w[1]:+.3f}, {w[2]:.2f}" for w in worst.values())
        + " |"
    )
    means = {
        n: np.mean([row[2] for row in rows if row[1] == n])
        for n in [*names, TOMOTOPY_ROW, plsi_row]
    }
    lines += [
        "",
        "Mean accuracy: "
        + ", ".join(f"{n} {m:.3f}" for n, m in means.items())
        + " (target: the candidate's >= tomotopy's).",
    ]
    return "\n".join(lines) + "\n"


def figure(rows, path):
    """Bar charts of each method's accuracy and NPMI per corpus (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    corpora = list(dict.fromkeys(row[0] for row in rows))
    names = list(dict.fromkeys(row[1] for row in rows))
    value = {(row[0], row[1]): row for row in rows}
    fig, axes = plt.subplots(2, 1, figsize=(12, 7), sharex=True)
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        x = np.arange(len(corpora)) + i * width
        for ax, column in zip(axes, (2, 4), strict=True):
            ax.bar(
                x,
                [value[c, name][column] for c in corpora],
                width,
                label=name,
                hatch="" if name in tf.estimators.__all__ else "//",
            )
    axes[0].set_ylabel("clustering accuracy")
    axes[1].set_ylabel("NPMI of the top-10 terms")
    axes[1].set_xticks(np.arange(len(corpora)) + 0.4 - width / 2, corpora)
    axes[0].legend(ncol=4, fontsize=8)
    axes[0].set_title("Defaults on real labeled text, k = number of classes")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="Classic3, CSTR, 1 seed")
    parser.add_argument("--corpora", nargs="+", choices=list(CORPORA))
    parser.add_argument(
        "--set",
        choices=["tuning", "validation"],
        help="the TUNING or VALIDATION corpora",
    )
    parser.add_argument(
        "--max-docs", type=int, help="a random subset of this many documents per corpus"
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--out", type=Path, help="write the table (Markdown) here")
    parser.add_argument(
        "--held-out",
        action="store_true",
        help="also fit on 80 %% of the documents and score the other 20 %%",
    )
    parser.add_argument("--methods", nargs="+", help="only these methods")
    parser.add_argument("--figure", type=Path, help="write the bar charts (PNG) here")
    parser.add_argument(
        "--repeats", type=int, default=1, help="time each fit this many times (median)"
    )
    parser.add_argument(
        "--block",
        help="write the tables and issue 26's targets as the generated block "
        "of this name into docs/lda_defaults.md (and docs/_data/NAME.json)",
    )
    parser.add_argument(
        "--write-doc",
        metavar="NAME",
        help="also write the tables as the generated block NAME (docs/_data)",
    )
    args = parser.parse_args(argv)
    corpora = args.corpora or (["classic3", "cstr"] if args.quick else list(CORPORA))
    if args.set:
        corpora = list(TUNING if args.set == "tuning" else VALIDATION)
    seeds = [args.seeds[0]] if args.quick else args.seeds
    rows = run(
        corpora,
        seeds,
        held_out=args.held_out,
        only=args.methods,
        max_docs=args.max_docs,
        repeats=args.repeats,
    )
    text = table(rows, seeds)
    if any(row[1] == TOMOTOPY_ROW for row in rows) and args.held_out:
        text += "\nIssue 26's targets:\n\n" + targets(rows)
    print(text)
    if args.block:
        from _docblocks import command_line, parts_from_markdown, write_block

        write_block(
            args.block, "docs/lda_defaults.md", command_line(argv),
            parts_from_markdown(text), **ran_at_defaults(),
        )  # fmt: skip
    if args.out:
        args.out.write_text(text)
    if args.figure:
        figure(rows, args.figure)
    if args.write_doc:
        from _docblocks import write_doc

        write_doc(args.write_doc, text, "docs/real_text.md", **ran_at_defaults())


if __name__ == "__main__":
    main()
