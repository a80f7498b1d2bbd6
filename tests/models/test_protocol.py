"""Every model of `sklearn_topicfac.models` against the declared protocol.

The engine asks a model only for the members `models.TopicModel` declares
(and documents); this checks that every model is one, that what the engine
relies on holds for each of them -- the map-reduce invariant of ``doc_step``
above all -- and that the engine itself asks nothing else (no probing of a
model for optional members, no switch on the kind of model).
"""

import ast
import inspect
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from _corpora import low_rank_counts
from numpy.testing import assert_allclose

import sklearn_topicfac.engine as engine_package
from sklearn_topicfac import models
from sklearn_topicfac.models import Check, TopicModel

ALPHA = np.array([0.2, 0.5, 1.0])


def _instances():
    """One instance of every model of ``models.__all__``, in each of its modes."""
    return {
        "KLNMFModel": KLNMFModel_modes(),
        "NormalizedNMFModel": [models.NormalizedNMFModel()],
        "PLSIModel": [
            models.PLSIModel(),
            models.PLSIModel(beta=0.8),
            models.PLSIModel(solver="squarem").for_online(),
            models.PLSIModel(solver="cd").for_online(),
            models.PLSIModel(solver="dn").for_blocks(),
        ],
        "JointNMFModel": [
            models.JointNMFModel("components", alpha=0.1),
            models.JointNMFModel("both"),
            models.JointNMFModel("both", solver="squarem").for_online(),
            models.JointNMFModel("components", solver="dn").for_online(),
        ],
        "LDAModel": [
            models.LDAModel(ALPHA, 0.1, 1e-3, 100),
            models.LDAModel(ALPHA, None, 1e-3, 100),
        ],
        "GammaPoissonModel": [models.GammaPoissonModel(ALPHA, 1.0, 1e-3, 100)],
        "CVB0Model": [models.CVB0Model(ALPHA, 0.1, 100, 1e-3)],
        "MAPModel": [models.MAPModel(ALPHA, 0.1, 100, 1e-3)],
    }


def KLNMFModel_modes():
    return [
        models.KLNMFModel(),
        models.KLNMFModel("cd").for_online(),
        models.KLNMFModel("dn").for_blocks(),
    ]


CASES = [
    pytest.param(model, id=f"{name}-{i}")
    for name, instances in _instances().items()
    for i, model in enumerate(instances)
]


def test_every_model_is_a_topic_model_and_is_checked_here():
    topic_models = {
        name
        for name in models.__all__
        if isinstance(getattr(models, name), type)
        and issubclass(getattr(models, name), TopicModel)
        and name != "TopicModel"
    }
    assert topic_models == set(_instances())
    # The members of the floor that are not topic models: the map of
    # real-valued data to the simplex (SimplexPLSA's preprocessing) and the
    # request for a check pass a topic step may make.
    assert set(models.__all__) - topic_models == {"Check", "SimplexMap", "TopicModel"}


def test_every_protocol_member_is_documented():
    members = [
        name
        for name, value in vars(TopicModel).items()
        if callable(value) and not name.startswith("_")
    ]
    assert {"draw_documents", "draw_topics", "online_update", "doc_step"} <= set(
        members
    )
    for name in members:
        doc = inspect.getdoc(getattr(TopicModel, name))
        assert doc and len(doc) > 20, f"TopicModel.{name} has no docstring"
    for name in ("moves", "custom_documents", "draws_topics_first"):
        assert isinstance(getattr(TopicModel, name), bool)
        assert f"{name} : bool" in TopicModel.__doc__
    assert (
        isinstance(TopicModel.min_iter, int) and "min_iter : int" in TopicModel.__doc__
    )


def _state(model, X, k, seed=0):
    """A valid state of ``model`` for ``X``: its random start, prepared."""
    rng = np.random.RandomState(seed)
    n, m = X.shape
    scale = model.random_scale(n, m, k, lambda: float(X.sum()))
    if model.draws_topics_first:
        H = model.draw_topics(rng, k, m, scale, X.dtype)
        W = model.draw_documents(rng, n, k, scale)
    else:
        W = model.draw_documents(rng, n, k, scale)
        H = model.draw_topics(rng, k, m, scale, X.dtype)
    W, H = model.prepare_start(W.astype(X.dtype), H)
    return W, H


