"""The registry of the package's eight estimators and what each of them can do.

Every contract test takes its estimators from here: all eight where the
contract applies to every estimator, the ones with a capability otherwise::

    @pytest.mark.parametrize("spec", estimators_with("partial_fit"))
    def test_something(spec):
        est = spec.make(n_components=3, max_iter=10, random_state=0)

``spec.make(**params)`` is a fast test instance: the estimator's own
defaults, then the few settings of ``fast_params`` that keep the tests
quick, then ``params``.  A capability flag that is ``False`` for an
estimator says why next to it; ``test_common.py::test_registry_matches_the_api``
checks every flag that can be read off the API (``partial_fit``, ``n_init``,
the allowed ``init`` values, ``fit``'s start arguments, the
``positive_only`` tag) against the estimator class, so the registry cannot
drift from the package.

``ALL_ESTIMATORS`` (the eight classes) is kept for the tests that iterate
over classes (``test_bad_input.py``, ``test_robustness.py``).
"""

import inspect
from dataclasses import dataclass, field
from types import MappingProxyType

import pytest

import sklearn_topicfac as tf


def _frozen(mapping=None):
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class EstimatorSpec:
    """One estimator class of the package and its capabilities."""

    cls: type
    #: Settings of every test instance (before the test's own): what keeps
    #: the tests fast without changing what the estimator is.
    fast_params: MappingProxyType = field(default_factory=_frozen)
    #: Settings of the instances given to scikit-learn's estimator checks,
    #: one instance each (the checks fit with the estimator's defaults).
    check_params: tuple = ({},)
    #: Refuses negative input (a KL factorization of counts).
    counts_only: bool = True
    #: Has ``partial_fit`` (online learning, one mini-batch per call).
    partial_fit: bool = True
    #: ``fit`` accepts ``sklearn_topicfac.out_of_core.Blocks`` and dask arrays.
    blockwise: bool = True
    #: Pattern of the ValueError a non-block-wise estimator raises on Blocks.
    blocks_refusal: str | None = None
    #: What ``init="custom"`` takes in ``fit``: ``"WH"`` (both factors),
    #: ``"H"`` (the topics only) or ``None`` (no custom start).
    custom_start: str | None = "WH"
    #: The ``init`` values accepted, besides ``None``.
    inits: tuple = ("random", "nndsvda", "kmeans", "custom")
    #: What ``init=None`` means when that start is feasible.
    default_init: str = "nndsvda"
    #: ``n_init`` restarts, keeping the best fit.
    n_init: bool = False
    #: ``transform`` returns topic proportions: each row sums to one.
    transform_rows_sum_to_one: bool = False
    #: Fitted ``p_z_`` and ``p_d_given_z_`` (the PLSI parametrization).
    probabilistic_factors: bool = False
    #: A document without words is folded in as the corpus prior ``p_z_``.
    empty_document_is_p_z: bool = False
    #: A term absent from the training data gets exactly 0 in every topic.
    empty_term_is_zero: bool = True
    #: ``loss_`` on all-zero data: ``"zero"`` exactly, ``"positive"``, or
    #: ``"nonnegative"`` (it starts above 0 and may end at 0).
    zero_data_loss: str = "zero"
    #: ``score`` is the held-out document-completion log-likelihood per word
    #: (refuses data without words); ``perplexity`` is ``exp(-score)``.
    completion_score: bool = True
    #: ``loss_history_`` is a generalized KL divergence between X and the
    #: model: its terms add up to about ``sum(X)`` (the rounding slack of
    #: ``test_common.py``'s property test).
    kl_objective: bool = True
    #: Settings that, with ``tol=0``, fix the number of every kind of
    #: iteration, so that no stopping decision can flip with rounding.
    fixed_iteration_params: MappingProxyType = field(default_factory=_frozen)
    #: The fit drives some entries of ``components_`` towards 0 until they
    #: leave float32's range: float64 takes them on to 1e-300 and below,
    #: float32 holds 0 or stops at its floor (about 1e-35).
    fit_underflows_float32: bool = False
    #: ``embedding_`` of float32 and float64 fits agree to float32 rounding.
    embedding_close_in_float32: bool = True
    #: A ``RandomState`` instance seeded with ``s`` gives the fit of the int
    #: ``s``, except with these starts.
    rng_instance_differs_from_int_seed_with: tuple = ()
    #: Two themes of a tiny corpus of short documents (test_common.py's
    #: pipeline test) end up in different topics.
    topics_cluster_documents: bool = True
    #: ``transform`` of some rows equals, bit for bit, those rows of
    #: ``transform`` of all rows.
    transform_bitwise_per_document: bool = True
    #: Name in front of the per-iteration lines of ``verbose > 1`` (``None``:
    #: no per-iteration lines of its own).
    verbose_prefix: str | None = None
    #: ``fit`` runs ``n_rounds`` rounds of two phases (two algorithms), each
    #: of up to ``max_iter`` iterations; ``n_iter_`` counts them all.
    rounds_of_two_phases: bool = False
    #: Invalid values of estimator-specific parameters (each a ValueError
    #: naming the parameter).
    bad_params: MappingProxyType = field(default_factory=_frozen)
    #: The solver whose iteration is one pass of updates over the documents
    #: (multiplicative, EM, joint), for the tests that compare fits whose
    #: sums are added in another order (threads, permuted rows) to 1e-10:
    #: coordinate descent's projections, SQUAREM's extrapolations and the
    #: Newton steps' fall-back decisions amplify that rounding.
    one_pass_params: MappingProxyType = field(default_factory=_frozen)
    #: The parameter variants that run other arithmetic (solvers, options),
    #: each fitted on its own where fits are compared across backends,
    #: runners and row blocks (`estimator_variants`).
    variants: tuple = ({},)
    #: The parameter variants the property test of tests/test_robustness.py
    #: draws, beside the common knobs: only settings whose objective history
    #: is documented as non-increasing (not PLSI's tempered EM, nor online
    #: learning, whose history is a running estimate); ``"n_features"`` is
    #: replaced by the data's width.
    fuzz_variants: tuple = ({},)
    #: KLNMF, NormalizedNMF, PLSI and JointNMF: one map-reduce loop of
    #: multiplicative (EM) updates over the documents, with the kernels' fast
    #: paths (length batching, threads) and online learning by stepwise EM.
    multiplicative_family: bool = False

    @property
    def name(self):
        return self.cls.__name__

    def make(self, **params):
        """A test instance: defaults, then ``fast_params``, then ``params``."""
        return self.cls(**{**self.fast_params, **params})

    def iterations_at_tol_zero(self, est):
        """``n_iter_`` of a fit of ``est`` with ``tol=0`` (every iteration runs)."""
        return est.max_iter * (2 * est.n_rounds if self.rounds_of_two_phases else 1)

    def check_instances(self):
        """The instances for scikit-learn's estimator checks."""
        return [self.cls(**params) for params in self.check_params]

    def start_kwargs(self, W, H):
        """``fit``'s keyword arguments of the custom start ``(W, H)``."""
        if self.custom_start == "WH":
            return {"W": W, "H": H}
        if self.custom_start == "H":
            return {"H": H}
        raise ValueError(f"{self.name} has no custom start")

    def __repr__(self):  # pytest ids and assertion messages
        return self.name


