"""MLDF 1.x constants, metadata struct layouts and field-argument decoders (docs/FORMAT.md,
docs/fields/*.md). No I/O here."""

import struct

import numpy as np

SIGNATURE = b"\x89MLDF\r\n\x1a\n"
SIGNATURE_SIZE = 9
HEADER_OFFSET = 9
HEADER_SIZE = 64
PREAMBLE_SIZE = 73
FIELD_DESC_SIZE = 208
ARGUMENTS_SIZE = 128
NAME_SIZE = 64
ALLOC_ENTRY_SIZE = 16
META_ALIGN = 8
MIN_PAGE_SIZE = 4096
HEADER_CHECKSUM_OFFSET = 56

VERSION_MAJOR = 1
VERSION_MINOR = 1  # the newest minor this reader knows (V7 checks gaps up to it)
VERSION_MINOR_CLASS_NAMES = 1  # class-names blocks (docs/FORMAT.md §14)

FLAG_LITTLE_ENDIAN = 1 << 0
FLAG_COMPRESSED = 1 << 1
FLAG_CHECKSUMMED = 1 << 2
FLAG_ENCRYPTED = 1 << 3

# header: version_major u16, version_minor u16, flags u32, num_samples u64, num_fields u16,
# pad u16, page_size u32, field_desc_ptr u64, metadata_ptr u64, data_ptr u64,
# alloc_table_ptr u64, checksum u64
HEADER_STRUCT = struct.Struct("<HHIQHHIQQQQQ")
assert HEADER_STRUCT.size == HEADER_SIZE

INT, FLOAT, BYTES, NDARRAY, JSON = 1, 2, 3, 4, 5
IMAGE_RAW, IMAGE_JPEG, IMAGE_PNG = 10, 11, 12
AUDIO_WAVEFORM, AUDIO_COMPRESSED, AUDIO_SPECTROGRAM, AUDIO_CODEC_TOKENS = 20, 21, 22, 23
TEXT_RAW, TEXT_TOKENIZED, TEXT_PACKED, TEXT_HIERARCHICAL = 40, 41, 42, 43
MULTIMODAL_SAMPLE = 50

TYPE_NAMES = {
    INT: "INT", FLOAT: "FLOAT", BYTES: "BYTES", NDARRAY: "NDARRAY", JSON: "JSON",
    IMAGE_RAW: "IMAGE_RAW", IMAGE_JPEG: "IMAGE_JPEG", IMAGE_PNG: "IMAGE_PNG",
    AUDIO_WAVEFORM: "AUDIO_WAVEFORM", AUDIO_COMPRESSED: "AUDIO_COMPRESSED",
    AUDIO_SPECTROGRAM: "AUDIO_SPECTROGRAM", AUDIO_CODEC_TOKENS: "AUDIO_CODEC_TOKENS",
    TEXT_RAW: "TEXT_RAW", TEXT_TOKENIZED: "TEXT_TOKENIZED", TEXT_PACKED: "TEXT_PACKED",
    TEXT_HIERARCHICAL: "TEXT_HIERARCHICAL", MULTIMODAL_SAMPLE: "MULTIMODAL_SAMPLE",
}

# kinds of metadata struct
K_SCALAR, K_BLOB, K_IMAGE, K_AUDIO, K_TEXT = "scalar", "blob", "image", "audio", "text"


def kind_of(type_id):
    if type_id in (INT, FLOAT):
        return K_SCALAR
    if type_id in (BYTES, JSON, NDARRAY, MULTIMODAL_SAMPLE):
        return K_BLOB
    if IMAGE_RAW <= type_id <= IMAGE_PNG:
        return K_IMAGE
    if AUDIO_WAVEFORM <= type_id <= AUDIO_CODEC_TOKENS:
        return K_AUDIO
    if TEXT_RAW <= type_id <= TEXT_HIERARCHICAL:
        return K_TEXT
    return None


META_SIZE = {K_SCALAR: 8, K_BLOB: 16, K_IMAGE: 24, K_AUDIO: 24, K_TEXT: 16}


def _struct_dtype(members, itemsize):
    return np.dtype({"names": [m[0] for m in members], "formats": [m[1] for m in members],
                     "offsets": [m[2] for m in members], "itemsize": itemsize})


_REF = [("data_ptr", "<u8", 0), ("data_size", "<u4", 8)]
META_DTYPE = {
    K_BLOB: _struct_dtype(_REF, 16),
    K_IMAGE: _struct_dtype(_REF + [("height", "<u2", 12), ("width", "<u2", 14), ("channels", "u1", 16),
                                   ("mode", "u1", 17)], 24),
    K_AUDIO: _struct_dtype(_REF + [("num_samples", "<u4", 12), ("sample_rate", "<u4", 16),
                                   ("num_channels", "<u2", 20), ("bit_depth", "u1", 22), ("codec", "u1", 23)], 24),
    K_TEXT: _struct_dtype(_REF + [("num_tokens", "<u2", 12), ("encoding", "u1", 14)], 16),
}
SCALAR_DTYPE = {INT: np.dtype("<i8"), FLOAT: np.dtype("<f8")}

# struct.Struct for the whole metadata struct of each kind (payload ref first)
META_STRUCT = {
    K_BLOB: struct.Struct("<QI4x"),
    K_IMAGE: struct.Struct("<QIHHBB6x"),
    K_AUDIO: struct.Struct("<QIIIHBB"),
    K_TEXT: struct.Struct("<QIHBx"),
}
META_NAMES = {
    K_BLOB: ("data_ptr", "data_size"),
    K_IMAGE: ("data_ptr", "data_size", "height", "width", "channels", "mode"),
    K_AUDIO: ("data_ptr", "data_size", "num_samples", "sample_rate", "num_channels", "bit_depth", "codec"),
    K_TEXT: ("data_ptr", "data_size", "num_tokens", "encoding"),
}

