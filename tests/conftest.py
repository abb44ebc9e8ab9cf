"""Shared fixtures. (segment.viz chooses VTK's off-screen window itself, per plotter.)"""

import shutil

import numpy as np
import pytest

import segment
from segment.io import data_dir


@pytest.fixture(scope="session")
def model():
    return segment.c5c6()


@pytest.fixture
def data_copy(tmp_path):
    """A private copy of the packaged CSV tables (every ``data/*.csv``)."""
    folder = tmp_path / "data"
    folder.mkdir()
    for path in data_dir().glob("*.csv"):
        shutil.copy(path, folder / path.name)
    return folder


@pytest.fixture(scope="session")
def disc_only():
    return segment.c5c6(ligaments=False, facets=False)


def central_jacobian(m, q, load, h):
    """d residual / d q by central differences with step ``h`` (6,) [mm, rad]."""
    J = np.empty((6, 6))
    for j in range(6):
        dq = np.zeros(6)
        dq[j] = h[j]
        J[:, j] = (m.residual(q + dq, load) - m.residual(q - dq, load)) / (2 * h[j])
    return J
