"""The code of the documentation's worked examples runs; no page holds
placeholder text."""

import re
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from _corpora import load_file
from sklearn.base import BaseEstimator

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _code_blocks(page, language="python"):
    """The code blocks of a Markdown page in ``language``, in order."""
    blocks, current = [], None
    for line in page.read_text().splitlines():
        if current is None and line.strip() == f"```{language}":
            current = []
        elif current is not None and line.strip() == "```":
            blocks.append("\n".join(current))
            current = None
        elif current is not None:
            current.append(line)
    return blocks


PAGE = DOCS / "guide" / "adding_an_estimator.md"


@pytest.fixture(scope="module")
def page_module():
    """The page's Python code run as a module (so that its classes pickle)."""
    blocks = _code_blocks(PAGE)
    assert len(blocks) == 3  # the model, the estimator, what it gets for free
    module = types.ModuleType("adding_an_estimator")
    sys.modules[module.__name__] = module
    # The estimator file imports the model file's module: here, the page.
    sys.modules["sklearn_topicfac.models.smoothed_plsi"] = module
    try:
        for block in blocks:
            exec(compile(block, str(PAGE), "exec"), module.__dict__)
        yield module
    finally:
        del sys.modules[module.__name__]
        del sys.modules["sklearn_topicfac.models.smoothed_plsi"]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_adding_an_estimator_page_runs(page_module):
    assert hasattr(page_module, "SmoothedPLSI")
    assert hasattr(page_module, "SmoothedPLSIModel")


CONTRACTS = [
    "test_registry_matches_the_api",
    "test_default_init",
    "test_transform_rows_sum_to_one",
    "test_blockwise_fit_equals_in_memory_fit",
    "test_clone_and_pickle",
    "test_grid_search_default_scoring",
    "test_score_and_perplexity",
    "test_partial_fit",
]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("contract", CONTRACTS)
def test_the_pages_registry_entry_passes_the_contract_tests(page_module, contract):
    import test_common
    from _estimators import EstimatorSpec, _frozen

    (entry,) = _code_blocks(PAGE, "text")
    namespace = {
        "EstimatorSpec": EstimatorSpec,
        "_frozen": _frozen,
        "SmoothedPLSI": page_module.SmoothedPLSI,
    }
    spec = eval(entry, namespace)
    if contract == "test_partial_fit":
        getattr(test_common, contract)(spec, np.float32)
    else:
        getattr(test_common, contract)(spec)


# An unfilled template token (``MEASURED_TABLE``: capitals joined by
# underscores) or a note left for later, in running text: code blocks and
# inline code (where constants such as ``N_THREADS`` are named) are skipped.
_PLACEHOLDER = re.compile(
    r"(?<![\w`])(?:[A-Z]{2,}[A-Z0-9]*(?:_[A-Z0-9]+)+|TODO|TBD|XXX|FIXME)(?![\w`])"
)


def _placeholders(text):
    """``(line number, token)`` of every placeholder in a Markdown text."""
    found, in_code = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip().startswith("```"):
            in_code = not in_code
            continue
        if not in_code:
            prose = re.sub(r"`[^`]*`", "", line)
            found += [(number, m.group()) for m in _PLACEHOLDER.finditer(prose)]
    return found


def test_the_placeholder_check_finds_placeholders():
    page = "# Measured\n\nMEASURED_TABLE\n\nFigures TBD.\n"
    assert _placeholders(page) == [(3, "MEASURED_TABLE"), (5, "TBD")]
    code = "`N_THREADS` is a constant\n```python\nX_TRAIN = 1  # TODO\n```\n"
    assert _placeholders(code) == []
    assert _placeholders("$AJ(R_1, R_2)$ and MAX or TODOS") == []


@pytest.mark.parametrize(
    "page", sorted(DOCS.rglob("*.md")), ids=lambda p: str(p.relative_to(DOCS))
)
def test_no_placeholder_text_in_the_docs(page):
    assert _placeholders(page.read_text()) == []


