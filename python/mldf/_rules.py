"""The field and payload rules of docs/FORMAT.md §10.2-10.3 (F1..F10, D3..D5), as the Go
reader applies them (manifest/fieldrules.go, manifest/npy.go, manifest/json.go): the same
checks, the same rule ids. No I/O here.

``FieldRules(type_id, raw_arguments)`` is built once per field; ``check(meta, payload)``
raises ``RuleViolation(rule, message)`` for one sample's metadata struct, and
``candidates(column)`` returns, vectorised, the samples that may break a rule (a superset:
``check`` decides)."""

import json
import re

import numpy as np

from . import _format as F

MAX_JSON_DEPTH = 512  # manifest.MaxJSONDepth
MAX_SAMPLE_RATE = 768000  # manifest.MaxSampleRate
MAX_FLAC_CHANNELS = 8
MAX_NDARRAY_DIMS = 8
MAX_NPY_DIMS = 32
U32_MAX = 0xFFFFFFFF

_AUDIO_INT16, _AUDIO_INT32, _AUDIO_FLOAT32, _AUDIO_FLAC = 1, 2, 3, 4

# numpy dtype kinds and the item sizes numpy reads on every platform (manifest.DTypeSize)
_DTYPE_SIZES = {"b": (1,), "i": (1, 2, 4, 8), "u": (1, 2, 4, 8), "f": (2, 4, 8), "c": (8, 16)}


class RuleViolation(Exception):
    """A broken field or payload rule: ``rule`` ("F1".."F10", "D1".."D5") and ``message``."""

    def __init__(self, rule, message):
        super().__init__(message)
        self.rule, self.message = rule, message


def dtype_size(descr):
    """The item size of a numeric numpy descr ("<f4", "|u1"), or None (manifest.DTypeSize)."""
    if not isinstance(descr, str) or not 3 <= len(descr) <= 4 or descr[0] not in "<>|=":
        return None
    sizes = _DTYPE_SIZES.get(descr[1])
    digits = descr[2:]
    if sizes is None or not digits.isdigit() or not digits.isascii() or digits[0] == "0":
        return None
    n = int(digits)
    return n if n in sizes else None


def _truncate(s, n=40):
    return s if len(s) <= n else "%s... (%d bytes)" % (s[:n], len(s))


class NPYError(ValueError):
    """A malformed or unsupported .npy value (manifest.ErrNPY)."""


def _npy_raw(d, key):
    i = d.find("'" + key + "'")
    if i < 0:
        raise NPYError("header has no %r" % key)
    rest = d[i + len(key) + 2:].lstrip(" ")
    if not rest.startswith(":"):
        raise NPYError("malformed header near %r" % key)
    return rest[1:].lstrip(" ")


def parse_npy(b):
    """Parse a .npy value held in the bytes-like ``b`` without allocating for its data:
    (descr, shape, data offset). The grammar and checks are manifest.ParseNPY's: the declared
    shape × item size must equal the bytes after the header, exactly, before anything is
    allocated (a header that declares 2^40 elements is an error, not a MemoryError)."""
    b = memoryview(b).cast("B")
    n = len(b)
    if n < 10 or bytes(b[:6]) != b"\x93NUMPY":
        raise NPYError("no .npy magic")
    if b[6] == 1:
        hlen, start = int.from_bytes(b[8:10], "little"), 10
    elif b[6] in (2, 3):
        if n < 12:
            raise NPYError("truncated header")
        hlen, start = int.from_bytes(b[8:12], "little"), 12
    else:
        raise NPYError("format version %d.%d" % (b[6], b[7]))
    if start + hlen > n:
        raise NPYError("header length %d runs past the end of the %d-byte value" % (hlen, n))
    d = bytes(b[start:start + hlen]).decode("latin-1")  # byte-for-byte, as Go's string()
    rest = _npy_raw(d, "descr")
    if not rest.startswith("'"):
        raise NPYError("descr is not a simple dtype string (structured dtypes are not supported)")
    end = rest.find("'", 1)
    if end < 0:
        raise NPYError("unterminated descr")
    descr = rest[1:end]
    if not _npy_raw(d, "fortran_order").startswith("False"):
        raise NPYError("Fortran-order arrays are not supported")
    rest = _npy_raw(d, "shape")
    end = rest.find(")")
    if not rest.startswith("(") or end < 0:
        raise NPYError("malformed shape")
    shape = []
    for p in rest[1:end].split(","):
        p = p.strip(" \t\n\r\v\f")
        if p == "":
            continue
        q = p[:-1] if p.endswith("L") else p
        if not (q.isdigit() and q.isascii()) or int(q) >= 1 << 63:
            raise NPYError("shape entry %r" % _truncate(p))
        if len(shape) == MAX_NPY_DIMS:
            raise NPYError("more than %d dimensions" % MAX_NPY_DIMS)
        shape.append(int(q))
    item = dtype_size(descr)
    if item is None:
        raise NPYError("unsupported dtype %r" % _truncate(descr))
    want = item
    for s in shape:
        want *= s
    data = n - start - hlen
    if want >= 1 << 64 or want != data:
        raise NPYError("the header declares shape %s of %s (%s bytes) but %d data bytes follow it"
                       % (tuple(shape), descr, want if want < 1 << 64 else "more than 2^64", data))
    return descr, tuple(shape), start + hlen


