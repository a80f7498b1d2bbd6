"""LDAVI's held-out perplexity by epochs, with and without split-merge moves,
against gensim's after 5 passes: one process, the speed harness's corpus.

The table under "To gensim's held-out perplexity" in docs/performance.md.
Timings on a shared machine vary from process to process (gensim took 15 to
38 s for the same fit in three processes); compare within one run.

    python benchmarks/lda_time_to_gensim.py     # ~3 min; needs gensim
"""

import sys
import warnings
from pathlib import Path

from sklearn.exceptions import ConvergenceWarning

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent / "speed"))
import corpora  # noqa: E402
import lda  # noqa: E402
from measure import keep_freed_memory  # noqa: E402

K_TOPICS, PASSES = 20, 5


def main():
    if not lda.available_peers().get("gensim"):
        sys.exit("gensim is not installed: pip install gensim")
    warnings.simplefilter("ignore", ConvergenceWarning)
    X = corpora.generated("small")
    train, test = corpora.held_out_split(X)
    test_obs, test_held = corpora.completion_split(test)
    keep_freed_memory()  # timing: the allocator's steady state
    corpus = lda.gensim_corpus(train)
    g = lda.run_once(lambda: lda.gensim_lda(corpus, train.shape[1], K_TOPICS, PASSES))
    target = lda.completion_perplexity(g.result, test_obs, test_held)
    print(f"gensim LdaModel, {PASSES} passes: {g.wall:.1f} s, perplexity {target:.1f}")
    print("LDAVI from its default start (s, held-out perplexity):")
    print("| epochs | split_merge=0 | split_merge=1 | split_merge=3 |")
    print("|---|---|---|---|")
    for epochs in (1, 2, 3):
        cells = []
        for moves in (0, 1, 3):
            r = lda.run_once(
                lambda e=epochs, m=moves: lda.ldavi(
                    train, K_TOPICS, e, init=None, split_merge=m
                )
            )
            p = lda.completion_perplexity(r.result, test_obs, test_held)
            cells.append(f"{r.wall:.1f}, {p:.1f}")
        print(f"| {epochs} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
