"""Speed on the install users get (issue 49): our defaults against the peers,
each fit the first of a fresh process.

Tables (``--tables``, all by default), on the corpora of the registry
(`corpus_registry`: the nine shared corpora and the generated one):

- ``fits``: whole default fits, seconds (median of ``--repeats`` fresh
  processes): LDAVI against scikit-learn's ``LatentDirichletAllocation``,
  KLNMF and PLSI against scikit-learn's ``NMF(beta_loss="kullback-leibler",
  solver="mu")``, each at its defaults with ``random_state``; the ratio is
  the peer's seconds over ours (above 1: we are faster), with clustering
  accuracies.
- ``quality``: time to quality: the seconds until KLNMF's default fit's
  objective (the generalized KL divergence) reaches the one where
  scikit-learn's KL-MU default fit ends, against scikit-learn's seconds;
  and our seconds to our converged end.
- ``perplexity``: LDAVI's time to tomotopy's held-out perplexity: its
  default fit and tomotopy's LDA at 1,000 sweeps (alpha = eta = 1/k), each
  fitted on the seed's 80 % of the documents, with their same-protocol
  perplexity on the rest (`real_text.perplexity_of`) and their seconds.
- ``transform``: fold-in throughput, documents per second of ``transform``
  on a held-out fifth of the documents (fitted on the rest; the median of
  three calls in the fitting process), for every estimator and
  scikit-learn's LDA, with each method's held-out document-completion
  log-likelihood per word (its own ``transform`` on one half of each
  held-out document's words, the other half scored; the package's
  ``completion_split`` and smoothing).
- ``tolerance`` (only when asked for): what another fold-in tolerance
  would give, for the choice of its default: KLNMF's, PLSI's and LDAVI's
  default fit on the ``transform`` table's split, then their ``transform``
  at each tolerance of `TOLERANCES` (set after the fit), in one process:
  throughput against the default tolerance, completion score, and the
  clustering accuracy of ``transform`` of every document.
- ``load``: the ``fits`` measurement of LDAVI, KLNMF, PLSI and
  scikit-learn's two peers idle and then with two CPU-bound processes
  beside it on the machine, in pairs, and the share of speed each keeps
  (idle seconds over loaded ones; the median over the pairs and its range).
  The generated corpus is above the sizes from which the kernels use a
  second thread and ``backend="auto"`` runs the compiled kernels (once
  compiled); the other three are below both.

``--python`` runs the measurements in another interpreter: a virtual
environment holding only what ``pip install`` of the built wheel pulls in
(no numba) is the default install:

    python -m build --wheel && python -m venv /tmp/default
    /tmp/default/bin/pip install dist/sklearn_topicfac-*.whl
    python benchmarks/default_install.py --python /tmp/default/bin/python

Without it, this interpreter.  With numba installed, ``backend="auto"``
runs numba's kernels only once they are compiled (it never compiles):
``--compiled`` first runs ``compile_kernels`` once into a new numba cache
that every measurement then loads from (the set-up of a user who ran
``topicfac compile``; its seconds are in the table's header, not in its
times); without ``--compiled`` every process starts from an empty cache,
so ``"auto"`` runs NumPy.  ``--write-doc`` writes the tables into
``docs/performance.md`` (blocks ``install_<table>_<backend>``).
"""

import argparse
import sys
import time
import warnings

import harness
import numpy as np
from _docblocks import estimator_params

TASKS = {}
# The seconds of `compile_kernels` when --compiled ran it first.
COMPILED = {}
# The parameters of the estimators each table ran (recorded by the fitting
# process, the wheel's own), by label: written with the table's block.
RAN = {}
# What the runs set on purpose; everything else is the estimator's default.
VARIED = {"sklearn NMF": ["beta_loss", "n_components", "random_state", "solver"]}


def _no_transform(name):
    """The labels of table ``name`` whose figures never come from
    ``transform`` (the block's ``no_transform``): every label of the quality
    and load tables (seconds and objectives of fits), and of the fits table
    but the LDAs, whose accuracies are of ``transform``."""
    if name in ("quality", "load"):
        return list(RAN)
    if name == "fits":
        return [m for m in RAN if m not in ("LDAVI", "sklearn LDA")]
    return []


def task(function):
    TASKS[function.__name__] = function
    return function


@task
def where():
    """The child's import path (`harness.measure` adds the file of the
    package it imported): tests/test_benchmark_harness.py."""
    import sklearn_topicfac  # noqa: F401

    return {"sys_path": sys.path}


