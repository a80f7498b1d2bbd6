"""The HTML of :func:`sklearn_topicfac.inspection.write_report`.

Pure NumPy and the standard library: the geometry of the two maps (the
Jensen-Shannon distances between topics and their classical scaling, the
2-D projection of the documents' topic proportions) and the page itself,
one self-contained file with inline CSS, SVG and JavaScript (no network).
"""

import html
import json

import numpy as np

# Twenty distinguishable colours (topics and labels cycle through them).
PALETTE = (
    "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f "
    "#bcbd22 #17becf #aec7e8 #ffbb78 #98df8a #ff9896 #c5b0d5 #c49c94 "
    "#f7b6d2 #c7c7c7 #dbdb8d #9edae5"
).split()

_MAP = 420  # side of the square maps, in SVG units
_PAD = 30


def _colour(index):
    return PALETTE[int(index) % len(PALETTE)]


def _esc(value):
    return html.escape(str(value), quote=True)


# ---------------------------------------------------------------- geometry
def jensen_shannon_distances(phi, psi=None):
    """Jensen-Shannon distances (base-2, in [0, 1]) between the rows of
    ``phi`` and those of ``psi``: ``(k, k)`` among ``phi``'s rows when
    ``psi`` is None, else ``(k_phi, k_psi)``.

    One pair at a time: never a ``(k, k, n_features)`` array.
    """
    phi = np.asarray(phi, dtype=np.float64)
    among = psi is None
    psi = phi if among else np.asarray(psi, dtype=np.float64)
    out = np.zeros((phi.shape[0], psi.shape[0]))
    for i, p in enumerate(phi):
        for j in range(i + 1 if among else 0, psi.shape[0]):
            q = psi[j]
            divergence = 0.5 * (_kl_to_mean(p, q) + _kl_to_mean(q, p))
            out[i, j] = np.sqrt(min(max(divergence, 0.0), 1.0))
            if among:
                out[j, i] = out[i, j]
    return out


def _kl_to_mean(p, q):
    """``KL(p || (p + q) / 2)`` in bits, exact for subnormal probabilities.

    Written as ``p (1 + log2 p - log2 (p + q))``: halving a subnormal ``p``
    could round it to zero.
    """
    mask = p > 0
    pm = p[mask]
    return float(np.sum(pm * (1.0 + np.log2(pm) - np.log2(pm + q[mask]))))


def classical_scaling(distances, n_dims=2):
    """Classical multidimensional scaling (PCoA) of a distance matrix.

    The points whose Euclidean distances best match ``distances``: the top
    eigenvectors of the doubly centred matrix of squared distances, scaled by
    the square roots of their eigenvalues (negative ones count as 0).
    """
    D2 = np.asarray(distances, dtype=np.float64) ** 2
    n = D2.shape[0]
    J = np.eye(n) - 1.0 / n
    B = -0.5 * J @ D2 @ J
    values, vectors = np.linalg.eigh(B)
    order = np.argsort(values)[::-1][:n_dims]
    coords = vectors[:, order] * np.sqrt(np.clip(values[order], 0, None))
    if coords.shape[1] < n_dims:
        coords = np.hstack([coords, np.zeros((n, n_dims - coords.shape[1]))])
    return _fix_signs(coords)


def principal_plane(theta):
    """The documents' topic proportions projected on their 2 principal axes."""
    centred = np.asarray(theta, dtype=np.float64)
    centred = centred - centred.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    coords = centred @ vt[:2].T
    if coords.shape[1] < 2:
        coords = np.hstack([coords, np.zeros((coords.shape[0], 2 - coords.shape[1]))])
    return _fix_signs(coords)


def _fix_signs(coords):
    """Axes oriented so the largest coordinate is positive (reproducible)."""
    rows = np.abs(coords).argmax(axis=0)
    signs = np.sign(coords[rows, np.arange(coords.shape[1])])
    return coords * np.where(signs == 0, 1.0, signs)


