"""What every command of the command line shares: the parser, the common options, usage
errors, output-path checks, progress bars and the Dask client of ``--scheduler``.

A command module (``segment/cli/<name>.py``) defines ``register(sub)``, which adds its
sub-parser(s) with :func:`command` and sets ``run=`` as the parser default; the function
takes ``(args, argv)`` and returns the exit code.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
from pathlib import Path

from segment._extras import DIST_NAME
from segment._version import __version__
from segment.core.io import load_parameters
from segment.core.published import c5c6

EXIT_USAGE = 2

# Options that take a number: "--scale -inf" must reach the number check, not be read as an
# option (argparse takes "-inf" for an option because it starts with "-"). Filled by
# :func:`number_option`.
NUMBER_OPTIONS: set[str] = set()


class UsageError(Exception):
    """Bad input on the command line: reported as one line, exit code 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse's default prints usage first)
        self.exit(EXIT_USAGE, f"segment: error: {message}\n")


class VersionAction(argparse.Action):
    """``--version``: the version of :mod:`segment._version` (the one place it is written)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="print the version and exit"):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"segment {__version__} (distribution {DIST_NAME})")
        parser.exit(0)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def join_negative_numbers(argv: list[str]) -> list[str]:
    """``["--scale", "-inf"]`` -> ``["--scale=-inf"]`` so argparse hands it to the checker."""
    out, i = [], 0
    while i < len(argv):
        if argv[i] in NUMBER_OPTIONS and i + 1 < len(argv) and argv[i + 1].startswith("-") \
                and _is_number(argv[i + 1]):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


def add_common(parser: argparse.ArgumentParser, *, top: bool) -> None:
    """--data, -v, -q on the main parser (with defaults) and on every command (no defaults:
    given after the command name they override, absent they leave the main parser's value)."""
    kw = {} if top else {"default": argparse.SUPPRESS}
    parser.add_argument("--data", metavar="DIR", help="folder with the CSV parameter tables "
                        "(default: packaged data)", **({"default": None} if top else kw))
    parser.add_argument("-v", "--verbose", action="count", help="log progress (-vv: debug)",
                        **({"default": 0} if top else kw))
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="no progress bars or progress messages",
                        **({"default": False} if top else kw))
    parser.add_argument("--allow-implausible", action="store_true",
                        help="load data values outside their plausible ranges with a warning "
                             "instead of an error (validate refuses it: its checks are strict)",
                        **({"default": False} if top else kw))


def finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def number_option(p: argparse.ArgumentParser, name: str, **kwargs) -> None:
    """An option taking one finite number (negative numbers and ``-inf`` reach the check)."""
    NUMBER_OPTIONS.add(name)
    p.add_argument(name, type=finite_float, **kwargs)


def count(*, minimum: int = 1, maximum: int | None = None, why: str = ""):
    """An argparse type for a count or seed: an integer (``1e5`` written as a float is
    accepted when integral) within ``[minimum, maximum]``; argparse names the option in the
    one-line error (``argument --n: must be <= ..., got ...``)."""
    def integer(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            try:
                f = float(text)
            except ValueError:
                raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
            if not (math.isfinite(f) and f == int(f)):
                raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
            value = int(f)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"must be <= {maximum:,}, got {value:,}"
                                             + (f" ({why})" if why else ""))
        return value
    return integer


def count_option(p: argparse.ArgumentParser, name: str, *, minimum: int = 1,
                 maximum: int | None = None, why: str = "", **kwargs) -> None:
    """An option taking a count (see :func:`count`; negative numbers reach the check)."""
    NUMBER_OPTIONS.add(name)
    p.add_argument(name, type=count(minimum=minimum, maximum=maximum, why=why), **kwargs)


def seed_option(p: argparse.ArgumentParser, help: str) -> None:
    from segment._checks import MAX_SEED

    count_option(p, "--seed", minimum=0, maximum=MAX_SEED, default=0, metavar="SEED",
                 help=help + f" (an integer from 0 to {MAX_SEED}, default 0)")


def command(sub, name: str, run, **kwargs) -> argparse.ArgumentParser:
    """A sub-command running ``run(args, argv)``; it also takes the common options after its
    name."""
    p = sub.add_parser(name, **kwargs)
    add_common(p, top=False)
    p.set_defaults(run=run)
    return p


def state_option(p) -> None:
    """``--state NAME``: a clinical state of ``states.csv`` (``segment.core.states``), several
    joined by ``+``."""
    p.add_argument("--state", metavar="NAME", default=None,
                   help="clinical state(s) of states.csv, joined by '+' (e.g. laminectomy, "
                        "laminectomy+facetectomy-right-100; list them with 'segment states')")


def convention_option(p) -> None:
    """``--convention klg|isb``: the model's joint coordinates (default) or the joint coordinate
    system of the ISB for the spine (Wu et al. 2002; ``segment.core.conventions``)."""
    p.add_argument("--convention", choices=("klg", "isb"), default="klg",
                   help="coordinates of the results: klg, the model's joint coordinates "
                        "(default), or isb, the ISB joint coordinate system of the spine (Wu "
                        "et al. 2002: translations q1 right, q2 anterior, q3 superior between "
                        "the body centroids; JCS angles alpha + extension, beta + right "
                        "lateral bending, gamma + left axial rotation)")


