"""WebDataset's own reader (webdataset 1.0.x, from the test venv) reads the shards that
`convert export --format webdataset` writes: every key and every payload, in order, across
several shards."""

import glob
import io
import os

import numpy as np
import pytest

from interop_util import convert_bin, run  # noqa: F401 (convert_bin is a fixture)

wds = pytest.importorskip("webdataset", reason="webdataset is not installed (scripts/deps test makes the venv with it)")
from PIL import Image  # noqa: E402


def make_folder(root):
    rng = np.random.default_rng(3)
    want = []
    for label, c in enumerate(["ant", "bee", "cat"]):
        os.makedirs(os.path.join(root, c))
        for i in range(4):
            a = (rng.random((24 + i, 32, 3)) * 255).astype(np.uint8)
            b = io.BytesIO()
            Image.fromarray(a).save(b, "JPEG", quality=90)
            name = os.path.join(root, c, "img%02d.jpg" % i)
            with open(name, "wb") as f:
                f.write(b.getvalue())
            want.append((b.getvalue(), label))
    return want


def test_webdataset_reads_our_shards(tmp_path, convert_bin):
    want = make_folder(str(tmp_path / "imgs"))
    run(convert_bin, "images", tmp_path / "imgs", tmp_path / "o.mldf", "--mode", "smart")
    run(convert_bin, "export", tmp_path / "o.mldf", tmp_path / "wds", "--format", "webdataset",
        "--shard-samples", "5")
    shards = sorted(glob.glob(str(tmp_path / "wds" / "*.tar")))
    assert len(shards) == 3, shards
    got = list(wds.WebDataset(shards, shardshuffle=False, empty_check=True))
    assert [s["__key__"] for s in got] == ["%06d" % i for i in range(len(want))]
    for i, (s, (jpg, label)) in enumerate(zip(got, want)):
        assert set(k for k in s if not k.startswith("__")) == {"jpg", "cls"}, f"sample {i}: {sorted(s)}"
        assert s["jpg"] == jpg, f"sample {i}: jpg payload differs from the source file (smart keeps it)"
        assert int(s["cls"]) == label, f"sample {i}: cls"
    # WebDataset's decoder gives the same pixels as Pillow on the source.
    dec = list(wds.WebDataset(shards, shardshuffle=False).decode("rgb8").to_tuple("jpg", "cls"))
    for i, ((img, cls), (jpg, label)) in enumerate(zip(dec, want)):
        np.testing.assert_array_equal(img, np.asarray(Image.open(io.BytesIO(jpg)).convert("RGB")),
                                      err_msg=f"sample {i}")
        assert cls == label
