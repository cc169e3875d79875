package encoders

import (
	"fmt"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/sample"
)

// ErrNPY reports a malformed or unsupported .npy value (manifest.ErrNPY).
var ErrNPY = mldf.ErrNPY

// NDArray layouts, stored in argument byte 1.
const (
	NDArrayFixed    = mldf.NDArrayFixed // payload is the raw C-order array data; dtype and shape in the arguments
	NDArrayNPYFiles = mldf.NDArrayNPY   // payload is a whole .npy file per sample (shape may vary)
)

// MaxDims is the largest number of dimensions a fixed-shape NDARRAY field records.
const MaxDims = mldf.MaxNDArrayDims

// NDArray is an NDARRAY field. Its arguments are mldf.NDArrayArgs.
type NDArray struct {
	base
	layout uint8
	dtype  string
	shape  []uint64
	size   uint64 // payload bytes per sample in the fixed layout
}

// NewNDArray returns an NDARRAY field. With a dtype and a shape, every sample must be a .npy
// of exactly that dtype and shape, and its raw data is stored (fixed layout). With an empty
// dtype, each sample's whole .npy file is stored, so shapes may differ.
func NewNDArray(name, dtype string, shape []uint64) (*NDArray, error) {
	b, err := newBase(name, mldf.TypeNDArray)
	if err != nil {
		return nil, err
	}
	f := &NDArray{base: b, layout: NDArrayNPYFiles}
	if dtype == "" {
		if len(shape) != 0 {
			return nil, fmt.Errorf("field %q: a shape needs a dtype", name)
		}
		return f, nil
	}
	item, err := dtypeSize(dtype)
	if err != nil {
		return nil, fmt.Errorf("field %q: %w", name, err)
	}
	if len(shape) > MaxDims {
		return nil, fmt.Errorf("field %q: %d dimensions, at most %d", name, len(shape), MaxDims)
	}
	size := item
	for _, d := range shape {
		if d != 0 && size > (1<<32)/d {
			return nil, fmt.Errorf("field %q: shape %v is larger than 4 GiB", name, shape)
		}
		size *= d
	}
	f.layout, f.dtype, f.shape, f.size = NDArrayFixed, dtype, shape, size
	return f, nil
}

// Arguments implements Field.
func (f *NDArray) Arguments() [mldf.ArgumentsSize]byte {
	return mldf.NDArrayArgs{Layout: f.layout, DType: f.dtype, Shape: f.shape}.Marshal()
}

// Encode implements Field.
func (f *NDArray) Encode(v sample.Value, meta []byte) ([]byte, error) {
	raw, err := v.Load()
	if err != nil {
		return nil, fmt.Errorf("field %q: %w", f.name, err)
	}
	arr, err := ParseNPY(raw)
	if err != nil {
		return nil, fmt.Errorf("field %q: %w", f.name, err)
	}
	if f.layout == NDArrayNPYFiles {
		return raw, mldf.CheckPayloadSize(len(raw))
	}
	if arr.Descr != f.dtype {
		return nil, fmt.Errorf("field %q: %w: dtype %s, field wants %s", f.name, ErrNPY, arr.Descr, f.dtype)
	}
	if !equalShape(arr.Shape, f.shape) {
		return nil, fmt.Errorf("field %q: %w: shape %v, field wants %v", f.name, ErrNPY, arr.Shape, f.shape)
	}
	return arr.Data, nil
}

func equalShape(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// NPY is a parsed .npy array: its dtype descr, shape and C-order data.
type NPY = mldf.NPY

// ParseNPY parses a .npy file (format versions 1, 2 and 3): manifest.ParseNPY, the one parser
// the writer, the readers and export share. It accepts C-order arrays of numeric dtypes only
// and checks that the data is exactly as long as the shape says.
func ParseNPY(b []byte) (NPY, error) { return mldf.ParseNPY(b) }

// dtypeSize returns the item size of a numeric numpy descr such as "<f4" or "|u1".
func dtypeSize(descr string) (uint64, error) { return mldf.DTypeSize(descr) }
