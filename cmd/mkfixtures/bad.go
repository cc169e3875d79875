package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/mldf/convert/encoders/imagefield"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/format/mldf/decode"
	"github.com/mldf/convert/internal/hostile"
	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/sample"
)

// badCase is one damaged (or unusual but valid) variant of scalars.mldf, with what the Go
// reader says about it. bad.json lists them.
type badCase struct {
	File        string `json:"file"`
	What        string `json:"what"`
	OpenOK      bool   `json:"open_ok"`
	OpenError   string `json:"open_error,omitempty"`
	OpenRule    string `json:"open_rule,omitempty"`
	VerifyOK    bool   `json:"verify_ok"`
	VerifyError string `json:"verify_error,omitempty"`
	VerifyRule  string `json:"verify_rule,omitempty"`
	// AccessErrors lists [sample, field] pairs whose value the Go reader refuses, all with
	// rule AccessRule (R13, or F1..F10 for a lying metadata struct).
	AccessErrors [][2]int `json:"access_errors"`
	AccessRule   string   `json:"access_rule,omitempty"`
	// Base is the good fixture the file was made from (lying files, internal/hostile).
	Base string `json:"base,omitempty"`
	// DecodeRule and DecodeSample/DecodeField: what `verify --decode` reports (rules D1..D5)
	// when only decoding can tell, else "".
	DecodeRule   string `json:"decode_rule,omitempty"`
	DecodeSample int    `json:"decode_sample"`
	DecodeField  int    `json:"decode_field"`
}

// Header field offsets in the file (signature + header offset).
const (
	offMajor      = mldf.HeaderOffset + 0
	offMinor      = mldf.HeaderOffset + 2
	offNumSamples = mldf.HeaderOffset + 8
	offNumFields  = mldf.HeaderOffset + 16
	offPageSize   = mldf.HeaderOffset + 20
	offMetaPtr    = mldf.HeaderOffset + 32
	offDataPtr    = mldf.HeaderOffset + 40
	offChecksum   = mldf.HeaderOffset + 56
)

