package mldf

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/pagewriter"
	"github.com/mldf/convert/pagewriter/pwtest"
)

// writeRows writes one chunk of rows and payloads with a container of fields.
func writeRows(t *testing.T, path string, page int64, fields []FieldDesc, rows [][]byte, pays [][][]byte) {
	t.Helper()
	c, err := New(Options{PageSize: page, Fields: fields, Checksums: true})
	if err != nil {
		t.Fatal(err)
	}
	w, err := pagewriter.New(pagewriter.LocalFile(path, pagewriter.FileOptions{}), c, pagewriter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = pwtest.Drive(context.Background(), w, 1, 1, func(_ int, b *pagewriter.Batch) error {
		for i := range rows {
			if err := b.Append(rows[i], pays[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		w.Abort()
		t.Fatal(err)
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
}

// TestClassNamesGolden: the writer produces testdata/golden/classes.mldf (built by hand from
// docs/FORMAT.md §14 by manifest's TestGoldenClasses) from its names and samples.
func TestClassNamesGolden(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", "classes.mldf"))
	if err != nil {
		t.Skip("golden file missing:", err)
	}
	names := []string{"cat", "dog", "fish & chips"}
	var a [ArgumentsSize]byte
	ClassLabelArgs{NumClasses: 3, NamesHash: ClassNamesHash(names)}.Put(&a)
	fields := []FieldDesc{
		{Name: "label", Type: TypeInt, Arguments: a, ClassNames: names},
		{Name: "data", Type: TypeBytes},
	}
	labels := []int64{0, 2, -1}
	data := [][]byte{[]byte("hello"), nil, []byte("world!")}
	var rows [][]byte
	var pays [][][]byte
	for i := range labels {
		row := make([]byte, 24)
		PutInt(row, labels[i])
		rows = append(rows, row)
		pays = append(pays, [][]byte{nil, data[i]})
	}
	path := filepath.Join(t.TempDir(), "classes.mldf")
	writeRows(t, path, 4096, fields, rows, pays)
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, want) {
		t.Fatalf("writer output differs from the golden file (%d vs %d bytes)", len(got), len(want))
	}

	// Arguments without the names' members, and no arguments at all, give the same bytes.
	fields[0].Arguments = [ArgumentsSize]byte{}
	path2 := filepath.Join(t.TempDir(), "classes2.mldf")
	writeRows(t, path2, 4096, fields, rows, pays)
	if got, _ := os.ReadFile(path2); !bytes.Equal(got, want) {
		t.Fatal("names without class-label arguments: bytes differ")
	}
}

// TestClassNamesPlacement: blocks follow each other 8-aligned and push data_ptr to the next
// page when they do not fit the first one; a file read back gives every field its names.
func TestClassNamesPlacement(t *testing.T) {
	big := make([]string, 1000)
	for i := range big {
		big[i] = strings.Repeat("n", 1+i%7) + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
	}
	fields := []FieldDesc{
		{Name: "a", Type: TypeInt, ClassNames: []string{"x"}},
		{Name: "b", Type: TypeInt, ClassNames: big},
		{Name: "c", Type: TypeInt},
	}
	row := make([]byte, 24)
	path := filepath.Join(t.TempDir(), "p.mldf")
	writeRows(t, path, 4096, fields, [][]byte{row}, [][][]byte{nil})
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if h := r.Header(); h.VersionMinor != 1 || h.DataPtr <= 4096 || h.DataPtr%4096 != 0 {
		t.Fatalf("header %+v", h)
	}
	if got, err := r.ClassNames(0); err != nil || len(got) != 1 || got[0] != "x" {
		t.Fatalf("a: %q %v", got, err)
	}
	if got, err := r.ClassNames(1); err != nil || len(got) != len(big) || got[999] != big[999] {
		t.Fatalf("b: %d names, %v", len(got), err)
	}
	if got, err := r.ClassNames(2); got != nil || err != nil {
		t.Fatalf("c: %q %v", got, err)
	}
	if _, err := r.Verify(); err != nil {
		t.Fatal(err)
	}
}

func TestClassNamesBad(t *testing.T) {
	var wrong [ArgumentsSize]byte
	ClassLabelArgs{NumClasses: 2, NamesHash: 1}.Put(&wrong)
	for _, tc := range []struct {
		name string
		d    FieldDesc
	}{
		{"empty name", FieldDesc{Name: "l", Type: TypeInt, ClassNames: []string{"a", ""}}},
		{"duplicate", FieldDesc{Name: "l", Type: TypeInt, ClassNames: []string{"a", "a"}}},
		{"not UTF-8", FieldDesc{Name: "l", Type: TypeInt, ClassNames: []string{"\xff"}}},
		{"too long", FieldDesc{Name: "l", Type: TypeInt, ClassNames: []string{strings.Repeat("a", MaxClassNameLen+1)}}},
		{"not INT", FieldDesc{Name: "l", Type: TypeBytes, ClassNames: []string{"a"}}},
		{"hash mismatch", FieldDesc{Name: "l", Type: TypeInt, Arguments: wrong, ClassNames: []string{"a", "b"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(Options{PageSize: 4096, Fields: []FieldDesc{tc.d}}); !errors.Is(err, ErrClassNames) {
				t.Fatalf("got %v", err)
			}
		})
	}
}
