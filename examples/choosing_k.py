"""Choosing the number of topics with GridSearchCV and the held-out ``score``.

Every estimator's ``score(X)`` is a held-out document-completion
log-likelihood per word: each document's tokens are split in half by binomial
thinning, the topic proportions are folded in on one half with the topics
fixed, and the other half is scored under the resulting mixture.  A model
with too many topics fits the observed half too closely and predicts the
other half worse, so -- unlike the training likelihood, which keeps improving
with k -- the score peaks.  ``GridSearchCV``'s default scoring is that score.

This script generates corpora from the LDA model with a known number of
topics (5, 10 and 20) and enough data for the truth to be recoverable
(50,000 tokens per topic), runs

    GridSearchCV(Estimator(random_state=0, split_merge=3),
                 {"n_components": range(2, 31)}, cv=3)

for PLSI, KLNMF and LDAVI (LDAVI with ``inference="vb"``), and prints the k
each picks and the whole score curve.  For comparison it also reports the k
minimizing BIC and AIC (:func:`sklearn_topicfac.metrics.bic`,
:func:`~sklearn_topicfac.metrics.aic`) of the models fitted on the whole
corpus.

    python examples/choosing_k.py --n-jobs 2   # full sweep (~20 min at 680bfa5)
    python examples/choosing_k.py --quick    # one small corpus, k = 2..8
    python examples/choosing_k.py --report docs/choosing_k_results.md \\
        --figure docs/figures/choosing_k.png
"""

import argparse
import functools
import importlib.util
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV

from sklearn_topicfac import KLNMF, LDAVI, PLSI
from sklearn_topicfac.metrics import aic, bic

# With split-merge moves (off by default since they rarely pay on real
# text, docs/performance.md): on these planted corpora they repaired the
# local optima that make the held-out score overshoot -- without them
# LDAVI's score peaked at k = 28 on the 20-topic corpus when measured
# (docs/guide/choosing_k.md).  LDAVI runs the mean-field VB
# (inference="vb"; MAP by EM, the default, and CVB0 make no moves).  The
# recorded results (docs/choosing_k_results.md, commit 680bfa5) predate
# these settings: PLSI by EM and KLNMF by multiplicative updates, without
# moves, and LDAVI's VB with max_iter=10 and its then-default moves.
ESTIMATORS = {
    name: functools.partial(cls, split_merge=3, **params)
    for name, cls, params in (
        ("PLSI", PLSI, {}),
        ("KLNMF", KLNMF, {}),
        ("LDAVI", LDAVI, {"inference": "vb"}),
    )
}


def make_lda_corpus(
    n_topics,
    *,
    tokens_per_topic=50_000,
    doc_length=200,
    n_features=2_000,
    doc_topic_prior=0.1,
    topic_word_prior=0.05,
    random_state=0,
):
    """Documents drawn from latent Dirichlet allocation with ``n_topics`` topics.

    Topics ``phi_k ~ Dir(topic_word_prior)`` over ``n_features`` terms;
    ``tokens_per_topic * n_topics / doc_length`` documents, each with
    proportions ``theta_d ~ Dir(doc_topic_prior)``, a Poisson(``doc_length``)
    number of words, and counts ``Multinomial(N_d, theta_d @ phi)``.  Terms
    that occur in no document are dropped (a vectorizer would never see
    them).

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_documents, n_terms)
        Counts.
    theta : ndarray of shape (n_documents, n_topics)
        The true topic proportions.
    phi : ndarray of shape (n_topics, n_terms)
        The true topics, restricted to the kept terms.
    """
    rng = np.random.default_rng(random_state)
    n_docs = int(np.ceil(tokens_per_topic * n_topics / doc_length))
    phi = rng.dirichlet(np.full(n_features, topic_word_prior), size=n_topics)
    theta = rng.dirichlet(np.full(n_topics, doc_topic_prior), size=n_docs)
    lengths = rng.poisson(doc_length, size=n_docs)
    p = theta @ phi
    p /= p.sum(axis=1, keepdims=True)
    X = sp.csr_matrix(
        np.vstack([rng.multinomial(n, row) for n, row in zip(lengths, p, strict=True)]),
        dtype=np.float64,
    )
    used = np.flatnonzero(np.asarray(X.sum(axis=0)).ravel())
    return X[:, used], theta, phi[:, used]


def choose_k(Estimator, X, grid, *, cv=3, n_jobs=None, refit=True, **params):
    """``GridSearchCV`` over ``n_components`` with the default scoring.

    Returns the chosen k and the mean held-out score of every k in ``grid``
    (``refit=False`` skips the final fit at the chosen k).
    """
    search = GridSearchCV(
        Estimator(random_state=0, **params),
        {"n_components": list(grid)},
        cv=cv,
        n_jobs=n_jobs,
        refit=refit,
    )
    with warnings.catch_warnings():
        # Default max_iter/tol: "did not converge" on some folds is expected.
        warnings.simplefilter("ignore", ConvergenceWarning)
        search.fit(X)
    return search.best_params_["n_components"], search.cv_results_["mean_test_score"]


def information_criteria(Estimator, X, grid, **params):
    """BIC and AIC of models fitted on all of ``X``, for every k in ``grid``."""
    out = {"bic": [], "aic": []}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for k in grid:
            model = Estimator(n_components=k, random_state=0, **params).fit(X)
            out["bic"].append(bic(model, X))
            out["aic"].append(aic(model, X))
    return {name: np.asarray(values) for name, values in out.items()}


