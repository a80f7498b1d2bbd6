"""Run as a script: corrupt saved models' attributes at random, then load and
apply each (``tests/test_hostile_models.py`` runs it in a subprocess, so that
a crash or a hang fails the test instead of killing the run).

    python _corrupted_models.py FOLDER BACKEND SEED N

For N random corruptions (one fitted attribute of one of the package's
estimators: its shape, dtype, byte order, a value, or its type), the model
is saved with ``save``, loaded with ``load`` and, if that succeeds, applied
with ``transform``.  Prints one JSON line: the outcome counts and every
outcome that is neither a ``ValueError`` nor the unchanged model's output.
"""

import copy
import json
import sys
import warnings
from pathlib import Path

import numpy as np

import sklearn_topicfac as tf

X = np.random.default_rng(0).poisson(1.0, size=(40, 12)).astype(float)


def _fitted_models():
    models = []
    for name in tf.estimators.__all__:
        cls = getattr(tf, name)
        models.append(cls(n_components=3, random_state=0, max_iter=20).fit(X))
        if hasattr(cls, "partial_fit"):
            models.append(cls(n_components=3, random_state=0).partial_fit(X))
    return models


def _corrupt_array(value, rng):
    choice = rng.integers(12)
    if choice == 0 and value.ndim:
        return np.swapaxes(value, 0, -1).copy() if value.ndim > 1 else value[:-1]
    if choice == 1:
        axis = rng.integers(max(value.ndim, 1))
        pad = [(0, 0)] * value.ndim
        if value.ndim:
            pad[axis] = (0, int(rng.integers(1, 4)))
            return np.pad(value, pad, constant_values=1.0)
        return np.ones(2)
    if choice == 2:
        return value.ravel() if value.ndim != 1 else value.reshape(1, -1)
    if choice in (3, 4, 5, 6) and value.size and value.dtype.kind == "f":
        bad = value.copy()
        index = tuple(rng.integers(n) for n in value.shape)
        bad[index] = (np.nan, np.inf, -1.0, -np.inf)[choice - 3]
        return bad
    if choice == 7:
        return value.astype(
            (np.int64, np.float16, np.complex128, bool)[rng.integers(4)]
        )
    if choice == 8:
        return value.astype(value.dtype.newbyteorder())
    if choice == 9:
        return np.zeros((0,) * max(value.ndim, 1))
    if choice == 10:
        return float(rng.normal())
    return None


def _corrupt_scalar(value, rng):
    return (-1, float("nan"), 10**12, "x", None, np.ones(3), 2**63, -(2**40))[
        rng.integers(8)
    ]


def _corrupted(model, rng):
    names = [
        name
        for name in vars(model)
        if name.endswith("_") and name not in ("split_merge_moves_", "random_state_")
    ]
    name = names[rng.integers(len(names))]
    value = getattr(model, name)
    if isinstance(value, np.ndarray):
        bad = _corrupt_array(value, rng)
    elif isinstance(value, tf.estimators.TopicEstimator) or not np.isscalar(value):
        inner = getattr(value, "__dict__", {})
        arrays = [k for k, v in inner.items() if isinstance(v, np.ndarray)]
        if not arrays:
            return name, None
        member = arrays[rng.integers(len(arrays))]
        setattr(value, member, _corrupt_array(inner[member], rng))
        return f"{name}.{member}", value
    else:
        bad = _corrupt_scalar(value, rng)
    return name, bad


def main(folder, backend, seed, n):
    warnings.simplefilter("ignore")
    tf.set_config(backend=backend)
    rng = np.random.default_rng(seed)
    counts = {"ValueError": 0, "unchanged": 0, "bad": 0}
    bad = []
    models = _fitted_models()
    outputs = [model.transform(X) for model in models]
    for trial in range(n):
        index = rng.integers(len(models))
        model, expected = copy.deepcopy(models[index]), outputs[index]
        name, value = _corrupted(model, rng)
        if "." not in name:
            setattr(model, name, value)
        path = Path(folder) / f"corrupted-{seed}-{trial}.skops"
        try:
            tf.save(model, path)
        except Exception:
            continue  # not even saveable: nothing to load
        try:
            loaded = tf.load(path)
            output = loaded.transform(X)
        except ValueError:
            counts["ValueError"] += 1
            continue
        except Exception as exc:
            counts["bad"] += 1
            bad.append([type(model).__name__, name, f"{type(exc).__name__}: {exc}"])
            continue
        if np.array_equal(output, expected):
            counts["unchanged"] += 1
        else:
            counts["bad"] += 1
            bad.append([type(model).__name__, name, "output changed"])
    print(json.dumps({"counts": counts, "bad": bad[:20]}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
