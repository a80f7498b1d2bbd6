"""LDA: LDAVI against scikit-learn (batch and online), gensim and tomotopy."""

import numpy as np
from measure import (
    interleaved,
    keep_freed_memory,
    median,
    release_freed_memory,
    run_once,
)
from sklearn.decomposition import LatentDirichletAllocation

from sklearn_topicfac import kernels as K
from sklearn_topicfac.kernels import products


def ldavi_class():
    """``LDAVI`` when it is importable, else None."""
    try:
        from sklearn_topicfac import LDAVI
    except ImportError:
        return None
    return LDAVI


def completion_perplexity(topics, observed, held, n_sweeps=100):
    """Document-completion perplexity of topic-word weights ``topics`` (k, m).

    The same evaluation for every library: the rows of ``topics`` are
    normalized to ``P(w|z)``; each held-out document's ``P(z|d)`` is fitted
    by EM on its observed half (``P(w|z)`` fixed, uniform start), and the
    other half is scored: ``exp(-sum x log P(w|d) / sum x)``.
    """
    phi = np.asarray(topics, dtype=np.float64)
    phi = phi / phi.sum(axis=1, keepdims=True)
    theta = np.full((observed.shape[0], phi.shape[0]), 1.0 / phi.shape[0])
    for _ in range(n_sweeps):
        R = K.ratio_at_nonzeros(observed, theta, phi)
        theta = theta * products.sparse_dense_product(R, phi.T)
        theta /= theta.sum(axis=1, keepdims=True)
    y = K.product_at_nonzeros(held, theta, phi)
    log_lik = np.sum(held.data * np.log(np.maximum(y, 1e-300)))
    return float(np.exp(-log_lik / held.data.sum()))


# ---------------------------------------------------------------- runners
def ldavi(X, k, epochs, method="batch", seed=0, init="random", split_merge=0):
    """LDAVI by the mean-field VB, scikit-learn's algorithm (not the default
    MAP); ``init="random"`` is scikit-learn's start, drawn from the same seed.

    ``split_merge=0``: the epochs alone, the work scikit-learn's fit does;
    ``"default"``: the estimator's default moves.
    """
    moves = {} if split_merge == "default" else {"split_merge": split_merge}
    cls = ldavi_class()
    model = cls(
        k,
        inference="vb",
        init=init,
        learning_method=method,
        max_iter=epochs,
        tol=0,
        random_state=seed,
        **moves,
    ).fit(X)
    return model.components_


def sklearn_lda(X, k, epochs, method="batch", seed=0):
    model = LatentDirichletAllocation(
        k,
        learning_method=method,
        max_iter=epochs,
        total_samples=X.shape[0],
        random_state=seed,
    ).fit(X)
    return model.components_


def gensim_corpus(X):
    """Bag-of-words lists (gensim's corpus format), built outside the timing."""
    return [
        list(
            zip(
                X.indices[a:b].tolist(),
                X.data[a:b].tolist(),
                strict=True,
            )
        )
        for a, b in zip(X.indptr[:-1], X.indptr[1:], strict=True)
    ]


def gensim_lda(corpus, n_terms, k, passes, seed=0):
    from gensim.models import LdaModel

    model = LdaModel(
        corpus=corpus,
        id2word={i: str(i) for i in range(n_terms)},
        num_topics=k,
        passes=passes,
        alpha="symmetric",
        eta=None,
        iterations=100,
        gamma_threshold=1e-3,
        eval_every=None,
        random_state=seed,
    )
    return model.get_topics()


def tomotopy_docs(X):
    """Token lists (tomotopy's input), built outside the timing."""
    docs = []
    for a, b in zip(X.indptr[:-1], X.indptr[1:], strict=True):
        words = np.repeat(X.indices[a:b], X.data[a:b].astype(np.int64))
        docs.append([f"w{i}" for i in words.tolist()])
    return docs


def tomotopy_lda(docs, n_terms, k, iterations, n_threads, seed=0):
    import tomotopy as tp

    model = tp.LDAModel(k=k, alpha=1.0 / k, eta=1.0 / k, seed=seed)
    model.optim_interval = 0
    for words in docs:
        model.add_doc(words)
    model.train(iterations, workers=n_threads)
    topics = np.zeros((k, n_terms))
    ids = np.array([int(w[1:]) for w in model.used_vocabs])
    for z in range(k):
        topics[z, ids] = model.get_topic_word_dist(z)
    return topics