def within(k, truth, tolerance=0.2):
    """Whether ``k`` is within ``tolerance`` (relative) of ``truth``."""
    return abs(k - truth) <= tolerance * truth + 1e-12


def run(true_ks, grid, estimators, *, corpus_params, seed, with_ic, n_jobs):
    rows, curves = [], {}
    for truth in true_ks:
        X, _, _ = make_lda_corpus(truth, random_state=seed, **corpus_params)
        print(
            f"\ncorpus: {truth} true topics, {X.shape[0]} documents x "
            f"{X.shape[1]} terms, {int(X.sum())} tokens (seed {seed})",
            flush=True,
        )
        for name in estimators:
            start = time.perf_counter()
            chosen, scores = choose_k(ESTIMATORS[name], X, grid, n_jobs=n_jobs)
            row = {
                "truth": truth,
                "estimator": name,
                "chosen": chosen,
                "ok": within(chosen, truth),
                "seconds": time.perf_counter() - start,
            }
            if with_ic and name != "LDAVI":
                ic = information_criteria(ESTIMATORS[name], X, grid)
                row["bic"] = grid[int(np.argmin(ic["bic"]))]
                row["aic"] = grid[int(np.argmin(ic["aic"]))]
            rows.append(row)
            curves[truth, name] = scores
            print(
                f"  {name:6s} chose k={chosen:2d} "
                f"({'within' if row['ok'] else 'NOT within'} +/-20% of {truth}); "
                + (f"BIC k={row['bic']}, AIC k={row['aic']}; " if "bic" in row else "")
                + f"{row['seconds']:.0f} s",
                flush=True,
            )
            print(
                "    "
                + "  ".join(f"{k}:{s:.4f}" for k, s in zip(grid, scores, strict=True))
            )
    return rows, curves


def report(rows, curves, grid, path, seed):
    lines = [
        "| true k | estimator | chosen k (GridSearchCV, cv=3) | within +/-20% |"
        " BIC k | AIC k | time (s) |",
        "|---:|---|---:|---|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['truth']} | {r['estimator']} | {r['chosen']} | "
            f"{'yes' if r['ok'] else '**no**'} | {r.get('bic', '')} | "
            f"{r.get('aic', '')} | {r['seconds']:.0f} |"
        )
    lines += ["", "Mean held-out score (nats per held-out word) by k:", ""]
    header = "| k | " + " | ".join(f"{n} (k*={t})" for t, n in curves) + " |"
    lines += [header, "|---:|" + "---:|" * len(curves)]
    for i, k in enumerate(grid):
        cells = []
        for scores in curves.values():
            best = int(np.argmax(scores)) == i
            cells.append(f"**{scores[i]:.4f}**" if best else f"{scores[i]:.4f}")
        lines.append(f"| {k} | " + " | ".join(cells) + " |")
    text = f"Corpus seed {seed}.\n\n" + "\n".join(lines) + "\n"
    docblocks = _docblocks()
    if docblocks is not None and Path(path).resolve().is_relative_to(
        docblocks.REPO_ROOT / "docs"
    ):
        # A page of the repository's docs: the generated block named after
        # the file, and its results file docs/_data/NAME.json.
        docblocks.write_block(
            Path(path).stem,
            Path(path).resolve(),
            docblocks.command_line(),
            docblocks.parts_from_markdown(text),
        )
    else:
        Path(path).write_text(text)
    print(f"\nreport written to {path}")


def _docblocks():
    """``benchmarks/_docblocks.py`` of a source checkout, else None."""
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "_docblocks.py"
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location("_docblocks", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def figure(curves, grid, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    truths = sorted({t for t, _ in curves})
    fig, axes = plt.subplots(
        1,
        len(truths),
        figsize=(4.2 * len(truths), 3.4),
        constrained_layout=True,
        squeeze=False,
    )
    for ax, truth in zip(axes[0], truths, strict=True):
        for (t, name), scores in curves.items():
            if t == truth:
                ax.plot(grid, scores, marker=".", label=name)
                ax.plot(grid[int(np.argmax(scores))], scores.max(), "k*")
        ax.axvline(truth, color="0.6", linestyle=":")
        ax.set_title(f"{truth} true topics")
        ax.set_xlabel("n_components")
    axes[0, 0].set_ylabel("held-out log-likelihood per word")
    axes[0, 0].legend()
    fig.savefig(path, dpi=110)
    print(f"figure written to {path}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="one small corpus (5 topics, 40,000 tokens per topic)",
    )
    parser.add_argument("--seed", type=int, default=0, help="corpus seed")
    parser.add_argument(
        "--estimators", nargs="+", default=list(ESTIMATORS), choices=list(ESTIMATORS)
    )
    parser.add_argument("--no-ic", action="store_true", help="skip BIC and AIC")
    parser.add_argument("--n-jobs", type=int, default=None)
    parser.add_argument("--report", help="write the tables as markdown here")
    parser.add_argument("--figure", help="plot the score curves here (matplotlib)")
    args = parser.parse_args(argv)

    if args.quick:
        true_ks, grid = [5], list(range(2, 9))
        corpus_params = dict(tokens_per_topic=40_000, doc_length=200, n_features=1_000)
    else:
        true_ks, grid = [5, 10, 20], list(range(2, 31))
        corpus_params = {}
    rows, curves = run(
        true_ks,
        grid,
        args.estimators,
        corpus_params=corpus_params,
        seed=args.seed,
        with_ic=not args.no_ic,
        n_jobs=args.n_jobs,
    )
    if args.report:
        report(rows, curves, grid, args.report, args.seed)
    if args.figure:
        figure(curves, grid, args.figure)
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
