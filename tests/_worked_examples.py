"""Worked examples several test files share: the papers' own data and
procedures, written once.

- Paper 001's illustration of the NMF/PLSI difference (`PAPER_X` and its
  starts and printed solution) and its fit by the paper's algorithms;
- the hybrid's phases replayed one by one with KLNMF and PLSI;
- paper 004's triangle perpendicular to the simplex.
"""

import numpy as np

from sklearn_topicfac import KLNMF, PLSI

# Paper 001 (Ding, Li & Peng), "An Illustration of NMF/PLSI Difference":
# X is 5 terms x 6 documents; C0 (terms x topics), S0, H0 (documents x topics).
PAPER_X = np.array(
    [
        [0.048, 0.042, 0.047, 0.024, 0.029, 0.026],
        [0.035, 0.040, 0.045, 0.016, 0.023, 0.029],
        [0.031, 0.019, 0.031, 0.040, 0.045, 0.042],
        [0.027, 0.023, 0.031, 0.032, 0.039, 0.045],
        [0.047, 0.043, 0.035, 0.026, 0.021, 0.019],
    ]
)
PAPER_C0 = np.array(
    [[0.24, 0.20], [0.02, 0.27], [0.31, 0.16], [0.07, 0.26], [0.36, 0.11]]
)
PAPER_S0 = np.array([0.34, 0.66])
PAPER_H0 = np.array(
    [[0.18, 0.19], [0.15, 0.18], [0.15, 0.21], [0.18, 0.12], [0.18, 0.14], [0.16, 0.16]]
)
# The converged NMF solution printed in the paper.
PAPER_NMF_C = np.array(
    [[0.33, 0.14], [0.29, 0.12], [0.02, 0.33], [0.05, 0.29], [0.32, 0.11]]
)
PAPER_NMF_S = np.array([0.39, 0.61])
PAPER_NMF_H = np.array(
    [[0.27, 0.14], [0.28, 0.09], [0.25, 0.15], [0.07, 0.18], [0.06, 0.22], [0.06, 0.23]]
)


def fit_worked_example(estimator):
    # Our orientation is documents x terms: X = X_paper.T, the document
    # factor is H0 S0 and the topic factor is C0.T.  The paper's algorithms:
    # multiplicative updates and plain EM.
    solver = "mu" if estimator is KLNMF else "em"
    model = estimator(2, solver=solver, init="custom", max_iter=5000, tol=0)
    return model.fit(PAPER_X.T, W=PAPER_H0 * PAPER_S0, H=PAPER_C0.T)


def replay_phases(X, n_rounds, **params):
    """The hybrid's phases run one by one with KLNMF and PLSI.

    Round 1's NMF phase is KLNMF from the K-means start; every later phase is
    the other estimator started (``init="custom"``) from the state the
    previous phase ended in, read from its fitted attributes.  Returns the
    objective at the start and after every iteration of every phase, and the
    objective after every phase, as `HybridNMFPLSI` records them.
    ``nmf_solver`` and ``plsi_solver`` (default ``"auto"``) are the phases'
    solvers, as the hybrid's parameters of those names.
    """
    solvers = {
        KLNMF: {"solver": params.pop("nmf_solver", "auto")},
        PLSI: {"solver": params.pop("plsi_solver", "auto")},
    }
    common = dict(split_merge=0, **params)
    N = X.sum()
    model = KLNMF(init="kmeans", **common, **solvers[KLNMF]).fit(X)
    history, phases = list(model.loss_history_), [model.loss_history_[0], model.loss_]
    for _ in range(1, 2 * n_rounds):
        if isinstance(model, KLNMF):
            W, H = model.embedding_, model.components_
            model = PLSI(init="custom", **common, **solvers[PLSI])
        else:
            W, H = model.p_d_given_z_ * model.p_z_ * N, model.components_
            model = KLNMF(init="custom", **common, **solvers[KLNMF])
        model.fit(X, W=W, H=H)
        history.extend(model.loss_history_[1:])
        phases.append(model.loss_)
    return np.array(history), np.array(phases)


def perpendicular_triangle(n=1000, noise=0.1, seed=0):
    """Paper 004's setting: data whose plane of largest variance stands
    perpendicular to the standard simplex.

    Points fill a triangle spanned by the simplex normal (1, 1, 1) and the
    in-simplex direction (1, -1, 0), centred at (4, 4, 4), plus a little
    noise along the remaining direction (1, 1, -2).  Projected onto the
    simplex they collapse onto a thin segment.
    """
    rng = np.random.default_rng(seed)
    normal = np.ones(3) / np.sqrt(3)
    along = np.array([1.0, -1.0, 0.0]) / np.sqrt(2)
    across = np.array([1.0, 1.0, -2.0]) / np.sqrt(6)
    angles = np.deg2rad([90, 210, 330])
    corners = 4 + 3 * (
        np.outer(np.cos(angles), normal) + np.outer(np.sin(angles), along)
    )
    X = rng.dirichlet(np.ones(3), size=n) @ corners
    return X + noise * rng.standard_normal((n, 1)) * across, corners


X_TRIANGLE, CORNERS = perpendicular_triangle()