func writeBad(dir string) error {
	good, err := os.ReadFile(filepath.Join(dir, "scalars.mldf"))
	if err != nil {
		return err
	}
	le := binary.LittleEndian
	h, err := mldf.DecodeHeader(good[mldf.HeaderOffset:])
	if err != nil {
		return err
	}
	// the first payload of the file and one row's INT value
	firstPayload := h.DataPtr
	blobMeta := func(i int) int { // offset of sample i's "blob" struct (fields: label i64, score f64, blob, meta)
		return int(h.MetadataPtr) + i*48 + 16
	}
	variants := []struct {
		name, what string
		edit       func(b []byte) []byte
	}{
		{"bad_truncated_half", "file cut in half", func(b []byte) []byte { return b[:len(b)/2] }},
		{"bad_truncated_header", "only 40 bytes", func(b []byte) []byte { return b[:40] }},
		{"bad_truncated_tail", "last 3 bytes of the allocation table missing", func(b []byte) []byte { return b[:len(b)-3] }},
		{"bad_empty", "empty file", func(b []byte) []byte { return b[:0] }},
		{"bad_signature", "one bit of the signature flipped", func(b []byte) []byte { b[1] ^= 0x01; return b }},
		{"bad_major", "version 2.0", func(b []byte) []byte { le.PutUint16(b[offMajor:], 2); return b }},
		{"bad_metadata_ptr_bitflip", "bit 40 of metadata_ptr flipped", func(b []byte) []byte { b[offMetaPtr+5] ^= 0x01; return b }},
		{"bad_data_ptr_bitflip", "bit 3 of data_ptr flipped", func(b []byte) []byte { b[offDataPtr] ^= 0x08; return b }},
		{"bad_num_samples_huge", "num_samples 2^62: a lying header", func(b []byte) []byte { le.PutUint64(b[offNumSamples:], 1<<62); return b }},
		{"bad_num_samples_plus1", "num_samples one too many", func(b []byte) []byte {
			le.PutUint64(b[offNumSamples:], h.NumSamples+1)
			return b
		}},
		{"bad_num_fields_huge", "num_fields 65535", func(b []byte) []byte { le.PutUint16(b[offNumFields:], math.MaxUint16); return b }},
		{"bad_num_fields_zero", "num_fields 0", func(b []byte) []byte { le.PutUint16(b[offNumFields:], 0); return b }},
		{"bad_page_size", "page size 3000", func(b []byte) []byte { le.PutUint32(b[offPageSize:], 3000); return b }},
		{"bad_field_type", "field 0 has type id 99", func(b []byte) []byte {
			le.PutUint16(b[h.FieldDescPtr+64:], 99)
			return b
		}},
		{"bad_field_name", "field 1's name has no NUL terminator", func(b []byte) []byte {
			for j := range 64 {
				b[int(h.FieldDescPtr)+mldf.FieldDescSize+j] = 'x'
			}
			return b
		}},
		{"bad_duplicate_name", "field 1 renamed to field 0's name", func(b []byte) []byte {
			d0 := int(h.FieldDescPtr)
			copy(b[d0+mldf.FieldDescSize:d0+mldf.FieldDescSize+64], b[d0:d0+64])
			return b
		}},
		{"bad_metadata_size", "field 2's metadata_size 24", func(b []byte) []byte {
			le.PutUint32(b[int(h.FieldDescPtr)+2*mldf.FieldDescSize+68:], 24)
			return b
		}},
		{"bad_flags_encrypted", "encrypted flag set", func(b []byte) []byte { b[mldf.HeaderOffset+4] |= 0x08; return b }},
		{"bad_payload_bitflip", "one bit of the first payload flipped", func(b []byte) []byte { b[firstPayload+3] ^= 0x10; return b }},
		{"bad_meta_bitflip", "one bit of a metadata row flipped (the header checksum catches it)", func(b []byte) []byte {
			b[h.MetadataPtr+7*48] ^= 0x02
			return b
		}},
		{"bad_checksum", "header checksum altered", func(b []byte) []byte { b[offChecksum] ^= 0xff; return b }},
		{"bad_ref_outside", "sample 2's blob points past the data region (header checksum recomputed)", func(b []byte) []byte {
			le.PutUint64(b[blobMeta(2):], h.MetadataPtr+8)
			return rehash(b)
		}},
		{"bad_ref_empty_ptr", "sample 3's empty blob has a non-zero data_ptr (header checksum recomputed)", func(b []byte) []byte {
			le.PutUint64(b[blobMeta(3):], h.DataPtr)
			return rehash(b)
		}},
		{"ok_newer_minor", "version 1.9 with the header checksum recomputed: readers accept it", func(b []byte) []byte {
			le.PutUint16(b[offMinor:], 9)
			return rehash(b)
		}},
	}
	var cases []badCase
	for _, v := range variants {
		b := v.edit(append([]byte(nil), good...))
		name := v.name + ".mldf"
		path := filepath.Join(dir, name)
		if err := writeFile(path, b); err != nil {
			return err
		}
		cases = append(cases, judge(path, name, v.what))
		if v.name == "ok_newer_minor" {
			if err := export(path); err != nil {
				return err
			}
		}
	}
	if err := writeBigPayloadBad(dir, &cases); err != nil {
		return err
	}
	if err := writeLies(dir, &cases); err != nil {
		return err
	}
	data, err := json.MarshalIndent(cases, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, "bad.json"), data)
}

// rehash recomputes the header checksum of a file whose tables were edited on purpose.
func rehash(b []byte) []byte {
	h, err := mldf.DecodeHeader(b[mldf.HeaderOffset:])
	if err != nil {
		return b
	}
	desc := b[h.FieldDescPtr : h.FieldDescPtr+uint64(h.NumFields)*mldf.FieldDescSize]
	sum := mldf.HeaderChecksum(b[mldf.HeaderOffset:], desc, b[h.MetadataPtr:h.AllocTablePtr], b[h.AllocTablePtr:])
	binary.LittleEndian.PutUint64(b[offChecksum:], sum)
	return b
}