def model_for(args, **kwargs):
    """The model of ``--data`` in ``--state`` (when the command has that option)."""
    return c5c6(data_dir=args.data, strict=not args.allow_implausible,
                state=getattr(args, "state", None), **kwargs)


def cases(args, names):
    """The named load cases of the data folder, or a UsageError naming the unknown ones."""
    known = load_parameters(args.data, strict=not args.allow_implausible).load_cases
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(f"unknown load case(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return {n: known[n] for n in names} if names else dict(known)


def space_and_model(args, space_option):
    """The parameter space (``--space``, else ``parameter_space.csv`` of ``--data``, else the
    packaged one), checked with ``--allow-implausible``, and the model of ``--data``."""
    from segment.studies.space import default_space_path, load_space

    space_file = data_file(args, space_option, "parameter_space.csv", default_space_path())
    space = load_space(space_file, strict=not args.allow_implausible)
    return space_file, space, model_for(args)


def data_file(args, given, name, default):
    """``given`` if the user named a file, else ``name`` in ``--data`` if it is there, else
    ``default``."""
    if given is not None:
        return Path(given)
    if args.data is not None and (Path(args.data) / name).exists():
        return Path(args.data) / name
    return default


SCHEDULER_PROBE_TIMEOUT = 5.0
"""Seconds to wait for a TCP connection to ``--scheduler`` before any work (a closed port
answers at once; an address that drops packets takes this long)."""


def check_scheduler(scheduler) -> None:
    """A UsageError, before anything is computed or written, when nothing answers at the
    ``--scheduler`` address (``tcp://host:port``, ``tls://host:port`` or ``host:port``);
    ``local`` and None need no check."""
    if scheduler is None or scheduler == "local":
        return
    import socket
    from urllib.parse import urlsplit

    addr = scheduler if "://" in scheduler else f"tcp://{scheduler}"
    parts = urlsplit(addr)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme not in ("tcp", "tls") or not parts.hostname or port is None:
        raise UsageError(f"--scheduler {scheduler}: expected tcp://HOST:PORT (or 'local')")
    try:
        socket.create_connection((parts.hostname, port), timeout=SCHEDULER_PROBE_TIMEOUT).close()
    except OSError as exc:
        raise UsageError(f"--scheduler {scheduler}: no scheduler answers there "
                         f"({exc.strerror or exc}); nothing was computed or written") from None


@contextlib.contextmanager
def dask_client(scheduler):
    """A Dask client for ``--scheduler`` (None: yields None, in-process): an address, or
    ``local`` for a LocalCluster of 2 single-threaded worker processes on this machine. The
    address is probed first (:func:`check_scheduler`): open the client before writing any
    output, so that a scheduler that does not answer leaves the output folder as it was."""
    if scheduler is None:
        yield None
        return
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise UsageError('--scheduler needs dask.distributed: pip install '
                         '"c5c6-segment[study]"') from None
    check_scheduler(scheduler)
    cluster = None
    if scheduler == "local":
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None)
        client = Client(cluster)
    else:
        try:
            client = Client(scheduler, timeout=30)
        except (OSError, TimeoutError) as exc:
            raise UsageError(f"--scheduler {scheduler}: cannot connect ({exc}); nothing was "
                             "computed or written") from None
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def bars_on(args) -> bool:
    """Progress bars: off with -q and when stderr is not a terminal (logs, pipes, CI)."""
    return not args.quiet and sys.stderr.isatty()


def scheduler_option(p) -> None:
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="Dask scheduler address (tcp://host:8786), or 'local' for a "
                        "LocalCluster on this machine (default: in-process, all cores)")


def display(q):
    """mm and degrees, rounded to the printed 3 decimals without a "-0.000"."""
    import numpy as np

    d = np.concatenate([q[:3], np.degrees(q[3:])])
    return np.round(d, 3) + 0.0


def check_output_file(path: str, option: str) -> Path:
    """An output file we can write: its folder exists and is writable, it is not a folder."""
    p = Path(path)
    folder = p.resolve().parent
    if p.is_dir():
        raise UsageError(f"{option} {path}: is a folder, expected a file name")
    if not folder.is_dir():
        raise UsageError(f"{option} {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise UsageError(f"{option} {path}: folder {folder} is not writable")
    return p


def check_output_folder(path: str, option: str) -> Path:
    """An output folder we can create or write into (checked before any work): it exists, or
    its parent folder does (as for every command, missing parents are not created)."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UsageError(f"{option} {path}: exists and is not a folder")
    folder = p.resolve() if p.exists() else p.resolve().parent
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{option} {path}: {folder} is not a folder")
    if not folder.is_dir():
        raise UsageError(f"{option} {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise UsageError(f"{option} {path}: folder {folder} is not writable")
    return p


def progress_bar(args, desc: str, total=None, unit="it"):
    """A tqdm bar on stderr; off with -q or when stderr is not a terminal (segment._progress)."""
    from segment._progress import bar

    return bar(total=total, desc=desc, unit=unit, progress=False if args.quiet else None)
