"""mldf.Loader's Python side without the native library: the decoders' and transforms'
parameter checks, the distributed settings, and the error when the library is missing."""

import os
import subprocess
import sys

import pytest

import mldf
from mldf import decoders as D
from mldf import loader as L
from mldf import transforms as T

HERE = os.path.dirname(os.path.abspath(__file__))
PYROOT = os.path.dirname(HERE)


@pytest.mark.parametrize("make, msg", [
    (lambda: D.RandomResizedCrop(0), "size must be in"),
    (lambda: D.RandomResizedCrop((224, 224, 3)), "size must be an int or (height, width)"),
    (lambda: D.RandomResizedCrop(224.0), "size must be an int"),
    (lambda: D.RandomResizedCrop(True), "size must be an int"),
    (lambda: D.RandomResizedCrop(224, scale=(0.5, 0.1)), "min <= max"),
    (lambda: D.RandomResizedCrop(224, scale=(0.0, 1.0)), "above 0"),
    (lambda: D.RandomResizedCrop(224, scale=(0.1, 1.5)), "at most 1"),
    (lambda: D.RandomResizedCrop(224, ratio=(1.0,)), "pair"),
    (lambda: D.RandomResizedCrop(224, ratio=(0.5, float("nan"))), "finite"),
    (lambda: D.RandomResizedCrop(224, interpolation="nearest"), "interpolation must be 'bilinear'"),
    (lambda: D.RandomResizedCrop(224, antialias=False), "antialias must be True"),
    (lambda: D.RandomResizedCrop(224, channels=4), "channels must be 3"),
    (lambda: D.RandomResizedCrop(224, jpeg="turbo"), "jpeg must be 'accurate'"),
    (lambda: D.CenterCrop(224, jpeg=True), "jpeg must be 'accurate'"),
    (lambda: D.Resize((224, 224), jpeg=None), "jpeg must be 'accurate'"),
    (lambda: D.CenterCrop(224, ratio=0), "ratio must be in (0, 1]"),
    (lambda: D.CenterCrop(224, ratio=1.5), "ratio must be in (0, 1]"),
    (lambda: D.Resize(224), "size must be (height, width)"),
    (lambda: D.NDArray(dtype="nonsense"), "dtype must be a numpy dtype"),
    (lambda: D.NDArray(shape=(-1, 3)), "shape must be in"),
    (lambda: D.Audio(0), "length must be in"),
    (lambda: D.Audio(16000, offset="end"), "offset must be one of"),
    (lambda: D.Audio(16000, dtype="int32"), "dtype must be one of"),
    (lambda: D.Audio(16000, dtype="int16", pad=1e6), "outside int16"),
    (lambda: D.Audio(16000, channels=9), "channels must be in"),
    (lambda: T.RandomHorizontalFlip(p=2), "p must be a probability"),
    (lambda: T.Normalize((0.5, 0.5), (0.5,)), "as many values"),
    (lambda: T.Normalize(0.5, 0), "above 0"),
    (lambda: T.Normalize((123.7, 116.3, 103.5), (58.4, 57.1, 57.4)), "divide them by 255"),
    (lambda: T.Normalize(0.5, 0.5, dtype="int8"), "dtype must be one of"),
    (lambda: T.Normalize(0.5, 0.5, dtype="float64"), "dtype must be one of"),
    (lambda: T.Normalize("abc", 0.5), "mean must be"),
])
def test_bad_parameters_name_the_op(make, msg):
    with pytest.raises(ValueError) as e:
        make()
    assert msg in str(e.value)
    assert str(e.value).split(":")[0] in ("RandomResizedCrop", "CenterCrop", "Resize", "NDArray", "Audio",
                                          "RandomHorizontalFlip", "Normalize")


