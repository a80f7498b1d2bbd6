"""The vocabulary options: raw text counted, or a count matrix's columns kept."""

import numpy as np
import scipy.sparse as sp
from sklearn.compose import ColumnTransformer
from sklearn.feature_extraction.text import CountVectorizer

from .inputs import _CorpusError
from .options import DEFAULT_MAX_DF, _stop_words_option


def _stop_words(args):
    """The stop words as a sorted list, or None."""
    words = args.stop_words
    if isinstance(words, str):  # the default, not parsed by argparse's type
        words = _stop_words_option(words)
    return None if words is None else sorted(words)


def _max_df(args, raw_text):
    if args.max_df is None:
        return DEFAULT_MAX_DF if raw_text else 1.0
    return args.max_df


def _vectorize(corpus, args):
    """Counts of the corpus, their terms, and what makes them from the input.

    The last is the fitted vectorizer for raw text; for a count matrix, a
    fitted column selection when the options drop columns, else None.
    """
    if corpus.docs is not None:
        vectorizer = CountVectorizer(
            stop_words=_stop_words(args),
            min_df=args.min_df,
            max_df=_max_df(args, raw_text=True),
            max_features=args.max_features,
            token_pattern=args.token_pattern,
        )
        try:
            X = vectorizer.fit_transform(corpus.docs)
        except ValueError as exc:
            raise _CorpusError(
                f"{corpus.name}: no term left to count ({exc}); check the input, "
                "or relax --stop-words / --min-df / --max-df / --token-pattern"
            ) from None
        vocabulary = np.asarray(vectorizer.get_feature_names_out(), dtype=object)
        return X.astype(np.float64).tocsr(), vocabulary, vectorizer
    X, vocabulary = corpus.X, corpus.vocabulary
    if vocabulary is None:
        vocabulary = np.asarray([f"term{j}" for j in range(X.shape[1])], dtype=object)
    keep = _column_filter(X, vocabulary, args)
    if keep is None:
        return X, vocabulary, None
    if not keep.any():
        raise _CorpusError(
            f"{corpus.name}: no term left after --stop-words / --min-df / "
            "--max-df / --max-features"
        )
    columns = ColumnTransformer(
        [("terms", "passthrough", np.flatnonzero(keep))], sparse_threshold=1.0
    ).fit(X)
    return sp.csr_matrix(columns.transform(X)), vocabulary[keep], columns


def _column_filter(X, vocabulary, args):
    """Columns of a count matrix kept by the vocabulary options, or None (all)."""
    n = X.shape[0]
    df = np.bincount(X.nonzero()[1], minlength=X.shape[1])
    keep = np.ones(X.shape[1], dtype=bool)
    low = args.min_df if isinstance(args.min_df, int) else args.min_df * n
    max_df = _max_df(args, raw_text=False)
    high = max_df if isinstance(max_df, int) else max_df * n
    keep &= (df >= low) & (df <= high)
    stop = _stop_words(args)
    if stop is not None:
        keep &= ~np.isin(vocabulary.astype(str), stop)
    if args.max_features is not None and keep.sum() > args.max_features:
        totals = np.asarray(X.sum(axis=0)).ravel()
        ranked = np.flatnonzero(keep)[np.argsort(-totals[keep], kind="stable")]
        keep = np.zeros_like(keep)
        keep[ranked[: args.max_features]] = True
    return None if keep.all() else keep
