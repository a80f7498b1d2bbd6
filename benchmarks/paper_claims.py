"""Measurements behind docs/paper_claims.md: claims of papers 000, 002 and 003.

Three experiments on the labeled corpora of ``../shared/data`` (subsampled so
that each runs in a few minutes on a shared two-core machine):

``tempered``
    Paper 003 (Gaussier & Goutte, §3: Hofmann's tempered EM): held-out
    completion score (``PLSI(beta=...).score`` on the test fold of
    ``shuffled_folds(3)``) against ``beta``, and its spread over random
    starts.
``optima``
    Paper 003, footnote 2 (NMF has at least as many local optima as PLSA):
    KLNMF and PLSI from the same random starts, both without split-merge
    moves, the same number of iterations; the spread of the final KL
    objective and the number of distinct end points.
``hybrid``
    The hybrid NMF/PLSI alternation against NMF-only and PLSI-only runs of
    the same total number of iterations, from the same k-means start, on
    planted corpora (tests/_corpora.py): is any hybrid strictly lowest?
``speed``
    Paper 000 ("NMF is faster than PLSI") and paper 002 ("joint updates speed
    training up"): seconds per iteration of KLNMF, PLSI and JointNMF, side by
    side in one process, medians over repeats, ratios to KLNMF.

    python benchmarks/paper_claims.py tempered
    python benchmarks/paper_claims.py optima
    python benchmarks/paper_claims.py hybrid
    python benchmarks/paper_claims.py speed
"""

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from sklearn_topicfac import KLNMF, PLSI, HybridNMFPLSI, JointNMF
from sklearn_topicfac.datasets import load_mat_corpus
from sklearn_topicfac.kernels import kl_divergence
from sklearn_topicfac.model_selection import shuffled_folds

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
FILES = {
    "classic3": DATA / "classic3" / "classic3.mat",
    "cstr": DATA / "cstr" / "cstr.mat",
    "webace": DATA / "webace" / "WebACE.mat",
    "20news": DATA / "20newsgroups" / "20Newsgroups.mat",
}


def corpus(name, n_docs=None, seed=0):
    """A corpus, its documents subsampled (without replacement) to ``n_docs``."""
    X = load_mat_corpus(FILES[name])[0].tocsr()
    if n_docs is not None and n_docs < X.shape[0]:
        rows = np.sort(np.random.default_rng(seed).permutation(X.shape[0])[:n_docs])
        X = X[rows]
        X = X[:, np.flatnonzero(X.getnnz(axis=0))]
    return X


# The papers' algorithms, pinned (the estimators' default is diagonal Newton):
# Lee & Seung's multiplicative updates, Hofmann's (tempered) EM and paper 002's
# joint update (JointNMF's default).
SOLVERS = {KLNMF: "mu", PLSI: "em", JointNMF: "joint"}


def tempered(corpora, ks, betas, seeds):
    print(
        "| corpus | k | beta | held-out score (mean over folds and starts) "
        "| spread over starts | train KL / word |"
    )
    print("|---|---|---|---|---|---|")
    for name, n_docs in corpora:
        X = corpus(name, n_docs)
        folds = list(shuffled_folds(3, random_state=0).split(X))
        for k in ks:
            for beta in betas:
                scores, train = np.zeros((len(seeds), 3)), []
                for i, seed in enumerate(seeds):
                    for j, (tr, te) in enumerate(folds):
                        model = PLSI(
                            k,
                            beta=beta,
                            solver="em",
                            init="random",
                            split_merge=0,
                            random_state=seed,
                        ).fit(X[tr])
                        scores[i, j] = model.score(X[te])
                        train.append(model.loss_ / X[tr].sum())
                per_start = scores.mean(axis=1)
                print(
                    f"| {name} ({X.shape[0]} docs) | {k} | {beta} "
                    f"| {scores.mean():.4f} | {np.ptp(per_start):.4f} "
                    f"| {np.mean(train):.4f} |",
                    flush=True,
                )


def _end_point(model, X):
    """The fitted model's ``W H`` pieces and its KL objective."""
    if isinstance(model, PLSI):
        n = float(X.sum())
        W = model.p_d_given_z_ * model.p_z_ * n
    else:
        W = model.embedding_
    return W, model.components_, kl_divergence(X, W, model.components_)


def _distinct(products, rtol):
    """Number of distinct matrices among ``products`` (relative Frobenius)."""
    kept = []
    for P in products:
        if all(np.linalg.norm(P - Q) > rtol * np.linalg.norm(Q) for Q in kept):
            kept.append(P)
    return len(kept)


