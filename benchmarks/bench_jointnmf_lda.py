"""JointNMF vs KLNMF, and LDAVI vs scikit-learn's LatentDirichletAllocation.

Everything runs in one process, on the same data, from the same start:

* **NMF** -- ``KLNMF`` and ``JointNMF`` (``normalize="components"`` and
  ``"both"``) from one custom ``(W, H)`` start (``init="custom"``), a fixed
  budget of iterations (``tol=0``).  Reported: seconds per iteration (median
  over repeats, run round-robin) and the objective ``loss_`` after the budget.
* **LDA** -- ``LDAVI`` and ``LatentDirichletAllocation``, batch and online,
  with the same ``random_state``: LDAVI draws the topics (lambda) and the
  first E-step's document start (gamma) from the generator exactly as
  scikit-learn does, so both start from the same state (the script checks
  that their first epochs agree).  Both are run one epoch at a time through
  the body of their ``fit`` loops (timed), and after every epoch the held-out
  perplexity is evaluated (not timed) with one function for both:
  ``LDAVI.perplexity`` on a model holding the topics, i.e. the held-out
  document-completion perplexity every estimator of the package reports
  (half of each held-out document's tokens fold it in, the other half are
  scored; scikit-learn's own ``perplexity`` divides the topics' term of its
  bound by the held-out words, its issue #20032).
  The target is scikit-learn's final held-out perplexity; LDAVI's time to
  reach it (within 1 %) is the wall time of a public ``fit(max_iter=t)`` for
  the first such epoch ``t``, against the summed epoch times of
  scikit-learn (which leaves out the extra E-step its ``fit`` spends on
  ``bound_``, in its favour).

Corpora: 20 Newsgroups (``<data-dir>/20newsgroups/20Newsgroups.mat``, its
train/test split; skipped with a message if absent) and a corpus generated
from the LDA model (10,000 training documents x 5,000 terms, ~150 words per
document, 20 topics, fixed seed, plus 2,000 held-out documents).

Usage (from the repository root)::

    python benchmarks/bench_jointnmf_lda.py            # full size (~1 hour)
    python benchmarks/bench_jointnmf_lda.py --quick    # < 2 minutes
    python benchmarks/bench_jointnmf_lda.py --corpus generated --skip-nmf
"""

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np
import scipy
import scipy.io
import scipy.sparse as sp
import sklearn
from sklearn.decomposition import LatentDirichletAllocation
from sklearn.utils import gen_batches

from sklearn_topicfac import KLNMF, LDAVI
from sklearn_topicfac.engine import InMemoryRunner, Start, start_topics
from sklearn_topicfac.engine.iterations import start as start_fit
from sklearn_topicfac.kernels import _parallel
from sklearn_topicfac.models import LDAModel

try:
    from sklearn_topicfac import JointNMF
except ImportError:  # written concurrently; the NMF section then says so
    JointNMF = None

