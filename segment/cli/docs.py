"""``segment docs``: how to build and open the documentation site, or (``--build``) build it.

The site is built from ``docs/`` of a checkout (Sphinx; ``docs/conf.py``), not from an installed
package, which does not ship the pages: without a checkout the command says where to get one.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from segment.cli._common import UsageError, check_output_folder, command

DOCS_EXTRA = "docs"
"""The extra that installs the site's tools (pyproject.toml)."""


def checkout_docs() -> Path | None:
    """``docs/`` of the checkout this package is imported from, or None (an installed wheel)."""
    docs = Path(__file__).resolve().parents[2] / "docs"
    return docs if (docs / "conf.py").is_file() else None


def build_command(docs: Path, out: Path, builder: str = "html") -> list[str]:
    """The sphinx-build command line: warnings are errors, every warning is reported."""
    return [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", builder, str(docs),
            str(out)]


def register(sub) -> None:
    p = command(sub, "docs", run,
                help="say how to build and open the documentation site (--build: build it)")
    p.set_defaults(uses_kernels=False)
    p.add_argument("--build", action="store_true",
                   help="build the HTML site now (needs the docs extra: "
                        f'pip install -e ".[{DOCS_EXTRA}]")')
    p.add_argument("--out", metavar="DIR", default=None,
                   help="output folder of --build (default: docs/_build/html of the checkout)")


def run(args, argv) -> int:
    docs = checkout_docs()
    if docs is None:
        if args.build:
            raise UsageError("docs --build needs a checkout of the repository (its docs/ "
                             "folder); this segment is installed without one")
        print("The documentation site is built from the docs/ folder of a checkout of the "
              "repository, which an installed package does not include: clone the "
              "repository, then run 'segment docs' there.")
        return 0
    out = Path(args.out) if args.out else docs / "_build" / "html"
    if not args.build:
        print("Build the documentation site from this checkout and open it in a browser:\n\n"
              f'    pip install -e "{docs.parent}[{DOCS_EXTRA}]"\n'
              f"    sphinx-build -W --keep-going -b html {docs} {out}\n\n"
              f"then open {out / 'index.html'}\n"
              f"(or run 'segment docs --build'; '-b doctest' instead of '-b html' runs every "
              f"example of the pages).")
        return 0
    check_output_folder(str(out) if args.out else str(out.parent), "--out")
    from segment._extras import require

    require("sphinx", DOCS_EXTRA, "segment docs --build")
    code = subprocess.run(build_command(docs, out), check=False).returncode
    if code == 0:
        print(f"documentation site: {out / 'index.html'}")
    return code
