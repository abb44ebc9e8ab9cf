"""Reference data of the validation report, installed as ``segment.reference_data``."""