IMAGE_MODE_RAW, IMAGE_MODE_JPEG, IMAGE_MODE_PNG = 0, 1, 2
AUDIO_CODEC_PCM, AUDIO_CODEC_FLAC = 0, 1
TEXT_UTF8, TEXT_TOKENS32, TEXT_TOKENS16 = 0, 1, 2


def row_layout(type_ids):
    """C-aligned offsets of each field's struct in a metadata row, and the row size."""
    offs, off = [], 0
    for t in type_ids:
        off = (off + META_ALIGN - 1) // META_ALIGN * META_ALIGN
        offs.append(off)
        off += META_SIZE[kind_of(t)]
    return offs, (off + META_ALIGN - 1) // META_ALIGN * META_ALIGN


# ---- field arguments (docs/fields/*.md; format/mldf/args.go is the reference, and
# python/tests/test_args.py checks these decoders against the vectors it writes) ----

_IMAGE_ARG_MODES = {0: "raw", 1: "jpeg", 2: "png", 3: "smart"}
_IMAGE_FILTERS = {1: "nearest", 2: "box", 3: "linear", 4: "catmullrom", 5: "mitchell", 6: "lanczos"}
AUDIO_FORMATS = {1: "int16", 2: "int32", 3: "float32", 4: "flac"}
AUDIO_DTYPES = {"int16": np.dtype("<i2"), "int32": np.dtype("<i4"), "float32": np.dtype("<f4")}
NDARRAY_FIXED, NDARRAY_NPY = 0, 1


def _image_args(a):
    if a[0] != 1:
        return None
    return {
        "version": a[0],
        "mode": _IMAGE_ARG_MODES.get(a[1], a[1]),
        "jpeg_quality": a[2],
        "channels": a[3],
        "max_resolution": int.from_bytes(a[4:8], "little"),
        "filter": _IMAGE_FILTERS.get(a[8], a[8]),
        "exif_orientation": bool(a[9] & 1),
        "subsampling": "4:2:0" if a[10] == 0 else a[10],
        "max_pixels": int.from_bytes(a[16:24], "little", signed=True),
    }


def _audio_args(a):
    if a[0] != 1:
        return None
    return {
        "version": a[0],
        "format": AUDIO_FORMATS.get(a[1], a[1]),
        "mono": a[2] == 1,
        "on_long": "skip" if a[3] == 1 else "truncate",
        "sample_rate": int.from_bytes(a[4:8], "little"),
        "max_duration": struct.unpack_from("<d", a, 8)[0],
        "bit_depth": a[16],
        "passthrough": a[17] == 1,
        "resampler": "kaiser-sinc" if a[18] == 1 else a[18],
        "stopband_db": a[19],
        "passband": int.from_bytes(a[20:22], "little") / 1000.0,
    }


def _ndarray_args(a):
    if a[0] != 1:
        return None
    ndim = a[18]
    if a[1] == NDARRAY_FIXED and ndim > 8:
        return None
    out = {"version": a[0], "layout": {NDARRAY_FIXED: "fixed", NDARRAY_NPY: "npy"}.get(a[1], a[1])}
    if a[1] == NDARRAY_FIXED:
        out["dtype"] = bytes(a[2:18]).rstrip(b"\0").decode("ascii", "replace")
        out["shape"] = tuple(int.from_bytes(a[24 + 8 * d:32 + 8 * d], "little") for d in range(ndim))
    return out


def _text_args(type_id, a):
    if a[0] != 1:
        return None
    if type_id == TEXT_RAW:
        return {"version": 1}
    if type_id not in (TEXT_TOKENIZED, TEXT_PACKED):
        return None
    flags = int.from_bytes(a[2:4], "little")
    return {
        "version": 1,
        "width": a[1],
        "end": bool(flags & 1),
        "pad_last": bool(flags & 2),
        "end_id": int.from_bytes(a[4:8], "little"),
        "vocab_size": int.from_bytes(a[8:12], "little"),
        "seq_len": int.from_bytes(a[12:16], "little"),
        "pad_id": int.from_bytes(a[16:20], "little"),
        "tokenizer": bytes(a[24:56]).rstrip(b"\0").decode("ascii", "replace"),
    }


def _int_args(a):
    # docs/fields/int.md: a class label; its names are in a class-names block (names_ptr,
    # names_size; format 1.1) or, for files of format 1.0, in FILE.classes.json
    if a[0] != 1 or a[1] != 1:
        return None
    return {
        "version": a[0],
        "kind": "class_label",
        "num_classes": int.from_bytes(a[4:8], "little"),
        "names_hash": int.from_bytes(a[8:16], "little"),
        "names_ptr": int.from_bytes(a[16:24], "little"),
        "names_size": int.from_bytes(a[24:28], "little"),
    }


def decode_arguments(type_id, raw):
    """The field's arguments as a dict where docs/fields documents them, {} when all zero,
    else None (use Field.raw_arguments)."""
    if not any(raw):
        return {}
    k = kind_of(type_id)
    try:
        if k == K_IMAGE:
            return _image_args(raw)
        if k == K_AUDIO:
            return _audio_args(raw)
        if type_id == NDARRAY:
            return _ndarray_args(raw)
        if k == K_TEXT:
            return _text_args(type_id, raw)
        if type_id == INT:
            return _int_args(raw)
    except (ValueError, struct.error):
        return None
    return None
