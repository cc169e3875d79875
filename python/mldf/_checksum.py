"""Pure-Python (numpy-vectorised) CRC-32C and XXH64, as MLDF's checksums use them.

``crc32c(data)`` is CRC-32C (Castagnoli, reflected polynomial 0x82F63B78, init and final XOR
0xFFFFFFFF), the per-payload check of the allocation table. Small inputs run a table-driven
byte loop; larger ones, and ``crc32c_many`` (many payloads of one buffer at once, what
``Reader.verify`` uses), are cut into 64-byte lanes whose CRCs numpy computes side by side
(four bytes per step through two 64 Ki-entry tables); the lane CRCs of each payload are then
merged pairwise with the GF(2) "shift by n zero bytes" operator.

``xxh64(data, seed=0)`` is XXH64 written from the public algorithm description (the header
checksum). It is a plain Python loop over 32-byte stripes; when the ``xxhash`` package is
installed, ``xxh64_fast`` uses it instead.
"""

import numpy as np

__all__ = ["crc32c", "crc32c_many", "crc32c_update", "xxh64", "xxh64_fast"]

_POLY = 0x82F63B78
_M32 = 0xFFFFFFFF


def _make_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (_POLY if c & 1 else 0)
        t.append(c)
    return t


_T = _make_table()
_T0 = np.array(_T, dtype=np.uint32)
_T1 = (_T0 >> 8) ^ _T0[_T0 & 0xFF]
_T2 = (_T1 >> 8) ^ _T0[_T1 & 0xFF]
_T3 = (_T2 >> 8) ^ _T0[_T2 & 0xFF]
_idx = np.arange(65536, dtype=np.uint32)
# After s ^= word (4 little-endian bytes): s = _TLO[s & 0xFFFF] ^ _THI[s >> 16].
_TLO = _T3[_idx & 0xFF] ^ _T2[_idx >> 8]
_THI = _T1[_idx & 0xFF] ^ _T0[_idx >> 8]
del _idx

_SMALL = 512  # below this many bytes, the byte loop is faster


def _raw_bytes(state, data):
    """The raw CRC register after feeding data (no pre/post inversion), byte loop."""
    t = _T
    for b in data:
        state = t[(state ^ b) & 0xFF] ^ (state >> 8)
    return state


# The linear operator "feed n zero bytes" on the 32-bit register, as its 32 column images.
def _apply(cols, s):
    r = 0
    j = 0
    while s:
        if s & 1:
            r ^= cols[j]
        s >>= 1
        j += 1
    return r


def _compose(a, b):  # a after b
    return [_apply(a, c) for c in b]


_ZPOW = [[_T[(1 << j) & 0xFF] ^ ((1 << j) >> 8) for j in range(32)]]  # _ZPOW[k]: 2**k zero bytes
_ZTAB = {}


def _zpow(k):
    while len(_ZPOW) <= k:
        z = _ZPOW[-1]
        _ZPOW.append(_compose(z, z))
    return _ZPOW[k]


def _zshift(s, n):
    """Register s fed n zero bytes."""
    k = 0
    while n:
        if n & 1:
            s = _apply(_zpow(k), s)
        n >>= 1
        k += 1
    return s


def _ztables(k):
    """Byte tables applying _zpow(k) to a uint32 numpy vector."""
    t = _ZTAB.get(k)
    if t is None:
        cols = _zpow(k)
        t = []
        for j in range(4):
            tab = np.zeros(256, dtype=np.uint32)
            for bit in range(8):
                n = 1 << bit
                tab[n:2 * n] = tab[:n] ^ np.uint32(cols[8 * j + bit])
            t.append(tab)
        _ZTAB[k] = t
    return t


_LANE = 64  # bytes per lane
_BATCH = 4 << 20  # bytes of payload per numpy pass (arrays stay cache-sized)


