package mldf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrNPY reports a malformed or unsupported .npy value (an NDARRAY payload, or a value given
// to the NDARRAY writer).
var ErrNPY = errors.New("bad .npy data")

// MaxNPYDims is the largest number of dimensions a .npy header may declare (numpy's limit).
const MaxNPYDims = 32

// NPY is a parsed .npy array: its dtype descr, shape and C-order data.
type NPY struct {
	Descr string
	Shape []uint64
	Data  []byte
}

// ParseNPY parses a .npy file (format versions 1, 2 and 3) held in b. It accepts C-order
// arrays of the dtypes DTypeSize knows and checks, before anything is allocated, that the
// bytes after the header are exactly as many as the declared shape needs (exact arithmetic:
// a shape whose size overflows is refused). Data aliases b.
//
// The header is read as numpy writes it: a Python dict literal holding 'descr' (a simple
// dtype string), 'fortran_order' (False) and 'shape' (a tuple of non-negative integers), each
// found by its quoted key. python/mldf applies the same grammar.
func ParseNPY(b []byte) (NPY, error) {
	const magic = "\x93NUMPY"
	if len(b) < 10 || string(b[:6]) != magic {
		return NPY{}, fmt.Errorf("%w: no .npy magic", ErrNPY)
	}
	var hlen, start uint64
	switch b[6] {
	case 1:
		hlen, start = uint64(binary.LittleEndian.Uint16(b[8:])), 10
	case 2, 3:
		if len(b) < 12 {
			return NPY{}, fmt.Errorf("%w: truncated header", ErrNPY)
		}
		hlen, start = uint64(binary.LittleEndian.Uint32(b[8:])), 12
	default:
		return NPY{}, fmt.Errorf("%w: format version %d.%d", ErrNPY, b[6], b[7])
	}
	if start+hlen > uint64(len(b)) {
		return NPY{}, fmt.Errorf("%w: header length %d runs past the end of the %d-byte value", ErrNPY, hlen, len(b))
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
	item, err := DTypeSize(descr)
	if err != nil {
		return NPY{}, err
	}
	data := b[start+hlen:]
	want, ok := ArraySize(item, shape)
	if !ok || want != uint64(len(data)) {
		return NPY{}, fmt.Errorf("%w: the header declares shape %v of %s (%s bytes) but %d data bytes follow it",
			ErrNPY, shape, descr, sizeText(want, ok), len(data))
	}
	return NPY{Descr: descr, Shape: shape, Data: data}, nil
}

// ArraySize returns item × the product of shape, and false when it does not fit 64 bits.
func ArraySize(item uint64, shape []uint64) (uint64, bool) {
	n := item
	for _, d := range shape {
		if d != 0 && n > ^uint64(0)/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}

func sizeText(n uint64, ok bool) string {
	if !ok {
		return "more than 2^64"
	}
	return strconv.FormatUint(n, 10)
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
			return nil, fmt.Errorf("%w: shape entry %q", ErrNPY, truncateText(p, 40))
		}
		if len(shape) == MaxNPYDims {
			return nil, fmt.Errorf("%w: more than %d dimensions", ErrNPY, MaxNPYDims)
		}
		shape = append(shape, d)
	}
	return shape, nil
}

// dtypeKinds lists the item sizes each numpy kind letter may have, as numpy reads them on
// every platform: bool b1; signed i1 i2 i4 i8; unsigned u1 u2 u4 u8; float f2 f4 f8;
// complex c8 c16.
var dtypeKinds = map[byte][]uint64{'b': {1}, 'i': {1, 2, 4, 8}, 'u': {1, 2, 4, 8}, 'f': {2, 4, 8}, 'c': {8, 16}}

// DTypeSize returns the item size of a numeric numpy descr: a byte order ('<', '>', '|' or
// '='), a kind letter and a size from the list of dtypeKinds ("<f4", "|u1", ">c16"). Other
// descrs (objects, strings, structured dtypes, platform-dependent sizes such as f16) are
// ErrNPY.
func DTypeSize(descr string) (uint64, error) {
	if len(descr) < 3 || len(descr) > 4 || !strings.ContainsRune("<>|=", rune(descr[0])) {
		return 0, fmt.Errorf("%w: unsupported dtype %q", ErrNPY, truncateText(descr, 40))
	}
	sizes, ok := dtypeKinds[descr[1]]
	if !ok {
		return 0, fmt.Errorf("%w: unsupported dtype %q (numeric dtypes only)", ErrNPY, descr)
	}
	n, err := strconv.ParseUint(descr[2:], 10, 8)
	if err == nil && descr[2] != '0' && descr[2] != '+' {
		for _, s := range sizes {
			if n == s {
				return n, nil
			}
		}
	}
	return 0, fmt.Errorf("%w: unsupported dtype %q", ErrNPY, descr)
}

// truncateText shortens s to at most n bytes for an error message.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("%s... (%d bytes)", s[:n], len(s))
}

// AppendNPYHeader appends the magic and header of a .npy file (format 1.0) for a C-order
// array of dtype descr ("<f4") and the given shape (none: a 0-d array) to dst, as numpy's
// np.save writes it: the dict padded with spaces and ended by '\n' so that the data that
// follows starts at a multiple of 64 bytes.
func AppendNPYHeader(dst []byte, descr string, shape []uint64) []byte {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = strconv.FormatUint(d, 10)
	}
	tuple := "(" + strings.Join(dims, ", ") + ")"
	if len(shape) == 1 {
		tuple = "(" + dims[0] + ",)"
	}
	dict := "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + tuple + ", }"
	// magic(6) + version(2) + header length(2) + dict + padding + '\n' is a multiple of 64.
	total := (10 + len(dict) + 1 + 63) / 64 * 64
	dst = append(dst, "\x93NUMPY\x01\x00"...)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(total-10))
	dst = append(dst, dict...)
	for range total - 10 - len(dict) - 1 {
		dst = append(dst, ' ')
	}
	return append(dst, '\n')
}
