"""Where a whole default fit's time goes: the start, the iterations, the rest.

The profile behind the whole-default-fit table (``defaults.py``): for
KLNMF, PLSI and LDAVI on both engines, and for their scikit-learn peers at
their defaults (``n_components=20``, ``random_state=0``), one process, the
median over interleaved repeats of

- the start (for the package: everything before the first iteration's
  callback -- input checks, the NNDSVDa SVD, the first document step's
  set-up; for scikit-learn's NMF: its ``_initialize_nmf`` timed alone; its
  LDA draws a random start, timed as nothing),
- the iterations (the package: the iteration loop's own clock, read by a
  fit callback at the last iteration; scikit-learn: the rest of the fit),
- the iterations run and the milliseconds per iteration,
- the rest (the package: what follows the last iteration -- the final
  objective, outputs).

    python benchmarks/speed/profile_defaults.py --repeats 3
    python benchmarks/speed/profile_defaults.py --write-doc perf_default_profile
"""

import argparse
import os
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, REPO)

import corpora  # noqa: E402
import numpy as np  # noqa: E402
from defaults import VARIED, made  # noqa: E402
from sklearn.decomposition._nmf import _initialize_nmf  # noqa: E402

import sklearn_topicfac as tf  # noqa: E402
from sklearn_topicfac._config import numba_available  # noqa: E402

K = 20


def _sklearn_nmf(X):
    start = time.perf_counter()
    _initialize_nmf(X, K, init="nndsvda", random_state=0)
    init = time.perf_counter() - start
    start = time.perf_counter()
    est = made("scikit-learn NMF (KL, mu)").fit(X)
    total = time.perf_counter() - start
    return {"start": init, "loop": total - init, "rest": 0.0, "n_iter": est.n_iter_}


def _sklearn_lda(X):
    start = time.perf_counter()
    est = made("scikit-learn LDA").fit(X)
    total = time.perf_counter() - start
    return {"start": 0.0, "loop": total, "rest": 0.0, "n_iter": est.n_iter_}


def _ours(name, backend):
    def fit(X):
        seen = []

        def record(info):
            seen.append((time.perf_counter(), info))

        est = made(name)
        with tf.config_context(backend=backend), tf.fit_callback(record):
            start = time.perf_counter()
            est.fit(X)
            end = time.perf_counter()
        first_at, first = seen[0]
        last_at = seen[-1][0]
        # The loop's clock starts before the first iteration: the start is
        # what came before it.
        loop_start = first_at - first.seconds
        # Each run's loop clock at its last iteration (one run at these
        # defaults: one start, no moves).
        loops = {}
        for _, info in seen:
            loops[info.run] = info.seconds
        loop = sum(loops.values())
        iterations = len(seen)
        return {
            "start": loop_start - start,
            "loop": loop,
            "rest": end - last_at,
            "n_iter": iterations,
        }

    return fit


def runners():
    backends = ["numpy", "numba"] if numba_available() else ["numpy"]
    out = {"scikit-learn NMF (KL, mu)": _sklearn_nmf}
    for name in ("KLNMF", "PLSI"):
        for backend in backends:
            out[f"{name} {backend}"] = _ours(name, backend)
    out["scikit-learn LDA"] = _sklearn_lda
    for backend in backends:
        out[f"LDAVI {backend}"] = _ours("LDAVI", backend)
    return out


def profile(X, repeats):
    fits = runners()
    runs = {name: [] for name in fits}
    for _ in range(repeats):
        for name, fit in fits.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                runs[name].append(fit(X))
            r = runs[name][-1]
            print(
                f"  {name}: start {r['start']:.2f} s, {r['n_iter']} iterations "
                f"{r['loop']:.2f} s, rest {r['rest']:.2f} s",
                flush=True,
            )
    rows = []
    for name, results in runs.items():
        med = {key: float(np.median([r[key] for r in results])) for key in results[0]}
        med["runner"] = name
        rows.append(med)
    return rows


def print_profile(rows):
    print(
        "| runner | start s | iterations | iterations s | ms per iteration "
        "| rest s | whole fit s | start share |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        whole = r["start"] + r["loop"] + r["rest"]
        per = 1000 * r["loop"] / max(r["n_iter"], 1)
        print(
            f"| {r['runner']} | {r['start']:.2f} | {r['n_iter']:.0f} | "
            f"{r['loop']:.2f} | {per:.1f} | {r['rest']:.2f} | {whole:.2f} | "
            f"{r['start'] / whole:.0%} |"
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--write-doc",
        metavar="NAME",
        help="also write the table as the generated block NAME (docs/_data)",
    )
    args = parser.parse_args(argv)
    sys.path.insert(0, os.path.join(REPO, "benchmarks"))
    import _docblocks

    printed = _docblocks.capture_stdout() if args.write_doc else None
    X = corpora.generated("small")
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    print(f"# generated 10k x 5k: {X.shape}, nnz {X.nnz:,}, k = {K}", flush=True)
    rows = profile(X, args.repeats)
    print()
    print(f"Medians of {args.repeats} interleaved fits, wall seconds:")
    print()
    print_profile(rows)
    print(f"\nload average at end: {os.getloadavg()[0]:.1f}")
    if args.write_doc:
        ran = {r["runner"]: made(r["runner"]) for r in rows}
        _docblocks.write_doc(
            args.write_doc,
            _docblocks.printed_tables(printed.copy.getvalue()),
            "docs/performance.md",
            estimators=ran,
            at_defaults={
                r: ["n_components", "random_state", *VARIED.get(r, [])] for r in ran
            },
        )


if __name__ == "__main__":
    main()
