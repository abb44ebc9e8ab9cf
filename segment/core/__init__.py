"""The assembled model: data tables, the Segment, its residual and Jacobian kernels and the
compiled Newton iteration.
"""
