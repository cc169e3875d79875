package parquet

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/mldf/convert/internal/inputfile"
	"github.com/mldf/convert/internal/pqfile"
	"github.com/mldf/convert/objstore"
)

// Blob is an opened input: random access to its bytes and its size. A file on disk is one; a
// ranged reader over an object in a bucket is another.
type Blob interface {
	io.ReaderAt
	io.Closer
	Size() int64
}

// Opener opens an input by name. The default opens local files; object storage plugs in here
// (the reader needs nothing but ReadAt and the size).
type Opener func(name string) (Blob, error)

// OpenFile is the default Opener: a local regular file (a named pipe, a device or a
// directory is refused without blocking in open(2)).
func OpenFile(name string) (Blob, error) {
	f, st, err := inputfile.OpenRegular(name)
	if err != nil {
		return nil, err
	}
	return &osBlob{File: f, size: st.Size()}, nil
}

// StoreOpener returns an Opener for local paths and URLs through store.OpenRegular: a local
// file (or file:// URL) as OpenFile opens it, an object in a bucket through ranged reads
// (each ReadAt one ranged GET, retried and resumed under ctx), so footers and column chunks
// are read where they lie, never the whole object.
func StoreOpener(ctx context.Context, store *objstore.Client) Opener {
	return func(name string) (Blob, error) {
		r, err := store.OpenRegular(ctx, name)
		if err != nil {
			return nil, err
		}
		return r, nil
	}
}

type osBlob struct {
	*os.File
	size int64
}

func (b *osBlob) Size() int64 { return b.size }

// file is an opened Parquet file: its blob, its checked footer and its schema (the library's tree).
type file struct {
	name   string
	blob   Blob
	pqf    *pqfile.File
	schema *Schema
	meta   map[string]string // key-value metadata
}

// openFile opens and checks the footer of a Parquet file through the guarded opener
// (internal/pqfile): every size the footer claims is checked against the file's size and
// the schema's size and depth are bounded before anything is allocated for them, and a
// panic of the library becomes an error naming the file.
func openFile(open Opener, name string) (f *file, err error) {
	blob, err := open(name)
	if err != nil {
		return nil, fmt.Errorf("parquet: %s: %w", name, err)
	}
	defer func() {
		if err != nil {
			blob.Close()
		}
	}()
	pqf, err := pqfile.Open(blob, blob.Size(), name)
	if err != nil {
		return nil, err
	}
	schema, err := newSchema(pqf.Root(), pqf.Schema)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	kv := map[string]string{}
	for _, e := range pqf.KeyValue {
		kv[e.Key] = e.Value
	}
	return &file{name: name, blob: blob, pqf: pqf, schema: schema, meta: kv}, nil
}

func (f *file) close() { f.blob.Close() }
