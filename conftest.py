"""Test tiers and collection for the whole repository (``tests/``, ``notebooks/``, the
doctests of ``segment/``).

Two tiers: the fast tier, ``pytest -m "not slow"`` (unit, property and doctests: every
change), and the slow tier, marked ``slow`` (the validation report, installs, the cross-CPU
check, the notebooks, benchmark smoke runs). ``pytest`` runs both, as CI does.
"""

import pytest

# modules whose import runs a program
collect_ignore = ["setup.py", "segment/__main__.py", "segment/cli/__main__.py"]


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.suffix == ".ipynb":            # nbmake: every notebook, executed
            item.add_marker(pytest.mark.slow)
