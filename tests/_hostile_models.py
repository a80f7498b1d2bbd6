"""Hostile model files: written by the package's own ``save()`` (or edited by
hand), each with state a fit never produces.  Used by
``tests/test_hostile_models.py``, which loads and applies them in
subprocesses, guarded (``sklearn_topicfac.load``) and unguarded (skops'
own loader with the types trusted, as ``load`` did before its checks).

Each builder takes a folder and returns the model file's path.
"""

import io
import json
import os
import zipfile
from pathlib import Path

import numpy as np
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.pipeline import make_pipeline

import sklearn_topicfac as tf

DOCS = [
    "goal match league cup striker referee goal",
    "bank stock bond market dividend loan bank",
    "match cup referee league goal striker",
    "market bond loan stock dividend bank",
] * 6
N_FEATURES = 30


def _counts():
    return np.random.default_rng(0).poisson(1.0, size=(40, N_FEATURES)).astype(float)


def _fitted(cls, **params):
    return cls(n_components=3, random_state=0, **params).fit(_counts())


def _saved(model, folder, name):
    return tf.save(model, Path(folder) / f"{name}.skops")


def _edited(name, cls=tf.KLNMF, params=None, **state):
    def build(folder):
        model = _fitted(cls, **(params or {}))
        for attr, value in state.items():
            setattr(model, attr, value)
        return _saved(model, folder, name)

    build.__name__ = name
    return build


def _with_params(name, cls=tf.KLNMF, **params):
    def build(folder):
        model = _fitted(cls)
        vars(model).update(params)  # set_params would validate nothing either
        return _saved(model, folder, name)

    build.__name__ = name
    return build


def pipeline_reading_files(folder):
    pipe = make_pipeline(CountVectorizer(), tf.PLSI(n_components=2, random_state=0))
    pipe.fit(DOCS)
    pipe[0].input = "filename"
    return _saved(pipe, folder, "pipeline_reading_files")


def pipeline_with_a_cache(folder):
    pipe = make_pipeline(CountVectorizer(), tf.PLSI(n_components=2, random_state=0))
    pipe.fit(DOCS)
    pipe.memory = str(Path(folder) / "cache")
    return _saved(pipe, folder, "pipeline_with_a_cache")


def pipeline_with_a_bad_vocabulary(folder):
    pipe = make_pipeline(CountVectorizer(), tf.PLSI(n_components=2, random_state=0))
    pipe.fit(DOCS)
    vocabulary = pipe[0].vocabulary_
    vocabulary[next(iter(vocabulary))] = 10**6  # a column far past the model's
    return _saved(pipe, folder, "pipeline_with_a_bad_vocabulary")


def rewritten(path, out, edit_schema=None, members=None):
    """A copy of the skops file ``path`` with its schema edited / members added."""
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == "schema.json" and edit_schema is not None:
                data = json.dumps(edit_schema(json.loads(data))).encode()
            if members and item.filename in members:
                continue
            dst.writestr(item, data)
        for name, (data, compression) in (members or {}).items():
            dst.writestr(name, data, compress_type=compression)
    return out


def decompression_bomb(folder):
    """components_ replaced by 256 MiB of zeros, deflated to about 256 KB."""
    path = _saved(_fitted(tf.KLNMF), folder, "plain")
    with zipfile.ZipFile(path) as archive:
        schema = json.loads(archive.read("schema.json"))
    member = schema["content"]["content"]["components_"]["file"]
    header = np.lib.format.header_data_from_array_1_0(np.zeros((3, 1)))
    header["shape"] = (2**25,)
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, header)
    chunk = bytes(2**24)
    data = buffer.getvalue() + chunk * 16
    return rewritten(
        path,
        Path(folder) / "decompression_bomb.skops",
        members={member: (data, zipfile.ZIP_DEFLATED)},
    )


