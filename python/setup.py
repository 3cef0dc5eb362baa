"""Builds the `gpuprof` Python package: pure-Python modules over the CPython extension
gpuprof._core, which links the C library statically from a CMake build of this repository.

    cmake -S . -B build && cmake --build build          # the C library (once)
    python3 python/setup.py build --build-lib build/python   # what the test command does
    pip install --no-build-isolation ./python            # or install it (see docs/python.md)

GPUPROF_BUILD_DIR names the CMake build directory (default: ../build next to this file).
Extra compiler/linker flags come from CFLAGS / LDFLAGS (the sanitizer build passes -fsanitize=...).
"""
import os
import sys

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
os.chdir(HERE)  # setuptools wants paths relative to this file
ROOT = os.path.dirname(HERE)
BUILD = os.path.abspath(os.environ.get("GPUPROF_BUILD_DIR", os.path.join(ROOT, "build")))
LAYERS = ["app", "render", "analyze", "produce", "io", "model", "core"]
LIBS = [os.path.join(BUILD, "src", "libgp_%s.a" % layer) for layer in LAYERS]

missing = [lib for lib in LIBS if not os.path.exists(lib)]
if missing and not any(a in sys.argv for a in ("--help", "sdist", "egg_info", "clean")):
    sys.exit("gpuprof: the C library is not built at %s (missing %s).\n"
             "Build it first: cmake -S %s -B %s && cmake --build %s\n"
             "or set GPUPROF_BUILD_DIR to your build directory."
             % (BUILD, os.path.basename(missing[0]), ROOT, BUILD, BUILD))

SYSTEM_LIBS = ["microhttpd", "yaml", "jansson", "nettle", "z", "pthread", "dl", "m"]

core = Extension(
    "gpuprof._core",
    sources=[os.path.join("src", f) for f in ("module.c", "profiler.c", "trace.c", "cuda.c",
                                                     "compile.c")],
    include_dirs=[os.path.join(ROOT, "include")],
    extra_compile_args=["-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Wno-unused-parameter",
                        "-Wno-missing-field-initializers", "-Wno-cast-function-type"]
    + (["-Werror"] if os.environ.get("GPUPROF_WERROR") == "1" else []),
    # The layer libraries reference each other upward only through public symbols; a group
    # resolves them in one pass whatever the order.
    # The system libraries come after the group (setuptools puts `libraries` before
    # extra_link_args, and with --as-needed, Debian's default, a library named before the archives
    # that use it is dropped: jansson, used only by the compile-log reader, was).
    extra_link_args=["-Wl,--start-group"] + LIBS + ["-Wl,--end-group"]
    + ["-l" + lib for lib in SYSTEM_LIBS],
    libraries=SYSTEM_LIBS,
    depends=LIBS + [os.path.join("src", "gpy.h")],
)

setup(
    name="gpuprof",
    version="0.1.0",
    description="GPU profiling toolkit: the gpuprof C library for Python",
    packages=["gpuprof"],
    package_data={"gpuprof": ["py.typed", "*.pyi"]},
    ext_modules=[core],
    python_requires=">=3.11",
)
