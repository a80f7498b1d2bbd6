"""Hypothesis profiles of the test suite.

``ci`` (loaded by default) keeps the whole suite deterministic and fast; the
property test of ``tests/test_robustness.py`` runs 500 examples per
estimator (about 75 s in all on two cores).  ``long`` is the fuzzing run of
that test, over 100,000 generated inputs in all (12,500 per estimator; about
40 min in one process, 21 min with pytest-xdist's ``-n 2``)::

    python -m pytest tests/test_robustness.py -p no:cacheprovider \\
        --hypothesis-profile=long

Hypothesis' pytest plugin provides ``--hypothesis-profile`` and loads the
profile named there after this file has registered it (this file is an
initial conftest, imported before the plugin's ``pytest_configure``).

Tests with an explicit ``@settings(max_examples=...)`` (``test_common.py``,
``test_metrics.py``) keep their own example counts; from the profile they
take only what they leave unset, here that their examples are derandomized
and no example database is written.
"""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=500,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "long",
    parent=settings.get_profile("ci"),
    max_examples=12_500,
)
settings.load_profile("ci")


# ----------------------------------------------------------------- backends
# The suite runs on the NumPy kernels (the reference); the tests that take
# the ``backend`` fixture run on both backends.  Without numba the numba runs
# skip (`pip install ".[fast]"`, which .ci/run installs for the slow tests).
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from _corpora import load_file  # noqa: E402

from sklearn_topicfac import config_context  # noqa: E402
from sklearn_topicfac._config import numba_available  # noqa: E402


@pytest.fixture(autouse=True)
def _numpy_backend_by_default():
    with config_context(backend="numpy"):
        yield


@pytest.fixture(params=["numpy", "numba"])
def backend(request, _numpy_backend_by_default):
    """Run the test on each backend of the kernels."""
    if request.param == "numba" and not numba_available():
        pytest.skip('the numba backend needs numba: pip install ".[fast]"')
    with config_context(backend=request.param):
        yield request.param


# --------------------------------------------------------- generated blocks
REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def docblocks():
    """``benchmarks/_docblocks.py``, the generated blocks' writer and checks."""
    return load_file(REPO_ROOT / "benchmarks" / "_docblocks.py")
