"""Shashanka & Giering (2010), Figures 2-4: plain PLSA vs SimplexPLSA on 3-D data.

The synthetic data: 1000 points filling a triangle whose plane stands
perpendicular to the standard simplex -- it is spanned by the simplex normal
(1, 1, 1) and the in-simplex direction (1, -1, 0) -- centred at (4, 4, 4), plus
a little Gaussian noise along the remaining direction (1, 1, -2).  The two
directions of largest variance are thus the normal of the simplex and one
direction within it; projected onto the simplex (what PLSA models) the data
collapse onto a thin segment (paper 004, Fig. 2).

Plain PLSA (:class:`PLSI`, 3 topics) and :class:`SimplexPLSA` (3 bases) are
fitted for several seeds.  Reported, mean and range over the seeds:

* reconstruction error of the original data, ``||X - X_hat||_F / ||X - mean||_F``
  (1.0 is what the mean alone achieves).  For SimplexPLSA
  ``X_hat = transform(X) @ components_``.  For PLSA two readings:
  the simplex decomposition ``P(z|d) @ P(w|z)`` (weights summing to one, as in
  SimplexPLSA), and the count model ``N_d P(z|d) @ P(w|z)`` that uses each
  point's coordinate sum as an extra free scale;
* the fraction of points inside each learned simplex: a point is inside when
  its orthogonal projection onto the simplex's plane has non-negative
  barycentric coordinates.  For PLSA both for the original points and for the
  normalized points ``x / sum(x)`` that PLSA actually decomposes;
* how degenerate each simplex is: ratio of the second to the first singular
  value of its centred vertices (0 for a segment, 1 for an equilateral triangle);
* the distance of SimplexPLSA's vertices to the true corners.

Usage::

    python benchmarks/paper004_simplex.py [--seeds N] [--quick] [--no-write]

Writes the tables into ``docs/paper004_simplex.md`` (the generated block
``paper004_simplex``, from ``docs/_data/paper004_simplex.json``; see
benchmarks/README.md) and the figure ``docs/figures/paper004_simplex.png``
(if matplotlib is installed: ``pip install "sklearn-topicfac[plot]"``).
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from _docblocks import command_line, parts_from_markdown, write_block

from sklearn_topicfac import LDAVI, PLSI, SimplexPLSA
from sklearn_topicfac.models.simplex import affine_coordinates

REPO_ROOT = Path(__file__).resolve().parents[1]
DOC_PATH = REPO_ROOT / "docs" / "paper004_simplex.md"
FIGURE_PATH = REPO_ROOT / "docs" / "figures" / "paper004_simplex.png"

NORMAL = np.ones(3) / np.sqrt(3)
ALONG = np.array([1.0, -1.0, 0.0]) / np.sqrt(2)
ACROSS = np.array([1.0, 1.0, -2.0]) / np.sqrt(6)


def make_data(n=1000, noise=0.1, seed=0):
    """The 3-D data set and its true corners (see the module docstring)."""
    rng = np.random.default_rng(seed)
    angles = np.deg2rad([90, 210, 330])
    corners = 4 + 3 * (
        np.outer(np.cos(angles), NORMAL) + np.outer(np.sin(angles), ALONG)
    )
    X = rng.dirichlet(np.ones(3), size=n) @ corners
    return X + noise * rng.standard_normal((n, 1)) * ACROSS, corners


def inside(X, vertices):
    """Fraction of points whose projection on the simplex's plane is inside it."""
    return float(np.mean(np.all(affine_coordinates(X, vertices) >= -1e-9, axis=1)))


def thinness(vertices):
    s = np.linalg.svd(vertices - vertices.mean(axis=0), compute_uv=False)
    return float(s[1] / s[0])


def relative_error(X, X_hat):
    return float(np.linalg.norm(X - X_hat) / np.linalg.norm(X - X.mean(axis=0)))


def run(X, corners, seed, max_iter, tol):
    lengths = X.sum(axis=1, keepdims=True)
    common = dict(n_components=3, init="random", max_iter=max_iter, tol=tol)
    # The paper's PLSA: plain EM (PLSI's default is diagonal Newton), without
    # the split-merge moves.
    plsa = PLSI(solver="em", random_state=seed, split_merge=0, **common).fit(X)
    theta = plsa.transform(X)
    simplex = SimplexPLSA(random_state=seed, **common).fit(X)
    weights = simplex.transform(X)
    # Not in the paper: keep the third axis too (a 4-dimensional T), 4 bases.
    full = SimplexPLSA(svd_components=3, random_state=seed, **common)
    full.set_params(n_components=4).fit(X)
    # Paper 004, §3.4: LDA as the inner model (points of mass 1000).
    lda = SimplexPLSA(
        n_components=3,
        inner_model=LDAVI(
            inference="vb", max_iter=300, split_merge=0, random_state=seed
        ),
        point_mass=1000.0,
    ).fit(X)

    def corner_distance(est):
        distance = np.linalg.norm(
            est.components_[:, None, :] - corners[None, :, :], axis=2
        )
        return float(distance.min(axis=1).max())

    return {
        "plsa": plsa,
        "simplex": simplex,
        "PLSA, weights on the simplex": {
            "error": relative_error(X, plsa.inverse_transform(theta)),
            "inside": inside(X, plsa.components_),
            "inside normalized": inside(X / lengths, plsa.components_),
            "thinness": thinness(plsa.components_),
        },
        "PLSA, count model": {
            "error": relative_error(X, plsa.inverse_transform(theta) * lengths),
        },
        "SimplexPLSA": {
            "error": relative_error(X, simplex.inverse_transform(weights)),
            "inside": inside(X, simplex.components_),
            "thinness": thinness(simplex.components_),
            "corner distance": corner_distance(simplex),
            "iterations": simplex.n_iter_,
        },
        "SimplexPLSA, LDA inner model": {
            "error": relative_error(X, lda.inverse_transform(lda.transform(X))),
            "inside": inside(X, lda.components_),
            "thinness": thinness(lda.components_),
            "corner distance": corner_distance(lda),
        },
        "SimplexPLSA, all axes": {
            "error": relative_error(X, full.inverse_transform(full.transform(X))),
            "inside": inside(X, full.components_),
        },
    }


