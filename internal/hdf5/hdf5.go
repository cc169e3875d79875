// Package hdf5 is a small cgo wrapper of libhdf5 (Debian libhdf5-dev) for reading AnnData
// files: open a file, list groups, read attributes and strings, and read hyperslabs of 1-D
// and 2-D datasets with HDF5's own type conversion. It reads only; without cgo every call
// returns ErrUnavailable.
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
