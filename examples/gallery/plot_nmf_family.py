"""
The NMF family: KLNMF, NormalizedNMF and JointNMF
=================================================

Non-negative matrix factorization under the generalized Kullback-Leibler
divergence writes a document-term count matrix ``X`` as ``W @ H``: ``H`` holds
one row of term weights per topic, ``W`` one row of topic weights per
document. Three estimators of the package fit this model:

- :class:`~sklearn_topicfac.KLNMF`, the plain factorization, whose product
  ``W @ H`` is in the scale of the counts;
- :class:`~sklearn_topicfac.NormalizedNMF`, the same product re-split after
  every update into probabilities: ``P(w|z)``, ``P(z)`` and ``P(d|z)``;
- :class:`~sklearn_topicfac.JointNMF`, which updates both factors from one
  ratio ``X / (W @ H)`` under normalization constraints.

Here all three find the three collections of Classic3.
"""

# %%
# The corpus
# ----------
# Classic3 ships with the package as a sparse matrix of word counts: 3,891
# abstracts from MEDLINE (medicine), CISI (information science) and
# CRANFIELD (aeronautics).
import matplotlib.pyplot as plt
import numpy as np

from sklearn_topicfac import KLNMF, JointNMF, NormalizedNMF
from sklearn_topicfac.datasets import load_classic3
from sklearn_topicfac.inspection import plot_top_terms, top_terms
from sklearn_topicfac.metrics import clustering_accuracy

corpus = load_classic3()
X, vocabulary = corpus.data, corpus.feature_names
print(f"{X.shape[0]} documents x {X.shape[1]} terms, {X.nnz} non-zero counts")
print("classes:", ", ".join(corpus.target_names))

# %%
# Three fits, one topic per class
# -------------------------------
# Every estimator keeps its defaults; only the number of topics and the seed
# are set. A document's cluster is its heaviest topic (the largest entry of
# its row of ``transform``), and the clustering accuracy counts the
# documents whose cluster matches their collection under the best
# one-to-one matching of topics to collections.
models = {
    "KLNMF": KLNMF(n_components=3, random_state=0),
    "NormalizedNMF": NormalizedNMF(n_components=3, random_state=0),
    "JointNMF": JointNMF(n_components=3, random_state=0),
}
clusters = {}
for name, model in models.items():
    W = model.fit_transform(X)
    clusters[name] = W.argmax(axis=1)
    accuracy = clustering_accuracy(corpus.target, clusters[name])
    print(f"{name}: {model.n_iter_} iterations, objective {model.loss_:,.0f}")
    print(top_terms(model, vocabulary, n_top=8))
    print(f"clustering accuracy of {name}: {accuracy:.3f}\n")

# %%
# The topics as bars
# ------------------
# :func:`~sklearn_topicfac.inspection.plot_top_terms` draws each topic's
# heaviest terms with their share of the topic, ``P(w|z)``.
fig = plot_top_terms(models["KLNMF"], vocabulary, n_top=8, n_cols=3)
fig.suptitle("KLNMF on Classic3: the 8 heaviest terms of each topic")
plt.show()

# %%
# The same solution, read as probabilities
# ----------------------------------------
# NormalizedNMF's product equals KLNMF's after every iteration; what it adds
# is the reading of the factors as probabilities. ``p_z_`` is the share of
# the corpus's words that each topic accounts for: next to it, the share of
# the words in the collection whose documents the topic gathers.
normalized = models["NormalizedNMF"]
table = np.zeros((3, 3), dtype=int)  # documents by class (rows) and topic
np.add.at(table, (corpus.target, clusters["NormalizedNMF"]), 1)
lengths = np.asarray(X.sum(axis=1)).ravel()
words_per_class = np.bincount(corpus.target, weights=lengths) / lengths.sum()
for z, p_z in enumerate(normalized.p_z_):
    c = table[:, z].argmax()
    print(
        f"topic {z}: P(z) = {p_z:.3f}; {corpus.target_names[c]} holds "
        f"{words_per_class[c]:.3f} of the words"
    )

# %%
# How fast each one gets there, and which documents it groups
# -----------------------------------------------------------
# The left panel shows the objective (the generalized KL divergence) after
# each iteration: KLNMF's curve lies under NormalizedNMF's, equal at every
# iteration. The right panel counts the documents of each collection by the
# topic KLNMF assigns them to.
table = np.zeros((3, 3), dtype=int)
np.add.at(table, (corpus.target, clusters["KLNMF"]), 1)
print("KLNMF: documents of each class (rows) by topic (columns)")
print(table)

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
for name, model in models.items():
    left.plot(model.loss_history_, marker=".", label=name)
left.set(xlabel="iteration", ylabel="objective", title="Training")
left.legend()
right.imshow(table, cmap="Blues")
for (i, j), count in np.ndenumerate(table):
    color = "white" if count > table.max() / 2 else "black"
    right.text(j, i, count, ha="center", va="center", color=color)
right.set(
    xticks=range(3),
    yticks=range(3),
    yticklabels=corpus.target_names,
    xlabel="KLNMF topic",
    title="Documents by class and topic",
)
fig.tight_layout()
plt.show()

# %%
# When to choose this family
# --------------------------
# Choose :class:`~sklearn_topicfac.KLNMF` when you want the plain factors
# ``W`` and ``H`` of a KL-NMF, as scikit-learn's
# ``NMF(beta_loss="kullback-leibler")`` returns them (``W @ H`` is in the
# scale of the counts), and :class:`~sklearn_topicfac.NormalizedNMF` for the
# same solution as probabilities. :class:`~sklearn_topicfac.JointNMF` is
# there to study the joint updates; for clustering documents and reading
# topics, :class:`~sklearn_topicfac.PLSI` fits the same objective and is the
# usual first choice.
