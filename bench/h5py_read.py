#!/usr/bin/env python3
"""The baseline: read the same matrix with h5py, in blocks of rows, as a converter must
(indptr, then each block's indices and data), converting values to float32 as BioNeMo does.
Prints the seconds taken and the values read.

Usage: h5py_read.py FILE.h5ad [ROWS_PER_BLOCK]
"""
import sys
import time

import h5py
import numpy as np

path = sys.argv[1]
step = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
t0 = time.time()
with h5py.File(path, "r") as f:
    x = f["X"]
    indptr = x["indptr"][:]
    n = 0
    total = 0.0
    for lo in range(0, len(indptr) - 1, step):
        hi = min(len(indptr) - 1, lo + step)
        a, b = indptr[lo], indptr[hi]
        idx = x["indices"][a:b]
        val = x["data"][a:b].astype(np.float32)
        n += len(val)
        total += float(idx[-1]) if len(idx) else 0
print(f"{time.time() - t0:.3f} {n}")
