"""Choosing the number of topics on the labeled corpora: which criterion finds k?

For every labeled corpus of ``../shared/data`` (loaded exactly as
``benchmarks/real_text.py`` loads them) and every method below,
:func:`sklearn_topicfac.model_selection.select_n_components` runs over one
grid of candidates, the same for every corpus,

    k = 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30

(roughly geometric; 1.5 times the largest number of classes, 20), and the
chosen k is compared with the number of classes: a hit is within +/-30 %.

Methods (``--estimator`` picks the topic model, KLNMF by default):

- ``stability (random starts)``: Greene, O'Callaghan & Cunningham's
  stability analysis with ``Estimator(init="random")`` -- the start of
  every fit is random as well as its subsample of the documents;
- ``stability (SVD start)``: the same with the estimator's default start
  (NNDSVDa, a deterministic function of the data up to a seed), as the paper
  uses NNDSVD;
- ``held-out``: the mean held-out document-completion log-likelihood per word
  over 3 shuffled folds (``score``, what ``GridSearchCV`` computes);
- ``AIC``, ``BIC``: one fit per k on all the documents, scored by Akaike's or
  Schwarz's information criterion (``sklearn_topicfac.metrics.aic``/``bic``).

Budget: two cores shared with other work, so ``n_jobs=1``, 5 subsamples of
80 % of the documents (the paper uses 100), ``max_iter=100`` (with the former
multiplicative updates, the fits stopped at ``tol=1e-4`` first on every
corpus but the largest k of 20 Newsgroups; not re-measured since).

    python benchmarks/choose_k.py --quick                  # CSTR and Classic3
    python benchmarks/choose_k.py --out docs/choosing_k_methods_results.md \\
        --figure docs/figures/choosing_k_methods.png
"""

import argparse
import pickle
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from _docblocks import command_line, parts_from_markdown, write_block
from real_text import CORPORA
from sklearn.exceptions import ConvergenceWarning

import sklearn_topicfac as tf
from sklearn_topicfac.model_selection import select_n_components

GRID = (2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30)
TOLERANCE = 0.3  # a hit: within +/-30 % of the number of classes
PER_WORD_RANGE = 0.6  # the figure's per-word axis: the best k minus this
METHODS = (
    "stability (random starts)",
    "stability (SVD start)",
    "held-out",
    "AIC",
    "BIC",
)


def _setup(method, Estimator, max_iter):
    """The estimator and the keyword arguments of ``select_n_components``."""
    params = {} if max_iter is None else {"max_iter": max_iter}
    if method == "stability (random starts)":
        return Estimator(init="random", **params), {"method": "stability"}
    if method == "stability (SVD start)":
        return Estimator(**params), {"method": "stability"}
    if method in ("AIC", "BIC"):
        return Estimator(**params), {"method": method.lower()}
    return Estimator(**params), {"method": "held_out"}


def hit(k, n_classes):
    return abs(k - n_classes) <= TOLERANCE * n_classes


def run(corpora, methods, Estimator, n_subsamples, max_iter, seed, n_jobs):
    results = {}
    for corpus in corpora:
        X, y = CORPORA[corpus]()
        X = sp.csr_matrix(X, dtype=np.float64)
        n_classes = len(np.unique(y))
        print(
            f"\n{corpus}: {X.shape[0]} documents, {X.shape[1]} terms, "
            f"{n_classes} classes",
            flush=True,
        )
        for method in methods:
            estimator, kwargs = _setup(method, Estimator, max_iter)
            if kwargs["method"] == "stability":
                kwargs["n_subsamples"] = n_subsamples
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                result = select_n_components(
                    estimator, X, GRID, random_state=seed, n_jobs=n_jobs, **kwargs
                )
            seconds = time.perf_counter() - start
            results[corpus, method] = (result, n_classes, seconds)
            curve = "  ".join(
                f"{k}:{s:.3f}"
                for k, s in zip(result.candidates, result.scores, strict=True)
            )
            verdict = "hit" if hit(result.best_n_components, n_classes) else "MISS"
            print(
                f"  {method:26s} k = {result.best_n_components:2d} ({verdict}, "
                f"{seconds:6.1f} s)  {curve}",
                flush=True,
            )
    return results