def _to_box(coords, margin):
    """Coordinates scaled into the square map, aspect ratio kept."""
    coords = np.asarray(coords, dtype=np.float64)
    low, high = coords.min(axis=0), coords.max(axis=0)
    span = float(max((high - low).max(), 1e-12))
    inner = _MAP - 2 * margin
    centre = (low + high) / 2
    scaled = (coords - centre) / span * inner + _MAP / 2
    scaled[:, 1] = _MAP - scaled[:, 1]  # y grows downwards in SVG
    return scaled


# -------------------------------------------------------------------- page
# The grid of the relevance slider: pyLDAvis's lambda, in steps of 0.1.
LAMBDAS = np.round(np.linspace(0.0, 1.0, 11), 1)


def relevance_payload(phi, term_frequency, topic_mass, vocab, n_top):
    """What the page needs to rank each topic's terms at every lambda.

    Relevance (Sievert & Shirley, 2014): ``lambda log P(w|z) + (1 - lambda)
    log(P(w|z) / P(w))``, ``P(w)`` the corpus frequency.  Per topic only the
    terms some lambda of `LAMBDAS` puts in its top ``n_top`` (terms absent
    from the corpus are never ranked), with ``P(w|z)``, the estimated count
    in the topic (``P(w|z)`` times the topic's words) and the count in the
    corpus, and per lambda the ranking of those terms.  One topic at a time:
    never more than a row of ``k x n_features`` beyond ``phi`` itself.
    """
    phi = np.asarray(phi, dtype=np.float64)
    term_frequency = np.asarray(term_frequency, dtype=np.float64)
    seen = np.flatnonzero(term_frequency > 0)
    n_top = min(int(n_top), seen.size) if seen.size else 0
    log_p = np.log(term_frequency[seen] / term_frequency.sum()) if n_top else None
    topics = []
    for z, row in enumerate(phi):
        log_phi = np.log(np.maximum(row[seen], 1e-300))
        rankings = []
        for lam in LAMBDAS:
            score = lam * log_phi + (1.0 - lam) * (log_phi - log_p)
            top = np.argpartition(-score, n_top - 1)[:n_top] if n_top else []
            rankings.append(top[np.argsort(-score[top], kind="stable")])
        candidates = np.unique(np.concatenate(rankings)) if n_top else np.array([], int)
        position = {int(c): i for i, c in enumerate(candidates)}
        words = seen[candidates]
        topics.append(
            {
                "terms": [str(vocab[w]) for w in words],
                "phi": [float(f"{row[w]:.4g}") for w in words],
                "topic": [float(f"{row[w] * topic_mass[z]:.4g}") for w in words],
                "corpus": [float(f"{term_frequency[w]:.6g}") for w in words],
                "order": [[position[int(c)] for c in r] for r in rankings],
            }
        )
    return {"lambdas": [float(v) for v in LAMBDAS], "topics": topics}


