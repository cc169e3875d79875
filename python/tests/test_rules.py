"""Field and payload rules (docs/FORMAT.md §10.2-10.3) on files built here, independently of
the Go writer: hostile JSON depth and lying .npy headers raise
FormatError naming the rule, never RecursionError or MemoryError."""

import struct
import tracemalloc

import numpy as np
import pytest

import mldf
from mldf import _rules as RU
from mldf._checksum import crc32c, xxh64

INT, BYTES, NDARRAY, JSON = 1, 3, 4, 5
PAGE = 4096


def build(path, fields, rows, checksummed=True):
    """Write an MLDF file by docs/FORMAT.md §6.1: fields are (name, type_id, arguments);
    rows are lists with an int (INT) or bytes (payload types) per field."""
    meta_size = {INT: 8, BYTES: 16, NDARRAY: 16, JSON: 16}
    row_size = sum(meta_size[t] for _, t, _ in fields)
    desc = b""
    for name, t, args in fields:
        desc += name.encode().ljust(64, b"\0") + struct.pack("<HHII", t, 0, meta_size[t], 0) + args.ljust(128, b"\0") + bytes(4)
    data_ptr = (80 + len(desc) + PAGE - 1) // PAGE * PAGE
    data = bytearray()
    meta = bytearray()
    entries = []
    for row in rows:
        for (_, t, _), v in zip(fields, row):
            if t == INT:
                meta += struct.pack("<q", v)
                continue
            if not v:
                meta += bytes(16)
                continue
            cur = data_ptr + len(data)
            if (len(v) <= PAGE and cur % PAGE + len(v) > PAGE) or (len(v) > PAGE and cur % PAGE):
                data += bytes(-cur % PAGE)
                cur = data_ptr + len(data)
            meta += struct.pack("<QI4x", cur, len(v))
            entries.append((cur, len(v), crc32c(v) if checksummed else 0))
            data += v
            data += bytes(-len(data) % 8)
    assert len(meta) == row_size * len(rows)
    meta_ptr = data_ptr + len(data)
    alloc_ptr = meta_ptr + len(meta)
    alloc = b"".join(struct.pack("<QII", *e) for e in entries)
    flags = 5 if checksummed else 1
    hdr = struct.pack("<HHIQHHIQQQQ", 1, 0, flags, len(rows), len(fields), 0, PAGE, 80, meta_ptr, data_ptr, alloc_ptr)
    checksum = xxh64(hdr + desc + bytes(meta) + alloc) if checksummed else 0
    out = b"\x89MLDF\r\n\x1a\n" + hdr + struct.pack("<Q", checksum) + bytes(80 - 73) + desc
    out += bytes(data_ptr - len(out)) + bytes(data) + bytes(meta) + alloc
    with open(path, "wb") as f:
        f.write(out)
    return path


def nest(depth):
    return ("[" * depth + "]" * depth).encode()


@pytest.mark.parametrize("depth,ok", [(0, True), (1, True), (RU.MAX_JSON_DEPTH, True), (RU.MAX_JSON_DEPTH + 1, False),
                                      (2000, False), (10000, False), (1000000, False)])
def test_json_depth(tmp_path, depth, ok):
    """A JSON payload nested at the bound reads; one level more, 2000 (what the old writer
    accepted) or a million levels raise FormatError rule D3, never RecursionError."""
    payload = nest(depth) if depth else b"7"
    p = build(tmp_path / "j.mldf", [("label", INT, b""), ("meta", JSON, b"")], [[1, payload], [2, b'{"a": 1}']])
    with mldf.open(p) as r:
        assert r.verify()["fields_checked"]  # verify does not parse JSON (that is decoding)
        assert r.get(1, "meta") == {"a": 1}
        if ok:
            got = r.get(0, "meta")
            for _ in range(depth):
                assert isinstance(got, list) and len(got) <= 1
                got = got[0] if got else None
            assert got == (None if depth else 7)
            return
        with pytest.raises(mldf.FormatError) as ei:
            r.get(0, "meta")
        assert ei.value.rule == "D3" and ei.value.sample == 0 and ei.value.field == "meta"
        assert "nested more than 512 levels" in str(ei.value)


