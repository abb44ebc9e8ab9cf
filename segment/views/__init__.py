"""Looking at poses: 3-D views with pyvista."""
