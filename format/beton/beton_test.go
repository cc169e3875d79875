package beton

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/encoders/imagefield"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/pagewriter"
	"github.com/mldf/convert/sample"
)

func TestLayout(t *testing.T) {
	for _, c := range []struct {
		types []TypeID
		offs  []int
		size  int
	}{
		{[]TypeID{TypeRGBImage, TypeInt}, []int{0, 16}, 24}, // FFCV's (image, label)
		{[]TypeID{TypeInt, TypeRGBImage}, []int{0, 8}, 24},
		{[]TypeID{TypeRGBImage}, []int{0}, 13},
		{[]TypeID{TypeBytes, TypeJSON}, []int{0, 16}, 32},
		{[]TypeID{TypeRGBImage, TypeBytes, TypeFloat}, []int{0, 13, 32}, 40},
		{[]TypeID{TypeRGBImage, TypeRGBImage, TypeNDArray}, []int{0, 13, 32}, 40},
	} {
		var fs []Field
		for _, ty := range c.types {
			fs = append(fs, Field{Type: ty})
		}
		l := Layout(fs)
		if l.Size != c.size || !equalInts(l.Offsets, c.offs) {
			t.Errorf("%v: %v size %d, want %v size %d", c.types, l.Offsets, l.Size, c.offs, c.size)
		}
	}
}

func equalInts(a, b []int) bool {
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

// descField is a field known only by its descriptor.
type descField struct {
	name string
	typ  mldf.TypeID
}

func (f descField) Name() string                                { return f.name }
func (f descField) Type() mldf.TypeID                           { return f.typ }
func (f descField) Arguments() (a [mldf.ArgumentsSize]byte)     { return a }
func (f descField) Encode(sample.Value, []byte) ([]byte, error) { return nil, nil }

func TestFromManifestRefuses(t *testing.T) {
	png, _ := imagefield.New("img", imagefield.Options{Mode: imagefield.ModePNG})
	gray, _ := imagefield.New("img", imagefield.Options{Mode: imagefield.ModeJPEG, Channels: 1})
	rgba, _ := imagefield.New("img", imagefield.Options{Mode: imagefield.ModeRaw, Channels: 4})
	long, _ := encoders.NewInt("a_name_longer_than_16")
	npyFiles, _ := encoders.NewNDArray("arr", "", nil)
	audio := descField{"audio", mldf.TypeAudioWaveform}
	text := descField{"text", mldf.TypeTextTokenized}
	for _, c := range []struct {
		f    encoders.Field
		want string
	}{
		{png, "PNG"}, {gray, "1-channel"}, {rgba, "4-channel"}, {long, "16 bytes"},
		{npyFiles, "fixed dtype and shape"}, {audio, "map it to bytes or json"}, {text, "map it to bytes or json"},
	} {
		if c.f == nil {
			t.Fatalf("field for %q not built", c.want)
		}
		_, err := FromManifest(encoders.Descriptor(c.f))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.f.Name()) {
			t.Errorf("%s: err %v, want one naming the field and %q", c.f.Name(), err, c.want)
		}
		_, err = Create(filepath.Join(t.TempDir(), "x.beton"), Options{Fields: []mldf.FieldDesc{encoders.Descriptor(c.f)}, Samples: -1})
		if err == nil {
			t.Errorf("%s: Create accepted it", c.f.Name())
		}
	}
	for _, p := range []int64{4096, 3 << 20, 1 << 32} {
		if _, err := Create(filepath.Join(t.TempDir(), "x.beton"), Options{PageSize: p, Fields: tinyFields(t)}); !errors.Is(err, ErrPageSize) {
			t.Errorf("page size %d: %v", p, err)
		}
	}
}