def summary(values, digits=3):
    values = np.asarray(values, dtype=float)
    if values.min() == values.max():
        return f"{values.mean():.{digits}f}"
    low, high = values.min(), values.max()
    return f"{values.mean():.{digits}f} ({low:.{digits}f}–{high:.{digits}f})"


def tables(X, corners, runs, args, elapsed):
    s = np.linalg.svd(X - X.mean(axis=0), compute_uv=False)
    lost = s[-1] ** 2 / np.sum(s**2)
    rows = [
        ("PLSA, weights on the simplex", "PLSA (`PLSI`), `P(z\\|d) @ P(w\\|z)`"),
        ("PLSA, count model", "PLSA, `N_d P(z\\|d) @ P(w\\|z)` (free scale per point)"),
        ("SimplexPLSA", "`SimplexPLSA`"),
        (
            "SimplexPLSA, LDA inner model",
            "`SimplexPLSA(inner_model=LDAVI(...), point_mass=1000)` (§3.4)",
        ),
        (
            "SimplexPLSA, all axes",
            "`SimplexPLSA(n_components=4, svd_components=3)` (not in the paper)",
        ),
    ]

    def cell(key, metric, digits=3):
        values = [r[key][metric] for r in runs if metric in r[key]]
        return summary(values, digits) if values else "—"

    lines = [
        f"Generated by `python benchmarks/paper004_simplex.py"
        f"{' --quick' if args.quick else ''}`: {X.shape[0]} points, seeds "
        f"0..{args.seeds - 1} (random starts of the PLSA steps; the data are "
        f"fixed), "
        f"`max_iter={args.max_iter}`, `tol={args.tol}`, {elapsed:.0f} s. "
        "Mean (range) over the seeds.",
        "",
        f"Singular values of the centred data: {', '.join(f'{v:.1f}' for v in s)}; "
        f"the last principal axis, which the paper's 3 x 3 `T` turns orthogonal "
        f"to the simplex and the reconstruction drops, holds {100 * lost:.2f} % "
        f"of the variance, i.e. a reconstruction error of at least "
        f"{np.sqrt(lost):.3f} for SimplexPLSA.",
        "",
        "| model | reconstruction error | points inside its simplex | normalized "
        "points inside | thinness of the simplex |",
        "|---|---|---|---|---|",
    ]
    for key, label in rows:
        lines.append(
            f"| {label} | {cell(key, 'error')} | {cell(key, 'inside')} | "
            f"{cell(key, 'inside normalized')} | {cell(key, 'thinness')} |"
        )
    lines += [
        "",
        f"True triangle: thinness {thinness(corners):.3f}. Largest distance from a "
        f"SimplexPLSA vertex to the nearest true corner: "
        f"{cell('SimplexPLSA', 'corner distance')} (the triangle's side is "
        f"{np.linalg.norm(corners[0] - corners[1]):.2f}); with the LDA inner model: "
        f"{cell('SimplexPLSA, LDA inner model', 'corner distance')}. EM steps of "
        "SimplexPLSA's "
        f"PLSA step: {cell('SimplexPLSA', 'iterations', 0)}.",
        "",
        "PLSA simplex by seed (thinness / share of normalized points inside): "
        + ", ".join(
            f"{r['PLSA, weights on the simplex']['thinness']:.2f} / "
            f"{r['PLSA, weights on the simplex']['inside normalized']:.2f}"
            for r in runs
        )
        + ".",
        "",
        f"Vertices learned with seed {representative(runs)} (the median PLSA "
        "thinness; the one in the figure):",
        "",
        "| model | vertex 1 | vertex 2 | vertex 3 |",
        "|---|---|---|---|",
    ]
    shown = runs[representative(runs)]
    for name, est in (("PLSA", shown["plsa"]), ("SimplexPLSA", shown["simplex"])):
        cells = [
            "(" + ", ".join(f"{v:.2f}" for v in vertex) + ")"
            for vertex in est.components_
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    cells = ["(" + ", ".join(f"{v:.2f}" for v in c) + ")" for c in corners]
    lines.append("| true corners | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_report(generated):
    """Write the block ``paper004_simplex`` and its results file."""
    return write_block(
        "paper004_simplex", DOC_PATH, command_line(), parts_from_markdown(generated)
    )


def _triangle(ax, vertices, *args, **kwargs):
    closed = np.vstack([vertices, vertices[:1]])
    ax.plot(*closed.T, *args, **kwargs)


def representative(runs):
    """The run whose PLSA simplex has the median thinness."""
    order = np.argsort([r["PLSA, weights on the simplex"]["thinness"] for r in runs])
    return int(order[len(order) // 2])


def plot(X, corners, result, seed, path):
    """Paper 004's Figures 2-4 in one figure, for one seed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no figure (pip install matplotlib)")
        return
    plsa, simplex = result["plsa"], result["simplex"]
    normalized = X / X.sum(axis=1, keepdims=True)
    standard = np.eye(3)
    sample = slice(None, None, 2)
    fig = plt.figure(figsize=(12, 10))

    # (a) Seen along the simplex normal (1, 1, 1): the data's plane is edge on.
    ax = fig.add_subplot(2, 2, 1, projection="3d")
    ax.scatter(*X[sample].T, s=3, c="tab:red", alpha=0.4, label="data")
    ax.scatter(*normalized[sample].T, s=3, c="tab:blue", alpha=0.6, label="x / sum(x)")
    _triangle(ax, standard, "k-", lw=0.8, label="standard simplex")
    _triangle(ax, plsa.components_, "g-", lw=2, label="PLSA simplex")
    ax.view_init(elev=35.26, azim=45)
    ax.set_title("(a) Data and its normalization, seen along (1, 1, 1)")
    ax.legend(fontsize=8, loc="upper left")

    # (b) The standard simplex face on: what plain PLSA decomposes.
    ax = fig.add_subplot(2, 2, 2)
    in_plane = np.vstack([ALONG, ACROSS]).T

    def simplex_view(P):
        return (P - 1 / 3) @ in_plane

    _triangle(ax, simplex_view(standard), "k-", lw=0.8, label="standard simplex")
    ax.scatter(
        *simplex_view(normalized).T, s=3, c="tab:blue", alpha=0.6, label="x / sum(x)"
    )
    _triangle(ax, simplex_view(plsa.components_), "g-", lw=2, label="PLSA simplex")
    ax.set_aspect("equal")
    ax.set_title("(b) Plain PLSA on the standard simplex (Figs. 2-3)")
    ax.legend(fontsize=8)

    # (c) SimplexPLSA, seen along the normal of the data's plane.
    ax = fig.add_subplot(2, 2, 3, projection="3d")
    ax.scatter(*X[sample].T, s=3, c="tab:red", alpha=0.4, label="data")
    _triangle(ax, standard, "k-", lw=0.8, label="standard simplex")
    _triangle(ax, simplex.components_, "k--", lw=2, label="SimplexPLSA simplex")
    ax.view_init(elev=54.74, azim=225)
    ax.set_title("(c) SimplexPLSA (Fig. 4)")
    ax.legend(fontsize=8, loc="upper left")

    # (d) The data's plane face on: SimplexPLSA's triangle and the true one.
    ax = fig.add_subplot(2, 2, 4)
    basis = np.vstack([ALONG, NORMAL]).T
    center = X.mean(axis=0)

    def face_on(P):
        return (P - center) @ basis

    ax.scatter(*face_on(X).T, s=3, c="tab:red", alpha=0.4, label="data")
    _triangle(ax, face_on(simplex.components_), "k--", lw=2, label="SimplexPLSA")
    _triangle(ax, face_on(corners), ":", c="tab:purple", lw=2, label="true triangle")
    ax.set_xlabel("along (1, -1, 0)")
    ax.set_ylabel("along the simplex normal (1, 1, 1)")
    ax.set_aspect("equal")
    ax.set_title("(d) The data's plane, face on")
    ax.legend(fontsize=8)
    fig.suptitle(f"Plain PLSA vs SimplexPLSA, 3 bases, seed {seed}")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=None, help="default 10 (3 quick)")
    parser.add_argument("--quick", action="store_true", help="3 seeds")
    parser.add_argument("--max-iter", type=int, default=2000)
    parser.add_argument("--tol", type=float, default=1e-7)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    if args.seeds is None:
        args.seeds = 3 if args.quick else 10
    start = time.perf_counter()
    X, corners = make_data()
    runs = [
        run(X, corners, seed, args.max_iter, args.tol) for seed in range(args.seeds)
    ]
    generated = tables(X, corners, runs, args, time.perf_counter() - start)
    print(generated)
    if not args.no_write:
        data = write_report(generated)
        print(f"\nwrote {DOC_PATH} and {data}")
        seed = representative(runs)
        plot(X, corners, runs[seed], seed, FIGURE_PATH)
    return 0


if __name__ == "__main__":
    sys.exit(main())
