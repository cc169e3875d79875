// Package hdf5 is a small cgo wrapper of libhdf5 (Debian libhdf5-dev) for reading AnnData
// files: open a file, list groups, read attributes and strings, and read hyperslabs of 1-D
// and 2-D datasets with HDF5's own type conversion. It reads only; without cgo every call
// returns ErrUnavailable. Files are untrusted: only regular files are opened, data outside
// the file (external storage, external links, virtual datasets) and datasets not fully
// stored are refused, and chunks, chunk caches, strings and attributes are bounded (see the
// constants).
package hdf5

import (
	"errors"
	"fmt"
)

// ErrUnavailable is returned by every call in a build without cgo (CGO_ENABLED=0).
var ErrUnavailable = errors.New("hdf5: not available in this build (built without cgo; h5ad input needs libhdf5: rebuild with CGO_ENABLED=1 and libhdf5-dev installed)")

// ErrHDF5 wraps every error reported by the library.
var ErrHDF5 = errors.New("hdf5")

// ErrNotFound is returned for a path or attribute that does not exist.
var ErrNotFound = errors.New("hdf5: not found")

// ErrExternal is returned for data that is not in the file: a path through an external link,
// a dataset with external storage, a virtual dataset. Such data is never read (an input could
// otherwise copy any file the converting machine can read into its output).
var ErrExternal = errors.New("hdf5: refers to data outside the file")

// ErrChunkTooLarge is returned for a chunked dataset whose chunks hold more than
// MaxChunkBytes: the library inflates a whole chunk for any read that touches it.
var ErrChunkTooLarge = errors.New("hdf5: chunk too large")

// ErrNotStored is returned for a dataset whose storage is not (fully) allocated: its values
// would read as the fill value, so that a few bytes could declare any size.
var ErrNotStored = errors.New("hdf5: dataset not stored")

// ErrTooLarge is returned for strings or attributes larger than a read's bound.
var ErrTooLarge = errors.New("hdf5: too large")

// Bounds of what one file may make the library hold.
const (
	// MaxChunkBytes bounds a chunk of a chunked dataset as stored before its filters
	// (elements × type size). h5py, anndata, hdf5r and HDF5Array choose chunks of at most
	// about 1 MiB; a larger chunk is inflated whole by every read that touches it.
	MaxChunkBytes = 64 << 20
	// CacheBytes bounds the chunk caches of one file's open datasets together: a dataset
	// whose chunks are larger than the library's default cache (1 MiB) gets a cache of one
	// chunk while this budget lasts, so that consecutive reads inflate each chunk once.
	CacheBytes = 256 << 20
	// MaxStringBytes bounds the bytes of one read of a string dataset (the strings and a
	// terminator each), counted as the library allocates them.
	MaxStringBytes = 256 << 20
	// MaxAttrElements bounds the elements of an attribute that is read.
	MaxAttrElements = 1 << 20
	// MaxListLinks bounds the links of a group that List reads.
	MaxListLinks = 1 << 20

	defaultChunkCache = 1 << 20 // the library's default per-dataset chunk cache
)

// Class is a dataset's element class.
type Class int

// Element classes.
const (
	ClassOther   Class = iota
	ClassInteger       // signed or unsigned integers (Signed, Size)
	ClassFloat
	ClassString // variable or fixed length
	ClassEnum   // h5py's bool is an enum of int8
)

func (c Class) String() string {
	return [...]string{"other", "integer", "float", "string", "enum"}[c]
}

// Type describes a dataset's element type.
type Type struct {
	Class  Class
	Size   int // bytes per element (for variable-length strings: the pointer size)
	Signed bool
}

// Kind is what a path names in a file.
type Kind int

// Kinds of objects.
const (
	KindNone Kind = iota
	KindGroup
	KindDataset
)

func opErr(op, path, msg string) error {
	if msg == "" {
		msg = "failed"
	}
	return fmt.Errorf("%w: %s %s: %s", ErrHDF5, op, path, msg)
}