_STRING_OR_BRACKET = re.compile(rb'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.S)


def json_depth(b, limit=0):
    """The deepest nesting of arrays and objects in the JSON bytes ``b`` (manifest.JSONDepth):
    brackets outside strings, counted without recursion. With ``limit`` > 0 it stops as soon
    as the depth exceeds it."""
    depth = deepest = 0
    for m in _STRING_OR_BRACKET.finditer(bytes(b)):
        c = m.group()
        if c in (b"[", b"{"):
            depth += 1
            if depth > deepest:
                deepest = depth
                if 0 < limit < deepest:
                    return deepest
        elif c in (b"]", b"}"):
            depth -= 1
    return deepest


def json_too_deep(b):
    """Whether the JSON bytes ``b`` nest deeper than MAX_JSON_DEPTH (rule D3). A payload with
    no more brackets than that cannot, and is not scanned."""
    b = bytes(b)
    if b.count(b"[") + b.count(b"{") <= MAX_JSON_DEPTH:
        return False
    return json_depth(b, MAX_JSON_DEPTH) > MAX_JSON_DEPTH


def load_json(b):
    """Parse a JSON payload under rule D3: UTF-8, valid JSON, nested at most MAX_JSON_DEPTH
    deep. Never raises RecursionError."""
    if json_too_deep(b):
        raise RuleViolation("D3", "JSON nested more than %d levels deep (at most %d)" % (MAX_JSON_DEPTH, MAX_JSON_DEPTH))
    try:
        text = bytes(b).decode("utf-8")
    except UnicodeDecodeError:
        raise RuleViolation("D3", "JSON payload is not UTF-8") from None
    try:
        return json.loads(text)
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise RuleViolation("D3", "JSON nested too deeply for this interpreter") from None
    except ValueError as e:
        raise RuleViolation("D3", "JSON payload does not parse: %s" % e) from None


def decode_utf8(b):
    """UTF-8 text under rule D4."""
    try:
        return str(b, "utf-8")
    except UnicodeDecodeError as e:
        raise RuleViolation("D4", "text is not UTF-8: invalid byte %#04x at offset %d" % (bytes(b)[e.start], e.start)) from None


def pcm_width(bit_depth):
    return {16: 2, 32: 4}.get(bit_depth, 0)


def token_width(encoding):
    return {F.TEXT_TOKENS32: 4, F.TEXT_TOKENS16: 2}.get(encoding, 0)


class FieldRules:
    """The rules of one field, read from its type and raw arguments (manifest.NewFieldRules)."""

    def __init__(self, type_id, raw):
        self.type_id = type_id
        self.type_name = F.TYPE_NAMES.get(type_id, "TYPE(%d)" % type_id)
        self.args_error = None
        self.recorded = any(raw)
        self.channels = self.max_res = self.max_pixels = self.format = self.width = 0
        self.tflags = self.end_id = self.pad_id = self.vocab = self.seq_len = 0
        self.layout, self.descr, self.shape, self.fixed_size = None, None, None, None
        if not self.recorded or not self.has_args():
            return
        try:
            self._parse(type_id, bytes(raw))
        except RuleViolation as e:
            self.args_error = e

    def has_args(self):
        t = self.type_id
        return (F.IMAGE_RAW <= t <= F.IMAGE_PNG or t in (F.AUDIO_WAVEFORM, F.AUDIO_COMPRESSED, F.TEXT_RAW,
                                                          F.TEXT_TOKENIZED, F.TEXT_PACKED, F.NDARRAY))

    def _bad(self, msg):
        raise RuleViolation("F1", "%s arguments: %s" % (self.type_name, msg))

    def _parse(self, t, a):
        if a[0] != 1:
            self._bad("layout version %d (this reader knows 1)" % a[0])
        u32 = lambda off: int.from_bytes(a[off:off + 4], "little")  # noqa: E731
        if F.IMAGE_RAW <= t <= F.IMAGE_PNG:
            self.channels, self.max_res = a[3], u32(4)
            self.max_pixels = int.from_bytes(a[16:24], "little", signed=True)
            if a[1] > 3:
                self._bad("mode %d (want 0 raw, 1 jpeg, 2 png, 3 smart)" % a[1])
            if self.channels not in (1, 3, 4):
                self._bad("channels %d (want 1, 3 or 4)" % self.channels)
            if self.max_res > 65535:
                self._bad("max_resolution %d (at most 65535)" % self.max_res)
        elif t == F.AUDIO_WAVEFORM:
            self.format = a[1]
            if not _AUDIO_INT16 <= self.format <= _AUDIO_FLOAT32:
                self._bad("sample format %d (want 1 int16, 2 int32, 3 float32)" % a[1])
        elif t == F.AUDIO_COMPRESSED:
            self.format = a[1]
            if self.format != _AUDIO_FLAC:
                self._bad("sample format %d (want 4 flac)" % a[1])
        elif t in (F.TEXT_TOKENIZED, F.TEXT_PACKED):
            self.width, self.tflags = a[1], int.from_bytes(a[2:4], "little")
            self.end_id, self.vocab, self.seq_len, self.pad_id = u32(4), u32(8), u32(12), u32(16)
            if self.width not in (2, 4):
                self._bad("id width %d (want 2 or 4)" % self.width)
            if t == F.TEXT_PACKED:
                if self.seq_len == 0 or self.seq_len * self.width > U32_MAX:
                    self._bad("seq_len %d with %d-byte ids (want 1 .. 4 GiB of ids)" % (self.seq_len, self.width))
            elif self.seq_len != 0:
                self._bad("seq_len %d (want 0 for TEXT_TOKENIZED)" % self.seq_len)
        elif t == F.NDARRAY:
            self.layout = a[1]
            if self.layout == F.NDARRAY_FIXED:
                self.descr = a[2:18].rstrip(b"\0").decode("latin-1")
                item = dtype_size(self.descr)
                if item is None:
                    self._bad("bad .npy data: unsupported dtype %r" % _truncate(self.descr))
                ndim = a[18]
                if ndim > MAX_NDARRAY_DIMS:
                    self._bad("ndim %d (at most %d)" % (ndim, MAX_NDARRAY_DIMS))
                self.shape = tuple(int.from_bytes(a[24 + 8 * d:32 + 8 * d], "little") for d in range(ndim))
                size = item
                for s in self.shape:
                    size *= s
                if size > U32_MAX:
                    self._bad("shape %s of %s is %d bytes, more than a payload can hold" % (self.shape, self.descr, size))
                self.fixed_size = size
            elif self.layout != F.NDARRAY_NPY:
                self._bad("layout %d (want 0 fixed or 1 npy)" % a[1])

    def needs_payload(self):
        return (self.type_id == F.NDARRAY and self.recorded and self.args_error is None
                and self.layout == F.NDARRAY_NPY)

    # ---- per sample (manifest.FieldRules.Check) ----

    def check(self, m, payload=None):
        """Apply F1..F10 to one metadata struct ``m`` (the tuple of the kind's META_STRUCT:
        data_ptr, data_size, ...). An empty payload is a missing value: nothing to check."""
        size = m[1]
        if size == 0:
            return
        if self.args_error is not None:
            raise self.args_error
        t = self.type_id
        if F.IMAGE_RAW <= t <= F.IMAGE_PNG:
            self._image(m[2], m[3], m[4], m[5], size)
        elif t in (F.AUDIO_WAVEFORM, F.AUDIO_COMPRESSED):
            self._audio(m[2], m[3], m[4], m[5], m[6], size)
        elif t in (F.TEXT_RAW, F.TEXT_TOKENIZED, F.TEXT_PACKED):
            self._text(m[3], size)
        elif t == F.NDARRAY and self.recorded:
            if self.layout == F.NDARRAY_FIXED:
                if size != self.fixed_size:
                    raise RuleViolation("F10", "NDARRAY payload is %d bytes, dtype %s shape %s needs %d"
                                        % (size, self.descr, list(self.shape), self.fixed_size))
            else:
                try:
                    parse_npy(payload)
                except NPYError as e:
                    raise RuleViolation("F10", "NDARRAY payload is not a .npy file: bad .npy data: %s" % e) from None

    def _image(self, h, w, c, mode, size):
        if mode > F.IMAGE_MODE_PNG:
            raise RuleViolation("F2", "unknown image mode %d (want 0 raw, 1 jpeg, 2 png)" % mode)
        if h == 0 or w == 0:
            raise RuleViolation("F3", "image is %dx%d (height x width): a dimension is zero" % (h, w))
        if c not in (1, 3, 4):
            raise RuleViolation("F3", "image has %d channels (want 1, 3 or 4)" % c)
        if self.recorded:
            if c != self.channels:
                raise RuleViolation("F3", "image has %d channels, the field's arguments say %d" % (c, self.channels))
            if self.max_res > 0 and (h > self.max_res or w > self.max_res):
                raise RuleViolation("F3", "image is %dx%d (height x width), larger than the field's max_resolution %d" % (h, w, self.max_res))
            if 0 < self.max_pixels < h * w:
                raise RuleViolation("F3", "image is %dx%d (height x width) = %d pixels, more than the field's max_pixels %d"
                                    % (h, w, h * w, self.max_pixels))
        if mode == F.IMAGE_MODE_RAW and h * w * c != size:
            raise RuleViolation("F4", "raw image %dx%dx%d (height x width x channels) needs %d bytes, the payload has %d" % (h, w, c, h * w * c, size))

    def _audio(self, frames, rate, ch, depth, codec, size):
        t = self.type_id
        if codec > F.AUDIO_CODEC_FLAC:
            raise RuleViolation("F5", "unknown audio codec %d (want 0 PCM, 1 FLAC)" % codec)
        if t == F.AUDIO_WAVEFORM and codec != F.AUDIO_CODEC_PCM:
            raise RuleViolation("F5", "codec %d in an AUDIO_WAVEFORM field (want 0 PCM)" % codec)
        if t == F.AUDIO_COMPRESSED and codec != F.AUDIO_CODEC_FLAC:
            raise RuleViolation("F5", "codec %d in an AUDIO_COMPRESSED field (want 1 FLAC)" % codec)
        if ch == 0 or frames == 0:
            raise RuleViolation("F6", "audio has %d channels and %d frames: zero" % (ch, frames))
        if rate == 0 or rate > MAX_SAMPLE_RATE:
            raise RuleViolation("F6", "sample rate %d Hz (want 1 .. %d)" % (rate, MAX_SAMPLE_RATE))
        if codec == F.AUDIO_CODEC_FLAC:
            if ch > MAX_FLAC_CHANNELS or not 4 <= depth <= 32:
                raise RuleViolation("F6", "FLAC with %d channels of %d bits (FLAC holds 1..8 channels of 4..32 bits)"
                                    % (ch, depth))
            return
        w = pcm_width(depth)
        if w == 0:
            raise RuleViolation("F6", "PCM bit depth %d (want 16 or 32)" % depth)
        if self.recorded and self.format == _AUDIO_INT16 and depth != 16:
            raise RuleViolation("F6", "PCM bit depth %d, the field's sample format int16 stores 16-bit samples" % depth)
        if self.recorded and self.format != _AUDIO_INT16 and depth != 32:
            raise RuleViolation("F6", "PCM bit depth %d, the field's sample format (%d: int32 or float32) stores 32-bit "
                                "samples" % (depth, self.format))
        if not self.recorded and depth != 16:
            raise RuleViolation("F6", "PCM bit depth %d in a field without arguments: only 16 (int16) is unambiguous; "
                                "32-bit samples need the arguments' sample format (int32 or float32)" % depth)
        if frames * ch * w != size:
            raise RuleViolation("F7", "PCM payload is %d bytes, %d frames × %d channels × %d bytes need %d"
                                % (size, frames, ch, w, frames * ch * w))

    def _text(self, enc, size):
        if enc > F.TEXT_TOKENS16:
            raise RuleViolation("F8", "unknown text encoding %d (want 0 UTF-8, 1 int32 ids, 2 int16 ids)" % enc)
        if self.type_id == F.TEXT_RAW:
            if enc != F.TEXT_UTF8:
                raise RuleViolation("F8", "encoding %d in a TEXT_RAW field (want 0 UTF-8)" % enc)
            return
        w = token_width(enc)
        if w == 0:
            raise RuleViolation("F8", "encoding 0 (UTF-8) in a %s field (want 1 or 2: token ids)" % self.type_name)
        if self.recorded and w != self.width:
            raise RuleViolation("F8", "encoding %d (%d-byte ids), the field's arguments say %d-byte ids" % (enc, w, self.width))
        if size % w:
            raise RuleViolation("F9", "token payload of %d bytes is not a whole number of %d-byte ids" % (size, w))
        if self.type_id == F.TEXT_PACKED and self.recorded and size != self.seq_len * w:
            raise RuleViolation("F9", "TEXT_PACKED row of %d bytes, seq_len %d × %d bytes need %d"
                                % (size, self.seq_len, w, self.seq_len * w))

    # ---- vectorised candidates for verify() ----

    def candidates(self, col):
        """Indices of the samples of ``col`` (the field's structured column) that may break a
        rule: every sample that does is among them."""
        size = col["data_size"].astype(np.int64)
        nonempty = size != 0
        if self.args_error is not None:
            return np.flatnonzero(nonempty)
        t = self.type_id
        if F.IMAGE_RAW <= t <= F.IMAGE_PNG:
            h, w = col["height"].astype(np.int64), col["width"].astype(np.int64)
            c, mode = col["channels"].astype(np.int64), col["mode"].astype(np.int64)
            bad = (mode > 2) | (h == 0) | (w == 0) | ~np.isin(c, (1, 3, 4)) | ((mode == 0) & (h * w * c != size))
            if self.recorded:
                bad |= c != self.channels
                if self.max_res > 0:
                    bad |= (h > self.max_res) | (w > self.max_res)
                if self.max_pixels > 0:
                    bad |= h * w > self.max_pixels
        elif t in (F.AUDIO_WAVEFORM, F.AUDIO_COMPRESSED):
            fr, rate = col["num_samples"].astype(np.int64), col["sample_rate"].astype(np.int64)
            ch, depth, codec = (col["num_channels"].astype(np.int64), col["bit_depth"].astype(np.int64),
                                col["codec"].astype(np.int64))
            bad = (ch == 0) | (fr == 0) | (rate == 0) | (rate > MAX_SAMPLE_RATE)
            if t == F.AUDIO_COMPRESSED:
                bad |= (codec != 1) | (ch > MAX_FLAC_CHANNELS) | (depth < 4) | (depth > 32)
            else:
                want = 16 if (not self.recorded or self.format == _AUDIO_INT16) else 32
                # frames × channels × width can exceed int64 only for sizes no u32 can match
                bad |= (codec != 0) | (depth != want) | (fr * ch * (want // 8) != size)
        elif t in (F.TEXT_RAW, F.TEXT_TOKENIZED, F.TEXT_PACKED):
            enc = col["encoding"].astype(np.int64)
            if t == F.TEXT_RAW:
                bad = enc != 0
            else:
                wid = np.where(enc == 1, 4, np.where(enc == 2, 2, 0))
                bad = (wid == 0) | (size % np.maximum(wid, 1) != 0)
                if self.recorded:
                    bad |= wid != self.width
                    if t == F.TEXT_PACKED:
                        bad |= size != self.seq_len * self.width
        elif t == F.NDARRAY and self.recorded:
            if self.layout == F.NDARRAY_FIXED:
                bad = size != self.fixed_size
            else:
                bad = np.ones(len(col), bool)  # every .npy header is parsed
        else:
            return np.empty(0, np.int64)
        return np.flatnonzero(bad & nonempty)

    # ---- D5 ----

    def check_tokens(self, ids):
        """Rule D5 for the ids of a token payload (a numpy array of <i4 or <i2)."""
        if not self.recorded or self.vocab == 0 or ids.size == 0:
            return
        u = ids.astype(np.int64) & (0xFFFFFFFF if ids.dtype.itemsize == 4 else 0xFFFF)
        ok = u < self.vocab
        if self.tflags & 1:
            ok |= u == self.end_id
        if self.tflags & 2:
            ok |= u == self.pad_id
        bad = np.flatnonzero(~ok)
        if bad.size:
            k = int(bad[0])
            raise RuleViolation("D5", "token %d (byte %d) is id %d, outside the vocabulary of %d ids"
                                % (k, k * ids.dtype.itemsize, int(u[k]), self.vocab))

