"""The ``topicfac`` command with files it did not write: models and outputs.

Each case runs the command as a subprocess on a small corpus: model files
that would run code are refused, outputs never replace an input, another
output, anything but a regular file or (without ``--force``) an existing
file, never go through a symbolic link, are checked (folder writable, name
storable) before the input is read and written atomically; a corpus folder
reads nothing through links out of it; CSV cells cannot be formulas; tables
and .mat files that would be misread are refused with the fix; no message
puts a control character of a file name or cell on the terminal.
"""

import csv
import errno
import os
import pickle
import socket
import stat
import subprocess
import sys
from pathlib import Path

import joblib
import numpy as np
import pytest
import scipy.io
from _hostile import PAYLOAD_MODULE

import sklearn_topicfac
from sklearn_topicfac.cli import main, outputs
from sklearn_topicfac.cli.options import _printable

REPO_ROOT = Path(__file__).resolve().parents[1]
SPORTS = "goal match league cup striker referee"
MONEY = "bank stock bond market dividend loan"


def _subprocess(args, extra_path=None, code=None):
    """Run ``python -m sklearn_topicfac ARGS`` (or ``python -c CODE ARGS``)."""
    env = dict(os.environ)
    paths = [str(REPO_ROOT), extra_path, env.get("PYTHONPATH")]
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in paths if p)
    command = ["-m", "sklearn_topicfac"] if code is None else ["-c", code]
    return subprocess.run(
        [sys.executable, *command, *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO_ROOT,
        timeout=300,
    )


def _in_process(args, capsys):
    try:
        status = main([str(a) for a in args])
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(args, status, out, err)


@pytest.fixture(params=["main", pytest.param("subprocess", marks=pytest.mark.slow)])
def topicfac(request, capsys, monkeypatch):
    """The command, run by ``main`` here or as a subprocess (slow: ~2 s each).

    ``topicfac(*args, extra_path=None, failing_writer=None)``: ``extra_path``
    goes on the module path; ``failing_writer`` is an exception the CSV
    writer raises after writing part of the file.
    """

    def run(*args, extra_path=None, failing_writer=None):
        if request.param == "subprocess":
            code = None
            if failing_writer is not None:
                code = FAILING_WRITER.format(error=failing_writer)
            return _subprocess(args, extra_path, code)
        if extra_path is not None:
            monkeypatch.syspath_prepend(str(extra_path))
        with monkeypatch.context() as patch:
            if failing_writer is not None:
                patch.setattr(outputs, "_write_csv", _failing_writer(failing_writer))
            return _in_process(args, capsys)

    return run


FAILING_WRITER = """
import sys
from sklearn_topicfac import cli

def failing(path, header, rows):
    with open(path, "w") as fh:
        fh.write("document,topic0\\n1,0.5\\n")
    raise {error}

cli.outputs._write_csv = failing
sys.exit(cli.main(sys.argv[1:]))
"""


# The failures of the interrupted-write test: as code for the subprocess, and
# as the exception raised here.
_ERRORS = {
    "OSError(28, 'No space left on device')": lambda: OSError(
        28, "No space left on device"
    ),
    "KeyboardInterrupt()": KeyboardInterrupt,
}


def _failing_writer(error):
    def failing(path, header, rows):
        with open(path, "w") as fh:
            fh.write("document,topic0\n1,0.5\n")
        raise _ERRORS[error]()

    return failing


def _refused(result, *words):
    assert result.returncode == 1, result.stdout + result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert "error: " in line and "Traceback" not in result.stderr
    for word in words:
        assert word in line, line
    # Refused before reading the corpus or fitting:
    assert "documents" not in result.stdout
    return line


# A short fit of two topics, the options of every run on a small corpus.
_FIT = ("-k", "2", "--max-iter", "5", "--estimator", "PLSI", "--stop-words", "none")


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A folder corpus of two vocabularies and a model fitted on it."""
    root = tmp_path_factory.mktemp("cli_safety")
    corpus = root / "corpus"
    corpus.mkdir()
    for i in range(8):
        (corpus / f"s{i}.txt").write_text(f"{SPORTS} {SPORTS.split()[i % 6]}")
        (corpus / f"m{i}.txt").write_text(f"{MONEY} {MONEY.split()[i % 6]}")
    model, theta = root / "model.skops", root / "theta.csv"
    fit = ["-k", "2", "--max-iter", "5", "--estimator", "PLSI"]
    assert main([str(corpus), *fit, "--save-model", str(model)]) == 0
    assert main(["apply", str(model), str(corpus), "--doc-topics", str(theta)]) == 0
    return dict(root=root, corpus=corpus, model=model, theta=theta, fit=fit)


# ---------------------------------------------------------------- models


def test_apply_refuses_model_files_that_would_run_code(
    topicfac, work, tmp_path, monkeypatch
):
    import skops.io

    (tmp_path / "payload_module.py").write_text(PAYLOAD_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import payload_module

    marker = tmp_path / "marker"
    model = sklearn_topicfac.load(work["model"])
    model[-1].extra_ = payload_module.Payload(str(marker))
    evil_skops = tmp_path / "evil.skops"
    skops.io.dump(model, evil_skops)
    evil_pickle = tmp_path / "evil.joblib"
    joblib.dump(payload_module.Payload(str(marker)), evil_pickle)
    sys.modules.pop("payload_module", None)
    joblib.load(evil_pickle)  # what the pickle does when it is loaded
    assert marker.exists()
    marker.unlink()

    out = tmp_path / "out.csv"
    for path, words in (
        (evil_skops, ("payload_module.Payload", "not loaded")),
        (evil_pickle, ("is a pickle", "--trust-pickle", "can run any code")),
    ):
        result = topicfac(
            "apply", path, work["corpus"], "--doc-topics", out, extra_path=tmp_path
        )
        _refused(result, str(path), *words)
        assert not marker.exists() and not out.exists()


def _legacy_pickle(model, path):
    """``model`` pickled as topicfac --save-model did before the restructuring.

    (Protocol 2 names classes as lines of text, so the old module path can
    be written in place of the new one.)
    """
    data = pickle.dumps(model, protocol=2)
    assert b"sklearn_topicfac.estimators.plsi\n" in data
    path.write_bytes(
        data.replace(b"sklearn_topicfac.estimators.plsi\n", b"sklearn_topicfac._plsi\n")
    )
    return path


def test_apply_loads_an_old_pickled_model_only_with_trust_pickle(
    topicfac, work, tmp_path
):
    old = _legacy_pickle(sklearn_topicfac.load(work["model"]), tmp_path / "old.joblib")
    out = tmp_path / "out.csv"
    result = topicfac("apply", old, work["corpus"], "--doc-topics", out)
    line = _refused(result, "is a pickle", "--trust-pickle")
    assert "not a model saved by" not in line
    result = topicfac(
        "apply", old, work["corpus"], "--doc-topics", out, "--trust-pickle"
    )
    assert result.returncode == 0, result.stderr
    assert out.read_bytes() == work["theta"].read_bytes()


def test_help_says_why_pickles_need_trust_pickle(topicfac):
    result = topicfac("apply", "--help")
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    assert "--trust-pickle" in text and "can run any code" in text
    assert "skops" in text


# --------------------------------------------------------------- outputs
@pytest.mark.parametrize("option", ["--doc-topics", "--save-model", "--report"])
def test_an_existing_output_is_refused_without_force(topicfac, work, tmp_path, option):
    target = tmp_path / "existing"
    target.write_text("precious")
    result = topicfac(work["corpus"], *work["fit"], option, target)
    _refused(result, option, str(target), "exists", "--force")
    assert target.read_text() == "precious"


def test_force_replaces_existing_outputs(topicfac, work, tmp_path):
    outputs = {
        "--doc-topics": tmp_path / "theta.csv",
        "--save-model": tmp_path / "model.skops",
        "--report": tmp_path / "report.html",
    }
    for path in outputs.values():
        path.write_text("old")
    args = [a for option, path in outputs.items() for a in (option, path)]
    result = topicfac(work["corpus"], *work["fit"], *args, "--force")
    assert result.returncode == 0, result.stderr
    assert outputs["--doc-topics"].read_bytes() == work["theta"].read_bytes()
    assert sklearn_topicfac.load(outputs["--save-model"])[-1].n_components == 2
    assert outputs["--report"].read_text().startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        p.name for p in outputs.values()
    )  # no temporary file left


@pytest.mark.parametrize(
    "case", ["corpus file", "model", "two options", "in corpus folder"]
)
def test_an_output_never_replaces_an_input_or_another_output(
    topicfac, work, tmp_path, case
):
    docs = tmp_path / "docs.csv"
    docs.write_text("text\n" + "\n".join([SPORTS, MONEY] * 4) + "\n")
    kept = {p: p.read_bytes() for p in (docs, work["model"])}
    if case == "corpus file":
        args = [docs, *work["fit"], "--doc-topics", docs]
        words = ("--doc-topics", "is the INPUT file")
    elif case == "model":
        args = ["apply", work["model"], docs, "--doc-topics", work["model"]]
        words = ("--doc-topics", "is the MODEL file")
    elif case == "two options":
        # The same file spelled two ways.
        other = tmp_path / "x" / ".." / "out.html"
        (tmp_path / "x").mkdir()
        args = [docs, *work["fit"], "--doc-topics", tmp_path / "out.html"]
        args += ["--report", other]
        words = ("--doc-topics and --report are the same file",)
    else:
        args = [work["corpus"], *work["fit"], "--doc-topics", work["corpus"] / "t.csv"]
        words = ("lies in the corpus folder",)
    _refused(topicfac(*args, "--force"), *words)
    assert {p: p.read_bytes() for p in kept} == kept
    assert not (tmp_path / "out.html").exists()
    assert not (work["corpus"] / "t.csv").exists()


@pytest.mark.parametrize("dangling", [False, True], ids=["existing", "dangling"])
def test_an_output_is_never_written_through_a_symbolic_link(
    topicfac, work, tmp_path, dangling
):
    target = tmp_path / "target.csv"
    if not dangling:
        target.write_text("precious")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    result = topicfac(
        "apply", work["model"], work["corpus"], "--doc-topics", link, "--force"
    )
    _refused(result, "--doc-topics", "symbolic link")
    assert link.is_symlink()
    assert target.read_text() == "precious" if not dangling else not target.exists()


def test_a_missing_output_folder_is_refused_before_fitting(topicfac, work, tmp_path):
    theta = tmp_path / "theta.csv"
    missing = tmp_path / "no_such_folder" / "model.skops"
    result = topicfac(
        work["corpus"], *work["fit"], "--doc-topics", theta, "--save-model", missing
    )
    _refused(result, "--save-model", "no such folder", "no_such_folder")
    assert not theta.exists()  # no output written before the refusal


def _special_file(kind, folder):
    """A FIFO, socket or character device named ``kind`` in ``folder``."""
    path = folder / kind.replace(" ", "_")
    if kind == "FIFO":
        os.mkfifo(path)
    elif kind == "socket":
        if len(os.fsencode(path)) >= 100:  # the limit of AF_UNIX addresses
            pytest.skip("the temporary folder's path is too long for a socket")
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind(str(path))
    else:
        try:  # the device /dev/null is, made here: a failure leaves it alone
            os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))
        except PermissionError:
            path = Path(os.devnull)  # not root: /dev/null cannot be replaced
    return path


@pytest.mark.parametrize(
    ("kind", "option"),
    [
        ("FIFO", "--doc-topics"),
        ("socket", "--save-model"),
        ("character device", "--report"),
        ("character device", "apply"),
    ],
)
def test_force_replaces_only_a_regular_file(topicfac, work, tmp_path, kind, option):
    # Before: --force renamed a regular file over the FIFO, socket or device.
    path = _special_file(kind, tmp_path)
    before = os.stat(path)
    if option == "apply":
        option = "--doc-topics"
        args = ["apply", work["model"], work["corpus"], option, path, "--force"]
    else:
        args = [work["corpus"], *work["fit"], option, path, "--force"]
    _refused(
        topicfac(*args),
        f"{option} {path} is a {kind}",
        "not a regular file",
        "even with --force",
        f"leave out {option}",
    )
    after = os.stat(path)
    assert (after.st_mode, after.st_ino, after.st_rdev) == (
        before.st_mode,
        before.st_ino,
        before.st_rdev,
    )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")
def test_an_output_folder_nobody_can_write_is_refused_before_reading(topicfac, work):
    # Before: /proc passed as a folder, the fit ran, and the write failed.
    # No file can be made in /proc, not even by root (to whom os.access says
    # yes), so the folder is proven writable by making one.
    result = topicfac(
        work["corpus"], *work["fit"], "--report", "/proc/topicfac_report.html"
    )
    _refused(
        result,
        "--report /proc/topicfac_report.html",
        "cannot write to the folder /proc",
    )


@pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes anywhere"
)
def test_a_read_only_output_folder_is_refused_before_reading(topicfac, work, tmp_path):
    folder = tmp_path / "read_only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        result = topicfac(work["corpus"], *work["fit"], "--save-model", folder / "m")
    finally:
        folder.chmod(0o755)
    _refused(result, "--save-model", "cannot write to the folder", "permission denied")
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("refusal", ["os.access", "making a file"])
def test_the_output_folder_is_proven_writable(
    work, tmp_path, capsys, monkeypatch, refusal
):
    # In this process, the two tests of a folder, each failing in turn:
    # os.access (the answer to a user) and making a file in it (the proof
    # for root, to whom os.access says yes whatever the permissions).
    folder = tmp_path / "out"
    folder.mkdir()
    if refusal == "os.access":
        access = os.access
        monkeypatch.setattr(
            outputs.os, "access", lambda p, mode: Path(p) != folder and access(p, mode)
        )
        words = ("permission denied",)
    else:

        def read_only(*args, **kwargs):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS))

        monkeypatch.setattr(outputs.tempfile, "NamedTemporaryFile", read_only)
        words = (os.strerror(errno.EROFS),)
    result = _in_process(
        [work["corpus"], *work["fit"], "--doc-topics", folder / "theta.csv"], capsys
    )
    _refused(
        result,
        f"--doc-topics {folder / 'theta.csv'}: cannot write to the folder {folder}",
        *words,
        "choose a folder you can write to",
    )
    assert list(folder.iterdir()) == []


def test_an_output_name_the_file_system_cannot_store_is_refused(work, tmp_path, capsys):
    # A lone surrogate has no UTF-8 bytes: before, every test of the path
    # said "does not exist", the fit ran and the write failed after it.
    # (In this process only: a subprocess's arguments cannot hold one.)
    if sys.getfilesystemencoding().lower() not in ("utf-8", "utf8"):
        pytest.skip("the file system encoding is not UTF-8")
    name = tmp_path / "model\ud800.skops"
    result = _in_process([work["corpus"], *work["fit"], "--save-model", name], capsys)
    _refused(
        result,
        f"--save-model {tmp_path}/model\\ud800.skops",
        "the file system cannot store this name",
        "character \\ud800 at position",
        "give a name without it",
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("error", "status"),
    [(error, status) for error, status in zip(_ERRORS, (1, 130), strict=True)],
)
def test_an_interrupted_write_leaves_the_old_file(
    topicfac, work, tmp_path, error, status
):
    out = tmp_path / "theta.csv"
    out.write_text("the old file\n")
    args = ["apply", work["model"], work["corpus"], "--doc-topics", out, "--force"]
    result = topicfac(*args, failing_writer=error)
    assert result.returncode == status, result.stderr
    assert out.read_text() == "the old file\n"
    assert [p.name for p in tmp_path.iterdir()] == ["theta.csv"]  # no temp file
    # The same run without the failure replaces it.
    assert topicfac(*args).returncode == 0
    assert out.read_bytes() == work["theta"].read_bytes()


# ------------------------------------------------------------------ input
def test_folder_links_out_are_skipped_and_formula_cells_escaped(topicfac, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    names = ["=1+1", "+cmd", "-2", "@sum", "\tx", "\ry", "plain"]
    for i, name in enumerate(names):
        (corpus / f"{name}.txt").write_text([SPORTS, MONEY][i % 2])
    (corpus / "m2.txt").write_text(MONEY)
    outside = tmp_path / "outside"
    (outside / "more").mkdir(parents=True)
    (outside / "secret.txt").write_text("password hunter")
    (outside / "more" / "a.txt").write_text("password hunter")
    (corpus / "secret.txt").symlink_to(outside / "secret.txt")
    (corpus / "more").symlink_to(outside / "more", target_is_directory=True)
    (corpus / "again.txt").symlink_to(corpus / "plain.txt")  # inside: read
    theta = tmp_path / "theta.csv"
    result = topicfac(
        corpus, "-k", "2", "--max-iter", "5", "--stop-words", "none", "--max-df", "1.0",
        "--doc-topics", theta,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "skipped 2 symbolic link(s)" in result.stderr
    assert "9 documents x 12 terms" in result.stdout  # no password, no hunter
    with open(theta, newline="", encoding="utf-8") as fh:
        ids = [row[0] for row in csv.reader(fh)][1:]
    assert sorted(ids) == sorted(
        [f"'{name}.txt" for name in names[:-1]] + ["plain.txt", "m2.txt", "again.txt"]
    )


# A two-column table the fixture's corpus fits: sports and money documents.
_ROWS = [(SPORTS, "sports"), (MONEY, "money")] * 4


def _table(path, header, rows, encoding="utf-8"):
    path.write_bytes(
        (header + "\n" + "".join(f"{a},{b}\n" for a, b in rows)).encode(encoding)
    )
    return path


def test_a_utf8_byte_order_mark_is_read_as_no_part_of_the_table(topicfac, tmp_path):
    # Before: the mark glued to the first column's name ("\ufeffbody"), so
    # --text-column body failed with "no text column 'body'", and the
    # "which column holds the text?" hint listed a name no option could give.
    table = _table(tmp_path / "excel.csv", "body,label", _ROWS, "utf-8-sig")
    assert table.read_bytes().startswith(b"\xef\xbb\xbfbody,")
    result = topicfac(table, *_FIT, "--text-column", "body")
    assert result.returncode == 0, result.stderr
    assert "8 documents x 12 terms" in result.stdout
    assert "classes money, sports" in result.stdout
    # Read in another encoding, the mark is letters: the fix, not a puzzle.
    result = topicfac(table, *_FIT, "--text-column", "body", "--encoding", "latin-1")
    _refused(
        result,
        "starts with a UTF-8 byte-order mark",
        "--encoding latin-1",
        "'ï»¿body'",
        "pass --encoding utf-8",
    )
    result = topicfac(table, *_FIT, "--encoding", "ascii")
    _refused(result, "byte 0xef at offset 0", "byte-order mark: --encoding utf-8")


def test_a_table_with_two_columns_of_one_name_is_refused(topicfac, tmp_path):
    # Before: a row kept the last "text" cell only, and the fit ran on it.
    table = _table(tmp_path / "twice.csv", "text,label,text", [(SPORTS, "a,b")] * 4)
    _refused(
        topicfac(table, *_FIT),
        "twice.csv: the header names the column 'text' 2 times",
        "(columns: text, label, text)",
        "give each column its own name",
    )


@pytest.mark.parametrize(
    ("delimiter", "rows", "words"),
    [
        (
            ",",
            ["goal match,sports", "", "bank, stock,money"],
            (
                "line 4 has 3 fields but the header has 2 columns",
                'a cell that holds a comma in double quotes ("a, b")',
            ),
        ),
        (
            ",",
            ['"goal\nmatch",sports', "bank stock"],
            (
                "line 4 has 1 field but the header has 2 columns",
                "nothing between two commas",
            ),
        ),
        (
            "\t",
            ["goal match\tsports", "bank\tstock\tmoney"],
            ("line 3 has 3 fields", "a cell that holds a tab in double quotes"),
        ),
    ],
    ids=["more fields", "fewer fields", "tsv"],
)
def test_a_row_with_more_or_fewer_fields_than_columns_is_refused(
    topicfac, tmp_path, delimiter, rows, words
):
    # Before: the extra fields were dropped (the text cut at an unquoted
    # comma) and missing ones read as empty, and the fit ran.
    path = tmp_path / ("ragged.csv" if delimiter == "," else "ragged.tsv")
    path.write_text(f"text{delimiter}label\n" + "\n".join(rows) + "\n")
    _refused(topicfac(path, *_FIT), *words, "give every row one field per column")


@pytest.mark.parametrize("problem", ["infinity", "NaN", "complex"])
def test_a_mat_file_of_no_finite_real_counts_is_refused(topicfac, tmp_path, problem):
    # Before: "OverflowError: cannot convert float infinity to integer", a
    # NaN's RuntimeWarning and ValueError, and complex values silently cut
    # to their real parts.
    counts = np.tile([[2.0, 1, 0, 0], [0, 0, 1, 3]], (4, 1))
    fea = counts.astype(complex) if problem == "complex" else counts.copy()
    fea[3, 1] = {"infinity": np.inf, "NaN": np.nan, "complex": 1 + 1j}[problem]
    path = tmp_path / "corpus.mat"
    scipy.io.savemat(path, {"fea": fea, "gnd": np.tile([1, 2], 4)})
    words = {
        "infinity": ("1 infinite or NaN value(s)", "inf, at document 4, term 2"),
        "NaN": ("1 infinite or NaN value(s)", "nan, at document 4, term 2"),
        "complex": ("1 complex value(s)", "(1+1j), at document 4, term 2"),
    }[problem]
    line = _refused(topicfac(path, *_FIT), str(path), *words)
    assert "Error:" not in line  # ValueError's message, no exception name


def test_no_message_puts_a_control_character_on_the_terminal(topicfac, tmp_path):
    # Before: the ESC of a file name or a header cell went to stderr as it
    # was, and the terminal turned the rest of the line red.
    red = "\x1b[31m"
    existing = tmp_path / f"{red}theta.csv"
    existing.write_text("old")
    table = _table(tmp_path / "docs.csv", f"{red}body,label", _ROWS)
    for args, words in (
        ((table, *_FIT, "--doc-topics", existing), ("\\x1b[31mtheta.csv exists",)),
        ((table, *_FIT), ("(columns: \\x1b[31mbody, label)",)),
        (
            (tmp_path / f"no{red}such.csv",),
            (f"no such file or folder: {tmp_path}/no\\x1b[31msuch.csv",),
        ),
    ):
        result = topicfac(*args)
        _refused(result, *words)
        assert "\x1b" not in result.stderr
    result = topicfac(f"--bad{red}option")
    assert result.returncode == 2
    assert "\x1b" not in result.stderr and "--bad\\x1b[31moption" in result.stderr


def test_printable_escapes_control_and_invisible_characters():
    assert _printable("plain text, ünïcode and a \\ backslash") == (
        "plain text, ünïcode and a \\ backslash"
    )
    assert _printable("\x1b[31m\ttab\nline\x7f\x85") == (
        "\\x1b[31m\\x09tab\\x0aline\\x7f\\x85"
    )
    assert _printable("\ufeffbom\u202eevil\ud800\U000e0001") == (
        "\\ufeffbom\\u202eevil\\ud800\\U000e0001"
    )
