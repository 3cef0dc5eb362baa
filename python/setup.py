"""Builds the `gpuprof` Python package: pure-Python modules over the CPython extension
gpuprof._core, which links the C library statically from a CMake build of this repository.

    cmake -S . -B build && cmake --build build          # the C library (once)
    python3 python/setup.py build --build-lib build/python   # what every CMake build does
    GPUPROF_BUILD_DIR=$PWD/build python3 -m pip install --no-build-isolation --no-deps \\
        --no-index --target DIR ./python                     # install (docs/python.md)

GPUPROF_BUILD_DIR names the CMake build directory (default: ../build next to this file); pip's
build files (build/, *.egg-info) go under it too, not into the source tree. The version is the
project's, read from project(VERSION ...) in the top-level CMakeLists.txt.
Extra compiler/linker flags come from CFLAGS / LDFLAGS (the sanitizer build passes -fsanitize=...).
"""
import os
import re
import shutil
import sys

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

if sys.version_info < (3, 11):
    sys.exit("gpuprof: the Python package needs Python 3.11 or later (this is %s)"
             % sys.version.split()[0])

HERE = os.path.dirname(os.path.abspath(__file__))
os.chdir(HERE)  # setuptools wants paths relative to this file
ROOT = os.path.dirname(HERE)
BUILD = os.path.abspath(os.environ.get("GPUPROF_BUILD_DIR", os.path.join(ROOT, "build")))
LAYERS = ["app", "render", "analyze", "produce", "io", "model", "core"]
LIBS = [os.path.join(BUILD, "src", "libgp_%s.a" % layer) for layer in LAYERS]


def project_version():
    """The version in project(gpuprof VERSION x.y.z ...) of the top-level CMakeLists.txt."""
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"^project\(\s*gpuprof\s+VERSION\s+([0-9][0-9.]*)", f.read(), re.M)
    if not m:
        sys.exit("gpuprof: no project(gpuprof VERSION ...) in %s/CMakeLists.txt" % ROOT)
    return m.group(1)


missing = [lib for lib in LIBS if not os.path.exists(lib)]
if missing and not any(a in sys.argv for a in ("--help", "sdist", "egg_info", "clean")):
    sys.exit("gpuprof: the C library is not built at %s (missing %s).\n"
             "Build it first: cmake -S %s -B %s && cmake --build %s\n"
             "or set GPUPROF_BUILD_DIR to your build directory."
             % (BUILD, os.path.basename(missing[0]), ROOT, BUILD, BUILD))

SYSTEM_LIBS = ["microhttpd", "yaml", "jansson", "nettle", "z", "iberty", "pthread", "dl", "m"]

core = Extension(
    "gpuprof._core",
    sources=[os.path.join("src", f) for f in ("module.c", "profiler.c", "trace.c", "cuda.c",
                                                     "compile.c", "views.c", "monitor.c", "job.c")],
    include_dirs=[os.path.join(ROOT, "include")],
    extra_compile_args=["-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Wno-unused-parameter",
                        "-Wno-missing-field-initializers", "-Wno-cast-function-type"]
    + (["-Werror"] if os.environ.get("GPUPROF_WERROR") == "1" else []),
    # The layer libraries reference each other upward only through public symbols; a group
    # resolves them in one pass whatever the order. The system libraries must come after the
    # group, so they are link arguments, not `libraries` (setuptools puts those before
    # extra_link_args): Debian's gcc links with --as-needed, which drops a library named before
    # the archives that use it, and the extension then fails to import ("undefined symbol:
    # gzclose", or json_string_length), whichever Python (Debian's, pyenv's) builds it.
    # libiberty's objects (the C++ demangler, linked whole) have default visibility: keep them
    # out of the extension's exports.
    extra_link_args=["-Wl,--start-group"] + LIBS + ["-Wl,--end-group"]
    + ["-l" + lib for lib in SYSTEM_LIBS] + ["-Wl,--exclude-libs,libiberty.a"],
    depends=LIBS + [os.path.join("src", "gpy.h")],
)


class build_py_with_cli(build_py):
    """build_py, plus the build's gpuprof program as gpuprof/_bin/gpuprof when there is one (and
    its MPI plugin beside it): the program `python -m gpuprof` and the console script run
    (gpuprof/__main__.py)."""

    def run(self):
        super().run()
        cli = os.path.join(BUILD, "gpuprof")
        if os.path.isfile(cli) and os.access(cli, os.X_OK):
            dest = os.path.join(self.build_lib, "gpuprof", "_bin")
            os.makedirs(dest, exist_ok=True)
            shutil.copy2(cli, os.path.join(dest, "gpuprof"))
            # its MPI plugin, found beside the program (docs/decisions/mpi-plugin.md)
            plugin = os.path.join(BUILD, "gpuprof-mpi.so")
            if os.path.isfile(plugin):
                shutil.copy2(plugin, os.path.join(dest, "gpuprof-mpi.so"))


# The `gpuprof` console script (gpuprof/__main__.py, which runs the C program) only where no
# gpuprof program is on PATH already (a distribution's package, a `cmake --install`): it would
# shadow it otherwise.
CONSOLE = [] if shutil.which("gpuprof") else ["gpuprof = gpuprof.__main__:main"]

# pip builds in this directory; its intermediate files go to the CMake build directory instead
# (a command line --build-base / --egg-base, as CMake's own build passes, still wins).
PIP_WORK = os.path.join(BUILD, "python-setuptools")

setup(
    name="gpuprof",
    version=project_version(),
    description="GPU profiling toolkit: the gpuprof C library for Python",
    author="The gpuprof authors",
    license="MIT",
    classifiers=[
        "Development Status :: 3 - Alpha",
        "Environment :: GPU :: NVIDIA CUDA",
        "Intended Audience :: Developers",
        "Intended Audience :: Science/Research",
        "License :: OSI Approved :: MIT License",
        "Operating System :: POSIX :: Linux",
        "Programming Language :: C",
        "Programming Language :: Python :: 3",
        "Programming Language :: Python :: 3 :: Only",
        "Programming Language :: Python :: 3.11",
        "Programming Language :: Python :: Implementation :: CPython",
        "Topic :: Scientific/Engineering",
        "Topic :: System :: Monitoring",
        "Typing :: Typed",
    ],
    python_requires=">=3.11",
    packages=["gpuprof"],
    package_data={"gpuprof": ["py.typed", "*.pyi"]},
    ext_modules=[core],
    cmdclass={"build_py": build_py_with_cli},
    entry_points={"console_scripts": CONSOLE},
    zip_safe=False,
    options={"build": {"build_base": PIP_WORK}, "egg_info": {"egg_base": PIP_WORK}},
)
