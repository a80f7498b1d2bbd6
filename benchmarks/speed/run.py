"""Speed and memory of sklearn-topicfac against scikit-learn, gensim and tomotopy.

One process, the same data and the same starting factors for every runner;
medians over interleaved repeats.  Prints Markdown tables (the ones in
docs/performance.md).  From the repository root:

    python benchmarks/speed/run.py --quick      # < 3 minutes: small corpus only
    python benchmarks/speed/run.py              # all corpora (tens of minutes)

Peers are the ``bench`` extra: ``pip install -e ".[bench]"``.
"""

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
# Benchmark this checkout, not whatever copy of the package is installed.
sys.path.insert(0, REPO)

import corpora  # noqa: E402
import lda  # noqa: E402
import machine  # noqa: E402
import nmf  # noqa: E402
import numpy as np  # noqa: E402
from measure import release_freed_memory  # noqa: E402

import sklearn_topicfac  # noqa: E402
from sklearn_topicfac.kernels import _parallel  # noqa: E402

SETTINGS = {
    "quick": {
        "corpora": ["small"],
        "n_iter": {"small": 3},
        "repeats": {"small": 2},
        "single_thread": False,
        "checkpoints": {"small": [1, 3]},
        "kernel_repeats": 3,
        "bandwidth_bytes": 1 << 29,
        "lda_docs": 3000,
        "lda_epochs": 1,
        "lda_repeats": 1,
        "gensim_passes": None,
    },
    "full": {
        "corpora": ["small", "large", "20newsgroups"],
        "n_iter": {"small": 10, "large": 5, "20newsgroups": 5},
        "repeats": {"small": 3, "large": 2, "20newsgroups": 2},
        "single_thread": True,
        "checkpoints": {"small": [1, 2, 5, 10], "large": [1, 5]},
        "kernel_repeats": 5,
        "bandwidth_bytes": 1 << 30,
        "lda_docs": None,
        "lda_epochs": 3,
        "lda_repeats": 2,
        "gensim_passes": 5,
    },
}
K_TOPICS = 20


def fmt(value, digits=3):
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    if isinstance(value, (int, np.integer)):
        return str(value)
    if value != 0 and (abs(value) >= 1e6 or abs(value) < 1e-3):
        return f"{value:.{digits}e}"
    return f"{value:.{digits}g}" if abs(value) < 10 else f"{value:,.1f}"


def table(columns, rows):
    """Markdown table; ``columns`` is a list of (header, key, digits)."""
    lines = [
        "| " + " | ".join(h for h, _, _ in columns) + " |",
        "|" + "|".join("---" for _ in columns) + "|",
    ]
    for row in rows:
        cells = [fmt(row.get(key), digits) for _, key, digits in columns]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


class Report:
    def __init__(self):
        self.lines = []

    def __call__(self, *lines):
        for line in lines:
            print(line, flush=True)
            self.lines.append(line)


def settle(args):
    """Load average now, after waiting for a quiet machine if asked to."""
    if args.max_load:
        return machine.wait_for_quiet(args.max_load)
    return machine.load_average()


def corpus(name, data_dir):
    if name == "20newsgroups":
        return corpora.newsgroups(data_dir)
    return corpora.generated(name)


