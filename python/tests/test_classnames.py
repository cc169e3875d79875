"""Class names of class-label fields (docs/FORMAT.md §14): the golden file
testdata/golden/classes.mldf, the rules R14, V8, V7 and F11 as the Go reader applies them
(format/mldf/read_classnames_test.go), and the side file of 1.0 files."""

import json
import os
import struct

import pytest

import mldf
from mldf import _classnames as CN
from mldf._checksum import xxh64

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "..", "..", "testdata", "golden", "classes.mldf")
NAMES = ["cat", "dog", "fish & chips"]

# offsets in the golden file
ARGS = 80 + 76
NAMES_PTR, NAMES_SIZE = ARGS + 16, ARGS + 24
BLOCK, BLOCK_LEN = 496, 33
META, ALLOC = 4112, 4184


def golden():
    with open(GOLDEN, "rb") as f:
        return bytearray(f.read())


def rehash(b):
    """Recompute the header checksum (so a test reaches the rule it targets, not V1)."""
    h = xxh64(bytes(b[9:65]) + bytes(b[80:496]) + bytes(b[META:]))
    struct.pack_into("<Q", b, 65, h)
    return b


def write(tmp_path, b, name="x.mldf"):
    p = tmp_path / name
    p.write_bytes(bytes(b))
    return str(p)


def test_golden_names(tmp_path):
    with mldf.open(GOLDEN) as r:
        assert r.version == (1, 1)
        assert r.field("label").names == NAMES
        assert r.field("label").num_classes == 3
        assert r.field("data").names is None
        assert [int(r[i]["label"]) for i in range(3)] == [0, 2, -1]
        assert r.verify()["num_class_name_fields"] == 1
        assert r.verify()["gaps_checked"]


def test_canonical_json_is_go():
    # bytes of Go's json.Marshal([]string{...}) for the same names
    names = ["a<b>&c", "é", "\u2028\u2029", "\x01\x1f\x7f", "\"\\/", "\t\n\r\b\f", "日本", "😀"]
    want = (b'["a\\u003cb\\u003e\\u0026c","\xc3\xa9","\\u2028\\u2029","\\u0001\\u001f\x7f","\\"\\\\/",'
            b'"\\t\\n\\r\\b\\f","\xe6\x97\xa5\xe6\x9c\xac","\xf0\x9f\x98\x80"]')
    assert CN.canonical_json(names) == want
    assert CN.canonical_json(NAMES) == b'["cat","dog","fish \\u0026 chips"]'


def _set_block(b, blk):
    b[BLOCK:BLOCK + len(blk)] = blk
    struct.pack_into("<I", b, NAMES_SIZE, len(blk))
    struct.pack_into("<Q", b, ARGS + 8, xxh64(blk))
    return rehash(b)


CASES = [
    # name, rule, when, mutate
    ("misaligned", "R14", "open", lambda b: rehash(_pack(b, "<Q", NAMES_PTR, BLOCK + 4))),
    ("in the descriptors", "R14", "open", lambda b: rehash(_pack(b, "<Q", NAMES_PTR, 488))),
    ("past data_ptr", "R14", "open", lambda b: rehash(_pack(b, "<I", NAMES_SIZE, 4096))),
    ("size without ptr", "R14", "open", lambda b: rehash(_pack(b, "<Q", NAMES_PTR, 0))),
    ("ptr without size", "R14", "open", lambda b: rehash(_pack(b, "<I", NAMES_SIZE, 0))),
    ("huge", "R14", "open", lambda b: rehash(_pack(b, "<I", NAMES_SIZE, 1 << 31))),
    ("flipped name byte", "V8", "names", lambda b: _xor(b, BLOCK + 3)),
    ("count", "V8", "names", lambda b: rehash(_pack(b, "<I", ARGS + 4, 4))),
    ("not canonical", "V8", "names", lambda b: _set_block(b, b'["cat", "dog","fish \\u0026 chips"]')),
    ("duplicate names", "V8", "names", lambda b: _set_block(b, b'["cat","cat","fish \\u0026 chips"]')),
    ("gap after the block", "V7", "verify", lambda b: _xor(b, BLOCK + BLOCK_LEN + 1)),
    ("label out of range", "F11", "value", lambda b: rehash(_pack(b, "<q", META, 3))),
    ("label below -1", "F11", "value", lambda b: rehash(_pack(b, "<q", META + 24, -2))),
]


def _pack(b, fmt, off, v):
    struct.pack_into(fmt, b, off, v)
    return b


def _xor(b, off):
    b[off] ^= 1
    return b


@pytest.mark.parametrize("name,rule,when,mut", CASES, ids=[c[0] for c in CASES])
def test_class_name_rules(tmp_path, name, rule, when, mut):
    path = write(tmp_path, mut(golden()))
    if when == "open":
        with pytest.raises(mldf.FormatError) as e:
            mldf.open(path)
        assert e.value.rule == rule
        return
    with mldf.open(path) as r:
        if when == "names":
            with pytest.raises(mldf.FormatError) as e:
                r.field("label").names
            assert e.value.rule == rule
        if when == "value":
            with pytest.raises(mldf.FormatError) as e:
                [r[i] for i in range(len(r))]
            assert e.value.rule == rule
        with pytest.raises(mldf.FormatError) as e:
            r.verify()
        assert e.value.rule == rule


def test_minor0_and_side_file(tmp_path):
    # A 1.0 file: the block members are reserved bytes, ignored; the names come from the side
    # file FILE.classes.json when it matches the arguments.
    b = golden()
    b[BLOCK:BLOCK + BLOCK_LEN] = bytes(BLOCK_LEN)
    struct.pack_into("<H", b, 11, 0)
    path = write(tmp_path, rehash(b), "old.mldf")
    with mldf.open(path) as r:
        assert r.field("label").names is None
        assert r.verify()["gaps_checked"]
    with open(path + ".classes.json", "w") as f:
        json.dump({"label": NAMES}, f)
    with mldf.open(path) as r:
        assert r.field("label").names == NAMES
    with open(path + ".classes.json", "w") as f:
        json.dump({"label": ["cat", "dog", "fish"]}, f)  # not the names the arguments hash
    with mldf.open(path) as r:
        assert r.field("label").names is None


def test_later_minor(tmp_path):
    # A minor version newer than this reader knows: names read, gaps not checked.
    b = golden()
    struct.pack_into("<H", b, 11, 7)
    b[BLOCK + BLOCK_LEN + 1] = 1
    with mldf.open(write(tmp_path, rehash(b))) as r:
        assert r.field("label").names == NAMES
        assert not r.verify()["gaps_checked"]
