package pagewriter_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/pagewriter"
	"github.com/mldf/convert/pagewriter/pwtest"
)

// Rows taken out by BeforeClaim leave the output as if they had never been appended.
func TestRemoveBeforeClaim(t *testing.T) {
	fields := []mldf.FieldDesc{{Name: "label", Type: mldf.TypeInt}, {Name: "b", Type: mldf.TypeBytes}}
	write := func(t *testing.T, rows []int, remove [][]int) []byte {
		c, err := mldf.New(mldf.Options{PageSize: 4096, Fields: fields})
		if err != nil {
			t.Fatal(err)
		}
		m := pwtest.NewMemory("mem", t.TempDir())
		w, err := pagewriter.New(m.Opener(), c, pagewriter.Options{})
		if err != nil {
			t.Fatal(err)
		}
		// Two batches of the given rows, split in the middle.
		half := len(rows) / 2
		for k, part := range [][]int{rows[:half], rows[half:]} {
			b := w.NewBatch()
			for _, r := range part {
				row := make([]byte, w.RowSize())
				mldf.PutInt(row, int64(r))
				var pay []byte
				if r%3 != 0 { // some rows without a payload
					pay = bytes.Repeat([]byte{byte(r)}, 100+r*300)
				}
				if err := b.Append(row, [][]byte{nil, pay}); err != nil {
					t.Fatal(err)
				}
			}
			if remove != nil {
				drop := remove[k]
				b.BeforeClaim = func(int64) error { b.Remove(drop); return nil }
			}
			if err := w.Commit(context.Background(), w.Issue(), b); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Finish(); err != nil {
			t.Fatal(err)
		}
		return m.Bytes()
	}
	all := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	cases := []struct {
		name   string
		remove [][]int // by index in each batch
		kept   []int
	}{
		{"none", [][]int{nil, nil}, all},
		{"some", [][]int{{1, 4}, {4}}, []int{0, 2, 3, 5, 6, 7, 8}},
		{"first and last", [][]int{{0}, {4}}, []int{1, 2, 3, 4, 5, 6, 7, 8}},
		{"a whole batch", [][]int{{0, 1, 2, 3, 4}, nil}, []int{5, 6, 7, 8, 9}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := write(t, all, c.remove)
			// The same kept rows, appended alone, in the same two batches.
			var first, second []int
			for _, r := range c.kept {
				if r < 5 {
					first = append(first, r)
				} else {
					second = append(second, r)
				}
			}
			want := writeSplit(t, fields, first, second)
			if !bytes.Equal(got, want) {
				t.Fatalf("output with rows removed differs from one without them (%d vs %d bytes)", len(got), len(want))
			}
		})
	}
}

func writeSplit(t *testing.T, fields []mldf.FieldDesc, parts ...[]int) []byte {
	c, err := mldf.New(mldf.Options{PageSize: 4096, Fields: fields})
	if err != nil {
		t.Fatal(err)
	}
	m := pwtest.NewMemory("mem", t.TempDir())
	w, err := pagewriter.New(m.Opener(), c, pagewriter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range parts {
		b := w.NewBatch()
		for _, r := range part {
			row := make([]byte, w.RowSize())
			mldf.PutInt(row, int64(r))
			var pay []byte
			if r%3 != 0 {
				pay = bytes.Repeat([]byte{byte(r)}, 100+r*300)
			}
			if err := b.Append(row, [][]byte{nil, pay}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Commit(context.Background(), w.Issue(), b); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	return m.Bytes()
}
