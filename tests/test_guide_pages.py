"""The user guide's pages run, print what they quote, and state today's defaults.

Every ```python block of the guide's worked-example pages runs, in order, in
one namespace per page, in a temporary folder (as
``docs/figures/_draw_guide.py`` runs them to draw the figures).  Where a
page quotes the output of a block (the ```text block after it), the output
must be exactly that, so that no quoted accuracy or top term goes stale;
every clustering accuracy a worked example prints must beat putting all
documents in one cluster; and what the prose says about the output (LDA
predicts a small corpus better than PLSI, SimplexPLSA's weights follow
text far less than PLSI's) is checked on the output.  The defaults a page
states in prose are checked against the estimators by
``test_the_defaults_the_guide_states``.
"""

import importlib.util
import inspect
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from _corpora import load_file
from sklearn.exceptions import ConvergenceWarning

from sklearn_topicfac import (
    KLNMF,
    LDAVI,
    PLSI,
    GammaPoissonVI,
    HybridNMFPLSI,
    JointNMF,
    NormalizedNMF,
    SimplexPLSA,
    config_context,
    load,
    save,
)
from sklearn_topicfac._config import numba_available
from sklearn_topicfac.datasets import load_classic3
from sklearn_topicfac.out_of_core import Blocks

DOCS = Path(__file__).resolve().parents[1] / "docs"
GUIDE = DOCS / "guide"


def _draw_guide():
    """``docs/figures/_draw_guide.py``, which runs the pages' code."""
    return load_file(DOCS / "figures" / "_draw_guide.py")


DRAW = _draw_guide()
ACCURACY = re.compile(r"^(?:(\w+): )?clustering accuracy: (\d+\.\d+)", re.M)
# The pages whose worked example clusters Classic3.
CLASSIC3_PAGES = ("getting_started", "nmf", "plsi", "lda")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """``run(page)``: the page's ``(results, namespace)``, run once a module."""
    done = {}

    def run_page(name):
        if name not in done:
            workdir = tmp_path_factory.mktemp(name)
            with pytest.MonkeyPatch.context() as patch, warnings.catch_warnings():
                patch.setenv("MPLBACKEND", "Agg")
                # SimplexPLSA's PLSA step, which its page says may not converge.
                warnings.simplefilter("ignore", ConvergenceWarning)
                done[name] = DRAW.run_page(name, workdir)
        return done[name]

    return run_page


@pytest.fixture(scope="module")
def classic3():
    return load_classic3()


def _chance(labels):
    """The clustering accuracy of one cluster holding every document."""
    return np.bincount(labels).max() / len(labels)


def _lines(text):
    """What of an output is compared (``_draw_guide.output_lines``)."""
    return DRAW.output_lines(text)


def _accuracies(results):
    """``{label or "": [accuracy, ...]}`` of the accuracy lines printed."""
    found = {}
    for _, _, printed in results:
        for label, value in ACCURACY.findall(printed):
            found.setdefault(label, []).append(float(value))
    return found


def _prose(page):
    """A page's text with its whitespace collapsed (prose wraps anywhere)."""
    return " ".join((GUIDE / f"{page}.md").read_text().split())


# ------------------------------------------------------------ the code runs
def test_the_block_reader_pairs_code_with_its_quoted_output():
    page = (
        "Intro.\n\n```python\nprint(1)\n```\n\n```text\n1\n```\n\n"
        "```bash\nls\n```\n\n```python\nx = 2\n```\n\nProse.\n\n```text\nno\n```\n"
    )
    assert DRAW.code_blocks(page) == [("print(1)", "1"), ("x = 2", None)]


def test_the_comparison_catches_a_stale_quote():
    # The order of a topic's terms is not compared (near-equal weights), the
    # rest is.
    printed = "topic 0: library systems retrieval\nclustering accuracy: 0.988\n"
    assert _lines(printed) == _lines(
        printed.replace("systems retrieval", "retrieval systems")
    )
    for stale in [
        printed.replace("0.988", "0.989"),
        printed.replace("retrieval", "science"),
        printed.replace("topic 0", "topic 1"),
        printed + "True\n",
    ]:
        assert _lines(printed) != _lines(stale)


