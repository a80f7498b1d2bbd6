"""Tests for the HTML report (``inspection.write_report``), in a real browser too.

The browser test renders the report in headless Chromium through
Playwright.  Where no browser is installed it is skipped, unless
``TOPICFAC_REQUIRE_BROWSER=1`` (set by ``.ci/run``, which installs Debian's
``chromium``): in CI a missing browser is a failure.
"""

import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.pipeline import make_pipeline

from sklearn_topicfac import KLNMF, PLSI, _report
from sklearn_topicfac._report import (
    classical_scaling,
    jensen_shannon_distances,
    principal_plane,
)
from sklearn_topicfac.inspection import write_report
from sklearn_topicfac.model_selection import select_n_components

WORDS = {
    "sports": "game team score player coach season match goal league ball",
    "money": "stock market bond price bank rate investor fund trade profit",
    "weather": "rain storm wind snow cloud sunny forecast cold heat humid",
}


def _corpus(n_per_class=40, seed=0):
    rng = np.random.default_rng(seed)
    docs, labels = [], []
    for label, words in WORDS.items():
        for _ in range(n_per_class):
            docs.append(" ".join(rng.choice(words.split(), size=20)))
            labels.append(label)
    return docs, np.asarray(labels)


@pytest.fixture(scope="module")
def fitted():
    docs, labels = _corpus()
    vectorizer = CountVectorizer()
    X = vectorizer.fit_transform(docs)
    model = KLNMF(n_components=3, random_state=0).fit(X)
    return model, X, vectorizer, labels, docs


# ------------------------------------------------------------------ geometry
def test_jensen_shannon_distances():
    phi = np.array([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [0.5, 0.5, 0.0]])
    D = jensen_shannon_distances(phi)
    np.testing.assert_allclose(D, D.T)
    np.testing.assert_allclose(np.diag(D), 0)
    assert D[0, 2] == 0  # identical topics
    # Disjoint halves share half their mass: JS divergence 1/2 bit.
    np.testing.assert_allclose(D[0, 1], np.sqrt(0.5))
    disjoint = jensen_shannon_distances(np.array([[1.0, 0.0], [0.0, 1.0]]))
    np.testing.assert_allclose(disjoint[0, 1], 1.0)


def test_classical_scaling_keeps_the_distances_of_planar_points():
    rng = np.random.default_rng(0)
    points = rng.normal(size=(6, 2))
    D = np.linalg.norm(points[:, None] - points[None], axis=2)
    coords = classical_scaling(D)
    np.testing.assert_allclose(
        np.linalg.norm(coords[:, None] - coords[None], axis=2), D, atol=1e-10
    )
    # One topic: a point; two topics: a segment of their distance.
    assert classical_scaling(np.zeros((1, 1))).shape == (1, 2)
    two = classical_scaling(np.array([[0.0, 0.3], [0.3, 0.0]]))
    np.testing.assert_allclose(np.linalg.norm(two[0] - two[1]), 0.3)


def test_principal_plane_of_topic_proportions():
    theta = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1 / 3, 1 / 3, 1 / 3]])
    xy = principal_plane(theta)
    assert xy.shape == (4, 2)
    # The simplex's vertices are equidistant and the centre is in the middle.
    sides = [np.linalg.norm(xy[i] - xy[j]) for i, j in ((0, 1), (1, 2), (0, 2))]
    np.testing.assert_allclose(sides, np.sqrt(2))
    np.testing.assert_allclose(xy[3], xy[:3].mean(axis=0), atol=1e-12)


# ----------------------------------------------------------------- the page
def test_report_content(fitted, tmp_path):
    model, X, vectorizer, labels, _ = fitted
    X_before = X.copy()
    path = write_report(model, X, vectorizer, tmp_path / "r.html", labels=labels)
    page = path.read_text(encoding="utf-8")
    assert (X != X_before).nnz == 0  # the caller's data are not touched
    assert page.count("class='topic-card'") == 3
    assert page.count("class='topic-circle'") == 3
    assert page.count("class='doc'") == 120
    markup = page.split("<script", 1)[0]  # (the script builds rows too)
    assert markup.count("class='term'") == 30  # 10 top terms per topic
    for label in WORDS:
        assert f"data-label='{label}'" in page
    assert "accuracy" in page and "nmi" in page
    assert "id='selection'" not in page  # k was not chosen here
    # Self-contained: nothing is fetched.
    assert not re.search(r"(src|href)\s*=|https?://|@import", page)