func TestAppendErrors(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(filepath.Join(dir, "x.beton"), Options{PageSize: 2 << 20, Fields: tinyFields(t), Samples: 1})
	must(t, err)
	defer w.Abort()
	b := w.NewBatch()
	row, pay := mldfRow(t, tinySamples[0])
	big := make([][]byte, len(pay))
	copy(big, pay)
	big[3] = make([]byte, 3<<20)
	if err := b.Append(row, big); !errors.Is(err, ErrPageLarge) || !strings.Contains(err.Error(), "blob") || !strings.Contains(err.Error(), "4MiB") {
		t.Errorf("large payload: %v", err)
	}
	short := append([][]byte(nil), pay...)
	short[0] = []byte{1, 2}
	if err := b.Append(row, short); !errors.Is(err, ErrPayload) || !strings.Contains(err.Error(), "1x2x3 (height x width x 3)") {
		t.Errorf("raw size: %v", err)
	}
	short[0] = nil
	if err := b.Append(row, short); !errors.Is(err, ErrPayload) || !strings.Contains(err.Error(), "required") {
		t.Errorf("missing image: %v", err)
	}
	short[0], short[5] = pay[0], []byte{1}
	if err := b.Append(row, short); !errors.Is(err, ErrPayload) {
		t.Errorf("array size: %v", err)
	}
	if b.Len() != 0 || len(b.Items()) != 0 || b.PayloadBytes() != 0 {
		t.Errorf("failed appends left %d rows, %d allocations", b.Len(), len(b.Items()))
	}
	// More samples than announced fail the writer.
	must(t, b.Append(row, pay))
	must(t, b.Append(row, pay))
	if err := w.Commit(context.Background(), w.Issue(), b); !errors.Is(err, ErrTooMany) {
		t.Errorf("too many: %v", err)
	}
	if _, err := w.Finish(); err == nil {
		t.Error("Finish after a failure succeeded")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}

// Payloads never cross a page: a payload that does not fit in the rest of a page starts the
// next one, and the file verifies.
func TestPagePlacement(t *testing.T) {
	blob, _ := encoders.NewBytes("blob")
	out := filepath.Join(t.TempDir(), "p.beton")
	w, err := Create(out, Options{PageSize: 2 << 20, Fields: []mldf.FieldDesc{encoders.Descriptor(blob)}, Samples: -1})
	must(t, err)
	sizes := []int{1 << 20, 1<<20 + 1, 2 << 20, 5, 0, 2<<20 - 5, 5}
	b := w.NewBatch()
	for i, n := range sizes {
		must(t, b.Append(make([]byte, 16), [][]byte{bytes.Repeat([]byte{byte(i + 1)}, n)}))
	}
	must(t, w.Commit(context.Background(), w.Issue(), b))
	_, err = w.Finish()
	must(t, err)
	r, err := Open(out)
	must(t, err)
	defer r.Close()
	if _, err := r.Verify(); err != nil {
		t.Fatal(err)
	}
	const p = 2 << 20
	d := r.DataStart()
	// 1M at 0; 1M+1 does not fit: page 1; 2M: page 2; 5 at page 3; zero-size right after;
	// 2M-5 does not fit after those 6 bytes: page 4; 5 fits exactly at its end.
	want := []int64{d, d + p, d + 2*p, d + 3*p, d + 3*p + 5, d + 4*p, d + 5*p - 5}
	for i := range sizes {
		v, err := r.Sample(int64(i))
		must(t, err)
		if got := r.AllocTable()[i].Ptr; int64(got) != want[i] || len(v[0].Data) != sizes[i] {
			t.Errorf("payload %d: at %d (%d bytes), want %d", i, got, len(v[0].Data), want[i])
		}
	}
}

// corrupt applies f to a copy of the golden file.
func corrupt(t *testing.T, f func(b []byte) []byte) []byte {
	return f(handBuilt()) // TestGolden pins these bytes to the golden file
}

func TestCorrupt(t *testing.T) {
	le := binary.LittleEndian
	const meta, data, alloc = 6270, 2 << 20, 2<<20 + 60
	for _, c := range []struct {
		name   string
		f      func(b []byte) []byte
		verify bool // found by Verify, not Open
		want   string
	}{
		{"empty", func(b []byte) []byte { return nil }, false, "shorter than the 24-byte header"},
		{"version", func(b []byte) []byte { b[0] = 3; return b }, false, "version 3"},
		{"page size", func(b []byte) []byte { le.PutUint32(b[4:], 4096); return b }, false, "page size"},
		{"no fields", func(b []byte) []byte { le.PutUint16(b[2:], 0); return b }, false, "0 fields"},
		{"too many fields", func(b []byte) []byte { le.PutUint16(b[2:], 5000); return b }, false, "past the end"},
		{"type", func(b []byte) []byte { b[24] = 9; return b }, false, "unknown type id 9"},
		{"name", func(b []byte) []byte { b[25] = 0xe9; return b }, false, "ASCII"},
		{"name padding", func(b []byte) []byte { b[24+10] = 'x'; return b }, false, "after the name"},
		{"empty name", func(b []byte) []byte { clear(b[25:41]); return b }, false, "invalid field name"},
		{"ndarray dtype", func(b []byte) []byte { b[24+1041*5+17+264+8] = 'x'; return b }, false, "descr"},
		{"samples", func(b []byte) []byte { le.PutUint64(b[8:], 1<<40); return b }, false, "do not fit"},
		{"alloc ptr past end", func(b []byte) []byte { le.PutUint64(b[16:], 1<<40); return b }, false, "past the end"},
		{"alloc ptr in metadata", func(b []byte) []byte { le.PutUint64(b[16:], 100); return b }, false, "inside the metadata"},
		{"alloc not whole", func(b []byte) []byte { return b[:len(b)-1] }, false, "whole number"},
		{"alloc outside data", func(b []byte) []byte { le.PutUint64(b[alloc+8:], 100); return b }, false, "outside the data region"},
		{"alloc crosses page", func(b []byte) []byte { le.PutUint64(b[alloc+7*24+16:], 3<<20); return b }, false, "outside the data region"},
		{"alloc overlap", func(b []byte) []byte { le.PutUint64(b[alloc+16:], 7); return b }, false, "overlap"},
		{"alloc sample", func(b []byte) []byte { le.PutUint64(b[alloc:], 2); return b }, false, "names sample 2"},
		{"row ptr", func(b []byte) []byte { le.PutUint64(b[meta+5:], data+1); return b }, true, "not in the allocation table"},
		{"row sample", func(b []byte) []byte {
			le.PutUint64(b[alloc+24*4:], 0) // sample 1's image entry says sample 0
			return b
		}, true, "allocated to sample 0"},
		{"json nul", func(b []byte) []byte { b[data+18] = '}'; return b }, true, "NUL"},
		{"raw size", func(b []byte) []byte { le.PutUint16(b[meta+1:], 3); return b }, true, "raw image"},
		{"image mode", func(b []byte) []byte { b[meta] = 7; return b }, true, "image mode 7"},
		{"bytes size", func(b []byte) []byte { le.PutUint64(b[meta+40:], 4); return b }, true, "row says 4 bytes"},
		{"shared pointer", func(b []byte) []byte {
			le.PutUint64(b[meta+72+32:], data+35) // sample 1's blob points at its image
			return b
		}, true, "row says"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := corrupt(t, c.f)
			r, err := NewReader(bytes.NewReader(b), int64(len(b)), "bad.beton")
			if !c.verify {
				if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "bad.beton") {
					t.Fatalf("open: %v, want %q", err, c.want)
				}
				return
			}
			must(t, err)
			_, err = r.Verify()
			if !errors.Is(err, ErrVerify) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("verify: %v, want %q", err, c.want)
			}
		})
	}
}

