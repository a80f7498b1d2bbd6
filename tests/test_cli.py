"""Tests for the command-line demo (``python -m sklearn_topicfac``)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import sklearn_topicfac
from sklearn_topicfac._cli import main

REPO_ROOT = Path(__file__).resolve().parents[1]
TOPIC_LINE = re.compile(r"^topic (\d+): (.+)$", re.MULTILINE)
ACCURACY_LINE = re.compile(
    r"^clustering accuracy vs labels: ([0-9]*\.?[0-9]+)$", re.MULTILINE
)


def _run_cli(*args):
    # Put the source tree first on the path so the tests exercise this
    # checkout even when the package is not installed.
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p
    )
    return subprocess.run(
        [sys.executable, "-m", "sklearn_topicfac", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO_ROOT,
        timeout=600,
    )


@pytest.mark.parametrize(
    ("estimator", "n_components"),
    [("KLNMF", 3), ("NormalizedNMF", 2), ("PLSI", 4)],
)
def test_demo_runs(estimator, n_components):
    result = _run_cli(
        "--estimator",
        estimator,
        "-k",
        str(n_components),
        "--max-iter",
        "30",
        "--top-terms",
        "5",
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "3891 documents x 4303 terms" in result.stdout

    topics = TOPIC_LINE.findall(result.stdout)
    assert [int(t) for t, _ in topics] == list(range(n_components))
    for _, terms in topics:
        assert len(terms.split()) == 5

    accuracy = ACCURACY_LINE.findall(result.stdout)
    assert len(accuracy) == 1
    assert 0.0 <= float(accuracy[0]) <= 1.0


def test_default_run_finds_the_three_collections():
    # Classic3's three collections are well separated; a KL-NMF with the
    # default settings that cannot recover them points to a real defect.
    result = _run_cli("--max-iter", "30")
    assert result.returncode == 0, result.stderr
    assert len(TOPIC_LINE.findall(result.stdout)) == 3
    (accuracy,) = ACCURACY_LINE.findall(result.stdout)
    assert float(accuracy) > 0.8


@pytest.mark.parametrize(
    "args",
    [
        ("--estimator", "LDA"),
        ("-k", "0"),
        ("--max-iter", "ten"),
        ("--no-such-option",),
    ],
)
def test_bad_arguments_fail_cleanly(args):
    result = _run_cli(*args)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert "error:" in result.stderr
    assert result.stdout == ""


def test_help():
    result = _run_cli("--help")
    assert result.returncode == 0
    assert "--estimator" in result.stdout
    assert "NormalizedNMF" in result.stdout


class _BlockOracle:
    """Stand-in estimator that assigns documents to their true collection.

    It relies on Classic3 rows being grouped by class (1033 MED, 1460 CISI,
    1398 CRAN), which makes the expected CLI output known exactly and lets the
    formatting be tested independently of the real estimators.
    """

    def __init__(self, n_components, max_iter, random_state, verbose):
        self.n_components = n_components

    def fit_transform(self, X):
        bounds = np.cumsum([0, 1033, 1460, 1398])
        labels = np.searchsorted(bounds, np.arange(X.shape[0]), side="right") - 1
        W = np.zeros((X.shape[0], self.n_components))
        # Collections map to topics 2, 0, 1 so the matching is non-trivial.
        W[np.arange(X.shape[0]), (labels + 2) % 3] = 1.0
        self.components_ = np.asarray(W.T @ X)
        return W


def test_output_with_oracle_estimator(monkeypatch, capsys):
    monkeypatch.setattr(sklearn_topicfac, "KLNMF", _BlockOracle, raising=False)
    assert main(["--top-terms", "3"]) == 0
    out = capsys.readouterr().out

    topics = dict(TOPIC_LINE.findall(out))
    assert sorted(topics) == ["0", "1", "2"]
    assert "library" in topics["0"].split()  # CISI
    assert "patients" in topics["2"].split()  # MED
    assert "cluster 0: 1460 documents, majority class CISI (100.0%)" in out
    assert "cluster 1: 1398 documents, majority class CRAN (100.0%)" in out
    assert "cluster 2: 1033 documents, majority class MED (100.0%)" in out
    assert ACCURACY_LINE.findall(out) == ["1.000"]


def test_empty_topic_is_reported(monkeypatch, capsys):
    monkeypatch.setattr(sklearn_topicfac, "PLSI", _BlockOracle, raising=False)
    assert main(["--estimator", "PLSI", "-k", "4"]) == 0
    out = capsys.readouterr().out
    assert len(TOPIC_LINE.findall(out)) == 4
    assert "cluster 3: 0 documents" in out
    assert ACCURACY_LINE.findall(out) == ["1.000"]
