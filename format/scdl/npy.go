package scdl

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/quote"
)

// The feature indices keep two real NPY files (format 1.0): cumulative_sum_index.npy, a 1-D
// '<i8' array, and version.npy, a 0-d '<U<n>' string. These are the only NPY files here.

var npyMagic = []byte("\x93NUMPY\x01\x00")

// encodeInt64NPY encodes a 1-D int64 array as an NPY file.
func encodeInt64NPY(v []int64) []byte {
	b := mldf.AppendNPYHeader(nil, "<i8", []uint64{uint64(len(v))})
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, uint64(x))
	}
	return b
}

// encodeStringNPY encodes a 0-d unicode string (numpy '<U<n>', UTF-32LE) as an NPY file.
func encodeStringNPY(s string) []byte {
	n := utf8.RuneCountInString(s)
	b := mldf.AppendNPYHeader(nil, fmt.Sprintf("<U%d", max(n, 1)), nil)
	for _, r := range s {
		b = binary.LittleEndian.AppendUint32(b, uint32(r))
	}
	if n == 0 {
		b = binary.LittleEndian.AppendUint32(b, 0)
	}
	return b
}

var npyDictRe = regexp.MustCompile(`^\{'descr': '([<>|][a-zA-Z]\d+)', 'fortran_order': (False|True), 'shape': \(([0-9, ]*)\), \}\s*$`)

// decodeInt64NPY decodes a 1-D '<i8' NPY array (what np.save writes for
// cumulative_sum_index.npy). where names the file in errors.
func decodeInt64NPY(b []byte, where string) ([]int64, error) {
	if len(b) < len(npyMagic)+2 || !bytes.Equal(b[:6], npyMagic[:6]) {
		return nil, ruleErr("npy magic", where, "not an NPY file")
	}
	var hlen, start int
	switch b[6] {
	case 1:
		hlen, start = int(binary.LittleEndian.Uint16(b[8:])), 10
	case 2, 3:
		if len(b) < 12 {
			return nil, ruleErr("npy header", where, "truncated")
		}
		hlen, start = int(binary.LittleEndian.Uint32(b[8:])), 12
	default:
		return nil, ruleErr("npy version", where, "NPY version %d", b[6])
	}
	if hlen > len(b)-start {
		return nil, ruleErr("npy header", where, "header of %d bytes, file has %d", hlen, len(b)-start)
	}
	m := npyDictRe.FindStringSubmatch(string(b[start : start+hlen]))
	if m == nil {
		return nil, ruleErr("npy header", where, "unexpected header %s", quote.Q(strings.TrimSpace(string(b[start:start+hlen]))))
	}
	if m[1] != "<i8" {
		return nil, ruleErr("npy dtype", where, "dtype %s, want <i8", m[1])
	}
	dims := strings.Split(strings.TrimSuffix(strings.ReplaceAll(m[3], " ", ""), ","), ",")
	if len(dims) != 1 || dims[0] == "" {
		return nil, ruleErr("npy shape", where, "shape (%s), want one dimension", m[3])
	}
	n, err := strconv.ParseUint(dims[0], 10, 63)
	if err != nil {
		return nil, ruleErr("npy shape", where, "shape (%s)", m[3])
	}
	data := b[start+hlen:]
	if uint64(len(data)) != n*8 {
		return nil, ruleErr("npy size", where, "%d data bytes for %d int64 values", len(data), n)
	}
	v := make([]int64, n)
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint64(data[8*i:]))
	}
	return v, nil
}
