"""MDS interop with MosaicML Streaming's own code (mosaicml-streaming, pinned in the test
requirements): StreamingDataset reads what `convert export --format mds` and `format: mds`
write, sample for sample, from a local directory and from an S3 bucket (versitygw on
loopback); what MDSWriter writes converts to MLDF (source type mds, local or bucket) with every
sample equal. Every column encoding convert writes is covered: jpeg, png, int, str, bytes,
ndarray, json. Skips, saying why, when streaming, Go or versitygw are missing."""
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

from interop_util import convert_bin, run  # noqa: F401 (convert_bin is a fixture)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# The column encodings convert writes, and the MLDF field that gives each.
ENCODINGS = {"image": "jpeg", "png": "png", "label": "int", "text": "str", "blob": "bytes", "arr": "ndarray",
             "meta": "json"}
FIELDS = ("  - {name: image, type: image, mode: smart}\n"  # a JPEG passes through: the same file
          "  - {name: png, type: image, mode: png}\n"
          "  - {name: label, type: int}\n  - {name: text, type: text}\n  - {name: blob, type: bytes}\n"
          "  - {name: arr, type: ndarray}\n  - {name: meta, type: json}\n")


@pytest.fixture(scope="module")
def streaming():
    try:
        import streaming as st  # noqa: F401  (imports torch, torchvision, transformers)
    except ImportError as e:
        pytest.skip("mosaicml-streaming is not installed (scripts/deps test makes the venv with it, "
                    "python/requirements-test.txt): %s" % e)
    return st


def make_images(root, n=12):
    """An image folder of n small JPEGs in 3 classes; returns [(class index, file bytes)] in
    the order the images source reads them (classes sorted, files sorted)."""
    from PIL import Image
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


def write_mds(streaming, out, n=20):
    """An MDSWriter dataset with every encoding convert writes, over several shards; returns
    the samples as given to the writer, with the JPEG column as the file MDSWriter stored."""
    from PIL import Image
    rng = np.random.default_rng(3)
    want = []
    with streaming.MDSWriter(out=str(out), columns=ENCODINGS, size_limit=1 << 14) as w:
        for i in range(n):
            img = Image.fromarray(rng.integers(0, 256, size=(16 + i % 4, 20, 3), dtype=np.uint8))
            dtype = [np.float32, np.int16, np.uint8, np.float64][i % 4]
            s = {"image": img, "png": img, "label": i * 7 - 3 - (i == 5) * (1 << 40),
                 "text": "t\u00e9xt %d \u2603\n\t\"q\"" % i, "blob": bytes([i]) * i + b"\x00!",
                 "arr": (rng.standard_normal((2, i + 1)) * 100).astype(dtype), "meta": {"i": i, "tags": ["a", "b"][: i % 3]}}
            w.write(s)
            want.append(s)
    assert len(json.loads((out / "index.json").read_text())["shards"]) > 1
    ref = streaming.StreamingDataset(local=str(out), shuffle=False, batch_size=1)
    for i, s in enumerate(want):
        s["jpeg_pixels"] = np.asarray(ref[i]["image"])
    return want


def check_samples(ds, want):
    """Every sample of a StreamingDataset equals the MDSWriter input, column for column."""
    assert len(ds) == len(want)
    for i, s in enumerate(want):
        got = ds[i]
        assert sorted(got) == sorted(ENCODINGS), i
        assert np.array_equal(np.asarray(got["image"]), s["jpeg_pixels"]), i
        assert np.array_equal(np.asarray(got["png"]), np.asarray(s["png"])), i
        assert got["label"] == s["label"], i
        assert got["text"] == s["text"], i
        assert got["blob"] == s["blob"], i
        assert got["arr"].dtype == s["arr"].dtype and np.array_equal(got["arr"], s["arr"]), i
        assert got["meta"] == s["meta"], i


def check_index(out):
    index = json.loads((out / "index.json").read_text())
    for sh in index["shards"]:
        assert dict(zip(sh["column_names"], sh["column_encodings"])) == ENCODINGS
    return index


