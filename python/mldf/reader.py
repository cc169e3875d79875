"""Random access to MLDF files: open, validate, read samples and columns from a memory map."""

import io
import json
import mmap
import numbers
import os
import struct
import warnings

import numpy as np

from . import _classnames as CN
from . import _format as F
from . import _rules as RU
from ._checksum import crc32c_many, xxh64_fast

try:  # Pillow is optional: without it images stay encoded
    from PIL import Image as _PILImage
except ImportError:  # pragma: no cover - depends on the environment
    _PILImage = None

try:  # soundfile is optional: without it FLAC stays encoded
    import soundfile as _soundfile  # type: ignore
except ImportError:  # pragma: no cover - depends on the environment
    _soundfile = None

HAVE_PIL = _PILImage is not None
HAVE_SOUNDFILE = _soundfile is not None


class FormatError(ValueError):
    """The file is not a valid MLDF file (or this reader cannot read it).

    ``rule`` names the docs/FORMAT.md rule ("R1".."R13" checked when opening or reading a value,
    "F1".."F10" (a value's metadata against its payload) when reading a value and by
    ``verify()``, "D1".."D5" when a payload is decoded, "V1".."V7" by ``verify()``);
    ``sample``/``field`` say where, when known."""

    def __init__(self, path, rule, message, sample=None, field=None, entry=None):
        where = []
        if sample is not None:
            where.append("sample %d" % sample)
        if field is not None:
            where.append("field %r" % field)
        if entry is not None:
            where.append("allocation entry %d" % entry)
        text = "%s: %s%s (FORMAT.md rule %s)" % (path, ", ".join(where) + ": " if where else "", message, rule)
        super().__init__(text)
        self.path, self.rule, self.sample, self.field, self.entry = path, rule, sample, field, entry


class VersionError(FormatError):
    """The file's major version is not one this reader reads (rule R3)."""


class ChecksumError(FormatError):
    """A payload's CRC-32C or the header's xxhash64 does not match (rules V1, V6)."""


class EncodedImage:
    """An image left encoded: Pillow is not installed, or the reader was opened with
    ``decode_images=False``. ``data`` is a read-only memoryview of the JPEG/PNG bytes in the
    file; ``decoded`` is always False (a flag to test); ``decode()`` needs Pillow."""

    decoded = False
    __slots__ = ("data", "format", "height", "width", "channels")

    def __init__(self, data, fmt, height, width, channels):
        self.data, self.format = data, fmt
        self.height, self.width, self.channels = height, width, channels

    def __bytes__(self):
        return bytes(self.data)

    def __len__(self):
        return len(self.data)

    @property
    def shape(self):
        return (self.height, self.width, self.channels)

    def decode(self):
        """The H×W×C uint8 array (needs Pillow)."""
        if _PILImage is None:
            raise RuntimeError("decoding %s images needs Pillow (pip install pillow)" % self.format)
        return _decode_pil(self.data, self.channels)

    def __repr__(self):
        return "EncodedImage(format=%r, shape=%r, %d bytes)" % (self.format, self.shape, len(self.data))


class EncodedAudio(bytes):
    """FLAC bytes (``soundfile`` is not installed or decoding was turned off), with the
    metadata: ``format`` ("flac"), ``sample_rate``, ``num_channels``, ``num_frames``,
    ``bit_depth``; ``decoded`` is False."""

    decoded = False


_PIL_MODES = {1: "L", 3: "RGB", 4: "RGBA"}


def _decode_pil(data, channels):
    with _PILImage.open(io.BytesIO(data)) as im:
        want = _PIL_MODES.get(channels)
        if want is not None and im.mode != want:
            im = im.convert(want)
        arr = np.asarray(im)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    return arr


class VerifyReport(dict):
    """What ``Reader.verify()`` returns: a dict whose keys are those of ``convert verify
    --json`` (docs/schema/verify.schema.json) where the two report the same thing
    (``num_samples``, ``num_fields``, ``num_payloads``, ``payload_bytes``,
    ``num_class_name_fields``, ``checksummed``, ``checksums_ok``, ``gaps_checked``,
    ``fields_checked``), plus ``crc_bytes`` (the payload bytes whose CRC-32C was computed).

    The keys of release 0.1 (``samples``, ``fields``, ``entries``, ``class_names``) are still
    read, with a DeprecationWarning, for one release; they are not listed by ``keys()`` nor
    found by ``in``, and will be removed."""

    _DEPRECATED = {"samples": "num_samples", "fields": "num_fields", "entries": "num_payloads",
                   "class_names": "num_class_name_fields"}

    def _renamed(self, key):
        new = self._DEPRECATED.get(key) if isinstance(key, str) else None
        if new is not None:
            warnings.warn("verify() key %r is deprecated; use %r (the name convert verify --json gives it)"
                          % (key, new), DeprecationWarning, stacklevel=3)
        return new

    def __missing__(self, key):
        new = self._renamed(key)
        if new is None:
            raise KeyError(key)
        return self[new]

    def get(self, key, default=None):
        if key in self:
            return dict.__getitem__(self, key)
        new = self._renamed(key)
        return dict.get(self, new, default) if new is not None else default


