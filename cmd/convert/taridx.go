package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/mldf/convert/sources/tarsrc"
	"github.com/mldf/convert/taridx"
)

// cmdIndex writes a TARIDX index of one or more tar shards, byte-identical to the reference
// implementation's (glzn iTar).
func cmdIndex(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("index", flag.ContinueOnError)
	out := fs.String("o", "", "output .taridx")
	fs.StringVar(out, "output", "", "output .taridx (same as -o)")
	contiguous := fs.Bool("contiguous", false, "reorder rows so each sample's members are adjacent (sets flag bit 0)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 || *out == "" {
		return usageErr("index", "index SHARD.tar [SHARD2.tar ...] -o FOLD.taridx (globs and {000..127} ranges work)")
	}
	shards, err := tarsrc.Expand(pos)
	if err != nil {
		return err
	}
	if err := checkFileOutput(*out, "shard", shards...); err != nil {
		return err
	}
	if err := taridx.IndexFilesOpts(shards, *out, *contiguous); err != nil {
		return err
	}
	ix, err := taridx.Load(*out)
	if err != nil {
		return err
	}
	d := ix.Describe()
	fmt.Fprintf(stdout, "wrote %s: %d shards, %d rows, %d stems\n", *out, d.Shards, d.Rows, d.Stems)
	return nil
}

func inspectTaridx(w io.Writer, path string, row int, asJSON bool) error {
	ix, err := taridx.Load(path)
	if err != nil {
		return err
	}
	if row >= 0 {
		if row >= len(ix.Rows) {
			return fmt.Errorf("%s: row %d of %d", path, row, len(ix.Rows))
		}
		r := ix.Rows[row]
		if asJSON {
			return writeJSON(w, r)
		}
		fmt.Fprintf(w, "row %d: shard %d, header @%d, payload @%d, %d bytes, ext %q, crash id %d, keyhash %016x\n",
			row, r.FID, r.Offset, r.Offset+512, r.Size, ix.Ext(row), r.CrashID, r.KeyHash)
		return nil
	}
	d := ix.Describe()
	if asJSON {
		return writeJSON(w, d)
	}
	return d.WriteText(w)
}

func verifyTaridx(w io.Writer, path string) error {
	ix, err := taridx.Load(path) // Load applies every reader rule of the spec
	if err != nil {
		return err
	}
	d := ix.Describe()
	fmt.Fprintf(w, "%s: OK: TARIDX %s, %d rows, %d stems, %d shards\n", path, d.Version, d.Rows, d.Stems, d.Shards)
	return nil
}
