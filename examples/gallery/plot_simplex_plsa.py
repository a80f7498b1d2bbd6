"""
SimplexPLSA: real-valued data as mixtures of extreme points
===========================================================

:class:`~sklearn_topicfac.SimplexPLSA` (Shashanka & Giering, 2010) writes
each row of a real-valued matrix, negative entries allowed, as a convex
combination of a few vertices: ``X ~ Theta @ B`` with the rows of ``Theta``
non-negative and summing to one, and the vertices ``B`` (``components_``)
anywhere in the data space. It moves the data onto the standard simplex by
an affine map (centering, SVD, a rotation), fits PLSA there, and maps the
PLSA bases back.

It is not a topic model of counts (fitting integer counts warns). Its data
here are real-valued coordinates of the Classic3 abstracts: the square
roots of each document's word frequencies, projected on their three
principal axes.
"""

# %%
# Real-valued coordinates of the documents
# ----------------------------------------
# The square root of ``P(w|d)`` (the Hellinger embedding) tames the weight
# of frequent words; PCA then centers the documents (implicitly: the sparse
# matrix is never densified) and keeps three coordinates, negative ones
# included.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.decomposition import PCA
from sklearn.preprocessing import normalize

from sklearn_topicfac import PLSI, SimplexPLSA
from sklearn_topicfac.datasets import load_classic3
from sklearn_topicfac.metrics import clustering_accuracy

corpus = load_classic3()
X, vocabulary, y = corpus.data, corpus.feature_names, corpus.target
hellinger = normalize(X, norm="l1").sqrt()  # sparse, like X
pca = PCA(n_components=3, svd_solver="arpack", random_state=0)
Z = pca.fit_transform(hellinger)
print(f"coordinates: {Z.shape}, from {Z.min():.3f} to {Z.max():.3f}")

# %%
# Fit three vertices
# ------------------
# With three features, the default ``svd_components`` (``n_features - 1``,
# the paper's choice) keeps the two leading principal axes and lays them on
# a triangle; the third coordinate is left out of the decomposition.
# ``transform`` returns each document's convex weights on the vertices; its
# heaviest vertex is its cluster. (The PLSA step stops at its default
# ``max_iter`` with a ``ConvergenceWarning``: its last, slow EM steps move
# the vertices outwards.)
model = SimplexPLSA(n_components=3, random_state=0)
weights = model.fit_transform(Z)
print("vertices (rows of components_):")
print(np.round(model.components_, 3))
print(f"rows of the weights sum to one: {np.allclose(weights.sum(axis=1), 1)}")
accuracy = clustering_accuracy(y, weights.argmax(axis=1))
print(f"clustering accuracy of SimplexPLSA: {accuracy:.3f}")

# %%
# What the vertices are
# ---------------------
# A vertex is a point of the three-dimensional coordinate space; mapped back
# through the PCA it is a vector over the vocabulary, whose largest entries
# read like a topic's top terms.
vertex_terms = pca.inverse_transform(model.components_)
for v, row in enumerate(vertex_terms):
    print(f"vertex {v}: " + " ".join(vocabulary[np.argsort(-row)[:8]]))

# %%
# For comparison: PLSI on the counts themselves clusters the same abstracts
# almost perfectly.
theta = PLSI(n_components=3, random_state=0).fit_transform(X)
accuracy = clustering_accuracy(y, theta.argmax(axis=1))
print(f"clustering accuracy of PLSI on the counts: {accuracy:.3f}")

# %%
# The triangle around the documents
# ---------------------------------
# The documents of each collection form an arm leaving a common centre; the
# triangle that SimplexPLSA learns encloses the three arms. Documents near
# the centre, which share the general vocabulary of the three collections,
# sit far from every vertex, and their heaviest vertex is often not their
# collection's: they are the errors that the clustering accuracy above
# counts.
fig, ax = plt.subplots(figsize=(6, 5.5))
for c, name in enumerate(corpus.target_names):
    ax.scatter(*Z[y == c, :2].T, s=4, alpha=0.5, label=name)
triangle = np.vstack([model.components_, model.components_[:1]])
ax.plot(triangle[:, 0], triangle[:, 1], color="black", label="SimplexPLSA")
ax.scatter(*model.components_[:, :2].T, color="black", marker="^", s=60)
ax.set(
    xlabel="principal axis 1",
    ylabel="principal axis 2",
    title="Classic3 abstracts and the learned simplex",
)
ax.legend(markerscale=3)
plt.show()

# %%
# When to choose SimplexPLSA
# --------------------------
# Choose it for real-valued data (spectra, signals, embeddings) that are
# mixtures of a few extreme points, when what you want is those extreme
# points and each row's convex weights on them. For word counts choose
# :class:`~sklearn_topicfac.PLSI` or :class:`~sklearn_topicfac.LDAVI`, as
# the comparison above shows.