def render(
    *,
    title,
    summary,
    terms,
    weights,
    sizes,
    prevalence,
    coherence,
    diversity,
    topic_xy,
    doc_xy,
    doc_topics,
    doc_labels,
    n_documents,
    max_documents,
    scores,
    selection,
    relevance=None,
    stability=None,
    stamp=None,
):
    """The report page as one string (see ``write_report`` for the content)."""
    k = len(terms)
    sections = [
        f"<header><h1>{_esc(title)}</h1><p class='summary'>{_esc(summary)}</p>"
        f"<p class='hint'>Click a topic (a circle or a card) to highlight its "
        f"documents and terms; click it again to clear.</p></header>",
        _scores_section(scores, coherence, diversity),
        "<section id='maps'>"
        + _distance_map(topic_xy, prevalence, terms)
        + _document_map(doc_xy, doc_topics, doc_labels, n_documents, max_documents)
        + "</section>",
    ]
    if selection is not None:
        sections.append(_selection_curve(*selection))
    cards = "".join(
        _topic_card(
            z,
            terms[z],
            weights[z],
            sizes[z],
            prevalence[z],
            coherence[z],
            None if relevance is None else relevance["topics"][z],
            None if stability is None else stability[z],
        )
        for z in range(k)
    )
    slider = ""
    if relevance is not None:
        slider = (
            "<p class='relevance'><label for='lambda'>relevance &lambda; = "
            "<output id='lambda-value'>1.0</output></label> "
            "<input type='range' id='lambda' min='0' max='1' step='0.1' "
            "value='1'> <span class='hint'>1: terms by P(w|z); lower: terms "
            "more specific to the topic than to the corpus. Bars: estimated "
            "count in the topic over the count in the corpus.</span></p>"
        )
    sections.append(f"<section id='topics'><h2>Topics</h2>{slider}{cards}</section>")
    if stamp is not None:
        sections.append(_stamp_section(stamp))
    data = ""
    if relevance is not None:
        payload = json.dumps(relevance, separators=(",", ":"))
        # Inside <script>, "</" would end the element: JSON allows "<\/".
        payload = payload.replace("</", "<\\/")
        data = f"<script type='application/json' id='relevance-data'>{payload}</script>"
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>{_esc(title)}</title><style>{_CSS}</style></head><body>"
        + "".join(sections)
        + data
        + f"<script>{_JS}</script></body></html>\n"
    )


def _scores_section(scores, coherence, diversity):
    rows = [("mean NPMI coherence", f"{np.mean(coherence):+.3f}")]
    rows.append(("topic diversity", f"{diversity:.3f}"))
    if scores is not None:
        rows += [(name, f"{value:.3f}") for name, value in scores.items()]
    cells = "".join(
        f"<tr><th>{_esc(name)}</th><td>{_esc(value)}</td></tr>" for name, value in rows
    )
    caption = "Scores" + (" (clustering against the labels)" if scores else "")
    return f"<section id='scores'><h2>{caption}</h2><table>{cells}</table></section>"


def _distance_map(topic_xy, prevalence, terms):
    radii = 8 + 40 * np.sqrt(np.asarray(prevalence) / max(np.max(prevalence), 1e-12))
    xy = _to_box(topic_xy, _PAD + float(radii.max()))
    circles = "".join(
        f"<g class='topic-mark' data-topic='{z}'><title>topic {z}: "
        f"{_esc(' '.join(map(str, terms[z][:5])))} ({prevalence[z]:.1%} of the "
        f"words)</title><circle class='topic-circle' data-topic='{z}' cx='{x:.1f}' "
        f"cy='{y:.1f}' r='{r:.1f}' fill='{_colour(z)}'></circle>"
        f"<text x='{x:.1f}' y='{y + 4:.1f}'>{z}</text></g>"
        for z, ((x, y), r) in enumerate(zip(xy, radii, strict=True))
    )
    return (
        "<figure id='distance-map'><h2>Inter-topic distance map</h2>"
        f"<svg viewBox='0 0 {_MAP} {_MAP}' role='img'>{circles}</svg>"
        "<figcaption>Topics placed by classical scaling of the Jensen-Shannon "
        "distances between their word distributions P(w|z); the area of a "
        "circle is the topic's share of the words.</figcaption></figure>"
    )


