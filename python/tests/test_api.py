"""The reader's API: zero-copy columns and views, indexing and batches, close, options."""

import base64
import json
import mmap
import os
import subprocess
import sys

import numpy as np
import pytest

import mldf
from mldf import reader as mreader


def root_base(a):
    while True:
        if isinstance(a, np.ndarray) and a.base is not None:
            a = a.base
        elif isinstance(a, memoryview):
            a = a.obj
        else:
            return a


@pytest.fixture
def scalars(fixtures_dir):
    with mldf.open(os.path.join(fixtures_dir, "scalars.mldf")) as r:
        yield r


def test_column_is_zero_copy(scalars):
    r = scalars
    col = r.column("label")
    assert isinstance(root_base(col), mmap.mmap)  # a view of the memory map, no copy
    assert col.strides == (r.row_size,) and not col.flags.writeable
    whole = np.frombuffer(r._buf, dtype=np.uint8)
    assert np.shares_memory(col, whole)
    assert col.__array_interface__["data"][0] == whole.__array_interface__["data"][0] + r.metadata_ptr
    assert np.shares_memory(r.column("score"), whole)
    assert r["label"].tolist() == col.tolist()  # r["name"] is the column
    with pytest.raises(ValueError):
        col[0] = 1


def test_raw_image_is_zero_copy(fixtures_dir):
    with mldf.open(os.path.join(fixtures_dir, "bigraw.mldf")) as r:
        img = r[0]["image"]
        assert isinstance(root_base(img), mmap.mmap) and not img.flags.writeable
        assert np.shares_memory(img, np.frombuffer(r._buf, dtype=np.uint8))
        meta = r.meta(0, "image")
        assert img.__array_interface__["data"][0] - np.frombuffer(r._buf, np.uint8).__array_interface__["data"][0] \
            == meta["data_ptr"]
        img_col = r.column("image")
        assert img_col["height"][0] == 70 and img_col["width"][0] == 90 and img_col["channels"][0] == 3


def test_indexing_and_batches(scalars):
    r = scalars
    n = len(r)
    labels = r.column("label").tolist()
    assert int(r[-1]["label"]) == labels[-1]
    assert [int(s["label"]) for s in r[2:5]] == labels[2:5]
    assert [int(s["label"]) for s in r[::7]] == labels[::7]
    assert [int(s["label"]) for s in r[[1, 7, 3]]] == [labels[1], labels[7], labels[3]]
    assert [int(s["label"]) for s in r[np.array([9, 0, 9])]] == [labels[9], labels[0], labels[9]]
    mask = np.zeros(n, bool)
    mask[[4, 5]] = True
    assert [int(s["label"]) for s in r[mask]] == labels[4:6]
    assert r[[]] == []
    assert list(r.sample(3, fields=["meta", "label"])) == ["meta", "label"]
    assert int(r.get(3, "label")) == labels[3] and int(r.get(3, 0)) == labels[3]
    assert sum(1 for _ in r) == n
    with pytest.raises(IndexError):
        r[n]
    with pytest.raises(IndexError):
        r[-n - 1]
    with pytest.raises(IndexError):
        r[[0, n]]
    with pytest.raises(KeyError, match="no field 'nope'"):
        r.column("nope")
    with pytest.raises(TypeError):
        r[1.5]
    with pytest.raises(TypeError):
        r.payload(0, "label")


def test_close_and_context_manager(fixtures_dir):
    r = mldf.open(os.path.join(fixtures_dir, "bigraw.mldf"))
    img = r[0]["image"]
    col = r.column("image")
    r.close()
    assert r.closed
    r.close()  # idempotent
    assert img.sum() > 0 and col["width"][0] == 90  # views stay valid: they hold the map
    with pytest.raises(ValueError, match="closed"):
        r[0]
    with mldf.open(os.path.join(fixtures_dir, "scalars.mldf")) as r2:
        assert len(r2) == 40
    assert r2.closed


def test_views_outlive_close(fixtures_dir):
    # every kind of view keeps the mapping alive: reading them after close must not crash
    r = mldf.open(os.path.join(fixtures_dir, "scalars.mldf"))
    col, at, blob = r.column("label"), r.alloc_table(), r[0]["blob"]
    r.close()
    assert col.tolist()[:2] == [0, 1] and at["size"].sum() > 0 and len(bytes(blob)) > 0
    for name, get in (("image", lambda r: r[0]["image"]), ("col", lambda r: r.column("image")),
                      ("alloc", lambda r: r.alloc_table())):
        r = mldf.open(os.path.join(fixtures_dir, "bigraw.mldf"))
        v = get(r)
        r.close()
        assert np.asarray(v).nbytes > 0 and bytes(np.ascontiguousarray(v).tobytes()) != b"", name


def test_fields(fixtures_dir):
    with mldf.open(os.path.join(fixtures_dir, "images.mldf")) as r:
        f = r.fields[2]
        assert (f.name, f.type, f.type_id, f.metadata_size, f.index) == ("jpeg", "IMAGE_JPEG", 11, 24, 2)
        assert len(f.raw_arguments) == 128 and f.has_payload
        assert r.field("label").type == "INT" and not r.field("label").has_payload
        assert "jpeg" in repr(f) and "images.mldf" in repr(r)


def test_encoded_images(fixtures_dir, monkeypatch):
    path = os.path.join(fixtures_dir, "images.mldf")
    with open(os.path.join(fixtures_dir, "images.expected.json")) as fh:
        exp = json.load(fh)
    with mldf.open(path, decode_images=False) as r:
        v = r[1]["jpeg"]
        assert isinstance(v, mldf.EncodedImage) and v.decoded is False and v.format == "jpeg"
        assert bytes(v) == base64.b64decode(exp["samples"][1]["jpeg"]["b64"])
        assert v.shape == (exp["samples"][1]["jpeg"]["height"], exp["samples"][1]["jpeg"]["width"], 3)
        assert r[1]["png"].format == "png"
        assert isinstance(r[1]["raw"], np.ndarray)  # raw needs no decoder
        if mldf.HAVE_PIL:
            assert v.decode().shape == v.shape
    monkeypatch.setattr(mreader, "HAVE_PIL", False)  # as if Pillow were not installed
    with mldf.open(path) as r:
        assert isinstance(r[3]["jpeg"], mldf.EncodedImage)
        assert r[2]["png"] is None  # the missing optional value: empty payload


def test_import_does_not_import_torch():
    code = "import sys; sys.path.insert(0, %r); import mldf; assert 'torch' not in sys.modules; print('ok')" % (
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr
