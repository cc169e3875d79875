package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/format/mldf/decode"
	"github.com/mldf/convert/internal/inputfile"
	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/recipe"
)

// fileKind sniffs a file's first bytes: "mldf", "taridx", or "beton" (FFCV has no signature,
// so any other file with a .beton name).
func fileKind(path string) (string, error) {
	f, _, err := inputfile.OpenRegular(path) // a named pipe is refused, never waited on
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, 9)
	n, _ := io.ReadFull(f, head)
	return sniffKind(path, head[:n])
}

// sniffKind tells a file's kind from its first 9 bytes (head) and its name, for local files
// and objects in buckets alike.
func sniffKind(name string, head []byte) (string, error) {
	switch {
	case string(head) == mldf.Signature:
		return "mldf", nil
	case strings.HasPrefix(string(head), "TARIDX\x00"):
		return "taridx", nil
	case strings.HasSuffix(name, ".beton"):
		return "beton", nil
	}
	return "", fmt.Errorf("%s: %w (neither MLDF, TARIDX nor a .beton name)", name, mldf.ErrSignature)
}

func cmdInspect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	sampleN := new(int)
	intVar(fs, sampleN, "sample", -1, 0, math.MaxInt, "a sample index", "print the metadata of sample N")
	asJSON := fs.Bool("json", false, "print the description as JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErr("inspect", "inspect FILE [--sample N] [--json]")
	}
	if dir, ok := localDir(pos[0]); ok {
		return inspectSCDL(stdout, dir, *sampleN, *asJSON) // scdl.go
	}
	c := objstore.New()
	defer c.Close()
	kind, err := inputKind(ctx, c, pos[0])
	if err != nil {
		return err
	}
	switch kind {
	case "taridx":
		return inspectTaridx(ctx, c, stdout, pos[0], *sampleN, *asJSON)
	case "beton":
		return inspectBeton(stdout, pos[0], *sampleN, *asJSON)
	}
	r, err := openMLDF(ctx, c, pos[0])
	if err != nil {
		return err
	}
	defer r.Close()
	if *sampleN >= 0 {
		vals, err := r.Sample(*sampleN)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(stdout, vals)
		}
		fmt.Fprintf(stdout, "sample %d of %d\n", *sampleN, r.NumSamples())
		for _, v := range vals {
			fmt.Fprintf(stdout, "  %s\n", v)
		}
		return nil
	}
	d := r.Describe()
	if err := r.Err(); err != nil {
		return err
	}
	if err := sideClassNames(ctx, c, r, pos[0], &d); err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, d)
	}
	printDescription(stdout, &d)
	return nil
}

func printDescription(w io.Writer, d *mldf.Description) {
	fmt.Fprintf(w, "file       %s (%s)\n", d.File, human(uint64(d.FileSize)))
	fmt.Fprintf(w, "format     MLDF %s, flags %s, header checksum %016x\n", d.Version(), strings.Join(d.FlagNames, "|"), d.Checksum)
	fmt.Fprintf(w, "samples    %d, %d fields, %d-byte rows, page size %s\n", d.NumSamples, d.NumFields, d.RowSize, human(uint64(d.PageSize)))
	fmt.Fprintf(w, "sections   descriptors @%d, data @%d (%s), metadata @%d (%s), alloc table @%d (%d entries)\n",
		d.FieldDescPtr, d.DataPtr, human(d.DataRegionBytes), d.MetadataPtr, human(d.MetadataBytes), d.AllocTablePtr, d.AllocEntries)
	fmt.Fprintf(w, "pages      %d in the data region, %d holding payload, fill %.1f%% (%s of payload)\n",
		d.DataPages, d.PagesUsed, 100*d.PageFill, human(d.PayloadBytes))
	fmt.Fprintln(w, "fields")
	for _, f := range d.Fields {
		fmt.Fprintf(w, "  #%d %-16s %-17s row @%-3d", f.Index, f.Name, f.TypeName, f.RowOffset)
		if f.HasPayload {
			fmt.Fprintf(w, " %d payloads, %s, largest %s", f.Payloads, human(f.PayloadBytes), human(uint64(f.MaxPayload)))
		}
		if a := describeArguments(f.Type, f.Arguments); a != "" {
			fmt.Fprintf(w, "\n     arguments: %s", a)
		}
		switch {
		case f.ClassNamesError != "":
			fmt.Fprintf(w, "\n     class names: unreadable: %s", f.ClassNamesError)
		case f.ClassNames != nil:
			fmt.Fprintf(w, "\n     class names (%d, from the %s): %s", len(f.ClassNames), f.ClassNamesFrom, classList(f.ClassNames))
		case f.NumClasses > 0:
			fmt.Fprintf(w, "\n     class names: not in the file (nor in FILE%s beside it)", recipe.ClassesSuffix)
		}
		fmt.Fprintln(w)
	}
}

