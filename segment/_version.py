"""The version of the package: the one place it is written (``pyproject.toml`` reads it here).

A module of its own so that the report, the exporters and the command line can stamp their
output with the version without importing the package root (:mod:`segment` is the users' API,
never imported from inside the package).
"""

__version__ = "0.2.0"
