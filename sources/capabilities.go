package sources

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"
)

// The optional capabilities of a Source, declared here so that each source states at compile
// time which it has (var _ sources.Sharder = (*Source)(nil)) and a consumer asks for one by
// name rather than by a method signature of its own.

// Lister is a Source that lists the inputs it reads: the files (or objects) with their
// sizes, in sample order. Sharded runs split this list by bytes; the output checks compare
// the output against it.
type Lister interface {
	Source
	// Inputs returns the inputs, in order: a list read in order, since a folder source may
	// hold 10^8 files.
	Inputs() InputList
}

// Sharder is a Lister that can be cut to a contiguous range of its inputs: the part of the
// data one task of a sharded run converts. Every source of this module is a Sharder.
type Sharder interface {
	Lister
	// Range returns a source over inputs [lo, hi) of Inputs (0 <= lo <= hi <= Len of
	// Inputs), with the same options, whose samples are indexed from 0. The ranges of
	// consecutive slices partition the samples: every sample is in exactly one of
	// Range(0, k) and Range(k, n), in the same order, for any k.
	Range(lo, hi int) (Source, error)
}

// SkipCounter is a Source that finds files it does not read (a .svg or a .txt among the
// images of a folder, a tar member without an extension) and counts them, so that a run can
// say what it left out. Folder sources know the counts once opened; a streaming source (tar
// shards) knows them once Run has returned.
type SkipCounter interface {
	Source
	// SkippedFiles returns the number of files skipped, by lower-cased extension with its
	// dot (".svg"; "" for a name without one). The map is the caller's.
	SkippedFiles() map[string]int64
}

// Wrapper is a Source built around another one (a filter of its samples, a packer): the
// capabilities a consumer looks for (SkipCounter) are those of the source it wraps.
type Wrapper interface {
	Source
	// Unwrap returns the source wrapped.
	Unwrap() Source
}

// SkippedFiles returns the counts of src, or of the source it wraps (see Wrapper), or nil
// when neither counts the files it skips.
func SkippedFiles(src Source) map[string]int64 {
	for range 64 { // a chain of wrappers is short; a cycle is a bug, not a hang
		if c, ok := src.(SkipCounter); ok {
			return c.SkippedFiles()
		}
		w, ok := src.(Wrapper)
		if !ok {
			return nil
		}
		src = w.Unwrap()
	}
	return nil
}

// maxSkipExt is the longest extension counted as itself; longer ones (a hostile name's)
// are counted together under OtherExt, so the counts stay small whatever the names.
const maxSkipExt = 16

// OtherExt is the key under which Skipped counts the files whose extension is over 16 bytes
// or not UTF-8.
const OtherExt = "(other)"

// Skipped counts skipped files by extension. It is safe for concurrent use; the zero value
// is ready.
type Skipped struct {
	mu sync.Mutex
	m  map[string]int64
}

// Add counts one file named name (a path, with / or the OS separator).
func (s *Skipped) Add(name string) {
	i := strings.LastIndexByte(name, '/')
	if filepath.Separator != '/' {
		i = max(i, strings.LastIndexByte(name, filepath.Separator))
	}
	name = name[i+1:]
	ext := ""
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		ext = name[i:]
	}
	if len(ext) > maxSkipExt || !utf8.ValidString(ext) {
		ext = OtherExt
	} else {
		ext = strings.ToLower(ext)
	}
	s.AddKind(ext)
}

// AddKind counts one file under kind as it is (a constant such as "(link)", not a name
// from the input).
func (s *Skipped) AddKind(kind string) {
	ext := kind
	s.mu.Lock()
	if s.m == nil {
		s.m = map[string]int64{}
	}
	s.m[ext]++
	s.mu.Unlock()
}

// Counts returns a copy of the counts (nil when none).
func (s *Skipped) Counts() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.m) == 0 {
		return nil
	}
	return maps.Clone(s.m)
}

// Reset forgets the counts.
func (s *Skipped) Reset() {
	s.mu.Lock()
	s.m = nil
	s.mu.Unlock()
}

// LabelColumn is the column that holds the label of a Classer's samples.
const LabelColumn = "label"

// Classer is a Source whose samples are labelled by class (an image or audio folder with a
// subfolder per class): label i, in column LabelColumn, is class Classes()[i].
type Classer interface {
	Source
	// Classes returns the class names, by label. The slice is the caller's.
	Classes() []string
}

// ColumnLister is a Source that knows every column its samples can carry (an image folder:
// image, label), so that a field reading another column is refused before any work.
// Sources whose columns depend on the data (tar member extensions, manifest keys) do not
// implement it.
type ColumnLister interface {
	Source
	Columns() []string
}

// FirstRecorder is a streaming Source that can read its first record without a run (JSONL),
// so that the keys the fields read are checked before any work.
type FirstRecorder interface {
	Source
	// FirstRecord returns the first record of the inputs and the file it is in, reading at
	// most limit bytes of it (else an error wrapping ErrFirstTooLong); line is nil when no
	// input holds a record, and nil with a file name when that input cannot be read ahead
	// (a pipe, an object in a bucket).
	FirstRecord(ctx context.Context, limit int) (line []byte, file string, err error)
}

// ErrFirstTooLong means a first record is longer than FirstRecord was asked to read.
var ErrFirstTooLong = errors.New("first record longer than the probe")

// Unwrapped returns the first source in the chain of Wrappers from src (src included) that
// is a T.
func Unwrapped[T Source](src Source) (T, bool) {
	for range 64 { // a chain of wrappers is short; a cycle is a bug, not a hang
		if t, ok := src.(T); ok {
			return t, true
		}
		w, ok := src.(Wrapper)
		if !ok {
			break
		}
		src = w.Unwrap()
	}
	var zero T
	return zero, false
}

// FormatSize writes a byte count the way a recipe may: with the largest binary unit that
// divides it (4KiB, 2MiB, 1GiB), else in bytes.
func FormatSize(n int64) string {
	for _, u := range []struct {
		s string
		m int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.m == 0 {
			return fmt.Sprintf("%d%s", n/u.m, u.s)
		}
	}
	return fmt.Sprint(n)
}

// CheckSize returns the problem with a size option (label names it) outside [lo, hi], or
// "": zero is the default, described by zero ("0 = 256MiB").
func CheckSize(label string, v any, lo, hi int64, zero string) string {
	n, _ := v.(int64)
	if n == 0 || (n >= lo && n <= hi) {
		return ""
	}
	return fmt.Sprintf("%s %s is out of range: %s..%s (%s)", label, FormatSize(n), FormatSize(lo), FormatSize(hi), zero)
}