def describe_corpus(name, X):
    n, m = X.shape
    words = X.sum()
    return (
        f"{name}: {n:,} documents x {m:,} terms, {X.nnz:,} stored entries "
        f"({X.nnz / n:.0f} per document, {words / n:.0f} words per document, "
        f"density {X.nnz / (n * m):.2%})"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small corpus only")
    parser.add_argument(
        "--corpora", help="comma-separated subset of: small, large, 20newsgroups"
    )
    parser.add_argument("--skip-lda", action="store_true")
    parser.add_argument("--skip-nmf", action="store_true")
    parser.add_argument(
        "--threads", type=int, default=_parallel.N_THREADS, help="kernel threads (ours)"
    )
    parser.add_argument(
        "--data-dir",
        default=os.path.join(os.path.dirname(REPO), "shared", "data"),
        help="folder holding 20newsgroups/20Newsgroups.mat",
    )
    parser.add_argument(
        "--max-load",
        type=float,
        help="before each timed section, wait (up to 10 min) until the 1-minute "
        "load average is below this (shared machines)",
    )
    parser.add_argument("--markdown", help="also write the tables to this file")
    parser.add_argument("--json", help="also write the raw results to this file")
    parser.add_argument(
        "--write-doc",
        metavar="NAME",
        help="also write the tables as the generated block NAME (docs/_data)",
    )
    args = parser.parse_args(argv)
    cfg = SETTINGS["quick" if args.quick else "full"]
    names = args.corpora.split(",") if args.corpora else cfg["corpora"]
    _parallel.N_THREADS = args.threads
    release_freed_memory()
    began = time.perf_counter()
    out = Report()
    raw = {"mode": "quick" if args.quick else "full", "threads": args.threads}

    out("## Machine", "")
    out(
        f"- sklearn_topicfac imported from {os.path.dirname(sklearn_topicfac.__file__)}"
    )
    out(*[f"- {line}" for line in machine.describe()])
    out(f"- load average at start: {machine.load_average():.2f}")
    out(f"- kernel threads (ours): {args.threads}")
    bw = machine.memory_bandwidth(cfg["bandwidth_bytes"])
    raw["bandwidth"] = bw
    floor_gbs = max(bw["copy"])
    out(
        "",
        "Memory bandwidth (GB/s, best of 5, arrays of "
        f"{cfg['bandwidth_bytes'] >> 20} MiB; copy counts read + write):",
        "",
        "| | read | write | copy |",
        "|---|---|---|---|",
        *(
            f"| {label} | {bw['read'][i]:.1f} | {bw['write'][i]:.1f} "
            f"| {bw['copy'][i]:.1f} |"
            for i, label in enumerate(["1 thread", f"{bw['threads']} threads"])
        ),
        "",
        f"Copy within L2 (256 KiB arrays): {bw['l2_copy']:.1f} GB/s.",
        "",
        f"Bandwidth floors below use the best copy rate, {floor_gbs:.1f} GB/s; "
        "cache floors the L2 copy rate.",
    )

    raw["corpora"] = {}
    if not args.skip_nmf:
        for name in names:
            X64 = corpus(name, args.data_dir)
            if X64 is None:
                out("", f"### {name}: not found under {args.data_dir}, skipped")
                continue
            n_iter = cfg["n_iter"].get(name, 10)
            repeats = cfg["repeats"].get(name, 3)
            out("", f"## KL-NMF family: {describe_corpus(name, X64)}", "")
            out(f"Load average before this corpus: {settle(args):.2f}.", "")
            res = raw["corpora"][name] = {}
            for dtype in (np.float64, np.float32):
                X = X64.astype(dtype)
                tag = np.dtype(dtype).name
                settle(args)
                rows = nmf.estimator_rows(
                    X, K_TOPICS, n_iter, repeats, args.threads, cfg["single_thread"]
                )
                res[f"estimators_{tag}"] = rows
                out(
                    f"### {tag}: k = {K_TOPICS}, {n_iter} iterations from the same "
                    f"start, median of {repeats}",
                    "",
                    *table(
                        [
                            ("runner", "runner", 0),
                            ("ms / iteration", "ms_per_iter", 3),
                            ("best ms / iteration", "best_ms_per_iter", 3),
                            ("CPU ms / iteration", "cpu_ms_per_iter", 3),
                            ("speed-up vs scikit-learn", "speedup", 3),
                            ("speed-up, CPU time", "cpu_speedup", 3),
                            ("objective D(X || WH)", "objective", 7),
                            ("peak RSS MiB", "peak_rss_mib", 3),
                            ("peak traced MiB", "traced_mib", 3),
                        ],
                        rows,
                    ),
                    "",
                )
                kr = nmf.kernel_rows(
                    X,
                    K_TOPICS,
                    cfg["kernel_repeats"],
                    args.threads,
                    floor_gbs,
                    bw["l2_copy"],
                )
                res[f"kernels_{tag}"] = kr
                out(
                    f"Kernels ({tag}), median of {cfg['kernel_repeats']}:",
                    "",
                    *table(
                        [
                            ("kernel", "kernel", 0),
                            ("plain ms", "plain_ms", 3),
                            ("ours 1 thread ms", "ours_1t_ms", 3),
                            (f"ours {args.threads} threads ms", "ours_ms", 3),
                            ("speed-up", "speedup", 3),
                            ("MiB touched", "mib", 3),
                            ("bandwidth floor ms", "floor_ms", 3),
                            ("floor / time %", "floor_pct", 3),
                            ("cache floor / time %", "cache_floor_pct", 3),
                        ],
                        kr,
                    ),
                    "",
                )
            x_bytes = X64.nnz * (8 + 4) + (X64.shape[0] + 1) * 4
            ours64 = [r for r in res["estimators_float64"] if "(" not in r["runner"]]
            worst = max(r["traced_mib"] for r in ours64) * 2**20
            out(
                f"Memory, float64: X takes {x_bytes / 2**20:.1f} MiB (CSR); the "
                f"largest peak traced allocation of our fits is {worst / 2**20:.1f} "
                f"MiB = {worst / x_bytes:.2f} x X; a dense n x m float64 array "
                f"would take {X64.shape[0] * X64.shape[1] * 8 / 2**30:.2f} GiB.",
                "",
            )
            checkpoints = cfg["checkpoints"].get(name)
            if checkpoints:
                traj = nmf.trajectory(X64, K_TOPICS, checkpoints)
                res["trajectory"] = traj
                worst = max(r["rel_diff"] for r in traj)
                out(
                    "Objective trajectory, float64, KLNMF vs scikit-learn from the "
                    f"same start (max relative difference {worst:.1e}):",
                    "",
                    *table(
                        [
                            ("iteration", "iteration", 0),
                            ("scikit-learn", "scikit-learn", 10),
                            ("KLNMF", "KLNMF", 10),
                            ("relative difference", "rel_diff", 2),
                        ],
                        traj,
                    ),
                    "",
                )

    if not args.skip_lda:
        run_lda(out, raw, cfg, args)

    elapsed = time.perf_counter() - began
    out(
        "",
        f"Total benchmark time: {elapsed / 60:.1f} min; load average at end: "
        f"{machine.load_average():.2f}.",
    )
    raw["seconds"] = elapsed
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(out.lines) + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(raw, f, indent=1, default=str)
    if args.write_doc:
        sys.path.insert(0, os.path.join(REPO, "benchmarks"))
        from _docblocks import write_doc

        write_doc(args.write_doc, "\n".join(out.lines), "docs/performance.md")


def run_lda(out, raw, cfg, args):
    X = corpora.generated("small")
    lda_name = "small"
    if cfg["lda_docs"]:
        X = X[: cfg["lda_docs"]]
        lda_name = f"first {cfg['lda_docs']:,} documents of small"
    train, test = corpora.held_out_split(X)
    test_obs, test_held = corpora.completion_split(test)
    peers = lda.available_peers()
    load = settle(args)
    out(
        "",
        f"## LDA: {describe_corpus(lda_name, X)}",
        "",
    )
    out(
        f"- train {train.shape[0]:,} documents, held-out {test_obs.shape[0]:,}; "
        "perplexity = document completion (each held-out document folded in on a "
        "random half of its words, scored on the other half; same code for every "
        "library)",
        "- peers: "
        + ", ".join(f"{k} {v or 'not installed'}" for k, v in peers.items()),
        f"- load average before this section: {load:.2f}",
    )
    if lda.ldavi_class() is None:
        out("- LDAVI not available (sklearn_topicfac.LDAVI cannot be imported)")
    epochs = cfg["lda_epochs"]
    rows = lda.epoch_rows(
        train,
        test_obs,
        test_held,
        K_TOPICS,
        epochs,
        cfg["lda_repeats"],
        args.threads,
        peers,
    )
    raw["lda"] = rows
    out(
        "",
        f"k = {K_TOPICS}, {epochs} epoch(s) per fit, median of {cfg['lda_repeats']}:",
        "",
        *table(
            [
                ("runner", "runner", 0),
                ("s / epoch", "s_per_epoch", 3),
                ("CPU s / epoch", "cpu_s_per_epoch", 3),
                ("speed-up vs scikit-learn batch", "speedup", 3),
                ("speed-up, CPU time", "cpu_speedup", 3),
                ("held-out perplexity", "perplexity", 5),
                ("peak RSS MiB", "peak_rss_mib", 3),
            ],
            rows,
        ),
        "",
    )
    if cfg["gensim_passes"]:
        result = lda.time_to_gensim(
            train,
            test_obs,
            test_held,
            K_TOPICS,
            cfg["gensim_passes"],
            [1, 2, 3, 5, 8, 13, 20],
        )
        raw["lda_time_to_gensim"] = result
        if result is None:
            out("Time to gensim's perplexity: skipped (gensim or LDAVI missing).")
        else:
            trace = ", ".join(
                f"{e} epochs: {t:.1f} s, {p:.2f}" for e, t, p in result["trace"]
            )
            verdict = (
                f"LDAVI reaches it in {result['ldavi_s']:.1f} s"
                if result["ldavi_s"] is not None
                else "LDAVI does not reach it within the checkpoints"
            )
            out(
                f"Time to the same held-out perplexity: gensim LdaModel, "
                f"{result['passes']} passes, {result['gensim_s']:.1f} s, perplexity "
                f"{result['gensim_perplexity']:.2f}; {verdict} (LDAVI batch, "
                f"default start and split-merge moves: {trace}).",
            )


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    main()
