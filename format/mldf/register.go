package mldf

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/mldf/convert/format"
	"github.com/mldf/convert/internal/jsonout"
	"github.com/mldf/convert/internal/quote"
)

func init() {
	format.Register(format.Format{Name: formatName, Magic: Signature,
		OpenPath: func(_ context.Context, path string) (format.File, error) {
			r, err := Open(path)
			if err != nil {
				return nil, err
			}
			return &File{r}, nil
		},
		Open: func(_ context.Context, name string, ra io.ReaderAt, size int64) (format.File, error) {
			r, err := OpenReaderAt(name, ra, size)
			if err != nil {
				return nil, err
			}
			return &File{r}, nil
		},
	})
}

// Codecs are what the reader needs from the field encoders, the layer above it: a payload
// decoder for VerifyOptions.NewDecoder (format.VerifyOptions.Decode) and the text of a
// field's arguments for the description. Package format/mldf/decode registers them.
type Codecs struct {
	NewDecoder    func() (PayloadDecoder, error)
	ArgumentsText func(t TypeID, a [ArgumentsSize]byte) string
	// FilterName names an image field's resampling filter id (ImageArgs.Filter) for the
	// JSON description; nil leaves the name out (the id is always given).
	FilterName func(id uint8) string
}

var (
	codecsMu sync.RWMutex
	codecs   Codecs
)

// RegisterCodecs sets the codecs; it is called once, from format/mldf/decode's init.
func RegisterCodecs(c Codecs) {
	codecsMu.Lock()
	defer codecsMu.Unlock()
	codecs = c
}

func registered() Codecs {
	codecsMu.RLock()
	defer codecsMu.RUnlock()
	return codecs
}

// ErrNoChecksums: verification with format.VerifyOptions.RequireChecksums of a file
// written without checksums.
var ErrNoChecksums = errors.New("no checksums")

// ErrNoDecoder: decoding was asked for and no decoder is registered (format/mldf/decode is
// not linked in).
var ErrNoDecoder = errors.New("mldf: no payload decoder registered")

// ClassesSuffix is the suffix of the side file older writers left the class names in
// (FILE.classes.json).
const ClassesSuffix = ".classes.json"

// File is an MLDF file as a format.File.
type File struct{ *Reader }

// Describe returns the file's *Description.
func (f *File) Describe() (format.Text, error) {
	d := f.Reader.Describe()
	if err := f.Err(); err != nil {
		return nil, err
	}
	return &d, nil
}

// Sample returns sample i's values.
func (f *File) Sample(i int64) (format.Text, error) {
	vals, err := f.Reader.Sample(int(i))
	if err != nil {
		return nil, err
	}
	return SampleText{File: f.Name(), Index: int(i), Of: f.NumSamples(), Values: vals}, nil
}

// Verify verifies every rule (VerifyWith) and returns the one-line report.
func (f *File) Verify(ctx context.Context, o format.VerifyOptions) (format.Text, error) {
	opt := VerifyOptions{Workers: o.Workers}
	if o.Decode {
		if opt.NewDecoder = registered().NewDecoder; opt.NewDecoder == nil {
			return nil, ErrNoDecoder
		}
	}
	rep, err := f.VerifyWith(ctx, opt)
	if err != nil {
		return nil, err
	}
	t := verifyText{rep: rep, decode: o.Decode}
	if !rep.Checksummed && o.RequireChecksums {
		return t, fmt.Errorf("%s: %w: the file carries no checksums (written with checksums off) and --require-checksums is set", rep.File, ErrNoChecksums)
	}
	return t, nil
}

// SampleText is one sample's values as inspect --sample shows them; it encodes as
// SampleJSON.
type SampleText struct {
	File      string
	Index, Of int
	Values    []FieldValue
}

// MarshalJSON encodes the sample as SampleJSON.
func (s SampleText) MarshalJSON() ([]byte, error) {
	out := SampleJSON{DocJSON: format.NewDocJSON(jsonout.KindSample, formatName, s.File), Index: s.Index,
		NumSamples: s.Of, Values: make([]ValueJSON, len(s.Values))}
	for i, v := range s.Values {
		out.Values[i] = v.JSON()
	}
	return json.Marshal(out)
}

