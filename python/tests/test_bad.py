"""Damaged files raise mldf.FormatError naming the same FORMAT.md rule as the Go reader."""

import json
import os
import random

import numpy as np
import pytest

import mldf


def cases(fixtures_dir):
    with open(os.path.join(fixtures_dir, "bad.json")) as f:
        return json.load(f)


def read_all(r):
    for i in range(len(r)):
        for f in r.fields:
            r.get(i, f.name)


def test_bad_files_agree_with_go(fixtures_dir):
    cs = cases(fixtures_dir)
    assert len(cs) >= 20
    for c in cs:
        path = os.path.join(fixtures_dir, c["file"])
        what = "%s (%s)" % (c["file"], c["what"])
        if not c["open_ok"]:
            with pytest.raises(mldf.FormatError) as ei:
                mldf.open(path)
            assert ei.value.rule == c["open_rule"], "%s: Python says %s, Go says %s" % (what, ei.value, c["open_error"])
            assert c["file"] in str(ei.value) and "rule " + c["open_rule"] in str(ei.value)
            continue
        with mldf.open(path) as r:
            want = {tuple(x) for x in c["access_errors"]}
            want_rule = c.get("access_rule") or "R13"
            decodes = False
            if c.get("decode_rule"):  # only decoding tells: Python decodes images (Pillow) and FLAC (soundfile)
                t = r.fields[c["decode_field"]].type
                decodes = (t.startswith("IMAGE") and mldf.HAVE_PIL) or (t == "AUDIO_COMPRESSED" and mldf.HAVE_SOUNDFILE)
                if decodes:
                    want, want_rule = {(c["decode_sample"], c["decode_field"])}, c["decode_rule"]
            bad_access = set()
            for i in range(len(r)):
                for k, f in enumerate(r.fields):
                    try:
                        r.get(i, f.name)
                    except mldf.FormatError as e:
                        assert e.rule == want_rule and e.sample == i and e.field == f.name, "%s: %s" % (what, e)
                        bad_access.add((i, k))
            assert bad_access == want, what
            if c["verify_ok"]:
                r.verify()
            else:
                with pytest.raises(mldf.FormatError) as ei:
                    r.verify()
                assert ei.value.rule == c["verify_rule"], "%s: Python says %s, Go says %s" % (
                    what, ei.value, c["verify_error"])


def test_lying_files_are_listed(fixtures_dir):
    """bad.json has a lying file for every field rule and for the checksum flag."""
    rules = {c.get("verify_rule") or c.get("open_rule") or c.get("decode_rule") for c in cases(fixtures_dir)
             if c["file"].startswith("lie_")}
    for rule in ["R4", "V6", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F10", "D1", "D2"]:
        assert rule in rules, rule


def test_specific_errors(fixtures_dir):
    d = fixtures_dir
    with pytest.raises(mldf.FormatError, match="rule R7"):
        mldf.open(os.path.join(d, "bad_truncated_half.mldf"))
    with pytest.raises(mldf.VersionError, match="version 2.0; this reader reads 1.x"):
        mldf.open(os.path.join(d, "bad_major.mldf"))
    with pytest.raises(mldf.FormatError, match="not an MLDF file"):
        mldf.open(os.path.join(d, "bad_signature.mldf"))
    with pytest.raises(mldf.FormatError, match="num_samples 4611686018427387904"):
        mldf.open(os.path.join(d, "bad_num_samples_huge.mldf"))
    with mldf.open(os.path.join(d, "bad_payload_bitflip.mldf")) as r:
        with pytest.raises(mldf.ChecksumError) as ei:
            r.verify()
        assert ei.value.rule == "V6" and ei.value.sample == 0 and ei.value.field == "blob"
        r.verify(checksums=False)  # structure alone is fine
    with mldf.open(os.path.join(d, "bad_bigraw_bitflip.mldf")) as r:
        with pytest.raises(mldf.ChecksumError, match="CRC-32C"):
            r.verify()
    with mldf.open(os.path.join(d, "bad_meta_bitflip.mldf")) as r:
        with pytest.raises(mldf.ChecksumError, match="rule V1"):
            r.verify()


def test_not_a_file(tmp_path):
    with pytest.raises(OSError):
        mldf.open(tmp_path / "missing.mldf")
    p = tmp_path / "text.mldf"
    p.write_bytes(b"hello, this is not an MLDF file at all, just some text bytes, long enough for a header")
    with pytest.raises(mldf.FormatError, match="rule R1"):
        mldf.open(p)


@pytest.mark.parametrize("name", ["scalars", "images", "audio", "text", "ndarray"])
def test_every_bit_flip_is_caught(fixtures_dir, tmp_path, name):
    """Checksums and rules cover every byte: any flipped bit makes open, a read or verify raise
    FormatError, and nothing else."""
    good = open(os.path.join(fixtures_dir, name + ".mldf"), "rb").read()
    rng = random.Random(name)
    with mldf.open(os.path.join(fixtures_dir, name + ".mldf")) as r:
        hot = list(range(0, 80)) + list(range(r.metadata_ptr, len(good)))  # signature, header, tables
    positions = rng.sample(hot, min(40, len(hot))) + rng.sample(range(len(good)), 40)
    p = tmp_path / "flip.mldf"
    for pos in positions:
        b = bytearray(good)
        b[pos] ^= 1 << rng.randrange(8)
        p.write_bytes(bytes(b))
        try:
            with mldf.open(p) as r:
                r.verify()
                read_all(r)
        except mldf.FormatError:
            continue
        pytest.fail("flipping a bit at byte %d of %s went unnoticed" % (pos, name))


def test_lying_header_allocates_nothing(fixtures_dir):
    # num_samples 2^62 and num_fields 65535 are refused before anything sized by them exists
    import tracemalloc

    tracemalloc.start()
    for n in ("bad_num_samples_huge", "bad_num_fields_huge"):
        with pytest.raises(mldf.FormatError):
            mldf.open(os.path.join(fixtures_dir, n + ".mldf"))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 1 << 20, peak


def test_short_files(tmp_path, fixtures_dir):
    good = open(os.path.join(fixtures_dir, "scalars.mldf"), "rb").read()
    for n in (0, 1, 8, 9, 40, 72, 73, 80, 300, 4096, len(good) - 16, len(good) - 1):
        p = tmp_path / ("short%d.mldf" % n)
        p.write_bytes(good[:n])
        with pytest.raises(mldf.FormatError):  # a whole missing entry opens; verify finds it (V5)
            with mldf.open(p) as r:
                r.verify()
