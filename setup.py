"""Build the Cython extensions under fastsvm/_core/.

Every ``fastsvm/_core/*.pyx`` becomes one extension. Compiler directives live here only.
Environment switches:
  FASTSVM_DEBUG=1              bounds checks and assertions on (the test suite's sanitizer run)
  FASTSVM_BUILD_ONLY=a,b       build only these modules (development, parallel work)
"""
import os
import sys
import tempfile
from glob import glob
from pathlib import Path

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

DEBUG = os.environ.get("FASTSVM_DEBUG") == "1"
DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": False,
    "cdivision": True,
    "initializedcheck": DEBUG,
    "nonecheck": False,
    "embedsignature": True,
}


def _compiler_supports_openmp(compiler):
    """Compile and link a tiny OpenMP program; False on any failure (e.g. clang without libomp)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp, "omp_probe.c")
        src.write_text("#include <omp.h>\nint main(void){return omp_get_max_threads() > 0 ? 0 : 1;}\n")
        try:
            objs = compiler.compile([str(src)], output_dir=tmp, extra_postargs=["-fopenmp"])
            compiler.link_executable(objs, "omp_probe", output_dir=tmp, extra_postargs=["-fopenmp"])
        except Exception:
            return False
    return True


class BuildExt(build_ext):
    def finalize_options(self):
        # pip builds without -j: compile the extensions on every core unless told otherwise
        if self.parallel is None:
            self.parallel = os.cpu_count() or 1
        super().finalize_options()

    def build_extensions(self):
        unix = self.compiler.compiler_type == "unix"
        openmp = unix and _compiler_supports_openmp(self.compiler)
        if not openmp:
            print("fastsvm: building without OpenMP (single-threaded kernels)", file=sys.stderr)
        for ext in self.extensions:
            if unix:
                ext.extra_compile_args += ["-O3", "-fno-math-errno"]
            if openmp:
                ext.extra_compile_args.append("-fopenmp")
                ext.extra_link_args.append("-fopenmp")
        super().build_extensions()


def extensions():
    only = {n for n in os.environ.get("FASTSVM_BUILD_ONLY", "").split(",") if n}
    exts = []
    for pyx in sorted(glob(os.path.join("fastsvm", "_core", "*.pyx"))):
        name = Path(pyx).stem
        if only and name not in only:
            continue
        exts.append(
            Extension(
                f"fastsvm._core.{name}",
                [pyx],
                include_dirs=[np.get_include()],
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")],
            )
        )
    # translate the .pyx files on every core too: Cython alone is a third of a serial build
    return cythonize(exts, compiler_directives=DIRECTIVES, quiet=True, nthreads=os.cpu_count() or 1)


setup(ext_modules=extensions(), cmdclass={"build_ext": BuildExt})
