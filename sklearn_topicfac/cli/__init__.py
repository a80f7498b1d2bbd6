"""The ``topicfac`` command: fit a topic model to a corpus from the shell.

Run as ``topicfac`` (the installed console script) or ``python -m
sklearn_topicfac``.  With no input it fits the bundled Classic3 corpus.

The top floor of the package, one module per concern:

- `options`: the options, declared once as a table, and the two parsers
  (with `_printable`, the escaping of every one-line error);
- `inputs`: INPUT read as a corpus (the formats of
  `sklearn_topicfac.datasets` through its loaders, the command's own
  folder, table and line formats here);
- `vocabulary`: raw text counted, or a count matrix's columns kept;
- `progress`: the progress bar and iteration count of a fit;
- `outputs`: outputs checked before any work and written atomically;
- `commands`: ``topicfac``, ``topicfac apply`` and ``topicfac compile``.
"""

import os
import sys

from .commands import _apply, _compile_kernels, _run
from .options import (
    _build_apply_parser,
    _build_compile_parser,
    _build_parser,
    _printable,
)


def _quiet_closed_stdout():
    """Point stdout at the null device once its reader has gone (``| head``):
    Python's own flush at exit would otherwise fail again (see the Python
    docs' note on SIGPIPE)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def _main(parser, command, argv):
    args = parser.parse_args(argv)
    try:
        status = command(args)
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        # The reader of our output closed it (e.g. `topicfac | head -2`): it
        # has what it wanted, so this is no error.
        _quiet_closed_stdout()
        return 0
    except KeyboardInterrupt:
        print(f"\n{parser.prog}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # one line, not a traceback (unless --debug)
        if args.debug:
            raise
        kind = (
            "" if isinstance(exc, (ValueError, OSError)) else f"{type(exc).__name__}: "
        )
        message = " ".join(str(exc).split()) or type(exc).__name__
        # Messages echo file names and cells of the input: escaped, so none
        # can send escape sequences to the terminal, whatever raised it.
        print(f"{parser.prog}: error: {kind}{_printable(message)}", file=sys.stderr)
        return 1


def main(argv=None):
    """Run the ``topicfac`` command.

    Parameters
    ----------
    argv : list of str, default=None
        Command-line arguments without the program name; ``None`` means
        ``sys.argv[1:]``.

    Returns
    -------
    status : int
        0 on success, 1 when the input cannot be used (the reason is printed
        as one line on stderr).  ``["apply", MODEL, INPUT, ...]`` runs
        ``topicfac apply``; ``["compile", ...]`` runs ``topicfac compile``
        (`sklearn_topicfac.compile_kernels`).  Invalid arguments print a
        one-line error and raise :class:`SystemExit` with status 2.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["apply"]:
        return _main(_build_apply_parser(), _apply, argv[1:])
    if argv[:1] == ["compile"]:
        return _main(_build_compile_parser(), _compile_kernels, argv[1:])
    return _main(_build_parser(), _run, argv)
