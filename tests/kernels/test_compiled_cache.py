"""The record of compiled twins that lets ``backend="auto"`` use numba without
ever compiling (`kernels._compiled_cache`, `compile_kernels`), and
``topicfac compile``."""

import json
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest
import scipy.sparse as sp

import sklearn_topicfac as tf
from sklearn_topicfac import _config
from sklearn_topicfac.cli import main
from sklearn_topicfac.kernels import _compiled_cache
from sklearn_topicfac.out_of_core import Blocks


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    _compiled_cache.forget()
    yield tmp_path
    _compiled_cache.forget()


@pytest.fixture
def twin_files(tmp_path):
    """Two (index, source) pairs standing for numba's cache files."""
    pairs = []
    for name in ("a", "b"):
        index, source = tmp_path / f"{name}.nbi", tmp_path / f"{name}.py"
        index.write_bytes(b"index")
        source.write_text("def f(): pass\n")
        pairs.append((index, source))
    return pairs


def test_no_record_is_not_ready(cache_home):
    assert not _compiled_cache.record_path().exists()
    assert not _compiled_cache.ready()


def test_a_written_record_is_ready(cache_home, twin_files):
    path = _compiled_cache.write_record(twin_files)
    assert path == _compiled_cache.record_path()
    assert str(path).startswith(str(cache_home / "cache" / "sklearn-topicfac"))
    assert _compiled_cache.ready()


def test_the_record_depends_on_numbas_cache_folder(cache_home, monkeypatch):
    before = _compiled_cache.record_path()
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(cache_home / "elsewhere"))
    assert _compiled_cache.record_path() != before


def test_a_changed_source_is_not_ready(cache_home, twin_files):
    _compiled_cache.write_record(twin_files)
    source = twin_files[1][1]
    source.write_text("def f(): return 1\n")  # numba would recompile
    _compiled_cache.forget()
    assert not _compiled_cache.ready()


def test_a_missing_index_is_not_ready(cache_home, twin_files):
    _compiled_cache.write_record(twin_files)
    os.remove(twin_files[0][0])  # numba's cache cleared
    _compiled_cache.forget()
    assert not _compiled_cache.ready()


def _rewrite(change):
    path = _compiled_cache.record_path()
    record = json.loads(path.read_text())
    path.write_text(change(record))
    _compiled_cache.forget()


@pytest.mark.parametrize(
    "change",
    [
        lambda r: "{not json",
        lambda r: json.dumps([r]),
        lambda r: json.dumps({**r, "format": 99}),
        lambda r: json.dumps({**r, "numba": "0.0.1"}),
        lambda r: json.dumps({**r, "python": "2.7.18"}),
        lambda r: json.dumps({**r, "twins": []}),
        lambda r: json.dumps({**r, "twins": "all"}),
        lambda r: json.dumps({**r, "twins": [{"index": 1, "source": 2, "stamp": 3}]}),
        lambda r: json.dumps({**r, "twins": [{**r["twins"][0], "extra": 1}]}),
        lambda r: json.dumps({**r, "twins": [{**r["twins"][0], "source": "\0bad"}]}),
    ],
    ids=[
        "not-json",
        "not-a-dict",
        "format",
        "numba-version",
        "python-version",
        "no-twins",
        "twins-not-a-list",
        "wrong-types",
        "extra-key",
        "bad-path",
    ],
)
def test_a_record_of_another_form_is_not_ready(cache_home, twin_files, change):
    _compiled_cache.write_record(twin_files)
    assert _compiled_cache.ready()
    _rewrite(change)
    assert not _compiled_cache.ready()


def test_compile_kernels_without_numba_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(_config, "numba_available", lambda: False)
    with pytest.raises(ImportError, match=r"pip install .*\[fast\]"):
        tf.compile_kernels()


def test_topicfac_compile_runs_compile_kernels(monkeypatch, capsys):
    from sklearn_topicfac import _compile

    calls = []
    monkeypatch.setattr(
        _compile, "compile_kernels", lambda verbose: calls.append(verbose)
    )
    assert main(["compile", "--quiet"]) == 0
    assert main(["compile"]) == 0
    assert calls == [False, True]