# ------------------------------------------------------- the API reference
def _api_sources():
    """``docs/_api.py``, which writes the API reference's generated blocks."""
    return load_file(DOCS / "_api.py")


def _api_toctree():
    """The pages listed in the API index's toctree."""
    index = (DOCS / "api" / "index.md").read_text()
    block = index.split("```{toctree}", 1)[1].split("```", 1)[0]
    return {line.strip() for line in block.splitlines()[1:] if line.strip()}


def test_every_public_method_of_every_estimator_is_in_the_api_reference(tmp_path):
    # The blocks the documentation build includes (docs/conf.py writes them
    # with docs/_api.py), written here without running Sphinx: every
    # estimator of __all__ has a page in the API toctree that includes its
    # block, and the block lists and documents every public method of the
    # class, inherited ones included (partial_fit, topic_proportions, ...).
    import sklearn_topicfac

    _api_sources().write_api_sources(tmp_path)
    assert "write_api_sources()" in (DOCS / "conf.py").read_text()
    estimators = [
        name
        for name in sklearn_topicfac.__all__
        if isinstance(getattr(sklearn_topicfac, name), type)
        and issubclass(getattr(sklearn_topicfac, name), BaseEstimator)
    ]
    assert estimators
    toctree = _api_toctree()
    for name in estimators:
        cls = getattr(sklearn_topicfac, name)
        methods = {
            m for m in dir(cls) if not m.startswith("_") and callable(getattr(cls, m))
        }
        assert {"fit", "transform", "score"} <= methods
        source = (tmp_path / f"{name}.rst").read_text()
        assert f".. autoclass:: {name}" in source
        listed = set(re.findall(rf"~{name}\.(\w+)", source))
        documented = set(re.findall(r"\.\. automethod:: (\w+)", source))
        assert methods == listed == documented, (name, methods ^ listed)
        page = DOCS / "api" / f"{name.lower()}.md"
        assert f".. include:: ../_generated/api/{name}.rst" in page.read_text()
        assert page.stem in toctree
    # ...and the summary table holds every public name.
    summary = (tmp_path / "summary.rst").read_text()
    public = [name for name in sklearn_topicfac.__all__ if not name.startswith("__")]
    assert re.findall(r"^   (\w+)$", summary, flags=re.M) == public
    index = (DOCS / "api" / "index.md").read_text()
    assert ".. include:: ../_generated/api/summary.rst" in index


def test_the_api_check_sees_a_missing_method(tmp_path, monkeypatch):
    # Remove partial_fit from what the generator sees: the block loses it.
    api = _api_sources()
    original = api.public_methods
    monkeypatch.setattr(
        api,
        "public_methods",
        lambda cls: [m for m in original(cls) if m != "partial_fit"],
    )
    api.write_api_sources(tmp_path)
    assert "~PLSI.partial_fit" not in (tmp_path / "PLSI.rst").read_text()
    assert "~PLSI.topic_proportions" in (tmp_path / "PLSI.rst").read_text()


# ------------------------------------------------- which estimators learn online
def _partial_fit_sentence():
    """The one list of the estimators with ``partial_fit``, from the package."""
    import sklearn_topicfac
    from sklearn_topicfac import estimators

    names = sorted(
        name
        for name in estimators.__all__
        if hasattr(getattr(sklearn_topicfac, name), "partial_fit")
    )
    quoted = [f"`{name}`" for name in names]
    return f"{', '.join(quoted[:-1])} and {quoted[-1]} have"


def test_one_list_of_the_estimators_with_partial_fit():
    root = Path(__file__).resolve().parents[1]
    sentence = _partial_fit_sentence()
    for page in ("README.md", "docs/guide/scaling.md"):
        text = " ".join((root / page).read_text().split())
        assert sentence in text, f"{page} must say: {sentence} `partial_fit`"
    # The API pages list every public method, partial_fit included, generated
    # from the classes: see test_every_public_method_of_every_estimator_is_in_
    # the_api_reference.


