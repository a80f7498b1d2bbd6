"""``transform_tol``: where the fold-in of new documents stops, and only that.

The NMF family folds new documents in (``transform``,
``topic_proportions``) with the topics fixed, until a document's topic
proportions change by less than ``transform_tol``; the fit, ``partial_fit``
and ``score`` (which chooses ``n_components``) stop by ``tol`` and never
read it.
"""

import numpy as np
import pytest
from _corpora import planted_counts
from _estimators import REGISTRY

from sklearn_topicfac.out_of_core import Blocks

WITH_TRANSFORM_TOL = [
    spec for spec in REGISTRY if "transform_tol" in spec.cls().get_params()
]


def test_the_nmf_family_has_transform_tol():
    names = {spec.name for spec in WITH_TRANSFORM_TOL}
    assert names == {"KLNMF", "NormalizedNMF", "PLSI", "JointNMF", "HybridNMFPLSI"}
    for spec in WITH_TRANSFORM_TOL:
        assert spec.cls._fold_in_parameters == ("transform_tol",)
        assert spec.cls().transform_tol == 3e-3


def _fitted(spec, X, **params):
    return spec.make(n_components=3, random_state=0, **params).fit(X)


def _same_fit(a, b):
    for name in ("components_", "embedding_", "loss_history_"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.n_iter_ == b.n_iter_


@pytest.mark.parametrize("spec", WITH_TRANSFORM_TOL, ids=repr)
def test_a_fit_never_reads_transform_tol(spec):
    X = planted_counts(n=120, m=40, seed=1)
    tight, loose = (_fitted(spec, X, transform_tol=t) for t in (1e-9, 0.5))
    _same_fit(tight, loose)
    if spec.blockwise:
        _same_fit(
            _fitted(spec, Blocks(X, block_size=50), transform_tol=1e-9),
            _fitted(spec, Blocks(X, block_size=50), transform_tol=0.5),
        )
    if spec.partial_fit:
        online = [
            spec.make(n_components=3, random_state=0, transform_tol=t)
            for t in (1e-9, 0.5)
        ]
        for est in online:
            est.partial_fit(X[:60]).partial_fit(X[60:])
        assert np.array_equal(online[0].components_, online[1].components_)


@pytest.mark.parametrize("spec", WITH_TRANSFORM_TOL, ids=repr)
def test_the_fold_in_stops_by_transform_tol_set_after_the_fit(spec):
    X = planted_counts(n=120, m=40, seed=2)
    est = _fitted(spec, X)
    new = planted_counts(n=40, m=40, seed=3)
    results = {}
    for tol in (1e-9, 3e-3, np.inf):
        est.set_params(transform_tol=tol)
        results[tol] = (
            est.transform(new),
            est.topic_proportions(new),
            est.score(new),
        )
    # A tolerance the first sweep meets stops after it; a tighter one runs on
    # towards the fold-in's optimum, so each tolerance gives its own result.
    for a, b in ((1e-9, 3e-3), (3e-3, np.inf)):
        assert not np.allclose(results[a][0], results[b][0], rtol=1e-6)
        assert not np.allclose(results[a][1], results[b][1], rtol=1e-6)
        # The score's fold-in runs to tol whatever transform_tol is.
        assert results[a][2] == results[b][2]
    # ...and tol, set after the fit, moves it.
    assert est.set_params(tol=0.5).score(new) != results[3e-3][2]


@pytest.mark.parametrize("spec", WITH_TRANSFORM_TOL[:1], ids=repr)
@pytest.mark.parametrize("bad", [-1e-3, float("nan"), "3e-3"])
def test_a_bad_transform_tol_is_refused_with_its_name(spec, bad):
    est = spec.make(n_components=2, transform_tol=bad)
    with pytest.raises(ValueError, match="transform_tol"):
        est.fit(planted_counts(n=20, m=10, seed=0))
