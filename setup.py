"""Build step of the package: the precompiled kernels (everything else is in pyproject.toml).

``segment.jit._aot`` is an extension module compiled by numba's pycc from the package's own
kernels for a generic x86-64 CPU (:mod:`segment.jit.build`). Building it takes about a minute
and a C compiler; when it cannot be built (no compiler, another architecture) the install
goes on and the kernels are compiled by numba on first use instead (``segment --version`` says
which route is in use).

``SEGMENT_PRECOMPILED=/path/to/_aot....so`` copies an already built module instead of building
one (the package's tests build wheels this way; the module says which sources it was built
from, and is used only when they are the installed sources, so a wrong file is never served).
"""

import importlib.util
import os
import shutil
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
        prebuilt = os.environ.get("SEGMENT_PRECOMPILED")
        if prebuilt:
            output.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(prebuilt, output)
            print(f"segment: precompiled kernels copied from {prebuilt}", file=sys.stderr)
            return None
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