// judge records what the Go reader says about the file at path.
func judge(path, name, what string) badCase {
	c := badCase{File: name, What: what, AccessErrors: [][2]int{}}
	r, err := mldf.Open(path)
	if err != nil {
		c.OpenError, c.OpenRule = err.Error(), ruleOf(err)
		return c
	}
	defer r.Close()
	c.OpenOK = true
	if _, err := r.Verify(); err != nil {
		c.VerifyError, c.VerifyRule = err.Error(), ruleOf(err)
	} else {
		c.VerifyOK = true
	}
	for i := range r.NumSamples() {
		for k, f := range r.Fields() {
			if _, has := mldf.MetaSize(f.Type); !has {
				continue
			}
			if _, err := r.Payload(i, k); err != nil {
				c.AccessErrors = append(c.AccessErrors, [2]int{i, k})
				c.AccessRule = ruleOf(err)
			}
		}
	}
	return c
}

// ruleOf returns the FORMAT.md rule a reader error names, or "".
func ruleOf(err error) string {
	var re *mldf.RuleError
	if errors.As(err, &re) {
		return re.Rule
	}
	return ""
}

// writeLies writes every lying file of internal/hostile, each made from the first good
// fixture that has what the lie edits, and records what the Go reader says about it,
// including what decoding the payloads says.
func writeLies(dir string, cases *[]badCase) error {
	bases := []string{"scalars", "images", "audio", "text", "ndarray"}
	for _, l := range hostile.Lies {
		done := false
		for _, base := range bases {
			good, err := os.ReadFile(filepath.Join(dir, base+".mldf"))
			if err != nil {
				return err
			}
			b, _, _, err := hostile.Apply(good, l)
			if errors.Is(err, hostile.ErrNotApplicable) {
				continue
			}
			if err != nil {
				return err
			}
			name := l.Name + ".mldf"
			path := filepath.Join(dir, name)
			if err := writeFile(path, b); err != nil {
				return err
			}
			c := judge(path, name, l.What)
			c.Base = base
			if r, err := mldf.Open(path); err == nil {
				_, err := r.VerifyWith(context.Background(), mldf.VerifyOptions{NewDecoder: decode.NewPayloadDecoder, Workers: 1})
				var re *mldf.RuleError
				if errors.As(err, &re) && strings.HasPrefix(re.Rule, "D") {
					c.DecodeRule, c.DecodeSample, c.DecodeField = re.Rule, re.Sample, re.Field
				}
				r.Close()
			}
			*cases = append(*cases, c)
			done = true
			break
		}
		if !done {
			return fmt.Errorf("lie %s: no fixture has what it edits", l.Name)
		}
	}
	return nil
}

// writeBigPayloadBad writes a raw image file whose pixels span several pages and flips a bit
// in the last page of the payload: only the CRC can tell.
func writeBigPayloadBad(dir string, cases *[]badCase) error {
	f, err := imagefield.New("image", imagefield.Options{Mode: imagefield.ModeRaw})
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "bigraw.mldf")
	_, err = pipeline.Run(context.Background(), pipeline.Config{
		Source: memSource{mk(0, map[string]sample.Value{"img": {Kind: sample.KindBytes,
			Bytes: pngBytes(testImage(randFor(7), 90, 70, false))}})},
		Fields: []pipeline.Binding{{Field: f, Column: "img"}}, Output: path,
		PageSize: fixturePageSize, Workers: 1, Checksums: true, OnError: pipeline.Fail,
	})
	if err != nil {
		return fmt.Errorf("bigraw: %w", err)
	}
	if err := export(path); err != nil {
		return err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	h, err := mldf.DecodeHeader(b[mldf.HeaderOffset:])
	if err != nil {
		return err
	}
	b[h.MetadataPtr-100] ^= 0x80 // inside the payload (90×70×3 bytes, the only one)
	name := "bad_bigraw_bitflip.mldf"
	if err := writeFile(filepath.Join(dir, name), b); err != nil {
		return err
	}
	*cases = append(*cases, judge(filepath.Join(dir, name), name, "one bit flipped near the end of a multi-page raw image"))
	return nil
}
