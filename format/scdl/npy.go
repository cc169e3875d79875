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

// The feature indices keep three real NPY files (format 1.0): cumulative_sum_index.npy, a
// 1-D '<i8' array, labels.npy, a 1-D '<U<n>' array of strings, and version.npy, a 0-d
// '<U<n>' string. These are the only NPY files here. None of them is ever an object array:
// reading one would need pickle, which this package never runs.

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

// encodeLabelsNPY encodes a list of strings as np.save(list) does: a 1-D unicode array
// '<U<n>', n the longest string's length in code points (at least 1), each string padded
// with NULs to n; an empty list is numpy's empty float array, '<f8' of shape (0,). No pickle:
// np.load reads it with allow_pickle=False.
func encodeLabelsNPY(labels []string) []byte {
	if len(labels) == 0 {
		return mldf.AppendNPYHeader(nil, "<f8", []uint64{0})
	}
	n := 1
	for _, l := range labels {
		n = max(n, utf8.RuneCountInString(l))
	}
	b := mldf.AppendNPYHeader(nil, fmt.Sprintf("<U%d", n), []uint64{uint64(len(labels))})
	for _, l := range labels {
		k := 0
		for _, r := range l {
			b = binary.LittleEndian.AppendUint32(b, uint32(r))
			k++
		}
		for ; k < n; k++ {
			b = binary.LittleEndian.AppendUint32(b, 0)
		}
	}
	return b
}

var npyDictRe = regexp.MustCompile(`^\{'descr': '([<>|][a-zA-Z]\d*)', 'fortran_order': (False|True), 'shape': \(([0-9, ]*)\), \}\s*$`)

// parseNPY splits an NPY file of one dimension into its dtype descr, its length and its
// data bytes. where names the file in errors.
func parseNPY(b []byte, where string) (descr string, n uint64, data []byte, err error) {
	if len(b) < len(npyMagic)+2 || !bytes.Equal(b[:6], npyMagic[:6]) {
		return "", 0, nil, ruleErr("npy magic", where, "not an NPY file")
	}
	var hlen, start int
	switch b[6] {
	case 1:
		hlen, start = int(binary.LittleEndian.Uint16(b[8:])), 10
	case 2, 3:
		if len(b) < 12 {
			return "", 0, nil, ruleErr("npy header", where, "truncated")
		}
		hlen, start = int(binary.LittleEndian.Uint32(b[8:])), 12
	default:
		return "", 0, nil, ruleErr("npy version", where, "NPY version %d", b[6])
	}
	if hlen > len(b)-start {
		return "", 0, nil, ruleErr("npy header", where, "header of %d bytes, file has %d", hlen, len(b)-start)
	}
	m := npyDictRe.FindStringSubmatch(string(b[start : start+hlen]))
	if m == nil {
		return "", 0, nil, ruleErr("npy header", where, "unexpected header %s", quote.Q(strings.TrimSpace(string(b[start:start+hlen]))))
	}
	dims := strings.Split(strings.TrimSuffix(strings.ReplaceAll(m[3], " ", ""), ","), ",")
	if len(dims) != 1 || dims[0] == "" {
		return "", 0, nil, ruleErr("npy shape", where, "shape (%s), want one dimension", m[3])
	}
	n, err = strconv.ParseUint(dims[0], 10, 63)
	if err != nil {
		return "", 0, nil, ruleErr("npy shape", where, "shape (%s)", m[3])
	}
	return m[1], n, b[start+hlen:], nil
}

// decodeInt64NPY decodes a 1-D '<i8' NPY array (what np.save writes for
// cumulative_sum_index.npy). where names the file in errors.
func decodeInt64NPY(b []byte, where string) ([]int64, error) {
	descr, n, data, err := parseNPY(b, where)
	if err != nil {
		return nil, err
	}
	if descr != "<i8" {
		return nil, ruleErr("npy dtype", where, "dtype %s, want <i8", descr)
	}
	if uint64(len(data)) != n*8 {
		return nil, ruleErr("npy size", where, "%d data bytes for %d int64 values", len(data), n)
	}
	v := make([]int64, n)
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint64(data[8*i:]))
	}
	return v, nil
}

// decodeLabelsNPY decodes labels.npy as np.load(path, allow_pickle=False) would: a 1-D
// '<U<n>' array (trailing NULs of each item dropped, as numpy does), or numpy's empty float
// array ('<f8' of shape (0,), what np.save writes for an empty list). An object array ('|O',
// what np.save writes for a list holding None) would need pickle to read and is refused
// (rule "labels"). where names the file in errors.
func decodeLabelsNPY(b []byte, where string) ([]string, error) {
	descr, count, data, err := parseNPY(b, where)
	if err != nil {
		return nil, err
	}
	switch {
	case descr == "|O" || descr == "<O" || descr == ">O":
		return nil, ruleErr("labels", where, "an object array (dtype %s): reading it would run pickle, which this reader never does", descr)
	case descr == "<f8" && count == 0 && len(data) == 0:
		return []string{}, nil
	case !strings.HasPrefix(descr, "<U"):
		return nil, ruleErr("npy dtype", where, "dtype %s, want <U<n> (unicode strings)", descr)
	}
	width, err := strconv.ParseUint(descr[2:], 10, 31)
	if err != nil || (width == 0 && count > 0) {
		return nil, ruleErr("npy dtype", where, "dtype %s", descr)
	}
	// count × width × 4 bytes, checked without overflow: width ≥ 1 bounds count by the data.
	if count > 0 && (uint64(len(data))/4/width != count || uint64(len(data)) != count*width*4) {
		return nil, ruleErr("npy size", where, "%d data bytes for %d strings of %d code points", len(data), count, width)
	}
	if count == 0 && len(data) != 0 {
		return nil, ruleErr("npy size", where, "%d data bytes for no string", len(data))
	}
	out := make([]string, count)
	var sb strings.Builder
	for i := range out {
		sb.Reset()
		item := data[uint64(i)*width*4 : uint64(i+1)*width*4]
		end := len(item) / 4
		for end > 0 && binary.LittleEndian.Uint32(item[4*(end-1):]) == 0 {
			end--
		}
		for k := range end {
			r := rune(binary.LittleEndian.Uint32(item[4*k:]))
			if !utf8.ValidRune(r) {
				return nil, ruleErr("labels", where, "label %d holds %#x, not a Unicode code point", i, uint32(r))
			}
			sb.WriteRune(r)
		}
		out[i] = sb.String()
	}
	return out, nil
}
