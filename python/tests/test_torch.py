"""mldf.torch.MLDFDataset opens its file lazily, once per process (tested with a stub torch
when torch is not installed, and with a real DataLoader when it is)."""

import importlib
import os
import pickle
import sys
import types

import numpy as np
import pytest

try:
    import torch  # noqa: F401

    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False


@pytest.fixture
def mtorch(monkeypatch):
    """mldf.torch, imported against a stub torch when the real one is missing."""
    if not HAVE_TORCH:
        t = types.ModuleType("torch")
        t.utils = types.ModuleType("torch.utils")
        t.utils.data = types.ModuleType("torch.utils.data")

        class Dataset:
            pass

        t.utils.data.Dataset = Dataset
        monkeypatch.setitem(sys.modules, "torch", t)
        monkeypatch.setitem(sys.modules, "torch.utils", t.utils)
        monkeypatch.setitem(sys.modules, "torch.utils.data", t.utils.data)
    sys.modules.pop("mldf.torch", None)
    m = importlib.import_module("mldf.torch")
    yield m
    sys.modules.pop("mldf.torch", None)


def _mark_seen(s):
    return {**s, "seen": True}


def test_lazy_open_per_process(mtorch, fixtures_dir):
    import mldf

    path = os.path.join(fixtures_dir, "images.mldf")
    ds = mtorch.MLDFDataset(path, transform=_mark_seen)
    assert mldf.torch is mtorch  # mldf.torch resolves to the submodule
    assert ds._reader is None, "the file must not be open before the first item"
    assert len(ds) == 8
    s = ds[1]
    assert s["seen"] and s["raw"].flags.writeable  # owned copies: tensors can be made from them
    parent_reader = ds._reader
    assert parent_reader is not None and ds._pid == os.getpid()
    ds[2]
    assert ds._reader is parent_reader  # reused in the same process

    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: like a DataLoader worker started by fork
        try:
            v = ds[3]
            ok = (ds._reader is not parent_reader and ds._pid == os.getpid() and not parent_reader.closed
                  and v["raw"].shape[2] == 3)
            os.write(wfd, b"ok" if ok else b"bad")
        except BaseException as e:  # report, never run the parent's test code
            os.write(wfd, repr(e).encode()[:200])
        finally:
            os._exit(0)
    os.close(wfd)
    msg = os.read(rfd, 256)
    os.close(rfd)
    os.waitpid(pid, 0)
    assert msg == b"ok", msg
    assert ds._reader is parent_reader and not parent_reader.closed
    np.testing.assert_array_equal(ds[3]["raw"], parent_reader[3]["raw"])

    clone = pickle.loads(pickle.dumps(ds))  # spawn: the map is not pickled
    assert clone._reader is None and len(clone) == 8
    assert int(clone[4]["label"]) == int(ds[4]["label"])
    ds.close()
    assert ds._reader is None and parent_reader.closed


def test_fields_and_bytes(mtorch, fixtures_dir):
    ds = mtorch.MLDFDataset(os.path.join(fixtures_dir, "scalars.mldf"), fields=["blob", "label"])
    s = ds[0]
    assert list(s) == ["blob", "label"] and isinstance(s["blob"], bytes)
    with pytest.raises(KeyError):
        mtorch.MLDFDataset(os.path.join(fixtures_dir, "scalars.mldf"), fields=["nope"])


def _label(s):
    return int(s["label"])


@pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed")
def test_dataloader_workers(mtorch, fixtures_dir):
    import torch.utils.data as tud

    ds = mtorch.MLDFDataset(os.path.join(fixtures_dir, "images.mldf"), fields=["label", "raw"],
                            transform=_label)
    labels = [int(x) for b in tud.DataLoader(ds, batch_size=3, num_workers=2) for x in b]
    assert labels == [int(ds[i]) for i in range(len(ds))]
