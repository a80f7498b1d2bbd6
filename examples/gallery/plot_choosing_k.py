"""
Choosing the number of topics
=============================

:func:`~sklearn_topicfac.model_selection.select_n_components` scores
candidate numbers of topics with one of two questions:

- ``method="stability"`` (the default): do models fitted on random
  subsamples of the documents find the same topics as the model fitted on
  all of them? A number of topics that describes groups present in the data
  comes back the same every time.
- ``method="held_out"``: how well does a model predict the held-out words of
  documents it was not fitted on (the estimators' ``score``, over shuffled
  folds)?

The two answer different questions, and on Classic3 they give different
answers.
"""

# %%
# Stability and held-out likelihood for 2 to 4 topics
# ---------------------------------------------------
import matplotlib.pyplot as plt

from sklearn_topicfac import PLSI
from sklearn_topicfac.datasets import load_classic3
from sklearn_topicfac.inspection import top_terms
from sklearn_topicfac.metrics import clustering_accuracy
from sklearn_topicfac.model_selection import select_n_components

corpus = load_classic3()
X, vocabulary = corpus.data, corpus.feature_names
candidates = [2, 3, 4]

stability = select_n_components(PLSI(), X, candidates, n_subsamples=5, random_state=0)
print(stability)

# %%
# The held-out likelihood keeps rising over this grid, and the function
# warns that its best candidate is at the edge of the grid.
held_out = select_n_components(PLSI(), X, candidates, method="held_out", random_state=0)
print(held_out)

# %%
# The two curves
# --------------
# Each panel marks its best candidate with a dotted line, and the number of
# collections with a dashed one. Stability is high for two and three topics
# and falls sharply at four: a fourth topic comes out differently from one
# subsample to the next. Its maximum is the *coarsest* grouping that
# reproduces, which can be fewer topics than there are classes; read the
# whole curve, not only its best point. The held-out likelihood rewards
# every extra topic on a corpus of this size: it is the criterion for
# predicting words, not for finding the collections.
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
stability.plot(ax=left)
left.set_title("Stability (higher is better)")
held_out.plot(ax=right)
right.set_title("Held-out log-likelihood per word")
for ax in (left, right):
    ax.axvline(3, color="C3", linestyle="--", label="3 collections")
    ax.legend()
fig.tight_layout()
plt.show()

# %%
# What the candidates group together
# ----------------------------------
# The topics and the clustering accuracy of PLSI at the number of topics
# stability chose, and at the number of collections. With fewer topics than
# classes, two collections share a topic and the accuracy cannot reach 1.
for k in sorted({stability.best_n_components, len(corpus.target_names)}):
    model = PLSI(n_components=k, random_state=0)
    clusters = model.fit_transform(X).argmax(axis=1)
    print(f"k = {k}:")
    print(top_terms(model, vocabulary, n_top=8))
    accuracy = clustering_accuracy(corpus.target, clusters)
    print(f"clustering accuracy of PLSI with k = {k}: {accuracy:.3f}\n")

# %%
# When to use which criterion
# ---------------------------
# Use stability to choose the number of topics for clustering documents or
# reading topics, and look at its secondary peaks; use the held-out
# likelihood (also what :class:`~sklearn.model_selection.GridSearchCV`
# optimizes with the estimators' default scoring) when the model is meant to
# predict text. ``method="aic"`` and ``method="bic"`` cost one fit per
# candidate; the user guide compares all four on labeled corpora.