def optima(corpora, ks, n_starts, max_iter):
    print(
        "| corpus | k | model | best KL | median - best | worst - best "
        "| distinct end points (WH, 1 %) | mean seconds |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, n_docs in corpora:
        X = corpus(name, n_docs)
        for k in ks:
            for Estimator in (KLNMF, PLSI):
                losses, products, seconds = [], [], []
                for seed in range(n_starts):
                    t0 = time.perf_counter()
                    model = Estimator(
                        k,
                        solver=SOLVERS[Estimator],
                        init="random",
                        split_merge=0,
                        tol=0,
                        max_iter=max_iter,
                        random_state=seed,
                    ).fit(X)
                    seconds.append(time.perf_counter() - t0)
                    W, H, loss = _end_point(model, X)
                    losses.append(loss)
                    products.append(W @ H)
                losses = np.array(losses)
                best = losses.min()
                print(
                    f"| {name} ({X.shape[0]} docs) | {k} | {Estimator.__name__} "
                    f"| {best:.1f} | {np.median(losses) - best:.1f} "
                    f"| {losses.max() - best:.1f} | {_distinct(products, 0.01)} "
                    f"| {np.mean(seconds):.2f} |",
                    flush=True,
                )


def speed(corpora, k, n_iter, repeats, dtypes):
    print(
        "| corpus | dtype | KLNMF ms/iter | PLSI ms/iter | JointNMF ms/iter "
        "| PLSI / KLNMF | JointNMF / KLNMF |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, n_docs in corpora:
        X0 = corpus(name, n_docs)
        for dtype in dtypes:
            X = X0.astype(dtype)
            times = {KLNMF: [], PLSI: [], JointNMF: []}
            for r in range(repeats):
                # Interleaved so that the other agents' load hits all alike.
                for Estimator in times:
                    model = Estimator(
                        k,
                        solver=SOLVERS[Estimator],
                        init="random",
                        split_merge=0,
                        tol=0,
                        max_iter=n_iter,
                        random_state=r,
                    )
                    t0 = time.perf_counter()
                    model.fit(X)
                    times[Estimator].append(
                        (time.perf_counter() - t0) / model.n_iter_ * 1e3
                    )
            med = {E: float(np.median(t)) for E, t in times.items()}
            print(
                f"| {name} {X.shape} | {np.dtype(dtype).name} | {med[KLNMF]:.1f} "
                f"| {med[PLSI]:.1f} | {med[JointNMF]:.1f} "
                f"| {med[PLSI] / med[KLNMF]:.2f} "
                f"| {med[JointNMF] / med[KLNMF]:.2f} |",
                flush=True,
            )


def hybrid(seeds, schedules):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from _corpora import planted_counts

    print(
        "| seed | rounds x iterations | hybrid | NMF-only | PLSI-only "
        "| hybrid - best single, relative |"
    )
    print("|---|---|---|---|---|---|")
    lowest = 0
    for seed in seeds:
        X = planted_counts(n=120, m=80, k=4, seed=seed)
        for rounds, per_phase in schedules:
            total = 2 * rounds * per_phase
            common = dict(n_components=6, random_state=seed, tol=0, split_merge=0)
            h = HybridNMFPLSI(
                **common,
                nmf_solver=SOLVERS[KLNMF],
                plsi_solver=SOLVERS[PLSI],
                n_rounds=rounds,
                max_iter=per_phase,
            ).fit(X)
            n = KLNMF(init="kmeans", solver="mu", max_iter=total, **common).fit(X)
            p = PLSI(init="kmeans", solver="em", max_iter=total, **common).fit(X)
            best = min(n.loss_, p.loss_)
            lowest += h.loss_ < best
            print(
                f"| {seed} | {rounds} x {per_phase} | {h.loss_:.2f} | {n.loss_:.2f} "
                f"| {p.loss_:.2f} | {(h.loss_ - best) / best:.1e} |",
                flush=True,
            )
    print(f"\nhybrid strictly lowest in {lowest} of {len(seeds) * len(schedules)}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("experiment", choices=["tempered", "optima", "hybrid", "speed"])
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", ConvergenceWarning)
    t0 = time.perf_counter()
    if args.experiment == "tempered":
        tempered(
            [("cstr", None), ("classic3", 1000)],
            ks=[4, 16],
            betas=[1.0, 0.9, 0.8, 0.7],
            seeds=[0, 1, 2],
        )
    elif args.experiment == "optima":
        optima(
            [("cstr", None), ("classic3", 1000)], ks=[4, 10], n_starts=20, max_iter=300
        )
    elif args.experiment == "hybrid":
        hybrid(seeds=range(12), schedules=[(5, 20), (10, 10)])
    else:
        speed(
            [("cstr", None), ("classic3", None)],
            k=10,
            n_iter=20,
            repeats=5,
            dtypes=[np.float64, np.float32],
        )
        speed([("20news", None)], k=20, n_iter=5, repeats=3, dtypes=[np.float64])
    print(f"\n{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