def test_plan_entries():
    assert D.RandomResizedCrop(224).to_plan() == {
        "op": "RandomResizedCrop", "size": [224, 224], "scale": [0.08, 1.0], "ratio": [0.75, 4.0 / 3.0]}
    assert D.RandomResizedCrop((160, 128), scale=(0.35, 1)).to_plan()["size"] == [160, 128]
    assert D.CenterCrop(224).to_plan() == {"op": "CenterCrop", "size": [224, 224], "ratio": 224 / 256}
    assert D.Resize((32, 48), channels=1).to_plan() == {"op": "Resize", "size": [32, 48], "channels": 1}
    assert T.Flip is T.RandomHorizontalFlip
    assert T.Flip().to_plan() == {"op": "RandomHorizontalFlip", "p": 0.5}
    import numpy as np
    assert T.Normalize(np.array(T.IMAGENET_MEAN), T.IMAGENET_STD, dtype=np.float16).to_plan() == {
        "op": "Normalize", "mean": list(T.IMAGENET_MEAN), "std": list(T.IMAGENET_STD), "dtype": "float16"}
    assert T.ToCHW().to_plan() == {"op": "ToCHW"}
    assert D.NDArray(np.float32, (3, 4)).to_plan() == {"op": "NDArray", "dtype": "<f4", "shape": [3, 4]}
    assert D.Audio(16000).to_plan() == {"op": "Audio", "length": 16000, "offset": "random", "pad": 0.0,
                                        "dtype": "float32"}
    assert D.Int().to_plan() == {"op": "Int"} and D.Text().to_plan() == {"op": "Text"}
    assert repr(D.CenterCrop(64)) == "CenterCrop(size=[64, 64], ratio=0.875)"
    assert D.CenterCrop(64) == D.CenterCrop((64, 64)) and D.CenterCrop(64) != D.CenterCrop(65)


FIELDS = [{"name": "image", "type": "IMAGE_JPEG", "ops": ["RandomResizedCrop", "CenterCrop", "Resize", "Bytes"]},
          {"name": "label", "type": "INT", "ops": ["Int"]},
          {"name": "caption", "type": "TEXT_RAW", "ops": ["Text", "Bytes"]}]


@pytest.mark.parametrize("pipelines, exc, msg", [
    (None, TypeError, "pipelines must be a dict"),
    ({}, TypeError, "pipelines must be a dict"),
    ({"img": [D.CenterCrop(8)]}, KeyError, "does not have (fields: 'image', 'label', 'caption')"),
    ({"image": []}, TypeError, "must be a list"),
    ({"image": [T.Flip()]}, TypeError, "starts with a decoder"),
    ({"image": [D.CenterCrop]}, TypeError, "is a class; make an instance"),
    ({"image": [D.CenterCrop(8), T.Flip]}, TypeError, "is a class"),
    ({"image": [D.CenterCrop(8), D.Int()]}, TypeError, "transforms from mldf.transforms"),
    ({"image": [D.CenterCrop(8), T.Flip(), T.Flip()]}, ValueError, "appears twice"),
    ({"image": [D.CenterCrop(8), T.ToCHW(), T.Normalize(0.5, 0.5)]}, ValueError, "Normalize must come before ToCHW"),
    ({"image": [D.CenterCrop(8), T.Normalize(0.5, 0.5), T.Flip()]}, ValueError,
     "RandomHorizontalFlip must come before Normalize"),
    ({"label": [D.Float()]}, ValueError, "field 'label' is INT; Float does not decode it (decoders for it: Int)"),
    ({"label": [D.Int(), T.ToCHW()]}, ValueError, "applies to images"),
    ({"caption": [D.Bytes(), T.Normalize(0.5, 0.5)]}, ValueError, "applies to images"),
    ({"image": None}, ValueError, "every pipeline is None"),
])
def test_bad_pipelines(pipelines, exc, msg):
    with pytest.raises(exc) as e:
        L._check_pipelines(pipelines, FIELDS)
    assert msg in str(e.value)