def _document_map(doc_xy, doc_topics, doc_labels, n_documents, max_documents):
    xy = _to_box(doc_xy, _PAD)
    label_codes = None
    if doc_labels is not None:
        label_names, label_codes = np.unique(
            np.asarray(doc_labels, dtype=str), return_inverse=True
        )
    dots = []
    for i, ((x, y), z) in enumerate(zip(xy, doc_topics, strict=True)):
        extra = ""
        if label_codes is not None:
            extra = (
                f" data-label='{_esc(label_names[label_codes[i]])}' "
                f"data-label-colour='{_colour(label_codes[i])}'"
            )
        dots.append(
            f"<circle class='doc' data-topic='{z}' data-topic-colour='{_colour(z)}'"
            f"{extra} cx='{x:.1f}' cy='{y:.1f}' r='2.6' fill='{_colour(z)}'></circle>"
        )
    shown = len(dots)
    sampled = (
        f"a uniform random sample of {shown} of the {n_documents} documents "
        f"(at most {max_documents} are drawn)"
        if shown < n_documents
        else f"all {n_documents} documents"
    )
    buttons = ""
    legend = _legend("topic", [f"topic {z}" for z in range(int(max(doc_topics)) + 1)])
    if label_codes is not None:
        buttons = (
            "<div class='colour-by'>colour by <button type='button' "
            "class='colour-button active' data-colour='topic'>dominant topic"
            "</button><button type='button' class='colour-button' "
            "data-colour='label'>label</button></div>"
        )
        legend += _legend("label", list(label_names), hidden=True)
    return (
        "<figure id='document-map'><h2>Document map</h2>"
        f"{buttons}<svg viewBox='0 0 {_MAP} {_MAP}' role='img'>{''.join(dots)}</svg>"
        f"{legend}<figcaption>Each point is a document, placed by the two "
        f"principal axes of its topic proportions P(z|d); {sampled}."
        "</figcaption></figure>"
    )


def _legend(kind, names, hidden=False):
    items = "".join(
        f"<span class='swatch' style='background:{_colour(i)}'></span>{_esc(n)} "
        for i, n in enumerate(names)
    )
    return (
        f"<p class='legend' data-legend='{kind}'"
        f"{' hidden' if hidden else ''}>{items}</p>"
    )


def _selection_curve(candidates, scores, chosen, method):
    candidates = np.asarray(candidates, dtype=np.float64)
    scores = np.asarray(scores, dtype=np.float64)
    width, height, pad = 420, 220, 40
    span_x = max(candidates.max() - candidates.min(), 1.0)
    span_y = max(scores.max() - scores.min(), 1e-12)
    xs = pad + (candidates - candidates.min()) / span_x * (width - 2 * pad)
    ys = height - pad - (scores - scores.min()) / span_y * (height - 2 * pad)
    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in zip(xs, ys, strict=True))
    points = "".join(
        f"<circle class='k-point{' chosen' if c == chosen else ''}' cx='{x:.1f}' "
        f"cy='{y:.1f}' r='4'><title>k = {int(c)}: {s:.3f}</title></circle>"
        f"<text x='{x:.1f}' y='{height - pad + 16}'>{int(c)}</text>"
        for c, s, x, y in zip(candidates, scores, xs, ys, strict=True)
    )
    return (
        "<section id='selection'><h2>Choosing k</h2>"
        f"<svg viewBox='0 0 {width} {height}' role='img'>"
        f"<polyline points='{line}'></polyline>{points}</svg>"
        f"<p>{_esc(method)} score for each number of topics k; k = {int(chosen)} "
        f"was chosen (highest score, from {scores.min():.3f} to "
        f"{scores.max():.3f}).</p></section>"
    )


def _term_rows(terms, weights, topic_counts=None, corpus_counts=None):
    """The term rows of a card: with counts, a bar of the term's estimated
    count in the topic over a bar of its count in the corpus (pyLDAvis's
    red over blue), else a bar of its weight."""
    if topic_counts is None:
        top = max(float(np.max(weights)), 1e-12)
        return "".join(
            f"<tr class='term'><td class='word'>{_esc(t)}</td><td class='barcell'>"
            f"<div class='bar topic' style='width:{100 * w / top:.1f}%'></div></td>"
            f"<td class='weight'>{w:.4f}</td></tr>"
            for t, w in zip(terms, weights, strict=True)
        )
    top = max(float(np.max(corpus_counts)), 1e-12)
    return "".join(
        f"<tr class='term'><td class='word'>{_esc(t)}</td><td class='barcell'>"
        f"<div class='bar corpus' style='width:{100 * c / top:.1f}%'></div>"
        f"<div class='bar topic' style='width:{100 * n / top:.1f}%'></div></td>"
        f"<td class='weight'>{w:.4f}</td></tr>"
        for t, w, n, c in zip(terms, weights, topic_counts, corpus_counts, strict=True)
    )


