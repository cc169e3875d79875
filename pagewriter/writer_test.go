package pagewriter_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/pagewriter"
	"github.com/mldf/convert/pagewriter/pwtest"
)

// broken is an MLDF container whose finalizer delivers a byte twice or leaves one out.
type broken struct {
	*mldf.Container
	twice bool
}

func (b broken) Finish(f *pagewriter.Final) (pagewriter.Result, error) {
	res, err := b.Container.Finish(f)
	if err != nil {
		return res, err
	}
	if b.twice {
		return res, f.WriteAt([]byte{1}, 100)
	}
	res.Size++ // one byte past the end nobody wrote
	return res, nil
}

// The coverage rule is checked, not assumed: a finalizer that writes a byte twice, or
// declares a size with a byte nobody delivered, fails Finish, and the sink is aborted.
func TestCoverageChecked(t *testing.T) {
	fields := []mldf.FieldDesc{{Name: "label", Type: mldf.TypeInt}, {Name: "b", Type: mldf.TypeBytes}}
	for _, twice := range []bool{true, false} {
		c, err := mldf.New(mldf.Options{PageSize: 4096, Fields: fields})
		if err != nil {
			t.Fatal(err)
		}
		m := pwtest.NewMemory("mem", t.TempDir())
		w, err := pagewriter.New(m.Opener(), broken{c, twice}, pagewriter.Options{})
		if err != nil {
			t.Fatal(err)
		}
		err = pwtest.Drive(context.Background(), w, 2, 10, func(k int, b *pagewriter.Batch) error {
			row := make([]byte, w.RowSize())
			mldf.PutInt(row, int64(k))
			return b.Append(row, [][]byte{nil, make([]byte, 1000+k*700)})
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Finish(); !errors.Is(err, pwtest.ErrCoverage) {
			t.Fatalf("twice %v: Finish gave %v, want ErrCoverage", twice, err)
		}
		if m.Bytes() != nil {
			t.Fatal("bytes committed")
		}
	}
}

// More rows than the container has room for fail the claim with the container's error.
func TestMaxRows(t *testing.T) {
	fields := []mldf.FieldDesc{{Name: "label", Type: mldf.TypeInt}}
	c, err := mldf.New(mldf.Options{PageSize: 4096, Fields: fields})
	if err != nil {
		t.Fatal(err)
	}
	m := pwtest.NewMemory("mem", t.TempDir())
	w, err := pagewriter.New(m.Opener(), limited{c}, pagewriter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	b := w.NewBatch()
	for range 4 {
		if err := b.Append(make([]byte, w.RowSize()), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(context.Background(), w.Issue(), b); !errors.Is(err, pagewriter.ErrTooManyRows) {
		t.Fatalf("got %v", err)
	}
}

type limited struct{ *mldf.Container }

func (l limited) Layout() pagewriter.Layout {
	lay := l.Container.Layout()
	lay.MaxRows = 3
	return lay
}