def test_streaming_reads_our_export(tmp_path, streaming, convert_bin):
    from PIL import Image
    images = make_images(str(tmp_path / "imgs"))
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
    # Text: str, int and json columns, from JSONL; and the converter writing MDS itself.
    texts = ["line %d: caf\u00e9 \u2603 %s" % (i, "x" * i) for i in range(len(images))]
    jsonl = tmp_path / "text.jsonl"
    jsonl.write_text("".join(json.dumps({"id": i, "text": t, "meta": {"n": i}}) + "\n" for i, t in enumerate(texts)))
    for fmt, dest in (("", tmp_path / "t.mldf"), ("format: mds\n", tmp_path / "direct")):
        recipe.write_text("source:\n  type: jsonl\n  inputs: [%s]\nfields:\n"
                          "  - {name: text, type: text}\n  - {name: id, type: int}\n  - {name: meta, type: json}\n"
                          "output: %s\n%s" % (jsonl, dest, fmt))
        run(convert_bin, "run", str(recipe))
    run(convert_bin, "export", str(tmp_path / "t.mldf"), str(tmp_path / "tmds"), "--format", "mds")
    for d in (tmp_path / "tmds", tmp_path / "direct"):
        ds = streaming.StreamingDataset(local=str(d), shuffle=False, batch_size=1)
        got = [ds[i] for i in range(len(ds))]
        assert [s["text"] for s in got] == texts
        assert [s["id"] for s in got] == list(range(len(texts)))
        assert [s["meta"] for s in got] == [{"n": i} for i in range(len(texts))]


def test_every_encoding_round_trip(tmp_path, streaming, convert_bin):
    """MDSWriter -> convert (source mds) -> MLDF -> export --format mds and format: mds ->
    StreamingDataset: every column of every sample equal to what MDSWriter was given."""
    import mldf
    src = tmp_path / "src"
    want = write_mds(streaming, src)
    recipe = tmp_path / "r.yaml"
    for fmt, dest in (("", tmp_path / "m.mldf"), ("format: mds\n", tmp_path / "direct")):
        recipe.write_text("source:\n  type: mds\n  path: %s\nfields:\n%soutput: %s\n%s" % (src, FIELDS, dest, fmt))
        run(convert_bin, "run", str(recipe))
    run(convert_bin, "export", str(tmp_path / "m.mldf"), str(tmp_path / "exp"), "--format", "mds", "--shard-size", "8KiB")
    for d in (tmp_path / "exp", tmp_path / "direct"):
        check_index(d)
        check_samples(streaming.StreamingDataset(local=str(d), shuffle=False, batch_size=1), want)
    # The MLDF itself, with our Python reader: the JPEG is the file MDSWriter stored.
    from PIL import Image
    with mldf.open(str(tmp_path / "m.mldf")) as f:
        assert len(f) == len(want)
        for i, s in enumerate(want):
            got = f[i]
            assert got["label"] == s["label"] and got["text"] == s["text"] and bytes(got["blob"]) == s["blob"]
            assert np.array_equal(np.asarray(got["arr"]), s["arr"]) and got["meta"] == s["meta"]
            assert np.array_equal(np.asarray(got["image"]), s["jpeg_pixels"]), i
            assert np.array_equal(np.asarray(got["png"]), np.asarray(s["png"])), i


