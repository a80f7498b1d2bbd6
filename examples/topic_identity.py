"""Topics across fits: align two fits, score each topic's stability, follow
topics from k to k + 1, and write the report with the relevance slider.

On the bundled Classic3 corpus (3,891 abstracts from three collections:
medicine, information science, aeronautics):

- two KLNMF fits from different random starts number their topics
  differently;
  ``align_topics`` gives the order that matches them (the optimal one-to-one
  matching on the Jensen-Shannon distance of their word distributions);
- ``topic_stability`` refits from other seeds and scores each topic by how
  closely the refits find it again;
- ``topic_lineage`` relates the fit with 3 topics to one with 4: which
  topic split;
- ``write_report`` writes the HTML report, stability on the cards.

    python examples/topic_identity.py --out-dir /tmp/identity
    python examples/topic_identity.py --quick
    python examples/topic_identity.py \\
        --screenshot docs/figures/report_classic3_relevance.png

``--screenshot`` draws the report in headless Chromium (Playwright and a
Chromium executable needed) with the slider at 0.6 and topic 0 selected:
the picture of ``docs/guide/inspecting.md``.
"""

import argparse
import shutil
from pathlib import Path

import numpy as np

from sklearn_topicfac import KLNMF
from sklearn_topicfac.datasets import load_classic3
from sklearn_topicfac.inspection import (
    align_topics,
    top_terms,
    topic_lineage,
    topic_stability,
    write_report,
)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out-dir", default=".", help="where the report goes")
    parser.add_argument("--quick", action="store_true", help="2 refits, not 5")
    parser.add_argument("--screenshot", help="PNG of the report (needs Chromium)")
    args = parser.parse_args(argv)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)

    data = load_classic3()
    X, vocabulary, labels = data.data, data.feature_names, data.target_names

    # From random starts (the default, NNDSVDa, gives nearly the same fit
    # whatever the seed).
    first = KLNMF(n_components=3, init="random", random_state=0).fit(X)
    second = KLNMF(n_components=3, init="random", random_state=2).fit(X)
    order = align_topics(first, second)
    print("second fit's topic matched to each of the first's:", order.tolist())
    for i, j in enumerate(order):
        a = top_terms(first, vocabulary, n_top=5).terms[i]
        b = top_terms(second, vocabulary, n_top=5).terms[j]
        print(f"  first {i}: {' '.join(a)}  <->  second {j}: {' '.join(b)}")

    stability = topic_stability(first, X, n_runs=2 if args.quick else 5, random_state=0)
    print("stability:", " ".join(f"{s:.3f}" for s in stability))

    four = KLNMF(n_components=4, init="random", random_state=0).fit(X)
    lineage = topic_lineage(first, four)
    print(lineage)

    report = out / "classic3_report.html"
    write_report(
        first,
        X,
        vocabulary,
        report,
        labels=np.asarray(labels)[data.target],
        title="KLNMF on Classic3",
        stability=stability,
    )
    print(f"report written to {report}")
    if args.screenshot:
        screenshot(report, args.screenshot)


def screenshot(report, png, relevance="0.6", topic="0"):
    """The report in headless Chromium, slider moved and a topic selected."""
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.goto(Path(report).resolve().as_uri())
            page.locator("#lambda").fill(relevance)
            page.locator(f".topic-mark[data-topic='{topic}']").click()
            page.screenshot(path=str(png), full_page=True)
        finally:
            browser.close()
    print(f"screenshot written to {png}")


if __name__ == "__main__":
    main()