def _topic_card(z, terms, weights, size, prevalence, coherence, relevance, stability):
    if relevance is not None and relevance["terms"]:
        # lambda = 1, the last of the grid: the terms by P(w|z).
        order = relevance["order"][-1]
        rows = _term_rows(
            [relevance["terms"][i] for i in order],
            [relevance["phi"][i] for i in order],
            [relevance["topic"][i] for i in order],
            [relevance["corpus"][i] for i in order],
        )
    else:
        rows = _term_rows(terms, weights)
    stable = "" if stability is None else f", stability {stability:.2f}"
    return (
        f"<div class='topic-card' data-topic='{z}' style='--topic:{_colour(z)}'>"
        f"<h3><span class='swatch'></span>topic {z}</h3>"
        f"<p class='stats'>{int(size)} documents (dominant topic), "
        f"{prevalence:.1%} of the words, NPMI {coherence:+.3f}{stable}</p>"
        f"<table class='terms'>{rows}</table></div>"
    )


def _stamp_section(stamp):
    """What produced the model and the page: parameters, data, versions."""

    def rows(mapping):
        return "".join(
            f"<tr><th>{_esc(key)}</th><td>{_esc(value)}</td></tr>"
            for key, value in mapping.items()
        )

    plain = {key: value for key, value in stamp.items() if not isinstance(value, dict)}
    return (
        "<section id='stamp'><details><summary>What produced this report"
        "</summary><table>"
        + rows(plain)
        + rows({f"version of {k}": v for k, v in stamp.get("versions", {}).items()})
        + rows({f"parameter {k}": v for k, v in stamp.get("parameters", {}).items()})
        + "</table></details></section>"
    )


def selection_payload(selection):
    """``(candidates, scores, chosen, method)`` of a k selection, or None."""
    if selection is None:
        return None
    return (
        np.asarray(selection.candidates),
        np.asarray(selection.scores),
        int(selection.best_n_components),
        str(selection.method),
    )


