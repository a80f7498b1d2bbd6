"""Model files: ``sklearn_topicfac.save`` / ``load`` (skops) and legacy pickles."""

import gzip
import json
import os
import pickle
import sys
import warnings
import zipfile
from pathlib import Path

import joblib
import numpy as np
import pytest
import skops.io
from _corpora import planted_counts
from _estimators import REGISTRY, estimators_with
from _hostile import PAYLOAD_MODULE
from _hostile_models import rewritten
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.pipeline import make_pipeline

import sklearn_topicfac
from sklearn_topicfac import KLNMF, LDAVI, PLSI, load, save
from sklearn_topicfac._validation import data_fingerprint
from sklearn_topicfac.persistence import read_stamp

pytestmark = pytest.mark.filterwarnings(
    "ignore::sklearn.exceptions.ConvergenceWarning", "ignore::UserWarning"
)

DATA = Path(__file__).parent / "data"


def _fitted(spec):
    X = planted_counts(n=40, m=12, k=3, seed=0, sparse=False)
    params = dict(n_components=2, random_state=0)
    if spec.name == "SimplexPLSA":
        params["svd_components"] = 1
    return spec.make(**params).fit(X), X


@pytest.mark.parametrize("spec", REGISTRY, ids=lambda s: s.name)
def test_every_estimator_round_trips_bit_identically(spec, tmp_path):
    est, X = _fitted(spec)
    path = save(est, tmp_path / "model.skops")
    assert zipfile.is_zipfile(path)
    back = load(path)
    assert type(back) is type(est)
    assert back.get_params(deep=False).keys() == est.get_params(deep=False).keys()
    assert np.array_equal(back.components_, est.components_)
    assert np.array_equal(back.transform(X), est.transform(X))


@pytest.mark.parametrize("spec", estimators_with("partial_fit"))
def test_online_learning_continues_the_same_after_a_round_trip(spec, tmp_path):
    X = planted_counts(n=60, m=12, k=3, seed=1)
    est = spec.make(n_components=2, random_state=0).partial_fit(X[:30])
    back = load(save(est, tmp_path / "online.skops"))
    est.partial_fit(X[30:])
    back.partial_fit(X[30:])
    assert np.array_equal(back.components_, est.components_)


def test_the_cli_pipeline_round_trips_bit_identically(tmp_path):
    docs = ["goal match league cup"] * 6 + ["bank stock bond market"] * 6
    docs += ["goal bank", "match stock league bond"]
    pipe = make_pipeline(
        CountVectorizer(stop_words="english", max_df=0.9),
        KLNMF(n_components=2, random_state=0),
    ).fit(docs)
    back = load(save(pipe, tmp_path / "pipe.skops"))
    assert np.array_equal(back.transform(docs), pipe.transform(docs))
    assert back[0].vocabulary_ == pipe[0].vocabulary_


def test_the_file_records_the_version_that_wrote_it(tmp_path):
    path = save(PLSI(n_components=2).fit(np.eye(4) + 1), tmp_path / "m.skops")
    with zipfile.ZipFile(path) as archive:
        entry = json.loads(archive.read("sklearn_topicfac.json"))
    assert entry["version"] == sklearn_topicfac.__version__
    # And the stamp of what produced the model.
    assert entry["stamp"] == read_stamp(path)
    assert entry["stamp"]["estimator"] == "PLSI"
    assert entry["stamp"]["data_fingerprint"] == data_fingerprint(np.eye(4) + 1)
    assert (
        entry["stamp"]["versions"]["sklearn-topicfac"] == sklearn_topicfac.__version__
    )
    # skops itself still reads the file.
    assert isinstance(skops.io.load(path, trusted=[KLNMF, PLSI]), PLSI)


# ---------------------------------------------------------- hostile files


