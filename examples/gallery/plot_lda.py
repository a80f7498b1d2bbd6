"""
LDA: LDAVI and GammaPoissonVI
=============================

Latent Dirichlet allocation puts Dirichlet priors on each document's topic
proportions and on each topic's word distribution. The priors smooth the
topics and the proportions of new documents, which is what makes LDA
predict unseen text well.

- :class:`~sklearn_topicfac.LDAVI` fits LDA; its default
  (``inference="auto"``, which runs ``"map"`` in batch learning) is the
  maximum a posteriori estimate by EM, and
  ``inference="vb"`` is scikit-learn's mean-field variational inference.
- :class:`~sklearn_topicfac.GammaPoissonVI` is the Gamma-Poisson form of
  LDA: Poisson counts with Gamma-distributed topic weights, fitted by
  mean-field variational inference. Its iterates are those of LDA's
  variational inference without a prior on the topics; ``transform``
  returns posterior mean topic weights in the scale of the counts rather
  than proportions.

Both are fitted on three quarters of Classic3 and compared with
:class:`~sklearn_topicfac.PLSI` (no priors) on the held-out quarter.
"""

# %%
# Fit on three quarters of the corpus
# -----------------------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split

from sklearn_topicfac import LDAVI, PLSI, GammaPoissonVI
from sklearn_topicfac.datasets import load_classic3
from sklearn_topicfac.inspection import top_terms
from sklearn_topicfac.metrics import clustering_accuracy

corpus = load_classic3()
X_train, X_test, y_train, y_test = train_test_split(
    corpus.data, corpus.target, test_size=0.25, stratify=corpus.target, random_state=0
)
print(f"{X_train.shape[0]} training and {X_test.shape[0]} held-out documents")

models = {
    "LDAVI": LDAVI(n_components=3, random_state=0),
    "GammaPoissonVI": GammaPoissonVI(n_components=3, random_state=0),
    "PLSI": PLSI(n_components=3, random_state=0),
}
proportions = {}
for name, model in models.items():
    model.fit(X_train)
    theta = model.transform(X_test)
    # GammaPoissonVI's rows are in the scale of the counts: normalize them.
    proportions[name] = theta / theta.sum(axis=1, keepdims=True)
    print(f"\n{name}: {model.n_iter_} iterations")
    print(top_terms(model, corpus.feature_names, n_top=8))
    accuracy = clustering_accuracy(y_test, theta.argmax(axis=1))
    print(f"clustering accuracy of {name} on the held-out documents: {accuracy:.3f}")

# %%
# Held-out perplexity
# -------------------
# ``perplexity`` (lower is better) and ``score`` (higher is better) measure
# how well a model predicts the words of documents it was not fitted on:
# each held-out document's tokens are split at random in two halves, the
# document is folded in on one half and scored on the other. LDA's priors
# give it the lowest perplexity here.
perplexity = {name: model.perplexity(X_test) for name, model in models.items()}
for name, value in perplexity.items():
    print(f"{name:15s} held-out perplexity {value:7.1f}")

# %%
# How mixed the held-out documents are
# ------------------------------------
# Left: the held-out perplexities. Right: for every held-out document, the
# weight of its heaviest topic; most Classic3 abstracts are about one
# collection, and every model gives them nearly all of their weight.
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
names = list(perplexity)
left.bar(names, [perplexity[name] for name in names], color=["C0", "C1", "C2"])
left.set(
    ylim=(0.98 * min(perplexity.values()), 1.01 * max(perplexity.values())),
    ylabel="held-out perplexity",
    title="Lower is better",
)
bins = np.linspace(1 / 3, 1, 21)
for name in names:
    right.hist(proportions[name].max(axis=1), bins=bins, histtype="step", label=name)
right.set(
    xlabel="weight of the heaviest topic",
    ylabel="held-out documents",
    yscale="log",
    title="Topic proportions of new documents",
)
right.legend(loc="upper left")
fig.tight_layout()
plt.show()

# %%
# When to choose LDA
# ------------------
# Choose :class:`~sklearn_topicfac.LDAVI` when predicting unseen text
# matters (held-out likelihood, perplexity), and when documents are short or
# the corpus is small: there its priors pay most.
# ``LDAVI(learning_method="online")`` streams large corpora.
# :class:`~sklearn_topicfac.GammaPoissonVI` is LDA without a prior on the
# topics in its Gamma-Poisson form, whose updates read like NMF's; it is the
# one to choose to study that equivalence.
