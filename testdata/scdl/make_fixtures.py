#!/usr/bin/env python3
"""Writes the single-cell fixtures of testdata/scdl/ with AnnData itself (Debian
python3-anndata 0.8.0), and expected.json: every cell's stored values and gene indices, and
the obs and var tables, as AnnData reads them back.

  small_csr.h5ad    60 cells x 50 genes, X as CSR float32, obs with int, float, bool,
                    string and categorical (with missing values) columns, var with columns
  small_csc.h5ad    the same matrix stored as CSC
  small_dense.h5ad  the same matrix stored dense (float64)
  small_raw.h5ad    X normalised, raw.X the counts (int64) with its own var
  other_genes.h5ad  25 cells x 30 genes, obs with the same columns, var index only
  tenx/             a 10x Genomics directory (matrix.mtx.gz, features.tsv.gz, barcodes.tsv.gz)
                    of other_genes, its entries in shuffled order

Run from the repository root: /usr/bin/python3 testdata/scdl/make_fixtures.py testdata/scdl
"""
import gzip
import json
import os
import sys

import anndata
import numpy as np
import pandas as pd
import scipy.sparse as sp

out = sys.argv[1]
rng = np.random.default_rng(17)


def matrix(n, g, density):
    m = sp.random(n, g, density=density, format="csr", random_state=rng, dtype=np.float32)
    m.data = np.round(m.data * 20 + 1)  # counts-like values
    return m


def obs_frame(n, prefix):
    ct = pd.Categorical(rng.choice(["T", "B", "NK"], n), categories=["B", "NK", "T"])
    ct[::7] = np.nan
    return pd.DataFrame(
        {
            "n_counts": rng.integers(100, 5000, n),
            "pct_mito": rng.random(n),
            "is_doublet": rng.random(n) < 0.1,
            "donor": [f"donor{i % 3}" for i in range(n)],
            "cell_type": ct,
        },
        index=[f"{prefix}-{i:03d}" for i in range(n)],
    )


def var_frame(g):
    return pd.DataFrame(
        {"gene_symbols": [f"GENE{i}" for i in range(g)], "highly_variable": np.arange(g) % 4 == 0},
        index=[f"ENSG{i:011d}" for i in range(g)],
    )


def rows_of(m):
    m = sp.csr_matrix(m)
    return [[m.data[m.indptr[i]:m.indptr[i + 1]].astype(float).tolist(),
             m.indices[m.indptr[i]:m.indptr[i + 1]].astype(int).tolist()] for i in range(m.shape[0])]


def frame_json(df):
    cols = {"_index": df.index.astype(str).tolist()}
    for c in df.columns:
        v = df[c]
        if isinstance(v.dtype, pd.CategoricalDtype):
            cols[c] = [None if pd.isna(x) else str(x) for x in v]
        elif v.dtype == bool:
            cols[c] = [bool(x) for x in v]
        elif np.issubdtype(v.dtype, np.integer):
            cols[c] = [int(x) for x in v]
        elif np.issubdtype(v.dtype, np.floating):
            cols[c] = [float(x) for x in v]
        else:
            cols[c] = [str(x) for x in v]
    return cols


expected = {}
X = matrix(60, 50, 0.15)
obs, var = obs_frame(60, "small"), var_frame(50)
for name, x in [("small_csr", X), ("small_csc", sp.csc_matrix(X)), ("small_dense", X.toarray().astype(np.float64))]:
    a = anndata.AnnData(X=x, obs=obs.copy(), var=var.copy())
    a.write_h5ad(os.path.join(out, name + ".h5ad"))
    b = anndata.read_h5ad(os.path.join(out, name + ".h5ad"))
    expected[name] = {"rows": rows_of(b.X), "obs": frame_json(b.obs), "var": frame_json(b.var)}

counts = X.copy()
counts.data = counts.data.astype(np.int64)
a = anndata.AnnData(X=counts.astype(np.float32), obs=obs.copy(), var=var.copy())
a.raw = anndata.AnnData(X=sp.csr_matrix(counts, dtype=np.int64), obs=obs.copy(), var=var.copy())
norm = counts.astype(np.float32).multiply(1.0 / np.maximum(counts.sum(axis=1), 1)).tocsr()
a.X = sp.csr_matrix(norm, dtype=np.float32)
a.write_h5ad(os.path.join(out, "small_raw.h5ad"))
b = anndata.read_h5ad(os.path.join(out, "small_raw.h5ad"))
expected["small_raw"] = {"rows": rows_of(b.raw.X), "rows_x": rows_of(b.X), "obs": frame_json(b.obs), "var": frame_json(b.raw.var)}

Y = matrix(25, 30, 0.3)
obs2 = obs_frame(25, "other")
var2 = pd.DataFrame(index=[f"ENSG{i:011d}" for i in range(30)])
a = anndata.AnnData(X=Y, obs=obs2, var=var2)
a.write_h5ad(os.path.join(out, "other_genes.h5ad"))
b = anndata.read_h5ad(os.path.join(out, "other_genes.h5ad"))
expected["other_genes"] = {"rows": rows_of(b.X), "obs": frame_json(b.obs), "var": frame_json(b.var)}

# 10x: genes x cells, 1-based, entries shuffled (the reader must not rely on their order).
tenx = os.path.join(out, "tenx")
os.makedirs(tenx, exist_ok=True)
coo = Y.tocoo()
order = rng.permutation(coo.nnz)
with gzip.open(os.path.join(tenx, "matrix.mtx.gz"), "wt") as f:
    f.write("%%MatrixMarket matrix coordinate integer general\n%metadata_json: {}\n")
    f.write(f"{Y.shape[1]} {Y.shape[0]} {coo.nnz}\n")
    for k in order:
        f.write(f"{coo.col[k] + 1} {coo.row[k] + 1} {int(coo.data[k])}\n")
with gzip.open(os.path.join(tenx, "features.tsv.gz"), "wt") as f:
    for i in range(30):
        f.write(f"ENSG{i:011d}\tGENE{i}\tGene Expression\n")
with gzip.open(os.path.join(tenx, "barcodes.tsv.gz"), "wt") as f:
    for i in range(25):
        f.write(f"AAACCTG{i:04d}-1\n")
expected["tenx"] = {"rows": rows_of(Y.astype(np.int64).astype(np.float32))}

with open(os.path.join(out, "expected.json"), "w") as f:
    json.dump(expected, f)
