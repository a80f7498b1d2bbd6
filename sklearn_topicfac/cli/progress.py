"""The progress bar and the iteration count of a fit, from the fit callback."""

import time
from contextlib import contextmanager

from .. import fit_callback


class _ProgressBar:
    """A one-line progress bar on a stream, redrawn at most ten times a second.

    While the fit runs it shows the iterations counted out of their bound;
    ``close`` draws the final line: the same count and runs as the summary
    line after the fit, the bar full.
    """

    def __init__(self, label, total, stream, width=30):
        self.label, self.total, self.stream, self.width = label, total, stream, width
        self.count = 0
        self.start = time.perf_counter()
        self._drawn = -1.0

    def update(self, count):
        self.count = count
        now = time.perf_counter()
        if now - self._drawn >= 0.1:
            self._draw(now, f"{self.count}/{self.total} iterations")

    def _draw(self, now, text, done=None):
        self._drawn = now
        if done is None:
            done = min(self.count / self.total, 1.0) if self.total else 0.0
        filled = int(round(self.width * done))
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(f"\r{self.label} [{bar}] {text} {now - self.start:6.1f} s")
        self.stream.flush()

    def close(self, text):
        self._draw(time.perf_counter(), text, done=1.0)
        self.stream.write("\n")
        self.stream.flush()


class _IterationCount:
    """The iterations and runs of the fit loop, counted by the fit callback.

    A run is counted when its first iteration is: a start, a split-merge
    trial, the kept fit's continuation, a phase of the hybrid.
    """

    def __init__(self, bar=None):
        self.count, self.runs, self.bar = 0, 0, None
        self.bar = bar

    def __call__(self, info):
        self.count += 1
        self.runs += info.iteration == 1
        if self.bar is not None:
            self.bar.update(self.count)

    def describe(self):
        runs = "run" if self.runs == 1 else "runs"
        return f"{self.count} iterations in {self.runs} {runs}"


@contextmanager
def _progress(estimator, enabled, stream):
    """Count the iterations while ``estimator`` fits; show a bar if ``enabled``.

    Every iteration of every run of the fit loop advances the count (an
    epoch for LDAVI); while fitting, the bar counts up to its bound, ``runs
    * max_iter`` (the estimator's plan bounds the runs); its last line gives
    the iterations and runs counted, the numbers of the summary line after
    the fit.
    SimplexPLSA's bar counts its PLSA step.
    """
    runs = getattr(estimator, "_max_runs", lambda: 1)()  # foreign: one run
    # Ours resolve max_iter="auto" to the number the fit runs with.
    cap = getattr(estimator, "_iteration_cap", None)
    total = runs * ((cap() if cap else getattr(estimator, "max_iter", 0)) or 0)
    bar = _ProgressBar(f"[{type(estimator).__name__}]", total, stream)
    counter = _IterationCount(bar if enabled else None)
    try:
        with fit_callback(counter):
            yield counter
    finally:
        if enabled:
            bar.close(counter.describe())