// WriteText prints "sample I of N" and one value a line.
func (s SampleText) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "sample %d of %d\n", s.Index, s.Of)
	for _, v := range s.Values {
		fmt.Fprintf(w, "  %s\n", v)
	}
	return nil
}

type verifyText struct {
	rep    *VerifyReport
	decode bool
}

func (t verifyText) MarshalJSON() ([]byte, error) { return json.Marshal(t.rep.JSON(t.decode)) }

func (t verifyText) WriteText(w io.Writer) error {
	rep, size := t.rep, format.Size
	what := "field rules hold"
	if t.decode {
		what = fmt.Sprintf("field rules hold, %d payloads decoded", rep.Decoded)
	}
	if !rep.Checksummed {
		_, err := fmt.Fprintf(w, "%s: structure verified; file has no checksums, so changed payload bytes cannot be detected: %d samples, %d fields, %d payloads (%s), %d pages used, fill %.1f%%; %s\n",
			rep.File, rep.Samples, rep.Fields, rep.Entries, size(rep.PayloadBytes), rep.PagesUsed, 100*rep.PageFill, what)
		return err
	}
	_, err := fmt.Fprintf(w, "%s: OK: %d samples, %d fields, %d payloads (%s), %d pages used, fill %.1f%%; every CRC-32C and the header xxhash64 match; %s\n",
		rep.File, rep.Samples, rep.Fields, rep.Entries, size(rep.PayloadBytes), rep.PagesUsed, 100*rep.PageFill, what)
	return err
}

// WriteText prints the description as convert inspect shows it.
func (d *Description) WriteText(w io.Writer) error {
	size := format.Size
	argsText := registered().ArgumentsText
	fmt.Fprintf(w, "file       %s (%s)\n", d.File, size(uint64(d.FileSize)))
	fmt.Fprintf(w, "format     MLDF %s, flags %s, header checksum %016x\n", d.Version(), strings.Join(d.FlagNames, "|"), d.Checksum)
	fmt.Fprintf(w, "samples    %d, %d fields, %d-byte rows, page size %s\n", d.NumSamples, d.NumFields, d.RowSize, size(uint64(d.PageSize)))
	fmt.Fprintf(w, "sections   descriptors @%d, data @%d (%s), metadata @%d (%s), alloc table @%d (%d entries)\n",
		d.FieldDescPtr, d.DataPtr, size(d.DataRegionBytes), d.MetadataPtr, size(d.MetadataBytes), d.AllocTablePtr, d.AllocEntries)
	fmt.Fprintf(w, "pages      %d in the data region, %d holding payload, fill %.1f%% (%s of payload)\n",
		d.DataPages, d.PagesUsed, 100*d.PageFill, size(d.PayloadBytes))
	fmt.Fprintln(w, "fields")
	for _, f := range d.Fields {
		fmt.Fprintf(w, "  #%d %-16s %-17s row @%-3d", f.Index, f.Name, f.TypeName, f.RowOffset)
		if f.HasPayload {
			fmt.Fprintf(w, " %d payloads, %s, largest %s", f.Payloads, size(f.PayloadBytes), size(uint64(f.MaxPayload)))
		}
		a := ""
		if argsText != nil {
			a = argsText(f.Type, f.Arguments)
		} else {
			a = hexArguments(f.Arguments)
		}
		if a != "" {
			fmt.Fprintf(w, "\n     arguments: %s", a)
		}
		switch {
		case f.ClassNamesError != "":
			fmt.Fprintf(w, "\n     class names: unreadable: %s", f.ClassNamesError)
		case f.ClassNames != nil:
			fmt.Fprintf(w, "\n     class names (%d, from the %s): %s", len(f.ClassNames), f.ClassNamesFrom, classList(f.ClassNames))
		case f.NumClasses > 0:
			fmt.Fprintf(w, "\n     class names: not in the file (nor in FILE%s beside it)", ClassesSuffix)
		}
		fmt.Fprintln(w)
	}
	return nil
}

// hexArguments is the arguments' bytes in hex, up to the last non-zero one ("" when all
// are zero).
func hexArguments(a [ArgumentsSize]byte) string {
	n := len(a)
	for n > 0 && a[n-1] == 0 {
		n--
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("% x", a[:n])
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
