"""Build step of the package: the precompiled kernels (everything else is in pyproject.toml).

``segment.jit._aot`` is an extension module compiled by numba's pycc from the package's own
kernels for a generic x86-64 CPU (:mod:`segment.jit.build`). Building it takes about a minute
and a C compiler; when it cannot be built (no compiler, another architecture) the install
goes on and the kernels are compiled by numba on first use instead (``segment --version`` says
which route is in use).
"""

import importlib.util
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
AOT = "segment.jit._aot"


class BuildKernels(build_ext):
    """build_ext that writes ``segment.jit._aot`` with :mod:`segment.jit.build`."""

    def build_extension(self, ext):
        if ext.name != AOT:
            return super().build_extension(ext)
        output = Path(self.get_ext_fullpath(ext.name)).resolve()
        # the builder by its path: importing the package here would need its dependencies in
        # this process (the build process it starts has them: pyproject's build requirements)
        spec = importlib.util.spec_from_file_location("_segment_jit_build",
                                                      ROOT / "segment" / "jit" / "build.py")
        builder = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(builder)
        result = builder.build_in_subprocess(output, source_root=ROOT)
        if result.returncode != 0:
            print(f"segment: WARNING: the precompiled kernels could not be built (exit "
                  f"{result.returncode}); numba compiles them on first use instead",
                  file=sys.stderr)
            output.unlink(missing_ok=True)


setup(ext_modules=[Extension(AOT, sources=[], optional=True)],
      cmdclass={"build_ext": BuildKernels})