// FFCV's own writer leaves the allocation table unsorted; Open sorts it as FFCV's loader does.
func TestUnsortedAllocTable(t *testing.T) {
	const alloc = 2<<20 + 60
	b := corrupt(t, func(b []byte) []byte {
		e := bytes.Clone(b[alloc : alloc+24])
		copy(b[alloc:], b[alloc+24:alloc+48])
		copy(b[alloc+24:], e)
		return b
	})
	r, err := NewReader(bytes.NewReader(b), int64(len(b)), "u.beton")
	must(t, err)
	if r.SortedInFile() {
		t.Error("SortedInFile is true")
	}
	if _, err := r.Verify(); err != nil {
		t.Error(err)
	}
}

func TestAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "a.beton")
	must(t, os.WriteFile(out, []byte("old"), 0o644))
	for _, n := range []int64{2, -1} {
		w, err := Create(out, Options{PageSize: 2 << 20, Fields: tinyFields(t), Samples: n})
		must(t, err)
		b := w.NewBatch()
		row, pay := mldfRow(t, tinySamples[0])
		must(t, b.Append(row, pay))
		must(t, w.Commit(context.Background(), w.Issue(), b))
		must(t, w.Abort())
		if _, err := w.Finish(); err == nil {
			t.Error("Finish after Abort succeeded")
		}
	}
	ents, _ := os.ReadDir(dir)
	if got, _ := os.ReadFile(out); len(ents) != 1 || string(got) != "old" {
		t.Errorf("after abort: %v, %q", ents, got)
	}
}

