package parquet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mldf/convert/sources"
)

// resumeFiles are three files of text rows: 23 rows in row groups of 5, one row group of
// 10 rows, and 6 rows in groups of 2, with incompressible texts of size bytes (so a row group
// skipped unread shows in the bytes read).
func resumeFiles(t *testing.T, size int) (map[string][]byte, []string) {
	t.Helper()
	rows := func(n int, size int, tag string) []benchTextRow {
		out := make([]benchTextRow, n)
		for i := range out {
			id := int64(i)
			text := fmt.Sprintf("%s%d", tag, i)
			if size > 0 {
				b := make([]byte, size)
				rng := rand.New(rand.NewPCG(uint64(i), 1))
				for j := range b {
					b[j] = 'a' + byte(rng.IntN(26))
				}
				text += string(b)
			}
			out[i] = benchTextRow{ID: &id, Text: &text}
		}
		return out
	}
	files := map[string][]byte{
		"a.parquet": benchFile(t, rows(23, 0, "a"), 5),
		"b.parquet": benchFile(t, rows(10, 0, "b"), 10),
		"c.parquet": benchFile(t, rows(6, size, "c"), 2),
	}
	return files, []string{"a.parquet", "b.parquet", "c.parquet"}
}

// noIndex drops the index (a resumed source counts its samples from 0) from read's lines.
func noIndex(lines []string) string {
	for i, l := range lines {
		lines[i] = l[strings.IndexByte(l, ' ')+1:]
	}
	return strings.Join(lines, "\n")
}

// TestResumeAtEveryRow: resuming after any number of rows (row group and file boundaries,
// the last row, the end) gives exactly the rows after them, with their keys, origins and
// values; and a resumed source resumed again counts from its own start.
func TestResumeAtEveryRow(t *testing.T) {
	files, names := resumeFiles(t, 8)
	cols := []Column{{Name: "id", Path: "id"}, {Name: "text", Path: "text"}}
	src, err := NewFiles(names, cols, Options{Workers: 2, BatchRows: 3, Open: memOpener(files)})
	if err != nil {
		t.Fatal(err)
	}
	all, err := read(t, src)
	if err != nil {
		t.Fatal(err)
	}
	all = strings.Split(noIndex(all), "\n")
	if int64(len(all)) != src.Len() || len(all) != 39 {
		t.Fatalf("%d rows, Len %d", len(all), src.Len())
	}
	for k := 0; k <= len(all); k++ {
		r, err := src.Resume(int64(k), nil)
		if err != nil {
			t.Fatalf("Resume(%d): %v", k, err)
		}
		if r.Len() != int64(len(all)-k) {
			t.Errorf("Resume(%d).Len() = %d", k, r.Len())
		}
		got, err := read(t, r.(*Source))
		if err != nil {
			t.Fatalf("resumed at %d: %v", k, err)
		}
		if g, w := noIndex(got), strings.Join(all[k:], "\n"); g != w {
			t.Fatalf("resumed at %d:\n%s\nwant\n%s", k, g, w)
		}
		if k < len(all) {
			// Again from the resumed source: its count starts at its own place.
			rr, err := r.(*Source).Resume(1, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := read(t, rr.(*Source))
			if err != nil || noIndex(got) != strings.Join(all[k+1:], "\n") {
				t.Fatalf("resumed at %d then 1: %v", k, err)
			}
		}
	}
}

// dataBlob counts the bytes read from a file's row groups (between its magic number and its
// footer).
type dataBlob struct {
	Blob
	end   int64
	total *atomic.Int64
}

func (d *dataBlob) ReadAt(p []byte, off int64) (int, error) {
	n, err := d.Blob.ReadAt(p, off)
	if off >= 4 && off < d.end {
		d.total.Add(min(int64(n), d.end-off))
	}
	return n, err
}

// TestResumeSkipsRowGroups: a run resumed in the last row group of the last file reads that
// group's pages, not the others'.
func TestResumeSkipsRowGroups(t *testing.T) {
	files, names := resumeFiles(t, 64<<10)
	var total atomic.Int64
	open := func(name string) (Blob, error) {
		b, err := memOpener(files)(name)
		if err != nil {
			return nil, err
		}
		data := files[name]
		end := int64(len(data)) - 8 - int64(binary.LittleEndian.Uint32(data[len(data)-8:]))
		return &dataBlob{Blob: b, end: end, total: &total}, nil
	}
	src, err := NewFiles(names, []Column{{Name: "text", Path: "text"}}, Options{Workers: 1, Open: open})
	if err != nil {
		t.Fatal(err)
	}
	total.Store(0)
	if _, err := read(t, src); err != nil {
		t.Fatal(err)
	}
	full := total.Load()
	r, err := src.Resume(src.Len()-1, nil)
	if err != nil {
		t.Fatal(err)
	}
	total.Store(0)
	got, err := read(t, r.(*Source))
	if err != nil || len(got) != 1 || !strings.Contains(got[0], "c.parquet:5") {
		t.Fatalf("%q %v", got, err)
	}
	t.Logf("resumed at the last row: %d bytes of row groups read, %d for the whole run", total.Load(), full)
	// The last file is most of the bytes and its last group a third of it.
	if resumed := total.Load(); resumed*3 > full || resumed < 128<<10 {
		t.Errorf("resumed at the last row: %d bytes read, %d for the whole run", resumed, full)
	}
}

// TestResumeBadPlace: a count past the rows, a negative one, a token, and a file shorter
// than at the start are errors wrapping sources.ErrPosition, never a panic.
func TestResumeBadPlace(t *testing.T) {
	files, names := resumeFiles(t, 8)
	src, err := NewFiles(names, []Column{{Name: "id", Path: "id"}}, Options{Open: memOpener(files)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		samples int64
		token   []byte
	}{{-1, nil}, {40, nil}, {1 << 62, nil}, {3, []byte(`{"file":"a.parquet","line":3}`)}, {0, []byte{0}}} {
		if _, err := src.Resume(c.samples, c.token); !errors.Is(err, sources.ErrPosition) {
			t.Errorf("Resume(%d, %q) = %v, want ErrPosition", c.samples, c.token, err)
		}
	}
	// The second file lost rows since the run started.
	files["b.parquet"] = benchFile(t, []benchTextRow{{}}, 1)
	if _, err := src.Resume(30, nil); !errors.Is(err, sources.ErrPosition) {
		t.Errorf("a shorter file: %v, want ErrPosition", err)
	}
}