@pytest.mark.parametrize("page", DRAW.PAGES)
def test_a_page_prints_the_output_it_quotes(page, run):
    results, _ = run(page)
    assert results, f"{page}.md has no Python block"
    for code, quoted, printed in results:
        if quoted is not None:
            assert _lines(printed) == _lines(quoted), (
                f"{page}.md quotes output that its code no longer prints; "
                f"after\n{code}\nit prints\n{printed}"
            )
    if page != "persistence":  # every worked example quotes an accuracy
        quoted = "\n".join(q for _, q, _ in results if q is not None)
        assert ACCURACY.search(quoted), f"{page}.md quotes no clustering accuracy"


def test_the_guide_pages_are_in_the_toctree_and_the_figures_exist():
    index = (DOCS / "index.md").read_text()
    toctree = index.split("## User guide", 1)[1].split("```", 2)[1]
    listed = [line.strip() for line in toctree.splitlines()[2:] if line.strip()]
    assert [f"guide/{page}" for page in DRAW.PAGES] == [
        entry for entry in listed if entry.split("/")[-1] in DRAW.PAGES
    ]
    for page in DRAW.PAGES:
        text = (GUIDE / f"{page}.md").read_text()
        for figure in re.findall(r"savefig\(\"(guide_\w+\.png)\"", text):
            assert f"](../figures/{figure})" in text
            assert (DOCS / "figures" / figure).stat().st_size > 10_000


# ------------------------------------------------ what the output must show
@pytest.mark.parametrize("page", CLASSIC3_PAGES)
def test_the_worked_examples_cluster_classic3_above_chance(page, run, classic3):
    results, _ = run(page)
    accuracies = [a for values in _accuracies(results).values() for a in values]
    assert accuracies
    assert min(accuracies) > _chance(classic3.target), accuracies


def test_getting_started_finds_one_topic_per_collection(run, classic3):
    # "Three topics, one per collection": each collection's documents go
    # mostly to a topic of their own, in the pipeline on raw text too.
    _, namespace = run("getting_started")
    for theta, labels in [
        (namespace["model"].transform(namespace["X_test"]), namespace["y_test"]),
        (namespace["pipe"].transform(namespace["docs"]), classic3.target),
    ]:
        assert np.allclose(theta.sum(axis=1), 1.0)  # P(z|d)
        dominant = [
            np.bincount(theta[labels == c].argmax(axis=1), minlength=3).argmax()
            for c in range(3)
        ]
        assert sorted(dominant) == [0, 1, 2]


def test_the_nmf_page_reads_the_factors_as_it_says(run):
    _, namespace = run("nmf")
    X, models = namespace["X"], namespace["models"]
    # "JointNMF ... its transform is the number of words of each document
    # that each topic explains: the rows sum to the documents' lengths."
    lengths = np.asarray(X[:200].sum(axis=1)).ravel()
    words = models["JointNMF"].transform(X[:200]).sum(axis=1)
    assert np.allclose(words, lengths, rtol=1e-2)
    # "NormalizedNMF ...: components_ is P(w|z), p_z_ is P(z), p_d_given_z_
    # is P(d|z)."
    normalized = models["NormalizedNMF"]
    assert np.allclose(normalized.components_.sum(axis=1), 1.0)
    assert np.isclose(normalized.p_z_.sum(), 1.0)
    assert np.allclose(normalized.p_d_given_z_.sum(axis=0), 1.0)


def test_lda_predicts_the_small_corpus_better_than_plsi(run, classic3):
    results, namespace = run("lda")
    scores = dict(
        re.findall(r"^(\w+): held-out score (-?\d+\.\d+)$", results[1][2], re.M)
    )
    assert set(scores) == {"LDAVI", "PLSI"}
    assert float(scores["LDAVI"]) > float(scores["PLSI"])
    # GammaPoissonVI's weights: "rows sum to (length + sum(alpha)) / (rate + 1)".
    gap, X = namespace["gap"], namespace["X"]
    lengths = np.asarray(X[:50].sum(axis=1)).ravel()
    expected = (lengths + gap.doc_topic_prior_.sum()) / (gap.doc_topic_rate + 1)
    assert np.allclose(gap.transform(X[:50]).sum(axis=1), expected)