# Generated blocks (benchmarks/_docblocks.py): every table a benchmark writes
# into a page is the rendering of its docs/_data JSON, exactly.


def test_generated_blocks_are_current(docblocks):
    assert sorted((DOCS / "_data").glob("*.json")), "no generated block"
    assert docblocks.stale_blocks(DOCS.parent) == []


def _copy_generated(tmp_path, name):
    """A repository in ``tmp_path`` holding one generated block and its page."""
    import json
    import shutil

    data = json.loads((DOCS / "_data" / f"{name}.json").read_text())
    (tmp_path / "docs" / "_data").mkdir(parents=True)
    shutil.copy(DOCS / "_data" / f"{name}.json", tmp_path / "docs" / "_data")
    page = tmp_path / data["page"]
    page.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(DOCS.parent / data["page"], page)
    return data, page


def test_a_hand_edit_or_a_stale_json_is_caught(docblocks, tmp_path):
    import json

    data, page = _copy_generated(tmp_path, "paper004_simplex")
    assert docblocks.stale_blocks(tmp_path) == []
    text = page.read_text()
    table = next(p for p in data["parts"] if "rows" in p)
    cell = table["rows"][0][1]
    # a number edited by hand inside the block
    edited = text.replace(f"| {cell} |", f"| {cell}1 |", 1)
    assert edited != text
    page.write_text(edited)
    assert len(docblocks.stale_blocks(tmp_path)) == 1
    # the JSON changed without re-rendering the page
    page.write_text(text)
    table["rows"][0][1] = cell + "1"
    (tmp_path / "docs" / "_data" / "paper004_simplex.json").write_text(json.dumps(data))
    assert len(docblocks.stale_blocks(tmp_path)) == 1
    # re-rendering makes it current again, the prose around it untouched
    page.write_text(docblocks.replace_block(text, data))
    assert docblocks.stale_blocks(tmp_path) == []
    outside = docblocks.block_pattern(data["name"]).split(page.read_text())
    assert outside == docblocks.block_pattern(data["name"]).split(text)


def test_a_block_without_its_json_is_caught(docblocks, tmp_path):
    _, page = _copy_generated(tmp_path, "paper004_simplex")
    (tmp_path / "docs" / "_data" / "paper004_simplex.json").unlink()
    assert len(docblocks.stale_blocks(tmp_path)) == 1


def test_every_block_named_in_prose_exists(docblocks):
    # Prose refers to a measured table by its block's name instead of
    # quoting its figures again; a renamed or dropped block must not leave
    # a reference to nothing behind.
    assert docblocks.dangling_references(DOCS.parent) == []
    named = docblocks.named_blocks(
        "see table `perf_moves`, tables `a_b` and `c`; Table `d`, `perf_x_y`"
        " and the kernel `lda_e_step`"
    )
    assert named == {"perf_moves", "a_b", "c", "d", "perf_x_y"}


def test_a_reference_to_a_missing_block_is_caught(docblocks, tmp_path):
    _, page = _copy_generated(tmp_path, "paper004_simplex")
    assert docblocks.dangling_references(tmp_path) == []
    page.write_text(page.read_text() + "\nAs table `paper004_simplx` shows.\n")
    assert docblocks.dangling_references(tmp_path) == [
        (page.relative_to(tmp_path).as_posix(), "paper004_simplx")
    ]


def test_an_imported_block_names_the_commit_of_its_header(docblocks, tmp_path):
    import json

    data, page = _copy_generated(tmp_path, "paper004_simplex")
    path = tmp_path / "docs" / "_data" / "paper004_simplex.json"
    text = page.read_text()
    for commit, expected in [(data["commit"], 0), ("0000000", 1)]:
        data["note"] = f"imported from commit {commit}, not re-run"
        path.write_text(json.dumps(data))
        page.write_text(docblocks.replace_block(text, data))
        problems = docblocks.stale_blocks(tmp_path)
        assert len(problems) == expected, problems