def available_peers():
    found = {}
    for name in ("gensim", "tomotopy"):
        try:
            found[name] = __import__(name).__version__
        except ImportError:
            found[name] = None
    return found


# ----------------------------------------------------------------- tables
def epoch_rows(train, test_obs, test_held, k, epochs, repeats, n_threads, peers):
    """Seconds per epoch, held-out perplexity and peak memory of each LDA runner."""
    m = train.shape[1]
    calls = {
        "scikit-learn LDA, batch": lambda: sklearn_lda(train, k, epochs, "batch"),
        "scikit-learn LDA, online": lambda: sklearn_lda(train, k, epochs, "online"),
    }
    if ldavi_class() is not None:
        calls["LDAVI, batch"] = lambda: ldavi(train, k, epochs, "batch")
        calls["LDAVI, online"] = lambda: ldavi(train, k, epochs, "online")
    if peers.get("gensim"):
        corpus = gensim_corpus(train)
        calls["gensim LdaModel"] = lambda: gensim_lda(corpus, m, k, epochs)
    if peers.get("tomotopy"):
        docs = tomotopy_docs(train)
        # Gibbs sweeps are far cheaper than VB epochs: 10 sweeps per "epoch".
        calls["tomotopy LDAModel (10 Gibbs sweeps)"] = lambda: tomotopy_lda(
            docs, m, k, 10 * epochs, n_threads
        )
    runs = interleaved(calls, repeats)
    reference = median([r.wall for r in runs["scikit-learn LDA, batch"]])
    reference_cpu = median([r.cpu for r in runs["scikit-learn LDA, batch"]])
    rows = []
    for name, rs in runs.items():
        wall = median([r.wall for r in rs])
        rows.append(
            {
                "runner": name,
                "s_per_epoch": wall / epochs,
                "cpu_s_per_epoch": median([r.cpu for r in rs]) / epochs,
                "speedup": reference / wall,
                "cpu_speedup": reference_cpu / median([r.cpu for r in rs]),
                "perplexity": completion_perplexity(rs[-1].result, test_obs, test_held),
                "peak_rss_mib": None
                if median([r.peak_rss for r in rs]) is None
                else median([r.peak_rss for r in rs]) / 2**20,
            }
        )
    return rows


def time_to_gensim(train, test_obs, test_held, k, passes, checkpoints):
    """Wall time of LDAVI (batch) to reach gensim's perplexity after ``passes``.

    gensim runs ``passes`` passes once; LDAVI runs fresh fits of increasing
    length (``checkpoints`` epochs), each from its default start (NNDSVDa)
    and with its default split-merge moves, until one reaches gensim's
    held-out perplexity.  Returns a dict, or
    None without gensim or LDAVI.
    """
    if ldavi_class() is None or not available_peers().get("gensim"):
        return None
    corpus = gensim_corpus(train)
    keep_freed_memory()  # timing: the allocator's steady state
    try:
        return _time_to_gensim(
            corpus, train, test_obs, test_held, k, passes, checkpoints
        )
    finally:
        release_freed_memory()


def _time_to_gensim(corpus, train, test_obs, test_held, k, passes, checkpoints):
    g = run_once(lambda: gensim_lda(corpus, train.shape[1], k, passes))
    target = completion_perplexity(g.result, test_obs, test_held)
    trace = []
    for epochs in checkpoints:
        # LDAVI's default start: gensim starts from its own, so there is no
        # shared start to hold fixed; this is what a user of each gets.
        r = run_once(
            lambda epochs=epochs: ldavi(
                train, k, epochs, init=None, split_merge="default"
            )
        )
        p = completion_perplexity(r.result, test_obs, test_held)
        trace.append((epochs, r.wall, p))
        if p <= target:
            break
    reached = trace[-1][2] <= target
    return {
        "passes": passes,
        "gensim_s": g.wall,
        "gensim_perplexity": target,
        "trace": trace,
        "ldavi_s": trace[-1][1] if reached else None,
    }
