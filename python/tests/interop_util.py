"""Helpers of the interop tests (test_interop_*.py): the convert binary, built once per session,
and a runner that fails with the binary's own message."""

import os
import shutil
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


@pytest.fixture(scope="session")
def convert_bin(tmp_path_factory):
    """The convert binary: $MLDF_CONVERT if set, else `go build ./cmd/convert` into a temp dir."""
    pre = os.environ.get("MLDF_CONVERT")
    if pre:
        return pre
    go = shutil.which("go")
    if go is None:
        pytest.skip("the interop tests convert with the Go binary and `go` is not on PATH")
    out = str(tmp_path_factory.mktemp("interop-bin") / "convert")
    proc = subprocess.run([go, "build", "-o", out, "./cmd/convert"], cwd=REPO,
                          capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        pytest.fail("go build ./cmd/convert failed:\n" + proc.stderr)
    return out


def run(*args, cwd=None):
    """Runs convert (or anything) and fails the test with its output when it exits non-zero."""
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True, cwd=cwd,
                          timeout=600)
    if proc.returncode != 0:
        pytest.fail("%s exited %d:\n%s%s" % (" ".join(map(str, args)), proc.returncode,
                                              proc.stdout[-2000:], proc.stderr[-4000:]))
    return proc


def psnr(a, b):
    import numpy as np
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    mse = float((d * d).mean())
    return float("inf") if mse == 0 else 10 * np.log10(255.0 ** 2 / mse)