_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1200px}
h1{font-size:1.5em;margin:0}h2{font-size:1.15em;margin:.4em 0}
.summary{color:#555}.hint{color:#777;font-size:.9em}
#scores table{border-collapse:collapse}
#scores th{text-align:left;font-weight:normal;padding:2px 12px 2px 0;color:#555}
#maps{display:flex;flex-wrap:wrap;gap:24px}
figure{margin:0;flex:1 1 420px;max-width:560px}
figure svg{width:100%;border:1px solid #ddd;background:#fcfcfc}
figcaption,.legend{font-size:.85em;color:#555}
.topic-circle{fill-opacity:.55;stroke:#333;stroke-width:1;cursor:pointer}
.topic-mark text{font-size:12px;text-anchor:middle;pointer-events:none}
.topic-circle.selected{fill-opacity:.95;stroke-width:3}
.doc{fill-opacity:.7;transition:opacity .15s}
.doc.dim{opacity:.08}.doc.hit{fill-opacity:1}
.swatch{display:inline-block;width:10px;height:10px;margin:0 4px 0 8px;
background:var(--topic)}
.colour-button{margin-left:4px}.colour-button.active{font-weight:bold}
#selection svg{width:420px;max-width:100%}
#selection polyline{fill:none;stroke:#1f77b4;stroke-width:2}
#selection circle{fill:#1f77b4}#selection circle.chosen{fill:#d62728}
#selection text{font-size:11px;text-anchor:middle}
#topics{display:flex;flex-wrap:wrap;gap:12px}#topics h2{flex-basis:100%}
.topic-card{border:1px solid #ddd;border-radius:6px;padding:8px;width:260px;
cursor:pointer;background:#fff}
.topic-card h3{margin:0;font-size:1em}.topic-card .stats{margin:2px 0 6px;
font-size:.85em;color:#555}
.topic-card.selected{border-color:var(--topic);box-shadow:0 0 0 3px var(--topic)}
.topic-card.faded{opacity:.45}
.terms{width:100%;border-collapse:collapse;font-size:.85em}
.terms td{padding:1px 2px}.word{width:35%}.weight{width:18%;text-align:right;
color:#666}
.barcell{width:47%;position:relative}
.bar{height:9px;background:#9ab;border-radius:2px}
.bar.corpus{background:#dde3ea}.bar.corpus+.bar.topic{margin-top:-9px}
.topic-card.selected .bar.topic{background:var(--topic)}
.relevance{flex-basis:100%;margin:0 0 6px}#lambda{vertical-align:middle;width:240px}
"""

_JS = """
(function () {
  "use strict";
  var selected = null;
  function all(selector) {
    return Array.prototype.slice.call(document.querySelectorAll(selector));
  }
  function select(topic) {
    selected = selected === topic ? null : topic;
    all(".topic-card, .topic-circle").forEach(function (el) {
      var mine = el.getAttribute("data-topic") === selected;
      el.classList.toggle("selected", mine);
      if (el.classList.contains("topic-card")) {
        el.classList.toggle("faded", selected !== null && !mine);
      }
    });
    all("circle.doc").forEach(function (el) {
      var mine = el.getAttribute("data-topic") === selected;
      el.classList.toggle("hit", selected !== null && mine);
      el.classList.toggle("dim", selected !== null && !mine);
    });
    document.body.setAttribute("data-selected", selected === null ? "" : selected);
  }
  all(".topic-card, .topic-mark").forEach(function (el) {
    el.addEventListener("click", function () {
      select(el.getAttribute("data-topic"));
    });
  });
  var data = document.getElementById("relevance-data");
  var slider = document.getElementById("lambda");
  function esc(text) {
    var span = document.createElement("span");
    span.textContent = text;
    return span.innerHTML;
  }
  function rank(step) {
    var relevance = JSON.parse(data.textContent);
    document.getElementById("lambda-value").textContent =
      relevance.lambdas[step].toFixed(1);
    all(".topic-card").forEach(function (card) {
      var topic = relevance.topics[+card.getAttribute("data-topic")];
      var order = topic.order[step];
      var top = Math.max.apply(null, order.map(function (i) {
        return topic.corpus[i];
      }).concat([1e-12]));
      card.querySelector("table.terms").innerHTML = order.map(function (i) {
        return "<tr class='term'><td class='word'>" + esc(topic.terms[i]) +
          "</td><td class='barcell'><div class='bar corpus' style='width:" +
          (100 * topic.corpus[i] / top).toFixed(1) + "%'></div>" +
          "<div class='bar topic' style='width:" +
          (100 * topic.topic[i] / top).toFixed(1) + "%'></div></td>" +
          "<td class='weight'>" + topic.phi[i].toFixed(4) + "</td></tr>";
      }).join("");
    });
  }
  if (data && slider) {
    slider.addEventListener("input", function () {
      rank(Math.round(+slider.value * 10));
    });
  }
  all(".colour-button").forEach(function (button) {
    button.addEventListener("click", function () {
      var by = button.getAttribute("data-colour");
      all(".colour-button").forEach(function (b) {
        b.classList.toggle("active", b === button);
      });
      all("circle.doc").forEach(function (el) {
        el.setAttribute("fill", el.getAttribute("data-" + by + "-colour"));
      });
      all(".legend").forEach(function (el) {
        el.hidden = el.getAttribute("data-legend") !== by;
      });
    });
  });
})();
"""
