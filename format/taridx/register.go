package taridx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/mldf/convert/format"
	"github.com/mldf/convert/internal/jsonout"
)

func init() {
	format.Register(format.Format{Name: formatName, Magic: Magic[:7], // byte 7 is Parse's to check
		OpenPath: func(_ context.Context, path string) (format.File, error) {
			ix, err := Load(path) // Load and Parse apply every reader rule of the spec
			if err != nil {
				return nil, err
			}
			return &File{Index: ix, Name: path}, nil
		},
		Open: func(_ context.Context, name string, ra io.ReaderAt, size int64) (format.File, error) {
			if size > MaxRemoteIndex {
				return nil, fmt.Errorf("%s: %w: a %d-byte index (at most %d is read from a bucket)", name, ErrRemoteSize, size, int64(MaxRemoteIndex))
			}
			b := make([]byte, size)
			if _, err := ra.ReadAt(b, 0); err != nil && !(errors.Is(err, io.EOF) && size == 0) {
				return nil, err
			}
			ix, err := Parse(b)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if c, ok := ra.(io.Closer); ok { // the index is in memory now
				if err := c.Close(); err != nil {
					return nil, err
				}
			}
			return &File{Index: ix, Name: name}, nil
		},
	})
}

// MaxRemoteIndex bounds an index read through format.Format.Open (from a bucket): it is
// parsed in memory, as Load does.
const MaxRemoteIndex = 1 << 30

// ErrRemoteSize: an index larger than MaxRemoteIndex given to format.Format.Open.
var ErrRemoteSize = errors.New("not readable from a bucket")

// File is an index as a format.File; Name names it in messages.
type File struct {
	*Index
	Name string
}

// Describe returns the index's Description.
func (f *File) Describe() (format.Text, error) {
	d := f.Index.Describe()
	d.File = f.Name
	return d, nil
}

// Sample returns row i.
func (f *File) Sample(i int64) (format.Text, error) {
	if i < 0 || i >= int64(len(f.Rows)) {
		return nil, fmt.Errorf("%s: row %d of %d", f.Name, i, len(f.Rows))
	}
	return RowText{File: f.Name, Index: int(i), Of: len(f.Rows), Row: f.Rows[i], Ext: f.Ext(int(i))}, nil
}

// Verify returns the report: Load and Parse applied every reader rule already.
func (f *File) Verify(context.Context, format.VerifyOptions) (format.Text, error) {
	d := f.Index.Describe()
	d.File = f.Name
	return verifyText{name: f.Name, d: d}, nil
}

// Close does nothing: the index is in memory.
func (f *File) Close() error { return nil }

// RowText is one row as inspect --sample shows it; it encodes as RowJSON.
type RowText struct {
	File      string
	Index, Of int
	Row       Row
	Ext       string
}

// WriteText prints the row on one line.
func (r RowText) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "row %d: shard %d, header @%d, payload @%d, %d bytes, ext %q, crash id %d, keyhash %016x\n",
		r.Index, r.Row.FID, r.Row.Offset, r.Row.Offset+512, r.Row.Size, r.Ext, r.Row.CrashID, r.Row.KeyHash)
	return err
}

type verifyText struct {
	name string
	d    Description
}

func (t verifyText) MarshalJSON() ([]byte, error) { return json.Marshal(t.d.JSON(jsonout.KindVerify)) }

func (t verifyText) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "%s: OK: TARIDX %s, %d rows, %d stems, %d shards\n", t.name, t.d.Version, t.d.Rows, t.d.Stems, t.d.Shards)
	return err
}
