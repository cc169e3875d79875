package main

import (
	"context"
	"errors"
	"io"

	"github.com/mldf/convert/format/beton"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/objstore"
)

// Inputs named by URL (s3://, gs://, az://, azblob://, file://) are read through objstore;
// plain paths as before. This file is the one place the read commands (inspect, verify,
// cat, export, index) tell the two apart.

// localPath returns the local path arg names (a plain path, or a file:// URL) and true, or
// false for an object in a bucket. A malformed URL is an error naming it.
func localPath(arg string) (string, bool, error) {
	l, err := objstore.Parse(arg)
	if err != nil {
		return "", false, err
	}
	if l.IsLocal() {
		return l.Key, true, nil
	}
	return "", false, nil
}

// openMLDF opens the MLDF file arg names through objstore: a local file is then mapped
// (reader.Open, at memory speed), an object in a bucket is read with ranged requests
// (retried and resumed) through reader.OpenReaderAt, in bounded memory and without
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

// openBeton opens the .beton file arg names through objstore, a local file and an object
// in a bucket alike (ranged reads, in bounded memory); close releases it.
func openBeton(ctx context.Context, c *objstore.Client, arg string) (r *beton.Reader, close func() error, err error) {
	ra, err := c.OpenReaderAt(ctx, arg)
	if err != nil {
		return nil, nil, err
	}
	if r, err = beton.NewReader(ra, ra.Size(), arg); err != nil {
		ra.Close()
		return nil, nil, err
	}
	return r, ra.Close, nil
}

// inputKind is fileKind for any input, read through objstore: the first bytes with one
// read (a ranged request in a bucket). A missing object or bucket, refused credentials or
// a named pipe is one error naming the input.
func inputKind(ctx context.Context, c *objstore.Client, arg string) (string, error) {
	ra, err := c.OpenReaderAt(ctx, arg)
	if err != nil {
		return "", err
	}
	defer ra.Close()
	head := make([]byte, min(9, ra.Size()))
	if _, err := ra.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	// A damaged MLDF file is a bad signature, in a bucket as on disk.
	return sniffKind(arg, head)
}
