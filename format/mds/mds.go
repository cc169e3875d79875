// Package mds reads and writes MosaicML Streaming's MDS format: a directory of shards
// shard.NNNNN.mds and an index.json listing them, the format StreamingDataset reads.
//
// A shard is little-endian: the sample count n (uint32), n+1 sample offsets from the start of
// the shard (uint32; sample i is [offsets[i], offsets[i+1])), the shard's configuration as
// JSON, then the samples. A sample is one uint32 size per variable-size column (in column
// order), then every column's bytes in column order. Columns are sorted by name. index.json is
// {"version": 2, "shards": [...]}, each shard entry holding the column names, encodings and
// fixed sizes (null for variable), its sample count, its file (raw_data: basename and bytes),
// and the optional compression (zip_data), which this package does not read.
//
// Encodings: bytes, str (UTF-8), int (int64), the fixed scalars int8...uint64, float16,
// float32, float64, str_int, str_float, str_decimal, json, jpeg and png (the file's bytes),
// pil (width, height, mode and pixels), and ndarray (dtype and shape in the column's encoding,
// "ndarray:uint8:3,32,32", or in each value). pkl (Python pickle, which runs code when loaded)
// is refused.
package mds

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Errors, wrapped with the file and what is wrong.
var (
	// ErrCorrupt means the directory is not valid MDS.
	ErrCorrupt = errors.New("mds: corrupt dataset")
	// ErrUnsupported means valid MDS beyond what is read (compressed shards, another
	// format or version).
	ErrUnsupported = errors.New("mds: unsupported")
	// ErrUnsafe means a column is pickled Python objects, which are never read.
	ErrUnsafe = errors.New("mds: unsafe encoding")
	// ErrEncoding means an encoding is unknown or a value does not fit its encoding.
	ErrEncoding = errors.New("mds: bad encoding")
	// ErrResume: the finished shards a checkpoint names are not in the directory as it
	// recorded them (missing, another size, other bytes).
	ErrResume = errors.New("mds: cannot resume")
)

// IndexName is the name of a dataset's index.
const IndexName = "index.json"

// Limits of what is read.
const (
	// MaxIndexSize bounds index.json.
	MaxIndexSize = 64 << 20
	// MaxColumns bounds the columns of a shard.
	MaxColumns = 4096
	// MaxSizeLimit is the largest shard size (offsets are uint32).
	MaxSizeLimit = math.MaxUint32
	// DefaultSizeLimit is MDSWriter's default shard size limit.
	DefaultSizeLimit = 1 << 26
)

// ShardName returns the name of shard i: shard.00000.mds.
func ShardName(i int) string { return fmt.Sprintf("shard.%05d.mds", i) }

// Column is one column: its name, encoding and fixed size in bytes (0: variable size).
type Column struct {
	Name     string
	Encoding string
	Size     int
}

// scalarSizes are the fixed sizes of the fixed-size encodings.
var scalarSizes = map[string]int{
	"int": 8, "int8": 1, "int16": 2, "int32": 4, "int64": 8,
	"uint8": 1, "uint16": 2, "uint32": 4, "uint64": 8,
	"float16": 2, "float32": 4, "float64": 8,
}

// variable are the variable-size encodings read.
var variable = map[string]bool{
	"bytes": true, "str": true, "json": true, "jpeg": true, "png": true, "pil": true,
	"str_int": true, "str_float": true, "str_decimal": true,
	"list[jpeg]": true, "list[png]": true, "list[pil]": true, "jpeg_array": true, "jpegarray": true,
}

// ndarray dtypes: the value-dtype codes of a dynamic-dtype ndarray, and their item sizes.
var dtypeCodes = map[byte]string{8: "uint8", 9: "int8", 16: "uint16", 17: "int16", 18: "float16",
	32: "uint32", 33: "int32", 34: "float32", 64: "uint64", 65: "int64", 66: "float64"}

