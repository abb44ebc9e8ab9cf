"""``python -m segment.cli``: the same command line as ``segment``."""

import sys

from segment.cli import main

if __name__ == "__main__":
    sys.exit(main())
