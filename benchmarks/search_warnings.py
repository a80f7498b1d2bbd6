"""How many ConvergenceWarnings a search over k prints, former and new defaults.

Issue 30: choosing k with ``GridSearchCV`` over ``n_components`` printed one
``ConvergenceWarning`` per fit that stopped at ``max_iter``, and
``select_n_components`` one summary warning.  For KLNMF and PLSI on a real
corpus (``benchmarks/convergence.py``'s corpora), this runs both searches with
the former defaults (``solver="mu"`` / ``"em"``) and with the defaults
(``solver="auto"``: diagonal Newton since commit 4fe966e, wherever it runs;
when the tables were made, coordinate descent where its compiled sweep ran,
else diagonal Newton, as on the NumPy kernels, ``--backend numpy``; the column
``solver_`` is the refitted best estimator's), counts the warnings, the most
iterations any one fit of the search ran (against the iteration cap:
``max_iter="auto"`` is 200 for the multiplicative and EM updates, 1000 for
coordinate descent and diagonal Newton), and times the search (CPU seconds of
the process)::

    python benchmarks/search_warnings.py --corpus re0 --ks 2 30 2 \\
        --write-doc real_text_search_warnings
"""

import argparse
import time
import warnings

from convergence import CORPORA, add_backend_argument
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV

import sklearn_topicfac as tf
from sklearn_topicfac.model_selection import select_n_components

SETTINGS = [
    (tf.KLNMF, {"solver": "mu"}, "mu (former default)"),
    (tf.KLNMF, {}, "auto (default)"),
    (tf.PLSI, {"solver": "em"}, "em (former default)"),
    (tf.PLSI, {}, "auto (default)"),
]


def _counted(function):
    """``(ConvergenceWarnings printed, most iterations of one fit, CPU
    seconds)`` of ``function()`` (its fits run one after the other)."""
    most = [0]

    def record(info):
        most[0] = max(most[0], info.iteration)

    start = time.process_time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        with tf.fit_callback(record):
            function()
    seconds = time.process_time() - start
    n_warned = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
    return n_warned, most[0], seconds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", default="re0", choices=sorted(CORPORA))
    parser.add_argument(
        "--ks", nargs=3, type=int, default=[2, 30, 2], metavar=("FROM", "TO", "STEP")
    )
    parser.add_argument("--subsamples", type=int, default=3)
    add_backend_argument(parser)
    parser.add_argument(
        "--defaults-only",
        action="store_true",
        help="only the defaults' rows (not the former defaults')",
    )
    parser.add_argument(
        "--write-doc",
        metavar="NAME",
        help="also write the table as the generated block NAME (docs/_data)",
    )
    args = parser.parse_args()
    tf.set_config(backend=args.backend)
    X, _ = CORPORA[args.corpus]()
    ks = list(range(args.ks[0], args.ks[1] + 1, args.ks[2]))
    lines = [
        f"{args.corpus}: {X.shape[0]} x {X.shape[1]}, k in {ks}.",
        "",
        "| estimator | solver | solver_ | GridSearchCV (cv=3): warnings / fits "
        "| most iterations | CPU s | select_n_components: warnings "
        "| most iterations | CPU s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    if args.backend != "auto":
        lines[0] += f" Backend: {args.backend}."
    print("\n".join(lines))
    for Estimator, params, label in SETTINGS:
        if args.defaults_only and params:
            continue
        base = Estimator(random_state=0, **params)
        search = GridSearchCV(base, {"n_components": ks}, cv=3)
        grid_warnings, grid_most, grid_seconds = _counted(lambda s=search: s.fit(X))
        n_fits = 3 * len(ks) + 1
        select_warnings, select_most, select_seconds = _counted(
            lambda b=base: select_n_components(
                b, X, ks, n_subsamples=args.subsamples, random_state=0
            )
        )
        solver = search.best_estimator_.solver_
        lines.append(
            f"| {Estimator.__name__} | {label} | {solver} "
            f"| {grid_warnings} / {n_fits} | {grid_most} | {grid_seconds:.0f} "
            f"| {select_warnings} | {select_most} | {select_seconds:.0f} |"
        )
        print(lines[-1], flush=True)
    if args.write_doc:
        from _docblocks import write_doc

        write_doc(args.write_doc, "\n".join(lines), "docs/real_text.md")


if __name__ == "__main__":
    main()