class Field:
    """One field descriptor: ``name``, ``type`` (name, e.g. "IMAGE_JPEG"), ``type_id``,
    ``flags``, ``metadata_size``, ``offset`` (of its struct in a metadata row), ``arguments``
    (decoded per docs/fields/*.md: a dict; {} when all zero; None when not documented — see
    ``raw_arguments``), ``raw_arguments`` (128 bytes), ``names`` (the class names of a
    class-label INT field, label i being ``names[i]``; None when unknown)."""

    __slots__ = ("index", "name", "type", "type_id", "flags", "metadata_size", "offset", "arguments",
                 "raw_arguments", "kind", "rules", "names_block", "_reader", "_names")

    def __init__(self, index, name, type_id, flags, metadata_size, offset, raw_arguments):
        self.index, self.name, self.type_id, self.flags = index, name, type_id, flags
        self.type = F.TYPE_NAMES.get(type_id, "TYPE(%d)" % type_id)
        self.metadata_size, self.offset = metadata_size, offset
        self.raw_arguments = raw_arguments
        self.arguments = F.decode_arguments(type_id, raw_arguments)
        self.kind = F.kind_of(type_id)
        self.rules = RU.FieldRules(type_id, raw_arguments)
        self.names_block = None  # (ptr, size) of its class-names block, checked by rule R14
        self._reader = None
        self._names = None

    @property
    def has_payload(self):
        return self.kind != F.K_SCALAR

    @property
    def num_classes(self):
        """The number of classes of a class-label INT field, else None."""
        a = self.arguments
        return a.get("num_classes") if isinstance(a, dict) and a.get("kind") == "class_label" else None

    @property
    def names(self):
        """The class names of a class-label INT field: those the file holds (docs/FORMAT.md
        §14, checked by rule V8: FormatError when they do not match the arguments), else
        those of ``FILE.classes.json`` beside a file written before names went into the file
        (when they match the arguments); None for other fields or when unknown."""
        if self.num_classes is None:
            return None
        if self._names is None:
            r = self._reader
            if self.names_block is not None:
                r._check_open()
                ptr, size = self.names_block
                try:
                    self._names = CN.decode_block(r._buf[ptr:ptr + size], self.num_classes, self.arguments["names_hash"])
                except ValueError as e:
                    r._fail("V8", "class-names block [%d, %d+%d): %s" % (ptr, ptr, size, e), field=self.name)
            elif r is not None:
                self._names = CN.side_file_names(r.path, self.name, self.num_classes, self.arguments["names_hash"])
        return None if self._names is None else list(self._names)

    def __repr__(self):
        return "Field(%r, %s, arguments=%r)" % (self.name, self.type, self.arguments)


def open(path, decode_images=True, decode_audio=True):  # noqa: A001 - the package's entry point
    """Open an MLDF file read-only (memory-mapped) and validate its structure.

    Raises FormatError (or its subclass VersionError) for a file that breaks a rule of
    docs/FORMAT.md; OSError when the file cannot be read."""
    return Reader(path, decode_images=decode_images, decode_audio=decode_audio)


def _u64(b, off):
    return int.from_bytes(b[off:off + 8], "little")