func FuzzReader(f *testing.F) {
	golden := handBuilt() // TestGolden pins these bytes to the golden file
	// The golden file is 2 MiB (its data starts at the first page boundary): the fuzzer
	// gets its tables (header, descriptors, rows) and a small page-less file instead.
	f.Add(golden[:6270+144])
	f.Add(golden[:100])
	f.Add([]byte{2, 0, 1, 0, 0, 0, 32, 0})
	// A minimal file: one Int field, one sample, no allocations.
	min := make([]byte, 24+1041+8)
	binary.LittleEndian.PutUint16(min[0:], 2)
	binary.LittleEndian.PutUint16(min[2:], 1)
	binary.LittleEndian.PutUint32(min[4:], 2<<20)
	binary.LittleEndian.PutUint64(min[8:], 1)
	binary.LittleEndian.PutUint64(min[16:], uint64(len(min)))
	min[24] = byte(TypeInt)
	copy(min[25:], "label")
	f.Add(min)
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := NewReader(bytes.NewReader(b), int64(len(b)), "fuzz.beton")
		if err != nil {
			return
		}
		if _, err := r.Verify(); err != nil {
			return
		}
		for i := range min64(r.NumSamples(), 16) {
			if _, err := r.Sample(i); err != nil {
				t.Fatalf("sample %d of a verified file: %v", i, err)
			}
		}
	})
}

func min64(a, b int64) int64 {
	if a < b {
		return a
	}
	return b
}

// failFile fails writes once limit bytes have been written to it.
type failFile struct {
	pagewriter.File
	limit int64
	n     *int64
}

var errDiskFull = errors.New("no space left on device (injected)")

func (f failFile) WriteAt(b []byte, off int64) (int, error) {
	if *f.n+int64(len(b)) > f.limit {
		return 0, errDiskFull
	}
	*f.n += int64(len(b))
	return f.File.WriteAt(b, off)
}

// Wrapped files take the buffered copy path and give the golden bytes; a failing write fails
// Finish and leaves nothing behind.
func TestWrappedFiles(t *testing.T) {
	want := handBuilt() // TestGolden pins these bytes to the golden file
	for _, c := range []struct {
		role  string
		limit int64
	}{{"", 0}, {"data", 10}, {"output", 100}, {"rows", 10}, {"alloc", 10}} {
		dir := t.TempDir()
		out := filepath.Join(dir, "w.beton")
		var n int64
		wrap := func(f pagewriter.File, role string) pagewriter.File {
			if role == c.role {
				return failFile{f, c.limit, &n}
			}
			return failFile{f, 1 << 40, new(int64)}
		}
		bc, err := New(Options{PageSize: 2 << 20, Fields: tinyFields(t), Samples: -1})
		must(t, err)
		w, err := pagewriter.New(pagewriter.LocalFile(out, pagewriter.FileOptions{Wrap: wrap}), bc, pagewriter.Options{Wrap: wrap})
		must(t, err)
		var werr error
		for _, s := range tinySamples {
			b := w.NewBatch()
			row, pay := mldfRow(t, s)
			must(t, b.Append(row, pay))
			if err := w.Commit(context.Background(), w.Issue(), b); err != nil {
				werr = err
				break
			}
		}
		if werr == nil {
			_, werr = w.Finish()
		} else {
			w.Abort()
		}
		if c.role == "" {
			must(t, werr)
			got, err := os.ReadFile(out)
			must(t, err)
			if !bytes.Equal(got, want) {
				t.Errorf("wrapped: output differs from the golden file at byte %d", firstDiff(got, want))
			}
			continue
		}
		if !errors.Is(werr, errDiskFull) {
			t.Errorf("%s: err %v, want the injected failure", c.role, werr)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("%s: left behind %v", c.role, ents)
		}
	}
}
