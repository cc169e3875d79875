package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/mldf/convert/format"
	_ "github.com/mldf/convert/format/beton" // registers the format
	_ "github.com/mldf/convert/format/mds"   // registers the format
	"github.com/mldf/convert/format/mldf"
	_ "github.com/mldf/convert/format/mldf/decode" // payload decoding and argument texts for verify and inspect
	_ "github.com/mldf/convert/format/scdl"        // registers the format
	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/recipe"
	"github.com/mldf/convert/runner"
)

// sniffKind tells a file's format from its first bytes (head) and its name, for local files
// and objects in buckets alike.
func sniffKind(name string, head []byte) (format.Format, error) {
	f, err := format.Sniff(name, head)
	if err != nil {
		return f, fmt.Errorf("%s: %w (neither MLDF, TARIDX nor a .beton name)", name, mldf.ErrSignature)
	}
	return f, nil
}

// openInput opens the file (or SCDL archive directory, local or in a bucket) arg names in
// the format its first bytes or its name say (openFormat, open.go). A folder is the
// directory format's archive, or nothing the read commands know (its Open says which files
// it lacks).
func openInput(ctx context.Context, c *objstore.Client, arg string) (format.File, error) {
	if isDir, err := c.IsDir(ctx, arg); err != nil || !isDir {
		return openFormat(ctx, c, arg)
	}
	if dir, local := objstore.FolderOf(arg).Dir(); local {
		f, ok := format.DirFormat(dir) // an MDS dataset (index.json), else an SCDL archive
		switch {
		case !ok:
			return openFormat(ctx, c, arg)
		case f.OpenDir != nil:
			return f.OpenDir(ctx, c, arg)
		}
		return f.OpenPath(ctx, dir)
	}
	for _, f := range format.Formats() { // a folder in a bucket: the formats that read one
		if !f.Dir || f.OpenDir == nil {
			continue
		}
		if f.Marker != "" {
			if name, err := objstore.Ref(arg, f.Marker); err != nil {
				continue
			} else if _, err := c.Stat(ctx, name); err != nil {
				continue
			}
		}
		return f.OpenDir(ctx, c, arg)
	}
	return openFormat(ctx, c, arg)
}

// printText prints t as text, or as indented JSON.
func printText(w io.Writer, t format.Text, asJSON bool) error {
	if asJSON {
		return writeJSON(w, t)
	}
	return t.WriteText(w)
}

func cmdInspect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	sampleN := new(int)
	intVar(fs, sampleN, "sample", -1, 0, math.MaxInt, "a sample index", "print the metadata of sample N")
	asJSON := fs.Bool("json", false, "print the description as JSON (docs/schema/inspect.schema.json, sample.schema.json)")
	return withInput(ctx, fs, args, "inspect FILE [--sample N] [--json]", func(c *objstore.Client, f format.File, name string) error {
		if *sampleN >= 0 {
			t, err := f.Sample(int64(*sampleN))
			if err != nil {
				return err
			}
			return printText(stdout, t, *asJSON)
		}
		t, err := f.Describe()
		if err != nil {
			return err
		}
		if mf, ok := f.(*mldf.File); ok {
			if err := sideClassNames(ctx, c, mf.Reader, name, t.(*mldf.Description)); err != nil {
				return err
			}
		}
		return printText(stdout, t, *asJSON)
	})
}

// withInput is the setup of the commands that read one file (inspect, verify): it parses args
// with fs, wants one argument FILE (else the usage error of usage), opens it (openInput) and
// calls use with the client, the file and its name, then closes both.
func withInput(ctx context.Context, fs *flag.FlagSet, args []string, usage string, use func(c *objstore.Client, f format.File, name string) error) error {
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErr(fs.Name(), usage)
	}
	c := objstore.New()
	defer c.Close()
	f, err := openInput(ctx, c, pos[0])
	if err != nil {
		return err
	}
	defer f.Close()
	return use(c, f, pos[0])
}

// sideClassNames fills in the class names of the class-label fields whose names the file
// does not hold from the side file FILE.classes.json, as older writers left them.
func sideClassNames(ctx context.Context, c *objstore.Client, r *mldf.Reader, file string, d *mldf.Description) error {
	missing := false
	for _, f := range d.Fields {
		missing = missing || (f.NumClasses > 0 && f.ClassNames == nil && f.ClassNamesError == "")
	}
	if !missing {
		return nil
	}
	names, err := runner.ClassNames(ctx, c, r, file)
	if err != nil {
		return err
	}
	for k := range d.Fields {
		f := &d.Fields[k]
		if n, ok := names[f.Name]; ok && f.ClassNames == nil && f.ClassNamesError == "" {
			f.ClassNames, f.ClassNamesFrom = n, "side file "+quote.S(file+mldf.ClassesSuffix)
		}
	}
	return nil
}

func cmdVerify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	decodeAll := fs.Bool("decode", false, "also decode every payload (JPEG, PNG, FLAC, JSON, UTF-8 text, token ids) and check it against its metadata")
	requireSums := fs.Bool("require-checksums", false, "fail when the file carries no checksums (only its structure can be verified)")
	workers := new(int)
	intVar(fs, workers, "workers", 0, 0, recipe.MaxWorkers, "0 = one per CPU", "goroutines decoding payloads with --decode (0 = one per CPU)")
	asJSON := fs.Bool("json", false, "print the report as JSON (docs/schema/verify.schema.json); errors too, on stderr")
	return withInput(ctx, fs, args, "verify FILE [--decode] [--require-checksums] [--workers N] [--json]", func(_ *objstore.Client, f format.File, _ string) error {
		t, err := f.Verify(ctx, format.VerifyOptions{Workers: *workers, Decode: *decodeAll, RequireChecksums: *requireSums})
		if t != nil {
			if werr := printText(stdout, t, *asJSON); err == nil {
				err = werr
			}
		}
		return err
	})
}

// errNoChecksums: verify --require-checksums on a file without checksums.
var errNoChecksums = mldf.ErrNoChecksums

func cmdCat(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("cat", flag.ContinueOnError)
	n := new(int)
	intVar(fs, n, "sample", -1, 0, math.MaxInt, "a sample index", "sample index")
	field := fs.String("field", "", "field name")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *n < 0 || *field == "" {
		return usageErr("cat", "cat FILE --sample N --field F > out")
	}
	c := objstore.New()
	defer c.Close()
	r, err := openMLDF(ctx, c, pos[0])
	if err != nil {
		return err
	}
	defer r.Close()
	f := r.FieldIndex(*field)
	if f < 0 {
		return fmt.Errorf("%s: no field %q (fields: %s)", pos[0], *field, fieldNames(r))
	}
	fd := r.Fields()[f]
	var payload []byte
	switch fd.Type {
	case mldf.TypeInt:
		v, err := r.Int(*n, f)
		if err != nil {
			return err
		}
		payload = fmt.Appendf(nil, "%d\n", v)
	case mldf.TypeFloat:
		v, err := r.Float(*n, f)
		if err != nil {
			return err
		}
		payload = fmt.Appendf(nil, "%v\n", v)
	default:
		if payload, err = r.Payload(*n, f); err != nil {
			return err
		}
	}
	_, err = stdout.Write(payload)
	return err
}

func fieldNames(r *mldf.Reader) string {
	var names []string
	for _, f := range r.Fields() {
		names = append(names, f.Name)
	}
	return strings.Join(names, ", ")
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// human formats a byte count with a binary unit.
func human(n uint64) string { return format.Size(n) }