// classListMax is how many class names inspect prints in its text form (--json prints all).
const classListMax = 20

// classList formats class names for a line: each quoted (bounded), the first classListMax.
func classList(names []string) string {
	var b strings.Builder
	for i, n := range names {
		if i == classListMax {
			fmt.Fprintf(&b, ", …(%d more; --json lists them all)", len(names)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote.Q(n))
	}
	return b.String()
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
	names, err := recipe.ClassNames(ctx, c, r, file)
	if err != nil {
		return err
	}
	for k := range d.Fields {
		f := &d.Fields[k]
		if n, ok := names[f.Name]; ok && f.ClassNames == nil && f.ClassNamesError == "" {
			f.ClassNames, f.ClassNamesFrom = n, "side file "+quote.S(file+recipe.ClassesSuffix)
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
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErr("verify", "verify FILE [--decode] [--require-checksums] [--workers N]")
	}
	if dir, ok := localDir(pos[0]); ok {
		return verifySCDL(stdout, dir) // scdl.go
	}
	c := objstore.New()
	defer c.Close()
	kind, err := inputKind(ctx, c, pos[0])
	if err != nil {
		return err
	}
	switch kind {
	case "taridx":
		return verifyTaridx(ctx, c, stdout, pos[0])
	case "beton":
		return verifyBeton(stdout, pos[0])
	}
	opt := mldf.VerifyOptions{Workers: *workers}
	if *decodeAll {
		opt.NewDecoder = decode.NewPayloadDecoder
	}
	r, err := openMLDF(ctx, c, pos[0])
	if err != nil {
		return err
	}
	defer r.Close()
	rep, err := r.VerifyWith(ctx, opt)
	if err != nil {
		return err
	}
	what := "field rules hold"
	if *decodeAll {
		what = fmt.Sprintf("field rules hold, %d payloads decoded", rep.Decoded)
	}
	if !rep.Checksummed {
		fmt.Fprintf(stdout, "%s: structure verified; file has no checksums, so changed payload bytes cannot be detected: %d samples, %d fields, %d payloads (%s), %d pages used, fill %.1f%%; %s\n",
			rep.File, rep.Samples, rep.Fields, rep.Entries, human(rep.PayloadBytes), rep.PagesUsed, 100*rep.PageFill, what)
		if *requireSums {
			return fmt.Errorf("%s: %w: the file carries no checksums (written with checksums off) and --require-checksums is set", rep.File, errNoChecksums)
		}
		return nil
	}
	fmt.Fprintf(stdout, "%s: OK: %d samples, %d fields, %d payloads (%s), %d pages used, fill %.1f%%; every CRC-32C and the header xxhash64 match; %s\n",
		rep.File, rep.Samples, rep.Fields, rep.Entries, human(rep.PayloadBytes), rep.PagesUsed, 100*rep.PageFill, what)
	return nil
}

// errNoChecksums: verify --require-checksums on a file without checksums.
var errNoChecksums = errors.New("no checksums")

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
	return enc.Encode(v)
}

// human formats a byte count with a binary unit.
func human(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
