package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/mldf/convert/format"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/objstore"
)

// The read commands (inspect, verify, cat, export, index) open every input through objstore:
// a local file and an object in a bucket alike. Only objstore tells them apart; a local file
// is then mapped or opened by path, an object read with ranged requests.

// errRemoteKind: a file kind the read commands do not read from a bucket.
var errRemoteKind = errors.New("not readable from a bucket")

// openMLDF opens the MLDF file arg names through objstore: a local file is then mapped
// (mldf.Open, at memory speed), an object in a bucket is read with ranged requests
// (retried and resumed) through mldf.OpenReaderAt, in bounded memory and without
// downloading it.
func openMLDF(ctx context.Context, c *objstore.Client, arg string) (*mldf.Reader, error) {
	ra, err := c.OpenReaderAt(ctx, arg)
	if err != nil {
		return nil, err
	}
	if f := ra.File(); f != nil {
		path := f.Name()
		ra.Close()
		return mldf.Open(path)
	}
	r, err := mldf.OpenReaderAt(arg, ra, ra.Size())
	if err != nil {
		ra.Close()
		return nil, err
	}
	return r, nil
}

// openFormat opens the file arg names in its format (format.Sniff of its first bytes and its
// name): a local file through the format's OpenPath (MLDF is mapped), an object in a bucket
// through its Open over objstore.OpenReaderAt (ranged requests, retried and resumed, in
// bounded memory). A missing object or bucket, refused credentials or a named pipe is one
// error naming the input.
func openFormat(ctx context.Context, c *objstore.Client, arg string) (format.File, error) {
	ra, err := c.OpenReaderAt(ctx, arg)
	if err != nil {
		return nil, err
	}
	head := make([]byte, min(format.HeadSize, ra.Size()))
	if _, err := ra.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
		ra.Close()
		return nil, err
	}
	// The same classification as on disk: a damaged MLDF object is a bad signature, as its
	// bytes would be locally; only a kind that is never read from a bucket says so.
	f, err := sniffKind(arg, head)
	if err != nil {
		ra.Close()
		return nil, err
	}
	if lf := ra.File(); lf != nil {
		path := lf.Name()
		ra.Close()
		return f.OpenPath(ctx, path)
	}
	if f.Open == nil {
		ra.Close()
		return nil, fmt.Errorf("%s: %w: %s files are read from local disk only (copy it to a local disk first)", arg, errRemoteKind, f.Name)
	}
	file, err := f.Open(ctx, arg, ra, ra.Size())
	if err != nil {
		ra.Close()
		return nil, err
	}
	return file, nil // the file closes ra
}
