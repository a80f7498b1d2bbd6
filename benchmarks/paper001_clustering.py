"""Ding, Li & Peng (AAAI 2006), Tables 2 and 3: K-means, NMF, PLSI and the hybrid.

For each corpus and seed, from one smoothed K-means start (``init="kmeans"``,
K-means seeded with the seed):

* K-means itself (the clustering the start is built from);
* NMF-only (:class:`KLNMF`) and PLSI-only (:class:`PLSI`) to convergence;
* line B of Table 2: PLSI run to convergence from NMF's solution, line C: NMF
  from PLSI's; line A is NMF-only against PLSI-only;
* :class:`HybridNMFPLSI` (whose first two phases are NMF-only and line B:
  the script checks that their objectives agree);
* a control the paper does not have: NMF run for as many iterations as the
  hybrid ran in total, to tell the effect of alternating from that of
  iterating longer.

Clusterings are the row-wise argmax of ``P(z|d)``.  Scores: accuracy
(Hungarian matching), purity, entropy, ARI, NMI; disagreement ``delta``
between two clusterings (paper 001's definition).  Mean and standard
deviation over the seeds; the paper's figures beside ours where the corpus is
the same.

As in the paper, the corpora with more than 1000 terms are reduced to the
1000 terms of highest mutual information (term occurrence vs class); the
CSTR and WebACE files already have 1000 terms.  Documents left without words
are dropped.  Classic3 falls back on the copy bundled with the package when
the shared file is absent.

Usage::

    python benchmarks/paper001_clustering.py [--data-dir DIR] [--quick]
        [--seeds N] [--corpora NAME ...] [--n-jobs J] [--no-write]

Writes the tables into ``docs/paper001_clustering.md`` (the generated block
``paper001_clustering``, from ``docs/_data/paper001_clustering.json``, keeping
the hand-written discussion around it; see benchmarks/README.md) and the
figure ``docs/figures/paper001_hybrid.png`` (if matplotlib is installed).
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from _docblocks import command_line, parts_from_markdown, write_block
from joblib import Parallel, delayed
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from sklearn_topicfac import KLNMF, PLSI, HybridNMFPLSI
from sklearn_topicfac.datasets import (
    load_classic3,
    load_labeled_text,
    load_mat_corpus,
    load_reuters21578,
)
from sklearn_topicfac.engine.starts import kmeans_labels
from sklearn_topicfac.metrics import clustering_disagreement, clustering_scores

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA_DIR = REPO_ROOT.parent / "shared" / "data"
DOC_PATH = REPO_ROOT / "docs" / "paper001_clustering.md"
FIGURE_PATH = REPO_ROOT / "docs" / "figures" / "paper001_hybrid.png"
N_TERMS = 1000

# name -> (files relative to the data dir, loader, paper 001's column or None)
CORPORA = {
    "CSTR": (["cstr/cstr.mat"], lambda p: load_mat_corpus(p[0]), "CSTR"),
    "WebACE": (["webace/WebACE.mat"], lambda p: load_mat_corpus(p[0]), "WebAce"),
    "WebKB4": (
        ["webkb4/webkb-train-stemmed.txt", "webkb4/webkb-test-stemmed.txt"],
        load_labeled_text,
        "WebKB",
    ),
    "Reuters-10": (
        ["reuters21578"],
        lambda p: load_reuters21578(p[0], n_classes=10),
        "Reuters",
    ),
    "Classic3": (["classic3/classic3.mat"], lambda p: load_mat_corpus(p[0]), None),
    "20Newsgroups": (
        ["20newsgroups/20Newsgroups.mat"],
        lambda p: load_mat_corpus(p[0]),
        None,
    ),
}
QUICK_CORPORA = ("CSTR", "WebACE", "WebKB4", "Reuters-10", "Classic3")

# Paper 001, Table 3 (clustering accuracy) and Table 2 (disagreement delta).
PAPER_ACCURACY = {
    "Reuters": {"K-means": 0.316, "NMF": 0.454, "PLSI": 0.487, "Hybrid": 0.521},
    "WebKB": {"K-means": 0.410, "NMF": 0.619, "PLSI": 0.510, "Hybrid": 0.644},
    "CSTR": {"K-means": 0.617, "NMF": 0.666, "PLSI": 0.668, "Hybrid": 0.878},
    "WebAce": {"K-means": 0.416, "NMF": 0.520, "PLSI": 0.519, "Hybrid": 0.523},
    "Log": {"K-means": 0.775, "NMF": 0.778, "PLSI": 0.779, "Hybrid": 0.781},
}
PAPER_DELTA = {
    "WebAce": {"A": 0.083, "B": 0.029, "C": 0.022},
    "CSTR": {"A": 0.072, "B": 0.025, "C": 0.013},
    "WebKB": {"A": 0.239, "B": 0.056, "C": 0.052},
    "Reuters": {"A": 0.070, "B": 0.051, "C": 0.040},
    "Log": {"A": 0.010, "B": 0.010, "C": 0.012},
}
METHODS = ("K-means", "NMF", "PLSI", "Hybrid", "NMF, equal iterations")
SCORES = ("accuracy", "purity", "entropy", "ari", "nmi")


def select_terms(X, y, n_terms):
    """Keep the ``n_terms`` terms of highest mutual information with the class.

    The mutual information between a term's occurrence (present / absent in a
    document) and the document's class, as in paper 001's preprocessing.
    """
    if X.shape[1] <= n_terms:
        return X
    present = (X > 0).astype(np.float64)
    n = X.shape[0]
    classes = sp.csr_matrix((np.ones(n), (np.arange(n), y)))
    n_c = np.asarray(classes.sum(axis=0)).ravel()
    df_c = np.asarray((classes.T @ present).todense())
    df = df_c.sum(axis=0)
    mi = np.zeros(X.shape[1])
    for joint, marginal in ((df_c, df), (n_c[:, None] - df_c, n - df)):
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = joint * n / (marginal[None, :] * n_c[:, None])
            mi += np.where(joint > 0, joint / n * np.log(ratio), 0).sum(axis=0)
    keep = np.sort(np.argsort(-mi, kind="stable")[:n_terms])
    return X[:, keep]


def load(name, data_dir):
    files, loader, _ = CORPORA[name]
    paths = [data_dir / f for f in files]
    missing = [str(p) for p in paths if not p.exists()]
    source = ""
    if missing and name == "Classic3":
        # The package bundles the same matrix: no path needed.
        X, y = load_classic3(return_X_y=True)
        source = " (bundled copy)"
    elif missing:
        return None, f"skipping {name}: {', '.join(missing)} not found"
    else:
        X, y, _, _ = loader(paths)
    n_raw, m_raw = X.shape
    X = select_terms(X, y, N_TERMS)
    keep = np.asarray(X.sum(axis=1)).ravel() > 0
    X, y = sp.csr_matrix(X[keep]), y[keep]
    y = np.unique(y, return_inverse=True)[1]
    note = (
        f"{name}{source}: {n_raw} documents x {m_raw} terms -> {X.shape[0]} x "
        f"{X.shape[1]} ({n_raw - X.shape[0]} empty documents dropped), "
        f"{X.nnz} non-zeros, {int(X.sum())} tokens, {y.max() + 1} classes"
    )
    return (X, y), note


def doc_topic(est):
    """``P(z|d)`` (up to row scaling) of the training documents of a fit."""
    if isinstance(est, KLNMF):
        return est.embedding_ * est.components_.sum(axis=1)
    return est.embedding_


def count_scale(est, total):
    """The fitted ``(W, H)`` with ``W @ H`` estimating ``X`` (a custom start)."""
    if isinstance(est, KLNMF):
        return est.embedding_, est.components_
    return est.p_d_given_z_ * (est.p_z_ * total), est.components_


def run_seed(X, y, seed, max_iter, tol):
    """Every method of the experiment from the K-means start of one seed."""
    k = int(y.max()) + 1
    common = dict(n_components=k, max_iter=max_iter, tol=tol)
    # The paper's algorithms (the estimators' defaults are diagonal Newton):
    # Lee & Seung's multiplicative updates for NMF, Hofmann's EM for PLSI.
    nmf_common = dict(solver="mu", **common)
    plsi_common = dict(solver="em", **common)
    total = X.sum()
    out = {"labels": {}, "loss": {}, "iterations": {}, "seconds": {}}
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)

        def timed(key, fit):
            start = time.perf_counter()
            est = fit()
            out["seconds"][key] = time.perf_counter() - start
            return est

        out["labels"]["K-means"] = timed("K-means", lambda: kmeans_labels(X, k, seed))
        nmf = timed(
            "NMF", lambda: KLNMF(init="kmeans", random_state=seed, **nmf_common).fit(X)
        )
        plsi = timed(
            "PLSI", lambda: PLSI(init="kmeans", random_state=seed, **plsi_common).fit(X)
        )
        W, H = count_scale(nmf, total)
        nmf_plsi = PLSI(init="custom", **plsi_common).fit(X, W=W, H=H)
        W, H = count_scale(plsi, total)
        plsi_nmf = KLNMF(init="custom", **nmf_common).fit(X, W=W, H=H)
        hybrid = timed(
            "Hybrid",
            lambda: HybridNMFPLSI(
                nmf_solver="mu", plsi_solver="em", random_state=seed, **common
            ).fit(X),
        )
        equal = timed(
            "NMF, equal iterations",
            lambda: KLNMF(
                n_components=k,
                solver="mu",
                init="kmeans",
                max_iter=hybrid.n_iter_,
                tol=0,
                random_state=seed,
            ).fit(X),
        )
    fits = {
        "NMF": nmf,
        "PLSI": plsi,
        "Hybrid": hybrid,
        "NMF, equal iterations": equal,
        "NMF>PLSI": nmf_plsi,
        "PLSI>NMF": plsi_nmf,
    }
    for key, est in fits.items():
        out["labels"][key] = doc_topic(est).argmax(axis=1)
        out["loss"][key] = est.loss_
        out["iterations"][key] = est.n_iter_
    out["phase_losses"] = hybrid.phase_losses_
    # The hybrid's first phases are NMF-only and line B: same start, same math.
    out["consistency"] = max(
        abs(hybrid.phase_losses_[1] - nmf.loss_),
        abs(hybrid.phase_losses_[2] - nmf_plsi.loss_),
    ) / abs(nmf.loss_)
    out["scores"] = {
        m: clustering_scores(y, out["labels"][m]) for m in METHODS if m in out["labels"]
    }
    lab = out["labels"]
    out["delta"] = {
        "A": clustering_disagreement(lab["NMF"], lab["PLSI"]),
        "B": clustering_disagreement(lab["NMF"], lab["NMF>PLSI"]),
        "C": clustering_disagreement(lab["PLSI"], lab["PLSI>NMF"]),
    }
    return out


def mean_std(values, digits=3):
    values = np.asarray(values, dtype=float)
    return f"{values.mean():.{digits}f} ± {values.std():.{digits}f}"


def tables(results, notes, args, elapsed):
    """The generated part of the markdown report."""
    names = list(results)
    lines = [
        f"Generated by `python benchmarks/paper001_clustering.py"
        f"{' --quick' if args.quick else ''}` with {args.seeds} seeds "
        f"(K-means seeds 0..{args.seeds - 1}), `max_iter={args.max_iter}` per "
        f"phase, `tol={args.tol}`, in {elapsed / 60:.1f} min on "
        f"{args.n_jobs} worker(s).",
        "",
        "Corpora as loaded:",
        "",
        *[f"- {note}" for note in notes],
        "",
        "### Clustering accuracy (Table 3), mean ± std over seeds",
        "",
        "Paper 001's value in brackets where the corpus is the same.",
        "",
        "| corpus | " + " | ".join(METHODS) + " |",
        "|---|" + "---|" * len(METHODS),
    ]
    for name in names:
        paper = PAPER_ACCURACY.get(CORPORA[name][2] or "", {})
        cells = []
        for method in METHODS:
            cell = mean_std([r["scores"][method]["accuracy"] for r in results[name]])
            if method in paper:
                cell += f" [{paper[method]:.3f}]"
            cells.append(cell)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "### Disagreement δ between clusterings (Table 2), mean ± std",
        "",
        "A: NMF-only vs PLSI-only; B: NMF vs PLSI run on from NMF's solution; "
        "C: PLSI vs NMF run on from PLSI's solution. Paper in brackets.",
        "",
        "| corpus | A | B | C |",
        "|---|---|---|---|",
    ]
    for name in names:
        paper = PAPER_DELTA.get(CORPORA[name][2] or "", {})
        cells = []
        for line in "ABC":
            cell = mean_std([r["delta"][line] for r in results[name]])
            if line in paper:
                cell += f" [{paper[line]:.3f}]"
            cells.append(cell)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    for score in SCORES[1:]:
        better = "lower" if score == "entropy" else "higher"
        lines += [
            "",
            f"### {score.upper() if len(score) == 3 else score.capitalize()} "
            f"({better} is better), mean ± std",
            "",
            "| corpus | " + " | ".join(METHODS) + " |",
            "|---|" + "---|" * len(METHODS),
        ]
        for name in names:
            cells = [
                mean_std([r["scores"][m][score] for r in results[name]])
                for m in METHODS
            ]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "### Final objective relative to NMF-only, and iterations",
        "",
        "`D(X || WH) / D_NMF - 1` (negative: lower than NMF-only), mean ± std; "
        "iterations in brackets (the hybrid's summed over its phases); "
        "rounds: the hybrid's NMF+PLSI rounds.",
        "",
        "| corpus | PLSI | Hybrid | NMF, equal iterations | NMF iters | "
        "Hybrid rounds | seconds per seed (NMF / PLSI / Hybrid) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in names:
        rs = results[name]

        def rel(key, rs=rs):
            return mean_std(
                [r["loss"][key] / r["loss"]["NMF"] - 1 for r in rs], digits=5
            )

        def iters(key, rs=rs):
            return f"{np.mean([r['iterations'][key] for r in rs]):.0f}"

        rounds = np.mean([(len(r["phase_losses"]) - 1) / 2 for r in rs])
        secs = " / ".join(
            f"{np.mean([r['seconds'][k] for r in rs]):.1f}"
            for k in ("NMF", "PLSI", "Hybrid")
        )
        lines.append(
            f"| {name} | {rel('PLSI')} [{iters('PLSI')}] | {rel('Hybrid')} "
            f"[{iters('Hybrid')}] | {rel('NMF, equal iterations')} | "
            f"{iters('NMF')} | {rounds:.1f} | {secs} |"
        )
    wins = []
    for name in names:
        rs = results[name]
        hyb = np.array([r["scores"]["Hybrid"]["accuracy"] for r in rs])
        row = [name]
        for other in ("NMF", "PLSI", "NMF, equal iterations"):
            oth = np.array([r["scores"][other]["accuracy"] for r in rs])
            row.append(
                f"{(hyb > oth).sum()} / {(hyb == oth).sum()} / {(hyb < oth).sum()}"
            )
        lower = sum(r["loss"]["Hybrid"] <= r["loss"]["NMF"] * (1 + 1e-12) for r in rs)
        row.append(f"{lower} / {len(rs)}")
        wins.append("| " + " | ".join(row) + " |")
    lines += [
        "",
        "### Hybrid against each alternative, seed by seed",
        "",
        "Seeds where the hybrid's accuracy is higher / equal / lower; last "
        "column: seeds where its objective is no higher than NMF-only's.",
        "",
        "| corpus | vs NMF | vs PLSI | vs NMF, equal iterations | "
        "objective ≤ NMF-only |",
        "|---|---|---|---|---|",
        *wins,
    ]
    worst = max(r["consistency"] for rs in results.values() for r in rs)
    lines += [
        "",
        f"Check: the hybrid's first two phases reproduce NMF-only and line B "
        f"(largest relative objective difference over all runs: {worst:.1e}).",
    ]
    return "\n".join(lines)


def write_report(generated):
    """Write the block ``paper001_clustering`` and its results file."""
    return write_block(
        "paper001_clustering",
        DOC_PATH,
        command_line(),
        parts_from_markdown(generated),
    )


def plot(results, path):
    """Objective after each hybrid phase, and accuracy per method."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no figure (pip install matplotlib)")
        return
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    for name, rs in results.items():
        # Seed 0: the objective after each phase, relative to NMF-only's.
        phases = np.asarray(rs[0]["phase_losses"][1:])
        ax1.plot(
            np.arange(1, len(phases) + 1), phases / phases[0] - 1, "o-", label=name
        )
    ax1.set_xlabel("phase (odd: NMF, even: PLSI)")
    ax1.set_ylabel("objective / objective after NMF-only − 1")
    ax1.set_title("Hybrid: objective after each phase (seed 0)")
    ax1.legend(fontsize=8)
    names = list(results)
    width = 0.8 / len(METHODS)
    for i, method in enumerate(METHODS):
        acc = np.array(
            [[r["scores"][method]["accuracy"] for r in results[n]] for n in names]
        )
        ax2.bar(
            np.arange(len(names)) + (i - (len(METHODS) - 1) / 2) * width,
            acc.mean(axis=1),
            width,
            yerr=acc.std(axis=1),
            label=method,
        )
    ax2.set_xticks(np.arange(len(names)), names, rotation=20, fontsize=8)
    ax2.set_ylabel("clustering accuracy")
    ax2.set_title("Accuracy, mean ± std over seeds")
    ax2.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--seeds", type=int, default=None, help="default 10 (3 quick)")
    parser.add_argument("--quick", action="store_true", help="3 seeds, no 20NG")
    parser.add_argument("--corpora", nargs="+", choices=list(CORPORA), default=None)
    parser.add_argument("--max-iter", type=int, default=200)
    parser.add_argument("--tol", type=float, default=1e-4)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    if args.seeds is None:
        args.seeds = 3 if args.quick else 10
    names = args.corpora or (QUICK_CORPORA if args.quick else list(CORPORA))
    start = time.perf_counter()
    results, notes = {}, []
    for name in names:
        data, note = load(name, args.data_dir)
        print(note, flush=True)
        if data is None:
            continue
        notes.append(note)
        X, y = data
        t0 = time.perf_counter()
        results[name] = Parallel(n_jobs=args.n_jobs)(
            delayed(run_seed)(X, y, seed, args.max_iter, args.tol)
            for seed in range(args.seeds)
        )
        acc = {
            m: np.mean([r["scores"][m]["accuracy"] for r in results[name]])
            for m in METHODS
        }
        print(
            "   "
            + "  ".join(f"{m}: {a:.3f}" for m, a in acc.items())
            + f"  ({time.perf_counter() - t0:.0f} s)",
            flush=True,
        )
    if not results:
        print(f"No corpus found under {args.data_dir}; nothing to do.")
        return 0
    generated = tables(results, notes, args, time.perf_counter() - start)
    print()
    print(generated)
    if not args.no_write:
        data = write_report(generated)
        print(f"\nwrote {DOC_PATH} and {data}")
        plot(results, FIGURE_PATH)
    return 0


if __name__ == "__main__":
    sys.exit(main())