// DtypeCode returns the code of an ndarray value dtype ("uint8", ...), or false.
func DtypeCode(dtype string) (byte, bool) {
	for c, d := range dtypeCodes {
		if d == dtype {
			return c, true
		}
	}
	return 0, false
}

// ItemSize returns the bytes of one value of an ndarray dtype (0 if unknown).
func ItemSize(dtype string) int {
	switch dtype {
	case "uint8", "int8":
		return 1
	case "uint16", "int16", "float16":
		return 2
	case "uint32", "int32", "float32":
		return 4
	case "uint64", "int64", "float64":
		return 8
	}
	return 0
}

// NDArraySpec is a parsed ndarray encoding: its fixed dtype and shape, if given.
type NDArraySpec struct {
	Dtype string // "" when each value holds it
	Shape []int  // nil when each value holds it
}

// ParseNDArray parses "ndarray", "ndarray:DTYPE" or "ndarray:DTYPE:D1,D2,...".
func ParseNDArray(enc string) (NDArraySpec, bool, error) {
	if enc != "ndarray" && !strings.HasPrefix(enc, "ndarray:") {
		return NDArraySpec{}, false, nil
	}
	var s NDArraySpec
	args := strings.Split(enc, ":")[1:]
	if len(args) > 2 {
		return s, true, fmt.Errorf("%w: %q", ErrEncoding, enc)
	}
	if len(args) >= 1 && args[0] != "" {
		if ItemSize(args[0]) == 0 {
			return s, true, fmt.Errorf("%w: %q: dtype %q", ErrEncoding, enc, args[0])
		}
		s.Dtype = args[0]
	}
	if len(args) == 2 {
		for _, d := range strings.Split(args[1], ",") {
			n, err := strconv.Atoi(d)
			if err != nil || n < 1 || int64(n) > math.MaxUint32 {
				return s, true, fmt.Errorf("%w: %q: dimension %q", ErrEncoding, enc, d)
			}
			s.Shape = append(s.Shape, n)
		}
		if len(s.Shape) > 63 {
			return s, true, fmt.Errorf("%w: %q: more than 63 dimensions", ErrEncoding, enc)
		}
	}
	return s, true, nil
}

// Size returns the fixed size of an ndarray spec's values (0 when variable).
func (s NDArraySpec) Size() int {
	if s.Dtype == "" || s.Shape == nil {
		return 0
	}
	n := ItemSize(s.Dtype)
	for _, d := range s.Shape {
		if int64(n) > math.MaxUint32/int64(d) {
			return 0
		}
		n *= d
	}
	return n
}

// EncodedSize returns the fixed size of an encoding (0: variable), or an error for an
// encoding that is unknown or unsafe.
func EncodedSize(enc string) (int, error) {
	if enc == "pkl" {
		return 0, fmt.Errorf("%w: pkl (Python pickle runs code when it is loaded)", ErrUnsafe)
	}
	if n, ok := scalarSizes[enc]; ok {
		return n, nil
	}
	if variable[enc] {
		return 0, nil
	}
	if s, ok, err := ParseNDArray(enc); ok {
		if err != nil {
			return 0, err
		}
		return s.Size(), nil
	}
	return 0, fmt.Errorf("%w: unknown encoding %q", ErrEncoding, trim(enc))
}

