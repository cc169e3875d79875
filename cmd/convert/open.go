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

// Inputs named by URL (s3://, gs://, az://, azblob://, file://) are read through objstore;
// plain paths as before. This file is the one place the read commands (inspect, verify,
// cat, export, index) tell the two apart.

// errRemoteKind: a file kind the read commands do not read from a bucket yet.
var errRemoteKind = errors.New("not readable from a bucket")

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

// openMLDF opens the MLDF file arg names: a local file is mapped (reader.Open), an object
// in a bucket is read with ranged requests (objstore.OpenReaderAt, retried and resumed)
// through reader.OpenReaderAt, in bounded memory and without downloading it.
func openMLDF(ctx context.Context, c *objstore.Client, arg string) (*mldf.Reader, error) {
	path, local, err := localPath(arg)
	if err != nil {
		return nil, err
	}
	if local {
		return mldf.Open(path)
	}
	ra, err := c.OpenReaderAt(ctx, arg)
	if err != nil {
		return nil, err
	}
	r, err := mldf.OpenReaderAt(arg, ra, ra.Size())
	if err != nil {
		ra.Close()
		return nil, err
	}
	return r, nil
}

// openFormat opens the file arg names in its format (format.Sniff): a local file through
// the format's OpenPath (MLDF is mapped), an object in a bucket through its Open over
// objstore.OpenReaderAt (ranged requests, retried and resumed, in bounded memory). A
// missing object or bucket, or refused credentials, is one error naming the URL.
func openFormat(ctx context.Context, c *objstore.Client, arg string) (format.File, error) {
	path, local, err := localPath(arg)
	if err != nil {
		return nil, err
	}
	if local {
		f, err := fileKind(path)
		if err != nil {
			return nil, err
		}
		return f.OpenPath(ctx, path)
	}
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
	if err == nil && f.Open == nil {
		err = fmt.Errorf("%s: %w: MLDF files and TARIDX indexes are read from a bucket, .beton files are not (copy it to a local disk first)", arg, errRemoteKind)
	}
	if err != nil {
		ra.Close()
		return nil, err
	}
	file, err := f.Open(ctx, arg, ra, ra.Size())
	if err != nil {
		ra.Close()
		return nil, err
	}
	return file, nil // the file closes ra
}