@pytest.fixture
def payload(tmp_path, monkeypatch):
    """A class that writes a marker file when it is rebuilt from a file."""
    (tmp_path / "payload_module.py").write_text(PAYLOAD_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import payload_module

    yield payload_module.Payload, tmp_path / "marker"
    sys.modules.pop("payload_module", None)


def test_a_skops_file_smuggling_os_system_is_refused(tmp_path):
    est = KLNMF(n_components=2, random_state=0).fit(np.eye(5) + 1)
    est.callback_ = os.system
    path = tmp_path / "evil.skops"
    skops.io.dump(est, path)
    with pytest.raises(ValueError, match=r"not loaded: posix\.system\.$"):
        load(path)


def test_a_skops_file_whose_loading_runs_code_is_refused(payload, tmp_path):
    Payload, marker = payload
    est = PLSI(n_components=2, random_state=0).fit(np.eye(5) + 1)
    est.extra_ = Payload(str(marker))
    path = tmp_path / "evil.skops"
    skops.io.dump(est, path)
    # What the file does when its types are trusted:
    skops.io.load(path, trusted=skops.io.get_untrusted_types(file=path))
    assert marker.read_text() == "ran"
    marker.unlink()

    with pytest.raises(ValueError, match=r"never holds.*: payload_module\.Payload"):
        load(path)
    with pytest.raises(ValueError, match=r"payload_module\.Payload"):
        load(path, trust_pickle=True)  # trusting pickles does not trust this
    assert not marker.exists()


def test_a_pickle_whose_loading_runs_code_is_refused(payload, tmp_path):
    Payload, marker = payload
    path = tmp_path / "evil.joblib"
    joblib.dump({"model": Payload(str(marker))}, path)
    joblib.load(path)  # what the file does when loaded as a pickle
    assert marker.exists()
    marker.unlink()

    with pytest.raises(ValueError, match=r"is a pickle.*can run any code"):
        load(path)
    assert not marker.exists()


def test_other_files_are_refused_with_what_they_are(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("x not a model")
    with pytest.raises(ValueError, match="is not a model file: neither a skops"):
        load(text, trust_pickle=True)
    broken = tmp_path / "broken.skops"
    broken.write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(ValueError, match="is not a readable skops file"):
        load(broken)
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "none.skops")


# ------------------------------------------------------- legacy pickles
@pytest.mark.parametrize(
    "compress", [0, 3, ("gzip", 3), ("bz2", 3), ("xz", 3), ("lzma", 3)]
)
def test_a_trusted_pickle_loads(tmp_path, compress):
    est = PLSI(n_components=2, random_state=0).fit(np.eye(6) + 1)
    path = tmp_path / "model.joblib"
    joblib.dump(est, path, compress=compress)
    with pytest.raises(ValueError, match="trust_pickle=True"):
        load(path)
    back = load(path, trust_pickle=True)
    assert np.array_equal(back.transform(np.eye(6)), est.transform(np.eye(6)))


def test_a_plain_pickle_loads_when_trusted(tmp_path):
    est = KLNMF(n_components=2, random_state=0).fit(np.eye(6) + 1)
    path = tmp_path / "model.pkl"
    path.write_bytes(pickle.dumps(est))
    assert np.array_equal(load(path, trust_pickle=True).components_, est.components_)


def test_models_pickled_before_the_restructuring_load_and_transform_the_same():
    # Written by topicfac 0.1.0.dev0 at the commit before the package was
    # reorganized (its estimators then lived in sklearn_topicfac._klnmf,
    # ._plsi, ._lda, ._joint, ._hybrid, ._simplex); see tests/data/README.md.
    path = DATA / "models_before_restructure.joblib"
    raw = path.read_bytes()
    assert b"sklearn_topicfac._klnmf" in raw and b"sklearn_topicfac._simplex" in raw
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn's version warning, if any
        saved = load(path, trust_pickle=True)
    assert sorted(saved["models"]) == sorted(spec.name for spec in REGISTRY)
    for name, model in saved["models"].items():
        assert type(model) is getattr(sklearn_topicfac, name)
        assert type(model).__module__.startswith("sklearn_topicfac.estimators.")
        params = model.get_params()  # every current parameter is set
        # The file predates `solver`: a refit runs the updates of its version
        # (multiplicative, EM), not today's default.
        for key, value in {
            "KLNMF": {"solver": "mu"},
            "NormalizedNMF": {"solver": "mu"},
            "PLSI": {"solver": "em"},
            "HybridNMFPLSI": {"nmf_solver": "mu", "plsi_solver": "em"},
            "LDAVI": {"inference": "vb"},
        }.get(name, {}).items():
            assert params[key] == value, (name, key)
        # The stored output was computed on another machine: exp, log and
        # digamma are NumPy/SciPy loops chosen by CPU feature, whose last bit
        # differs between CPUs (GammaPoissonVI: 2e-16 relative on an AMD EPYC
        # with AVX-512), so equal to rounding, not bit for bit.
        np.testing.assert_allclose(
            model.transform(saved["X_new"]),
            saved["transform"][name],
            rtol=1e-12,
            atol=1e-15,
            err_msg=name,
        )


def test_an_ldavi_file_from_before_inference_attribute_keeps_its_cvb0(tmp_path):
    # Saved when "auto" ran CVB0 and before the fitted inference_ existed
    # (tests/data/README.md): read as today's "auto" it would fold in by MAP
    # and transform differently (by up to 0.12 on this file).
    model = load(DATA / "ldavi_before_inference_attribute.skops")
    saved = np.load(DATA / "ldavi_before_inference_attribute.npz")
    assert model.inference == "auto" and model.inference_ == "cvb0"
    np.testing.assert_allclose(
        model.transform(saved["X_new"]), saved["transform"], rtol=1e-12, atol=1e-15
    )
    # A file of today records what ran, and the upgrade leaves it alone.
    X = np.random.default_rng(0).poisson(1.0, (24, 8))
    fitted = LDAVI(n_components=2, random_state=0, max_iter=20).fit(X)
    back = load(save(fitted, tmp_path / "today.skops"))
    assert fitted.inference_ == back.inference_ == "map"
    assert np.array_equal(back.transform(X), fitted.transform(X))


def _with_module_renamed(path, old, new, out):
    """A copy of a skops file naming module ``new`` for ``old``, saved by 9.9.9."""

    def rename(schema):
        assert schema["__module__"] == old
        schema["__module__"] = new
        return schema

    version = (json.dumps({"version": "9.9.9"}).encode(), zipfile.ZIP_STORED)
    return rewritten(path, out, rename, {"sklearn_topicfac.json": version})


def test_a_class_this_version_lacks_is_named_with_both_versions(tmp_path):
    path = save(KLNMF(n_components=2).fit(np.eye(4) + 1), tmp_path / "m.skops")
    moved = _with_module_renamed(
        path,
        "sklearn_topicfac.estimators.klnmf",
        "sklearn_topicfac.estimators.klnmf2",
        tmp_path / "moved.skops",
    )
    with pytest.raises(ValueError) as info:
        load(moved)
    message = str(info.value)
    assert "saved by sklearn-topicfac 9.9.9" in message
    assert f"installed sklearn-topicfac {sklearn_topicfac.__version__}" in message
    assert "sklearn_topicfac.estimators.klnmf2.KLNMF" in message


def test_a_pickle_naming_a_missing_module_names_the_versions(tmp_path):
    est = KLNMF(n_components=2).fit(np.eye(4) + 1)
    data = pickle.dumps(est, protocol=4)
    # (a name of the same length: the pickle stores its length)
    data = data.replace(b"estimators.klnmf", b"_gone_modules.km")
    path = tmp_path / "future.pkl"
    path.write_bytes(gzip.compress(data))
    with pytest.raises(ValueError) as info:
        load(path, trust_pickle=True)
    message = str(info.value)
    assert "sklearn_topicfac._gone_modules" in message
    assert f"installed sklearn-topicfac {sklearn_topicfac.__version__}" in message
    assert "version it does not record" in message


def test_a_skops_file_written_before_a_class_moved_loads_through_the_map(
    tmp_path, monkeypatch
):
    X = np.eye(4) + 1
    model = KLNMF(n_components=2, random_state=0).fit(X)
    path = save(model, tmp_path / "m.skops")
    # The file of a KLNMF written when it lived in a module since renamed;
    # unknown without the map, found through it.
    old = _with_module_renamed(
        path,
        "sklearn_topicfac.estimators.klnmf",
        "sklearn_topicfac.models_of_old",
        tmp_path / "old.skops",
    )
    with pytest.raises(ValueError, match="does not have"):
        load(old)
    from sklearn_topicfac import persistence

    monkeypatch.setitem(
        persistence._MOVED_MODULES,
        "sklearn_topicfac.models_of_old",
        "sklearn_topicfac.estimators.klnmf",
    )
    loaded = load(old)
    assert type(loaded) is KLNMF
    assert np.array_equal(loaded.transform(X), model.transform(X))


def test_the_modules_of_before_the_restructuring_load_from_skops_files(tmp_path):
    X = np.eye(4) + 1
    model = PLSI(n_components=2, random_state=0).fit(X)
    path = save(model, tmp_path / "m.skops")
    old = _with_module_renamed(
        path,
        "sklearn_topicfac.estimators.plsi",
        "sklearn_topicfac._plsi",
        tmp_path / "o",
    )
    assert np.array_equal(load(old).transform(X), model.transform(X))


def test_a_file_from_a_newer_version_loads_with_a_warning_naming_both(tmp_path):
    path = save(KLNMF(n_components=2).fit(np.eye(4) + 1), tmp_path / "m.skops")
    newer = _with_module_renamed(
        path,
        "sklearn_topicfac.estimators.klnmf",
        "sklearn_topicfac.estimators.klnmf",
        tmp_path / "newer.skops",
    )
    with pytest.warns(UserWarning) as record:
        load(newer)
    (message,) = [str(w.message) for w in record if "newer" in str(w.message)]
    assert "9.9.9" in message and sklearn_topicfac.__version__ in message
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        load(path)  # the installed version's own file: no warning


def test_a_file_lacking_a_later_parameter_gets_the_old_behaviour(tmp_path):
    X = np.eye(4) + 1
    model = KLNMF(n_components=2, random_state=0, split_merge=0).fit(X)
    path = save(model, tmp_path / "m.skops")

    def older(schema):
        del schema["content"]["content"]["split_merge"]
        del schema["content"]["content"]["n_init"]
        return schema

    loaded = load(rewritten(path, tmp_path / "older.skops", older))
    params = loaded.get_params()  # failed before: a parameter was missing
    assert params["split_merge"] == 0 and params["n_init"] == 1
    assert np.array_equal(loaded.transform(X), model.transform(X))


@pytest.mark.parametrize("Estimator", [KLNMF, PLSI], ids=lambda cls: cls.__name__)
def test_a_file_from_before_transform_tol_folds_in_to_its_tol(Estimator, tmp_path):
    # Before transform_tol existed, transform stopped by the fit's tol: a
    # file without it keeps that, not today's looser default.
    X = np.random.default_rng(0).poisson(2.0, size=(30, 12)).astype(float)
    model = Estimator(n_components=3, random_state=0, tol=2e-5).fit(X)
    path = save(model, tmp_path / "m.skops")

    def older(schema):
        del schema["content"]["content"]["transform_tol"]
        return schema

    loaded = load(rewritten(path, tmp_path / "older.skops", older))
    assert loaded.get_params()["transform_tol"] == 2e-5
    then = Estimator(n_components=3, random_state=0, tol=2e-5, transform_tol=2e-5)
    then = then.fit(X).transform(X)
    assert np.array_equal(loaded.transform(X), then)
    assert not np.array_equal(loaded.transform(X), model.transform(X))


def test_load_refuses_what_is_not_a_regular_file(tmp_path):
    os.mkfifo(tmp_path / "pipe.skops")
    with pytest.raises(ValueError, match="FIFO"):
        load(tmp_path / "pipe.skops")  # did block forever
    with pytest.raises(ValueError, match="folder"):
        load(tmp_path)
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "missing.skops")


