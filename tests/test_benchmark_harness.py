"""The benchmarks' runner (``benchmarks/harness.py``) measures the install it
names: a child process imports the package of the interpreter it runs, not
a checkout it happens to be started from."""

import os
import tempfile

import pytest
from _corpora import load_file

from conftest import REPO_ROOT


@pytest.fixture
def harness():
    return load_file(REPO_ROOT / "benchmarks" / "harness.py")


def test_a_child_started_in_the_checkout_has_no_working_directory_on_its_path(
    harness, monkeypatch
):
    """An empty entry of PYTHONPATH is the working directory: started from
    the checkout, a virtual environment's interpreter imported the
    checkout's package (the install tables measured the checkout's code)."""
    monkeypatch.chdir(REPO_ROOT)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    result = harness.measure("default_install.py", {"task": "where"})
    entries = [os.path.realpath(p) for p in result["sys_path"] if p]
    assert "" not in result["sys_path"]
    assert os.path.realpath(REPO_ROOT) not in entries
    assert os.path.realpath(tempfile.gettempdir()) not in entries
    assert os.path.realpath(REPO_ROOT / "benchmarks") in entries


def test_a_child_that_imported_another_package_is_refused(harness, monkeypatch):
    monkeypatch.setattr(
        harness,
        "interpreter_description",
        lambda python=None: {"package": "/elsewhere/sklearn_topicfac/__init__.py"},
    )
    with pytest.raises(RuntimeError, match="not the interpreter's own"):
        harness.measure("default_install.py", {"task": "where"})
