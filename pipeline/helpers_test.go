package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/sample"
)

// intField is a test INT field: the value's Int.
type intField struct{ name string }

func (f intField) Name() string                            { return f.name }
func (f intField) Type() mldf.TypeID                       { return mldf.TypeInt }
func (f intField) Arguments() (a [mldf.ArgumentsSize]byte) { return a }
func (f intField) Encode(v sample.Value, meta []byte) ([]byte, error) {
	if v.Kind != sample.KindInt {
		return nil, fmt.Errorf("not an int (kind %d)", v.Kind)
	}
	mldf.PutInt(meta, v.Int)
	return nil, nil
}

// bytesField is a test BYTES field: the value's bytes; a value starting with "BAD" fails.
type bytesField struct{ name string }

func (f bytesField) Name() string                            { return f.name }
func (f bytesField) Type() mldf.TypeID                       { return mldf.TypeBytes }
func (f bytesField) Arguments() (a [mldf.ArgumentsSize]byte) { return a }
func (f bytesField) Encode(v sample.Value, meta []byte) ([]byte, error) {
	b, err := v.Load()
	if err != nil {
		return nil, err
	}
	if bytes.HasPrefix(b, []byte("BAD")) {
		return nil, errors.New("corrupt value")
	}
	return append([]byte(nil), b...), nil
}

// sliceSource yields fixed samples; it can fail after failAt samples or stall there.
type sliceSource struct {
	samples []sample.Sample
	failAt  int // -1: never
	stallAt int // -1: never
	delay   time.Duration
}

func newSource(s []sample.Sample) *sliceSource {
	return &sliceSource{samples: s, failAt: -1, stallAt: -1}
}

var errSourceBroke = errors.New("source broke")

func (s *sliceSource) Len() int64 { return int64(len(s.samples)) }

