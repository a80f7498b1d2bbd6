"""How long choosing k takes on a 2,000-document real corpus (issue 31).

2,000 documents drawn at random (seed 0) from the 10 largest single-label
classes of Reuters-21578, counted by the README's vectorizer
(``CountVectorizer(stop_words="english", min_df=2, max_df=0.5)``), then:

- ``select_n_components(PLSI(), X, range(2, 21, 2))`` at its defaults
  (``method="stability"``, 10 subsamples of 80 %: 110 fits);
- the README's recipe (``method="held_out"`` on
  ``KFold(3, shuffle=True, random_state=0)``: 30 fits).

Each with ``n_jobs=1`` (wall and CPU seconds of this process: on an idle
2-core machine ``n_jobs=2`` takes about half the CPU time) and, with
``--jobs 2``, also ``n_jobs=2`` (wall seconds).  Prints one table row per
run (docs/guide/choosing_k.md).

    python benchmarks/select_k_time.py /work/shared/data [--jobs 2]
"""

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from _raw_text import KeepDocuments
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.model_selection import KFold

from sklearn_topicfac import PLSI
from sklearn_topicfac.datasets import load_reuters21578
from sklearn_topicfac.model_selection import select_n_components

RUNS = (
    ("defaults (stability, 10 subsamples)", {}),
    (
        "README recipe (held_out, shuffled 3-fold)",
        {"method": "held_out", "cv": KFold(3, shuffle=True, random_state=0)},
    ),
)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="the folder of the shared corpora")
    parser.add_argument("--jobs", type=int, default=1, help="also time n_jobs=JOBS")
    args = parser.parse_args()
    keep = KeepDocuments()
    load_reuters21578(args.data / "reuters21578", vectorizer=keep)
    rng = np.random.default_rng(0)
    rows = np.sort(rng.choice(len(keep.docs), size=2000, replace=False))
    docs = [keep.docs[i] for i in rows]
    vectorizer = CountVectorizer(stop_words="english", min_df=2, max_df=0.5)
    X = vectorizer.fit_transform(docs)
    print(f"Reuters-21578 sample: {X.shape[0]} documents x {X.shape[1]} terms")
    print("| run | n_jobs | fits | wall s | CPU s (this process) | best k | at edge |")
    print("|---|---|---|---|---|---|---|")
    jobs = sorted({1, args.jobs})
    for name, params in RUNS:
        for n_jobs in jobs:
            wall, cpu = time.perf_counter(), time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                warnings.simplefilter("ignore", UserWarning)
                result = select_n_components(
                    PLSI(random_state=0),
                    X,
                    range(2, 21, 2),
                    random_state=0,
                    n_jobs=n_jobs,
                    **params,
                )
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            fits = result.split_scores.size + (
                len(result.candidates) if result.method == "stability" else 0
            )
            print(
                f"| {name} | {n_jobs} | {fits} | {wall:.0f} | "
                f"{cpu:.0f} | {result.best_n_components} | {result.at_edge} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
