"""Tests for the ``topicfac`` command (``python -m sklearn_topicfac``)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

import sklearn_topicfac
from sklearn_topicfac.cli import main

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
    # Classic3's 4303 terms less the 32 on scikit-learn's English stop list.
    assert "3891 documents x 4271 terms" in out

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
    assert result.stdout.startswith("Classic3: 3891 documents x 4271 terms")
    assert len(TOPIC_LINE.findall(result.stdout)) == 3
    (accuracy,) = ACCURACY_LINE.findall(result.stdout)
    assert float(accuracy) > 0.8
    # The bar counts every run: the start and each split-merge move (none
    # by default).
    assert re.search(r"\[KLNMF\] \[#+-*\] \d+/30 iterations", result.stderr)
    assert "Traceback" not in result.stderr


def test_ldavi_progress_bar_counts_the_map_runs(capsys):
    # LDAVI's default fit, MAP, makes three starts of max_iter // 3 = 2
    # sweeps, and the start kept runs on to 3 * max_iter = 18 sweeps in all:
    # 22 sweeps at most, which the bar bounds by whole max_iters, 4 * 6 =
    # 24; three runs, or four when the kept start did not converge within
    # its first 2 sweeps.
    status, _, err = _run_main(
        capsys, "--estimator", "LDAVI", "-k", "3", "--max-iter", "6", "--progress"
    )
    assert status == 0, err
    drawn = re.findall(r"\[LDAVI\] \[[#-]+\] (\d+)/24 iterations", err)
    (done, runs) = re.findall(r"\[LDAVI\] \[#+\] (\d+) iterations in (\d+) runs?", err)[
        0
    ]
    assert drawn and [int(d) for d in drawn] == sorted(int(d) for d in drawn)
    assert 3 <= int(done) <= 22 and int(drawn[-1]) <= int(done)
    assert int(runs) in (3, 4)


@pytest.mark.parametrize(
    "args",
    [
        ("--estimator", "LDA"),
        ("-k", "0"),
        ("--max-iter", "ten"),
        ("--min-df", "1.5"),
        ("-k", "many"),
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
        f"from {', '.join(sklearn_topicfac.cli.options._estimator_names())}) "
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
    model = tmp_path / "model.skops"
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
    pipe = sklearn_topicfac.load(model)
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
        (("--estimator", "SimplexPLSA", "--report", "x.html"), "--report shows"),
        (("--stability", "2"), "--stability is shown in the report"),
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
        "--encoding",
        "--token-pattern",
        "--report",
        "--progress",
        "--no-progress",
        "--verbose",
        "--force",
        "--debug",
        "--version",
    ]
    for option in parser_options:
        assert option in result.stdout, option
    for name in sklearn_topicfac.cli.options._estimator_names():
        assert name in result.stdout, name
    for fmt in ("folder", "csv", "tsv", "labeled-lines", "lines", "mat", "reuters"):
        assert fmt in result.stdout


def test_every_estimator_runs(capsys):
    names = set(sklearn_topicfac.cli.options._estimator_names()) - {"KLNMF", "PLSI"}
    for name in sorted(names):
        assert main(["--estimator", name, "--max-iter", "5", "--top-terms", "3"]) == 0
        out = capsys.readouterr().out
        assert len(TOPIC_LINE.findall(out)) == 3, name
        assert len(ACCURACY_LINE.findall(out)) == 1, name


# ------------------------------------------------------------ text defaults
STOP_WORDS = set(ENGLISH_STOP_WORDS)


@pytest.fixture(scope="module")
def news_dir(tmp_path_factory):
    """Three labelled classes of newswire-like text, in every input form.

    Every document also has stop words, a corpus-wide word ("said") and
    numbers, which the default vocabulary must keep out of the topics.
    """
    root = tmp_path_factory.mktemp("news")
    vocabularies = {"sports": SPORTS, "money": MONEY, "weather": WEATHER}
    rows = []
    for seed, (label, words) in enumerate(vocabularies.items()):
        rng = np.random.default_rng(seed)
        for i in range(15):
            filler = "the said of and it was 000 1987 said to in"
            doc = f"{' '.join(rng.choice(words, size=25))} {filler}"
            rows.append((label, doc))
            (root / "folder" / label).mkdir(parents=True, exist_ok=True)
            (root / "folder" / label / f"{i:02d}.txt").write_text(doc)
    pd.DataFrame(rows, columns=["label", "text"]).to_csv(root / "news.csv", index=False)
    pd.DataFrame(rows, columns=["label", "text"]).to_csv(
        root / "news.tsv", sep="\t", index=False
    )
    (root / "unlabeled.txt").write_text("\n".join(doc for _, doc in rows))
    return root


WEATHER = "rain storm wind snow cloud sunny forecast cold heat humid".split()


@pytest.mark.parametrize("name", [None, "folder", "news.csv", "news.tsv"])
def test_defaults_drop_stop_words_and_choose_k_from_the_labels(news_dir, name):
    args = ["--max-iter", "30"] if name is None else [str(news_dir / name)]
    result = _run_cli(*args)
    assert result.returncode == 0, result.stderr
    n_classes = 3
    assert f"-k auto: {n_classes} topics, one per class" in result.stdout
    topics = TOPIC_LINE.findall(result.stdout)
    assert [int(z) for z, _ in topics] == list(range(n_classes))
    for _, terms in topics:
        words = terms.split()
        assert len(words) == 10
        assert not set(words) & STOP_WORDS, words
        if name is not None:
            # Corpus-wide words and numbers are gone too.
            assert not set(words) & {"said", "000", "1987"}, words
    assert re.search(
        r"^mean NPMI coherence: [-+]\d\.\d{3}; topic diversity: ", result.stdout, re.M
    )
    if name is not None:
        assert ACCURACY_LINE.findall(result.stdout) == ["1.000"]


def test_the_old_vocabulary_is_one_option_away(news_dir, capsys):
    # With the ceiling lifted and scikit-learn's own token pattern, the
    # corpus-wide word and the numbers come back: the defaults are what
    # removes them.
    status, out, err = _run_main(
        capsys,
        str(news_dir / "news.csv"),
        "--max-df",
        "1.0",
        "--token-pattern",
        r"(?u)\b\w\w+\b",
        "--top-terms",
        "20",
    )
    assert status == 0, err
    words = {w for _, terms in TOPIC_LINE.findall(out) for w in terms.split()}
    assert {"said", "000", "1987"} <= words


def _topic_words(out):
    return {w for _, terms in TOPIC_LINE.findall(out) for w in terms.split()}


@pytest.mark.parametrize(
    ("stop_words", "gone", "kept"),
    [
        ("english,+said", STOP_WORDS | {"said"}, set()),
        ("+said,+Rain", STOP_WORDS | {"said", "rain"}, set()),
        ("none,+said", {"said"}, {"the", "and"}),
        ("{file}", {"said", "rain"}, {"the", "and"}),
        ("{file},english", STOP_WORDS | {"said", "rain"}, set()),
    ],
)
def test_stop_words_a_user_can_extend(
    news_dir, tmp_path, capsys, stop_words, gone, kept
):
    # "said" is in every document: with --max-df 1.0 only a stop word drops it.
    words_file = tmp_path / "stop.txt"
    words_file.write_text("# newswire words\nsaid  RAIN\n\n")
    status, out, err = _run_main(
        capsys,
        str(news_dir / "news.csv"),
        "--stop-words",
        stop_words.format(file=words_file),
        "--max-df",
        "1.0",
        "--top-terms",
        "40",
        "--max-iter",
        "20",
    )
    assert status == 0, err
    words = _topic_words(out)
    assert not words & gone, words & gone
    assert kept <= words


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("englsh", "'englsh' is neither 'english', 'none', +WORD nor a file"),
        ("english,+", "'+' without a word"),
        (",", "empty list"),
    ],
)
def test_bad_stop_words_fail_with_one_line(capsys, value, message):
    status, _, err = _run_main(capsys, "--stop-words", value)
    assert status == 2
    assert len(err.strip().splitlines()) == 1 and message in err, err


def test_unlabeled_corpus_chooses_k_by_held_out_likelihood(news_dir, capsys):
    status, out, err = _run_main(capsys, str(news_dir / "unlabeled.txt"))
    assert status == 0, err
    assert "-k auto: choosing among k = 2, 3, 4, 5, 6, 8, 10 by the held-out" in out
    curve = re.findall(
        r"^  k = +(\d+): held-out log-likelihood per word (-\d+\.\d{4})$", out, re.M
    )
    assert [int(k) for k, _ in curve] == [2, 3, 4, 5, 6, 8, 10]
    (chosen,) = re.findall(
        r"^-k auto: (\d+) topics \(the best held-out score\)$", out, re.M
    )
    scores = {int(k): float(v) for k, v in curve}
    assert scores[int(chosen)] == max(scores.values())
    assert int(chosen) == 3  # the three planted vocabularies
    assert len(TOPIC_LINE.findall(out)) == 3
    assert "warning" not in out  # 3 is inside the candidates


def test_k_auto_says_when_its_choice_ends_the_candidates(news_dir, capsys, monkeypatch):
    # Three planted vocabularies, candidates 2 and 3: the best is the last.
    monkeypatch.setattr(sklearn_topicfac.cli.options, "AUTO_CANDIDATES", (2, 3))
    status, out, err = _run_main(
        capsys, str(news_dir / "unlabeled.txt"), "--max-iter", "30"
    )
    assert status == 0, err
    assert re.search(
        r"^-k auto: warning: 3 is the largest candidate, so the score may still "
        r"improve beyond the candidates: it is a bound, not an answer; try other "
        r"k with -k$",
        out,
        re.M,
    ), out


# -------------------------------------------------------------------- apply
@pytest.mark.parametrize(
    ("name", "fit_args"),
    [
        ("folder", ("--estimator", "PLSI")),
        # (Each a few seconds of subprocesses: .ci/run runs them.)
        pytest.param("news.csv", ("--estimator", "KLNMF"), marks=pytest.mark.slow),
        pytest.param(
            "news.tsv",
            ("--estimator", "LDAVI", "--max-iter", "20"),
            marks=pytest.mark.slow,
        ),
    ],
)
def test_apply_reproduces_the_fitting_csv_exactly(news_dir, tmp_path, name, fit_args):
    fitted, applied = tmp_path / "fit.csv", tmp_path / "apply.csv"
    model = tmp_path / "model.skops"
    corpus = str(news_dir / name)
    result = _run_cli(
        corpus, *fit_args, "--doc-topics", str(fitted), "--save-model", str(model)
    )
    assert result.returncode == 0, result.stderr
    result = _run_cli("apply", str(model), corpus, "--doc-topics", str(applied))
    assert result.returncode == 0, result.stderr
    assert f"document-topic matrix written to {applied}" in result.stdout
    assert applied.read_bytes() == fitted.read_bytes()
    table = pd.read_csv(applied)
    assert len(table) == 45
    np.testing.assert_allclose(table.iloc[:, 1:].sum(axis=1), 1, rtol=1e-5)

    # The numbers are the reloaded pipeline's public topic proportions.
    pipe = sklearn_topicfac.load(model)
    docs = pd.read_csv(news_dir / "news.csv")["text"] if name == "news.csv" else None
    if docs is not None:
        theta = pipe[-1].topic_proportions(pipe[:-1].transform(docs))
        np.testing.assert_allclose(table.iloc[:, 1:], theta, rtol=1e-5, atol=1e-6)


def test_apply_to_a_count_matrix_with_dropped_columns(tmp_path, capsys):
    # The saved model selects the kept columns itself, so the full matrix
    # can be given to apply.
    fitted, applied = tmp_path / "fit.csv", tmp_path / "apply.csv"
    model = tmp_path / "model.skops"
    args = ("--max-iter", "20", "--max-features", "3000", "--doc-topics", str(fitted))
    status, out, err = _run_main(capsys, *args, "--save-model", str(model))
    assert status == 0, err
    (n_terms,) = re.findall(r"3891 documents x (\d+) terms", out)
    assert int(n_terms) == 3000  # columns were dropped beyond the stop words
    selection, estimator = sklearn_topicfac.load(model)
    assert estimator.components_.shape[1] == int(n_terms)
    status, out, err = _run_main(
        capsys, "apply", str(model), "--doc-topics", str(applied)
    )
    assert status == 0, err
    assert applied.read_bytes() == fitted.read_bytes()


def test_apply_bad_model_fails_with_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.joblib"
    bad.write_text("not a model")
    for path, message in (
        (tmp_path / "none.joblib", "no such model file"),
        (bad, "is not a model"),
    ):
        status, _, err = _run_main(capsys, "apply", str(path), "--doc-topics", "x.csv")
        assert status == 1
        (line,) = err.strip().splitlines()
        assert line.startswith("topicfac apply: error: ") and message in line
    status, _, err = _run_main(capsys, "apply", str(bad))
    assert status == 2 and "--doc-topics" in err


# ----------------------------------------------------------------- encoding
def test_latin1_input_needs_the_encoding_option(tmp_path, capsys):
    folder = tmp_path / "latin"
    for label, words in (
        ("food", "café crème gâteau pâté"),
        ("snow", "ski neige piste froid"),
    ):
        (folder / label).mkdir(parents=True)
        for i in range(6):
            (folder / label / f"{i}.txt").write_bytes(
                f"{words} {words}".encode("latin-1")
            )
    status, out, err = _run_main(capsys, str(folder))
    assert status == 1 and out.count("topic 0:") == 0
    (line,) = err.strip().splitlines()
    assert "food/0.txt" in line and "not valid utf-8" in line
    assert "--encoding latin-1" in line

    status, out, err = _run_main(capsys, str(folder), "--encoding", "latin-1")
    assert status == 0, err
    words = {w for _, terms in TOPIC_LINE.findall(out) for w in terms.split()}
    assert {"café", "crème", "gâteau", "pâté"} <= words

    status, _, err = _run_main(capsys, str(folder), "--encoding", "no-such-codec")
    assert status == 1 and "unknown --encoding 'no-such-codec'" in err


# ------------------------------------------------------ header and report
def _bar_and_header(capsys, estimator, *args):
    status, out, err = _run_main(
        capsys, "--estimator", estimator, "--max-iter", "4", "--progress", *args
    )
    assert status == 0, err
    (bar,) = re.findall(
        rf"\[{estimator}\] \[#+\] (\d+) iterations in (\d+) runs? +[\d.]+ s\n", err
    )
    (header,) = re.findall(
        rf"^{estimator} with \d+ topics, max_iter=4, .*: fitted in [\d.]+ s, (\d+) "
        r"iterations in (\d+) runs? \(n_iter_=(\d+): the fit kept\)$",
        out,
        re.M,
    )
    return [int(v) for v in bar], [int(v) for v in header]


def test_fit_header_agrees_with_the_progress_bar(capsys):
    # One count: the bar's last line and the header give the same
    # iterations and runs; n_iter_ is the part of them of the fit kept.  At
    # the defaults (CVB0: three starts of at most 4 sweeps, the kept one run
    # on to 12) that is its start's sweeps and the run on.
    bar, (count, runs, n_iter) = _bar_and_header(capsys, "LDAVI")
    assert bar == [count, runs]
    assert runs in (3, 4) and 1 <= n_iter <= 12 and n_iter < count <= 20


def test_one_run_counts_n_iter_exactly(capsys):
    # SimplexPLSA's PLSA step: one run, no moves: the count is n_iter_.
    bar, (count, runs, n_iter) = _bar_and_header(capsys, "SimplexPLSA", "-k", "3")
    assert bar == [count, runs] == [n_iter, 1]
    assert n_iter == 4


def test_report_option_writes_the_html(news_dir, tmp_path):
    report = tmp_path / "news.html"
    result = _run_cli(str(news_dir / "news.csv"), "--report", str(report))
    assert result.returncode == 0, result.stderr
    assert f"report written to {report}" in result.stdout
    page = report.read_text(encoding="utf-8")
    assert page.count("class='topic-card'") == 3
    assert page.count("class='doc'") == 45
    assert "data-label='weather'" in page
    assert "stability" not in page


def test_stability_option_shows_each_topics_stability(news_dir, tmp_path):
    # --stability N refits N times and puts each topic's score on its card,
    # the same scores as inspection.topic_stability gives.
    report = tmp_path / "news.html"
    result = _run_cli(
        str(news_dir / "news.csv"), "--report", str(report), "--stability", "2"
    )
    assert result.returncode == 0, result.stderr
    (line,) = [ln for ln in result.stdout.splitlines() if "topic stability" in ln]
    scores = [float(part.split(":")[1]) for part in line.split("refits: ")[1].split()]
    assert len(scores) == 3 and all(0 <= s <= 1 for s in scores)
    page = report.read_text(encoding="utf-8")
    shown = re.findall(r"stability (\d\.\d\d)</p>", page)
    assert [float(s) for s in shown] == scores


# ------------------------------------------------- input checked before work
@pytest.fixture(scope="module")
def mistakes_dir(tmp_path_factory):
    """Inputs a user gets wrong: a TSV and a CSV of three columns, a text file."""
    root = tmp_path_factory.mktemp("mistakes")
    rows = [("sports", d) for d in _texts(SPORTS, 6, 0)]
    rows += [("money", d) for d in _texts(MONEY, 6, 1)]
    with open(root / "news.tsv", "w") as fh:
        fh.write("id\tlabel\ttext\n")
        fh.writelines(
            f"{i}\t{lab}\t{doc}, with a comma\n" for i, (lab, doc) in enumerate(rows)
        )
    with open(root / "news.csv", "w") as fh:
        fh.write("id,label,text\n")
        fh.writelines(f'{i},{lab},"{doc}"\n' for i, (lab, doc) in enumerate(rows))
    (root / "notes.txt").write_text("This is not a MATLAB file.\n" * 20)
    return root


def _one_line_error(result, *fragments):
    assert result.returncode == 1, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("topicfac: error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    # Refused before any work: no fit header.
    assert "fitted in" not in result.stdout


def _slow_unless(case_id, fast, *values):
    marks = () if case_id in fast else (pytest.mark.slow,)
    return pytest.param(*values, id=case_id, marks=marks)


# One subprocess each (a second or more): the README's test command runs one,
# CI all; the same cases run in this process below.
FAST_MISTAKES = ("k>docs",)


MISTAKES = [
    _slow_unless(
        "k>docs",
        FAST_MISTAKES,
        ("{root}/news.tsv", "-k", "13"),
        ("-k 13 exceeds the corpus's 12 documents", "pass -k 12 or less"),
    ),
    _slow_unless(
        "k>docs-and-terms",
        FAST_MISTAKES,
        ("{root}/news.tsv", "-k", "40", "--max-features", "30"),
        ("-k 40 exceeds the corpus's 12 documents", "pass -k 12 or less"),
    ),
    _slow_unless(
        "k>terms",
        FAST_MISTAKES,
        ("{root}/news.tsv", "-k", "5", "--max-features", "4"),
        ("-k 5 exceeds the corpus's 4 terms", "pass -k 4 or less"),
    ),
    _slow_unless(
        "csv-on-tsv",
        FAST_MISTAKES,
        ("{root}/news.tsv", "--format", "csv"),
        ("one column with --format csv but 3 tab-separated", "--format tsv"),
    ),
    _slow_unless(
        "tsv-on-csv",
        FAST_MISTAKES,
        ("{root}/news.csv", "--format", "tsv"),
        ("one column with --format tsv but 3 comma-separated", "--format csv"),
    ),
    _slow_unless(
        "mat-on-text",
        FAST_MISTAKES,
        ("{root}/notes.txt", "--format", "mat"),
        ("notes.txt is not a MATLAB .mat file", "--format"),
    ),
    _slow_unless(
        "simplex-on-text",
        FAST_MISTAKES,
        ("{root}/news.tsv", "--estimator", "SimplexPLSA", "-k", "2"),
        ("SimplexPLSA encloses real-valued data", "choose another --estimator"),
    ),
]


@pytest.mark.parametrize(("args", "fragments"), MISTAKES)
def test_input_mistakes_are_one_line_errors_before_work(mistakes_dir, args, fragments):
    result = _run_cli(*[a.format(root=mistakes_dir) for a in args])
    _one_line_error(result, *fragments)
    assert "Unknown mat file type" not in result.stderr


@pytest.mark.parametrize(("args", "fragments"), [p.values for p in MISTAKES])
def test_input_mistakes_in_process(mistakes_dir, capsys, args, fragments):
    status, out, err = _run_main(capsys, *[a.format(root=mistakes_dir) for a in args])
    _one_line_error(subprocess.CompletedProcess(args, status, out, err), *fragments)


def test_a_fit_beyond_the_available_memory_is_refused_in_process(
    mistakes_dir, capsys, monkeypatch
):
    monkeypatch.setattr(
        sklearn_topicfac.cli.commands, "available_memory", lambda: 10**4
    )
    status, out, err = _run_main(capsys, str(mistakes_dir / "news.tsv"), "-k", "10")
    _one_line_error(
        subprocess.CompletedProcess([], status, out, err),
        "-k 10 on 12 documents x ",
        "than the 10.0 kB available",
    )


@pytest.mark.slow
def test_a_fit_beyond_the_available_memory_is_refused(mistakes_dir):
    # This machine's memory, as the command sees it, shrunk to 10 kB.
    code = (
        "import sys, sklearn_topicfac.cli as cli; "
        "cli.commands.available_memory = lambda: 10**4; "
        "sys.exit(cli.main(sys.argv[1:]))"
    )
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    result = subprocess.run(
        [sys.executable, "-c", code, str(mistakes_dir / "news.tsv"), "-k", "10"],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO_ROOT,
        timeout=600,
    )
    _one_line_error(result, "-k 10 on 12 documents x ", "than the 10.0 kB available")


def test_a_closed_stdout_ends_quietly(mistakes_dir):
    # `topicfac ... | head -2` with head already gone: the reader closes the
    # pipe before the command writes.
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sklearn_topicfac",
            str(mistakes_dir / "news.tsv"),
            "-k",
            "2",
            "--max-iter",
            "5",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=REPO_ROOT,
    )
    proc.stdout.close()
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert err.decode() == ""


def test_header_and_bar_resolve_max_iter_auto(capsys):
    # KLNMF's default max_iter="auto" is a number for the fit (1000 for the
    # diagonal Newton iterations the suite's NumPy backend runs): the bar
    # counts up to it and the header gives both.
    status, out, err = _run_main(
        capsys, "--estimator", "KLNMF", "-k", "3", "--progress"
    )
    assert status == 0, err
    (n_iter,) = re.findall(
        r"^KLNMF with 3 topics, max_iter=auto \(1000\), "
        r".* \(n_iter_=(\d+): the fit kept\)$",
        out,
        re.M,
    )
    assert 1 <= int(n_iter) <= 1000
    assert re.search(r"\[KLNMF\] \[#+\] \d+ iterations in 1 run ", err)