def test_simplex_finds_the_corners_and_follows_text_poorly(run, classic3):
    results, namespace = run("simplex")
    accuracies = _accuracies(results)
    (synthetic,) = accuracies[""]
    assert synthetic > _chance(namespace["mixtures"].argmax(axis=1))
    # The vertices sit at the corners: closer than a tenth of the shortest side.
    corners = namespace["corners"]
    sides = np.linalg.norm(corners - np.roll(corners, 1, axis=0), axis=1)
    assert namespace["distances"].min(axis=1).max() < sides.min() / 10
    # "its weights follow the three collections far less than PLSI's topic
    # proportions do": nearer chance than PLSI.
    (on_text,), (plsi,) = accuracies["SimplexPLSA"], accuracies["PLSI"]
    chance = _chance(classic3.target)
    assert on_text - chance < plsi - on_text


def test_persistence_refuses_what_it_says(run):
    results, _ = run("persistence")
    refused = [
        line for _, _, p in results for line in p.splitlines() if "refused" in line
    ]
    assert len(refused) == 3
    assert "pickle" in refused[0] and "TfidfTransformer" in refused[1]
    assert "input='filename'" in refused[2]


# ------------------------------------------------------ the defaults stated
X_SMALL = np.random.default_rng(0).poisson(2.0, size=(30, 12)).astype(float)


def _default(cls, name):
    return inspect.signature(cls).parameters[name].default


def _fit(estimator):
    return _fit_on(estimator, X_SMALL)