def _nmf_family(Estimator, bad_params=None, **capabilities):
    """KLNMF, NormalizedNMF, PLSI, JointNMF: one map-reduce loop of
    multiplicative updates over the documents, online learning by stepwise
    EM (``StepwiseEM``)."""
    return EstimatorSpec(
        Estimator,
        # The tests give max_iter themselves; a test that does not (parameter
        # validation) stops before the first iteration anyway.
        # One split-merge move at most (default: none), as for LDAVI.
        fast_params=_frozen({"max_iter": 20, "split_merge": 1}),
        n_init=True,
        multiplicative_family=True,
        verbose_prefix=Estimator.__name__,
        bad_params=_frozen(
            {
                "learning_decay": (0.5, 1.5),  # in (0.5, 1]
                "learning_offset": (0.5,),  # >= 1
                "split_merge": (-1,),
                "n_init": (0,),
                **(bad_params or {}),
            }
        ),
        **capabilities,
    )


REGISTRY = (
    _nmf_family(
        tf.KLNMF,
        one_pass_params=_frozen({"solver": "mu"}),
        variants=({}, {"solver": "cd"}, {"solver": "mu"}),
        # The default (diagonal Newton), coordinate descent and the
        # multiplicative updates (the former default).
        fuzz_variants=({}, {"solver": "cd"}, {"solver": "mu"}),
    ),
    _nmf_family(
        tf.NormalizedNMF,
        probabilistic_factors=True,
        one_pass_params=_frozen({"solver": "mu"}),
        variants=({}, {"solver": "cd"}, {"solver": "mu"}),
        fuzz_variants=({}, {"solver": "cd"}, {"solver": "mu"}),
    ),
    _nmf_family(
        tf.PLSI,
        fuzz_variants=({}, {"solver": "cd"}, {"solver": "em"}),
        one_pass_params=_frozen({"solver": "em"}),
        variants=(
            {},
            {"solver": "squarem"},
            {"solver": "cd"},
            {"solver": "em"},
            {"beta": 0.8},
        ),
        transform_rows_sum_to_one=True,
        probabilistic_factors=True,
        empty_document_is_p_z=True,
        bad_params={"beta": (0, 0.0, 1.5, -0.5)},
    ),
    _nmf_family(
        tf.JointNMF,
        fuzz_variants=({}, {"normalize": "both"}, {"alpha": 0.5}),
        # The checks run both parametrizations.  transform_rows_sum_to_one
        # is False: the default normalize="components" returns topic weights
        # (normalize="both" returns proportions).
        check_params=({}, {"normalize": "both"}),
        one_pass_params=_frozen({"solver": "joint"}),
        variants=(
            {},
            {"normalize": "both"},
            {"alpha": 0.5},
            {"solver": "squarem", "normalize": "both"},
            {"solver": "dn", "alpha": 0.5},
        ),
        bad_params={
            "normalize": ("rows",),
            "alpha": (-0.5,),
            "solver": ("em", "mu"),
            "max_iter": (0, "many"),
        },
    ),
    EstimatorSpec(
        tf.LDAVI,
        fuzz_variants=(
            {},
            {"topic_word_prior": None},
            {"doc_topic_prior": 2.0},
            {"n_init": 2},
        ),
        # One split-merge move at most (default: none): the moves are
        # exercised, each costs a whole fit; at most 20 E-step sweeps per
        # document and E-step (default: 100) on the tests' small corpora.
        # These contracts are the mean-field VB's (inference="vb"): the
        # default, MAP, runs scikit-learn's estimator checks (check_params,
        # which fit with the defaults), the engine, block-wise and
        # distributed tests (variants), and its own in
        # tests/estimators/test_map_lda.py (CVB0's in test_cvb0.py).
        fast_params=_frozen(
            {"split_merge": 1, "max_doc_update_iter": 20, "inference": "vb"}
        ),
        variants=({}, {"inference": "vb"}),
        check_params=(
            {},
            {"topic_word_prior": None},
            {"learning_method": "online", "doc_topic_prior": 1.5},
        ),
        # The E-step stops a document once the mean change of its gamma is
        # below mean_change_tol: float32 and float64 may stop it after
        # different numbers of sweeps (test_lda.py's float32 test sets it too).
        fixed_iteration_params=_frozen({"mean_change_tol": 0}),
        # The NNDSVDa start's randomized SVD draws from random_state; an
        # instance is then the generator the first E-step's start is drawn
        # from too (random_state_), so it is advanced, where an int seeds a
        # fresh generator for each: another E-step start, another fit.
        rng_instance_differs_from_int_seed_with=("nndsvda",),
        # embedding_ is the last training E-step's gamma, where each document
        # continues from whichever of two starts (all ones, its previous
        # gamma) has the higher bound: a near-tie can go either way in
        # float32 and float64 (observed with max_doc_update_iter=30: one
        # document 3e-4 apart; the fast 20 sweeps happen to miss the tie).
        # transform's fold-in, from all ones only, has no such choice.
        embedding_close_in_float32=False,
        # LDAVI takes no start for the documents: the E-step starts them.
        custom_start="H",
        inits=("nndsvda", "random", "custom"),
        n_init=True,
        transform_rows_sum_to_one=True,
        # components_ is lambda = eta + expected counts: a term without
        # counts keeps the Dirichlet prior eta ("auto": 1 / n_components).
        empty_term_is_zero=False,
        # loss_history_ is minus an evidence lower bound, whose terms
        # (gammaln, digamma, X log(Theta B)) are much larger than sum(X).
        kl_objective=False,
        # A document's sweeps use only its numbers, but its padded width (and
        # so the BLAS summation order over zeros) depends on the documents it
        # is batched with: last-bit differences (test_lda.py pins rtol=1e-10).
        transform_bitwise_per_document=False,
        verbose_prefix="LDAVI",
        bad_params=_frozen(
            {
                "doc_topic_prior": ([1.0, 2.0], [1.0, -1.0, 1.0]),
                "topic_word_prior": (0, -1.0),
                "learning_method": ("stochastic",),
                "split_merge": (-1,),
                "n_init": (0,),
            }
        ),
    ),
    EstimatorSpec(
        tf.GammaPoissonVI,
        fuzz_variants=(
            {},
            {"doc_topic_rate": 0.01},
            {"doc_topic_prior": 2.0},
            {"n_init": 2},
        ),
        fast_params=_frozen({"split_merge": 1, "max_doc_update_iter": 20}),  # as LDAVI
        fixed_iteration_params=_frozen({"mean_change_tol": 0}),
        # Point-estimate topics (LDAVI with topic_word_prior=None): a term a
        # topic does not explain decays geometrically (observed after 20
        # epochs: 6e-306 in float64, 3e-36 in float32).
        fit_underflows_float32=True,
        embedding_close_in_float32=False,  # as LDAVI
        rng_instance_differs_from_int_seed_with=("nndsvda",),  # as LDAVI
        custom_start="H",  # as LDAVI
        inits=("nndsvda", "random", "custom"),
        n_init=True,
        # transform returns E[theta] = a / (b + 1), topic weights whose rows
        # sum to (N_d + sum(alpha)) / (b + 1).
        transform_rows_sum_to_one=False,
        # The Gamma-Poisson bound models the documents' lengths: even an
        # empty document has a cost (its weights' prior is not a point mass).
        zero_data_loss="positive",
        kl_objective=False,  # as LDAVI: minus an evidence lower bound
        transform_bitwise_per_document=False,  # LDAVI's E-step, as LDAVI
        verbose_prefix="GammaPoissonVI",
        bad_params=_frozen({"doc_topic_rate": (0, -1.0), "split_merge": (-1,)}),
    ),
    EstimatorSpec(
        tf.HybridNMFPLSI,
        # Rounds each run two phases of up to max_iter iterations.
        fuzz_variants=(
            {"n_rounds": 2},
            {"n_rounds": 1},
            {"n_rounds": 3},
            {"n_rounds": 2, "nmf_solver": "cd", "plsi_solver": "cd"},
            {"n_rounds": 2, "nmf_solver": "mu", "plsi_solver": "em"},
        ),
        # Two rounds (default: 10), each two phases of up to max_iter; one
        # split-merge move at most (default: none).
        fast_params=_frozen({"n_rounds": 2, "split_merge": 1}),
        n_init=True,
        check_params=({"n_rounds": 3, "max_iter": 50},),
        variants=(
            {},
            {"nmf_solver": "cd", "plsi_solver": "cd"},
            {"nmf_solver": "cd", "plsi_solver": "squarem"},
            {"nmf_solver": "mu", "plsi_solver": "em"},
        ),
        # Two algorithms in turn, each to convergence: not one map-reduce
        # loop over the documents.
        partial_fit=False,
        blockwise=False,
        blocks_refusal="cannot be fitted block by block",
        inits=("kmeans", "random", "nndsvda", "custom"),
        default_init="kmeans",
        # The PLSI phases drive P(w|z) of a term a topic does not explain
        # towards 0 (observed: 3e-285 after 2 rounds of 20 iterations).
        fit_underflows_float32=True,
        transform_rows_sum_to_one=True,
        probabilistic_factors=True,
        empty_document_is_p_z=True,
        # verbose prints one line per phase (tested in test_hybrid.py); the
        # phases' own iteration lines carry KLNMF's and PLSI's names.
        verbose_prefix=None,
        rounds_of_two_phases=True,
        bad_params=_frozen({"n_rounds": (0, 1.5, "2"), "split_merge": (-1,)}),
    ),
    EstimatorSpec(
        tf.SimplexPLSA,
        # "n_features": all the axes; 1: a truncated SVD.
        fuzz_variants=({}, {"svd_components": 1}, {"svd_components": "n_features"}),
        # Real-valued data is its point: negative entries are fine.
        counts_only=False,
        partial_fit=False,
        blockwise=False,
        # Its SVD step and simplex map need the whole matrix.
        blocks_refusal="cannot be fitted block by block",
        custom_start=None,
        inits=("random", "nndsvda", "kmeans"),
        transform_rows_sum_to_one=True,
        # components_ are vertices in data space, mapped back from the
        # simplex: a column without variance comes back as its mean, 0, up
        # to the rounding of that affine map.
        empty_term_is_zero=False,
        # All-zero data maps to the simplex's centroid: the PLSA step starts
        # above 0 and can fit that one point exactly (it ends at 0.0 or at
        # 9e-16, by the rounding of the CPU's vector instructions).
        zero_data_loss="nonnegative",
        # Its vertices enclose the data in its principal subspace: they are
        # not topics of co-occurring words (ten short documents in 31
        # dimensions put both themes on one vertex).
        topics_cluster_documents=False,
        # transform folds in the data mapped onto the simplex, whose dense
        # rows are batched by length in PLSI's fold-in: other rows in the
        # batch change the last bit (observed: 1.7e-16).
        transform_bitwise_per_document=False,
        # score is the cross-entropy of the points mapped onto the simplex
        # (no tokens to hold out); it is defined for all-zero data.
        completion_score=False,
        # loss_history_ is the PLSA objective of the data mapped onto the
        # simplex, whose rows sum to one, not of X.
        kl_objective=False,
        # The per-iteration lines are those of its PLSA step.
        verbose_prefix="PLSI",
        bad_params=_frozen({"svd_components": (0, 1.5)}),
    ),
)

