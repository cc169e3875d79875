"""BioNeMo SCDL (bionemo-scdl 0.1.3 from the test venv) against the archives convert writes
(`format: scdl`) from the fixtures in testdata/scdl: CSR, CSC and dense h5ad and a 10x folder.
SingleCellMemMapDataset must open them as they are, header included, cell for cell equal to
anndata's view of the input, features equal, and BioNeMo's own h5ad converter must agree
with ours where it handles the input.

bionemo-scdl 0.1.3 reads each feature directory's block labels from `labels.npy`
(np.load, allow_pickle=True); newer BioNeMo reads `labels.json` first. Our archives hold
both; labels.npy must be a plain unicode array that loads without pickle. A missing
categorical obs value is None in BioNeMo's archive and NaN in ours."""

import gzip
import json
import os
import warnings

import numpy as np
import pytest

from interop_util import REPO, convert_bin, run  # noqa: F401 (convert_bin is a fixture)

pytest.importorskip("bionemo.scdl", reason="bionemo-scdl is not installed (scripts/deps test makes the venv with it)")
ad = pytest.importorskip("anndata", reason="anndata is not installed")
import scipy.io  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from bionemo.scdl.io.single_cell_memmap_dataset import SingleCellMemMapDataset  # noqa: E402

FIX = os.path.join(REPO, "testdata", "scdl")
KINDS = ["csr", "csc", "dense", "tenx"]


def source(kind):
    if kind == "tenx":
        return {"type": "mtx10x", "path": os.path.join(FIX, "tenx")}
    return {"type": "h5ad", "inputs": [os.path.join(FIX, "small_%s.h5ad" % kind)]}


def expected(kind):
    """anndata's view of the input: (cells x genes CSR matrix, per-gene feature columns as
    strings; None for 10x)."""
    if kind == "tenx":
        with gzip.open(os.path.join(FIX, "tenx", "matrix.mtx.gz")) as f:
            m = sp.csr_matrix(scipy.io.mmread(f).T)  # 10x stores genes x cells
        with gzip.open(os.path.join(FIX, "tenx", "features.tsv.gz"), "rt") as f:
            assert f.read()  # present
        return m, None
    a = ad.read_h5ad(os.path.join(FIX, "small_%s.h5ad" % kind))
    return sp.csr_matrix(a.X), [[str(x) for x in a.var[c]] for c in a.var.columns]


@pytest.fixture(scope="module")
def ours(tmp_path_factory, convert_bin):
    d = tmp_path_factory.mktemp("scdl")
    out = {}
    for kind in KINDS:
        o = d / ("%s.scdl" % kind)
        (d / ("%s.yaml" % kind)).write_text(json.dumps({"source": source(kind), "output": str(o), "format": "scdl"}))
        run(convert_bin, "run", d / ("%s.yaml" % kind))
        out[kind] = o
    return d, out


def missing(x):
    return None if x is None or (isinstance(x, float) and x != x) else x


