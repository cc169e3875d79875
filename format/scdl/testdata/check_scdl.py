#!/usr/bin/env python3
"""Opens an SCDL archive the way BioNeMo's SingleCellMemMapDataset.load does, with numpy
only (no bionemo install is possible here), and prints what it found as JSON.

It parses header.sch itself (big-endian, per the schema), maps DATA, ROWPTR and COLPTR with
np.memmap using the header's dtypes and the FileNames mapping, reads metadata.json, and the
feature indices' cumulative_sum_index.npy, labels.npy and version.npy with np.load (labels.npy
with allow_pickle=False: it must hold no pickle; bionemo-scdl 0.1.x loads it with
allow_pickle=True, newer BioNeMo with False) and labels.json, when present, with json (newer
BioNeMo reads it first); the two must agree. Parquet tables are not read: this machine has no
pyarrow.

Usage: check_scdl.py ARCHIVE_DIR
"""
import json
import os
import struct
import sys

import numpy as np

DTYPES = {1: "uint8", 2: "uint16", 3: "uint32", 4: "uint64", 5: "float16", 6: "float32", 7: "float64"}
FILES = {"DATA": "data.npy", "ROWPTR": "row_ptr.npy", "COLPTR": "col_ptr.npy"}


def parse_header(b):
    assert b[:4] == b"SCDL", b[:4]
    major, minor, point, endian = b[4], b[5], b[6], b[7]
    assert endian == 1
    backend, narr = struct.unpack("!II", b[8:16])
    off = 16

    def string():
        nonlocal off
        (n,) = struct.unpack("!I", b[off:off + 4])
        s = b[off + 4:off + 4 + n].decode("utf-8")
        off += 4 + n
        return s

    def shape():
        nonlocal off
        has = b[off]
        off += 1
        if not has:
            return None
        (n,) = struct.unpack("!I", b[off:off + 4])
        dims = struct.unpack("!%dI" % n, b[off + 4:off + 4 + 4 * n])
        off += 4 + 4 * n
        return list(dims)

    arrays = []
    for _ in range(narr):
        name = string()
        length, dtype = struct.unpack("!QI", b[off:off + 12])
        off += 12
        arrays.append({"name": name, "length": length, "dtype": dtype, "shape": shape()})
    features = []
    if off < len(b):
        (nfi,) = struct.unpack("!I", b[off:off + 4])
        off += 4
        for _ in range(nfi):
            name = string()
            length, dtype, nfiles = struct.unpack("!QII", b[off:off + 16])
            off += 16
            files = [string() for _ in range(nfiles)]
            features.append({"name": name, "length": length, "dtype": dtype, "files": files, "shape": shape()})
    chunked = None
    if off < len(b):
        chunked = b[off]
        off += 1
    assert off == len(b), (off, len(b))
    return {"version": [major, minor, point], "backend": backend, "arrays": arrays, "features": features, "chunked": chunked}


def main(path):
    with open(os.path.join(path, "header.sch"), "rb") as f:
        header = parse_header(f.read())
    arrays = {}
    for a in header["arrays"]:
        dtype = DTYPES[a["dtype"]]
        # SingleCellMemMapDataset._load_mmap_file_if_exists: np.memmap(file, dtype, mode)
        m = np.memmap(os.path.join(path, FILES[a["name"]]), dtype=dtype, mode="r")
        assert len(m) == a["length"], (a, len(m))
        arrays[a["name"]] = m
    with open(os.path.join(path, "metadata.json")) as f:
        meta = json.load(f)
    with open(os.path.join(path, "version.json")) as f:
        version = json.load(f)
    features = {}
    for fi in header["features"]:
        d = os.path.join(path, fi["name"])
        cum = np.load(os.path.join(d, "cumulative_sum_index.npy"))
        labels = np.load(os.path.join(d, "labels.npy"), allow_pickle=False).tolist()
        if os.path.exists(os.path.join(d, "labels.json")):
            with open(os.path.join(d, "labels.json")) as f:
                assert json.load(f) == labels, (fi["name"], labels)
        ver = np.load(os.path.join(d, "version.npy")).item()
        for p in fi["files"]:
            assert os.path.exists(os.path.join(path, p)), p
        features[fi["name"]] = {"cumsum": cum.tolist(), "cumsum_dtype": str(cum.dtype), "labels": labels, "version": ver}
    rp, data, cols = arrays["ROWPTR"], arrays["DATA"], arrays["COLPTR"]
    rows = []
    for i in range(len(rp) - 1):
        # SingleCellMemMapDataset.get_row: data[row_index[i]:row_index[i+1]]
        s, e = int(rp[i]), int(rp[i + 1])
        rows.append([data[s:e].astype(float).tolist(), cols[s:e].astype(int).tolist()])
    out = {"header": header, "num_rows": meta["num_rows"], "version": version, "features": features,
           "dtypes": {k: str(v.dtype) for k, v in arrays.items()}, "rows": rows}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
