"""The code of the documentation's worked examples runs."""

import sys
import types
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _python_blocks(page):
    """The ``python`` code blocks of a Markdown page, in order."""
    blocks, current = [], None
    for line in page.read_text().splitlines():
        if current is None and line.strip() == "```python":
            current = []
        elif current is not None and line.strip() == "```":
            blocks.append("\n".join(current))
            current = None
        elif current is not None:
            current.append(line)
    return blocks


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_adding_an_estimator_page_runs():
    blocks = _python_blocks(DOCS / "guide" / "adding_an_estimator.md")
    assert len(blocks) == 3  # the model, the estimator, what it gets for free
    # A real module, so that the estimator pickles (check_estimator does).
    module = types.ModuleType("adding_an_estimator")
    sys.modules[module.__name__] = module
    try:
        for block in blocks:
            exec(compile(block, "adding_an_estimator.md", "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]
    assert hasattr(module, "SmoothedPLSI") and hasattr(module, "SmoothedPLSIModel")
