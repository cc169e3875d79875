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