REPO = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------ corpora
def load_20news(data_dir, max_train=None):
    path = Path(data_dir) / "20newsgroups" / "20Newsgroups.mat"
    if not path.exists():
        print(f"[skip] 20 Newsgroups: {path} not found.")
        return None
    mat = scipy.io.loadmat(path)
    X = sp.csr_matrix(mat["fea"], dtype=np.float64)
    train = mat["trainIdx"].ravel().astype(np.intp) - 1  # 1-based in the file
    test = mat["testIdx"].ravel().astype(np.intp) - 1
    if max_train:
        train, test = train[:max_train], test[: max(1, max_train // 2)]
    return "20news", X[train], X[test]


def generated_corpus(n_docs, n_terms, doc_length, n_topics, n_test, seed=0):
    """Counts drawn from LDA: theta ~ Dir(0.1), beta ~ Dir(0.05), N_d ~ Poisson."""
    rng = np.random.default_rng(seed)
    beta = rng.dirichlet(np.full(n_terms, 0.05), size=n_topics)

    def draw(n):
        blocks = []
        for start in range(0, n, 500):
            size = min(500, n - start)
            theta = rng.dirichlet(np.full(n_topics, 0.1), size=size)
            p = theta @ beta
            p /= p.sum(axis=1, keepdims=True)
            lengths = rng.poisson(doc_length, size=size)
            counts = rng.multinomial(lengths, p).astype(np.float64)
            blocks.append(sp.csr_matrix(counts))
        return sp.vstack(blocks, format="csr")

    name = f"LDA {n_docs}x{n_terms}"
    return name, draw(n_docs), draw(n_test)


# --------------------------------------------------------------------- NMF
def bench_nmf(X, k, n_iter, repeats, seed=0):
    n, m = X.shape
    rng = np.random.default_rng(seed)
    scale = np.sqrt(X.sum() / (n * m * k))
    W0 = scale * (rng.random((n, k)) + 0.1)
    H0 = scale * (rng.random((k, m)) + 0.1)
    # No split-merge moves: their trials after the last iteration cost many
    # iterations (80x on 20 Newsgroups) and would be charged per iteration.
    makers = {
        "KLNMF": lambda: KLNMF(k, init="custom", max_iter=n_iter, tol=0, split_merge=0)
    }
    if JointNMF is not None:
        for mode in ("components", "both"):
            makers[f"JointNMF({mode})"] = lambda mode=mode: JointNMF(
                k,
                normalize=mode,
                alpha=0.0,
                init="custom",
                max_iter=n_iter,
                tol=0,
                split_merge=0,
            )
    times = {name: [] for name in makers}
    loss = {}
    for _ in range(repeats):  # round-robin, so machine load hits all alike
        for name, make in makers.items():
            est = make()
            t0 = time.perf_counter()
            est.fit(X, W=W0, H=H0)
            times[name].append((time.perf_counter() - t0) / est.n_iter_)
            loss[name] = est.loss_
    base = statistics.median(times["KLNMF"])
    rows = []
    for name in makers:
        s = statistics.median(times[name])
        rows.append([name, f"{s * 1e3:.1f}", f"{s / base:.2f}", f"{loss[name]:.6e}"])
    return rows


# --------------------------------------------------------------------- LDA
class HeldOut:
    """Held-out perplexity of any topics, by one function: LDAVI.perplexity."""

    def __init__(self, X_train, X_test, k, seed):
        self.X_test = X_test
        # A fitted LDAVI (priors 1/k as scikit-learn's defaults) whose topics
        # are swapped in for each evaluation.
        self.model = LDAVI(
            k, inference="vb", max_iter=1, tol=0, split_merge=0, random_state=seed
        ).fit(X_train[:50])

    def __call__(self, topics):
        self.model.components_ = topics
        return self.model.perplexity(self.X_test)


class Clock:
    """Wall and CPU (this process) seconds since creation.

    The machine may be shared: CPU time is the compute a single-threaded run
    actually got, wall time what a user waits; both are reported.
    """

    def __init__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def read(self):
        return np.array(
            [time.perf_counter() - self.wall, time.process_time() - self.cpu]
        )


def sklearn_epochs(X, k, epochs, seed, method, batch_size, held_out=None):
    """The body of LatentDirichletAllocation.fit, one timed epoch at a time.

    Returns (per-epoch [wall, cpu] seconds, held-out perplexities, topics).
    """
    sk = LatentDirichletAllocation(
        k, learning_method=method, batch_size=batch_size, random_state=seed
    )
    clock = Clock()
    sk._init_latent_vars(X.shape[1], dtype=X.dtype)
    setup = clock.read()
    n = X.shape[0]
    times, perps = [], []
    for _ in range(epochs):
        clock = Clock()
        if method == "online":
            for batch in gen_batches(n, batch_size):
                sk._em_step(X[batch], total_samples=n, batch_update=False)
        else:
            sk._em_step(X, total_samples=n, batch_update=True)
        times.append(clock.read())
        if held_out is not None:
            perps.append(held_out(sk.components_))
    times[0] += setup
    return np.array(times), perps, sk.components_


def ldavi_epochs(X, k, epochs, seed, method, batch_size, held_out=None):
    """LDAVI's fit (start, epochs) through the engine, one timed epoch at a time."""
    clock = Clock()
    model = LDAModel(np.full(k, 1 / k), 1 / k, 1e-3, 100)
    runner = InMemoryRunner(sp.csr_matrix(X, dtype=np.float64))
    H = start_fit(model, runner, "random", k, seed, np.random.RandomState(seed))
    X_in_order, W = runner.X, runner.rows()
    setup = clock.read()
    times, perps = [], []
    step = 1
    for epoch in range(epochs):
        clock = Clock()
        if method == "batch":
            stats = runner.step(model, H, None, warm=epoch > 0)
            H = model.topic_step(H, stats)[0]
        else:  # online: mini-batches in input order, as LDAVI's online fit
            n = X_in_order.shape[0]
            for batch in gen_batches(n, batch_size):
                Xb = X_in_order[batch]
                W[batch], stats = model.doc_step(Xb, W[batch], H, step > 1)
                rho = (10.0 + step) ** -0.7
                H = model.online_step(H, stats["counts"], n / Xb.shape[0], rho)
                step += 1
        times.append(clock.read())
        if held_out is not None:
            perps.append(held_out(H))
    times[0] += setup
    return np.array(times), perps, H


def time_public_fit(make, X, repeats):
    """Median [wall, cpu] seconds of ``make().fit(X)``."""
    runs = []
    for _ in range(repeats):
        clock = Clock()
        make().fit(X)
        runs.append(clock.read())
    return np.median(np.array(runs), axis=0)


def check_same_start(X, k, seed, method, batch_size):
    """The same topics' start, and the same first epoch from the same start.

    Returns the largest relative difference between LDAVI's first epoch and
    scikit-learn's on a few hundred documents.  Both draw the topics, then
    the first E-step's start, from the same generator; scikit-learn draws a
    new start for each later E-step, LDAVI starts those from all ones, which
    is scikit-learn's start too once its ``random_state_`` is None.
    """
    Xs = X[:400]
    sk = LatentDirichletAllocation(
        k, learning_method=method, batch_size=batch_size, random_state=seed
    )
    sk._init_latent_vars(Xs.shape[1], dtype=Xs.dtype)
    model = LDAModel(np.full(k, 1 / k), 1 / k, 1e-3, 100)
    runner = InMemoryRunner(sp.csr_matrix(Xs))
    lam0 = start_topics(model, runner, Start("random", k, seed, seed))
    assert np.array_equal(lam0, sk.components_), "different topics' start"
    n = Xs.shape[0]
    if method == "online":
        for batch in gen_batches(n, batch_size):
            sk._em_step(Xs[batch], total_samples=n, batch_update=False)
            sk.random_state_ = None
    else:
        sk._em_step(Xs, total_samples=n, batch_update=True)
    _, _, ours = ldavi_epochs(Xs, k, 1, seed, method, batch_size)
    return float(np.max(np.abs(ours / sk.components_ - 1)))


def bench_lda(X_train, X_test, k, epochs, repeats, sk_repeats, batch_size, seed=0):
    held_out = HeldOut(X_train, X_test, k, seed)
    rows = []
    for method in ("batch", "online"):
        diff = check_same_start(X_train, k, seed, method, batch_size)
        print(
            f"  [{method}] same lambda start (exact); first epochs from it "
            f"differ by {diff:.1e} (max rel.)"
        )
        # scikit-learn: one run evaluated after every epoch; more runs timed.
        # Its time to its final perplexity is the sum of its epochs (which
        # leaves out the extra E-step its fit spends on bound_: in its favour).
        sk_times, sk_perps, _ = sklearn_epochs(
            X_train, k, epochs, seed, method, batch_size, held_out
        )
        sk_runs = [sk_times] + [
            sklearn_epochs(X_train, k, epochs, seed, method, batch_size)[0]
            for _ in range(sk_repeats - 1)
        ]
        sk_epoch = np.median(np.array(sk_runs), axis=0)  # (epochs, [wall, cpu])
        target = sk_perps[-1]
        sk_total = sk_epoch.sum(axis=0)
        # LDAVI: one run evaluated after every epoch, up to twice as many
        # epochs as scikit-learn's to find when it reaches the target; more
        # runs of scikit-learn's number of epochs, timed only.  Its time to
        # the target is that of a public fit(max_iter=t), final E-step for
        # loss_ included.
        our_max = 2 * epochs
        our_times, our_perps, _ = ldavi_epochs(
            X_train, k, our_max, seed, method, batch_size, held_out
        )
        our_runs = [our_times[:epochs]] + [
            ldavi_epochs(X_train, k, epochs, seed, method, batch_size)[0]
            for _ in range(repeats - 1)
        ]
        our_epoch = np.median(np.array(our_runs), axis=0)
        reached = np.flatnonzero(np.array(our_perps) <= 1.01 * target)
        if reached.size:
            t_star = int(reached[0]) + 1
            to_target = time_public_fit(
                lambda t=t_star, method=method: LDAVI(
                    k,
                    inference="vb",
                    init="random",
                    learning_method=method,
                    batch_size=batch_size,
                    max_iter=t,
                    tol=0,
                    split_merge=0,  # the epochs scikit-learn runs, no moves
                    random_state=seed,
                ),
                X_train,
                repeats,
            )
            reach = f"{t_star}"
            to_target_s = "{:.1f} / {:.1f}".format(*to_target)
            ratio = "{:.2f} / {:.2f}".format(*(to_target / sk_total))
        else:
            reach, to_target_s, ratio = f">{our_max}", "-", "-"
        sk_med = np.median(sk_epoch, axis=0)
        our_med = np.median(our_epoch, axis=0)
        speedup = sk_med / our_med
        rows.append(
            [
                f"sklearn {method}",
                "{:.2f} / {:.2f}".format(*sk_med),
                "1.0 / 1.0",
                f"{sk_perps[-1]:.1f} ({epochs} ep)",
                f"{epochs}",
                "{:.1f} / {:.1f}".format(*sk_total),
                "1.00 / 1.00",
            ]
        )
        rows.append(
            [
                f"LDAVI {method}",
                "{:.2f} / {:.2f}".format(*our_med),
                "{:.1f} / {:.1f}".format(*speedup),
                f"{our_perps[epochs - 1]:.1f} ({epochs} ep)",
                reach,
                to_target_s,
                ratio,
            ]
        )
        print(
            f"  [{method}] held-out perplexity per epoch\n"
            f"    sklearn: {np.round(sk_perps, 1).tolist()}\n"
            f"    LDAVI:   {np.round(our_perps, 1).tolist()}"
        )
    return rows


# ------------------------------------------------------------------ output
TABLES = []  # (title, header, rows) of every table printed, for --write-doc


def print_table(title, header, rows):
    TABLES.append((title, header, rows))
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = "  ".join("-" * w for w in widths)
    print(f"\n{title}\n{line}")
    print("  ".join(str(h).ljust(w) for h, w in zip(header, widths, strict=True)))
    print(line)
    for r in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)))
    print(line)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data-dir",
        default=str(REPO.parent / "shared" / "data"),
        help="folder holding 20newsgroups/20Newsgroups.mat (default: %(default)s)",
    )
    parser.add_argument(
        "--corpus", choices=["all", "20news", "generated"], default="all"
    )
    parser.add_argument("--n-components", type=int, default=20)
    parser.add_argument("--max-train", type=int, default=None, help="20news subset")
    parser.add_argument("--n-docs", type=int, default=10_000)
    parser.add_argument("--n-terms", type=int, default=5_000)
    parser.add_argument("--doc-length", type=int, default=150)
    parser.add_argument("--n-test", type=int, default=2_000)
    parser.add_argument("--nmf-iter", type=int, default=30)
    parser.add_argument("--lda-epochs", type=int, default=10, help="sklearn's epochs")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sklearn-repeats", type=int, default=1)
    parser.add_argument("--skip-nmf", action="store_true")
    parser.add_argument("--skip-lda", action="store_true")
    parser.add_argument(
        "--quick", action="store_true", help="small sizes: runs in < 2 minutes"
    )
    parser.add_argument(
        "--write-doc",
        metavar="NAME",
        help="also write the tables as the generated block NAME (docs/_data)",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.max_train = args.max_train or 1_000
        args.n_docs, args.n_terms, args.n_test = 1_000, 1_000, 300
        args.nmf_iter, args.lda_epochs, args.repeats = 10, 4, 1
        args.batch_size = 100

    corpora = []
    if args.corpus in ("all", "20news"):
        loaded = load_20news(args.data_dir, args.max_train)
        if loaded is not None:
            corpora.append(loaded)
    if args.corpus in ("all", "generated"):
        corpora.append(
            generated_corpus(
                args.n_docs,
                args.n_terms,
                args.doc_length,
                args.n_components,
                args.n_test,
            )
        )
    k = args.n_components
    print(
        f"numpy {np.__version__}, scipy {scipy.__version__}, scikit-learn "
        f"{sklearn.__version__}; {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.1f}; sklearn_topicfac kernels use up to "
        f"{_parallel.N_THREADS} threads (LDAVI's E-step one), scikit-learn's "
        "LDA n_jobs=None (one process)."
    )
    for name, X_train, X_test in corpora:
        print(
            f"\n=== {name}: train {X_train.shape[0]} x {X_train.shape[1]}, "
            f"nnz {X_train.nnz}, {int(X_train.sum())} words; "
            f"held-out {X_test.shape[0]} documents; k = {k}"
        )
        if not args.skip_nmf:
            if JointNMF is None:
                print("[skip] JointNMF is not importable yet: KLNMF alone.")
            rows = bench_nmf(X_train, k, args.nmf_iter, args.repeats)
            print_table(
                f"{name}: NMF, {args.nmf_iter} iterations from the same start "
                f"(median of {args.repeats})",
                ["method", "ms/iter", "vs KLNMF", "objective"],
                rows,
            )
        if not args.skip_lda:
            rows = bench_lda(
                X_train,
                X_test,
                k,
                args.lda_epochs,
                args.repeats,
                args.sklearn_repeats,
                args.batch_size,
            )
            print_table(
                f"{name}: LDA, same start; held-out perplexity by "
                f"LDAVI.perplexity; target = sklearn's after "
                f"{args.lda_epochs} epochs (+1 %); medians of "
                f"{args.repeats} (LDAVI) / {args.sklearn_repeats} (sklearn) "
                "runs, per epoch",
                [
                    "method",
                    "s/epoch wall / cpu",
                    "speed-up",
                    "held-out perplexity",
                    "epochs to target",
                    "s to target wall / cpu",
                    "vs sklearn",
                ],
                rows,
            )
    if args.write_doc:
        from _docblocks import write_doc

        text = "\n\n".join(
            f"{title}:\n\n| {' | '.join(header)} |\n|{'---|' * len(header)}\n"
            + "\n".join(f"| {' | '.join(map(str, row))} |" for row in rows)
            for title, header, rows in TABLES
        )
        write_doc(args.write_doc, text, "docs/lda.md")


if __name__ == "__main__":
    main()
