"""Tests for the ``topicfac`` command (``python -m sklearn_topicfac``)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator

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


def _run_main(capsys, *args):
    """``main(args)`` in this process: its status, stdout and stderr."""
    try:
        status = main(list(args))
    except SystemExit as exc:  # argparse's errors
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize(
    ("estimator", "n_components"),
    [("KLNMF", 3), ("NormalizedNMF", 2), ("PLSI", 4)],
)
def test_demo_runs(capsys, estimator, n_components):
    status, out, err = _run_main(
        capsys,
        "--estimator",
        estimator,
        "-k",
        str(n_components),
        "--max-iter",
        "30",
        "--top-terms",
        "5",
    )
    assert status == 0, err
    assert "3891 documents x 4303 terms" in out

    topics = TOPIC_LINE.findall(out)
    assert [int(t) for t, _ in topics] == list(range(n_components))
    for _, terms in topics:
        assert len(terms.split()) == 5

    accuracy = ACCURACY_LINE.findall(out)
    assert len(accuracy) == 1
    assert 0.0 <= float(accuracy[0]) <= 1.0


def test_default_run_finds_the_three_collections():
    # Classic3's three collections are well separated; a KL-NMF with the
    # default settings that cannot recover them points to a real defect.
    # No input: the bundled corpus, from a shell, with the progress bar.
    result = _run_cli("--max-iter", "30", "--progress")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Classic3: 3891 documents x 4303 terms")
    assert len(TOPIC_LINE.findall(result.stdout)) == 3
    (accuracy,) = ACCURACY_LINE.findall(result.stdout)
    assert float(accuracy) > 0.8
    # The bar counts every run: the start and each split-merge move.
    assert re.search(r"\[KLNMF\] \[#+-*\] \d+/120 iterations", result.stderr)
    assert "Traceback" not in result.stderr


def test_ldavi_progress_bar_counts_the_split_merge_runs(capsys):
    # LDAVI runs its epochs once for the start and once per split-merge
    # move: the bar's total is (n_init + split_merge) * max_iter, and the
    # epochs counted never exceed it.
    status, _, err = _run_main(
        capsys, "--estimator", "LDAVI", "-k", "3", "--max-iter", "4", "--progress"
    )
    assert status == 0, err
    (done,) = re.findall(r"\[LDAVI\] \[[#-]+\] (\d+)/16 iterations[^\r]*\n", err)
    assert 4 <= int(done) <= 16


@pytest.mark.parametrize(
    "args",
    [
        ("--estimator", "LDA"),
        ("-k", "0"),
        ("--max-iter", "ten"),
        ("--min-df", "1.5"),
        ("--no-such-option",),
    ],
)
def test_bad_arguments_fail_cleanly(capsys, args):
    status, out, err = _run_main(capsys, *args)
    assert status == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("topicfac: error: "), err


def test_bad_argument_from_the_shell():
    result = _run_cli("--estimator", "LDA")
    assert result.returncode == 2
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        "topicfac: error: argument --estimator: unknown estimator 'LDA' (choose "
        f"from {', '.join(sklearn_topicfac._cli._estimator_names())}) "
        "(see topicfac --help)"
    ]


class _BlockOracle(BaseEstimator):
    """Stand-in estimator that assigns documents to their true collection.

    It relies on Classic3 rows being grouped by class (1033 MED, 1460 CISI,
    1398 CRAN), which makes the expected CLI output known exactly and lets the
    formatting be tested independently of the real estimators.
    """

    def __init__(self, n_components=3, random_state=None, verbose=0, max_iter=None):
        self.n_components = n_components
        self.random_state = random_state
        self.verbose = verbose
        self.max_iter = max_iter

    def fit(self, X):
        self.components_ = np.asarray(self.transform(X).T @ X)
        return self

    def transform(self, X):
        bounds = np.cumsum([0, 1033, 1460, 1398])
        labels = np.searchsorted(bounds, np.arange(X.shape[0]), side="right") - 1
        W = np.zeros((X.shape[0], self.n_components))
        # Collections map to topics 2, 0, 1 so the matching is non-trivial.
        W[np.arange(X.shape[0]), (labels + 2) % 3] = 1.0
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


# ------------------------------------------------------ corpora from a path
SPORTS = "game team score player coach season match goal league ball".split()
MONEY = "stock market bond price bank rate investor fund trade profit".split()


def _texts(words, n, seed):
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(words, size=30)) + " the and of" for _ in range(n)]


@pytest.fixture(scope="module")
def corpus_dir(tmp_path_factory):
    """Two labelled folders of .txt files, a CSV, a TSV and one-per-line files."""
    root = tmp_path_factory.mktemp("corpora")
    sports, money = _texts(SPORTS, 20, 0), _texts(MONEY, 20, 1)
    for label, docs in (("sports", sports), ("money", money)):
        (root / "folder" / label).mkdir(parents=True)
        for i, doc in enumerate(docs):
            (root / "folder" / label / f"{i:02d}.txt").write_text(doc)
    (root / "flat").mkdir()
    for i, doc in enumerate(sports[:5] + money[:5]):
        (root / "flat" / f"{i}.txt").write_text(doc)
    rows = [("sports", d) for d in sports] + [("money", d) for d in money]
    with open(root / "docs.csv", "w", newline="") as fh:
        fh.write("id,body,topic\n")
        for i, (label, doc) in enumerate(rows):
            fh.write(f'{i},"{doc}",{label}\n')
    with open(root / "docs.tsv", "w") as fh:
        fh.write("text\n" + "\n".join(doc for _, doc in rows) + "\n")
    (root / "lines.txt").write_text("\n".join(doc for _, doc in rows))
    (root / "labeled.txt").write_text("\n".join(f"{lab}\t{doc}" for lab, doc in rows))
    (root / "header_only.csv").write_text("text,label\n")
    (root / "stopwords.csv").write_text("text\nthe and of\nof the\n")
    (root / "empty").mkdir()
    return root


def _assert_two_topics_found(result, n_docs=40):
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert f"{n_docs} documents x " in result.stdout
    topics = dict(TOPIC_LINE.findall(result.stdout))
    assert sorted(topics) == ["0", "1"]
    # The stop words are gone and each topic is one of the two vocabularies.
    for terms in topics.values():
        words = set(terms.split())
        assert not words & {"the", "and", "of"}
        assert words <= set(SPORTS) or words <= set(MONEY)


def test_folder_of_text_files_with_labels(corpus_dir, tmp_path):
    doc_topics = tmp_path / "theta.csv"
    model = tmp_path / "model.joblib"
    result = _run_cli(
        str(corpus_dir / "folder"),
        "-k",
        "2",
        "--estimator",
        "plsi",
        "--top-terms",
        "5",
        "--doc-topics",
        str(doc_topics),
        "--save-model",
        str(model),
    )
    _assert_two_topics_found(result)
    assert "classes money, sports" in result.stdout
    assert ACCURACY_LINE.findall(result.stdout) == ["1.000"]
    assert "NMI vs labels: 1.000" in result.stdout
    assert "ARI vs labels: 1.000" in result.stdout

    table = pd.read_csv(doc_topics)
    assert list(table.columns) == ["document", "topic0", "topic1"]
    assert table["document"].iloc[0] == "money/00.txt"
    assert len(table) == 40
    np.testing.assert_allclose(table[["topic0", "topic1"]].sum(axis=1), 1, rtol=1e-5)

    # The saved pipeline takes raw text.
    pipe = joblib.load(model)
    theta = pipe.transform(["goal match league", "bank stock bond"])
    assert theta.shape == (2, 2) and theta[0].argmax() != theta[1].argmax()


def test_csv_with_text_and_label_columns(corpus_dir):
    result = _run_cli(
        str(corpus_dir / "docs.csv"),
        "--text-column",
        "body",
        "--label-column",
        "topic",
        "-k",
        "2",
        "--estimator",
        "KLNMF",
    )
    _assert_two_topics_found(result)
    assert ACCURACY_LINE.findall(result.stdout) == ["1.000"]


@pytest.mark.parametrize(
    ("name", "extra"),
    [
        ("docs.tsv", ()),
        ("lines.txt", ()),
        ("labeled.txt", ("--estimator", "JointNMF")),
        ("flat", ("--estimator", "NormalizedNMF")),
    ],
)
def test_other_text_formats(corpus_dir, capsys, name, extra):
    assert main([str(corpus_dir / name), "-k", "2", *extra]) == 0
    out = capsys.readouterr().out
    n_docs = 10 if name == "flat" else 40
    assert f"{n_docs} documents x " in out
    assert len(TOPIC_LINE.findall(out)) == 2
    # Labels only where the format carries them.
    assert bool(ACCURACY_LINE.findall(out)) == (name == "labeled.txt")


def test_mat_file_and_vocabulary_options(tmp_path, capsys):
    import scipy.io as scipy_io

    rng = np.random.default_rng(0)
    X = np.vstack([rng.poisson(3, (15, 6)), rng.poisson(3, (15, 6))])
    X[:15, 3:] = 0
    X[15:, :3] = 0
    X[:, 5] += 1  # a term in every document
    path = tmp_path / "corpus.mat"
    scipy_io.savemat(path, {"fea": X.astype(float), "gnd": np.repeat([1, 2], 15)})
    assert main([str(path), "-k", "2", "--max-df", "0.9", "--top-terms", "2"]) == 0
    out = capsys.readouterr().out
    assert "30 documents x 5 terms" in out  # term5 dropped by --max-df
    assert "term5" not in out
    assert ACCURACY_LINE.findall(out) == ["1.000"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("does/not/exist",), "no such file or folder"),
        (("{root}/empty",), "no .txt files"),
        (("{root}/header_only.csv",), "no documents"),
        (("{root}/stopwords.csv",), "no term left"),
        (("{root}/docs.csv",), "which column holds the text"),
        (("{root}/docs.csv", "--text-column", "nope"), "no text column 'nope'"),
        (("{root}/folder", "--format", "csv"), "needs a file"),
        (("{root}/docs.csv", "--format", "folder"), "needs a folder"),
    ],
)
def test_bad_inputs_fail_with_one_line(capsys, corpus_dir, args, message):
    args = [a.format(root=corpus_dir) for a in args]
    status, _, err = _run_main(capsys, *args)
    assert status == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("topicfac: error: "), err
    assert message in lines[0]


def test_bad_path_from_the_shell(corpus_dir):
    for path in ("does/not/exist", str(corpus_dir / "empty")):
        result = _run_cli(path)
        assert result.returncode == 1
        assert "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
        assert result.stderr.startswith("topicfac: error: ")


def test_help_documents_every_option():
    result = _run_cli("--help")
    assert result.returncode == 0
    parser_options = [
        "--format",
        "--text-column",
        "--label-column",
        "--stop-words",
        "--min-df",
        "--max-df",
        "--max-features",
        "--estimator",
        "--n-components",
        "--max-iter",
        "--random-state",
        "--top-terms",
        "--doc-topics",
        "--save-model",
        "--progress",
        "--no-progress",
        "--verbose",
        "--debug",
        "--version",
    ]
    for option in parser_options:
        assert option in result.stdout, option
    for name in sklearn_topicfac._cli._estimator_names():
        assert name in result.stdout, name
    for fmt in ("folder", "csv", "tsv", "labeled-lines", "lines", "mat", "reuters"):
        assert fmt in result.stdout


def test_every_estimator_runs(capsys):
    names = set(sklearn_topicfac._cli._estimator_names()) - {"KLNMF", "PLSI"}
    for name in sorted(names):
        assert main(["--estimator", name, "--max-iter", "5", "--top-terms", "3"]) == 0
        out = capsys.readouterr().out
        assert len(TOPIC_LINE.findall(out)) == 3, name
        assert len(ACCURACY_LINE.findall(out)) == 1, name
