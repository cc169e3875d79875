"""Every value of every sample of every fixture equals what the Go reader exported."""

import base64
import json
import math
import os
import struct

import numpy as np
import pytest

import mldf

FIXTURES = ["scalars", "ndarray", "images", "audio", "text", "packed", "bigraw", "ok_newer_minor"]


def load(fixtures_dir, name):
    with open(os.path.join(fixtures_dir, name + ".expected.json")) as f:
        return json.load(f)


def b64(s):
    return base64.b64decode(s)


def test_index_lists_known_fixtures(fixtures_dir):
    with open(os.path.join(fixtures_dir, "index.json")) as f:
        listed = json.load(f)["fixtures"]
    assert sorted(listed) == sorted(FIXTURES), "mkfixtures writes fixtures this test does not know: update FIXTURES"


def check_value(r, i, f, want, got):
    where = "sample %d, field %r (%s)" % (i, f.name, f.type)
    t = f.type
    if t == "INT":
        assert isinstance(got, np.int64), where
        assert int(got) == want["int"], where
    elif t == "FLOAT":
        assert isinstance(got, np.float64), where
        assert struct.pack("<d", float(got)).hex() == bytes.fromhex(want["bits"])[::-1].hex(), where
        if not math.isnan(got):
            assert float(got) == float(want["repr"]), where
    elif t == "BYTES":
        assert isinstance(got, memoryview), where
        assert got.readonly, where
        assert bytes(got) == b64(want["b64"]), where
    elif t == "JSON":
        if want["size"] == 0:
            assert got is None, where
        else:
            assert got == json.loads(want["text"]), where
            assert bytes(r.payload(i, f.name)) == want["text"].encode(), where
    elif t == "NDARRAY":
        if want["size"] == 0:
            assert got is None, where
            return
        assert isinstance(got, np.ndarray), where
        assert got.dtype == np.dtype(want["dtype"]), where
        assert list(got.shape) == want["shape"], where
        assert got.tobytes() == b64(want["data_b64"]), where
    elif t.startswith("IMAGE"):
        meta = r.meta(i, f.name)
        for k in ("height", "width", "channels", "mode"):
            assert meta[k] == want[k], (where, k)
        if want["size"] == 0:
            assert got is None, where
            return
        assert bytes(r.payload(i, f.name)) == b64(want["b64"]), where
        assert isinstance(got, np.ndarray) and got.dtype == np.uint8, where
        assert got.shape == (want["height"], want["width"], want["channels"]), where
        if "pixels_b64" in want:  # raw, and PNG decoded by Go's image/png: exact
            assert got.tobytes() == b64(want["pixels_b64"]), where
        if want["mode"] == 0:
            assert not got.flags.writeable and not got.flags.owndata, where + ": raw image must be a view"
    elif t.startswith("AUDIO"):
        meta = r.meta(i, f.name)
        for k in ("num_samples", "sample_rate", "num_channels", "bit_depth", "codec"):
            assert meta[k] == want[k], (where, k)
        if want["size"] == 0:
            assert got is None, where
            return
        if want["codec"] == 0:
            dt = {"int16": "<i2", "int32": "<i4", "float32": "<f4"}[want["format"]]
            assert got.dtype == np.dtype(dt), where
            assert got.shape == (want["num_samples"], want["num_channels"]), where
            assert got.reshape(-1).tolist() == want["samples"], where
        else:
            if mldf.HAVE_SOUNDFILE:
                assert got.reshape(-1).tolist() == want["samples"], where
            else:
                assert isinstance(got, bytes) and isinstance(got, mldf.EncodedAudio), where
                assert bytes(got) == b64(want["b64"]), where
                assert (got.format, got.sample_rate, got.num_channels, got.num_frames, got.bit_depth) == (
                    "flac", want["sample_rate"], want["num_channels"], want["num_samples"], want["bit_depth"]), where
    elif t.startswith("TEXT"):
        meta = r.meta(i, f.name)
        assert meta["num_tokens"] == want["num_tokens"] and meta["encoding"] == want["encoding"], where
        if want["encoding"] == 0:
            assert got == want["text"], where
        else:
            assert got.dtype == np.dtype("<i4" if want["encoding"] == 1 else "<i2"), where
            assert got.tolist() == want["tokens"], where
    else:
        raise AssertionError("%s: no comparison for type %s" % (where, t))


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_values(fixtures_dir, name):
    exp = load(fixtures_dir, name)
    with mldf.open(os.path.join(fixtures_dir, name + ".mldf")) as r:
        assert len(r) == exp["num_samples"]
        assert r.version == (exp["version_major"], exp["version_minor"])
        assert r.page_size == exp["page_size"] and r.flags == exp["flags"]
        assert [f.name for f in r.fields] == [f["name"] for f in exp["fields"]]
        for f, ef in zip(r.fields, exp["fields"]):
            assert (f.type, f.type_id, f.flags) == (ef["type"], ef["type_id"], ef["flags"])
            assert f.raw_arguments == b64(ef["arguments_b64"])
        assert len(exp["samples"]) == len(r)
        for i, want in enumerate(exp["samples"]):
            got = r[i]
            assert list(got) == r.field_names
            for f in r.fields:
                check_value(r, i, f, want[f.name], got[f.name])
        rep = r.verify()
        assert rep["checksums_ok"] and rep["num_samples"] == len(r)
        assert rep["gaps_checked"] == (exp["version_minor"] == 0)


