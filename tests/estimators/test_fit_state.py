"""A fit that fails leaves the estimator's previous model exactly as it was.

Every fitting method (``fit``, ``fit_transform``, ``partial_fit``) of every
estimator of the registry is made to fail on a refit -- on input of another
width that fails mid-fit, on invalid input of another width, and by a
``KeyboardInterrupt`` from the fit callback or the online step -- and the
previous model must be left whole: every attribute as it was (compared by
value against a deep copy taken before), and ``transform`` giving, bit for
bit, what it gave before.  scikit-learn's own estimators record the new
width before such a refit fails (then refuse the old one); a half-replaced
model that computes with mixed state is what this file rules out.
"""

import copy
import re
import warnings

import numpy as np
import pytest
from _corpora import low_rank_counts
from _estimators import BY_NAME, estimators_with
from numpy.testing import assert_array_equal
from sklearn.exceptions import ConvergenceWarning

import sklearn_topicfac
from sklearn_topicfac import fit_callback
from sklearn_topicfac.out_of_core import Blocks

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

ALL = estimators_with()
X_OLD = low_rank_counts(n_samples=12, n_features=8, seed=1)
X_WIDER = low_rank_counts(n_samples=10, n_features=11, seed=2)


def _fitted(spec, **params):
    est = spec.make(n_components=3, max_iter=5, random_state=0, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X_OLD)


def _assert_same(before, after, where="estimator"):
    """``before`` (a deep copy) and ``after`` hold the same values."""
    if isinstance(before, np.random.RandomState):
        state_a, state_b = before.get_state(), after.get_state()
        for a, b in zip(state_a, state_b, strict=True):
            _assert_same(a, b, where)
    elif isinstance(before, np.ndarray):
        assert isinstance(after, np.ndarray), where
        assert before.dtype == after.dtype, where
        assert_array_equal(before, after, err_msg=where, strict=True)
    elif isinstance(before, dict):
        assert sorted(before, key=str) == sorted(after, key=str), where
        for key in before:
            _assert_same(before[key], after[key], f"{where}[{key!r}]")
    elif isinstance(before, list | tuple):
        assert type(before) is type(after) and len(before) == len(after), where
        for i, (a, b) in enumerate(zip(before, after, strict=True)):
            _assert_same(a, b, f"{where}[{i}]")
    elif hasattr(before, "__dict__") and not isinstance(before, type):
        assert type(before) is type(after), where
        _assert_same(vars(before), vars(after), f"{where}.")
    else:
        assert before == after or (before != before and after != after), where


def _assert_left_as_it_was(est, snapshot, T_old):
    _assert_same(snapshot, vars(est))
    assert_array_equal(est.transform(X_OLD), T_old, strict=True)
    # The old width, and only the old width, is what the model knows.
    with pytest.raises(ValueError, match=f"expecting {X_OLD.shape[1]} features"):
        est.transform(X_WIDER)


def _raise(exception):
    def callback(info):
        raise exception(f"stopped after iteration {info.iteration}")

    return callback


@pytest.mark.parametrize("method", ["fit", "fit_transform"])
@pytest.mark.parametrize("exception", [KeyboardInterrupt, RuntimeError])
@pytest.mark.parametrize("spec", ALL)
def test_a_refit_stopped_mid_fit_leaves_the_previous_model(spec, exception, method):
    est = _fitted(spec)
    snapshot, T_old = copy.deepcopy(vars(est)), est.transform(X_OLD)
    iterations = []
    with fit_callback(lambda info: iterations.append(info.iteration)):
        with fit_callback(_raise(exception)), pytest.raises(exception):
            getattr(est, method)(X_WIDER)
    assert iterations == [1]  # the refit stopped after its first iteration
    _assert_left_as_it_was(est, snapshot, T_old)


@pytest.mark.parametrize("spec", ALL)
def test_a_refit_on_invalid_input_of_another_width_leaves_the_previous_model(spec):
    if spec.counts_only:
        est = _fitted(spec)
        bad = -X_WIDER  # refused by the count check, after the width is read
        message = "negative"
    else:
        # SimplexPLSA takes any real data; more axes than the new width is
        # what it refuses once it has read that width.
        est = _fitted(spec, svd_components=X_OLD.shape[1])
        bad = X_WIDER[:, :5]
        message = "svd_components"
    snapshot, T_old = copy.deepcopy(vars(est)), est.transform(X_OLD)
    with pytest.raises(ValueError, match=message):
        est.fit(bad)
    _assert_left_as_it_was(est, snapshot, T_old)


