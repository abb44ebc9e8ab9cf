"""The CSV parameter tables of segment, installed as the package ``segment.data``."""