@pytest.fixture
def bucket(tmp_path):
    """versitygw (the S3 server the Go bucket tests use) on loopback, serving tmp_path/s3;
    yields (the directory whose subdirectories are buckets, environment for clients)."""
    vgw = shutil.which("versitygw") or os.path.join(os.path.expanduser("~"), "go", "bin", "versitygw")
    if not os.path.isfile(vgw):
        pytest.skip("versitygw is not installed (scripts/deps test installs it)")
    data = tmp_path / "s3"
    (data / "bucket").mkdir(parents=True)
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    addr = "127.0.0.1:%d" % s.getsockname()[1]
    s.close()
    key, secret = "mldf-test-key", "mldf-test-secret"
    log = open(tmp_path / "versitygw.log", "wb")
    proc = subprocess.Popen([vgw, "--port", addr, "--keep-alive", "--quiet", "posix", str(data)], stdout=log,
                            stderr=log, env=dict(os.environ, ROOT_ACCESS_KEY=key, ROOT_SECRET_KEY=secret))
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(addr.split(":"), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.skip("versitygw did not start: %s" % (tmp_path / "versitygw.log").read_text()[-500:])
                time.sleep(0.05)
        env = dict(os.environ, AWS_ACCESS_KEY_ID=key, AWS_SECRET_ACCESS_KEY=secret,
                   AWS_ENDPOINT_URL_S3="http://" + addr, S3_ENDPOINT_URL="http://" + addr,
                   AWS_REGION="us-east-1", AWS_EC2_METADATA_DISABLED="true",
                   AWS_CONFIG_FILE=os.path.join(os.devnull, "none"),
                   AWS_SHARED_CREDENTIALS_FILE=os.path.join(os.devnull, "none"))
        for k in ("AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_PROFILE", "AWS_DEFAULT_REGION"):
            env.pop(k, None)
        yield data / "bucket", env
    finally:
        proc.kill()
        proc.wait()
        log.close()


# StreamingDataset from a bucket, in a child process with the bucket's environment (boto3
# reads it); prints the samples' columns as JSON-safe values for the parent to compare.
BUCKET_READ = r"""
import json, sys, numpy as np, streaming
ds = streaming.StreamingDataset(remote=sys.argv[1], local=sys.argv[2], shuffle=False, batch_size=1)
out = []
for i in range(len(ds)):
    s = ds[i]
    out.append({"image": np.asarray(s["image"]).tolist(), "png": np.asarray(s["png"]).tolist(), "label": s["label"],
                "text": s["text"], "blob": s["blob"].hex(), "arr": [str(s["arr"].dtype), s["arr"].tolist()],
                "meta": s["meta"]})
print(json.dumps(out))
"""


def test_streaming_reads_our_export_from_a_bucket(tmp_path, streaming, convert_bin, bucket):
    """StreamingDataset(remote=s3://...) downloads and reads our export from the S3 server on
    loopback, every sample equal; and convert reads an MDSWriter dataset from a bucket prefix."""
    import mldf
    buck, env = bucket
    src = buck / "from-writer"
    want = write_mds(streaming, src)
    # convert reads the MDSWriter output from the bucket prefix.
    recipe = tmp_path / "r.yaml"
    recipe.write_text("source:\n  type: mds\n  path: s3://bucket/from-writer\nfields:\n%soutput: %s\n"
                      % (FIELDS, tmp_path / "m.mldf"))
    res = subprocess.run([convert_bin, "run", str(recipe)], env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    with mldf.open(str(tmp_path / "m.mldf")) as f:
        assert len(f) == len(want)
        assert [f[i]["text"] for i in range(len(f))] == [s["text"] for s in want]
    # Our export, put in the bucket, read by StreamingDataset through boto3.
    run(convert_bin, "export", str(tmp_path / "m.mldf"), str(buck / "ours"), "--format", "mds", "--shard-size", "8KiB")
    check_index(buck / "ours")
    res = subprocess.run([sys.executable, "-c", BUCKET_READ, "s3://bucket/ours", str(tmp_path / "cache")], env=env,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-4000:]
    got = json.loads(res.stdout.strip().splitlines()[-1])
    assert len(got) == len(want)
    for i, (g, s) in enumerate(zip(got, want)):
        assert np.array_equal(np.asarray(g["image"]), s["jpeg_pixels"]), i
        assert np.array_equal(np.asarray(g["png"]), np.asarray(s["png"])), i
        assert g["label"] == s["label"] and g["text"] == s["text"] and bytes.fromhex(g["blob"]) == s["blob"], i
        assert g["arr"][0] == str(s["arr"].dtype) and np.array_equal(np.asarray(g["arr"][1]), s["arr"]), i
        assert g["meta"] == s["meta"], i
    # The shards came over S3: the cache holds them.
    assert sorted(os.listdir(tmp_path / "cache")) >= ["index.json"]
    assert any(n.endswith(".mds") for n in os.listdir(tmp_path / "cache"))