def test_a_benchmarks_write_doc_writes_its_printed_tables(
    docblocks, tmp_path, monkeypatch
):
    import io
    import sys

    monkeypatch.setattr(sys, "stdout", io.StringIO())
    tee = docblocks.capture_stdout()
    print("load average at start: 3.1")
    print("  fit 1: 2.0 s")
    print("\n### Table one\n\n| a | b |\n|---|---|\n| 1 | 2 |")
    print("load average at end: 2.5")
    printed = tee.copy.getvalue()
    assert printed == tee.stream.getvalue()
    tables = docblocks.printed_tables(printed)
    assert tables == "**Table one**\n\n| a | b |\n|---|---|\n| 1 | 2 |"

    monkeypatch.setattr(docblocks, "REPO_ROOT", tmp_path)
    monkeypatch.setattr(docblocks, "DATA", tmp_path / "docs" / "_data")
    page = tmp_path / "docs" / "x.md"
    page.parent.mkdir()
    page.write_text("# X\n\nText.\n")
    docblocks.write_doc("x_table", tables, "docs/x.md")
    assert docblocks.stale_blocks(tmp_path) == []
    assert "| 1 | 2 |" in page.read_text()
    assert "load average" not in page.read_text()
    # The next run replaces the block on the page that already holds it.
    docblocks.write_doc("x_table", tables.replace("| 2 |", "| 3 |"), "docs/y.md")
    assert not (tmp_path / "docs" / "y.md").exists()
    text = page.read_text()
    assert "| 1 | 3 |" in text and "| 1 | 2 |" not in text
    assert text.startswith("# X\n\nText.\n")
    assert docblocks.stale_blocks(tmp_path) == []


def test_markdown_tables_round_trip_through_parts(docblocks):
    markdown = (
        "Intro with `a\\|b`.\n\n| x | y |\n|---|---:|\n| 1 |  |\n| `P(z\\|d)` | 2 |"
        "\n\nAfter."
    )
    parts = docblocks.parts_from_markdown(markdown)
    assert [sorted(p) for p in parts] == [
        ["text"],
        ["align", "columns", "rows"],
        ["text"],
    ]
    assert parts[1]["rows"] == [["1", ""], ["`P(z\\|d)`", "2"]]
    data = {
        "name": "t",
        "command": "c",
        "machine": "m",
        "date": "d",
        "commit": "h",
        "parts": parts,
    }
    body = docblocks.render(data).split("\n", 1)[1].rsplit("\n", 1)[0]
    assert body == markdown
    with pytest.raises(ValueError, match="cells"):
        docblocks.render({**data, "parts": [{"columns": ["a"], "rows": [[1, 2]]}]})


# Docstrings carry the mathematics and a runnable example; measurements live
# in docs/*.md.  Each pattern is one shape a measured figure takes.
_NUMBER = r"\d+(?:[.,]\d+)?"
_SPELLED = r"(?:two|three|four|five|six|seven|eight|nine|ten)"
_CORPORA = (
    r"(?:CSTR|Classic3|WebACE|WebKB4?|Reuters|Newsgroups|20news|NIPS|tr11|re0"
    r"|R8|R52|NYT|generated corpus)"
)
_FIGURE = re.compile(
    "|".join(
        [
            rf"{_NUMBER}\s*%",  # percentages
            rf"{_NUMBER}\s*×|{_NUMBER}x\b",  # speed-ups: "7x", "6.9 ×"
            rf"\b{_NUMBER}\s*(?:ns|µs|us|ms|s|sec|seconds|minutes|min)\b",  # timings
            rf"(?:faster|slower|speed-?up)\W+(?:\w+\W+){{0,4}}{_NUMBER}",
            r"(?:accuracy|perplexity|NPMI|NMI|ARI|coherence)\D{0,30}\d+\.\d+",
            rf"{_CORPORA}\W+(?:[\w'-]+\W+){{0,8}}{_NUMBER}",  # "on CSTR: ... 0.68"
            rf"{_NUMBER}\s+(?:to|against)\s+{_NUMBER}\b(?!\s*\))",  # "0.68 to 0.91"
            rf"\b{_SPELLED}\s+to\s+{_SPELLED}\b",  # "about three to six"
            r"k\s*=\s*\d+\s+instead\s+of\s+\d+",  # "k = 28 instead of 20"
            r"\b\d+\s+(?:iterations|epochs)\s+(?:ended|stopped)",
        ]
    ),
    re.IGNORECASE,
)


