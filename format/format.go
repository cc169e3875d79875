// Package format is the registry of the file formats the read commands (inspect, verify)
// know, in the manner of image.RegisterFormat: each format package (format/mldf,
// format/beton, format/taridx, format/scdl, format/mds) registers itself from its init
// function, and a file's format is found by sniffing its first bytes, or its name for a format
// without a signature, and a directory's by the file that marks it. The registry is written
// only by those init functions and read afterwards.
//
// Every format has the same shape: it opens a local path (OpenPath) and, when it can be read
// from a bucket, an io.ReaderAt (Open) or, for a format stored as a directory, a folder
// through an objstore client (OpenDir); an open File describes itself, shows one record and
// verifies every rule of its format, each as a Text that prints as the read commands show it
// and encodes as JSON.
package format

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mldf/convert/objstore"
)

// HeadSize is how many leading bytes Sniff needs (fewer for a shorter file).
const HeadSize = 16

// ErrUnknown: no registered format matches the file.
var ErrUnknown = errors.New("unknown file format")

// Text is what a File returns: it prints itself as the read commands show it (WriteText) and
// is a value encoding/json encodes as `--json` shows it.
type Text interface {
	WriteText(w io.Writer) error
}

// VerifyOptions configure File.Verify. A format ignores what it has no use for.
type VerifyOptions struct {
	// Workers is the number of goroutines decoding payloads (0: one per CPU).
	Workers int
	// Decode also decodes every payload and checks it against its metadata (MLDF).
	Decode bool
	// RequireChecksums makes a file without checksums fail (MLDF), after its report.
	RequireChecksums bool
}

// File is an open file of a registered format.
type File interface {
	// Describe returns the file's description: its header, fields or members, sections.
	Describe() (Text, error)
	// Sample returns record i (a sample, a row, a cell).
	Sample(i int64) (Text, error)
	// Verify checks every rule of the format and returns what it checked. It may return a
	// report and an error together (a report that ends in a refusal).
	Verify(ctx context.Context, o VerifyOptions) (Text, error)
	// Close releases the file.
	Close() error
}

// Format is one registered format.
type Format struct {
	// Name is the format's short name: "mldf", "beton", "taridx", "scdl".
	Name string
	// Magic is the prefix of every file of the format; "" when it has none.
	Magic string
	// Ext is the name suffix that marks a file of a format without Magic (".beton").
	Ext string
	// Dir marks a format stored as a directory (an SCDL archive, an MDS dataset): it has
	// no Magic nor Ext, Open is nil and OpenPath is given the directory.
	Dir bool
	// Marker is the file whose presence in a directory marks a Dir format ("index.json"
	// for MDS); the Dir format without one is the directory format of any other directory.
	Marker string
	// OpenPath opens a local file (or directory).
	OpenPath func(ctx context.Context, path string) (File, error)
	// OpenDir opens a directory format's archive through c: a local directory or a folder
	// in a bucket (the objects under a prefix); nil when the format is read from local
	// directories only.
	OpenDir func(ctx context.Context, c *objstore.Client, dir string) (File, error)
	// Open opens a file through ra, of size bytes, named name in messages (an object in a
	// bucket); nil when the format is read from local files only. On success the File owns
	// ra: its Close closes ra when ra is an io.Closer; on error the caller still owns it.
	Open func(ctx context.Context, name string, ra io.ReaderAt, size int64) (File, error)
}

var (
	mu      sync.RWMutex
	formats []Format
)

// Register adds a format; it is called from the format package's init function. A second
// format of the same name, or a format without a name or OpenPath, panics.
func Register(f Format) {
	mu.Lock()
	defer mu.Unlock()
	if f.Name == "" || f.OpenPath == nil {
		panic("format: Register without a name or OpenPath")
	}
	for _, g := range formats {
		if g.Name == f.Name {
			panic("format: Register called twice for " + f.Name)
		}
	}
	formats = append(formats, f)
}

// Formats returns the registered formats, in registration order.
func Formats() []Format {
	mu.RLock()
	defer mu.RUnlock()
	return append([]Format(nil), formats...)
}

// Lookup returns the format registered under name.
func Lookup(name string) (Format, bool) {
	for _, f := range Formats() {
		if f.Name == name {
			return f, true
		}
	}
	return Format{}, false
}

// Sniff returns the format of the file named name that starts with head (its first HeadSize
// bytes, or all of a shorter file): the format whose Magic head starts with, else the one
// whose Ext ends name. Directory formats are not sniffed (see DirFormat).
func Sniff(name string, head []byte) (Format, error) {
	fs := Formats()
	for _, f := range fs {
		if f.Magic != "" && strings.HasPrefix(string(head), f.Magic) {
			return f, nil
		}
	}
	for _, f := range fs {
		if f.Magic == "" && f.Ext != "" && strings.HasSuffix(name, f.Ext) {
			return f, nil
		}
	}
	return Format{}, fmt.Errorf("%w: %d leading bytes match no signature", ErrUnknown, len(head))
}

// DirFormat returns the format of the directory dir: the Dir format whose Marker file is in
// it, else the Dir format without a Marker.
func DirFormat(dir string) (Format, bool) {
	var fallback Format
	found := false
	for _, f := range Formats() {
		switch {
		case !f.Dir:
		case f.Marker == "":
			if !found {
				fallback, found = f, true
			}
		default:
			if st, err := os.Stat(filepath.Join(dir, f.Marker)); err == nil && st.Mode().IsRegular() {
				return f, true
			}
		}
	}
	return fallback, found
}

// Size formats a byte count with a binary unit, as the read commands print sizes: "512 B",
// "1.5 KiB", "2.0 GiB".
func Size(n uint64) string {
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