def deeply_nested(folder):
    """A schema nesting 50,000 lists (json.dumps would recurse: written as text)."""
    path = _saved(_fitted(tf.KLNMF), folder, "plain")
    out = Path(folder) / "deeply_nested.skops"
    depth = 50_000
    opening = '{"__class__": "list", "__module__": "builtins", '
    opening += '"__loader__": "ListNode", "__id__": 1, "content": ['
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == "schema.json":
                schema = json.loads(data)
                schema["content"]["content"]["deep"] = "@DEEP@"
                deep = opening * depth + "]}" * depth
                data = json.dumps(schema).replace('"@DEEP@"', deep).encode()
            dst.writestr(item, data)
    return out


def cyclic_id(folder):
    """A parameter that names the model itself by its id: skops rebuilds it
    inside itself until Python's recursion limit."""
    path = _saved(_fitted(tf.KLNMF), folder, "plain")

    def edit(schema):
        parameters = schema["content"]["content"]
        parameters["n_components"]["__id__"] = schema["__id__"]
        return schema

    return rewritten(path, Path(folder) / "cyclic_id.skops", edit)


def control_characters(folder):
    path = _saved(_fitted(tf.KLNMF), folder, "plain")

    def edit(schema):
        schema["__module__"] = "evil\x1b[2J\x1b[31m"
        return schema

    return rewritten(path, Path(folder) / "control_characters.skops", edit)


def fifo(folder):
    path = Path(folder) / "fifo.skops"
    os.mkfifo(path)
    return path


# name -> builder; each a case of the table (and a few more).
CASES = {
    "rows_beyond_the_features": _edited(
        "rows_beyond_the_features", components_=np.ones((2**20, 1))
    ),
    "short_doc_topic_prior": _edited(
        "short_doc_topic_prior", tf.LDAVI, doc_topic_prior_=np.ones(1)
    ),
    # CVB0 models: its chunked fold-in is where these misbehave unguarded
    # (the default MAP fold-in stops them with a NumPy shape error).
    "long_doc_topic_prior": _edited(
        "long_doc_topic_prior",
        tf.LDAVI,
        {"inference": "cvb0"},
        doc_topic_prior_=np.ones(4096),
    ),
    "endless_fold_in": _with_params("endless_fold_in", tol=-1.0, max_iter=10**12),
    "nan_in_components": _edited(
        "nan_in_components",
        components_=np.where(np.eye(3, N_FEATURES) > 0, np.nan, 1.0),
    ),
    "inf_in_components": _edited(
        "inf_in_components",
        components_=np.where(np.eye(3, N_FEATURES) > 0, np.inf, 1.0),
    ),
    "negative_components": _edited(
        "negative_components", components_=-np.ones((3, N_FEATURES))
    ),
    "one_column_lda": _edited(
        "one_column_lda", tf.LDAVI, {"inference": "cvb0"}, components_=np.ones((3, 1))
    ),
    "columns_beyond_the_features": _edited(
        "columns_beyond_the_features", components_=np.ones((3, 2 * N_FEATURES))
    ),
    "bogus_solver": _with_params("bogus_solver", solver="bogus"),
    "nan_tol": _with_params("nan_tol", tol=float("nan")),
    "integer_components": _edited(
        "integer_components", components_=np.ones((3, N_FEATURES), dtype=np.int64)
    ),
    "nan_p_z": _edited("nan_p_z", tf.PLSI, p_z_=np.array([np.nan, 0.5, 0.5])),
    "pipeline_reading_files": pipeline_reading_files,
    "pipeline_with_a_cache": pipeline_with_a_cache,
    "pipeline_with_a_bad_vocabulary": pipeline_with_a_bad_vocabulary,
    "decompression_bomb": decompression_bomb,
    "deeply_nested": deeply_nested,
    "cyclic_id": cyclic_id,
    "control_characters": control_characters,
    "fifo": fifo,
}
# Cases whose input is raw text (a pipeline); the others take counts.
TEXT_CASES = {name for name in CASES if name.startswith("pipeline")}
