"""Document completion: the held-out split behind every estimator's ``score``.

``score(X)`` judges a fitted model by how well it completes documents it has
not seen: each document's words are split into an observed and a held-out
part (:func:`completion_split`), the topic proportions are folded in on the
observed part with the topics fixed, and the held-out words are scored under
the resulting mixture (:func:`completion_log_likelihood`).

The split is binomial thinning: each of the ``X_dw`` tokens of term ``w`` in
document ``d`` is held out with probability 1/2, independently.  Under any
model in which a document's counts are Poisson (or multinomial given their
total) with rates ``N_d P(w|d)``, thinning gives two parts that are
independent given ``P(w|d)``, each with the same ``P(w|d)``: the held-out part
is a fair test of what the observed part taught the model.

The coin flips are not drawn from a random generator but computed from a hash
of (seed, the document's content, the term, the token's position): the split
is deterministic, identical for dense and sparse input, for float32 and
float64, and a document is split the same way whatever other documents are
scored with it.  So the score of a corpus is the held-out-word-weighted mean
of the scores of its parts.

A term that never occurs in the training data has probability zero under a
maximum-likelihood model (PLSI, the NMF family) and would cost the float
floor, about 708 nats, each time it is held out: on real vocabularies a few
such words decide a fold.  So the score mixes a small uniform distribution
into every topic, :data:`HELD_OUT_SMOOTHING` = 1e-3, the same for every
estimator and used only for scoring.
"""

import numpy as np
import scipy.sparse as sp
from scipy.special import ndtri

from .products import product_at_nonzeros

# The weight of the uniform distribution over the vocabulary that every
# estimator's ``score`` mixes into its topics (see `completion_log_likelihood`):
# a term absent from the training data costs log(V / 1e-3) nats (about 17
# for 26,000 terms) instead of the float floor's 708, and a word the topics
# do emit loses at most -log(1 - 1e-3) = 0.001 nats.
HELD_OUT_SMOOTHING = 1e-3

# SplitMix64's finalizer (Steele, Lea & Flood, 2014): a bijection of 64-bit
# words whose output bits are, to every statistical test, independent fair
# coins even for consecutive inputs.
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = 0x9E3779B97F4A7C15
_MASK64 = (1 << 64) - 1

# Counts up to this many tokens are thinned exactly, one hashed bit per token;
# larger counts (rare in text) by the normal approximation of the binomial,
# whose error in distribution is below 1 / sqrt(_EXACT_COUNTS) ~ 1.6 %.
_EXACT_COUNTS = 4096

_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def _mix(z):
    """SplitMix64 finalizer of a uint64 array (wrapping arithmetic)."""
    z = z ^ (z >> np.uint64(30))
    z = z * _MIX1
    z = z ^ (z >> np.uint64(27))
    z = z * _MIX2
    return z ^ (z >> np.uint64(31))


def _popcount(z):
    """Number of set bits of each entry of a uint64 array."""
    z = np.ascontiguousarray(z, dtype=np.uint64)
    return _POPCOUNT[z.view(np.uint8)].reshape(-1, 8).sum(axis=1, dtype=np.int64)


def _entry_keys(X, seed):
    """One 64-bit key per stored entry of canonical CSR ``X``.

    The key mixes the seed, the term and a hash of the whole document (its
    terms and their values, read as float64 so that float32 input of the
    same counts gets the same keys).
    """
    n = X.shape[0]
    lengths = np.diff(X.indptr)
    terms = X.indices.astype(np.uint64)
    values = X.data.astype(np.float64).view(np.uint64)
    entry = _mix(terms * np.uint64(_GOLDEN) ^ values)
    doc = np.zeros(n, dtype=np.uint64)
    nonempty = lengths > 0
    if nonempty.any():
        doc[nonempty] = np.bitwise_xor.reduceat(entry, X.indptr[:-1][nonempty])
    salt = np.uint64((int(seed) * _GOLDEN + 1) & _MASK64)
    return _mix(np.repeat(doc, lengths) ^ _mix(terms + salt))


