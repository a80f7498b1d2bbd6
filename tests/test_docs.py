"""The code of the documentation's worked examples runs; no page holds
placeholder text."""

import re
import sys
import types
from pathlib import Path

import pytest

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
    try:
        for block in blocks:
            exec(compile(block, str(PAGE), "exec"), module.__dict__)
        yield module
    finally:
        del sys.modules[module.__name__]


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
    # The API pages list partial_fit exactly for those estimators.
    import sklearn_topicfac
    from sklearn_topicfac import estimators

    for name in estimators.__all__:
        members = re.search(
            r":members: (.*)",
            (root / "docs" / "api" / f"{name.lower()}.md").read_text(),
        ).group(1)
        has = hasattr(getattr(sklearn_topicfac, name), "partial_fit")
        assert ("partial_fit" in members.split(", ")) == has, name
