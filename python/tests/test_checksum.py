"""The pure-Python CRC-32C and XXH64 agree with published vectors and with Go."""

import json
import os
import random

import pytest

from mldf import _checksum as C


def vector_bytes(n, seed):
    return bytes((i * 31 + seed * 7 + (i >> 8)) & 0xFF for i in range(n))


def test_known_vectors():
    assert C.crc32c(b"123456789") == 0xE3069283
    assert C.crc32c(bytes(32)) == 0x8A9136AA  # RFC 3720 B.4
    assert C.crc32c(b"\xff" * 32) == 0x62A8AB43
    assert C.crc32c(bytes(range(32))) == 0x46DD794E
    assert C.xxh64(b"") == 0xEF46DB3751D8E999
    assert C.xxh64(b"abc") == 0x44BC2CF5AD770999
    assert C.xxh64(b"", seed=1) != C.xxh64(b"")


def test_against_go(fixtures_dir):
    with open(os.path.join(fixtures_dir, "checksums.json")) as f:
        vectors = json.load(f)
    for v in vectors:
        b = vector_bytes(v["len"], v["seed"])
        assert "%08x" % C.crc32c(b) == v["crc32c"], v["len"]
        assert "%016x" % C.xxh64(b) == v["xxh64"], v["len"]


@pytest.mark.parametrize("n", [0, 1, 511, 512, 513, 4096 * 64 - 1, 4096 * 64, 4096 * 64 + 1, 300001])
def test_lanes_match_byte_loop(n):
    rng = random.Random(n)
    b = bytes(rng.getrandbits(8) for _ in range(n))
    ref = C._raw_bytes(0xFFFFFFFF, b) ^ 0xFFFFFFFF
    assert C.crc32c(b) == ref
    cut = n // 3
    assert C.crc32c_update(C.crc32c(b[:cut]), b[cut:]) == ref
    assert C.crc32c(memoryview(b)) == ref and C.crc32c(bytearray(b)) == ref


def test_many(monkeypatch):
    rng = random.Random(5)
    sizes = [0, 1, 2, 3, 4, 5, 63, 64, 65, 127, 128, 129, 1000, 4096, 70000, 3, 200000, 17]
    buf = bytes(rng.getrandbits(8) for _ in range(sum(sizes) + 100))
    ptrs, p = [], 7
    for s in sizes:
        ptrs.append(p)
        p += s
    want = [C._raw_bytes(0xFFFFFFFF, buf[p:p + s]) ^ 0xFFFFFFFF for p, s in zip(ptrs, sizes)]
    assert C.crc32c_many(buf, ptrs, sizes).tolist() == want
    monkeypatch.setattr(C, "_BATCH", 5000)  # many batches, one oversized payload alone
    assert C.crc32c_many(buf, ptrs, sizes).tolist() == want


def test_chunked_large_input(monkeypatch):
    rng = random.Random(9)
    b = bytes(rng.getrandbits(8) for _ in range(100003))
    ref = C._raw_bytes(0xFFFFFFFF, b) ^ 0xFFFFFFFF
    monkeypatch.setattr(C, "_BATCH", 4096)  # crc32c splits into 4 KiB pieces and chains them
    assert C.crc32c(b) == ref