def test_json_depth_counts_like_go():
    assert RU.json_depth(b'{"a\\"[[[": "]]]{{", "b": [1]}') == 2
    assert RU.json_depth(b'"unterminated [[[') == 0
    assert not RU.json_too_deep(b"[" * 512 + b"]" * 512)
    assert RU.json_too_deep(b"[" * 513 + b"]" * 513)
    assert not RU.json_too_deep(b'"' + b"[" * 2000 + b'"')  # brackets inside a string


def npy(descr, shape, nbytes):
    d = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    d += " " * ((-(10 + len(d) + 1)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d.encode() + bytes(i % 256 for i in range(nbytes))


NPY_ARGS = b"\x01\x01"  # version 1, layout npy


@pytest.mark.parametrize("shape,nbytes,ok", [
    ("(2, 3)", 24, True),                   # at the payload size
    ("(7,)", 24, False),                    # one element more than the payload holds
    ("(2, 3)", 28, False),                  # one element less
    ("(1099511627776,)", 24, False),        # 2^40 elements
    ("(4294967296, 4294967296)", 24, False),  # 2^64 elements
    ("(9223372036854775808,)", 24, False),  # not an int63
])
def test_npy_declared_sizes(tmp_path, shape, nbytes, ok):
    """A .npy header's declared size is checked against the payload before anything is
    allocated: FormatError rule F10, never MemoryError."""
    p = build(tmp_path / "n.mldf", [("arr", NDARRAY, NPY_ARGS)], [[npy("<f4", shape, nbytes)]])
    with mldf.open(p) as r:
        tracemalloc.start()
        try:
            if ok:
                a = r.get(0, "arr")
                assert a.shape == (2, 3) and a.dtype == np.dtype("<f4") and not a.flags.writeable
                assert a.tobytes() == bytes(range(24))
                r.verify()
            else:
                for call in (lambda: r.get(0, "arr"), r.verify):
                    with pytest.raises(mldf.FormatError) as ei:
                        call()
                    assert ei.value.rule == "F10" and ei.value.sample == 0 and ei.value.field == "arr", str(ei.value)
        finally:
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
        assert peak < 1 << 20, peak


@pytest.mark.parametrize("descr,ok", [("<f4", True), ("|u1", True), (">i8", True), ("<c16", True), ("<f16", False),
                                      ("<u3", False), ("|O8", False), ("<U5", False), ("<f04", False)])
def test_npy_dtypes(descr, ok):
    item = RU.dtype_size(descr)
    assert (item is not None) == ok
    if ok:
        assert np.dtype(descr).itemsize == item


def test_fixed_ndarray_args(tmp_path):
    """A fixed-layout field whose arguments name a dtype numpy cannot read from memory is
    rule F1 (reported by verify and by every read of the field), not a numpy TypeError."""
    args = bytearray(128)
    args[0], args[1] = 1, 0
    args[2:5] = b"|O8"
    args[18] = 1
    struct.pack_into("<Q", args, 24, 2)
    p = build(tmp_path / "o.mldf", [("arr", NDARRAY, bytes(args))], [[bytes(16)]])
    with mldf.open(p) as r:
        for call in (lambda: r.get(0, "arr"), r.verify):
            with pytest.raises(mldf.FormatError) as ei:
                call()
            assert ei.value.rule == "F1", str(ei.value)


def test_unchecksummed_file(tmp_path):
    """A file written without checksums verifies (structure only); one whose entry carries a
    check anyway, or whose header carries a checksum, is corrupt."""
    p = build(tmp_path / "u.mldf", [("b", BYTES, b"")], [[b"hello"], [b"world"]], checksummed=False)
    with mldf.open(p) as r:
        rep = r.verify()
        assert not rep["checksummed"] and not rep["checksums_ok"]
        entry = r.alloc_table_ptr + 16 + 12
    raw = bytearray(open(p, "rb").read())
    raw[entry] ^= 1
    open(p, "wb").write(bytes(raw))
    with mldf.open(p) as r:
        with pytest.raises(mldf.FormatError) as ei:
            r.verify(checksums=False)
        assert ei.value.rule == "V6" and ei.value.sample == 1
    raw[entry] ^= 1
    raw[9 + 56] = 0x40  # header checksum
    open(p, "wb").write(bytes(raw))
    with pytest.raises(mldf.FormatError) as ei:
        mldf.open(p)
    assert ei.value.rule == "R4"
