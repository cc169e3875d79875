"""FFCV's own Loader (ffcv 1.0.x, from the test venv) reads the .beton files convert writes:
raw and JPEG images, int, float, ndarray and bytes fields, every sample equal to what FFCV's
own DatasetWriter stores for the same input (JPEG: FFCV's writer re-encodes, we keep the
source's bytes, so there pixels are compared with the source's decode and with FFCV's copy
by PSNR)."""

import io
import tarfile

import numpy as np
import pytest

from interop_util import convert_bin, psnr, run  # noqa: F401 (convert_bin is a fixture)

ffcv = pytest.importorskip("ffcv", reason="ffcv is not installed (scripts/deps test makes the venv with it)")
pytest.importorskip("ffcv.loader", reason="ffcv's Loader does not import here")
from PIL import Image  # noqa: E402

N = 7


def samples():
    rng = np.random.default_rng(7)
    out = []
    for i in range(N):
        h, w = 38, 50  # FFCV's SimpleRGBImageDecoder needs one size for all
        yy, xx = np.mgrid[0:h, 0:w]
        base = np.stack([xx * 255 // w, yy * 255 // h, (xx + yy) * 127 // (w + h)], -1)
        img = np.clip(base + rng.integers(-20, 20, (h, w, 3)), 0, 255).astype(np.uint8)
        png = io.BytesIO()
        Image.fromarray(img).save(png, "PNG")
        jpg = io.BytesIO()
        Image.fromarray(img).save(jpg, "JPEG", quality=92)
        out.append({
            "key": "s%04d" % i, "pixels": img, "png": png.getvalue(), "jpg": jpg.getvalue(),
            "label": i * 7 - 3, "score": i / 3.0 - 1.25,
            "arr": (np.arange(6, dtype="<f4").reshape(2, 3) * (i + 0.5)).astype("<f4"),
            "blob": bytes((j * 31 + i) % 256 for j in range(1 + i * 13)),
        })
    return out


def write_tar(path, ss):
    def add(t, name, b):
        ti = tarfile.TarInfo(name)
        ti.size = len(b)
        t.addfile(ti, io.BytesIO(b))

    with tarfile.open(path, "w") as t:
        for s in ss:
            k = s["key"]
            add(t, k + ".png", s["png"])
            add(t, k + ".jpg", s["jpg"])
            add(t, k + ".cls", str(s["label"]).encode())
            add(t, k + ".score", repr(s["score"]).encode())
            npy = io.BytesIO()
            np.save(npy, s["arr"])
            add(t, k + ".npy", npy.getvalue())
            add(t, k + ".bin", s["blob"])


@pytest.fixture(scope="module")
def files(tmp_path_factory, convert_bin):
    from ffcv.fields import BytesField, FloatField, IntField, NDArrayField, RGBImageField
    from ffcv.writer import DatasetWriter

    d = tmp_path_factory.mktemp("ffcv")
    ss = samples()
    write_tar(d / "s.tar", ss)
    (d / "r.yaml").write_text(f"""
source: {{type: tar, inputs: ["{d / 's.tar'}"]}}
fields:
  - {{name: raw, type: image, from: png, mode: raw}}
  - {{name: jpeg, type: image, from: jpg, mode: smart}}
  - {{name: label, type: int, from: cls}}
  - {{name: score, type: float, from: score}}
  - {{name: arr, type: ndarray, from: npy, dtype: "<f4", shape: [2, 3]}}
  - {{name: blob, type: bytes, from: bin}}
output: {d / 'ours.beton'}
format: beton
""")
    run(convert_bin, "run", d / "r.yaml")

    class DS:
        def __len__(self):
            return N

        def __getitem__(self, i):
            s = ss[i]
            return (s["pixels"], s["pixels"], s["label"], s["score"], s["arr"],
                    np.frombuffer(s["blob"], dtype=np.uint8))

    fields = {"raw": RGBImageField(write_mode="raw"),
              "jpeg": RGBImageField(write_mode="jpg", jpeg_quality=92),
              "label": IntField(), "score": FloatField(),
              "arr": NDArrayField(np.dtype("<f4"), (2, 3)), "blob": BytesField()}
    DatasetWriter(str(d / "theirs.beton"), fields, num_workers=1).from_indexed_dataset(DS())
    return ss, str(d / "ours.beton"), str(d / "theirs.beton")


def read_all(path):
    """Every sample of a .beton through FFCV's Loader, one per batch, in order."""
    from ffcv.fields.basics import FloatDecoder, IntDecoder
    from ffcv.fields.bytes import BytesDecoder
    from ffcv.fields.ndarray import NDArrayDecoder
    from ffcv.fields.rgb_image import SimpleRGBImageDecoder
    from ffcv.loader import Loader, OrderOption

    loader = Loader(path, batch_size=1, num_workers=1, order=OrderOption.SEQUENTIAL,
                    drop_last=False,
                    pipelines={"raw": [SimpleRGBImageDecoder()], "jpeg": [SimpleRGBImageDecoder()],
                               "label": [IntDecoder()], "score": [FloatDecoder()],
                               "arr": [NDArrayDecoder()], "blob": [BytesDecoder()]})
    rows = []
    for batch in loader:
        rows.append([np.array(x[0]) for x in batch])
    return rows


def test_ffcv_loader_reads_our_beton_like_its_own(files):
    ss, ours, theirs = files
    a, b = read_all(ours), read_all(theirs)
    assert len(a) == len(b) == N
    for i, (s, x, y) in enumerate(zip(ss, a, b)):
        raw, jpeg, label, score, arr, blob = x
        np.testing.assert_array_equal(raw, y[0], err_msg=f"sample {i}: raw image")
        np.testing.assert_array_equal(raw, s["pixels"], err_msg=f"sample {i}: raw image vs input")
        assert int(label) == int(y[2]) == s["label"], f"sample {i}: label"
        assert float(score) == float(y[3]) == s["score"], f"sample {i}: score"
        np.testing.assert_array_equal(arr, y[4], err_msg=f"sample {i}: ndarray")
        np.testing.assert_array_equal(arr, s["arr"], err_msg=f"sample {i}: ndarray vs input")
        # FFCV's BytesDecoder fills a buffer of the largest size and returns no length: the
        # first len(blob) bytes are the sample's (the rest is whatever the buffer held).
        n = len(s["blob"])
        assert bytes(blob[:n]) == bytes(y[5][:n]) == s["blob"], f"sample {i}: bytes"
        # JPEG: we keep the source's bytes (smart mode); FFCV's writer re-encodes the pixels.
        want = np.asarray(Image.open(io.BytesIO(s["jpg"])).convert("RGB"))
        assert jpeg.shape == want.shape == y[1].shape, f"sample {i}: JPEG shape"
        # FFCV decodes with TurboJPEG's fast flags, Pillow with the accurate DCT: a few levels.
        assert psnr(jpeg, want) >= 40, f"sample {i}: JPEG pixels vs Pillow's decode"
        assert psnr(jpeg, y[1]) >= 30, f"sample {i}: JPEG pixels vs FFCV's own copy"
