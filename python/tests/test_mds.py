"""MDS interop with MosaicML Streaming's own code (mosaicml-streaming, pinned in the test
requirements): StreamingDataset reads what `convert export --format mds` writes, sample for
sample; what MDSWriter writes converts to MLDF (source type mds) with every sample equal.
Skips, saying why, when streaming, torch or Go are missing."""
import io
import json
import os
import shutil
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.fixture(scope="module")
def streaming():
    try:
        import streaming as st  # noqa: F401  (imports torch)
    except ImportError as e:
        pytest.skip("mosaicml-streaming is not installed (pip install mosaicml-streaming==0.13.0 --no-deps "
                    "and its dependencies; torch from python3-torch): %s" % e)
    return st


@pytest.fixture(scope="module")
def convert_bin(tmp_path_factory):
    if shutil.which("go") is None:
        pytest.skip("go is not installed: the test builds cmd/convert")
    out = str(tmp_path_factory.mktemp("bin") / "convert")
    subprocess.run(["go", "build", "-o", out, "./cmd/convert"], cwd=ROOT, check=True, capture_output=True)
    return out


def run(*args):
    res = subprocess.run(list(args), capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, "%s\n%s%s" % (" ".join(args), res.stdout, res.stderr)
    return res


def make_images(root, n=12):
    """An image folder of n small JPEGs in 3 classes; returns [(class index, file bytes)] in
    the order the images source reads them (classes sorted, files sorted)."""
    from PIL import Image
    import numpy as np
    rng = np.random.default_rng(7)
    out = []
    for c, cls in enumerate(["cat", "dog", "emu"]):
        os.makedirs(os.path.join(root, cls))
        for k in range(n // 3):
            arr = rng.integers(0, 256, size=(24 + k, 32, 3), dtype=np.uint8)
            buf = io.BytesIO()
            Image.fromarray(arr).save(buf, format="JPEG", quality=90)
            path = os.path.join(root, cls, "img%02d.jpg" % k)
            with open(path, "wb") as f:
                f.write(buf.getvalue())
            out.append((c, buf.getvalue()))
    return out


def test_streaming_reads_our_export(tmp_path, streaming, convert_bin):
    import numpy as np
    from PIL import Image
    images = make_images(str(tmp_path / "imgs"))
    jsonl = tmp_path / "text.jsonl"
    texts = ["line %d: caf\u00e9 \u2603 %s" % (i, "x" * i) for i in range(len(images))]
    # The images and a text column from one source: the images source, text by a second run.
    recipe = tmp_path / "r.yaml"
    recipe.write_text("source:\n  type: images\n  path: %s\nfields:\n"
                      "  - {name: image, type: image, mode: smart, max_resolution: 4096}\n"
                      "  - {name: label, type: int}\noutput: %s\n" % (tmp_path / "imgs", tmp_path / "a.mldf"))
    run(convert_bin, "run", str(recipe))
    out = tmp_path / "mds"
    run(convert_bin, "export", str(tmp_path / "a.mldf"), str(out), "--format", "mds", "--shard-size", "4KiB")
    index = json.loads((out / "index.json").read_text())
    assert len(index["shards"]) > 1
    ds = streaming.StreamingDataset(local=str(out), shuffle=False, batch_size=1)
    assert len(ds) == len(images)
    for i, (label, data) in enumerate(images):
        s = ds[i]
        assert s["label"] == label
        want = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
        assert np.array_equal(np.asarray(s["image"].convert("RGB")), want), i
    # Text: str and json columns.
    jsonl.write_text("".join(json.dumps({"id": i, "text": t, "meta": {"n": i}}) + "\n" for i, t in enumerate(texts)))
    recipe.write_text("source:\n  type: jsonl\n  inputs: [%s]\nfields:\n"
                      "  - {name: text, type: text}\n  - {name: id, type: int}\n  - {name: meta, type: json}\noutput: %s\n"
                      % (jsonl, tmp_path / "t.mldf"))
    run(convert_bin, "run", str(recipe))
    run(convert_bin, "export", str(tmp_path / "t.mldf"), str(tmp_path / "tmds"), "--format", "mds")
    ds = streaming.StreamingDataset(local=str(tmp_path / "tmds"), shuffle=False, batch_size=1)
    got = [ds[i] for i in range(len(ds))]
    assert [s["text"] for s in got] == texts
    assert [s["id"] for s in got] == list(range(len(texts)))
    assert [s["meta"] for s in got] == [{"n": i} for i in range(len(texts))]
    # The converter writes MDS itself (format: mds): the same samples.
    recipe.write_text(recipe.read_text().replace("output: %s" % (tmp_path / "t.mldf"), "output: %s\nformat: mds" % (tmp_path / "direct")))
    run(convert_bin, "run", str(recipe))
    ds = streaming.StreamingDataset(local=str(tmp_path / "direct"), shuffle=False, batch_size=1)
    assert [ds[i]["text"] for i in range(len(ds))] == texts


def test_mdswriter_output_converts(tmp_path, streaming, convert_bin):
    import numpy as np
    from PIL import Image
    from streaming import MDSWriter
    rng = np.random.default_rng(3)
    out = tmp_path / "mds"
    cols = {"image": "jpeg", "png": "png", "label": "int", "text": "str", "blob": "bytes",
            "arr": "ndarray", "meta": "json"}
    want = []
    with MDSWriter(out=str(out), columns=cols, size_limit=1 << 14) as w:
        for i in range(20):
            img = Image.fromarray(rng.integers(0, 256, size=(16, 20, 3), dtype=np.uint8))
            s = {"image": img, "png": img, "label": i * 7 - 3, "text": "t\u00e9xt %d" % i,
                 "blob": bytes([i]) * i + b"!", "arr": rng.standard_normal((2, i + 1)).astype(np.float32),
                 "meta": {"i": i, "tags": ["a", "b"][: i % 3]}}
            w.write(s)
            want.append(s)
    assert len(json.loads((out / "index.json").read_text())["shards"]) > 1
    recipe = tmp_path / "r.yaml"
    recipe.write_text("source:\n  type: mds\n  path: %s\nfields:\n"
                      "  - {name: image, type: bytes}\n  - {name: png, type: bytes}\n  - {name: label, type: int}\n"
                      "  - {name: text, type: text}\n  - {name: blob, type: bytes}\n  - {name: arr, type: ndarray}\n"
                      "  - {name: meta, type: json}\noutput: %s\n" % (out, tmp_path / "m.mldf"))
    run(convert_bin, "run", str(recipe))
    # Read back with our Python reader.
    import sys
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import mldf
    ref = streaming.StreamingDataset(local=str(out), shuffle=False, batch_size=1)
    with mldf.open(str(tmp_path / "m.mldf")) as f:
        assert len(f) == len(want) == len(ref)
        for i, s in enumerate(want):
            got = f[i]
            r = ref[i]
            assert got["label"] == s["label"]
            assert got["text"] == s["text"]
            assert bytes(got["blob"]) == s["blob"]
            assert np.array_equal(np.asarray(got["arr"]), s["arr"])
            assert got["meta"] == s["meta"]
            # jpeg/png columns hold the files MDSWriter stored: the same pixels.
            assert np.array_equal(np.asarray(Image.open(io.BytesIO(bytes(got["image"])))), np.asarray(r["image"]))
            assert np.array_equal(np.asarray(Image.open(io.BytesIO(bytes(got["png"])))), np.asarray(s["png"]))
