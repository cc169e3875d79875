#!/usr/bin/env python3
"""Writes a large AnnData .h5ad for the SCDL benchmark with h5py, in row blocks (bounded
memory): X as CSR float32 (counts 1..30), a fixed number of stored genes per cell (density
of the genes, evenly spread with a random offset, so columns are sorted and unique), int32
indices and int64 indptr as anndata writes them; obs with the cell names, a categorical and
a float column; var with the gene ids. Uncompressed, contiguous datasets.

Usage: gen_h5ad.py OUT.h5ad CELLS GENES DENSITY
"""
import sys

import h5py
import numpy as np

out, cells, genes, density = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
per = max(1, int(genes * density))
stride = genes // per
nnz = cells * per
rng = np.random.default_rng(1)
block = max(1, 2_000_000 // per)
str_dt = h5py.string_dtype()


def frame(g, index, n):
    g.attrs["encoding-type"] = "dataframe"
    g.attrs["encoding-version"] = "0.2.0"
    g.attrs["_index"] = "_index"
    d = g.create_dataset("_index", (n,), dtype=str_dt)
    d.attrs["encoding-type"] = "string-array"
    d.attrs["encoding-version"] = "0.2.0"
    for lo in range(0, n, 1_000_000):
        hi = min(n, lo + 1_000_000)
        d[lo:hi] = np.array([f"{index}{i}" for i in range(lo, hi)], dtype=object)


with h5py.File(out, "w") as f:
    f.attrs["encoding-type"] = "anndata"
    f.attrs["encoding-version"] = "0.1.0"
    x = f.create_group("X")
    x.attrs["encoding-type"] = "csr_matrix"
    x.attrs["encoding-version"] = "0.1.0"
    x.attrs["shape"] = np.array([cells, genes])
    data = x.create_dataset("data", (nnz,), dtype=np.float32)
    indices = x.create_dataset("indices", (nnz,), dtype=np.int32)
    x.create_dataset("indptr", data=np.arange(cells + 1, dtype=np.int64) * per)
    base = (np.arange(per, dtype=np.int32) * stride)[None, :]
    for lo in range(0, cells, block):
        hi = min(cells, lo + block)
        cols = base + rng.integers(0, stride, size=(hi - lo, 1), dtype=np.int32)
        indices[lo * per:hi * per] = cols.ravel()
        data[lo * per:hi * per] = rng.integers(1, 31, size=(hi - lo) * per).astype(np.float32)
    obs = f.create_group("obs")
    frame(obs, "cell", cells)
    obs.attrs["column-order"] = np.array(["cell_type", "pct_mito"], dtype=object)
    ct = obs.create_group("cell_type")
    ct.attrs["encoding-type"] = "categorical"
    ct.attrs["encoding-version"] = "0.2.0"
    ct.attrs["ordered"] = False
    ct.create_dataset("categories", data=np.array(["B", "NK", "T", "mono"], dtype=object), dtype=str_dt)
    ct.create_dataset("codes", data=(np.arange(cells) % 4).astype(np.int8))
    obs.create_dataset("pct_mito", data=rng.random(cells))
    var = f.create_group("var")
    frame(var, "ENSG", genes)
    var.attrs["column-order"] = np.array([], dtype=float)  # what anndata writes for no columns
    for g in ["layers", "obsm", "obsp", "uns", "varm", "varp"]:
        f.create_group(g).attrs["encoding-type"] = "dict"
print(f"{out}: {cells} cells x {genes} genes, {nnz} stored values")