BY_NAME = MappingProxyType({spec.name: spec for spec in REGISTRY})
ALL_ESTIMATORS = [spec.cls for spec in REGISTRY]


def _selected(flags, values):
    for spec in REGISTRY:
        if all(getattr(spec, flag) for flag in flags) and all(
            getattr(spec, key) == value for key, value in values.items()
        ):
            yield spec


def estimators_with(*flags, **values):
    """``pytest.param`` of every spec whose ``flags`` are true and whose
    attributes equal ``values``, with the estimator's name as id.

    ``estimators_with()`` is all eight.
    """
    params = [pytest.param(s, id=s.name) for s in _selected(flags, values)]
    assert params, f"no estimator with {flags} {values}"
    return params


def classes_with(*flags, **values):
    """The classes of the specs selected as by `estimators_with`."""
    classes = [spec.cls for spec in _selected(flags, values)]
    assert classes, f"no estimator with {flags} {values}"
    return classes


def runs_block_by_block(cls, params):
    """Whether the solvers ``params`` resolve to run block by block, by
    their declarations (`models.solvers`): the others are refused there."""
    from sklearn_topicfac.models.solvers import MAP_REDUCE

    est = cls(**params)
    resolved = est._solvers().items() if hasattr(est, "_solvers") else ()
    return all(
        est._solver_models[parameter].solvers[name].needs == MAP_REDUCE
        for parameter, name in resolved
    )


