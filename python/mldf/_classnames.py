"""Class names of class-label INT fields (docs/FORMAT.md §14, docs/fields/int.md).

A class-names block is the canonical JSON of the names: a compact JSON array of strings as
Go's encoding/json writes it (no spaces; ``<``, ``>``, ``&``, U+2028 and U+2029 escaped as
``\\u003c``, ``\\u003e``, ``\\u0026``, ``\\u2028``, ``\\u2029``), its xxHash64 the field's
``names_hash``. Files of format 1.0 keep the names beside the file, in ``FILE.classes.json``.
"""

import json
import os

from ._checksum import xxh64_fast

MAX_CLASSES = 1 << 24
MAX_CLASS_NAME_LEN = 1024  # bytes of UTF-8
MAX_CLASS_NAMES_BLOCK = 64 << 20
CLASSES_SUFFIX = ".classes.json"

_ESCAPES = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def canonical_json(names):
    """The canonical bytes of a list of class names (what the names hash covers)."""
    s = json.dumps(list(names), ensure_ascii=False, separators=(",", ":"))
    for a, b in _ESCAPES:
        s = s.replace(a, b)
    return s.encode("utf-8")


def check_names(names):
    """None when the names may be stored (1..2^24 distinct names of 1..1024 bytes of UTF-8),
    else what is wrong."""
    if not 1 <= len(names) <= MAX_CLASSES:
        return "%d names (1 to %d)" % (len(names), MAX_CLASSES)
    seen = {}
    for i, n in enumerate(names):
        if not isinstance(n, str):
            return "name %d is not a string" % i
        try:
            size = len(n.encode("utf-8"))
        except UnicodeEncodeError:
            return "name %d is not UTF-8" % i
        if size == 0:
            return "name %d is empty" % i
        if size > MAX_CLASS_NAME_LEN:
            return "name %d is %d bytes (at most %d)" % (i, size, MAX_CLASS_NAME_LEN)
        if n in seen:
            return "names %d and %d are both %r" % (seen[n], i, n[:64])
        seen[n] = i
    return None


def decode_block(block, num_classes, names_hash):
    """The names a class-names block holds (rule V8), or raises ValueError saying why not."""
    block = bytes(block)
    got = xxh64_fast(block)
    if got != names_hash:
        raise ValueError("the %d-byte block hashes to %016x, the arguments say %016x" % (len(block), got, names_hash))
    try:
        text = block.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("the block is not UTF-8") from None
    if not text.startswith("["):
        raise ValueError("the block is not a JSON array")
    try:
        names = json.loads(text)
    except ValueError as e:
        raise ValueError("the block is not a JSON array of strings: %s" % e) from None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ValueError("the block is not a JSON array of strings")
    if len(names) != num_classes:
        raise ValueError("the block holds %d names, the arguments say %d classes" % (len(names), num_classes))
    why = check_names(names)
    if why is not None:
        raise ValueError(why)
    if canonical_json(names) != block:
        raise ValueError("the block is not in canonical form (compact JSON as FORMAT.md §14 gives it)")
    return names


def side_file_names(path, field, num_classes, names_hash):
    """The names of ``field`` in the side file ``path + ".classes.json"`` that writers of
    format 1.0 left beside the file, when they match the field's arguments; else None."""
    try:
        with open(os.fspath(path) + CLASSES_SUFFIX, "rb") as f:
            data = f.read(MAX_CLASS_NAMES_BLOCK + 1)
    except OSError:
        return None
    try:
        names = json.loads(data.decode("utf-8")).get(field)
    except (ValueError, AttributeError):
        return None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names) or len(names) != num_classes:
        return None
    try:
        if xxh64_fast(canonical_json(names)) != names_hash:
            return None
    except UnicodeEncodeError:
        return None
    return names