class Reader:
    """A validated MLDF file. ``len(r)``, ``r[i]`` (a dict of field values), ``r[a:b]`` and
    ``r[[i, j, ...]]`` (lists of dicts), ``r.column(name)`` (a numpy view of the metadata
    table), ``r.fields``, ``r.verify()``, ``r.close()``; usable as a context manager.

    Values returned for raw images, raw audio, fixed ndarrays, token ids, BYTES and columns
    are read-only views of the memory map: valid while the reader is open (they keep the map
    alive after ``close()``; copy them with ``np.array(v)`` to own them)."""

    def __init__(self, path, decode_images=True, decode_audio=True):
        self.path = os.fspath(path)
        self.decode_images = decode_images and HAVE_PIL
        self.decode_audio = decode_audio and HAVE_SOUNDFILE
        self._mm = None
        with io.open(self.path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size >= F.PREAMBLE_SIZE:
                self._mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
                buf = self._mm
            else:
                buf = f.read()
        self.size = size
        self._buf = buf
        try:
            self._validate()
        except BaseException:
            self.close()
            raise

    # ---- validation (docs/FORMAT.md §10, rules R1..R12) ----

    def _fail(self, rule, msg, cls=FormatError, **kw):
        raise cls(self.path, rule, msg, **kw)

    def _validate(self):
        b, size = self._buf, self.size
        if size < F.SIGNATURE_SIZE:
            self._fail("R1", "not an MLDF file: %d bytes, shorter than the 9-byte signature" % size)
        if bytes(b[:F.SIGNATURE_SIZE]) != F.SIGNATURE:
            self._fail("R1", "not an MLDF file: the first 9 bytes are %s, want %s"
                       % (bytes(b[:9]).hex(" "), F.SIGNATURE.hex(" ")))
        if size < F.PREAMBLE_SIZE:
            self._fail("R2", "file is %d bytes, shorter than the 73-byte signature and header" % size)
        hdr = bytes(b[F.HEADER_OFFSET:F.PREAMBLE_SIZE])
        (major, minor, flags, nsamples, nfields, _pad, page, desc_ptr, meta_ptr, data_ptr, alloc_ptr,
         checksum) = F.HEADER_STRUCT.unpack(hdr)
        self.header_bytes = hdr
        self.version = (major, minor)
        self.flags, self.page_size, self.header_checksum = flags, page, checksum
        self.field_desc_ptr, self.metadata_ptr, self.data_ptr, self.alloc_table_ptr = desc_ptr, meta_ptr, data_ptr, alloc_ptr
        if major != F.VERSION_MAJOR:
            self._fail("R3", "file is version %d.%d; this reader reads %d.x" % (major, minor, F.VERSION_MAJOR),
                       cls=VersionError)
        if not flags & F.FLAG_LITTLE_ENDIAN:
            self._fail("R4", "little-endian flag not set (flags %#x)" % flags)
        if flags & F.FLAG_ENCRYPTED:
            self._fail("R4", "encrypted files are not supported (flags %#x)" % flags)
        if flags & F.FLAG_COMPRESSED:
            self._fail("R4", "compressed flag set (flags %#x); MLDF 1.x defines no compression" % flags)
        if not flags & F.FLAG_CHECKSUMMED and checksum != 0:
            self._fail("R4", "flag bit 2 (checksummed) is clear but the header checksum is %016x, where writers store "
                       "zero: the flag was altered (one flipped bit would turn every check off)" % checksum)
        if page == 0 or page & (page - 1):
            self._fail("R5", "page size %d is not a power of two" % page)
        if page < F.MIN_PAGE_SIZE:
            self._fail("R5", "page size %d is smaller than %d" % (page, F.MIN_PAGE_SIZE))
        if nfields == 0:
            self._fail("R6", "num_fields is 0")
        for name, v in (("field_desc_ptr", desc_ptr), ("data_ptr", data_ptr), ("metadata_ptr", meta_ptr),
                        ("alloc_table_ptr", alloc_ptr)):
            if v > size:
                self._fail("R7", "%s %d points past the end of the %d-byte file" % (name, v, size))
        if desc_ptr < F.PREAMBLE_SIZE or desc_ptr % 8:
            self._fail("R8", "field_desc_ptr %d must be a multiple of 8 and at least %d" % (desc_ptr, F.PREAMBLE_SIZE))
        desc_len = nfields * F.FIELD_DESC_SIZE
        desc_end = desc_ptr + desc_len
        if desc_end > size:
            self._fail("R8", "num_fields %d: %d descriptor bytes at %d run past the end of the %d-byte file"
                       % (nfields, desc_len, desc_ptr, size))
        if desc_end > data_ptr:
            self._fail("R8", "the field descriptors [%d, %d) overlap the data region at data_ptr %d"
                       % (desc_ptr, desc_end, data_ptr))
        if data_ptr % page:
            self._fail("R9", "data_ptr %d is not a multiple of the page size %d" % (data_ptr, page))
        if data_ptr > meta_ptr:
            self._fail("R9", "data_ptr %d is after metadata_ptr %d" % (data_ptr, meta_ptr))

        # R10: descriptors (nfields <= 65535 and checked against the file size above)
        self.descriptor_bytes = bytes(b[desc_ptr:desc_end])
        fields, names, types = [], {}, []
        for k in range(nfields):
            d = self.descriptor_bytes[k * F.FIELD_DESC_SIZE:(k + 1) * F.FIELD_DESC_SIZE]
            raw_name = d[:F.NAME_SIZE]
            nul = raw_name.find(b"\0")
            shown = raw_name[:nul if nul >= 0 else F.NAME_SIZE].decode("utf-8", "replace")
            if nul < 0:
                self._fail("R10", "descriptor at offset %d: name not NUL-terminated within 64 bytes" % (desc_ptr + k * 208),
                           field=shown)
            if any(raw_name[nul:]):
                self._fail("R10", "descriptor at offset %d: bytes after the name's NUL terminator are not zero"
                           % (desc_ptr + k * 208), field=shown)
            if nul == 0:
                self._fail("R10", "field %d has an empty name" % k)
            try:
                name = raw_name[:nul].decode("utf-8")
            except UnicodeDecodeError:
                self._fail("R10", "field %d: name is not UTF-8" % k, field=shown)
            type_id, fflags, msize = struct.unpack_from("<HHI", d, 64)
            kind = F.kind_of(type_id)
            if kind is None:
                self._fail("R10", "unknown field type %d" % type_id, field=name)
            if msize != F.META_SIZE[kind]:
                self._fail("R10", "metadata size %d does not match type %s (want %d)"
                           % (msize, F.TYPE_NAMES[type_id], F.META_SIZE[kind]), field=name)
            if name in names:
                self._fail("R10", "duplicate field name (also field %d)" % names[name], field=name)
            names[name] = k
            types.append(type_id)
            fields.append((name, type_id, fflags, msize, bytes(d[76:204])))
        offsets, row_size = F.row_layout(types)
        self.fields = [Field(k, n, t, fl, ms, offsets[k], a) for k, (n, t, fl, ms, a) in enumerate(fields)]
        self._by_name = names
        self.row_size = row_size

        # R11: the metadata table
        if meta_ptr % F.META_ALIGN:
            self._fail("R11", "metadata_ptr %d is not a multiple of %d" % (meta_ptr, F.META_ALIGN))
        meta_len = nsamples * row_size  # Python ints: no overflow
        if meta_ptr + meta_len > size:
            self._fail("R11", "num_samples %d x row size %d from metadata_ptr %d runs past the end of the %d-byte file"
                       % (nsamples, row_size, meta_ptr, size))
        if meta_ptr + meta_len != alloc_ptr:
            self._fail("R11", "metadata table [%d, %d) (num_samples %d x row size %d) does not end at alloc_table_ptr %d"
                       % (meta_ptr, meta_ptr + meta_len, nsamples, row_size, alloc_ptr))
        # R12: the allocation table runs to the end of the file in whole entries
        alloc_len = size - alloc_ptr
        if alloc_len % F.ALLOC_ENTRY_SIZE:
            self._fail("R12", "allocation table [%d, %d) is %d bytes, not a multiple of %d"
                       % (alloc_ptr, size, alloc_len, F.ALLOC_ENTRY_SIZE))
        self.num_samples = nsamples
        self.num_alloc_entries = alloc_len // F.ALLOC_ENTRY_SIZE
        self._structs = [F.META_STRUCT.get(f.kind) for f in self.fields]
        self._check_class_blocks(minor, desc_end, data_ptr)

    def _check_class_blocks(self, minor, desc_end, data_ptr):
        """R14: in a file of minor version 1 or later, each class-names block lies in the gap
        between the descriptors and the data region, 8-aligned, at most 64 MiB, none
        overlapping another. (In a 1.0 file those argument bytes are reserved: ignored.)"""
        spans = []
        for f in self.fields:
            f._reader = self
            if f.num_classes is None or minor < F.VERSION_MINOR_CLASS_NAMES:
                continue
            a = f.raw_arguments
            ptr, size = int.from_bytes(a[16:24], "little"), int.from_bytes(a[24:28], "little")
            if ptr == 0 and size == 0:
                continue
            if ptr == 0 or size == 0:
                self._fail("R14", "class-names block at %d of %d bytes: both are zero (no block) or neither is"
                           % (ptr, size), field=f.name)
            if size > CN.MAX_CLASS_NAMES_BLOCK:
                self._fail("R14", "class-names block of %d bytes (at most %d)" % (size, CN.MAX_CLASS_NAMES_BLOCK),
                           field=f.name)
            if ptr % 8:
                self._fail("R14", "class-names block at %d is not 8-aligned" % ptr, field=f.name)
            if ptr < desc_end or ptr + size > data_ptr:
                self._fail("R14", "class-names block [%d, %d+%d) lies outside the gap [%d, %d) between the field "
                           "descriptors and the data region" % (ptr, ptr, size, desc_end, data_ptr), field=f.name)
            f.names_block = (ptr, size)
            spans.append((ptr, size, f))
        spans.sort(key=lambda s: s[0])
        for (p0, s0, f0), (p1, s1, f1) in zip(spans, spans[1:]):
            if p0 + s0 > p1:
                self._fail("R14", "class-names block [%d, %d) overlaps the block of field %d %r at %d"
                           % (p1, p1 + s1, f0.index, f0.name, p0), field=f1.name)

    # ---- basic access ----

    def __len__(self):
        return self.num_samples

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<mldf.Reader %r: %d samples, fields %s>" % (
            self.path, self.num_samples, ", ".join("%s:%s" % (f.name, f.type) for f in self.fields))

    @property
    def closed(self):
        return self._buf is None

    def close(self):
        """Release the memory map. Arrays and memoryviews already returned keep the mapping
        alive until they are dropped (numpy holds a reference), so they stay valid."""
        mm, self._mm, self._buf = self._mm, None, None
        if mm is not None:
            try:
                mm.close()
            except BufferError:
                pass  # views still exported: the map is unmapped when the last one goes

    def _check_open(self):
        if self._buf is None:
            raise ValueError("%s: reader is closed" % self.path)

    def field(self, name_or_index):
        """The Field with this name or index (KeyError/IndexError otherwise)."""
        if isinstance(name_or_index, numbers.Integral):
            return self.fields[name_or_index]
        try:
            return self.fields[self._by_name[name_or_index]]
        except KeyError:
            raise KeyError("%s: no field %r (fields: %s)" % (
                self.path, name_or_index, ", ".join(f.name for f in self.fields))) from None

    @property
    def field_names(self):
        return [f.name for f in self.fields]

    def _index(self, i):
        if not isinstance(i, numbers.Integral):
            raise TypeError("sample index must be an integer, not %s" % type(i).__name__)
        i = int(i)
        n = self.num_samples
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("%s: sample %d out of range (%d samples)" % (self.path, i, n))
        return i

    def __getitem__(self, key):
        if isinstance(key, str):
            return self.column(key)
        if isinstance(key, slice):
            return [self.sample(i) for i in range(*key.indices(self.num_samples))]
        if isinstance(key, numbers.Integral):
            return self.sample(key)
        idx = np.asarray(key)
        if idx.dtype == bool:
            if idx.shape != (self.num_samples,):
                raise IndexError("boolean index of shape %s, want (%d,)" % (idx.shape, self.num_samples))
            idx = np.flatnonzero(idx)
        elif idx.ndim != 1 or (idx.size and not np.issubdtype(idx.dtype, np.integer)):
            raise TypeError("index with an int, a slice, a sequence of ints or a boolean mask, not %r" % (key,))
        return [self.sample(int(i)) for i in idx]

    def __iter__(self):
        for i in range(self.num_samples):
            yield self.sample(i)

    def sample(self, i, fields=None):
        """Sample i as a dict {field name: value}; ``fields`` limits it to some names."""
        self._check_open()
        i = self._index(i)
        fs = self.fields if fields is None else [self.field(n) for n in fields]
        return {f.name: self._value(i, f) for f in fs}

    def get(self, i, field):
        """The value of one field of sample i."""
        self._check_open()
        return self._value(self._index(i), self.field(field))

    def meta(self, i, field):
        """The metadata struct of one field of sample i as a dict (for INT/FLOAT: {"value"})."""
        self._check_open()
        i, f = self._index(i), self.field(field)
        off = self.metadata_ptr + i * self.row_size + f.offset
        if f.kind == F.K_SCALAR:
            return {"value": self._scalar(off, f)}
        return dict(zip(F.META_NAMES[f.kind], self._structs[f.index].unpack_from(self._buf, off)))

    def payload(self, i, field):
        """The raw payload bytes of one field of sample i: a read-only memoryview (empty for
        an empty payload). The reference is checked (rule R13); the CRC is not (see verify)."""
        self._check_open()
        i, f = self._index(i), self.field(field)
        if f.kind == F.K_SCALAR:
            raise TypeError("field %r is %s: it has no payload" % (f.name, f.type))
        off = self.metadata_ptr + i * self.row_size + f.offset
        ptr, size = struct.unpack_from("<QI", self._buf, off)
        return self._payload(i, f, ptr, size)

    def column(self, name):
        """Field ``name`` for all samples as a read-only numpy array viewing the memory map
        (zero-copy): int64 for INT, float64 for FLOAT, a structured array of the metadata
        struct (data_ptr, data_size, height, ...) for the other types."""
        self._check_open()
        f = self.field(name)
        dt = F.SCALAR_DTYPE[f.type_id] if f.kind == F.K_SCALAR else F.META_DTYPE[f.kind]
        n = self.num_samples
        if n == 0:
            return np.empty(0, dtype=dt)
        return np.ndarray(shape=(n,), dtype=dt, buffer=self._exported(self.metadata_ptr, self.alloc_table_ptr),
                          offset=f.offset, strides=(self.row_size,))

    def _exported(self, start, end):
        """bytes [start, end) of the map as a uint8 array that holds a buffer export of the
        map: arrays built on it keep close() from unmapping their memory. (np.ndarray with
        buffer=mmap keeps a reference to the mmap but no export: close() would unmap the
        memory under it and a later read would crash.)"""
        return np.frombuffer(self._buf, dtype=np.uint8, count=end - start, offset=start)

    # ---- values ----

    def _scalar(self, off, f):
        if f.type_id == F.INT:
            return np.int64(struct.unpack_from("<q", self._buf, off)[0])
        return np.float64(struct.unpack_from("<d", self._buf, off)[0])

    def _payload(self, i, f, ptr, size):
        if size == 0:
            if ptr != 0:
                self._fail("R13", "empty payload has data_ptr %d, want 0" % ptr, sample=i, field=f.name)
            return memoryview(b"")
        if ptr < self.data_ptr or ptr + size > self.metadata_ptr:
            self._fail("R13", "payload [%d, %d+%d) lies outside the data region [%d, %d)"
                       % (ptr, ptr, size, self.data_ptr, self.metadata_ptr), sample=i, field=f.name)
        return memoryview(self._buf)[ptr:ptr + size]

    def _array(self, ptr, size, dtype):
        return np.frombuffer(self._buf, dtype=dtype, count=size // dtype.itemsize, offset=ptr)

    def _rule(self, e, i, f):
        """Raise the FormatError of a RuleViolation about sample i, field f."""
        self._fail(e.rule, e.message, sample=i, field=f.name)

    def _value(self, i, f):
        off = self.metadata_ptr + i * self.row_size + f.offset
        kind = f.kind
        if kind == F.K_SCALAR:
            v = self._scalar(off, f)
            n = f.num_classes
            if n is not None and not -1 <= v < n:
                self._fail("F11", "class label %d is not -1 or in 0..%d (the field has %d classes)" % (v, n - 1, n),
                           sample=i, field=f.name)
            return v
        m = self._structs[f.index].unpack_from(self._buf, off)
        ptr, size = m[0], m[1]
        data = self._payload(i, f, ptr, size)
        try:
            f.rules.check(m, data)  # F1..F10
        except RU.RuleViolation as e:
            self._rule(e, i, f)
        t = f.type_id
        if kind == F.K_IMAGE:
            return self._image(i, f, ptr, size, data, m)
        if t in (F.AUDIO_WAVEFORM, F.AUDIO_COMPRESSED):
            return self._audio(i, f, ptr, size, data, m)
        if t in (F.TEXT_RAW, F.TEXT_TOKENIZED, F.TEXT_PACKED):
            return self._text(i, f, ptr, size, data, m)
        if t == F.BYTES:
            return data
        if size == 0:
            return None
        if t == F.JSON:
            try:
                return RU.load_json(data)
            except RU.RuleViolation as e:
                self._rule(e, i, f)
        if t == F.NDARRAY:
            return self._ndarray(i, f, ptr, size, data)
        return data  # MULTIMODAL_SAMPLE, AUDIO_SPECTROGRAM, ... (no documented payload): raw bytes

    def _ndarray(self, i, f, ptr, size, data):
        r = f.rules
        if not r.recorded:
            return data  # no arguments recorded: raw bytes
        if r.layout == F.NDARRAY_FIXED:  # F10 checked the size
            return self._array(ptr, size, np.dtype(r.descr)).reshape(r.shape)
        descr, shape, start = RU.parse_npy(data)  # F10 checked it parses
        dt = np.dtype(descr)
        return np.frombuffer(self._buf, dtype=dt, count=(size - start) // dt.itemsize, offset=ptr + start).reshape(shape)

    def _image(self, i, f, ptr, size, data, m):
        _, _, h, w, c, mode = m  # F2..F4 checked them
        if size == 0:
            return None
        if mode == F.IMAGE_MODE_RAW:
            return self._array(ptr, size, np.dtype(np.uint8)).reshape(h, w, c)
        fmt = "jpeg" if mode == F.IMAGE_MODE_JPEG else "png"
        if not self.decode_images:
            return EncodedImage(data, fmt, h, w, c)
        try:
            arr = _decode_pil(data, c)
        except Exception as e:  # Pillow raises many types for bad data
            self._fail("D1", "%s payload does not decode: %s" % (fmt.upper(), e), sample=i, field=f.name)
        if arr.shape[:2] != (h, w):
            self._fail("D1", "%s payload is %dx%d, the metadata says %dx%d" % (fmt.upper(), arr.shape[1], arr.shape[0], w, h),
                       sample=i, field=f.name)
        return arr

    def _audio(self, i, f, ptr, size, data, m):
        _, _, frames, rate, ch, depth, codec = m  # F5..F7 checked them
        if size == 0:
            return None
        if codec == F.AUDIO_CODEC_PCM:
            fmt = F.AUDIO_FORMATS.get(f.rules.format, "int16") if f.rules.recorded else "int16"
            return self._array(ptr, size, F.AUDIO_DTYPES[fmt]).reshape(frames, ch)
        if self.decode_audio:
            dtype = "int16" if depth <= 16 else "int32"
            try:
                arr, got_rate = _soundfile.read(io.BytesIO(data), dtype=dtype, always_2d=True)
            except Exception as e:  # soundfile raises RuntimeError and others for bad data
                self._fail("D2", "FLAC payload does not decode: %s" % e, sample=i, field=f.name)
            if arr.shape != (frames, ch) or got_rate != rate:
                self._fail("D2", "FLAC payload holds %d frames × %d channels at %d Hz, the metadata says %d × %d at %d Hz"
                           % (arr.shape[0], arr.shape[1], got_rate, frames, ch, rate), sample=i, field=f.name)
            return arr
        out = EncodedAudio(data)
        out.format, out.sample_rate, out.num_channels, out.num_frames, out.bit_depth = "flac", rate, ch, frames, depth
        return out

    def _text(self, i, f, ptr, size, data, m):
        enc = m[3]  # F8, F9 checked it
        if enc == F.TEXT_UTF8:
            try:
                return RU.decode_utf8(data)
            except RU.RuleViolation as e:
                self._rule(e, i, f)
        dt = np.dtype("<i4" if enc == F.TEXT_TOKENS32 else "<i2")
        if size == 0:
            return np.empty(0, dtype=dt)
        return self._array(ptr, size, dt)

    # ---- verification (rules V1..V7, F1..F10) ----

    def _check_fields(self):
        """Rules F1..F10 over the whole file: the first violation in sample order (then field
        order), the one the Go reader reports. Candidates are found with numpy; the scalar
        check of each field decides."""
        for f in self.fields:
            if f.rules.args_error is not None:
                e = f.rules.args_error
                self._fail(e.rule, e.message, field=f.name)
        first = None
        for f in self.fields:
            n = f.num_classes
            if n is not None and self.num_samples:
                col = self.column(f.name)
                out = np.flatnonzero((col < -1) | (col >= n))
                if out.size and (first is None or out[0] < first[0]):
                    j = int(out[0])
                    first = (j, f, RU.RuleViolation("F11", "class label %d is not -1 or in 0..%d (the field has %d classes)"
                                                    % (int(col[j]), n - 1, n)))
        for f in self.fields:
            if not f.has_payload or self.num_samples == 0:
                continue
            col = self.column(f.name)
            for j in f.rules.candidates(col).tolist():
                if first is not None and (j > first[0] or (j == first[0] and f.index > first[1].index)):
                    break
                off = self.metadata_ptr + j * self.row_size + f.offset
                m = self._structs[f.index].unpack_from(self._buf, off)
                data = self._payload(j, f, m[0], m[1]) if f.rules.needs_payload() else None
                try:
                    f.rules.check(m, data)
                except RU.RuleViolation as e:
                    first = (j, f, e)
                    break
        if first is not None:
            j, f, e = first
            self._rule(e, j, f)

    def alloc_table(self):
        """The allocation table as a read-only structured array (ptr, size, check)."""
        self._check_open()
        dt = np.dtype([("ptr", "<u8"), ("size", "<u4"), ("check", "<u4")])
        return np.ndarray(shape=(self.num_alloc_entries,), dtype=dt,
                          buffer=self._exported(self.alloc_table_ptr, self.size))

    def verify(self, checksums=True):
        """Check every rule of docs/FORMAT.md §10 that opening did not: the header checksum
        (V1), the allocation table (V2..V4), the one-to-one match of payload references and
        entries (V5), every value's metadata against its payload (F1..F10), every payload's
        CRC-32C, or zero checks in a file without checksums (V6), and zero gaps (V7), in that
        order, as the Go reader does. Raises ChecksumError or FormatError at the first
        violation; returns a VerifyReport (a dict, keyed as ``convert verify --json``) otherwise. ``checksums=False`` skips V1 and the
        CRC-32C computation of V6.

        Unlike opening and reading, it holds numpy arrays of the whole tables (some 50 bytes
        per payload and per row, and V1 copies the tables): for files of 10^8 samples use
        ``convert verify``, which streams them."""
        self._check_open()
        b = self._buf
        checked = bool(self.flags & F.FLAG_CHECKSUMMED) and checksums
        if checked:
            h = xxh64_fast(b"".join((self.header_bytes[:F.HEADER_CHECKSUM_OFFSET], self.descriptor_bytes,
                                     b[self.metadata_ptr:self.size])))
            if h != self.header_checksum:
                self._fail("V1", "header checksum is %016x but the header, descriptors, metadata table and "
                           "allocation table hash to %016x: one of them was altered" % (self.header_checksum, h),
                           cls=ChecksumError)
        at = self.alloc_table()
        ptr = at["ptr"].astype(np.uint64)
        size = at["size"].astype(np.uint64)
        end = ptr + size
        ps = np.uint64(self.page_size)
        n = len(at)

        def bad(rule, k, msg):
            self._fail(rule, msg, entry=int(k))

        if n:
            z = np.flatnonzero(size == 0)
            if z.size:
                bad("V2", z[0], "entry has size 0 (ptr %d); empty payloads have no entry" % ptr[z[0]])
            uns = np.flatnonzero(ptr[1:] <= ptr[:-1])
            if uns.size:
                k = uns[0] + 1
                bad("V2", k, "table not sorted by ptr: ptr %d follows ptr %d" % (ptr[k], ptr[k - 1]))
            ov = np.flatnonzero(ptr[1:] < end[:-1])
            if ov.size:
                k = ov[0] + 1
                bad("V2", k, "payload [%d, %d) overlaps the previous entry's payload, which ends at %d"
                    % (ptr[k], end[k], end[k - 1]))
            out = np.flatnonzero((ptr < np.uint64(self.data_ptr)) | (end > np.uint64(self.metadata_ptr)) | (end < ptr))
            if out.size:
                k = out[0]
                bad("V3", k, "payload [%d, %d+%d) lies outside the data region [%d, %d)"
                    % (ptr[k], ptr[k], size[k], self.data_ptr, self.metadata_ptr))
            small = size <= ps
            cross = small & (ptr // ps != (end - np.uint64(1)) // ps)
            big = ~small & (ptr % ps != 0)
            v4 = np.flatnonzero(cross | big)
            if v4.size:
                k = v4[0]
                bad("V4", k, "payload [%d, %d) of %d bytes breaks the page rule (page size %d)"
                    % (ptr[k], end[k], size[k], self.page_size))
        # V5: references <-> entries, one to one
        refs_ptr, refs_size, owners = [], [], []
        for f in self.fields:
            if not f.has_payload:
                continue
            col = self.column(f.name)
            p = col["data_ptr"].astype(np.uint64)
            s = col["data_size"].astype(np.uint64)
            e = p + s
            empty = s == 0
            badempty = np.flatnonzero(empty & (p != 0))
            if badempty.size:
                self._fail("R13", "empty payload has data_ptr %d, want 0" % p[badempty[0]],
                           sample=int(badempty[0]), field=f.name)
            outside = np.flatnonzero(~empty & ((p < np.uint64(self.data_ptr)) | (e > np.uint64(self.metadata_ptr)) | (e < p)))
            if outside.size:
                j = outside[0]
                self._fail("R13", "payload [%d, %d+%d) lies outside the data region [%d, %d)"
                           % (p[j], p[j], s[j], self.data_ptr, self.metadata_ptr), sample=int(j), field=f.name)
            keep = np.flatnonzero(~empty)
            refs_ptr.append(p[keep])
            refs_size.append(s[keep])
            owners.append(np.stack([keep, np.full(keep.shape, f.index)], axis=1))
        if refs_ptr:
            rp = np.concatenate(refs_ptr)
            rs = np.concatenate(refs_size)
            ow = np.concatenate(owners)
        else:
            rp = rs = np.empty(0, np.uint64)
            ow = np.empty((0, 2), np.int64)
        order = np.argsort(rp, kind="stable")
        rp, rs, ow = rp[order], rs[order], ow[order]
        dup = np.flatnonzero(rp[1:] == rp[:-1])
        if dup.size:
            j = dup[0] + 1
            self._fail("V5", "payload at ptr %d is also referenced by sample %d, field %r"
                       % (rp[j], ow[j - 1][0], self.fields[ow[j - 1][1]].name),
                       sample=int(ow[j][0]), field=self.fields[ow[j][1]].name)
        pos = np.searchsorted(ptr, rp)
        missing = np.flatnonzero((pos >= n) | (ptr[np.minimum(pos, max(n - 1, 0))] != rp)) if n else np.arange(len(rp))
        if missing.size:
            j = missing[0]
            self._fail("V5", "payload [%d, %d+%d) has no allocation entry at ptr %d" % (rp[j], rp[j], rs[j], rp[j]),
                       sample=int(ow[j][0]), field=self.fields[ow[j][1]].name)
        wrong = np.flatnonzero(size[pos] != rs)
        if wrong.size:
            j = wrong[0]
            self._fail("V5", "data_size %d but allocation entry at ptr %d has size %d" % (rs[j], rp[j], size[pos[j]]),
                       sample=int(ow[j][0]), field=self.fields[ow[j][1]].name, entry=int(pos[j]))
        if len(rp) != n:
            unref = np.setdiff1d(np.arange(n), pos)
            k = unref[0]
            bad("V5", k, "entry (ptr %d, size %d) is not referenced by any metadata row" % (ptr[k], size[k]))
        # F1..F10: every field's arguments, then every value against its metadata
        self._check_fields()
        # V6: payload CRC-32C; in a file without checksums, every check is zero
        crc_bytes = 0
        if not self.flags & F.FLAG_CHECKSUMMED and n:
            nz = np.flatnonzero(at["check"] != 0)
            if nz.size:
                k = int(nz[0])
                sample, field = ow[k]
                self._fail("V6", "flag bit 2 (checksummed) is clear but the allocation entry's check is %08x, where "
                           "writers store zero: the flag was altered" % int(at["check"][k]), sample=int(sample),
                           field=self.fields[field].name, entry=k)
        if checked and n:
            got = crc32c_many(b, ptr.astype(np.int64), size.astype(np.int64))
            checks = at["check"]
            badcrc = np.flatnonzero(got != checks)
            if badcrc.size:
                k = int(badcrc[0])
                p, s = int(ptr[k]), int(size[k])
                sample, field = ow[k]
                self._fail("V6", "payload [%d, %d+%d) has CRC-32C %08x, the allocation table says %08x"
                           % (p, p, s, int(got[k]), int(checks[k])), cls=ChecksumError, sample=int(sample),
                           field=self.fields[field].name, entry=k)
            crc_bytes = int(size.sum())
        # V7: gaps are zero (for the minor versions this reader knows)
        gaps = self.version[1] <= F.VERSION_MINOR
        if gaps:
            mv = np.frombuffer(b, dtype=np.uint8)
            # the gap after the descriptors, around the class-names blocks
            blocks = sorted(f.names_block for f in self.fields if f.names_block is not None)
            g_starts = [self.field_desc_ptr + len(self.descriptor_bytes)] + [p + sz for p, sz in blocks]
            g_stops = [p for p, _ in blocks] + [self.data_ptr]
            starts = np.concatenate([[F.PREAMBLE_SIZE], g_starts, [self.data_ptr], end]).astype(np.int64)
            stops = np.concatenate([[self.field_desc_ptr], g_stops, ptr, [self.metadata_ptr]]).astype(np.int64)
            for a, z in zip(starts.tolist(), stops.tolist()):
                if z > a and mv[a:z].any():
                    first = a + int(np.flatnonzero(mv[a:z])[0])
                    self._fail("V7", "byte %d (gap [%d, %d)) is %#04x; gaps must be zero" % (first, a, z, mv[first]))
            del mv
        # V8: the class-names blocks hold the names their fields' arguments describe
        class_names = sum(1 for f in self.fields if f.names_block is not None and f.names is not None)
        return VerifyReport(num_samples=self.num_samples, num_fields=len(self.fields), num_payloads=n,
                            fields_checked=True, num_class_name_fields=class_names,
                            payload_bytes=int(size.sum()) if n else 0,
                            checksummed=bool(self.flags & F.FLAG_CHECKSUMMED), checksums_ok=checked,
                            crc_bytes=crc_bytes, gaps_checked=gaps)
