// Package scdl reads, writes and validates SCDL archives: the on-disk layout of NVIDIA
// BioNeMo's single-cell data loader (SingleCellMemMapDataset), a directory of CSR arrays with
// a binary header and per-gene and per-cell feature tables. docs/SCDL.md states the bytes;
// this file states them for the code.
//
// An archive is a directory:
//
//	header.sch                 binary header, big-endian (Header)
//	data.npy                   nnz values, raw little-endian, no NPY header (np.memmap)
//	col_ptr.npy                nnz gene (column) indices, raw, smallest uint for genes-1
//	row_ptr.npy                cells+1 offsets into data/col_ptr, raw, smallest uint for nnz
//	metadata.json              {"num_rows": cells}
//	version.json               a JSON string: the version of the library that wrote it
//	var_features/              per-gene tables, one block per run of inputs with equal tables
//	    dataframe_<i>.parquet  the block's gene table (one row per gene)
//	    cumulative_sum_index.npy  int64 NPY: -1, then the cumulative cell count after each block
//	    labels.npy             NPY '<U<n>' array: one label (the input's path) per block
//	    labels.json            the same labels as a JSON list
//	    version.npy            NPY 0-d unicode string: the library version
//	obs_features/              per-cell tables, same files; a block is a run of inputs whose
//	                           tables have the same column names (one row per cell)
//
// Despite their .npy names, data.npy, col_ptr.npy and row_ptr.npy are raw arrays (numpy
// memmaps) in the machine's byte order, which is little-endian everywhere BioNeMo runs; their
// dtypes are known only from the header. The feature directories' .npy files are real NPY
// files (np.save).
package scdl

import (
	"errors"
	"fmt"
)

// Magic is the header's first four bytes.
const Magic = "SCDL"

// Version is the schema version this package writes (BioNeMo's CurrentSCDLVersion).
var Version = [3]uint8{0, 1, 0}

// LibraryVersion is written to version.json and the feature indices' version.npy, where
// BioNeMo writes its package version; BioNeMo's loader does not read either back.
const LibraryVersion = "0.1.0"

// EndianNetwork is the only endianness value the header may hold.
const EndianNetwork = 1

// Backend says how the arrays are stored.
type Backend uint32

// Backends.
const (
	BackendMemmapV0        Backend = 1 // one file per array: the only backend this package writes
	BackendChunkedMemmapV0 Backend = 2 // rows split across chunk directories (read: header only)
)

func (b Backend) String() string {
	switch b {
	case BackendMemmapV0:
		return "MEMMAP_V0"
	case BackendChunkedMemmapV0:
		return "CHUNKED_MEMMAP_V0"
	}
	return fmt.Sprintf("Backend(%d)", uint32(b))
}

// DType is an element type (BioNeMo's ArrayDType).
type DType uint32

// DTypes, with their header values.
const (
	Uint8       DType = 1
	Uint16      DType = 2
	Uint32      DType = 3
	Uint64      DType = 4
	Float16     DType = 5
	Float32     DType = 6
	Float64     DType = 7
	String      DType = 8 // feature indices (parquet tables)
	FixedString DType = 9
)

var dtypeNames = map[DType]string{Uint8: "uint8", Uint16: "uint16", Uint32: "uint32", Uint64: "uint64",
	Float16: "float16", Float32: "float32", Float64: "float64", String: "string", FixedString: "fixed_string"}

func (d DType) String() string {
	if s, ok := dtypeNames[d]; ok {
		return s
	}
	return fmt.Sprintf("DType(%d)", uint32(d))
}

// Valid reports whether d is one of the enum's values.
func (d DType) Valid() bool { _, ok := dtypeNames[d]; return ok }

// Size returns the element size in bytes of a numeric dtype, or 0.
func (d DType) Size() int {
	switch d {
	case Uint8:
		return 1
	case Uint16, Float16:
		return 2
	case Uint32, Float32:
		return 4
	case Uint64, Float64:
		return 8
	}
	return 0
}

// SmallestUint returns the narrowest unsigned dtype that holds x (BioNeMo's
// smallest_uint_dtype: x < 2^bits).
func SmallestUint(x uint64) DType {
	switch {
	case x < 1<<8:
		return Uint8
	case x < 1<<16:
		return Uint16
	case x < 1<<32:
		return Uint32
	}
	return Uint64
}

// File and array names. In the header an array is named by BioNeMo's FileNames enum member
// (DATA, ROWPTR, COLPTR), not by its file name; the loader maps one to the other.
const (
	HeaderFile   = "header.sch"
	DataFile     = "data.npy"
	RowPtrFile   = "row_ptr.npy"
	ColPtrFile   = "col_ptr.npy"
	MetadataFile = "metadata.json"
	VersionFile  = "version.json"
	VarFeatures  = "var_features"
	ObsFeatures  = "obs_features"

	ArrayData   = "DATA"
	ArrayRowPtr = "ROWPTR"
	ArrayColPtr = "COLPTR"

	CumSumFile         = "cumulative_sum_index.npy"
	LabelsFile         = "labels.json" // the labels as newer BioNeMo reads them (before labels.npy)
	LabelsNPYFile      = "labels.npy"  // the labels as bionemo-scdl 0.1.x reads them
	FeatureVersionFile = "version.npy"
)

// arrayFiles maps the header's array names to their files.
var arrayFiles = map[string]string{ArrayData: DataFile, ArrayRowPtr: RowPtrFile, ArrayColPtr: ColPtrFile}

// The default names of the single column stored when a table has no columns but an index
// (BioNeMo's var_feature_index_name and obs_feature_index_name).
const (
	VarIndexColumn = "var_feature_id"
	ObsIndexColumn = "obs_feature_id"
)

// Limits a reader applies to untrusted headers.
const (
	maxNameBytes  = 1024    // BioNeMo's validate(): names longer than this are refused
	maxHeaderSize = 1 << 26 // a header larger than 64 MiB is refused before reading it
)

// Errors. Every validation error wraps ErrInvalid and names the rule it broke.
var (
	ErrInvalid     = errors.New("invalid SCDL archive")
	ErrUnsupported = errors.New("unsupported SCDL archive")
	ErrExists      = errors.New("output exists and is not an SCDL archive")
	ErrInput       = errors.New("invalid single-cell input")
)

// RuleError is a broken validation rule: which rule, in which part of the archive.
type RuleError struct {
	Rule  string // short name of the rule, e.g. "magic", "row_ptr monotonic"
	Where string // the file or array, e.g. "header.sch", "ROWPTR (row_ptr.npy)"
	Msg   string
}

func (e *RuleError) Error() string {
	return fmt.Sprintf("%s: rule %q: %s", e.Where, e.Rule, e.Msg)
}

// Unwrap makes every RuleError an ErrInvalid.
func (e *RuleError) Unwrap() error { return ErrInvalid }

func ruleErr(rule, where, format string, args ...any) error {
	return &RuleError{Rule: rule, Where: where, Msg: fmt.Sprintf(format, args...)}
}