def estimator_variants(*flags, **values):
    """``pytest.param(cls, params)`` of every parameter variant (``variants``)
    of every spec selected as by `estimators_with`, with ids
    ``"<name><params>"``."""
    params, seen = [], set()
    for spec in _selected(flags, values):
        for variant in spec.variants:
            kw = dict(variant)
            key = (spec.name, tuple(sorted(kw.items())))
            if key not in seen:
                seen.add(key)
                params.append(pytest.param(spec.cls, kw, id=f"{spec.name}{kw or ''}"))
    assert params, f"no estimator with {flags} {values}"
    return params


def slow_except(params, *fast):
    """``params`` (``pytest.param`` or classes) with every one not named in
    ``fast`` marked slow: the README's test command keeps one
    representative of a costly test, ``.ci/run`` runs them all."""
    marked, kept = [], set()
    for param in params:
        value = param.values[0] if hasattr(param, "values") else param
        name = getattr(value, "name", getattr(value, "__name__", None))
        if name in fast:
            kept.add(name)
            marked.append(param)
        elif hasattr(param, "values"):
            marked.append(
                pytest.param(*param.values, id=param.id, marks=pytest.mark.slow)
            )
        else:
            marked.append(pytest.param(param, id=name, marks=pytest.mark.slow))
    assert kept == set(fast), f"no parameter named {set(fast) - kept}"
    return marked


def estimators_without(flag):
    """``pytest.param`` of every spec whose ``flag`` is false (or None)."""
    params = [pytest.param(s, id=s.name) for s in REGISTRY if not getattr(s, flag)]
    assert params, f"every estimator has {flag}"
    return params


def estimators_and(values, *flags, accepted=None):
    """``pytest.param(spec, value)`` for every spec with ``flags`` and each of
    ``values`` it accepts (``accepted(spec)``: the values it accepts; by
    default all), with ids ``"<name>-<value>"``."""
    params = []
    for spec in _selected(flags, {}):
        ok = accepted(spec) if accepted else values
        for value in values:
            if value in ok:
                params.append(pytest.param(spec, value, id=f"{spec.name}-{value}"))
    assert params, f"no estimator with {flags} accepting {values}"
    return params


def accepted_inits(spec):
    """The ``init`` values ``spec`` accepts, ``None`` included."""
    return (None, *spec.inits)


def fit_takes_a_start(Estimator):
    """Whether ``fit`` has the ``W`` and ``H`` arguments of a custom start."""
    return {"W", "H"} <= set(inspect.signature(Estimator.fit).parameters)