def markdown(results, corpora, methods, Estimator, n_subsamples, seed):
    name = Estimator.__name__
    lines = [
        f"Estimator {name}, {n_subsamples} subsamples, seed {seed}.",
        "",
        f"Chosen k with {name}; **bold** = within +/-30 % of the number of classes.",
        "",
        "| corpus | classes | " + " | ".join(methods) + " |",
        "|---|---:|" + "---:|" * len(methods),
    ]
    hits = dict.fromkeys(methods, 0)
    for corpus in corpora:
        cells = []
        for method in methods:
            result, n_classes, _ = results[corpus, method]
            k = result.best_n_components
            hits[method] += hit(k, n_classes)
            cells.append(f"**{k}**" if hit(k, n_classes) else str(k))
        lines.append(f"| {corpus} | {n_classes} | " + " | ".join(cells) + " |")
    lines.append(
        "| hits | | " + " | ".join(f"{hits[m]}/{len(corpora)}" for m in methods) + " |"
    )
    lines += ["", "Seconds per corpus and method:", ""]
    lines.append("| corpus | " + " | ".join(methods) + " |")
    lines.append("|---|" + "---:|" * len(methods))
    for corpus in corpora:
        cells = [f"{results[corpus, m][2]:.0f}" for m in methods]
        lines.append(f"| {corpus} | " + " | ".join(cells) + " |")
    total = sum(seconds for _, _, seconds in results.values())
    lines += ["", f"Total: {total / 60:.1f} min.", ""]
    lines += [
        "Mean score by k (stability: agreement in [0, 1]; held-out: nats per "
        "word; AIC, BIC: minus the criterion over twice the words; the chosen "
        "k in bold):",
        "",
    ]
    for corpus in corpora:
        lines.append(f"**{corpus}** ({results[corpus, methods[0]][1]} classes)")
        lines.append("")
        lines.append("| k | " + " | ".join(methods) + " |")
        lines.append("|---:|" + "---:|" * len(methods))
        for i, k in enumerate(GRID):
            cells = []
            for method in methods:
                result = results[corpus, method][0]
                text = f"{result.scores[i]:.3f}"
                cells.append(f"**{text}**" if k == result.best_n_components else text)
            lines.append(f"| {k} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def figure(results, corpora, methods, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n_cols = 3
    n_rows = -(-len(corpora) // n_cols)
    fig, axes = plt.subplots(
        n_rows, n_cols, figsize=(4.6 * n_cols, 3.4 * n_rows), squeeze=False
    )
    colors = dict(zip(methods, ("C0", "C1", "C2", "C3", "C4"), strict=False))
    for ax, corpus in zip(axes.ravel(), corpora, strict=False):
        n_classes = results[corpus, methods[0]][1]
        twin = None
        for method in methods:
            result = results[corpus, method][0]
            target = ax
            per_word = result.method != "stability"  # nats per word
            if per_word:
                twin = twin or ax.twinx()
                target = twin
            # The folds' held-out scores differ by a per-fold offset (which
            # words each test fold holds), the same for every k: their spread
            # says nothing about the differences between k.  No error bars.
            # Per-word curves relative to their best, so that criteria with
            # different offsets share one axis (clipped at -PER_WORD_RANGE).
            target.errorbar(
                result.candidates,
                result.scores - result.scores.max() if per_word else result.scores,
                yerr=None if per_word else result.scores_std,
                marker="o",
                markersize=3,
                capsize=2,
                color=colors[method],
                linestyle="--" if per_word else "-",
                label=f"{method}: k = {result.best_n_components}",
            )
        ax.axvspan(
            (1 - TOLERANCE) * n_classes,
            (1 + TOLERANCE) * n_classes,
            color="grey",
            alpha=0.15,
        )
        ax.axvline(n_classes, color="grey", linestyle=":")
        ax.set_xscale("log")
        ax.set_xticks(GRID, [str(k) for k in GRID], fontsize=7)
        ax.minorticks_off()
        ax.set_title(f"{corpus} ({n_classes} classes)")
        ax.set_xlabel("n_components")
        ax.set_ylabel("stability (agreement)")
        handles, labels = ax.get_legend_handles_labels()
        if twin is not None:
            twin.set_ylabel("nats per word below the best k", fontsize=8)
            twin.set_ylim(-PER_WORD_RANGE, 0.02)
            more = twin.get_legend_handles_labels()
            handles, labels = handles + more[0], labels + more[1]
        ax.legend(handles, labels, fontsize=6, loc="best", framealpha=0.7)
    for ax in axes.ravel()[len(corpora) :]:
        ax.set_visible(False)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="CSTR and Classic3")
    parser.add_argument("--corpora", nargs="+", choices=list(CORPORA))
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=METHODS)
    parser.add_argument(
        "--estimator",
        default="KLNMF",
        choices=[n for n in tf.estimators.__all__ if n != "SimplexPLSA"],
    )
    parser.add_argument("--n-subsamples", type=int, default=5)
    parser.add_argument(
        "--max-iter", type=int, default=100, help="cap the fits' iterations"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--out", type=Path, help="write the Markdown here")
    parser.add_argument("--figure", type=Path, help="write the curves (PNG) here")
    parser.add_argument("--save", type=Path, help="pickle the results here")
    parser.add_argument(
        "--load", type=Path, help="redo the tables and figure from --save's file"
    )
    args = parser.parse_args(argv)
    corpora = args.corpora or (["cstr", "classic3"] if args.quick else list(CORPORA))
    Estimator = getattr(tf, args.estimator)
    start = time.perf_counter()
    if args.load:
        with open(args.load, "rb") as file:
            results = pickle.load(file)
    else:
        results = run(
            corpora,
            args.methods,
            Estimator,
            args.n_subsamples,
            args.max_iter,
            args.seed,
            args.n_jobs,
        )
    if args.save:
        with open(args.save, "wb") as file:
            pickle.dump(results, file)
    text = markdown(
        results, corpora, args.methods, Estimator, args.n_subsamples, args.seed
    )
    print("\n" + text)
    print(f"wall time: {(time.perf_counter() - start) / 60:.1f} min")
    if args.out:
        # the block "choosing_k_methods" and docs/_data/choosing_k_methods.json
        write_block(
            "choosing_k_methods", args.out, command_line(), parts_from_markdown(text)
        )
    if args.figure:
        figure(results, corpora, args.methods, args.figure)


if __name__ == "__main__":
    main()