def _prose(doc):
    """A docstring without its Examples section (doctests print numbers)."""
    return re.split(r"\n\s*Examples\n\s*-{8}", doc or "")[0]


def _figures(text):
    return [m.group(0) for m in _FIGURE.finditer(_prose(text))]


def _public_docstrings():
    import inspect

    import sklearn_topicfac
    from sklearn_topicfac._docstrings import SNIPPETS

    docs = {f"_docstrings.SNIPPETS[{name!r}]": text for name, text in SNIPPETS.items()}
    for name in sklearn_topicfac.__all__:
        obj = getattr(sklearn_topicfac, name)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        docs[name] = inspect.getdoc(obj)
        if inspect.isclass(obj):
            for attr in dir(obj):
                if attr.startswith("_"):
                    continue
                member = getattr(obj, attr, None)
                if callable(member) or isinstance(member, property):
                    docs[f"{name}.{attr}"] = inspect.getdoc(member)
    return docs


def test_the_figure_check_finds_measured_figures():
    # Sentences that the docstrings once carried (LDAVI's, KLNMF's, the
    # engine's), and the shapes the issue names.
    measured = [
        "costs 40 % in held-out perplexity (420 against 301 for restarts).",
        "13 to 21 % more fit time on Classic3 and WebACE",
        "it made the held-out score choose k = 28 instead of 20",
        'One iteration of ``"cd"`` costs about three to six of ``"mu"``',
        "measured on CSTR: KL-NMF's move from 36 iterations ended 1 % lower",
        "took 7x (NumPy) and 20x (numba) as long",
        "on CSTR the accuracy went from 0.68 to 0.91",
        "a fit took 12.5 s",
        "the NumPy kernels ran 6.9 × faster",
        "held-out perplexity 1234.5 on 20 Newsgroups",
    ]
    for sentence in measured:
        assert _figures(sentence), sentence
    # Maths, defaults, numbered steps and doctests are not figures.
    not_measured = [
        "tol : float, default=1e-4",
        "learning_decay : float in [0, 1], default=0.7",
        "1. start from a smoothed K-means clustering (assignment plus 0.2);",
        "values in (0.5, 1] guarantee convergence",
        ":math:`\\rho_t = (\\tau_0 + t)^{-\\kappa}`, entry ``2 r + 1``",
        "Notes\n-----\nMaths.\n\nExamples\n--------\n"
        ">>> lda.perplexity(X[:1]) < 4.0\nTrue",
        "Print the objective every 10 iterations",
        "the topics' term, of size O(n_components * n_features)",
    ]
    for sentence in not_measured:
        assert not _figures(sentence), (sentence, _figures(sentence))


def test_no_public_docstring_carries_a_measured_figure():
    docs = _public_docstrings()
    found = {name: hits for name, doc in docs.items() if (hits := _figures(doc))}
    assert not found, f"move these figures to docs/*.md and point there: {found}"


def test_the_readme_opens_with_an_example_that_runs(tmp_path, monkeypatch, capsys):
    # The first Python block of the README, as a user pastes it: it fits,
    # prints the topics and writes the report.
    root = Path(__file__).resolve().parents[1]
    text = (root / "README.md").read_text()
    example = re.findall(r"```python\n(.*?)```", text, re.S)[0]
    assert len(example.strip().splitlines()) <= 12
    assert text.index(example) < text.index("## The estimators")
    monkeypatch.chdir(tmp_path)
    exec(compile(example, "README.md", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    topics = [line for line in out if line.startswith("topic")]
    assert len(topics) == 3
    assert (tmp_path / "classic3.html").stat().st_size > 10_000
