package encoders

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mldf/convert/manifest"
	"github.com/mldf/convert/sample"
)

// ErrNPY reports a malformed or unsupported .npy value.
var ErrNPY = errors.New("bad .npy data")

// NDArray layouts, stored in argument byte 1.
const (
	NDArrayFixed    = 0 // payload is the raw C-order array data; dtype and shape in the arguments
	NDArrayNPYFiles = 1 // payload is a whole .npy file per sample (shape may vary)
)

// MaxDims is the largest number of dimensions a fixed-shape NDARRAY field records.
const MaxDims = 8

// NDArray is an NDARRAY field. Arguments (little-endian): @0 version u8 = 1, @1 layout u8,
// @2 dtype [16]byte (numpy descr such as "<f4", NUL-padded), @18 ndim u8, @24 shape [8]u64.
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
	b, err := newBase(name, manifest.TypeNDArray)
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
func (f *NDArray) Arguments() (a [manifest.ArgumentsSize]byte) {
	a[0] = 1
	a[1] = f.layout
	copy(a[2:18], f.dtype)
	a[18] = uint8(len(f.shape))
	for i, d := range f.shape {
		binary.LittleEndian.PutUint64(a[24+8*i:], d)
	}
	return a
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
		return raw, manifest.CheckPayloadSize(len(raw))
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
type NPY struct {
	Descr string
	Shape []uint64
	Data  []byte
}

// ParseNPY parses a .npy file (format versions 1, 2 and 3). It accepts C-order arrays of
// numeric dtypes only and checks that the data is exactly as long as the shape says.
func ParseNPY(b []byte) (NPY, error) {
	const magic = "\x93NUMPY"
	if len(b) < 10 || string(b[:6]) != magic {
		return NPY{}, fmt.Errorf("%w: no .npy magic", ErrNPY)
	}
	var hlen, start int
	switch b[6] {
	case 1:
		hlen, start = int(binary.LittleEndian.Uint16(b[8:])), 10
	case 2, 3:
		if len(b) < 12 {
			return NPY{}, fmt.Errorf("%w: truncated header", ErrNPY)
		}
		n := binary.LittleEndian.Uint32(b[8:])
		if uint64(n) > uint64(len(b)) {
			return NPY{}, fmt.Errorf("%w: header length %d past the end", ErrNPY, n)
		}
		hlen, start = int(n), 12
	default:
		return NPY{}, fmt.Errorf("%w: format version %d.%d", ErrNPY, b[6], b[7])
	}
	if start+hlen > len(b) {
		return NPY{}, fmt.Errorf("%w: header length %d past the end", ErrNPY, hlen)
	}
	dict := string(b[start : start+hlen])
	descr, err := npyString(dict, "descr")
	if err != nil {
		return NPY{}, err
	}
	if fo, err := npyRaw(dict, "fortran_order"); err != nil {
		return NPY{}, err
	} else if !strings.HasPrefix(fo, "False") {
		return NPY{}, fmt.Errorf("%w: Fortran-order arrays are not supported", ErrNPY)
	}
	shape, err := npyShape(dict)
	if err != nil {
		return NPY{}, err
	}
	item, err := dtypeSize(descr)
	if err != nil {
		return NPY{}, err
	}
	want := item
	for _, d := range shape {
		if d != 0 && want > uint64(len(b))/d {
			return NPY{}, fmt.Errorf("%w: shape %v needs more bytes than the value has", ErrNPY, shape)
		}
		want *= d
	}
	data := b[start+hlen:]
	if uint64(len(data)) != want {
		return NPY{}, fmt.Errorf("%w: %d data bytes, shape %v of %s needs %d", ErrNPY, len(data), shape, descr, want)
	}
	return NPY{Descr: descr, Shape: shape, Data: data}, nil
}

// npyRaw returns the text after 'key': in the header dict.
func npyRaw(dict, key string) (string, error) {
	i := strings.Index(dict, "'"+key+"'")
	if i < 0 {
		return "", fmt.Errorf("%w: header has no %q", ErrNPY, key)
	}
	rest := strings.TrimLeft(dict[i+len(key)+2:], " ")
	if !strings.HasPrefix(rest, ":") {
		return "", fmt.Errorf("%w: malformed header near %q", ErrNPY, key)
	}
	return strings.TrimLeft(rest[1:], " "), nil
}

func npyString(dict, key string) (string, error) {
	rest, err := npyRaw(dict, key)
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(rest, "'") {
		return "", fmt.Errorf("%w: %s is not a simple dtype string (structured dtypes are not supported)", ErrNPY, key)
	}
	end := strings.IndexByte(rest[1:], '\'')
	if end < 0 {
		return "", fmt.Errorf("%w: unterminated %s", ErrNPY, key)
	}
	return rest[1 : 1+end], nil
}

func npyShape(dict string) ([]uint64, error) {
	rest, err := npyRaw(dict, "shape")
	if err != nil {
		return nil, err
	}
	end := strings.IndexByte(rest, ')')
	if !strings.HasPrefix(rest, "(") || end < 0 {
		return nil, fmt.Errorf("%w: malformed shape", ErrNPY)
	}
	shape := []uint64{}
	for _, p := range strings.Split(rest[1:end], ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		d, err := strconv.ParseUint(strings.TrimSuffix(p, "L"), 10, 63)
		if err != nil {
			return nil, fmt.Errorf("%w: shape entry %q", ErrNPY, p)
		}
		if len(shape) == 32 {
			return nil, fmt.Errorf("%w: more than 32 dimensions", ErrNPY)
		}
		shape = append(shape, d)
	}
	return shape, nil
}

// dtypeSize returns the item size of a numeric numpy descr such as "<f4", "|u1", "<c8", "?".
func dtypeSize(descr string) (uint64, error) {
	if len(descr) < 2 || len(descr) > 15 {
		return 0, fmt.Errorf("%w: unsupported dtype %q", ErrNPY, descr)
	}
	order, kind := descr[0], descr[1]
	if order != '<' && order != '>' && order != '|' && order != '=' {
		return 0, fmt.Errorf("%w: unsupported dtype %q", ErrNPY, descr)
	}
	if !strings.ContainsRune("biufc", rune(kind)) {
		return 0, fmt.Errorf("%w: unsupported dtype %q (numeric dtypes only)", ErrNPY, descr)
	}
	n, err := strconv.ParseUint(descr[2:], 10, 8)
	if err != nil || n == 0 || n > 32 {
		return 0, fmt.Errorf("%w: unsupported dtype %q", ErrNPY, descr)
	}
	return n, nil
}
