"""What a fitted estimator's state must be, declared once per estimator.

A fit produces consistent state; a model file, or attributes set by hand,
may not.  The kernels (the compiled ones in particular) index arrays by the
shapes they are given, so state that reaches them must be checked first:

- `check_shapes` (every ``transform``, ``score``, ``partial_fit``...): the
  arrays a kernel reads have the declared shapes and dtypes -- O(1) work;
- `check_state` (`sklearn_topicfac.load`): also every value (finite,
  non-negative or positive as declared) and every fitted attribute, whether
  a kernel reads it or not.

Each estimator class declares ``_fitted_state``: attribute name -> `Array` or
`Scalar`.  Shapes are written with symbols: ``"k"`` the number of topics
(``components_``' rows), ``"m"`` ``n_features_in_``, ``"n"`` a length shared
by the attributes that use it (the training documents), ``"a"`` and ``"d"``
other lengths shared the same way (SimplexPLSA's principal axes and its
simplex's dimension), ``None`` any length.
"""

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.utils.validation import check_is_fitted

_FLOATS = (np.float32, np.float64)


@dataclass(frozen=True)
class Array:
    """A fitted array: its shape in symbols, what its values must be.

    ``values``: ``"finite"``, ``"nonnegative"`` (finite and >= 0),
    ``"positive"`` (finite and > 0) or ``"any"`` (not read by a kernel and
    possibly infinite: a statistic of data near the float range).
    ``kernel``: a kernel reads it, so its shape is checked before every use,
    not only at load.
    """

    shape: tuple
    values: str = "nonnegative"
    kernel: bool = False
    integer: bool = False


@dataclass(frozen=True)
class Scalar:
    """A fitted number: integral or real, with a lower bound; ``optional``:
    None is allowed too."""

    integral: bool = False
    optional: bool = False
    low: float | None = None
    low_open: bool = False
    kernel: bool = False
    high: float | None = None


def fail(estimator, name, problem):
    """Raise the ``ValueError`` of an inconsistent fitted attribute."""
    raise ValueError(
        f"{type(estimator).__name__}.{name} {problem}: this is not the state a "
        "fit produces (refit the estimator; a model file that holds it is "
        "damaged or was not written by sklearn_topicfac.save)."
    )


def _topics_and_features(estimator):
    m = getattr(estimator, "n_features_in_", None)
    if not isinstance(m, Integral) or isinstance(m, bool) or m < 1:
        fail(estimator, "n_features_in_", f"is {m!r}, not a positive integer")
    components = getattr(estimator, "components_", None)
    if not isinstance(components, np.ndarray) or components.ndim != 2:
        fail(estimator, "components_", "is not a 2-D array")
    k = components.shape[0]
    n_components = getattr(estimator, "n_components", None)
    if isinstance(n_components, Integral) and k != n_components:
        fail(estimator, "components_", f"has {k} rows, n_components is {n_components}")
    if k < 1:
        fail(estimator, "components_", "has no topic")
    return {"k": int(k), "m": int(m)}


def _check_array(estimator, name, value, spec, sizes, values):
    if not isinstance(value, np.ndarray):
        fail(estimator, name, f"is a {type(value).__name__}, not an array")
    if spec.integer:
        if value.dtype.kind not in "iu":
            fail(estimator, name, f"has dtype {value.dtype}, not an integer type")
    elif value.dtype.type not in _FLOATS:
        fail(estimator, name, f"has dtype {value.dtype}, not float32 or float64")
    if not value.dtype.isnative:
        fail(estimator, name, "is not in the machine's byte order")
    if value.ndim != len(spec.shape):
        fail(estimator, name, f"has {value.ndim} dimensions, not {len(spec.shape)}")
    for axis, (symbol, length) in enumerate(zip(spec.shape, value.shape, strict=True)):
        if symbol is None:
            continue
        if symbol in ("k", "m"):
            expected = sizes[symbol]
        else:  # a length the first attribute naming the symbol sets
            expected = sizes.setdefault(symbol, length)
        if length != expected:
            described = {"k": "k topics", "m": "n_features_in_"}.get(symbol, symbol)
            fail(
                estimator,
                name,
                f"has shape {value.shape}: axis {axis} should have length "
                f"{expected} ({described})",
            )
    if values and value.size and spec.values != "any":
        _check_values(estimator, name, value, spec.values)


def _check_values(estimator, name, value, kind):
    if not np.all(np.isfinite(value)):
        fail(estimator, name, "holds NaN or infinite values")
    if kind == "nonnegative" and np.any(value < 0):
        fail(estimator, name, "holds negative values")
    if kind == "positive" and np.any(value <= 0):
        fail(estimator, name, "holds values that are not positive")