def open_ds(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SingleCellMemMapDataset(str(path), **kw)


def assert_cells_equal(ds, m, what):
    assert len(ds) == m.shape[0], what
    assert ds.number_of_variables() == [m.shape[1]], what
    for i in range(m.shape[0]):
        (v, c), _, _ = ds.get_row(i)
        row = m[i]
        np.testing.assert_array_equal(np.asarray(c, dtype=np.int64), row.indices, err_msg=f"{what}: cell {i} genes")
        np.testing.assert_array_equal(np.asarray(v, dtype=np.float64), row.data.astype(np.float64),
                                      err_msg=f"{what}: cell {i} values")


@pytest.mark.parametrize("kind", KINDS)
def test_bionemo_opens_our_archive(ours, kind):
    """BioNeMo opens the archive as written, parses its header (a header it cannot parse is
    only a warning, after which it would map the arrays with default dtypes) and reads the
    labels our labels.json holds, from labels.npy."""
    _, out = ours
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "Failed to load SCDL header", no legacy-format warning
        ds = SingleCellMemMapDataset(str(out[kind]))
    assert ds.header is not None
    assert [a.name for a in ds.header.arrays] == ["DATA", "ROWPTR", "COLPTR"]
    assert [f.name for f in ds.header.feature_indices] == ["var_features", "obs_features"]
    for sub, index in (("var_features", ds.var_features()), ("obs_features", ds.obs_features())):
        with open(os.path.join(out[kind], sub, "labels.json")) as f:
            labels = json.load(f)
        assert labels, sub
        assert [str(x) for x in index._labels] == labels, sub
        # labels.npy holds no pickle: the strict loader newer BioNeMo uses reads it too.
        npy = np.load(os.path.join(out[kind], sub, "labels.npy"), allow_pickle=False)
        assert npy.dtype.kind == "U" and npy.tolist() == labels, sub


@pytest.mark.parametrize("kind", KINDS)
def test_bionemo_reads_our_archive_cell_for_cell(ours, kind):
    _, out = ours
    m, genes = expected(kind)
    m.sort_indices()
    ds = open_ds(out[kind])
    assert_cells_equal(ds, m, f"our {kind} archive")
    (_, _), var, _ = ds.get_row(0, return_var_features=True)
    if genes is not None:
        assert [[str(x) for x in col] for col in var] == genes, f"our {kind} archive: var features"
    else:
        assert all(len(col) == m.shape[1] for col in var) and var, f"our {kind} archive: var features"


def test_bionemo_converter_agrees_with_ours(ours, tmp_path):
    _, out = ours
    m, _ = expected("csr")
    m.sort_indices()
    theirs = open_ds(tmp_path / "theirs", h5ad_path=os.path.join(FIX, "small_csr.h5ad"), use_X_not_raw=True)
    mine = open_ds(out["csr"])
    assert_cells_equal(theirs, m, "BioNeMo's archive of small_csr.h5ad")
    for i in range(len(theirs)):
        (a, b), av, ao = theirs.get_row(i, return_var_features=True, return_obs_features=True)
        (c, d), cv, co = mine.get_row(i, return_var_features=True, return_obs_features=True)
        np.testing.assert_array_equal(a, c, err_msg=f"cell {i} values")
        np.testing.assert_array_equal(b, d, err_msg=f"cell {i} genes")
        assert [list(x) for x in av] == [list(x) for x in cv], f"cell {i}: var features"
        # A missing categorical value is None in BioNeMo's archive and NaN in ours (both
        # read as missing by pandas); every other value is equal.
        assert [missing(x) for x in ao] == [missing(x) for x in co], f"cell {i}: obs features"


def test_convert_reads_bionemo_archive(convert_bin, tmp_path):
    """BioNeMo 0.1.3's own archive (labels.npy only, no labels.json) passes `convert verify`,
    and its labels are those BioNeMo wrote."""
    theirs = tmp_path / "theirs"
    open_ds(theirs, h5ad_path=os.path.join(FIX, "small_csr.h5ad"), use_X_not_raw=True)
    assert not (theirs / "var_features" / "labels.json").exists()
    labels = np.load(theirs / "var_features" / "labels.npy", allow_pickle=False)
    assert labels.dtype.kind == "U"
    out = run(convert_bin, "verify", theirs).stdout
    assert "OK: SCDL archive, 60 cells" in out, out
    out = run(convert_bin, "inspect", theirs).stdout
    assert "cells [0, 60) %s:" % labels[0] in out, out


@pytest.mark.parametrize("kind,why", [
    ("csc", "could not broadcast"), ("dense", "not yet implemented")])
def test_bionemo_converter_fails_where_we_convert(kind, why, tmp_path):
    """BioNeMo's own converter fails on CSC and dense h5ad (ours converts them, tests above)."""
    with pytest.raises(Exception, match=why):
        open_ds(tmp_path / "theirs", h5ad_path=os.path.join(FIX, "small_%s.h5ad" % kind), use_X_not_raw=True)
