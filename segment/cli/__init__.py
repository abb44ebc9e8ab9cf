"""Command line: ``segment cases | solve | ramp | states | compare | validate | render |
explore | registration | simulate | sensitivity | calibrate | curves | export | docs``.

Errors in the user's input (unknown case, bad number, unreadable data, an output path that
cannot be written) print one line to stderr and exit with code 2, without a traceback; output
paths are checked before any work starts. ``python -m segment`` is the same program.

Options every command takes, before or after the command name: ``--data DIR``,
``-v/--verbose`` (logging: once for progress messages, twice for debug), ``-q/--quiet`` (no
progress bars or messages). ``--version`` prints the version.
``--allow-implausible`` turns data values outside their plausible ranges into one-line
warnings.

One module per command (or pair of commands) in this package; each registers its parser and
the function that runs it (:mod:`segment.cli._common` says how).
"""

from __future__ import annotations

import logging
import os
import sys

import segment._progress as _progress
from segment.cli import (
    calibrate,
    compare,
    curves,
    docs,
    export,
    ramp,
    sensitivity,
    simulate,
    solve,
    validate,
    views,
)
from segment.cli._common import (
    EXIT_USAGE,
    Parser,
    UsageError,
    VersionAction,
    add_common,
    join_negative_numbers,
)

__all__ = ["EXIT_USAGE", "UsageError", "build_parser", "main"]

# the order of the commands in ``segment --help``
COMMAND_MODULES = (solve, ramp, compare, validate, views, simulate, sensitivity, calibrate,
                   curves, export, docs)


def build_parser() -> Parser:
    parser = Parser(prog="segment", description="Mechanics of the C5-C6 motion segment.")
    parser.add_argument("--version", action=VersionAction)
    add_common(parser, top=True)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


def _configure_logging(args):
    """Log the package's messages to stderr at the level of ``-v``/``-q``; returns a function
    that puts the ``segment`` logger back as it was (the command line may run inside another
    program, e.g. a test: a handler bound to that program's stderr must not outlive the
    command)."""
    level = (logging.ERROR if args.quiet else
             {0: logging.WARNING, 1: logging.INFO}.get(args.verbose, logging.DEBUG))
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    root = logging.getLogger("segment")
    before = (list(root.handlers), root.level, root.propagate)
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False
    logging.captureWarnings(False)

    def restore():
        root.handlers[:], level_before, root.propagate = before[0], before[1], before[2]
        root.setLevel(level_before)
    return restore


def _warn_one_line(message, category, filename, lineno, file=None, line=None):
    print(f"segment: warning: {message}", file=sys.stderr)


def main(argv=None) -> int:
    import warnings

    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = parser.parse_args(join_negative_numbers(argv))
    except SystemExit as exc:   # --help, --version and usage errors: argparse has printed
        return int(exc.code or 0)
    restore_logging = _configure_logging(args)
    progress_before = _progress.ENABLED
    _progress.ENABLED = False if args.quiet else None
    try:
        _compile_notice(args)
        with warnings.catch_warnings():
            warnings.showwarning = _warn_one_line
            return _run(args, argv)
    finally:
        _progress.ENABLED = progress_before
        restore_logging()


EXIT_BROKEN_PIPE = 141
"""Exit code when the reader of our output closed the pipe: 128 + SIGPIPE, what a shell reports
for a program that SIGPIPE ended (``segment ramp FLX --to-scale 5 | head -2``)."""


def _silence_stdout() -> None:
    """Point stdout at /dev/null: Python flushes it at exit, which must not hit the closed
    pipe again (a second BrokenPipeError, printed as an exception)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):   # no real file descriptor (e.g. captured)
        pass


def _compile_notice(args) -> None:
    """One line before the first use compiles the kernels (terminal only, not with -q): when
    they are not precompiled here (:func:`segment.jit.status`) and numba's cache is empty."""
    if args.quiet or not sys.stderr.isatty() or not getattr(args, "uses_kernels", True):
        return
    from segment.jit import cache, status

    if not status()["precompiled"] and cache.is_cold():
        print(f"segment: compiling the numba kernels for this machine (first run: about "
              f"{cache.COLD_COMPILE_S} s on a 2-core machine; cached afterwards in "
              f"{cache.cache_folder()}): {status()['reason']}", file=sys.stderr, flush=True)


def _run(args, argv) -> int:
    try:
        code = args.run(args, argv)
        sys.stdout.flush()      # a closed pipe shows here, not as a traceback at exit
        return code
    except ImportError as exc:  # a missing extra: one line naming it
        from segment._extras import MissingExtraError

        if not isinstance(exc, MissingExtraError):
            raise
        print(f"segment: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (UsageError, ValueError) as exc:  # bad input or data: one line, no traceback
        print(f"segment: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # the reader went away (`segment ... | head`): stop quietly
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except OSError as exc:  # e.g. an output folder that does not exist
        print(f"segment: error: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