def _estimator(method, k, seed):
    from sklearn.decomposition import NMF, LatentDirichletAllocation

    import sklearn_topicfac as tf

    if method == "sklearn LDA":
        return LatentDirichletAllocation(k, random_state=seed)
    if method == "sklearn NMF":
        return NMF(k, beta_loss="kullback-leibler", solver="mu", random_state=seed)
    return getattr(tf, method)(n_components=k, random_state=seed)


def _numba_ran():
    """Whether this process ran compiled kernels (``backend="auto"`` imports
    numba only to run them)."""
    return "numba" in sys.modules


def _kl(X, W, H):
    from sklearn_topicfac.kernels import kl_divergence

    return float(kl_divergence(X, W, H))


def _labels(est, X):
    return np.asarray(est.transform(X)).argmax(axis=1)


@task
def fit(corpus, method, seed):
    """One default fit, the first of this process: seconds, accuracy."""
    from corpus_registry import load

    from sklearn_topicfac.metrics import clustering_accuracy

    X, y, k = load(corpus)
    est = _estimator(method, k, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        est.fit(X)
        seconds = time.perf_counter() - start
        accuracy = clustering_accuracy(y, _labels(est, X))
    return {
        "seconds": seconds,
        "accuracy": float(accuracy),
        "n_iter": int(getattr(est, "n_iter_", 0)),
        "numba_ran": _numba_ran(),
        "params": estimator_params(est),
    }


@task
def peer_objective(corpus, seed):
    """scikit-learn's KL-MU default fit: seconds and the KL where it ends."""
    from corpus_registry import load

    X, _, k = load(corpus)
    est = _estimator("sklearn NMF", k, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        W = est.fit_transform(X)
        seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "objective": _kl(X, W, est.components_),
        "params": estimator_params(est),
    }


@task
def time_to_objective(corpus, method, seed, target):
    """Our default fit, timed at every iteration: the seconds until its
    objective is at most ``target``, and to its end."""
    from corpus_registry import load

    from sklearn_topicfac import fit_callback

    X, _, k = load(corpus)
    est = _estimator(method, k, seed)
    reached = []
    start = time.perf_counter()

    def seen(info):
        if not reached and info.objective <= target:
            reached.append(time.perf_counter() - start)

    with warnings.catch_warnings(), fit_callback(seen):
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        est.fit(X)
        seconds = time.perf_counter() - start
    # The fit's own objective at its end (fit_transform returns the fold-in
    # of X, whose divergence is a little higher).
    final = float(est.loss_)
    if not reached and final <= target:
        reached.append(seconds)
    return {
        "seconds": seconds,
        "reached": reached[0] if reached else float("nan"),
        "objective": final,
        "numba_ran": _numba_ran(),
        "params": estimator_params(est),
    }


def _held_out_fifth(X, seed):
    """``(train, test)``: the seed's four fifths of the rows, and the rest."""
    order = np.random.default_rng(seed).permutation(X.shape[0])
    cut = X.shape[0] * 4 // 5
    return X[np.sort(order[:cut])], X[np.sort(order[cut:])]


def _transform_seconds(est, test):
    """The median seconds of three ``transform`` calls of ``test``."""
    times = []
    for _ in range(3):
        start = time.perf_counter()
        est.transform(test)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def _completion(est, test, seed, k):
    """The held-out document-completion log-likelihood per word of ``est``'s
    own ``transform`` of one half of each document of ``test``."""
    from sklearn_topicfac.kernels import (
        HELD_OUT_SMOOTHING,
        completion_log_likelihood,
        completion_split,
        normalize_rows,
    )

    observed, held = completion_split(test, seed)
    theta = normalize_rows(np.asarray(est.transform(observed), dtype=float))[0]
    theta[theta.sum(axis=1) == 0] = 1.0 / k
    phi = normalize_rows(np.asarray(est.components_, dtype=float))[0]
    log_lik, n_words = completion_log_likelihood(
        held, theta, phi, smoothing=HELD_OUT_SMOOTHING
    )
    return float(log_lik / n_words)


@task
def transform(corpus, method, seed):
    """Fold-in throughput on a held-out fifth, and its completion score."""
    from corpus_registry import load

    X, _, k = load(corpus)
    train, test = _held_out_fifth(X, seed)
    est = _estimator(method, k, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(train)
        seconds = _transform_seconds(est, test)
        completion = _completion(est, test, seed, k)
    return {
        "seconds": seconds,
        "docs_per_second": test.shape[0] / seconds,
        "completion": completion,
        "params": estimator_params(est),
    }


def _fold_in_tolerance(method):
    """The parameter ``transform``'s fold-in stops by: LDA's
    ``mean_change_tol``; the NMF family's ``transform_tol``."""
    if method in ("LDAVI", "GammaPoissonVI"):
        return "mean_change_tol"
    return "transform_tol"


@task
def fold_in_tolerance(corpus, method, seed, tolerances):
    """One default fit on a held-out split (as `transform`), then its
    ``transform`` at each fold-in tolerance: throughput, completion score
    and clustering accuracy (``transform`` of every document), the
    tolerance set after the fit (so the fit is the default one)."""
    from corpus_registry import load

    from sklearn_topicfac.metrics import clustering_accuracy

    X, y, k = load(corpus)
    train, test = _held_out_fifth(X, seed)
    est = _estimator(method, k, seed)
    parameter = _fold_in_tolerance(method)
    results = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(train)
        params = estimator_params(est)
        default = est.get_params()[parameter]
        for tolerance in tolerances:
            est.set_params(**{parameter: tolerance})
            seconds = _transform_seconds(est, test)
            results.append(
                {
                    "tolerance": tolerance,
                    "docs_per_second": test.shape[0] / seconds,
                    "completion": _completion(est, test, seed, k),
                    "accuracy": float(clustering_accuracy(y, _labels(est, X))),
                }
            )
    return {
        "parameter": parameter,
        "default": default,
        "results": results,
        "params": params,
    }


@task
def perplexity(corpus, method, seed):
    """A fit on the seed's 80 % of the documents (`real_text.held_out_split`)
    and its same-protocol held-out perplexity on the other 20 %: LDAVI at
    its defaults (seconds of ``fit``), or tomotopy's LDA at 1,000 sweeps
    with alpha = eta = 1/k (seconds of adding the documents and the
    sweeps, on every core)."""
    import real_text as rt
    from corpus_registry import load

    X, _, k = load(corpus)
    train, test = rt.held_out_split(X, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "tomotopy":
            seconds = []
            phi = rt._tomotopy_lda(train, k, seed, 1.0 / k, 1.0 / k, 1000, seconds)[1]
            seconds, params = seconds[0], {"sweeps": 1000, "alpha": "1/k"}
        else:
            est = _estimator(method, k, seed)
            start = time.perf_counter()
            est.fit(train)
            seconds = time.perf_counter() - start
            phi, params = est.topic_word_distributions(), estimator_params(est)
    return {
        "seconds": seconds,
        "perplexity": rt.perplexity_of(phi, test, seed),
        "params": params,
    }


# ---------------------------------------------------------------- tables
OURS_PEERS = (
    ("LDAVI", "sklearn LDA"),
    ("KLNMF", "sklearn NMF"),
    ("PLSI", "sklearn NMF"),
)


# Corpora measured once rather than ``--repeats`` times (``--once``): their
# fits take minutes.
ONCE = set()


def _repeats(corpus, repeats):
    return 1 if corpus in ONCE else repeats


def _fits(corpora, seed, repeats, python, methods=None):
    rows = {}
    methods = methods or ["LDAVI", "sklearn LDA", "KLNMF", "PLSI", "sklearn NMF"]
    for corpus in corpora:
        for method in methods:
            rows[corpus, method] = harness.median_of(
                "default_install.py",
                {"task": "fit", "corpus": corpus, "method": method, "seed": seed},
                _repeats(corpus, repeats),
                python=python,
            )
            r = rows[corpus, method]
            RAN.setdefault(method, r["params"])
            print(f"  {corpus} {method}: {r['seconds']:.2f} s, acc {r['accuracy']:.3f}")
    return rows


def fits_table(rows, corpora):
    columns = ["corpus"]
    for ours, peer in OURS_PEERS:
        columns += [f"{ours} s", f"{peer} s", f"{ours} speed-up"]
    columns += ["LDAVI acc", "sklearn LDA acc"]
    out = []
    worst = {ours: np.inf for ours, _ in OURS_PEERS}
    for corpus in corpora:
        row = [corpus]
        for ours, peer in OURS_PEERS:
            a, b = rows[corpus, ours]["seconds"], rows[corpus, peer]["seconds"]
            worst[ours] = min(worst[ours], b / a)
            row += [f"{a:.2f}", f"{b:.2f}", f"**{b / a:.2f}x**"]
        row += [
            f"{rows[corpus, 'LDAVI']['accuracy']:.3f}",
            f"{rows[corpus, 'sklearn LDA']['accuracy']:.3f}",
        ]
        out.append(row)
    out.append(
        ["worst"]
        + sum((["", "", f"**{worst[o]:.2f}x**"] for o, _ in OURS_PEERS), [])
        + ["", ""]
    )
    return {"columns": columns, "rows": out}


def quality_table(corpora, seed, repeats, python):
    out = []
    worst = np.inf
    for corpus in corpora:
        peer = harness.median_of(
            "default_install.py",
            {"task": "peer_objective", "corpus": corpus, "seed": seed},
            _repeats(corpus, repeats),
            python=python,
        )
        ours = harness.median_of(
            "default_install.py",
            {
                "task": "time_to_objective",
                "corpus": corpus,
                "method": "KLNMF",
                "seed": seed,
                "target": peer["objective"],
            },
            _repeats(corpus, repeats),
            python=python,
        )
        RAN.setdefault("sklearn NMF", peer["params"])
        RAN.setdefault("KLNMF", ours["params"])
        ratio = peer["seconds"] / ours["reached"]
        worst = min(worst, ratio)
        out.append(
            [
                corpus,
                f"{peer['seconds']:.2f}",
                f"{peer['objective']:.6g}",
                f"{ours['reached']:.2f}",
                f"**{ratio:.1f}x**",
                f"{ours['seconds']:.2f}",
                f"{ours['objective']:.6g}",
                "yes" if ours["numba_ran"] else "no",
            ]
        )
        print(f"  {corpus}: {out[-1]}")
    out.append(["worst", "", "", "", f"**{worst:.1f}x**", "", "", ""])
    return {
        "columns": [
            "corpus",
            "sklearn KL-MU s",
            "its final KL",
            "KLNMF s to that KL",
            "sooner",
            "KLNMF s to its end",
            "KLNMF final KL",
            "compiled kernels ran",
        ],
        "rows": out,
    }


TRANSFORM_METHODS = (
    "LDAVI",
    "KLNMF",
    "PLSI",
    "NormalizedNMF",
    "JointNMF",
    "HybridNMFPLSI",
    "GammaPoissonVI",
    "sklearn LDA",
)
# SimplexPLSA is left out: it decomposes real-valued data, not counts (its
# docstring), and its default refuses a vocabulary-sized SVD of text.


def transform_table(corpora, seed, python):
    out = []
    for corpus in corpora:
        results = {
            m: harness.measure(
                "default_install.py",
                {"task": "transform", "corpus": corpus, "method": m, "seed": seed},
                python=python,
            )
            for m in TRANSFORM_METHODS
        }
        for m, r in results.items():
            RAN.setdefault(m, r["params"])
        peer = results["sklearn LDA"]
        for m in TRANSFORM_METHODS[:-1]:
            r = results[m]
            better = "yes" if r["completion"] >= peer["completion"] else "no"
            out.append(
                [
                    corpus,
                    m,
                    f"{r['docs_per_second']:,.0f}",
                    f"**{r['docs_per_second'] / peer['docs_per_second']:.1f}x**",
                    f"{r['completion']:.4f}",
                    f"{peer['completion']:.4f}",
                    better,
                ]
            )
        out.append(
            [corpus, "sklearn LDA", f"{peer['docs_per_second']:,.0f}", "1.0x",
             f"{peer['completion']:.4f}", "", ""]
        )  # fmt: skip
        print(f"  {corpus}: done")
    return {
        "columns": [
            "corpus",
            "method",
            "documents / s",
            "vs sklearn LDA",
            "completion (log-lik / word)",
            "sklearn LDA's",
            "at least as good",
        ],
        "rows": out,
    }


# The fold-in tolerances the tolerance table tries: the defaults first (the
# NMF family's transform_tol 3e-3, LDA's mean_change_tol 1e-3), then the
# others (for the NMF family, its fold-in's former 1e-4, the fit's tol).
TOLERANCES = {
    "KLNMF": (3e-3, 1e-4, 1e-3, 1e-2),
    "PLSI": (3e-3, 1e-4, 1e-3, 1e-2),
    "LDAVI": (1e-3, 3e-3, 1e-2),
}


def tolerance_table(corpora, seed, python):
    """What other fold-in tolerances give: each method's default fit
    (one fresh process per corpus and method), its ``transform`` at each of
    `TOLERANCES`, against its default tolerance (the first) in the same
    process."""
    out = []
    for corpus in corpora:
        for method, tolerances in TOLERANCES.items():
            r = harness.measure(
                "default_install.py",
                {
                    "task": "fold_in_tolerance",
                    "corpus": corpus,
                    "method": method,
                    "seed": seed,
                    "tolerances": list(tolerances),
                },
                python=python,
            )
            RAN.setdefault(method, r["params"])
            base = r["results"][0]
            if base["tolerance"] != r["default"]:
                raise ValueError(
                    f"TOLERANCES[{method!r}] must start at {method}'s default "
                    f"{r['parameter']}={r['default']:g}, the table's baseline, "
                    f"not {base['tolerance']:g}"
                )
            for t in r["results"]:
                speed = t["docs_per_second"] / base["docs_per_second"]
                out.append(
                    [
                        corpus,
                        method,
                        f"{r['parameter']}={t['tolerance']:g}",
                        f"{t['docs_per_second']:,.0f}",
                        f"{speed:.2f}x",
                        f"{t['completion']:.4f}",
                        f"{t['accuracy']:.3f}",
                    ]
                )
        print(f"  {corpus}: done")
    return {
        "columns": [
            "corpus",
            "method",
            "fold-in tolerance",
            "documents / s",
            "vs the default tolerance",
            "completion (log-lik / word)",
            "accuracy",
        ],
        "rows": out,
    }


def perplexity_table(corpora, seed, repeats, python):
    """LDAVI's default fit against tomotopy's 1,000 sweeps: held-out
    perplexity (same protocol) and seconds.  tomotopy runs in this
    interpreter (the default install does not have it), once per corpus;
    LDAVI in ``python``, median seconds of ``repeats`` fresh processes (its
    perplexity is the same in each).  LDAVI reaches tomotopy's perplexity
    no later than the end of its fit when its final perplexity is at most
    tomotopy's: the time to it is then at most the fit's seconds, the
    figure shown ("<="), and "not reached" otherwise."""
    out = []
    worst = 0.0
    for corpus in corpora:
        task = {"task": "perplexity", "corpus": corpus, "seed": seed}
        peer = harness.measure("default_install.py", {**task, "method": "tomotopy"})
        ours = harness.median_of(
            "default_install.py",
            {**task, "method": "LDAVI"},
            _repeats(corpus, repeats),
            python=python,
        )
        RAN.setdefault("LDAVI", ours["params"])
        ratio = ours["perplexity"] / peer["perplexity"]
        share = ours["seconds"] / peer["seconds"]
        reached = ratio <= 1.0
        if reached:
            worst = max(worst, share)
        out.append(
            [
                corpus,
                f"{peer['seconds']:.2f}",
                f"{peer['perplexity']:.1f}",
                f"{ours['seconds']:.2f}",
                f"{ours['perplexity']:.1f}",
                f"{ratio:.4f}",
                f"<= {share:.3f}" if reached else "not reached",
            ]
        )
        print(f"  {corpus}: tomotopy {peer}, LDAVI {ours}")
    out.append(["worst reached", "", "", "", "", "", f"<= {worst:.3f}"])
    return {
        "columns": [
            "corpus",
            "tomotopy s (1,000 sweeps)",
            "tomotopy perplexity",
            "LDAVI s",
            "LDAVI perplexity",
            "LDAVI / tomotopy perplexity",
            "LDAVI time to tomotopy's perplexity / tomotopy's time",
        ],
        "rows": out,
    }


LOAD_METHODS = ("LDAVI", "sklearn LDA", "KLNMF", "PLSI", "sklearn NMF")


def load_table(corpora, seed, repeats, python):
    """Each fit idle and then loaded, ``repeats`` such pairs in a row: a
    pair's share is its idle seconds over its loaded ones (drift of the
    machine between an idle and a loaded run stays within a pair); the
    table gives the median share of the pairs and their range."""
    out = []
    for corpus in corpora:
        row = [corpus]
        for method in LOAD_METHODS:
            task = {"task": "fit", "corpus": corpus, "method": method, "seed": seed}
            pairs = []
            for _ in range(repeats):
                idle = harness.measure("default_install.py", task, python=python)
                with harness.busy(2):
                    loaded = harness.measure("default_install.py", task, python=python)
                pairs.append((idle["seconds"], loaded["seconds"]))
            RAN.setdefault(method, idle["params"])
            a, b = np.median(pairs, axis=0)
            shares = [i / j for i, j in pairs]
            row += [
                f"{a:.2f} / {b:.2f}",
                f"{np.median(shares):.2f} ({min(shares):.2f}-{max(shares):.2f})",
            ]
            print(f"  {corpus} {method}: {row[-2]}, kept {row[-1]}")
        out.append(row)
    columns = ["corpus"]
    for m in LOAD_METHODS:
        columns += [f"{m} s idle / loaded", f"{m} speed kept"]
    return {"columns": columns, "rows": out}


def main(argv=None):
    from corpus_registry import names

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpora", nargs="+", default=list(names()))
    parser.add_argument(
        "--tables",
        nargs="+",
        default=["fits", "quality", "perplexity", "transform", "load"],
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--load-corpora",
        nargs="+",
        default=["classic3", "re0", "tr41", "generated"],
        help="the load table's corpora (every one measured --repeats times)",
    )
    parser.add_argument(
        "--once", nargs="*", default=["20news", "generated"], help="measured once"
    )
    parser.add_argument("--transform-corpora", nargs="+", default=None)
    parser.add_argument("--python", default=None)
    parser.add_argument("--write-doc", action="store_true")
    parser.add_argument(
        "--compiled",
        action="store_true",
        help="compile the numba kernels once first (compile_kernels)",
    )
    args = parser.parse_args(argv)
    ONCE.update(args.once)
    where = harness.interpreter_description(args.python)
    backend = "numba" if where["numba"] else "numpy"
    if args.compiled:
        if not where["numba"]:
            parser.error("--compiled needs an interpreter with numba")
        COMPILED["seconds"] = harness.compiled_beforehand(args.python)
    print(f"interpreter: {where}")

    def emit(name, table):
        _emit(name, table, args, backend, where)
        RAN.clear()

    if "fits" in args.tables:
        rows = _fits(args.corpora, args.seed, args.repeats, args.python)
        emit("fits", fits_table(rows, args.corpora))
    if "quality" in args.tables:
        emit(
            "quality",
            quality_table(args.corpora, args.seed, args.repeats, args.python),
        )
    if "perplexity" in args.tables:
        emit(
            "perplexity",
            perplexity_table(args.corpora, args.seed, args.repeats, args.python),
        )
    if "transform" in args.tables:
        corpora = args.transform_corpora or args.corpora
        emit("transform", transform_table(corpora, args.seed, args.python))
    if "tolerance" in args.tables:
        corpora = args.transform_corpora or args.corpora
        emit("tolerance", tolerance_table(corpora, args.seed, args.python))
    if "load" in args.tables:
        emit(
            "load",
            load_table(args.load_corpora, args.seed, args.repeats, args.python),
        )


def _emit(name, table, args, backend, where):
    """Print a table and, with --write-doc, write its block at once (a
    later table's failure loses nothing)."""
    stack = ", ".join(f"{k} {v}" for k, v in where.items() if k != "package")
    if backend == "numpy":
        what = "Default install (no numba)"
    elif COMPILED:
        what = (
            f"With numba, its kernels compiled once beforehand by compile_kernels "
            f"({COMPILED['seconds']:.1f} s, not counted; every process loads "
            "them from numba's cache)"
        )
    else:
        what = "With numba, an empty numba cache in every process (so NumPy runs)"
    if name == "load":
        repeats = (
            f"{args.repeats} pairs of fits (idle, then loaded) per cell on "
            "every corpus: the median seconds of each, and the median share "
            "of the pairs (its range)"
        )
    elif name in ("transform", "tolerance"):
        repeats = "one fit per cell; the median of three transform calls"
    else:
        repeats = f"median of {args.repeats}" + (
            f" ({', '.join(sorted(ONCE))}: one)" if ONCE else ""
        )
    text = (
        f"{what} ({stack}); seed {args.seed}; every fit the first of a "
        f"fresh process, {repeats}."
    )
    print(f"\n## {name}\n{text}")
    print(" | ".join(table["columns"]))
    for row in table["rows"]:
        print(" | ".join(row))
    if args.write_doc:
        from _docblocks import command_line, write_block

        write_block(
            f"install_{name}_{backend}",
            "docs/performance.md",
            command_line(),
            [{"text": text}, table],
            estimators=RAN,
            at_defaults={
                m: VARIED.get(m, ["n_components", "random_state"]) for m in RAN
            },
            no_transform=_no_transform(name),
        )


if __name__ == "__main__":
    if not harness.child(TASKS):
        main()
