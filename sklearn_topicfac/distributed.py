"""Fitting on a Dask cluster: a map-reduce of per-document statistics.

Pass a dask array, chunked by rows only (chunks may be NumPy or SciPy
sparse), to ``fit`` while a ``dask.distributed`` client is active::

    from dask.distributed import Client, LocalCluster
    client = Client(LocalCluster(n_workers=4))
    X = dask.array.from_array(X_csr, chunks=(10_000, -1), asarray=False)
    model = PLSI(n_components=50).fit(X)        # runs on the cluster

The blocks and their document factors stay on the workers; one iteration
moves the topics to the workers and adds the statistics up on the workers
in a fixed tree, about one partial sum per worker and level of the tree (at
most 8 levels), the sum coming back to the client: ``O(k x n_features)`` per
worker and level, whatever the number of documents.  A fit
survives the loss of a worker (its blocks are recomputed from the graph,
their document factors from a checkpoint and the steps since).  How it
works: `sklearn_topicfac.engine.dask`.

Without an active client, a dask array is fitted out-of-core in this
process, one block at a time (see `sklearn_topicfac.out_of_core`).  Dask
is an optional dependency: ``pip install "sklearn-topicfac[distributed]"``.

A block-wise fit starts where the in-memory fit starts, at every ``init``
but ``"kmeans"`` (the SVD start is computed from products of X with thin
matrices, a pass over the blocks each), so ``fit(X_dask)`` equals
``fit(X_dask.compute())`` with the same parameters up to the order of the
sums over documents (rounding; see ``docs/guide/scaling.md``).  The runner is
`sklearn_topicfac.engine.dask.DaskRunner`.
"""

from .engine.dask import DaskData, active_client

__all__ = ["fit_dask"]


def fit_dask(
    estimator, X, *, client=None, checkpoint_every=10, W=None, H=None, callback=None
):
    """Fit ``estimator`` on the dask array ``X`` on a ``dask.distributed`` cluster.

    ``estimator.fit(X)`` does the same with the active client and the
    defaults; this function exposes the options.

    Parameters
    ----------
    estimator : KLNMF, NormalizedNMF, PLSI, JointNMF, LDAVI or GammaPoissonVI
        The (unfitted) estimator; it is fitted in place.
    X : dask.array.Array of shape (n_samples, n_features)
        Non-negative counts, chunked by rows only.
    client : distributed.Client, default=None
        The client to run on; by default the active one.
    checkpoint_every : int, default=10
        Iterations between copies of the document factors kept by the
        client.  After losing a worker, the fit replays at most this many
        document steps for the lost blocks.  Each copy moves
        ``n_samples x n_components`` numbers from the workers to the client.
    W, H : array-like, default=None
        Custom start (with ``init="custom"``), as for ``fit``.
    callback : callable, default=None
        Called as ``callback(iteration, objective)`` after every iteration
        (``objective``: the documents' part of the objective, summed over
        the blocks).

    Returns
    -------
    estimator : object
        The fitted estimator.  Besides the usual attributes it has
        ``n_bytes_per_iteration_``: the bytes of topics and statistics moved
        between the client and the workers in each iteration (the payloads'
        sizes).
    """
    if not isinstance(checkpoint_every, int) or checkpoint_every < 1:
        raise ValueError(
            f"checkpoint_every must be a positive integer, got {checkpoint_every}."
        )
    if client is None:
        client = active_client()
        if client is None:
            raise ValueError(
                "fit_dask needs a dask.distributed client: create one first, "
                "e.g. Client(LocalCluster()), or pass client=."
            )
    data = DaskData(X, client, checkpoint_every, callback)
    return estimator.fit(data, W=W, H=H)
