"""
Reading topics: top terms, alignment, stability and the HTML report
===================================================================

The :mod:`sklearn_topicfac.inspection` module reads fitted topic models:

- :func:`~sklearn_topicfac.inspection.top_terms`: each topic's heaviest
  terms and their probabilities;
- :func:`~sklearn_topicfac.inspection.align_topics`: the one-to-one matching
  of the topics of two fits, so that they can be read side by side;
- :func:`~sklearn_topicfac.inspection.topic_stability`: how closely refits
  from other seeds find each topic again;
- :func:`~sklearn_topicfac.inspection.write_report`: one self-contained HTML
  page with all of it.

Here LDA and PLSI are both asked for four topics on Classic3, one more than
its three collections, and the tools show where the two models differ.
"""

# %%
# Two models with four topics
# ---------------------------
import tempfile
from html import escape
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from sklearn_topicfac import LDAVI, PLSI
from sklearn_topicfac.datasets import load_classic3
from sklearn_topicfac.inspection import (
    align_topics,
    top_terms,
    topic_distances,
    topic_stability,
    write_report,
)
from sklearn_topicfac.metrics import clustering_accuracy

corpus = load_classic3()
X, vocabulary = corpus.data, corpus.feature_names
labels = corpus.target_names[corpus.target]

lda = LDAVI(n_components=4, random_state=0).fit(X)
plsi = PLSI(n_components=4, random_state=0).fit(X)
for name, model in [("LDAVI", lda), ("PLSI", plsi)]:
    print(f"{name}:")
    print(top_terms(model, vocabulary, n_top=8))
    clusters = model.transform(X).argmax(axis=1)
    accuracy = clustering_accuracy(corpus.target, clusters)
    print(f"clustering accuracy of {name}: {accuracy:.3f}\n")

# %%
# ``top_terms`` returns a table: ``print`` it, or take its terms, its
# weights ``P(w|z)`` or a pandas DataFrame (``to_frame()``).
table = top_terms(lda, vocabulary, n_top=5)
print(table.to_string(weights=True))

# %%
# Matching the topics of the two models
# -------------------------------------
# Topic numbers are arbitrary: topic 0 of one fit need not be topic 0 of
# another. ``align_topics`` matches them one to one, minimizing the total
# Jensen-Shannon distance between their word distributions, and
# ``topic_distances`` gives all the distances. With one topic more than
# there are collections, each model splits one collection in two, and not
# necessarily the same one: a topic both models found is at a small
# distance from its match; a half of a collection that only one model split
# is matched either to that whole collection in the other model, at a
# moderate distance, or, left over, to a topic of another collection, far
# from it.
order = align_topics(lda, plsi)
distances = topic_distances(lda, plsi)
lda_terms = top_terms(lda, vocabulary, n_top=4).terms
plsi_terms = top_terms(plsi, vocabulary, n_top=4).terms
for i, j in enumerate(order):
    print(
        f"LDAVI {i} ({' '.join(lda_terms[i])}) <-> PLSI {j} "
        f"({' '.join(plsi_terms[j])}): distance {distances[i, j]:.3f}"
    )

# %%
# Stability of each topic
# -----------------------
# ``topic_stability`` refits the model from other seeds and scores each topic
# by one minus its distance to its match in the refits (1: found again every
# time). Here the two halves of the collection that LDA split are the least
# stable: the refits draw the line between them elsewhere.
stability = topic_stability(lda, X, n_runs=3, random_state=0)
for z, score in enumerate(stability):
    print(f"LDAVI topic {z} ({' '.join(lda_terms[z])}): stability {score:.3f}")

# %%
# The figures: the distance of every LDA topic to every PLSI topic (PLSI's
# columns in the matched order, so the matches lie on the diagonal) and the
# stability of the LDA topics. A collection that one model split and the
# other did not shows as two cells of one row or column at a similar,
# moderate distance.
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
image = left.imshow(distances[:, order], cmap="viridis_r", vmin=0, vmax=1)
for (i, j), value in np.ndenumerate(distances[:, order]):
    color = "black" if value < 0.5 else "white"
    left.text(j, i, f"{value:.2f}", ha="center", va="center", color=color)
left.set(
    xticks=range(4),
    xticklabels=[f"PLSI {j}" for j in order],
    yticks=range(4),
    yticklabels=[f"LDAVI {i}" for i in range(4)],
    title="Jensen-Shannon distance between topics",
)
fig.colorbar(image, ax=left)
right.barh(
    [f"{z}: {' '.join(terms[:2])}" for z, terms in enumerate(lda_terms)], stability
)
right.set(xlim=(0, 1), xlabel="stability", title="LDAVI topics, 3 refits")
right.invert_yaxis()
fig.tight_layout()
plt.show()

# %%
# The HTML report
# ---------------
# ``write_report`` writes one HTML file, with no network access or extra
# package needed to view it: each topic's terms with a relevance slider, the
# inter-topic distance map, the documents on the plane of their topic
# proportions (coloured by collection when ``labels`` are given), the
# clustering scores, and the stability computed above. Here it is written to
# a temporary folder and shown below.
with tempfile.TemporaryDirectory() as folder:
    path = Path(folder) / "classic3_lda.html"
    write_report(
        lda,
        X,
        vocabulary,
        path,
        labels=labels,
        title="LDAVI with 4 topics on Classic3",
        stability=stability,
    )
    page = path.read_text(encoding="utf-8")
print(f"report: {len(page) / 1000:.0f} kB of HTML")


class HTMLPage:
    """An HTML page shown in a frame by notebooks and this gallery."""

    def __init__(self, html, height=900):
        self.html, self.height = html, height

    def _repr_html_(self):
        return (
            f'<iframe srcdoc="{escape(self.html)}" width="100%" '
            f'height="{self.height}" style="border: 1px solid #ccc"></iframe>'
        )


HTMLPage(page)

# %%
# When to use which tool
# ----------------------
# ``top_terms`` is the first look at any fit. ``align_topics`` and
# ``topic_distances`` compare two fits: two models, two seeds, or the same
# model on two corpora. ``topic_stability`` tells which topics to trust
# before naming them. ``write_report`` is the page to share.