@pytest.mark.parametrize("model", CASES)
def test_doc_step_is_a_map_reduce_over_row_blocks(model):
    # The statistics of row blocks add up to those of all rows, and each
    # block's new document factor is the whole one's rows: the invariant
    # that lets out-of-core and Dask fits run the same iteration.
    X = sp.csr_matrix(low_rank_counts(40, 25, 3, seed=1))
    W, H = _state(model, X, 3)
    for warm in (False, True):
        W_all, stats_all = model.doc_step(X, W, H, warm)
        parts = [
            model.doc_step(X[a:b], W[a:b], H, warm) for a, b in ((0, 15), (15, 40))
        ]
        assert_allclose(np.vstack([p[0] for p in parts]), W_all, rtol=1e-9)
        assert set(stats_all) >= {"loss"}
        for key, value in stats_all.items():
            summed = sum(p[1][key] for p in parts)
            assert_allclose(summed, value, rtol=1e-9, atol=1e-12, err_msg=key)
        update = model.topic_step(H, stats_all)
        if isinstance(update, Check):
            # Its check pass is a map-reduce too (on the new factor).
            sums_all = model.check_step(X, W_all, H, update)
            halves = [
                model.check_step(X[a:b], W_all[a:b], H, update)
                for a, b in ((0, 15), (15, 40))
            ]
            for key, value in sums_all.items():
                summed = sum(h[key] for h in halves)
                assert_allclose(summed, value, rtol=1e-9, atol=1e-12, err_msg=key)
            update = model.settle(H, stats_all, update, sums_all)
        H_new, scale = update
        assert H_new.shape == H.shape and np.all(np.isfinite(H_new))
        assert scale is None or scale.shape == (3,)
        # The objective is additive over row blocks too.
        loss = model.doc_loss(X, W_all, H_new)
        halves = model.doc_loss(X[:15], W_all[:15], H_new) + model.doc_loss(
            X[15:], W_all[15:], H_new
        )
        assert_allclose(halves, loss, rtol=1e-9)


@pytest.mark.parametrize("model", CASES)
def test_a_random_start_drawn_block_by_block_is_the_start_drawn_at_once(model):
    # The engine draws the documents' start of each block from the
    # generator's state at the block's first row.
    n, k = 30, 3
    rng = np.random.RandomState(3)
    whole = model.draw_documents(rng, n, k, 2.0)
    rng = np.random.RandomState(3)
    state = rng.get_state()
    first = model.draw_documents(rng, 12, k, 2.0)
    rest = np.random.RandomState()
    rest.set_state(rng.get_state())
    assert_allclose(
        np.vstack([first, model.draw_documents(rest, n - 12, k, 2.0)]), whole
    )
    again = np.random.RandomState()
    again.set_state(state)
    assert_allclose(model.draw_documents(again, 12, k, 2.0), first)
    assert whole.shape == (n, k) and np.all(whole >= 0)


@pytest.mark.parametrize("model", CASES)
def test_an_online_step_gives_valid_topics(model):
    X = sp.csr_matrix(low_rank_counts(40, 25, 3, seed=2))
    _, H = _state(model, X, 3)
    model = model.for_online()
    rng = np.random.RandomState(0)
    state = None
    for t, (a, b) in enumerate(((0, 20), (20, 40)), start=1):
        W, warm = model.online_documents(X[a:b], H, rng, t == 1)
        _, stats = model.doc_step(X[a:b], W, H, warm)
        H, state, mass = model.online_update(H, W, stats, state, 0.5, b - a, 40)
        assert H.shape == (3, 25) and H.dtype == X.dtype
        assert np.all(np.isfinite(H)) and np.all(H >= 0)
        assert mass is None or mass.shape == (3,)


def _engine_sources():
    folder = Path(engine_package.__file__).parent
    return {path.name: path.read_text() for path in sorted(folder.glob("*.py"))}


def test_the_engine_asks_the_protocol_and_nothing_else():
    # No probing of a model for optional members, and no switch on strings
    # that name a kind of model or of start: what differs is the model's.
    for name, source in _engine_sources().items():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") in (
                "getattr",
                "hasattr",
            ):
                target = ast.unparse(node.args[0])
                assert "model" not in target, f"{name}: {ast.unparse(node)}"
        for kind in ('"gamma"', '"normal"', "random_start =="):
            assert kind not in source, f"{name} switches on {kind}"


def test_the_engine_check_finds_probing():
    source = "def f(model):\n    return getattr(model, 'custom_documents', True)\n"
    calls = [
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "getattr"
    ]
    assert calls and "model" in ast.unparse(calls[0].args[0])
