"""Studies over the model and its data: parameter space, parameter sets x loads, sensitivities,
Sobol indices, calibration, uncertainty, validation and the report.
"""
