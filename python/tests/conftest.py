"""Shared fixtures: the Go program cmd/mkfixtures writes the MLDF fixtures and what the Go
reader reads from them (NAME.expected.json); the tests compare the Python reader with that."""

import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PYROOT = os.path.dirname(HERE)
REPO = os.path.dirname(PYROOT)
if PYROOT not in sys.path:  # run from the source tree without installing
    sys.path.insert(0, PYROOT)


@pytest.fixture(scope="session")
def fixtures_dir(tmp_path_factory):
    """A directory of fixtures: $MLDF_FIXTURES if set, else `go run ./cmd/mkfixtures -o TMP`."""
    pre = os.environ.get("MLDF_FIXTURES")
    if pre:
        return pre
    go = shutil.which("go")
    if go is None:
        pytest.skip("the fixtures are written by Go (go run ./cmd/mkfixtures) and `go` is not on PATH; "
                    "install Go or set MLDF_FIXTURES to a directory written by mkfixtures")
    out = str(tmp_path_factory.mktemp("fixtures"))
    proc = subprocess.run([go, "run", "./cmd/mkfixtures", "-o", out], cwd=REPO, capture_output=True, text=True,
                          timeout=900)
    if proc.returncode != 0:
        pytest.fail("go run ./cmd/mkfixtures failed (exit %d):\n%s%s" % (proc.returncode, proc.stdout, proc.stderr))
    return out


def _go_or_skip(what):
    go = shutil.which("go")
    if go is None:
        pytest.skip("%s needs Go (`go` is not on PATH)" % what)
    return go


@pytest.fixture(scope="session")
def native_lib(tmp_path_factory):
    """The native loader library (mldf.Loader's engine): $MLDF_LIBRARY when set, else built now
    from this checkout with `go build -buildmode=c-shared ./cmd/libmldf` into a temporary
    directory (so the tests never run a stale library) and exported as MLDF_LIBRARY before
    mldf loads it. Skips when Go or cgo is missing."""
    pre = os.environ.get("MLDF_LIBRARY")
    if pre:
        if not os.path.isfile(pre):
            pytest.fail("MLDF_LIBRARY=%s does not exist" % pre)
        return pre
    go = _go_or_skip("the native loader library")
    if not os.path.isfile(os.path.join(REPO, "cmd", "libmldf", "main.go")):
        pytest.skip("this checkout has no cmd/libmldf (the native loader library)")
    cgo = subprocess.run([go, "env", "CGO_ENABLED"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    if cgo != "1":
        pytest.skip("the native loader library is built with cgo and CGO_ENABLED=%r here (no C compiler?)" % cgo)
    from mldf import _native

    out = os.path.join(str(tmp_path_factory.mktemp("libmldf")), _native.LIBNAME)
    proc = subprocess.run([go, "build", "-buildmode=c-shared", "-o", out, "./cmd/libmldf"], cwd=REPO,
                          capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        pytest.fail("go build -buildmode=c-shared ./cmd/libmldf failed (exit %d):\n%s%s"
                    % (proc.returncode, proc.stdout, proc.stderr))
    os.environ["MLDF_LIBRARY"] = out
    return out


@pytest.fixture(scope="session")
def loader_dir(tmp_path_factory):
    """Fixtures for the loader: mkfixtures' files plus bench_jpeg.mldf (300 JPEGs of 320x240,
    label = sample index) ($MLDF_LOADER_FIXTURES if set)."""
    pre = os.environ.get("MLDF_LOADER_FIXTURES")
    if pre:
        return pre
    go = _go_or_skip("the loader's fixtures (go run ./cmd/mkfixtures -bench)")
    out = str(tmp_path_factory.mktemp("loaderfixtures"))
    proc = subprocess.run([go, "run", "./cmd/mkfixtures", "-o", out, "-bench", "300"], cwd=REPO, capture_output=True,
                          text=True, timeout=1800)
    if proc.returncode != 0:
        pytest.fail("go run ./cmd/mkfixtures -bench failed (exit %d):\n%s%s" % (proc.returncode, proc.stdout, proc.stderr))
    return out
