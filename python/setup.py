"""Build hook: `pip install ./python` also builds the native loader library (mldf.Loader's
engine, the project's Go code as a C shared library) when Go is on PATH:

    go build -buildmode=c-shared -o <build>/mldf/_native/libmldf.so ./cmd/libmldf

run from the repository root (this file's parent directory). Metadata is in pyproject.toml.

Without Go the package installs as the pure-Python reader and mldf.Loader raises
mldf.NativeUnavailable saying how to get the library; set MLDF_REQUIRE_NATIVE=1 to make a
missing Go an install error instead, MLDF_NO_NATIVE=1 to skip the library, GO=/path/to/go
to choose the Go toolchain, MLDF_REPO=DIR when this directory is not inside the repository.
"""

import os
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))

if sys.platform == "darwin":
    LIBNAME = "libmldf.dylib"
elif sys.platform == "win32":
    LIBNAME = "mldf.dll"
else:
    LIBNAME = "libmldf.so"


class NativeBuildError(Exception):
    pass


def _log(msg):
    print("mldf: " + msg, file=sys.stderr, flush=True)


def _repo():
    repo = os.environ.get("MLDF_REPO") or os.path.dirname(HERE)
    return repo if os.path.isfile(os.path.join(repo, "cmd", "libmldf", "main.go")) else None


def build_native(dest_dir):
    """Build the library into dest_dir; return its path, or None when it is skipped."""
    required = bool(os.environ.get("MLDF_REQUIRE_NATIVE"))
    if os.environ.get("MLDF_NO_NATIVE"):
        _log("MLDF_NO_NATIVE is set: installing without the native library (mldf.Loader unavailable)")
        return None
    dest_dir = os.path.abspath(dest_dir)  # go build runs in the repository root
    out = os.path.join(dest_dir, LIBNAME)
    go = os.environ.get("GO") or shutil.which("go")
    repo = _repo()
    prebuilt = os.path.join(HERE, "mldf", "_native", LIBNAME)
    why = None
    if go is None:
        why = "Go is not on PATH (install Go >= 1.26 and a C compiler, or set GO=/path/to/go)"
    elif repo is None:
        why = ("the Go sources (cmd/libmldf) are not beside this directory; install from a clone of the "
               "repository, or set MLDF_REPO to it")
    if why is not None:
        if os.path.isfile(prebuilt) and not required:
            _log("%s; using the library already built at %s" % (why, prebuilt))
            os.makedirs(dest_dir, exist_ok=True)
            shutil.copyfile(prebuilt, out)
            return out
        if required:
            raise NativeBuildError("cannot build the native loader library: %s" % why)
        _log("WARNING: not building the native loader library: %s. The reader (mldf.open) works; "
             "mldf.Loader will raise mldf.NativeUnavailable. Set MLDF_REQUIRE_NATIVE=1 to make this an error."
             % why)
        return None
    os.makedirs(dest_dir, exist_ok=True)
    env = dict(os.environ)
    env.setdefault("CGO_ENABLED", "1")
    cmd = [go, "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w", "-o", out, "./cmd/libmldf"]
    _log("building the native loader library: %s (in %s)" % (" ".join(cmd), repo))
    proc = subprocess.run(cmd, cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        raise NativeBuildError(
            "building the native loader library failed (exit %d): %s\n%s\nIt needs Go >= 1.26 with cgo (a C compiler) "
            "and libjpeg-turbo's TurboJPEG (libturbojpeg0-dev). Set MLDF_NO_NATIVE=1 to install only the reader."
            % (proc.returncode, " ".join(cmd), proc.stdout[-4000:]))
    header = os.path.splitext(out)[0] + ".h"
    if os.path.exists(header):
        os.remove(header)
    return out


class BuildPy(build_py):
    """build_py, then the native library into the build's mldf/_native/."""

    def run(self):
        super().run()
        try:
            build_native(os.path.join(self.build_lib, "mldf", "_native"))
        except NativeBuildError as e:
            sys.exit("mldf: " + str(e))


class BinaryDistribution(Distribution):
    """The wheel holds a native library: tag it for this platform."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildPy}, distclass=BinaryDistribution)