def test_load_caps_what_a_file_may_inflate_to(tmp_path):
    model = KLNMF(n_components=2).fit(np.eye(40) + 1)
    path = save(model, tmp_path / "m.skops")
    size = path.stat().st_size
    with pytest.raises(ValueError, match="inflate"):
        load(path, max_size=size // 2)
    load(path, max_size=2 * size)
    with pytest.raises(ValueError, match="max_size"):
        load(path, max_size=-1)


def test_the_stamp_tells_apart_the_data_and_the_parameters(tmp_path):
    X = np.random.default_rng(0).poisson(1.0, size=(30, 8)).astype(float)
    a = read_stamp(save(KLNMF(2, random_state=0).fit(X), tmp_path / "a.skops"))
    b = read_stamp(save(KLNMF(2, random_state=0).fit(X), tmp_path / "b.skops"))
    c = read_stamp(save(KLNMF(2, random_state=0).fit(X + 1), tmp_path / "c.skops"))
    d = read_stamp(save(KLNMF(3, random_state=0).fit(X), tmp_path / "d.skops"))
    assert a == b
    assert a["data_fingerprint"] != c["data_fingerprint"]
    assert a["parameters"]["n_components"] != d["parameters"]["n_components"]
    assert "backend" in a and "numpy" in a["versions"]
