"""`python -m gpuprof ...` and the `gpuprof` console script: the gpuprof command itself.

Both run the C program `gpuprof` with the same arguments (os.execv: the same output and exit
codes, signals reach it directly). The program is looked for, in order: $GPUPROF_CLI; the CMake
build this package was built into (build/python/gpuprof -> build/gpuprof); the copy installed with
the package (gpuprof/_bin/gpuprof, which `pip install` puts there when the build has one); the
first `gpuprof` on PATH that is a program (an ELF file), not this script.
"""
import os
import shutil
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _is_program(path):
    """True for an executable ELF file (not a script such as the console script itself)."""
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF" and os.access(path, os.X_OK)
    except OSError:
        return False


def find_cli():
    """The path of the gpuprof program, or None."""
    env = os.environ.get("GPUPROF_CLI")
    if env:
        return env
    build = os.path.dirname(os.path.dirname(_HERE))
    candidates = []
    if os.path.isfile(os.path.join(build, "CMakeCache.txt")):
        candidates.append(os.path.join(build, "gpuprof"))
    candidates.append(os.path.join(_HERE, "_bin", "gpuprof"))
    path = os.environ.get("PATH", os.defpath)
    for d in path.split(os.pathsep):
        found = shutil.which("gpuprof", path=d or ".")
        if found:
            candidates.append(found)
    for c in candidates:
        if _is_program(c):
            return c
    return None


def main(argv=None):
    """Runs the gpuprof program with argv (default: sys.argv[1:]); returns only on failure."""
    args = sys.argv[1:] if argv is None else list(argv)
    cli = find_cli()
    if cli is None:
        sys.stderr.write("gpuprof: the gpuprof program was not found (set GPUPROF_CLI, install "
                         "the gpuprof package of your distribution, or build it: cmake -S . -B "
                         "build && cmake --build build)\n")
        return 2
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(cli, ["gpuprof"] + args)
    except OSError as e:
        sys.stderr.write("gpuprof: cannot run %s: %s\n" % (cli, e))
        return 2


if __name__ == "__main__":
    sys.exit(main())