func (s *sliceSource) Run(ctx context.Context, emit func(sample.Sample) error) error {
	for i, x := range s.samples {
		if i == s.failAt {
			return fmt.Errorf("shard-3.tar:member-%d: %w", i, errSourceBroke)
		}
		if i == s.stallAt {
			<-ctx.Done()
			return ctx.Err()
		}
		if s.delay > 0 {
			select {
			case <-time.After(s.delay):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		x.Index = int64(i)
		if err := emit(x); err != nil {
			return err
		}
	}
	return nil
}

func mkSample(i int, label int64, data []byte) sample.Sample {
	return sample.Sample{
		Key: fmt.Sprintf("s%05d", i), Origin: fmt.Sprintf("data/s%05d.bin", i), InputBytes: int64(len(data)),
		Values: sample.ColumnsOf(map[string]sample.Value{
			"label": {Kind: sample.KindInt, Int: label},
			"data":  {Kind: sample.KindBytes, Bytes: data},
		}),
	}
}

// mixedSamples returns n samples with sizes from empty to several pages (pageSize), some
// bad ("BAD" payload, missing column, source error).
func mixedSamples(n, pageSize int, bad bool) []sample.Sample {
	var out []sample.Sample
	x := uint32(12345)
	rnd := func() uint32 { x ^= x << 13; x ^= x >> 17; x ^= x << 5; return x }
	for i := range n {
		var size int
		switch r := rnd() % 100; {
		case r < 10:
			size = 0
		case r < 80:
			size = int(rnd() % 600)
		case r < 95:
			size = int(rnd() % uint32(pageSize))
		default:
			size = pageSize + int(rnd()%uint32(3*pageSize))
		}
		data := make([]byte, size)
		for j := range data {
			data[j] = byte(i + j*7)
		}
		s := mkSample(i, int64(i)-5, data)
		if bad {
			switch i % 17 {
			case 3:
				s.Set("data", sample.Value{Kind: sample.KindBytes, Bytes: []byte("BAD image")})
			case 7:
				s.Values = slices.DeleteFunc(s.Values, func(c sample.Column) bool { return c.Name == "label" })
			case 11:
				s.Err = fmt.Errorf("truncated member")
			}
		}
		out = append(out, s)
	}
	return out
}

func testFields() []Binding {
	return []Binding{{Field: intField{"label"}, Column: "label"}, {Field: bytesField{"data"}, Column: "data"}}
}

// parsed is an MLDF file decoded and checked by the tests' own reader.
type parsed struct {
	hdr     mldf.Header
	fields  []mldf.FieldDesc
	layout  mldf.RowLayout
	rows    [][]byte
	entries []mldf.AllocEntry
	raw     []byte
}

// payload returns the payload of sample i, field f.
func (p *parsed) payload(i, f int) []byte {
	ref := mldf.GetRef(p.rows[i][p.layout.Offsets[f]:])
	if ref.Size == 0 {
		return nil
	}
	return p.raw[ref.Ptr : ref.Ptr+uint64(ref.Size)]
}

// parseMLDF reads path and checks every structural invariant of the format and the pinned
// layout: signature, header, descriptors at 80, data_ptr, placement rule, dense tables,
// sorted allocation entries that match the rows, checksums.
func parseMLDF(t testing.TB, path string) *parsed {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) < 80 || string(raw[:9]) != mldf.Signature {
		t.Fatalf("%s: bad signature or too short (%d bytes)", path, len(raw))
	}
	h, err := mldf.DecodeHeader(raw[9:])
	if err != nil {
		t.Fatal(err)
	}
	p := &parsed{hdr: h, raw: raw}
	if h.FieldDescPtr != 80 {
		t.Fatalf("field_desc_ptr %d", h.FieldDescPtr)
	}
	var types []mldf.TypeID
	for i := range int(h.NumFields) {
		d, err := mldf.DecodeFieldDesc(raw[80+208*i:])
		if err != nil {
			t.Fatal(err)
		}
		p.fields = append(p.fields, d)
		types = append(types, d.Type)
	}
	descEnd := 80 + 208*uint64(h.NumFields)
	ps := uint64(h.PageSize)
	if want := (descEnd + ps - 1) / ps * ps; h.DataPtr != want {
		t.Fatalf("data_ptr %d, want %d", h.DataPtr, want)
	}
	if p.layout, err = mldf.Layout(types); err != nil {
		t.Fatal(err)
	}
	rs := uint64(p.layout.Size)
	if h.MetadataPtr%8 != 0 || h.MetadataPtr < h.DataPtr || h.AllocTablePtr != h.MetadataPtr+h.NumSamples*rs {
		t.Fatalf("bad table pointers: %+v", h)
	}
	if (uint64(len(raw))-h.AllocTablePtr)%16 != 0 {
		t.Fatalf("allocation table size %d not a multiple of 16", uint64(len(raw))-h.AllocTablePtr)
	}
	for i := range h.NumSamples {
		p.rows = append(p.rows, raw[h.MetadataPtr+i*rs:h.MetadataPtr+(i+1)*rs])
	}
	for off := h.AllocTablePtr; off < uint64(len(raw)); off += 16 {
		p.entries = append(p.entries, mldf.DecodeAllocEntry(raw[off:]))
	}
	// Replay the placement rule over the rows: refs must be exactly where it puts them.
	cur := h.DataPtr
	k := 0
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	for i, row := range p.rows {
		for f, ty := range types {
			if _, ref := mldf.MetaSize(ty); !ref {
				continue
			}
			r := mldf.GetRef(row[p.layout.Offsets[f]:])
			if r.Size == 0 {
				if r.Ptr != 0 {
					t.Fatalf("sample %d field %d: empty payload with ptr %d", i, f, r.Ptr)
				}
				continue
			}
			s := uint64(r.Size)
			if (s <= ps && cur%ps+s > ps) || (s > ps && cur%ps != 0) {
				cur = (cur/ps + 1) * ps
			}
			if r.Ptr != cur {
				t.Fatalf("sample %d field %d: payload at %d, rule says %d", i, f, r.Ptr, cur)
			}
			if k >= len(p.entries) || p.entries[k].Ptr != r.Ptr || p.entries[k].Size != r.Size {
				t.Fatalf("sample %d field %d: allocation entry %d does not match %+v", i, f, k, r)
			}
			want := uint32(0)
			if h.Flags&mldf.FlagChecksummed != 0 {
				want = crc32.Checksum(raw[r.Ptr:r.Ptr+s], castagnoli)
			}
			if p.entries[k].Check != want {
				t.Fatalf("sample %d field %d: check %#x, want %#x", i, f, p.entries[k].Check, want)
			}
			k++
			cur = (cur + s + 7) / 8 * 8
		}
	}
	if k != len(p.entries) {
		t.Fatalf("%d allocation entries, rows refer to %d", len(p.entries), k)
	}
	if cur != h.MetadataPtr {
		t.Fatalf("metadata_ptr %d, cursor after data %d", h.MetadataPtr, cur)
	}
	if !sort.SliceIsSorted(p.entries, func(a, b int) bool { return p.entries[a].Ptr < p.entries[b].Ptr }) {
		t.Fatal("allocation table not sorted")
	}
	if h.Flags&mldf.FlagChecksummed != 0 {
		d := xxhash.New()
		d.Write(raw[9 : 9+56])
		d.Write(raw[80:descEnd])
		d.Write(raw[h.MetadataPtr:])
		if d.Sum64() != h.Checksum {
			t.Fatalf("header checksum %#x, want %#x", h.Checksum, d.Sum64())
		}
	}
	return p
}

// noTemps fails if dir holds anything but the names in keep.
func noTemps(t testing.TB, dir string, keep ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		ok := false
		for _, k := range keep {
			if e.Name() == k {
				ok = true
			}
		}
		if !ok {
			t.Errorf("left behind in %s: %s", dir, e.Name())
		}
	}
}

func mustRun(t testing.TB, cfg Config) Report {
	t.Helper()
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func contains(err error, parts ...string) bool {
	if err == nil {
		return false
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			return false
		}
	}
	return true
}

func outPath(t testing.TB) string { return filepath.Join(t.TempDir(), "out.mldf") }