def test_topicfac_compile_without_numba_is_one_line(monkeypatch, capsys):
    monkeypatch.setattr(_config, "numba_available", lambda: False)
    assert main(["compile"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install" in err[0]


_FIT_IN_A_FRESH_PROCESS = textwrap.dedent(
    """
    import sys
    import numpy as np
    import scipy.sparse as sp
    import sklearn_topicfac as tf
    from sklearn_topicfac.kernels import _backend

    X = sp.random(400, 300, density=0.2, format="csr", random_state=0)
    X.data = np.ceil(X.data * 5)
    k = _backend.AUTO_MIN_WORK // X.nnz + 1  # a large fit
    with tf.config_context(backend="auto"):
        tf.KLNMF(k, max_iter=2, random_state=0).fit(X)
    print("numba" in sys.modules)
    """
)


@pytest.mark.slow
@pytest.mark.skipif(not _config.numba_available(), reason="needs numba")
def test_auto_uses_numba_after_compile_kernels_and_never_before(tmp_path):
    """In fresh processes with an empty numba cache: a large ``"auto"`` fit
    runs NumPy (numba not even imported) until `compile_kernels` has run,
    then numba; clearing numba's cache sends it back to NumPy."""
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "NUMBA_CACHE_DIR": str(tmp_path / "numba"),
    }

    def run(code):
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True
        )
        assert out.returncode == 0, out.stderr
        return out.stdout.strip().splitlines()

    assert run(_FIT_IN_A_FRESH_PROCESS) == ["False"]
    summary = run(
        "import sklearn_topicfac as tf; print(tf.compile_kernels(verbose=False))"
    )
    assert "'kernels'" in summary[-1]
    assert run(_FIT_IN_A_FRESH_PROCESS) == ["True"]
    for root, _, files in os.walk(tmp_path / "numba"):
        for name in files:
            os.remove(os.path.join(root, name))
    assert run(_FIT_IN_A_FRESH_PROCESS) == ["False"]


@pytest.fixture
def loads(monkeypatch):
    """`_backend.preload` with numba and a ready record standing in: the
    threads that would import the compiled package."""
    from sklearn_topicfac.kernels import _backend

    threads = []
    monkeypatch.setattr(_config, "numba_available", lambda: True)
    monkeypatch.setattr(_compiled_cache, "ready", lambda: True)
    monkeypatch.setattr(_backend, "_COMPILED", "sklearn_topicfac_not_imported")
    monkeypatch.setattr(
        _backend,
        "compiled_package",
        lambda: threads.append(threading.current_thread()),
    )
    # (The tests run the NumPy backend unless they ask: conftest.)
    with tf.config_context(backend="auto"):
        yield threads


def test_preload_imports_the_twins_on_a_thread_when_a_fit_will_run_them(
    loads, monkeypatch
):
    """A fit's start loads the compiled twins in the background, but only
    when its kernel calls will run them: ``"auto"`` with every twin in
    numba's cache and work of at least `AUTO_MIN_WORK`, or ``"numba"``;
    never when ``"auto"`` would run NumPy (it never compiles) nor once
    the package is imported."""
    from sklearn_topicfac.kernels import _backend

    assert _backend.preload(_backend.AUTO_MIN_WORK - 1) is None
    with tf.config_context(backend="numpy"):
        assert _backend.preload(10**9) is None
    thread = _backend.preload(_backend.AUTO_MIN_WORK)
    thread.join(30)
    assert loads == [thread] and thread is not threading.main_thread()
    assert thread.daemon
    with tf.config_context(backend="numba"):
        _backend.preload(1).join(30)
    assert len(loads) == 2
    monkeypatch.setattr(_compiled_cache, "ready", lambda: False)
    assert _backend.preload(10**9) is None
    monkeypatch.setattr(_compiled_cache, "ready", lambda: True)
    monkeypatch.setattr(_backend, "_COMPILED", "sklearn_topicfac")
    assert _backend.preload(10**9) is None
    assert len(loads) == 2


def test_a_failed_preload_is_left_to_the_fit_to_raise(loads, monkeypatch):
    """An import that fails on the preload's thread raises nothing there
    (no one would see it): the fit's own first call of a twin imports the
    package again and raises."""
    from sklearn_topicfac.kernels import _backend

    def broken():
        raise ImportError("numba is broken")

    monkeypatch.setattr(_backend, "compiled_package", broken)
    escaped = []
    monkeypatch.setattr(threading, "excepthook", escaped.append)
    _backend.preload(10**9).join(30)
    assert escaped == []


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_in_memory_fits_preload_for_their_whole_matrix(monkeypatch):
    """The engine asks to preload with the work of a kernel call over all of
    X (stored entries times k) for a fit in memory; not for a block-wise
    fit (its calls see a block each) nor an online one (a batch each)."""
    from sklearn_topicfac.engine import fitting

    asked = []
    monkeypatch.setattr(fitting, "preload", asked.append)
    X = sp.random(60, 40, density=0.2, format="csr", random_state=0)
    X.data = np.ceil(X.data * 5)
    tf.KLNMF(3, max_iter=2, random_state=0).fit(X)
    tf.LDAVI(4, max_iter=2, random_state=0).fit(X.toarray())
    assert asked == [X.nnz * 3, X.nnz * 4]
    tf.KLNMF(3, max_iter=2, random_state=0).fit(Blocks(X, block_size=25))
    tf.LDAVI(4, learning_method="online", max_iter=2, random_state=0).fit(X)
    assert asked == [X.nnz * 3, X.nnz * 4]
