"""``python -m segment``: the same command line as ``segment`` (see :mod:`segment.cli`)."""

import sys

from segment.cli import main

if __name__ == "__main__":
    sys.exit(main())