def _thin_counts(counts, keys):
    """Binomial(counts, 1/2) draws, one per key (``counts`` non-negative floats)."""
    held = np.zeros(counts.shape, dtype=np.float64)
    exact = counts <= _EXACT_COUNTS
    n = counts.astype(np.int64, copy=False) if exact.all() else None
    if n is None:
        n = np.where(exact, counts, 0).astype(np.int64)
    # Each token is one bit of a hashed word: 64 tokens per word, words
    # w = 1, 2, ... of an entry are hashes of (key, w).
    todo = np.flatnonzero(exact & (n > 0))
    word = 0
    while todo.size:
        left = n[todo] - 64 * word
        bits = np.minimum(left, 64).astype(np.uint64)
        mask = np.where(
            bits >= 64,
            np.uint64(_MASK64),
            (np.uint64(1) << np.minimum(bits, 63)) - np.uint64(1),
        )
        salt = np.uint64(((word + 1) * _GOLDEN) & _MASK64)
        held[todo] += _popcount(_mix(keys[todo] + salt) & mask)
        word += 1
        todo = todo[left > 64]
    big = np.flatnonzero(~exact)
    if big.size:
        u = ((keys[big] >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0**-53
        m = counts[big]
        held[big] = np.clip(np.rint(m / 2 + np.sqrt(m) / 2 * ndtri(u)), 0, m)
    return held


def completion_split(X, seed=0):
    """Split each document's words into an observed and a held-out part.

    Binomial thinning: each token is held out with probability 1/2.  An
    entry ``X_dw = c + f`` with integer part ``c`` and fractional part ``f``
    holds out ``Binomial(c, 1/2)`` of its ``c`` tokens, and its fraction
    ``f`` goes, whole, to one of the two parts with probability 1/2 (so
    non-integer data, which has no tokens, is split entry by entry).  The
    coin flips are hashes of ``seed``, the document's content and the term,
    so the split is a deterministic function of each document.

    Parameters
    ----------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
        Non-negative, canonical (sorted indices, no duplicates, no stored
        zeros), as returned by the estimators' input validation.
    seed : int, default=0
        Selects the split.

    Returns
    -------
    X_observed, X_held_out : scipy.sparse.csr_matrix
        Same shape and dtype as ``X``, without stored zeros; they add up to
        ``X``.
    """
    data = X.data.astype(np.float64)
    whole = np.floor(data)
    keys = _entry_keys(X, seed)
    held = _thin_counts(whole, keys)
    # The top bit of the key (unused by the token words) decides the fraction.
    held += (data - whole) * (keys >> np.uint64(63)).astype(np.float64)
    parts = []
    for values in (data - held, held):
        part = sp.csr_matrix(
            (values.astype(X.dtype), X.indices.copy(), X.indptr.copy()),
            shape=X.shape,
        )
        part.eliminate_zeros()
        parts.append(part)
    return tuple(parts)


def completion_log_likelihood(X_held_out, theta, phi, smoothing=0.0):
    """Log-likelihood of the held-out words under ``P(w|d) = theta @ phi``.

    Parameters
    ----------
    X_held_out : scipy.sparse.csr_matrix of shape (n_samples, n_features)
        Held-out counts.
    theta : ndarray of shape (n_samples, n_components)
        Topic proportions folded in on the observed part; rows sum to one.
    phi : ndarray of shape (n_components, n_features)
        Topics; rows sum to one.
    smoothing : float in [0, 1), default=0.0
        Weight ``epsilon`` of the uniform distribution over the
        ``n_features`` terms mixed into every topic for scoring:
        :math:`P_\\epsilon(w \\mid z) = (1 - \\epsilon) P(w \\mid z) +
        \\epsilon / V`.  A word no topic can emit then costs
        :math:`\\log(V / \\epsilon)` nats, not the float floor's 708.

    Returns
    -------
    log_likelihood : float
        :math:`\\sum_{dw} X_{dw} \\log \\sum_z \\theta_{dz}
        P_\\epsilon(w \\mid z)`, with each probability floored at the
        smallest normal float64 (without smoothing, a word the model cannot
        emit costs about 708 nats instead of infinity).
    n_words : float
        The number of held-out words, ``X_held_out.sum()``.
    """
    X = X_held_out
    p = product_at_nonzeros(
        X, theta.astype(X.dtype, copy=False), phi.astype(X.dtype, copy=False)
    )
    # The mixture, the floor and the sum in float64 whatever the working
    # dtype, so that a word the model cannot emit costs the same for float32
    # and float64 input.  Since the rows of theta sum to one, smoothing every
    # topic is smoothing the document's mixture.
    p = p.astype(np.float64)
    if smoothing:
        p = (1.0 - smoothing) * p + smoothing / X.shape[1]
    log_p = np.log(np.maximum(p, np.finfo(np.float64).tiny))
    data = X.data.astype(np.float64)
    return float(data @ log_p), float(data.sum())