def test_report_of_a_pipeline_on_raw_text_with_a_selection(tmp_path):
    docs, labels = _corpus(20)
    pipe = make_pipeline(CountVectorizer(), PLSI(n_components=3, random_state=0))
    pipe.fit(docs)
    selection = select_n_components(
        KLNMF(), pipe[0].transform(docs), [2, 3, 4], method="held_out", random_state=0
    )
    path = write_report(
        pipe, docs, None, tmp_path / "p.html", selection=selection, title="a <b>"
    )
    page = path.read_text(encoding="utf-8")
    assert "<title>a &lt;b&gt;</title>" in page
    assert page.count("class='topic-card'") == 3
    assert "id='selection'" in page and page.count("class='k-point") == 3
    assert "data-label=" not in page and "accuracy" not in page


def test_report_samples_large_corpora(fitted, tmp_path):
    model, X, vectorizer, labels, _ = fitted
    path = write_report(
        model, X, vectorizer, tmp_path / "s.html", labels=labels, max_documents=50
    )
    page = path.read_text(encoding="utf-8")
    assert page.count("class='doc'") == 50
    assert "a uniform random sample of 50 of the 120 documents" in page
    assert "(at most 50 are drawn)" in page


def test_report_errors(fitted, tmp_path):
    model, X, vectorizer, labels, _ = fitted
    with pytest.raises(ValueError, match="one label per document"):
        write_report(model, X, vectorizer, tmp_path / "e.html", labels=labels[:5])
    with pytest.raises(ValueError, match="max_documents must be a positive"):
        write_report(model, X, vectorizer, tmp_path / "e.html", max_documents=0)
    with pytest.raises(ValueError, match="feature_names has 2 entries"):
        write_report(model, X, ["a", "b"], tmp_path / "e.html")


def test_report_keeps_sparse_float32_input(tmp_path):
    docs, _ = _corpus(10)
    X = sp.csr_matrix(CountVectorizer().fit_transform(docs), dtype=np.float32)
    model = KLNMF(n_components=2, random_state=0).fit(X)
    path = write_report(model, X, None, tmp_path / "f.html")
    assert path.read_text(encoding="utf-8").count("class='topic-card'") == 2
    assert X.dtype == np.float32 and sp.issparse(X)


# --------------------------------------------------------------- the browser
BROWSER_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _opened(browser, path, errors, requests):
    """A page of ``path``, its console errors and requests recorded."""
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri())
    return page


def _chromium():
    """The Chromium executable and Playwright, or skip (never in CI)."""
    required = os.environ.get("TOPICFAC_REQUIRE_BROWSER") == "1"
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    if executable is None or sync_playwright is None:
        missing = "chromium" if executable is None else "playwright"
        if required:
            pytest.fail(f"TOPICFAC_REQUIRE_BROWSER=1 but {missing} is not installed")
        pytest.skip(f"{missing} is not installed (apt-get install chromium)")
    return executable, sync_playwright


def test_report_in_headless_chromium(fitted, tmp_path):
    executable, sync_playwright = _chromium()
    model, X, vectorizer, labels, _ = fitted
    path = write_report(model, X, vectorizer, tmp_path / "r.html", labels=labels)
    errors, requests = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=BROWSER_ARGS)
        try:
            page = _opened(browser, path, errors, requests)
            assert page.locator(".topic-card").count() == 3
            assert page.locator("#distance-map circle.topic-circle").count() == 3
            assert page.locator("#document-map circle.doc").count() == 120
            assert page.locator(".topic-card tr.term").count() == 30
            assert page.locator(".doc.dim").count() == 0

            # Clicking topic 1's circle highlights its card and documents.
            page.locator(".topic-mark[data-topic='1']").click()
            assert page.locator(".topic-card.selected").count() == 1
            card = page.locator(".topic-card.selected")
            assert card.get_attribute("data-topic") == "1"
            n_topic = page.locator("circle.doc[data-topic='1']").count()
            assert 0 < n_topic < 120
            assert page.locator("circle.doc.hit").count() == n_topic
            assert page.locator("circle.doc.dim").count() == 120 - n_topic
            # Its term bars take the topic's colour; the others' do not.
            colours = page.locator(".topic-card .bar.topic").evaluate_all(
                "bars => bars.map(b => getComputedStyle(b).backgroundColor)"
            )
            selected = colours[10:20]
            assert len(set(selected)) == 1 and selected[0] not in colours[:10]
            page.screenshot(path=str(tmp_path / "report.png"), full_page=True)

            # Colour by label, then clear the selection by a second click.
            page.locator(".colour-button[data-colour='label']").click()
            dots = page.locator("circle.doc").evaluate_all(
                "dots => dots.map(d => [d.getAttribute('fill'),"
                " d.getAttribute('data-label-colour'),"
                " d.getAttribute('data-topic-colour')])"
            )
            assert all(fill == label for fill, label, _ in dots)
            assert len({fill for fill, _, _ in dots}) == 3
            # KLNMF's topic numbers are not the labels' order.
            assert any(label != topic for _, label, topic in dots)
            page.locator(".topic-card[data-topic='1']").click()
            assert page.locator(".topic-card.selected").count() == 0
            assert page.locator("circle.doc.dim").count() == 0
        finally:
            browser.close()
    assert errors == []
    assert all(url.startswith("file://") for url in requests), requests
    assert Path(tmp_path / "report.png").stat().st_size > 10_000


