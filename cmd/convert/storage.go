package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/inputfile"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/pagewriter"
	"github.com/mldf/convert/pagewriter/multipart"
)

// storage is where a command writes: local paths through the page writer's files, bucket URLs
// (s3://, gs://, az://) through one objstore client (docs/STORAGE.md, "Writing").
type storage struct {
	client *objstore.Client
	// abortOlderThan: before uploading to a key, incomplete uploads to that exact key started
	// more than this long ago are aborted (those of killed runs); 0 aborts them all.
	abortOlderThan time.Duration
}

func newStorage() *storage { return &storage{client: objstore.New()} }

func (s *storage) Close() error { return s.client.Close() }

// isObject reports whether name is a bucket URL; plain paths and file:// URLs are local. A
// malformed URL counts as one (objstore refuses it): a string with a scheme is never local.
func isObject(name string) bool { return objstore.IsURL(name) }

// plainPath turns a file:// URL into the path it names; anything else is returned as is.
func plainPath(name string) string {
	if l, err := objstore.Parse(name); err == nil && l.IsLocal() {
		return l.Key
	}
	return name
}

// checkWrite checks, before any work, that every bucket URL among names can be written: the
// bucket exists and the credentials may write there. Local paths are checked by checkOutputs.
func (s *storage) checkWrite(ctx context.Context, names ...string) error {
	for _, n := range names {
		if n != "" && isObject(n) {
			if err := s.client.CheckWrite(ctx, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// sink returns the page writer's sink for output: nil (the local file) for a local path, a
// multipart upload for a bucket URL. The upload starts when the writer opens the sink; just
// before, the incomplete uploads a killed run left at that key are aborted.
func (s *storage) sink(ctx context.Context, output string) pagewriter.SinkOpener {
	if !isObject(output) {
		return nil
	}
	start := func() (multipart.Uploader, error) {
		if _, err := s.client.AbortIncomplete(ctx, output, s.abortOlderThan); err != nil {
			return nil, err
		}
		return s.client.NewUpload(ctx, output)
	}
	return pagewriter.Multipart(ctx, output, start, multipart.Options{})
}

// writeSmall writes b at path atomically: a bucket object that appears whole, or a local
// temporary file (unnamed on Linux, so kill -9 leaves nothing) renamed onto path.
func (s *storage) writeSmall(ctx context.Context, path string, b []byte) error {
	if isObject(path) {
		return s.client.WriteFile(ctx, path, b)
	}
	path = plainPath(path)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	o, err := pagewriter.CreateOutput(path, nil)
	if err != nil {
		return err
	}
	if _, err := o.WriteAt(b, 0); err != nil {
		o.Abort()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return o.Commit()
}

// maxSmall bounds the small objects read back (completion records).
const maxSmall = 16 << 20

// readSmall reads a small file or object whole.
func (s *storage) readSmall(ctx context.Context, path string) ([]byte, error) {
	if !isObject(path) {
		return inputfile.ReadFile(plainPath(path))
	}
	r, err := s.client.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if r.Size() > maxSmall {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d expected", path, r.Size(), maxSmall)
	}
	return io.ReadAll(r)
}

// errNotMLDF is an object whose first bytes are not an MLDF header.
var errNotMLDF = errors.New("not an MLDF file")

// objectHeader reads the MLDF header of a bucket object (one ranged read).
func (s *storage) objectHeader(ctx context.Context, url string) (mldf.Header, error) {
	r, err := s.client.OpenReaderAt(ctx, url)
	if err != nil {
		return mldf.Header{}, err
	}
	defer r.Close()
	b := make([]byte, mldf.PreambleSize)
	if _, err := r.ReadAt(b, 0); err != nil {
		return mldf.Header{}, fmt.Errorf("%s: %w: %w", url, errNotMLDF, err)
	}
	if string(b[:mldf.SignatureSize]) != mldf.Signature {
		return mldf.Header{}, fmt.Errorf("%s: %w (bad signature)", url, errNotMLDF)
	}
	h, err := mldf.DecodeHeader(b[mldf.HeaderOffset:])
	if err != nil {
		return mldf.Header{}, fmt.Errorf("%s: %w: %w", url, errNotMLDF, err)
	}
	return h, nil
}

// cmdStorage runs the storage subcommands: ls-incomplete and abort-incomplete.
func cmdStorage(ctx context.Context, args []string, stdout, _ io.Writer) error {
	const synopsis = "storage ls-incomplete PREFIX_URL | storage abort-incomplete URL [--older-than D]"
	if len(args) == 0 {
		return usageErr("storage", synopsis)
	}
	fs := flag.NewFlagSet("storage "+args[0], flag.ContinueOnError)
	olderThan := new(time.Duration)
	durationVar(fs, olderThan, "older-than", "abort-incomplete: only uploads started more than this long ago (e.g. 24h; 0 = all)")
	pos, err := parseArgs(fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErr("storage", synopsis)
	}
	st := newStorage()
	defer st.Close()
	switch args[0] {
	case "ls-incomplete":
		list, err := st.client.ListIncomplete(ctx, pos[0])
		if err != nil {
			return err
		}
		for _, u := range list {
			started := "unknown"
			if !u.Initiated.IsZero() {
				started = u.Initiated.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(stdout, "%s\tstarted %s\tupload %s\n", u.URL, started, u.ID)
		}
		fmt.Fprintf(stdout, "%d incomplete uploads under %s\n", len(list), pos[0])
		return nil
	case "abort-incomplete":
		n, err := st.client.AbortIncomplete(ctx, pos[0], *olderThan)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "aborted %d incomplete uploads to %s\n", n, pos[0])
		return nil
	}
	return usageErr("storage", synopsis)
}
