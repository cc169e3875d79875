"""Hugging Face `datasets` (5.x with pyarrow, from the test venv) against convert, both ways:
a dataset built with Dataset.from_dict with Image(), Audio() and ClassLabel(names=...) features
and saved with to_parquet (the writer the Hub uses) converts with every row, bytes and label
equal; `convert export --format parquet` of that file loads with
datasets.load_dataset("parquet", ...) with the features restored and the bytes equal."""

import glob
import io
import os
import shutil
import subprocess
import wave

import numpy as np
import pytest

from interop_util import convert_bin, run  # noqa: F401 (convert_bin is a fixture)

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # local files only: never ask the Hub
datasets = pytest.importorskip("datasets", reason="datasets is not installed (scripts/deps test makes the venv with it)")
pytest.importorskip("pyarrow", reason="pyarrow is not installed (scripts/deps test)")
import mldf  # noqa: E402
from PIL import Image  # noqa: E402

NAMES = ["cat", "dog", "eel"]
N = 6


def flac_bytes(tmp, i):
    """A short FLAC stream made by the flac CLI from a generated WAV."""
    pcm = (np.sin(np.arange(800 + 37 * i) * (0.01 + 0.003 * i)) * 12000).astype("<i2")
    wav = tmp / ("a%d.wav" % i)
    with wave.open(str(wav), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(pcm.tobytes())
    subprocess.run(["flac", "-s", "-f", "-o", str(wav) + ".flac", str(wav)], check=True)
    return (tmp / ("a%d.wav.flac" % i)).read_bytes()


@pytest.fixture(scope="module")
def hf(tmp_path_factory):
    if shutil.which("flac") is None:
        pytest.skip("the flac CLI makes the audio column (scripts/deps test installs it)")
    from datasets import Audio, ClassLabel, Dataset, Features, Value
    from datasets import Image as HFImage

    d = tmp_path_factory.mktemp("hf")
    rng = np.random.default_rng(5)
    rows = {"image": [], "audio": [], "label": []}
    for i in range(N):
        b = io.BytesIO()
        fmt = "JPEG" if i % 2 == 0 else "PNG"
        h, w = 16 + i, 20
        yy, xx = np.mgrid[0:h, 0:w]
        px = np.stack([xx * 255 // w, yy * 255 // h, np.full((h, w), 40 * i)], -1)
        px = np.clip(px + rng.integers(-4, 4, (h, w, 3)), 0, 255).astype(np.uint8)
        Image.fromarray(px).save(b, fmt)
        rows["image"].append({"bytes": b.getvalue(), "path": "img%d.%s" % (i, fmt.lower())})
        rows["audio"].append({"bytes": flac_bytes(d, i), "path": "a%d.flac" % i})
        rows["label"].append(i % len(NAMES))
    # datasets 5 imports torchcodec (which needs torch 2) to encode an Audio() example, even one
    # already given as {bytes, path}; the column is built as that struct and cast to Audio(),
    # which stores the same bytes and the same features JSON without encoding.
    feats = Features({"image": HFImage(), "label": ClassLabel(names=NAMES),
                      "audio": {"bytes": Value("binary"), "path": Value("string")}})
    ds = Dataset.from_dict(rows, features=feats).cast_column("audio", Audio())
    assert isinstance(ds.features["audio"], Audio)
    ds.to_parquet(str(d / "train.parquet"))
    return d, rows


def converted(d):
    if not (d / "o.mldf").exists():
        (d / "r.yaml").write_text(f"source: {{type: parquet, inputs: [\"{d / 'train.parquet'}\"]}}\noutput: {d / 'o.mldf'}\n")
        run(convert_bin_path[0], "run", d / "r.yaml")
    return mldf.open(str(d / "o.mldf"), decode_images=False, decode_audio=False)


convert_bin_path = []


def is_png(b):
    return b[:8] == b"\x89PNG\r\n\x1a\n"


def test_hf_parquet_converts_every_row(hf, convert_bin):
    d, rows = hf
    convert_bin_path[:] = [convert_bin]
    with converted(d) as r:
        assert len(r) == N
        assert r.field("label").names == NAMES
        for i in range(N):
            s = r[i]
            assert bytes(s["image"]) == rows["image"][i]["bytes"], f"row {i}: image bytes (JPEG and PNG pass through)"
            assert bytes(s["audio"]) == rows["audio"][i]["bytes"], f"row {i}: audio (FLAC passes through)"
            assert int(s["label"]) == rows["label"][i], f"row {i}: label"


def test_hf_png_bytes_pass_through(hf, convert_bin):
    """docs/PARQUET.md: an Image column maps to smart mode with keep_png, JPEG and PNG bytes
    stored as they are; the PNG rows are PNG samples (mode 2) that decode to their pixels."""
    d, rows = hf
    convert_bin_path[:] = [convert_bin]
    with converted(d) as r:
        assert any(is_png(rows["image"][i]["bytes"]) for i in range(N))
        for i in range(N):
            src = rows["image"][i]["bytes"]
            assert bytes(r[i]["image"]) == src, f"row {i}: image bytes"
            if is_png(src):
                assert r[i]["image"].format == "png", f"row {i}: sample format"
                want = np.asarray(Image.open(io.BytesIO(src)).convert("RGB"))
                np.testing.assert_array_equal(r[i]["image"].decode(), want, err_msg=f"row {i}: PNG pixels")


def test_our_parquet_export_loads_with_features(hf, convert_bin):
    from datasets import Audio, ClassLabel
    from datasets import Image as HFImage

    d, rows = hf
    convert_bin_path[:] = [convert_bin]
    with converted(d) as r:
        stored = [bytes(r[i]["image"]) for i in range(N)]
    run(convert_bin, "export", d / "o.mldf", d / "exp", "--format", "parquet")
    files = sorted(glob.glob(str(d / "exp" / "*.parquet")))
    ds = datasets.load_dataset("parquet", data_files=files, split="train",
                               cache_dir=str(d / "hf-cache"))
    f = ds.features
    assert isinstance(f["image"], HFImage), f
    assert isinstance(f["audio"], Audio), f
    assert isinstance(f["label"], ClassLabel) and f["label"].names == NAMES, f
    assert len(ds) == N
    raw = ds.cast_column("image", HFImage(decode=False)).cast_column("audio", Audio(decode=False))
    for i in range(N):
        s = raw[i]
        assert s["image"]["bytes"] == stored[i], f"row {i}: image bytes (as our file stores them)"
        assert s["audio"]["bytes"] == rows["audio"][i]["bytes"], f"row {i}: audio bytes"
        assert s["label"] == rows["label"][i], f"row {i}: label"
    # Image() decodes our bytes to the pixels Pillow gets from them.
    for i in range(N):
        want = np.asarray(Image.open(io.BytesIO(stored[i])).convert("RGB"))
        got = ds.select_columns(["image"])[i]["image"]  # the audio column would need torchcodec
        np.testing.assert_array_equal(np.asarray(got.convert("RGB")), want, err_msg=f"row {i}")