def _fit_on(estimator, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return estimator.fit(X)


def _same_fit(a, b):
    return np.allclose(_fit(a).components_, _fit(b).components_)


def _backends():
    return ["numpy", "numba"] if numba_available() else ["numpy"]


def _resolves_to_dn(cls, where="with numba or without"):
    """``solver="auto"`` runs diagonal Newton on each backend, and, for
    ``where="everywhere"``, block by block and on a dask array too."""
    fits = []
    for backend in _backends():
        with config_context(backend=backend):
            fits.append(_fit(cls(2, random_state=0)))
    if where == "everywhere":
        fits.append(_fit_on(cls(2, random_state=0), Blocks(X_SMALL)))
        if importlib.util.find_spec("dask") is not None:
            import dask.array

            chunks = dask.array.from_array(X_SMALL, chunks=(10, X_SMALL.shape[1]))
            fits.append(_fit_on(cls(2, random_state=0), chunks))
    return _default(cls, "solver") == "auto" and all(
        fit.solver_ == "dn" for fit in fits
    )


def _refused_block_by_block(estimator):
    try:
        _fit_on(estimator, Blocks(X_SMALL))
    except ValueError:
        return True
    return False


def _runs_for(estimator, n_iter):
    """With ``tol=0`` a fit runs ``max_iter`` iterations: ``"auto"``'s value."""
    return _fit(estimator.set_params(tol=0, random_state=0)).n_iter_ == n_iter


def _load_refuses_max_iter(tmp_path, max_iter):
    model = _fit(PLSI(2, random_state=0))
    model.max_iter = max_iter
    path = save(model, tmp_path / f"m{max_iter}.skops")
    try:
        load(path)
    except ValueError:
        return True
    return False


COUNT_ESTIMATORS = (
    KLNMF,
    NormalizedNMF,
    JointNMF,
    PLSI,
    HybridNMFPLSI,
    LDAVI,
    GammaPoissonVI,
)


def _nmf_max_iter():
    return (
        _default(KLNMF, "max_iter") == "auto"
        and _runs_for(KLNMF(2), 1000)
        and _runs_for(KLNMF(2, solver="cd"), 1000)
        and _runs_for(KLNMF(2, solver="mu"), 200)
    )


def _nmf_starts():
    return all(
        _default(cls, "init") is None
        and _default(cls, "n_init") == 1
        and _default(cls, "split_merge") == 0
        and _same_fit(cls(2, random_state=0), cls(2, init="nndsvda", random_state=0))
        for cls in (KLNMF, NormalizedNMF, JointNMF)
    )


def _plsi_max_iter():
    return (
        _runs_for(PLSI(2), 1000)
        and _runs_for(PLSI(2, solver="cd"), 1000)
        and _runs_for(PLSI(2, solver="em"), 200)
    )


def _hybrid_defaults():
    hybrid = _fit(HybridNMFPLSI(2, random_state=0))
    kmeans = HybridNMFPLSI(2, init="kmeans", random_state=0)
    paper = _fit(HybridNMFPLSI(2, nmf_solver="mu", plsi_solver="em"))
    return (
        _default(HybridNMFPLSI, "init") is None
        and _same_fit(HybridNMFPLSI(2, random_state=0), kmeans)
        and _default(HybridNMFPLSI, "n_rounds") == 10
        and _default(HybridNMFPLSI, "max_iter") == 200
        and (hybrid.nmf_solver_, hybrid.plsi_solver_) == ("dn", "dn")
        and (paper.nmf_solver_, paper.plsi_solver_) == ("mu", "em")
    )


def _lda_inference():
    return (
        _default(LDAVI, "inference") == "auto"
        and _default(LDAVI, "learning_method") == "batch"
        and _fit(LDAVI(2, random_state=0)).inference_ == "map"
    )


def _lda_vb_cases():
    online = _fit(LDAVI(2, learning_method="online", random_state=0))
    point = _fit(LDAVI(2, topic_word_prior=None, random_state=0))
    return online.inference_ == point.inference_ == "vb"


def _lda_defaults():
    lda = _fit(LDAVI(4, random_state=0))
    nndsvda = LDAVI(2, init="nndsvda", random_state=0)
    return (
        _default(LDAVI, "doc_topic_prior") is None
        and _default(LDAVI, "topic_word_prior") == "auto"
        and np.allclose(lda.doc_topic_prior_, 1 / 4)
        and np.isclose(lda.topic_word_prior_, 1 / 4)
        and _default(LDAVI, "init") is None
        and _same_fit(LDAVI(2, random_state=0), nndsvda)
        and _default(LDAVI, "max_iter") == 100
        and _default(LDAVI, "split_merge") == 0
    )


def _simplex_axes():
    simplex = _fit_on(SimplexPLSA(2, random_state=0), X_SMALL + 0.25)  # not counts
    return (
        _default(SimplexPLSA, "svd_components") is None
        and simplex.principal_axes_.shape[0] == X_SMALL.shape[1] - 1
    )


# (page, what it says, the check): the page must say it, the code must do it.
CLAIMS = [
    (
        "nmf",
        '`KLNMF` and `NormalizedNMF` take `solver="auto"`, which runs diagonal '
        'Newton (`"dn"`), with numba or without, in memory, block by block and on '
        "Dask",
        lambda: all(
            _resolves_to_dn(cls, "everywhere") for cls in (KLNMF, NormalizedNMF)
        ),
    ),
    (
        "nmf",
        '`max_iter="auto"` is 1000 iterations for `"dn"` and `"cd"`, 200 for `"mu"`',
        _nmf_max_iter,
    ),
    (
        "nmf",
        '`"cd"` is coordinate descent (in memory only)',
        lambda: _refused_block_by_block(KLNMF(2, solver="cd", random_state=0)),
    ),
    (
        "nmf",
        '`JointNMF(normalize="both")` gives $P(z \\mid d)$ instead',
        lambda: np.allclose(
            _fit(JointNMF(2, normalize="both")).transform(X_SMALL).sum(axis=1), 1.0
        ),
    ),
    (
        "nmf",
        "`JointNMF`'s default is its paper's joint update (`solver=\"joint\"`)",
        lambda: _fit(JointNMF(2)).solver_ == "joint",
    ),
    (
        "nmf",
        "The start is NNDSVDa (`init=None`), one start (`n_init=1`), and no "
        "split-merge moves (`split_merge=0`)",
        _nmf_starts,
    ),
    (
        "plsi",
        '`PLSI(solver="auto")` runs KL-NMF\'s diagonal Newton iterations on '
        'PLSI\'s parameters (`"dn"`)',
        lambda: _resolves_to_dn(PLSI),
    ),
    (
        "plsi",
        "`beta < 1` (tempered EM) makes it run EM",
        lambda: _fit(PLSI(2, beta=0.9)).solver_ == "em",
    ),
    (
        "plsi",
        '`max_iter="auto"` is 1000 for `"dn"` and `"cd"`, 200 for EM',
        _plsi_max_iter,
    ),
    (
        "plsi",
        "`HybridNMFPLSI` starts from K-means (`init=None`), runs at most "
        "`n_rounds=10` rounds of phases of at most `max_iter=200` iterations, and "
        "its phases run diagonal Newton too; the paper's algorithm is "
        '`nmf_solver="mu", plsi_solver="em"`',
        _hybrid_defaults,
    ),
    (
        "lda",
        '`LDAVI(inference="auto")` fits the maximum a posteriori (MAP) topics and '
        'proportions by EM on the expected counts (`inference_` is `"map"`): the '
        'default with batch learning (`learning_method="batch"`, the default) and '
        "a topic prior",
        _lda_inference,
    ),
    (
        "lda",
        'which online learning (`learning_method="online"`) and point-estimate '
        "topics (`topic_word_prior=None`) always run",
        _lda_vb_cases,
    ),
    (
        "lda",
        "Both priors default to $1 / k$ (`doc_topic_prior=None`, "
        '`topic_word_prior="auto"`), the start is NNDSVDa (`init=None`), '
        "`max_iter=100`, and split-merge moves are off (`split_merge=0`",
        _lda_defaults,
    ),
    (
        "simplex",
        "Its default, `None`, keeps `n_features - 1` of them",
        _simplex_axes,
    ),
    (
        "simplex",
        "`max_iter` (1000 by default, with `tol=1e-6`)",
        lambda: (
            _default(SimplexPLSA, "max_iter") == 1000
            and _default(SimplexPLSA, "tol") == 1e-6
        ),
    ),
    (
        "models",
        "They are off by default (`split_merge=0`)",
        lambda: all(_default(cls, "split_merge") == 0 for cls in COUNT_ESTIMATORS),
    ),
    (
        "models",
        "The estimators of counts (all but `SimplexPLSA`) also have "
        "`topic_proportions`",
        lambda: (
            not hasattr(SimplexPLSA, "topic_proportions")
            and all(
                hasattr(cls, "topic_proportions")
                and {"n_init", "split_merge"} <= set(inspect.signature(cls).parameters)
                for cls in COUNT_ESTIMATORS
            )
        ),
    ),
]


@pytest.mark.parametrize(
    "page, says, check", CLAIMS, ids=[f"{p}-{i}" for i, (p, _, _) in enumerate(CLAIMS)]
)
def test_the_defaults_the_guide_states(page, says, check):
    assert " ".join(says.split()) in _prose(page), f"{page}.md no longer says it"
    assert check(), f"{page}.md says: {says}"


def test_persistence_refuses_iteration_counts_above_what_it_says(tmp_path):
    assert "an iteration count above 100,000" in _prose("persistence")
    assert not _load_refuses_max_iter(tmp_path, 100_000)
    assert _load_refuses_max_iter(tmp_path, 100_001)


def test_getting_started_states_the_corpus_and_extras_as_they_are(classic3):
    text = _prose("getting_started")
    # "Classic3: 3,891 abstracts from three collections (MED: ..., CISI: ...,
    # CRAN: ...)"
    assert "Classic3: 3,891 abstracts from three collections" in text
    assert classic3.data.shape[0] == 3891
    for name in classic3.target_names:
        assert f"{name}: " in text
    # The install lines: what each extra adds.
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((DOCS.parent / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    assert "also numba" in text and any(d.startswith("numba") for d in extras["fast"])
    assert "also matplotlib" in text
    assert any(d.startswith("matplotlib") for d in extras["plot"])
    assert "NumPy, SciPy, scikit-learn and skops" in text
    required = {re.split(r"[<>=\[ ]", d)[0] for d in project["dependencies"]}
    assert {"numpy", "scipy", "scikit-learn", "skops"} <= required