def _check_scalar(estimator, name, value, spec):
    if value is None and spec.optional:
        return
    if isinstance(value, np.generic):
        value = value.item()
    kind = Integral if spec.integral else Real
    if isinstance(value, bool) or not isinstance(value, kind):
        what = "an integer" if spec.integral else "a number"
        fail(estimator, name, f"is {value!r}, not {what}")
    if not spec.integral and not np.isfinite(value):
        fail(estimator, name, f"is {value!r}, not finite")
    if spec.low is not None and (
        value <= spec.low if spec.low_open else value < spec.low
    ):
        bound = f"> {spec.low}" if spec.low_open else f">= {spec.low}"
        fail(estimator, name, f"is {value!r}, not {bound}")
    if spec.high is not None and value > spec.high:
        fail(estimator, name, f"is {value!r}, above {spec.high}")


def _check_declared(estimator, prefix, owner, declared, sizes, values, kernel_only):
    for name, spec in declared.items():
        if kernel_only and not spec.kernel:
            continue
        label = f"{prefix}{name}"
        if name not in vars(owner):
            if spec.kernel:
                fail(estimator, label, "is missing")
            continue  # a state not every fit leaves (partial_fit's)
        value = vars(owner)[name]
        if isinstance(spec, Array):
            _check_array(estimator, label, value, spec, sizes, values)
        else:
            _check_scalar(estimator, label, value, spec)


def check_members(estimator, name, owner, declared, sizes, values):
    """Check the attributes of ``owner``, an object held in ``estimator.name``."""
    _check_declared(estimator, f"{name}.", owner, declared, sizes, values, not values)


def _check(estimator, declared, *, values, kernel_only):
    sizes = _topics_and_features(estimator)
    _check_declared(estimator, "", estimator, declared, sizes, values, kernel_only)
    check_online_stats(estimator, sizes, values)
    return sizes


def check_shapes(estimator, declared):
    """Check the shapes and dtypes of the fitted arrays the kernels read.

    Raises ``NotFittedError`` if the estimator is not fitted, a
    ``ValueError`` naming the attribute if its state is inconsistent.
    """
    check_is_fitted(estimator)
    return _check(estimator, declared, values=False, kernel_only=True)


def check_state(estimator, declared):
    """Check every declared fitted attribute: shapes, dtypes and values.

    An estimator that is not fitted passes (there is nothing to check).
    Returns the sizes the shapes named (``{"k": ..., "m": ...}``), or None.
    """
    if not any(name.endswith("_") for name in vars(estimator)):
        return None
    return _check(estimator, declared, values=True, kernel_only=False)


def check_solvers(estimator):
    """A fitted ``<parameter>_`` naming a solver (or LDAVI's inference)
    holds one the parameter offers."""
    for name, constraints in estimator._parameter_constraints.items():
        fitted = f"{name}_"
        resolved = name.endswith("solver") or name == "inference"
        if not resolved or fitted not in vars(estimator):
            continue
        value = getattr(estimator, fitted)
        if not isinstance(value, str):
            fail(estimator, fitted, f"is a {type(value).__name__}, not a solver's name")
        options = set()
        for constraint in constraints:
            options |= set(getattr(constraint, "options", ()))
        options.discard("auto")
        if value not in options:
            fail(estimator, fitted, f"is {value!r}, not one of {sorted(options)}")


# The state every factorization's fit leaves.
FACTORIZATION_STATE = {
    "components_": Array(("k", "m"), kernel=True),
    "embedding_": Array(("n", "k")),
    "loss_": Scalar(),
    "loss_history_": Array((None,), values="finite"),
    "n_iter_": Scalar(integral=True, low=0),
    "n_batch_iter_": Scalar(integral=True, low=0),
}
# P(z), P(d|z): the PLSI parametrization (PLSI, NormalizedNMF, the hybrid).
PROBABILISTIC_STATE = {
    "p_z_": Array(("k",), kernel=True),
    "p_d_given_z_": Array(("n", "k")),
}


def check_online_stats(estimator, sizes, values):
    """Stepwise EM's running averages: (topic-word sums, topic sums)."""
    stats = vars(estimator).get("_online_stats")
    if stats is None:
        return
    if not (isinstance(stats, tuple) and len(stats) == 2):
        fail(estimator, "_online_stats", "is not a pair of arrays")
    for value, shape in zip(stats, (("k", "m"), ("k",)), strict=True):
        _check_array(estimator, "_online_stats", value, Array(shape), sizes, values)
