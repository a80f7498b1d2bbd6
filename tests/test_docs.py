"""The code of the documentation's worked examples runs."""

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