def test_jensen_shannon_distances_of_subnormal_probabilities():
    # Halving a subnormal probability rounds it to zero: the distance must
    # stay finite (Reuters-21578's topics have such terms).
    tiny = np.nextafter(0, 1)
    phi = np.array([[0.5, 0.5 - tiny, tiny], [0.0, 1.0, 0.0]])
    D = jensen_shannon_distances(phi)
    assert np.all(np.isfinite(D))
    assert 0 < D[0, 1] <= 1
    assert np.all(np.isfinite(classical_scaling(D)))


def _terms_listed(page):
    return page.locator(".topic-card").evaluate_all(
        "cards => cards.map(c => Array.from(c.querySelectorAll('td.word'))"
        ".map(td => td.textContent))"
    )


def _slider_session(path, k, tmp_path, name):
    """Open the report, check it, move the relevance slider; the findings."""
    executable, sync_playwright = _chromium()
    errors, requests = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=BROWSER_ARGS)
        try:
            page = _opened(browser, path, errors, requests)
            load_ms = page.evaluate(
                "performance.getEntriesByType('navigation')[0].loadEventEnd"
            )
            # One mark per topic on the map, one card per topic.
            assert page.locator(".topic-mark").count() == k
            assert page.locator(".topic-card").count() == k
            at_one = _terms_listed(page)
            page.locator("#lambda").fill("0.2")
            assert page.locator("#lambda-value").text_content() == "0.2"
            at_low = _terms_listed(page)
            page.screenshot(path=str(tmp_path / f"{name}.png"), full_page=False)
            page.locator("#lambda").fill("1")
            back = _terms_listed(page)
        finally:
            browser.close()
    return errors, requests, at_one, at_low, back, load_ms


@pytest.mark.parametrize("k", [5, pytest.param(50, marks=pytest.mark.slow)])
def test_the_relevance_slider_reranks_terms_in_chromium(k, tmp_path):
    # The bundled Classic3 corpus (one of the shared corpora), PLSI at k.
    from sklearn_topicfac.datasets import load_classic3

    X, labels = load_classic3(return_X_y=True)
    model = PLSI(n_components=k, random_state=0, max_iter=50).fit(X)
    path = write_report(model, X, None, tmp_path / "r.html", labels=labels)
    errors, requests, at_one, at_low, back, _ = _slider_session(
        path, k, tmp_path, f"slider{k}"
    )
    assert errors == []
    assert all(url.startswith("file://") for url in requests), requests
    # Moving the slider changes the listed terms (corpus-wide terms drop);
    # back at 1 the page lists the terms top_terms gives, by P(w|z).
    assert len(at_one) == k and all(len(terms) == 10 for terms in at_one)
    assert at_low != at_one
    assert back == at_one


def test_the_relevance_ranking_matches_its_definition():
    phi = np.array([[0.5, 0.3, 0.2, 0.0], [0.1, 0.1, 0.1, 0.7]])
    tf = np.array([100.0, 10.0, 1.0, 0.0])  # the last term never occurs
    payload = _report.relevance_payload(phi, tf, np.array([50.0, 20.0]), "abcd", 2)
    topic = payload["topics"][0]
    ranked = {
        lam: [topic["terms"][i] for i in order]
        for lam, order in zip(payload["lambdas"], topic["order"], strict=True)
    }
    assert ranked[1.0] == ["a", "b"]  # by P(w|z)
    assert ranked[0.0] == ["c", "b"]  # by lift P(w|z) / P(w)
    assert "d" not in payload["topics"][1]["terms"]  # unseen: never ranked
    assert topic["topic"][topic["terms"].index("a")] == 25.0  # 0.5 x 50 words
    assert topic["corpus"][topic["terms"].index("a")] == 100.0


def test_a_report_of_50_topics_and_20000_terms_stays_small(tmp_path):
    # Only each topic's candidate terms over the lambda grid are shipped.
    X = sp.random(2000, 20000, density=0.003, random_state=0, format="csr")
    X.data = np.ceil(X.data * 5)
    model = KLNMF(n_components=50, max_iter=2, random_state=0).fit(X)
    path = write_report(model, X, None, tmp_path / "r.html")
    assert path.stat().st_size < 5 * 2**20


def test_the_report_records_what_produced_it(fitted, tmp_path):
    model, X, vectorizer, labels, _ = fitted
    page = write_report(model, X, vectorizer, tmp_path / "r.html").read_text()
    assert "id='stamp'" in page
    assert model.data_fingerprint_ in page  # the data it was fitted on
    assert "version of numpy" in page and "parameter random_state" in page