def _lanes_crc(u8, ptrs, sizes):
    """CRC-32C of the payloads u8[ptrs[j] : ptrs[j] + sizes[j]] (each at least 4 bytes), all
    at once: every payload is cut into 64-byte lanes (front-padded with zeros, which leave a
    zero register unchanged; the initial 0xFFFFFFFF is folded into the first four data bytes),
    numpy runs all lanes side by side, then each payload's lanes are merged pairwise."""
    sizes = np.asarray(sizes, dtype=np.int64)
    m = -(-sizes // _LANE)  # lanes per payload
    first = np.cumsum(m) - m  # first lane of each payload
    total = int(m.sum())
    buf = np.zeros(total * _LANE, dtype=np.uint8)
    dst = first * _LANE + (m * _LANE - sizes)  # where each payload's first byte goes
    for p, s, d in zip(np.asarray(ptrs).tolist(), sizes.tolist(), dst.tolist()):
        buf[d:d + s] = u8[p:p + s]
    for j in range(4):  # init 0xFFFFFFFF == complement the first 32 bits of the message
        buf[dst + j] ^= 0xFF
    words = np.ascontiguousarray(buf.view("<u4").reshape(total, _LANE // 4).T)
    del buf
    s = np.zeros(total, dtype=np.uint32)
    lo = np.empty(total, dtype=np.intp)
    hi = np.empty(total, dtype=np.intp)
    a = np.empty(total, dtype=np.uint32)
    b = np.empty(total, dtype=np.uint32)
    tlo, thi = _TLO, _THI
    for row in words:
        np.bitwise_xor(s, row, out=s)
        np.bitwise_and(s, 0xFFFF, out=lo, casting="unsafe")
        np.right_shift(s, 16, out=hi, casting="unsafe")
        tlo.take(lo, out=a)
        thi.take(hi, out=b)
        np.bitwise_xor(a, b, out=s)
    del words, lo, hi, a, b
    # merge: crc(A || B) = shift(crc(A), len(B)) ^ crc(B); lanes of one level share a length
    counts = m
    lg = _LANE.bit_length() - 1
    while counts.max() > 1:
        odd = counts & 1
        newc = counts + odd
        start_old = np.cumsum(counts) - counts
        start_new = np.cumsum(newc) - newc
        dest = np.repeat(start_new + odd - start_old, counts) + np.arange(len(s))
        padded = np.zeros(int(newc.sum()), dtype=np.uint32)
        padded[dest] = s  # odd counts get a leading zero lane
        x, y = padded[0::2], padded[1::2]
        t0, t1, t2, t3 = _ztables(lg)
        s = t0[x & 0xFF] ^ t1[(x >> 8) & 0xFF] ^ t2[(x >> 16) & 0xFF] ^ t3[x >> 24] ^ y
        counts = newc // 2
        lg += 1
    return s ^ np.uint32(_M32)


def crc32c_many(data, ptrs, sizes):
    """CRC-32C of many payloads data[ptr : ptr + size] of one buffer, as a uint32 array,
    vectorised across payloads (about 4 MiB of payload per numpy pass)."""
    u8 = np.frombuffer(data, dtype=np.uint8)
    ptrs = np.asarray(ptrs, dtype=np.int64)
    sizes = np.asarray(sizes, dtype=np.int64)
    out = np.zeros(len(sizes), dtype=np.uint32)
    tiny = np.flatnonzero(sizes < 4)
    for j in tiny.tolist():
        out[j] = _raw_bytes(_M32, u8[ptrs[j]:ptrs[j] + sizes[j]].tolist()) ^ _M32
    rest = np.flatnonzero(sizes >= 4)
    k = 0
    while k < len(rest):
        acc, e = 0, k
        while e < len(rest) and (e == k or acc + sizes[rest[e]] <= _BATCH):
            acc += int(sizes[rest[e]])
            e += 1
        sel = rest[k:e]
        out[sel] = _lanes_crc(u8, ptrs[sel], sizes[sel])
        k = e
    return out


def crc32c_update(crc, data):
    """Continue a CRC-32C: crc32c_update(crc32c(a), b) == crc32c(a + b)."""
    mv = memoryview(data).cast("B")
    n = len(mv)
    if n < _SMALL:
        return _raw_bytes((crc ^ _M32) & _M32, mv) ^ _M32
    # raw(s, D) = shift(s, n) ^ raw(0, D); crc32c(D) gives raw(0xFFFFFFFF, D) ^ 0xFFFFFFFF
    full = int(crc32c_many(mv, [0], [n])[0])
    return full ^ _zshift(_M32, n) ^ _zshift((crc ^ _M32) & _M32, n)


def crc32c(data):
    """CRC-32C (Castagnoli) of a bytes-like object."""
    mv = memoryview(data).cast("B")
    if len(mv) < _SMALL:
        return _raw_bytes(_M32, mv) ^ _M32
    if len(mv) <= _BATCH:
        return int(crc32c_many(mv, [0], [len(mv)])[0])
    crc = 0
    for k in range(0, len(mv), _BATCH):
        crc = crc32c_update(crc, mv[k:k + _BATCH])
    return crc


_P1 = 11400714785074694791
_P2 = 14029467366897019727
_P3 = 1609587929392839161
_P4 = 9650029242287828579
_P5 = 2870177450012600261
_M64 = 0xFFFFFFFFFFFFFFFF


def xxh64(data, seed=0):
    """XXH64 of a bytes-like object (pure Python)."""
    mv = memoryview(data).cast("B")
    n = len(mv)
    M, P1, P2 = _M64, _P1, _P2
    i = 0
    if n >= 32:
        v1 = (seed + P1 + P2) & M
        v2 = (seed + P2) & M
        v3 = seed & M
        v4 = (seed - P1) & M
        nstripes = n // 32
        w = np.frombuffer(mv, dtype="<u8", count=nstripes * 4).tolist()
        for j in range(0, nstripes * 4, 4):
            x = (v1 + w[j] * P2) & M
            v1 = (((x << 31) | (x >> 33)) * P1) & M
            x = (v2 + w[j + 1] * P2) & M
            v2 = (((x << 31) | (x >> 33)) * P1) & M
            x = (v3 + w[j + 2] * P2) & M
            v3 = (((x << 31) | (x >> 33)) * P1) & M
            x = (v4 + w[j + 3] * P2) & M
            v4 = (((x << 31) | (x >> 33)) * P1) & M
        h = (((v1 << 1) | (v1 >> 63)) + ((v2 << 7) | (v2 >> 57))
             + ((v3 << 12) | (v3 >> 52)) + ((v4 << 18) | (v4 >> 46))) & M
        for v in (v1, v2, v3, v4):
            x = (v * P2) & M
            x = (((x << 31) | (x >> 33)) * P1) & M
            h = ((h ^ x) * P1 + _P4) & M
        i = nstripes * 32
    else:
        h = (seed + _P5) & M
    h = (h + n) & M
    while i + 8 <= n:
        k = int.from_bytes(mv[i:i + 8], "little")
        x = (k * P2) & M
        x = (((x << 31) | (x >> 33)) * P1) & M
        h ^= x
        h = ((((h << 27) | (h >> 37)) & M) * P1 + _P4) & M
        i += 8
    if i + 4 <= n:
        k = int.from_bytes(mv[i:i + 4], "little")
        h ^= (k * P1) & M
        h = ((((h << 23) | (h >> 41)) & M) * P2 + _P3) & M
        i += 4
    while i < n:
        h ^= (mv[i] * _P5) & M
        h = ((((h << 11) | (h >> 53)) & M) * P1) & M
        i += 1
    h ^= h >> 33
    h = (h * P2) & M
    h ^= h >> 29
    h = (h * _P3) & M
    h ^= h >> 32
    return h


try:  # optional accelerator; the pure version is always available and tested
    import xxhash as _xxhash  # type: ignore

    def xxh64_fast(data, seed=0):
        """XXH64 via the xxhash package."""
        return _xxhash.xxh64_intdigest(bytes(data), seed)
except ImportError:  # pragma: no cover - depends on the environment
    xxh64_fast = xxh64