def test_pipelines_to_plan():
    plan = L._check_pipelines({"image": [D.CenterCrop(8), T.ToCHW()], "label": D.Int(), "caption": None}, FIELDS)
    assert plan == [{"field": "image", "ops": [D.CenterCrop(8).to_plan(), {"op": "ToCHW"}]},
                    {"field": "label", "ops": [{"op": "Int"}]}]


class _FakeDist:
    def __init__(self, init, rank, world):
        self._init, self._rank, self._world = init, rank, world

    def is_available(self):
        return True

    def is_initialized(self):
        return self._init

    def get_rank(self):
        return self._rank

    def get_world_size(self):
        return self._world


def test_distributed_sources(monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    monkeypatch.delitem(sys.modules, "torch.distributed", raising=False)
    assert L.distributed() == (0, 1, "default")
    assert L.distributed(2, 4) == (2, 4, "arguments")
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "3")
    assert L.distributed()[:2] == (1, 3)
    assert L.distributed(0, 2)[:2] == (0, 2)  # arguments win
    # torch.distributed, when torch is imported and a group is initialised, wins over the environment
    monkeypatch.setitem(sys.modules, "torch.distributed", _FakeDist(True, 5, 8))
    assert L.distributed() == (5, 8, "torch.distributed")
    monkeypatch.setitem(sys.modules, "torch.distributed", _FakeDist(False, 5, 8))
    assert L.distributed()[:2] == (1, 3)


@pytest.mark.parametrize("args, env, msg", [
    ((1, None), {}, "give both rank and world_size"),
    ((3, 3), {}, "rank 3 is not below world_size 3"),
    ((-1, 2), {}, "rank must be at least 0"),
    ((0, 0), {}, "world_size must be at least 1"),
    ((None, None), {"RANK": "1"}, "sets RANK but not WORLD_SIZE"),
    ((None, None), {"RANK": "x", "WORLD_SIZE": "2"}, "RANK='x' is not an integer"),
    ((None, None), {"RANK": "2", "WORLD_SIZE": "2"}, "from the environment"),
])
def test_distributed_bad(monkeypatch, args, env, msg):
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    monkeypatch.delitem(sys.modules, "torch.distributed", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with pytest.raises(ValueError) as e:
        L.distributed(*args)
    assert msg in str(e.value)


def test_without_native_library(tmp_path):
    """With no native library the reader works and mldf.Loader raises NativeUnavailable (an
    ImportError) saying how to build it; importing mldf does not load it."""
    code = r"""
import mldf, sys
assert "torch" not in sys.modules
try:
    mldf.Loader(sys.argv[1], pipelines={"x": [mldf.decoders.Int()]})
except ImportError as e:
    assert isinstance(e, mldf.NativeUnavailable), type(e)
    print("MSG", e)
else:
    raise SystemExit("no error")
"""
    env = dict(os.environ, MLDF_LIBRARY=str(tmp_path / "missing" / "libmldf.so"), PYTHONPATH=PYROOT)
    out = subprocess.run([sys.executable, "-c", code, __file__], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "does not exist" in out.stdout and "go build -buildmode=c-shared" in out.stdout
    assert "mldf.open" in out.stdout


def test_not_a_library(tmp_path):
    bad = tmp_path / "libmldf.so"
    bad.write_bytes(b"not an ELF file")
    code = "import mldf, sys\ntry:\n    mldf.Loader(sys.argv[1], pipelines={'x': [mldf.decoders.Int()]})\n" \
           "except mldf.NativeUnavailable as e:\n    print('MSG', e)\n"
    env = dict(os.environ, MLDF_LIBRARY=str(bad), PYTHONPATH=PYROOT)
    out = subprocess.run([sys.executable, "-c", code, __file__], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "cannot be loaded" in out.stdout


def test_loader_arguments_checked_before_the_library(tmp_path):
    with pytest.raises(FileNotFoundError):
        mldf.Loader(str(tmp_path / "nope.mldf"), pipelines={"x": [D.Int()]})
