"""The code of the documentation's worked examples runs; no page holds
placeholder text."""

import importlib.util
import re
import sys
import types
from pathlib import Path

import pytest
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


# ------------------------------------------------------- the API reference
def _api_sources():
    """``docs/_api.py``, which writes the API reference's generated blocks."""
    spec = importlib.util.spec_from_file_location("_api", DOCS / "_api.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
    assert len(estimators) == 8
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