def _interrupt_online_step(monkeypatch, spec):
    """Make the online update of ``partial_fit`` end in a KeyboardInterrupt."""
    module, name = sklearn_topicfac.engine, "partial_fit"
    step = getattr(module, name)

    def interrupted(*args, **kwargs):
        step(*args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(module, name, interrupted)


@pytest.mark.parametrize("after", ["fit", "partial_fit"])
@pytest.mark.parametrize("spec", estimators_with("partial_fit"))
def test_an_interrupted_partial_fit_leaves_the_previous_model(spec, after, monkeypatch):
    if after == "fit":
        est = _fitted(spec)
    else:
        est = spec.make(n_components=3, random_state=0)
        est.partial_fit(X_OLD).partial_fit(X_OLD[::-1])
    snapshot, T_old = copy.deepcopy(vars(est)), est.transform(X_OLD)
    _interrupt_online_step(monkeypatch, spec)
    with pytest.raises(KeyboardInterrupt):
        est.partial_fit(X_OLD)
    _assert_left_as_it_was(est, snapshot, T_old)
    # A mini-batch of another width: refused or interrupted, never recorded.
    with pytest.raises((KeyboardInterrupt, ValueError)):
        est.partial_fit(X_WIDER)
    _assert_left_as_it_was(est, snapshot, T_old)


@pytest.mark.parametrize("spec", estimators_with("partial_fit"))
def test_fit_starts_afresh_after_partial_fit_of_another_width(spec):
    est = spec.make(n_components=3, max_iter=5, random_state=0)
    est.partial_fit(X_WIDER).partial_fit(X_WIDER)
    est.fit(X_OLD)
    # Nothing of the online learning on the other width is left: the next
    # mini-batch continues from this fit's state or starts afresh.
    est.partial_fit(X_OLD)
    assert est.components_.shape == (3, X_OLD.shape[1])
    assert est.transform(X_OLD).shape == (X_OLD.shape[0], 3)
    reference = spec.make(n_components=3, max_iter=5, random_state=0)
    reference.fit(X_OLD).partial_fit(X_OLD)
    assert_array_equal(est.components_, reference.components_)


def test_a_failed_fit_of_an_unfitted_estimator_leaves_it_unfitted():
    spec = ALL[0].values[0]
    est = spec.make(n_components=3, random_state=0)
    with fit_callback(_raise(KeyboardInterrupt)), pytest.raises(KeyboardInterrupt):
        est.fit(X_OLD)
    assert not [name for name in vars(est) if name.endswith("_")]
    with pytest.raises(Exception, match=re.escape("is not fitted yet")):
        est.transform(X_OLD)


@pytest.mark.parametrize("name", ["KLNMF", "LDAVI"])
def test_an_interrupted_block_wise_refit_leaves_the_previous_model(name):
    est = _fitted(BY_NAME[name])
    snapshot, T_old = copy.deepcopy(vars(est)), est.transform(X_OLD)
    with fit_callback(_raise(KeyboardInterrupt)), pytest.raises(KeyboardInterrupt):
        est.fit(Blocks(X_WIDER, block_size=4))
    _assert_left_as_it_was(est, snapshot, T_old)


@pytest.mark.parametrize("spec", estimators_with(), ids=str)
def test_a_refit_whose_output_container_fails_leaves_the_previous_model(spec):
    # set_output converts fit_transform's result outside the method: polars
    # is not a dependency, so the conversion fails after the fit.
    pytest.importorskip("pandas")
    try:
        import polars  # noqa: F401

        pytest.skip("polars is installed: the conversion would not fail")
    except ImportError:
        pass
    X = low_rank_counts(n_samples=30, n_features=10, rank=2, seed=0)
    est = spec.make(n_components=2, random_state=0, max_iter=5).fit(X)
    est.set_output(transform="polars")
    before = copy.deepcopy(vars(est))
    with pytest.raises(ImportError, match="polars"):
        est.fit_transform(X * 2)
    assert sorted(vars(est)) == sorted(before)
    for name, value in before.items():
        if isinstance(value, np.ndarray):
            assert_array_equal(getattr(est, name), value)


def test_a_second_interrupt_during_the_restore_never_wipes_the_estimator(
    monkeypatch,
):
    import sys

    X = low_rank_counts(n_samples=30, n_features=10, rank=2, seed=0)
    est = sklearn_topicfac.KLNMF(n_components=2, random_state=0, max_iter=5).fit(X)
    params = est.get_params()
    outcomes = set()
    for nth in range(1, 6):
        armed = {"on": False, "count": 0}

        def interrupted_fit(self, *args, armed=armed, **kwargs):
            self.components_ = None  # a fit half done
            armed["on"] = True
            raise KeyboardInterrupt

        def tracer(frame, event, arg, nth=nth, armed=armed):
            if armed["on"] and event == "line" and frame.f_code.co_name == "wrapper":
                armed["count"] += 1
                if armed["count"] == nth:  # the second Ctrl-C
                    armed["on"] = False
                    raise KeyboardInterrupt
            return tracer

        monkeypatch.setattr(type(est), "_fit", interrupted_fit)
        sys.settrace(tracer)
        try:
            with pytest.raises(KeyboardInterrupt):
                est.fit(X)
        finally:
            sys.settrace(None)
        monkeypatch.undo()
        # Whichever line the second interrupt hit, the estimator keeps its
        # parameters (the old restore emptied it between two lines).
        assert est.get_params() == params
        outcomes.add(est.components_ is None)
        est.fit(X)
    assert False in outcomes  # some runs restored the previous model
