package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/mldf/convert/format/taridx"
	"github.com/mldf/convert/objstore"
)

// cmdIndex writes a TARIDX index of one or more tar shards, byte-identical to the reference
// implementation's (glzn iTar). Shards and the index may be local files or objects in a
// bucket: a shard in a bucket is read with ranged requests of its header blocks (payloads
// are skipped, never downloaded), and an index named by URL is uploaded whole at the end.
// With one shard and no -o, the index is written beside it (X.tar → X.taridx).
func cmdIndex(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("index", flag.ContinueOnError)
	out := fs.String("o", "", "output .taridx (same as --output)")
	fs.StringVar(out, "output", "", "output .taridx `FILE` (default with one shard: beside it, X.tar → X.taridx)")
	contiguous := fs.Bool("contiguous", false, "reorder rows so each sample's members are adjacent (sets flag bit 0)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	const synopsis = "index SHARD.tar [SHARD2.tar ...] [-o FOLD.taridx] (globs and {000..127} ranges work; paths or s3:// gs:// az:// URLs)"
	if len(pos) == 0 {
		return usageErr("index", synopsis)
	}
	c := objstore.New()
	defer c.Close()
	found, err := c.Expand(ctx, pos)
	if err != nil {
		return err
	}
	if *out == "" {
		if len(found) != 1 {
			return fmt.Errorf("%w: %d shards: name the index with -o (it is written beside a single shard only)", errUsage, len(found))
		}
		*out = strings.TrimSuffix(found[0].URL, ".tar") + ".taridx"
	}
	shards := make([]string, len(found))
	for i, a := range found {
		shards[i] = a.URL
	}
	// The index may not be one of its shards (compared by identity, local or in a bucket),
	// and its place must take a new file (checked before any shard is read).
	if err := checkFileOutput(*out, "shard", shards...); err != nil {
		return err
	}
	if err := c.CheckWrite(ctx, *out); err != nil {
		return err
	}
	w := taridx.NewWriter()
	for _, s := range shards {
		if err := addShard(ctx, c, w, s); err != nil {
			return err
		}
	}
	if *contiguous {
		w.EnforceContiguous()
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		return fmt.Errorf("taridx: %s: %w", *out, err)
	}
	ix, err := taridx.Parse(buf.Bytes())
	if err != nil {
		return fmt.Errorf("%s: %w", *out, err)
	}
	if err := c.WriteFile(ctx, *out, buf.Bytes()); err != nil { // atomic, local or in a bucket
		return err
	}
	d := ix.Describe()
	fmt.Fprintf(stdout, "wrote %s: %d shards, %d rows, %d stems\n", *out, d.Shards, d.Rows, d.Stems)
	return nil
}

// addShard adds one shard, a local file or an object in a bucket, to w: its headers are
// read through objstore's ReaderAt (ranged reads in a bucket).
func addShard(ctx context.Context, c *objstore.Client, w *taridx.Writer, shard string) error {
	ra, err := c.OpenReaderAt(ctx, shard)
	if err != nil {
		return err
	}
	defer ra.Close()
	return w.AddShard(ra, ra.Size(), shard)
}
