"""Solving the model: static equilibrium, many loads at once, load ramps with rupture, simulation
and relaxation.
"""