// trim bounds a string from the input for a message.
func trim(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// NDArray is a decoded ndarray value: its dtype, shape and values' bytes (little-endian).
type NDArray struct {
	Dtype string
	Shape []int
	Data  []byte
}

// DecodeNDArray decodes an ndarray value under spec, checking that its bytes hold exactly
// the values its shape says.
func DecodeNDArray(spec NDArraySpec, b []byte) (NDArray, error) {
	a := NDArray{Dtype: spec.Dtype, Shape: spec.Shape}
	if a.Dtype == "" {
		if len(b) < 1 {
			return a, fmt.Errorf("%w: ndarray value without its dtype", ErrCorrupt)
		}
		d, ok := dtypeCodes[b[0]]
		if !ok {
			return a, fmt.Errorf("%w: ndarray dtype code %d", ErrCorrupt, b[0])
		}
		a.Dtype, b = d, b[1:]
	}
	if a.Shape == nil {
		if len(b) < 1 {
			return a, fmt.Errorf("%w: ndarray value without its shape", ErrCorrupt)
		}
		ndim, w := int(b[0]>>2), 1<<(b[0]&3)
		b = b[1:]
		if ndim == 0 || len(b) < ndim*w {
			return a, fmt.Errorf("%w: ndarray shape of %d dimensions in %d bytes", ErrCorrupt, ndim, len(b))
		}
		a.Shape = make([]int, ndim)
		for i := range a.Shape {
			var d uint64
			switch w {
			case 1:
				d = uint64(b[i])
			case 2:
				d = uint64(binary.LittleEndian.Uint16(b[2*i:]))
			case 4:
				d = uint64(binary.LittleEndian.Uint32(b[4*i:]))
			default:
				d = binary.LittleEndian.Uint64(b[8*i:])
			}
			if d == 0 || d > math.MaxUint32 {
				return a, fmt.Errorf("%w: ndarray dimension %d", ErrCorrupt, d)
			}
			a.Shape[i] = int(d)
		}
		b = b[ndim*w:]
	}
	n := uint64(ItemSize(a.Dtype))
	for _, d := range a.Shape {
		n *= uint64(d)
		if n > uint64(len(b)) {
			break
		}
	}
	if n != uint64(len(b)) {
		return a, fmt.Errorf("%w: ndarray %s%v holds %d bytes", ErrCorrupt, a.Dtype, a.Shape, len(b))
	}
	a.Data = b
	return a, nil
}

// EncodeNDArray encodes a under spec (the dtype and shape a column's encoding does not fix
// go into the value).
func EncodeNDArray(spec NDArraySpec, a NDArray) ([]byte, error) {
	size := ItemSize(a.Dtype)
	code, ok := DtypeCode(a.Dtype)
	if size == 0 || !ok {
		return nil, fmt.Errorf("%w: ndarray dtype %q", ErrEncoding, a.Dtype)
	}
	if len(a.Shape) == 0 || len(a.Shape) > 63 {
		return nil, fmt.Errorf("%w: ndarray of %d dimensions (1 to 63)", ErrEncoding, len(a.Shape))
	}
	n, maxDim := size, 0
	for _, d := range a.Shape {
		if d < 1 || int64(d) > math.MaxUint32 {
			return nil, fmt.Errorf("%w: ndarray dimension %d", ErrEncoding, d)
		}
		n *= d
		maxDim = max(maxDim, d)
	}
	if n != len(a.Data) {
		return nil, fmt.Errorf("%w: ndarray %s%v with %d bytes", ErrEncoding, a.Dtype, a.Shape, len(a.Data))
	}
	var out []byte
	if spec.Dtype == "" {
		out = append(out, code)
	} else if spec.Dtype != a.Dtype {
		return nil, fmt.Errorf("%w: ndarray of %s in a column of %s", ErrEncoding, a.Dtype, spec.Dtype)
	}
	if spec.Shape == nil {
		w := 0
		switch {
		case maxDim < 1<<8:
			w = 0
		case maxDim < 1<<16:
			w = 1
		default:
			w = 2
		}
		out = append(out, byte(len(a.Shape)<<2|w))
		for _, d := range a.Shape {
			switch w {
			case 0:
				out = append(out, byte(d))
			case 1:
				out = binary.LittleEndian.AppendUint16(out, uint16(d))
			default:
				out = binary.LittleEndian.AppendUint32(out, uint32(d))
			}
		}
	} else if fmt.Sprint(spec.Shape) != fmt.Sprint(a.Shape) {
		return nil, fmt.Errorf("%w: ndarray of shape %v in a column of shape %v", ErrEncoding, a.Shape, spec.Shape)
	}
	return append(out, a.Data...), nil
}