def test_column_matches_values(fixtures_dir):
    exp = load(fixtures_dir, "scalars")
    with mldf.open(os.path.join(fixtures_dir, "scalars.mldf")) as r:
        labels = r.column("label")
        assert labels.dtype == np.dtype("<i8") and labels.shape == (len(r),)
        assert labels.tolist() == [s["label"]["int"] for s in exp["samples"]]
        scores = r.column("score")
        assert [struct.pack(">d", x).hex() for x in scores.tolist()] == [s["score"]["bits"] for s in exp["samples"]]
        blob = r.column("blob")
        assert blob["data_size"].tolist() == [s["blob"]["size"] for s in exp["samples"]]


def test_arguments_decoded(fixtures_dir):
    with mldf.open(os.path.join(fixtures_dir, "images.mldf")) as r:
        a = r.field("jpeg").arguments
        assert a["mode"] == "jpeg" and a["jpeg_quality"] == 85 and a["channels"] == 3
        assert r.field("gray").arguments["max_resolution"] == 32
        assert r.field("png").arguments["channels"] == 4
        assert r.field("smart").arguments["mode"] == "smart"
        assert r.field("label").arguments == {}
    with mldf.open(os.path.join(fixtures_dir, "audio.mldf")) as r:
        assert [r.field(n).arguments["format"] for n in ("pcm16", "pcm32", "f32", "mono", "flac")] == [
            "int16", "int32", "float32", "int16", "flac"]
        assert r.field("mono").arguments["mono"] is True
    with mldf.open(os.path.join(fixtures_dir, "ndarray.mldf")) as r:
        assert r.field("fixed").arguments == {"version": 1, "layout": "fixed", "dtype": "<f4", "shape": (3, 4)}
        assert r.field("npy").arguments["layout"] == "npy"
    with mldf.open(os.path.join(fixtures_dir, "text.mldf")) as r:
        assert r.field("text").arguments == {"version": 1}
        a = r.field("cl100k").arguments
        assert (a["tokenizer"], a["width"], a["end"], a["end_id"], a["vocab_size"]) == (
            "cl100k_base", 4, True, 100257, 100277)
        assert r.field("tok16").arguments == {}  # the fixture's stand-in field writes no arguments
    with mldf.open(os.path.join(fixtures_dir, "packed.mldf")) as r:
        a = r.field("tokens").arguments
        assert (a["seq_len"], a["pad_last"], a["end"]) == (7, True, True)
        assert r.column("tokens")["data_size"].tolist() == [28] * len(r)
