"""Read a fitted topic model: top terms, coherence, diversity, pyLDAvis, plots.

Fits PLSI with 6 topics to the bundled Classic3 corpus, then

- prints the top terms of each topic with their probabilities P(w|z), and
  the same table as a pandas DataFrame;
- scores the topics: UMass and NPMI coherence (do a topic's top terms occur
  in the same documents?) and topic diversity (do topics share top terms?);
- exports the inputs of pyLDAvis (and, when pyLDAvis is installed, writes
  its HTML page);
- draws the top terms, the objective during the fit and the documents on
  the topic polygon (when matplotlib is installed).

    python examples/inspect_topics.py --out-dir /tmp/topics
    python examples/inspect_topics.py --quick

The guide's figures docs/figures/inspect_top_terms.png and
inspect_document_map.png are this script's top_terms.png and document_map.png.
"""

import argparse
from pathlib import Path

import numpy as np

from sklearn_topicfac import PLSI
from sklearn_topicfac.datasets import load_classic3
from sklearn_topicfac.inspection import (
    plot_document_map,
    plot_loss_history,
    plot_top_terms,
    to_pyldavis,
    top_terms,
)
from sklearn_topicfac.metrics import npmi_coherence, topic_diversity, umass_coherence


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out-dir", default=".", help="where figures are written")
    parser.add_argument("--quick", action="store_true", help="30 iterations")
    args = parser.parse_args(argv)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)

    corpus = load_classic3()
    X, vocab = corpus.data, corpus.feature_names
    model = PLSI(n_components=6, random_state=0, max_iter=30 if args.quick else 200)
    model.fit(X)

    table = top_terms(model, vocab, n_top=6)
    print(table.to_string(weights=True))
    frame = table.to_frame()
    print(frame.pivot(index="rank", columns="topic", values="term"))

    umass = umass_coherence(model, X, n_top=10)
    npmi = npmi_coherence(model, X, n_top=10)
    for z in range(model.n_components):
        print(f"topic {z}: UMass {umass[z]:6.3f}  NPMI {npmi[z]:6.3f}")
    print(f"topic diversity (top 25 terms): {topic_diversity(model):.3f}")

    data = to_pyldavis(model, X, vocab)
    print("pyLDAvis input:", {k: np.shape(v) for k, v in data.items()})
    try:
        import pyLDAvis
    except ImportError:
        print("(pip install pyldavis, then pyLDAvis.prepare(**data) draws it)")
    else:  # pragma: no cover - optional
        page = out / "topics_pyldavis.html"
        pyLDAvis.save_html(pyLDAvis.prepare(**data), str(page))
        print(f"wrote {page}")

    try:
        import matplotlib
    except ImportError:
        print("(pip install matplotlib for the figures)")
        return 0
    matplotlib.use("Agg")
    plot_top_terms(model, vocab, n_top=8, n_cols=3).savefig(out / "top_terms.png")
    plot_loss_history(model).figure.savefig(out / "loss_history.png")
    labels = corpus.target_names[corpus.target]
    plot_document_map(model, X, labels=labels, feature_names=vocab).figure.savefig(
        out / "document_map.png"
    )
    print(f"wrote top_terms.png, loss_history.png, document_map.png to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
