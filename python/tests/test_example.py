"""The README's PyTorch example runs as written (when torch is installed)."""
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def test_torch_example_runs(tmp_path):
    pytest.importorskip("torch")
    if shutil.which("go") is None:
        pytest.skip("go is not installed")
    # The example reads out/demo.mldf relative to the repository root: build it there in a
    # scratch copy of the layout, so the test does not touch the checkout's out/.
    work = tmp_path / "repo"
    (work / "out").mkdir(parents=True)
    subprocess.run(["go", "run", "./cmd/convert", "images", "testdata/images", str(work / "out" / "demo.mldf"),
                    "--mode", "smart", "--max-resolution", "256"], cwd=ROOT, check=True, capture_output=True)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    res = subprocess.run([sys.executable, os.path.join(ROOT, "python", "examples", "torch_demo.py")],
                         cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    lines = [l for l in res.stdout.splitlines() if l.startswith("torch.Size")]
    assert lines and lines[0].startswith("torch.Size([8, 3, 224, 224])"), res.stdout
    assert sum(int(l.split("[", 2)[1].split(",")[0]) for l in lines) == 25  # every sample once
