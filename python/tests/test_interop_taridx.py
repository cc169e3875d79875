"""Our `.taridx` (convert index) over the WebDataset shards `convert export --format
webdataset` writes, checked against the index WebDataset's own random-access reader builds for
the same shards: wids (webdataset's indexed dataset package, pinned in the test venv) indexes a
shard as (member name, header offset, size) in MMIndexedTar, (name, payload offset, size) in
TarFileReader, and records the number of samples per shard in its shard index
(`widsindex create`, from compute_num_samples). The formats differ (wids keeps its per-member
index in memory or a pickle, its shard index is JSON with counts and no offsets), so the test
compares the content: every row's shard, offset, size, stem and extension, and the samples per
shard. The byte-for-byte match with the TARIDX reference writer is tested in Go against its
golden files (format/taridx, docs/TARIDX.md)."""

import glob
import os
import struct

import numpy as np
import pytest

from interop_util import convert_bin, run  # noqa: F401 (convert_bin is a fixture)

wds = pytest.importorskip("webdataset", reason="webdataset is not installed (scripts/deps test makes the venv with it)")
wids = pytest.importorskip("wids", reason="wids is not installed (scripts/deps test makes the venv with it)")
xxhash = pytest.importorskip("xxhash", reason="xxhash is not installed (scripts/deps test makes the venv with it)")
from PIL import Image  # noqa: E402
from wids.wids_mmtar import MMIndexedTar  # noqa: E402
from wids.wids_tar import TarFileReader  # noqa: E402

HDR = struct.Struct("<8sHHHHQQIIQQB7x")
ROW = struct.Struct("<HQQHIQ")


def read_taridx(path):
    """The rows of a .taridx as dicts (docs/TARIDX.md), with the extension and crash blocks."""
    b = open(path, "rb").read()
    (magic, major, _minor, rec, hdr, n_stems, n_rows, n_ext, n_crash, off_crash, off_arr, flags) = HDR.unpack_from(b)
    assert magic == b"TARIDX\0\0" and major == 1 and rec == ROW.size and hdr == HDR.size
    exts = b[hdr:off_crash].decode().split("\n") if n_ext else []
    assert len(exts) == n_ext
    assert len(b) - off_arr == n_rows * ROW.size
    rows = []
    for i in range(n_rows):
        fid, off, size, extid, crash, keyhash = ROW.unpack_from(b, off_arr + i * ROW.size)
        rows.append(dict(fid=fid, offset=off, size=size, ext=exts[extid], crash=crash, keyhash=keyhash))
    return rows, n_stems, flags


def make_folder(root):
    rng = np.random.default_rng(5)
    for c in ["ant", "bee", "cat"]:
        os.makedirs(os.path.join(root, c))
        for i in range(5):
            a = (rng.random((20 + i, 28 + 3 * i, 3)) * 255).astype(np.uint8)
            Image.fromarray(a).save(os.path.join(root, c, "img%02d.jpg" % i), "JPEG", quality=85)


def test_taridx_matches_wids_index(tmp_path, convert_bin):
    make_folder(str(tmp_path / "imgs"))
    run(convert_bin, "images", tmp_path / "imgs", tmp_path / "o.mldf", "--mode", "smart")
    run(convert_bin, "export", tmp_path / "o.mldf", tmp_path / "wds", "--format", "webdataset", "--shard-samples", "4")
    shards = sorted(glob.glob(str(tmp_path / "wds" / "*.tar")))
    assert len(shards) == 4, shards
    run(convert_bin, "index", *shards, "-o", tmp_path / "fold.taridx")
    rows, n_stems, _ = read_taridx(tmp_path / "fold.taridx")
    total = 0
    for fid, shard in enumerate(shards):
        mine = [r for r in rows if r["fid"] == fid]
        # wids' memory-mapped index: (name, header offset, size) of every regular member.
        mm = MMIndexedTar(shard)
        try:
            theirs = list(mm.by_index)
        finally:
            mm.close()
        assert len(mine) == len(theirs), shard
        for r, (name, off, size) in zip(mine, theirs):
            stem, ext = os.path.basename(name).split(".", 1)
            assert (r["offset"], r["size"], r["ext"]) == (off, size, ext.lower()), name
            assert r["keyhash"] == xxhash.xxh64(stem.encode()).intdigest() and r["crash"] == 0, name
        # wids' tarfile-based index: (name, payload offset, size); no index file written.
        tr = TarFileReader(shard, index_file=None, verbose=False)
        try:
            assert [os.path.basename(n) for n in tr.names()] == [os.path.basename(n) for n, _, _ in theirs]
            assert [(r["offset"] + 512, r["size"]) for r in mine] == [tuple(map(int, x)) for x in tr.index]
        finally:
            tr.close()
        # What `widsindex create` records per shard: the number of samples.
        stems = {r["keyhash"] for r in mine}
        assert wids.wids.compute_num_samples(shard) == len(stems), shard
        total += len(stems)
        # WebDataset's streaming reader: the same keys, and each payload is the bytes our row points at.
        with open(shard, "rb") as f:
            data = f.read()
        by_key = {}
        for r in mine:
            by_key.setdefault(r["keyhash"], {})[r["ext"]] = data[r["offset"] + 512:r["offset"] + 512 + r["size"]]
        got = list(wds.WebDataset([shard], shardshuffle=False, empty_check=False))
        assert len(got) == len(by_key)
        for s in got:
            payloads = by_key[xxhash.xxh64(s["__key__"].encode()).intdigest()]
            assert {k: v for k, v in s.items() if not k.startswith("__")} == payloads, s["__key__"]
    assert n_stems == total == 15
